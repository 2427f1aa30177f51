//! Invariants of the contract (`docs/semantics.md`) over random traces.

use proptest::prelude::*;

use ratesim::engine::{self, RunConfig};
use ratesim::limiter::{
    AlgorithmSpec, FixedWindowSpec, GoLimit, GoRateSpec, GuavaSpec, LeakyBucketSpec, LeakyQueueSpec, Limit,
    Limiter, LimiterSpec, Rounding, SlidingLogSpec, SlotCounterSpec, WeightedWindowSpec, WindowAlign,
};
use ratesim::time::Nanos;
use ratesim::trace::{Arrival, ArrivalResult};

#[path = "common/edges.rs"]
mod edges;

use edges::{costed, has_pair_exactly, parts, trace};

/// A limit of `L` in `requests` per `W` in `window`, and a trace for it
/// whose gaps hit `W`, `W +- 1` and the lengths `edges(W)` returns.
fn limited<E: Fn(u64) -> Vec<u64> + Clone + 'static>(
    requests: std::ops::Range<u64>,
    window: std::ops::Range<u64>,
    edges: E,
) -> impl Strategy<Value = (u64, u64, Vec<u64>)> {
    (requests, window).prop_flat_map(move |(l, w)| (Just(l), Just(w), trace(w, edges(w), 300)))
}

/// The edges of every limiter of [`all_specs`]: its slot widths (`W / N`
/// for N = 2, 7, 10) and the fixed window's offset `W / 3`, each rounded
/// both ways, with their neighbours.
fn all_edges(window: u64) -> Vec<u64> {
    let mut v = Vec::new();
    for n in [2, 3, 7, 10] {
        v.extend(parts(window, n));
    }
    v
}

fn run(limit: Limit, specs: &[LimiterSpec], times: &[u64]) -> Vec<ratesim::metrics::LimiterReport> {
    let arrivals: Vec<ArrivalResult> = times.iter().map(|&t| Ok(Arrival::at(Nanos::new(t)))).collect();
    let config = RunConfig::new(limit, specs.to_vec());
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

    /// The engine's figures for the sliding log and a slot counter equal a
    /// brute force that decides both from scratch (the exact rule by a scan
    /// of every admitted timestamp, the slot counter by summing every slot)
    /// and measures peak, excess, false rejects and disagreement from their
    /// definitions. The log is exact: peak <= L, no excess, no false rejects.
    /// (The engine sends cost 1: an arrival has no cost.)
    ///
    /// State (docs/semantics.md, "State, per algorithm"): the slot counter
    /// stores its non-empty slots, each an (index, count) pair of 16 B, plus
    /// an 8 B running sum, and drops a slot when a request no longer counts
    /// it, so its peak is [`brute_slot_state`]'s: the most distinct slots
    /// among the admitted requests in the counted span `(k - N, k]` of some
    /// request; the log drops the timestamps at or before `t - W` before
    /// it logs one at `t`, so it peaks at the run's peak, 8 B each. No
    /// request, no key, no state.
    #[test]
    fn figures_match_a_brute_force(
        (requests, window, slots, times) in (1u64..8, 10u64..1000, 1u64..8).prop_flat_map(|(l, w, n)| {
            (Just(l), Just(w), Just(n), trace(w, parts(w, n), 300))
        }),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let r = run(limit, &[LimiterSpec::from(SlotCounterSpec { slots })], &times);
        let (slot, log) = (&r[0], &r[1]);
        prop_assert_eq!(&log.label, "sliding_log");
        let exact = brute_exact(requests, window, &times);
        let ones: Vec<(u64, u32)> = times.iter().map(|&t| (t, 1)).collect();
        let counted = brute_slots(requests, window, slots, &ones);
        for (report, decisions) in [(log, &exact), (slot, &counted)] {
            let (peak, excess, false_rejects) = brute_figures(requests, window, &times, decisions);
            let admitted = decisions.iter().filter(|a| **a).count() as u64;
            let differ = decisions.iter().zip(&exact).filter(|(a, b)| a != b).count() as u64;
            let c = &report.counts;
            prop_assert_eq!(
                (c.admitted, c.peak, c.excess, c.false_rejects, c.disagreements),
                (admitted, peak, excess, false_rejects, differ),
                "{}", report.label
            );
        }
        prop_assert!(log.counts.peak <= requests);
        prop_assert_eq!((log.counts.excess, log.counts.false_rejects), (0, 0));
        let entries = brute_slot_state(window, slots, &ones, &counted);
        let (slot_state, log_state) = if times.is_empty() {
            ((0, 0), (0, 0))
        } else {
            ((entries, 16 * entries + 8), (log.counts.peak, 8 * log.counts.peak))
        };
        prop_assert_eq!((slot.state.entries, slot.state.bytes), slot_state, "{}", slot.label);
        prop_assert_eq!((log.state.entries, log.state.bytes), log_state, "{}", log.label);
    }

    /// Fixed windows and slot counters count a span that lies inside the exact
    /// window, so they never have false rejects; no windowed limiter exceeds
    /// 2L; every limiter conserves requests.
    #[test]
    fn counters_never_false_reject_and_counts_add_up(
        (requests, window, times) in limited(1..8, 10..1000, all_edges),
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
    fn sliding_log_matches_a_brute_force_scan((requests, window, times) in limited(1..8, 1..1000, |_| Vec::new())) {
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
        count_rejected in any::<bool>(),
        (requests, window, times, costs) in limited(1..12, 1..1000, |_| Vec::new()).prop_flat_map(|(l, w, ts)| {
            let n = ts.len();
            (Just(l), Just(w), Just(ts), prop::collection::vec(1u32..5, n))
        }),
    ) {
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
    fn one_slot_is_the_aligned_fixed_window((requests, window, times) in limited(1..8, 1..1000, |_| Vec::new())) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let mut fixed = LimiterSpec::from(FixedWindowSpec { align: WindowAlign::Epoch { offset: Nanos::new(0) } }).build(limit);
        let mut slot = LimiterSpec::from(SlotCounterSpec { slots: 1 }).build(limit);
        for &t in &times {
            prop_assert_eq!(fixed.decide(Nanos::new(t), 1), slot.decide(Nanos::new(t), 1), "t = {}", t);
        }
    }

    /// The O(1) slot counter agrees with a naive ring that sums all N
    /// slots, and with [`brute_slots`], with costs: a request of cost `c`
    /// is admitted iff the permits admitted in its counted span plus `c`
    /// are at most L (`src/limiter/slot_counter.rs`; with `c = 1` that is
    /// docs/semantics.md's "fewer than L"), so a cost above L never is.
    #[test]
    fn slot_counter_matches_naive_sum(
        (requests, window, slots, reqs) in (1u64..8, 12u64..1000, 1u64..12).prop_flat_map(|(l, w, n)| {
            (Just(l), Just(w), Just(n), costed(w, parts(w, n), 300, 9))
        }),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let mut fast = LimiterSpec::from(SlotCounterSpec { slots }).build(limit);
        let brute = brute_slots(requests, window, slots, &reqs);
        // Naive: keep (slot, permits) for every slot ever used; sum the last N.
        let mut used: std::collections::BTreeMap<u64, u64> = Default::default();
        for (&(t, cost), &by_brute) in reqs.iter().zip(&brute) {
            let k = (t as u128 * slots as u128 / window as u128) as u64;
            let lo = (k + 1).saturating_sub(slots);
            let sum: u64 = used.range(lo..=k).map(|(_, c)| c).sum();
            let admit = sum + u64::from(cost) <= requests;
            if admit {
                *used.entry(k).or_default() += u64::from(cost);
            }
            prop_assert_eq!(by_brute, admit, "brute_slots at t = {}, cost {}", t, cost);
            prop_assert_eq!(fast.decide(Nanos::new(t), cost).admitted(), admit, "t = {}, cost {}", t, cost);
        }
    }
}

/// The traces above are drawn for the window drawn with them, so most cases
/// hold two requests exactly `W` apart: the exact window's edge, where a
/// request no longer sees the one before. (Traces drawn for a constant
/// 1000 ns while `W` was drawn separately did in about 22 % of cases.)
#[test]
fn most_traces_hold_a_pair_exactly_w_apart() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let n = 500;
    for strategy in
        [limited(1..8, 1..1000, all_edges).boxed(), limited(1..8, 1..1000, |_| Vec::new()).boxed()]
    {
        let hits = (0..n)
            .filter(|_| {
                let (_, w, times) = strategy.new_tree(&mut runner).unwrap().current();
                has_pair_exactly(&times, w)
            })
            .count();
        assert!(hits * 100 >= n * 85, "{hits} of {n} cases hold a pair exactly W apart");
    }
}

/// The exact rule by brute force: admit iff fewer than L admitted requests
/// lie in `(t - W, t]` (earlier ones at `t` included).
fn brute_exact(requests: u64, window: u64, times: &[u64]) -> Vec<bool> {
    let mut admitted: Vec<u64> = Vec::new();
    times
        .iter()
        .map(|&t| {
            let ok = (admitted.iter().filter(|&&a| a + window > t).count() as u64) < requests;
            if ok {
                admitted.push(t);
            }
            ok
        })
        .collect()
}

/// The slot counter by brute force: sum the permits of every admitted
/// request in slot `k = floor(t N / W)` and the `N - 1` before it; admit a
/// request of cost `c` iff that sum plus `c` is at most L.
fn brute_slots(requests: u64, window: u64, slots: u64, reqs: &[(u64, u32)]) -> Vec<bool> {
    let slot = |t: u64| (u128::from(t) * u128::from(slots) / u128::from(window)) as u64;
    let mut admitted: Vec<(u64, u64)> = Vec::new();
    reqs.iter()
        .map(|&(t, cost)| {
            let k = slot(t);
            let sum: u64 = admitted.iter().filter(|&&(a, _)| slot(a) + slots > k).map(|&(_, c)| c).sum();
            let ok = sum + u64::from(cost) <= requests;
            if ok {
                admitted.push((t, u64::from(cost)));
            }
            ok
        })
        .collect()
}

/// The slot counter's peak state in slots, by brute force: after each
/// request at `t`, the distinct slots among the requests admitted so far
/// that lie in its counted span `(k - N, k]`, `k = floor(t N / W)`; the
/// most over the run.
fn brute_slot_state(window: u64, slots: u64, reqs: &[(u64, u32)], decisions: &[bool]) -> u64 {
    let slot = |t: u64| (u128::from(t) * u128::from(slots) / u128::from(window)) as u64;
    let mut admitted: Vec<u64> = Vec::new();
    let mut peak = 0;
    for (&(t, _), &ok) in reqs.iter().zip(decisions) {
        if ok {
            admitted.push(slot(t));
        }
        let k = slot(t);
        let mut live: Vec<u64> = admitted.iter().copied().filter(|&s| s + slots > k).collect();
        live.sort_unstable();
        live.dedup();
        peak = peak.max(live.len() as u64);
    }
    peak
}

/// (peak, excess, false rejects) of a run's decisions, from the definitions.
fn brute_figures(requests: u64, window: u64, times: &[u64], decisions: &[bool]) -> (u64, u64, u64) {
    let (mut peak, mut excess, mut false_rejects) = (0, 0, 0);
    let mut admitted: Vec<u64> = Vec::new();
    for (&t, &ok) in times.iter().zip(decisions) {
        let before = admitted.iter().filter(|&&a| a + window > t).count() as u64;
        if ok {
            admitted.push(t);
            peak = peak.max(before + 1);
            excess += u64::from(before >= requests);
        } else {
            false_rejects += u64::from(before < requests);
        }
    }
    (peak, excess, false_rejects)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The advertised retry time of the window limiters: with no other
    /// traffic, a request at exactly that time is admitted and one 1 ns
    /// earlier is not (docs/semantics.md, "Advertised retry time").
    #[test]
    fn retry_at_the_advertised_time_is_admitted_and_not_a_nanosecond_before(
        (requests, window, times) in limited(1..6, 10..1000, all_edges), cost in 1u32..3,
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        for spec in all_specs(window) {
            let mut l = spec.build(limit);
            for &t in &times {
                let now = Nanos::new(t);
                if l.decide(now, cost).admitted() {
                    continue;
                }
                let Some(at) = l.retry_at(now, cost) else {
                    prop_assert!(u64::from(cost) > requests, "{}: no retry time at {}", spec.label(), t);
                    continue;
                };
                prop_assert!(at > now, "{}: retry at {} for a reject at {}", spec.label(), at, t);
                prop_assert!(l.clone().decide(at, cost).admitted(), "{}: rejected at its retry time {} (t = {})", spec.label(), at, t);
                let before = Nanos::new(at.get() - 1);
                prop_assert!(!l.clone().decide(before, cost).admitted(), "{}: admitted 1 ns before {} (t = {})", spec.label(), at, t);
            }
        }
    }
}

// ---- production limiters: leaky bucket (nginx), weighted window, Guava, leaky queue ----

const MS: u64 = 1_000_000;

/// Sorted times in whole and part milliseconds for `L` = `requests` per `W`
/// = `window` ns: nginx's clock ticks every millisecond, so the leaky bucket
/// needs gaps around 1 ms and around its emission interval (`W / L`, also
/// rounded up to whole milliseconds), every limiter gaps of exactly `W` and
/// `W +- 1`, and bursts at one instant.
fn ms_trace(window: u64, requests: u64) -> impl Strategy<Value = Vec<u64>> {
    let mut edges = vec![MS - 1, MS, MS + 1];
    edges.extend(edges::around(window));
    edges.extend(parts(window, requests));
    edges.extend(edges::around((window / requests).div_ceil(MS) * MS));
    edges.sort_unstable();
    edges.dedup();
    prop::collection::vec(
        prop_oneof![
            3 => Just(0u64),
            3 => 0u64..3 * MS,
            2 => 0u64..400 * MS,
            1 => Just(window),
            1 => prop::sample::select(edges),
        ],
        0..200,
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

/// `L` from `requests`, `W` from `windows_ms` (in milliseconds), and an
/// [`ms_trace`] for them.
fn ms_limited(
    requests: std::ops::Range<u64>,
    windows_ms: Vec<u64>,
) -> impl Strategy<Value = (u64, u64, Vec<u64>)> {
    (requests, prop::sample::select(windows_ms)).prop_flat_map(|(l, w_ms)| {
        let w = w_ms * MS;
        (Just(l), Just(w), ms_trace(w, l))
    })
}

fn production_specs(window: u64) -> Vec<LimiterSpec> {
    let weighted = |rounding, offset, count_rejected| {
        LimiterSpec::from(WeightedWindowSpec { rounding, offset: Nanos::new(offset), count_rejected })
    };
    let leaky = |burst, delay| LimiterSpec::from(LeakyBucketSpec { burst, delay });
    let guava = |permits_per_second, max_burst_seconds, timeout: u64| {
        LimiterSpec::from(GuavaSpec {
            permits_per_second,
            max_burst_seconds,
            timeout: Some(Nanos::new(timeout)),
        })
    };
    vec![
        leaky(0, None),
        leaky(1, None),
        leaky(5, None),
        // nginx without nodelay (delay 0) and with delay=N: the same
        // lookup, so the same admissions and retry times.
        leaky(0, Some(0)),
        leaky(1, Some(0)),
        leaky(5, Some(2)),
        leaky(5, Some(5)),
        weighted(Rounding::Exact, 0, false),
        weighted(Rounding::Floor, 0, false),
        weighted(Rounding::Exact, window / 3, false),
        weighted(Rounding::Floor, window / 7, true),
        weighted(Rounding::Exact, 0, true),
        // Guava's tryAcquire(timeout), on its microsecond stopwatch.
        guava(None, 1.0, 0),
        guava(None, 1.0, window / 3),
        guava(None, 1.0, window),
        guava(Some(7.3), 2.5, window / 2 + 1),
        guava(Some(1000.0), 0.0, 999),
        LimiterSpec::from(LeakyQueueSpec { queue: 1 }),
        LimiterSpec::from(LeakyQueueSpec { queue: 3 }),
        // Go's x/time/rate, AllowN and WaitN, in float64.
        LimiterSpec::from(GoRateSpec::DEFAULT),
        LimiterSpec::from(GoRateSpec { burst: Some(1), ..GoRateSpec::DEFAULT }),
        LimiterSpec::from(GoRateSpec {
            limit: GoLimit::Every(Nanos::new(window / 3)),
            ..GoRateSpec::DEFAULT
        }),
        LimiterSpec::from(GoRateSpec { limit: GoLimit::PerSecond(7.3), burst: Some(2), max_wait: None }),
        LimiterSpec::from(GoRateSpec { max_wait: Some(Nanos::new(window / 2)), ..GoRateSpec::DEFAULT }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The advertised retry time of the leaky bucket (nodelay, without
    /// it and with `delay`), the weighted window, Guava's
    /// `tryAcquire(timeout)` and the leaky queue, every variant: with no
    /// other traffic, a request at exactly that time is admitted (to pass
    /// or to wait) and one 1 ns earlier is not (docs/semantics.md,
    /// "Advertised retry time", and "With reacting clients" for the
    /// shaping ones). For the leaky bucket the time is a whole millisecond,
    /// and 1 ns earlier is the millisecond before, which has leaked less;
    /// for Guava a whole microsecond of its stopwatch; for the leaky queue
    /// the next departure. With `count_rejected` this holds for one retry:
    /// each refused attempt before it counts and moves it later.
    #[test]
    fn production_retry_at_is_admitted_and_not_a_nanosecond_before(
        (requests, window, times) in ms_limited(1..6, vec![10, 100, 250, 1000, 1001, 60_000]),
        cost in 1u32..4,
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        for spec in production_specs(window) {
            let mut l = spec.build(limit);
            for &t in &times {
                let now = Nanos::new(t);
                if l.decide(now, cost).admitted() {
                    continue;
                }
                let Some(at) = l.retry_at(now, cost) else {
                    // Never: a cost above L (weighted) or above burst + 1
                    // (leaky); Guava and the queue admit any cost.
                    let never = match &spec.algorithm {
                        AlgorithmSpec::LeakyBucket(s) => u64::from(cost) > s.burst + 1,
                        AlgorithmSpec::Guava(_) | AlgorithmSpec::LeakyQueue(_) => false,
                        AlgorithmSpec::GoRate(s) => u64::from(cost) > s.burst.unwrap_or(requests),
                        _ => u64::from(cost) > requests,
                    };
                    prop_assert!(never, "{}: no retry time at {}", spec.label(), t);
                    continue;
                };
                prop_assert!(at > now, "{}: retry at {} for a reject at {}", spec.label(), at, t);
                prop_assert!(l.clone().decide(at, cost).admitted(), "{}: rejected at its retry time {} (t = {})", spec.label(), at, t);
                let before = Nanos::new(at.get() - 1);
                prop_assert!(!l.clone().decide(before, cost).admitted(), "{}: admitted 1 ns before {} (t = {})", spec.label(), at, t);
            }
        }
    }

    /// Engine runs of the new limiters conserve requests; the leaky bucket
    /// with burst 0 never admits two requests closer than its emission
    /// interval in whole milliseconds, and the weighted window (counting
    /// admitted requests, exact rounding) never has more than 2L in a window.
    #[test]
    fn production_limiters_in_the_engine((requests, window, times) in ms_limited(1..6, vec![10, 100, 1000])) {
        let window_ms = window / MS;
        let limit = Limit { requests, window: Nanos::new(window) };
        for r in run(limit, &production_specs(window), &times) {
            prop_assert_eq!(r.counts.admitted + r.counts.rejected, r.counts.offered);
            prop_assert_eq!(r.counts.offered, times.len() as u64);
            if r.spec == LimiterSpec::from(WeightedWindowSpec::DEFAULT) {
                prop_assert!(r.counts.peak <= 2 * requests, "{} peak {}", r.label, r.counts.peak);
            }
        }
        let mut l = LimiterSpec::from(LeakyBucketSpec { burst: 0, delay: None }).build(limit);
        let mut last: Option<u64> = None;
        for &t in &times {
            if l.decide(Nanos::new(t), 1).admitted() {
                let ms = t / 1_000_000;
                if let Some(prev) = last {
                    // r (ms - prev) / 1000 >= 1000 with r = floor(L * 10^6 / W_ms).
                    let r = requests * 1_000_000 / window_ms;
                    prop_assert!(r * (ms - prev) >= 1_000_000, "admitted {} ms after the last", ms - prev);
                }
                last = Some(ms);
            }
        }
    }
}
