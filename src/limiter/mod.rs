//! Rate limiters. Every limiter is told the time; none reads a clock.

mod fast_div;
mod fixed_window;
mod sliding_log;
mod slot_counter;

pub use fast_div::FastDiv;
pub use fixed_window::{FixedWindow, WindowAlign};
pub use sliding_log::SlidingLog;
pub use slot_counter::SlotCounter;

use crate::time::Nanos;

/// The limit every limiter enforces: `requests` per `window`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub requests: u64,
    pub window: Nanos,
}

/// The answer to one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Admit,
    Reject,
}

impl Decision {
    pub fn admitted(self) -> bool {
        self == Decision::Admit
    }
}

/// How much state a limiter holds: stored counters or timestamps, and bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateSize {
    pub entries: u64,
    pub bytes: u64,
}

/// A rate limiter driven by virtual time.
///
/// `now` never decreases between calls. `cost` is the number of permits the
/// request takes (1 for every source ratesim ships today).
pub trait Limiter {
    fn decide(&mut self, now: Nanos, cost: u32) -> Decision;
    /// The largest state this limiter has held so far.
    fn peak_state(&self) -> StateSize;
    /// Admitted permits in the exact window `(now - W, now]` so far, for a
    /// limiter whose state is exactly that (the sliding log without
    /// `count_rejected`); `None` for the others. Lets the engine skip the
    /// window tracker it would otherwise keep beside the limiter. `now` must
    /// not decrease between calls.
    fn exact_window_count(&mut self, _now: Nanos) -> Option<u64> {
        None
    }
}

/// What kind of limiter to build; the parsed, validated form of a scenario's
/// `[[limiter]]` entry (one per slot count).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LimiterSpec {
    FixedWindow { align: WindowAlign },
    SlotCounter { slots: u64 },
    SlidingLog { count_rejected: bool },
}

impl LimiterSpec {
    /// The algorithm name used in outputs.
    pub fn algorithm(&self) -> &'static str {
        match self {
            LimiterSpec::FixedWindow { .. } => "fixed_window",
            LimiterSpec::SlotCounter { .. } => "slot_counter",
            LimiterSpec::SlidingLog { .. } => "sliding_log",
        }
    }

    /// A label unique within a run, such as `slot_counter(N=10)`.
    pub fn label(&self) -> String {
        match self {
            LimiterSpec::FixedWindow { align: WindowAlign::Epoch { offset } } if offset.get() == 0 => {
                "fixed_window".to_string()
            }
            LimiterSpec::FixedWindow { align: WindowAlign::Epoch { offset } } => {
                format!("fixed_window(offset={})", crate::time::format_duration(*offset))
            }
            LimiterSpec::FixedWindow { align: WindowAlign::FirstRequest } => {
                "fixed_window(first-request)".to_string()
            }
            LimiterSpec::SlotCounter { slots } => format!("slot_counter(N={slots})"),
            LimiterSpec::SlidingLog { count_rejected: false } => "sliding_log".to_string(),
            LimiterSpec::SlidingLog { count_rejected: true } => "sliding_log(count_rejected)".to_string(),
        }
    }

    pub fn slots(&self) -> Option<u64> {
        match self {
            LimiterSpec::SlotCounter { slots } => Some(*slots),
            _ => None,
        }
    }

    /// The exact reference limiter of SEMANTICS.md.
    pub fn reference() -> LimiterSpec {
        LimiterSpec::SlidingLog { count_rejected: false }
    }

    pub fn build(&self, limit: Limit) -> AnyLimiter {
        match *self {
            LimiterSpec::FixedWindow { align } => AnyLimiter::Fixed(FixedWindow::new(limit, align)),
            LimiterSpec::SlotCounter { slots } => AnyLimiter::Slots(SlotCounter::new(limit, slots)),
            LimiterSpec::SlidingLog { count_rejected } => {
                AnyLimiter::Log(SlidingLog::new(limit, count_rejected))
            }
        }
    }
}

/// Static dispatch over the shipped limiters (the engine's hot loop).
#[derive(Clone, Debug)]
pub enum AnyLimiter {
    Fixed(FixedWindow),
    Slots(SlotCounter),
    Log(SlidingLog),
}

impl Limiter for AnyLimiter {
    #[inline]
    fn decide(&mut self, now: Nanos, cost: u32) -> Decision {
        match self {
            AnyLimiter::Fixed(l) => l.decide(now, cost),
            AnyLimiter::Slots(l) => l.decide(now, cost),
            AnyLimiter::Log(l) => l.decide(now, cost),
        }
    }
    fn peak_state(&self) -> StateSize {
        match self {
            AnyLimiter::Fixed(l) => l.peak_state(),
            AnyLimiter::Slots(l) => l.peak_state(),
            AnyLimiter::Log(l) => l.peak_state(),
        }
    }
    fn exact_window_count(&mut self, now: Nanos) -> Option<u64> {
        match self {
            AnyLimiter::Fixed(l) => l.exact_window_count(now),
            AnyLimiter::Slots(l) => l.exact_window_count(now),
            AnyLimiter::Log(l) => l.exact_window_count(now),
        }
    }
}
