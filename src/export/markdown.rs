//! Markdown for docs: `summary.md` (the summary, and the delays, clients and
//! nodes tables when a run has them) and the sweeps' tables with their
//! method and notes (`error_vs_slots.md`, `load_sweep.md`,
//! `retry_policies.md`, the topology sweeps' files).

use std::fmt::Write;

use super::table::{Align, Table, pad};
use super::{
    excess_share, fmt_bytes, fmt_percent, fmt_percent2, fmt_ratio, fmt_ratio_column, fmt_ratio_fixed,
    fmt_ratio_short,
};
use crate::engine::RunReport;
use crate::sweep::burst_pair::Unmeasured;
use crate::sweep::{BurstPairResult, LoadPoint, RetryPolicyPoint, analytic_burst_pair, rule_of_thumb};
use crate::time::format_duration;

/// Renders a table as GitHub-flavoured Markdown, columns aligned in the source too.
pub fn render_table(table: &Table) -> String {
    let widths: Vec<usize> = table.widths().iter().map(|w| (*w).max(3)).collect();
    let mut out = String::new();
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    out.push_str(&line(
        table.headers.iter().enumerate().map(|(i, h)| pad(h, widths[i], table.align[i])).collect(),
    ));
    out.push_str(&line(
        widths
            .iter()
            .zip(&table.align)
            .map(|(w, a)| match a {
                Align::Left => format!(":{}", "-".repeat(w - 1)),
                Align::Right => format!("{}:", "-".repeat(w - 1)),
            })
            .collect(),
    ));
    for row in &table.rows {
        out.push_str(&line(row.iter().enumerate().map(|(i, c)| pad(c, widths[i], table.align[i])).collect()));
    }
    out
}

/// The human summary table: one row per limiter, percentages for the ratios.
pub fn summary_table(report: &RunReport) -> Table {
    use Align::*;
    let mut t = Table::new(&[
        ("limiter", Left),
        ("admitted", Right),
        ("rejected", Right),
        ("peak", Right),
        ("peak/L", Right),
        ("excess", Right),
        ("false rejects", Right),
        ("over-admission", Right),
        ("disagreement", Right),
        ("state", Right),
    ]);
    for l in &report.limiters {
        let c = &l.counts;
        t.push(vec![
            l.label.clone(),
            c.admitted.to_string(),
            c.rejected.to_string(),
            c.peak.to_string(),
            fmt_ratio_fixed(l.peak_ratio(), 2),
            c.excess.to_string(),
            c.false_rejects.to_string(),
            l.over_admission().map_or("n/a".into(), |v| fmt_percent(v, true)),
            l.disagreement().map_or("n/a".into(), |v| fmt_percent(v, false)),
            format!("{} ({})", l.state.entries, fmt_bytes(l.state.bytes)),
        ]);
    }
    t
}

/// The admission curve as a table: a row per limiter, a column per
/// interval length, the exact rule's bound first. Empty without a curve.
pub fn admission_curve_table(report: &RunReport) -> Table {
    let Some(taus) = report.limiters.iter().map(|l| &l.admission_curve).find(|c| !c.is_empty()) else {
        return Table::default();
    };
    let mut columns: Vec<(String, Align)> = vec![("limiter".into(), Align::Left)];
    columns.extend(taus.iter().map(|(tau, _)| (format!("A({})", format_duration(*tau)), Align::Right)));
    let headers: Vec<(&str, Align)> = columns.iter().map(|(h, a)| (h.as_str(), *a)).collect();
    let mut t = Table::new(&headers);
    let mut bound = vec!["exact bound L × ⌈τ/W⌉".to_string()];
    bound.extend(taus.iter().map(|(tau, _)| crate::metrics::exact_bound(report.limit, *tau).to_string()));
    t.push(bound);
    for l in report.limiters.iter().filter(|l| !l.admission_curve.is_empty()) {
        let mut row = vec![l.label.clone()];
        row.extend(l.admission_curve.iter().map(|(_, a)| a.to_string()));
        t.push(row);
    }
    t
}

/// Whether every request of the run came from closed clients: each lane's
/// own, with no shared trace to describe.
pub fn only_closed_clients(report: &RunReport) -> bool {
    let closed = |c: &crate::clients::ClientReport| c.logical > c.open_logical;
    report.arrivals == 0 && report.limiters.iter().any(|l| l.clients.as_ref().is_some_and(closed))
}

/// "Trace: 206 requests, first at 0.07 s, last at 11.9 s" (and the client
/// keys when there are several), for the Markdown outputs.
pub fn trace_sentence(report: &RunReport) -> String {
    if only_closed_clients(report) {
        return "Trace: no open-loop requests (closed clients only).".to_string();
    }
    format!("Trace: {}.", super::arrivals_phrase(report))
}

/// `summary.md`: a heading line on the run, then the table.
pub fn summary(title: &str, report: &RunReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### {title}
"
    );
    let _ = writeln!(
        out,
        "Limit: {} requests per {}{}. {} Reference: sliding log (exact).\n",
        report.limit.requests,
        format_duration(report.limit.window),
        if report.keys > 1 { " per client key" } else { "" },
        trace_sentence(report)
    );
    out.push_str(&render_table(&summary_table(report)));
    let _ = writeln!(out, "\n{}", summary_note(report));
    let clients = clients_table(report);
    if !clients.rows.is_empty() {
        let _ = writeln!(out, "\n{}\n", CLIENTS_NOTE);
        out.push_str(&render_table(&clients));
    }
    let delays = delays_table(report);
    if !delays.rows.is_empty() {
        let _ = writeln!(out, "\n{}\n", DELAYS_NOTE);
        out.push_str(&render_table(&delays));
    }
    out
}

/// What the summary table's columns mean, in the words of
/// `docs/semantics.md` ("The metrics"), and for keyed runs how keys combine.
pub fn summary_note(report: &RunReport) -> String {
    let mut note = String::from(
        "**peak**: the most admitted requests in any exact window (t - W, t]; **excess**: requests admitted \
with L or more already in their exact window; **false rejects**: requests refused with fewer than L in it; \
**over-admission**: admitted / the sliding log's admitted - 1; **disagreement**: the share of requests \
decided otherwise than by the sliding log; **state**: the most items the limiter held at once (counters, \
slots or timestamps) and their bytes.",
    );
    if report.keys > 1 {
        note.push_str(
            " Each key has its own window: peak is the worst key's, the counts and the state add up over keys.",
        );
    }
    note
}

/// What the delays table means.
pub const DELAYS_NOTE: &str = "Shaping limiters delay requests instead of rejecting them: a delayed \
request reaches the backend later, and the exact window judges it there. So a refusal is a false reject \
when the backend's window held fewer than L at that instant: a limiter that spreads its admissions out can \
refuse with room left in the window, where one admitting the same requests at once cannot. Delay quantiles \
are over every admitted request (0 for those not delayed), to 3 significant digits (an HDR histogram; max \
is exact); **queue peak**: the most delayed requests waiting at once.";

/// The shaping limiters' delays, a row per limiter that may delay; empty
/// when none does.
pub fn delays_table(report: &RunReport) -> Table {
    use Align::*;
    let mut t = Table::new(&[
        ("limiter", Left),
        ("admitted", Right),
        ("delayed", Right),
        ("delay p50", Right),
        ("p95", Right),
        ("p99", Right),
        ("max", Right),
        ("queue peak", Right),
    ]);
    for l in &report.limiters {
        let Some(d) = &l.delays else { continue };
        let q = |q: f64| d.quantile(q).map_or("–".to_string(), fmt_seconds);
        t.push(vec![
            l.label.clone(),
            d.admitted.to_string(),
            d.delayed.to_string(),
            q(0.5),
            q(0.95),
            q(0.99),
            q(1.0),
            d.queue_peak().to_string(),
        ]);
    }
    t
}

/// What the clients table and the summary's last two columns mean when
/// clients react.
pub const CLIENTS_NOTE: &str = "Clients react to rejections, so each limiter has its own attempt stream: \
the counts above are attempts, judged on the exact window; **over-admission** and **disagreement** compare \
logical requests (succeeded or not) with the sliding log's, disagreement over the open-loop ones only.";

/// The clients' figures, a row per limiter; empty when nothing reacts.
pub fn clients_table(report: &RunReport) -> Table {
    use Align::*;
    let mut t = Table::new(&[
        ("limiter", Left),
        ("logical", Right),
        ("attempts", Right),
        ("attempts/logical", Right),
        ("succeeded", Right),
        ("gave up", Right),
        ("unfinished", Right),
        ("early retries", Right),
        ("too early", Right),
        ("time to success p50", Right),
        ("p95", Right),
        ("p99", Right),
        ("max", Right),
    ]);
    let reacting: Vec<_> = report.limiters.iter().filter_map(|l| Some((l, l.clients.as_ref()?))).collect();
    let amplification =
        fmt_ratio_column(&reacting.iter().map(|(_, k)| k.amplification()).collect::<Vec<_>>(), 2);
    for ((l, k), amplification) in reacting.into_iter().zip(amplification) {
        let q = |q: f64| k.tts_quantile(q).map_or("–".to_string(), fmt_seconds);
        t.push(vec![
            l.label.clone(),
            k.logical.to_string(),
            l.counts.offered.to_string(),
            amplification,
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
    }
    t
}

/// A duration with three significant digits in the unit that reads best:
/// `183 ms`, `4.31 s`, `12.5 µs`, `7 ns`; whole seconds from 99.5 s on
/// (`614 s`). Rounded half up in integer ns first, so 0.999999999 s is
/// `1.00 s`, not `1000 ms`.
pub fn fmt_seconds(t: crate::time::Nanos) -> String {
    let n = t.get();
    if n == 0 {
        return "0 s".into();
    }
    if n >= 99_500_000_000 {
        return format!("{} s", (u128::from(n) + 500_000_000) / 1_000_000_000);
    }
    let digits = n.ilog10() + 1;
    let rounded = if digits > 3 {
        let scale = 10u64.pow(digits - 3);
        (n / scale + u64::from(n % scale >= scale / 2)) * scale
    } else {
        n
    };
    let (unit, name) = match rounded {
        1_000_000_000.. => (1e9, "s"),
        1_000_000.. => (1e6, "ms"),
        1_000.. => (1e3, "µs"),
        _ => return format!("{rounded} ns"),
    };
    let v = rounded as f64 / unit;
    let decimals = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.decimals$} {name}")
}

/// The burst-pair table: measured band and violation next to the analysis
/// and the common rule of thumb.
pub fn error_vs_slots_table(result: &BurstPairResult) -> Table {
    use Align::*;
    let mut t = Table::new(&[
        ("limiter", Left),
        ("band (measured)", Right),
        ("band (analytic 1/N)", Right),
        ("rule of thumb", Right),
        ("violation (measured)", Right),
        ("violation (analytic ≈ 1/(2N))", Right),
        ("worst peak/L", Right),
        ("mean excess per violating pair", Right),
    ]);
    let dash = || "–".to_string();
    for r in &result.rows {
        let a = analytic_burst_pair(&r.spec);
        if let Some(why) = r.unmeasured {
            // The method paragraph says why (`unresolved_note`, `opens_window_note`).
            let no = || match why {
                Unmeasured::FinerThanGrid => "not resolved".to_string(),
                Unmeasured::PairOpensWindow => "not measured".to_string(),
            };
            t.push(vec![
                r.label.clone(),
                no(),
                a.map_or_else(dash, |a| fmt_percent2(a.0)),
                rule_of_thumb(&r.spec).map_or_else(dash, |c| format!("≈ {:.0} %", c * 100.0)),
                no(),
                a.map_or_else(dash, |a| fmt_percent2(a.1)),
                no(),
                no(),
            ]);
            continue;
        }
        t.push(vec![
            r.label.clone(),
            fmt_percent2(r.band_width(result.grid)),
            a.map_or_else(dash, |a| fmt_percent2(a.0)),
            rule_of_thumb(&r.spec).map_or_else(dash, |c| format!("≈ {:.0} %", c * 100.0)),
            fmt_percent2(r.violation_probability(result.grid)),
            a.map_or_else(dash, |a| fmt_percent2(a.1)),
            fmt_ratio(r.worst_peak_ratio(result.limit.requests)),
            r.mean_violation_excess().map_or_else(dash, |e| {
                let l = result.limit.requests as f64;
                format!("{} ({}×L)", fmt_ratio_short(e), fmt_ratio_short(e / l))
            }),
        ]);
    }
    t
}

/// How the burst-pair sweep is defined, for the Markdown files and the report.
pub fn burst_pair_method(result: &BurstPairResult) -> String {
    let w = format_duration(result.limit.window);
    let step = format_duration(crate::time::Nanos::new(result.limit.window.get() / u64::from(result.grid)));
    format!(
        "Two bursts of L = {l} requests, each at a single instant, the second a gap g after the first; \
the first at offset p against the {w} window grid. g and p each take {g} values (cell midpoints, \
a step of {step} = W/{g}), {pairs} pairs per limiter. **Band**: the share of gaps g for which some \
offset p admits more than L in one exact window (t - W, t]; **violation**: the share of (g, p) pairs \
that do; **mean excess**: over the violating pairs, the average number of requests admitted although \
L were already in their exact window (how badly the limit breaks when it does). Measured values are \
within one grid step (1/{g} = {gs}) of the analysis; with {g} steps a band of 1/N holds {g}/N steps, \
so N up to {g} is resolved, coarsely near that end.{unresolved}",
        l = result.limit.requests,
        g = result.grid,
        pairs = u64::from(result.grid) * u64::from(result.grid),
        gs = fmt_percent2(1.0 / f64::from(result.grid)),
        unresolved = burst_pair_notes(result).iter().fold(String::new(), |all, n| format!("{all} {n}")),
    )
}

/// What the burst-pair table's reader must know beyond the method: the
/// rows not measured and why, and the rows judged on backend times.
pub fn burst_pair_notes(result: &BurstPairResult) -> Vec<String> {
    [unresolved_note(result), opens_window_note(result), backend_note(result)].into_iter().flatten().collect()
}

/// The limiters a lone pair cannot break because it opens their window,
/// if any: why the sweep does not measure them.
pub fn opens_window_note(result: &BurstPairResult) -> Option<String> {
    let names: Vec<&str> = result.opening_own_window().map(|r| r.label.as_str()).collect();
    (!names.is_empty()).then(|| {
        format!(
            "**Not measured: {}.** A lone pair opens its window at the first burst, so no pair breaks it \
(it would show band 0 and worst peak/L 1); only earlier traffic that placed its window edge can, as a run \
over the scenario's own traffic shows.",
            names.join(", ")
        )
    })
}

/// The limiters that may delay, if any: their pairs are judged where the
/// backend sees them.
pub fn backend_note(result: &BurstPairResult) -> Option<String> {
    let names: Vec<&str> = result.rows.iter().filter(|r| r.spec.delays()).map(|r| r.label.as_str()).collect();
    (!names.is_empty()).then(|| {
        format!(
            "**Judged on backend times: {}.** These may delay a request instead of refusing it; a delayed \
request counts in the exact windows at the time it reaches the backend, as in a run, so a pair breaks \
such a limiter when more than L reach the backend in one exact window.",
            names.join(", ")
        )
    })
}

/// What the sweep could not measure, if anything: the limiters with more
/// slots than the grid has points, and how to measure them.
pub fn unresolved_note(result: &BurstPairResult) -> Option<String> {
    let names: Vec<&str> = result.unresolved().map(|r| r.label.as_str()).collect();
    let largest = result.unresolved().filter_map(|r| r.spec.sweep_traits().equivalent_slots).max()?;
    Some(format!(
        "**Not resolved: {}.** With more slots than the grid's {g} points, a band of W/N is narrower \
than one grid step, and the grid can miss it entirely and show a breakable limiter as unbreakable, \
so the measured figures are left out. To measure them, give `[sweep] grid = {largest}` or more (the sweep \
decides G × G pairs per limiter, so its time grows with G²).",
        names.join(", "),
        g = result.grid,
    ))
}

/// `error_vs_slots.md`.
pub fn error_vs_slots(result: &BurstPairResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### Error versus slot count: burst pairs, L = {} per {}\n",
        result.limit.requests,
        format_duration(result.limit.window)
    );
    let _ = writeln!(out, "{}\n", burst_pair_method(result));
    out.push_str(&render_table(&error_vs_slots_table(result)));
    out
}

/// The load-sweep table: one row per load factor per limiter.
pub fn load_sweep_table(points: &[LoadPoint]) -> Table {
    use Align::*;
    let mut t = Table::new(&[
        ("load", Right),
        ("limiter", Left),
        ("offered", Right),
        ("admitted", Right),
        ("peak/L", Right),
        ("excess", Right),
        ("excess share", Right),
        ("over-admission", Right),
        ("disagreement", Right),
        ("false rejects", Right),
    ]);
    for p in points {
        for l in &p.report.limiters {
            t.push(vec![
                fmt_ratio(p.load),
                l.label.clone(),
                l.counts.offered.to_string(),
                l.counts.admitted.to_string(),
                peak_ratio_cell(l),
                l.counts.excess.to_string(),
                excess_share(l).map_or("n/a".into(), fmt_percent2),
                l.over_admission().map_or("n/a".into(), |v| {
                    if v > 0.0 { format!("+{}", fmt_percent2(v)) } else { fmt_percent2(v) }
                }),
                l.disagreement().map_or("n/a".into(), fmt_percent2),
                l.counts.false_rejects.to_string(),
            ]);
        }
    }
    t
}

/// One sentence on how the load sweep was run.
pub fn load_sweep_method(points: &[LoadPoint], seed: u64) -> String {
    let Some(first) = points.first() else { return String::new() };
    let r = &first.report;
    format!(
        "Poisson arrivals at each load factor times L / W ({} per {}), {} s per load, seed {seed}. \
**excess share**: admitted requests that found L or more already in their exact window, over all \
admitted; **over-admission**: admitted / admitted by the sliding log - 1; **disagreement**: requests \
decided differently from the sliding log; **false rejects**: rejected requests that found fewer than L \
admitted in their exact window (refused although the exact rule would admit them).",
        r.limit.requests,
        format_duration(r.limit.window),
        r.end,
    )
}

/// `load_sweep.md`.
pub fn load_sweep(points: &[LoadPoint], seed: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### Load sweep: Poisson arrivals at several load factors\n");
    let _ = writeln!(out, "{}\n", load_sweep_method(points, seed));
    out.push_str(&render_table(&load_sweep_table(points)));
    out
}

/// The retry-policy comparison, a row per retry table per limiter.
pub fn retry_policies_table(points: &[RetryPolicyPoint]) -> Table {
    use Align::*;
    let mut t = Table::new(&[
        ("policy", Left),
        ("limiter", Left),
        ("logical", Right),
        ("attempts", Right),
        ("attempts/logical", Right),
        ("attempts/success", Right),
        ("succeeded", Right),
        ("gave up", Right),
        ("unfinished", Right),
        ("time to success p50", Right),
        ("p99", Right),
        ("max", Right),
    ]);
    let rows: Vec<_> = points
        .iter()
        .flat_map(|p| p.report.limiters.iter().filter_map(move |l| Some((p, l, l.clients.as_ref()?))))
        .collect();
    let column = |f: &dyn Fn(&crate::clients::ClientReport) -> Option<f64>| {
        fmt_ratio_column(&rows.iter().map(|(_, _, k)| f(k)).collect::<Vec<_>>(), 2)
    };
    let amplification = column(&|k| k.amplification());
    let per_success = column(&|k| k.attempts_per_success());
    for (((p, l, k), amplification), per_success) in rows.iter().zip(amplification).zip(per_success) {
        let q = |q: f64| k.tts_quantile(q).map_or("–".to_string(), fmt_seconds);
        t.push(vec![
            p.label.clone(),
            l.label.clone(),
            k.logical.to_string(),
            l.counts.offered.to_string(),
            amplification,
            per_success,
            k.succeeded.to_string(),
            match k.gave_up_share() {
                Some(share) if k.gave_up > 0 => format!("{} ({})", k.gave_up, fmt_percent(share, false)),
                _ => k.gave_up.to_string(),
            },
            k.unfinished.to_string(),
            q(0.5),
            q(0.99),
            q(1.0),
        ]);
    }
    t
}

// ---- the seed sweep --------------------------------------------------------------

/// How a seed sweep's figure is written, for one row: its seed's values,
/// min and max as the summary writes them (counts whole, ratios to two
/// places, percentages to two, or three under 1 %, durations to three
/// digits), the mean and the deviation one place finer, a percentage's
/// deviation in percentage points.
struct SeedFormat {
    unit: crate::sweep::seeds::Unit,
    signed: bool,
    places: usize,
}

impl SeedFormat {
    fn of(row: &crate::sweep::seeds::SeedRow) -> SeedFormat {
        use crate::sweep::seeds::{Metric, Unit};
        let unit = row.metric.unit();
        let biggest = row.stats.min.abs().max(row.stats.max.abs());
        let places = match unit {
            Unit::Percent if biggest < 0.01 => 3,
            _ => 2,
        };
        SeedFormat { unit, signed: row.metric == Metric::OverAdmission, places }
    }

    fn value(&self, v: f64) -> String {
        use crate::sweep::seeds::Unit;
        match self.unit {
            Unit::Count => format!("{v:.0}"),
            Unit::Ratio => fmt_ratio_fixed(v, 2),
            Unit::Percent => self.percent(v, self.places),
            Unit::Seconds => fmt_seconds(crate::time::Nanos::new(v.round() as u64)),
        }
    }

    fn mean(&self, v: f64) -> String {
        use crate::sweep::seeds::Unit;
        match self.unit {
            Unit::Count => format!("{v:.1}"),
            Unit::Ratio => fmt_ratio_fixed(v, 3),
            Unit::Percent => self.percent(v, self.places + 1),
            Unit::Seconds => self.value(v),
        }
    }

    fn sd(&self, v: f64) -> String {
        use crate::sweep::seeds::Unit;
        match self.unit {
            Unit::Count => format!("{v:.1}"),
            Unit::Ratio => format!("{v:.3}"),
            Unit::Percent if v == 0.0 => "0 pp".to_string(),
            Unit::Percent => format!("{:.p$} pp", v * 100.0, p = self.places + 1),
            Unit::Seconds => self.value(v),
        }
    }

    fn percent(&self, v: f64, places: usize) -> String {
        // Only an exact 0 (the reference's own over-admission) reads `0 %`.
        if v == 0.0 {
            return "0 %".to_string();
        }
        let p = v * 100.0;
        if self.signed && p > 0.0 { format!("+{p:.places$} %") } else { format!("{p:.places$} %") }
    }
}

/// The seed sweep's table: for each figure ([`crate::sweep::seeds::metrics`])
/// a row per limiter: its value at the scenario's own seed, the mean, the
/// sample standard deviation, min and max over the seeds. When every seed
/// gave every figure alike, one column of values instead.
pub fn seed_sweep_table(result: &crate::sweep::SeedSweepResult) -> Table {
    use Align::*;
    let Some(own) = result.own() else { return Table::default() };
    let n = result.points.len();
    let identical = result.identical();
    let own_seed = format!("seed {}", result.first_seed());
    let mut t = if identical {
        Table::new(&[("metric", Left), ("limiter", Left), ("every seed", Right)])
    } else {
        Table::new(&[
            ("metric", Left),
            ("limiter", Left),
            (own_seed.as_str(), Right),
            ("mean", Right),
            ("sd", Right),
            ("min", Right),
            ("max", Right),
        ])
    };
    let zero = seed_sweep_zero_metrics(result);
    let mut last = None;
    for row in result.rows().into_iter().filter(|r| !zero.contains(&r.metric)) {
        let f = SeedFormat::of(&row);
        // The metric on the first of its rows only: the table reads as one
        // block per figure.
        let metric = if last == Some(row.metric) { String::new() } else { row.metric.name().to_string() };
        last = Some(row.metric);
        let mut limiter = own.limiters[row.limiter].label.clone();
        if row.stats.n < n {
            limiter.push_str(&format!(" ({} of {n} seeds)", row.stats.n));
        }
        let s = &row.stats;
        if identical {
            t.push(vec![metric, limiter, f.value(s.min)]);
        } else {
            t.push(vec![
                metric,
                limiter,
                row.own.map_or("n/a".into(), |v| f.value(v)),
                f.mean(s.mean),
                s.sd.map_or("–".into(), |v| f.sd(v)),
                f.value(s.min),
                f.value(s.max),
            ]);
        }
    }
    t
}

/// The figures that were 0 for every limiter at every seed (false
/// rejects, where no limiter refuses what the exact rule admits): the
/// Markdown says so in a sentence, not in rows of zeros.
pub fn seed_sweep_zero_metrics(result: &crate::sweep::SeedSweepResult) -> Vec<crate::sweep::seeds::Metric> {
    let n = result.points.len();
    let rows = result.rows();
    let mut out: Vec<crate::sweep::seeds::Metric> = Vec::new();
    for r in &rows {
        if !out.contains(&r.metric)
            && rows
                .iter()
                .filter(|o| o.metric == r.metric)
                .all(|o| o.stats.n == n && o.stats.min == 0.0 && o.stats.max == 0.0)
        {
            out.push(r.metric);
        }
    }
    out
}

/// The limiters whose over-admission ranges (min to max over the seeds)
/// overlap, each pair with how the seeds rank them (every limiter sees the
/// same arrivals within a seed, so a pair compares seed by seed): "`a` and
/// `b` (`a` higher at 9 seeds, lower at 6, equal at 5)". Empty when no two
/// overlap.
pub fn seed_sweep_overlaps(result: &crate::sweep::SeedSweepResult) -> Vec<String> {
    use crate::sweep::seeds::Metric;
    let Some(own) = result.own() else { return Vec::new() };
    let rows: Vec<_> = result.rows().into_iter().filter(|r| r.metric == Metric::OverAdmission).collect();
    let mut out = Vec::new();
    for (k, a) in rows.iter().enumerate() {
        for b in &rows[k + 1..] {
            if a.stats.max < b.stats.min || b.stats.max < a.stats.min {
                continue;
            }
            let (va, vb) = (
                result.values(Metric::OverAdmission, a.limiter),
                result.values(Metric::OverAdmission, b.limiter),
            );
            let (mut higher, mut lower, mut equal) = (0, 0, 0);
            for (x, y) in va.iter().zip(&vb) {
                match (x, y) {
                    (Some(x), Some(y)) if x > y => higher += 1,
                    (Some(x), Some(y)) if x < y => lower += 1,
                    (Some(_), Some(_)) => equal += 1,
                    _ => {}
                }
            }
            let (na, nb) = (&own.limiters[a.limiter].label, &own.limiters[b.limiter].label);
            let all = higher + lower + equal;
            if equal == all {
                out.push(format!("{na} and {nb} (equal at every seed)"));
                continue;
            }
            let counts: Vec<String> = [(higher, "higher"), (lower, "lower"), (equal, "equal")]
                .iter()
                .filter(|(c, _)| *c > 0)
                .map(|&(c, w)| match c == all {
                    true => format!("{w} at every seed"),
                    false => format!("{w} at {}", crate::export::count_of(c, "seed")),
                })
                .collect();
            out.push(format!("{na} and {nb} ({na} {})", counts.join(", ")));
        }
    }
    out
}

/// How the seed sweep was run and what its columns mean, for its Markdown
/// file and the report: the seeds, what they draw, the statistics; when
/// every seed gave the same figures, that, plainly, and why.
pub fn seed_sweep_method(
    result: &crate::sweep::SeedSweepResult,
    scenario: &crate::scenario::Scenario,
) -> String {
    let n = result.points.len();
    let (first, last) = (result.first_seed(), result.last_seed());
    let mut kept = vec!["traffic", "limit", "limiters"];
    if !scenario.retry_descriptions().is_empty() || !scenario.closed_populations().is_empty() {
        kept.push("clients");
    }
    if scenario.nodes.is_some() {
        kept.push("nodes");
    }
    let kept = match kept.as_slice() {
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
        [] => String::new(),
    };
    let draws = scenario.random_draws();
    let (lo, hi) = result.arrivals_range();
    let trace = if lo == hi {
        format!("{} a run", crate::export::count_of(lo, "open-loop request"))
    } else {
        format!("{lo} to {hi} open-loop requests a run")
    };
    let head = format!(
        "The scenario's own {kept}, rerun once per seed from its own seed, {first}, to {last} ({n} runs, \
{trace}): each seed a new draw of everything the run draws at random{}, the same draw for every limiter \
within a seed.",
        if draws.is_empty() { String::new() } else { format!(" ({})", draws.join(", ")) }
    );
    let zero: Vec<&str> = seed_sweep_zero_metrics(result).iter().map(|m| m.name()).collect();
    let zero = match zero.as_slice() {
        [] => String::new(),
        [one] => format!(" **{one}** were 0 for every limiter at every seed, and have no rows."),
        [init @ .., last] => format!(
            " **{}** and **{last}** were 0 for every limiter at every seed, and have no rows.",
            init.join("**, **")
        ),
    };
    if result.identical() {
        let why = if draws.is_empty() {
            "this scenario draws nothing at random (no Poisson source, no closed clients, no retries with jitter, \
no random balancing across nodes), so the seed changes nothing"
                .to_string()
        } else {
            format!("its random draws ({}) moved none of them", draws.join(", "))
        };
        return format!(
            "{head} **Every seed gave the same figures for every limiter**: {why}. There is no spread to \
measure, and the table gives each figure once: what summary.md says holds for any seed.{zero}"
        );
    }
    let overlaps = seed_sweep_overlaps(result);
    let overlap = if seed_sweep_zero_metrics(result).contains(&crate::sweep::seeds::Metric::OverAdmission) {
        String::new()
    } else if overlaps.is_empty() {
        " No two limiters' over-admission ranges overlap: every seed ranks them alike.".to_string()
    } else {
        format!(
            " Over-admission ranges that overlap, with how the seeds rank each pair (the same arrivals within a \
seed): {}.",
            overlaps.join("; ")
        )
    };
    format!(
        "{head} **seed {first}**: the scenario's own run, as in summary.csv; **mean** and **sd** (the sample \
standard deviation, with n - 1) over the {n} seeds, a percentage's sd in percentage points (pp); **min**, \
**max**: the lowest and the highest seed's. seed_sweep.csv has every seed's summary.csv rows.\n\n\
Where two limiters' min-to-max ranges do not overlap, every seed ranks them alike; where they overlap, a \
difference at one seed may be that seed's luck.{overlap}{zero}"
    )
}

/// `seed_sweep.md`.
pub fn seed_sweep(result: &crate::sweep::SeedSweepResult, scenario: &crate::scenario::Scenario) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### Seed sweep: {} seeds, {} to {}\n",
        result.points.len(),
        result.first_seed(),
        result.last_seed()
    );
    let _ = writeln!(out, "{}\n", seed_sweep_method(result, scenario));
    out.push_str(&render_table(&seed_sweep_table(result)));
    out
}

// ---- many nodes ---------------------------------------------------------------

/// One sentence on the nodes a run's limiters ran on: the topology
/// (`Topology::describe`, with the clock offsets and store outages if
/// any), and how they are judged.
pub fn topology_sentence(t: &crate::nodes::Topology) -> String {
    let mut s = format!("Nodes: {}", t.describe());
    s.push_str(
        ". Every limiter but the sliding-log reference runs on them and is judged on what all nodes admitted together.",
    );
    s
}

/// A node's clock offset as a scenario writes it: `-40ms`, `0s`, `25ms`.
pub fn fmt_skew(ns: i64) -> String {
    let d = format_duration(crate::time::Nanos::new(ns.unsigned_abs()));
    if ns < 0 { format!("-{d}") } else { d }
}

/// The per-node table: a row per node of each limiter on nodes. `share`
/// is the node's part of what the limiter admitted; `peak` the most the node
/// admitted in one exact window (all keys together), over the scenario's
/// `L`.
pub fn nodes_table(report: &RunReport, topology: &crate::nodes::Topology) -> Table {
    use Align::*;
    let skewed = topology.skew.iter().any(|&k| k != 0);
    let mut columns = vec![("limiter", Left), ("node", Right)];
    if skewed {
        columns.push(("clock", Right));
    }
    columns.extend([
        ("admitted", Right),
        ("share", Right),
        ("rejected", Right),
        ("peak", Right),
        ("peak/L", Right),
    ]);
    // Locally each node enforces its own limit: how near it came to it.
    let own = (topology.mode == crate::nodes::Mode::Local).then_some(topology.per_node);
    if own.is_some() {
        columns.push(("peak/per node", Right));
    }
    let mut t = Table::new(&columns);
    for l in report.limiters.iter().filter(|l| !l.nodes.is_empty()) {
        for (i, n) in l.nodes.iter().enumerate() {
            let mut row = vec![l.label.clone(), i.to_string()];
            if skewed {
                row.push(fmt_skew(topology.skew.get(i).copied().unwrap_or(0)));
            }
            let share = (l.counts.admitted > 0).then(|| n.admitted as f64 / l.counts.admitted as f64);
            row.extend([
                n.admitted.to_string(),
                share.map_or("n/a".into(), |s| fmt_percent(s, false)),
                n.rejected.to_string(),
                n.peak.to_string(),
                fmt_ratio_fixed(n.peak as f64 / report.limit.requests as f64, 2),
            ]);
            if let Some(per_node) = own {
                row.push(fmt_ratio_fixed(n.peak as f64 / per_node as f64, 2));
            }
            t.push(row);
        }
    }
    t
}

/// How the retry-policy comparison was run, in a sentence or two.
pub fn retry_policies_method(points: &[RetryPolicyPoint], seed: u64) -> String {
    let Some(first) = points.first() else { return String::new() };
    let r = &first.report;
    format!(
        "The scenario's traffic, limit ({} per {}) and limiters, run once per retry table in place of \
[retry], seed {seed}: the open-loop arrivals are the same in every run, and each limiter's clients draw \
their random waits from the same stream in every run. **attempts/logical**: attempts per logical request \
(the calls AWS's article counts, per request); **attempts/success**: all attempts, those of requests that \
gave up included, per request that succeeded (what the chart draws: a policy that gives up pays for its \
lost requests); **time to success**: from a request's first attempt to its admitted one, over the \
requests that succeeded; **gave up**: out of attempts (or retry budget, or stopped by gRPC's throttling or an AWS retry quota), never to succeed, and their share of \
the logical requests; **unfinished**: still waiting for a retry when the run ended.",
        r.limit.requests,
        format_duration(r.limit.window),
    )
}

/// `retry_policies.md`.
pub fn retry_policies(points: &[RetryPolicyPoint], seed: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### Retry policies compared\n");
    let _ = writeln!(out, "{}\n", retry_policies_method(points, seed));
    out.push_str(&render_table(&retry_policies_table(points)));
    out
}

/// What `summary.md` adds for a run on nodes: the topology and the
/// per-node table.
pub fn nodes_summary(report: &RunReport, topology: &crate::nodes::Topology) -> String {
    let mut out = format!("\n{}\n\n", topology_sentence(topology));
    out.push_str(&render_table(&nodes_table(report, topology)));
    out
}

/// A topology sweep's table: a row per point per limiter.
pub fn topology_sweep_table(result: &crate::sweep::TopologySweepResult) -> Table {
    use crate::nodes::Mode;
    use crate::sweep::topology::Parameter;
    use Align::*;
    let mut columns: Vec<(&str, Align)> = match result.parameter {
        Parameter::Nodes => vec![("nodes K", Right), ("per node", Right)],
        Parameter::Rtt => vec![("rtt", Right), ("store", Left), ("arrivals per rtt", Right)],
        Parameter::SyncInterval => vec![("sync interval", Right)],
    };
    columns.extend([
        ("limiter", Left),
        ("admitted", Right),
        ("peak/L", Right),
        ("excess", Right),
        ("false rejects", Right),
        ("over-admission", Right),
    ]);
    match result.parameter {
        Parameter::Nodes => columns.push(("analytic peak/L (K × per node / L)", Right)),
        Parameter::SyncInterval => columns.push(("never synced: K (each node at L)", Right)),
        Parameter::Rtt => columns.push(("estimate: rate × rtt", Right)),
    }
    let mut t = Table::new(&columns);
    for p in &result.points {
        let topo = &p.topology;
        for l in &p.report.limiters {
            let mut row = match topo.mode {
                Mode::Central { rtt, atomic } if result.parameter == Parameter::Rtt => vec![
                    format_duration(rtt),
                    if atomic { "atomic" } else { "get-then-set" }.to_string(),
                    p.arrivals_per_rtt().map_or("n/a".into(), |a| format!("{a:.2}")),
                ],
                Mode::Sync { interval } if result.parameter == Parameter::SyncInterval => {
                    vec![format_duration(interval)]
                }
                _ => vec![
                    topo.count.to_string(),
                    if topo.mode == Mode::Local { topo.per_node.to_string() } else { "–".into() },
                ],
            };
            row.extend([
                l.label.clone(),
                l.counts.admitted.to_string(),
                peak_ratio_cell(l),
                l.counts.excess.to_string(),
                l.counts.false_rejects.to_string(),
                topology_over_admission_cell(l),
                topology_bound_cell(result.parameter, p, l),
            ]);
            t.push(row);
        }
    }
    t
}

/// A limiter's peak/L as the load and topology sweeps' tables write it
/// (and the terminal's pivots of them).
pub fn peak_ratio_cell(l: &crate::metrics::LimiterReport) -> String {
    fmt_ratio_fixed(l.peak_ratio(), 2)
}

/// A limiter's over-admission as the topology sweeps' tables write it.
pub fn topology_over_admission_cell(l: &crate::metrics::LimiterReport) -> String {
    l.over_admission().map_or("n/a".into(), |v| fmt_percent(v, true))
}

/// The last column of a topology sweep's table: the rtt sweep's estimate
/// of the get-then-set over-admission, else the analytic (or never-synced)
/// peak/L; `–` where there is none.
pub fn topology_bound_cell(
    parameter: crate::sweep::topology::Parameter,
    p: &crate::sweep::topology::TopologyPoint,
    l: &crate::metrics::LimiterReport,
) -> String {
    match parameter {
        crate::sweep::topology::Parameter::Rtt => {
            p.estimated_over_admission(l).map_or("–".into(), |e| fmt_percent(e, true))
        }
        _ => p.analytic_peak_ratio(l).map_or("–".into(), |a| fmt_ratio_fixed(a, 2)),
    }
}

/// How a topology sweep was run, for its Markdown file and the report.
pub fn topology_sweep_method(result: &crate::sweep::TopologySweepResult) -> String {
    use crate::sweep::topology::Parameter;
    let Some(first) = result.points.first() else { return String::new() };
    let base = &first.topology;
    let r = &first.report;
    let trace = trace_sentence(r);
    let judged = "Every limiter but the sliding-log reference runs on the nodes; peak/L, excess and false rejects \
are judged on what all nodes admitted together in the exact window (t - W, t], over-admission against the \
reference on the same trace.";
    match result.parameter {
        Parameter::Nodes => format!(
            "The scenario's traffic and limiters rerun on K nodes ({} balance, {}), everything else as in its \
[nodes] table; per node: {}. {trace} {judged} **Analytic peak/L**: nodes that do not coordinate, each holding \
its own limit exactly, with the traffic spread evenly and heavy enough, let through up to K × per node in one \
window; a per-node fixed window can exceed its own limit at its window edge, and the sum with it.",
            balance_name(&base.balance),
            mode_name(base.mode),
            if base.mode == crate::nodes::Mode::Local {
                result.per_node.describe()
            } else {
                "–".to_string()
            },
        ),
        Parameter::Rtt => format!(
            "The scenario's traffic and limiters rerun with one central store at each round trip rtt, {} nodes, \
{} balance: **atomic** (check and update in one step, as a Lua script or INCR) and **get-then-set** (the read \
reaches the store at t + rtt/2, the post-decision state is written back at t + 3 rtt/2, last writer wins). \
**Arrivals per rtt**: the trace's mean arrival rate times rtt, how many requests arrive while one check is in \
flight. {trace} {judged} **Estimate** (get-then-set, Poisson arrivals at rate r, a count kept in the store): \
each write carries the count its read saw plus one, and a read sees the write of the latest request that arrived \
at least one rtt earlier, so the count grows by one per rtt + 1/r and a window admits L (1 + r × rtt): \
over-admission r × rtt, at most what the traffic offers beyond the reference.",
            base.count,
            balance_name(&base.balance),
        ),
        Parameter::SyncInterval => format!(
            "The scenario's traffic and limiters rerun on {} nodes that sync their counts every interval ({} \
balance): between syncs each node decides on everyone's counts at the last sync plus its own since. {trace} \
{judged} **Never synced**: each node counts at least its own admissions, so with exact limiters no more than K × L \
get through in one window.",
            base.count,
            balance_name(&base.balance),
        ),
    }
}

fn balance_name(b: &crate::nodes::Balance) -> String {
    use crate::nodes::Balance;
    match b {
        Balance::RoundRobin => "round-robin".into(),
        Balance::Random => "random".into(),
        Balance::KeyHash => "key-hash".into(),
        Balance::Weights(w) => format!("weighted {w:?}"),
    }
}

fn mode_name(m: crate::nodes::Mode) -> String {
    use crate::nodes::Mode;
    match m {
        Mode::Local => "local mode".into(),
        Mode::Central { .. } => "central mode".into(),
        Mode::Sync { interval } => format!("synced every {}", format_duration(interval)),
    }
}

/// A topology sweep's Markdown file (`nodes_sweep.md`, ...).
pub fn topology_sweep(result: &crate::sweep::TopologySweepResult) -> String {
    use crate::sweep::topology::Parameter;
    let what = match result.parameter {
        Parameter::Nodes => "Nodes sweep: the same traffic on K nodes",
        Parameter::Rtt => "Round-trip sweep: one central store, atomic and get-then-set",
        Parameter::SyncInterval => "Sync sweep: nodes that exchange counts every interval",
    };
    let mut out = String::new();
    let _ = writeln!(out, "### {what}\n");
    let _ = writeln!(out, "{}\n", topology_sweep_method(result));
    out.push_str(&render_table(&topology_sweep_table(result)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{self, RunConfig};
    use crate::limiter::{FixedWindowSpec, Limit, LimiterSpec, WindowAlign};
    use crate::time::Nanos;
    use crate::trace::Arrival;

    fn report(keys: &[u64]) -> RunReport {
        let limit = Limit { requests: 1, window: Nanos::new(10) };
        let fixed = LimiterSpec::from(FixedWindowSpec { align: WindowAlign::Epoch { offset: Nanos::ZERO } });
        let arrivals: Vec<_> =
            keys.iter().enumerate().map(|(i, &k)| Arrival::keyed(Nanos::new(i as u64), k)).collect();
        let config = RunConfig::new(limit, vec![fixed]);
        engine::run(&config, arrivals.into_iter().map(Ok), None, &mut |_| {}).unwrap()
    }

    /// The note under the summary table defines each of its measured
    /// columns, and says how keys combine only when there are several.
    #[test]
    fn the_summary_note_defines_the_tables_columns() {
        let one = report(&[0, 0, 0]);
        let note = summary_note(&one);
        let table = summary_table(&one);
        let defined = ["peak", "excess", "false rejects", "over-admission", "disagreement", "state"];
        for header in &table.headers {
            let plain = ["limiter", "admitted", "rejected", "peak/L"].contains(&header.as_str());
            assert!(plain || defined.contains(&header.as_str()), "{header} is not defined");
        }
        for column in defined {
            assert!(note.contains(&format!("**{column}**")), "{column}");
        }
        assert!(!note.contains("key"));
        let keyed = summary_note(&report(&[0, 1, 0]));
        assert!(keyed.starts_with(&note) && keyed.ends_with("the counts and the state add up over keys."));
    }
}
