//! Weighted two-window counter (`weighted_window`): Cloudflare's sliding
//! window estimate, and Python `limits`' `SlidingWindowCounterRateLimiter`.
//!
//! Windows are the aligned fixed window's, `[offset + kW, offset + (k+1)W)`.
//! A request at `t` in window `k`, `e = t - start(k)` into it, with `prev`
//! counted in window `k - 1` (0 unless that is the window just before the
//! last one counted) and `curr` in window `k`, and cost `c`:
//!
//! - `rounding = "exact"` (default; Cloudflare's estimate without rounding):
//!   admit iff `prev * (W - e) / W + curr + c <= L`, decided in integers as
//!   `prev * (W - e) + (curr + c) * W <= L * W`.
//! - `rounding = "floor"` (Python `limits`): admit iff
//!   `floor(prev * (W - e) / W) + curr + c <= L`, decided as
//!   `prev * (W - e) <= (L - curr - c) * W + W - 1` (when `curr + c <= L`).
//!
//! `limits` 5.8.0, `limits/storage/memory.py`
//! (`MemoryStorage.acquire_sliding_window_entry`; memcached is the same):
//!
//! ```python
//! if amount > limit:
//!     return False
//! now = time.time()
//! previous_key, current_key = self.sliding_window_keys(key, expiry, now)
//! (previous_count, previous_ttl, current_count, _) = self._get_sliding_window_info(...)
//! weighted_count = previous_count * previous_ttl / expiry + current_count
//! if floor(weighted_count) + amount > limit:
//!     return False
//! ```
//!
//! with `previous_ttl = (1 - (((now - expiry) / expiry) % 1)) * expiry`,
//! which is `W - e`, and keys `int((now - expiry) / expiry)` and
//! `int(now / expiry)` (epoch-aligned windows, no offset). Since `curr` is a
//! whole number, `floor(prev * ttl / W + curr) = floor(prev * ttl / W) + curr`:
//! the `floor` rule above, which ratesim evaluates exactly where `limits`
//! uses floats (the two can differ by one when `prev * (W - e) / W` lands
//! within a float's rounding of a whole number). `limits` counts admitted
//! requests only; `count_rejected = true` counts every request, as some
//! deployments do. See `docs/semantics.md` for the Redis variant and the
//! other differences.

use serde::Deserialize;
use toml::Spanned;

use super::{Algorithm, Decision, FastDiv, Limit, Limiter, StateSize, Style};
use crate::scenario::{Entry, ScenarioError};
use crate::time::{Nanos, format_duration};

/// How the previous window's weighted count is rounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// No rounding: the estimate as a real number.
    Exact,
    /// The weighted previous count rounded down (Python `limits`).
    Floor,
}

/// `kind = "weighted_window"`: `rounding = "exact" | "floor"`, `offset`,
/// `count_rejected`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WeightedWindowSpec {
    pub rounding: Rounding,
    /// Moves the window grid later; reduced modulo W by `parse`.
    pub offset: Nanos,
    pub count_rejected: bool,
}

impl WeightedWindowSpec {
    /// Exact rounding, aligned to the epoch grid, admitted requests counted.
    pub const DEFAULT: WeightedWindowSpec =
        WeightedWindowSpec { rounding: Rounding::Exact, offset: Nanos::ZERO, count_rejected: false };
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    #[allow(dead_code)]
    kind: serde::de::IgnoredAny,
    rounding: Option<Spanned<String>>,
    offset: Option<Spanned<String>>,
    count_rejected: Option<Spanned<bool>>,
}

impl Algorithm for WeightedWindowSpec {
    type Limiter = WeightedWindow;
    const KIND: &'static str = "weighted_window";

    fn parse(entry: &Entry<'_>) -> Result<Vec<Self>, ScenarioError> {
        let keys: Keys = entry.keys()?;
        let rounding = match &keys.rounding {
            None => Rounding::Exact,
            Some(r) if r.get_ref() == "exact" => Rounding::Exact,
            Some(r) if r.get_ref() == "floor" => Rounding::Floor,
            Some(r) => return Err(entry.one_of("rounding", r, &["exact", "floor"])),
        };
        // As the fixed window's offset: a duration, taken modulo W.
        let offset = keys.offset.as_ref().map(|o| entry.duration_of("offset", o)).transpose()?;
        let offset = Nanos::new(offset.map_or(0, |o| o.get() % entry.limit().window.get()));
        let count_rejected = keys.count_rejected.is_some_and(|c| *c.get_ref());
        Ok(vec![WeightedWindowSpec { rounding, offset, count_rejected }])
    }

    fn shares_counts(&self) -> bool {
        true
    }

    fn advertises_retry(&self) -> bool {
        true
    }

    fn label(&self) -> String {
        let mut parts = Vec::new();
        if self.rounding == Rounding::Floor {
            parts.push("floor".to_string());
        }
        if self.offset != Nanos::ZERO {
            parts.push(format!("offset={}", format_duration(self.offset)));
        }
        if self.count_rejected {
            parts.push("count_rejected".to_string());
        }
        // `;` rather than `,`: labels are CSV fields and stay unquoted.
        if parts.is_empty() {
            "weighted_window".into()
        } else {
            format!("weighted_window({})", parts.join(";"))
        }
    }

    fn build(&self, limit: Limit) -> WeightedWindow {
        WeightedWindow::new(limit, *self)
    }

    fn style(&self) -> Style {
        let mut short = "weighted window".to_string();
        if self.rounding == Rounding::Floor {
            short.push_str(", floor");
        }
        if self.count_rejected {
            short.push_str(", counting rejects");
        }
        let rgb = match (self.rounding, self.count_rejected) {
            // Magentas, strong enough for thin lines on white. The exact
            // one a little bluer than Tableau's pink it was, 29 (CIEDE2000)
            // from the fixed window's red, which it crosses and recrosses
            // in `scenarios/nodes_central.toml` (24 before), and 25 from
            // the floor one beside it in `scenarios/algorithms.toml` (20).
            (Rounding::Exact, false) => (240, 60, 170),
            (Rounding::Floor, false) => (142, 1, 82),
            (_, true) => (219, 219, 141),
        };
        Style { rgb, line_width: 3, short }
    }

    // No sweep traits: a burst at one instant is admitted in part while the
    // previous window's weight leaves room for part of it.
}

#[derive(Clone, Debug)]
pub struct WeightedWindow {
    limit: u64,
    window: u64,
    /// The offset reduced modulo W.
    phase: u64,
    by_window: FastDiv,
    /// What the weighted previous count may add beyond `(L - curr - c) * W`:
    /// 0 (exact), `W - 1` (floor).
    slack: u128,
    count_rejected: bool,
    /// End (exclusive) of the current window; 0 before the first request.
    /// u128 so a window that would end past the last nanosecond never ends.
    end: u128,
    /// Permits counted in the window before the current one, and in it.
    prev: u64,
    curr: u64,
}

impl WeightedWindow {
    pub fn new(limit: Limit, spec: WeightedWindowSpec) -> WeightedWindow {
        let window = limit.window.get();
        assert!(window > 0, "window must be positive");
        WeightedWindow {
            limit: limit.requests,
            window,
            phase: spec.offset.get() % window,
            by_window: FastDiv::new(window),
            slack: match spec.rounding {
                Rounding::Exact => 0,
                Rounding::Floor => u128::from(window - 1),
            },
            count_rejected: spec.count_rejected,
            end: 0,
            prev: 0,
            curr: 0,
        }
    }

    /// (prev, curr): the counts the next decision in the current window uses.
    pub fn counts(&self) -> (u64, u64) {
        (self.prev, self.curr)
    }

    /// End (exclusive) of the window `t` falls in, given that `t` is past
    /// the current window: the fixed window's grid exactly.
    #[inline]
    fn next_end(&self, t: u64) -> u128 {
        if t < self.phase {
            // The window straddling 0 is the one that started at phase - W.
            return u128::from(self.phase);
        }
        let into = self.by_window.div_rem(t - self.phase).1;
        u128::from(t - into) + u128::from(self.window)
    }

    /// Moves to the window of `t` (past the current one): the current count
    /// becomes the previous one if the windows are adjacent.
    #[inline]
    fn advance(&mut self, t: u64) {
        let end = self.next_end(t);
        self.prev = if end - self.end == u128::from(self.window) { self.curr } else { 0 };
        self.curr = 0;
        self.end = end;
    }

    /// The rule, `rem = W - e` nanoseconds before the window ends (1 to W),
    /// with `prev` and `curr` counted: `curr + c <= L` and
    /// `prev * rem <= (L - curr - c) * W + slack`.
    #[inline(always)]
    fn admits(&self, prev: u64, curr: u64, rem: u64, cost: u64) -> bool {
        let used = curr.saturating_add(cost);
        used <= self.limit
            && u128::from(prev) * u128::from(rem)
                <= u128::from(self.limit - used) * u128::from(self.window) + self.slack
    }

    /// The largest `rem` (at most W) at which `prev` weighs little enough for
    /// `curr + cost` to be admitted; 0 if none.
    fn max_rem(&self, prev: u64, curr: u64, cost: u64) -> u64 {
        let used = curr.saturating_add(cost);
        if used > self.limit {
            return 0;
        }
        let budget = u128::from(self.limit - used) * u128::from(self.window) + self.slack;
        if prev == 0 {
            return self.window;
        }
        (budget / u128::from(prev)).min(u128::from(self.window)) as u64
    }
}

impl Limiter for WeightedWindow {
    #[inline(always)]
    fn decide(&mut self, now: Nanos, cost: u32) -> Decision {
        let t = now.get();
        if u128::from(t) >= self.end {
            self.advance(t);
        }
        let rem = (self.end - u128::from(t)) as u64;
        let cost = u64::from(cost);
        let admit = self.admits(self.prev, self.curr, rem, cost);
        if admit || self.count_rejected {
            self.curr = self.curr.saturating_add(cost);
        }
        if admit { Decision::Admit } else { Decision::Reject }
    }

    fn absorb(&mut self, now: Nanos, cost: u32) {
        let t = now.get();
        if u128::from(t) >= self.end {
            self.advance(t);
        }
        self.curr = self.curr.saturating_add(u64::from(cost));
    }

    fn counts_rejected(&self) -> bool {
        self.count_rejected
    }

    fn peak_state(&self) -> StateSize {
        // prev, curr and the current window's index (its end).
        StateSize { entries: 3, bytes: 24 }
    }

    /// The first instant the rule admits `cost` with no other traffic,
    /// solved in integers: later in the current window, once `prev`'s weight
    /// has decayed (`rem <= budget / prev`); else in the next window, where
    /// `curr` becomes the previous count (at its start if it fits at full
    /// weight, else once it decays); else at the start of the window after,
    /// where both counts are 0.
    fn retry_at(&self, now: Nanos, cost: u32) -> Option<Nanos> {
        let cost = u64::from(cost);
        if cost > self.limit {
            return None;
        }
        let t = u128::from(now.get());
        if t >= self.end {
            // Not decided at `now` (the trait calls this after `decide`).
            let mut at_now = self.clone();
            at_now.advance(now.get());
            return at_now.retry_at(now, cost as u32);
        }
        let at = match self.max_rem(self.prev, self.curr, cost) {
            // The next window, from its start (the returned rem is W) or
            // once `curr`, now its previous count, has decayed; else the
            // window after it.
            0 => match self.max_rem(self.curr, 0, cost) {
                0 => self.end + u128::from(self.window),
                rem => self.end + u128::from(self.window) - u128::from(rem),
            },
            // In this window, at rem = max_rem (rem falls as time passes).
            rem => (self.end - u128::from(rem)).max(t),
        };
        u64::try_from(at).ok().map(Nanos::new)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use proptest::prelude::*;

    use super::*;
    use crate::limiter::Decision::{Admit, Reject};
    use crate::limiter::{FixedWindow, LimiterSpec, WindowAlign};
    use crate::scenario::Scenario;

    fn s(v: u64) -> Nanos {
        Nanos::from_secs(v)
    }

    fn window(requests: u64, window: Nanos, rounding: Rounding) -> WeightedWindow {
        WeightedWindow::new(
            Limit { requests, window },
            WeightedWindowSpec { rounding, ..WeightedWindowSpec::DEFAULT },
        )
    }

    /// The golden example: 42 in the previous minute, 18 in this one, 15 s into it, L = 50.
    /// Exact: 42 * 45 + (18 + 1) * 60 = 1890 + 1140 = 3030 > 3000 = 50 * 60:
    /// reject (the estimate with this request is 31.5 + 19 = 50.5).
    /// Floor: floor(42 * 45 / 60) = floor(31.5) = 31, and 31 + 18 + 1 = 50
    /// <= 50: admit; the next one makes 31 + 19 + 1 = 51 > 50: reject.
    /// (The limiter itself admits an 18th request in that minute only once
    /// 42 * rem + 18 * 60 <= 3000, about 14.3 s into it, so the test sets the
    /// counts of the minute [60 s, 120 s) directly.)
    #[test]
    fn golden_42_18_at_15_seconds() {
        let mut exact = window(50, s(60), Rounding::Exact);
        let mut floor = window(50, s(60), Rounding::Floor);
        for l in [&mut exact, &mut floor] {
            for _ in 0..42 {
                assert_eq!(l.decide(s(10), 1), Admit);
            }
            assert_eq!(l.decide(s(60), 1), Admit); // moves to [60 s, 120 s)
            l.curr = 18;
            assert_eq!(l.counts(), (42, 18));
        }
        assert_eq!(exact.decide(s(75), 1), Reject);
        assert_eq!(exact.counts(), (42, 18));
        assert_eq!(floor.decide(s(75), 1), Admit);
        assert_eq!(floor.decide(s(75), 1), Reject);
        assert_eq!(floor.counts(), (42, 19));
        // Exact admits once 42 * rem + 19 * 60 s <= 50 * 60 s: rem <= 1860 s / 42
        // = 44.285714285... s, from 120 s - 44 285 714 285 ns.
        let first = Nanos::new(s(120).get() - 44_285_714_285);
        assert_eq!(exact.retry_at(s(75), 1), Some(first));
        // Floor, after its admission: floor(42 rem / 60 s) + 20 <= 50 iff
        // 42 rem < 31 * 60 s = 1860 s: rem <= 44 285 714 285 ns as well.
        assert_eq!(floor.retry_at(s(75), 1), Some(first));
    }

    /// The same counts reached by requests alone: 42 at 10 s; at 60 s they
    /// weigh in full, so 8 fit; the estimate then falls as the minute passes.
    #[test]
    fn weight_decays_through_the_window() {
        let mut l = window(50, s(60), Rounding::Exact);
        for _ in 0..42 {
            assert_eq!(l.decide(s(10), 1), Admit);
        }
        for _ in 0..8 {
            assert_eq!(l.decide(s(60), 1), Admit); // 42 * 60 + 8 * 60 <= 3000
        }
        assert_eq!(l.decide(s(60), 1), Reject);
        // 42 * (W - e) + 9 * 60 <= 3000 iff W - e <= 58.57 s: from 61.428... s.
        // In ns: 42 * rem <= 41 * 60e9 iff rem <= 58 571 428 571 ns.
        let first = Nanos::new(s(120).get() - 58_571_428_571);
        assert_eq!(l.retry_at(s(60), 1), Some(first));
        assert_eq!(l.clone().decide(Nanos::new(first.get() - 1), 1), Reject);
        assert_eq!(l.decide(first, 1), Admit);
        assert_eq!(l.counts(), (42, 9));
    }

    #[test]
    fn only_the_window_just_before_counts() {
        let mut l = window(2, s(1), Rounding::Exact);
        assert_eq!(l.decide(Nanos::from_millis(900), 1), Admit);
        assert_eq!(l.decide(Nanos::from_millis(900), 1), Admit);
        // Window [1 s, 2 s): prev = 2 weighs 2 * (1 - e).
        assert_eq!(l.decide(Nanos::from_millis(1400), 1), Reject); // 1.2 + 1 > 2
        assert_eq!(l.decide(Nanos::from_millis(1500), 1), Admit); // 1 + 1 <= 2
        assert_eq!(l.counts(), (2, 1));
        // Window [3 s, 4 s) follows an empty one: prev = 0.
        assert_eq!(l.decide(Nanos::from_millis(3000), 1), Admit);
        assert_eq!(l.decide(Nanos::from_millis(3000), 1), Admit);
        assert_eq!(l.counts(), (0, 2));
        assert_eq!(l.decide(Nanos::from_millis(3000), 1), Reject);
    }

    #[test]
    fn offset_moves_the_grid_like_the_fixed_window() {
        let spec = WeightedWindowSpec { offset: Nanos::from_millis(300), ..WeightedWindowSpec::DEFAULT };
        let mut l = WeightedWindow::new(Limit { requests: 1, window: s(1) }, spec);
        assert_eq!(l.decide(Nanos::ZERO, 1), Admit); // window [-700 ms, 300 ms)
        assert_eq!(l.decide(Nanos::from_millis(299), 1), Reject);
        // [300 ms, 1300 ms): prev = 1 weighs (1300 - t) / 1000: admit from 1300 ms.
        assert_eq!(l.retry_at(Nanos::from_millis(299), 1), Some(Nanos::from_millis(1300)));
        assert_eq!(l.decide(Nanos::from_millis(1299), 1), Reject);
        assert_eq!(l.decide(Nanos::from_millis(1300), 1), Admit);
        assert_eq!(l.counts(), (0, 1));
    }

    #[test]
    fn counting_rejected_requests() {
        let spec = WeightedWindowSpec { count_rejected: true, ..WeightedWindowSpec::DEFAULT };
        let mut l = WeightedWindow::new(Limit { requests: 2, window: s(1) }, spec);
        for d in [Admit, Admit, Reject, Reject] {
            assert_eq!(l.decide(Nanos::from_millis(500), 1), d);
        }
        assert_eq!(l.counts(), (0, 4));
        // prev = 4 at weight (2000 - t) / 1000 <= 1 only from 1750 ms.
        assert_eq!(l.retry_at(Nanos::from_millis(500), 1), Some(Nanos::from_millis(1750)));
        assert_eq!(l.decide(Nanos::from_millis(1749), 1), Reject);
        assert_eq!(l.counts(), (4, 1));
    }

    #[test]
    fn retry_after_a_full_window_is_two_windows_on() {
        // L = c: nothing may weigh at all (exact), so the next window is no
        // good while prev > 0; the window after it is empty.
        let mut l = window(1, s(1), Rounding::Exact);
        assert_eq!(l.decide(Nanos::from_millis(100), 1), Admit);
        assert_eq!(l.decide(Nanos::from_millis(100), 1), Reject);
        assert_eq!(l.retry_at(Nanos::from_millis(100), 1), Some(s(2)));
        // Floor: floor(1 * rem / W) = 0 for any rem < W: from 1 s + 1 ns.
        let mut l = window(1, s(1), Rounding::Floor);
        assert_eq!(l.decide(Nanos::from_millis(100), 1), Admit);
        assert_eq!(l.decide(Nanos::from_millis(100), 1), Reject);
        assert_eq!(l.retry_at(Nanos::from_millis(100), 1), Some(Nanos::new(s(1).get() + 1)));
        assert_eq!(l.clone().decide(s(1), 1), Reject);
        assert_eq!(l.decide(Nanos::new(s(1).get() + 1), 1), Admit);
    }

    #[test]
    fn end_of_time() {
        let mut l = window(1, Nanos::new(u64::MAX), Rounding::Floor);
        assert_eq!(l.decide(Nanos::new(u64::MAX - 1), 1), Admit);
        assert_eq!(l.decide(Nanos::MAX, 1), Reject);
        assert_eq!(l.retry_at(Nanos::MAX, 1), None);
        let mut l = window(u64::MAX, s(1), Rounding::Exact);
        assert_eq!(l.decide(Nanos::MAX, u32::MAX), Admit);
        assert_eq!(l.decide(Nanos::MAX, u32::MAX), Admit);
    }

    // ---- properties ----------------------------------------------------------

    /// Sorted times for a window of `window` ns, drawn after it: same-instant
    /// bursts, gaps of exactly `W`, `W - 1` and `W + 1` (and `edges`, such as
    /// the distance from 0 to the first window edge of an offset grid), and
    /// long gaps.
    fn times(window: u64, edges: Vec<u64>) -> impl Strategy<Value = Vec<u64>> {
        let mut edges = edges;
        edges.extend([window - 1, window, window + 1]);
        prop::collection::vec(
            prop_oneof![
                3 => 0..=window / 3,
                2 => Just(0u64),
                1 => Just(window),
                1 => prop::sample::select(edges),
                1 => 0..=3 * window,
            ],
            0..250,
        )
        .prop_map(|gaps| {
            let mut t = 0u64;
            gaps.into_iter()
                .map(|g| {
                    t += g;
                    t
                })
                .collect()
        })
    }

    /// `W` in `w`, an offset below `2000`, and [`times`] for them whose gaps
    /// also reach the offset grid's first edge (`offset % W`, and 1 ns on
    /// either side).
    fn window_and_times(w: std::ops::Range<u64>) -> impl Strategy<Value = (u64, u64, Vec<u64>)> {
        (w, 0u64..2000).prop_flat_map(|(w, offset)| {
            let phase = offset % w;
            (Just(w), Just(offset), times(w, vec![phase.saturating_sub(1), phase, phase + 1]))
        })
    }

    /// The oracle: every counted request kept, windows and counts recomputed
    /// from scratch for each request, the rule evaluated as written (`floor`
    /// by a division), in i128.
    fn brute(
        limit: u64,
        w: u64,
        offset: u64,
        rounding: Rounding,
        count_rejected: bool,
        reqs: &[(u64, u32)],
    ) -> Vec<bool> {
        let (l, w, phase) = (i128::from(limit), i128::from(w), i128::from(offset % w));
        let index = |t: u64| (i128::from(t) - phase).div_euclid(w);
        let mut counted: Vec<(i128, i128)> = Vec::new(); // (window index, cost)
        reqs.iter()
            .map(|&(t, c)| {
                let k = index(t);
                let prev: i128 = counted.iter().filter(|(i, _)| *i == k - 1).map(|(_, c)| c).sum();
                let curr: i128 = counted.iter().filter(|(i, _)| *i == k).map(|(_, c)| c).sum();
                let e = i128::from(t) - (k * w + phase);
                assert!((0..w).contains(&e));
                let c = i128::from(c);
                let ok = match rounding {
                    Rounding::Exact => prev * (w - e) + (curr + c) * w <= l * w,
                    Rounding::Floor => (prev * (w - e)).div_euclid(w) + curr + c <= l,
                };
                if ok || count_rejected {
                    counted.push((k, c));
                }
                ok
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn matches_the_brute_force_oracle(
            limit in 1u64..8,
            (w, offset, ts) in window_and_times(1..1000),
            floor in any::<bool>(),
            count_rejected in any::<bool>(),
            costs in prop::collection::vec(prop_oneof![6 => Just(1u32), 1 => 2u32..5], 250),
        ) {
            let rounding = if floor { Rounding::Floor } else { Rounding::Exact };
            let reqs: Vec<(u64, u32)> = ts.iter().copied().zip(costs.iter().copied()).collect();
            let expected = brute(limit, w, offset, rounding, count_rejected, &reqs);
            let spec = WeightedWindowSpec { rounding, offset: Nanos::new(offset % w), count_rejected };
            let mut l = spec.build(Limit { requests: limit, window: Nanos::new(w) });
            for (&(t, c), &ok) in reqs.iter().zip(&expected) {
                prop_assert_eq!(l.decide(Nanos::new(t), c).admitted(), ok, "t = {}, cost {}", t, c);
            }
        }

        /// With `prev = 0` the rule is the fixed window's: traces are spread
        /// over every other window (a request in window j goes to window 2j,
        /// same place in it), so no window follows one with requests, and
        /// the decisions must equal the aligned fixed window's with the same
        /// offset, for both roundings (floor(0) = 0) and with
        /// `count_rejected` (cost 1: a rejected request only counts once the
        /// window is already full). The traces put bursts at one instant,
        /// requests on both sides of window edges and exactly on them, so
        /// both limiters fill windows and reject.
        #[test]
        fn with_no_previous_window_it_is_the_fixed_window(
            limit in 1u64..8,
            (w, offset, ts) in window_and_times(2..1000),
            floor in any::<bool>(),
            count_rejected in any::<bool>(),
        ) {
            let phase = offset % w;
            let rounding = if floor { Rounding::Floor } else { Rounding::Exact };
            let limit_ = Limit { requests: limit, window: Nanos::new(w) };
            let spec = WeightedWindowSpec { rounding, offset: Nanos::new(phase), count_rejected };
            let mut weighted = spec.build(limit_);
            let mut fixed = FixedWindow::new(limit_, WindowAlign::Epoch { offset: Nanos::new(phase) });
            // Shift so the grid starts at 0, spread, shift back.
            let spread = |t: u64| (t / w) * 2 * w + t % w + phase;
            for &t in &ts {
                let t = spread(t);
                prop_assert_eq!(weighted.decide(Nanos::new(t), 1), fixed.decide(Nanos::new(t), 1), "t = {}", t);
                prop_assert_eq!(weighted.counts().0, 0);
            }
        }

        /// With no other traffic, the advertised time is admitted and 1 ns
        /// before it is not, for every rounding, offset and `count_rejected`.
        #[test]
        fn retry_at_is_the_first_admitted_instant(
            limit in 1u64..6,
            (w, offset, ts) in window_and_times(2..1000),
            floor in any::<bool>(),
            count_rejected in any::<bool>(),
            cost in 1u32..4,
        ) {
            let rounding = if floor { Rounding::Floor } else { Rounding::Exact };
            let spec = WeightedWindowSpec { rounding, offset: Nanos::new(offset % w), count_rejected };
            let mut l = spec.build(Limit { requests: limit, window: Nanos::new(w) });
            for &t in &ts {
                let now = Nanos::new(t);
                if l.decide(now, cost).admitted() {
                    continue;
                }
                let Some(at) = l.retry_at(now, cost) else {
                    prop_assert!(u64::from(cost) > limit, "no retry time at {}", t);
                    continue;
                };
                prop_assert!(at > now);
                prop_assert!(l.clone().decide(at, cost).admitted(), "rejected at {} (t = {})", at, t);
                prop_assert!(!l.clone().decide(Nanos::new(at.get() - 1), cost).admitted(), "admitted before {}", at);
            }
        }
    }

    // ---- parsing -------------------------------------------------------------

    fn scenario(keys: &str) -> Result<Vec<LimiterSpec>, String> {
        let text = format!(
            "name = \"t\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[[traffic]]\nkind = \"burst\"\ncount = 1\n\
             [[limiter]]\nkind = \"weighted_window\"\n{keys}"
        );
        Scenario::parse(&text, Path::new("s.toml")).map(|s| s.limiters).map_err(|e| e.to_string())
    }

    #[test]
    fn parses_defaults_and_labels() {
        let specs = scenario("").unwrap();
        assert_eq!(specs, [WeightedWindowSpec::DEFAULT.into()]);
        let label = |keys: &str| scenario(keys).unwrap()[0].label();
        assert_eq!(label(""), "weighted_window");
        assert_eq!(label("rounding = \"exact\""), "weighted_window");
        assert_eq!(label("rounding = \"floor\""), "weighted_window(floor)");
        assert_eq!(label("offset = \"300ms\""), "weighted_window(offset=300ms)");
        assert_eq!(label("offset = \"2300ms\""), "weighted_window(offset=300ms)"); // modulo W
        assert_eq!(label("offset = \"1s\""), "weighted_window");
        assert_eq!(label("count_rejected = true"), "weighted_window(count_rejected)");
        assert_eq!(label("count_rejected = false"), "weighted_window");
        assert_eq!(
            label("rounding = \"floor\"\noffset = \"300ms\"\ncount_rejected = true"),
            "weighted_window(floor;offset=300ms;count_rejected)"
        );
        assert_eq!(
            scenario("rounding = \"floor\"\noffset = \"300ms\"").unwrap(),
            [WeightedWindowSpec {
                rounding: Rounding::Floor,
                offset: Nanos::from_millis(300),
                count_rejected: false
            }
            .into()]
        );
    }

    #[test]
    fn refuses_bad_keys() {
        let e = scenario("rounding = \"flor\"").unwrap_err();
        assert_eq!(
            e,
            "s.toml:10:12: `limiter[0].rounding` = \"flor\" is not known: expected one of \"exact\", \"floor\"; did you mean \"floor\"?"
        );
        let e = scenario("rounding = 1").unwrap_err();
        assert!(
            e.starts_with("s.toml:10:12: `limiter[0].rounding`: expected a string, found the number 1"),
            "{e}"
        );
        let e = scenario("count_rejected = \"yes\"").unwrap_err();
        assert!(e.contains("`limiter[0].count_rejected`") && e.contains("expected true or false"), "{e}");
        let e = scenario("offset = \"-1s\"").unwrap_err();
        assert!(e.starts_with("s.toml:10:10: `limiter[0].offset`") && e.contains("negative"), "{e}");
        let e = scenario("offset = 300").unwrap_err();
        assert!(e.contains("`limiter[0].offset`") && e.contains("expected a string"), "{e}");
        let e = scenario("burst = 1").unwrap_err();
        assert!(
            e.contains("not a key of kind \"weighted_window\" (it takes: rounding, offset, count_rejected, retry_after)"),
            "{e}"
        );
    }
}
