//! Machine-readable CSV: `summary.csv`, `timeline.csv`, `decisions.csv`.

use std::io::Write;

use super::{excess_share, fmt_ratio};
use crate::engine::{DecisionRecord, DecisionSink, RunReport};
use crate::sweep::{BurstPairResult, LoadPoint, analytic_burst_pair, rule_of_thumb};
use crate::time::Nanos;

pub const SUMMARY_HEADER: &str = "limiter,algorithm,slots,offered,admitted,rejected,peak,peak_ratio,excess,false_rejects,over_admission,disagreement,state_peak,state_bytes";
pub const TIMELINE_HEADER: &str = "bin_start,limiter,offered,admitted,rejected,window_peak";
pub const DECISIONS_HEADER: &str = "seq,time,limiter,admitted,window_count";

/// Quotes a field when CSV needs it (labels hold commas only if a user makes them).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

/// `summary.csv`: one row per limiter; ratios as plain fractions.
pub fn summary(report: &RunReport) -> String {
    let mut out = String::from(SUMMARY_HEADER);
    out.push('\n');
    for l in &report.limiters {
        let c = &l.counts;
        let row = [
            field(&l.label),
            l.spec.algorithm().to_string(),
            l.spec.slots().map_or(String::new(), |n| n.to_string()),
            c.offered.to_string(),
            c.admitted.to_string(),
            c.rejected.to_string(),
            c.peak.to_string(),
            fmt_ratio(l.peak_ratio()),
            c.excess.to_string(),
            c.false_rejects.to_string(),
            l.over_admission().map_or(String::new(), fmt_ratio),
            l.disagreement().map_or(String::new(), fmt_ratio),
            l.state.entries.to_string(),
            l.state.bytes.to_string(),
        ];
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

/// `timeline.csv`: long format, one row per bin per limiter, bins in time order.
pub fn timeline(report: &RunReport) -> String {
    let width = report.timeline.width().get();
    let mut out = String::from(TIMELINE_HEADER);
    out.push('\n');
    let labels: Vec<String> = report.limiters.iter().map(|l| field(&l.label)).collect();
    for (b, row) in report.timeline.bins().iter().enumerate() {
        let start = Nanos::new(b as u64 * width);
        for (i, bin) in row.iter().enumerate() {
            out.push_str(&format!(
                "{start},{},{},{},{},{}\n",
                labels[i], bin.offered, bin.admitted, bin.rejected, bin.window_peak
            ));
        }
    }
    out
}

/// Streams `decisions.csv` rows as the engine makes them.
pub struct DecisionsWriter<W: Write> {
    out: W,
    labels: Vec<String>,
}

impl<W: Write> DecisionsWriter<W> {
    pub fn new(mut out: W, labels: &[String]) -> std::io::Result<DecisionsWriter<W>> {
        writeln!(out, "{DECISIONS_HEADER}")?;
        Ok(DecisionsWriter { out, labels: labels.iter().map(|l| field(l)).collect() })
    }

    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> DecisionSink for DecisionsWriter<W> {
    fn record(&mut self, r: &DecisionRecord) -> std::io::Result<()> {
        writeln!(
            self.out,
            "{},{},{},{},{}",
            r.seq,
            r.time,
            self.labels[r.limiter],
            u8::from(r.admitted),
            r.window_count
        )
    }
}

pub const ERROR_VS_SLOTS_HEADER: &str = "limiter,algorithm,slots,grid,band_width,band_width_analytic,rule_of_thumb,violation_probability,violation_probability_analytic,worst_peak,worst_peak_ratio";
pub const LOAD_SWEEP_HEADER: &str = "load,limiter,algorithm,slots,offered,admitted,peak,peak_ratio,excess,excess_share,over_admission,disagreement";

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), fmt_ratio)
}

/// `error_vs_slots.csv`: the burst-pair sweep, one row per limiter; fractions.
pub fn error_vs_slots(result: &BurstPairResult) -> String {
    let mut out = String::from(ERROR_VS_SLOTS_HEADER);
    out.push('\n');
    for r in &result.rows {
        let analytic = analytic_burst_pair(&r.spec);
        let row = [
            field(&r.label),
            r.spec.algorithm().to_string(),
            r.spec.slots().map_or(String::new(), |n| n.to_string()),
            result.grid.to_string(),
            fmt_ratio(r.band_width(result.grid)),
            opt(analytic.map(|a| a.0)),
            opt(rule_of_thumb(&r.spec)),
            fmt_ratio(r.violation_probability(result.grid)),
            opt(analytic.map(|a| a.1)),
            r.worst_peak.to_string(),
            fmt_ratio(r.worst_peak_ratio(result.limit.requests)),
        ];
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

/// `load_sweep.csv`: one row per load factor per limiter; fractions.
/// `excess_share` is `excess / admitted`.
pub fn load_sweep(points: &[LoadPoint]) -> String {
    let mut out = String::from(LOAD_SWEEP_HEADER);
    out.push('\n');
    for p in points {
        for l in &p.report.limiters {
            let c = &l.counts;
            let row = [
                fmt_ratio(p.load),
                field(&l.label),
                l.spec.algorithm().to_string(),
                l.spec.slots().map_or(String::new(), |n| n.to_string()),
                c.offered.to_string(),
                c.admitted.to_string(),
                c.peak.to_string(),
                fmt_ratio(l.peak_ratio()),
                c.excess.to_string(),
                opt(excess_share(l)),
                opt(l.over_admission()),
                opt(l.disagreement()),
            ];
            out.push_str(&row.join(","));
            out.push('\n');
        }
    }
    out
}
