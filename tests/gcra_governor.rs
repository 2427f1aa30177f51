//! `gcra` against governor itself: the same requests, decided by ratesim's
//! GCRA and by governor's `RateLimiter` on a fake clock advanced by exact
//! nanoseconds, must get the same answer every time, and a rejected request
//! the same earliest conforming time (governor's
//! `NotUntil::earliest_possible`, ratesim's `retry_at`).
//!
//! The mapping: governor's `Quota::per_second(n)` is `L = n` per `W = 1 s`
//! (its `replenish_1_per = 1 s / n`, integer division, is ratesim's
//! `T = floor(W / L)`) with burst `n`; `.allow_burst(b)` is `burst = b`.
//! `Quota::with_period(d)` is any limit with `floor(W / L) = d`, such as
//! `L = k`, `W = k d + r` with `r < k`, with burst 1 unless `allow_burst`.
//! Costs above 1 go through governor's `check_n`, which refuses a cost the
//! burst can never hold (`InsufficientCapacity`): ratesim rejects it and
//! advertises no retry time.

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::FakeRelativeClock;
use governor::{Quota, RateLimiter};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ratesim::limiter::{Algorithm, GcraSpec, Limit, Limiter};
use ratesim::time::Nanos;

fn nz(v: u32) -> NonZeroU32 {
    NonZeroU32::new(v).unwrap()
}

/// One quota, in both vocabularies.
struct Case {
    quota: Quota,
    limit: Limit,
    burst: u32,
}

fn per_second(n: u32, burst: Option<u32>) -> Case {
    let quota = Quota::per_second(nz(n));
    let limit = Limit { requests: u64::from(n), window: Nanos::from_secs(1) };
    match burst {
        None => Case { quota, limit, burst: n },
        Some(b) => Case { quota: quota.allow_burst(nz(b)), limit, burst: b },
    }
}

/// `with_period(d)` against `L = k` per `W = k d + r`.
fn with_period(d: u64, k: u64, r: u64, burst: u32) -> Case {
    assert!(r < k);
    let quota = Quota::with_period(Duration::from_nanos(d)).unwrap().allow_burst(nz(burst));
    Case { quota, limit: Limit { requests: k, window: Nanos::new(k * d + r) }, burst }
}

/// The gaps a trace is made of, scaled to the emission interval `t` and the
/// tolerance `tau`: ties, the edges around `T` and `tau`, bursts, long gaps.
fn gap(rng: &mut ChaCha8Rng, t: u64, tau: u64) -> u64 {
    match rng.random_range(0..12) {
        0..=2 => 0,
        3 => t.saturating_sub(1),
        4 => t,
        5 => t + 1,
        6 => rng.random_range(0..=t),
        7 => rng.random_range(0..=t / 4 + 1),
        8 => tau.saturating_sub(rng.random_range(0..3)),
        9 => rng.random_range(0..=2 * t + tau),
        10 => rng.random_range(0..=10 * (t + tau)),
        _ => rng.random_range(0..=3 * t),
    }
}

/// Runs `steps` requests through both limiters; returns how many were
/// compared. Panics at the first difference.
fn compare(case: &Case, seed: u64, steps: usize) -> u64 {
    let clock = FakeRelativeClock::default();
    let theirs = RateLimiter::direct_with_clock(case.quota, clock.clone());
    let spec = GcraSpec { burst: Some(u64::from(case.burst)), max_wait: None };
    let mut ours = spec.build(case.limit);
    let t = case.quota.replenish_interval().as_nanos() as u64;
    let tau = t * u64::from(case.burst - 1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut now = 0u64;
    let mut history = Vec::new();
    for step in 0..steps {
        let g = gap(&mut rng, t, tau);
        clock.advance(Duration::from_nanos(g));
        now += g;
        // Mostly single cells; sometimes several, up to past the burst.
        let cost: u32 = if rng.random_bool(0.75) { 1 } else { rng.random_range(1..=case.burst + 2) };
        let (admitted, earliest) = if cost == 1 {
            match theirs.check() {
                Ok(()) => (true, None),
                Err(not_until) => (false, Some(u64::from(not_until.earliest_possible()))),
            }
        } else {
            match theirs.check_n(nz(cost)) {
                Ok(Ok(())) => (true, None),
                Ok(Err(not_until)) => (false, Some(u64::from(not_until.earliest_possible()))),
                Err(_insufficient_capacity) => (false, None),
            }
        };
        history.push((now, cost, admitted));
        let at = Nanos::new(now);
        let mine = ours.decide(at, cost).admitted();
        let context = || {
            let tail = &history[history.len().saturating_sub(8)..];
            format!(
                "{:?} burst {}, seed {seed}, step {step}: last (t, cost, governor) {tail:?}",
                case.limit, case.burst
            )
        };
        assert_eq!(mine, admitted, "decision differs: {}", context());
        if !admitted {
            let retry = ours.retry_at(at, cost).map(Nanos::get);
            assert_eq!(retry, earliest, "retry time differs: {}", context());
        }
    }
    steps as u64
}

#[test]
fn gcra_makes_governors_decisions() {
    let mut cases = Vec::new();
    // per_second(n): L = n per 1 s, burst n, and other bursts.
    for n in [1, 2, 3, 7, 10, 100, 1000, 999_983] {
        cases.push(per_second(n, None));
        for b in [1, 2, 5, 64] {
            cases.push(per_second(n, Some(b)));
        }
    }
    // with_period(d): T = d exactly, including T = 1 ns, and limits whose
    // W / L is not a whole number of nanoseconds.
    for (d, k, r, b) in [
        (1, 1, 0, 1),
        (1, 3, 2, 4),
        (7, 1, 0, 3),
        (7, 5, 4, 2),
        (250_000_000, 4, 0, 4),
        (333_333_333, 3, 1, 3),
        (333_333_333, 3, 1, 10),
        (1_000_000_007, 2, 1, 6),
    ] {
        cases.push(with_period(d, k, r, b));
    }
    let mut compared = 0;
    for (i, case) in cases.iter().enumerate() {
        for seed in 0..4 {
            compared += compare(case, 1000 * i as u64 + seed, 1_000);
        }
    }
    println!("{compared} decisions compared with governor over {} quotas: all equal", cases.len());
    assert!(compared >= 100_000, "only {compared} decisions compared");
}

/// The edge governor's code is written around: an unset `tat` is the
/// request's own time, and `earliest_time = tat.saturating_sub(tau)` admits
/// at equality.
#[test]
fn governor_quota_per_second_is_l_per_second_with_burst_l() {
    let clock = FakeRelativeClock::default();
    let theirs = RateLimiter::direct_with_clock(Quota::per_second(nz(3)), clock.clone());
    let mut ours =
        GcraSpec { burst: None, max_wait: None }.build(Limit { requests: 3, window: Nanos::from_secs(1) });
    // T = 333 333 333 ns, tau = 666 666 666 ns: three at once, the fourth
    // at tat - tau = 999 999 999 - 666 666 666 = 333 333 333.
    let mut decisions = Vec::new();
    for advance in [0, 0, 0, 0, 333_333_332, 1, 0] {
        clock.advance(Duration::from_nanos(advance));
        let now = u64::from(governor::clock::Clock::now(&clock));
        decisions.push((theirs.check().is_ok(), ours.decide(Nanos::new(now), 1).admitted()));
    }
    let expected = [true, true, true, false, false, true, false];
    assert_eq!(decisions.iter().map(|d| d.0).collect::<Vec<_>>(), expected);
    assert_eq!(decisions.iter().map(|d| d.1).collect::<Vec<_>>(), expected);
}
