//! A value axis broken in two, with break marks: when a few values lie far
//! from the rest (pacers that admit 39 % less than the exact rule, against
//! limiters within 3 % of it), the far ones get a band of their own past a
//! break, the others the main part of the height, so that neither is
//! squeezed into a few pixels. `which_limiter` and `load_sweep` draw their
//! over-admission so. An axis zoomed in above 0 (`window_count`'s counts
//! near L, peak/L from 0.6) gets the same mark at its foot ([`axis_break`]).

use std::ops::Range;

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::err;

/// How an axis is cut in two: the main range, where most values and the
/// reference 0 sit, and the far one, of a few values far from them, below
/// or above the main one.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    pub main: Range<f64>,
    pub far: Range<f64>,
    pub far_below: bool,
}

/// The largest gap, as a share of the whole range, that calls for a break.
const MIN_GAP: f64 = 1.0 / 3.0;
/// The most of the whole range the main values (0 included) may span for
/// a break to pay.
const MAX_MAIN: f64 = 0.25;
/// How many times the scale of one unbroken axis the main part must draw
/// its values at, with its padding, in its 70 % of the height, for a break
/// to pay: `boundary_burst`'s sweep (+1.48 to +1.77 % past a gap down to
/// +0.42 % and 0) drew its main values at 0.96 times, no larger than
/// without the break, and only cut the axis; `algorithms`' pacers give
/// the rest 7.6 times the scale, its load sweep 3.3 times.
const MIN_ZOOM: f64 = 2.0;
/// The share of the height the main part takes ([`draw_panel`]).
const MAIN_SHARE: f64 = 0.7;

/// Whether `values` (over-admissions in %) call for a broken axis, and
/// where: when the largest gap between two values in order is at least a
/// third of their whole range, the side with more values (with the
/// reference 0 on a tie) keeps the main part, unless its own span, 0
/// included, would still take more than a quarter of the range anyway, or
/// the main part, padded, would not draw its values at least twice as
/// large as one axis over the whole range does ([`MIN_ZOOM`]).
pub fn broken_axis(values: &[f64]) -> Option<Split> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let (&lo, &hi) = (v.first()?, v.last()?);
    let total = hi.max(0.0) - lo.min(0.0);
    if v.len() < 3 || total <= 0.0 {
        return None;
    }
    let (i, gap) =
        v.windows(2).enumerate().map(|(i, w)| (i, w[1] - w[0])).max_by(|a, b| a.1.total_cmp(&b.1))?;
    let (below, above) = v.split_at(i + 1);
    // 0 belongs with the side it is nearer to.
    let zero_above = 0.0 >= (below[below.len() - 1] + above[0]) / 2.0;
    let main_above = above.len() > below.len() || above.len() == below.len() && zero_above;
    let (main, far) = if main_above { (above, below) } else { (below, above) };
    let with_zero = |s: &[f64], has_zero: bool| {
        let (a, b) = (s[0], s[s.len() - 1]);
        if has_zero { (a.min(0.0), b.max(0.0)) } else { (a, b) }
    };
    let (m0, m1) = with_zero(main, zero_above == main_above);
    let (f0, f1) = with_zero(far, zero_above != main_above);
    if gap < MIN_GAP * total || m1 - m0 > MAX_MAIN * total {
        return None;
    }
    // Room around the values, for the points' size.
    let pad = |a: f64, b: f64| ((b - a) * 0.15).max(0.01 * total).max(0.5);
    let (pm, pf) = (pad(m0, m1), pad(f0, f1));
    // A break that hardly enlarges the main values only cuts the axis
    // between values that are near enough to share it.
    if MAIN_SHARE * total / (m1 - m0 + 2.0 * pm) < MIN_ZOOM {
        return None;
    }
    Some(Split { main: m0 - pm..m1 + pm, far: f0 - pf..f1 + pf, far_below: main_above })
}

impl Split {
    /// Whether every line (its values) lies within one part: a line that
    /// crossed the break would be cut.
    pub fn separates<'a>(&self, lines: impl IntoIterator<Item = &'a [f64]>) -> bool {
        lines
            .into_iter()
            .all(|l| l.iter().all(|v| self.main.contains(v)) || l.iter().all(|v| self.far.contains(v)))
    }
}

/// An over-admission tick: `+2`, `0`, `-39.5`.
pub fn fmt_axis_percent(v: f64) -> String {
    let t = super::tick(&v);
    if v > 0.0 { format!("+{t}") } else { t }
}

/// One part of a panel's value axis: its range and most ticks, whether it
/// is the top part (where the caption and the axis title go) and the
/// bottom one (which draws the x axis), and the value at the break, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    pub y: Range<f64>,
    pub ticks: usize,
    pub top: bool,
    pub bottom: bool,
    at_break: Option<f64>,
}

/// How far (in pixels) a tick label's middle stays above a break mark's:
/// the strokes' left ends, by the labels, reach 1 px over their middle, a
/// label's digits 4 px under its own (`clients`' window count: 18, 14 px
/// over the foot mark, stood clear of it).
const CLEAR_ABOVE_BREAK: f64 = 12.0;
/// How far (in pixels) a tick label's middle stays under a break mark's:
/// the strokes reach 7 px under their middle at their left end, a label's
/// digits 7 px over its own, and the labels end 2 px short of the strokes'
/// ends, so that at 14 px a label under a mark touched it (peak/L's `0.4`
/// and `1` at the foot of their axes).
const CLEAR_UNDER_BREAK: f64 = 18.0;

/// How far (in pixels) up the value axis [`axis_break`] puts its mark.
const FOOT_MARK_UP: i32 = 14;

/// Whether a tick label `up` pixels above a break mark (under it when
/// negative) stands clear of it.
fn clear_of_mark(up: f64) -> bool {
    if up >= 0.0 { up >= CLEAR_ABOVE_BREAK } else { -up >= CLEAR_UNDER_BREAK }
}

impl Part {
    /// Whether a tick label at `v`, on a plot `height` pixels tall, stands
    /// clear of the break marks (`-0.5` and `-37` touched them), that at
    /// the foot of the bottom part's axis too.
    pub fn clear_of_break(&self, v: f64, height: u32) -> bool {
        self.at_break.is_none_or(|b| clear_of_mark((v - b) / (self.y.end - self.y.start) * f64::from(height)))
            && (!self.bottom || clear_of_foot_mark(v, &self.y, height))
    }
}

/// Whether a tick label at `v`, on a value axis over `y` that is `height`
/// pixels tall, stands clear of the mark [`axis_break`] draws at its foot
/// when it starts above 0 (there is none otherwise).
pub fn clear_of_foot_mark(v: f64, y: &Range<f64>, height: u32) -> bool {
    let up = (v - y.start) / (y.end - y.start) * f64::from(height);
    y.start <= 0.0 || clear_of_mark(up - f64::from(FOOT_MARK_UP))
}

/// The pixels of a part's plotting area, in the backend's coordinates.
pub type Pixels = (Range<i32>, Range<i32>);

/// What draws one part of a panel ([`draw_panel`]): in its area, to its
/// [`Part`]; returns its plotting area's pixels.
pub type DrawPart<'a, DB> = dyn FnMut(&DrawingArea<DB, Shift>, &Part) -> Result<Pixels> + 'a;

/// Draws a panel whose value axis runs over `y`, or, with a `split`, is
/// broken in two: the far values in a band of 30 % of the height, the main
/// ones in the rest, break marks where the axis is cut. `part` draws one
/// part in its area and returns its plotting area's pixels.
pub fn draw_panel<DB: DrawingBackend>(
    panel: &DrawingArea<DB, Shift>,
    y: Range<f64>,
    split: Option<&Split>,
    part: &mut DrawPart<'_, DB>,
) -> Result<()> {
    let Some(split) = split else {
        let whole = Part { y, ticks: 10, top: true, bottom: true, at_break: None };
        let pixels = part(panel, &whole)?;
        return foot_break(panel, &whole, &pixels);
    };
    let h = panel.dim_in_pixel().1;
    let far_h = h * 30 / 100;
    let (upper, lower) =
        if split.far_below { panel.split_vertically(h - far_h) } else { panel.split_vertically(far_h) };
    let ((top_y, top_ticks), (bottom_y, bottom_ticks)) = if split.far_below {
        ((split.main.clone(), 10), (split.far.clone(), 3))
    } else {
        ((split.far.clone(), 3), (split.main.clone(), 10))
    };
    let at_top = Some(top_y.start);
    let at_bottom = Some(bottom_y.end);
    let top = part(&upper, &Part { y: top_y, ticks: top_ticks, top: true, bottom: false, at_break: at_top })?;
    let lower_part = Part { y: bottom_y, ticks: bottom_ticks, top: false, bottom: true, at_break: at_bottom };
    let bottom = part(&lower, &lower_part)?;
    // Break marks where the axis is cut: the foot of the upper part and
    // the head of the lower one.
    let (bx, by) = panel.get_base_pixel();
    for (x, y) in [(top.0.start, top.1.end), (bottom.0.start, bottom.1.start)] {
        break_strokes(panel, x - bx, y - by)?;
    }
    foot_break(panel, &lower_part, &bottom)
}

/// [`axis_break`] at the foot of the bottom part, when its axis starts
/// above 0 (peak/L from 0.6).
fn foot_break<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, part: &Part, pixels: &Pixels) -> Result<()> {
    if part.y.start > 0.0 { axis_break(area, pixels) } else { Ok(()) }
}

/// Two short slanted strokes across a value axis at `(x, y)`, in `area`'s
/// pixels: the mark of a break.
fn break_strokes<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, x: i32, y: i32) -> Result<()> {
    for dy in [-3, 3] {
        area.draw(&PathElement::new(vec![(x - 8, y + dy + 3), (x + 8, y + dy - 3)], BLACK.stroke_width(2)))
            .map_err(err)?;
    }
    Ok(())
}

/// The mark of a value axis that does not start at 0: the break's two
/// strokes across the foot of the axis, with the axis blanked between
/// them, so that a zoomed axis (counts of 102 against a limit of 100,
/// peak/L from 0.6) is not read as bars or heights from 0. `pixels` is
/// the plotting area's, in `area`'s backend.
pub fn axis_break<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, pixels: &Pixels) -> Result<()> {
    let (x, y) = foot_mark_at(area.get_base_pixel(), pixels);
    area.draw(&Rectangle::new([(x - 7, y - 3), (x + 7, y + 3)], WHITE.filled())).map_err(err)?;
    break_strokes(area, x, y)
}

/// Where [`axis_break`] puts its mark, in the pixels of an area based at
/// `base`: on the value axis (the plot's left edge), [`FOOT_MARK_UP`] px
/// above its foot.
fn foot_mark_at(base: (i32, i32), pixels: &Pixels) -> (i32, i32) {
    (pixels.0.start - base.0, pixels.1.end - base.1 - FOOT_MARK_UP)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// algorithms.toml at load 1.5: three pacers near -39 %, the rest from
    /// 0 to +2.9 %. The pacers get a band below a break; the others the
    /// main part, 0 in it, instead of the top 6 % of a -45..+3 axis.
    #[test]
    fn far_values_get_a_band_past_a_break() {
        let v = [1.9, 1.6, 0.0, -39.3, 2.9, -39.3, 2.9, 1.9, -37.3, 0.2, 1.2];
        let s = broken_axis(&v).unwrap();
        assert!(s.far_below);
        assert!(s.main.start < 0.0 && s.main.start > -1.0 && s.main.end > 2.9 && s.main.end < 4.0, "{s:?}");
        assert!(s.far.start < -39.3 && s.far.end > -37.3 && s.far.end < -35.0, "{s:?}");
        // Values that spread evenly, or few: one axis.
        assert_eq!(broken_axis(&[0.0, 1.0, 2.0, 3.0]), None);
        assert_eq!(broken_axis(&[0.0, -40.0]), None);
        assert_eq!(broken_axis(&[0.0, 0.0, 0.0]), None);
        // One far value above: its band is above.
        let s = broken_axis(&[0.0, 0.5, 1.0, 80.0]).unwrap();
        assert!(!s.far_below && s.far.contains(&80.0) && s.main.contains(&0.0), "{s:?}");
        // Far values and 0 together (the sliding log at 0, pacers at -40,
        // two limiters at +50): 0 stays with the values it is nearer to.
        assert_eq!(broken_axis(&[-40.0, -41.0, 0.0, 50.0, 51.0]), None);
        assert_eq!(fmt_axis_percent(2.0), "+2");
        assert_eq!(fmt_axis_percent(-39.5), "-39.5");
        assert_eq!(fmt_axis_percent(0.0), "0");
    }

    /// `ratesim sweep scenarios/boundary_burst.toml` at load 1.5: the
    /// fixed window and 2 slots at +1.77 %, 10 slots at +1.48 %, 100 slots
    /// at +0.417 %, the sliding log at 0. The gap (+0.42 to +1.48) is 60 % of
    /// the range, but the main part (+1.48 to +1.77, padded by 0.5 either
    /// side) would draw at 0.96 times the scale of one axis from 0 to +1.8:
    /// no break, and 100 slots keeps its place beside the others.
    #[test]
    fn a_gap_that_enlarges_nothing_breaks_nothing() {
        assert_eq!(broken_axis(&[1.77, 1.77, 1.48, 0.417, 0.0]), None);
        // The same shape ten times as large: the padding is small beside
        // it, the main part drawn 3.5 times as large: a break.
        let s = broken_axis(&[17.7, 17.7, 14.7, 4.0, 0.0]).unwrap();
        assert!(s.far_below && s.main.contains(&14.7) && s.far.contains(&0.0), "{s:?}");
        // error_vs_slots at load 1.5: 0 to +1.92 %, spread out: one axis.
        assert_eq!(broken_axis(&[1.92, 1.92, 1.92, 1.74, 1.56, 1.11, 0.652, 0.336, 0.031, 0.0]), None);
    }

    /// algorithms' load sweep: the pacers' lines from -46 % to -22 %, the
    /// others' from -0.6 % to +8.3 %, a gap of 39 % of the range. The
    /// others were squeezed into the top 15 px; now they have the main
    /// part, and every line lies within one part.
    #[test]
    fn the_load_sweeps_pacers_get_a_band_of_their_own() {
        let pacer = [-33.1, -44.0, -45.8, -39.3, -33.0, -24.8];
        let nginx = [-32.2, -42.8, -44.6, -37.3, -30.6, -22.0];
        let gcra = [0.0, 0.56, 8.33, 2.9, 1.95, 1.42];
        let weighted = [0.0, 0.15, 0.65, 0.24, -0.40, -0.63];
        let all: Vec<f64> = [pacer, nginx, gcra, weighted].concat();
        let s = broken_axis(&all).unwrap();
        assert!(s.far_below && s.main.contains(&0.0) && s.main.contains(&8.33), "{s:?}");
        assert!(s.separates([&pacer[..], &nginx[..], &gcra[..], &weighted[..]]));
        // A line across the break would be cut: no break for it.
        assert!(!s.separates([&[-40.0, 0.0][..]]));
    }

    /// A panel of one part whose axis starts above 0 (which_limiter's
    /// peak/L from 0.6, load_sweep's from 0.7) gets window_count's mark at
    /// its foot, on the axis 14 px up; one from 0 none.
    #[test]
    fn an_axis_from_above_zero_gets_a_break_mark_at_its_foot() {
        let panel_svg = |y: Range<f64>| {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, (400, 300)).into_drawing_area();
                draw_panel(&root, y, None, &mut |area, part| {
                    let chart = ChartBuilder::on(area)
                        .margin(10)
                        .y_label_area_size(40)
                        .build_cartesian_2d(0f64..1.0, part.y.clone())
                        .map_err(err)?;
                    Ok(chart.plotting_area().get_pixel_range())
                })
                .unwrap();
                root.present().unwrap();
            }
            svg
        };
        let strokes = |svg: &str| svg.matches(r##"stroke="#000000" stroke-width="2""##).count();
        let zoomed = panel_svg(0.6..1.8);
        assert_eq!(strokes(&zoomed), 2);
        assert!(zoomed.contains(r##"width="14" height="6" opacity="1" fill="#FFFFFF""##), "{zoomed}");
        assert_eq!(strokes(&panel_svg(0.0..1.8)), 0);
        assert_eq!(strokes(&panel_svg(-0.5..1.8)), 0);
        assert_eq!(foot_mark_at((100, 50), &(180..900, 60..500)), (80, 436));
    }

    /// A tick label 10 px from the break is left out; one 20 px away kept;
    /// one 14 px away kept above the mark, left out under it (where the
    /// strokes' left ends reach down to it).
    #[test]
    fn tick_labels_keep_clear_of_the_break() {
        let part = Part { y: -1.0..3.0, ticks: 10, top: true, bottom: false, at_break: Some(-1.0) };
        // 4 units over 400 px: 100 px a unit.
        assert!(!part.clear_of_break(-0.9, 400));
        assert!(part.clear_of_break(-0.86, 400));
        assert!(part.clear_of_break(-0.8, 400));
        assert!(part.clear_of_break(3.0, 400));
        let under = Part { at_break: Some(3.0), ..part.clone() };
        assert!(!under.clear_of_break(2.86, 400) && under.clear_of_break(2.8, 400));
        let whole = Part { at_break: None, ..part };
        assert!(whole.clear_of_break(-1.0, 400));
    }

    /// On an axis from above 0, the label at its foot, 14 px under the
    /// foot mark's middle, is left out (load_sweep's peak/L `0.4`, whose
    /// digits touched the strokes); one 29 px up is kept. From 0 (no
    /// mark), or in a part that is not the bottom one, the foot's label
    /// stays.
    #[test]
    fn tick_labels_keep_clear_of_the_foot_mark() {
        // 0.4 to 2.1 over 400 px: 0.00425 a pixel.
        let y = 0.4..2.1;
        assert!(!clear_of_foot_mark(0.4, &y, 400));
        assert!(!clear_of_foot_mark(0.4 + 0.00425 * 24.0, &y, 400));
        // 15 px over the mark (poisson's window count: 60, 32 px up).
        assert!(clear_of_foot_mark(0.4 + 0.00425 * 29.0, &y, 400));
        assert!(clear_of_foot_mark(0.0, &(0.0..2.0), 400));
        let part = Part { y: y.clone(), ticks: 10, top: true, bottom: true, at_break: None };
        assert!(!part.clear_of_break(0.4, 400) && part.clear_of_break(0.6, 400));
        assert!(Part { bottom: false, ..part }.clear_of_break(0.4, 400));
    }
}
