//! `go_rate` against a line-for-line transliteration of
//! `golang.org/x/time/rate` v0.13.0 (`rate.go`): `NewLimiter` (tokens =
//! burst, `last` the zero `time.Time`), `advance`, `reserveN`,
//! `durationFromTokens`, `tokensFromDuration`, `Duration.Seconds`, and
//! `time.Time` as Go keeps it (wall seconds since year 1 and nanoseconds,
//! `Sub` saturating at the largest `Duration`). The run's time 0 is a wall
//! clock instant in 2026, as `time.Now()` would give. No Go toolchain is
//! available to run the package itself; the package's own tests are ported
//! as golden values in `src/limiter/go_rate.rs`.
//!
//! ratesim's limiter starts full at the run's time 0 instead of at the zero
//! time, and keeps times as `u64` nanoseconds since the run began: the
//! oracle checks that this decides the same, request for request, and
//! releases waiters at the same nanosecond, for random limits (round and
//! not), bursts, costs, deadlines and traces, with times that fall within
//! nanoseconds of each refill, where truncation and rounding decide.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ratesim::limiter::{Algorithm, Decision, GoLimit, GoRateSpec, Limit, Limiter};
use ratesim::time::Nanos;

/// Go's `time.Duration`.
type Duration = i64;
const SECOND: Duration = 1_000_000_000;
const INF_DURATION: Duration = i64::MAX;

/// Go's `time.Time` without a location or monotonic reading: seconds since
/// January 1, year 1, and nanoseconds in the second.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
struct Time {
    sec: i64,
    nsec: i64,
}

/// Seconds from year 1 to 2026-01-01, as Go's `unixToInternal` plus 56 years.
const RUN_START_SEC: i64 = 62_135_596_800 + 1_767_225_600;

impl Time {
    const ZERO: Time = Time { sec: 0, nsec: 0 };

    fn at_run(ns: u64) -> Time {
        Time { sec: RUN_START_SEC + (ns / 1_000_000_000) as i64, nsec: (ns % 1_000_000_000) as i64 }
    }

    /// `t.Sub(u)`, saturating as Go's does.
    fn sub(self, u: Time) -> Duration {
        let d = (self.sec as i128 - u.sec as i128) * 1_000_000_000 + (self.nsec - u.nsec) as i128;
        d.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    fn before(self, u: Time) -> bool {
        self < u
    }

    /// `t.Add(d)`.
    fn add(self, d: Duration) -> Time {
        let total = self.nsec as i128 + d as i128;
        Time {
            sec: self.sec + total.div_euclid(1_000_000_000) as i64,
            nsec: total.rem_euclid(1_000_000_000) as i64,
        }
    }

    fn run_ns(self) -> u64 {
        ((self.sec - RUN_START_SEC) as i128 * 1_000_000_000 + self.nsec as i128) as u64
    }
}

/// `Duration.Seconds()`.
fn seconds(d: Duration) -> f64 {
    let sec = d / SECOND;
    let nsec = d % SECOND;
    sec as f64 + nsec as f64 / 1e9
}

/// `rate.Limiter`, as `NewLimiter` makes it.
struct GoLimiter {
    limit: f64,
    burst: i64,
    tokens: f64,
    last: Time,
    last_event: Time,
}

impl GoLimiter {
    fn new(limit: f64, burst: i64) -> GoLimiter {
        GoLimiter { limit, burst, tokens: burst as f64, last: Time::ZERO, last_event: Time::ZERO }
    }

    fn duration_from_tokens(&self, tokens: f64) -> Duration {
        if self.limit <= 0.0 {
            return INF_DURATION;
        }
        let duration = (tokens / self.limit) * SECOND as f64;
        if duration > i64::MAX as f64 {
            return INF_DURATION;
        }
        duration as i64
    }

    fn tokens_from_duration(&self, d: Duration) -> f64 {
        if self.limit <= 0.0 {
            return 0.0;
        }
        seconds(d) * self.limit
    }

    fn advance(&self, t: Time) -> f64 {
        let mut last = self.last;
        if t.before(last) {
            last = t;
        }
        let elapsed = t.sub(last);
        let delta = self.tokens_from_duration(elapsed);
        let mut tokens = self.tokens + delta;
        let burst = self.burst as f64;
        if tokens > burst {
            tokens = burst;
        }
        tokens
    }

    /// `reserveN`: (ok, timeToAct).
    fn reserve_n(&mut self, t: Time, n: i64, max_future_reserve: Duration) -> (bool, Time) {
        let mut tokens = self.advance(t);
        tokens -= n as f64;
        let mut wait_duration: Duration = 0;
        if tokens < 0.0 {
            wait_duration = self.duration_from_tokens(-tokens);
        }
        let ok = n <= self.burst && wait_duration <= max_future_reserve;
        let mut time_to_act = Time::ZERO;
        if ok {
            time_to_act = t.add(wait_duration);
            self.last = t;
            self.tokens = tokens;
            self.last_event = time_to_act;
        }
        (ok, time_to_act)
    }
}

/// One random configuration and trace, decided by both.
fn check(rng: &mut ChaCha8Rng, case: usize) {
    let requests = rng.random_range(1u64..=20);
    let window = *[1_000_000_000u64, 60_000_000_000, 333_333_333, 1_000, 7_777_777]
        .get(rng.random_range(0..5usize))
        .unwrap();
    let run_limit = Limit { requests, window: Nanos::new(window) };
    let limit = match rng.random_range(0..3) {
        0 => GoLimit::Default,
        1 => GoLimit::PerSecond(
            *[0.7692307692307693, 3.0, 0.1, 1e6, 12.5, 2.0 / 3.0].get(rng.random_range(0..6usize)).unwrap(),
        ),
        _ => GoLimit::Every(Nanos::new(rng.random_range(1u64..2_000_000_000))),
    };
    let burst = rng.random_bool(0.5).then(|| rng.random_range(1u64..=8));
    let max_wait = rng.random_bool(0.5).then(|| Nanos::new(rng.random_range(0u64..3_000_000_000)));
    let spec = GoRateSpec { limit, burst, max_wait };
    let mut ours = spec.build(run_limit);
    let mut go = GoLimiter::new(spec.events_per_second(run_limit), burst.unwrap_or(requests) as i64);
    let max_future = max_wait.map_or(0, |m| m.get() as i64);
    let scale = rng.random_range(1u64..=1_000_000_000) / rng.random_range(1u64..=1000);
    let mut t = rng.random_range(0u64..2_000_000_000);
    for i in 0..400 {
        let cost = *[0u32, 1, 1, 1, 2, 3, 9].get(rng.random_range(0..7usize)).unwrap();
        t += match rng.random_range(0..5) {
            0 => 0,
            1 => rng.random_range(0..=3),
            2 => rng.random_range(0..=scale.max(1)),
            // Within a few nanoseconds of the instant the tokens lacking
            // would be refilled (by Go's own reckoning, before the deadline
            // is taken off): where truncation and rounding decide.
            _ => {
                let lacking = f64::from(cost) - go.advance(Time::at_run(t));
                let wait = if lacking > 0.0 { go.duration_from_tokens(lacking) } else { 0 };
                let target = (wait - max_future).max(0) as u64;
                (target + rng.random_range(0..=6)).saturating_sub(3)
            }
        };
        let now = Time::at_run(t);
        if cost == 0 {
            // ratesim admits a request for nothing and changes nothing (its
            // contract for every limiter); Go grants it and brings its
            // state up to `t`, so it is not asked.
            assert_eq!(ours.decide(Nanos::new(t), 0), Decision::Admit);
            continue;
        }
        let (ok, act) = go.reserve_n(now, i64::from(cost), max_future);
        let want = match (ok, act.run_ns().saturating_sub(t)) {
            (false, _) => Decision::Reject,
            (true, 0) => Decision::Admit,
            (true, d) => Decision::Delay(Nanos::new(d)),
        };
        let got = ours.decide(Nanos::new(t), cost);
        assert_eq!(got, want, "case {case}, request {i}: {} at {t} ns, cost {cost}", spec.label());
    }
}

#[test]
fn go_rate_decides_as_x_time_rate_transliterated() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x60_7a7e);
    for case in 0..3000 {
        check(&mut rng, case);
    }
}

/// The oracle itself, on `rate_test.go`'s `TestLimiterJumpBackwards`
/// (`TokensAt` and `AllowN` at each step): time that goes back, which
/// ratesim's lanes never do, is where `advance`'s `if t.Before(last)` acts,
/// so this checks the transliteration where the library cannot.
#[test]
fn the_oracle_passes_go_s_own_test() {
    let mut lim = GoLimiter::new(10.0, 3);
    let d = |k: u64| Time::at_run(5_000_000_000 + k * 100_000_000);
    let steps: [(u64, f64, i64, bool); 11] = [
        (1, 3.0, 1, true), // start at t1
        (0, 2.0, 1, true), // jump back to t0, two tokens remain
        (0, 1.0, 1, true),
        (0, 0.0, 1, false),
        (0, 0.0, 1, false),
        (1, 1.0, 1, true), // got a token
        (1, 0.0, 1, false),
        (1, 0.0, 1, false),
        (2, 1.0, 1, true), // got another token
        (2, 0.0, 1, false),
        (2, 0.0, 1, false),
    ];
    for (i, (k, toks, n, ok)) in steps.into_iter().enumerate() {
        assert_eq!(lim.advance(d(k)), toks, "step {i}");
        assert_eq!(lim.reserve_n(d(k), n, 0).0, ok, "step {i}");
    }
}
