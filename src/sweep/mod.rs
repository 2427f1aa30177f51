//! Sweeps: many small runs over a grid of inputs: the burst-pair grid and
//! the load sweep ("how much does N buy me?", `docs/semantics.md`, "Error
//! versus slot count"), the retry-policy comparison, the seed sweep and the
//! topology sweeps (node count, round trip, sync interval). Pure computation; the points run in parallel (rayon) and are collected in index
//! order, so the results are identical to a single-threaded run.

pub mod burst_pair;
pub mod load;
pub mod retry_policies;
pub mod seeds;
pub mod topology;
pub mod work;

use crate::clients::Backoff;
use crate::limiter::{FixedWindowSpec, LimiterSpec, SlotCounterSpec};
use crate::scenario::{Scenario, Traffic};

pub use burst_pair::{BurstPairConfig, BurstPairResult, BurstPairRow};
pub use load::{LoadPoint, LoadSweepConfig};
pub use retry_policies::RetryPolicyPoint;
pub use seeds::{SeedPoint, SeedSweepResult};
pub use topology::{TopologySweep, TopologySweepResult};
pub use work::{SweepWork, Tally};

/// The sweeps' default limiters: fixed window, slot counters with
/// N = 1, 2, 5, 10, 20, 50, 100, 1000, and the sliding log.
pub fn default_limiters() -> Vec<LimiterSpec> {
    let mut v: Vec<LimiterSpec> = vec![FixedWindowSpec::ALIGNED.into()];
    v.extend([1, 2, 5, 10, 20, 50, 100, 1000].map(|n| LimiterSpec::from(SlotCounterSpec { slots: n })));
    v.push(LimiterSpec::reference());
    v
}

/// Which of the burst-pair and load sweeps a work bound refuses, and why.
#[derive(Clone, Debug, PartialEq)]
pub enum TooMuchWork {
    BurstPairs(String),
    Loads(String),
}

impl TooMuchWork {
    pub fn message(self) -> String {
        match self {
            TooMuchWork::BurstPairs(m) | TooMuchWork::Loads(m) => m,
        }
    }
}

/// Why the burst-pair and load sweeps of `opts` would take too long for
/// `limiters`, if they would: the burst-pair total
/// ([`burst_pair::total_work_problem`]) first, then the loads'
/// ([`load::work_problem`]). `fewer` says what else to have fewer of. The
/// one check for a scenario as read, after `--slots` and for `ratesim
/// sweep`'s defaults.
pub fn work_problem(
    limit: crate::limiter::Limit,
    opts: &crate::scenario::SweepOptions,
    limiters: &[LimiterSpec],
    fewer: &str,
) -> Option<TooMuchWork> {
    burst_pair::total_work_problem(limit, opts.grid, limiters, &opts.map_slots, fewer)
        .map(TooMuchWork::BurstPairs)
        .or_else(|| {
            load::work_problem(limit, &opts.loads, opts.load_duration, limiters, fewer)
                .map(TooMuchWork::Loads)
        })
}

/// What the analysis predicts for a burst pair: (band width, violation
/// probability), as fractions. `None` where it predicts nothing.
pub fn analytic_burst_pair(spec: &LimiterSpec) -> Option<(f64, f64)> {
    spec.sweep_traits().analytic_burst_pair
}

/// The common rule of thumb for a slot count ("N = 10 slots: about 10 %
/// error, N = 100: about 1 %"), as a fraction.
pub fn rule_of_thumb(spec: &LimiterSpec) -> Option<f64> {
    match spec.slots() {
        Some(10) => Some(0.10),
        Some(100) => Some(0.01),
        _ => None,
    }
}

/// What the burst-pair and load sweeps leave out of `scenario`, in a
/// sentence for the top of the sweep report and the terminal: `None` when
/// they run it as it is, or when it asks for neither. Those two sweeps run
/// each limiter alone, on one node, over open-loop arrivals they make
/// themselves (a burst pair, Poisson arrivals), so the scenario's `[nodes]`,
/// retries and closed clients play no part in them; the topology sweeps,
/// the retry-policy comparison and the seed sweep rerun the scenario's own
/// traffic and keep them.
pub fn window_sweeps_scope(scenario: &Scenario) -> Option<String> {
    if !scenario.sweep.as_ref().is_some_and(|s| s.window_sweeps) {
        return None;
    }
    let mut unused = Vec::new();
    if let Some(t) = &scenario.nodes {
        unused.push(format!("[nodes] ({})", t.describe()));
    }
    let retries = scenario.retry.iter().chain(scenario.source_retry.iter().flatten());
    if retries.into_iter().any(|p| p.backoff != Backoff::None) {
        unused.push("retries".to_string());
    }
    if scenario.traffic.iter().any(|t| matches!(t, Traffic::Closed { .. })) {
        unused.push("closed clients".to_string());
    }
    if unused.is_empty() {
        return None;
    }
    let mut others = Vec::new();
    if let Some(t) = &scenario.topology_sweep {
        others.extend(t.plans(scenario.limit).iter().map(|(p, _)| {
            match p {
                topology::Parameter::Nodes => "the nodes sweep",
                topology::Parameter::Rtt => "the round-trip sweep",
                topology::Parameter::SyncInterval => "the sync sweep",
            }
            .to_string()
        }));
    }
    if scenario.sweep.as_ref().is_some_and(|s| !s.retry_policies.is_empty()) {
        others.push("the retry-policy comparison".to_string());
    }
    if scenario.sweep.as_ref().is_some_and(|s| s.seeds.is_some()) {
        others.push("the seed sweep".to_string());
    }
    let keep = match others.len() {
        0 => String::new(),
        1 => format!("; {} reruns the scenario's own traffic with them", others[0]),
        _ => format!("; {} rerun the scenario's own traffic with them", join_and(&others)),
    };
    Some(format!(
        "The burst-pair and load sweeps run each limiter alone on one node over open-loop arrivals of their own, \
leaving out this scenario's {}{keep}.",
        join_and(&unused)
    ))
}

/// `a`, `a and b`, `a, b and c`.
fn join_and(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(extra: &str) -> Scenario {
        let text = format!(
            "name = \"s\"\nduration = \"10s\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n\
[[limiter]]\nkind = \"fixed_window\"\n{extra}"
        );
        Scenario::parse(&text, std::path::Path::new("s.toml")).unwrap()
    }

    /// The burst-pair and load sweeps make their own open-loop arrivals
    /// and run each limiter on one node: a scenario's nodes, retries and
    /// closed clients are said to be left out, and which of its other
    /// sweeps keep them.
    #[test]
    fn window_sweeps_say_what_they_leave_out() {
        let poisson = "[[traffic]]\nkind = \"poisson\"\nload = 1.0\n";
        let nodes = "[nodes]\ncount = 3\nmode = \"local\"\nper_node = 10\n";
        // Nothing to leave out, or no burst-pair and load sweeps.
        assert_eq!(window_sweeps_scope(&scenario(&format!("{poisson}[sweep]\nloads = [1.0]\n"))), None);
        assert_eq!(
            window_sweeps_scope(&scenario(&format!("{poisson}{nodes}[sweep]\nnodes = [1, 3]\n"))),
            None
        );
        let s = scenario(&format!("{poisson}{nodes}[sweep]\nloads = [1.0, 3.0]\nnodes = [1, 3]\n"));
        assert_eq!(
            window_sweeps_scope(&s).unwrap(),
            "The burst-pair and load sweeps run each limiter alone on one node over open-loop arrivals of \
their own, leaving out this scenario's [nodes] (3 nodes, local, 10 per node, round robin); the nodes sweep \
reruns the scenario's own traffic with them."
        );
        let closed = "[[traffic]]\nkind = \"closed\"\nclients = 5\nthink = \"1s\"\n";
        let retry = "[retry]\npolicy = \"full_jitter\"\nbase = \"100ms\"\ncap = \"1s\"\nmax_attempts = 5\n";
        let s = scenario(&format!(
            "{closed}{retry}[sweep]\nloads = [1.0]\nretry_policies = [{{ policy = \"none\" }}]\n"
        ));
        assert_eq!(
            window_sweeps_scope(&s).unwrap(),
            "The burst-pair and load sweeps run each limiter alone on one node over open-loop arrivals of \
their own, leaving out this scenario's retries and closed clients; the retry-policy comparison reruns the \
scenario's own traffic with them."
        );
    }
}
