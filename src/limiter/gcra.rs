//! Generic cell rate algorithm (`gcra`), as governor and redis-cell run it.
//!
//! Emission interval `T = floor(W / L)` ns (at least 1), burst `b` (default
//! `L`), tolerance `tau = T * (b - 1)`. The state is one time, the theoretical
//! arrival time `tat`, unset until the first admission. A request of cost `c`
//! at `t`, with `tat0 = tat` if set and `t` otherwise:
//!
//! - a cost with `T * (c - 1) > tau` can never be admitted (governor's
//!   `InsufficientCapacity`) and is rejected;
//! - otherwise it is rejected iff `t + tau < tat0 + T * (c - 1)`;
//! - on admission `tat = max(tat0, t) + T * c`.
//!
//! This is governor 0.10's `Gcra::test_n_all_and_update` (`src/gcra.rs`)
//! decision for decision: there `earliest_time = (tat + T*(c-1))
//! .saturating_sub(tau)` and the request is refused iff `t0 < earliest_time`,
//! which is the rule above written without a subtraction;
//! `tests/gcra_governor.rs` drives governor itself side by side with this code.
//! governor's `Quota::per_second(n)` is `L = n`, `W = 1 s`, `b = n` (its
//! `replenish_1_per = 1 s / n` is the same integer division as `T` here).
//! redis-cell's `CL.THROTTLE key max_burst count period` is
//! `b = max_burst + 1` with `T = period / count` (its `limit` is
//! `max_burst + 1`, its tolerance `T * (max_burst + 1)` is `tau + T`).
//!
//! **Shaping** (`max_wait`): a request the rule would refuse may instead
//! wait until it conforms, if that is at most `max_wait` away: it takes its
//! place at once (`tat` moves as for an admission) and reaches the backend
//! at `tat0 + T * (c - 1) - tau`. This is a reservation, queued the way
//! `golang.org/x/time/rate`'s `Reserve`/`WaitN` queues one (waiters leave
//! in the order they came), with governor's arithmetic, not that
//! package's: `tat` moves by `T = floor(W / L)` per request, so waits run
//! up to 1 ns per interval earlier than the exact rate. governor's `until_ready` instead sleeps until the
//! earliest time and checks again, so under contention a later request can
//! take the slot a sleeper waited for; ratesim does not model that race.
//! `max_wait = 0` is the policing limiter, decision for decision.
//!
//! A cost of 1 is decided in `u64` while `tat` fits in it; past `u64::MAX`
//! (within `T * b` of the end of time) and for other costs the rule runs in
//! `u128`, so no sum or product overflows (governor's `u64` would).

use serde::Deserialize;
use toml::Spanned;

use super::{Algorithm, Decision, Limit, Limiter, StateSize, Style};
use crate::scenario::{Counts, Entry, ScenarioError};
use crate::time::{Nanos, format_duration};

/// `kind = "gcra"`: `burst = 10` or `burst = [1, 10, 100]` (one limiter per
/// value); `max_wait = "500ms"` to delay rather than refuse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcraSpec {
    /// The burst `b`; `None` is the default, `L` of the run's limit.
    pub burst: Option<u64>,
    /// How long a request may wait to conform (`None`: it is refused at
    /// once, the policing limiter).
    pub max_wait: Option<Nanos>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    #[allow(dead_code)]
    kind: serde::de::IgnoredAny,
    burst: Option<Spanned<Counts>>,
    max_wait: Option<Spanned<String>>,
}

/// The emission interval `T = max(floor(W / L), 1)`.
pub fn emission_interval(limit: Limit) -> u64 {
    (limit.window.get() / limit.requests.max(1)).max(1)
}

impl Algorithm for GcraSpec {
    type Limiter = Gcra;
    const KIND: &'static str = "gcra";

    fn parse(entry: &Entry<'_>) -> Result<Vec<Self>, ScenarioError> {
        let keys: Keys = entry.keys()?;
        let max_wait = keys.max_wait.as_ref().map(|m| entry.duration_of("max_wait", m)).transpose()?;
        let Some(bursts) = keys.burst else { return Ok(vec![GcraSpec { burst: None, max_wait }]) };
        let limit = entry.limit();
        let t = emission_interval(limit);
        let mut specs = Vec::new();
        for (key, b) in entry.counts("burst", bursts, "give at least one burst")? {
            let v = entry.at_least_one_whole(&key, &b)?;
            // The tolerance is checked on the number as written. Past what
            // an i64 holds every burst is refused in the same words, large
            // or larger: the tolerance's where even the least of them,
            // 2^63, is past the end of time with this T, else (T of 1 or
            // 2 ns) those of every count, below. (2^64 and up once got the
            // tolerance's with T = 1 ns, where 2^63 to 2^64 - 1 got a
            // count's.)
            let judged = v.min(i128::from(i64::MAX) + 1);
            let tolerance = u128::from(t).checked_mul((judged - 1) as u128);
            if tolerance.is_none_or(|tol| tol > u128::from(u64::MAX)) {
                return Err(entry.at(
                    b.span(),
                    format!(
                        "`{}` = {v} is too large for this limit: the tolerance T * (burst - 1), with T = {t} ns, \
                         is past the end of time (about 584 years of nanoseconds)",
                        entry.key(&key),
                    ),
                ));
            }
            // As every count key: at most what an i64 holds.
            let v = entry.count_at_least_one(&key, &b)?;
            let default = v == limit.requests && !entry.node_defaults();
            specs.push(GcraSpec { burst: (!default).then_some(v), max_wait });
        }
        Ok(specs)
    }

    fn label(&self) -> String {
        let mut params = Vec::new();
        if let Some(b) = self.burst {
            params.push(format!("burst={b}"));
        }
        if let Some(m) = self.max_wait {
            params.push(format!("max_wait={}", format_duration(m)));
        }
        if params.is_empty() { "gcra".into() } else { format!("gcra({})", params.join(";")) }
    }

    fn build(&self, limit: Limit) -> Gcra {
        let mut g = Gcra::new(limit, self.burst.unwrap_or(limit.requests));
        if let Some(m) = self.max_wait {
            g.max_wait = u128::from(m.get());
            g.shaping = true;
            g.slow = true;
        }
        g
    }

    fn style(&self) -> Style {
        let mut short = match self.burst {
            None => "GCRA".to_string(),
            Some(b) => format!("GCRA burst {b}"),
        };
        let mut rgb = shade((218, 165, 32), self.burst);
        if let Some(m) = self.max_wait {
            short.push_str(&format!(", waits ≤ {}", format_duration(m)));
            rgb = (rgb.0 / 2 + 40, rgb.1 / 2, rgb.2 / 2 + 60);
        }
        Style { rgb, line_width: 3, short }
    }

    fn advertises_retry(&self) -> bool {
        true
    }

    fn delays(&self) -> bool {
        self.max_wait.is_some()
    }

    /// Waiting requests conform one emission interval apart, all within
    /// `max_wait`: at most `max_wait / T + 1` per key.
    fn queue_advice(&self, limit: Limit) -> String {
        let Some(m) = self.max_wait else { return String::new() };
        let most = m.get() / emission_interval(limit) + 1;
        format!(
            "A GCRA with `max_wait` = {} lets at most max_wait / T + 1 = {most} requests wait per client key \
(T = W / L): lower `max_wait`, or run fewer client keys",
            format_duration(m)
        )
    }

    // No sweep traits: a GCRA admits part of a burst at one instant, so the
    // burst-pair sweep must decide every request.
}

/// `base` for the default parameter; for an explicit one, darker or lighter
/// by the parameter's order of magnitude, so several variants stay apart.
/// A parameter of 1 (`burst = 1`, `capacity = 1`) is the darkest: at 5/8
/// of the base, the token bucket of capacity 1 was 16 (CIEDE2000) from the
/// default one beside it in `scenarios/algorithms.toml`, at 1/2 it is 21.
pub(super) fn shade(base: (u8, u8, u8), param: Option<u64>) -> (u8, u8, u8) {
    let Some(p) = param else { return base };
    // 0 ..= 4, from the number of binary digits: 1, 2-3, 4-7, ... cycle.
    let step = (64 - p.leading_zeros()) % 5;
    let mix = |c: u8| -> u8 {
        let c = u16::from(c);
        let m = match step {
            0 => c,
            1 => c / 2,
            2 => c * 5 / 8,
            3 => c + (255 - c) / 3,
            _ => c + (255 - c) * 3 / 5,
        };
        m as u8
    };
    (mix(base.0), mix(base.1), mix(base.2))
}

/// A GCRA with its parameters resolved against a limit.
#[derive(Clone, Copy, Debug)]
pub struct Gcra {
    /// The emission interval `T`, ns.
    t: u64,
    /// The tolerance `tau = T * (b - 1)`, ns.
    tau: u128,
    /// `tau`, or `u64::MAX` if it is larger: `t + tau` saturated.
    tau_sat: u64,
    /// The theoretical arrival time while it fits in u64 (`wide` unset); 0
    /// while unset (once set it is at least `T >= 1`, as in governor, which
    /// stores "unset" as 0 too).
    tat: u64,
    /// Set once `tat` has passed `u64::MAX` (only near the end of time):
    /// from then on `tat_wide` holds it and every decision takes the u128
    /// path.
    wide: bool,
    tat_wide: u128,
    /// Shaping: a request may wait up to `max_wait` ns to conform; every
    /// decision then takes the u128 path.
    shaping: bool,
    /// `wide || shaping`: the fast path does not apply (one test).
    slow: bool,
    max_wait: u128,
}

impl Gcra {
    /// `burst` must be at least 1.
    #[inline]
    pub fn new(limit: Limit, burst: u64) -> Gcra {
        assert!(burst >= 1, "burst must be at least 1");
        let t = emission_interval(limit);
        let tau = u128::from(t) * u128::from(burst - 1);
        Gcra {
            t,
            tau,
            tau_sat: u64::try_from(tau).unwrap_or(u64::MAX),
            tat: 0,
            wide: false,
            tat_wide: 0,
            shaping: false,
            slow: false,
            max_wait: 0,
        }
    }

    /// `T * (c - 1)`: the weight of a request beyond its first permit.
    #[inline(always)]
    fn extra(&self, cost: u32) -> u128 {
        u128::from(self.t) * u128::from(cost.saturating_sub(1))
    }

    /// The theoretical arrival time, whichever way it is held.
    fn tat(&self) -> u128 {
        if self.wide { self.tat_wide } else { u128::from(self.tat) }
    }

    /// [`Gcra::decide_wide`] on a copy, returned with the decision: the
    /// fast path's caller never hands out its own address, so a limiter
    /// held in a local keeps `tat` in a register across decisions instead
    /// of storing and reloading it every time (`benches/limiters.rs`,
    /// `lib/gcra`).
    #[cold]
    #[inline(never)]
    fn decide_wide_copy(mut self, now: u64, cost: u32) -> (Gcra, Decision) {
        let d = self.decide_wide(now, cost);
        (self, d)
    }

    /// Any cost, any `tat`, in `u128`: the rule as written.
    fn decide_wide(&mut self, now: u64, cost: u32) -> Decision {
        // A request for nothing takes nothing.
        if cost == 0 {
            return Decision::Admit;
        }
        let extra = self.extra(cost);
        let t = u128::from(now);
        let tat = self.tat();
        // An unset tat (0) acts as tat0 = t: given extra <= tau, both
        // t + tau < 0 + extra and t + tau < t + extra are false, and
        // max(0, t) = max(t, t).
        // Shaping admits up to max_wait early and holds the request until
        // it conforms: at tat0 + extra - tau (0, so at once, for an unset tat).
        if extra > self.tau || t + self.tau + self.max_wait < tat + extra {
            return Decision::Reject;
        }
        let next = tat.max(t) + u128::from(self.t) + extra;
        match u64::try_from(next) {
            Ok(next) if !self.wide => self.tat = next,
            _ => (self.wide, self.slow, self.tat_wide) = (true, true, next),
        }
        let due = (tat + extra).saturating_sub(self.tau);
        if due > t {
            // due - t <= max_wait < 2^64.
            Decision::Delay(Nanos::new((due - t) as u64))
        } else {
            Decision::Admit
        }
    }
}

impl Limiter for Gcra {
    #[inline(always)]
    fn decide(&mut self, now: Nanos, cost: u32) -> Decision {
        let t = now.get();
        // The common case in u64: one permit, a tat that fits. There
        // `t + tau < tat` is exact with `t + tau` saturated (a sum past u64
        // is past any u64 tat).
        // One test for "no u128, no shaping" (`slow`) and a branch on the
        // decision: measured back to back, per 65 536 decisions in
        // `benches/limiters.rs`, dense 89 -> 40 us (bare loop 31-33),
        // sparse 55 -> 55 us (bare 39); a whole lane at 1.5x the limit
        // (`benches/engine.rs`, shaping group, refusing gcra) 36.7 -> 32.4 ms
        // per 1M arrivals. A sum past u64 (never, short of the end of time)
        // goes the u128 way, which decides the same.
        if cost == 1 && !self.slow {
            if t.saturating_add(self.tau_sat) < self.tat {
                return Decision::Reject;
            }
            let (next, past) = self.tat.max(t).overflowing_add(self.t);
            if !past {
                self.tat = next;
                return Decision::Admit;
            }
        }
        let (after, d) = self.decide_wide_copy(t, cost);
        *self = after;
        d
    }

    fn peak_state(&self) -> StateSize {
        // One time: the theoretical arrival time.
        StateSize { entries: 1, bytes: 8 }
    }

    /// `tat - tau + T * (c - 1)`: the first `t` at which
    /// `t + tau < tat + T * (c - 1)` no longer holds (governor's
    /// `NotUntil::earliest_possible`); with `max_wait`, that less
    /// `max_wait`, when the request may start to wait. `None` for a cost
    /// above the burst.
    fn retry_at(&self, _now: Nanos, cost: u32) -> Option<Nanos> {
        let extra = self.extra(cost);
        if extra > self.tau {
            return None;
        }
        let at = (self.tat() + extra).saturating_sub(self.tau + self.max_wait);
        u64::try_from(at).ok().map(Nanos::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limiter::Decision::{Admit, Reject};
    use crate::limiter::LimiterSpec;
    use crate::scenario::Scenario;

    fn ms(v: u64) -> Nanos {
        Nanos::from_millis(v)
    }

    fn gcra(requests: u64, window_ms: u64, burst: u64) -> Gcra {
        Gcra::new(Limit { requests, window: ms(window_ms) }, burst)
    }

    /// The limiters of a scenario with `[limit]` 10 per 1 s and this entry.
    fn parse(limiter: &str) -> Result<Vec<LimiterSpec>, String> {
        let text = format!(
            "name = \"t\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[[traffic]]\nkind = \"burst\"\ncount = 1\n\
             [[limiter]]\n{limiter}\n"
        );
        Scenario::parse(&text, std::path::Path::new("s.toml"))
            .map(|s| s.limiters.into_iter().filter(|l| l.algorithm() == "gcra").collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_fresh_limiter_admits_the_burst_then_one_per_t() {
        // L = 10 per 1 s: T = 100 ms, burst 3, tau = 200 ms.
        let mut g = gcra(10, 1000, 3);
        assert_eq!(g.decide(ms(0), 1), Admit); // tat 100
        assert_eq!(g.decide(ms(0), 1), Admit); // tat 200
        assert_eq!(g.decide(ms(0), 1), Admit); // tat 300
        assert_eq!(g.decide(ms(0), 1), Reject); // 0 + 200 < 300
        assert_eq!(g.retry_at(ms(0), 1), Some(ms(100)));
        assert_eq!(g.decide(Nanos::new(99_999_999), 1), Reject);
        assert_eq!(g.decide(ms(100), 1), Admit); // 100 + 200 = 300: equality admits; tat 400
        assert_eq!(g.decide(ms(100), 1), Reject);
        // A long gap: tat is in the past, the next request starts from t.
        assert_eq!(g.decide(ms(10_000), 1), Admit); // tat 10 100
        assert_eq!(g.decide(ms(10_000), 2), Admit); // 10 000 + 200 >= 10 100 + 100; tat 10 300
        assert_eq!(g.decide(ms(10_000), 1), Reject);
    }

    #[test]
    fn a_cost_above_the_burst_is_never_admitted() {
        let mut g = gcra(10, 1000, 3);
        assert_eq!(g.decide(ms(0), 4), Reject);
        assert_eq!(g.retry_at(ms(0), 4), None);
        assert_eq!(g.decide(ms(0), 3), Admit);
        assert_eq!(g.decide(ms(0), 0), Admit); // takes nothing
    }

    #[test]
    fn emission_interval_rounds_down_and_is_at_least_one_ns() {
        assert_eq!(emission_interval(Limit { requests: 3, window: Nanos::new(1_000_000_000) }), 333_333_333);
        assert_eq!(emission_interval(Limit { requests: 7, window: Nanos::new(5) }), 1);
    }

    #[test]
    fn no_overflow_at_the_end_of_time() {
        let mut g = Gcra::new(Limit { requests: 1, window: Nanos::MAX }, 2);
        assert_eq!(g.decide(Nanos::MAX, 2), Admit);
        assert_eq!(g.decide(Nanos::MAX, 1), Reject);
        // tat = MAX + 2 MAX is past u64: no retry time to give.
        assert_eq!(g.retry_at(Nanos::MAX, 1), None);
    }

    #[test]
    fn parse_defaults_lists_and_labels() {
        let one = parse("kind = \"gcra\"").unwrap();
        assert_eq!(one, vec![LimiterSpec::from(GcraSpec { burst: None, max_wait: None })]);
        assert_eq!(one[0].label(), "gcra");
        assert_eq!(one[0].style().short, "GCRA");
        let many = parse("kind = \"gcra\"\nburst = [1, 10, 100]").unwrap();
        let labels: Vec<String> = many.iter().map(|s| s.label()).collect();
        // burst = 10 is L: the default, labelled as such.
        assert_eq!(labels, ["gcra(burst=1)", "gcra", "gcra(burst=100)"]);
        assert_eq!(many[2].style().short, "GCRA burst 100");
        let single = parse("kind = \"gcra\"\nburst = 4").unwrap();
        assert_eq!(single, vec![LimiterSpec::from(GcraSpec { burst: Some(4), max_wait: None })]);
        assert!(!many[0].sweep_traits().bursts_scale_with_limit);
    }

    #[test]
    fn variants_get_different_shades() {
        let rgb = |b| GcraSpec { burst: b, max_wait: None }.style().rgb;
        assert_ne!(rgb(None), rgb(Some(1)));
        assert_ne!(rgb(Some(1)), rgb(Some(10)));
        assert_ne!(rgb(Some(10)), rgb(Some(100)));
    }

    #[test]
    fn parse_errors_are_located() {
        let e = parse("kind = \"gcra\"\nburst = 0").unwrap_err();
        assert!(
            e.contains("s.toml:10:9: `limiter[0].burst` must be a whole number of at least 1, got 0"),
            "{e}"
        );
        let e = parse("kind = \"gcra\"\nburst = [3, -1]").unwrap_err();
        assert!(
            e.contains("s.toml:10:13: `limiter[0].burst[1]` must be a whole number of at least 1, got -1"),
            "{e}"
        );
        let e = parse("kind = \"gcra\"\nburst = []").unwrap_err();
        assert!(e.contains("s.toml:10:9: `limiter[0].burst` is empty"), "{e}");
        let e = parse("kind = \"gcra\"\nburst = 2.5").unwrap_err();
        assert!(e.contains("expected a whole number or a list of them"), "{e}");
        let e = parse("kind = \"gcra\"\nburst = 9223372036854775807").unwrap_err();
        assert!(e.contains("past the end of time"), "{e}");
        // Past i64 and past u64, alone or in a list: the same bound.
        for (burst, key) in [("99999999999999999999", "burst"), ("[2, 99999999999999999999]", "burst[1]")] {
            let e = parse(&format!("kind = \"gcra\"\nburst = {burst}")).unwrap_err();
            assert!(
                e.contains(&format!("`limiter[0].{key}` = 99999999999999999999 is too large for this limit")),
                "{e}"
            );
        }
        let e = parse("kind = \"gcra\"\nbrust = 3").unwrap_err();
        assert!(e.contains("did you mean `burst`?"), "{e}");
    }
}
