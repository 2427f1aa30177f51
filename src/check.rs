//! `ratesim check`: everything a run would refuse, found without running.
//!
//! The scenario is validated as for a run, and every CSV trace is read in
//! full (streamed, in constant memory unless the source has `sort = true`), so
//! a bad row on line 1 000 000 is reported by `check` too, with file and line.
//! No limiter runs and nothing is written.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::export::fmt_bytes;
use crate::scenario::{Scenario, Traffic};
use crate::simulate;
use crate::time::{Nanos, format_duration};
use crate::timeline::{Timeline, TooManyBins};
use crate::trace::{CsvTrace, SORT_BYTES_PER_ROW, STREAM_BYTES, TraceError};

/// What a full read of one CSV trace found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceCheck {
    pub path: PathBuf,
    /// Rows a run reads: all of them, or those before the scenario's `duration`.
    pub rows: u64,
    pub first: Option<Nanos>,
    pub last: Option<Nanos>,
    /// The rows at or after the scenario's `duration`, which a run does not
    /// read (rows after the first of them in a streamed trace) or drops.
    pub late: Option<Late>,
    /// `Some(rows that were out of order)` when the source sorts in memory.
    pub sorted: Option<u64>,
    /// Records that cover more than one line, and the line of the first
    /// (see [`CsvTrace::multiline_records`]).
    pub multiline: (u64, Option<u64>),
}

/// The rows of a trace at or after the scenario's `duration`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Late {
    /// The line of the first (`None` in a trace sorted in memory).
    pub line: Option<u64>,
    /// How many, the first included, up to `stopped`.
    pub rows: u64,
    /// A bad row that stopped the count: no error, since a run never reads it.
    pub stopped: Option<String>,
}

impl Late {
    /// "3 rows from line 5 on are", "1 row is" (sorted).
    fn describe(&self) -> String {
        let rows = if self.rows == 1 { "1 row".to_string() } else { format!("{} rows", self.rows) };
        let from = self.line.map(|l| format!(" from line {l} on")).unwrap_or_default();
        format!("{rows}{from} {}", if self.rows == 1 { "is" } else { "are" })
    }

    fn stopped_note(&self) -> String {
        match &self.stopped {
            Some(e) => format!(" (counted up to a bad row, which a run never reads: {e})"),
            None => String::new(),
        }
    }

    /// Counts the rows of `trace` after the first row at or after the
    /// end (on `line`), which a run does not read: up to a bad one.
    fn count(line: Option<u64>, trace: &mut CsvTrace) -> Late {
        let mut late = Late { line, rows: 1, stopped: None };
        while let Some((_, r)) = trace.next_located() {
            match r {
                Ok(_) => late.rows += 1,
                Err(e) => {
                    // Inside a message that names the entry already.
                    late.stopped = Some(e.without_entry().to_string());
                    break;
                }
            }
        }
        late
    }
}

impl TraceCheck {
    /// Memory a run holds for this trace: the sorted times, or the reader's
    /// buffer (which is larger only while a longer line is read).
    pub fn memory_bytes(&self) -> u64 {
        match self.sorted {
            Some(_) => (self.rows + self.late.as_ref().map_or(0, |l| l.rows)) * SORT_BYTES_PER_ROW,
            None => STREAM_BYTES,
        }
    }
}

/// Why `check` refuses a scenario whose file is valid: a trace a run
/// would refuse, as it would say it.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A trace reaches further than `output.bin` can cut into bins.
    #[error(transparent)]
    Bins(#[from] TooManyBins),
}

/// Reads every CSV trace of the scenario as a run does, then on to its end
/// (the rows at or after the scenario's `duration` are counted, not judged:
/// a run does not read them); the first bad row a run reads is an error, and
/// so is a trace too long for the scenario's `output.bin` (with no
/// `duration`, where the run's timeline reaches its last row).
pub fn check_traces(scenario: &Scenario) -> Result<Vec<TraceCheck>, CheckError> {
    let mut out = Vec::new();
    for (i, t) in scenario.traffic.iter().enumerate() {
        let Traffic::Csv(opts) = t else { continue };
        let mut trace = CsvTrace::open(opts).map_err(|e| e.in_entry(i))?.in_entry(i);
        let sorted = trace.is_sorted_in_memory();
        let (mut first, mut last, mut rows, mut late) = (None, None, 0, None);
        while let Some((line, arrival)) = trace.next_located() {
            let t = arrival?.time;
            if let Some(d) = scenario.duration
                && t >= d
            {
                let counted = Late::count(line, &mut trace);
                if rows == 0 {
                    // As a run refuses it (`simulate::open_csv`), with the count.
                    let mut e = simulate::late_start(scenario, &opts.path, line, t);
                    if let TraceError::Row { message, .. } | TraceError::File { message, .. } = &mut e {
                        let _ = write!(
                            message,
                            "; {} at or after it{}",
                            counted.describe(),
                            counted.stopped_note()
                        );
                    }
                    return Err(e.in_entry(i).into());
                }
                late = Some(counted);
                break;
            }
            first.get_or_insert(t);
            last = Some(t);
            rows += 1;
        }
        if let (Some(bin), Some(last), None) = (scenario.output.bin, last, scenario.duration) {
            // As the run's timeline refuses it (`run::located` names the key).
            let columns =
                crate::engine::timeline_columns(&scenario.limiters, scenario.nodes.as_ref().map(|t| t.count));
            Timeline::new(Some(bin), 1).in_run_of(columns).reserve_until(last).map_err(|mut e| {
                e.key_at.clone_from(&scenario.output.bin_at);
                e
            })?;
        }
        out.push(TraceCheck {
            path: opts.path.clone(),
            rows,
            first,
            last,
            late,
            sorted: sorted.then(|| trace.out_of_order()),
            multiline: trace.multiline_records(),
        })
    }
    Ok(out)
}

/// About how many attempts a run may make, with each CSV trace's rows as
/// the full read found them ([`Scenario::attempts_estimate`]).
pub fn attempts_estimate(
    scenario: &Scenario,
    traces: &[TraceCheck],
) -> Option<crate::scenario::AttemptsEstimate> {
    let rows: Vec<u64> = traces.iter().map(|t| t.rows).collect();
    scenario.attempts_estimate(&rows)
}

/// What a run's closed clients hold at least: each client's next request
/// waits in every lane's event queue, whatever the traffic does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClosedMemory {
    /// Clients of every closed source.
    pub clients: u64,
    /// Lanes a run decides in: the limiters and the reference.
    pub lanes: u64,
    /// The runs of the sweep that splits the budget most (the
    /// retry-policy comparison, the seed sweep or the topology sweeps),
    /// which may run side by side, each with its share of the budget (0:
    /// none), and its name.
    pub sweep_runs: (u64, &'static str),
    /// Whether clients retry (then rejected requests wait in the queues too).
    pub retries: bool,
}

impl ClosedMemory {
    /// Bytes a lane's queue holds for the clients' next requests before
    /// any retry ([`crate::clients::closed_queue_bytes`]).
    pub fn per_lane(&self) -> u64 {
        crate::clients::closed_queue_bytes(self.clients)
    }

    pub fn total(&self) -> u64 {
        self.per_lane().saturating_mul(self.lanes)
    }

    /// More than a run may use ([`crate::engine::memory_budget`]): it would
    /// stop with an error.
    pub fn is_over_budget(&self) -> bool {
        self.total() > self.budget()
    }

    /// What one run may use: the whole budget, or a retry-policy
    /// comparison's share of it ([`crate::simulate::share_memory`]).
    fn budget(&self) -> u64 {
        crate::engine::memory_budget() / self.sweep_runs.0.max(1)
    }

    /// The line `ratesim check` prints.
    pub fn describe(&self) -> String {
        format!(
            "the closed clients' next requests hold {} in each of the {} run, {} in all{}",
            fmt_bytes(self.per_lane()),
            crate::export::count_of(self.lanes, "limiter"),
            fmt_bytes(self.total()),
            if self.retries { " (more while retries wait)" } else { "" },
        )
    }

    /// The warning `check` prints when [`ClosedMemory::is_over_budget`]:
    /// the error a run stops with at its start.
    pub fn warning(&self) -> String {
        let error = crate::engine::RunError::ClosedClients {
            clients: self.clients,
            lanes: self.lanes,
            per_lane: self.per_lane(),
            budget: self.budget(),
        };
        let (runs, sweep) = self.sweep_runs;
        if runs > 1 {
            format!(
                "warning: each run of this scenario's {sweep} would stop at its start ({runs} runs that may run side \
                 by side, so each may use 1/{runs} of --memory): {error}"
            )
        } else {
            format!("warning: a run of this scenario would stop at its start: {error}")
        }
    }
}

/// The closed clients' memory, when the scenario has closed sources.
pub fn closed_memory(scenario: &Scenario) -> Option<ClosedMemory> {
    let clients = scenario
        .traffic
        .iter()
        .map(|t| match t {
            Traffic::Closed { clients, .. } => *clients,
            _ => 0,
        })
        .fold(0u64, u64::saturating_add);
    let lanes = crate::engine::with_reference(&scenario.limiters).0.len() as u64;
    let policies = scenario.sweep.as_ref().map_or(0, |s| s.retry_policies.len() as u64);
    let seeds = scenario.sweep.as_ref().and_then(|s| s.seeds).map_or(0, u64::from);
    let topology = scenario
        .topology_sweep
        .as_ref()
        .map_or(0, |t| t.plans(scenario.limit).iter().map(|(_, points)| points.len() as u64).sum());
    let sweep_runs =
        [(policies, "retry-policy comparison"), (seeds, "seed sweep"), (topology, "topology sweeps")]
            .into_iter()
            .reduce(|a, b| if b.0 > a.0 { b } else { a })
            .expect("three sweeps");
    let retries = !scenario.retry_lines().is_empty();
    (clients > 0).then_some(ClosedMemory { clients, lanes, sweep_runs, retries })
}

/// The short OK summary `ratesim check` prints.
pub fn summary(scenario: &Scenario, traces: &[TraceCheck]) -> String {
    let mut s = String::new();
    // Paths are shown escaped, as in error messages: no file name reaches
    // the terminal as a control sequence (a `name` is letters, digits, `-`
    // and `_`).
    let shown = |text: String| crate::shown::escape(&text).into_owned();
    let _ = writeln!(s, "ok: {} is valid (nothing was run)", shown(scenario.path.display().to_string()));
    let _ = writeln!(s, "scenario  {}", scenario.name);
    let _ = writeln!(
        s,
        "limit     {} requests per {}",
        scenario.limit.requests,
        format_duration(scenario.limit.window)
    );
    if let Some(d) = scenario.duration {
        let _ = writeln!(s, "duration  {}", format_duration(d));
    }
    let mut csv = traces.iter();
    // A source that would go on past `duration` is cut there by a run.
    let cut = |end: Nanos| match scenario.duration {
        Some(d) if end > d => format!(" (a run stops it at `duration`, {d} s)"),
        _ => String::new(),
    };
    for (i, t) in scenario.traffic.iter().enumerate() {
        let head = if i == 0 { "traffic  " } else { "         " };
        let line = match t {
            Traffic::Burst { start, span, count } => {
                format!(
                    "burst: {} from {start} s over {}{}",
                    crate::export::count_of(*count, "request"),
                    format_duration(*span),
                    cut(start.saturating_add(*span))
                )
            }
            Traffic::Constant { start, end, rate } => {
                format!("constant: {rate} requests/s from {start} s to {end} s{}", cut(*end))
            }
            Traffic::Poisson { start, end, rate, clients } => {
                let clients = match clients {
                    Some((n, skew)) => format!(", {n} Zipf clients (skew {skew})"),
                    None => String::new(),
                };
                format!(
                    "poisson: {rate} requests/s on average from {start} s to {end} s{}{clients}",
                    cut(*end)
                )
            }
            Traffic::Closed { clients, think, start, end } => format!(
                "closed: {clients} client{}, each with one request in flight, thinking {} on average, from {start} s to {end} s{}",
                if *clients == 1 { "" } else { "s" },
                format_duration(*think),
                cut(*end)
            ),
            Traffic::Csv(opts) => {
                let Some(c) = csv.next() else { continue };
                let span = match (c.first, c.last) {
                    (Some(a), Some(b)) => format!(", {a} s to {b} s"),
                    _ => String::new(),
                };
                let mode = match c.sorted {
                    Some(moved) => format!(
                        "sorted in memory: {} ({SORT_BYTES_PER_ROW} bytes per row), {moved} row{} out of order",
                        fmt_bytes(c.memory_bytes()),
                        if moved == 1 { " was" } else { "s were" }
                    ),
                    None => "streamed, in time order".to_string(),
                };
                let rows = crate::export::count_of(c.rows, "row");
                let path = shown(opts.path.display().to_string());
                let mut line = format!("csv {path}: {rows}{span}; read in full, {mode}");
                if let (Some(late), Some(d)) = (&c.late, scenario.duration) {
                    let them = if late.rows == 1 { "it" } else { "them" };
                    let what = if late.line.is_some() { "does not read" } else { "drops" };
                    let _ = write!(
                        line,
                        "; {} at or after `duration` ({d} s): a run {what} {them}{}",
                        late.describe(),
                        late.stopped_note()
                    );
                }
                if let (n @ 1.., Some(first)) = c.multiline {
                    let _ = write!(
                        line,
                        "\n              {} over more than one line (the first on line {first}): a quoted field holds a \
                         line break; if a stray quote opened it, every line up to the next quote was read as that \
                         one field",
                        if n == 1 { "1 record runs".to_string() } else { format!("{n} records run") }
                    );
                }
                line
            }
        };
        let _ = writeln!(s, "{head} [{i}] {line}");
    }
    for line in scenario.retry_lines() {
        let _ = writeln!(s, "{line}");
    }
    if let Some(estimate) = attempts_estimate(scenario, traces) {
        let _ = writeln!(s, "attempts  {}", estimate.describe());
    }
    // What a run decides with: the limiters listed, and the sliding log as
    // the exact reference when they do not include it.
    let (specs, reference) = crate::engine::with_reference(&scenario.limiters);
    let mut labels = crate::engine::labels(&specs);
    if reference == scenario.limiters.len() {
        labels[reference].push_str(" (added: the exact reference every run has)");
    }
    let _ = writeln!(s, "limiters  {}", labels.join(", "));
    if let Some(t) = &scenario.nodes {
        let _ = writeln!(s, "nodes     {}", t.describe());
    }
    if let Some(memory) = closed_memory(scenario) {
        let _ = writeln!(s, "memory    {}", memory.describe());
    }
    // Every sweep a run does, in the order it does them.
    let mut sweeps = Vec::new();
    if let Some(opts) = &scenario.sweep {
        if opts.window_sweeps {
            let loads: Vec<String> = opts.loads.iter().map(|&l| crate::shown::number(l)).collect();
            let (rows, decided) = crate::sweep::burst_pair::total_decisions(
                scenario.limit,
                opts.grid,
                &scenario.limiters,
                &opts.map_slots,
            );
            let generated =
                crate::sweep::load::expected_requests(scenario.limit, &opts.loads, opts.load_duration);
            sweeps.push(format!(
                "burst pairs on a {g} x {g} grid ({rows} rows, about {} requests decided); loads [{}] x L/W, {} each (about {} requests generated in all)",
                crate::scenario::approx(decided as f64),
                loads.join(", "),
                format_duration(opts.load_duration),
                crate::scenario::approx(generated),
                g = opts.grid
            ));
        }
        let n = opts.retry_policies.len();
        if n > 0 {
            sweeps.push(format!(
                "retry policies ({} of the traffic, one per retry table)",
                crate::export::count_of(n as u64, "run")
            ));
        }
        if let Some(n) = opts.seeds {
            let last = crate::sweep::seeds::seeds(scenario.seed, n).last().unwrap_or(scenario.seed);
            sweeps.push(format!("seeds {} to {last} ({n} runs of the traffic, one per seed)", scenario.seed));
        }
    }
    if let Some(t) = &scenario.topology_sweep {
        let mut parts = Vec::new();
        if !t.nodes.is_empty() {
            parts.push(format!("nodes {:?}", t.nodes));
        }
        if !t.rtts.is_empty() {
            let rtts: Vec<String> = t.rtts.iter().map(|&r| format_duration(r)).collect();
            parts.push(format!("rtts [{}], each atomic and get-then-set", rtts.join(", ")));
        }
        if !t.sync_intervals.is_empty() {
            let i: Vec<String> = t.sync_intervals.iter().map(|&r| format_duration(r)).collect();
            parts.push(format!("sync intervals [{}]", i.join(", ")));
        }
        sweeps.push(format!(
            "{} ({} of the traffic)",
            parts.join("; "),
            crate::export::count_of(t.runs() as u64, "run")
        ));
    }
    if !sweeps.is_empty() {
        let _ = writeln!(s, "sweeps    {}", sweeps.join("; "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn memory_is_the_sorted_rows_or_the_reader_buffer() {
        let c = |sorted| TraceCheck {
            path: "t.csv".into(),
            rows: 1000,
            first: None,
            last: None,
            sorted,
            late: None,
            multiline: (0, None),
        };
        assert_eq!(c(Some(3)).memory_bytes(), 16_000);
        // Streamed: the reader's 256 KiB buffer, whatever the row count.
        assert_eq!(c(None).memory_bytes(), 262_144);
    }

    #[test]
    fn check_reads_traces_in_full_and_summarises() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.csv"), "time\n2\n1\n1.5\n").unwrap();
        let text = r#"
name = "x"
[limit]
requests = 2
window = "1s"
[[traffic]]
kind = "csv"
path = "t.csv"
sort = true
[[traffic]]
kind = "burst"
count = 3
"#;
        let s = Scenario::parse(text, &dir.path().join("s.toml")).unwrap();
        let traces = check_traces(&s).unwrap();
        assert_eq!(traces.len(), 1);
        assert_eq!(traces[0].rows, 3);
        assert_eq!(traces[0].first, Some(Nanos::from_secs(1)));
        assert_eq!(traces[0].last, Some(Nanos::from_secs(2)));
        assert_eq!(traces[0].sorted, Some(1));
        let out = summary(&s, &traces);
        assert!(out.contains("3 rows, 1 s to 2 s"), "{out}");
        assert!(out.contains("sorted in memory: 48 B (16 bytes per row), 1 row was out of order"), "{out}");
        assert!(out.contains("[1] burst: 3 requests from 0 s over 0s"), "{out}");

        std::fs::write(dir.path().join("t.csv"), "time\n2\n1\n").unwrap();
        let s = Scenario::parse(&text.replace("sort = true", ""), &dir.path().join("s.toml")).unwrap();
        let e = check_traces(&s).unwrap_err().to_string();
        assert!(e.contains("t.csv, line 3") && e.contains("earlier"), "{e}");
    }

    /// `check` says what `run` does: the sliding-log reference it adds, and
    /// every sweep of the `[sweep]` table.
    #[test]
    fn check_lists_the_reference_and_every_sweep() {
        let base = "name = \"x\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[[traffic]]\nkind = \"burst\"\ncount = 30\n\
                    [[limiter]]\nkind = \"gcra\"\n";
        let out = summary(&Scenario::parse(base, Path::new("s.toml")).unwrap(), &[]);
        assert!(
            out.contains("limiters  gcra, sliding_log (added: the exact reference every run has)\n"),
            "{out}"
        );
        assert!(!out.contains("sweeps"), "{out}");
        let listed = format!("{base}[[limiter]]\nkind = \"sliding_log\"\n");
        let out = summary(&Scenario::parse(&listed, Path::new("s.toml")).unwrap(), &[]);
        assert!(out.contains("limiters  gcra, sliding_log\n"), "{out}");
        let swept = format!(
            "{base}[sweep]\nretry_policies = [{{ policy = \"none\" }}, {{ policy = \"immediate\", max_attempts = 3 }}]\nnodes = [1, 2]\n"
        );
        let out = summary(&Scenario::parse(&swept, Path::new("s.toml")).unwrap(), &[]);
        assert!(
            out.contains("sweeps    retry policies (2 runs of the traffic, one per retry table); nodes [1, 2] (2 runs of the traffic)\n"),
            "{out}"
        );
        // By hand: the GCRA decides L = 10 requests a burst, 10 x 11 x 10;
        // the log and the map's fixed window and N = 2, 5, 10 one a burst,
        // 5 x 10 x 11: 1650. The loads sum to 8.8 x 10/s x 100 s = 8800.
        let out = summary(
            &Scenario::parse(&format!("{base}[sweep]\ngrid = 10\n"), Path::new("s.toml")).unwrap(),
            &[],
        );
        assert!(
            out.contains(
                "sweeps    burst pairs on a 10 x 10 grid (6 rows, about 1650 requests decided); loads [0.5, 0.8, 1, 1.5, 2, 3] x L/W, 100s each (about 8800 requests generated in all)\n"
            ),
            "{out}"
        );
    }

    /// The `[retry]` table, then each source's own, under one `retry` head;
    /// no line when nothing retries.
    #[test]
    fn check_says_how_clients_retry() {
        let text = r#"
name = "x"
[limit]
requests = 2
window = "1s"
[retry]
policy = "full_jitter"
base = "10ms"
cap = "1s"
max_attempts = 3
[[traffic]]
kind = "burst"
count = 3
[[traffic]]
kind = "burst"
count = 3
retry = { policy = "fixed", base = "1s", max_attempts = 2, budget = 0.5 }
"#;
        let s = Scenario::parse(text, Path::new("s.toml")).unwrap();
        let out = summary(&s, &[]);
        assert!(
            out.contains(
                "retry     full_jitter (base 10ms, cap 1s, at most 3 attempts)\n          \
                 [1] fixed (base 1s, at most 2 attempts, budget 0.5)\n"
            ),
            "{out}"
        );
        // report.md says the same in a sentence.
        assert_eq!(
            s.clients_sentence().as_deref(),
            Some(
                "Retry: full_jitter (base 10ms, cap 1s, at most 3 attempts); \
                 [1] fixed (base 1s, at most 2 attempts, budget 0.5)."
            )
        );
        let plain =
            text.split("[retry]").next().unwrap().to_string() + "[[traffic]]\nkind = \"burst\"\ncount = 3\n";
        let plain = Scenario::parse(&plain, Path::new("s.toml")).unwrap();
        let out = summary(&plain, &[]);
        assert!(!out.contains("retry"), "{out}");
        assert_eq!(plain.clients_sentence(), None);
    }
}
