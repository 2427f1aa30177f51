//! Sliding log (`sliding_log`): the timestamps of admitted requests. The
//! exact rule, and the reference every other limiter is measured against.

use serde::Deserialize;
use toml::Spanned;

use super::{Algorithm, Cutting, Decision, DiagramStyle, Limit, Limiter, StateSize, Style, SweepTraits};
use crate::ring::Ring;
use crate::scenario::{Entry, ScenarioError};
use crate::time::Nanos;

/// `kind = "sliding_log"`: `count_rejected = true` logs rejected requests too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlidingLogSpec {
    pub count_rejected: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    #[allow(dead_code)]
    kind: serde::de::IgnoredAny,
    count_rejected: Option<Spanned<bool>>,
}

impl Algorithm for SlidingLogSpec {
    type Limiter = SlidingLog;
    const KIND: &'static str = "sliding_log";

    fn parse(entry: &Entry<'_>) -> Result<Vec<Self>, ScenarioError> {
        let keys: Keys = entry.keys()?;
        Ok(vec![SlidingLogSpec { count_rejected: keys.count_rejected.is_some_and(|c| *c.get_ref()) }])
    }

    fn shares_counts(&self) -> bool {
        true
    }

    fn advertises_retry(&self) -> bool {
        true
    }
    fn logs_rejected(&self) -> bool {
        self.count_rejected
    }

    fn label(&self) -> String {
        if self.count_rejected { "sliding_log(count_rejected)".into() } else { "sliding_log".into() }
    }

    fn build(&self, limit: Limit) -> SlidingLog {
        SlidingLog::new(limit, self.count_rejected)
    }

    fn style(&self) -> Style {
        if self.count_rejected {
            Style { rgb: (200, 0, 120), line_width: 2, short: "log counting rejects".into() }
        } else {
            Style { rgb: (20, 20, 20), line_width: 4, short: "sliding log".into() }
        }
    }

    /// The exact window, when the log holds only what it admitted (one
    /// that counts its rejects is no window the others can be held to).
    fn diagram_style(&self) -> Option<DiagramStyle> {
        (!self.count_rejected).then(|| {
            let name = format!("{} (exact)", Algorithm::style(self).short);
            DiagramStyle { cutting: Cutting::Exact, name: name.clone(), cut_name: name }
        })
    }

    fn sweep_traits(&self) -> SweepTraits {
        // A burst at one instant is admitted whole while the window holds
        // nothing, and refused whole while it holds a burst of L.
        SweepTraits {
            bursts_scale_with_limit: true,
            equivalent_slots: None,
            analytic_burst_pair: Some((0.0, 0.0)),
            pair_opens_window: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct SlidingLog {
    limit: u64,
    window: u64,
    /// Log entries in time order: (timestamp, permits logged before this
    /// entry). The permits in the window are `logged` minus the oldest
    /// entry's second field, so entries leave without a per-entry
    /// subtraction and pruning needs no branch per entry.
    log: Ring<(u64, u64)>,
    /// Permits ever logged.
    logged: u64,
    /// Some entry had a cost other than 1. Until then the permits in the
    /// window are the number of entries, which needs no load.
    weighted: bool,
    /// The instant of the last prune (a second prune at it is a no-op).
    pruned_at: u64,
    /// Log rejected requests too (some deployments do).
    count_rejected: bool,
    peak_entries: u64,
}

impl SlidingLog {
    pub fn new(limit: Limit, count_rejected: bool) -> SlidingLog {
        SlidingLog {
            limit: limit.requests,
            window: limit.window.get(),
            log: Ring::new(),
            logged: 0,
            weighted: false,
            pruned_at: u64::MAX,
            count_rejected,
            peak_entries: 0,
        }
    }

    /// Drops entries at or before `now - W`: the window is `(now - W, now]`.
    #[inline]
    fn prune(&mut self, now: u64) {
        if now != self.pruned_at && now >= self.window {
            let cutoff = now - self.window;
            // Far over the limit most requests see nothing leave: one
            // predictable branch. Near the limit one or more leave about as
            // often as not: counted by `pop_expired` without a branch each.
            if self.log.front().is_some_and(|&(t, _)| t <= cutoff) {
                self.log.pop_expired(|&(t, _)| t <= cutoff);
            }
        }
        self.pruned_at = now;
    }

    /// Permits in the window (after `prune`).
    #[inline]
    fn sum(&self) -> u64 {
        if !self.weighted {
            return self.log.len() as u64;
        }
        match self.log.front() {
            Some(&(_, before)) => self.logged - before,
            None => 0,
        }
    }

    fn push(&mut self, now: u64, cost: u64) {
        self.log.push_back((now, self.logged));
        self.logged += cost;
        self.weighted |= cost != 1;
        self.peak_entries = self.peak_entries.max(self.log.len() as u64);
    }
}

impl Limiter for SlidingLog {
    #[inline(always)]
    fn decide(&mut self, now: Nanos, cost: u32) -> Decision {
        self.prune(now.get());
        let now = now.get();
        let cost = u64::from(cost);
        let admit = self.sum() + cost <= self.limit;
        if admit || self.count_rejected {
            self.push(now, cost);
        }
        if admit { Decision::Admit } else { Decision::Reject }
    }

    fn peak_state(&self) -> StateSize {
        StateSize { entries: self.peak_entries, bytes: self.peak_entries * 8 }
    }

    fn restart_peak(&mut self) {
        self.peak_entries = self.log.len() as u64;
    }

    fn absorb(&mut self, now: Nanos, cost: u32) {
        self.prune(now.get());
        self.push(now.get(), u64::from(cost));
    }

    fn counts_rejected(&self) -> bool {
        self.count_rejected
    }

    /// When the oldest entry that must leave for `cost` to fit leaves the
    /// window: `entry + W`. With one permit an entry that is the
    /// `len + cost - L`-th; with costs, the permits left once entries
    /// `0..=i` have gone fall as `i` grows, so a binary search finds it.
    /// Either way it takes no scan of the log, which holds far more than
    /// the limit when rejected requests are logged.
    fn retry_at(&self, _now: Nanos, cost: u32) -> Option<Nanos> {
        let cost = u64::from(cost);
        if cost > self.limit || self.log.is_empty() {
            return None;
        }
        if !self.weighted {
            // One permit an entry: the first `len + cost - L` must leave.
            let must_leave = (self.log.len() as u64 + cost).saturating_sub(self.limit);
            let i = usize::try_from(must_leave.saturating_sub(1)).ok()?;
            let &(t, _) = self.log.get(i.min(self.log.len() - 1))?;
            return t.checked_add(self.window).map(Nanos::new);
        }
        // Permits left in the log once entries 0..=i have gone.
        let left = |i: usize| self.log.get(i + 1).map_or(0, |&(_, before)| self.logged - before);
        // The first i in lo..=hi with left(i) + cost <= limit; hi (the
        // newest entry, after which nothing is left) always qualifies.
        let (mut lo, mut hi) = (0, self.log.len() - 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if left(mid) + cost <= self.limit {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let &(t, _) = self.log.get(lo)?;
        t.checked_add(self.window).map(Nanos::new)
    }

    #[inline(always)]
    fn exact_window_count(&mut self, now: Nanos) -> Option<u64> {
        if self.count_rejected {
            return None;
        }
        self.prune(now.get());
        Some(self.sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limiter::Decision::{Admit, Reject};

    fn ms(v: u64) -> Nanos {
        Nanos::from_millis(v)
    }

    #[test]
    fn a_request_exactly_w_later_no_longer_sees_the_first() {
        let mut l = SlidingLog::new(Limit { requests: 1, window: ms(1000) }, false);
        assert_eq!(l.decide(ms(200), 1), Admit);
        assert_eq!(l.decide(Nanos::new(1_199_999_999), 1), Reject);
        assert_eq!(l.decide(ms(1200), 1), Admit);
    }

    #[test]
    fn same_instant_requests_count() {
        let mut l = SlidingLog::new(Limit { requests: 2, window: ms(1000) }, false);
        assert_eq!(l.decide(ms(5), 1), Admit);
        assert_eq!(l.decide(ms(5), 1), Admit);
        assert_eq!(l.decide(ms(5), 1), Reject);
        assert_eq!(l.peak_state(), StateSize { entries: 2, bytes: 16 });
    }

    #[test]
    fn counting_rejections_locks_out_a_steady_caller() {
        // L = 2 per 1 s, a request every 400 ms.
        let mut exact = SlidingLog::new(Limit { requests: 2, window: ms(1000) }, false);
        let mut strict = SlidingLog::new(Limit { requests: 2, window: ms(1000) }, true);
        let times = [0, 400, 800, 1200, 1600, 2000, 2400];
        let exact_d: Vec<_> = times.iter().map(|&t| exact.decide(ms(t), 1)).collect();
        let strict_d: Vec<_> = times.iter().map(|&t| strict.decide(ms(t), 1)).collect();
        // Exact: 800 sees {0, 400}; 1200 sees {400}; 1600 sees {1200};
        // 2000 sees {1200, 1600}; 2400 sees {1600}.
        assert_eq!(exact_d, [Admit, Admit, Reject, Admit, Admit, Reject, Admit]);
        // Logging rejections: the window never empties below 2 entries.
        assert_eq!(strict_d, [Admit, Admit, Reject, Reject, Reject, Reject, Reject]);
    }

    /// The advertised time by a plain scan from the oldest entry: the
    /// first whose leaving leaves room for `cost`.
    fn retry_at_by_scan(l: &SlidingLog, cost: u64) -> Option<Nanos> {
        if cost > l.limit {
            return None;
        }
        for i in 0..l.log.len() {
            let left = l.log.get(i + 1).map_or(0, |&(_, before)| l.logged - before);
            if left + cost <= l.limit {
                return Some(Nanos::new(l.log.get(i)?.0 + l.window));
            }
        }
        None
    }

    #[test]
    fn retry_at_matches_a_scan_of_the_log() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for round in 0..300 {
            let limit = rng.random_range(1..=6u64);
            let logs_rejected = round % 2 == 0;
            let mut l = SlidingLog::new(Limit { requests: limit, window: ms(100) }, logs_rejected);
            let mut now = 0;
            for _ in 0..rng.random_range(1..60) {
                now += rng.random_range(0..30u64);
                let cost = if round % 3 == 0 { rng.random_range(1..=3u32) } else { 1 };
                if l.decide(ms(now), cost) == Reject {
                    for c in 1..=limit + 1 {
                        assert_eq!(
                            l.retry_at(ms(now), c as u32),
                            retry_at_by_scan(&l, c),
                            "round {round}, log of {}, cost {c}",
                            l.log.len()
                        );
                    }
                }
            }
        }
    }

    /// A log of rejected requests far longer than the limit: the advertised
    /// time is when all but `L - cost` of them have left.
    #[test]
    fn retry_at_on_a_long_log_of_rejected_requests() {
        let mut l = SlidingLog::new(Limit { requests: 3, window: ms(1000) }, true);
        for t in 0..1000 {
            l.decide(ms(t), 1);
        }
        // 1000 entries at 0..999 ms: for one request, entries 0..=997 must
        // leave (two stay), the last of them at 997 ms + 1 s.
        assert_eq!(l.retry_at(ms(999), 1), Some(ms(1997)));
        assert_eq!(l.retry_at(ms(999), 3), Some(ms(1999)));
        assert_eq!(l.retry_at(ms(999), 4), None);
    }
}
