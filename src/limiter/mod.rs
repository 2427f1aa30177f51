//! Rate limiters, and the one list that registers every algorithm.
//!
//! A limiter is told the time (`now`) on every request and never reads a
//! clock. Each algorithm lives in one file that owns everything about it:
//! its scenario keys and their validation, its label, how it is built, its
//! chart style and what the sweeps may assume about it (the [`Algorithm`]
//! trait). The [`registry!`] list below turns the files into the
//! [`LimiterSpec`] and [`AnyLimiter`] enums, so adding an algorithm is one
//! new file and one line in that list; nothing else in ratesim matches on
//! algorithm kinds. What the decisions mean is fixed in `docs/semantics.md`.

#[cfg(test)]
mod example;
mod fast_div;
mod fixed_window;
mod gcra;
mod sliding_log;
mod slot_counter;
mod token_bucket;

#[cfg(test)]
pub use example::ExampleSpec;
pub use fast_div::FastDiv;
pub use fixed_window::{FixedWindow, FixedWindowSpec, WindowAlign};
pub use gcra::{Gcra, GcraSpec};
pub use sliding_log::{SlidingLog, SlidingLogSpec};
pub use slot_counter::{SlotCounter, SlotCounterSpec};
pub use token_bucket::{ContinuousBucket, Initial, TimerBucket, TokenBucket, TokenBucketSpec};

use std::fmt;

use crate::scenario::{Entry, ScenarioError};
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
    /// The advertised retry time (what a `Retry-After` header carries,
    /// before rounding): the earliest instant at which a request of `cost`,
    /// just rejected at `now`, would be admitted if nothing else arrived.
    /// Called right after `decide(now, cost)` returned `Reject`. `None` when
    /// the limiter cannot say, or would never admit such a request.
    fn retry_at(&self, _now: Nanos, _cost: u32) -> Option<Nanos> {
        None
    }
}

/// How a limiter is drawn, the same in every chart: an RGB colour, a line
/// width for line charts, and a short name for legends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Style {
    pub rgb: (u8, u8, u8),
    pub line_width: u32,
    pub short: String,
}

/// What the sweeps may assume about a limiter (`docs/semantics.md`, "Error
/// versus slot count"). The defaults assume nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SweepTraits {
    /// A burst at one instant is admitted whole or not at all, from any
    /// state, and which of the two depends on times only, not on `L`. Then
    /// a pair of bursts of `L` behaves as a pair of single requests at
    /// `L = 1`, scaled by `L`, and the burst-pair sweep may take that
    /// shortcut; without it the sweep decides every request of both bursts.
    pub bursts_scale_with_limit: bool,
    /// The slot count `N` this limiter is on the error-versus-N axis (the
    /// aligned fixed window is `N = 1`).
    pub equivalent_slots: Option<u64>,
    /// The analysis' (vulnerable band, violation probability) of the burst
    /// pair, as fractions, where there is one.
    pub analytic_burst_pair: Option<(f64, f64)>,
}

/// One algorithm: the validated parameters of a `[[limiter]]` entry (the
/// implementing type), and everything the rest of ratesim may know about it.
pub trait Algorithm: Clone + fmt::Debug + PartialEq + Send + Sync + 'static {
    type Limiter: Limiter + Clone + fmt::Debug + Send + 'static;
    /// `kind = "..."` in a scenario, and the `algorithm` output column.
    const KIND: &'static str;
    /// Validates one `[[limiter]]` entry of this kind. A list value (such as
    /// `slots = [2, 10]`) makes one spec per element, in order.
    fn parse(entry: &Entry<'_>) -> Result<Vec<Self>, ScenarioError>;
    /// A label unique among this algorithm's parameter choices, such as
    /// `slot_counter(N=10)`: the kind, with the parameters that differ from
    /// the defaults.
    fn label(&self) -> String;
    fn build(&self, limit: Limit) -> Self::Limiter;
    fn style(&self) -> Style;
    fn sweep_traits(&self) -> SweepTraits {
        SweepTraits::default()
    }
    /// The slot count, for limiters that have one (the `slots` column,
    /// `--slots`).
    fn slots(&self) -> Option<u64> {
        None
    }
}

/// The per-spec questions, object-safe, for code that does not care which
/// algorithm it holds. Every [`Algorithm`] answers them.
pub trait Describe {
    fn kind(&self) -> &'static str;
    fn label(&self) -> String;
    fn style(&self) -> Style;
    fn sweep_traits(&self) -> SweepTraits;
    fn slots(&self) -> Option<u64>;
}

impl<A: Algorithm> Describe for A {
    fn kind(&self) -> &'static str {
        A::KIND
    }
    fn label(&self) -> String {
        Algorithm::label(self)
    }
    fn style(&self) -> Style {
        Algorithm::style(self)
    }
    fn sweep_traits(&self) -> SweepTraits {
        Algorithm::sweep_traits(self)
    }
    fn slots(&self) -> Option<u64> {
        Algorithm::slots(self)
    }
}

/// Code generic over the algorithm, run with the concrete spec type (the
/// engine builds its monomorphised lanes this way).
pub trait SpecVisitor {
    type Out;
    fn visit<A: Algorithm>(self, spec: &A) -> Self::Out;
}

/// Generates [`LimiterSpec`] (one variant per algorithm, holding its spec),
/// [`AnyLimiter`] (static dispatch over the limiters) and their plumbing
/// from the list of registered algorithms.
macro_rules! registry {
    ($( $(#[$meta:meta])* $variant:ident($spec:ty), )+) => {
        /// A validated `[[limiter]]` entry: which algorithm, with which parameters.
        #[derive(Clone, Debug, PartialEq)]
        pub enum LimiterSpec {
            $( $(#[$meta])* $variant($spec), )+
        }

        /// Any registered limiter, statically dispatched.
        #[derive(Clone, Debug)]
        pub enum AnyLimiter {
            $( $(#[$meta])* $variant(<$spec as Algorithm>::Limiter), )+
        }

        $(
            $(#[$meta])*
            impl From<$spec> for LimiterSpec {
                fn from(spec: $spec) -> LimiterSpec {
                    LimiterSpec::$variant(spec)
                }
            }
        )+

        impl LimiterSpec {
            /// Every registered `kind`, in registration order.
            #[allow(clippy::vec_init_then_push)] // entries may be cfg'd out
            pub fn kinds() -> Vec<&'static str> {
                let mut kinds = Vec::new();
                $( $(#[$meta])* kinds.push(<$spec as Algorithm>::KIND); )+
                kinds
            }

            /// Validates an entry of kind `kind`; `None` if no algorithm has it.
            pub(crate) fn parse(
                kind: &str,
                entry: &Entry<'_>,
            ) -> Option<Result<Vec<LimiterSpec>, ScenarioError>> {
                $(
                    $(#[$meta])*
                    if kind == <$spec as Algorithm>::KIND {
                        let specs = <$spec as Algorithm>::parse(entry);
                        return Some(specs.map(|v| v.into_iter().map(LimiterSpec::$variant).collect()));
                    }
                )+
                None
            }

            /// The spec as the object-safe questions every algorithm answers.
            pub fn describe(&self) -> &dyn Describe {
                match self {
                    $( $(#[$meta])* LimiterSpec::$variant(s) => s, )+
                }
            }

            /// Runs `visitor` with the concrete spec type.
            pub fn visit<V: SpecVisitor>(&self, visitor: V) -> V::Out {
                match self {
                    $( $(#[$meta])* LimiterSpec::$variant(s) => visitor.visit(s), )+
                }
            }

            pub fn build(&self, limit: Limit) -> AnyLimiter {
                match self {
                    $( $(#[$meta])* LimiterSpec::$variant(s) => AnyLimiter::$variant(s.build(limit)), )+
                }
            }
        }

        impl Limiter for AnyLimiter {
            #[inline]
            fn decide(&mut self, now: Nanos, cost: u32) -> Decision {
                match self {
                    $( $(#[$meta])* AnyLimiter::$variant(l) => l.decide(now, cost), )+
                }
            }
            fn peak_state(&self) -> StateSize {
                match self {
                    $( $(#[$meta])* AnyLimiter::$variant(l) => l.peak_state(), )+
                }
            }
            fn exact_window_count(&mut self, now: Nanos) -> Option<u64> {
                match self {
                    $( $(#[$meta])* AnyLimiter::$variant(l) => l.exact_window_count(now), )+
                }
            }
            fn retry_at(&self, now: Nanos, cost: u32) -> Option<Nanos> {
                match self {
                    $( $(#[$meta])* AnyLimiter::$variant(l) => l.retry_at(now, cost), )+
                }
            }
        }
    };
}

// The registered algorithms, in the order `kind` lists them in messages.
// One line per algorithm.
registry! {
    FixedWindow(FixedWindowSpec),
    SlotCounter(SlotCounterSpec),
    SlidingLog(SlidingLogSpec),
    Gcra(GcraSpec),
    TokenBucket(TokenBucketSpec),
    #[cfg(test)]
    Example(ExampleSpec),
}

impl LimiterSpec {
    /// The algorithm name used in outputs (`algorithm` column) and as `kind`.
    pub fn algorithm(&self) -> &'static str {
        self.describe().kind()
    }

    /// A label such as `slot_counter(N=10)` (made unique within a run by
    /// [`crate::engine::labels`]).
    pub fn label(&self) -> String {
        self.describe().label()
    }

    pub fn style(&self) -> Style {
        self.describe().style()
    }

    pub fn sweep_traits(&self) -> SweepTraits {
        self.describe().sweep_traits()
    }

    pub fn slots(&self) -> Option<u64> {
        self.describe().slots()
    }

    /// The exact reference limiter: the sliding log.
    pub fn reference() -> LimiterSpec {
        SlidingLogSpec { count_rejected: false }.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind is listed once and labels of different specs differ.
    #[test]
    fn kinds_are_unique() {
        let mut kinds = LimiterSpec::kinds();
        let n = kinds.len();
        kinds.sort();
        kinds.dedup();
        assert_eq!(kinds.len(), n);
        assert!(kinds.contains(&"example"), "the test-only example is registered by its one line");
    }
}
