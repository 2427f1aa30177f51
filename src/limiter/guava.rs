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
        // acquire() orange, tryAcquire(timeout) a redder one: both can be
        // in one delay chart. Each 20 or more (CIEDE2000) from the other
        // and from the waiting GCRA's brown, which tryAcquire(2s) follows
        // dashed in `scenarios/shaping.toml`'s (the darker red-orange it
        // had was 15 from it).
        let (short, rgb) = match self.timeout {
            None => ("Guava acquire()".to_string(), (255, 152, 0)),
            Some(t) => (format!("Guava tryAcquire({})", format_duration(t)), (230, 85, 13)),
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
        // A request for nothing takes nothing, as for every limiter here
        // (Guava itself refuses `acquire(0)`; the engine always asks 1).
        if cost == 0 {
            return Decision::Admit;
        }
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
        let wait = (self.reserve(cost, now_micros) - now_micros).max(0);
        // A wait longer than u64::MAX ns (584 years: a very slow rate, with
        // requests queued behind its permits) is held at u64::MAX ns: past
        // the end of time either way, where the engine never releases it.
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
    use proptest::prelude::*;

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

    /// A request for nothing is admitted and takes nothing (it took a
    /// permit, and the next request paid for it): as the contract says of
    /// every limiter.
    #[test]
    fn a_cost_of_zero_takes_nothing() {
        let mut g = guava(5.0, Some(Nanos::ZERO));
        assert_eq!(g.decide(ms(0), 1), Decision::Admit);
        for _ in 0..3 {
            assert_eq!(g.decide(ms(0), 0), Decision::Admit);
        }
        // Still one interval (200 ms) to the next permit, as after one.
        assert_eq!(g.decide(ms(199), 1), Decision::Reject);
        assert_eq!(g.decide(ms(200), 1), Decision::Admit);
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

    // ---- golden values: Guava's own RateLimiterTest -------------------------
    //
    // From `guava-tests/test/com/google/common/util/concurrent/
    // RateLimiterTest.java`. Its `FakeStopwatch` logs every sleep the limiter
    // asks for as `R<seconds>` (`%3.2f`) and moves its clock on by it, so the
    // caller that slept makes its next call that much later; a user sleep
    // (`sleepMillis`) logs `U<seconds>` and moves the clock too. The helper
    // below plays a case the same way on ratesim's limiter: each call is a
    // decision at the fake clock, `Delay(d)` is the sleep `R<d>` (`Admit`
    // is `R0.00`: Guava calls the sleep with 0), a refused `tryAcquire`
    // sleeps not at all. `tryAcquire`'s own timeout is set on the limiter
    // before its call, as the Java passes it with each call.

    #[derive(Clone, Copy)]
    enum Call {
        /// `acquire(permits)`.
        Acquire(u32),
        /// `tryAcquire(permits, timeout, MICROSECONDS)`, the timeout already
        /// clamped at 0 as Guava clamps it (`max(unit.toMicros(timeout), 0)`).
        TryAcquire(u32, i64),
        /// `stopwatch.sleepMillis(ms)`.
        SleepMillis(u64),
    }

    use Call::{Acquire, SleepMillis, TryAcquire};

    /// The FakeStopwatch's event log for `calls`, and what each `tryAcquire`
    /// returned.
    fn fake_stopwatch(g: &mut Guava, calls: &[Call]) -> (Vec<String>, Vec<bool>) {
        let (mut instant, mut events, mut answers) = (Nanos::ZERO, Vec::new(), Vec::new());
        for &call in calls {
            let (permits, timeout) = match call {
                Call::SleepMillis(v) => {
                    instant += ms(v);
                    events.push(format!("U{:.2}", v as f64 / 1e3));
                    continue;
                }
                Call::Acquire(p) => (p, None),
                Call::TryAcquire(p, timeout) => (p, Some(timeout)),
            };
            g.timeout_micros = timeout;
            let d = g.decide(instant, permits);
            if timeout.is_some() {
                answers.push(d.admitted());
            }
            if d.admitted() {
                events.push(format!("R{:.2}", d.delay().get() as f64 / 1e9));
                instant += d.delay();
            }
        }
        (events, answers)
    }

    /// `testSimple`: `create(5.0)`, three `acquire()`: R0.00 (the first
    /// request), R0.20, R0.20. In ratesim's terms: at 0 admitted, at 0
    /// delayed 200 ms, at 200 ms (after that sleep) delayed 200 ms.
    #[test]
    fn guava_test_simple() {
        let (events, _) = fake_stopwatch(&mut guava(5.0, None), &[Acquire(1), Acquire(1), Acquire(1)]);
        assert_eq!(events, ["R0.00", "R0.20", "R0.20"]);
        let mut g = guava(5.0, None);
        let got = [g.decide(ms(0), 1), g.decide(ms(0), 1), g.decide(ms(200), 1)];
        assert_eq!(got, [Decision::Admit, Decision::Delay(ms(200)), Decision::Delay(ms(200))]);
    }

    /// `testSimpleWithWait` and `testSimpleAcquireReturnValues` (0.0, 0.0,
    /// 0.2): a request 200 ms after the first finds its permit due and goes
    /// at once; the next one at the same instant waits 200 ms.
    #[test]
    fn guava_test_simple_with_wait() {
        let calls = [Acquire(1), SleepMillis(200), Acquire(1), Acquire(1)];
        let (events, _) = fake_stopwatch(&mut guava(5.0, None), &calls);
        assert_eq!(events, ["R0.00", "U0.20", "R0.00", "R0.20"]);
    }

    /// `testSimpleAcquireEarliestAvailableIsInPast`: 400 ms after the first
    /// request one permit is stored and one is due: two go at once, the
    /// third waits 0.2 s.
    #[test]
    fn guava_test_simple_acquire_earliest_available_is_in_past() {
        let calls = [Acquire(1), SleepMillis(400), Acquire(1), Acquire(1), Acquire(1)];
        let (events, _) = fake_stopwatch(&mut guava(5.0, None), &calls);
        assert_eq!(events, ["R0.00", "U0.40", "R0.00", "R0.00", "R0.20"]);
    }

    /// `testOneSecondBurst`: two idle seconds store one second of permits
    /// (5, not 10); `acquire(1)`, `acquire(1)`, `acquire(3)` spend them, the
    /// next `acquire(1)` is the free fresh one, the one after waits 0.2 s.
    #[test]
    fn guava_test_one_second_burst() {
        let calls = [
            SleepMillis(1000),
            SleepMillis(1000),
            Acquire(1),
            Acquire(1),
            Acquire(3),
            Acquire(1),
            Acquire(1),
        ];
        let (events, _) = fake_stopwatch(&mut guava(5.0, None), &calls);
        assert_eq!(events, ["U1.00", "U1.00", "R0.00", "R0.00", "R0.00", "R0.00", "R0.20"]);
    }

    /// `testSimpleWeights`: `create(1.0)`, then `acquire` of 1, 1, 2, 4, 8,
    /// 1: each pays the previous one's permits: R0.00, R1.00, R1.00, R2.00,
    /// R4.00, R8.00. With the sleeps, the calls come at 0, 0, 1, 2, 4 and
    /// 8 s.
    #[test]
    fn guava_test_simple_weights() {
        let calls = [Acquire(1), Acquire(1), Acquire(2), Acquire(4), Acquire(8), Acquire(1)];
        let (events, _) = fake_stopwatch(&mut guava(1.0, None), &calls);
        assert_eq!(events, ["R0.00", "R1.00", "R1.00", "R2.00", "R4.00", "R8.00"]);
        let mut g = guava(1.0, None);
        let arrivals = [(0, 1), (0, 1), (1, 2), (2, 4), (4, 8), (8, 1)];
        let got: Vec<Decision> = arrivals.iter().map(|&(s, c)| g.decide(Nanos::from_secs(s), c)).collect();
        let waits = [1, 1, 2, 4, 8].map(|s| Decision::Delay(Nanos::from_secs(s)));
        assert_eq!(got[0], Decision::Admit);
        assert_eq!(got[1..], waits);
    }

    /// `testImmediateTryAcquire` (`create(1)`) and `testTryAcquire_noWaitAllowed`
    /// (`create(5.0)`): `tryAcquire()` / `tryAcquire(0, SECONDS)` takes the
    /// first permit and refuses the next ones, also 100 ms later.
    #[test]
    fn guava_test_try_acquire_no_wait_allowed() {
        let (_, answers) = fake_stopwatch(&mut guava(1.0, None), &[TryAcquire(1, 0), TryAcquire(1, 0)]);
        assert_eq!(answers, [true, false]);
        let calls =
            [TryAcquire(1, 0), TryAcquire(1, 0), TryAcquire(1, 0), SleepMillis(100), TryAcquire(1, 0)];
        let (_, answers) = fake_stopwatch(&mut guava(5.0, None), &calls);
        assert_eq!(answers, [true, false, false, false]);
    }

    /// `testTryAcquire_someWaitAllowed`: `tryAcquire(0 s)` true, then
    /// `tryAcquire(200 ms)` true (it sleeps 200 ms), `tryAcquire(100 ms)`
    /// false (the next permit is 200 ms away), and 100 ms later
    /// `tryAcquire(100 ms)` true.
    #[test]
    fn guava_test_try_acquire_some_wait_allowed() {
        let calls = [
            TryAcquire(1, 0),
            TryAcquire(1, 200_000),
            TryAcquire(1, 100_000),
            SleepMillis(100),
            TryAcquire(1, 100_000),
        ];
        let (events, answers) = fake_stopwatch(&mut guava(5.0, None), &calls);
        assert_eq!(answers, [true, true, false, true]);
        assert_eq!(events, ["R0.00", "R0.20", "U0.10", "R0.10"]);
    }

    /// `testTryAcquire_overflow`: a timeout of `Long.MAX_VALUE` microseconds
    /// does not overflow `nextFreeTicketMicros - timeoutMicros`.
    #[test]
    fn guava_test_try_acquire_overflow() {
        let calls = [TryAcquire(1, 0), SleepMillis(100), TryAcquire(1, i64::MAX)];
        let (_, answers) = fake_stopwatch(&mut guava(5.0, None), &calls);
        assert_eq!(answers, [true, true]);
    }

    /// `testTryAcquire_negative`: `tryAcquire(5, 0, SECONDS)` true (it
    /// reserves one second), then a negative timeout counts as 0: refused
    /// at 0.9 s, granted at 1 s.
    #[test]
    fn guava_test_try_acquire_negative() {
        let calls =
            [TryAcquire(5, 0), SleepMillis(900), TryAcquire(1, 0), SleepMillis(100), TryAcquire(1, 0)];
        let (_, answers) = fake_stopwatch(&mut guava(5.0, None), &calls);
        assert_eq!(answers, [true, false, true]);
    }

    /// `testDoubleMinValueCanAcquireExactlyOnce`: at `Double.MIN_VALUE`
    /// permits per second the interval is infinite: the first `tryAcquire()`
    /// succeeds, the next fails, also `Integer.MAX_VALUE` ms later.
    /// (`RateLimiter.create` takes any positive rate; a scenario refuses
    /// rates this slow, and the limiter still answers as Guava does.)
    #[test]
    fn guava_test_double_min_value_can_acquire_exactly_once() {
        let calls = [TryAcquire(1, 0), TryAcquire(1, 0), SleepMillis(i32::MAX as u64), TryAcquire(1, 0)];
        let (_, answers) = fake_stopwatch(&mut guava(f64::from_bits(1), None), &calls);
        assert_eq!(answers, [true, false, false]);
    }

    /// `testInfinity_Bursty`, its first part: `create(+inf)` grants
    /// `acquire(Integer.MAX_VALUE / 4)`, `/ 2` and `Integer.MAX_VALUE` at
    /// once (the part after `setRate` is not modelled: ratesim's rate is
    /// fixed).
    #[test]
    fn guava_test_infinity_bursty() {
        let max = i32::MAX as u32;
        let calls = [Acquire(max / 4), Acquire(max / 2), Acquire(max)];
        let (events, _) = fake_stopwatch(&mut guava(f64::INFINITY, None), &calls);
        assert_eq!(events, ["R0.00", "R0.00", "R0.00"]);
    }

    // ---- an independent transcription of Guava, as the oracle -----------------

    /// `RateLimiter.create(permitsPerSecond)` with `SleepingStopwatch.
    /// createFromSystemTimer()`, written out from Guava 33's Java
    /// (`RateLimiter.java`, `SmoothRateLimiter.java`: `SmoothBursty`) with
    /// Java's types: `long` microseconds, `double` permits, `(long)` casts as
    /// JLS 5.1.3 defines them and `LongMath.saturatedAdd`. The stopwatch
    /// starts at `started` (ns of the run) and reads
    /// `NANOSECONDS.toMicros(elapsed)`.
    #[derive(Clone, Debug)]
    struct JavaSmoothBursty {
        started: u64,
        max_burst_seconds: f64,
        stored_permits: f64,
        max_permits: f64,
        stable_interval_micros: f64,
        next_free_ticket_micros: i64,
    }

    /// `(long) d`, JLS 5.1.3: NaN is 0, out of range saturates, otherwise
    /// rounds toward zero.
    fn java_long(d: f64) -> i64 {
        if d.is_nan() {
            0
        } else if d >= 9_223_372_036_854_775_807.0 {
            i64::MAX
        } else if d <= -9_223_372_036_854_775_808.0 {
            i64::MIN
        } else {
            d.trunc() as i64
        }
    }

    /// `LongMath.saturatedAdd(a, b)`.
    fn saturated_add(a: i64, b: i64) -> i64 {
        let naive_sum = a.wrapping_add(b);
        if (a ^ b) < 0 || (a ^ naive_sum) >= 0 {
            return naive_sum;
        }
        i64::MAX.wrapping_add(((naive_sum as u64 >> 63) ^ 1) as i64)
    }

    impl JavaSmoothBursty {
        /// `create(permitsPerSecond)`: `new SmoothBursty(stopwatch,
        /// maxBurstSeconds)` (fields 0), then `setRate(permitsPerSecond)`.
        fn create(permits_per_second: f64, max_burst_seconds: f64, started: u64) -> JavaSmoothBursty {
            let mut r = JavaSmoothBursty {
                started,
                max_burst_seconds,
                stored_permits: 0.0,
                max_permits: 0.0,
                stable_interval_micros: 0.0,
                next_free_ticket_micros: 0,
            };
            let now = r.read_micros(started);
            r.do_set_rate(permits_per_second, now);
            r
        }

        fn read_micros(&self, t: u64) -> i64 {
            ((t - self.started) / 1000) as i64
        }

        /// `SmoothRateLimiter.doSetRate(double, long)` and
        /// `SmoothBursty.doSetRate(double, double)`.
        fn do_set_rate(&mut self, permits_per_second: f64, now_micros: i64) {
            self.resync(now_micros);
            self.stable_interval_micros = 1_000_000.0 / permits_per_second;
            let old_max_permits = self.max_permits;
            self.max_permits = self.max_burst_seconds * permits_per_second;
            self.stored_permits = if old_max_permits == f64::INFINITY {
                self.max_permits
            } else if old_max_permits == 0.0 {
                0.0
            } else {
                self.stored_permits * self.max_permits / old_max_permits
            };
        }

        fn resync(&mut self, now_micros: i64) {
            if now_micros > self.next_free_ticket_micros {
                // coolDownIntervalMicros() of SmoothBursty: the stable interval.
                let new_permits =
                    (now_micros - self.next_free_ticket_micros) as f64 / self.stable_interval_micros;
                self.stored_permits = self.max_permits.min(self.stored_permits + new_permits);
                self.next_free_ticket_micros = now_micros;
            }
        }

        fn reserve_earliest_available(&mut self, required_permits: i32, now_micros: i64) -> i64 {
            self.resync(now_micros);
            let return_value = self.next_free_ticket_micros;
            let stored_permits_to_spend = f64::from(required_permits).min(self.stored_permits);
            let fresh_permits = f64::from(required_permits) - stored_permits_to_spend;
            // storedPermitsToWaitTime(...) + (long) (freshPermits * stableIntervalMicros),
            // where SmoothBursty's storedPermitsToWaitTime is 0.
            let wait_micros = java_long(fresh_permits * self.stable_interval_micros);
            self.next_free_ticket_micros = saturated_add(self.next_free_ticket_micros, wait_micros);
            self.stored_permits -= stored_permits_to_spend;
            return_value
        }

        fn reserve_and_get_wait_length(&mut self, permits: i32, now_micros: i64) -> i64 {
            let moment_available = self.reserve_earliest_available(permits, now_micros);
            (moment_available - now_micros).max(0)
        }

        /// `acquire(permits)` at `t`: the microseconds it sleeps.
        fn acquire(&mut self, permits: i32, t: u64) -> i64 {
            let now = self.read_micros(t);
            self.reserve_and_get_wait_length(permits, now)
        }

        /// `tryAcquire(permits, timeout, NANOSECONDS)` at `t`: the
        /// microseconds it sleeps, or `None` for `false`.
        fn try_acquire(&mut self, permits: i32, timeout_nanos: i64, t: u64) -> Option<i64> {
            let timeout_micros = (timeout_nanos / 1000).max(0);
            let now_micros = self.read_micros(t);
            // canAcquire: queryEarliestAvailable(nowMicros) - timeoutMicros <= nowMicros
            if self.next_free_ticket_micros.wrapping_sub(timeout_micros) <= now_micros {
                Some(self.reserve_and_get_wait_length(permits, now_micros))
            } else {
                None
            }
        }
    }

    /// The transcription's answer at `t` as ratesim's outcome: the instant
    /// the caller goes on (its sleep from `t`, stopped at the last
    /// nanosecond), or `None` when refused.
    fn java_call(java: &mut JavaSmoothBursty, timeout: Option<u64>, t: u64, cost: u32) -> Option<u64> {
        let permits = i32::try_from(cost).unwrap();
        let slept = match timeout {
            None => java.acquire(permits, t),
            Some(ns) => java.try_acquire(permits, i64::try_from(ns).unwrap_or(i64::MAX), t)?,
        };
        Some((u128::from(t) + slept as u128 * 1000).min(u128::from(u64::MAX)) as u64)
    }

    fn rates() -> impl Strategy<Value = f64> {
        prop_oneof![
            3 => prop::sample::select(vec![1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 0.5, 1.0 / 3.0, 1000.0, 999_999.0, 1e6, 3e6]),
            3 => 0.01f64..2000.0,
            // One permit a million years, and the slowest a scenario takes
            // (one per 2^64 - 1 ns): waits past the end of time.
            1 => prop::sample::select(vec![1e-9, 1e9 / u64::MAX as f64]),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// The limiter and the transcription of Guava agree on random
        /// traces, `acquire()` and `tryAcquire(timeout)`, created at 0 or at
        /// the first request (a client key's): admitted or refused, and the
        /// instant an admitted request goes on. After each refusal the
        /// advertised retry time is the first instant at which the
        /// transcription's `tryAcquire` succeeds (none if that is past the
        /// last nanosecond).
        #[test]
        fn agrees_with_guava_transcribed(
            rate in rates(),
            max_burst_seconds in prop_oneof![4 => Just(1.0), 1 => prop::sample::select(vec![0.0, 0.5, 2.5, 10.0])],
            timeout in prop_oneof![
                2 => Just(None),
                1 => prop::sample::select(vec![0u64, 999, 1000, 1001, 200_000_000, 1_000_000_000]).prop_map(Some),
                1 => (0u64..3_000_000_000).prop_map(Some),
            ],
            keyed in any::<bool>(),
            first in prop_oneof![Just(0u64), 0u64..5_000_000_000],
            steps in prop::collection::vec((
                prop_oneof![
                    3 => Just(0u64),
                    2 => 0u64..3000,
                    3 => 0u64..400_000_000,
                    1 => 0u64..5_000_000_000,
                ],
                prop_oneof![6 => Just(1u32), 1 => 2u32..10],
            ), 0..200),
        ) {
            let spec = GuavaSpec { permits_per_second: Some(rate), max_burst_seconds, timeout: timeout.map(Nanos::new) };
            let mut l = spec.build(Limit { requests: 1, window: Nanos::from_secs(1) });
            let mut java = (!keyed).then(|| JavaSmoothBursty::create(rate, max_burst_seconds, 0));
            if keyed {
                l.create_on_first_request();
            }
            let mut t = first;
            for (gap, cost) in steps {
                t += gap;
                let java = java.get_or_insert_with(|| JavaSmoothBursty::create(rate, max_burst_seconds, t));
                let want = java_call(java, timeout, t, cost);
                let got = l.decide(Nanos::new(t), cost);
                match want {
                    None => prop_assert_eq!(got, Decision::Reject, "t = {} ns, cost {}", t, cost),
                    Some(at) if at == t => prop_assert_eq!(got, Decision::Admit, "t = {} ns, cost {}", t, cost),
                    Some(at) => {
                        prop_assert!(matches!(got, Decision::Delay(_)), "t = {} ns, cost {}: {:?}, Guava sleeps until {}", t, cost, got, at);
                        prop_assert_eq!(t.saturating_add(got.delay().get()), at, "t = {} ns, cost {}", t, cost);
                    }
                }
                if got != Decision::Reject {
                    continue;
                }
                match l.retry_at(Nanos::new(t), cost) {
                    Some(at) => {
                        prop_assert!(at.get() > t, "retry at {} for a refusal at {}", at, t);
                        prop_assert!(java_call(&mut java.clone(), timeout, at.get(), cost).is_some(), "refused at its retry time {} (t = {})", at, t);
                        prop_assert!(java_call(&mut java.clone(), timeout, at.get() - 1, cost).is_none(), "granted 1 ns before {} (t = {})", at, t);
                    }
                    None => prop_assert!(java_call(&mut java.clone(), timeout, u64::MAX, cost).is_none(), "no retry time at {}", t),
                }
            }
        }
    }
}
