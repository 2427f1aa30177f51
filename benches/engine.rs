//! Cost per arrival of the engine's lanes: `engine::run` on one thread over a
//! pre-generated in-memory trace, so neither trace generation nor parsing is
//! timed. Each case adds one limiter to the sliding-log reference (which
//! every run carries), so `case - log_only` is that limiter's lane: its
//! decision plus the exact-window tracker, the counters and the timeline.
//!
//! `cargo bench --bench engine`
//!
//! Trace: 1 048 576 Poisson arrivals at 1.5 x the limit (L = 1000 per 1 s,
//! 1500/s), as in the end-to-end Poisson case of `scripts/bench.sh`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ratesim::engine::{self, RunConfig};
use ratesim::limiter::{FixedWindowSpec, Limit, LimiterSpec, SlotCounterSpec, WindowAlign};
use ratesim::nodes::{Balance, Mode, Topology};
use ratesim::time::Nanos;
use ratesim::trace::Arrival;

const ARRIVALS: usize = 1 << 20;

/// Seeded Poisson arrival times (splitmix64 + inverse CDF), `rate` per second.
fn poisson(n: usize, rate: f64, seed: u64) -> Vec<Arrival> {
    let mut state = seed;
    let mut t = 0u64;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let u = ((z >> 11) + 1) as f64 / (1u64 << 53) as f64;
            t += (-u.ln() / rate * 1e9) as u64;
            Arrival::keyed(Nanos::new(t), 0)
        })
        .collect()
}

fn lanes(c: &mut Criterion) {
    let trace = poisson(ARRIVALS, 1500.0, 7);
    let limit = Limit { requests: 1000, window: Nanos::new(1_000_000_000) };
    let fixed = LimiterSpec::from(FixedWindowSpec { align: WindowAlign::Epoch { offset: Nanos::new(0) } });
    let slots = |n| LimiterSpec::from(SlotCounterSpec { slots: n });
    let five = vec![fixed.clone(), slots(2), slots(10), slots(100)];
    let cases: Vec<(&str, Vec<LimiterSpec>, bool)> = vec![
        ("log_only", vec![], false),
        ("fixed+log", vec![fixed], false),
        ("n2+log", vec![slots(2)], false),
        ("n100+log", vec![slots(100)], false),
        ("five", five.clone(), false),
        // The same five lanes also measuring their admission curves.
        ("five+curve", five, true),
    ];
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("thread pool");
    let mut group = c.benchmark_group("engine_1_thread");
    group.throughput(Throughput::Elements(ARRIVALS as u64));
    group.sample_size(20).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    for (name, limiters, curve) in cases {
        let config = RunConfig { admission_curve: curve, ..RunConfig::new(limit, limiters) };
        group.bench_function(name, |b| {
            b.iter(|| {
                pool.install(|| {
                    let report =
                        engine::run(&config, trace.iter().map(|&a| Ok(a)), None, &mut |_| {}).expect("run");
                    black_box(report.limiters.len())
                })
            })
        });
    }
    group.finish();
}

/// The same fixed-window lane on nodes (`src/nodes/mod.rs`): one local node
/// against the plain limiter, five local nodes (round robin and random),
/// five nodes asking one store (atomic, and get-then-set 1 ms away: about
/// 1.5 reads in flight at 1500/s) and five nodes syncing every 100 ms. The
/// arrivals are the same 1 048 576, so `case - fixed+log` is what the
/// topology costs per decision: the balancer, the fleet, the per-node
/// counts and peaks.
fn nodes(c: &mut Criterion) {
    let trace = poisson(ARRIVALS, 1500.0, 7);
    let limit = Limit { requests: 1000, window: Nanos::new(1_000_000_000) };
    let fixed = LimiterSpec::from(FixedWindowSpec { align: WindowAlign::Epoch { offset: Nanos::new(0) } });
    let topology = |count: u16, balance: Balance, mode: Mode| Topology {
        count,
        balance,
        mode,
        per_node: limit.requests.div_ceil(u64::from(count)),
        skew: vec![0; usize::from(count)],
        outages: Vec::new(),
    };
    let ms = Nanos::new(1_000_000);
    let cases: Vec<(&str, Option<Topology>)> = vec![
        ("fixed+log", None),
        ("fixed+log, 1 local node", Some(topology(1, Balance::RoundRobin, Mode::Local))),
        ("fixed+log, 5 local nodes", Some(topology(5, Balance::RoundRobin, Mode::Local))),
        ("fixed+log, 5 local nodes, random", Some(topology(5, Balance::Random, Mode::Local))),
        (
            "fixed+log, 5 nodes, atomic store",
            Some(topology(5, Balance::RoundRobin, Mode::Central { rtt: ms, atomic: true })),
        ),
        (
            "fixed+log, 5 nodes, get-then-set 1ms",
            Some(topology(5, Balance::RoundRobin, Mode::Central { rtt: ms, atomic: false })),
        ),
        (
            "fixed+log, 5 nodes, sync 100ms",
            Some(topology(5, Balance::RoundRobin, Mode::Sync { interval: Nanos::new(100_000_000) })),
        ),
    ];
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("thread pool");
    let mut group = c.benchmark_group("engine_nodes_1_thread");
    group.throughput(Throughput::Elements(ARRIVALS as u64));
    group.sample_size(20).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    for (name, topology) in cases {
        let config = RunConfig { topology, ..RunConfig::new(limit, vec![fixed.clone()]) };
        group.bench_function(name, |b| {
            b.iter(|| {
                pool.install(|| {
                    let report =
                        engine::run(&config, trace.iter().map(|&a| Ok(a)), None, &mut |_| {}).expect("run");
                    black_box(report.limiters.len())
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, lanes, nodes);
criterion_main!(benches);
