//! Colour arithmetic for the run palette ([`super::RunPalette`]): how far
//! apart two colours look (CIEDE2000, in CIELAB), and the shades of a
//! colour's own hue that a limiter may be given when its own colour is
//! taken. Computed with `libm`, as the random draws are, so that a run's
//! colours are the same on every platform.

/// An sRGB colour, 8 bits a channel.
pub type Rgb = (u8, u8, u8);

/// The D65 white, CIE XYZ.
const WHITE_XYZ: (f64, f64, f64) = (0.95047, 1.0, 1.08883);

fn linear(u: u8) -> f64 {
    let u = f64::from(u) / 255.0;
    if u <= 0.04045 { u / 12.92 } else { libm::pow((u + 0.055) / 1.055, 2.4) }
}

fn encoded(u: f64) -> f64 {
    if u <= 0.003_130_8 { 12.92 * u } else { 1.055 * libm::pow(u, 1.0 / 2.4) - 0.055 }
}

/// `c` in CIELAB (L* 0 to 100, a*, b*), D65.
pub fn lab(c: Rgb) -> (f64, f64, f64) {
    let (r, g, b) = (linear(c.0), linear(c.1), linear(c.2));
    let x = (0.412_456_4 * r + 0.357_576_1 * g + 0.180_437_5 * b) / WHITE_XYZ.0;
    let y = (0.212_672_9 * r + 0.715_152_2 * g + 0.072_175_0 * b) / WHITE_XYZ.1;
    let z = (0.019_333_9 * r + 0.119_192_0 * g + 0.950_304_1 * b) / WHITE_XYZ.2;
    const E: f64 = 6.0 / 29.0;
    let f = |t: f64| if t > E * E * E { libm::cbrt(t) } else { t / (3.0 * E * E) + 4.0 / 29.0 };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    (116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz))
}

/// The sRGB colour of CIELAB `(l, a, b)`, or `None` where it is outside
/// what sRGB can show (a channel more than half a step out of range).
pub fn from_lab((l, a, b): (f64, f64, f64)) -> Option<Rgb> {
    const E: f64 = 6.0 / 29.0;
    let f_inv = |t: f64| if t > E { t * t * t } else { 3.0 * E * E * (t - 4.0 / 29.0) };
    let fy = (l + 16.0) / 116.0;
    let x = f_inv(fy + a / 500.0) * WHITE_XYZ.0;
    let y = f_inv(fy) * WHITE_XYZ.1;
    let z = f_inv(fy - b / 200.0) * WHITE_XYZ.2;
    let r = 3.240_454_2 * x - 1.537_138_5 * y - 0.498_531_4 * z;
    let g = -0.969_266_0 * x + 1.876_010_8 * y + 0.041_556_0 * z;
    let bl = 0.055_643_4 * x - 0.204_025_9 * y + 1.057_225_2 * z;
    let byte = |u: f64| {
        let v = encoded(u.max(0.0)) * 255.0;
        (u > -0.002 && v < 255.5).then(|| v.round().clamp(0.0, 255.0) as u8)
    };
    Some((byte(r)?, byte(g)?, byte(bl)?))
}

/// How far apart two colours look: the CIEDE2000 colour difference
/// (0 for the same colour; about 2 just noticeable side by side, 10 hard
/// to tell apart as thin lines, 20 and more easy; black and white 100).
pub fn delta_e(c1: Rgb, c2: Rgb) -> f64 {
    delta_e_lab(lab(c1), lab(c2))
}

/// [`delta_e`] of two CIELAB colours (Sharma, Wu and Dalal's formulation).
pub fn delta_e_lab((l1, a1, b1): (f64, f64, f64), (l2, a2, b2): (f64, f64, f64)) -> f64 {
    use std::f64::consts::PI;
    let deg = |r: f64| r * 180.0 / PI;
    let rad = |d: f64| d * PI / 180.0;
    let pow7 = |x: f64| x * x * x * x * x * x * x;
    let c_bar = (libm::hypot(a1, b1) + libm::hypot(a2, b2)) / 2.0;
    let g = 0.5 * (1.0 - libm::sqrt(pow7(c_bar) / (pow7(c_bar) + pow7(25.0))));
    let (a1p, a2p) = ((1.0 + g) * a1, (1.0 + g) * a2);
    let (c1p, c2p) = (libm::hypot(a1p, b1), libm::hypot(a2p, b2));
    let hue =
        |b: f64, a: f64| if b == 0.0 && a == 0.0 { 0.0 } else { deg(libm::atan2(b, a)).rem_euclid(360.0) };
    let (h1p, h2p) = (hue(b1, a1p), hue(b2, a2p));
    let dl = l2 - l1;
    let dc = c2p - c1p;
    let dh = if c1p * c2p == 0.0 {
        0.0
    } else if (h2p - h1p).abs() <= 180.0 {
        h2p - h1p
    } else if h2p - h1p > 180.0 {
        h2p - h1p - 360.0
    } else {
        h2p - h1p + 360.0
    };
    let dh_big = 2.0 * libm::sqrt(c1p * c2p) * libm::sin(rad(dh / 2.0));
    let l_bar = (l1 + l2) / 2.0;
    let cp_bar = (c1p + c2p) / 2.0;
    let h_bar = if c1p * c2p == 0.0 {
        h1p + h2p
    } else if (h1p - h2p).abs() <= 180.0 {
        (h1p + h2p) / 2.0
    } else if h1p + h2p < 360.0 {
        (h1p + h2p + 360.0) / 2.0
    } else {
        (h1p + h2p - 360.0) / 2.0
    };
    let t = 1.0 - 0.17 * libm::cos(rad(h_bar - 30.0))
        + 0.24 * libm::cos(rad(2.0 * h_bar))
        + 0.32 * libm::cos(rad(3.0 * h_bar + 6.0))
        - 0.20 * libm::cos(rad(4.0 * h_bar - 63.0));
    let d_theta = 30.0 * libm::exp(-((h_bar - 275.0) / 25.0) * ((h_bar - 275.0) / 25.0));
    let r_c = 2.0 * libm::sqrt(pow7(cp_bar) / (pow7(cp_bar) + pow7(25.0)));
    let s_l =
        1.0 + 0.015 * (l_bar - 50.0) * (l_bar - 50.0) / libm::sqrt(20.0 + (l_bar - 50.0) * (l_bar - 50.0));
    let s_c = 1.0 + 0.045 * cp_bar;
    let s_h = 1.0 + 0.015 * cp_bar * t;
    let r_t = -libm::sin(rad(2.0 * d_theta)) * r_c;
    let (tl, tc, th) = (dl / s_l, dc / s_c, dh_big / s_h);
    libm::sqrt(tl * tl + tc * tc + th * th + r_t * tc * th)
}

/// A colour's luma (0 to 255): how light it looks.
pub fn luma(c: Rgb) -> f64 {
    0.299 * f64::from(c.0) + 0.587 * f64::from(c.1) + 0.114 * f64::from(c.2)
}

/// The darkest and lightest (L*) a shade may be: darker ones read as black
/// (the sliding log's), lighter ones fade on white.
const SHADE_L: std::ops::RangeInclusive<f64> = 20.0..=70.0;
/// The most luma a shade may have: the limit the spare colours always had.
pub const MAX_LUMA: f64 = 175.0;

/// Shades of `c`'s own hue: the same hue and chroma (less where sRGB
/// cannot show it) at lightnesses 2.5 L* apart, none too dark or too light
/// for a line on white, nearest to `c` first (ties: the darker first).
pub fn shades(c: Rgb) -> Vec<Rgb> {
    let (l, a, b) = lab(c);
    let chroma = libm::hypot(a, b);
    let h = libm::atan2(b, a);
    let mut out: Vec<(f64, i32, Rgb)> = Vec::new();
    for k in -16..=16 {
        let lk = l + f64::from(k) * 2.5;
        if k == 0 || !SHADE_L.contains(&lk) {
            continue;
        }
        // The most chroma sRGB shows at this lightness, down in steps of 1.
        let mut ck = chroma.floor();
        let shade = loop {
            if let Some(s) = from_lab((lk, ck * libm::cos(h), ck * libm::sin(h))) {
                break Some(s);
            }
            if ck <= 0.0 {
                break None;
            }
            ck = (ck - 1.0).max(0.0);
        };
        if let Some(s) = shade.filter(|s| *s != c && luma(*s) <= MAX_LUMA)
            && !out.iter().any(|o| o.2 == s)
        {
            out.push((delta_e(c, s), k, s));
        }
    }
    out.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    out.into_iter().map(|(_, _, s)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pairs from Sharma, Wu and Dalal's CIEDE2000 test data (2005), and
    /// their differences, to four decimals.
    #[test]
    fn ciede2000_matches_the_published_test_data() {
        let pairs = [
            ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
            ((50.0, -1.0, 2.0), (50.0, 0.0, 0.0), 2.3669),
            ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
            ((50.0, 2.5, 0.0), (50.0, 3.1736, 0.5854), 1.0),
            ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
            ((22.7233, 20.0904, -46.6940), (23.0331, 14.9730, -42.5619), 2.0373),
            ((90.8027, -2.0831, 1.4410), (91.1528, -1.6435, 0.0447), 1.4441),
            ((2.0776, 0.0795, -1.1350), (0.9033, -0.0636, -0.5514), 0.9082),
        ];
        for (a, b, want) in pairs {
            let d = delta_e_lab(a, b);
            assert!((d - want).abs() < 5e-5, "{a:?} {b:?}: {d} not {want}");
            assert!((delta_e_lab(b, a) - want).abs() < 5e-5, "symmetric");
        }
        assert_eq!(delta_e((214, 39, 40), (214, 39, 40)), 0.0);
        assert!((delta_e((0, 0, 0), (255, 255, 255)) - 100.0).abs() < 0.01);
    }

    #[test]
    fn lab_round_trips() {
        for c in [(0, 0, 0), (255, 255, 255), (214, 39, 40), (31, 119, 180), (0, 150, 136), (20, 20, 20)] {
            assert_eq!(from_lab(lab(c)), Some(c), "{c:?}");
        }
        // Saturated green at L* 20 is no sRGB colour.
        assert_eq!(from_lab((20.0, -120.0, 80.0)), None);
    }

    /// Shades keep the hue: each is nearer in hue to the colour than to
    /// any other, none is too light or too dark, and the nearest come first.
    #[test]
    fn shades_keep_the_hue_and_stay_readable() {
        for c in [(120, 80, 220), (0, 150, 136), (140, 86, 75), (218, 165, 32), (20, 20, 20)] {
            let s = shades(c);
            assert!(s.len() >= 6, "{c:?}: {s:?}");
            let (_, a, b) = lab(c);
            for (k, v) in s.iter().enumerate() {
                let (l2, a2, b2) = lab(*v);
                assert!((19.5..=70.5).contains(&l2) && luma(*v) <= MAX_LUMA, "{c:?}: {v:?}");
                if libm::hypot(a, b) > 20.0 && libm::hypot(a2, b2) > 10.0 {
                    let turn = (libm::atan2(b2, a2) - libm::atan2(b, a)).abs().to_degrees();
                    assert!(turn.min(360.0 - turn) < 8.0, "{c:?}: {v:?} turned {turn:.1}");
                }
                if k > 0 {
                    assert!(delta_e(c, s[k - 1]) <= delta_e(c, *v) + 1e-9);
                }
            }
        }
        assert_eq!(shades((214, 39, 40)), shades((214, 39, 40)), "the same every time");
    }
}
