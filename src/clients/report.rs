//! What a lane's clients measured: logical requests, attempts, outcomes and
//! the time from a logical request's first attempt to its admitted one.

use std::fmt;

use hdrhistogram::Histogram;

use crate::time::Nanos;

/// A logical request: an open-loop arrival (its position in the merged
/// trace, the same in every lane) or a closed client's request (numbered in
/// the lane, so different lanes have different ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logical {
    Open(u64),
    Closed(u64),
}

impl fmt::Display for Logical {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Logical::Open(n) => write!(f, "{n}"),
            Logical::Closed(n) => write!(f, "c{n}"),
        }
    }
}

/// One lane's client-side figures.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientReport {
    /// Logical requests that started (open-loop arrivals and closed
    /// clients' requests).
    pub logical: u64,
    /// Of them, open-loop arrivals (the ones every lane shares).
    pub open_logical: u64,
    pub succeeded: u64,
    /// Rejected on their last allowed attempt, or refused a retry by the
    /// budget.
    pub gave_up: u64,
    /// Still waiting for a retry when the run ended.
    pub unfinished: u64,
    /// Attempts after the first.
    pub retries: u64,
    /// Retries sent at or after the time the limiter's Retry-After header
    /// gave, and rejected again.
    pub early_retries: u64,
    /// Retries sent before the time the limiter advertised at the previous
    /// rejection (its own time, before the header was rounded), and
    /// rejected: a header rounded down sends them, as can a backoff
    /// shorter than the limiter's wait.
    pub too_early: u64,
    /// Time to success of succeeded requests, in ns (3 significant digits).
    pub time_to_success: Histogram<u64>,
    /// The exact longest time to success.
    pub tts_max: Nanos,
    /// The most events (retries, closed clients' next requests) the lane's
    /// queue held at once: its memory, which the pending work bounds, not
    /// the length of the run.
    pub peak_pending: u64,
}

impl ClientReport {
    pub fn new() -> ClientReport {
        ClientReport {
            logical: 0,
            open_logical: 0,
            succeeded: 0,
            gave_up: 0,
            unfinished: 0,
            retries: 0,
            early_retries: 0,
            too_early: 0,
            time_to_success: Histogram::new(3).expect("3 significant digits"),
            tts_max: Nanos::ZERO,
            peak_pending: 0,
        }
    }

    /// Attempts per logical request.
    pub fn amplification(&self) -> Option<f64> {
        (self.logical > 0).then(|| (self.logical + self.retries) as f64 / self.logical as f64)
    }

    /// Attempts per succeeded logical request: what a success cost, the
    /// calls of the requests that gave up or are unfinished included. `None`
    /// when nothing succeeded.
    pub fn attempts_per_success(&self) -> Option<f64> {
        (self.succeeded > 0).then(|| (self.logical + self.retries) as f64 / self.succeeded as f64)
    }

    /// The share of logical requests that gave up.
    pub fn gave_up_share(&self) -> Option<f64> {
        (self.logical > 0).then(|| self.gave_up as f64 / self.logical as f64)
    }

    /// The time to success below which a share `q` of successes fall,
    /// within 0.1 % (`q = 1` is the exact maximum).
    pub fn tts_quantile(&self, q: f64) -> Option<Nanos> {
        if self.succeeded == 0 {
            return None;
        }
        if q >= 1.0 {
            return Some(self.tts_max);
        }
        let rank = crate::metrics::quantile_rank(q, self.time_to_success.len());
        Some(Nanos::new(crate::metrics::value_at_rank(&self.time_to_success, rank).min(self.tts_max.get())))
    }

    /// The distribution of time to success over the succeeded requests:
    /// the share admitted on their first attempt (time 0), and for each
    /// recorded positive time `x` (the top of its histogram bucket, 3
    /// significant digits; the last one the exact maximum) the share whose
    /// time to success is at most `x`, rising to 1. `None` when nothing
    /// succeeded.
    pub fn tts_cdf(&self) -> Option<(f64, Vec<(Nanos, f64)>)> {
        let total = self.time_to_success.len();
        if total == 0 {
            return None;
        }
        let at_once = self.time_to_success.count_at(0);
        let mut cumulative = at_once;
        let mut points = Vec::new();
        for v in self.time_to_success.iter_recorded() {
            let top = v.value_iterated_to();
            if top == 0 {
                continue;
            }
            cumulative += v.count_at_value();
            let x = Nanos::new(top.min(self.tts_max.get()));
            points.push((x, cumulative as f64 / total as f64));
        }
        Some((at_once as f64 / total as f64, points))
    }

    pub(crate) fn record_success(&mut self, tts: Nanos) {
        self.succeeded += 1;
        self.time_to_success.record(tts.get()).expect("an auto-resizing histogram");
        self.tts_max = self.tts_max.max(tts);
    }
}

impl Default for ClientReport {
    fn default() -> Self {
        ClientReport::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cdf_starts_at_the_first_attempt_share_and_ends_at_one() {
        let mut r = ClientReport::new();
        assert_eq!(r.tts_cdf(), None);
        // 2 at once, then 0.5 s, 0.5 s, 1.5 s: 40 % at 0, 80 % by 0.5 s
        // (a bucket top within 0.1 % above it), 100 % by the exact 1.5 s.
        for ms in [0, 500, 0, 1500, 500] {
            r.record_success(Nanos::from_millis(ms));
        }
        let (at_once, points) = r.tts_cdf().unwrap();
        assert_eq!(at_once, 0.4);
        assert_eq!(points.len(), 2);
        let (x, share) = points[0];
        assert!(x >= Nanos::from_millis(500) && x.get() <= 500_500_000, "{x}");
        assert_eq!(share, 0.8);
        assert_eq!(points[1], (Nanos::from_millis(1500), 1.0));
    }

    /// backoff.toml's `none` against the fixed window: 100 requests, one
    /// attempt each, 10 admitted. One attempt per request, but 10 per
    /// success: the 90 that gave up were paid for too.
    #[test]
    fn a_policy_that_gives_up_pays_per_success() {
        let mut r = ClientReport::new();
        assert_eq!((r.attempts_per_success(), r.gave_up_share()), (None, None));
        r.logical = 100;
        r.gave_up = 90;
        for _ in 0..10 {
            r.record_success(Nanos::ZERO);
        }
        assert_eq!(r.amplification(), Some(1.0));
        assert_eq!(r.attempts_per_success(), Some(10.0));
        assert_eq!(r.gave_up_share(), Some(0.9));
        // Nothing succeeded: no cost per success.
        r.succeeded = 0;
        assert_eq!(r.attempts_per_success(), None);
    }
}
