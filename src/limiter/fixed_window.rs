//! Fixed window counter (`fixed_window`): one counter that resets when the
//! window changes. Aligned to a grid (`align = "epoch"`, optional `offset`)
//! or opened by the first request after the previous window ended
//! (`align = "first-request"`, as Python `limits`' FixedWindow does).

use serde::Deserialize;
use toml::Spanned;

use super::{
    Algorithm, Cutting, Decision, DiagramStyle, FastDiv, Limit, Limiter, StateSize, Style, SweepTraits,
};
use crate::scenario::{Entry, ScenarioError};
use crate::time::{Nanos, format_duration};

/// Where fixed windows start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowAlign {
    /// Windows are `[offset + kW, offset + (k+1)W)` on a fixed grid.
    Epoch { offset: Nanos },
    /// A window starts at the first request at or after the previous
    /// window's end.
    FirstRequest,
}

/// `kind = "fixed_window"`: `align = "epoch" | "first-request"`, `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedWindowSpec {
    pub align: WindowAlign,
}

impl FixedWindowSpec {
    /// Aligned to the epoch grid with no offset (the default).
    pub const ALIGNED: FixedWindowSpec =
        FixedWindowSpec { align: WindowAlign::Epoch { offset: Nanos::ZERO } };
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    #[allow(dead_code)]
    kind: serde::de::IgnoredAny,
    align: Option<Spanned<String>>,
    offset: Option<Spanned<String>>,
}

impl Algorithm for FixedWindowSpec {
    type Limiter = FixedWindow;
    const KIND: &'static str = "fixed_window";

    fn parse(entry: &Entry<'_>) -> Result<Vec<Self>, ScenarioError> {
        let keys: Keys = entry.keys()?;
        let first_request = match &keys.align {
            None => false,
            Some(a) if a.get_ref() == "epoch" => false,
            Some(a) if a.get_ref() == "first-request" => true,
            Some(a) => return Err(entry.one_of("align", a, &["epoch", "first-request"])),
        };
        let align = match (first_request, &keys.offset) {
            (true, Some(o)) => {
                return Err(entry
                    .at(o.span(), format!("`{}` only applies to align = \"epoch\"", entry.key("offset"))));
            }
            (true, None) => WindowAlign::FirstRequest,
            (false, offset) => {
                let offset = offset.as_ref().map(|o| entry.duration_of("offset", o)).transpose()?;
                let window = entry.limit().window.get();
                WindowAlign::Epoch { offset: Nanos::new(offset.map_or(0, |o| o.get() % window)) }
            }
        };
        Ok(vec![FixedWindowSpec { align }])
    }

    fn shares_counts(&self) -> bool {
        true
    }

    fn advertises_retry(&self) -> bool {
        true
    }

    fn label(&self) -> String {
        match self.align {
            WindowAlign::Epoch { offset } if offset == Nanos::ZERO => "fixed_window".to_string(),
            WindowAlign::Epoch { offset } => format!("fixed_window(offset={})", format_duration(offset)),
            WindowAlign::FirstRequest => "fixed_window(first-request)".to_string(),
        }
    }

    fn build(&self, limit: Limit) -> FixedWindow {
        FixedWindow::new(limit, self.align)
    }

    fn style(&self) -> Style {
        match self.align {
            // Drawn wide and first, so that N = 1 (identical by definition)
            // shows on top of it.
            WindowAlign::Epoch { .. } => {
                Style { rgb: (214, 39, 40), line_width: 7, short: Algorithm::label(self).replace('_', " ") }
            }
            WindowAlign::FirstRequest => {
                Style { rgb: (255, 127, 14), line_width: 4, short: "first-request window".into() }
            }
        }
    }

    /// Drawn on the aligned grid: with an offset or opened by the first
    /// request, its windows are not the diagram's.
    fn diagram_style(&self) -> Option<DiagramStyle> {
        let short = Algorithm::style(self).short;
        (*self == FixedWindowSpec::ALIGNED).then(|| DiagramStyle {
            cutting: Cutting::Windows,
            cut_name: format!("{short}s"),
            name: short,
        })
    }

    fn sweep_traits(&self) -> SweepTraits {
        match self.align {
            // A burst at one instant lands in one window: whole or nothing.
            // The aligned fixed window is N = 1 whatever its phase.
            WindowAlign::Epoch { .. } => SweepTraits {
                bursts_scale_with_limit: true,
                equivalent_slots: Some(1),
                analytic_burst_pair: Some((1.0, 0.5)),
                pair_opens_window: false,
            },
            WindowAlign::FirstRequest => SweepTraits {
                bursts_scale_with_limit: true,
                equivalent_slots: None,
                analytic_burst_pair: None,
                pair_opens_window: true,
            },
        }
    }
}

#[derive(Clone, Debug)]
pub struct FixedWindow {
    limit: u64,
    window: u64,
    align: WindowAlign,
    /// Epoch alignment: the offset reduced modulo W.
    phase: u64,
    by_window: FastDiv,
    /// End (exclusive) of the current window; 0 before the first request. A
    /// request before it needs no arithmetic. u128 so a window that would
    /// end past the last nanosecond never ends.
    end: u128,
    count: u64,
}

impl FixedWindow {
    pub fn new(limit: Limit, align: WindowAlign) -> FixedWindow {
        assert!(limit.window.get() > 0, "window must be positive");
        let phase = match align {
            WindowAlign::Epoch { offset } => offset.get() % limit.window.get(),
            WindowAlign::FirstRequest => 0,
        };
        FixedWindow {
            limit: limit.requests,
            window: limit.window.get(),
            align,
            phase,
            by_window: FastDiv::new(limit.window.get()),
            end: 0,
            count: 0,
        }
    }

    /// End (exclusive) of the window a request at `t` opens or falls in,
    /// given that `t` is past the current window.
    #[inline]
    fn next_end(&self, t: u64) -> u128 {
        match self.align {
            // The window straddling 0 is the one that started at phase - W.
            WindowAlign::Epoch { .. } if t < self.phase => u128::from(self.phase),
            WindowAlign::Epoch { .. } => {
                let into = self.by_window.div_rem(t - self.phase).1;
                u128::from(t - into) + u128::from(self.window)
            }
            // t >= start + W opens a new window at t.
            WindowAlign::FirstRequest => u128::from(t) + u128::from(self.window),
        }
    }
}

impl Limiter for FixedWindow {
    #[inline(always)]
    fn decide(&mut self, now: Nanos, cost: u32) -> Decision {
        if u128::from(now.get()) >= self.end {
            self.end = self.next_end(now.get());
            self.count = 0;
        }
        let cost = u64::from(cost);
        if self.count + cost <= self.limit {
            self.count += cost;
            Decision::Admit
        } else {
            Decision::Reject
        }
    }

    fn absorb(&mut self, now: Nanos, cost: u32) {
        if u128::from(now.get()) >= self.end {
            self.end = self.next_end(now.get());
            self.count = 0;
        }
        self.count = self.count.saturating_add(u64::from(cost));
    }

    fn peak_state(&self) -> StateSize {
        // One counter and the start of its window.
        StateSize { entries: 1, bytes: 16 }
    }

    /// The next window's start: the counter resets there (aligned), or a
    /// request there opens a new window (first-request).
    fn retry_at(&self, _now: Nanos, cost: u32) -> Option<Nanos> {
        if u64::from(cost) > self.limit {
            return None;
        }
        u64::try_from(self.end).ok().map(Nanos::new)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::limiter::Decision::{Admit, Reject};

    fn ms(v: u64) -> Nanos {
        Nanos::from_millis(v)
    }

    fn limit(requests: u64, window_ms: u64) -> Limit {
        Limit { requests, window: ms(window_ms) }
    }

    #[test]
    fn aligned_resets_exactly_on_the_boundary() {
        let mut l = FixedWindow::new(limit(2, 1000), WindowAlign::Epoch { offset: Nanos::new(0) });
        assert_eq!(l.decide(ms(999), 1), Admit);
        assert_eq!(l.decide(ms(999), 1), Admit); // same instant, counted
        assert_eq!(l.decide(Nanos::new(999_999_999), 1), Reject);
        // t = 1000 ms is in window 1: the counter resets.
        assert_eq!(l.decide(ms(1000), 1), Admit);
        assert_eq!(l.decide(ms(1000), 1), Admit);
        assert_eq!(l.decide(ms(1000), 1), Reject);
        // Exactly W after the last reset: window 2.
        assert_eq!(l.decide(ms(2000), 1), Admit);
    }

    #[test]
    fn phase_offset_moves_the_grid() {
        let mut l = FixedWindow::new(limit(1, 1000), WindowAlign::Epoch { offset: ms(300) });
        assert_eq!(l.decide(ms(0), 1), Admit); // window [-700, 300)
        assert_eq!(l.decide(ms(299), 1), Reject);
        assert_eq!(l.decide(ms(300), 1), Admit); // window [300, 1300)
        assert_eq!(l.decide(ms(1299), 1), Reject);
        assert_eq!(l.decide(ms(1300), 1), Admit);
    }

    #[test]
    fn first_request_window_starts_at_the_request() {
        let mut l = FixedWindow::new(limit(2, 1000), WindowAlign::FirstRequest);
        assert_eq!(l.decide(ms(400), 1), Admit); // window [400, 1400)
        assert_eq!(l.decide(ms(1000), 1), Admit);
        assert_eq!(l.decide(ms(1399), 1), Reject);
        // t >= start + W resets: exactly W after the opener.
        assert_eq!(l.decide(ms(1400), 1), Admit); // window [1400, 2400)
        assert_eq!(l.decide(ms(2399), 1), Admit);
        assert_eq!(l.decide(ms(2399), 1), Reject);
        // A gap longer than W: the next request opens a new window.
        assert_eq!(l.decide(ms(5000), 1), Admit);
    }

    #[test]
    fn cost_takes_several_permits() {
        let mut l = FixedWindow::new(limit(5, 1000), WindowAlign::Epoch { offset: Nanos::new(0) });
        assert_eq!(l.decide(ms(1), 3), Admit);
        assert_eq!(l.decide(ms(2), 3), Reject);
        assert_eq!(l.decide(ms(3), 2), Admit);
    }

    // ---- golden values: docs/semantics.md and Python `limits`' tests --------

    /// docs/semantics.md, "Fixed window, first-request": `L = 3` per 1 us,
    /// requests at 0, 999, 999 and three at 1000 ns: all six admitted (the
    /// window opened at 0 ends at 1000, where the next one opens).
    #[test]
    fn semantics_first_request_example() {
        let mut l =
            FixedWindow::new(Limit { requests: 3, window: Nanos::new(1000) }, WindowAlign::FirstRequest);
        for t in [0, 999, 999, 1000, 1000, 1000] {
            assert_eq!(l.decide(Nanos::new(t), 1), Admit, "t = {t}");
        }
        assert_eq!(l.decide(Nanos::new(1999), 1), Reject);
    }

    /// Python `limits`' `tests/test_strategy.py`, `test_fixed_window`
    /// (`FixedWindowRateLimiter`, memory storage, frozen clock): limit
    /// `RateLimitItemPerSecond(10, 2)`, ten hits at the start all pass, a
    /// hit 1 s later fails with the reset time at start + 2 s, and a hit
    /// at start + 2 s passes (the key expired: `expiry <= time.time()`).
    #[test]
    fn limits_test_fixed_window() {
        let mut l =
            FixedWindow::new(Limit { requests: 10, window: Nanos::from_secs(2) }, WindowAlign::FirstRequest);
        let start = ms(250);
        for _ in 0..10 {
            assert_eq!(l.decide(start, 1), Admit);
        }
        assert_eq!(l.decide(start + ms(1000), 1), Reject);
        assert_eq!(l.retry_at(start + ms(1000), 1), Some(start + ms(2000)));
        assert_eq!(l.decide(start + ms(2000), 1), Admit);
    }

    /// `limits`' `test_fixed_window_multiple_cost`: limit
    /// `RateLimitItemPerMinute(10, 2)`; key k1: a hit of cost 11 fails; key
    /// k2: cost 5 passes (5 remaining), then cost 6 fails.
    #[test]
    fn limits_test_fixed_window_multiple_cost() {
        let limit = Limit { requests: 10, window: Nanos::from_secs(120) };
        let mut k1 = FixedWindow::new(limit, WindowAlign::FirstRequest);
        assert_eq!(k1.decide(ms(0), 11), Reject);
        assert_eq!(k1.retry_at(ms(0), 11), None); // never: more than the limit
        let mut k2 = FixedWindow::new(limit, WindowAlign::FirstRequest);
        assert_eq!(k2.decide(ms(0), 5), Admit);
        assert_eq!(k2.decide(ms(0), 6), Reject);
    }

    /// `limits`' `test_test_fixed_window`: `RateLimitItemPerHour(2, 1)`:
    /// two hits pass, the third fails.
    #[test]
    fn limits_test_test_fixed_window() {
        let mut l = FixedWindow::new(
            Limit { requests: 2, window: Nanos::from_secs(3600) },
            WindowAlign::FirstRequest,
        );
        assert_eq!([0, 0, 0].map(|t| l.decide(ms(t), 1)), [Admit, Admit, Reject]);
    }

    // ---- a brute-force oracle from the contract -------------------------------

    /// The windows as `docs/semantics.md` defines them, request by request:
    /// aligned, request `t` is in window `floor((t - offset) / W)` (the
    /// offset as given, not reduced: the same cut of time); first-request,
    /// a window opens at the first request and at the first one at or
    /// after `start + W`. A request is admitted iff the costs admitted so far
    /// in its window plus its own are at most `L`. Each decision, and for a
    /// refusal the next window's start (`None` past the last nanosecond, or
    /// when the cost is over `L`).
    fn oracle(limit: Limit, align: (bool, u64), reqs: &[(u64, u32)]) -> Vec<(bool, Option<u64>)> {
        let (first_request, offset) = align;
        let (l, w) = (limit.requests, i128::from(limit.window.get()));
        // (window, cost) of each admitted request.
        let mut admitted: Vec<(i128, u64)> = Vec::new();
        let mut opened: Option<i128> = None;
        let mut out = Vec::new();
        for &(t, cost) in reqs {
            let t = i128::from(t);
            // A window is named by its start.
            let start = if first_request {
                let start = match opened {
                    Some(s) if t < s + w => s,
                    _ => t,
                };
                opened = Some(start);
                start
            } else {
                (t - i128::from(offset)).div_euclid(w) * w + i128::from(offset)
            };
            let used: u64 = admitted.iter().filter(|&&(s, _)| s == start).map(|&(_, c)| c).sum();
            if used + u64::from(cost) <= l {
                admitted.push((start, u64::from(cost)));
                out.push((true, None));
            } else {
                let next = u64::try_from(start + w).ok().filter(|_| u64::from(cost) <= l);
                out.push((false, next));
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// The limiter agrees with the oracle, aligned with any offset
        /// (also more than `W`) and first-request, on random traces (costs
        /// up to 3, some near the last nanosecond), with the advertised
        /// retry time after each refusal.
        #[test]
        fn agrees_with_the_contract(
            requests in 1u64..6,
            window in prop::sample::select(vec![1u64, 7, 1000, 1001, 1_000_000_000]),
            first_request in any::<bool>(),
            offset_in_windows in 0.0f64..3.0,
            near_the_end in prop::bool::weighted(0.2),
            gaps in prop::collection::vec((
                prop_oneof![3 => Just(0u64), 3 => 0u64..3, 3 => 0u64..1000, 1 => 0u64..5000],
                prop_oneof![6 => Just(1u32), 1 => 1u32..4],
            ), 0..150),
        ) {
            let limit = Limit { requests, window: Nanos::new(window) };
            let offset = (offset_in_windows * window as f64) as u64;
            let align = if first_request { WindowAlign::FirstRequest } else { WindowAlign::Epoch { offset: Nanos::new(offset) } };
            let mut l = FixedWindow::new(limit, align);
            // Gaps in thousandths of a window, plus a few ns.
            let mut t = if near_the_end { u64::MAX - 5 * window } else { 0 };
            let reqs: Vec<(u64, u32)> = gaps.iter().map(|&(g, c)| {
                t = t.saturating_add(g * window / 1000 + g % 3);
                (t, c)
            }).collect();
            let want = oracle(limit, (first_request, offset), &reqs);
            for (&(t, cost), (admit, next)) in reqs.iter().zip(want) {
                let got = l.decide(Nanos::new(t), cost);
                prop_assert_eq!(got, if admit { Admit } else { Reject }, "t = {}, cost {}", t, cost);
                if !admit {
                    prop_assert_eq!(l.retry_at(Nanos::new(t), cost).map(Nanos::get), next, "t = {}, cost {}", t, cost);
                }
            }
        }
    }
}
