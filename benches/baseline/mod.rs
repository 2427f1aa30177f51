//! Baselines for `benches/limiters.rs`. They live here, not in the library:
//! they exist only to be measured against.
//!
//! - [`NaiveSlotCounter`]: what textbook implementations do (a ring
//!   of `N` counters, each stamped with the slot it counts; the current slot is
//!   reset when it is stale, then **all `N` counters are summed** on every
//!   request): O(N) per request.
//! - `bare_*`: the least code that makes the same decision as each library
//!   limiter (cost 1, aligned windows, default parameters, no state
//!   accounting, `u64` where the bench traces cannot overflow it). The
//!   library limiter should be within 2x of its bare loop.
//!
//! Every function takes the whole pre-generated trace and returns the number
//! of admitted requests, so nothing can be optimized away.

use std::collections::VecDeque;
use std::hint::black_box;

/// The textbook slot counter: `N` counters with slot stamps, summed in full.
pub struct NaiveSlotCounter {
    limit: u64,
    window: u64,
    slots: u64,
    counts: Vec<u64>,
    /// The slot index each counter currently holds.
    stamps: Vec<u64>,
}

impl NaiveSlotCounter {
    pub fn new(limit: u64, window: u64, slots: u64) -> NaiveSlotCounter {
        NaiveSlotCounter {
            limit,
            window,
            slots,
            counts: vec![0; slots as usize],
            // u64::MAX: "holds no slot", never inside any window.
            stamps: vec![u64::MAX; slots as usize],
        }
    }

    #[inline]
    pub fn decide(&mut self, t: u64) -> bool {
        // u64 arithmetic: the bench traces keep t * N far below 2^64.
        let k = t * self.slots / self.window;
        let i = (k % self.slots) as usize;
        if self.stamps[i] != k {
            self.stamps[i] = k;
            self.counts[i] = 0;
        }
        // Sum every counter whose slot is one of k - N + 1 ..= k.
        let oldest = (k + 1).saturating_sub(self.slots);
        let mut total = 0;
        for (c, s) in self.counts.iter().zip(&self.stamps) {
            if *s >= oldest && *s != u64::MAX {
                total += *c;
            }
        }
        if total < self.limit {
            self.counts[i] += 1;
            true
        } else {
            false
        }
    }
}

pub fn naive_slot_counter(trace: &[u64], limit: u64, window: u64, slots: u64) -> u64 {
    let mut l = NaiveSlotCounter::new(limit, window, slots);
    let mut admitted = 0;
    for &t in black_box(trace) {
        admitted += u64::from(l.decide(t));
    }
    admitted
}

/// Fixed window, aligned: `k = t / W`, reset on a new `k`, admit iff `count < L`.
pub fn bare_fixed_window(trace: &[u64], limit: u64, window: u64) -> u64 {
    let mut cur = u64::MAX;
    let mut count = 0;
    let mut admitted = 0;
    for &t in black_box(trace) {
        let k = t / window;
        if k != cur {
            cur = k;
            count = 0;
        }
        if count < limit {
            count += 1;
            admitted += 1;
        }
    }
    admitted
}

/// Slot counter as a queue of non-empty slots with a running sum (the O(1)
/// amortised representation), with one division per request.
pub fn bare_slot_counter(trace: &[u64], limit: u64, window: u64, slots: u64) -> u64 {
    let mut live: VecDeque<(u64, u64)> = VecDeque::new();
    let mut sum = 0;
    let mut admitted = 0;
    for &t in black_box(trace) {
        // u64 arithmetic: the bench traces keep t * N far below 2^64.
        let k = t * slots / window;
        while let Some(&(s, c)) = live.front() {
            if s + slots <= k {
                sum -= c;
                live.pop_front();
            } else {
                break;
            }
        }
        if sum < limit {
            sum += 1;
            admitted += 1;
            match live.back_mut() {
                Some((s, c)) if *s == k => *c += 1,
                _ => live.push_back((k, 1)),
            }
        }
    }
    admitted
}

/// Sliding log: a `VecDeque<u64>` of admitted timestamps, drop `<= t - W`.
pub fn bare_sliding_log(trace: &[u64], limit: u64, window: u64) -> u64 {
    let mut log: VecDeque<u64> = VecDeque::new();
    let mut admitted = 0;
    for &t in black_box(trace) {
        let cutoff = t.saturating_sub(window);
        while let Some(&f) = log.front() {
            if t >= window && f <= cutoff {
                log.pop_front();
            } else {
                break;
            }
        }
        if (log.len() as u64) < limit {
            log.push_back(t);
            admitted += 1;
        }
    }
    admitted
}

/// nginx's `limit_req ... nodelay` in u64: `ms = t / 1 ms`, the first
/// request makes `excess = 0`, later ones
/// `e = max(excess + 1000 - rate * (ms - last) / 1000, 0)`, admitted iff
/// `e <= burst * 1000`.
pub fn bare_leaky_bucket(trace: &[u64], limit: u64, window: u64, burst: u64) -> u64 {
    // u64 arithmetic: the bench's rate and gaps keep rate * ms far below 2^64.
    let rate = limit * 1000 * 1_000_000_000 / window;
    let burst = burst * 1000;
    let (mut excess, mut last, mut started) = (0u64, 0u64, false);
    let mut admitted = 0;
    for &t in black_box(trace) {
        let ms = t / 1_000_000;
        let e = if started { (excess + 1000).saturating_sub(rate * (ms - last) / 1000) } else { 0 };
        if e <= burst {
            (excess, last, started) = (e, ms, true);
            admitted += 1;
        }
    }
    admitted
}

/// GCRA with burst `b`: `T = W / L`, `tau = T (b - 1)`; admit iff
/// `t + tau >= tat`, then `tat = max(tat, t) + T` (`tat = 0` acts as unset).
pub fn bare_gcra(trace: &[u64], limit: u64, window: u64, burst: u64) -> u64 {
    let t_step = (window / limit).max(1);
    let tau = t_step * (burst - 1);
    let mut tat = 0;
    let mut admitted = 0;
    for &t in black_box(trace) {
        if t + tau >= tat {
            tat = tat.max(t) + t_step;
            admitted += 1;
        }
    }
    admitted
}

/// Weighted two-window counter, epoch-aligned: `prev` is window `k - 1`'s
/// count if it was the last one, `rem = (k + 1) W - t`; exact:
/// `prev * rem + (curr + 1) * W <= L * W`; floor:
/// `prev * rem / W + curr + 1 <= L`.
pub fn bare_weighted_window(trace: &[u64], limit: u64, window: u64, floor: bool) -> u64 {
    let (mut k, mut prev, mut curr) = (u64::MAX, 0u64, 0u64);
    let mut admitted = 0;
    for &t in black_box(trace) {
        let j = t / window;
        if j != k {
            prev = if j == k.wrapping_add(1) { curr } else { 0 };
            curr = 0;
            k = j;
        }
        // u64 arithmetic: prev <= L and rem <= W keep the products small.
        let rem = (j + 1) * window - t;
        let ok = if floor {
            prev * rem / window + curr < limit
        } else {
            prev * rem + (curr + 1) * window <= limit * window
        };
        if ok {
            curr += 1;
            admitted += 1;
        }
    }
    admitted
}

/// Continuous token bucket of `capacity` tokens, full at 0: credit = tokens x W,
/// `dt L` added and capped at `capacity W`, a request takes `W`.
pub fn bare_token_bucket(trace: &[u64], limit: u64, window: u64, capacity: u64) -> u64 {
    let cap = capacity * window;
    let mut credit = cap;
    let mut last = 0;
    let mut admitted = 0;
    for &t in black_box(trace) {
        credit = (credit + (t - last) * limit).min(cap);
        last = t;
        if credit >= window {
            credit -= window;
            admitted += 1;
        }
    }
    admitted
}

/// Envoy's timer bucket: full at 0, `min(max, level + per_fill)` at every
/// multiple of `interval` (before that instant's requests), a request takes 1.
pub fn bare_timer_bucket(trace: &[u64], max: u64, per_fill: u64, interval: u64) -> u64 {
    let mut level = max;
    let mut fills = 0;
    let mut admitted = 0;
    for &t in black_box(trace) {
        let k = t / interval;
        if k != fills {
            level = (level + (k - fills) * per_fill).min(max);
            fills = k;
        }
        if level >= 1 {
            level -= 1;
            admitted += 1;
        }
    }
    admitted
}
