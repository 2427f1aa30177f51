//! The production limiters (`gcra`, `token_bucket` continuous and timer)
//! against brute-force oracles, each other, redis-cell's and Envoy's
//! documented behaviour worked by hand, and their advertised retry times.
//! governor itself is in `tests/gcra_governor.rs`.

use proptest::prelude::*;

use ratesim::engine::{self, RunConfig};
use ratesim::limiter::{
    Algorithm, AlgorithmSpec, Decision, GcraSpec, Initial, Limit, Limiter, LimiterSpec, TokenBucketSpec,
};
use ratesim::time::Nanos;
use ratesim::trace::{Arrival, ArrivalResult};

#[path = "common/edges.rs"]
mod edges;

use edges::{around, costed, parts, trace};

/// The GCRA's edges for `L` per `W` and burst `b`: the emission interval
/// `T = floor(W / L)` (and the exact `W / L`), the tolerance `tau = T (b - 1)`
/// and `T b`, the time a fresh limiter's burst takes to drain.
fn gcra_edges(requests: u64, window: u64, burst: u64) -> Vec<u64> {
    let t = (window / requests).max(1);
    let mut v = parts(window, requests);
    v.extend(around(t * (burst - 1)));
    v.extend(around(t * burst));
    v
}

/// The edges of every limiter of [`variants`]: refill and emission
/// intervals (`W / L`), the timer buckets' fill intervals (`W / 3`, `W / 7`)
/// and the shaping ones' `max_wait` (`W / 3`).
fn variant_edges(requests: u64, window: u64) -> Vec<u64> {
    let mut v = parts(window, requests);
    v.extend(parts(window, 3));
    v.extend(parts(window, 7));
    v
}

/// `L`, `W` and a costed trace whose gaps hit `edges(L, W)`.
fn limited<E: Fn(u64, u64) -> Vec<u64> + Clone + 'static>(
    requests: std::ops::Range<u64>,
    window: std::ops::Range<u64>,
    len: usize,
    max_cost: u32,
    edges: E,
) -> impl Strategy<Value = (u64, u64, Vec<(u64, u32)>)> {
    (requests, window).prop_flat_map(move |(l, w)| (Just(l), Just(w), costed(w, edges(l, w), len, max_cost)))
}

/// Up to `len` requests anywhere in u64 time, sorted, many of them in the
/// last stretch before `u64::MAX` and some at the same instant.
fn end_of_time(len: usize, max_cost: u32) -> impl Strategy<Value = Vec<(u64, u32)>> {
    prop::collection::vec(
        (
            prop_oneof![1 => any::<u64>(), 2 => (u64::MAX - (1u64 << 63))..=u64::MAX, 1 => Just(u64::MAX)],
            prop_oneof![3 => Just(1u32), 1 => 1..=max_cost],
        ),
        0..len,
    )
    .prop_map(|mut v| {
        v.sort_by_key(|&(t, _)| t);
        v
    })
}

/// A `max_wait` for a limiter whose `k`-th wait at one instant is
/// `step(k)` ns (the GCRA's `k T`, the bucket's `ceil(k W / L)`): none,
/// exactly such a wait or 1 ns either side of it (where a wait lands on
/// `max_wait` or just past it), or anything up to `most`.
fn max_wait<S: Fn(u64) -> u64 + Clone + 'static>(step: S, most: u64) -> impl Strategy<Value = u64> {
    prop_oneof![
        1 => Just(0u64),
        2 => (0u64..12, 0u64..3).prop_map(move |(k, e)| step(k).saturating_add(e).saturating_sub(1)),
        2 => 0..=most,
    ]
}

fn decide_all(mut l: impl Limiter, reqs: &[(u64, u32)]) -> Vec<bool> {
    reqs.iter().map(|&(t, c)| l.decide(Nanos::new(t), c).admitted()).collect()
}

fn continuous(capacity: u64, initial: Initial) -> TokenBucketSpec {
    TokenBucketSpec::Continuous { capacity: Some(capacity), initial, max_wait: None }
}

fn timer(max_tokens: u64, tokens_per_fill: u64, fill_interval: u64) -> TokenBucketSpec {
    TokenBucketSpec::Timer {
        max_tokens: Some(max_tokens),
        tokens_per_fill: Some(tokens_per_fill),
        fill_interval: Some(Nanos::new(fill_interval)),
    }
}

// ---- brute-force oracles ----------------------------------------------------

/// GCRA without incremental state: the theoretical arrival time after the
/// admitted requests `(t_j, c_j)` is `max_j (t_j + T * (c_j + ... + c_n))`
/// (the recursion `tat = max(tat, t) + T c` unrolled), recomputed from the
/// whole history for every request, in signed 128-bit integers.
///
/// With `max_wait` (docs/semantics.md, "Shaping"): a request waits
/// `d = max(0, tat + T (c - 1) - tau - now)` (`tat = now` for a fresh
/// limiter), is admitted iff `d <= max_wait` (and its cost fits the burst),
/// passes at once (`Admit`) when `d = 0` and is `Delay(d)` otherwise; a
/// delayed request enters the history at its backend time `now + d`, as if
/// it had arrived then. `max_wait = 0` is the policing limiter, whose rule
/// "reject iff `now + tau < tat + T (c - 1)`" is `d > 0`.
fn oracle_gcra(requests: u64, window: u64, burst: u64, max_wait: u64, reqs: &[(u64, u32)]) -> Vec<Decision> {
    let t = i128::from((window / requests).max(1));
    let tau = t * (i128::from(burst) - 1);
    let mut admitted: Vec<(i128, i128)> = Vec::new();
    reqs.iter()
        .map(|&(now, cost)| {
            let (now, cost) = (i128::from(now), i128::from(cost));
            if t * (cost - 1) > tau {
                return Decision::Reject; // more than the burst can ever hold
            }
            let mut suffix = 0;
            let mut tat = None::<i128>;
            for &(tj, cj) in admitted.iter().rev() {
                suffix += cj;
                tat = Some(tat.unwrap_or(i128::MIN).max(tj + t * suffix));
            }
            let wait = (tat.unwrap_or(now) + t * (cost - 1) - tau - now).max(0);
            if wait > i128::from(max_wait) {
                return Decision::Reject;
            }
            admitted.push((now + wait, cost));
            if wait == 0 { Decision::Admit } else { Decision::Delay(Nanos::new(wait as u64)) }
        })
        .collect()
}

/// `ceil(a / b)` for `b > 0`, either sign of `a`.
fn ceil_div(a: i128, b: i128) -> i128 {
    -(-a).div_euclid(b)
}

/// The continuous bucket without incremental state: the credit at `x` (at
/// or after every admitted request) is the least of the cap, "the initial
/// credit plus all refill minus all admitted needs" and, for every admitted
/// request `j`, "full at `t_j`, plus refill since, minus the needs admitted
/// from `j` on" (the recursion `credit = min(cap, credit + dt L)` unrolled;
/// a rejected request's "full at `t_j`" term is never the least).
///
/// With `max_wait` (docs/semantics.md, "Shaping"): a request of cost `c`
/// reaches the backend at the first whole nanosecond `x`, not before `now`
/// nor before the request admitted last reaches it (waiters leave in the
/// order they came), at which that credit holds `c W`; it waits
/// `d = x - now`, is admitted iff `c <= b` and `d <= max_wait`, passes at
/// once when `d = 0` and is `Delay(d)` otherwise, and takes `c W` at `x`.
/// Every term but the cap grows by `L` per ns, so `x` is the latest of the
/// instants at which each term reaches `c W`. `max_wait = 0` is the
/// policing bucket: admit iff the credit at `now` is at least `c W`.
fn oracle_continuous(
    requests: u64,
    window: u64,
    capacity: u64,
    initial: Initial,
    max_wait: u64,
    reqs: &[(u64, u32)],
) -> Vec<Decision> {
    let (l, w) = (i128::from(requests), i128::from(window));
    let cap = i128::from(capacity) * w;
    let start = if initial == Initial::Full { cap } else { 0 };
    // (backend time, need) of every admitted request, in order.
    let mut taken: Vec<(i128, i128)> = Vec::new();
    reqs.iter()
        .map(|&(now, cost)| {
            let (now, need) = (i128::from(now), i128::from(cost) * w);
            if need > cap {
                return Decision::Reject; // more than the bucket ever holds
            }
            let mut at = taken.last().map_or(now, |&(b, _)| b.max(now));
            let mut since = 0;
            for &(b, n) in taken.iter().rev() {
                since += n;
                // cap + L (x - b) - since >= need
                at = at.max(b + ceil_div(need + since - cap, l));
            }
            // start + L x - since >= need
            at = at.max(ceil_div(need + since - start, l));
            let wait = at - now;
            if wait > i128::from(max_wait) {
                return Decision::Reject;
            }
            taken.push((at, need));
            if wait == 0 { Decision::Admit } else { Decision::Delay(Nanos::new(wait as u64)) }
        })
        .collect()
}

/// Envoy's timer bucket by replaying, for every request, every fill and
/// every earlier decision from time 0 (fills at `k * interval` first, then
/// the requests of that instant).
fn oracle_timer(max: u64, per_fill: u64, interval: u64, reqs: &[(u64, u32)]) -> Vec<bool> {
    let mut decisions: Vec<bool> = Vec::new();
    for n in 0..reqs.len() {
        let mut level = max;
        let mut next_fill = interval;
        for (i, &(t, cost)) in reqs[..=n].iter().enumerate() {
            while next_fill <= t {
                level = (level + per_fill).min(max);
                next_fill += interval;
            }
            let cost = u64::from(cost);
            if i < n {
                if decisions[i] {
                    level -= cost;
                }
            } else {
                decisions.push(level >= cost);
            }
        }
    }
    decisions
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn gcra_matches_its_oracle(
        (requests, window, burst, reqs) in (1u64..8, 1u64..1000, 1u64..10).prop_flat_map(|(l, w, b)| {
            (Just(l), Just(w), Just(b), costed(w, gcra_edges(l, w, b), 150, 12))
        }),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let spec = GcraSpec { burst: Some(burst), max_wait: None };
        prop_assert_eq!(decisions(spec.build(limit), &reqs), oracle_gcra(requests, window, burst, 0, &reqs));
    }

    /// The shaping GCRA (`max_wait`) against the oracle: every decision and
    /// every delay, to the nanosecond, on the traces above plus gaps of
    /// `max_wait` and 1 ns either side.
    #[test]
    fn gcra_with_max_wait_matches_its_oracle(
        (requests, window, burst, wait, reqs) in (1u64..8, 1u64..1000, 1u64..10)
            .prop_flat_map(|(l, w, b)| {
                let t = (w / l).max(1);
                (Just(l), Just(w), Just(b), max_wait(move |k| k * t, 3 * w))
            })
            .prop_flat_map(|(l, w, b, wait)| {
                let mut edges = gcra_edges(l, w, b);
                edges.extend(around(wait));
                (Just(l), Just(w), Just(b), Just(wait), costed(w, edges, 150, 12))
            }),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let spec = GcraSpec { burst: Some(burst), max_wait: Some(Nanos::new(wait)) };
        prop_assert_eq!(decisions(spec.build(limit), &reqs), oracle_gcra(requests, window, burst, wait, &reqs));
    }

    #[test]
    fn continuous_bucket_matches_its_oracle(
        (requests, window, capacity, reqs) in (1u64..8, 1u64..1000, 1u64..10).prop_flat_map(|(l, w, b)| {
            // A token refills in W / L, a full bucket in b W / L.
            let mut edges = parts(w, l);
            edges.extend(parts(b * w, l));
            (Just(l), Just(w), Just(b), costed(w, edges, 120, 12))
        }),
        empty in any::<bool>(),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let initial = if empty { Initial::Empty } else { Initial::Full };
        let ours = decisions(continuous(capacity, initial).build(limit), &reqs);
        prop_assert_eq!(ours, oracle_continuous(requests, window, capacity, initial, 0, &reqs));
    }

    /// The shaping bucket (`max_wait`) against the oracle: every decision
    /// and every delay, to the nanosecond, on the traces above plus gaps of
    /// `max_wait` and 1 ns either side.
    #[test]
    fn continuous_bucket_with_max_wait_matches_its_oracle(
        (requests, window, capacity, wait, reqs) in (1u64..8, 1u64..1000, 1u64..10)
            .prop_flat_map(|(l, w, b)| (Just(l), Just(w), Just(b), max_wait(move |k| (k * w).div_ceil(l), 3 * w)))
            .prop_flat_map(|(l, w, b, wait)| {
                let mut edges = parts(w, l);
                edges.extend(parts(b * w, l));
                edges.extend(around(wait));
                (Just(l), Just(w), Just(b), Just(wait), costed(w, edges, 120, 12))
            }),
        empty in any::<bool>(),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let initial = if empty { Initial::Empty } else { Initial::Full };
        let ours = decisions(bucket_wait(capacity, initial, Some(wait)).build(limit), &reqs);
        prop_assert_eq!(ours, oracle_continuous(requests, window, capacity, initial, wait, &reqs));
    }

    #[test]
    fn timer_bucket_matches_its_oracle(
        max in 1u64..8, per_fill in 1u64..8,
        (requests, window, divide, reqs) in (1u64..8, 10u64..200, 1u64..6).prop_flat_map(|(l, w, d)| {
            // Fills every W / d: requests on both sides of a fill.
            (Just(l), Just(w), Just(d), costed(w, parts(w, d), 80, 9))
        }),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let per_fill = per_fill.min(max);
        let interval = window / divide;
        let ours = decide_all(timer(max, per_fill, interval).build(limit), &reqs);
        prop_assert_eq!(ours, oracle_timer(max, per_fill, interval, &reqs));
    }

    /// Near the end of time GCRA's `tat` passes `u64::MAX` and the limiter
    /// leaves its u64 path: still the oracle's decisions.
    #[test]
    fn gcra_matches_its_oracle_at_the_end_of_time(
        requests in 1u64..4, window in (1u64 << 58)..(1u64 << 62), burst in 1u64..6,
        reqs in end_of_time(40, 4),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let spec = GcraSpec { burst: Some(burst), max_wait: None };
        prop_assert_eq!(decisions(spec.build(limit), &reqs), oracle_gcra(requests, window, burst, 0, &reqs));
    }

    /// The same with `max_wait`: waits of up to any u64, backend times past
    /// `u64::MAX`.
    #[test]
    fn gcra_with_max_wait_matches_its_oracle_at_the_end_of_time(
        (requests, window, wait) in (1u64..4, (1u64 << 58)..(1u64 << 62)).prop_flat_map(|(l, w)| {
            let t = w / l;
            (Just(l), Just(w), max_wait(move |k| k.saturating_mul(t), u64::MAX))
        }),
        burst in 1u64..6,
        reqs in end_of_time(40, 4),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let spec = GcraSpec { burst: Some(burst), max_wait: Some(Nanos::new(wait)) };
        prop_assert_eq!(decisions(spec.build(limit), &reqs), oracle_gcra(requests, window, burst, wait, &reqs));
    }

    /// Caps of credit on both sides of `2^63` (`b W`), where the bucket
    /// leaves its u64 path for u128, with refills that pass u64.
    #[test]
    fn continuous_bucket_matches_its_oracle_near_u64(
        requests in 1u64..8, window in (1u64 << 61)..(1u64 << 63), capacity in 1u64..12, empty in any::<bool>(),
        reqs in end_of_time(40, 12),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let initial = if empty { Initial::Empty } else { Initial::Full };
        let ours = decisions(continuous(capacity, initial).build(limit), &reqs);
        prop_assert_eq!(ours, oracle_continuous(requests, window, capacity, initial, 0, &reqs));
    }

    /// The same with `max_wait`: waits of up to any u64, backend times past
    /// `u64::MAX`.
    #[test]
    fn continuous_bucket_with_max_wait_matches_its_oracle_near_u64(
        (requests, window, wait) in (1u64..8, (1u64 << 61)..(1u64 << 63)).prop_flat_map(|(l, w)| {
            let step = move |k: u64| u64::try_from((u128::from(k) * u128::from(w)).div_ceil(u128::from(l))).unwrap_or(u64::MAX);
            (Just(l), Just(w), max_wait(step, u64::MAX))
        }),
        capacity in 1u64..12, empty in any::<bool>(),
        reqs in end_of_time(40, 12),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let initial = if empty { Initial::Empty } else { Initial::Full };
        let ours = decisions(bucket_wait(capacity, initial, Some(wait)).build(limit), &reqs);
        prop_assert_eq!(ours, oracle_continuous(requests, window, capacity, initial, wait, &reqs));
    }

    /// The defaults of the timer bucket, resolved against the limit.
    #[test]
    fn default_timer_bucket_matches_its_oracle(
        (requests, window, reqs) in limited(1..8, 10..200, 80, 4, |_, _| Vec::new()),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let ours = decide_all(TokenBucketSpec::TIMER.build(limit), &reqs);
        prop_assert_eq!(ours, oracle_timer(requests, requests, window, &reqs));
    }

    /// docs/semantics.md: when `L` divides `W`, a full continuous bucket of
    /// capacity `b` makes exactly the decisions of a GCRA with burst `b`,
    /// whatever the costs (a cost above `b` is refused by both).
    #[test]
    fn full_token_bucket_is_gcra_when_l_divides_w(
        (requests, per, burst, reqs) in (1u64..8, 1u64..150, 1u64..10).prop_flat_map(|(l, per, b)| {
            (Just(l), Just(per), Just(b), costed(l * per, gcra_edges(l, l * per, b), 200, 12))
        }),
    ) {
        let limit = Limit { requests, window: Nanos::new(requests * per) };
        let bucket = decide_all(continuous(burst, Initial::Full).build(limit), &reqs);
        let gcra = decide_all(GcraSpec { burst: Some(burst), max_wait: None }.build(limit), &reqs);
        prop_assert_eq!(bucket, gcra);
    }
}

// ---- advertised retry time ---------------------------------------------------

/// Every variant, with the largest cost it can ever admit.
fn variants(limit: Limit) -> Vec<(LimiterSpec, u64)> {
    let (l, w) = (limit.requests, limit.window.get());
    vec![
        (GcraSpec { burst: None, max_wait: None }.into(), l),
        (GcraSpec { burst: Some(1), max_wait: None }.into(), 1),
        (GcraSpec { burst: Some(3), max_wait: None }.into(), 3),
        (GcraSpec { burst: Some(20), max_wait: None }.into(), 20),
        (TokenBucketSpec::CONTINUOUS.into(), l),
        (continuous(1, Initial::Full).into(), 1),
        (continuous(4, Initial::Full).into(), 4),
        (continuous(3, Initial::Empty).into(), 3),
        (TokenBucketSpec::Continuous { capacity: None, initial: Initial::Empty, max_wait: None }.into(), l),
        (TokenBucketSpec::TIMER.into(), l),
        (timer(3, 2, w / 3).into(), 3),
        (timer(5, 1, w / 7).into(), 5),
        (timer(2, 2, w).into(), 2),
        // Shaping: the retry time is when the request may start to wait.
        (GcraSpec { burst: Some(2), max_wait: Some(Nanos::new(w / 3)) }.into(), 2),
        (GcraSpec { burst: None, max_wait: Some(Nanos::new(w)) }.into(), l),
        (
            TokenBucketSpec::Continuous {
                capacity: Some(2),
                initial: Initial::Full,
                max_wait: Some(Nanos::new(w / 3)),
            }
            .into(),
            2,
        ),
        (
            TokenBucketSpec::Continuous {
                capacity: None,
                initial: Initial::Empty,
                max_wait: Some(Nanos::new(w)),
            }
            .into(),
            l,
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// With no other traffic, a request at exactly the advertised retry time
    /// is admitted and one 1 ns earlier is not (docs/semantics.md,
    /// "Advertised retry time"); no time is advertised exactly when the
    /// cost is more than the limiter can ever hold.
    #[test]
    fn retry_at_the_advertised_time_is_admitted_and_not_a_nanosecond_before(
        (requests, window, reqs) in limited(1..6, 10..1000, 200, 6, variant_edges),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        for (spec, most) in variants(limit) {
            let mut l = spec.build(limit);
            for &(t, cost) in &reqs {
                let now = Nanos::new(t);
                if l.decide(now, cost).admitted() {
                    continue;
                }
                let Some(at) = l.retry_at(now, cost) else {
                    prop_assert!(u64::from(cost) > most, "{}: no retry time at {} for cost {}", spec.label(), t, cost);
                    continue;
                };
                prop_assert!(u64::from(cost) <= most, "{}: retry time for cost {}", spec.label(), cost);
                prop_assert!(at > now, "{}: retry at {} for a reject at {}", spec.label(), at, t);
                prop_assert!(l.clone().decide(at, cost).admitted(), "{}: rejected at its retry time {} (t = {}, cost {})", spec.label(), at, t, cost);
                let before = Nanos::new(at.get() - 1);
                prop_assert!(!l.clone().decide(before, cost).admitted(), "{}: admitted 1 ns before {} (t = {}, cost {})", spec.label(), at, t, cost);
            }
        }
    }
}

// ---- through the engine: counts and the admission bound ----------------------

fn run(limit: Limit, specs: &[LimiterSpec], times: &[u64]) -> Vec<ratesim::metrics::LimiterReport> {
    let arrivals: Vec<ArrivalResult> = times.iter().map(|&t| Ok(Arrival::at(Nanos::new(t)))).collect();
    let config = RunConfig::new(limit, specs.to_vec());
    engine::run(&config, arrivals.into_iter(), None, &mut |_| {}).unwrap().limiters
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Through the engine every request is decided once, the state is what
    /// docs/semantics.md says, and no exact window holds more than the
    /// bucket plus what refills inside it: in `(t - W, t]` the admitted
    /// requests lie in `W - 1` ns, so at most `b + floor((W - 1) / T)` for
    /// GCRA, `b + floor((W - 1) L / W)` for the continuous bucket and
    /// `max_tokens + tokens_per_fill * ceil((W - 1) / fill_interval)` for
    /// the timer bucket ("Admission curve": `b + L` at most).
    #[test]
    fn engine_counts_state_and_admission_bound(
        (requests, window, times) in (1u64..8, 10u64..1000).prop_flat_map(|(l, w)| {
            (Just(l), Just(w), trace(w, variant_edges(l, w), 300))
        }),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let (specs, bounds): (Vec<LimiterSpec>, Vec<u64>) = variants(limit)
            .into_iter()
            .map(|(spec, _)| {
                let bound = bound(&spec, limit);
                (spec, bound)
            })
            .unzip();
        let reports = run(limit, &specs, &times);
        for (r, bound) in reports.iter().zip(bounds) {
            prop_assert_eq!(r.counts.admitted + r.counts.rejected, times.len() as u64, "{}", r.label);
            prop_assert!(r.counts.peak <= bound, "{}: peak {} > {}", r.label, r.counts.peak, bound);
            let bytes = if matches!(r.spec.algorithm, AlgorithmSpec::Gcra(_)) { 8 } else { 16 };
            let state = if times.is_empty() { (0, 0) } else { (1, bytes) };
            prop_assert_eq!((r.state.entries, r.state.bytes), state, "{}", r.label);
        }
    }
}

fn bound(spec: &LimiterSpec, limit: Limit) -> u64 {
    let (l, w) = (limit.requests, limit.window.get());
    match spec.algorithm {
        AlgorithmSpec::Gcra(GcraSpec { burst, .. }) => burst.unwrap_or(l) + (w - 1) / (w / l).max(1),
        AlgorithmSpec::TokenBucket(TokenBucketSpec::Continuous { capacity, .. }) => {
            capacity.unwrap_or(l) + (w - 1) * l / w
        }
        AlgorithmSpec::TokenBucket(TokenBucketSpec::Timer { max_tokens, tokens_per_fill, fill_interval }) => {
            let max = max_tokens.unwrap_or(l);
            let interval = fill_interval.map_or(w, Nanos::get);
            let per = tokens_per_fill.unwrap_or_else(|| (l * interval / w).max(1)).min(max);
            max + per * (w - 1).div_ceil(interval)
        }
        _ => unreachable!("only the production limiters"),
    }
}

// ---- redis-cell, worked by hand ---------------------------------------------

const SEC: u64 = 1_000_000_000;

/// How many requests of cost 1 a copy of `l` admits at `t`, back to back:
/// redis-cell's `remaining` (it is `floor((T b - (tat - t)) / T)`).
fn room<L: Limiter + Clone>(l: &L, t: u64) -> u64 {
    let mut probe = l.clone();
    (0..).take_while(|_| probe.decide(Nanos::new(t), 1).admitted()).count() as u64
}

/// redis-cell's README: `CL.THROTTLE user123 15 30 60` answers allowed,
/// limit 16, remaining 15, retry -1, reset 2. `max_burst = 15` is a burst of
/// 16 (redis-cell's limit is `max_burst + 1`), 30 per 60 s is `T = 2 s`.
#[test]
fn redis_cell_readme_example() {
    let limit = Limit { requests: 30, window: Nanos::from_secs(60) };
    let mut l = GcraSpec { burst: Some(16), max_wait: None }.build(limit);
    // The first call: allowed, and 15 more would be at the same instant.
    assert!(l.decide(Nanos::new(0), 1).admitted());
    assert_eq!(room(&l, 0), 15);
    // Reset 2: tat = 2 s, so from t = 2 s the key is as new, 16 at once;
    // 1 ns earlier it has room for 15 only.
    assert_eq!(room(&l, 2 * SEC), 16);
    assert_eq!(room(&l, 2 * SEC - 1), 15);
    // 15 more at 0 (16 in all), then the 17th is refused: tat = 32 s,
    // tau = 2 s * 15 = 30 s, 0 + 30 s < 32 s. Retry after 32 - 30 = 2 s.
    for _ in 0..15 {
        assert!(l.decide(Nanos::new(0), 1).admitted());
    }
    assert!(!l.decide(Nanos::new(0), 1).admitted());
    assert_eq!(l.retry_at(Nanos::new(0), 1), Some(Nanos::from_secs(2)));
    // At 2 s one gets in (tat 34 s); the next waits for 4 s.
    assert!(l.decide(Nanos::from_secs(2), 1).admitted());
    assert!(!l.decide(Nanos::from_secs(2), 1).admitted());
    assert_eq!(l.retry_at(Nanos::from_secs(2), 1), Some(Nanos::from_secs(4)));
}

/// redis-cell's own table (`it_rate_limits`): max_burst 4 (limit 5),
/// 1 per second, so `T = 1 s`, burst 5, `tau = 4 s`. Times from the start;
/// each row: (t ms, quantity, limited, remaining, reset ms, retry ms).
#[test]
fn redis_cell_rate_limit_table() {
    let limit = Limit { requests: 1, window: Nanos::from_secs(1) };
    let mut l = GcraSpec { burst: Some(5), max_wait: None }.build(limit);
    let rows: [(u64, u32, bool, u64, u64, Option<u64>); 14] = [
        // Quantity 6 > limit 5: never; redis-cell answers retry -1.
        (0, 6, true, 5, 0, None),
        // Five at once: tat 1 s, 2 s, ... 5 s; remaining 4 .. 0.
        (0, 1, false, 4, 1000, None),
        (0, 1, false, 3, 2000, None),
        (0, 1, false, 2, 3000, None),
        (0, 1, false, 1, 4000, None),
        (0, 1, false, 0, 5000, None),
        // 0 + 4 s < 5 s: limited, retry at 5 - 4 = 1 s.
        (0, 1, true, 0, 5000, Some(1000)),
        // 3 s + 4 s >= 5 s: tat 6 s, reset 3 s.
        (3000, 1, false, 2, 3000, None),
        // tat 7 s, reset 3.9 s.
        (3100, 1, false, 1, 3900, None),
        // tat 8 s, reset 4 s.
        (4000, 1, false, 1, 4000, None),
        // tat was 8 s = t: tat 9 s, reset 1 s.
        (8000, 1, false, 4, 1000, None),
        // tat 9 s is past: tat 9.5 + 1 = 10.5 s.
        (9500, 1, false, 4, 1000, None),
        // Quantity 2: 9.5 + 4 >= 10.5 + 1; tat 12.5 s, reset 3 s.
        (9500, 2, false, 2, 3000, None),
        // Quantity 5: 9.5 + 4 < 12.5 + 4; retry at 12.5 + 4 - 4 = 12.5 s, 3 s on.
        (9500, 5, true, 2, 3000, Some(3000)),
    ];
    let ms = |v: u64| v * 1_000_000;
    for (i, &(t, q, limited, remaining, reset, retry)) in rows.iter().enumerate() {
        let now = Nanos::new(ms(t));
        assert_eq!(!l.decide(now, q).admitted(), limited, "row {i}");
        assert_eq!(room(&l, ms(t)), remaining, "row {i}: remaining");
        // Reset: from then on the key is as new (5 at once), not before.
        assert_eq!(room(&l, ms(t + reset)), 5, "row {i}: reset");
        if reset > 0 {
            assert!(room(&l, ms(t + reset) - 1) < 5, "row {i}: reset");
        }
        if limited {
            let advertised = l.retry_at(now, q).map(|at| (at.get() - ms(t)) / 1_000_000);
            assert_eq!(advertised, retry, "row {i}: retry");
        }
    }
}

// ---- Envoy's timer bucket, worked by hand ------------------------------------

/// Refill happens before the requests of the same instant: `L = 4` per 1 s
/// with every default is `max_tokens = 4`, `tokens_per_fill = 4`,
/// `fill_interval = 1 s`.
#[test]
fn envoy_timer_fills_before_the_requests_of_its_instant() {
    let limit = Limit { requests: 4, window: Nanos::from_secs(1) };
    let mut b = TokenBucketSpec::TIMER.build(limit);
    let at = Nanos::new;
    // Full at time 0: four pass, the fifth finds the bucket empty.
    for _ in 0..4 {
        assert!(b.decide(at(0), 1).admitted());
    }
    assert!(!b.decide(at(0), 1).admitted());
    // The last nanosecond before the fill: still empty; retry at the fill.
    assert!(!b.decide(at(SEC - 1), 1).admitted());
    assert_eq!(b.retry_at(at(SEC - 1), 1), Some(at(SEC)));
    // At exactly 1 s the timer fires first (0 + 4 = 4), then the requests
    // of that instant: four pass, the fifth does not.
    for _ in 0..4 {
        assert!(b.decide(at(SEC), 1).admitted());
    }
    assert!(!b.decide(at(SEC), 1).admitted());
    // Between fills nothing comes back: 1.5 s is still empty.
    assert!(!b.decide(at(SEC + SEC / 2), 1).admitted());
    assert_eq!(b.retry_at(at(SEC + SEC / 2), 1), Some(at(2 * SEC)));
}

/// The level never goes above `max_tokens`: `max_tokens = 5`,
/// `tokens_per_fill = 2`, `fill_interval = 100 ms`.
#[test]
fn envoy_timer_bucket_is_capped_at_max_tokens() {
    let limit = Limit { requests: 20, window: Nanos::from_secs(1) };
    let mut b = timer(5, 2, 100_000_000).build(limit);
    let ms = |v: u64| Nanos::new(v * 1_000_000);
    // 5 at start; take 1: 4.
    assert!(b.decide(ms(0), 1).admitted());
    // Fill at 100 ms: min(5, 4 + 2) = 5, not 6. A cost of 5 empties it...
    assert!(b.decide(ms(100), 5).admitted());
    // ...and nothing is left (it held 5, not 6).
    assert!(!b.decide(ms(100), 1).admitted());
    // Fills at 200 and 300 ms: 0 + 2 + 2 = 4 < 5.
    assert!(!b.decide(ms(350), 5).admitted());
    // The fill at 400 ms makes min(5, 4 + 2) = 5: the retry time.
    assert_eq!(b.retry_at(ms(350), 5), Some(ms(400)));
    assert!(!b.decide(Nanos::new(399_999_999), 5).admitted());
    assert!(b.decide(ms(400), 5).admitted());
    // 96 fills in ten seconds would add 192 tokens; the bucket holds 5.
    assert!(b.decide(ms(10_000), 5).admitted());
    assert!(!b.decide(ms(10_000), 1).admitted());
    // A cost above max_tokens is never admitted: no retry time.
    assert!(!b.decide(ms(20_000), 6).admitted());
    assert_eq!(b.retry_at(ms(20_000), 6), None);
}

/// The default `tokens_per_fill` is `L * fill_interval / W` rounded down (at
/// least 1): 10 per 1 s filled every 250 ms adds 2 tokens, not 2.5, so the
/// long-run rate is 8 per second.
#[test]
fn envoy_timer_default_fill_rounds_down() {
    let limit = Limit { requests: 10, window: Nanos::from_secs(1) };
    let spec = TokenBucketSpec::Timer {
        max_tokens: None,
        tokens_per_fill: None,
        fill_interval: Some(Nanos::from_millis(250)),
    };
    let mut b = spec.build(limit);
    // Three requests every millisecond for 10 s: 10 pass at the start,
    // then 2 at each of the 39 fills before 10 s.
    let admitted = (0..10_000u64)
        .flat_map(|ms| std::iter::repeat_n(ms, 3))
        .filter(|&ms| b.decide(Nanos::from_millis(ms), 1).admitted())
        .count();
    assert_eq!(admitted, 10 + 2 * 39);
}

// ---- shaping: max_wait ---------------------------------------------------------

fn gcra_wait(burst: u64, max_wait: Option<u64>) -> GcraSpec {
    GcraSpec { burst: Some(burst), max_wait: max_wait.map(Nanos::new) }
}

fn bucket_wait(capacity: u64, initial: Initial, max_wait: Option<u64>) -> TokenBucketSpec {
    TokenBucketSpec::Continuous { capacity: Some(capacity), initial, max_wait: max_wait.map(Nanos::new) }
}

fn decisions(mut l: impl Limiter, reqs: &[(u64, u32)]) -> Vec<Decision> {
    reqs.iter().map(|&(t, c)| l.decide(Nanos::new(t), c)).collect()
}

/// By hand: 10 per second (T = 100 ms), burst 1, max_wait 250 ms, four
/// requests at 0: the first goes, the second waits until 100 ms, the third
/// until 200 ms, the fourth would wait 300 ms and is refused. It may start
/// waiting at 300 - 250 = 50 ms, and then waits 250 ms. The continuous
/// bucket of capacity 1 does the same in credit (1 W, then -1 W, -2 W).
#[test]
fn max_wait_by_hand() {
    let limit = Limit { requests: 10, window: Nanos::from_secs(1) };
    let ms = Nanos::from_millis;
    let specs: [LimiterSpec; 2] =
        [gcra_wait(1, Some(250_000_000)).into(), bucket_wait(1, Initial::Full, Some(250_000_000)).into()];
    for spec in specs {
        let mut l = spec.build(limit);
        let got: Vec<Decision> = (0..4).map(|_| l.decide(Nanos::ZERO, 1)).collect();
        assert_eq!(
            got,
            [Decision::Admit, Decision::Delay(ms(100)), Decision::Delay(ms(200)), Decision::Reject],
            "{}",
            spec.label()
        );
        assert_eq!(l.retry_at(Nanos::ZERO, 1), Some(ms(50)), "{}", spec.label());
        assert_eq!(l.clone().decide(ms(50) - Nanos::new(1), 1), Decision::Reject, "{}", spec.label());
        assert_eq!(l.decide(ms(50), 1), Decision::Delay(ms(250)), "{}", spec.label());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// `max_wait = 0` is the policing limiter: the same decisions, and
    /// never a delay.
    #[test]
    fn max_wait_zero_is_policing(
        (requests, window, burst, reqs) in (1u64..8, 10u64..1000, 1u64..6).prop_flat_map(|(l, w, b)| {
            (Just(l), Just(w), Just(b), costed(w, gcra_edges(l, w, b), 200, 6))
        }),
        empty in any::<bool>(),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let initial = if empty { Initial::Empty } else { Initial::Full };
        let pairs: [(LimiterSpec, LimiterSpec); 2] = [
            (gcra_wait(burst, None).into(), gcra_wait(burst, Some(0)).into()),
            (bucket_wait(burst, initial, None).into(), bucket_wait(burst, initial, Some(0)).into()),
        ];
        for (police, shape) in pairs {
            let a = decisions(police.build(limit), &reqs);
            let b = decisions(shape.build(limit), &reqs);
            prop_assert_eq!(&a, &b, "{}", shape.label());
            prop_assert!(b.iter().all(|d| d.delay() == Nanos::ZERO));
        }
    }

    /// What a shaper lets through conforms: the backend times (arrival +
    /// delay) of the admitted requests never go backwards, and the policing
    /// limiter with the same parameters admits every one of them; no delay
    /// is above max_wait. (A longer max_wait need not admit more: what
    /// waits takes the room of later requests.)
    #[test]
    fn shaped_output_conforms_to_the_policing_limiter(
        (requests, window, burst, wait, reqs) in (1u64..8, 10u64..1000, 1u64..6, 0u64..3000)
            .prop_flat_map(|(l, w, b, wait)| {
                // A request that would wait exactly max_wait, and 1 ns more.
                let mut edges = gcra_edges(l, w, b);
                edges.extend(around(wait));
                (Just(l), Just(w), Just(b), Just(wait), costed(w, edges, 200, 4))
            }),
        empty in any::<bool>(),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let initial = if empty { Initial::Empty } else { Initial::Full };
        let cases: [(LimiterSpec, LimiterSpec); 2] = [
            (gcra_wait(burst, Some(wait)).into(), gcra_wait(burst, None).into()),
            (bucket_wait(burst, initial, Some(wait)).into(), bucket_wait(burst, initial, None).into()),
        ];
        for (shape, police) in cases {
            let got = decisions(shape.build(limit), &reqs);
            let mut backend = Vec::new();
            for (&(t, c), d) in reqs.iter().zip(&got) {
                prop_assert!(d.delay().get() <= wait, "{}: delay {:?}", shape.label(), d);
                if d.admitted() {
                    backend.push((t + d.delay().get(), c));
                }
            }
            prop_assert!(backend.windows(2).all(|p| p[0].0 <= p[1].0), "{}: {:?}", shape.label(), backend);
            let all = decide_all(police.build(limit), &backend);
            prop_assert!(all.iter().all(|&a| a), "{}: the policing limiter refuses {:?}", shape.label(), backend);
        }
    }

    /// When `L` divides `W`, a full shaping bucket is a shaping GCRA:
    /// the same decisions and the same delays.
    #[test]
    fn shaping_token_bucket_is_shaping_gcra_when_l_divides_w(
        (requests, per, burst, wait, reqs) in (1u64..8, 1u64..150, 1u64..10, 0u64..2000)
            .prop_flat_map(|(l, per, b, wait)| {
                let mut edges = gcra_edges(l, l * per, b);
                edges.extend(around(wait));
                (Just(l), Just(per), Just(b), Just(wait), costed(l * per, edges, 200, 12))
            }),
    ) {
        let limit = Limit { requests, window: Nanos::new(requests * per) };
        let bucket = decisions(bucket_wait(burst, Initial::Full, Some(wait)).build(limit), &reqs);
        let gcra = decisions(gcra_wait(burst, Some(wait)).build(limit), &reqs);
        prop_assert_eq!(bucket, gcra);
    }
}
