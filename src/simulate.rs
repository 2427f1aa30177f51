//! Glue from a validated scenario to an engine run.

use crate::clients::{Clients, ClosedSource, RetryPolicy};
use crate::engine::{self, DecisionSink, Progress, RunConfig, RunError, RunReport};
use crate::scenario::{Scenario, Traffic};
use crate::time::Nanos;
use crate::trace::{Burst, Constant, CsvOptions, CsvTrace, Merge, Poisson, Source, TraceError};

/// Opens the scenario's open-loop sources, in `[[traffic]]` order (closed
/// populations run inside the lanes: [`clients`]). Poisson source `i` (its
/// index among all `[[traffic]]` entries) draws from ChaCha8 stream `i` of
/// the scenario seed.
pub fn sources(scenario: &Scenario) -> Result<Vec<Source>, TraceError> {
    scenario
        .traffic
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t, Traffic::Closed { .. }))
        .map(|(i, t)| {
            Ok(match t {
                Traffic::Burst { start, span, count } => Source::Burst(Burst::new(*start, *span, *count)),
                Traffic::Constant { start, end, rate } => {
                    Source::Constant(Constant::new(*start, *end, *rate))
                }
                Traffic::Poisson { start, end, rate, clients } => {
                    let p = Poisson::new(scenario.seed, i as u64, *start, *end, *rate);
                    Source::Poisson(match clients {
                        Some((n, skew)) => p.with_zipf_keys(*n, *skew),
                        None => p,
                    })
                }
                Traffic::Csv(opts) => Source::Csv(Box::new(open_csv(scenario, i, opts)?)),
                Traffic::Closed { .. } => unreachable!("filtered above"),
            })
        })
        .collect()
}

/// Opens csv source `traffic[entry]` of the scenario, whose errors then
/// name the entry; with a `duration`, a trace whose first row is at or
/// after it is an error, as a burst that starts there is: the run would
/// send none of its requests. The first row of a streamed trace is read
/// from a second reader of the file, so that the trace itself pays nothing
/// per row for the check.
pub fn open_csv(scenario: &Scenario, entry: usize, opts: &CsvOptions) -> Result<CsvTrace, TraceError> {
    let trace = CsvTrace::open(opts).map_err(|e| e.in_entry(entry))?.in_entry(entry);
    if let Some(d) = scenario.duration {
        let first = if trace.is_sorted_in_memory() {
            trace.peek_sorted().map(|a| (None, a.time))
        } else {
            match CsvTrace::open(opts).map_err(|e| e.in_entry(entry))?.next_located() {
                Some((line, Ok(a))) => Some((line, a.time)),
                // A bad first row: the run reads it and says so.
                _ => None,
            }
        };
        if let Some((line, t)) = first
            && t >= d
        {
            return Err(late_start(scenario, &opts.path, line, t).in_entry(entry));
        }
    }
    Ok(trace)
}

/// The error for a trace whose first row (on `line`; `None` when sorted in
/// memory, where it is the earliest) is at `t`, at or after the scenario's
/// `duration` (without the entry: see [`TraceError::in_entry`]).
pub fn late_start(scenario: &Scenario, path: &std::path::Path, line: Option<u64>, t: Nanos) -> TraceError {
    let d = scenario.duration.unwrap_or(Nanos::ZERO);
    let at = scenario.duration_at.as_deref().map(|at| format!(", set at {at}")).unwrap_or_default();
    let what = format!("the scenario's `duration` ({d} s{at})");
    let why = "the run drops every request at or after it, so this trace would send none";
    let path = path.to_path_buf();
    match line {
        Some(line) => TraceError::Row {
            path,
            line,
            message: format!("the first row is at {t} s, not before {what}: {why}"),
            entry: None,
        },
        None => TraceError::File {
            path,
            message: format!("every row is at or after {what}, the earliest at {t} s: {why}"),
            entry: None,
        },
    }
}

/// The scenario's reacting clients, if any: the retry policy of each
/// open-loop source (its own, else `[retry]`) and the closed populations.
pub fn clients(scenario: &Scenario) -> Option<Clients> {
    let policy = |i: usize| {
        scenario.source_retry.get(i).copied().flatten().or(scenario.retry).unwrap_or(RetryPolicy::NONE)
    };
    let mut open = Vec::new();
    let mut closed = Vec::new();
    for (i, t) in scenario.traffic.iter().enumerate() {
        match t {
            Traffic::Closed { clients, think, start, end } => closed.push(ClosedSource {
                clients: *clients,
                think: *think,
                start: *start,
                end: *end,
                retry: policy(i),
            }),
            _ => open.push(policy(i)),
        }
    }
    let clients = Clients { open, closed, seed: scenario.seed };
    clients.active().then_some(clients)
}

/// The engine settings a scenario asks for.
pub fn run_config(scenario: &Scenario) -> RunConfig {
    RunConfig {
        end: scenario.duration,
        bin: scenario.output.bin,
        admission_curve: scenario.output.admission_curve,
        clients: clients(scenario),
        topology: scenario.nodes.clone(),
        seed: scenario.seed,
        client_keys: has_client_keys(scenario),
        ..RunConfig::new(scenario.limit, scenario.limiters.clone())
    }
}

/// Whether some source gives its requests client keys (a Poisson source's
/// `clients`, a CSV trace's `key_column`).
pub fn has_client_keys(scenario: &Scenario) -> bool {
    scenario.traffic.iter().any(|t| match t {
        Traffic::Poisson { clients, .. } => clients.is_some(),
        Traffic::Csv(csv) => csv.key_column.is_some(),
        Traffic::Burst { .. } | Traffic::Constant { .. } | Traffic::Closed { .. } => false,
    })
}

/// `config` as one of `runs` runs of a sweep that may run side by side:
/// each may hold `1/runs` of the memory budget in its own window rings and
/// queues (each run counts its own), so that together they stay within
/// `--memory` on any number of threads, and whether one stops does not
/// depend on which others run beside it.
pub fn share_memory(mut config: RunConfig, runs: usize) -> RunConfig {
    config.memory_budget /= runs.max(1) as u64;
    config
}

/// Runs `scenario` as one of `runs` runs of a sweep ([`share_memory`]),
/// without decisions. It reads its sources as [`run_scenario`] does, up to
/// the scenario's `duration`, so that a rerun reads no row the run does not.
pub fn run_in_sweep(
    scenario: &Scenario,
    runs: usize,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunReport, RunError> {
    let merged = Merge::new(sources(scenario)?).until(scenario.duration);
    engine::run(&share_memory(run_config(scenario), runs), merged, None, progress)
}

/// Runs a scenario end to end.
pub fn run_scenario(
    scenario: &Scenario,
    decisions: Option<&mut dyn DecisionSink>,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunReport, RunError> {
    let merged = Merge::new(sources(scenario)?).until(scenario.duration);
    engine::run(&run_config(scenario), merged, decisions, progress)
}

/// The last instant any bounded source can produce, if every source is bounded
/// (CSV traces are not known before they are read). For progress display.
pub fn known_end(scenario: &Scenario) -> Option<crate::time::Nanos> {
    if let Some(d) = scenario.duration {
        return Some(d);
    }
    scenario
        .traffic
        .iter()
        .map(|t| match t {
            Traffic::Burst { start, span, .. } => start.checked_add(*span),
            Traffic::Constant { end, .. } | Traffic::Poisson { end, .. } | Traffic::Closed { end, .. } => {
                Some(*end)
            }
            Traffic::Csv(_) => None,
        })
        .try_fold(crate::time::Nanos::ZERO, |acc, e| e.map(|e| acc.max(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run reads no row at or after its `duration`: a bad or
    /// out-of-order row after the first such row is never read, whether
    /// the trace is the only source or merged with another (whose merge
    /// reads one row ahead of each source). Both once failed only with two
    /// sources.
    #[test]
    fn rows_after_the_duration_are_not_read_with_one_source_or_several() {
        let dir = tempfile::tempdir().unwrap();
        for late in ["abc", "0.7"] {
            std::fs::write(dir.path().join("long.csv"), format!("time\n0.5\n5\n{late}\n")).unwrap();
            let one = "name = \"x\"\nduration = \"1s\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n\
                       [[traffic]]\nkind = \"csv\"\npath = \"long.csv\"\n";
            let two = format!("{one}[[traffic]]\nkind = \"burst\"\nstart = \"100ms\"\ncount = 1\n");
            for (text, arrivals) in [(one.to_string(), 1), (two, 2)] {
                let s = Scenario::parse(&text, &dir.path().join("s.toml")).unwrap();
                let report = run_scenario(&s, None, &mut |_| {}).unwrap_or_else(|e| panic!("{late}: {e}"));
                assert_eq!(report.arrivals, arrivals, "{late}");
            }
        }
    }

    /// A trace whose first row is at or after the `duration` would send no
    /// request: an error naming the row and where `duration` is set.
    #[test]
    fn a_trace_that_starts_at_the_duration_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("late.csv"), "time\n5\n6\n").unwrap();
        let text = "name = \"x\"\nduration = \"1s\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n\
                    [[traffic]]\nkind = \"csv\"\npath = \"late.csv\"\n";
        let s = Scenario::parse(text, &dir.path().join("s.toml")).unwrap();
        let e = run_scenario(&s, None, &mut |_| {}).unwrap_err().to_string();
        for part in [
            "late.csv, line 2: the first row is at 5 s, not before the scenario's `duration` (1 s, set at ",
            "s.toml:2:12): the run drops every request at or after it, so this trace would send none",
        ] {
            assert!(e.contains(part), "{e}");
        }
    }
}
