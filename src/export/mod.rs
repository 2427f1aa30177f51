//! Output writers: each turns results into bytes, one format per file.
//! [`OutputDir`] routes them into a staged directory that replaces the
//! previous results only when everything was written.

pub mod csv;
pub mod markdown;
pub mod output_dir;
pub mod pivot;
pub mod report;
pub mod table;
pub mod text;

pub use output_dir::{Abandoned, OutputDir, OutputError, abandon_all_staging};

/// A ratio with up to 6 decimals and no trailing zeros (`2`, `0.5`,
/// `0.333333`); more when 6 would round a value that is not whole to a whole
/// one (`1.0000001`, never `1`: see `decimals`).
pub fn fmt_ratio(v: f64) -> String {
    let d = decimals(v, 6);
    trim_zeros(format!("{v:.d$}"))
}

/// A ratio for charts and legends: two decimals and no trailing zeros
/// (`2`, `1.5`, `1.37`), more when two would round a value that is not whole
/// to a whole one: a peak of 1,001,910 at L = 1,000,000 is `1.002`, not `1`,
/// and `1.999999` is not `2`. Exactly 1 is `1`.
pub fn fmt_ratio_short(v: f64) -> String {
    let d = decimals(v, 2);
    // Rounded half away from zero, as these figures always were (1.625: 1.63).
    let p = 10f64.powi(d as i32);
    trim_zeros(format!("{:.d$}", (v * p).round() / p))
}

/// A ratio with `places` fixed decimals, for table columns (`2.00`, `1.37`
/// at two places), with more when `places` would round a value that is not
/// whole to a whole one: `1.002`, not `1.00`, for a peak just over L.
pub fn fmt_ratio_fixed(v: f64, places: usize) -> String {
    let d = decimals(v, places);
    format!("{v:.d$}")
}

/// Ratios written side by side (the bar labels of one chart), all with the
/// same decimals: `places`, or as many more as [`fmt_ratio_fixed`] gives the
/// one that needs most. 6.98 beside 6.9 and 7.1 is `6.98`, `6.90`, `7.10`:
/// one precision, and no value that is not whole written as a whole one.
pub fn fmt_ratios_fixed(values: &[f64], places: usize) -> Vec<String> {
    let d = values.iter().map(|v| decimals(*v, places)).max().unwrap_or(places);
    values.iter().map(|v| format!("{v:.d$}")).collect()
}

/// A table column of ratios ([`fmt_ratios_fixed`]: one precision down the
/// column, so `6.002` never stands among `6.27` and `5.99`), `n/a` where
/// there is none.
pub fn fmt_ratio_column(values: &[Option<f64>], places: usize) -> Vec<String> {
    let known: Vec<f64> = values.iter().flatten().copied().collect();
    let mut shown = fmt_ratios_fixed(&known, places).into_iter();
    values.iter().map(|v| v.and_then(|_| shown.next()).unwrap_or_else(|| "n/a".into())).collect()
}

/// The most decimals a ratio is written with: enough to tell 1 + 1e-15 from 1.
const MAX_DECIMALS: usize = 15;

/// The decimals `v` needs, `places` or more: rounding must not make a value
/// that is not whole look whole. A ratio against the limit that reads `1`
/// or `2` says "exactly L" or "exactly 2 L"; one just above or below must
/// show that it is.
fn decimals(v: f64, places: usize) -> usize {
    let whole_at = |d: usize| {
        let p = 10f64.powi(d as i32);
        ((v * p).round() / p).fract() == 0.0
    };
    let mut d = places;
    if v.is_finite() && v.fract() != 0.0 {
        while d < MAX_DECIMALS && whole_at(d) {
            d += 1;
        }
    }
    d
}

/// `1.500` as `1.5`, `2.00` as `2`, `-0` as `0`.
fn trim_zeros(s: String) -> String {
    let t = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.') } else { s.as_str() };
    if t == "-0" { "0".to_string() } else { t.to_string() }
}

/// A fraction as a percentage with one decimal (`100.0 %`), signed when
/// asked; one that would round to `0.0 %` without being 0 gets two
/// significant digits (`+0.031 %`, `0.00042 %`), so only an exact 0 reads 0.
pub fn fmt_percent(v: f64, signed: bool) -> String {
    let p = if v == 0.0 { 0.0 } else { v * 100.0 };
    let decimals = if p != 0.0 && p.abs() < 0.05 {
        (1 - p.abs().log10().floor() as i32).clamp(2, 12) as usize
    } else {
        1
    };
    if signed && p > 0.0 { format!("+{p:.decimals$} %") } else { format!("{p:.decimals$} %") }
}

/// A fraction as a percentage for the sweeps' small figures: two decimals
/// (`50.02 %`), three below 1 % (`0.525 %`) so that N = 1000 still shows.
pub fn fmt_percent2(v: f64) -> String {
    let p = v * 100.0;
    if p != 0.0 && p.abs() < 1.0 { format!("{p:.3} %") } else { format!("{p:.2} %") }
}

/// `excess / admitted`: the share of admitted requests that were wrongly allowed.
pub fn excess_share(l: &crate::metrics::LimiterReport) -> Option<f64> {
    (l.counts.admitted > 0).then(|| l.counts.excess as f64 / l.counts.admitted as f64)
}

/// "1 request", "2 requests": a count and its noun (plural with an `s`).
pub fn count_of(n: u64, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// The arrivals of a run in a few words: "206 requests, first at 0.07 s,
/// last at 11.9 s", "1 request, at 0.5 s" (and the client keys when there
/// are several).
pub fn arrivals_phrase(report: &crate::engine::RunReport) -> String {
    let keys = if report.trace_keys > 1 {
        format!(" from {} client keys", report.trace_keys)
    } else {
        String::new()
    };
    let span = match (report.first_arrival, report.last_arrival) {
        (Some(a), Some(b)) if a == b && report.arrivals == 1 => format!(", at {a} s"),
        (Some(a), Some(b)) => format!(", first at {a} s, last at {b} s"),
        _ => String::new(),
    };
    format!("{}{keys}{span}", count_of(report.arrivals, "request"))
}

/// Two byte counts as [`fmt_bytes`] writes them, or in whole bytes when
/// rounding would write them alike ("2.1 MiB, more than the 2.1 MiB").
pub fn fmt_bytes_apart(a: u64, b: u64) -> (String, String) {
    let (x, y) = (fmt_bytes(a), fmt_bytes(b));
    if x == y && a != b { (format!("{a} B"), format!("{b} B")) } else { (x, y) }
}

/// Bytes in B, KiB, MiB, GiB.
pub fn fmt_bytes(b: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 { format!("{b} B") } else { format!("{v:.1} {}", UNITS[u]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A budget within rounding of the need: whole bytes, not "2.1 MiB,
    /// more than the 2.1 MiB"; apart, or equal, as fmt_bytes writes them.
    #[test]
    fn bytes_that_round_alike_are_written_whole() {
        assert_eq!(fmt_bytes_apart(2_228_224, 2_227_200), ("2228224 B".to_string(), "2227200 B".to_string()));
        assert_eq!(fmt_bytes_apart(2_228_224, 8 << 30), ("2.1 MiB".to_string(), "8.0 GiB".to_string()));
        assert_eq!(fmt_bytes_apart(1024, 1024), ("1.0 KiB".to_string(), "1.0 KiB".to_string()));
    }

    #[test]
    fn number_formats() {
        assert_eq!(fmt_ratio(2.0), "2");
        assert_eq!(fmt_ratio(0.5), "0.5");
        assert_eq!(fmt_ratio(1.0 / 3.0), "0.333333");
        assert_eq!(fmt_ratio(-0.0), "0");
        assert_eq!(fmt_percent(1.0, true), "+100.0 %");
        // Only an exact 0 reads 0: +0.031 % (N = 1000's over-admission in a
        // load sweep) is not the exact reference's 0.0 %.
        assert_eq!(fmt_percent(-0.0001, true), "-0.010 %");
        assert_eq!(fmt_percent(0.000_31, true), "+0.031 %");
        assert_eq!(fmt_percent(0.000_004_2, false), "0.00042 %");
        assert_eq!(fmt_percent(0.0005, true), "+0.1 %");
        assert_eq!(fmt_percent(0.0, true), "0.0 %");
        assert_eq!(fmt_percent(-0.0, true), "0.0 %");
        assert_eq!(fmt_bytes(16), "16 B");
        assert_eq!(fmt_bytes(1536), "1.5 KiB");
    }

    /// Three significant digits in the unit that reads best, rounded in
    /// integer ns before the unit is chosen.
    #[test]
    fn durations_keep_three_significant_digits() {
        use crate::export::markdown::fmt_seconds;
        use crate::time::Nanos;
        let f = |n: u64| fmt_seconds(Nanos::new(n));
        assert_eq!(f(0), "0 s");
        assert_eq!(f(7), "7 ns");
        assert_eq!(f(10), "10 ns");
        assert_eq!(f(12_500), "12.5 µs");
        assert_eq!(f(49_000), "49.0 µs");
        assert_eq!(f(614_499_999), "614 ms");
        assert_eq!(f(614_500_000), "615 ms");
        assert_eq!(f(500_200_000), "500 ms");
        assert_eq!(f(1_800_000), "1.80 ms");
        assert_eq!(f(999_999_999), "1.00 s");
        assert_eq!(f(999_499_999), "999 ms");
        assert_eq!(f(4_314_000_000), "4.31 s");
        assert_eq!(f(62_700_000_000), "62.7 s");
        assert_eq!(f(99_499_999_999), "99.5 s");
        assert_eq!(f(99_500_000_000), "100 s");
        assert_eq!(f(932_700_000_000), "933 s");
        assert_eq!(f(u64::MAX), "18446744074 s");
    }

    /// A ratio above (or below) a whole number never prints as that number:
    /// the fixed window's peak of 1,001,910 at L = 1,000,000 is 1.002 L.
    #[test]
    fn ratios_near_a_whole_number_keep_the_digits_that_show_it() {
        let peak = 1_001_910.0 / 1_000_000.0;
        assert_eq!(fmt_ratio_short(peak), "1.002");
        assert_eq!(fmt_ratio_fixed(peak, 2), "1.002");
        assert_eq!(fmt_ratio(peak), "1.00191");
        // Exactly 1 and exactly 2 stay short.
        assert_eq!(fmt_ratio_short(1.0), "1");
        assert_eq!(fmt_ratio_fixed(1.0, 2), "1.00");
        assert_eq!(fmt_ratio(1.0), "1");
        assert_eq!(fmt_ratio_short(2.0), "2");
        // Just over 1 by one request in a million, and in ten million.
        assert_eq!(fmt_ratio_short(1_000_001.0 / 1_000_000.0), "1.000001");
        assert_eq!(fmt_ratio_fixed(1_000_001.0 / 1_000_000.0, 2), "1.000001");
        assert_eq!(fmt_ratio(10_000_001.0 / 10_000_000.0), "1.0000001");
        // Just under: 2L - 1 of a bucket of L = 1,000,000 is not 2 L, and a
        // peak of 996 at L = 1000 is not L.
        assert_eq!(fmt_ratio_short(1_999_999.0 / 1_000_000.0), "1.999999");
        assert_eq!(fmt_ratio_short(0.996), "0.996");
        assert_eq!(fmt_ratio_fixed(0.996, 2), "0.996");
        // Not near a whole number: two decimals, as before.
        assert_eq!(fmt_ratio_short(1.37), "1.37");
        assert_eq!(fmt_ratio_short(1.625), "1.63");
        assert_eq!(fmt_ratio_short(1.5), "1.5");
        assert_eq!(fmt_ratio_fixed(1.5, 2), "1.50");
        assert_eq!(fmt_ratio_fixed(1.0 / 3.0, 2), "0.33");
        // Near zero: 0.001 is not 0; zero is.
        assert_eq!(fmt_ratio_short(0.001), "0.001");
        assert_eq!(fmt_ratio_short(0.0), "0");
        assert_eq!(fmt_ratio_short(-0.0), "0");
        assert_eq!(fmt_ratio_short(-0.001), "-0.001");
        // One place, as the retry charts label their bars.
        assert_eq!(fmt_ratio_fixed(1.04, 1), "1.04");
        assert_eq!(fmt_ratio_fixed(1.0, 1), "1.0");
        assert_eq!(fmt_ratio_fixed(8.2, 1), "8.2");
    }

    /// Bars side by side share one precision (`output/backoff`'s full-jitter
    /// bars read 6.98 beside 6.9 and 7.1).
    #[test]
    fn ratios_side_by_side_share_their_decimals() {
        assert_eq!(
            fmt_ratios_fixed(&[6.98, 6.9, 7.96, 7.1, 50.5, 1.0], 1),
            ["6.98", "6.90", "7.96", "7.10", "50.50", "1.00"]
        );
        assert_eq!(fmt_ratios_fixed(&[8.2, 1.0, 50.5], 1), ["8.2", "1.0", "50.5"]);
        assert_eq!(fmt_ratios_fixed(&[], 1), Vec::<String>::new());
        // A table column: output/backoff_closed's attempts per request,
        // 7731 / 1288 = 6.0023 beside 6.27 and 5.99, and a limiter without
        // clients.
        assert_eq!(
            fmt_ratio_column(&[Some(6.27), Some(7731.0 / 1288.0), None, Some(5.99)], 2),
            ["6.270", "6.002", "n/a", "5.990"]
        );
        assert_eq!(fmt_ratio_column(&[None, Some(1.0)], 2), ["n/a", "1.00"]);
    }
}
