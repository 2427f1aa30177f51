//! The `run_trace` fuzz target (fuzz/fuzz_targets/run_trace.rs): a whole
//! engine run over any CSV trace (timestamps up to the end of time) with a
//! small limit and every limiter, and what the run must keep. One copy,
//! included through `#[path]` by the target and by tests/fuzz_regressions.rs,
//! so an input the fuzzer saves replays there exactly as it ran.
//!
//! The first 4 bytes pick the limit and the limiters' keys, the rest is the
//! trace. Bits of the head: `[0]`: L = 1 + `[0] % 8`, `0x80` the sliding
//! log's `count_rejected`, `0x40` an empty token bucket, `0x20` floor
//! rounding and `0x10` `count_rejected` for the weighted window; `[1..3]`:
//! W - 1 ns (little-endian), `[1] % 4` the leaky bucket's `delay`, `[2] & 1`
//! Guava's `timeout`, `[2] & 2` the token bucket's `max_wait`; `[3]`:
//! 1 + `[3] % 16` slots (and bursts, capacities, queues), `0x80` decimal
//! seconds (else whole ns), `0x40` `sort`, `0x20` a `key` column.

use ratesim::engine::{self, RunConfig, RunReport};
use ratesim::limiter::{
    AlgorithmSpec, FixedWindowSpec, GcraSpec, GuavaSpec, Initial, LeakyBucketSpec, LeakyQueueSpec, Limit,
    LimiterSpec, Rounding, SlidingLogSpec, SlotCounterSpec, TokenBucketSpec, WeightedWindowSpec, WindowAlign,
};
use ratesim::time::{Nanos, TimeUnit};
use ratesim::trace::{CsvOptions, CsvTrace};

/// What the head of an input picks: the limit, the limiters and how the
/// trace is read.
pub struct Setup {
    pub limit: Limit,
    pub limiters: Vec<LimiterSpec>,
    pub options: CsvOptions,
}

/// The setup `head` picks.
pub fn setup(head: [u8; 4]) -> Setup {
    let requests = u64::from(head[0] % 8) + 1;
    let window = u64::from(u16::from_le_bytes([head[1], head[2]])) + 1;
    let slots = (u64::from(head[3] % 16) + 1).min(window);
    let options = CsvOptions {
        path: "fuzz.csv".into(),
        time_unit: if head[3] & 0x80 == 0 { TimeUnit::Ns } else { TimeUnit::S },
        time_column: "time".into(),
        key_column: if head[3] & 0x20 == 0 { None } else { Some("key".into()) },
        sort: head[3] & 0x40 != 0,
        keys_at: None,
    };
    let limiters = vec![
        LimiterSpec::from(FixedWindowSpec { align: WindowAlign::Epoch { offset: Nanos::new(window / 3) } }),
        LimiterSpec::from(FixedWindowSpec { align: WindowAlign::FirstRequest }),
        LimiterSpec::from(SlotCounterSpec { slots }),
        LimiterSpec::from(SlidingLogSpec { count_rejected: head[0] & 0x80 != 0 }),
        LimiterSpec::from(WeightedWindowSpec {
            rounding: if head[0] & 0x20 == 0 { Rounding::Exact } else { Rounding::Floor },
            offset: Nanos::new(window / 3),
            count_rejected: head[0] & 0x10 != 0,
        }),
        LimiterSpec::from(GcraSpec { burst: Some(slots), max_wait: None }),
        LimiterSpec::from(GcraSpec { burst: Some(slots), max_wait: Some(Nanos::new(window / 2)) }),
        LimiterSpec::from(TokenBucketSpec::Continuous {
            capacity: Some(slots),
            initial: if head[0] & 0x40 == 0 { Initial::Full } else { Initial::Empty },
            max_wait: (head[2] & 2 != 0).then(|| Nanos::new(window)),
        }),
        LimiterSpec::from(TokenBucketSpec::Timer {
            max_tokens: Some(slots),
            tokens_per_fill: Some(requests.min(slots)),
            fill_interval: Some(Nanos::new(window / slots)),
        }),
        // Shaping: delayed requests reach the backend later.
        LimiterSpec::from(LeakyBucketSpec { burst: slots, delay: Some(u64::from(head[1] % 4)) }),
        LimiterSpec::from(LeakyQueueSpec { queue: slots }),
        LimiterSpec::from(GuavaSpec {
            permits_per_second: None,
            max_burst_seconds: 1.0,
            timeout: (head[2] & 1 == 0).then(|| Nanos::new(window)),
        }),
        LimiterSpec::reference(),
    ];
    Setup { limit: Limit { requests, window: Nanos::new(window) }, limiters, options }
}

/// Runs `data` as the target does and asserts what it asserts. `None`
/// when the input is too short, or the trace or the run is refused with an
/// error (which is no crash).
pub fn run(data: &[u8]) -> Option<RunReport> {
    let (head, bytes) = data.split_first_chunk::<4>()?;
    let s = setup(*head);
    let trace = CsvTrace::from_reader(bytes, &s.options).ok()?;
    let config = RunConfig::new(s.limit, s.limiters.clone());
    let report = engine::run(&config, trace, None, &mut |_| {}).ok()?;
    // With no end, every row of a good trace is offered (u64::MAX included).
    let rows = CsvTrace::from_reader(bytes, &s.options).unwrap().count() as u64;
    assert_eq!(report.arrivals, rows);
    check(s.limit, &report);
    Some(report)
}

/// What every run keeps, per client key where there are keys
/// (docs/semantics.md): requests are conserved; the sliding log has
/// `peak <= L`, no excess and no false rejects; a fixed window or slot
/// counter never false-rejects and, like the weighted window, never has
/// more than 2L in an exact window; a refusing GCRA or token bucket never
/// more than its burst plus what refills in `W - 1` ns
/// (tests/gcra_token_bucket.rs, `bound`).
pub fn check(limit: Limit, report: &RunReport) {
    let (l, w) = (limit.requests, limit.window.get());
    let log = &report.limiters[report.reference].counts;
    assert!(log.peak <= l && log.excess == 0 && log.false_rejects == 0);
    for r in &report.limiters {
        let c = &r.counts;
        assert_eq!(c.offered, report.arrivals, "{}", r.label);
        assert_eq!(c.admitted + c.rejected, report.arrivals, "{}", r.label);
        let bound = match r.spec.algorithm {
            AlgorithmSpec::FixedWindow(_) | AlgorithmSpec::SlotCounter(_) => {
                assert_eq!(c.false_rejects, 0, "{}", r.label);
                Some(2 * l)
            }
            AlgorithmSpec::WeightedWindow(_) => Some(2 * l),
            AlgorithmSpec::Gcra(GcraSpec { burst, max_wait: None }) => {
                Some(burst.unwrap_or(l) + (w - 1) / (w / l).max(1))
            }
            AlgorithmSpec::TokenBucket(TokenBucketSpec::Continuous { capacity, max_wait: None, .. }) => {
                Some(capacity.unwrap_or(l) + (w - 1) * l / w)
            }
            AlgorithmSpec::TokenBucket(TokenBucketSpec::Timer {
                max_tokens,
                tokens_per_fill,
                fill_interval,
            }) => {
                let max = max_tokens.unwrap_or(l);
                let interval = fill_interval.map_or(w, Nanos::get);
                let per = tokens_per_fill.unwrap_or_else(|| (l * interval / w).max(1)).min(max);
                Some(max + per * (w - 1).div_ceil(interval))
            }
            _ => None,
        };
        if let Some(bound) = bound {
            assert!(c.peak <= bound, "{}: peak {} > {bound} (L = {l}, W = {w} ns)", r.label, c.peak);
        }
    }
}
