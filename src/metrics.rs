//! The exact metrics of SEMANTICS.md, computed in the same streaming pass as
//! the decisions.

use crate::limiter::{LimiterSpec, StateSize};
use crate::ring::Ring;
use crate::time::Nanos;

/// The admitted timestamps of one limiter inside the exact window, so that
/// every request can be told how many admitted requests lie in `(t - W, t)`.
/// Its size is bounded by the limiter's peak (at most `2L` for every
/// windowed limiter), not by the trace length.
#[derive(Clone, Debug)]
pub struct WindowTracker {
    window: u64,
    admitted: Ring<u64>,
}

impl WindowTracker {
    pub fn new(window: Nanos) -> WindowTracker {
        WindowTracker { window: window.get(), admitted: Ring::new() }
    }

    /// Admitted requests in `(t - W, t]` seen so far (those at `t` included).
    /// `t` must not decrease between calls.
    #[inline]
    pub fn count_at(&mut self, t: Nanos) -> u64 {
        if t.get() >= self.window {
            let cutoff = t.get() - self.window;
            self.admitted.pop_while(|&a| a <= cutoff);
        }
        self.admitted.len() as u64
    }

    #[inline]
    pub fn admit(&mut self, t: Nanos) {
        self.admitted.push_back(t.get());
    }
}

/// Counters for one limiter over a whole run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub offered: u64,
    pub admitted: u64,
    pub rejected: u64,
    /// Max admitted requests in any exact window `(t - W, t]`.
    pub peak: u64,
    /// Admitted although `L` or more admitted requests were already in the window.
    pub excess: u64,
    /// Rejected although fewer than `L` admitted requests were in the window.
    pub false_rejects: u64,
    /// Decisions that differ from the sliding log's on the same request.
    pub disagreements: u64,
}

impl Counts {
    /// Adds a chunk of `offered` decisions, `admitted` of them admitted,
    /// with their window-count counters.
    pub fn add_chunk(&mut self, offered: u64, admitted: u64, window: &WindowCounts) {
        self.offered += offered;
        self.admitted += admitted;
        self.rejected += offered - admitted;
        self.peak = self.peak.max(window.peak);
        self.excess += window.excess;
        self.false_rejects += window.false_rejects;
    }

    /// Records one decision; `window_count` is the admitted requests already
    /// in the exact window (before this one). Disagreements with the
    /// reference are counted separately, a chunk at a time.
    pub fn record(&mut self, limit: u64, window_count: u64, admitted: bool) {
        let mut window = WindowCounts::default();
        window.record(limit, window_count, admitted);
        self.add_chunk(1, u64::from(admitted), &window);
    }
}

/// The counters that need each request's exact window count, for one chunk
/// of arrivals (the rest follow from how many arrived and were admitted).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WindowCounts {
    pub peak: u64,
    pub excess: u64,
    pub false_rejects: u64,
}

impl WindowCounts {
    /// Records one decision; `window_count` is the admitted requests already
    /// in the exact window (before this one). Arithmetic, not branches:
    /// admit or reject is a coin toss near the limit.
    #[inline(always)]
    pub fn record(&mut self, limit: u64, window_count: u64, admitted: bool) {
        let a = u64::from(admitted);
        self.peak = self.peak.max((window_count + 1) * a);
        self.excess += a & u64::from(window_count >= limit);
        self.false_rejects += (1 - a) & u64::from(window_count < limit);
    }
}

/// The final figures for one limiter.
#[derive(Clone, Debug, PartialEq)]
pub struct LimiterReport {
    pub spec: LimiterSpec,
    pub label: String,
    pub counts: Counts,
    pub state: StateSize,
    /// What the sliding log admitted on the same trace.
    pub reference_admitted: u64,
    pub limit: u64,
}

impl LimiterReport {
    pub fn peak_ratio(&self) -> f64 {
        self.counts.peak as f64 / self.limit as f64
    }
    /// `admitted / admitted_by_sliding_log - 1`; None when the log admitted nothing.
    pub fn over_admission(&self) -> Option<f64> {
        (self.reference_admitted > 0)
            .then(|| self.counts.admitted as f64 / self.reference_admitted as f64 - 1.0)
    }
    /// Share of requests decided differently from the sliding log.
    pub fn disagreement(&self) -> Option<f64> {
        (self.counts.offered > 0).then(|| self.counts.disagreements as f64 / self.counts.offered as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracker_window_is_half_open() {
        let mut w = WindowTracker::new(Nanos::new(1000));
        w.admit(Nanos::new(0));
        w.admit(Nanos::new(500));
        assert_eq!(w.count_at(Nanos::new(999)), 2);
        assert_eq!(w.count_at(Nanos::new(1000)), 1); // 0 is exactly W ago: gone
        assert_eq!(w.count_at(Nanos::new(1499)), 1);
        assert_eq!(w.count_at(Nanos::new(1500)), 0);
    }

    #[test]
    fn tracker_ring_grows_and_wraps() {
        let mut w = WindowTracker::new(Nanos::new(10));
        for t in 0..1000u64 {
            // Three admissions per instant, so the window holds 30 entries.
            for _ in 0..3 {
                w.admit(Nanos::new(t));
            }
            assert_eq!(w.count_at(Nanos::new(t)), 3 * (t.min(9) + 1), "t = {t}");
        }
    }

    #[test]
    fn counts_follow_the_definitions() {
        let mut c = Counts::default();
        c.record(2, 0, true);
        c.record(2, 1, true);
        c.record(2, 2, true); // excess: found L already
        c.record(2, 1, false); // false reject: found fewer than L
        c.record(2, 3, false);
        assert_eq!(
            c,
            Counts {
                offered: 5,
                admitted: 3,
                rejected: 2,
                peak: 3,
                excess: 1,
                false_rejects: 1,
                disagreements: 0
            }
        );
    }
}
