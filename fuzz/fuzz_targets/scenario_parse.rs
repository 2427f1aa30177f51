//! Any text given as a scenario file is either a scenario or an error, never
//! a panic; and a scenario that passes has the values validation promises,
//! and its limiters decide at the edges of time without overflowing.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use ratesim::clients::policy::MAX_ATTEMPTS;
use ratesim::clients::{Backoff, RetryPolicy};
use ratesim::limiter::{AlgorithmSpec, GcraSpec, Limiter, MAX_QUEUE, TokenBucketSpec, nginx_rate};
use ratesim::nodes::{Balance, Mode, Topology};
use ratesim::scenario::{MAX_GENERATED, MAX_NODES, Scenario, Traffic};
use ratesim::time::Nanos;

fuzz_target!(|data: &[u8]| {
    // Scenario::load refuses non-UTF-8 files before parsing.
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(s) = Scenario::parse(text, Path::new("fuzz/s.toml")) else { return };
    assert!(s.limit.requests >= 1 && s.limit.window.get() >= 1);
    let (requests, window) = (s.limit.requests, s.limit.window.get());
    for l in &s.limiters {
        if let Some(n) = l.slots() {
            assert!(n >= 1 && n <= window);
        }
        match l.algorithm {
            // An explicit burst is not L (that is the default), and its
            // tolerance T * (b - 1) fits in u64 nanoseconds.
            AlgorithmSpec::Gcra(GcraSpec { burst: Some(b), .. }) => {
                let t = (window / requests).max(1);
                assert!(b >= 1 && b != requests && u128::from(t) * u128::from(b - 1) <= u128::from(u64::MAX));
            }
            AlgorithmSpec::TokenBucket(TokenBucketSpec::Continuous { capacity: Some(c), .. }) => {
                assert!(c >= 1 && c != requests)
            }
            AlgorithmSpec::TokenBucket(TokenBucketSpec::Timer { max_tokens, tokens_per_fill, fill_interval, .. }) => {
                assert!(max_tokens.is_none_or(|m| m >= 1 && m != requests));
                assert!(tokens_per_fill.is_none_or(|p| p >= 1 && p <= max_tokens.unwrap_or(requests)));
                assert!(fill_interval.is_none_or(|f| f.get() >= 1 && f != s.limit.window));
            }
            _ => {}
        }
        // Whatever passed validation decides at the edges of time without
        // overflowing, and advertises a retry time after the reject.
        let mut limiter = l.build(s.limit);
        for t in [0, 1, window, u64::MAX] {
            for cost in [1, 7, u32::MAX] {
                let now = Nanos::new(t);
                if !limiter.decide(now, cost).admitted() {
                    if let Some(at) = limiter.retry_at(now, cost) {
                        assert!(at > now);
                    }
                }
            }
        }
        match &l.algorithm {
            // nginx's integers: a rate of at least 1 thousandth of a request
            // per second that fits ngx_int_t, and burst * 1000 that fits it.
            AlgorithmSpec::LeakyBucket(b) => {
                let rate = nginx_rate(s.limit);
                assert!(rate >= 1 && rate <= i64::MAX as u128);
                assert!(b.burst.checked_mul(1000).is_some_and(|m| m <= i64::MAX as u64));
                assert!(b.delay.is_none_or(|d| d.checked_mul(1000).is_some_and(|m| m <= i64::MAX as u64)));
            }
            AlgorithmSpec::Guava(g) => {
                let rate = g.rate(s.limit);
                assert!(rate.is_finite() && rate > 0.0);
                assert!(g.max_burst_seconds.is_finite() && g.max_burst_seconds >= 0.0);
            }
            AlgorithmSpec::LeakyQueue(q) => assert!(q.queue >= 1 && q.queue <= MAX_QUEUE),
            AlgorithmSpec::WeightedWindow(w) => assert!(w.offset < s.limit.window),
            _ => {}
        }
    }
    let closed: u64 = s.traffic.iter().map(|t| if let Traffic::Closed { clients, .. } = t { *clients } else { 0 }).sum();
    assert!(closed <= 10_000_000, "closed clients in all");
    for t in &s.traffic {
        match t {
            Traffic::Burst { start, span, count } => {
                assert!(start.checked_add(*span).is_some() && *count >= 1 && *count <= MAX_GENERATED)
            }
            Traffic::Constant { start, end, rate } | Traffic::Poisson { start, end, rate, .. } => {
                assert!(end > start && rate.is_finite() && *rate > 0.0)
            }
            Traffic::Csv(_) => {}
            // A population that exists, thinks a positive time and stops.
            Traffic::Closed { clients, think, start, end } => {
                assert!(*clients >= 1 && *clients <= 10_000_000 && think.get() > 0 && end > start);
                // About one request per client per think time, at most 1e9.
                assert!(*clients as f64 * (*end - *start).get() as f64 / think.get() as f64 <= 1e9);
            }
        }
    }
    // All the generated sources together within the cap, as each is.
    let generated: f64 = s.traffic.iter().filter_map(Traffic::expected_requests).sum();
    assert!(generated <= MAX_GENERATED as f64, "{generated:e} generated requests in all");
    // Many nodes: a topology that makes sense, and sweeps that can run.
    if let Some(t) = &s.nodes {
        check_topology(t, &s);
    }
    if let Some(w) = &s.topology_sweep {
        assert!(!s.traffic.is_empty());
        check_topology(&w.base, &s);
        for (_, points) in w.plans(s.limit) {
            for t in &points {
                check_topology(t, &s);
            }
        }
    }
    // Every retry table holds what validation promises.
    assert_eq!(s.source_retry.len(), s.traffic.len());
    // Window sweeps that can run: a grid of at most 100 000 per axis, and
    // load runs at a rate finite and above 0 (what the Poisson source
    // asserts) of at most 1e9 requests each.
    if let Some(w) = &s.sweep {
        assert!(w.grid >= 2 && u64::from(w.grid) <= 100_000);
        for &l in &w.loads {
            let rate = ratesim::sweep::load::rate(s.limit, l);
            assert!(rate.is_finite() && rate > 0.0, "load {l:e}: rate {rate:e}");
            assert!(rate * w.load_duration.as_secs_f64() <= 1e9);
        }
    }
    // A seed sweep that can run: 2 to 1000 reruns of the scenario's own
    // traffic, every seed one a scenario's `seed` can hold, at most 1e11
    // decisions over them all.
    if let Some(n) = s.sweep.as_ref().and_then(|w| w.seeds) {
        use ratesim::sweep::seeds::{MAX_DECISIONS, MAX_SEED, MAX_SEEDS};
        assert!((2..=MAX_SEEDS).contains(&n) && !s.traffic.is_empty());
        assert!(u128::from(s.seed) + u128::from(n) - 1 <= u128::from(MAX_SEED));
        let lanes = ratesim::engine::with_reference(&s.limiters).0.len() as f64;
        let requests = ratesim::sweep::work::rerun_requests(&s.traffic, None);
        assert!(requests * lanes * f64::from(n) <= MAX_DECISIONS);
    }
    let swept = s.sweep.as_ref().map_or(&[][..], |w| &w.retry_policies[..]);
    for p in s.retry.iter().chain(s.source_retry.iter().flatten()).chain(swept) {
        assert!(p.max_attempts >= 1 && p.max_attempts <= MAX_ATTEMPTS);
        if p.backoff == Backoff::None {
            assert_eq!(*p, RetryPolicy::NONE);
        }
        if p.backoff.uses_base() {
            assert!(p.base.get() > 0);
        }
        if p.backoff.uses_cap() {
            assert!(p.cap >= p.base);
        }
        if p.backoff != Backoff::RetryAfter {
            assert_eq!(p.jitter.get(), 0);
        }
        if let Some(b) = p.budget {
            assert!(b >= 1 && b <= ratesim::clients::policy::TOKEN);
        }
    }
    // A policy comparison runs the traffic with each table in place of every
    // source's: there is traffic, and no source overrides the tables.
    if !swept.is_empty() {
        assert!(!s.traffic.is_empty() && s.source_retry.iter().all(Option::is_none));
    }
    let _ = ratesim::check::summary(&s, &[]);
});

/// One skew and one weight per node, weights not all 0, a per-node limit of
/// at least 1, a positive sync interval, clock offsets in local mode only
/// and none that puts a node's time before 0 for a generated source,
/// outages in time order that do not overlap, none in local mode.
fn check_topology(t: &Topology, s: &Scenario) {
    let k = usize::from(t.count);
    assert!((1..=usize::from(MAX_NODES)).contains(&k));
    assert_eq!(t.skew.len(), k);
    if let Balance::Weights(w) = &t.balance {
        assert!(w.len() == k && w.iter().any(|&x| x > 0));
    }
    match t.mode {
        Mode::Local => {
            assert!(t.per_node >= 1 && t.outages.is_empty());
            let earliest = s
                .traffic
                .iter()
                .map(|x| match x {
                    Traffic::Burst { start, .. }
                    | Traffic::Constant { start, .. }
                    | Traffic::Poisson { start, .. }
                    | Traffic::Closed { start, .. } => start.get(),
                    Traffic::Csv(_) => 0,
                })
                .min()
                .unwrap_or(0);
            assert!(t.skew.iter().all(|&k| k >= 0 || k.unsigned_abs() <= earliest));
        }
        Mode::Central { .. } => assert!(t.skew.iter().all(|&k| k == 0)),
        Mode::Sync { interval } => assert!(interval.get() > 0 && t.skew.iter().all(|&k| k == 0)),
    }
    for pair in t.outages.windows(2) {
        assert!(pair[0].end <= pair[1].start);
    }
    assert!(t.outages.iter().all(|o| o.end > o.start));
}
