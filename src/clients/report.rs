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
    /// Time to success of succeeded requests, in ns (3 significant digits).
    pub time_to_success: Histogram<u64>,
    /// The exact longest time to success.
    pub tts_max: Nanos,
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
            time_to_success: Histogram::new(3).expect("3 significant digits"),
            tts_max: Nanos::ZERO,
        }
    }

    /// Attempts per logical request.
    pub fn amplification(&self) -> Option<f64> {
        (self.logical > 0).then(|| (self.logical + self.retries) as f64 / self.logical as f64)
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
        Some(Nanos::new(self.time_to_success.value_at_quantile(q).min(self.tts_max.get())))
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
