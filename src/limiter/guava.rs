//! Guava's `RateLimiter.create(permitsPerSecond)` (`guava`): a SmoothBursty
//! limiter that delays rather than rejects. It starts empty, stores up to
//! `max_burst_seconds` (1 s) of unused permits, and the next caller pays
//! the previous one's debt: a request is granted at once and pushes the
//! time the *next* one may start. `acquire()` waits as long as it takes;
//! with `timeout`, `tryAcquire(timeout)` refuses a request that would wait
//! longer.
//!
//! Followed: Guava 33 (`SmoothRateLimiter.java`, `RateLimiter.java`), with
//! its own arithmetic: microseconds (`long`, the stopwatch truncating
//! nanoseconds) and `double` permits and intervals, so these decisions are
//! Guava's, float rounding included:
//!
//! ```java
//! void resync(long nowMicros) {
//!   if (nowMicros > nextFreeTicketMicros) {
//!     double newPermits = (nowMicros - nextFreeTicketMicros) / coolDownIntervalMicros();
//!     storedPermits = min(maxPermits, storedPermits + newPermits);
//!     nextFreeTicketMicros = nowMicros;
//!   }
//! }
//! final long reserveEarliestAvailable(int requiredPermits, long nowMicros) {
//!   resync(nowMicros);
//!   long returnValue = nextFreeTicketMicros;
//!   double storedPermitsToSpend = min(requiredPermits, this.storedPermits);
//!   double freshPermits = requiredPermits - storedPermitsToSpend;
//!   long waitMicros = storedPermitsToWaitTime(this.storedPermits, storedPermitsToSpend) // 0: bursty
//!       + (long) (freshPermits * stableIntervalMicros);
//!   this.nextFreeTicketMicros = LongMath.saturatedAdd(nextFreeTicketMicros, waitMicros);
//!   this.storedPermits -= storedPermitsToSpend;
//!   return returnValue;
//! }
//! // RateLimiter: wait = max(momentAvailable - nowMicros, 0);
//! // tryAcquire: canAcquire = nextFreeTicketMicros - timeoutMicros <= nowMicros
//! ```
//!
//! `create` starts the stopwatch (`Stopwatch.createStarted()`, read as
//! `elapsed(MICROSECONDS)`, which truncates) and sets `stableIntervalMicros =
//! 1e6 / permitsPerSecond`, `maxPermits = maxBurstSeconds * permitsPerSecond`,
//! `storedPermits = 0`, `nextFreeTicketMicros = 0`. Without client keys the
//! limiter is created at time 0 of the run. With client keys each key's is
//! created at the key's first request
//! ([`Limiter::create_on_first_request`]), as an application that calls
//! `create` when it first sees a key: it starts empty at that instant, and
//! its stopwatch counts whole microseconds from it.

use serde::Deserialize;
use toml::Spanned;

use super::{Algorithm, Decision, Limit, Limiter, StateSize, Style};
use crate::scenario::{Entry, ScenarioError};
use crate::time::{Nanos, format_duration};

/// `kind = "guava"`: `permits_per_second` (`None`: `L / W` of the limit it
/// is built with, so on nodes in local mode each node's own limit),
/// `max_burst_seconds` (default 1.0, as `RateLimiter.create`), `timeout`
/// (`tryAcquire(timeout)`; without it, `acquire()`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GuavaSpec {
    pub permits_per_second: Option<f64>,
    pub max_burst_seconds: f64,
    pub timeout: Option<Nanos>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    #[allow(dead_code)]
    kind: serde::de::IgnoredAny,
    permits_per_second: Option<Spanned<f64>>,
    max_burst_seconds: Option<Spanned<f64>>,
    timeout: Option<Spanned<String>>,
}

impl GuavaSpec {
    /// Permits per second, for a limiter built with `limit`: the
    /// scenario's `permits_per_second`, or `L / W`.
    pub fn rate(&self, limit: Limit) -> f64 {
        self.permits_per_second.unwrap_or(limit.requests as f64 * 1e9 / limit.window.get() as f64)
    }
}

impl Algorithm for GuavaSpec {
    type Limiter = Guava;
    const KIND: &'static str = "guava";

    fn parse(entry: &Entry<'_>) -> Result<Vec<Self>, ScenarioError> {
        let keys: Keys = entry.keys()?;
        let permits_per_second =
            keys.permits_per_second.as_ref().map(|v| entry.rate("permits_per_second", v)).transpose()?;
        // One permit per interval 1 / rate: past the end of time (u64::MAX
        // ns, about 584 years) every wait would be clamped there. The
        // slowest rate a limit can give, 1 per u64::MAX ns, is the bound.
        if let (Some(rate), Some(v)) = (permits_per_second, &keys.permits_per_second) {
            let slowest = 1e9 / u64::MAX as f64;
            if rate < slowest {
                return Err(entry.at(
                    v.span(),
                    format!(
                        "`{}` = {rate:e} is too small: one permit every {:.3e} s is past the end of time (about \
584 years of nanoseconds); use at least {slowest:.3e}",
                        entry.key("permits_per_second"),
                        1.0 / rate
                    ),
                ));
            }
        }
        let max_burst_seconds = match &keys.max_burst_seconds {
            None => 1.0,
            Some(v) if v.get_ref().is_finite() && *v.get_ref() >= 0.0 => *v.get_ref(),
            Some(v) => {
                return Err(entry.at(
                    v.span(),
                    format!(
                        "`{}` must be a finite number of at least 0, got {}",
                        entry.key("max_burst_seconds"),
                        v.get_ref()
                    ),
                ));
            }
        };
        let timeout = keys.timeout.as_ref().map(|t| entry.duration_of("timeout", t)).transpose()?;
        Ok(vec![GuavaSpec { permits_per_second, max_burst_seconds, timeout }])
    }

    fn delays(&self) -> bool {
        true
    }

    /// acquire() never refuses, so nothing bounds its queue but the run;
    /// tryAcquire(timeout) keeps `timeout` of permits waiting at most.
    fn queue_advice(&self, limit: Limit) -> String {
        let rate = crate::export::fmt_ratio(self.rate(limit));
        match self.timeout {
            None => format!(
                "`guava` without `timeout` is Guava's acquire(), which never refuses: while requests come faster \
than its {rate} permits per second, each waits behind all the ones before it, and the queue grows for as long as \
the overload lasts. Give it a `timeout` (tryAcquire(timeout) refuses a request that would wait longer, so at most \
timeout × {rate} wait per client key), shorten the scenario's `duration`, or send less traffic"
            ),
            Some(t) => format!(
                "Guava's tryAcquire({}) lets at most timeout × {rate} + 1 requests wait per client key: lower \
`timeout`, or run fewer client keys",
                format_duration(t)
            ),
        }
    }

    /// `tryAcquire(timeout)` refuses until the next free moment is within
    /// `timeout`; `acquire()` never refuses (and has no header to send).
    fn advertises_retry(&self) -> bool {
        self.timeout.is_some()
    }

    fn label(&self) -> String {
        match self.timeout {
            None => "guava".into(),
            Some(t) => format!("guava(timeout={})", format_duration(t)),
        }
    }

    fn build(&self, limit: Limit) -> Guava {
        let rate = self.rate(limit);
        Guava {
            stable_interval_micros: 1e6 / rate,
            max_permits: self.max_burst_seconds * rate,
            stored_permits: 0.0,
            next_free_micros: 0,
            timeout_micros: self.timeout.map(|t| (t.get() / 1000) as i64),
            origin: 0,
            unborn: false,
        }
    }

    fn style(&self) -> Style {
        // acquire() orange, tryAcquire(timeout) a deeper orange: both can
        // be in one delay chart.
        let (short, rgb) = match self.timeout {
            None => ("Guava acquire()".to_string(), (255, 152, 0)),
            Some(t) => (format!("Guava tryAcquire({})", format_duration(t)), (191, 54, 12)),
        };
        Style { rgb, line_width: 3, short }
    }
}

/// Guava's SmoothBursty state.
#[derive(Clone, Debug)]
pub struct Guava {
    stable_interval_micros: f64,
    max_permits: f64,
    stored_permits: f64,
    next_free_micros: i64,
    /// `tryAcquire(timeout)`, or `None` for `acquire()`.
    timeout_micros: Option<i64>,
    /// The run time (ns) at which `create` started the stopwatch.
    origin: u64,
    /// Not created yet: `create` runs at the first decision, and its `now`
    /// becomes `origin` (a client key's limiter).
    unborn: bool,
}

impl Guava {
    fn resync(&mut self, now: i64) {
        if now > self.next_free_micros {
            // SmoothBursty: coolDownIntervalMicros() == stableIntervalMicros.
            let new_permits = (now - self.next_free_micros) as f64 / self.stable_interval_micros;
            self.stored_permits = self.max_permits.min(self.stored_permits + new_permits);
            self.next_free_micros = now;
        }
    }

    /// `reserveEarliestAvailable`: the moment the request may go.
    fn reserve(&mut self, permits: u32, now: i64) -> i64 {
        self.resync(now);
        let moment = self.next_free_micros;
        let required = f64::from(permits);
        let from_stored = required.min(self.stored_permits);
        let fresh = required - from_stored;
        let wait = (fresh * self.stable_interval_micros) as i64;
        self.next_free_micros = self.next_free_micros.saturating_add(wait);
        self.stored_permits -= from_stored;
        moment
    }
}

impl Limiter for Guava {
    fn decide(&mut self, now: Nanos, cost: u32) -> Decision {
        if self.unborn {
            // `create` at this instant: the stopwatch starts now, and its
            // first reading (`setRate`'s resync at 0) changes nothing.
            self.origin = now.get();
            self.unborn = false;
        }
        // The stopwatch reads whole microseconds since creation.
        let now_micros = (now.get().saturating_sub(self.origin) / 1000) as i64;
        if let Some(timeout) = self.timeout_micros
            && self.next_free_micros - timeout > now_micros
        {
            return Decision::Reject;
        }
        let wait = (self.reserve(cost.max(1), now_micros) - now_micros).max(0);
        // A wait longer than u64::MAX ns (584 years: a very slow rate, with
        // requests queued behind its permits) goes on at the end of time:
        // the engine stops `now + d` at u64::MAX.
        if wait == 0 {
            Decision::Admit
        } else {
            Decision::Delay(Nanos::new((wait as u64).saturating_mul(1000)))
        }
    }

    /// `tryAcquire(timeout)` succeeds once `nextFreeTicketMicros - timeout
    /// <= nowMicros`, and the stopwatch reads `floor((t - origin) / 1 us)`:
    /// the first such `t` is `origin + (nextFreeTicketMicros - timeout) *
    /// 1000` ns. A refusal reserves nothing, so that is exact. `None` when
    /// that is past the last nanosecond: no request is admitted then.
    fn retry_at(&self, _now: Nanos, _cost: u32) -> Option<Nanos> {
        let timeout = self.timeout_micros?;
        let micros = self.next_free_micros.saturating_sub(timeout).max(0) as u64;
        let at = u128::from(self.origin) + u128::from(micros) * 1000;
        u64::try_from(at).ok().map(Nanos::new)
    }

    /// A client key's limiter: `create` runs at its first request.
    fn create_on_first_request(&mut self) {
        self.unborn = true;
    }

    fn peak_state(&self) -> StateSize {
        // storedPermits and nextFreeTicketMicros.
        StateSize { entries: 1, bytes: 16 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guava(permits_per_second: f64, timeout: Option<Nanos>) -> Guava {
        GuavaSpec { permits_per_second: Some(permits_per_second), max_burst_seconds: 1.0, timeout }
            .build(Limit { requests: 1, window: Nanos::from_secs(1) })
    }

    fn ms(v: u64) -> Nanos {
        Nanos::from_millis(v)
    }

    /// `create(5)`, then `acquire()` every 200 ms: each finds its permit due
    /// just then (the first pays nothing, the empty limiter's first request
    /// is granted at once) and none waits.
    #[test]
    fn acquire_spaced_at_the_rate_never_waits() {
        let mut g = guava(5.0, None);
        for k in 0..10 {
            assert_eq!(g.decide(ms(200 * k), 1), Decision::Admit, "k = {k}");
        }
    }

    /// `create(5)`: `acquire(10)` at once returns at once, and the next
    /// `acquire(1)` pays its debt: 10 x 200 ms = 2 s (the Javadoc example).
    #[test]
    fn the_next_caller_pays_the_previous_debt() {
        let mut g = guava(5.0, None);
        assert_eq!(g.decide(ms(0), 10), Decision::Admit);
        assert_eq!(g.decide(ms(0), 1), Decision::Delay(Nanos::from_secs(2)));
        // And the one after that waits 200 ms more.
        assert_eq!(g.decide(ms(0), 1), Decision::Delay(ms(2200)));
    }

    /// Starts empty, stores at most one second of permits: after 10 idle
    /// seconds at 5 per second, 5 stored permits and one fresh one go at
    /// once (6 immediate), the 7th waits one interval.
    #[test]
    fn stores_one_second_of_permits() {
        let mut g = guava(5.0, None);
        assert_eq!(g.decide(ms(0), 1), Decision::Admit); // next free 200 ms
        let t = ms(10_000);
        for _ in 0..6 {
            assert_eq!(g.decide(t, 1), Decision::Admit);
        }
        assert_eq!(g.decide(t, 1), Decision::Delay(ms(200)));
        assert_eq!(g.decide(t, 1), Decision::Delay(ms(400)));
    }

    /// `tryAcquire(timeout)`: refused without a reservation when the next
    /// free moment is more than `timeout` away; `timeout = 0` is
    /// `tryAcquire()`, which never delays.
    #[test]
    fn try_acquire_with_a_timeout() {
        let mut g = guava(5.0, Some(ms(300)));
        assert_eq!(g.decide(ms(0), 1), Decision::Admit); // next free 200 ms
        assert_eq!(g.decide(ms(0), 1), Decision::Delay(ms(200))); // next free 400 ms
        assert_eq!(g.decide(ms(0), 1), Decision::Reject); // 400 - 300 > 0
        assert_eq!(g.retry_at(ms(0), 1), Some(ms(100)));
        assert_eq!(g.decide(ms(100) - Nanos::new(1), 1), Decision::Reject);
        assert_eq!(g.decide(ms(100), 1), Decision::Delay(ms(300))); // 400 - 300 <= 100
        let mut g = guava(5.0, Some(Nanos::ZERO));
        assert_eq!(g.decide(ms(0), 1), Decision::Admit);
        assert_eq!(g.decide(ms(199), 1), Decision::Reject);
        assert_eq!(g.decide(ms(200), 1), Decision::Admit);
    }

    /// A client key's limiter is created at the key's first request: L = 1
    /// per 1 s, three requests at 10 s find it empty (0, 1 s, 2 s), where
    /// the run's own limiter, created at 0, has stored one permit by then
    /// (0, 0, 1 s). With `timeout`, the retry time counts from creation.
    #[test]
    fn a_key_limiter_is_created_at_its_first_request() {
        let at_zero: Vec<Decision> = {
            let mut g = guava(1.0, None);
            (0..3).map(|_| g.decide(ms(10_000), 1)).collect()
        };
        assert_eq!(at_zero, [Decision::Admit, Decision::Admit, Decision::Delay(ms(1000))]);
        let mut g = guava(1.0, None);
        g.create_on_first_request();
        let decisions: Vec<Decision> = (0..3).map(|_| g.decide(ms(10_000), 1)).collect();
        assert_eq!(decisions, [Decision::Admit, Decision::Delay(ms(1000)), Decision::Delay(ms(2000))]);
        let mut g = guava(1.0, Some(Nanos::ZERO));
        g.create_on_first_request();
        assert_eq!(g.decide(ms(10_000), 1), Decision::Admit);
        assert_eq!(g.decide(ms(10_500), 1), Decision::Reject);
        assert_eq!(g.retry_at(ms(10_500), 1), Some(ms(11_000)));
    }

    /// The stopwatch of a key's limiter counts whole microseconds from the
    /// key's first request, not from time 0: created at 999 ns, it still
    /// reads 0 us at 1998 ns (where a stopwatch started at 0 reads 1 us).
    #[test]
    fn a_key_limiter_truncates_from_its_own_origin() {
        let mut g = guava(1_000_000.0, None);
        g.create_on_first_request();
        assert_eq!(g.decide(Nanos::new(999), 1), Decision::Admit); // next free 1 us
        assert_eq!(g.decide(Nanos::new(1998), 1), Decision::Delay(Nanos::new(1000)));
        let mut g = guava(1_000_000.0, None);
        assert_eq!(g.decide(Nanos::new(999), 1), Decision::Admit);
        assert_eq!(g.decide(Nanos::new(1998), 1), Decision::Admit);
    }

    /// The stopwatch truncates to whole microseconds.
    #[test]
    fn microsecond_clock() {
        let mut g = guava(1_000_000.0, None); // one permit per microsecond
        assert_eq!(g.decide(Nanos::new(999), 1), Decision::Admit); // 0 us
        assert_eq!(g.decide(Nanos::new(999), 1), Decision::Delay(Nanos::new(1000)));
    }

    /// A permit every 2^30 s (a rate a scenario accepts): 18 requests at
    /// once wait 0, 2^30 s, ..., 17 x 2^30 s (about 1.83e19 ns); the 19th
    /// would wait 18 x 2^30 s, past the last nanosecond (about 1.84e19 ns),
    /// and goes on there. (The wait in ns used to be `wait_us * 1000`,
    /// which overflowed: a debug build panicked, a release build wrapped
    /// round and let the 19th through after 27.9 years.)
    #[test]
    fn a_wait_past_the_end_of_time_stops_there() {
        let mut g = guava(1.0 / f64::from(1u32 << 30), None);
        let interval = Nanos::from_secs(1 << 30);
        assert_eq!(g.decide(Nanos::ZERO, 1), Decision::Admit);
        for k in 1..18 {
            assert_eq!(
                g.decide(Nanos::ZERO, 1),
                Decision::Delay(Nanos::new(k * interval.get())),
                "request {k}"
            );
        }
        assert_eq!(Nanos::ZERO.saturating_add(g.decide(Nanos::ZERO, 1).delay()), Nanos::MAX);
    }

    /// `tryAcquire` at the slowest rate a scenario takes (one permit per
    /// 2^64 - 1 ns): after the first permit the next is due at
    /// 18 446 744 073 709 552 us (`(long)` of the `double` interval), past
    /// the last nanosecond, so there is no retry time (it used to say
    /// `u64::MAX`, where the request is refused).
    #[test]
    fn no_retry_time_past_the_end_of_time() {
        let mut g = guava(1e9 / u64::MAX as f64, Some(Nanos::ZERO));
        assert_eq!(g.decide(Nanos::ZERO, 1), Decision::Admit);
        assert_eq!(g.decide(Nanos::ZERO, 1), Decision::Reject);
        assert_eq!(g.retry_at(Nanos::ZERO, 1), None);
        assert_eq!(g.decide(Nanos::MAX, 1), Decision::Reject);
    }
}
