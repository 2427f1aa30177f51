//! Sweeps: many small runs over a grid of inputs, to answer "how much does N
//! buy me?" (`docs/semantics.md`, "Error versus slot count"). Pure
//! computation; the points run in parallel (rayon) and are collected in index
//! order, so the results are identical to a single-threaded run.

pub mod burst_pair;
pub mod load;
pub mod retry_policies;
pub mod topology;

use crate::limiter::{FixedWindowSpec, LimiterSpec, SlotCounterSpec};

pub use burst_pair::{BurstPairConfig, BurstPairResult, BurstPairRow};
pub use load::{LoadPoint, LoadSweepConfig};
pub use retry_policies::RetryPolicyPoint;
pub use topology::{TopologySweep, TopologySweepResult};

/// The sweeps' default limiters: fixed window, slot counters with
/// N = 1, 2, 5, 10, 20, 50, 100, 1000, and the sliding log.
pub fn default_limiters() -> Vec<LimiterSpec> {
    let mut v: Vec<LimiterSpec> = vec![FixedWindowSpec::ALIGNED.into()];
    v.extend([1, 2, 5, 10, 20, 50, 100, 1000].map(|n| LimiterSpec::from(SlotCounterSpec { slots: n })));
    v.push(LimiterSpec::reference());
    v
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
