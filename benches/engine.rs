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
//!
//! `clients_1_thread`: a lane whose clients react against an open-loop lane
//! deciding the same number of attempts (the sliding log alone, one lane):
//! a closed population and an open-loop source with retries are run once
//! to count their attempts, then an open-loop Poisson trace of that many
//! arrivals is timed beside them. Throughput is per attempt, so criterion's
//! elements per second give ns per attempt for both. `queue_only` times what
//! no closed loop can avoid, one pop and one push of the lane's event queue
//! per attempt (and `queue_only_binary_heap` the same with a binary heap);
//! `minimal_closed_loop` a closed loop with nothing but that queue, the
//! random draws and a bare sliding log.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ratesim::clients::{Backoff, Clients, ClosedSource, RetryPolicy};
use ratesim::engine::{self, EventQueue, RunConfig};
use ratesim::limiter::{
    FixedWindowSpec, GcraSpec, GuavaSpec, LeakyBucketSpec, LeakyQueueSpec, Limit, LimiterSpec,
    SlotCounterSpec, TokenBucketSpec, WindowAlign,
};
use ratesim::nodes::{Balance, Mode, Topology};
use ratesim::time::Nanos;
use ratesim::trace::Arrival;

#[path = "common/splitmix.rs"]
mod splitmix;

use splitmix::SplitMix64;

const ARRIVALS: usize = 1 << 20;

/// Seeded Poisson arrival times (splitmix64 + inverse CDF), `rate` per second.
fn poisson(n: usize, rate: f64, seed: u64) -> Vec<Arrival> {
    let mut rng = SplitMix64::new(seed);
    let mut t = 0u64;
    (0..n)
        .map(|_| {
            t += (-rng.unit().ln() / rate * 1e9) as u64;
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
        group.bench_function(name, |b| b.iter(|| black_box(run_on(&pool, &config, &trace).limiters.len())));
    }
    group.finish();
}

/// Reacting clients against the open loop, at the same number of attempts.
fn clients(c: &mut Criterion) {
    let limit = Limit { requests: 1000, window: Nanos::new(1_000_000_000) };
    let jitter = RetryPolicy {
        backoff: Backoff::FullJitter,
        base: Nanos::new(1_000_000),
        cap: Nanos::new(1_000_000_000),
        max_attempts: 10,
        jitter: Nanos::ZERO,
        budget: None,
        throttle: None,
        retry_quota: None,
    };
    let end = Nanos::new(200_000_000_000);
    // 1000 clients thinking 100 ms on average: up to 10 000 requests a
    // second against 1000, retried with full jitter; 200 s.
    let closed = Clients {
        open: vec![],
        closed: vec![ClosedSource {
            clients: 1000,
            think: Nanos::new(100_000_000),
            start: Nanos::ZERO,
            end,
            retry: jitter,
        }],
        seed: 1,
    };
    // Poisson at 3x the limit for 200 s, its rejections retried the same way.
    let retrying = Clients { open: vec![jitter], closed: vec![], seed: 1 };
    let retry_trace = poisson(600_000, 3000.0, 11);
    let config =
        |clients: Option<Clients>| RunConfig { end: Some(end), clients, ..RunConfig::new(limit, vec![]) };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("thread pool");
    let attempts = |config: &RunConfig, trace: &[Arrival]| {
        let report = run_on(&pool, config, trace);
        let lane = &report.limiters[0];
        let clients = lane.clients.as_ref().expect("clients react");
        // The queue holds pending work only: at most one event per closed
        // client, and for open-loop retries at most one per request in flight.
        assert!(
            clients.peak_pending <= 1000 + clients.logical - clients.succeeded - clients.gave_up + 10_000
        );
        (lane.counts.offered, clients.peak_pending)
    };
    let closed_config = config(Some(closed));
    let retry_config = config(Some(retrying));
    let (closed_attempts, closed_queue) = attempts(&closed_config, &[]);
    let (retry_attempts, retry_queue) = attempts(&retry_config, &retry_trace);
    assert!(closed_queue <= 1000, "a closed population's queue holds at most one event per client");
    eprintln!(
        "clients: closed {closed_attempts} attempts (queue peak {closed_queue}), retries {retry_attempts} attempts (queue peak {retry_queue})"
    );
    // The open-loop traces spread the same number of attempts over the same
    // 200 s, so the limiter sees the same rate of requests.
    let open = RunConfig::new(limit, vec![]);
    let rate = |n: u64| n as f64 / end.as_secs_f64();
    let cases: Vec<(&str, &RunConfig, Vec<Arrival>, u64)> = vec![
        ("closed", &closed_config, vec![], closed_attempts),
        (
            "open_as_closed",
            &open,
            poisson(closed_attempts as usize, rate(closed_attempts), 5),
            closed_attempts,
        ),
        ("retry", &retry_config, retry_trace.clone(), retry_attempts),
        ("open_as_retry", &open, poisson(retry_attempts as usize, rate(retry_attempts), 5), retry_attempts),
    ];
    let mut group = c.benchmark_group("clients_1_thread");
    group.sample_size(10).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    for (name, config, trace, attempts) in cases {
        group.throughput(Throughput::Elements(attempts));
        group.bench_function(name, |b| {
            b.iter(|| black_box(run_on(&pool, config, &trace).limiters[0].counts.offered))
        });
    }
    // The least any closed loop does per attempt besides deciding: take the
    // earliest pending event out and schedule the next, 1000 pending, with
    // the closed run's mix of waits (1 in 25 an exponential 100 ms think
    // time, the rest full-jitter retries up to 1 ms x 2^k). The lane's queue
    // and, for scale, the standard library's binary heap on (time, sequence).
    let waits = queue_waits(1 << 16, 3);
    group.throughput(Throughput::Elements(closed_attempts));
    group.bench_function("queue_only", |b| {
        b.iter(|| {
            let mut queue = EventQueue::new();
            for (client, &wait) in waits.iter().take(1000).enumerate() {
                queue.schedule(Nanos::new(wait), client as u32);
            }
            let mut sum = 0u64;
            for i in 0..closed_attempts as usize {
                let e = queue.pop_before(Nanos::MAX).expect("1000 pending");
                sum = sum.wrapping_add(e.time.get());
                queue.schedule(e.time + Nanos::new(waits[i & 0xffff]), e.payload);
            }
            black_box(sum)
        })
    });
    // The same with 400 000 pending, as in a long retry storm (Poisson at
    // 3x the limit for 200 s): the queue no longer fits in cache.
    group.bench_function("queue_only_400k_pending", |b| {
        b.iter(|| {
            let mut queue = EventQueue::new();
            for client in 0..400_000u32 {
                queue.schedule(Nanos::new(waits[client as usize & 0xffff] * 400 + client as u64), client);
            }
            let mut sum = 0u64;
            for i in 0..closed_attempts as usize {
                let e = queue.pop_before(Nanos::MAX).expect("400 000 pending");
                sum = sum.wrapping_add(e.time.get());
                queue.schedule(e.time + Nanos::new(waits[i & 0xffff] * 400), e.payload);
            }
            black_box(sum)
        })
    });
    group.bench_function("queue_only_binary_heap", |b| {
        b.iter(|| {
            let mut heap = BinaryHeap::new();
            for (client, &wait) in waits.iter().take(1000).enumerate() {
                heap.push(Reverse((wait, client as u64, client as u32)));
            }
            let (mut sum, mut seq) = (0u64, 1000u64);
            for i in 0..closed_attempts as usize {
                let Reverse((t, _, client)) = heap.pop().expect("1000 pending");
                sum = sum.wrapping_add(t);
                heap.push(Reverse((t + waits[i & 0xffff], seq, client)));
                seq += 1;
            }
            black_box(sum)
        })
    });
    // A closed loop with nothing but the queue, the draws and a bare
    // sliding log: the same 1000 clients, think times and full-jitter
    // retries, no metrics, no reactor bookkeeping.
    let floor_attempts = minimal_closed_loop(end.get());
    eprintln!("clients: minimal closed loop {floor_attempts} attempts");
    group.throughput(Throughput::Elements(floor_attempts));
    group.bench_function("minimal_closed_loop", |b| b.iter(|| black_box(minimal_closed_loop(end.get()))));
    group.finish();
}

/// 1000 closed clients against 1000 per second until `end`, as in
/// `closed`, with only what any closed loop must do per attempt: take the
/// earliest event out of the lane's queue, decide it on a bare sliding log,
/// draw the next wait from ChaCha8 and schedule it. Returns the attempts.
fn minimal_closed_loop(end: u64) -> u64 {
    const SECOND: u64 = 1_000_000_000;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let think = |rng: &mut ChaCha8Rng| {
        let e = ratesim::random::exp1(rng);
        (e * 1e8) as u64
    };
    let mut queue = EventQueue::new();
    for client in 0..1000u32 {
        queue.schedule(Nanos::new(think(&mut rng)), (client, 1u32));
    }
    let mut log: VecDeque<u64> = VecDeque::with_capacity(1000);
    let mut attempts = 0;
    while let Some(e) = queue.pop_before(Nanos::new(end)) {
        let (t, (client, attempt)) = (e.time.get(), e.payload);
        attempts += 1;
        while log.front().is_some_and(|&first| first + SECOND <= t) {
            log.pop_front();
        }
        let next = if log.len() < 1000 {
            log.push_back(t);
            (t + think(&mut rng), 1)
        } else if attempt < 10 {
            let top = (1_000_000u64 << (attempt - 1)).min(SECOND);
            (t + rng.random_range(0..=top), attempt + 1)
        } else {
            (t + think(&mut rng), 1)
        };
        queue.schedule(Nanos::new(next.0), (client, next.1));
    }
    attempts
}

/// Waits in ns like a closed population's (splitmix64): 1 in 25 an
/// exponential think time of mean 100 ms, the others a full-jitter retry,
/// uniform in `[0, 1 ms x 2^k]` for `k` in 0..10.
fn queue_waits(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            let r = rng.next_u64();
            if r.is_multiple_of(25) {
                (-rng.unit().ln() * 1e8) as u64
            } else {
                rng.next_u64() % ((1_000_000u64 << ((r >> 8) % 10)) + 1)
            }
        })
        .collect()
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
        group.bench_function(name, |b| b.iter(|| black_box(run_on(&pool, &config, &trace).limiters.len())));
    }
    group.finish();
}

/// Shaping lanes against their policing forms, on the engine bench's trace
/// (1 048 576 Poisson arrivals at 1.5x L = 1000 per 1 s, one thread). A
/// delayed request costs its decision plus a release event: one push and
/// one pop of the lane's event queue, and the exact-window count at the
/// backend time. The queue holds only the requests waiting, which the
/// limiter bounds (`max_wait / T + 1` for GCRA, `burst` for nginx, `queue`,
/// `timeout x rate + 1` for Guava's tryAcquire): a GCRA waiting up to
/// 10 ms, 100 ms and 1 s holds at most 11, 101 and 1001, and the cost per
/// decision should not move with it. Guava's acquire() is the exception: it
/// never refuses, so at 1.5x its queue grows with the trace (a third of it).
/// Before timing, each case prints its delayed share and queue peak.
fn shaping(c: &mut Criterion) {
    let trace = poisson(ARRIVALS, 1500.0, 7);
    let limit = Limit { requests: 1000, window: Nanos::new(1_000_000_000) };
    let ms = |v: u64| Nanos::new(v * 1_000_000);
    let gcra = |max_wait| LimiterSpec::from(GcraSpec { burst: None, max_wait });
    let bucket = |max_wait| {
        LimiterSpec::from(TokenBucketSpec::Continuous {
            capacity: None,
            initial: ratesim::limiter::Initial::Full,
            max_wait,
        })
    };
    let nginx = |delay| LimiterSpec::from(LeakyBucketSpec { burst: 100, delay });
    let guava = |timeout| {
        LimiterSpec::from(GuavaSpec { permits_per_second: Some(1000.0), max_burst_seconds: 1.0, timeout })
    };
    let cases: Vec<(&str, Option<LimiterSpec>)> = vec![
        ("log_only", None),
        ("gcra", Some(gcra(None))),
        ("gcra max_wait=10ms", Some(gcra(Some(ms(10))))),
        ("gcra max_wait=100ms", Some(gcra(Some(ms(100))))),
        ("gcra max_wait=1s", Some(gcra(Some(ms(1000))))),
        ("token_bucket", Some(bucket(None))),
        ("token_bucket max_wait=100ms", Some(bucket(Some(ms(100))))),
        ("nginx burst=100 nodelay", Some(nginx(None))),
        ("nginx burst=100 (delay=0)", Some(nginx(Some(0)))),
        ("nginx burst=100 delay=50", Some(nginx(Some(50)))),
        ("leaky_queue queue=100", Some(LimiterSpec::from(LeakyQueueSpec { queue: 100 }))),
        ("guava tryAcquire()", Some(guava(Some(Nanos::ZERO)))),
        ("guava tryAcquire(100ms)", Some(guava(Some(ms(100))))),
        ("guava acquire()", Some(guava(None))),
    ];
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("thread pool");
    let mut group = c.benchmark_group("engine_shaping_1_thread");
    group.throughput(Throughput::Elements(ARRIVALS as u64));
    group.sample_size(20).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    for (name, spec) in cases {
        let config = RunConfig::new(limit, spec.into_iter().collect());
        let report = run_on(&pool, &config, &trace);
        let lane = &report.limiters[0];
        if let Some(d) = &lane.delays {
            eprintln!(
                "{name}: admitted {:.1} %, delayed {:.1} % of arrivals, queue peak {}",
                100.0 * lane.counts.admitted as f64 / ARRIVALS as f64,
                100.0 * d.delayed as f64 / ARRIVALS as f64,
                d.queue_peak()
            );
        }
        group.bench_function(name, |b| b.iter(|| black_box(run_on(&pool, &config, &trace).limiters.len())));
    }
    group.finish();
}

/// One run of the engine over an in-memory trace, on `pool` (one thread:
/// the lanes take turns, as inside a sweep).
fn run_on(pool: &rayon::ThreadPool, config: &RunConfig, trace: &[Arrival]) -> engine::RunReport {
    pool.install(|| engine::run(config, trace.iter().map(|&a| Ok(a)), None, &mut |_| {})).expect("run")
}

criterion_group!(benches, lanes, clients, nodes, shaping);
criterion_main!(benches);
