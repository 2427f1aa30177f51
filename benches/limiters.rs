//! Per-decision cost of every limiter, next to its baselines, in one run.
//!
//! `cargo bench --bench limiters` (filter with e.g. `-- sparse/slot_counter`).
//!
//! Two pre-generated traces (Poisson, seeded, generated outside the timed
//! loop), L = 100 per W = 1 s:
//!
//! - **dense**: 10 x the limit (1 000 arrivals/s, mean gap W / (10 L) = 1 ms):
//!   the limiters are saturated, slots with small N hold many arrivals and the
//!   log holds L entries.
//! - **sparse**: 2 arrivals per window on average (mean gap W / 2): with
//!   N = 100 000 each request is ~50 000 slots after the previous one, so a ring
//!   cleared slot by slot would do ~50 000 steps per request; an O(1) amortised
//!   counter must not notice.
//!
//! For each trace, side by side:
//! - `lib/...`: the library limiters through `Limiter::decide`;
//! - `bare/...`: the least code that makes the same decision (target: the
//!   library within 2x of it);
//! - `lib/leaky_bucket` (burst 10, nginx's `rate=100r/s burst=10 nodelay`)
//!   and `lib/weighted_window` (exact, and `_floor`) with their bare loops;
//! - `naive/slot_counter/N`: the textbook counter that sums all N slots per
//!   request, at N = 10, 100, 1 000, 10 000 (the O(N) the library avoids).
//!
//! The production limiters (`gcra`, `token_bucket`, `go_rate`,
//! `token_bucket_timer`) run with their defaults (burst / capacity / max_tokens `L`, timer fills of
//! `L` every `W`). Like the window limiters they are timed as their own
//! types; the engine reaches the two buckets through `TokenBucket`, which
//! holds either (one more branch, always the same way for a lane).
//!
//! Throughput is per arrival (one decision), so criterion prints decisions/s
//! and the time per iteration divided by the trace length is ns per decision.

mod baseline;
#[path = "common/splitmix.rs"]
mod splitmix;

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ratesim::limiter::{
    Algorithm, ContinuousBucket, FixedWindow, Gcra, GcraSpec, GoRateSpec, Initial, LeakyBucket, Limit,
    Limiter, Rounding, SlidingLog, SlotCounter, TimerBucket, WeightedWindow, WeightedWindowSpec, WindowAlign,
};
use ratesim::time::Nanos;
use splitmix::SplitMix64;

const LIMIT: u64 = 100;
const WINDOW: u64 = 1_000_000_000;
/// Arrivals per trace (per timed iteration).
const ARRIVALS: usize = 1 << 16;
/// The naive counter at large N costs O(N) per decision: a shorter prefix
/// keeps its iterations short; throughput is still per decision.
const NAIVE_ARRIVALS_LARGE_N: usize = 1 << 12;

/// The leaky bucket's `burst` (nginx `burst=10 nodelay`; rate 100 r/s).
const BURST: u64 = 10;

const LIB_SLOTS: [u64; 5] = [10, 100, 1_000, 10_000, 100_000];
const NAIVE_SLOTS: [u64; 4] = [10, 100, 1_000, 10_000];

/// Seeded Poisson arrival times (splitmix64 + inverse CDF), sorted by
/// construction. Deterministic so every run measures the same trace.
fn poisson_trace(n: usize, mean_gap_ns: f64, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix64::new(seed);
    let mut t = 0u64;
    (0..n)
        .map(|_| {
            t += (-rng.unit().ln() * mean_gap_ns).round() as u64;
            t
        })
        .collect()
}

fn run_lib(mut l: impl Limiter, trace: &[u64]) -> u64 {
    let mut admitted = 0;
    for &t in black_box(trace) {
        admitted += u64::from(l.decide(Nanos::new(t), 1).admitted());
    }
    admitted
}

fn limit() -> Limit {
    Limit { requests: LIMIT, window: Nanos::new(WINDOW) }
}

fn fixed() -> FixedWindow {
    FixedWindow::new(limit(), WindowAlign::Epoch { offset: Nanos::ZERO })
}

fn leaky() -> LeakyBucket {
    LeakyBucket::new(limit(), BURST)
}

fn weighted(rounding: Rounding) -> WeightedWindow {
    WeightedWindow::new(limit(), WeightedWindowSpec { rounding, ..WeightedWindowSpec::DEFAULT })
}

fn gcra() -> Gcra {
    GcraSpec { burst: None, max_wait: None }.build(limit())
}

fn token_bucket() -> ContinuousBucket {
    ContinuousBucket::new(limit(), LIMIT, Initial::Full)
}

fn token_bucket_timer() -> TimerBucket {
    TimerBucket::new(LIMIT, LIMIT, Nanos::new(WINDOW))
}

/// The library and the baselines must make the same decisions, or the
/// comparison means nothing. Checked once, outside the timed loops.
fn check_agreement(name: &str, trace: &[u64]) {
    use baseline::*;
    // The baselines compute slot indices in u64 (least code): no overflow here.
    let last = *trace.last().unwrap();
    assert!(last.checked_mul(LIB_SLOTS[LIB_SLOTS.len() - 1]).is_some(), "{name}: trace too long");
    assert_eq!(run_lib(fixed(), trace), bare_fixed_window(trace, LIMIT, WINDOW), "{name}: fixed window");
    assert_eq!(
        run_lib(SlidingLog::new(limit(), false), trace),
        bare_sliding_log(trace, LIMIT, WINDOW),
        "{name}: sliding log"
    );
    assert_eq!(
        run_lib(leaky(), trace),
        bare_leaky_bucket(trace, LIMIT, WINDOW, BURST),
        "{name}: leaky bucket"
    );
    for (rounding, floor) in [(Rounding::Exact, false), (Rounding::Floor, true)] {
        assert_eq!(
            run_lib(weighted(rounding), trace),
            bare_weighted_window(trace, LIMIT, WINDOW, floor),
            "{name}: weighted window {rounding:?}"
        );
    }
    assert_eq!(run_lib(gcra(), trace), bare_gcra(trace, LIMIT, WINDOW, LIMIT), "{name}: gcra");
    assert_eq!(
        run_lib(token_bucket(), trace),
        bare_token_bucket(trace, LIMIT, WINDOW, LIMIT),
        "{name}: token bucket"
    );
    assert_eq!(
        run_lib(token_bucket_timer(), trace),
        bare_timer_bucket(trace, LIMIT, LIMIT, WINDOW),
        "{name}: timer bucket"
    );
    for n in LIB_SLOTS {
        let lib = run_lib(SlotCounter::new(limit(), n), trace);
        assert_eq!(lib, bare_slot_counter(trace, LIMIT, WINDOW, n), "{name}: bare slot counter N={n}");
        if NAIVE_SLOTS.contains(&n) {
            let short = &trace[..NAIVE_ARRIVALS_LARGE_N];
            assert_eq!(
                run_lib(SlotCounter::new(limit(), n), short),
                naive_slot_counter(short, LIMIT, WINDOW, n),
                "{name}: naive slot counter N={n}"
            );
        }
    }
}

fn bench_trace(c: &mut Criterion, name: &str, trace: &[u64]) {
    check_agreement(name, trace);
    let mut g = c.benchmark_group(name);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));
    g.sample_size(20);
    g.throughput(Throughput::Elements(trace.len() as u64));

    g.bench_function("lib/fixed_window", |b| b.iter(|| run_lib(fixed(), trace)));
    g.bench_function("bare/fixed_window", |b| {
        b.iter(|| baseline::bare_fixed_window(trace, LIMIT, black_box(WINDOW)))
    });

    for n in LIB_SLOTS {
        g.bench_with_input(BenchmarkId::new("lib/slot_counter", n), &n, |b, &n| {
            b.iter(|| run_lib(SlotCounter::new(limit(), n), trace))
        });
    }
    for n in LIB_SLOTS {
        g.bench_with_input(BenchmarkId::new("bare/slot_counter", n), &n, |b, &n| {
            b.iter(|| baseline::bare_slot_counter(trace, LIMIT, WINDOW, black_box(n)))
        });
    }

    g.bench_function("lib/sliding_log", |b| b.iter(|| run_lib(SlidingLog::new(limit(), false), trace)));
    g.bench_function("bare/sliding_log", |b| {
        b.iter(|| baseline::bare_sliding_log(trace, LIMIT, black_box(WINDOW)))
    });

    g.bench_function("lib/leaky_bucket", |b| b.iter(|| run_lib(leaky(), trace)));
    g.bench_function("bare/leaky_bucket", |b| {
        b.iter(|| baseline::bare_leaky_bucket(trace, LIMIT, black_box(WINDOW), BURST))
    });

    g.bench_function("lib/weighted_window", |b| b.iter(|| run_lib(weighted(Rounding::Exact), trace)));
    g.bench_function("bare/weighted_window", |b| {
        b.iter(|| baseline::bare_weighted_window(trace, LIMIT, black_box(WINDOW), false))
    });
    g.bench_function("lib/weighted_window_floor", |b| b.iter(|| run_lib(weighted(Rounding::Floor), trace)));
    g.bench_function("bare/weighted_window_floor", |b| {
        b.iter(|| baseline::bare_weighted_window(trace, LIMIT, black_box(WINDOW), true))
    });
    g.bench_function("lib/gcra", |b| b.iter(|| run_lib(gcra(), trace)));
    g.bench_function("bare/gcra", |b| b.iter(|| baseline::bare_gcra(trace, LIMIT, black_box(WINDOW), LIMIT)));
    g.bench_function("lib/token_bucket", |b| b.iter(|| run_lib(token_bucket(), trace)));
    g.bench_function("bare/token_bucket", |b| {
        b.iter(|| baseline::bare_token_bucket(trace, LIMIT, black_box(WINDOW), LIMIT))
    });
    g.bench_function("lib/go_rate", |b| {
        b.iter(|| {
            run_lib(GoRateSpec::DEFAULT.build(Limit { requests: LIMIT, window: Nanos::new(WINDOW) }), trace)
        })
    });
    g.bench_function("lib/token_bucket_timer", |b| b.iter(|| run_lib(token_bucket_timer(), trace)));
    g.bench_function("bare/token_bucket_timer", |b| {
        b.iter(|| baseline::bare_timer_bucket(trace, LIMIT, LIMIT, black_box(WINDOW)))
    });

    for n in NAIVE_SLOTS {
        let t = if n >= 1_000 { &trace[..NAIVE_ARRIVALS_LARGE_N] } else { trace };
        g.throughput(Throughput::Elements(t.len() as u64));
        g.bench_with_input(BenchmarkId::new("naive/slot_counter", n), &n, |b, &n| {
            b.iter(|| baseline::naive_slot_counter(t, LIMIT, WINDOW, black_box(n)))
        });
    }
    g.finish();
}

fn limiters(c: &mut Criterion) {
    let dense = poisson_trace(ARRIVALS, WINDOW as f64 / (10 * LIMIT) as f64, 1);
    let sparse = poisson_trace(ARRIVALS, WINDOW as f64 / 2.0, 2);
    bench_trace(c, "dense", &dense);
    bench_trace(c, "sparse", &sparse);
}

criterion_group!(benches, limiters);
criterion_main!(benches);
