//! Output writers: each turns results into bytes, one format per file.
//! [`OutputDir`] routes them into a staged directory that replaces the
//! previous results only when everything was written.

pub mod csv;
pub mod markdown;
pub mod output_dir;
pub mod report;
pub mod table;
pub mod text;

pub use output_dir::{Abandoned, OutputDir, OutputError, abandon_all_staging};

/// A ratio with up to 6 decimals and no trailing zeros (`2`, `0.5`, `0.333333`).
pub fn fmt_ratio(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".to_string() } else { s.to_string() }
}

/// A fraction as a percentage with one decimal (`100.0 %`), signed when asked.
pub fn fmt_percent(v: f64, signed: bool) -> String {
    let p = v * 100.0;
    let p = if p.abs() < 0.05 { 0.0 } else { p };
    if signed && p > 0.0 { format!("+{p:.1} %") } else { format!("{p:.1} %") }
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
    let keys = if report.keys > 1 { format!(" from {} client keys", report.keys) } else { String::new() };
    let span = match (report.first_arrival, report.last_arrival) {
        (Some(a), Some(b)) if a == b && report.arrivals == 1 => format!(", at {a} s"),
        (Some(a), Some(b)) => format!(", first at {a} s, last at {b} s"),
        _ => String::new(),
    };
    format!("{}{keys}{span}", count_of(report.arrivals, "request"))
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

    #[test]
    fn number_formats() {
        assert_eq!(fmt_ratio(2.0), "2");
        assert_eq!(fmt_ratio(0.5), "0.5");
        assert_eq!(fmt_ratio(1.0 / 3.0), "0.333333");
        assert_eq!(fmt_ratio(-0.0), "0");
        assert_eq!(fmt_percent(1.0, true), "+100.0 %");
        assert_eq!(fmt_percent(-0.0001, true), "0.0 %");
        assert_eq!(fmt_bytes(16), "16 B");
        assert_eq!(fmt_bytes(1536), "1.5 KiB");
    }
}
