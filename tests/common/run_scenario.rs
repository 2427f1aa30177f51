//! The `run_scenario` fuzz target (fuzz/fuzz_targets/run_scenario.rs): any
//! text that passes as a scenario and asks for little work runs end to end
//! (open and closed sources, retries, many nodes, shaping), twice, and what
//! the run must keep holds. One copy, included through `#[path]` by the
//! target and by tests/fuzz_regressions.rs, so an input the fuzzer saves
//! replays there exactly as it ran.

use std::path::Path;

use ratesim::engine::RunReport;
use ratesim::scenario::{Scenario, Traffic};
use ratesim::simulate;

/// The most logical requests a fuzzed scenario may ask for, and the most
/// attempts its retries may make of them in one lane: enough for storms,
/// herds and sync rounds, small enough for thousands of runs a second.
pub const MAX_REQUESTS: f64 = 2_000.0;
pub const MAX_ATTEMPTS: f64 = 20_000.0;

/// Parses `text` and, when it is a scenario of little work, runs it twice
/// and checks the run ([`check`]). `None` when the text is refused, asks
/// for more work than the bounds above, or the run is refused with an error
/// (which is no crash).
pub fn run(text: &str) -> Option<RunReport> {
    let s = Scenario::parse(text, Path::new("fuzz/s.toml")).ok()?;
    // Traces are files: the csv targets read them.
    if s.traffic.iter().any(|t| matches!(t, Traffic::Csv(_))) {
        return None;
    }
    let requests: f64 = s.traffic.iter().filter_map(Traffic::expected_requests).sum();
    let attempts = s
        .retry
        .iter()
        .chain(s.source_retry.iter().flatten())
        .map(|p| f64::from(p.max_attempts))
        .fold(1.0, f64::max);
    if requests > MAX_REQUESTS || requests * attempts > MAX_ATTEMPTS {
        return None;
    }
    let first = simulate::run_scenario(&s, None, &mut |_| {});
    let again = simulate::run_scenario(&s, None, &mut |_| {});
    // Deterministic: the same scenario gives the same figures, or the same error.
    match (&first, &again) {
        (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "two runs differ"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "two runs fail differently"),
        _ => panic!(
            "one run failed, the other did not: {:?} / {:?}",
            first.as_ref().err(),
            again.as_ref().err()
        ),
    }
    let report = first.ok()?;
    check(&s, &report);
    Some(report)
}

/// What every run keeps (docs/semantics.md): every lane's decisions add up
/// to its attempts; with reacting clients every attempt is a logical
/// request or a retry of one, every logical request ends once (succeeded,
/// gave up or unfinished) and succeeds by its one admitted attempt, and
/// retries stay within `max_attempts`; every lane sees the same open-loop
/// arrivals; on one node the sliding log is exact. Where every source is a
/// burst, whose requests `check`'s attempts estimate counts exactly, no
/// lane makes more attempts than it says (budgets shared between sources
/// included).
pub fn check(s: &Scenario, report: &RunReport) {
    let max_attempts = s.retry.iter().chain(s.source_retry.iter().flatten()).map(|p| p.max_attempts).max();
    let exact = s.traffic.iter().all(|t| matches!(t, Traffic::Burst { .. }));
    let estimate = s.attempts_estimate(&[]).map_or(report.arrivals as f64, |e| e.attempts);
    for r in &report.limiters {
        let c = &r.counts;
        assert_eq!(c.offered, c.admitted + c.rejected, "{}", r.label);
        if exact {
            assert!(c.offered as f64 <= estimate, "{}: {} attempts, estimate {estimate}", r.label, c.offered);
        }
        match &r.clients {
            None => assert_eq!(c.offered, report.arrivals, "{}", r.label),
            Some(k) => {
                assert_eq!(k.open_logical, report.arrivals, "{}", r.label);
                assert!(k.logical >= k.open_logical, "{}", r.label);
                assert_eq!(c.offered, k.logical + k.retries, "{}", r.label);
                assert_eq!(k.logical, k.succeeded + k.gave_up + k.unfinished, "{}", r.label);
                assert_eq!(c.admitted, k.succeeded, "{}", r.label);
                assert!(k.early_retries <= k.retries && k.too_early <= k.retries, "{}", r.label);
                let most = u64::from(max_attempts.unwrap_or(1).max(1) - 1);
                assert!(k.retries <= k.logical * most, "{}: {} retries of {}", r.label, k.retries, k.logical);
                assert_eq!(k.time_to_success.len(), k.succeeded, "{}", r.label);
            }
        }
    }
    if s.nodes.is_none() {
        let log = &report.limiters[report.reference].counts;
        let l = report.limit.requests;
        assert!(log.peak <= l && log.excess == 0 && log.false_rejects == 0, "sliding log: {log:?}");
    }
}
