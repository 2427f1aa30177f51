//! ratesim: a discrete-event simulator that replays arrival traces through
//! rate limiters on a virtual clock and measures exactly how each behaves.
//!
//! The library owns time, traces, limiters, the engine, metrics, sweeps and
//! deciding what a run writes ([`run::run`]). It knows nothing of argument
//! parsing, progress bars, terminals or the chart backend. What every number
//! means is fixed in `docs/semantics.md`; how an arrival flows through the
//! layers is in `docs/architecture.md`.

pub mod check;
pub mod clients;
pub mod diagram;
pub mod engine;
pub mod export;
pub mod font;
pub mod limiter;
pub mod metrics;
pub mod nodes;
pub mod random;
pub mod ring;
pub mod run;
pub mod scenario;
pub mod shown;
pub mod simulate;
pub mod sweep;
pub mod time;
pub mod timeline;
pub mod trace;

pub use engine::{RunConfig, RunReport};
pub use limiter::{Decision, Limit, Limiter, LimiterSpec};
pub use scenario::Scenario;
pub use time::Nanos;
