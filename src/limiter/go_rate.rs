//! Go's `golang.org/x/time/rate` `Limiter` (`go_rate`): the token bucket most
//! Go services deploy, with its own `float64` arithmetic, so that its
//! decisions are Go's, rounding included.
//!
//! Followed: `rate/rate.go` from v0.10.0 (2025-01, when `durationFromTokens`
//! gained its overflow cap) to v0.13.0. From v0.3.0 (2022) on the decisions
//! are the same except past that cap and, before v0.7.0 (whose
//! `NewLimiter` sets `tokens = burst`), at limits so slow that the refill
//! of the longest `Duration` (292 years) is less than the burst: the
//! limiter then started short of full. Every call is `reserveN`:
//!
//! ```go
//! func (lim *Limiter) reserveN(t time.Time, n int, maxFutureReserve time.Duration) Reservation {
//!     tokens := lim.advance(t)             // min(burst, tokens + (t - last).Seconds() * limit)
//!     tokens -= float64(n)
//!     var waitDuration time.Duration
//!     if tokens < 0 {
//!         waitDuration = lim.limit.durationFromTokens(-tokens) // Duration((-tokens / limit) * 1e9), truncated
//!     }
//!     ok := n <= lim.burst && waitDuration <= maxFutureReserve
//!     if ok { lim.last = t; lim.tokens = tokens }
//!     ...
//! }
//! ```
//!
//! `AllowN(t, n)` is `reserveN(t, n, 0).ok`; `WaitN(ctx, n)` with a deadline
//! `max_wait` away is `reserveN(t, n, max_wait)` and sleeps the wait. Two
//! consequences a user of the package rarely expects are kept: `AllowN`
//! admits a request that finds the bucket short by less than one
//! nanosecond's refill (its wait truncates to 0) and leaves the tokens
//! slightly below zero; and the wait is truncated, so a waiter may be
//! released up to 1 ns before the refill has paid for it.
//!
//! A cost of 0 is admitted and changes nothing, as for every limiter here;
//! Go's `AllowN(t, 0)` is granted too, but brings the state up to `t`.
//!
//! `Duration.Seconds()` is `float64(d / 1e9) + float64(d % 1e9) / 1e9`. The
//! limiter is `NewLimiter(limit, burst)`: full (`tokens = burst`), with its
//! `last` at the zero time, so its first refill fills it whenever that
//! comes; starting at the run's time 0, full, decides the same, and so a
//! client key's limiter made at the key's first request does too.

use serde::Deserialize;
use toml::Spanned;

use super::gcra::shade;
use super::{Algorithm, Decision, Limit, Limiter, StateSize, Style};
use crate::scenario::{Counts, Entry, ScenarioError};
use crate::time::{Nanos, format_duration};

/// How the `rate.Limit` (events per second) is given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GoLimit {
    /// `rate.Limit(float64(L) / W.Seconds())`, from the run's limit (on
    /// nodes in local mode, each node's own).
    Default,
    /// `rate.Limit(x)`: `events_per_second = x`.
    PerSecond(f64),
    /// `rate.Every(interval)`, `1 / interval.Seconds()`: `every = "..."`.
    Every(Nanos),
}

/// `kind = "go_rate"`: the limit (`events_per_second` or `every`; default
/// `L / W`), `burst` (default `L`) and `max_wait` (`WaitN` with a deadline
/// that far; without it, `AllowN`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GoRateSpec {
    pub limit: GoLimit,
    pub burst: Option<u64>,
    pub max_wait: Option<Nanos>,
}

impl GoRateSpec {
    /// `AllowN` with `rate.Limit(L / W.Seconds())` and burst `L`.
    pub const DEFAULT: GoRateSpec = GoRateSpec { limit: GoLimit::Default, burst: None, max_wait: None };

    /// The `rate.Limit` for a limiter built with `limit`.
    pub fn events_per_second(&self, limit: Limit) -> f64 {
        match self.limit {
            GoLimit::Default => limit.requests as f64 / seconds(limit.window.get()),
            GoLimit::PerSecond(r) => r,
            GoLimit::Every(interval) => 1.0 / seconds(interval.get()),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    #[allow(dead_code)]
    kind: serde::de::IgnoredAny,
    events_per_second: Option<Spanned<f64>>,
    every: Option<Spanned<String>>,
    burst: Option<Spanned<Counts>>,
    max_wait: Option<Spanned<String>>,
}

/// Go's `time.Duration.Seconds()` of `d` ns: whole seconds and the rest
/// converted apart, then added (a `u64` here; Go's `int64` holds every
/// duration a run reaches).
#[inline(always)]
pub fn seconds(d: u64) -> f64 {
    (d / 1_000_000_000) as f64 + (d % 1_000_000_000) as f64 / 1e9
}

impl Algorithm for GoRateSpec {
    type Limiter = GoRate;
    const KIND: &'static str = "go_rate";

    fn parse(entry: &Entry<'_>) -> Result<Vec<Self>, ScenarioError> {
        let keys: Keys = entry.keys()?;
        let limit = match (&keys.events_per_second, &keys.every) {
            (Some(_), Some(e)) => {
                return Err(entry.at(
                    e.span(),
                    format!(
                        "give `{}` or `every`, not both: rate.Every(interval) is rate.Limit(1 / interval)",
                        entry.key("events_per_second")
                    ),
                ));
            }
            (Some(r), None) => GoLimit::PerSecond(entry.rate("events_per_second", r)?),
            (None, Some(e)) => GoLimit::Every(entry.positive_duration("every", e)?),
            (None, None) => GoLimit::Default,
        };
        let max_wait = keys.max_wait.as_ref().map(|m| entry.duration_of("max_wait", m)).transpose()?;
        let run_limit = entry.limit();
        let Some(bursts) = keys.burst else {
            return Ok(vec![GoRateSpec { limit, burst: None, max_wait }]);
        };
        entry
            .counts("burst", bursts, "give at least one burst")?
            .iter()
            .map(|(key, b)| {
                let v = entry.count_at_least_one(key, b)?;
                let burst = (v != run_limit.requests || entry.node_defaults()).then_some(v);
                Ok(GoRateSpec { limit, burst, max_wait })
            })
            .collect()
    }

    fn label(&self) -> String {
        let mut params = Vec::new();
        match self.limit {
            GoLimit::Default => {}
            GoLimit::PerSecond(r) => params.push(format!("events_per_second={r}")),
            GoLimit::Every(interval) => params.push(format!("every={}", format_duration(interval))),
        }
        if let Some(b) = self.burst {
            params.push(format!("burst={b}"));
        }
        if let Some(m) = self.max_wait {
            params.push(format!("max_wait={}", format_duration(m)));
        }
        if params.is_empty() { "go_rate".into() } else { format!("go_rate({})", params.join(";")) }
    }

    fn build(&self, limit: Limit) -> GoRate {
        let burst = self.burst.unwrap_or(limit.requests);
        GoRate::new(self.events_per_second(limit), burst, self.max_wait.map_or(0, |m| m.get()))
    }

    fn style(&self) -> Style {
        let mut short = "Go x/time/rate".to_string();
        if let Some(b) = self.burst {
            short.push_str(&format!(" burst {b}"));
        }
        // Go's own blue ("Gopher blue"); a deeper one when it waits, as
        // WaitN, so both fit in one delay chart.
        let base = match self.max_wait {
            None => (0, 173, 216),
            Some(m) => {
                short.push_str(&format!(", WaitN ≤ {}", format_duration(m)));
                (0, 105, 148)
            }
        };
        Style { rgb: shade(base, self.burst), line_width: 2, short }
    }

    /// Both `AllowN` and `WaitN` refuse until a known instant.
    fn advertises_retry(&self) -> bool {
        true
    }

    fn delays(&self) -> bool {
        self.max_wait.is_some()
    }

    /// The tokens owed never pass `max_wait` of refill.
    fn queue_advice(&self, limit: Limit) -> String {
        let Some(m) = self.max_wait else { return String::new() };
        let most = (seconds(m.get()) * self.events_per_second(limit)).floor() + 1.0;
        format!(
            "Go's WaitN with a deadline {} away lets at most max_wait × limit + 1 = {most} requests wait per client \
key: lower `max_wait`, or run fewer client keys",
            format_duration(m)
        )
    }

    // No sweep traits: a bucket admits part of a burst at one instant.
}

/// `rate.Limiter`'s state, and the parameters it was made with.
#[derive(Clone, Debug)]
pub struct GoRate {
    /// `rate.Limit`: events per second.
    limit: f64,
    burst: u64,
    tokens: f64,
    /// When `tokens` was last brought up to date (ns).
    last: u64,
    /// `reserveN`'s `maxFutureReserve` (ns): 0 for `AllowN`.
    max_wait: i64,
    /// A lack of tokens above this is refused for certain: its wait is more
    /// than `max_wait` whatever the rounding, so the division that computes
    /// the wait is skipped (`benches/limiters.rs`, `lib/go_rate`).
    surely_refused: f64,
}

impl GoRate {
    /// `NewLimiter(limit, burst)`, asked with `max_wait` ns of
    /// `maxFutureReserve` (0: `AllowN`).
    fn new(limit: f64, burst: u64, max_wait: u64) -> GoRate {
        let max_wait = max_wait.min(i64::MAX as u64) as i64;
        // A lack `x` above `limit * (m (1 + 1e-12) + 2) / 1e9` makes Go's
        // `(x / limit) * 1e9` at least `m + 1` after its two roundings (each
        // off by a relative 2^-53 at most, far less than the margin): the
        // wait truncates to more than `m` (and its cap at `i64::MAX` is more
        // too, unless `m` is that cap). Where the bound itself would be
        // subnormal (so imprecise) or infinite, there is no shortcut.
        let bound = limit * ((max_wait as f64) * (1.0 + 1e-12) + 2.0) / 1e9;
        // A deadline of `InfDuration` grants every wait, however long: the
        // wait is capped there too.
        let sure = bound.is_finite() && bound > f64::MIN_POSITIVE * 1e20 && max_wait < i64::MAX;
        let surely_refused = if sure { bound } else { f64::INFINITY };
        GoRate { limit, burst, tokens: burst as f64, last: 0, max_wait, surely_refused }
    }

    /// `advance(t)`: the tokens at `now`, the state unchanged.
    #[inline(always)]
    fn advance(&self, now: u64) -> f64 {
        // `t.Sub(last)` saturates at the largest Duration, as Go's does.
        let elapsed = now.saturating_sub(self.last).min(i64::MAX as u64);
        let tokens = self.tokens + seconds(elapsed) * self.limit;
        let burst = self.burst as f64;
        if tokens > burst { burst } else { tokens }
    }

    /// `durationFromTokens`: the time `tokens` take to refill, truncated to
    /// whole nanoseconds; `InfDuration` (`i64::MAX`) past the largest.
    #[inline(always)]
    fn duration_from_tokens(&self, tokens: f64) -> i64 {
        let d = (tokens / self.limit) * 1e9;
        // Go caps above float64(MaxInt64), which is 2^63; at exactly 2^63
        // its conversion would overflow, and Rust's `as` saturates there.
        if d > i64::MAX as f64 { i64::MAX } else { d as i64 }
    }

    /// `reserveN(now, n, max_wait)` without touching the state: the tokens
    /// left and the wait, if it would be granted.
    #[inline(always)]
    fn reserve(&self, now: u64, n: u32) -> Option<(f64, i64)> {
        let tokens = self.advance(now) - f64::from(n);
        if -tokens > self.surely_refused {
            return None;
        }
        let wait = if tokens < 0.0 { self.duration_from_tokens(-tokens) } else { 0 };
        (u64::from(n) <= self.burst && wait <= self.max_wait).then_some((tokens, wait))
    }
}

impl Limiter for GoRate {
    #[inline]
    fn decide(&mut self, now: Nanos, cost: u32) -> Decision {
        // A request for nothing takes nothing, as for every limiter here.
        // Go's `AllowN(t, 0)` is granted too, but brings `tokens` and
        // `last` up to `t`, which in float64 can move a later rounding; the
        // engine always asks 1.
        if cost == 0 {
            return Decision::Admit;
        }
        let now = now.get();
        match self.reserve(now, cost) {
            Some((tokens, wait)) => {
                self.last = now;
                self.tokens = tokens;
                if wait == 0 { Decision::Admit } else { Decision::Delay(Nanos::new(wait as u64)) }
            }
            None => Decision::Reject,
        }
    }

    /// The first instant at which `reserveN` would grant the request, the
    /// state unchanged: found on Go's own arithmetic, which only ever grants
    /// more as time passes (the tokens never fall and the wait never grows),
    /// so the answer is exact to the nanosecond. The estimate from the
    /// tokens lacking is nearly always within a few nanoseconds of it;
    /// from there a search that doubles its step finds it in O(log) steps
    /// however far the float rounding put it. `None` when the cost is over
    /// the burst (never granted) or the instant is past the last
    /// nanosecond.
    fn retry_at(&self, now: Nanos, cost: u32) -> Option<Nanos> {
        if u64::from(cost) > self.burst {
            return None;
        }
        let now = now.get();
        let ok = |t: u64| self.reserve(t, cost).is_some();
        if ok(now) {
            return Some(Nanos::new(now));
        }
        let lacking = f64::from(cost) - self.advance(now);
        let wait = self.duration_from_tokens(lacking).saturating_sub(self.max_wait).max(1) as u64;
        let guess = now.saturating_add(wait);
        // `bad` is refused, `good` granted: the answer is in (bad, good].
        let (mut bad, mut good);
        if ok(guess) {
            // Down from a granted guess, doubling the step while granted.
            (bad, good) = (now, guess);
            let mut step = 1u64;
            while good - bad > step && ok(good - step) {
                good -= step;
                step = step.saturating_mul(2);
            }
            bad = bad.max(good - step.min(good));
        } else {
            // Up from a refused guess, doubling the step, to the last
            // nanosecond at most.
            bad = guess;
            let mut step = 1u64;
            loop {
                if bad == u64::MAX {
                    return None;
                }
                let next = bad.saturating_add(step);
                if ok(next) {
                    good = next;
                    break;
                }
                bad = next;
                step = step.saturating_mul(2);
            }
        }
        while good - bad > 1 {
            let mid = bad + (good - bad) / 2;
            if ok(mid) { good = mid } else { bad = mid }
        }
        Some(Nanos::new(good))
    }

    fn peak_state(&self) -> StateSize {
        // tokens and last.
        StateSize { entries: 1, bytes: 16 }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn go(limit: f64, burst: u64) -> GoRate {
        GoRate::new(limit, burst, 0)
    }

    fn waiting(limit: f64, burst: u64, max_wait: u64) -> GoRate {
        GoRate::new(limit, burst, max_wait)
    }

    /// x/time/rate's `d`: 100 ms.
    fn d(k: u64) -> Nanos {
        Nanos::from_millis(100 * k)
    }

    /// `TokensAt`, then `AllowN`, as the package's own `run` helper checks
    /// them (`allow{t, toks, n, ok}`). Its t0 is `time.Now()`, the first
    /// call fills the bucket; here t0 is 1 s into the run (the bucket is
    /// already full then, and the tokens are compared exactly).
    fn run(lim: &mut GoRate, steps: &[(u64, f64, u32, bool)]) {
        let t0 = Nanos::from_secs(1).get();
        for (i, &(t, toks, n, ok)) in steps.iter().enumerate() {
            let at = Nanos::new(t0 + d(t).get());
            assert_eq!(lim.advance(at.get()), toks, "step {i}: TokensAt");
            assert_eq!(lim.decide(at, n).admitted(), ok, "step {i}: AllowN");
        }
    }

    /// `TestLimiterBurst1`.
    #[test]
    fn go_test_limiter_burst1() {
        run(
            &mut go(10.0, 1),
            &[
                (0, 1.0, 1, true),
                (0, 0.0, 1, false),
                (0, 0.0, 1, false),
                (1, 1.0, 1, true),
                (1, 0.0, 1, false),
                (1, 0.0, 1, false),
                (2, 1.0, 2, false), // burst size is 1, so n=2 always fails
                (2, 1.0, 1, true),
                (2, 0.0, 1, false),
            ],
        );
    }

    /// `TestLimiterBurst3` (its `n = 0` step: a request for nothing passes).
    #[test]
    fn go_test_limiter_burst3() {
        run(
            &mut go(10.0, 3),
            &[
                (0, 3.0, 2, true),
                (0, 1.0, 2, false),
                (0, 1.0, 1, true),
                (0, 0.0, 1, false),
                (1, 1.0, 4, false),
                (2, 2.0, 1, true),
                (3, 2.0, 1, true),
                (4, 2.0, 1, true),
                (4, 1.0, 1, true),
                (4, 0.0, 1, false),
                (4, 0.0, 1, false),
                (9, 3.0, 3, true),
                (9, 0.0, 0, true),
            ],
        );
    }

    /// `TestLimiter_noTruncationErrors`: `NewLimiter(0.7692307692307693,
    /// 1).Allow()` is true.
    #[test]
    fn go_test_no_truncation_errors() {
        assert_eq!(go(0.7692307692307693, 1).decide(Nanos::from_secs(5), 1), Decision::Admit);
    }

    /// `reserveN` with no bound on the wait, checked as the package's
    /// `runReserve` does: the time to act, in multiples of `d`, rounded to
    /// the nearest.
    fn reserve(lim: &mut GoRate, t: u64, n: u32) -> Option<u64> {
        let t0 = Nanos::from_secs(1).get();
        let at = t0 + d(t).get();
        let act = match lim.decide(Nanos::new(at), n) {
            Decision::Admit => at,
            Decision::Delay(w) => at + w.get(),
            Decision::Reject => return None,
        };
        Some((act - t0 + d(1).get() / 2) / d(1).get())
    }

    /// `TestSimpleReserve`: `NewLimiter(10, 2)`, reserve 2 at t0 (acts at
    /// t0), 2 at t0 (t2), 2 at t3 (t4).
    #[test]
    fn go_test_simple_reserve() {
        let mut lim = waiting(10.0, 2, i64::MAX as u64);
        assert_eq!(reserve(&mut lim, 0, 2), Some(0));
        assert_eq!(reserve(&mut lim, 0, 2), Some(2));
        assert_eq!(reserve(&mut lim, 3, 2), Some(4));
    }

    /// `TestMix`'s reservations and allows on one limiter: n over the
    /// burst refused; an allow that finds the tokens negative refused.
    #[test]
    fn go_test_mix() {
        let mut lim = waiting(10.0, 2, i64::MAX as u64);
        assert_eq!(reserve(&mut lim, 0, 3), None); // n > burst
        assert_eq!(reserve(&mut lim, 0, 2), Some(0));
        // AllowN is reserveN with no wait allowed.
        let allow = |lim: &mut GoRate, t: u64, toks: f64, n: u32| {
            let at = Nanos::from_secs(1).get() + d(t).get();
            assert_eq!(lim.advance(at), toks);
            let mut policing = GoRate {
                max_wait: 0,
                surely_refused: go(lim.limit, lim.burst).surely_refused,
                ..lim.clone()
            };
            let ok = policing.decide(Nanos::new(at), n).admitted();
            if ok {
                *lim = GoRate { max_wait: lim.max_wait, surely_refused: lim.surely_refused, ..policing };
            }
            ok
        };
        assert!(!allow(&mut lim, 1, 1.0, 2)); // not enough tokens
        assert_eq!(reserve(&mut lim, 1, 2), Some(2));
        assert!(!allow(&mut lim, 1, -1.0, 1)); // negative tokens
        assert!(allow(&mut lim, 3, 1.0, 1));
    }

    /// `TestReserveMax`: `NewLimiter(10, 2)`, `maxT = d`: 2 at t0 (t0),
    /// 1 at t0 (t1), 1 at t0 refused (it would act at t2), 1 at t2 (t2).
    #[test]
    fn go_test_reserve_max() {
        let mut lim = waiting(10.0, 2, d(1).get());
        assert_eq!(reserve(&mut lim, 0, 2), Some(0));
        assert_eq!(reserve(&mut lim, 0, 1), Some(1));
        assert_eq!(reserve(&mut lim, 0, 1), None);
        assert_eq!(reserve(&mut lim, 2, 1), Some(2));
    }

    /// `TestLongRunningQPS`: `NewLimiter(100, 100)`, one request every 2 ms
    /// for 5 s: at most burst + 100 x 5 s + 1 = 601 admitted, and at least
    /// `int32(0.999 * 600)` = 599.
    #[test]
    fn go_test_long_running_qps() {
        let mut lim = go(100.0, 100);
        let mut ok = 0u64;
        let mut t = Nanos::from_secs(1).get();
        let end = t + Nanos::from_secs(5).get();
        while t < end {
            ok += u64::from(lim.decide(Nanos::new(t), 1).admitted());
            t += Nanos::from_millis(2).get();
        }
        assert!((599..=601).contains(&ok), "{ok}");
    }

    /// `AllowN` admits a request that finds the bucket short by less than
    /// one nanosecond's refill, since its wait truncates to 0 ns. At 1 per
    /// second, burst 1: 999 999 999 ns after the first request the bucket
    /// holds 0.999999999, short by 9.999999717e-10 tokens, a wait of
    /// 0.99999997 ns, truncated to 0: admitted 1 ns before its token is
    /// whole, and the tokens are left below zero. 1 ns earlier the wait is
    /// 2 ns: refused.
    #[test]
    fn allow_admits_a_request_short_by_under_a_nanosecond_of_refill() {
        let mut lim = go(1.0, 1);
        assert_eq!(lim.decide(Nanos::ZERO, 1), Decision::Admit);
        assert_eq!(lim.clone().decide(Nanos::new(999_999_998), 1), Decision::Reject);
        assert_eq!(lim.retry_at(Nanos::new(999_999_998), 1), Some(Nanos::new(999_999_999)));
        assert_eq!(lim.decide(Nanos::new(999_999_999), 1), Decision::Admit);
        assert!(lim.tokens < 0.0 && lim.tokens > -1e-9, "{}", lim.tokens);
        // The next token is whole at 2 s; Go grants it at 2 s - 1 ns again,
        // the debt paid first.
        assert_eq!(lim.clone().decide(Nanos::new(1_999_999_998), 1), Decision::Reject);
        assert_eq!(lim.decide(Nanos::new(1_999_999_999), 1), Decision::Admit);
    }

    #[test]
    fn seconds_is_go_duration_seconds() {
        assert_eq!(seconds(1_500_000_000), 1.5);
        assert_eq!(seconds(100_000_000), 0.1);
        assert_eq!(seconds(0), 0.0);
        // 2.5 s as `time.Duration(2.5 * float64(time.Second))`.
        assert_eq!(1.0 / seconds(2_500_000_000), 0.4);
    }

    #[test]
    fn the_limit_is_l_over_w_or_every_or_given() {
        let limit = Limit { requests: 100, window: Nanos::from_secs(1) };
        assert_eq!(GoRateSpec::DEFAULT.events_per_second(limit), 100.0);
        let every = GoRateSpec { limit: GoLimit::Every(Nanos::from_millis(10)), ..GoRateSpec::DEFAULT };
        // rate.Every(10 * time.Millisecond): 1 / 0.01, which float64 makes 100.
        assert_eq!(every.events_per_second(limit), 100.0);
        let minute = Limit { requests: 100, window: Nanos::from_secs(60) };
        assert_eq!(GoRateSpec::DEFAULT.events_per_second(minute), 100.0 / 60.0);
    }

    proptest! {
        /// With nothing else arriving, a request at the advertised instant
        /// is granted and one 1 ns earlier is not: exact for `AllowN` and
        /// for `WaitN`, whatever the float rounding does.
        #[test]
        fn retry_at_is_the_first_granted_instant(
            limit in prop_oneof![0.001f64..1e7, Just(1.0), Just(0.7692307692307693), Just(3.0)],
            burst in 1u64..20,
            max_wait in prop_oneof![Just(0u64), 0u64..2_000_000_000],
            gaps in proptest::collection::vec(0u64..400_000_000, 1..40),
            cost in 1u32..4,
        ) {
            let mut lim = waiting(limit, burst, max_wait);
            let mut t = 0u64;
            for g in gaps {
                t += g;
                if lim.decide(Nanos::new(t), cost) == Decision::Reject {
                    let Some(at) = lim.retry_at(Nanos::new(t), cost) else {
                        prop_assert!(u64::from(cost) > burst);
                        continue;
                    };
                    prop_assert!(at.get() > t);
                    prop_assert!(lim.clone().decide(at, cost).admitted(), "at {}", at.get());
                    prop_assert_eq!(lim.clone().decide(Nanos::new(at.get() - 1), cost), Decision::Reject);
                }
            }
        }

        /// The shortcut that refuses a large lack without dividing refuses
        /// only what Go's division would: at any limit (log-uniform from
        /// 1e-300 to 1e300), deadline, state and time.
        #[test]
        fn the_sure_refusal_is_sure(
            exp in -300.0f64..300.0,
            mantissa in 1.0f64..10.0,
            burst in 1u64..1000,
            max_wait in prop_oneof![Just(0u64), 0u64..10, 0u64..u64::MAX],
            tokens in -1e6f64..1e3,
            last in 0u64..1u64 << 40,
            dt in prop_oneof![0u64..10, 0u64..1u64 << 40],
            cost in 1u32..2000,
        ) {
            let limit = mantissa * 10f64.powf(exp);
            let mut lim = waiting(limit, burst, max_wait);
            lim.tokens = tokens.min(burst as f64);
            lim.last = last;
            let plain = GoRate { surely_refused: f64::INFINITY, ..lim.clone() };
            prop_assert_eq!(lim.reserve(last + dt, cost), plain.reserve(last + dt, cost));
        }

        /// `max_wait = 0` is `AllowN`: the same decisions as the policing
        /// limiter; and what a waiting limiter grants it grants at once
        /// whenever the policing one would have.
        #[test]
        fn waits_are_reservations(
            limit in 0.01f64..1e4,
            burst in 1u64..10,
            gaps in proptest::collection::vec(0u64..50_000_000, 1..60),
        ) {
            let mut policing = go(limit, burst);
            let mut zero = waiting(limit, burst, 0);
            let mut t = 0;
            for g in gaps {
                t += g;
                prop_assert_eq!(policing.decide(Nanos::new(t), 1), zero.decide(Nanos::new(t), 1));
            }
        }
    }

    /// Against the exact bucket (credit in integers): where L tokens per W
    /// and the times make every float exact, the same decisions.
    #[test]
    fn matches_the_exact_bucket_where_floats_are_exact() {
        use crate::limiter::{ContinuousBucket, Initial};
        let limit = Limit { requests: 10, window: Nanos::from_secs(1) };
        let mut exact = ContinuousBucket::new(limit, 3, Initial::Full);
        let mut lim = go(10.0, 3);
        // Every 25 ms, in bursts of three on each 100 ms: 1/4 and whole tokens.
        for k in 0..400u64 {
            let t = Nanos::from_millis(25 * k);
            for _ in 0..(1 + 2 * u64::from(k % 4 == 0)) {
                assert_eq!(lim.decide(t, 1), exact.decide(t, 1), "at {t:?}");
            }
        }
    }
}
