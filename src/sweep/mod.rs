//! Sweeps: many small runs over a grid of inputs, to answer "how much does N
//! buy me?" (SEMANTICS.md, "Error versus slot count"). Pure computation; the
//! points run in parallel (rayon) and are collected in index order, so the
//! results are identical to a single-threaded run.

pub mod burst_pair;
pub mod load;

use crate::limiter::{LimiterSpec, WindowAlign};
use crate::time::Nanos;

pub use burst_pair::{BurstPairConfig, BurstPairResult, BurstPairRow};
pub use load::{LoadPoint, LoadSweepConfig};

/// The sweeps' default limiters: fixed window, slot counters with
/// N = 1, 2, 5, 10, 20, 50, 100, 1000, and the sliding log.
pub fn default_limiters() -> Vec<LimiterSpec> {
    let mut v = vec![LimiterSpec::FixedWindow { align: WindowAlign::Epoch { offset: Nanos::ZERO } }];
    v.extend([1, 2, 5, 10, 20, 50, 100, 1000].map(|n| LimiterSpec::SlotCounter { slots: n }));
    v.push(LimiterSpec::reference());
    v
}

/// What SEMANTICS.md predicts for a burst pair: (band width, violation
/// probability), as fractions. `None` where it predicts nothing.
pub fn analytic_burst_pair(spec: &LimiterSpec) -> Option<(f64, f64)> {
    match spec {
        // The aligned fixed window is N = 1 whatever its phase.
        LimiterSpec::FixedWindow { align: WindowAlign::Epoch { .. } } => Some((1.0, 0.5)),
        LimiterSpec::SlotCounter { slots } => Some((1.0 / *slots as f64, 1.0 / (2.0 * *slots as f64))),
        LimiterSpec::SlidingLog { .. } => Some((0.0, 0.0)),
        LimiterSpec::FixedWindow { align: WindowAlign::FirstRequest } => None,
    }
}

/// Seed 004's claim for a slot count ("N=10: error about 10 %, N=100: about
/// 1 %"), as a fraction.
pub fn seed_claim(spec: &LimiterSpec) -> Option<f64> {
    match spec.slots() {
        Some(10) => Some(0.10),
        Some(100) => Some(0.01),
        _ => None,
    }
}
