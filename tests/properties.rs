//! Invariants of SEMANTICS.md over random traces.

use proptest::prelude::*;

use ratesim::engine::{self, RunConfig};
use ratesim::limiter::{
    FixedWindowSpec, Limit, Limiter, LimiterSpec, SlidingLogSpec, SlotCounterSpec, WindowAlign,
};
use ratesim::time::Nanos;
use ratesim::trace::{Arrival, ArrivalResult};

/// Sorted arrival times with clusters and exact-W gaps (the edge cases).
fn trace(window: u64) -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(
        prop_oneof![
            4 => 0..window / 4,       // dense
            1 => Just(0u64),          // same instant
            1 => Just(window),        // exactly W later
            1 => 0..3 * window,       // sparse
        ],
        0..300,
    )
    .prop_map(|gaps| {
        let mut t = 0u64;
        gaps.into_iter()
            .map(|g| {
                t += g;
                t
            })
            .collect()
    })
}

fn run(limit: Limit, specs: &[LimiterSpec], times: &[u64]) -> Vec<ratesim::metrics::LimiterReport> {
    let arrivals: Vec<ArrivalResult> = times.iter().map(|&t| Ok(Arrival::at(Nanos::new(t)))).collect();
    let config = RunConfig { limit, limiters: specs.to_vec(), end: None, bin: None };
    engine::run(&config, arrivals.into_iter(), None, &mut |_| {}).unwrap().limiters
}

fn all_specs(window: u64) -> Vec<LimiterSpec> {
    vec![
        LimiterSpec::from(FixedWindowSpec { align: WindowAlign::Epoch { offset: Nanos::new(0) } }),
        LimiterSpec::from(FixedWindowSpec { align: WindowAlign::Epoch { offset: Nanos::new(window / 3) } }),
        LimiterSpec::from(FixedWindowSpec { align: WindowAlign::FirstRequest }),
        LimiterSpec::from(SlotCounterSpec { slots: 1 }),
        LimiterSpec::from(SlotCounterSpec { slots: 2 }),
        LimiterSpec::from(SlotCounterSpec { slots: 7 }),
        LimiterSpec::from(SlotCounterSpec { slots: 10 }),
        LimiterSpec::from(SlidingLogSpec { count_rejected: true }),
        LimiterSpec::from(SlidingLogSpec { count_rejected: false }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The sliding log is the exact rule: never above L, no excess, no false rejects.
    #[test]
    fn sliding_log_is_exact(requests in 1u64..8, window in 10u64..1000, times in trace(1000)) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let r = run(limit, &[], &times);
        let log = &r[0];
        prop_assert_eq!(&log.label, "sliding_log");
        prop_assert!(log.counts.peak <= requests);
        prop_assert_eq!(log.counts.excess, 0);
        prop_assert_eq!(log.counts.false_rejects, 0);
        prop_assert_eq!(log.counts.disagreements, 0);
    }

    /// Fixed windows and slot counters count a span that lies inside the exact
    /// window, so they never have false rejects; no windowed limiter exceeds
    /// 2L; every limiter conserves requests.
    #[test]
    fn counters_never_false_reject_and_counts_add_up(
        requests in 1u64..8, window in 10u64..1000, times in trace(1000)
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let specs = all_specs(window);
        for r in run(limit, &specs, &times) {
            prop_assert_eq!(r.counts.admitted + r.counts.rejected, r.counts.offered);
            prop_assert_eq!(r.counts.offered, times.len() as u64);
            prop_assert!(r.counts.peak <= 2 * requests, "{} peak {}", r.label, r.counts.peak);
            if r.spec != LimiterSpec::from(SlidingLogSpec { count_rejected: true }) {
                prop_assert_eq!(r.counts.false_rejects, 0, "{}", r.label);
            }
        }
    }

    /// The sliding log decides by the exact rule, checked against a brute-force
    /// scan of every admitted timestamp (independent of the engine's metrics).
    #[test]
    fn sliding_log_matches_a_brute_force_scan(requests in 1u64..8, window in 1u64..1000, times in trace(1000)) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let mut log = LimiterSpec::from(SlidingLogSpec { count_rejected: false }).build(limit);
        let mut admitted: Vec<u64> = Vec::new();
        for &t in &times {
            // Admitted requests in (t - W, t), earlier ones at t included.
            let in_window = admitted.iter().filter(|&&a| a + window > t).count() as u64;
            let exact = in_window < requests;
            if exact {
                admitted.push(t);
            }
            prop_assert_eq!(log.decide(Nanos::new(t), 1).admitted(), exact, "t = {}", t);
        }
    }

    /// With costs above 1 and with rejected requests logged too, the sliding
    /// log still decides by the exact rule: admit iff the permits logged in
    /// `(t - W, t]` plus this cost are at most L. (Every source sends cost 1
    /// today; the log keeps running totals, and this checks they stay right.)
    #[test]
    fn weighted_sliding_log_matches_a_brute_force_scan(
        requests in 1u64..12,
        window in 1u64..1000,
        count_rejected in any::<bool>(),
        arrivals in trace(1000).prop_flat_map(|ts| {
            let n = ts.len();
            (Just(ts), prop::collection::vec(1u32..5, n))
        }),
    ) {
        let (times, costs) = arrivals;
        let limit = Limit { requests, window: Nanos::new(window) };
        let mut log = LimiterSpec::from(SlidingLogSpec { count_rejected }).build(limit);
        let mut logged: Vec<(u64, u64)> = Vec::new();
        for (&t, &cost) in times.iter().zip(&costs) {
            let in_window: u64 = logged.iter().filter(|(a, _)| a + window > t).map(|(_, c)| c).sum();
            let admit = in_window + u64::from(cost) <= requests;
            if admit || count_rejected {
                logged.push((t, u64::from(cost)));
            }
            prop_assert_eq!(log.decide(Nanos::new(t), cost).admitted(), admit, "t = {}, cost = {}", t, cost);
        }
    }

    /// `slot_counter` with N = 1 decides exactly like the aligned fixed window.
    #[test]
    fn one_slot_is_the_aligned_fixed_window(requests in 1u64..8, window in 1u64..1000, times in trace(1000)) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let mut fixed = LimiterSpec::from(FixedWindowSpec { align: WindowAlign::Epoch { offset: Nanos::new(0) } }).build(limit);
        let mut slot = LimiterSpec::from(SlotCounterSpec { slots: 1 }).build(limit);
        for &t in &times {
            prop_assert_eq!(fixed.decide(Nanos::new(t), 1), slot.decide(Nanos::new(t), 1), "t = {}", t);
        }
    }

    /// The O(1) slot counter agrees with a naive ring that sums all N slots.
    #[test]
    fn slot_counter_matches_naive_sum(
        requests in 1u64..8, window in 12u64..1000, slots in 1u64..12, times in trace(1000)
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let mut fast = LimiterSpec::from(SlotCounterSpec { slots }).build(limit);
        // Naive: keep (slot, count) for every slot ever used; sum the last N.
        let mut used: std::collections::BTreeMap<u64, u64> = Default::default();
        for &t in &times {
            let k = (t as u128 * slots as u128 / window as u128) as u64;
            let lo = (k + 1).saturating_sub(slots);
            let sum: u64 = used.range(lo..=k).map(|(_, c)| c).sum();
            let admit = sum < requests;
            if admit {
                *used.entry(k).or_default() += 1;
            }
            prop_assert_eq!(fast.decide(Nanos::new(t), 1).admitted(), admit, "t = {}", t);
        }
    }
}
