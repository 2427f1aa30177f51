//! The engine's figures against a brute force written from
//! `docs/semantics.md`, over random traces whose gaps hit each limiter's
//! edges: the admission curve ("Admission curve"), the metrics of shaping
//! limiters judged at backend times ("Shaping: delay instead of reject",
//! "What is measured") and runs with client keys ("Keyed runs").
//!
//! The brute force decides each key's requests with its own copy of the
//! limiter (made at the key's first request in a keyed run), then judges
//! them from the definitions alone: an admitted request enters its key's
//! exact window `(t - W, t]` at its backend time `t + d` (`d = 0` unless
//! delayed), a release at or after the run's end `D` enters no window, and
//! every figure is counted by scanning what has entered.

use proptest::prelude::*;

use ratesim::engine::{self, DecisionRecord, DecisionSink, RunConfig};
use ratesim::limiter::{
    AlgorithmSpec, Decision, FixedWindowSpec, GcraSpec, GoRateSpec, GuavaSpec, Initial, LeakyBucketSpec,
    LeakyQueueSpec, Limit, Limiter, LimiterSpec, Rounding, SlidingLogSpec, SlotCounterSpec, TokenBucketSpec,
    WeightedWindowSpec, WindowAlign,
};
use ratesim::metrics::{LimiterReport, curve_taus};
use ratesim::time::Nanos;
use ratesim::trace::{Arrival, ArrivalResult};

#[path = "common/edges.rs"]
mod edges;

use edges::{around, parts, trace};

const MS: u64 = 1_000_000;

#[derive(Default)]
struct Collect(Vec<DecisionRecord>);

impl DecisionSink for Collect {
    fn record(&mut self, record: &DecisionRecord) -> std::io::Result<()> {
        self.0.push(*record);
        Ok(())
    }
}

/// Runs `specs` (the sliding log reference is added last) over `arrivals`
/// (time, key) with every decision recorded.
fn run(
    limit: Limit,
    specs: &[LimiterSpec],
    arrivals: &[(u64, u64)],
    end: Option<u64>,
    keyed: bool,
) -> (Vec<LimiterReport>, Vec<DecisionRecord>) {
    let input: Vec<ArrivalResult> =
        arrivals.iter().map(|&(t, k)| Ok(Arrival::keyed(Nanos::new(t), k))).collect();
    let config = RunConfig {
        end: end.map(Nanos::new),
        admission_curve: true,
        client_keys: keyed,
        ..RunConfig::new(limit, specs.to_vec())
    };
    let mut sink = Collect::default();
    let report = engine::run(&config, input.into_iter(), Some(&mut sink), &mut |_| {}).unwrap();
    (report.limiters, sink.0)
}

// ---- the brute force -----------------------------------------------------------

/// One limiter's figures for one key, from the definitions.
#[derive(Clone, Debug, Default)]
struct Judged {
    peak: u64,
    excess: u64,
    false_rejects: u64,
    /// Per request: the admitted requests of the key that had reached the
    /// backend in `(t - W, t]` when it was decided (decisions.csv's
    /// `window_count`).
    window_counts: Vec<u64>,
    /// The backend times that entered a window, in the order they did.
    backend: Vec<u64>,
}

/// Judges one key's decided requests. `times` in arrival order (never
/// decreasing), `end` the run's end if it has one.
/// A delayed request reaching the backend at `t` was decided before `t`,
/// so it counts in the window of every request decided at `t`
/// (docs/semantics.md, Shaping: "What is measured"): releases come first at
/// an instant.
fn judge(limit: Limit, times: &[u64], decisions: &[Decision], end: Option<u64>) -> Judged {
    #[derive(Clone, Copy)]
    enum Item {
        /// Request `i` decided: passes now, waits, or is refused.
        Decided(usize),
        /// A delayed request reaches the backend.
        Release,
    }
    // (instant, phase, order, item): releases at phase 0, before the
    // arrivals (in trace order) at phase 1.
    let mut items: Vec<(u64, u8, usize, Item)> = Vec::new();
    for (i, (&t, d)) in times.iter().zip(decisions).enumerate() {
        items.push((t, 1, i, Item::Decided(i)));
        if let Decision::Delay(d) = d
            && d.get() > 0
        {
            let at = t + d.get();
            if end.is_none_or(|e| at < e) {
                items.push((at, 0, i, Item::Release));
            }
        }
    }
    items.sort_by_key(|&(t, phase, order, _)| (t, phase, order));
    let (l, w) = (limit.requests, limit.window.get());
    let mut j = Judged { window_counts: vec![0; times.len()], ..Judged::default() };
    for (s, _, _, item) in items {
        // What entered before, in (s - W, s]: entries are in time order.
        let count = j.backend.iter().rev().take_while(|&&e| s < w || e > s - w).count() as u64;
        let enters = match item {
            Item::Release => true,
            Item::Decided(i) => {
                j.window_counts[i] = count;
                match decisions[i] {
                    Decision::Reject => {
                        j.false_rejects += u64::from(count < l);
                        false
                    }
                    d => d.delay() == Nanos::ZERO,
                }
            }
        };
        if enters {
            j.peak = j.peak.max(count + 1);
            j.excess += u64::from(count >= l);
            j.backend.push(s);
        }
    }
    j
}

/// `A(tau)` by its definition: the most entries in any `(s - tau, s]`,
/// `s` ranging over the entries (sorted).
fn brute_curve(backend: &[u64], tau: u64) -> u64 {
    (0..backend.len())
        .map(|k| {
            let s = backend[k];
            // Entries up to k, and those after it at the same instant.
            let same = backend[k..].iter().take_while(|&&e| e == s).count() - 1;
            (backend[..=k].iter().rev().take_while(|&&e| s < tau || e > s - tau).count() + same) as u64
        })
        .max()
        .unwrap_or(0)
}

/// The exact rule's decisions on one key's times.
fn exact(limit: Limit, times: &[u64]) -> Vec<bool> {
    let w = limit.window.get();
    let mut admitted: Vec<u64> = Vec::new();
    times
        .iter()
        .map(|&t| {
            let ok = (admitted.iter().filter(|&&a| t < w || a > t - w).count() as u64) < limit.requests;
            if ok {
                admitted.push(t);
            }
            ok
        })
        .collect()
}

/// Runs the engine and checks every limiter's figures against the brute
/// force: decisions and delays (each key by its own copy), each request's
/// window count, offered/admitted/rejected, peak (the largest per key),
/// excess and false rejects (summed over keys), disagreement with the
/// exact rule, the delays (count, maximum, queue peak) and the admission
/// curve (the largest over keys) at every `tau` of its grid.
fn check_run(
    limit: Limit,
    specs: &[LimiterSpec],
    arrivals: &[(u64, u64)],
    end: Option<u64>,
    keyed: bool,
) -> Result<Vec<LimiterReport>, TestCaseError> {
    let (reports, records) = run(limit, specs, arrivals, end, keyed);
    let arrivals: Vec<(u64, u64)> =
        arrivals.iter().copied().filter(|&(t, _)| end.is_none_or(|e| t < e)).collect();
    let n = arrivals.len();
    prop_assert_eq!(records.len(), n * reports.len());
    let mut keys: Vec<u64> = arrivals.iter().map(|&(_, k)| k).collect();
    keys.sort_unstable();
    keys.dedup();
    // Each key's requests, by index into `arrivals`.
    let of_key: Vec<Vec<usize>> =
        keys.iter().map(|&k| (0..n).filter(|&i| arrivals[i].1 == k).collect()).collect();
    let mut reference = vec![false; n];
    for idx in &of_key {
        let times: Vec<u64> = idx.iter().map(|&i| arrivals[i].0).collect();
        for (&i, ok) in idx.iter().zip(exact(limit, &times)) {
            reference[i] = ok;
        }
    }
    let taus = curve_taus(limit.window);
    for (li, r) in reports.iter().enumerate() {
        let label = &r.label;
        let mine: Vec<&DecisionRecord> = records.iter().filter(|d| d.limiter == li).collect();
        prop_assert_eq!(mine.len(), n);
        let mut decisions = vec![Decision::Reject; n];
        let (mut peak, mut excess, mut false_rejects) = (0, 0u64, 0u64);
        let mut curve = [0u64; 10];
        for idx in &of_key {
            let mut l = r.spec.build(limit);
            if keyed {
                l.create_on_first_request();
            }
            let times: Vec<u64> = idx.iter().map(|&i| arrivals[i].0).collect();
            let ds: Vec<Decision> = times.iter().map(|&t| l.decide(Nanos::new(t), 1)).collect();
            let a = judge(limit, &times, &ds, end);
            peak = peak.max(a.peak);
            excess += a.excess;
            false_rejects += a.false_rejects;
            for (k, &i) in idx.iter().enumerate() {
                decisions[i] = ds[k];
                let rec = mine[i];
                prop_assert_eq!((rec.time.get(), rec.key), arrivals[i], "{}: record {}", label, i);
                prop_assert_eq!(
                    (rec.admitted, rec.delay),
                    (ds[k].admitted(), ds[k].delay()),
                    "{}: request {} at {} of key {}",
                    label,
                    i,
                    arrivals[i].0,
                    arrivals[i].1
                );
                prop_assert_eq!(
                    rec.window_count,
                    a.window_counts[k],
                    "{}: window count of request {} at {}",
                    label,
                    i,
                    arrivals[i].0
                );
            }
            let mut backend = a.backend.clone();
            backend.sort_unstable();
            for (c, &tau) in curve.iter_mut().zip(&taus) {
                *c = (*c).max(brute_curve(&backend, tau));
            }
        }
        let admitted = decisions.iter().filter(|d| d.admitted()).count() as u64;
        let c = &r.counts;
        prop_assert_eq!(
            (c.offered, c.admitted, c.rejected),
            (n as u64, admitted, n as u64 - admitted),
            "{}",
            label
        );
        prop_assert_eq!((c.peak, c.excess), (peak, excess), "{}: peak, excess", label);
        prop_assert_eq!(c.false_rejects, false_rejects, "{}: false rejects", label);
        let differ = decisions.iter().zip(&reference).filter(|(d, e)| d.admitted() != **e).count() as u64;
        prop_assert_eq!(c.disagreements, differ, "{}: disagreements", label);
        // The admission curve, and A(W) = peak (a run without arrivals has
        // no key, and no curve).
        let got: Vec<(u64, u64)> = r.admission_curve.iter().map(|&(t, a)| (t.get(), a)).collect();
        let want: Vec<(u64, u64)> =
            if n == 0 { Vec::new() } else { taus.iter().copied().zip(curve).collect() };
        prop_assert_eq!(&got, &want, "{}: admission curve", label);
        let at_w = got.iter().find(|(tau, _)| *tau == limit.window.get()).map(|&(_, a)| a);
        prop_assert_eq!(at_w, (n > 0).then_some(c.peak), "{}: A(W) is the peak", label);
        // Delays: how many waited, the longest wait, the most waiting at once.
        match &r.delays {
            None => prop_assert!(
                !r.spec.delays() && decisions.iter().all(|d| d.delay() == Nanos::ZERO),
                "{}",
                label
            ),
            Some(d) => {
                prop_assert!(r.spec.delays(), "{}", label);
                let waits: Vec<(u64, u64)> = decisions
                    .iter()
                    .zip(&arrivals)
                    .filter(|(d, _)| d.delay() > Nanos::ZERO)
                    .map(|(d, &(t, _))| (t, t + d.delay().get()))
                    .collect();
                let max = waits.iter().map(|&(t, at)| at - t).max().unwrap_or(0);
                // Waiting during [t, t + d): the most at the start of a wait.
                let queue = waits
                    .iter()
                    .map(|&(s, _)| waits.iter().filter(|&&(t, at)| t <= s && s < at).count())
                    .max();
                prop_assert_eq!(
                    (d.admitted, d.delayed, d.max.get(), d.queue_peak()),
                    (admitted, waits.len() as u64, max, queue.unwrap_or(0) as u64),
                    "{}: delays",
                    label
                );
            }
        }
    }
    Ok(reports)
}

// ---- the admission curve ---------------------------------------------------------

/// The bound docs/semantics.md ("Admission curve") gives for `A(tau)`: the
/// exact log `L * ceil(tau / W)`; in `(t - tau, t]` the admitted requests
/// lie within `tau - 1` ns, so a continuous bucket of capacity `b` admits
/// at most `b + floor((tau - 1) L / W)`, a GCRA of burst `b` at most
/// `b + floor((tau - 1) / T)`, a timer bucket at most `max_tokens +
/// tokens_per_fill * ceil((tau - 1) / fill_interval)`. The shaping GCRA and
/// bucket send the backend what the policing ones admit, so the same.
fn curve_bound(spec: &LimiterSpec, limit: Limit, tau: u64) -> Option<u64> {
    let (l, w) = (limit.requests, limit.window.get());
    Some(match &spec.algorithm {
        AlgorithmSpec::SlidingLog(SlidingLogSpec { count_rejected: false }) => l * tau.div_ceil(w),
        AlgorithmSpec::Gcra(GcraSpec { burst, .. }) => burst.unwrap_or(l) + (tau - 1) / (w / l).max(1),
        AlgorithmSpec::TokenBucket(TokenBucketSpec::Continuous { capacity, .. }) => {
            capacity.unwrap_or(l) + (tau - 1) * l / w
        }
        AlgorithmSpec::TokenBucket(TokenBucketSpec::Timer { max_tokens, tokens_per_fill, fill_interval }) => {
            let max = max_tokens.unwrap_or(l);
            let interval = fill_interval.map_or(w, Nanos::get);
            let per = tokens_per_fill.unwrap_or_else(|| (l * interval / w).max(1)).min(max);
            max + per * (tau - 1).div_ceil(interval)
        }
        _ => return None,
    })
}

/// Window and production limiters on a nanosecond scale, policing and
/// shaping (GCRA and bucket with `max_wait`).
fn curve_specs(limit: Limit) -> Vec<LimiterSpec> {
    let w = limit.window.get();
    let wait = |d: u64| Some(Nanos::new(d));
    vec![
        FixedWindowSpec::ALIGNED.into(),
        FixedWindowSpec { align: WindowAlign::FirstRequest }.into(),
        SlotCounterSpec { slots: 3 }.into(),
        SlotCounterSpec { slots: 10 }.into(),
        SlidingLogSpec { count_rejected: true }.into(),
        WeightedWindowSpec::DEFAULT.into(),
        WeightedWindowSpec { rounding: Rounding::Floor, offset: Nanos::new(w / 3), count_rejected: false }
            .into(),
        GcraSpec { burst: None, max_wait: None }.into(),
        GcraSpec { burst: Some(1), max_wait: None }.into(),
        GcraSpec { burst: Some(4), max_wait: wait(w / 2) }.into(),
        TokenBucketSpec::CONTINUOUS.into(),
        TokenBucketSpec::Continuous { capacity: Some(3), initial: Initial::Empty, max_wait: None }.into(),
        TokenBucketSpec::Continuous { capacity: Some(2), initial: Initial::Full, max_wait: wait(w) }.into(),
        TokenBucketSpec::TIMER.into(),
        TokenBucketSpec::Timer {
            max_tokens: Some(3),
            tokens_per_fill: Some(2),
            fill_interval: Some(Nanos::new((w / 3).max(1))),
        }
        .into(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// With the admission curve on, every limiter's `A(tau)` is the brute
    /// force's at every `tau` of the grid (`W / 100` to `10 W`), `A(W)` is
    /// its peak, and the exact log and the buckets stay within their bounds
    /// at every `tau` (docs/semantics.md, "Admission curve"); every other
    /// figure is the brute force's too.
    #[test]
    fn admission_curve_matches_a_brute_force_and_its_bounds(
        (requests, window, times) in (1u64..6, 10u64..1000).prop_flat_map(|(l, w)| {
            let mut edges = parts(w, l);
            edges.extend(parts(w, 3));
            edges.extend(parts(w, 10));
            edges.extend(around(w / 2));
            (Just(l), Just(w), trace(w, edges, 200))
        }),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let arrivals: Vec<(u64, u64)> = times.iter().map(|&t| (t, 0)).collect();
        let reports = check_run(limit, &curve_specs(limit), &arrivals, None, false)?;
        for r in &reports {
            for &(tau, a) in &r.admission_curve {
                if let Some(bound) = curve_bound(&r.spec, limit, tau.get()) {
                    prop_assert!(a <= bound, "{}: A({}) = {} > {}", r.label, tau, a, bound);
                }
                // The contract's looser form for the continuous bucket.
                if let AlgorithmSpec::TokenBucket(TokenBucketSpec::Continuous { capacity, .. }) = &r.spec.algorithm {
                    let b = capacity.unwrap_or(requests);
                    prop_assert!(a <= b + requests * tau.get() / window, "{}: A({})", r.label, tau);
                }
            }
        }
    }

    /// The bounds are reached. The exact log under bursts of `L` every `W`
    /// admits `L` per burst: `A(tau) = L * ceil(tau / W)`. A fresh GCRA of
    /// burst `b` sent `b` requests at 0 and one at each `k T` admits them
    /// all: `A(tau) = b + floor((tau - 1) / T)`, which at `tau = W` is
    /// `b + L - 1` when `L` divides `W` (docs: "`b + L - 1` at `tau = W`").
    /// A full continuous bucket sent `b` at 0 and one at each
    /// `ceil(k W / L)` (when the next token is whole) gives
    /// `b + floor((tau - 1) L / W)` (for `b >= 2` when `L` does not divide
    /// `W`: a bucket of one token is capped at a whole token and loses the
    /// part of a token each `ceil` adds, so it cannot keep that pace).
    #[test]
    fn the_curve_bounds_are_reached(
        requests in 1u64..6, window in 20u64..2000, burst in 1u64..6, divides in any::<bool>(),
    ) {
        let window = if divides { window / requests * requests } else { window };
        let limit = Limit { requests, window: Nanos::new(window) };
        let taus = curve_taus(limit.window);
        let span = 11 * window;
        let bursts: Vec<u64> = (0..=span / window).flat_map(|k| std::iter::repeat_n(k * window, requests as usize)).collect();
        let t = (window / requests).max(1);
        let gcra: Vec<u64> = std::iter::repeat_n(0, burst as usize - 1).chain((0..=span / t).map(|k| k * t)).collect();
        // A bucket of one token loses the part of a token the cap cuts off
        // when `W / L` is not whole: then it takes two.
        let capacity = if window % requests == 0 { burst } else { burst.max(2) };
        let bucket: Vec<u64> = std::iter::repeat_n(0, capacity as usize - 1)
            .chain((0..=span * requests / window).map(|k| (k * window).div_ceil(requests)))
            .collect();
        let curve = |a: &dyn Fn(u64) -> u64| -> Vec<(Nanos, u64)> {
            taus.iter().map(|&tau| (Nanos::new(tau), a(tau))).collect()
        };
        let cases = [
            (
                LimiterSpec::from(SlidingLogSpec { count_rejected: false }),
                bursts,
                curve(&|tau| requests * tau.div_ceil(window)),
            ),
            (LimiterSpec::from(GcraSpec { burst: Some(burst), max_wait: None }), gcra, curve(&|tau| burst + (tau - 1) / t)),
            (
                LimiterSpec::from(TokenBucketSpec::Continuous { capacity: Some(capacity), initial: Initial::Full, max_wait: None }),
                bucket,
                curve(&|tau| capacity + (tau - 1) * requests / window),
            ),
        ];
        for (spec, times, want) in cases {
            let arrivals: Vec<(u64, u64)> = times.iter().map(|&t| (t, 0)).collect();
            let (reports, _) = run(limit, std::slice::from_ref(&spec), &arrivals, None, false);
            let r = &reports[0];
            prop_assert_eq!(r.counts.admitted, times.len() as u64, "{}: every request is admitted", r.label);
            prop_assert_eq!(&r.admission_curve, &want, "{}", r.label);
            if matches!(spec.algorithm, AlgorithmSpec::Gcra(_)) && window % requests == 0 {
                prop_assert_eq!(r.counts.peak, burst + requests - 1);
            }
        }
    }
}

// ---- shaping: judged at backend times ----------------------------------------------

/// Every shaping limiter, and the policing forms beside them.
fn shaping_specs(limit: Limit) -> Vec<LimiterSpec> {
    let w = limit.window.get();
    let guava = |timeout: Option<u64>| {
        LimiterSpec::from(GuavaSpec {
            permits_per_second: None,
            max_burst_seconds: 1.0,
            timeout: timeout.map(Nanos::new),
        })
    };
    vec![
        LeakyBucketSpec { burst: 2, delay: None }.into(),
        LeakyBucketSpec { burst: 0, delay: Some(0) }.into(),
        LeakyBucketSpec { burst: 3, delay: Some(0) }.into(),
        LeakyBucketSpec { burst: 5, delay: Some(2) }.into(),
        GcraSpec { burst: Some(1), max_wait: Some(Nanos::new(w / 2)) }.into(),
        GcraSpec { burst: None, max_wait: Some(Nanos::new(2 * w)) }.into(),
        TokenBucketSpec::Continuous {
            capacity: Some(2),
            initial: Initial::Full,
            max_wait: Some(Nanos::new(w / 3)),
        }
        .into(),
        TokenBucketSpec::Continuous {
            capacity: None,
            initial: Initial::Empty,
            max_wait: Some(Nanos::new(w)),
        }
        .into(),
        guava(None),
        guava(Some(w / 2)),
        LeakyQueueSpec { queue: 1 }.into(),
        LeakyQueueSpec { queue: 4 }.into(),
        GoRateSpec { burst: Some(2), max_wait: Some(Nanos::new(w / 3)), ..GoRateSpec::DEFAULT }.into(),
        GoRateSpec { max_wait: Some(Nanos::new(w)), ..GoRateSpec::DEFAULT }.into(),
    ]
}

/// `L`, a window in whole milliseconds and a trace for them: gaps of 1 ms
/// and 1 us (nginx's and Guava's clocks) with their neighbours, the
/// emission interval `W / L`, and `W`, `W +- 1`.
fn ms_limited(len: usize) -> impl Strategy<Value = (u64, u64, Vec<u64>)> {
    (1u64..6, prop::sample::select(vec![10u64, 100, 250, 1000])).prop_flat_map(move |(l, w_ms)| {
        let w = w_ms * MS;
        let mut edges = parts(w, l);
        edges.extend(around(MS));
        edges.extend(around(1000));
        edges.extend(around(w / 2));
        (Just(l), Just(w), trace(w, edges, len))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Shaping limiters (nginx without nodelay and with `delay`, GCRA and
    /// bucket with `max_wait`, Guava's acquire() and tryAcquire(timeout),
    /// the leaky queue): every figure is judged at backend times `t + d`
    /// (docs/semantics.md, "What is measured"): peak and excess count a
    /// delayed request where it reaches the backend, a refusal is a false
    /// reject when the backend's window held fewer than `L`, a release at
    /// or after the run's end `D` is admitted but enters no window, and the
    /// admission curve is over backend times. The end is none (every
    /// release judged), just after the last arrival, or exactly at some
    /// limiter's release (which then falls outside the run, with the
    /// arrivals from `D` on).
    #[test]
    fn shaping_metrics_are_judged_at_backend_times(
        (requests, window, times) in ms_limited(150),
        end in 0u64..4,
        pick in any::<prop::sample::Index>(),
    ) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let specs = shaping_specs(limit);
        let arrivals: Vec<(u64, u64)> = times.iter().map(|&t| (t, 0)).collect();
        let last = times.last().copied().unwrap_or(0);
        let mut releases: Vec<u64> = specs
            .iter()
            .flat_map(|spec| {
                let mut l = spec.build(limit);
                times.iter().map(move |&t| t + l.decide(Nanos::new(t), 1).delay().get())
            })
            .filter(|&at| at > 0 && !times.contains(&at))
            .collect();
        releases.sort_unstable();
        let end = match end {
            0 => None,
            1 => Some(last + 1),
            _ if releases.is_empty() => Some(last + 1),
            _ => Some(*pick.get(&releases)),
        };
        check_run(limit, &specs, &arrivals, end, false)?;
    }
}

// ---- keyed runs -----------------------------------------------------------------

/// Up to `keys` client keys (arbitrary 64-bit values), each with its own
/// trace built for the limit, merged by time (ties in key order).
fn keyed_traces(len: usize) -> impl Strategy<Value = (u64, u64, Vec<(u64, u64)>)> {
    (1u64..5, prop::sample::select(vec![10u64, 100, 1000]), 1usize..5).prop_flat_map(
        move |(l, w_ms, keys)| {
            let w = w_ms * MS;
            let mut edges = parts(w, l);
            edges.extend(around(MS));
            let one = trace(w, edges, len / keys + 1);
            (Just(l), Just(w), prop::collection::vec(one, keys)).prop_map(|(l, w, traces)| {
                const KEYS: [u64; 4] = [0, 7, 1 << 40, u64::MAX];
                let mut all: Vec<(u64, u64)> = traces
                    .iter()
                    .enumerate()
                    .flat_map(|(k, ts)| ts.iter().map(move |&t| (t, KEYS[k])))
                    .collect();
                all.sort_by_key(|&(t, k)| (t, KEYS.iter().position(|&x| x == k)));
                (l, w, all)
            })
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// With client keys every key has its own limiter (made at its first
    /// request) and its own exact window (docs/semantics.md, "Keyed runs"):
    /// each request's decision, delay and window count are its key's brute
    /// force's; excess and false rejects add up over keys; `peak` and the
    /// admission curve are the largest per key.
    #[test]
    fn keyed_runs_are_judged_per_key((requests, window, arrivals) in keyed_traces(160)) {
        let limit = Limit { requests, window: Nanos::new(window) };
        let w = window;
        let specs: Vec<LimiterSpec> = vec![
            FixedWindowSpec::ALIGNED.into(),
            FixedWindowSpec { align: WindowAlign::FirstRequest }.into(),
            SlotCounterSpec { slots: 4 }.into(),
            SlidingLogSpec { count_rejected: true }.into(),
            WeightedWindowSpec::DEFAULT.into(),
            GcraSpec { burst: Some(2), max_wait: None }.into(),
            GcraSpec { burst: None, max_wait: Some(Nanos::new(w / 2)) }.into(),
            TokenBucketSpec::Continuous { capacity: None, initial: Initial::Empty, max_wait: None }.into(),
            TokenBucketSpec::TIMER.into(),
            LeakyBucketSpec { burst: 2, delay: None }.into(),
            LeakyBucketSpec { burst: 3, delay: Some(1) }.into(),
            GuavaSpec { permits_per_second: None, max_burst_seconds: 1.0, timeout: None }.into(),
            GuavaSpec { permits_per_second: None, max_burst_seconds: 1.0, timeout: Some(Nanos::new(w / 3)) }.into(),
            LeakyQueueSpec { queue: 2 }.into(),
            GoRateSpec::DEFAULT.into(),
            GoRateSpec { burst: Some(2), max_wait: Some(Nanos::new(w / 2)), ..GoRateSpec::DEFAULT }.into(),
        ];
        check_run(limit, &specs, &arrivals, None, true)?;
    }
}
