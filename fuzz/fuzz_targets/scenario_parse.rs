//! Any text given as a scenario file is either a scenario or an error, never
//! a panic; and a scenario that passes has the values validation promises,
//! and its limiters decide at the edges of time without overflowing.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use ratesim::limiter::{GcraSpec, Limiter, LimiterSpec, TokenBucketSpec};
use ratesim::scenario::{MAX_GENERATED, Scenario, Traffic};
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
        match *l {
            // An explicit burst is not L (that is the default), and its
            // tolerance T * (b - 1) fits in u64 nanoseconds.
            LimiterSpec::Gcra(GcraSpec { burst: Some(b) }) => {
                let t = (window / requests).max(1);
                assert!(b >= 1 && b != requests && u128::from(t) * u128::from(b - 1) <= u128::from(u64::MAX));
            }
            LimiterSpec::TokenBucket(TokenBucketSpec::Continuous { capacity: Some(c), .. }) => {
                assert!(c >= 1 && c != requests)
            }
            LimiterSpec::TokenBucket(TokenBucketSpec::Timer {
                max_tokens,
                tokens_per_fill,
                fill_interval,
            }) => {
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
