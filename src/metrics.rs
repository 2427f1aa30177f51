//! The exact metrics of `docs/semantics.md`, computed in the same streaming
//! pass as the decisions.

use crate::limiter::{LimiterSpec, StateSize};
use crate::ring::Ring;
use crate::time::Nanos;

/// The admitted timestamps of one limiter inside the exact window, so that
/// every request can be told how many admitted requests lie in `(t - W, t]`
/// before it (earlier requests at `t` included).
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

/// The interval lengths of the admission curve, as fractions of `W`: a
/// 1-2-5 series from `W / 100` to `10 W`, `W` itself included.
pub const CURVE_FRACTIONS: [(u64, u64); CURVE_POINTS] =
    [(1, 100), (1, 50), (1, 20), (1, 10), (1, 5), (1, 2), (1, 1), (2, 1), (5, 1), (10, 1)];

/// Points on the admission curve.
pub const CURVE_POINTS: usize = 10;

/// The admission curve's interval lengths for a window `W`, in ns (at least 1).
pub fn curve_taus(window: Nanos) -> [u64; CURVE_POINTS] {
    CURVE_FRACTIONS.map(|(num, den)| {
        (u128::from(window.get()) * u128::from(num) / u128::from(den)).clamp(1, u128::from(u64::MAX)) as u64
    })
}

/// The most the exact rule lets through in any `(t - tau, t]`:
/// `L * ceil(tau / W)`.
pub fn exact_bound(limit: crate::limiter::Limit, tau: Nanos) -> u64 {
    limit.requests.saturating_mul(tau.get().div_ceil(limit.window.get()))
}

/// The admission curve of one key, streaming: `A(tau)`, the most admitted
/// requests in any half-open interval `(t - tau, t]`, for every `tau` of
/// [`curve_taus`]. Holds the admitted timestamps of the longest interval
/// only, with one ring position per `tau`: the oldest timestamp still inside
/// its interval.
#[derive(Clone, Debug)]
pub struct CurveTracker {
    taus: [u64; CURVE_POINTS],
    admitted: Ring<u64>,
    starts: [usize; CURVE_POINTS],
    max: [u64; CURVE_POINTS],
}

impl CurveTracker {
    pub fn new(window: Nanos) -> CurveTracker {
        CurveTracker {
            taus: curve_taus(window),
            admitted: Ring::new(),
            starts: [0; CURVE_POINTS],
            max: [0; CURVE_POINTS],
        }
    }

    /// Counts an admitted request at `t` (times never decrease).
    #[inline]
    pub fn admit(&mut self, t: Nanos) {
        let t = t.get();
        self.admitted.push_back(t);
        let end = self.admitted.front_position().wrapping_add(self.admitted.len());
        for k in 0..CURVE_POINTS {
            let mut start = self.starts[k];
            // Entries at or before t - tau have left (t - tau, t]. The
            // entry just pushed never has, so the scan stops by `end`. One
            // admission lets about one entry leave: two steps without a
            // branch each, a loop only for more.
            if let Some(cutoff) = t.checked_sub(self.taus[k]) {
                // Both loads at once (the values are in order, so the
                // second one leaving means the first did too).
                let next = start.wrapping_add(1);
                let second = if next == end { start } else { next };
                let gone = usize::from(self.admitted.at(start) <= cutoff)
                    + usize::from(next != end && self.admitted.at(second) <= cutoff);
                start = start.wrapping_add(gone);
                while self.admitted.at(start) <= cutoff {
                    start = start.wrapping_add(1);
                }
            }
            self.starts[k] = start;
            self.max[k] = self.max[k].max(end.wrapping_sub(start) as u64);
        }
        // The longest interval's oldest entry bounds what must be kept.
        self.admitted.pop_to(self.starts[CURVE_POINTS - 1]);
    }

    /// `(tau, A(tau))` for every `tau`, in increasing order.
    pub fn curve(&self) -> Vec<(Nanos, u64)> {
        self.taus.iter().zip(&self.max).map(|(&tau, &a)| (Nanos::new(tau), a)).collect()
    }
}

/// The delays of a shaping limiter: how many admitted requests waited, how
/// long (3 significant digits; the maximum exact), and the most waiting at
/// once.
#[derive(Clone, Debug, PartialEq)]
pub struct DelayReport {
    /// Admitted requests in all (the delayed ones included), for quantiles
    /// over every admitted request.
    pub admitted: u64,
    pub delayed: u64,
    /// Positive delays, in ns.
    pub histogram: hdrhistogram::Histogram<u64>,
    pub max: Nanos,
    /// Delayed requests not yet at the backend.
    pub pending: u64,
    /// The most waiting at once, at instants before `last_delay`.
    settled_peak: u64,
    /// When the last request was delayed, while no later release has been
    /// seen: releases due at that same instant may still come (they are
    /// decided after the instant's arrivals), so `pending` becomes the
    /// number waiting at that instant only once something later happens.
    last_delay: Option<Nanos>,
}

impl DelayReport {
    pub fn new() -> DelayReport {
        DelayReport {
            admitted: 0,
            delayed: 0,
            histogram: hdrhistogram::Histogram::new(3).expect("3 significant digits"),
            max: Nanos::ZERO,
            pending: 0,
            settled_peak: 0,
            last_delay: None,
        }
    }

    /// Counts a request admitted at `t` after a wait `d > 0`.
    pub fn record(&mut self, t: Nanos, d: Nanos) {
        self.delayed += 1;
        self.histogram.record(d.get()).expect("an auto-resizing histogram");
        self.max = self.max.max(d);
        self.settle_before(t);
        self.pending += 1;
        self.last_delay = Some(t);
    }

    /// A delayed request reaches the backend at `t`.
    pub fn release(&mut self, t: Nanos) {
        self.settle_before(t);
        self.pending -= 1;
    }

    /// Something happens at `t`: every event of an earlier instant has
    /// been seen, so `pending` is what waited at the last delay's instant.
    fn settle_before(&mut self, t: Nanos) {
        if self.last_delay.is_some_and(|at| at < t) {
            self.settled_peak = self.settled_peak.max(self.pending);
            self.last_delay = None;
        }
    }

    /// The most delayed requests waiting at once. A request waits during
    /// `[t, t + d)`: one that reaches the backend at the instant another
    /// is delayed no longer waits then.
    pub fn queue_peak(&self) -> u64 {
        match self.last_delay {
            Some(_) => self.settled_peak.max(self.pending),
            None => self.settled_peak,
        }
    }

    /// The delay below which a share `q` of admitted requests waited
    /// (undelayed ones wait 0), within 0.1 %; `q = 1` is the exact maximum.
    pub fn quantile(&self, q: f64) -> Option<Nanos> {
        if self.admitted == 0 {
            return None;
        }
        if q >= 1.0 {
            return Some(self.max);
        }
        let rank = quantile_rank(q, self.admitted);
        let zeros = self.admitted - self.delayed;
        if rank <= zeros {
            return Some(Nanos::ZERO);
        }
        Some(Nanos::new(value_at_rank(&self.histogram, rank - zeros).min(self.max.get())))
    }

    /// The distribution of the added latency over the admitted requests:
    /// the share not delayed (delay 0), and for each recorded positive
    /// delay `x` (the top of its histogram bucket, 3 significant digits;
    /// the last one the exact maximum) the share whose delay is at most
    /// `x`, rising to 1. `None` when nothing was admitted.
    pub fn cdf(&self) -> Option<(f64, Vec<(Nanos, f64)>)> {
        if self.admitted == 0 {
            return None;
        }
        let total = self.admitted as f64;
        let undelayed = self.admitted - self.delayed;
        let mut cumulative = undelayed;
        let mut points = Vec::new();
        for v in self.histogram.iter_recorded() {
            cumulative += v.count_at_value();
            let x = Nanos::new(v.value_iterated_to().min(self.max.get()));
            points.push((x, cumulative as f64 / total));
        }
        Some((undelayed as f64 / total, points))
    }
}

/// The rank, from 1, of the share `q` of `n` values: `ceil(q * n)`, at
/// least 1, computed exactly with `q` taken to six decimals (so that 0.5
/// of 36 is 18 and 0.95 of 60 is 57, which `f64` products can miss by one).
pub fn quantile_rank(q: f64, n: u64) -> u64 {
    let millionths = (q.clamp(0.0, 1.0) * 1e6).round() as u128;
    let rank = (millionths * u128::from(n)).div_ceil(1_000_000);
    (rank as u64).max(1)
}

/// The value of rank `rank` (from 1) in a histogram: the top of the bucket
/// that holds it (3 significant digits), the largest bucket past the count.
pub fn value_at_rank(histogram: &hdrhistogram::Histogram<u64>, rank: u64) -> u64 {
    let mut seen = 0;
    let mut top = 0;
    for v in histogram.iter_recorded() {
        seen += v.count_at_value();
        top = v.value_iterated_to();
        if seen >= rank {
            break;
        }
    }
    top
}

impl Default for DelayReport {
    fn default() -> Self {
        DelayReport::new()
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
    /// `(tau, A(tau))`: the most admitted requests in any `(t - tau, t]`
    /// (the largest over keys), when measured; `A(W)` is `peak`.
    pub admission_curve: Vec<(Nanos, u64)>,
    /// What the clients measured, when they react to decisions.
    pub clients: Option<crate::clients::ClientReport>,
    /// Per node, when the limiter runs on many nodes.
    pub nodes: Vec<crate::nodes::NodeReport>,
    /// Admitted per bin, one column per node (when on many nodes).
    pub node_timeline: Option<crate::timeline::Timeline>,
    /// Delays, when the limiter shapes (`None` for one that never delays).
    pub delays: Option<DelayReport>,
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
    /// Share of requests decided differently from the sliding log: of the
    /// arrivals, or when clients react, of the open-loop logical requests
    /// whose outcome (succeeded or not) differs. `None` without any.
    pub fn disagreement(&self) -> Option<f64> {
        let of = self.clients.as_ref().map_or(self.counts.offered, |c| c.open_logical);
        (of > 0).then(|| self.counts.disagreements as f64 / of as f64)
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

    /// A(tau) by brute force: the most admitted times in any (t - tau, t],
    /// t ranging over the admitted times.
    fn brute_curve(times: &[u64], tau: u64) -> u64 {
        times
            .iter()
            .map(|&t| times.iter().filter(|&&a| a <= t && a + tau > t).count() as u64)
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn curve_tracker_matches_a_brute_force() {
        let window = Nanos::new(1000);
        let mut x: u64 = 7;
        let mut t = 0;
        let mut times = Vec::new();
        let mut c = CurveTracker::new(window);
        for _ in 0..3000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Gaps from 0 (ties) to ~2.5 W, mostly short.
            t += match x >> 61 {
                0 => 0,
                1 => 2500,
                _ => (x >> 32) % 60,
            };
            times.push(t);
            c.admit(Nanos::new(t));
        }
        let taus = curve_taus(window);
        assert_eq!(taus, [10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000]);
        for (tau, a) in c.curve() {
            assert_eq!(a, brute_curve(&times, tau.get()), "tau = {tau}");
        }
        // Memory: only what the longest interval holds.
        assert!(c.admitted.len() as u64 <= brute_curve(&times, 10_000));
    }

    /// Waiting is `[t, t + d)`: a release at the instant of a delay frees
    /// its place first, whatever order the two are seen in; releases at a
    /// later instant do not lower a peak already reached.
    #[test]
    fn queue_peak_counts_what_waits_at_each_instant() {
        let mut d = DelayReport::new();
        d.record(Nanos::new(0), Nanos::new(10)); // waits [0, 10)
        d.record(Nanos::new(10), Nanos::new(10)); // [10, 20), seen before the release at 10
        assert_eq!(d.queue_peak(), 2, "at 10 the first may not have left yet");
        d.release(Nanos::new(10));
        assert_eq!(d.queue_peak(), 1, "the first left at 10");
        d.record(Nanos::new(15), Nanos::new(10)); // [15, 25)
        d.record(Nanos::new(15), Nanos::new(20)); // [15, 35)
        d.release(Nanos::new(20));
        assert_eq!((d.queue_peak(), d.pending), (3, 2), "3 waited at 15");
    }

    /// nginx's `rate=1r/s burst=5` without nodelay, six at once: delays
    /// 0, 1, 2, 3, 4, 5 s. One in six waits 0; the curve then rises by a
    /// sixth at each second (bucket tops within 0.1 % above it), the last
    /// step at the exact 5 s.
    #[test]
    fn delay_cdf_counts_the_undelayed_at_zero() {
        let mut d = DelayReport::new();
        assert_eq!(d.cdf(), None);
        for s in 1..=5 {
            d.record(Nanos::ZERO, Nanos::from_secs(s));
        }
        d.admitted = 6;
        let (undelayed, points) = d.cdf().unwrap();
        assert_eq!(undelayed, 1.0 / 6.0);
        assert_eq!(points.len(), 5);
        for (k, (x, share)) in points.iter().enumerate() {
            let s = k as u64 + 1;
            assert!(x.get() >= s * 1_000_000_000 && x.get() <= s * 1_001_000_000, "{x}");
            assert_eq!(*share, (s + 1) as f64 / 6.0);
        }
        assert_eq!(points[4].0, Nanos::from_secs(5));
        // The quantiles read the same histogram: the median of
        // {0, 1, 2, 3, 4, 5} s is the third, 2 s (to 3 significant digits).
        let p50 = d.quantile(0.5).unwrap();
        assert!(p50 >= Nanos::from_secs(2) && p50.get() <= 2_002_000_000, "{p50}");
        assert_eq!(d.quantile(0.1), Some(Nanos::ZERO));
        assert_eq!(d.quantile(1.0), Some(Nanos::from_secs(5)));
    }

    /// 11 undelayed and 25 delayed 0.1, 0.2, ..., 2.5 s: the median of 36
    /// is rank 18, the 7th delay, 0.7 s. (The share 7/25 passed on as an
    /// `f64` came back as rank 8, 0.8 s.)
    #[test]
    fn delay_quantiles_take_the_exact_rank() {
        let mut d = DelayReport::new();
        for k in 1..=25 {
            d.record(Nanos::ZERO, Nanos::from_millis(100 * k));
        }
        d.admitted = 36;
        let p50 = d.quantile(0.5).unwrap().get();
        assert!((700_000_000..=700_700_000).contains(&p50), "{p50}");
        // Rank ceil(0.95 * 36) = 35 is the 24th delay; ceil(0.99 * 36) = 36 the 25th.
        let p95 = d.quantile(0.95).unwrap().get();
        assert!((2_400_000_000..=2_402_000_000).contains(&p95), "{p95}");
        assert_eq!(d.quantile(0.99), Some(Nanos::from_millis(2500)));
        // Rank ceil(0.3 * 36) = 11 is still undelayed, ceil(0.31 * 36) = 12
        // the first delay.
        assert_eq!(d.quantile(0.3), Some(Nanos::ZERO));
        let first = d.quantile(0.31).unwrap().get();
        assert!((100_000_000..=100_100_000).contains(&first), "{first}");
    }

    #[test]
    fn quantile_ranks_are_exact() {
        assert_eq!(quantile_rank(0.5, 36), 18);
        assert_eq!(quantile_rank(0.95, 60), 57);
        assert_eq!(quantile_rank(0.99, 700), 693);
        assert_eq!(quantile_rank(0.99, 701), 694);
        assert_eq!(quantile_rank(0.0, 10), 1);
        assert_eq!(quantile_rank(1.0, u64::MAX), u64::MAX);
        for n in 1..2000u64 {
            for (q, per_hundred) in [(0.5, 50u64), (0.95, 95), (0.99, 99)] {
                assert_eq!(quantile_rank(q, n), (per_hundred * n).div_ceil(100).max(1), "q {q} n {n}");
            }
        }
    }

    #[test]
    fn counts_follow_the_definitions() {
        let mut w = WindowCounts::default();
        w.record(2, 0, true);
        w.record(2, 1, true);
        w.record(2, 2, true); // excess: found L already
        w.record(2, 1, false); // false reject: found fewer than L
        w.record(2, 3, false);
        let mut c = Counts::default();
        c.add_chunk(5, 3, &w);
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
