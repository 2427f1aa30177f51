//! Sliding window approximated by `N` slot counters (`slot_counter`).
//!
//! Slot `k = floor(t * N / W)`; the counted window is slot `k` and the `N - 1`
//! slots before it. Admit iff their sum plus the cost is at most the limit.
//!
//! Representation: only the slots that hold admitted requests are stored, in a
//! queue ordered by slot index, with a running sum. A request pops the slots
//! that fell out of the window and bumps (or pushes) the current one. Each slot
//! is pushed once and popped once, so a decision is O(1) amortised whatever `N`
//! is and however far apart requests are: a ring that clears the slots between
//! two requests one by one costs O(elapsed slots) on sparse traffic, and summing
//! all `N` slots per request (as textbook implementations do) costs O(N).

use serde::Deserialize;
use toml::Spanned;

use super::{
    Algorithm, Cutting, Decision, DiagramStyle, FastDiv, Limit, Limiter, StateSize, Style, SweepTraits,
};
use crate::ring::Ring;
use crate::scenario::{Counts, Entry, ScenarioError};
use crate::time::Nanos;

/// `kind = "slot_counter"`: `slots = [2, 10, 100]` makes one limiter per N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotCounterSpec {
    pub slots: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    #[allow(dead_code)]
    kind: serde::de::IgnoredAny,
    slots: Option<Spanned<Counts>>,
}

impl Algorithm for SlotCounterSpec {
    type Limiter = SlotCounter;
    const KIND: &'static str = "slot_counter";

    fn parse(entry: &Entry<'_>) -> Result<Vec<Self>, ScenarioError> {
        let keys: Keys = entry.keys()?;
        let slots = keys.slots.ok_or_else(|| {
            entry.at(
                entry.span(),
                format!(
                    "`{}` is required: a slot count or a list of them, like 10 or [2, 10, 100]",
                    entry.key("slots")
                ),
            )
        })?;
        let window = entry.limit().window.get();
        let mut specs = Vec::new();
        for (key, n) in entry.counts("slots", slots, "give at least one slot count")? {
            let v = entry.at_least_one_whole(&key, &n)?;
            // Past what an i64 holds every count is refused in the same
            // words, large or larger: the window's where it is shorter
            // than 2^63 ns, else (a window past 292 years) those of every
            // count, below.
            if v.min(i128::from(i64::MAX) + 1) > i128::from(window) {
                return Err(entry.at(
                    n.span(),
                    format!(
                        "`{}`: {v} slots is more than the window has nanoseconds ({window}); a slot must be at least 1 ns",
                        entry.key(&key),
                    ),
                ));
            }
            // Read as written past i64 (`Counts`) for the window's bound
            // above; a window past 292 years has more nanoseconds than an
            // i64 holds, and no count may pass what every other count key
            // takes.
            let v = entry.count_at_least_one(&key, &n)?;
            specs.push(SlotCounterSpec { slots: v });
        }
        Ok(specs)
    }

    fn shares_counts(&self) -> bool {
        true
    }

    fn advertises_retry(&self) -> bool {
        true
    }

    fn label(&self) -> String {
        format!("slot_counter(N={})", self.slots)
    }

    fn build(&self, limit: Limit) -> SlotCounter {
        SlotCounter::new(limit, self.slots)
    }

    fn style(&self) -> Style {
        let short = if self.slots == 1 { "1 slot".to_string() } else { format!("{} slots", self.slots) };
        Style { rgb: slot_colour(self.slots), line_width: 2, short }
    }

    fn diagram_style(&self) -> Option<DiagramStyle> {
        let short = Algorithm::style(self).short;
        Some(DiagramStyle { cutting: Cutting::Slots(self.slots), name: short.clone(), cut_name: short })
    }

    fn sweep_traits(&self) -> SweepTraits {
        // A burst at one instant lands in one slot: whole or nothing.
        let n = self.slots as f64;
        SweepTraits {
            bursts_scale_with_limit: true,
            equivalent_slots: Some(self.slots),
            analytic_burst_pair: Some((1.0 / n, 1.0 / (2.0 * n))),
            pair_opens_window: false,
        }
    }

    fn slots(&self) -> Option<u64> {
        Some(self.slots)
    }
}

/// A colour per slot count: the common ones fixed (Tableau 10, but for 2,
/// 5 and 100 slots), others from a small palette. Each at least 20 apart
/// (CIEDE2000, the charts' measure) from the fixed window's red, the
/// first-request window's orange, 10 and 100 slots and the sliding log,
/// which runs of slot counters mostly hold: Tableau's brown for 2 slots
/// was 16 from the fixed window's red and is a darker brown; its pink for 5
/// slots was 17 from 1 slot's purple and is a hotter pink; the palette's
/// peru (6 slots) was 10 from the first-request orange, its green (3, 8
/// and 13 slots) 9 from 100 slots and its slate blue (4 slots) 16 from 10
/// slots. 100 slots is Okabe and Ito's bluish green: Tableau's green was 5
/// from the fixed window's red to a deuteranope (18 now). Slot counts of
/// one colour in one run are told apart by the run's palette.
fn slot_colour(n: u64) -> (u8, u8, u8) {
    match n {
        1 => (148, 103, 189),
        2 => (113, 71, 10),
        5 => (255, 105, 180),
        10 => (31, 119, 180),
        20 => (23, 190, 207),
        50 => (188, 189, 34),
        100 => (0, 158, 115),
        1000 => (57, 59, 121),
        _ => {
            const OTHER: [(u8, u8, u8); 5] =
                [(0, 128, 128), (0, 0, 205), (106, 61, 154), (199, 21, 133), (186, 85, 211)];
            OTHER[(n % OTHER.len() as u64) as usize]
        }
    }
}

#[derive(Clone, Debug)]
pub struct SlotCounter {
    limit: u64,
    window: u64,
    slots: u64,
    /// Non-empty slots in the window: (slot index, admitted count).
    live: Ring<(u64, u64)>,
    sum: u64,
    /// Slot index of the last request.
    current: u64,
    by_window: FastDiv,
    peak_entries: u64,
}

impl SlotCounter {
    /// `slots` must be between 1 and the window length in nanoseconds.
    pub fn new(limit: Limit, slots: u64) -> SlotCounter {
        assert!(slots >= 1 && slots <= limit.window.get(), "1 <= slots <= window in ns");
        SlotCounter {
            limit: limit.requests,
            window: limit.window.get(),
            slots,
            live: Ring::new(),
            sum: 0,
            current: 0,
            by_window: FastDiv::new(limit.window.get()),
            peak_entries: 0,
        }
    }

    /// `floor(t * N / W)`, exact.
    #[inline]
    pub fn slot_index(&self, t: u64) -> u64 {
        match t.checked_mul(self.slots) {
            Some(p) => p / self.window,
            None => ((t as u128 * self.slots as u128) / self.window as u128) as u64,
        }
    }

    /// First instant of slot `k`: `ceil(k * W / N)`.
    pub fn slot_start(&self, k: u64) -> u64 {
        match k.checked_mul(self.window) {
            Some(num) => num.div_ceil(self.slots),
            None => {
                let num = k as u128 * self.window as u128;
                num.div_ceil(self.slots as u128).min(u64::MAX as u128) as u64
            }
        }
    }

    #[inline]
    fn advance(&mut self, now: u64) {
        // The slot of every request by one multiplication and a division by
        // a precomputed reciprocal: no branch on how far time moved, which
        // is a coin toss when the slot width is near the gap between requests.
        let k = match now.checked_mul(self.slots) {
            Some(scaled) => self.by_window.div(scaled),
            None => ((u128::from(now) * u128::from(self.slots)) / u128::from(self.window)) as u64,
        };
        self.current = k;
        debug_assert_eq!(k, self.slot_index(now));
        // Slots k - N + 1 ..= k are in the window; anything older leaves.
        while let Some(&(slot, count)) = self.live.front() {
            if k - slot >= self.slots {
                self.sum -= count;
                self.live.pop_front();
            } else {
                break;
            }
        }
    }
}

impl Limiter for SlotCounter {
    #[inline(always)]
    fn decide(&mut self, now: Nanos, cost: u32) -> Decision {
        self.advance(now.get());
        let cost = u64::from(cost);
        if self.sum + cost > self.limit {
            return Decision::Reject;
        }
        self.sum += cost;
        match self.live.back_mut() {
            Some((slot, count)) if *slot == self.current => *count += cost,
            _ => {
                self.live.push_back((self.current, cost));
                self.peak_entries = self.peak_entries.max(self.live.len() as u64);
            }
        }
        Decision::Admit
    }

    fn absorb(&mut self, now: Nanos, cost: u32) {
        self.advance(now.get());
        let cost = u64::from(cost);
        self.sum += cost;
        match self.live.back_mut() {
            Some((slot, count)) if *slot == self.current => *count += cost,
            _ => {
                self.live.push_back((self.current, cost));
                self.peak_entries = self.peak_entries.max(self.live.len() as u64);
            }
        }
    }

    /// The first slot boundary at which the counted slots hold room for
    /// `cost`: the oldest slots leave one by one, slot `s` at the start of
    /// slot `s + N`.
    fn retry_at(&self, _now: Nanos, cost: u32) -> Option<Nanos> {
        let cost = u64::from(cost);
        if cost > self.limit {
            return None;
        }
        let mut sum = self.sum;
        let mut i = 0;
        while sum + cost > self.limit {
            let (slot, count) = *self.live.get(i)?;
            sum -= count;
            i += 1;
            if sum + cost <= self.limit {
                // The start of slot `slot + N`: ceil((slot + N) W / N).
                let k = u128::from(slot) + u128::from(self.slots);
                let start = (k * u128::from(self.window)).div_ceil(u128::from(self.slots));
                return u64::try_from(start).ok().map(Nanos::new);
            }
        }
        None
    }

    fn restart_peak(&mut self) {
        self.peak_entries = self.live.len() as u64;
    }

    fn peak_state(&self) -> StateSize {
        // Each stored slot is an index and a count; plus the running sum.
        StateSize { entries: self.peak_entries, bytes: self.peak_entries * 16 + 8 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limiter::Decision::{Admit, Reject};

    fn ms(v: u64) -> Nanos {
        Nanos::from_millis(v)
    }

    fn counter(requests: u64, window_ms: u64, slots: u64) -> SlotCounter {
        SlotCounter::new(Limit { requests, window: ms(window_ms) }, slots)
    }

    /// The slot counts of a scenario with `[limit]` 10 per 1 s and this
    /// `slots` value.
    fn parse(slots: &str) -> Result<Vec<u64>, String> {
        let text = format!(
            "name = \"t\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[[traffic]]\nkind = \"burst\"\ncount = 1\n\
             [[limiter]]\nkind = \"slot_counter\"\nslots = {slots}\n"
        );
        crate::scenario::Scenario::parse(&text, std::path::Path::new("s.toml"))
            .map(|s| {
                s.limiters
                    .iter()
                    .filter(|l| l.algorithm() == "slot_counter")
                    .filter_map(|l| l.slots())
                    .collect()
            })
            .map_err(|e| e.to_string())
    }

    /// `slots = 10` is one limiter, as `[10]` is; values keep their place in
    /// the file, and a count past i64 is refused by the window's bound.
    #[test]
    fn slots_take_a_number_or_a_list() {
        assert_eq!(parse("10"), Ok(vec![10]));
        assert_eq!(parse("[10]"), Ok(vec![10]));
        assert_eq!(parse("[2, 10, 100]"), Ok(vec![2, 10, 100]));
        assert_eq!(
            parse("0").unwrap_err(),
            "s.toml:10:9: `limiter[0].slots` must be a whole number of at least 1, got 0"
        );
        assert_eq!(
            parse("[2, 0]").unwrap_err(),
            "s.toml:10:13: `limiter[0].slots[1]` must be a whole number of at least 1, got 0"
        );
        let e = parse("99999999999999999999").unwrap_err();
        assert!(
            e.starts_with(
                "s.toml:10:9: `limiter[0].slots`: 99999999999999999999 slots is more than the window"
            ),
            "{e}"
        );
    }

    #[test]
    fn slot_index_is_floor_t_n_over_w() {
        let c = counter(1, 1000, 10);
        assert_eq!(c.slot_index(0), 0);
        assert_eq!(c.slot_index(ms(99).get()), 0);
        assert_eq!(c.slot_index(ms(100).get()), 1);
        assert_eq!(c.slot_index(ms(1000).get()), 10);
        // W not divisible by N: W = 1000 ns, N = 3.
        let c = SlotCounter::new(Limit { requests: 1, window: Nanos::new(1000) }, 3);
        assert_eq!(c.slot_index(333), 0);
        assert_eq!(c.slot_index(334), 1);
        assert_eq!(c.slot_start(1), 334);
        assert_eq!(c.slot_start(2), 667);
        // Past u64 in k * W: the u128 path.
        let c7 = counter(1, 1000, 7);
        let k = 50_000_000_000u64; // k * W = 5e19 overflows u64; / 7 does not
        assert_eq!(c7.slot_start(k), ((k as u128 * 1_000_000_000).div_ceil(7)) as u64);
        assert_eq!(c.slot_index(666), 1);
        assert_eq!(c.slot_index(667), 2);
        // No overflow near the end of time.
        let c = counter(1, 1000, 100_000);
        assert_eq!(c.slot_index(u64::MAX), ((u64::MAX as u128 * 100_000) / 1_000_000_000) as u64);
    }

    #[test]
    fn window_is_current_slot_and_n_minus_one_before() {
        // L = 2 per 1 s, N = 10 (100 ms slots).
        let mut c = counter(2, 1000, 10);
        assert_eq!(c.decide(ms(50), 1), Admit); // slot 0
        assert_eq!(c.decide(ms(150), 1), Admit); // slot 1
        assert_eq!(c.decide(ms(999), 1), Reject); // slot 9 sees slots 0..=9
        // t = 1000 ms is slot 10: window is slots 1..=10, slot 0 has left,
        // although the exact window (0, 1000] still holds the request at 50 ms.
        assert_eq!(c.decide(ms(1000), 1), Admit);
        assert_eq!(c.decide(ms(1000), 1), Reject);
        // Slot 11 (from 1100 ms) drops slot 1.
        assert_eq!(c.decide(Nanos::new(1_099_999_999), 1), Reject);
        assert_eq!(c.decide(ms(1100), 1), Admit);
    }

    #[test]
    fn same_instant_arrivals_count_against_each_other() {
        let mut c = counter(3, 1000, 4);
        for _ in 0..3 {
            assert_eq!(c.decide(ms(10), 1), Admit);
        }
        assert_eq!(c.decide(ms(10), 1), Reject);
    }

    #[test]
    fn long_gap_clears_everything_at_once() {
        let mut c = counter(2, 1000, 100_000);
        assert_eq!(c.decide(ms(0), 1), Admit);
        assert_eq!(c.decide(ms(0), 1), Admit);
        assert_eq!(c.decide(ms(999), 1), Reject);
        assert_eq!(c.decide(ms(1_000_000), 1), Admit);
        assert_eq!(c.peak_state().entries, 1);
    }

    #[test]
    fn n_equals_one_is_the_aligned_fixed_window() {
        let mut c = counter(1, 1000, 1);
        assert_eq!(c.decide(ms(999), 1), Admit);
        assert_eq!(c.decide(ms(999), 1), Reject);
        assert_eq!(c.decide(ms(1000), 1), Admit);
    }

    #[test]
    fn state_counts_only_non_empty_slots() {
        let mut c = counter(100, 1000, 10);
        for i in 0..10 {
            c.decide(ms(i * 100), 1);
            c.decide(ms(i * 100 + 1), 1);
        }
        assert_eq!(c.peak_state(), StateSize { entries: 10, bytes: 168 });
    }
}
