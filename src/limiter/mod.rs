//! Rate limiters, and the one list that registers every algorithm.
//!
//! A limiter is told the time (`now`) on every request and never reads a
//! clock. Each algorithm lives in one file that owns everything about it:
//! its scenario keys and their validation, its label, how it is built, its
//! chart style and what the sweeps may assume about it (the [`Algorithm`]
//! trait). The `registry!` list below turns the files into the
//! [`LimiterSpec`] and [`AnyLimiter`] enums, so adding an algorithm is one
//! new file, its `mod` and `pub use` lines here and one line in that list;
//! nothing else in ratesim matches on algorithm kinds. What the decisions mean is fixed in `docs/semantics.md`.

#[cfg(test)]
mod example;
mod fast_div;
mod fixed_window;
mod gcra;
mod go_rate;
mod guava;
mod leaky_bucket;
mod leaky_queue;
mod sliding_log;
mod slot_counter;
mod token_bucket;
mod weighted_window;

#[cfg(test)]
pub use example::ExampleSpec;
pub use fast_div::FastDiv;
pub use fixed_window::{FixedWindow, FixedWindowSpec, WindowAlign};
pub use gcra::{Gcra, GcraSpec};
pub use go_rate::{GoLimit, GoRate, GoRateSpec};
pub use guava::{Guava, GuavaSpec};
pub use leaky_bucket::{LeakyBucket, LeakyBucketSpec, LeakyState, nginx_rate};
pub use leaky_queue::{LeakyQueue, LeakyQueueSpec, MAX_QUEUE};
pub use sliding_log::{SlidingLog, SlidingLogSpec};
pub use slot_counter::{SlotCounter, SlotCounterSpec};
pub use token_bucket::{ContinuousBucket, Initial, TimerBucket, TokenBucket, TokenBucketSpec};
pub use weighted_window::{Rounding, WeightedWindow, WeightedWindowSpec};

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
    /// Admitted, after a wait: the request reaches the backend at `now + d`
    /// (a shaping limiter; `docs/semantics.md`, "Delay instead of reject").
    Delay(Nanos),
    Reject,
}

impl Decision {
    /// Whether the request gets through, at once or after a delay.
    #[inline(always)]
    pub fn admitted(self) -> bool {
        !matches!(self, Decision::Reject)
    }

    /// How long an admitted request waits (0 unless delayed).
    #[inline(always)]
    pub fn delay(self) -> Nanos {
        match self {
            Decision::Delay(d) => d,
            _ => Nanos::ZERO,
        }
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
    /// Counts a request that another node admitted at `now`, without
    /// deciding it (many nodes that sync their counts). Only limiters whose
    /// algorithm [`Algorithm::shares_counts`] do anything.
    fn absorb(&mut self, _now: Nanos, _cost: u32) {}
    /// Forgets the peak state so far: from here on [`Limiter::peak_state`]
    /// counts from the state held now. A synced node's view becomes a copy
    /// of the shared state, whose past peak the node never held. A limiter
    /// whose state never changes size has nothing to forget.
    fn restart_peak(&mut self) {}
    /// The run ends at `end`: what the limiter does on its own before then
    /// without a request to prompt it (a fleet's syncs after the key's last
    /// request) happens now, so that [`Limiter::peak_state`] counts it.
    /// Nothing is decided after it.
    fn settle(&mut self, _end: Nanos) {}
    /// Whether a rejected request counts too (`count_rejected`): then the
    /// nodes that sync their counts pass on rejections as well.
    fn counts_rejected(&self) -> bool {
        false
    }
    /// The node the next decision happens on, for a limiter copied on many
    /// nodes (`crate::nodes::Fleet`); others ignore it.
    #[inline(always)]
    fn route(&mut self, _node: u16) {}
    /// This copy is one client key's, in a run with client keys: a
    /// deployment keeps a map from key to limiter and makes a key's limiter
    /// when it first sees the key, so the copy comes into being at the first
    /// request it decides (that request's `now`), not at time 0 of the run.
    /// Called once, on a fresh copy, before any decision. A limiter whose
    /// state at a key's first request does not depend on when it was made,
    /// or whose named implementation makes every key's state up front,
    /// ignores it (`docs/semantics.md`, "Keyed runs").
    fn create_on_first_request(&mut self) {}
    /// Bytes this limiter holds on the heap besides its window rings
    /// (which [`crate::ring`] counts): a copy per node of a limiter on many
    /// nodes. Every client key has its own, so a run's memory check counts
    /// this per key.
    fn heap_bytes(&self) -> u64 {
        0
    }
    /// Whether [`Limiter::heap_bytes`] grows as the limiter decides (a
    /// store's writes in flight, a node's requests since its last sync), so
    /// that the memory check must add up every key's own, not take the
    /// first request's size for all.
    fn heap_grows(&self) -> bool {
        false
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

/// How a window limiter cuts time, as the windows diagram
/// ([`crate::diagram`]) draws it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cutting {
    /// Aligned windows of length W: the one holding `t*` is counted.
    Windows,
    /// N slots per window: the slot holding `t*` and the N - 1 before it.
    Slots(u64),
    /// The exact window `(t* - W, t*]`.
    Exact,
}

impl Cutting {
    /// The length of the cells this cutting draws (windows or slots), for a
    /// window of `w` ns; the exact window is one cell ending at `t*`.
    pub fn cell(self, w: u64) -> u64 {
        match self {
            Cutting::Slots(n) => w / n,
            Cutting::Windows | Cutting::Exact => w,
        }
    }

    /// Whether the cell `[a, b)` is counted by a decision at `t_star`.
    pub fn counts(self, a: u64, b: u64, t_star: u64, w: u64) -> bool {
        match self {
            Cutting::Windows => a <= t_star && t_star < b,
            Cutting::Slots(n) => {
                b > t_star.saturating_sub(w) && a <= t_star && {
                    let n = u128::from(n);
                    let k_star = (u128::from(t_star) * n) / u128::from(w);
                    let k_a = (u128::from(a) * n) / u128::from(w);
                    k_a + n > k_star
                }
            }
            Cutting::Exact => false,
        }
    }
}

/// How the windows diagram shows a window limiter: how it cuts time, and
/// what its lane is called.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiagramStyle {
    pub cutting: Cutting,
    /// The lane's name: `fixed window`, `10 slots`, `sliding log (exact)`.
    pub name: String,
    /// Its name in a caption that lists the lanes' cuts: `fixed windows`,
    /// `10 slots`.
    pub cut_name: String,
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
    /// A lone burst pair opens this limiter's window at its first burst
    /// (the first-request fixed window), so the burst-pair sweep can never
    /// break it and reports it as not measured: only earlier traffic that
    /// placed the window's edge can break it.
    pub pair_opens_window: bool,
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
    /// How the windows diagram draws this limiter, if it is a window
    /// limiter that cuts time the diagram can show; `None` (the default)
    /// keeps it out of the diagram.
    fn diagram_style(&self) -> Option<DiagramStyle> {
        None
    }
    fn sweep_traits(&self) -> SweepTraits {
        SweepTraits::default()
    }
    /// The slot count, for limiters that have one (the `slots` column,
    /// `--slots`).
    fn slots(&self) -> Option<u64> {
        None
    }
    /// Whether its limiter answers [`Limiter::retry_at`] (clients may then
    /// follow its `Retry-After` header).
    fn advertises_retry(&self) -> bool {
        false
    }
    /// Whether its state is counts that nodes can add up ([`Limiter::absorb`]),
    /// so that nodes may sync them.
    fn shares_counts(&self) -> bool {
        false
    }
    /// Whether it keeps a timestamp for every request inside its window,
    /// rejected ones too: what it holds then grows with the traffic, not
    /// with the limit (the run's memory error says so).
    fn logs_rejected(&self) -> bool {
        false
    }
    /// Whether its limiter may answer [`Decision::Delay`] (a shaping
    /// limiter). Those that never delay say so here, once.
    fn delays(&self) -> bool {
        false
    }
    /// For a shaping limiter, in words for the error a run gives when its
    /// delayed requests outgrow the memory budget: what bounds how many
    /// wait at once, and which key to change.
    fn queue_advice(&self, _limit: Limit) -> String {
        String::new()
    }
}

/// The per-spec questions, object-safe, for code that does not care which
/// algorithm it holds. Every [`Algorithm`] answers them.
pub trait Describe {
    fn kind(&self) -> &'static str;
    fn label(&self) -> String;
    fn style(&self) -> Style;
    fn diagram_style(&self) -> Option<DiagramStyle>;
    fn sweep_traits(&self) -> SweepTraits;
    fn slots(&self) -> Option<u64>;
    fn advertises_retry(&self) -> bool;
    fn shares_counts(&self) -> bool;
    fn logs_rejected(&self) -> bool;
    fn delays(&self) -> bool;
    fn queue_advice(&self, limit: Limit) -> String;
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
    fn diagram_style(&self) -> Option<DiagramStyle> {
        Algorithm::diagram_style(self)
    }
    fn sweep_traits(&self) -> SweepTraits {
        Algorithm::sweep_traits(self)
    }
    fn slots(&self) -> Option<u64> {
        Algorithm::slots(self)
    }
    fn advertises_retry(&self) -> bool {
        Algorithm::advertises_retry(self)
    }
    fn shares_counts(&self) -> bool {
        Algorithm::shares_counts(self)
    }
    fn logs_rejected(&self) -> bool {
        Algorithm::logs_rejected(self)
    }
    fn delays(&self) -> bool {
        Algorithm::delays(self)
    }
    fn queue_advice(&self, limit: Limit) -> String {
        Algorithm::queue_advice(self, limit)
    }
}

/// Code generic over the algorithm, run with the concrete spec type (the
/// engine builds its monomorphised lanes this way).
pub trait SpecVisitor {
    type Out;
    fn visit<A: Algorithm>(self, spec: &A) -> Self::Out;
}

/// Generates [`AlgorithmSpec`] (one variant per algorithm, holding its
/// spec), [`AnyLimiter`] (static dispatch over the limiters) and their
/// plumbing from the list of registered algorithms.
macro_rules! registry {
    ($( $(#[$meta:meta])* $variant:ident($spec:ty), )+) => {
        /// Which algorithm, with which parameters.
        #[derive(Clone, Debug, PartialEq)]
        pub enum AlgorithmSpec {
            $( $(#[$meta])* $variant($spec), )+
        }

        /// Any registered limiter, statically dispatched.
        #[derive(Clone, Debug)]
        pub enum AnyLimiter {
            $( $(#[$meta])* $variant(<$spec as Algorithm>::Limiter), )+
        }

        $(
            $(#[$meta])*
            impl From<$spec> for AlgorithmSpec {
                fn from(spec: $spec) -> AlgorithmSpec {
                    AlgorithmSpec::$variant(spec)
                }
            }

            $(#[$meta])*
            impl From<$spec> for LimiterSpec {
                fn from(spec: $spec) -> LimiterSpec {
                    LimiterSpec { algorithm: AlgorithmSpec::$variant(spec), retry_after: RetryAfter::Exact }
                }
            }
        )+

        impl AlgorithmSpec {
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
            ) -> Option<Result<Vec<AlgorithmSpec>, ScenarioError>> {
                $(
                    $(#[$meta])*
                    if kind == <$spec as Algorithm>::KIND {
                        let specs = <$spec as Algorithm>::parse(entry);
                        return Some(specs.map(|v| v.into_iter().map(AlgorithmSpec::$variant).collect()));
                    }
                )+
                None
            }

            /// The spec as the object-safe questions every algorithm answers.
            pub fn describe(&self) -> &dyn Describe {
                match self {
                    $( $(#[$meta])* AlgorithmSpec::$variant(s) => s, )+
                }
            }

            /// Runs `visitor` with the concrete spec type.
            pub fn visit<V: SpecVisitor>(&self, visitor: V) -> V::Out {
                match self {
                    $( $(#[$meta])* AlgorithmSpec::$variant(s) => visitor.visit(s), )+
                }
            }

            pub fn build(&self, limit: Limit) -> AnyLimiter {
                match self {
                    $( $(#[$meta])* AlgorithmSpec::$variant(s) => AnyLimiter::$variant(s.build(limit)), )+
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
            fn absorb(&mut self, now: Nanos, cost: u32) {
                match self {
                    $( $(#[$meta])* AnyLimiter::$variant(l) => l.absorb(now, cost), )+
                }
            }
            fn restart_peak(&mut self) {
                match self {
                    $( $(#[$meta])* AnyLimiter::$variant(l) => l.restart_peak(), )+
                }
            }
            fn settle(&mut self, end: Nanos) {
                match self {
                    $( $(#[$meta])* AnyLimiter::$variant(l) => l.settle(end), )+
                }
            }
            fn counts_rejected(&self) -> bool {
                match self {
                    $( $(#[$meta])* AnyLimiter::$variant(l) => l.counts_rejected(), )+
                }
            }
            fn create_on_first_request(&mut self) {
                match self {
                    $( $(#[$meta])* AnyLimiter::$variant(l) => l.create_on_first_request(), )+
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
    LeakyBucket(LeakyBucketSpec),
    WeightedWindow(WeightedWindowSpec),
    Guava(GuavaSpec),
    LeakyQueue(LeakyQueueSpec),
    GoRate(GoRateSpec),
    #[cfg(test)]
    Example(ExampleSpec),
}

/// How the `Retry-After` header a limiter sends rounds its advertised
/// retry time (`docs/semantics.md`, "Advertised retry time").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RetryAfter {
    /// The exact instant, to the nanosecond.
    #[default]
    Exact,
    /// Whole seconds from the reject, rounded up: a true ceiling, never
    /// early. Not redis-cell's rounding, which drops a fraction of a second
    /// under 1 ms (`docs/semantics.md`, "The advertised retry time").
    CeilSeconds,
    /// Whole seconds from the reject, rounded down (redis-cell's header up
    /// to 0.3.0), which sends clients back too early.
    FloorSeconds,
    /// redis-cell's `CL.THROTTLE` from 0.4.0 (0.5.0 too): the wait in seconds as an `f64`,
    /// truncated, plus 1 when its fraction of a second holds a whole
    /// millisecond (`as_seconds_f64() as i64`, then `+ 1` if
    /// `subsec_milliseconds() > 0`). A fraction under 1 ms is dropped, so
    /// the client comes back up to 1 ms early.
    RedisCell,
}

impl RetryAfter {
    pub const NAMES: [&'static str; 4] = ["exact", "ceil_seconds", "floor_seconds", "redis_cell"];

    pub fn parse(name: &str) -> Option<RetryAfter> {
        Some(match name {
            "exact" => RetryAfter::Exact,
            "ceil_seconds" => RetryAfter::CeilSeconds,
            "floor_seconds" => RetryAfter::FloorSeconds,
            "redis_cell" => RetryAfter::RedisCell,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            RetryAfter::Exact => "exact",
            RetryAfter::CeilSeconds => "ceil_seconds",
            RetryAfter::FloorSeconds => "floor_seconds",
            RetryAfter::RedisCell => "redis_cell",
        }
    }

    /// A short name with this rounding when it is not exact:
    /// `fixed window, header floor`.
    fn named(self, short: String) -> String {
        match self {
            RetryAfter::Exact => short,
            RetryAfter::CeilSeconds => format!("{short}, header ceil"),
            RetryAfter::FloorSeconds => format!("{short}, header floor"),
            RetryAfter::RedisCell => format!("{short}, header redis-cell"),
        }
    }

    /// The instant a client reads from the header sent at `now` for a
    /// retry time `at`; `None` when rounding up carries it past the end of
    /// time (`u64::MAX` ns), where no retry can be sent.
    pub fn header(self, now: Nanos, at: Nanos) -> Option<Nanos> {
        let wait = at.get().saturating_sub(now.get());
        let secs = match self {
            RetryAfter::Exact => return Some(at),
            RetryAfter::CeilSeconds => wait.div_ceil(Nanos::PER_SECOND),
            RetryAfter::FloorSeconds => wait / Nanos::PER_SECOND,
            RetryAfter::RedisCell => {
                // `time::Duration::as_seconds_f64`: whole seconds plus the
                // nanoseconds over 1e9, each as an f64. From 2^24 s on the sum
                // can round up to the next second (then 1 more is added).
                let (whole, nanos) = (wait / Nanos::PER_SECOND, wait % Nanos::PER_SECOND);
                let secs = (whole as f64 + nanos as f64 / 1e9) as u64;
                secs + u64::from(nanos / 1_000_000 > 0)
            }
        };
        secs.checked_mul(Nanos::PER_SECOND).and_then(|w| now.get().checked_add(w)).map(Nanos::new)
    }
}

/// A validated `[[limiter]]` entry: an algorithm with its parameters, and
/// how the `Retry-After` header it sends is rounded.
#[derive(Clone, Debug, PartialEq)]
pub struct LimiterSpec {
    pub algorithm: AlgorithmSpec,
    pub retry_after: RetryAfter,
}

impl LimiterSpec {
    /// Every registered `kind`, in registration order.
    pub fn kinds() -> Vec<&'static str> {
        AlgorithmSpec::kinds()
    }

    /// The algorithm name used in outputs (`algorithm` column) and as `kind`.
    pub fn algorithm(&self) -> &'static str {
        self.describe().kind()
    }

    pub fn describe(&self) -> &dyn Describe {
        self.algorithm.describe()
    }

    /// A label such as `slot_counter(N=10)`, with the header rounding when
    /// it is not exact (`gcra(burst=10;retry_after=floor_seconds)`); made
    /// unique within a run by [`crate::engine::labels`].
    pub fn label(&self) -> String {
        let label = self.describe().label();
        if self.retry_after == RetryAfter::Exact {
            return label;
        }
        // Parameters are joined by `;`, as the algorithms join theirs, so a
        // label needs no quoting in CSV.
        let extra = format!("retry_after={}", self.retry_after.name());
        match label.strip_suffix(')') {
            Some(open) => format!("{open};{extra})"),
            None => format!("{label}({extra})"),
        }
    }

    pub fn style(&self) -> Style {
        self.describe().style()
    }

    /// A short name for legends: `fixed window`, `10 slots`, `sliding log`;
    /// with the Retry-After rounding when it is not exact
    /// (`fixed window, header floor`).
    pub fn short_name(&self) -> String {
        self.retry_after.named(self.style().short)
    }

    /// How the windows diagram draws this limiter, if it draws it: its
    /// algorithm's [`DiagramStyle`], the names with the Retry-After
    /// rounding when it is not exact (`sliding log (exact), header ceil`).
    pub fn diagram_style(&self) -> Option<DiagramStyle> {
        let style = self.describe().diagram_style()?;
        Some(DiagramStyle {
            name: self.retry_after.named(style.name),
            cut_name: self.retry_after.named(style.cut_name),
            ..style
        })
    }

    pub fn sweep_traits(&self) -> SweepTraits {
        self.describe().sweep_traits()
    }

    pub fn slots(&self) -> Option<u64> {
        self.describe().slots()
    }

    pub fn advertises_retry(&self) -> bool {
        self.describe().advertises_retry()
    }

    pub fn shares_counts(&self) -> bool {
        self.describe().shares_counts()
    }

    pub fn logs_rejected(&self) -> bool {
        self.describe().logs_rejected()
    }

    pub fn delays(&self) -> bool {
        self.describe().delays()
    }

    pub fn queue_advice(&self, limit: Limit) -> String {
        self.describe().queue_advice(limit)
    }

    pub fn visit<V: SpecVisitor>(&self, visitor: V) -> V::Out {
        self.algorithm.visit(visitor)
    }

    pub fn build(&self, limit: Limit) -> AnyLimiter {
        self.algorithm.build(limit)
    }

    /// The exact reference limiter: the sliding log.
    pub fn reference() -> LimiterSpec {
        SlidingLogSpec { count_rejected: false }.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_rounding() {
        let (now, at) = (Nanos::from_millis(500), Nanos::from_millis(2_300));
        assert_eq!(RetryAfter::Exact.header(now, at), Some(at));
        // 1.8 s to wait: 2 s rounded up, 1 s rounded down.
        assert_eq!(RetryAfter::CeilSeconds.header(now, at), Some(Nanos::from_millis(2_500)));
        assert_eq!(RetryAfter::FloorSeconds.header(now, at), Some(Nanos::from_millis(1_500)));
        // A true ceiling: 1.0005 s to wait is 2 s (redis-cell 0.4 sends 1).
        let at = now + Nanos::new(1_000_500_000);
        assert_eq!(RetryAfter::CeilSeconds.header(now, at), Some(Nanos::from_millis(2_500)));
        // Near the end of time: u64::MAX ns is 18 446 744 073.709551615 s.
        // From 0.9 s, a wait to 18 446 744 073 s rounds up to 18 446 744 073 s
        // more, past the end of time: no header; rounded down it is 0.9 s
        // + 18 446 744 072 s; the exact time itself is always a time.
        let (now, at) = (Nanos::from_millis(900), Nanos::new(18_446_744_073_000_000_000));
        assert_eq!(RetryAfter::CeilSeconds.header(now, at), None);
        assert_eq!(RetryAfter::FloorSeconds.header(now, at), Some(Nanos::new(18_446_744_072_900_000_000)));
        assert_eq!(RetryAfter::Exact.header(now, Nanos::MAX), Some(Nanos::MAX));
        // redis-cell 0.4.0: 1.0005 s is sent as 1 (half a millisecond
        // early), 1.001 s as 2, 2 s as 2, 0.5 s as 1, and 0.5 ms as 0 (come
        // back at once).
        for (wait, sent) in [
            (1_000_500_000, 1),
            (1_001_000_000, 2),
            (2_000_000_000, 2),
            (500_000_000, 1),
            (500_000, 0),
            (999_999, 0),
            (1_000_000, 1),
        ] {
            let now = Nanos::from_millis(500);
            assert_eq!(
                RetryAfter::RedisCell.header(now, now + Nanos::new(wait)),
                Some(now + Nanos::new(sent * 1_000_000_000)),
                "a wait of {wait} ns"
            );
        }
        // Its f64: 2^34 s + 999 999 999 ns is 2^34 + 1 s as an f64 (a step
        // of 2^-18 s there), truncated to 2^34 + 1, and the fraction holds
        // 999 ms: sent as 2^34 + 2 s, a second past the true ceiling.
        let wait = Nanos::new((1 << 34) * 1_000_000_000 + 999_999_999);
        assert_eq!(
            RetryAfter::RedisCell.header(Nanos::ZERO, wait),
            Some(Nanos::new(((1 << 34) + 2) * 1_000_000_000))
        );
        assert_eq!(
            RetryAfter::CeilSeconds.header(Nanos::ZERO, wait),
            Some(Nanos::new(((1 << 34) + 1) * 1_000_000_000))
        );
        // The first whole second where it can: 2^23 s + 999 999 999 ns
        // stays under 2^23 + 1 as an f64 (sent as the true ceiling), 2^24 s
        // + 999 999 999 ns does not.
        for (p, extra) in [(23, 1), (24, 2)] {
            let wait = Nanos::new((1 << p) * 1_000_000_000 + 999_999_999);
            assert_eq!(
                RetryAfter::RedisCell.header(Nanos::ZERO, wait),
                Some(Nanos::new(((1 << p) + extra) * 1_000_000_000)),
                "2^{p} s"
            );
        }
        assert_eq!(RetryAfter::RedisCell.header(Nanos::ZERO, Nanos::MAX), None, "past the end of time");
        let spec =
            LimiterSpec { retry_after: RetryAfter::FloorSeconds, ..SlotCounterSpec { slots: 10 }.into() };
        assert_eq!(spec.label(), "slot_counter(N=10;retry_after=floor_seconds)");
        let spec = LimiterSpec { retry_after: RetryAfter::CeilSeconds, ..FixedWindowSpec::ALIGNED.into() };
        assert_eq!(spec.label(), "fixed_window(retry_after=ceil_seconds)");
    }

    /// Legends and the windows diagram's lanes name a limiter by its short
    /// name, with the header rounding; the diagram draws only the window
    /// limiters that cut time on its grid.
    #[test]
    fn short_names_and_diagram_lanes() {
        let floor = |spec: LimiterSpec| LimiterSpec { retry_after: RetryAfter::FloorSeconds, ..spec };
        let fixed: LimiterSpec = FixedWindowSpec::ALIGNED.into();
        assert_eq!(fixed.short_name(), "fixed window");
        assert_eq!(floor(fixed.clone()).short_name(), "fixed window, header floor");
        let d = floor(fixed).diagram_style().unwrap();
        assert_eq!((d.cutting, d.name.as_str()), (Cutting::Windows, "fixed window, header floor"));
        assert_eq!(d.cut_name, "fixed windows, header floor");
        let d = LimiterSpec::from(SlotCounterSpec { slots: 10 }).diagram_style().unwrap();
        assert_eq!(
            (d.cutting, d.name.as_str(), d.cut_name.as_str()),
            (Cutting::Slots(10), "10 slots", "10 slots")
        );
        let d =
            LimiterSpec { retry_after: RetryAfter::RedisCell, ..LimiterSpec::reference() }.diagram_style();
        assert_eq!(
            d.map(|d| (d.cutting, d.name)),
            Some((Cutting::Exact, "sliding log (exact), header redis-cell".into()))
        );
        for other in [
            LimiterSpec::from(FixedWindowSpec { align: WindowAlign::FirstRequest }),
            FixedWindowSpec { align: WindowAlign::Epoch { offset: Nanos::new(1) } }.into(),
            SlidingLogSpec { count_rejected: true }.into(),
            GcraSpec { burst: None, max_wait: None }.into(),
        ] {
            assert_eq!(other.diagram_style(), None, "{}", other.label());
        }
    }

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
