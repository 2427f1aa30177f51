//! Leaky bucket, policing (`leaky_bucket`): nginx's
//! `limit_req zone=... burst=N nodelay`, with nginx's own integer arithmetic.
//!
//! Followed: nginx 1.28.0, `src/http/modules/ngx_http_limit_req_module.c`
//! (byte-identical in every release from 1.19.9 to 1.31.4, blob `2b062a30`).
//! The lines that decide a request, in `ngx_http_limit_req_lookup`:
//!
//! ```c
//! now = ngx_current_msec;
//! ...
//!     ms = (ngx_msec_int_t) (now - lr->last);
//!
//!     if (ms < -60000) {
//!         ms = 1;
//!
//!     } else if (ms < 0) {
//!         ms = 0;
//!     }
//!
//!     excess = lr->excess - ctx->rate * ms / 1000 + 1000;
//!
//!     if (excess < 0) {
//!         excess = 0;
//!     }
//!
//!     *ep = excess;
//!
//!     if ((ngx_uint_t) excess > limit->burst) {
//!         return NGX_BUSY;
//!     }
//!
//!     if (account) {
//!         lr->excess = excess;
//!
//!         if (ms) {
//!             lr->last = now;
//!         }
//!
//!         return NGX_OK;
//!     }
//! ...
//! /* no node for this key yet: a new one, and the request passes */
//! lr->excess = 0;
//! ...
//! if (account) {
//!     lr->last = now;
//!     lr->count = 0;
//!     return NGX_OK;
//! }
//! ```
//!
//! and in `ngx_http_limit_req` (the directive), `rate=` and `burst=`:
//!
//! ```c
//! if (ngx_strncmp(p, "r/s", 3) == 0) { scale = 1; len -= 3; }
//! else if (ngx_strncmp(p, "r/m", 3) == 0) { scale = 60; len -= 3; }
//! rate = ngx_atoi(value[i].data + 5, len - 5);
//! ...
//! ctx->rate = rate * 1000 / scale;
//! ...
//! limit->burst = burst * 1000;
//! ```
//!
//! `ngx_abs(ms)` was nginx's handling of negative elapsed times up to 1.14;
//! since 1.15.0 (commit 7b9bc5d4, "improved handling of negative times") a
//! negative `ms` counts as 0 (or as 1 when more than a minute negative), and
//! `last` only moves when `ms != 0`. ratesim's time never decreases, so `ms`
//! is never negative here; [`elapsed_ms`] keeps nginx's clamps anyway, so
//! the arithmetic is the C line for any input.
//!
//! With `account = 1` (a single `limit_req` in the location, which is what
//! ratesim models) the lookup is the whole decision: admit unless `NGX_BUSY`.
//! `nodelay` (the default here, `nodelay = true`) makes an admitted request
//! pass at once. Without it (`nodelay = false`, nginx's own default) or with
//! `delay = N`, nginx holds it, in `ngx_http_limit_req_account`:
//!
//! ```c
//! if (excess <= (ngx_int_t) (*limit)->delay) {
//!     max_delay = 0;
//! } else {
//!     ctx = (*limit)->shm_zone->data;
//!     max_delay = (excess - (*limit)->delay) * 1000 / ctx->rate;
//! }
//! ```
//!
//! milliseconds, with `limit->delay = delay * 1000` (`nodelay` sets it to
//! `NGX_MAX_INT_T_VALUE / 1000`, no delay ever; neither gives 0), and
//! `excess` the same one the lookup computed for the request. A non-zero
//! `max_delay` holds the request on a timer, in `ngx_http_limit_req_handler`
//! and `ngx_event_timer.h`:
//!
//! ```c
//! ngx_add_timer(r->connection->write, delay);
//! /* ngx_event_add_timer: */ key = ngx_current_msec + timer;
//! /* ngx_event_expire_timers: fires once */ node->key - ngx_current_msec <= 0
//! ```
//!
//! so on the millisecond clock below the request goes on at the start of
//! millisecond `floor(t / 1 ms) + max_delay`, which is up to 1 ms less than
//! `max_delay` after the request.
//! The limiter itself keeps `excess + 1000` (0 before the first request), so
//! a fresh key needs no branch of its own.
//!
//! Differences from a real nginx, all documented in `docs/semantics.md`:
//! - nginx's millisecond clock is taken to tick at every whole millisecond of
//!   virtual time (`ms = floor(t / 1 ms)`), and every request reads the exact
//!   time (nginx caches the time once per event-loop iteration).
//! - A key's node is never expired. nginx deletes a node idle for a minute
//!   whose excess has drained when another key needs room in the zone, and a
//!   later request then starts afresh at `excess = 0`.
//! - nginx computes `ctx->rate * ms` in 64 bits, which wraps for very high
//!   rates after very long idle times (1 000 000 r/s after about 213 days);
//!   ratesim computes the product in 128 bits and never wraps.
//! - A request of cost `c` counts as `c` requests at the same instant, all
//!   admitted or none (nginx has no cost): `e + 1000 * (c - 1) <= burst * 1000`.

use serde::Deserialize;
use toml::Spanned;

use super::{Algorithm, Decision, Limit, Limiter, StateSize, Style};
use crate::scenario::{Counts, Entry, ScenarioError, Whole};
use crate::time::{Nanos, format_duration};

/// Nanoseconds per millisecond: nginx's clock resolution.
const NS_PER_MS: u64 = 1_000_000;

/// One request, in nginx's unit of excess (milli-requests).
const ONE: u64 = 1000;

/// The largest `burst`: nginx computes `burst * 1000` in an `ngx_int_t`.
pub const MAX_BURST: u64 = i64::MAX as u64 / ONE;

/// `kind = "leaky_bucket"`: `burst = 5` or `burst = [0, 5, 10]` (one limiter
/// per value); `nodelay = false` or `delay = N` to delay instead of passing
/// the excess at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeakyBucketSpec {
    /// nginx's `burst=`, in requests (at most `MAX_BURST`).
    pub burst: u64,
    /// nginx's `delay=`, in requests: the first `delay` excess requests pass
    /// at once, later ones wait. `None`: `nodelay`.
    pub delay: Option<u64>,
}

/// nginx's stored rate for a limit of `L` per `W`: milli-requests per second,
/// `floor(L * 1000 * 1 s / W)`. For `W = 1 s` this is `rate=Lr/s`
/// (`L * 1000 / 1`); for `W = 1 min` it is `rate=Lr/m` (`L * 1000 / 60`,
/// truncated as nginx truncates it). For any other `W` it is the value nginx
/// stores for `rate=(L * 60 s / W)r/m` whenever that count is whole, and
/// otherwise the same truncation of the exact rate.
pub fn nginx_rate(limit: Limit) -> u128 {
    u128::from(limit.requests) * u128::from(ONE) * u128::from(Nanos::PER_SECOND)
        / u128::from(limit.window.get())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    kind: Spanned<String>,
    burst: Option<Spanned<Counts>>,
    nodelay: Option<Spanned<bool>>,
    delay: Option<Spanned<Whole>>,
}

impl Algorithm for LeakyBucketSpec {
    type Limiter = LeakyBucket;
    const KIND: &'static str = "leaky_bucket";

    fn parse(entry: &Entry<'_>) -> Result<Vec<Self>, ScenarioError> {
        let keys: Keys = entry.keys()?;
        let limit = entry.limit();
        let rate = nginx_rate(limit);
        if rate == 0 {
            return Err(entry.at(
                keys.kind.span(),
                format!(
                    "kind \"leaky_bucket\" keeps its rate in whole thousandths of a request per second, as nginx does, \
                     and [limit] {} per {} rounds to 0 of them: with {} the window may be at most {}",
                    limit.requests,
                    format_duration(limit.window),
                    crate::export::count_of(limit.requests, "request"),
                    format_duration(Nanos::new(limit.requests.saturating_mul(ONE * Nanos::PER_SECOND))),
                ),
            ));
        }
        if rate > i64::MAX as u128 {
            return Err(entry.at(
                keys.kind.span(),
                format!(
                    "kind \"leaky_bucket\": [limit] {} per {} is {rate} thousandths of a request per second, more than \
                     nginx's integer rate holds (at most {})",
                    limit.requests,
                    format_duration(limit.window),
                    i64::MAX,
                ),
            ));
        }
        let delay = delay(entry, &keys)?;
        let bursts = match keys.burst {
            None => vec![("burst".to_string(), Spanned::new(entry.span(), Whole(0)))],
            Some(b) => entry.counts("burst", b, "give at least one burst, like [0, 5]")?,
        };
        bursts
            .iter()
            .map(|(key, b)| {
                let v = b.get_ref().0;
                if v < 0 {
                    return Err(entry.at(
                        b.span(),
                        format!("`{}` must be a whole number of at least 0, got {v}", entry.key(key)),
                    ));
                }
                if v > i128::from(MAX_BURST) {
                    return Err(entry.at(
                        b.span(),
                        format!(
                            "`{}` = {v} is too large: nginx keeps burst x 1000 in a 64-bit integer, so the most is {MAX_BURST}",
                            entry.key(key)
                        ),
                    ));
                }
                if let (Some(d), Some(k)) = (delay, &keys.delay)
                    && d > v as u64
                {
                    return Err(entry.at(
                        k.span(),
                        format!(
                            "`{}` = {d} is more than `{key}` = {v}: no admitted request would ever wait (nginx accepts \
                             this and never delays); for that write `nodelay = true`, or give a delay up to the burst",
                            entry.key("delay")
                        ),
                    ));
                }
                Ok(LeakyBucketSpec { burst: v as u64, delay })
            })
            .collect()
    }

    fn delays(&self) -> bool {
        self.delay.is_some()
    }

    /// nginx's queue: the excess over `delay` waits, and the excess never
    /// passes `burst`.
    fn queue_advice(&self, _limit: Limit) -> String {
        let Some(d) = self.delay else { return String::new() };
        format!(
            "nginx's limit_req without nodelay lets about burst - delay = {} requests wait per client key: \
lower `burst`, or run fewer client keys",
            self.burst.saturating_sub(d)
        )
    }

    fn advertises_retry(&self) -> bool {
        true
    }

    fn label(&self) -> String {
        let mut parts = Vec::new();
        if self.burst != 0 {
            parts.push(format!("burst={}", self.burst));
        }
        if let Some(d) = self.delay {
            parts.push(format!("delay={d}"));
        }
        if parts.is_empty() { "leaky_bucket".into() } else { format!("leaky_bucket({})", parts.join(";")) }
    }

    fn build(&self, limit: Limit) -> LeakyBucket {
        let mut l = LeakyBucket::new(limit, self.burst);
        l.delay = self.delay.map(|d| d.saturating_mul(ONE));
        l
    }

    fn style(&self) -> Style {
        // Shaping ones are told apart in the delay charts: all excess
        // delayed (nginx without nodelay) darker, the two-stage `delay = N`
        // lighter and bluer; each 20 or more (CIEDE2000) from the others
        // (the lighter teal it had was 11 from the nodelay one's, in
        // `scenarios/shaping.toml`). Their names stay short enough for a
        // legend with a figure after them.
        let (short, rgb) = match (self.burst, self.delay) {
            (0, None) => ("leaky bucket".to_string(), (0, 150, 136)),
            (b, None) => (format!("leaky bucket, burst {b}"), (0, 150, 136)),
            (b, Some(d)) => {
                (format!("leaky bucket {b}, delay {d}"), if d == 0 { (0, 80, 70) } else { (60, 180, 220) })
            }
        };
        Style { rgb, line_width: 3, short }
    }

    // No sweep traits: with burst > 0 a burst at one instant is admitted in
    // part (burst + 1 of it from a fresh state), so nothing scales with L.
}

/// `nodelay = false` (delay 0) or `delay = N`; `None` for nodelay.
fn delay(entry: &Entry<'_>, keys: &Keys) -> Result<Option<u64>, ScenarioError> {
    match (&keys.nodelay, &keys.delay) {
        (Some(n), Some(_)) if *n.get_ref() => Err(entry.at(
            n.span(),
            format!(
                "`{}` = true and `delay` exclude each other (nginx's directive lists them as alternatives, `nodelay | delay=number`): give one",
                entry.key("nodelay")
            ),
        )),
        (_, Some(d)) => {
            let v = d.get_ref().0;
            if v < 0 || v > i128::from(MAX_BURST) {
                return Err(entry.at(
                    d.span(),
                    format!("`{}` must be a whole number from 0 to {MAX_BURST}, got {v}", entry.key("delay")),
                ));
            }
            Ok(Some(v as u64))
        }
        (Some(n), None) if !*n.get_ref() => Ok(Some(0)),
        _ => Ok(None),
    }
}

/// nginx's elapsed milliseconds since `last`, clamped as nginx clamps them:
/// `ms = (ngx_msec_int_t) (now - lr->last)`, then `ms < -60000` gives 1
/// and a negative `ms` gives 0.
#[inline(always)]
pub fn elapsed_ms(last: u64, now_ms: u64) -> u64 {
    let ms = now_ms.wrapping_sub(last) as i64;
    // The same three cases as two selects, no branch: time never goes back
    // in ratesim, and the hot loop should not pay for the case that it did.
    let negative = u64::from(ms < -60_000);
    if ms >= 0 { ms as u64 } else { negative }
}

/// `ctx->rate * ms / 1000`: the milli-requests leaked in `ms` milliseconds,
/// the product taken before the division, in 128 bits (saturated to u64).
#[inline(always)]
pub fn leaked(rate: u64, ms: u64) -> u64 {
    match rate.checked_mul(ms) {
        Some(p) => p / ONE,
        None => (u128::from(rate) * u128::from(ms) / u128::from(ONE)).min(u128::from(u64::MAX)) as u64,
    }
}

/// One nginx `limit_req` node: `lr->excess` (milli-requests) and `lr->last`
/// (milliseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeakyState {
    pub excess: u64,
    pub last: u64,
}

impl LeakyState {
    /// The excess a request at `now_ms` finds:
    /// `max(lr->excess - rate * ms / 1000 + 1000, 0)`. The decision compares
    /// it with `burst * 1000`; in delaying mode an admitted request waits
    /// `(excess - delay) * 1000 / rate` ms.
    #[inline(always)]
    pub fn excess_at(&self, rate: u64, now_ms: u64) -> u64 {
        self.excess.saturating_add(ONE).saturating_sub(leaked(rate, elapsed_ms(self.last, now_ms)))
    }

    /// The node after admitting at `now_ms` with excess `excess`
    /// (`lr->excess = excess; if (ms) lr->last = now;`).
    #[inline(always)]
    pub fn admitted(&self, excess: u64, now_ms: u64) -> LeakyState {
        let last = if elapsed_ms(self.last, now_ms) != 0 { now_ms } else { self.last };
        LeakyState { excess, last }
    }
}

#[derive(Clone, Debug)]
pub struct LeakyBucket {
    /// `ctx->rate`: milli-requests per second.
    rate: u64,
    /// `limit->burst`: `burst * 1000`.
    burst: u64,
    /// `lr->excess + 1000`, or 0 before the key's first request: that makes
    /// the first request's excess `max(0 - leaked, 0) = 0`, as nginx's new
    /// node, with no separate branch.
    plus: u64,
    /// `lr->last` (0 before the first request, which then moves it).
    last: u64,
    /// `limit->delay` (`delay * 1000`), or `None` for nodelay.
    delay: Option<u64>,
}

impl LeakyBucket {
    /// `burst` in requests. A rate above `u64::MAX` milli-requests per second
    /// and a `burst * 1000` above `u64::MAX` (both refused by scenarios) are
    /// held as `u64::MAX`.
    pub fn new(limit: Limit, burst: u64) -> LeakyBucket {
        assert!(limit.window.get() > 0, "window must be positive");
        let rate = nginx_rate(limit).min(u128::from(u64::MAX)) as u64;
        LeakyBucket { rate, burst: burst.saturating_mul(ONE), plus: 0, last: 0, delay: None }
    }

    /// nginx's stored rate, milli-requests per second.
    pub fn rate(&self) -> u64 {
        self.rate
    }

    /// The key's node, once a request was admitted.
    pub fn state(&self) -> Option<LeakyState> {
        (self.plus != 0).then(|| LeakyState { excess: self.plus - ONE, last: self.last })
    }

    /// 1000 for each request of the cost after the first.
    #[inline(always)]
    fn more(cost: u32) -> u64 {
        ONE * u64::from(cost.saturating_sub(1))
    }
}

impl Limiter for LeakyBucket {
    #[inline(always)]
    fn decide(&mut self, now: Nanos, cost: u32) -> Decision {
        let now_ms = now.get() / NS_PER_MS;
        let ms = elapsed_ms(self.last, now_ms);
        // nginx's excess for the first request of the cost, then 1000 more
        // for each further one.
        let excess = self.plus.saturating_sub(leaked(self.rate, ms)).saturating_add(Self::more(cost));
        if excess > self.burst {
            return Decision::Reject;
        }
        self.plus = excess.saturating_add(ONE);
        if ms != 0 {
            self.last = now_ms;
        }
        match self.delay {
            // ngx_http_limit_req_account: (excess - delay) * 1000 / rate ms.
            Some(delay) if excess > delay && self.rate != 0 => {
                let ms = u128::from(excess - delay) * u128::from(ONE) / u128::from(self.rate);
                if ms == 0 {
                    return Decision::Admit; // `if (!delay)`: it passes
                }
                // ngx_add_timer(wev, delay): the timer's key is
                // `ngx_current_msec + delay`, and it fires when the
                // millisecond clock reaches it: at the start of millisecond
                // `now_ms + ms`, not `ms` after the request's own nanosecond.
                // (A time past u64::MAX ns is past the end of time: the
                // engine never releases the request.)
                let at = (u128::from(now_ms) + ms) * u128::from(NS_PER_MS);
                Decision::Delay(Nanos::new((at - u128::from(now.get())).min(u128::from(u64::MAX)) as u64))
            }
            _ => Decision::Admit,
        }
    }

    fn peak_state(&self) -> StateSize {
        // lr->excess and lr->last.
        StateSize { entries: 1, bytes: 16 }
    }

    /// The first whole millisecond `m` at which
    /// `max(excess + 1000 - floor(rate * (m - last) / 1000), 0) + 1000 (c - 1)`
    /// is at most `burst * 1000`: `m = last + ceil(1000 * need / rate)`, with
    /// `need = excess + 1000 c - burst * 1000` the milli-requests that must
    /// leak first. A request 1 ns earlier is in millisecond `m - 1`, which
    /// leaks less, so it is refused.
    fn retry_at(&self, now: Nanos, cost: u32) -> Option<Nanos> {
        let more = Self::more(cost);
        if more > self.burst {
            return None; // not even an empty bucket takes it
        }
        let need = (u128::from(self.plus) + u128::from(more)).saturating_sub(u128::from(self.burst));
        if need == 0 {
            return Some(now); // fits now (a fresh key, or not just refused)
        }
        if self.rate == 0 {
            return None;
        }
        let ms = (need * u128::from(ONE)).div_ceil(u128::from(self.rate));
        let at = (u128::from(self.last) + ms) * u128::from(NS_PER_MS);
        u64::try_from(at).ok().map(|at| Nanos::new(at.max(now.get())))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use proptest::prelude::*;

    use super::*;
    use crate::limiter::Decision::{Admit, Reject};
    use crate::limiter::{AlgorithmSpec, LimiterSpec};
    use crate::scenario::Scenario;

    fn ms(v: u64) -> Nanos {
        Nanos::from_millis(v)
    }

    fn per_second(requests: u64, burst: u64) -> LeakyBucket {
        LeakyBucket::new(Limit { requests, window: Nanos::from_secs(1) }, burst)
    }

    // ---- golden values, worked from nginx's arithmetic ---------------------

    fn delayed(l: &mut LeakyBucket, burst: u64, delay: Option<u64>) -> &mut LeakyBucket {
        l.burst = burst * ONE;
        l.delay = delay.map(|d| d * ONE);
        l
    }

    /// `rate=1r/s burst=5` (no `nodelay`: nginx's default, delay 0): six
    /// requests at one instant are all admitted, as with nodelay, but the
    /// k-th waits `(excess - 0) * 1000 / 1000` = k - 1 seconds; the seventh
    /// is refused (excess 6000 > 5000).
    #[test]
    fn nginx_burst_5_without_nodelay_spaces_the_burst_one_second_apart() {
        let mut l = per_second(1, 5);
        let l = delayed(&mut l, 5, Some(0));
        assert_eq!(l.decide(ms(0), 1), Admit);
        for k in 1..6 {
            assert_eq!(l.decide(ms(0), 1), Decision::Delay(Nanos::from_secs(k)), "request {k}");
        }
        assert_eq!(l.decide(ms(0), 1), Reject);
        // Nothing changes in what is admitted: nodelay admits the same six.
        assert_eq!(l.state(), Some(LeakyState { excess: 5000, last: 0 }));
    }

    /// nginx's documented two-stage example, `rate=5r/s burst=12 delay=8`,
    /// 25 requests at once: 9 pass at once (the one the rate allows and
    /// the 8 of `delay`), the next 4 wait (excess 9000..12000 over 8000,
    /// times 1000 / 5000: 200, 400, 600, 800 ms), the other 12 are refused.
    #[test]
    fn nginx_two_stage_burst_12_delay_8() {
        let mut l = per_second(5, 12);
        let l = delayed(&mut l, 12, Some(8));
        let decisions: Vec<Decision> = (0..25).map(|_| l.decide(ms(0), 1)).collect();
        assert!(decisions[..9].iter().all(|d| *d == Admit), "{decisions:?}");
        let waits: Vec<Decision> = (200..=800).step_by(200).map(|m| Decision::Delay(ms(m))).collect();
        assert_eq!(decisions[9..13], waits[..]);
        assert!(decisions[13..].iter().all(|d| *d == Reject), "{decisions:?}");
    }

    /// The wait is whole milliseconds, truncated as nginx's integer division
    /// truncates: `rate=3r/s burst=2`, three at once: excess 1000 waits
    /// 1000 * 1000 / 3000 = 333 ms, excess 2000 waits 666 ms.
    #[test]
    fn nginx_delay_truncates_to_the_millisecond() {
        let mut l = per_second(3, 2);
        let l = delayed(&mut l, 2, Some(0));
        assert_eq!(l.decide(ms(0), 1), Admit);
        assert_eq!(l.decide(ms(0), 1), Decision::Delay(ms(333)));
        assert_eq!(l.decide(ms(0), 1), Decision::Delay(ms(666)));
        assert_eq!(l.decide(ms(0), 1), Reject);
    }

    /// `delay` above `burst` is refused (nginx accepts it and then never
    /// delays, so it is almost surely a slip); the limiter itself, given
    /// one, never delays.
    #[test]
    fn delay_above_burst() {
        let e = scenario("burst = 2\ndelay = 5", "1s").unwrap_err();
        assert!(
            e.starts_with("s.toml:11:9:") && e.contains("`limiter[0].delay` = 5 is more than `burst` = 2"),
            "{e}"
        );
        let mut l = per_second(1, 2);
        let l = delayed(&mut l, 2, Some(5));
        let d: Vec<Decision> = (0..4).map(|_| l.decide(ms(0), 1)).collect();
        assert_eq!(d, [Admit, Admit, Admit, Reject]);
    }

    /// The timer counts from the millisecond the request was read in, not
    /// from its nanosecond: `rate=1r/s burst=1`, requests at 0.5 ms and
    /// 0.7 ms (both millisecond 0). The second waits 1000 ms on nginx's
    /// clock and goes on when it reads 1000: at exactly 1 s, 999.3 ms after
    /// it came.
    #[test]
    fn nginx_timer_fires_on_the_millisecond_clock() {
        let mut l = per_second(1, 1);
        let l = delayed(&mut l, 1, Some(0));
        assert_eq!(l.decide(Nanos::new(500_000), 1), Admit);
        assert_eq!(l.decide(Nanos::new(700_000), 1), Decision::Delay(Nanos::new(999_300_000)));
        // Near the end of time the wait is still nginx's: the timer fires
        // at millisecond 18 446 744 073 709 + 1000, past u64::MAX ns (which
        // the engine never reaches), 999 448 395 ns after the request.
        let mut l = per_second(1, 1);
        let l = delayed(&mut l, 1, Some(0));
        let late = Nanos::new(u64::MAX - 10);
        assert_eq!(l.decide(late, 1), Admit);
        assert_eq!(l.decide(late, 1), Decision::Delay(Nanos::new(999_448_395)));
    }

    proptest! {
        /// Delaying changes when an admitted request reaches the backend,
        /// never which requests are admitted: nginx's lookup decides, the
        /// account only computes the wait.
        #[test]
        fn delay_admits_what_nodelay_admits(
            gaps in prop::collection::vec(0u64..400, 1..200),
            requests in 1u64..20,
            burst in 0u64..10,
            delay in 0u64..12,
        ) {
            let limit = Limit { requests, window: Nanos::from_secs(1) };
            let mut plain = LeakyBucket::new(limit, burst);
            let mut shaping = LeakyBucket::new(limit, burst);
            shaping.delay = Some(delay * ONE);
            let mut t = 0;
            for g in gaps {
                t += g;
                let (a, b) = (plain.decide(ms(t), 1), shaping.decide(ms(t), 1));
                prop_assert_eq!(a.admitted(), b.admitted());
                if let Decision::Delay(d) = b {
                    // Never longer than the burst takes to drain.
                    prop_assert!(d.get() <= (burst + 1) * 1_000_000_000 / requests + 1_000_000);
                }
            }
        }
    }

    /// `rate=1r/s burst=5 nodelay`: r = 1 * 1000 / 1 = 1000, burst = 5000.
    /// Six requests at one instant: the first creates the node (excess 0),
    /// the next five find 0+1000, 1000+1000, ... 4000+1000 = 5000 <= 5000;
    /// the seventh finds 6000 > 5000 and is refused (nginx's documented
    /// "burst=5": up to 5 requests beyond the rate pass with nodelay).
    #[test]
    fn nginx_burst_5_admits_six_at_once() {
        let mut l = per_second(1, 5);
        assert_eq!(l.rate(), 1000);
        for i in 0..6 {
            assert_eq!(l.decide(ms(0), 1), Admit, "request {i}");
        }
        assert_eq!(l.state(), Some(LeakyState { excess: 5000, last: 0 }));
        assert_eq!(l.decide(ms(0), 1), Reject);
        // Refused requests leave the node alone.
        assert_eq!(l.state(), Some(LeakyState { excess: 5000, last: 0 }));
        // 999 ms later 1000 * 999 / 1000 = 999 has leaked: 5000 - 999 + 1000
        // = 5001 > 5000. At 1000 ms, 1000 has: 5000 - 1000 + 1000 = 5000.
        assert_eq!(l.state().unwrap().excess_at(1000, 999), 5001);
        assert_eq!(l.decide(ms(999), 1), Reject);
        assert_eq!(l.decide(ms(1000), 1), Admit);
        assert_eq!(l.decide(ms(1000), 1), Reject);
    }

    /// `rate=1r/s` without burst: a second request in the same millisecond
    /// finds 0 - 0 + 1000 = 1000 > 0; one second later 1000 * 1000 / 1000
    /// = 1000 has leaked: 0 - 1000 + 1000 = 0 <= 0, admitted.
    #[test]
    fn nginx_burst_0_one_per_second() {
        let mut l = per_second(1, 0);
        assert_eq!(l.decide(ms(5), 1), Admit);
        assert_eq!(l.decide(Nanos::new(5_999_999), 1), Reject); // still ms 5
        assert_eq!(l.decide(ms(500), 1), Reject); // 1000 - 495 = 505 > 0
        assert_eq!(l.decide(ms(1004), 1), Reject); // 1000 - 999 = 1 > 0
        assert_eq!(l.decide(ms(1005), 1), Admit); // 1000 - 1000 = 0
        assert_eq!(l.decide(ms(2005), 1), Admit);
    }

    /// Elapsed milliseconds are whole milliseconds of the clock, not of the
    /// gap: `rate=1000r/s` (r = 1 000 000, one request per ms) leaks
    /// 1 000 000 * 1 / 1000 = 1000 per elapsed ms.
    #[test]
    fn nginx_elapsed_milliseconds_truncate() {
        let mut l = per_second(1000, 0);
        assert_eq!(l.decide(Nanos::new(0), 1), Admit);
        // 999 999 ns is still ms 0: 0 - 0 + 1000 = 1000 > 0.
        assert_eq!(l.decide(Nanos::new(999_999), 1), Reject);
        // 1 000 000 ns is ms 1: 0 - 1000 + 1000 = 0.
        assert_eq!(l.decide(Nanos::new(1_000_000), 1), Admit);
        // 1 ns apart, but across a millisecond tick: a whole ms elapsed.
        let mut l = per_second(1000, 0);
        assert_eq!(l.decide(Nanos::new(1_999_999), 1), Admit); // ms 1
        assert_eq!(l.decide(Nanos::new(2_000_000), 1), Admit); // ms 2
        // 999 999 ns later is still ms 2: nothing elapsed.
        assert_eq!(l.decide(Nanos::new(2_999_999), 1), Reject);
    }

    /// `rate=2r/s`: r = 2000, 2000 * 499 / 1000 = 998 leaks in 499 ms
    /// (0 - 998 + 1000 = 2 > 0), 1000 in 500 ms (0): one request per 500 ms.
    #[test]
    fn nginx_two_per_second_is_500_ms_apart() {
        let mut l = per_second(2, 0);
        assert_eq!(l.rate(), 2000);
        assert_eq!(l.decide(ms(0), 1), Admit);
        assert_eq!(l.decide(ms(499), 1), Reject);
        assert_eq!(l.decide(ms(500), 1), Admit);
        assert_eq!(l.decide(ms(999), 1), Reject);
        assert_eq!(l.decide(ms(1000), 1), Admit);
    }

    /// `rate=1r/m`: r = 1 * 1000 / 60 = 16 (truncated), so nginx lets one
    /// request through every 62.5 s, not every 60 s: after 60 000 ms,
    /// 16 * 60000 / 1000 = 960 has leaked (0 - 960 + 1000 = 40 > 0); after
    /// 62 499 ms, 999 (1 > 0); after 62 500 ms, 1000 (0).
    #[test]
    fn nginx_rate_per_minute_truncates() {
        let mut l = LeakyBucket::new(Limit { requests: 1, window: Nanos::from_secs(60) }, 0);
        assert_eq!(l.rate(), 16);
        assert_eq!(l.decide(ms(0), 1), Admit);
        assert_eq!(l.decide(ms(60_000), 1), Reject);
        assert_eq!(l.decide(ms(62_499), 1), Reject);
        assert_eq!(l.decide(ms(62_500), 1), Admit);
        // `rate=10r/m`: 10000 / 60 = 166; 1000 leaks after ceil(1000000 / 166)
        // = 6025 ms (166 * 6024 / 1000 = 999).
        let mut l = LeakyBucket::new(Limit { requests: 10, window: Nanos::from_secs(60) }, 0);
        assert_eq!(l.rate(), 166);
        assert_eq!(l.decide(ms(0), 1), Admit);
        assert_eq!(l.decide(ms(6024), 1), Reject);
        assert_eq!(l.decide(ms(6025), 1), Admit);
    }

    /// Windows other than 1 s and 1 min: r = floor(L * 1000 s / W), what
    /// `rate=(L * 60 s / W)r/m` stores when that is whole.
    #[test]
    fn rate_for_other_windows() {
        let r = |requests, window| nginx_rate(Limit { requests, window });
        assert_eq!(r(1, Nanos::from_secs(1)), 1000); // rate=1r/s
        assert_eq!(r(1, Nanos::from_secs(60)), 1000 / 60); // rate=1r/m
        assert_eq!(r(7, Nanos::from_secs(3)), 140 * 1000 / 60); // rate=140r/m: 2333
        assert_eq!(r(1, Nanos::from_secs(2)), 30 * 1000 / 60); // rate=30r/m: 500
        assert_eq!(r(100, Nanos::from_millis(10)), 10_000 * 1000); // rate=10000r/s
        assert_eq!(r(1, Nanos::from_secs(1000)), 1); // no directive gives this
        assert_eq!(r(1, Nanos::new(1_000_000_000_001)), 0); // refused by scenarios
    }

    /// The advertised time for the per-second examples above.
    #[test]
    fn retry_at_is_the_first_millisecond_that_fits() {
        let mut l = per_second(1, 5);
        for _ in 0..6 {
            l.decide(ms(0), 1);
        }
        assert_eq!(l.decide(ms(0), 1), Reject);
        // need = 5000 + 1000 - 5000 = 1000: ceil(1000 * 1000 / 1000) = 1000 ms.
        assert_eq!(l.retry_at(ms(0), 1), Some(ms(1000)));
        // Cost 3 needs 3000: 3000 ms; cost 7 never fits burst 5.
        assert_eq!(l.retry_at(ms(0), 3), Some(ms(3000)));
        assert_eq!(l.retry_at(ms(0), 7), None);
        let mut l = per_second(3, 0); // r = 3000: 1000 leaks in 334 ms
        l.decide(ms(10), 1);
        assert_eq!(l.decide(ms(10), 1), Reject);
        assert_eq!(l.retry_at(ms(10), 1), Some(ms(344)));
        assert_eq!(l.clone().decide(ms(344), 1), Admit);
        assert_eq!(l.clone().decide(Nanos::new(ms(344).get() - 1), 1), Reject);
    }

    #[test]
    fn costs_are_requests_at_one_instant_all_or_none() {
        let mut l = per_second(1, 5);
        assert_eq!(l.decide(ms(0), 7), Reject); // 6000 > 5000, no node made
        assert_eq!(l.state(), None);
        assert_eq!(l.decide(ms(0), 6), Admit); // 0 + 5000
        // 5000 - 2000 + 1000, then 2000 more for the other two: 6000 > 5000.
        assert_eq!(l.decide(ms(2000), 3), Reject);
        // 5000 - 3000 + 1000 + 2000 = 5000.
        assert_eq!(l.decide(ms(3000), 3), Admit);
        assert_eq!(l.state(), Some(LeakyState { excess: 5000, last: 3000 }));
    }

    #[test]
    fn end_of_time_and_huge_rates_do_not_overflow() {
        let mut l = LeakyBucket::new(Limit { requests: u64::MAX / 2, window: Nanos::new(1) }, MAX_BURST);
        assert_eq!(l.rate(), u64::MAX);
        assert_eq!(l.decide(Nanos::ZERO, 1), Admit);
        // Everything has leaked; 1000 * (2^32 - 1) more fits the burst.
        assert_eq!(l.decide(Nanos::MAX, u32::MAX), Admit);
        let mut l = LeakyBucket::new(Limit { requests: 1, window: Nanos::from_secs(1) }, u64::MAX);
        assert_eq!(l.decide(Nanos::ZERO, u32::MAX), Admit);
        assert_eq!(l.decide(Nanos::ZERO, u32::MAX), Admit);
        let mut l = per_second(1, 0);
        assert_eq!(l.decide(Nanos::new(u64::MAX - 1), 1), Admit);
        assert_eq!(l.decide(Nanos::MAX, 1), Reject);
        assert_eq!(l.retry_at(Nanos::MAX, 1), None); // past the last nanosecond
    }

    /// nginx's clamps for a clock that goes backwards (never the case in
    /// ratesim): up to a minute back counts as 0 ms and keeps `last`; more
    /// than a minute back counts as 1 ms and moves `last` back.
    #[test]
    fn negative_elapsed_time_is_clamped_like_nginx() {
        let n = LeakyState { excess: 3000, last: 100_000 };
        assert_eq!(elapsed_ms(n.last, 100_000), 0);
        assert_eq!(elapsed_ms(n.last, 40_000), 0);
        assert_eq!(elapsed_ms(n.last, 39_999), 1);
        assert_eq!(n.excess_at(1000, 40_000), 4000);
        assert_eq!(n.admitted(4000, 40_000), LeakyState { excess: 4000, last: 100_000 });
        assert_eq!(n.admitted(4000, 39_999), LeakyState { excess: 4000, last: 39_999 });
    }

    // ---- a literal transcription of the C, as the oracle --------------------

    /// nginx's lookup written out from the C with `i64` (`ngx_int_t`) and
    /// wrapping `u64` (`ngx_uint_t`) arithmetic; a request of cost `c` is `c`
    /// lookups at the same millisecond on a copy, kept only if all pass.
    /// `ep` is the lookup's `*ep`, the excess the account works from.
    #[derive(Clone, Debug)]
    struct CNode {
        excess: u64, // ngx_uint_t
        last: u64,   // ngx_msec_t
    }

    fn c_lookup(node: &mut Option<CNode>, rate: u64, burst: u64, now: u64, ep: &mut u64) -> bool {
        let Some(lr) = node else {
            // A new node: `*ep = 0`, `lr->excess = 0`, `lr->last = now`.
            *ep = 0;
            *node = Some(CNode { excess: 0, last: now });
            return true;
        };
        let mut ms: i64 = now.wrapping_sub(lr.last) as i64;
        if ms < -60000 {
            ms = 1;
        } else if ms < 0 {
            ms = 0;
        }
        // lr->excess - ctx->rate * ms / 1000 + 1000, in ngx_uint_t, then
        // assigned to an ngx_int_t. (No wrap in these traces: checked below.)
        let product = rate.checked_mul(ms as u64).expect("the oracle's traces never wrap");
        let mut excess: i64 = lr.excess.wrapping_sub(product / 1000).wrapping_add(1000) as i64;
        if excess < 0 {
            excess = 0;
        }
        *ep = excess as u64;
        if excess as u64 > burst {
            return false;
        }
        lr.excess = excess as u64;
        if ms != 0 {
            lr.last = now;
        }
        true
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// The limiter and the C transcription agree on random traces: gaps
        /// around whole milliseconds and around the emission interval, bursts
        /// at one instant, costs up to 3, rates per second and per minute.
        #[test]
        fn agrees_with_the_c_code(
            requests in 1u64..20,
            window_ms in prop::sample::select(vec![1u64, 7, 100, 999, 1000, 1001, 2000, 60_000, 61_000]),
            burst in 0u64..6,
            steps in prop::collection::vec((
                prop_oneof![
                    3 => Just(0u64),
                    3 => 0u64..2_000_000,
                    2 => 0u64..200_000_000,
                    1 => prop::sample::select(vec![999_999u64, 1_000_000, 1_000_001, 500_000_000, 62_500_000_000]),
                ],
                prop_oneof![8 => Just(1u32), 1 => 2u32..4],
            ), 0..200),
        ) {
            let limit = Limit { requests, window: Nanos::from_millis(window_ms) };
            let mut l = LeakyBucketSpec { burst, delay: None }.build(limit);
            let rate = requests * 1_000_000 / window_ms;
            let (b, mut node, mut t) = (burst * 1000, None, 0u64);
            for (gap, cost) in steps {
                t += gap;
                let now = t / 1_000_000;
                let mut copy = node.clone();
                let ok = (0..cost).all(|_| c_lookup(&mut copy, rate, b, now, &mut 0));
                if ok {
                    node = copy;
                }
                prop_assert_eq!(l.decide(Nanos::new(t), cost).admitted(), ok, "t = {} ns, cost {}", t, cost);
            }
        }
    }

    /// `ngx_http_limit_req_account` for the one `limit_req` of the location
    /// (`n = 0`, so its loop over earlier limits runs no time): the delay in
    /// milliseconds, with `limit->delay = delay * 1000`, or
    /// `NGX_MAX_INT_T_VALUE / 1000 * 1000` for `nodelay`.
    fn c_account(ep: u64, limit_delay: u64, rate: u64) -> u64 {
        let excess = ep as i64; // excess = *ep;
        if excess as u64 <= limit_delay {
            0 // max_delay = 0;
        } else {
            // (excess - (*limit)->delay) * 1000 / ctx->rate, in ngx_uint_t.
            (excess as u64).wrapping_sub(limit_delay).wrapping_mul(1000) / rate
        }
    }

    /// `ngx_http_limit_req_handler` after a lookup that passed: `!delay`
    /// passes at once (the request's own instant `t`); otherwise
    /// `ngx_add_timer(wev, delay)` keys the timer at `ngx_current_msec +
    /// delay`, and `ngx_event_expire_timers` fires it once `node->key -
    /// ngx_current_msec <= 0`: on ratesim's millisecond clock (`floor(t /
    /// 1 ms)`) at the instant `key * 1 ms`, stopped at the last nanosecond.
    fn c_release(t: u64, delay_ms: u64) -> u64 {
        if delay_ms == 0 {
            return t;
        }
        let key = u128::from(t / 1_000_000) + u128::from(delay_ms);
        (key * 1_000_000).min(u128::from(u64::MAX)) as u64
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// With `delay = N` (`nodelay = false` is 0) and with `nodelay`, the
        /// limiter and the C transcription agree on every decision: refused
        /// or not, and the instant an admitted request reaches the backend
        /// (`Admit` exactly when nginx passes it at once). A request of cost
        /// `c` is `c` requests at the same instant, all admitted or none; it
        /// reaches the backend when the last of them does.
        #[test]
        fn delay_mode_agrees_with_the_c_code(
            requests in 1u64..20,
            window_ms in prop::sample::select(vec![1u64, 7, 100, 999, 1000, 1001, 2000, 60_000, 61_000]),
            (burst, delay) in (0u64..8).prop_flat_map(|b| (Just(b), prop_oneof![Just(None), (0..=b).prop_map(Some)])),
            steps in prop::collection::vec((
                prop_oneof![
                    3 => Just(0u64),
                    3 => 0u64..2_000_000,
                    2 => 0u64..200_000_000,
                    1 => prop::sample::select(vec![999_999u64, 1_000_000, 1_000_001, 500_000_000, 62_500_000_000]),
                ],
                prop_oneof![8 => Just(1u32), 1 => 2u32..4],
            ), 0..200),
        ) {
            let limit = Limit { requests, window: Nanos::from_millis(window_ms) };
            let mut l = LeakyBucketSpec { burst, delay }.build(limit);
            let rate = requests * 1_000_000 / window_ms;
            let limit_delay = delay.map_or(i64::MAX as u64 / 1000 * 1000, |d| d * 1000);
            let (b, mut node, mut t) = (burst * 1000, None, 0u64);
            for (gap, cost) in steps {
                t += gap;
                let now = t / 1_000_000;
                let mut copy = node.clone();
                let mut release = t;
                let ok = (0..cost).all(|_| {
                    let mut ep = 0;
                    let ok = c_lookup(&mut copy, rate, b, now, &mut ep);
                    release = release.max(c_release(t, c_account(ep, limit_delay, rate)));
                    ok
                });
                let got = l.decide(Nanos::new(t), cost);
                if !ok {
                    prop_assert_eq!(got, Reject, "t = {} ns, cost {}", t, cost);
                    continue;
                }
                node = copy;
                let want = if release == t { Admit } else { Decision::Delay(Nanos::new(release - t)) };
                prop_assert_eq!(got, want, "t = {} ns, cost {}", t, cost);
            }
        }
    }

    // ---- parsing -------------------------------------------------------------

    fn scenario(limiter: &str, window: &str) -> Result<Vec<LimiterSpec>, String> {
        let text = format!(
            "name = \"t\"\n[limit]\nrequests = 10\nwindow = \"{window}\"\n[[traffic]]\nkind = \"burst\"\ncount = 1\n\
             [[limiter]]\nkind = \"leaky_bucket\"\n{limiter}"
        );
        Scenario::parse(&text, Path::new("s.toml")).map(|s| s.limiters).map_err(|e| e.to_string())
    }

    #[test]
    fn parses_defaults_lists_and_labels() {
        let specs = scenario("", "1s").unwrap();
        assert_eq!(specs, [LeakyBucketSpec { burst: 0, delay: None }.into()]);
        assert_eq!(specs[0].label(), "leaky_bucket");
        let specs = scenario("burst = 5", "1s").unwrap();
        assert_eq!(specs, [LeakyBucketSpec { burst: 5, delay: None }.into()]);
        assert_eq!(specs[0].label(), "leaky_bucket(burst=5)");
        let specs = scenario("burst = [0, 5, 20]", "1m").unwrap();
        let labels: Vec<String> = specs.iter().map(|s| s.label()).collect();
        assert_eq!(labels, ["leaky_bucket", "leaky_bucket(burst=5)", "leaky_bucket(burst=20)"]);
        assert_eq!(specs[2].algorithm(), "leaky_bucket");
        assert_eq!(specs[2].sweep_traits(), Default::default());
        // The largest burst (burst x 1000 still fits nginx's i64) parses as
        // itself, and the limiter built from it compares in milli-requests.
        let specs = scenario(&format!("burst = {MAX_BURST}"), "1s").unwrap();
        assert_eq!(specs, [LeakyBucketSpec { burst: MAX_BURST, delay: None }.into()]);
        assert_eq!(specs[0].label(), "leaky_bucket(burst=9223372036854775)");
        let AlgorithmSpec::LeakyBucket(spec) = &specs[0].algorithm else { panic!("{:?}", specs[0]) };
        let l = spec.build(Limit { requests: 10, window: Nanos::from_secs(1) });
        assert_eq!((l.burst, l.rate, l.delay), (9_223_372_036_854_775_000, 10_000, None));
        assert!(l.burst <= i64::MAX as u64);
    }

    #[test]
    fn refuses_bad_bursts_and_rates() {
        let e = scenario("burst = -1", "1s").unwrap_err();
        assert_eq!(e, "s.toml:10:9: `limiter[0].burst` must be a whole number of at least 0, got -1");
        let e = scenario("burst = [2, -3]", "1s").unwrap_err();
        assert!(
            e.starts_with("s.toml:10:13: `limiter[0].burst[1]`") && e.contains("at least 0, got -3"),
            "{e}"
        );
        let e = scenario(&format!("burst = {}", MAX_BURST + 1), "1s").unwrap_err();
        assert!(e.contains("`limiter[0].burst` = 9223372036854776 is too large"), "{e}");
        let e = scenario("burst = []", "1s").unwrap_err();
        assert!(e.contains("`limiter[0].burst` is empty"), "{e}");
        let e = scenario("burst = \"five\"", "1s").unwrap_err();
        assert!(e.starts_with("s.toml:10:9: `limiter[0].burst`: expected a whole number or a list of them (like 10 or [2, 10]), found the string \"five\""), "{e}");
        assert!(e.contains("expected a whole number or a list of them"), "{e}");
        let e = scenario("burst = [1.5]", "1s").unwrap_err();
        assert!(e.contains("`limiter[0].burst[0]`") && e.contains("expected a whole number"), "{e}");
        let e = scenario("brust = 1", "1s").unwrap_err();
        assert!(e.contains("did you mean `burst`"), "{e}");
        // 10 per 10001 s is below a thousandth of a request per second.
        let e = scenario("", "10001s").unwrap_err();
        assert!(e.starts_with("s.toml:9:8:") && e.contains("rounds to 0"), "{e}");
        assert!(e.contains("with 10 requests the window may be at most 10000s"), "{e}");
        // At the bound the rate is 1 milli-request per second (10 x 1000 /
        // 10000), not 0: a request leaks in exactly 1000 s.
        let text = "name = \"t\"\n[limit]\nrequests = 10\nwindow = \"10000s\"\n[[traffic]]\nkind = \"burst\"\n\
                    count = 1\n[[limiter]]\nkind = \"leaky_bucket\"\n";
        let s = Scenario::parse(text, Path::new("s.toml")).unwrap();
        assert_eq!(s.limit, Limit { requests: 10, window: Nanos::from_secs(10_000) });
        assert_eq!(s.limiters, [LeakyBucketSpec { burst: 0, delay: None }.into()]);
        let AlgorithmSpec::LeakyBucket(spec) = &s.limiters[0].algorithm else { panic!("{:?}", s.limiters) };
        let mut l = spec.build(s.limit);
        assert_eq!(l.rate(), 1);
        assert_eq!(l.decide(Nanos::ZERO, 1), Admit);
        assert_eq!(l.decide(ms(999_999), 1), Reject);
        assert_eq!(l.decide(ms(1_000_000), 1), Admit);
    }
}
