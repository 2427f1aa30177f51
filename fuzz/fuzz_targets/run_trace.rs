//! A whole run over any CSV trace (timestamps up to the end of time) with a
//! small limit: no panic, no overflow, and the sliding log keeps its promises
//! (`docs/semantics.md`: peak <= L, no excess, no false rejects).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ratesim::engine::{self, RunConfig};
use ratesim::limiter::{
    FixedWindowSpec, GcraSpec, GuavaSpec, Initial, LeakyBucketSpec, LeakyQueueSpec, Limit, LimiterSpec,
    SlidingLogSpec, SlotCounterSpec, TokenBucketSpec, WindowAlign,
};
use ratesim::time::{Nanos, TimeUnit};
use ratesim::trace::{CsvOptions, CsvTrace};

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (head, bytes) = data.split_at(4);
    let requests = u64::from(head[0] % 8) + 1;
    let window = u64::from(u16::from_le_bytes([head[1], head[2]])) + 1;
    let slots = (u64::from(head[3] % 16) + 1).min(window);
    let options = CsvOptions {
        path: "fuzz.csv".into(),
        time_unit: if head[3] & 0x80 == 0 { TimeUnit::Ns } else { TimeUnit::S },
        time_column: "time".into(),
        key_column: if head[3] & 0x20 == 0 { None } else { Some("key".into()) },
        sort: head[3] & 0x40 != 0,
    };
    let Ok(trace) = CsvTrace::from_reader(bytes, &options) else { return };
    let config = RunConfig::new(Limit { requests, window: Nanos::new(window) }, vec![
            LimiterSpec::from(FixedWindowSpec { align: WindowAlign::Epoch { offset: Nanos::new(window / 3) } }),
            LimiterSpec::from(FixedWindowSpec { align: WindowAlign::FirstRequest }),
            LimiterSpec::from(SlotCounterSpec { slots }),
            LimiterSpec::from(SlidingLogSpec { count_rejected: head[0] & 0x80 != 0 }),
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
        ]);
    let Ok(report) = engine::run(&config, trace, None, &mut |_| {}) else { return };
    // With no end, every row of a good trace is offered (u64::MAX included).
    let rows = CsvTrace::from_reader(bytes, &options).unwrap().count() as u64;
    assert_eq!(report.arrivals, rows);
    let log = &report.limiters[report.reference].counts;
    assert!(log.peak <= requests && log.excess == 0 && log.false_rejects == 0);
    for l in &report.limiters {
        assert_eq!(l.counts.offered, report.arrivals);
        assert_eq!(l.counts.admitted + l.counts.rejected, report.arrivals);
    }
});
