//! Clients that react to decisions (`docs/semantics.md`, "Reacting
//! clients"): retry policies and budgets, closed populations of clients
//! with one request in flight, and what they measure. The engine runs
//! them inside each lane (`reactor.rs`), so every limiter has its own
//! attempt stream.

pub mod policy;
mod reactor;
mod report;

pub use policy::{Backoff, RetryPolicy, Throttle};
pub use reactor::{CLIENT_EVENT_BYTES, ClientReactor, closed_queue_bytes};
pub use report::{ClientReport, Logical};

use crate::time::Nanos;

/// A closed population: `clients` clients, each with one logical request in
/// flight; after it ends (success or give-up) the client thinks for an
/// exponential time of mean `think`, then sends the next, from `start`
/// until `end`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClosedSource {
    pub clients: u64,
    pub think: Nanos,
    pub start: Nanos,
    pub end: Nanos,
    pub retry: RetryPolicy,
}

/// Everything about reacting clients a run needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Clients {
    /// The retry policy of each open-loop source, in the order they are merged.
    pub open: Vec<RetryPolicy>,
    pub closed: Vec<ClosedSource>,
    /// The scenario seed: every lane's clients draw from ChaCha8 stream
    /// `2^32` of it, each lane from its own generator.
    pub seed: u64,
}

impl Clients {
    /// Whether anything reacts: a retry policy or a closed population.
    pub fn active(&self) -> bool {
        !self.closed.is_empty() || self.open.iter().any(|p| p.backoff != Backoff::None)
    }
}
