//! Any text given as a scenario file is either a scenario or an error, never
//! a panic; and a scenario that passes has the values validation promises.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use ratesim::limiter::{AlgorithmSpec, MAX_QUEUE, nginx_rate};
use ratesim::scenario::{MAX_GENERATED, Scenario, Traffic};

fuzz_target!(|data: &[u8]| {
    // Scenario::load refuses non-UTF-8 files before parsing.
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(s) = Scenario::parse(text, Path::new("fuzz/s.toml")) else { return };
    assert!(s.limit.requests >= 1 && s.limit.window.get() >= 1);
    for l in &s.limiters {
        if let Some(n) = l.slots() {
            assert!(n >= 1 && n <= s.limit.window.get());
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
                assert!(g.permits_per_second.is_finite() && g.permits_per_second > 0.0);
                assert!(g.max_burst_seconds.is_finite() && g.max_burst_seconds >= 0.0);
            }
            AlgorithmSpec::LeakyQueue(q) => assert!(q.queue >= 1 && q.queue <= MAX_QUEUE),
            AlgorithmSpec::WeightedWindow(w) => assert!(w.offset < s.limit.window),
            _ => {}
        }
    }
    for t in &s.traffic {
        match t {
            Traffic::Burst { start, span, count } => {
                assert!(start.checked_add(*span).is_some() && *count >= 1 && *count <= MAX_GENERATED)
            }
            Traffic::Constant { start, end, rate } | Traffic::Poisson { start, end, rate, .. } => {
                assert!(end > start && rate.is_finite() && *rate > 0.0)
            }
            Traffic::Csv(_) => {}
        }
    }
    let _ = ratesim::check::summary(&s, &[]);
});
