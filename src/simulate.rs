//! Glue from a validated scenario to an engine run.

use crate::clients::{Clients, ClosedSource, RetryPolicy};
use crate::engine::{self, DecisionSink, Progress, RunConfig, RunError, RunReport};
use crate::scenario::{Scenario, Traffic};
use crate::trace::{Burst, Constant, CsvTrace, Merge, Poisson, Source, TraceError};

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
                Traffic::Csv(opts) => Source::Csv(Box::new(CsvTrace::open(opts)?)),
                Traffic::Closed { .. } => unreachable!("filtered above"),
            })
        })
        .collect()
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
        ..RunConfig::new(scenario.limit, scenario.limiters.clone())
    }
}

/// `config` as one of `runs` runs of a sweep that may run side by side:
/// each may hold `1/runs` of the memory budget in its own queues, so that
/// together they stay within `--memory` on any number of threads (window
/// timestamps are counted across the process already).
pub fn share_memory(mut config: RunConfig, runs: usize) -> RunConfig {
    config.memory_budget /= runs.max(1) as u64;
    config
}

/// Runs `scenario` as one of `runs` runs of a sweep ([`share_memory`]),
/// without decisions or progress.
pub fn run_in_sweep(scenario: &Scenario, runs: usize) -> Result<RunReport, RunError> {
    let merged = Merge::new(sources(scenario)?);
    engine::run(&share_memory(run_config(scenario), runs), merged, None, &mut |_| {})
}

/// Runs a scenario end to end.
pub fn run_scenario(
    scenario: &Scenario,
    decisions: Option<&mut dyn DecisionSink>,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunReport, RunError> {
    let merged = Merge::new(sources(scenario)?);
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
