//! Machine-readable CSV: `summary.csv`, `timeline.csv`, `decisions.csv`,
//! `admission_curve.csv` and the sweeps' tables. Every file is written
//! through `csv::Writer` (quoting as the format needs, `\n` line ends); this
//! module only chooses columns and formats values.

use std::io::Write;

use super::{excess_share, fmt_ratio};
use crate::engine::{DecisionRecord, DecisionSink, RunReport};
use crate::sweep::burst_pair::Unmeasured;
use crate::sweep::{BurstPairResult, LoadPoint, RetryPolicyPoint, analytic_burst_pair, rule_of_thumb};
use crate::time::Nanos;

pub const SUMMARY_HEADER: &str = "limiter,algorithm,slots,offered,admitted,rejected,peak,peak_ratio,excess,false_rejects,over_admission,disagreement,state_peak,state_bytes";
pub const TIMELINE_HEADER: &str = "bin_start,limiter,offered,admitted,rejected,window_peak";
pub const DECISIONS_HEADER: &str = "seq,time,limiter,admitted,window_count";
/// The columns `summary.csv` gains when clients react.
pub const CLIENT_COLUMNS: &str = "logical,attempts,amplification,succeeded,gave_up,unfinished,early_retries,too_early,time_to_success_p50,time_to_success_p95,time_to_success_p99,time_to_success_max";
pub const ADMISSION_CURVE_HEADER: &str = "limiter,tau,max_admitted,exact_bound";
pub const ERROR_VS_SLOTS_HEADER: &str = "limiter,algorithm,slots,grid,band_width,band_width_analytic,rule_of_thumb,violation_probability,violation_probability_analytic,worst_peak,worst_peak_ratio,mean_violation_excess,resolved,not_measured";
pub const LOAD_SWEEP_HEADER: &str = "load,limiter,algorithm,slots,offered,admitted,peak,peak_ratio,excess,excess_share,over_admission,disagreement,false_rejects";
pub const RETRY_POLICIES_HEADER: &str = "policy,backoff,base,cap,max_attempts,jitter,budget,max_tokens,token_ratio,retry_quota,limiter,logical,attempts,amplification,attempts_per_success,succeeded,gave_up,unfinished,early_retries,too_early,time_to_success_p50,time_to_success_p95,time_to_success_p99,time_to_success_max,peak_ratio";

/// A CSV table written in memory: a header, then rows.
fn table(header: &str, rows: impl FnOnce(&mut csv::Writer<Vec<u8>>) -> csv::Result<()>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let written = w.write_record(header.split(',')).and_then(|()| rows(&mut w));
    // Writing into memory fails only on a bug (a row of the wrong length).
    written.expect("an in-memory CSV table");
    let bytes = w.into_inner().expect("an in-memory CSV table");
    String::from_utf8(bytes).expect("CSV of UTF-8 fields")
}

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), fmt_ratio)
}

fn opt_u64(v: Option<u64>) -> String {
    v.map_or(String::new(), |n| n.to_string())
}

/// Whether any limiter of the run has reacting clients.
fn reacts(report: &RunReport) -> bool {
    report.limiters.iter().any(|l| l.clients.is_some())
}

/// Whether any limiter of the run shapes (may delay requests).
fn shapes(report: &RunReport) -> bool {
    report.limiters.iter().any(|l| l.delays.is_some())
}

/// The columns `summary.csv` gains when a limiter shapes.
pub const DELAY_COLUMNS: &str = "delayed,delay_p50,delay_p95,delay_p99,delay_max,queue_peak";

/// `summary.csv`: one row per limiter; ratios as plain fractions; the
/// clients' figures when they react and the delays when a limiter shapes
/// (times in decimal seconds).
pub fn summary(report: &RunReport) -> String {
    table(&summary_header(report), |w| {
        for l in &report.limiters {
            w.write_record(summary_row(report, l))?;
        }
        Ok(())
    })
}

/// `summary.csv`'s header for `report`: [`SUMMARY_HEADER`], then the
/// clients' columns when they react and the delays' when a limiter shapes.
pub fn summary_header(report: &RunReport) -> String {
    let mut header = SUMMARY_HEADER.to_string();
    if reacts(report) {
        header = format!("{header},{CLIENT_COLUMNS}");
    }
    if shapes(report) {
        header = format!("{header},{DELAY_COLUMNS}");
    }
    header
}

/// Limiter `l`'s row of `summary.csv`, under [`summary_header`].
pub fn summary_row(report: &RunReport, l: &crate::metrics::LimiterReport) -> Vec<String> {
    let c = &l.counts;
    let mut row = sweep_figures(l);
    row.extend([opt(l.disagreement()), l.state.entries.to_string(), l.state.bytes.to_string()]);
    if let Some(k) = &l.clients {
        let q = |q: f64| k.tts_quantile(q).map_or(String::new(), |t| t.to_string());
        row.extend([
            k.logical.to_string(),
            c.offered.to_string(),
            opt(k.amplification()),
            k.succeeded.to_string(),
            k.gave_up.to_string(),
            k.unfinished.to_string(),
            k.early_retries.to_string(),
            k.too_early.to_string(),
            q(0.5),
            q(0.95),
            q(0.99),
            q(1.0),
        ]);
    } else if reacts(report) {
        row.extend(std::iter::repeat_n(String::new(), CLIENT_COLUMNS.split(',').count()));
    }
    if shapes(report) {
        match &l.delays {
            Some(d) => {
                let q = |q: f64| d.quantile(q).map_or(String::new(), |t| t.to_string());
                row.extend([
                    d.delayed.to_string(),
                    q(0.5),
                    q(0.95),
                    q(0.99),
                    q(1.0),
                    d.queue_peak().to_string(),
                ]);
            }
            None => row.extend(std::iter::repeat_n(String::new(), DELAY_COLUMNS.split(',').count())),
        }
    }
    row
}

/// `timeline.csv`: long format, one row per bin per limiter, bins in time
/// order; with reacting clients also the attempts and, of them, retries;
/// with a shaping limiter the delayed requests and those that reached the
/// backend.
pub fn timeline(report: &RunReport) -> String {
    let width = report.timeline.width().get();
    let clients = reacts(report);
    let shaping = shapes(report);
    let mut header = TIMELINE_HEADER.to_string();
    if clients {
        header.push_str(",attempts,retries");
    }
    if shaping {
        header.push_str(",delayed,backend");
    }
    table(&header, |w| {
        for (b, row) in report.timeline.bins().iter().enumerate() {
            let start = Nanos::new(b as u64 * width).to_string();
            for (bin, l) in row.iter().zip(&report.limiters) {
                let mut record = vec![
                    start.clone(),
                    l.label.clone(),
                    bin.offered.to_string(),
                    bin.admitted.to_string(),
                    bin.rejected.to_string(),
                    bin.window_peak.to_string(),
                ];
                if clients {
                    record.extend([bin.offered.to_string(), bin.retries.to_string()]);
                }
                if shaping {
                    record.extend([bin.delayed.to_string(), bin.backend().to_string()]);
                }
                w.write_record(&record)?;
            }
        }
        Ok(())
    })
}

/// `admission_curve.csv`: for each limiter and interval length `tau`
/// (decimal seconds), the most requests it admitted in any `(t - tau, t]`,
/// and the exact rule's bound `L * ceil(tau / W)`.
pub fn admission_curve(report: &RunReport) -> String {
    table(ADMISSION_CURVE_HEADER, |w| {
        for l in &report.limiters {
            for &(tau, admitted) in &l.admission_curve {
                w.write_record([
                    l.label.clone(),
                    tau.to_string(),
                    admitted.to_string(),
                    crate::metrics::exact_bound(report.limit, tau).to_string(),
                ])?;
            }
        }
        Ok(())
    })
}

/// Streams `decisions.csv` rows as the engine makes them.
pub struct DecisionsWriter<W: Write> {
    out: csv::Writer<W>,
    labels: Vec<String>,
    /// Write each request's delay (a shaping limiter is in the run).
    delays: bool,
    /// Write the node that decided each request (the limiters run on
    /// many nodes).
    nodes: bool,
    /// Reused for each number of a row.
    buf: String,
}

/// The columns `decisions.csv` adds to its first five for a run.
#[derive(Clone, Copy, Debug, Default)]
pub struct DecisionColumns {
    /// `attempt` and `logical`: the clients react.
    pub attempts: bool,
    /// `delay`: a shaping limiter is in the run.
    pub delays: bool,
    /// `node`: the limiters run on many nodes (empty for the exact
    /// reference, which never is).
    pub nodes: bool,
}

impl<W: Write> DecisionsWriter<W> {
    /// A writer for a run of these limiters, with the extra columns the
    /// run needs.
    pub fn new(out: W, labels: &[String], columns: DecisionColumns) -> std::io::Result<DecisionsWriter<W>> {
        let DecisionColumns { attempts, delays, nodes } = columns;
        let mut out = csv::Writer::from_writer(out);
        let mut header: Vec<&str> = DECISIONS_HEADER.split(',').collect();
        if attempts {
            header.extend(["attempt", "logical"]);
        }
        if delays {
            header.push("delay");
        }
        if nodes {
            header.push("node");
        }
        out.write_record(header).map_err(std::io::Error::from)?;
        Ok(DecisionsWriter { out, labels: labels.to_vec(), delays, nodes, buf: String::new() })
    }

    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        self.out.into_inner().map_err(|e| e.into_error())
    }

    fn number(&mut self, v: impl std::fmt::Display) -> csv::Result<()> {
        use std::fmt::Write as _;
        self.buf.clear();
        let _ = write!(self.buf, "{v}");
        self.out.write_field(&self.buf)
    }
}

impl<W: Write> DecisionSink for DecisionsWriter<W> {
    fn record(&mut self, r: &DecisionRecord) -> std::io::Result<()> {
        self.number(r.seq)
            .and_then(|()| self.number(r.time))
            .and_then(|()| self.out.write_field(&self.labels[r.limiter]))
            .and_then(|()| self.number(u8::from(r.admitted)))
            .and_then(|()| self.number(r.window_count))
            .and_then(|()| match r.attempt {
                Some((attempt, logical)) => self.number(attempt).and_then(|()| match logical {
                    Some(l) => self.number(l),
                    None => self.out.write_field(""),
                }),
                None => Ok(()),
            })
            .and_then(|()| if self.delays { self.number(r.delay) } else { Ok(()) })
            .and_then(|()| match (self.nodes, r.node) {
                (false, _) => Ok(()),
                (true, Some(node)) => self.number(node),
                (true, None) => self.out.write_field(""),
            })
            .and_then(|()| self.out.write_record(None::<&[u8]>))
            .map_err(std::io::Error::from)
    }
}

/// `error_vs_slots.csv`: the burst-pair sweep, one row per limiter; fractions.
pub fn error_vs_slots(result: &BurstPairResult) -> String {
    table(ERROR_VS_SLOTS_HEADER, |w| {
        for r in &result.rows {
            let analytic = analytic_burst_pair(&r.spec);
            // A row the sweep does not measure (N > G, or a limiter a lone
            // pair cannot break) has no measured figures.
            let measured = |v: String| if r.measured() { v } else { String::new() };
            w.write_record([
                r.label.clone(),
                r.spec.algorithm().to_string(),
                opt_u64(r.spec.slots()),
                result.grid.to_string(),
                measured(fmt_ratio(r.band_width(result.grid))),
                opt(analytic.map(|a| a.0)),
                opt(rule_of_thumb(&r.spec)),
                measured(fmt_ratio(r.violation_probability(result.grid))),
                opt(analytic.map(|a| a.1)),
                measured(r.worst_peak.to_string()),
                measured(fmt_ratio(r.worst_peak_ratio(result.limit.requests))),
                measured(opt(r.mean_violation_excess())),
                r.resolved().to_string(),
                match r.unmeasured {
                    None => "",
                    Some(Unmeasured::FinerThanGrid) => "n_above_grid",
                    Some(Unmeasured::PairOpensWindow) => "pair_opens_window",
                }
                .to_string(),
            ])?;
        }
        Ok(())
    })
}

/// `load_sweep.csv`: one row per load factor per limiter; fractions.
/// `excess_share` is `excess / admitted`; `false_rejects` (last, so that
/// readers of the older columns by position still work) counts rejected
/// requests that found fewer than L admitted in their exact window.
pub fn load_sweep(points: &[LoadPoint]) -> String {
    table(LOAD_SWEEP_HEADER, |w| {
        for p in points {
            for l in &p.report.limiters {
                let c = &l.counts;
                w.write_record([
                    fmt_ratio(p.load),
                    l.label.clone(),
                    l.spec.algorithm().to_string(),
                    opt_u64(l.spec.slots()),
                    c.offered.to_string(),
                    c.admitted.to_string(),
                    c.peak.to_string(),
                    fmt_ratio(l.peak_ratio()),
                    c.excess.to_string(),
                    opt(excess_share(l)),
                    opt(l.over_admission()),
                    opt(l.disagreement()),
                    c.false_rejects.to_string(),
                ])?;
            }
        }
        Ok(())
    })
}

/// `retry_policies.csv`: one row per retry table per limiter; times in
/// decimal seconds, settings a policy does not use empty.
pub fn retry_policies(points: &[RetryPolicyPoint]) -> String {
    table(RETRY_POLICIES_HEADER, |w| {
        for p in points {
            let b = p.policy.backoff;
            let dur = |used: bool, d: Nanos| if used { d.to_string() } else { String::new() };
            let settings = [
                p.label.clone(),
                b.name().to_string(),
                dur(b.uses_base(), p.policy.base),
                dur(b.uses_cap(), p.policy.cap),
                p.policy.max_attempts.to_string(),
                dur(b == crate::clients::Backoff::RetryAfter, p.policy.jitter),
                p.policy.budget.map_or(String::new(), crate::clients::policy::format_budget),
                p.policy
                    .throttle
                    .map_or(String::new(), |t| crate::clients::policy::format_budget(t.max_tokens)),
                p.policy
                    .throttle
                    .map_or(String::new(), |t| crate::clients::policy::format_budget(t.token_ratio)),
                p.policy.retry_quota.map_or(String::new(), |q| q.to_string()),
            ];
            for l in &p.report.limiters {
                let Some(k) = &l.clients else { continue };
                let q = |q: f64| k.tts_quantile(q).map_or(String::new(), |t| t.to_string());
                let mut row = settings.to_vec();
                row.extend([
                    l.label.clone(),
                    k.logical.to_string(),
                    l.counts.offered.to_string(),
                    opt(k.amplification()),
                    opt(k.attempts_per_success()),
                    k.succeeded.to_string(),
                    k.gave_up.to_string(),
                    k.unfinished.to_string(),
                    k.early_retries.to_string(),
                    k.too_early.to_string(),
                    q(0.5),
                    q(0.95),
                    q(0.99),
                    q(1.0),
                    fmt_ratio(l.peak_ratio()),
                ]);
                w.write_record(&row)?;
            }
        }
        Ok(())
    })
}

/// `seed_sweep.csv`: long form, one row per seed per limiter, the seed
/// then the limiter's `summary.csv` row of that seed's run, written as
/// `summary.csv` writes it (the scenario's own seed first: its rows are
/// `summary.csv`'s).
pub fn seed_sweep(result: &crate::sweep::SeedSweepResult) -> String {
    let Some(own) = result.own() else { return String::new() };
    table(&format!("seed,{}", summary_header(own)), |w| {
        for p in &result.points {
            for l in &p.report.limiters {
                let mut row = vec![p.seed.to_string()];
                row.extend(summary_row(&p.report, l));
                w.write_record(&row)?;
            }
        }
        Ok(())
    })
}

// ---- many nodes ---------------------------------------------------------------

pub const NODES_HEADER: &str = "limiter,node,admitted,rejected,peak,peak_ratio";
pub const NODES_SWEEP_HEADER: &str = "nodes,per_node,limiter,algorithm,slots,offered,admitted,rejected,peak,peak_ratio,excess,false_rejects,over_admission,analytic_peak_ratio";
pub const RTT_SWEEP_HEADER: &str = "rtt,store,arrivals_per_rtt,limiter,algorithm,slots,offered,admitted,rejected,peak,peak_ratio,excess,false_rejects,over_admission,estimated_over_admission";
pub const SYNC_SWEEP_HEADER: &str = "sync_interval,nodes,limiter,algorithm,slots,offered,admitted,rejected,peak,peak_ratio,excess,false_rejects,over_admission,never_synced_peak_ratio";

/// `nodes.csv`: one row per limiter on nodes per node (the exact reference
/// is not on nodes). `peak` is the most the node admitted in one exact
/// window, all keys together; `peak_ratio` is `peak / L` with the scenario's
/// `L`, so a node's share of the global limit.
pub fn nodes(report: &RunReport) -> String {
    table(NODES_HEADER, |w| {
        for l in &report.limiters {
            for (i, n) in l.nodes.iter().enumerate() {
                w.write_record([
                    l.label.clone(),
                    i.to_string(),
                    n.admitted.to_string(),
                    n.rejected.to_string(),
                    n.peak.to_string(),
                    fmt_ratio(n.peak as f64 / report.limit.requests as f64),
                ])?;
            }
        }
        Ok(())
    })
}

/// The columns every topology sweep row shares, from `limiter` on (and
/// the first of a `summary.csv` row).
fn sweep_figures(l: &crate::metrics::LimiterReport) -> Vec<String> {
    let c = &l.counts;
    vec![
        l.label.clone(),
        l.spec.algorithm().to_string(),
        opt_u64(l.spec.slots()),
        c.offered.to_string(),
        c.admitted.to_string(),
        c.rejected.to_string(),
        c.peak.to_string(),
        fmt_ratio(l.peak_ratio()),
        c.excess.to_string(),
        c.false_rejects.to_string(),
        opt(l.over_admission()),
    ]
}

/// A topology sweep's table (`nodes_sweep.csv`, `rtt_sweep.csv`,
/// `sync_sweep.csv`): one row per point per limiter; times in decimal
/// seconds, ratios as fractions.
pub fn topology_sweep(result: &crate::sweep::TopologySweepResult) -> String {
    use crate::nodes::Mode;
    use crate::sweep::topology::Parameter;
    let header = match result.parameter {
        Parameter::Nodes => NODES_SWEEP_HEADER,
        Parameter::Rtt => RTT_SWEEP_HEADER,
        Parameter::SyncInterval => SYNC_SWEEP_HEADER,
    };
    table(header, |w| {
        for p in &result.points {
            let t = &p.topology;
            for l in &p.report.limiters {
                let mut row = match (result.parameter, t.mode) {
                    (Parameter::Rtt, Mode::Central { rtt, atomic }) => vec![
                        rtt.to_string(),
                        if atomic { "atomic" } else { "get-then-set" }.to_string(),
                        opt(p.arrivals_per_rtt()),
                    ],
                    (Parameter::SyncInterval, Mode::Sync { interval }) => {
                        vec![interval.to_string(), t.count.to_string()]
                    }
                    _ => {
                        let per_node =
                            if t.mode == Mode::Local { t.per_node.to_string() } else { String::new() };
                        vec![t.count.to_string(), per_node]
                    }
                };
                row.extend(sweep_figures(l));
                row.push(match result.parameter {
                    Parameter::Rtt => opt(p.estimated_over_admission(l)),
                    _ => opt(p.analytic_peak_ratio(l)),
                });
                w.write_record(&row)?;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_only_when_csv_needs_it() {
        let out = table("a,b", |w| {
            w.write_record(["plain", "with,comma"])?;
            w.write_record(["say \"hi\"", ""])
        });
        assert_eq!(out, "a,b\nplain,\"with,comma\"\n\"say \"\"hi\"\"\",\n");
    }
}
