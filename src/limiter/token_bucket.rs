//! Token bucket (`token_bucket`), refilled continuously or by a timer.
//!
//! **Continuous** (`refill = "continuous"`, the default): capacity `b`
//! (default `L`), `L` tokens per `W`, added continuously. The level is kept
//! exactly, in integers, as credit = tokens x W: `dt` nanoseconds add
//! `dt * L`, the cap is `b * W`, a request of cost `c` needs `c * W`. Admit
//! iff the credit is at least `c * W`, then subtract it. The bucket exists
//! from time 0, full (`initial = "full"`, the default) or empty
//! (`initial = "empty"`). Full, and with `L` dividing `W`, it makes exactly
//! the decisions of a GCRA with burst `b` (`tests/gcra_token_bucket.rs`).
//! The credit is a `u64` when `b * W` and `L` are below `2^62` (a gap
//! longer than it takes to fill the bucket counts as that long, which
//! keeps every sum in `u64` and changes nothing), a `u128` otherwise.
//!
//! **Shaping** (`max_wait`, continuous only): a request that finds too
//! little credit may take it on credit, if the bucket refills what it lacks
//! within `max_wait`: the credit goes below zero and the request reaches
//! the backend at `ceil((c W - credit) / L)` ns from now, when the refill
//! has paid for it. This is a reservation in the manner of
//! `golang.org/x/time/rate` (`ReserveN`, `WaitN` with a deadline
//! `max_wait` away: refused if `c > b` or the wait is longer), but not its
//! arithmetic: the wait here is rounded up to a whole nanosecond, and the
//! level at the backend time is capped at `b W`, which drops the rounding's
//! fraction when `c = b` (later waiters then drift later, up to 1 ns
//! each); `x/time/rate` truncates `(tokens / limit) * 1e9` in `float64` and
//! caps only at the next request. `docs/semantics.md` ("Shaping") has the
//! figures. Waiters leave in the order they came. `max_wait = 0` is the
//! policing bucket, decision for decision.
//!
//! **Timer** (`refill = "timer"`): Envoy's local rate limit as its fill timer
//! ran it, `LocalRateLimiterImpl` in
//! `source/extensions/filters/common/local_ratelimit/local_ratelimit_impl.cc`
//! (the default up to Envoy 1.30; from 1.31 Envoy refills continuously with
//! `AtomicTokenBucketImpl` in `source/common/common/token_bucket_impl.cc`,
//! which is the continuous mode above with `capacity = max_tokens`, up to
//! Envoy's floating point). `max_tokens` (default `L`), `tokens_per_fill`
//! (default `L * fill_interval / W`, at least 1), `fill_interval` (default
//! `W`). The bucket starts full at time 0 (Envoy's constructor sets
//! `tokens_ = max_tokens`); at every `t = k * fill_interval`, `k >= 1`, the
//! level becomes `min(max_tokens, level + tokens_per_fill)`
//! (`onFillTimerHelper`), before any request at that instant is decided.
//! A request of cost `c` is admitted iff the level is at least `c`, then
//! takes `c` (`requestAllowedHelper` takes 1). Envoy's timer refires
//! `fill_interval` after each callback ran, so a real proxy's fills drift
//! late; here they are exactly on the grid. Envoy also refuses a fill
//! interval under 50 ms; ratesim takes any.

use serde::Deserialize;
use toml::Spanned;

use super::gcra::shade;
use super::{Algorithm, Decision, FastDiv, Limit, Limiter, StateSize, Style};
use crate::scenario::{Counts, Entry, ScenarioError};
use crate::time::{Nanos, format_duration};

/// Whether a continuous bucket starts full or empty (at time 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Initial {
    #[default]
    Full,
    Empty,
}

/// `kind = "token_bucket"`. `None` parameters are the defaults, derived from
/// the run's limit when the limiter is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenBucketSpec {
    /// `refill = "continuous"`: `capacity` (default `L`), `initial`,
    /// `max_wait` (shaping; `None`: refuse at once).
    Continuous { capacity: Option<u64>, initial: Initial, max_wait: Option<Nanos> },
    /// `refill = "timer"`: `max_tokens` (default `L`), `tokens_per_fill`
    /// (default `L * fill_interval / W`, at least 1), `fill_interval`
    /// (default `W`).
    Timer { max_tokens: Option<u64>, tokens_per_fill: Option<u64>, fill_interval: Option<Nanos> },
}

impl TokenBucketSpec {
    /// The default: continuous, capacity `L`, full.
    pub const CONTINUOUS: TokenBucketSpec =
        TokenBucketSpec::Continuous { capacity: None, initial: Initial::Full, max_wait: None };
    /// Envoy's timer bucket with every default.
    pub const TIMER: TokenBucketSpec =
        TokenBucketSpec::Timer { max_tokens: None, tokens_per_fill: None, fill_interval: None };
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    #[allow(dead_code)]
    kind: serde::de::IgnoredAny,
    refill: Option<Spanned<String>>,
    capacity: Option<Spanned<Counts>>,
    initial: Option<Spanned<String>>,
    max_tokens: Option<Spanned<i64>>,
    tokens_per_fill: Option<Spanned<i64>>,
    fill_interval: Option<Spanned<String>>,
    max_wait: Option<Spanned<String>>,
}

const CONTINUOUS_KEYS: &str = "capacity, initial, max_wait";
const TIMER_KEYS: &str = "max_tokens, tokens_per_fill, fill_interval";

/// The timer bucket's parameters, resolved against a limit.
fn timer_params(
    limit: Limit,
    max_tokens: Option<u64>,
    tokens_per_fill: Option<u64>,
    fill_interval: Option<Nanos>,
) -> (u64, u64, u64) {
    let max = max_tokens.unwrap_or(limit.requests);
    let interval = fill_interval.unwrap_or(limit.window).get();
    let per_fill = tokens_per_fill.unwrap_or_else(|| default_per_fill(limit, interval, max));
    (max, per_fill.min(max), interval)
}

/// `L * fill_interval / W`, at least 1. A default above `max_tokens` is
/// `max_tokens`: a fill that adds more than the bucket holds only fills it.
fn default_per_fill(limit: Limit, interval: u64, max_tokens: u64) -> u64 {
    let per = u128::from(limit.requests) * u128::from(interval) / u128::from(limit.window.get());
    u64::try_from(per).unwrap_or(u64::MAX).clamp(1, max_tokens.max(1))
}

impl Algorithm for TokenBucketSpec {
    type Limiter = TokenBucket;
    const KIND: &'static str = "token_bucket";

    fn parse(entry: &Entry<'_>) -> Result<Vec<Self>, ScenarioError> {
        let keys: Keys = entry.keys()?;
        let timer = match &keys.refill {
            None => false,
            Some(r) if r.get_ref() == "continuous" => false,
            Some(r) if r.get_ref() == "timer" => true,
            Some(r) => return Err(entry.one_of("refill", r, &["continuous", "timer"])),
        };
        let limit = entry.limit();
        let wrong_mode = |key: &str, span: std::ops::Range<usize>| {
            let (mode, other, takes) = if timer {
                ("continuous", "refill = \"timer\"", TIMER_KEYS)
            } else {
                ("timer", "refill = \"continuous\" (the default)", CONTINUOUS_KEYS)
            };
            entry.at(
                span,
                format!("`{}` only applies to refill = \"{mode}\"; {other} takes {takes}", entry.key(key)),
            )
        };
        if timer {
            if let Some(c) = &keys.capacity {
                return Err(wrong_mode("capacity", c.span()));
            }
            if let Some(i) = &keys.initial {
                return Err(wrong_mode("initial", i.span()));
            }
            if let Some(m) = &keys.max_wait {
                return Err(entry.at(
                    m.span(),
                    format!(
                        "`{}` only applies to refill = \"continuous\": Envoy's timer bucket never delays a request",
                        entry.key("max_wait")
                    ),
                ));
            }
            let max_tokens =
                keys.max_tokens.as_ref().map(|m| entry.at_least_one("max_tokens", m)).transpose()?;
            let fill_interval = keys
                .fill_interval
                .as_ref()
                .map(|f| entry.positive_duration("fill_interval", f))
                .transpose()?;
            let max = max_tokens.unwrap_or(limit.requests);
            let interval = fill_interval.unwrap_or(limit.window).get();
            let tokens_per_fill = match &keys.tokens_per_fill {
                None => None,
                Some(p) => {
                    let v = entry.at_least_one("tokens_per_fill", p)?;
                    if v > max {
                        return Err(entry.at(
                            p.span(),
                            format!(
                                "`{}` = {v} is more than `max_tokens` ({max}): a fill cannot add more than the bucket holds",
                                entry.key("tokens_per_fill"),
                            ),
                        ));
                    }
                    (v != default_per_fill(limit, interval, max) || entry.node_defaults()).then_some(v)
                }
            };
            return Ok(vec![TokenBucketSpec::Timer {
                max_tokens: max_tokens.filter(|&m| m != limit.requests || entry.node_defaults()),
                tokens_per_fill,
                fill_interval: fill_interval.filter(|&f| f != limit.window),
            }]);
        }
        for (key, span) in [
            ("max_tokens", keys.max_tokens.as_ref().map(|v| v.span())),
            ("tokens_per_fill", keys.tokens_per_fill.as_ref().map(|v| v.span())),
            ("fill_interval", keys.fill_interval.as_ref().map(|v| v.span())),
        ] {
            if let Some(span) = span {
                return Err(wrong_mode(key, span));
            }
        }
        let initial = match &keys.initial {
            None => Initial::Full,
            Some(i) if i.get_ref() == "full" => Initial::Full,
            Some(i) if i.get_ref() == "empty" => Initial::Empty,
            Some(i) => return Err(entry.one_of("initial", i, &["full", "empty"])),
        };
        let max_wait = keys.max_wait.as_ref().map(|m| entry.duration_of("max_wait", m)).transpose()?;
        let Some(capacities) = keys.capacity else {
            return Ok(vec![TokenBucketSpec::Continuous { capacity: None, initial, max_wait }]);
        };
        entry
            .counts("capacity", capacities, "give at least one capacity")?
            .iter()
            .map(|(key, c)| {
                let v = entry.count_at_least_one(key, c)?;
                Ok(TokenBucketSpec::Continuous {
                    capacity: (v != limit.requests || entry.node_defaults()).then_some(v),
                    initial,
                    max_wait,
                })
            })
            .collect()
    }

    fn label(&self) -> String {
        let mut params = Vec::new();
        match *self {
            TokenBucketSpec::Continuous { capacity, initial, max_wait } => {
                if let Some(c) = capacity {
                    params.push(format!("capacity={c}"));
                }
                if initial == Initial::Empty {
                    params.push("initial=empty".into());
                }
                if let Some(m) = max_wait {
                    params.push(format!("max_wait={}", format_duration(m)));
                }
            }
            TokenBucketSpec::Timer { max_tokens, tokens_per_fill, fill_interval } => {
                params.push("timer".into());
                if let Some(m) = max_tokens {
                    params.push(format!("max_tokens={m}"));
                }
                if let Some(p) = tokens_per_fill {
                    params.push(format!("tokens_per_fill={p}"));
                }
                if let Some(f) = fill_interval {
                    params.push(format!("fill_interval={}", format_duration(f)));
                }
            }
        }
        if params.is_empty() { "token_bucket".into() } else { format!("token_bucket({})", params.join(";")) }
    }

    #[inline]
    fn build(&self, limit: Limit) -> TokenBucket {
        match *self {
            TokenBucketSpec::Continuous { capacity, initial, max_wait } => {
                let mut bucket = ContinuousBucket::new(limit, capacity.unwrap_or(limit.requests), initial);
                if let Some(m) = max_wait {
                    bucket.shape(m);
                }
                TokenBucket::continuous(bucket)
            }
            TokenBucketSpec::Timer { max_tokens, tokens_per_fill, fill_interval } => {
                let (max, per_fill, interval) =
                    timer_params(limit, max_tokens, tokens_per_fill, fill_interval);
                TokenBucket::timer(TimerBucket::new(max, per_fill, Nanos::new(interval)))
            }
        }
    }

    fn style(&self) -> Style {
        match *self {
            TokenBucketSpec::Continuous { capacity, initial, max_wait } => {
                let mut short = "token bucket".to_string();
                if let Some(c) = capacity {
                    short.push_str(&format!(" cap {c}"));
                }
                if initial == Initial::Empty {
                    short.push_str(" (empty)");
                }
                if let Some(m) = max_wait {
                    short.push_str(&format!(", waits ≤ {}", format_duration(m)));
                }
                // Violets: apart from the window limiters' tab10 colours and
                // from the GCRA's gold, which decides the same at L | W. The
                // waiting bucket's is light enough to stand apart from the
                // refusing one's in one chart (`scenarios/go_rate.toml`).
                let base = match (initial, max_wait) {
                    (_, Some(_)) => (190, 150, 250),
                    (Initial::Empty, None) => (80, 40, 120),
                    (Initial::Full, None) => (120, 80, 220),
                };
                Style { rgb: shade(base, capacity), line_width: 2, short }
            }
            TokenBucketSpec::Timer { max_tokens, tokens_per_fill, fill_interval } => {
                let mut short = "timer bucket".to_string();
                if let Some(m) = max_tokens {
                    short.push_str(&format!(" max {m}"));
                }
                if let Some(p) = tokens_per_fill {
                    short.push_str(&format!(" +{p}"));
                }
                if let Some(f) = fill_interval {
                    short.push_str(&format!(" every {}", format_duration(f)));
                }
                // Dark green: at its defaults it decides as the fixed window
                // does, and is drawn thin over that wide red line.
                Style { rgb: shade((0, 109, 44), max_tokens.or(tokens_per_fill)), line_width: 2, short }
            }
        }
    }

    fn advertises_retry(&self) -> bool {
        true
    }

    fn delays(&self) -> bool {
        matches!(self, TokenBucketSpec::Continuous { max_wait: Some(_), .. })
    }

    /// The credit owed never exceeds `max_wait` of refill: at most
    /// `max_wait * L / W + 1` requests wait per key.
    fn queue_advice(&self, limit: Limit) -> String {
        let TokenBucketSpec::Continuous { max_wait: Some(m), .. } = self else { return String::new() };
        let most =
            u128::from(m.get()) * u128::from(limit.requests) / u128::from(limit.window.get().max(1)) + 1;
        format!(
            "A token bucket with `max_wait` = {} lets at most max_wait × L / W + 1 = {most} requests wait per \
client key: lower `max_wait`, or run fewer client keys",
            format_duration(*m)
        )
    }

    // No sweep traits: a bucket admits part of a burst at one instant.
}

/// Either kind of token bucket: the one `timer` names is used, the other is
/// a placeholder that is never asked.
///
/// A struct, not an enum: the engine keeps one per key, and as an enum the
/// bucket's lane cost about 15 ns more per decision in the engine bench
/// (`bucket+log` 47.5 ms against 32.3 ms for 2^20 arrivals), as much as the
/// rest of the lane.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    timer: bool,
    continuous: ContinuousBucket,
    timer_bucket: TimerBucket,
}

impl TokenBucket {
    pub fn continuous(bucket: ContinuousBucket) -> TokenBucket {
        TokenBucket { timer: false, continuous: bucket, timer_bucket: TimerBucket::new(1, 1, Nanos::new(1)) }
    }

    pub fn timer(bucket: TimerBucket) -> TokenBucket {
        let unused = ContinuousBucket::new(Limit { requests: 1, window: Nanos::new(1) }, 1, Initial::Full);
        TokenBucket { timer: true, continuous: unused, timer_bucket: bucket }
    }
}

impl Limiter for TokenBucket {
    #[inline(always)]
    fn decide(&mut self, now: Nanos, cost: u32) -> Decision {
        if self.timer { self.timer_bucket.decide(now, cost) } else { self.continuous.decide(now, cost) }
    }

    fn peak_state(&self) -> StateSize {
        if self.timer { self.timer_bucket.peak_state() } else { self.continuous.peak_state() }
    }

    fn retry_at(&self, now: Nanos, cost: u32) -> Option<Nanos> {
        if self.timer { self.timer_bucket.retry_at(now, cost) } else { self.continuous.retry_at(now, cost) }
    }
}

/// The continuous bucket: credit = tokens x W, in exact integers.
#[derive(Clone, Debug)]
pub struct ContinuousBucket {
    /// Credit added per nanosecond: `L`.
    rate: u64,
    window: u64,
    /// `b * W`.
    cap: u128,
    /// The cap and the rate fit in u64 with room to spare (`b W < 2^62`
    /// and `L < 2^62`, the usual case): the credit is `credit64` and every
    /// decision is u64 arithmetic. Otherwise it is `credit`, in u128.
    narrow: bool,
    cap64: u64,
    /// The gap after which the bucket is full whatever it held,
    /// `ceil(cap64 / L)`: below it `dt L < cap64 + L`, so the refill and
    /// the credit plus the refill (below `2 cap64 + L < 2^64`) fit in u64.
    full_after: u64,
    credit64: u64,
    credit: u128,
    /// The instant the credit was last brought up to date.
    last: u64,
    /// Shaping: the credit may go below 0 by up to `max_wait * L`
    /// (`signed` holds it then, and every decision takes that path).
    shaping: bool,
    max_wait: u64,
    signed: i128,
}

impl ContinuousBucket {
    /// A bucket of `capacity` tokens (at least 1) refilled at `L` per `W`.
    #[inline]
    pub fn new(limit: Limit, capacity: u64, initial: Initial) -> ContinuousBucket {
        assert!(capacity >= 1 && limit.requests >= 1 && limit.window.get() >= 1);
        let window = limit.window.get();
        let cap = u128::from(capacity) * u128::from(window);
        let credit = if initial == Initial::Full { cap } else { 0 };
        let narrow = cap < 1 << 62 && limit.requests < 1 << 62;
        ContinuousBucket {
            rate: limit.requests,
            window,
            cap,
            narrow,
            cap64: if narrow { cap as u64 } else { 0 },
            full_after: if narrow { (cap as u64).div_ceil(limit.requests) } else { 0 },
            credit64: if narrow { credit as u64 } else { 0 },
            credit,
            last: 0,
            shaping: false,
            max_wait: 0,
            signed: credit as i128,
        }
    }

    /// Lets a request wait up to `max_wait` for the credit it lacks.
    pub fn shape(&mut self, max_wait: Nanos) {
        self.shaping = true;
        self.max_wait = max_wait.get();
        self.signed = self.credit() as i128;
    }

    /// The credit, whichever way it is held.
    fn credit(&self) -> u128 {
        if self.narrow { u128::from(self.credit64) } else { self.credit }
    }

    /// The rule in u128, for caps past u64. Inlined, as `decide_shaping`:
    /// a call that takes `&mut self` puts the bucket in memory for the
    /// whole loop, and the fast path then reloads its credit every decision
    /// (`benches/limiters.rs`, dense: 176 us out of line, 108 us inlined,
    /// against 53 us for the bare loop).
    #[inline(always)]
    fn decide_wide(&mut self, now: u64, cost: u32) -> Decision {
        // dt < 2^64 and L < 2^63: the product and the sum stay below 2^128.
        let dt = u128::from(now - self.last);
        self.credit = (self.credit + dt * u128::from(self.rate)).min(self.cap);
        self.last = now;
        let need = u128::from(cost) * u128::from(self.window);
        if self.credit >= need {
            self.credit -= need;
            Decision::Admit
        } else {
            Decision::Reject
        }
    }

    /// The credit at `now` when shaping: `signed` is the level at `last`,
    /// which may be in the future (the backend time of the last request
    /// that waits); before it the level is that less the refill still to
    /// come, after it the refill is capped.
    #[inline(always)]
    fn shaping_credit(&self, now: u64) -> i128 {
        let rate = i128::from(self.rate);
        if now >= self.last {
            self.signed.saturating_add(i128::from(now - self.last) * rate).min(self.cap as i128)
        } else {
            self.signed - i128::from(self.last - now) * rate
        }
    }

    /// The reservation rule, in i128: the cap `b W` is below 2^127, a
    /// refill `dt L` below 2^127, and the credit is never below
    /// `-max_wait L`. A request that waits `w` takes its credit at its
    /// backend time `now + w`, where the level is `min(cap, credit + w L)`;
    /// the state moves there, so what the bucket lets through conforms to
    /// the policing bucket exactly (the cap included).
    #[inline(always)]
    fn decide_shaping(&mut self, now: u64, cost: u32) -> Decision {
        let cap = self.cap as i128;
        let rate = i128::from(self.rate);
        let need = i128::from(cost) * i128::from(self.window);
        if need > cap {
            return Decision::Reject;
        }
        let credit = self.shaping_credit(now);
        let wait = if credit >= need { 0 } else { div_ceil(need - credit, rate) };
        if wait > i128::from(self.max_wait) {
            return Decision::Reject;
        }
        // wait <= max_wait < 2^64, and credit + wait L <= cap + L.
        self.signed = (credit + wait * rate).min(cap) - need;
        match now.checked_add(wait as u64) {
            Some(at) => self.last = at,
            // A backend time past the end of time (u64::MAX ns): the same
            // level held at `now`, less what refills during the wait. Below
            // the cap until the backend time, it gives every later instant
            // the credit the level at `now + wait` would.
            None => (self.signed, self.last) = (self.signed - wait * rate, now),
        }
        if wait == 0 { Decision::Admit } else { Decision::Delay(Nanos::new(wait as u64)) }
    }
}

impl Limiter for ContinuousBucket {
    #[inline(always)]
    fn decide(&mut self, now: Nanos, cost: u32) -> Decision {
        let now = now.get();
        if !self.narrow || self.shaping {
            return if self.shaping { self.decide_shaping(now, cost) } else { self.decide_wide(now, cost) };
        }
        // Exact in u64: a gap of `full_after` fills the bucket, so a longer
        // one may count as that long, and then the refill and the sum fit
        // (see `full_after`).
        let dt = now - self.last;
        let credit = (self.credit64 + dt.min(self.full_after) * self.rate).min(self.cap64);
        self.last = now;
        let need = u64::from(cost).saturating_mul(self.window);
        // No branch on the decision (as the GCRA's): take `need` or nothing.
        let admit = credit >= need;
        self.credit64 = credit - if admit { need } else { 0 };
        if admit { Decision::Admit } else { Decision::Reject }
    }

    fn peak_state(&self) -> StateSize {
        // A level and the time it was taken.
        StateSize { entries: 1, bytes: 16 }
    }

    /// The first instant at which the credit reaches `c * W`:
    /// `last + ceil((c W - credit) / L)`; with `max_wait`, reaches
    /// `c W - max_wait L`, when the request may start to wait. `None`
    /// above the capacity.
    fn retry_at(&self, _now: Nanos, cost: u32) -> Option<Nanos> {
        let need = u128::from(cost) * u128::from(self.window);
        if need > self.cap {
            return None;
        }
        if self.shaping {
            let rate = i128::from(self.rate);
            // The first t with credit(t) >= c W - max_wait L, on the line
            // through (last, signed); past `last` the cap cannot stop it,
            // as c W - max_wait L <= cap.
            let lack = (need as i128 - i128::from(self.max_wait) * rate).saturating_sub(self.signed);
            return u64::try_from(i128::from(self.last) + div_ceil(lack, rate)).ok().map(Nanos::new);
        }
        let wait = need.saturating_sub(self.credit()).div_ceil(u128::from(self.rate));
        u64::try_from(u128::from(self.last) + wait).ok().map(Nanos::new)
    }
}

/// `ceil(a / b)` for `b > 0` (`i128::div_ceil` is not stable).
fn div_ceil(a: i128, b: i128) -> i128 {
    -((-a).div_euclid(b))
}

/// Envoy's timer bucket: whole tokens, a fill on every multiple of the
/// interval.
#[derive(Clone, Debug)]
pub struct TimerBucket {
    max_tokens: u64,
    per_fill: u64,
    interval: FastDiv,
    level: u64,
    /// Fills applied so far: the level includes every fill at
    /// `k * interval` for `1 <= k <= fills`.
    fills: u64,
    /// When fill `fills + 1` happens (u128: it may be past the last
    /// nanosecond, and then never happens).
    next_fill: u128,
}

impl TimerBucket {
    /// `1 <= tokens_per_fill <= max_tokens`, `fill_interval >= 1 ns`.
    pub fn new(max_tokens: u64, tokens_per_fill: u64, fill_interval: Nanos) -> TimerBucket {
        assert!(max_tokens >= 1 && (1..=max_tokens).contains(&tokens_per_fill) && fill_interval.get() >= 1);
        TimerBucket {
            max_tokens,
            per_fill: tokens_per_fill,
            interval: FastDiv::new(fill_interval.get()),
            level: max_tokens,
            fills: 0,
            next_fill: u128::from(fill_interval.get()),
        }
    }

    /// The level as of `now`, every fill at or before `now` applied.
    #[inline(always)]
    fn fill(&mut self, now: u64) {
        if u128::from(now) >= self.next_fill {
            let k = self.interval.div(now);
            let added = (k - self.fills).saturating_mul(self.per_fill);
            self.level = self.level.saturating_add(added).min(self.max_tokens);
            self.fills = k;
            self.next_fill = (u128::from(k) + 1) * u128::from(self.interval.divisor());
        }
    }
}

impl Limiter for TimerBucket {
    #[inline(always)]
    fn decide(&mut self, now: Nanos, cost: u32) -> Decision {
        self.fill(now.get());
        let cost = u64::from(cost);
        if self.level >= cost {
            self.level -= cost;
            Decision::Admit
        } else {
            Decision::Reject
        }
    }

    fn peak_state(&self) -> StateSize {
        // A level and the time of the last fill.
        StateSize { entries: 1, bytes: 16 }
    }

    /// The first fill after which the level holds `c` tokens:
    /// `(fills + ceil((c - level) / tokens_per_fill)) * fill_interval`.
    /// `None` above `max_tokens`.
    fn retry_at(&self, _now: Nanos, cost: u32) -> Option<Nanos> {
        let cost = u64::from(cost);
        if cost > self.max_tokens {
            return None;
        }
        let more = cost.saturating_sub(self.level).div_ceil(self.per_fill);
        let at = (u128::from(self.fills) + u128::from(more)) * u128::from(self.interval.divisor());
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

    /// The token buckets of a scenario with `[limit]` 10 per 1 s and this entry.
    fn parse(limiter: &str) -> Result<Vec<LimiterSpec>, String> {
        let text = format!(
            "name = \"t\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[[traffic]]\nkind = \"burst\"\ncount = 1\n\
             [[limiter]]\nkind = \"token_bucket\"\n{limiter}\n"
        );
        Scenario::parse(&text, std::path::Path::new("s.toml"))
            .map(|s| s.limiters.into_iter().filter(|l| l.algorithm() == "token_bucket").collect())
            .map_err(|e| e.to_string())
    }

    fn labels(limiter: &str) -> Vec<String> {
        parse(limiter).unwrap().iter().map(|s| s.label()).collect()
    }

    #[test]
    fn continuous_defaults_lists_and_labels() {
        assert_eq!(parse("").unwrap(), vec![LimiterSpec::from(TokenBucketSpec::CONTINUOUS)]);
        assert_eq!(labels(""), ["token_bucket"]);
        assert_eq!(labels("refill = \"continuous\""), ["token_bucket"]);
        assert_eq!(labels("capacity = 10"), ["token_bucket"]); // L: the default
        assert_eq!(
            labels("capacity = [1, 10, 50]"),
            ["token_bucket(capacity=1)", "token_bucket", "token_bucket(capacity=50)"]
        );
        assert_eq!(labels("initial = \"empty\""), ["token_bucket(initial=empty)"]);
        assert_eq!(labels("capacity = 3\ninitial = \"empty\""), ["token_bucket(capacity=3;initial=empty)"]);
        assert_eq!(labels("initial = \"full\""), ["token_bucket"]);
        let styles: Vec<Style> = parse("capacity = [1, 10, 50]").unwrap().iter().map(|s| s.style()).collect();
        assert_eq!(styles[1].short, "token bucket");
        assert_eq!(styles[2].short, "token bucket cap 50");
        assert!(styles[0].rgb != styles[1].rgb && styles[1].rgb != styles[2].rgb);
    }

    #[test]
    fn timer_defaults_and_labels() {
        assert_eq!(parse("refill = \"timer\"").unwrap(), vec![LimiterSpec::from(TokenBucketSpec::TIMER)]);
        assert_eq!(labels("refill = \"timer\""), ["token_bucket(timer)"]);
        // The defaults written out are still the defaults: 10 per 1 s.
        assert_eq!(
            labels("refill = \"timer\"\nmax_tokens = 10\ntokens_per_fill = 10\nfill_interval = \"1s\""),
            ["token_bucket(timer)"]
        );
        // 100 ms: the default fill is 10 * 100 ms / 1 s = 1 token.
        assert_eq!(
            labels("refill = \"timer\"\nfill_interval = \"100ms\"\ntokens_per_fill = 1"),
            ["token_bucket(timer;fill_interval=100ms)"]
        );
        assert_eq!(
            labels("refill = \"timer\"\nmax_tokens = 5\ntokens_per_fill = 3\nfill_interval = \"250ms\""),
            ["token_bucket(timer;max_tokens=5;tokens_per_fill=3;fill_interval=250ms)"]
        );
        let spec = parse("refill = \"timer\"\nmax_tokens = 5").unwrap().remove(0);
        assert_eq!(spec.style().short, "timer bucket max 5");
        let spec =
            parse("refill = \"timer\"\nmax_tokens = 5\ntokens_per_fill = 3\nfill_interval = \"250ms\"")
                .unwrap()
                .remove(0);
        assert_eq!(spec.style().short, "timer bucket max 5 +3 every 250ms");
        assert_eq!(TokenBucketSpec::TIMER.style().short, "timer bucket");
    }

    #[test]
    fn timer_default_fill_is_scaled_and_at_least_one() {
        let limit = Limit { requests: 10, window: ms(1000) };
        assert_eq!(timer_params(limit, None, None, None), (10, 10, 1_000_000_000));
        assert_eq!(timer_params(limit, None, None, Some(ms(250))), (10, 2, 250_000_000)); // 2.5 rounds down
        assert_eq!(timer_params(limit, None, None, Some(ms(10))), (10, 1, 10_000_000)); // 0.1: at least 1
        assert_eq!(timer_params(limit, None, None, Some(ms(5000))), (10, 10, 5_000_000_000)); // 50: the bucket
        assert_eq!(timer_params(limit, Some(4), None, None), (4, 4, 1_000_000_000));
    }

    #[test]
    fn parse_errors_are_located() {
        let err = |k: &str| parse(k).unwrap_err();
        let e = err("capacity = 0");
        assert!(
            e.contains("s.toml:10:12: `limiter[0].capacity` must be a whole number of at least 1, got 0"),
            "{e}"
        );
        let e = err("capacity = []");
        assert!(e.contains("`limiter[0].capacity` is empty"), "{e}");
        let e = err("refill = \"timr\"");
        assert!(e.contains("`limiter[0].refill` = \"timr\" is not known: expected one of \"continuous\", \"timer\"; did you mean \"timer\"?"), "{e}");
        let e = err("initial = \"half\"");
        assert!(
            e.contains("`limiter[0].initial` = \"half\" is not known: expected one of \"full\", \"empty\""),
            "{e}"
        );
        let e = err("refill = \"timer\"\ncapacity = 5");
        assert!(e.contains("s.toml:11:12: `limiter[0].capacity` only applies to refill = \"continuous\"; refill = \"timer\" takes max_tokens, tokens_per_fill, fill_interval"), "{e}");
        let e = err("refill = \"timer\"\ninitial = \"empty\"");
        assert!(e.contains("`limiter[0].initial` only applies to refill = \"continuous\""), "{e}");
        let e = err("capacity = [5, 99999999999999999999]");
        assert!(e.contains("s.toml:10:16: `limiter[0].capacity[1]`: 99999999999999999999 is too large: expected a whole number up to 9223372036854775807"), "{e}");
        let e = err("max_tokens = 5");
        assert!(e.contains("`limiter[0].max_tokens` only applies to refill = \"timer\"; refill = \"continuous\" (the default) takes capacity, initial"), "{e}");
        let e = err("refill = \"timer\"\nmax_tokens = -2");
        assert!(e.contains("`limiter[0].max_tokens` must be a whole number of at least 1, got -2"), "{e}");
        let e = err("refill = \"timer\"\ntokens_per_fill = 0");
        assert!(
            e.contains("`limiter[0].tokens_per_fill` must be a whole number of at least 1, got 0"),
            "{e}"
        );
        let e = err("refill = \"timer\"\ntokens_per_fill = 11");
        assert!(
            e.contains("s.toml:11:19: `limiter[0].tokens_per_fill` = 11 is more than `max_tokens` (10)"),
            "{e}"
        );
        let e = err("refill = \"timer\"\nfill_interval = \"0s\"");
        assert!(e.contains("`limiter[0].fill_interval` must be longer than 0"), "{e}");
        let e = err("refill = \"timer\"\nfill_interval = 5");
        assert!(e.contains("`limiter[0].fill_interval`: expected a string, found the number 5"), "{e}");
        let e = err("capacty = 5");
        assert!(e.contains("did you mean `capacity`?"), "{e}");
    }

    #[test]
    fn continuous_refills_exactly() {
        // L = 3 per 1 s: a token every 333.33... ms, kept exactly.
        let limit = Limit { requests: 3, window: ms(1000) };
        let mut b = ContinuousBucket::new(limit, 2, Initial::Full);
        assert_eq!(b.decide(ms(0), 1), Admit);
        assert_eq!(b.decide(ms(0), 1), Admit);
        assert_eq!(b.decide(Nanos::new(333_333_333), 1), Reject); // 999 999 999 of 1e9 credit
        assert_eq!(b.retry_at(Nanos::new(333_333_333), 1), Some(Nanos::new(333_333_334)));
        assert_eq!(b.decide(Nanos::new(333_333_334), 1), Admit); // 1 000 000 002
        // The 2 of credit left carry over: the next token is due at
        // 333 333 334 + ceil((1e9 - 2) / 3) = 666 666 667.
        assert_eq!(b.decide(Nanos::new(666_666_666), 1), Reject);
        assert_eq!(b.decide(Nanos::new(666_666_667), 1), Admit);
        // A long gap stores no more than the capacity.
        assert_eq!(b.decide(ms(100_000), 1), Admit);
        assert_eq!(b.decide(ms(100_000), 1), Admit);
        assert_eq!(b.decide(ms(100_000), 1), Reject);
        // Capacity 1: a refill past it is lost.
        let mut one = ContinuousBucket::new(limit, 1, Initial::Full);
        assert_eq!(one.decide(ms(0), 1), Admit);
        assert_eq!(one.decide(Nanos::new(333_333_334), 1), Admit); // 1 000 000 002, capped at 1e9
        assert_eq!(one.decide(Nanos::new(666_666_667), 1), Reject); // 999 999 999
        assert_eq!(one.retry_at(Nanos::new(666_666_667), 1), Some(Nanos::new(666_666_668)));
    }

    /// The waits `docs/semantics.md` quotes against `x/time/rate`'s
    /// (0.333333333, 0.666666666, 1 s there): L = 3 per 1 s, a burst at 0.
    /// Each wait is rounded up to a whole nanosecond; with capacity 1 (the
    /// cost) the level at each backend time is capped, the rounding's
    /// 2/3 ns is lost and the waits drift later; with capacity 2 it is
    /// kept and each wait is the ceiling of the exact one.
    #[test]
    fn reservation_waits_round_up() {
        let limit = Limit { requests: 3, window: ms(1000) };
        let waits = |capacity: u64| {
            let mut b = ContinuousBucket::new(limit, capacity, Initial::Full);
            b.shape(ms(10_000));
            (0..capacity + 3).map(|_| b.decide(ms(0), 1).delay().get()).collect::<Vec<u64>>()
        };
        assert_eq!(waits(1), [0, 333_333_334, 666_666_668, 1_000_000_002]);
        assert_eq!(waits(2), [0, 0, 333_333_334, 666_666_667, 1_000_000_000]);
    }

    /// Near the end of time the waits are a FIFO reservation as anywhere:
    /// L = 1 per 1 s, capacity 1, `max_wait = 2s`, five requests at
    /// 18 446 744 073 s (0.71 s before u64::MAX ns). Waits 0, 1 s and 2 s
    /// (the last two past the end of time), then refusals. Holding the
    /// backend time at u64::MAX had let all five wait, their waits shrinking.
    #[test]
    fn reservations_past_the_end_of_time_stay_in_order() {
        let mut b = ContinuousBucket::new(Limit { requests: 1, window: ms(1000) }, 1, Initial::Full);
        b.shape(ms(2000));
        let late = Nanos::from_secs(18_446_744_073);
        let got: Vec<Decision> = (0..5).map(|_| b.decide(late, 1)).collect();
        let (one, two) = (Decision::Delay(ms(1000)), Decision::Delay(ms(2000)));
        assert_eq!(got, [Decision::Admit, one, two, Decision::Reject, Decision::Reject]);
        // Half a second later a request would wait 2.5 s: still refused.
        let later = Nanos::new(late.get() + 500_000_000);
        assert_eq!(b.decide(later, 1), Decision::Reject);
    }

    #[test]
    fn an_empty_bucket_starts_filling_at_time_zero() {
        let limit = Limit { requests: 10, window: ms(1000) };
        let mut b = ContinuousBucket::new(limit, 10, Initial::Empty);
        assert_eq!(b.decide(Nanos::new(99_999_999), 1), Reject);
        assert_eq!(b.retry_at(Nanos::new(99_999_999), 1), Some(ms(100)));
        assert_eq!(b.decide(ms(100), 1), Admit);
        assert_eq!(b.decide(ms(350), 3), Reject); // 2.5 tokens
        assert_eq!(b.retry_at(ms(350), 3), Some(ms(400)));
        assert_eq!(b.decide(ms(400), 3), Admit);
        assert_eq!(b.decide(ms(400), 11), Reject);
        assert_eq!(b.retry_at(ms(400), 11), None);
    }

    #[test]
    fn timer_fills_on_the_grid() {
        // 3 tokens at most, 2 per 100 ms.
        let mut b = TimerBucket::new(3, 2, ms(100));
        for _ in 0..3 {
            assert_eq!(b.decide(ms(0), 1), Admit);
        }
        assert_eq!(b.decide(Nanos::new(99_999_999), 1), Reject);
        assert_eq!(b.retry_at(Nanos::new(99_999_999), 1), Some(ms(100)));
        assert_eq!(b.decide(ms(100), 1), Admit); // fill 1: 2 tokens
        assert_eq!(b.decide(ms(100), 2), Reject); // 1 left
        assert_eq!(b.retry_at(ms(100), 2), Some(ms(200)));
        assert_eq!(b.retry_at(ms(100), 3), Some(ms(200))); // 1 + 2 = 3
        assert_eq!(b.retry_at(ms(100), 4), None);
        // Ten fills later the bucket holds 3, not 21.
        assert_eq!(b.decide(ms(1050), 3), Admit);
        assert_eq!(b.decide(ms(1050), 1), Reject);
        assert_eq!(b.peak_state(), StateSize { entries: 1, bytes: 16 });
    }

    /// The u64 fast path (a gap clamped to the time that fills the bucket)
    /// decides as the u128 rule does, on random traces with long and short
    /// gaps, ties, costs above 1, full and empty starts, and caps up to the
    /// fast path's limit.
    #[test]
    fn the_u64_path_decides_as_the_u128_rule() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let cases = [
            (1, 1, 1),
            (3, 1_000, 2),
            (100, 1_000_000_000, 100),
            (7, 10, 1_000),
            (1 << 20, 1 << 40, 1 << 21),
        ];
        for &(requests, window, capacity) in &cases {
            for initial in [Initial::Full, Initial::Empty] {
                let limit = Limit { requests, window: Nanos::new(window) };
                let mut fast = ContinuousBucket::new(limit, capacity, initial);
                assert!(fast.narrow, "{requests} per {window} ns, b = {capacity}");
                let mut wide = fast.clone();
                (wide.narrow, wide.credit) = (false, u128::from(fast.credit64));
                let mut t = 0u64;
                for i in 0..20_000 {
                    // Mostly gaps around W / L, some ties, some far longer
                    // than the bucket takes to fill.
                    let gap = match next() % 8 {
                        0 => 0,
                        1 => next() % (window.saturating_mul(capacity) / requests * 3 + 1),
                        _ => next() % (window / requests * 2 + 1),
                    };
                    t += gap;
                    let cost = if next() % 5 == 0 { 1 + (next() % 3) as u32 } else { 1 };
                    let now = Nanos::new(t);
                    assert_eq!(
                        fast.decide(now, cost),
                        wide.decide(now, cost),
                        "case {requests}/{window}/{capacity}, step {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn no_overflow_at_the_end_of_time() {
        let limit = Limit { requests: u64::MAX >> 1, window: Nanos::MAX };
        let mut b = ContinuousBucket::new(limit, u64::MAX >> 1, Initial::Empty);
        assert_eq!(b.decide(Nanos::MAX, 1), Admit);
        let mut t = TimerBucket::new(u64::MAX, u64::MAX, Nanos::new(3));
        assert_eq!(t.decide(Nanos::MAX, u32::MAX), Admit);
        assert_eq!(t.decide(Nanos::MAX, 1), Admit);
        let mut t = TimerBucket::new(1, 1, Nanos::new(u64::MAX / 2 + 1));
        assert_eq!(t.decide(Nanos::new(0), 1), Admit);
        assert_eq!(t.decide(Nanos::new(0), 1), Reject);
        assert_eq!(t.retry_at(Nanos::new(0), 1), Some(Nanos::new(u64::MAX / 2 + 1)));
        assert_eq!(t.decide(Nanos::MAX, 1), Admit);
        assert_eq!(t.decide(Nanos::MAX, 1), Reject);
        // The next fill, 2^64, is past the last nanosecond.
        assert_eq!(t.retry_at(Nanos::MAX, 1), None);
    }
}
