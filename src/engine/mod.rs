//! The simulation: one streaming pass that feeds every arrival, in
//! (time, source order), to every limiter and updates every metric.
//!
//! How an arrival flows (see also `docs/architecture.md`):
//!
//! 1. `reader.rs`: the merged sources are read a chunk at a time; client
//!    keys become dense ids.
//! 2. `lane.rs`: each limiter is a *lane* with its own state (one limiter
//!    instance per key), exact-window tracker, counters, timeline column
//!    and event queue (`events.rs`). A lane decides every arrival of a
//!    chunk in order, merged with the events it scheduled for itself.
//! 3. `schedule.rs`: the reader and the lanes run as tasks on rayon's pool
//!    (or in turn on one thread), and the calling thread reports each chunk in
//!    order: disagreement with the sliding log (by comparing decision
//!    bitsets), decisions.csv rows and progress.
//!
//! Every lane sees every arrival in the same order whatever thread runs it,
//! so results do not depend on the thread count.

mod events;
mod lane;
mod reader;
mod schedule;

pub use events::{Event, EventQueue};
pub use lane::{Calendar, Decided, Reactor, Scheduled};
pub use reader::CHUNK;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::clients::{Clients, Logical};
use crate::export::fmt_bytes;
use crate::limiter::{Limit, LimiterSpec};
use crate::metrics::LimiterReport;
use crate::nodes::Topology;
use crate::time::Nanos;
use crate::timeline::{Timeline, TooManyBins};
use crate::trace::{ArrivalResult, TraceError};
use lane::{LaneOps, LaneOut, MakeLane};
use reader::{Chunk, Reader};

/// What to simulate, apart from the arrivals.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub limit: Limit,
    /// The limiters to compare, in output order. The sliding log reference is
    /// added at the end when none is listed.
    pub limiters: Vec<LimiterSpec>,
    /// Arrivals at or after this instant are not read; the timeline runs to it.
    pub end: Option<Nanos>,
    /// Timeline bin width; automatic when `None`.
    pub bin: Option<Nanos>,
    /// The most bytes the process may hold in window timestamps (the
    /// exact-window trackers', the logs', the slots') and in the queues of
    /// delayed requests of shaping limiters, and in the limiters and
    /// trackers of every client key: past it the run stops with an error
    /// instead of running out of memory. [`memory_budget`] by default.
    pub memory_budget: u64,
    /// Measure each limiter's admission curve (`metrics::CurveTracker`).
    pub admission_curve: bool,
    /// Clients that react to decisions (retries, closed populations), if
    /// any: then each lane has its own attempt stream.
    pub clients: Option<Clients>,
    /// The nodes every limiter but the exact reference runs on, if many.
    pub topology: Option<Topology>,
    /// The scenario seed (random load balancing).
    pub seed: u64,
    /// The arrivals carry client keys (a source with `clients` or
    /// `key_column`): each key's limiter is then made at the key's first
    /// request, as a deployment's map of keys makes it; without keys the
    /// one limiter exists from time 0 (`docs/semantics.md`, "Keyed runs").
    pub client_keys: bool,
}

impl RunConfig {
    /// `limiters` against `limit`, with every other setting at its default:
    /// no end (the run ends at the last arrival), automatic bins, the
    /// default memory budget, no admission curve.
    pub fn new(limit: Limit, limiters: Vec<LimiterSpec>) -> RunConfig {
        RunConfig {
            limit,
            limiters,
            end: None,
            bin: None,
            memory_budget: memory_budget(),
            admission_curve: false,
            clients: None,
            topology: None,
            seed: 0,
            client_keys: false,
        }
    }
}

/// The default [`RunConfig::memory_budget`] unless [`set_memory_budget`]
/// says otherwise: 8 GiB.
pub const MEMORY_BUDGET: u64 = 8 << 30;

/// The budget runs made with [`RunConfig::new`] get (`ratesim --memory`).
static BUDGET: AtomicU64 = AtomicU64::new(MEMORY_BUDGET);

/// Sets the memory budget of the runs this process makes from now on (its
/// sweeps' included): the bytes of window timestamps and delayed requests
/// held, as the lanes count their rings and queues.
pub fn set_memory_budget(bytes: u64) {
    BUDGET.store(bytes, Ordering::Relaxed);
}

/// The memory budget of a run made with [`RunConfig::new`].
pub fn memory_budget() -> u64 {
    BUDGET.load(Ordering::Relaxed)
}

/// One per-request decision, for `decisions.csv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecisionRecord {
    pub seq: u64,
    pub time: Nanos,
    pub key: u64,
    pub limiter: usize,
    pub admitted: bool,
    /// Admitted requests of this limiter (for this key) in the exact window
    /// `(t - W, t]` just before it.
    pub window_count: u64,
    /// When clients react: the attempt number and logical request (then
    /// `seq` counts the limiter's own attempts).
    pub attempt: Option<(u32, Option<Logical>)>,
    /// How long the request waits before the backend (shaping limiters).
    pub delay: Nanos,
    /// The node that decided it, when the limiter runs on many nodes.
    pub node: Option<u16>,
}

/// Receives per-request decisions (the engine never formats them).
pub trait DecisionSink {
    fn record(&mut self, record: &DecisionRecord) -> std::io::Result<()>;
}

/// Where a run is, for progress display.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub arrivals: u64,
    pub now: Nanos,
}

/// What a [`RunError::Memory`] names beside the window timestamps.
fn memory_rest(state: u64) -> &'static str {
    if state > 0 { " of waiting requests and limiter state" } else { " of waiting requests" }
}

/// A memory message's amounts: `main` bytes, then (when `rest` > 0) " and
/// {rest}{what} ({main + rest} in all)", then the budget; the sum that
/// passed the budget and the budget in whole bytes where rounding would
/// write them alike (never "16.0 MiB, more than the 16.0 MiB").
fn held_against(main: u64, rest: u64, what: &str, budget: u64) -> (String, String, String) {
    if rest == 0 {
        let (m, b) = crate::export::fmt_bytes_apart(main, budget);
        return (m, String::new(), b);
    }
    let (total, b) = crate::export::fmt_bytes_apart(main.saturating_add(rest), budget);
    (fmt_bytes(main), format!(" and {}{what} ({total} in all)", fmt_bytes(rest)), b)
}

/// What the window timestamps are: the admitted requests', or every
/// request's when a limiter that logs rejected requests too holds them.
fn stamps(logs_rejected: bool) -> &'static str {
    if logs_rejected { "timestamps of admitted and rejected requests" } else { "admitted timestamps" }
}

/// What a [`RunError::Memory`] says bounds the window timestamps and what
/// to change: the limit, or the traffic when the limiter holding the most
/// (`logs_rejected`) logs rejected requests too.
fn timestamps_advice(requests: u64, logs_rejected: Option<&str>) -> String {
    match logs_rejected {
        Some(limiter) => format!(
            "`{limiter}` logs every request inside its window, rejected ones too, so its log grows with the \
traffic, not with limit.requests; ratesim keeps every entry to decide exactly. Use a shorter window or a \
shorter or sparser trace, or, if the machine has the memory, raise --memory"
        ),
        None => format!(
            "with limit.requests = {requests}, one window can hold up to {} timestamps of 8 bytes per limiter and \
client (the sliding log: {requests} entries of 16 bytes, a timestamp and a running count), {} each; ratesim \
keeps every one of them to measure exactly. Lower limit.requests, use a shorter or sparser trace, or, if the \
machine has the memory, raise --memory",
            requests.saturating_mul(2),
            fmt_bytes(requests.saturating_mul(16))
        ),
    }
}

/// What a [`RunError::NodeState`] says holds the state and what to change.
fn node_state_advice(mode: crate::nodes::Mode) -> String {
    use crate::nodes::Mode;
    let raise = "or, if the machine has the memory, raise --memory";
    match mode {
        Mode::Central { rtt, atomic: false } => format!(
            "with get-then-set writes (atomic = false), the store keeps every write for a round trip until it \
lands (rtt = {}), one state per admitted request, so they grow with the traffic in one round trip. Use a shorter \
`rtt`, atomic = true, or a sparser trace, {raise}",
            crate::time::format_duration(rtt)
        ),
        Mode::Sync { interval } => format!(
            "each node keeps every request it counted since the last sync until the next (sync_interval = {}), so \
they grow with the traffic in one interval. Use a shorter `sync_interval` or a sparser trace, {raise}",
            crate::time::format_duration(interval)
        ),
        _ => format!("every client key has its own copy on each node. Use fewer keys or nodes, {raise}"),
    }
}

/// The message of [`RunError::ChunkAttempts`]. Without decisions.csv the
/// lane held its rings and queues, against its share of the budget (or
/// what it held when the chunk began, if more); with it, the room for the
/// attempts it keeps too, against its share.
fn chunk_attempts(limiter: &str, logs_rejected: bool, o: &lane::Overrun, budget: u64, lanes: u64) -> String {
    let stamps = stamps(logs_rejected);
    let start = format!(
        "`{limiter}` ran {} attempts of its clients (retries and closed clients' requests) among the arrivals of \
one chunk, up to {} s, and came to",
        o.attempts, o.at
    );
    let advice = "Use fewer closed clients or a longer `think`, a lower `max_attempts` or a retry `budget`";
    let raise = "or, if the machine has the memory, raise --memory";
    let (rings, waiting) = (fmt_bytes(o.rings), fmt_bytes(o.waiting));
    let share_of = |share: &str| {
        if lanes > 1 {
            format!(
                "{share}, its share of the {} the run may use (--memory) as one of {lanes} limiters run side by side \
(the exact reference included)",
                fmt_bytes(budget)
            )
        } else {
            format!("the {share} the run may use (--memory)")
        }
    };
    if o.records == 0 {
        let parts = format!("{rings} of {stamps} inside exact windows, {waiting} of waiting requests");
        if o.started > o.share {
            let (held, started) = crate::export::fmt_bytes_apart(o.bytes(), o.started);
            return format!(
                "{start} hold {held} ({parts}), more than the {started} it held when the chunk began, already past \
{}. {advice}, {raise}",
                share_of(&fmt_bytes(o.share))
            );
        }
        let (held, share) = crate::export::fmt_bytes_apart(o.bytes(), o.share);
        return format!("{start} hold {held} ({parts}), more than {}. {advice}, {raise}", share_of(&share));
    }
    let (needed, share) = crate::export::fmt_bytes_apart(o.bytes(), o.share);
    let earlier = if o.earlier > 0 {
        format!(
            ", and {} for those of the {} chunks before it, which may not be written yet",
            fmt_bytes(o.earlier),
            schedule::IN_FLIGHT
        )
    } else {
        String::new()
    };
    format!(
        "{start} need {needed} ({rings} of {stamps} inside exact windows, {waiting} of waiting requests \
and {} for attempts kept for decisions.csv until their chunk is written: the {} it kept in this chunk so far, with \
room for {} more before it looks again{earlier}), more than {}. {advice}, or run without --decisions, {raise}",
        fmt_bytes(o.records.saturating_add(o.earlier)),
        o.kept,
        o.room,
        share_of(&share)
    )
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(transparent)]
    Timeline(#[from] TooManyBins),
    #[error("cannot write decisions")]
    Decisions(#[source] std::io::Error),
    #[error(
        "the run holds {} of {} inside exact windows{}, more than the {} it may use (--memory): {}",
        held_against(*held, rest.saturating_add(*state), memory_rest(*state), *budget).0,
        stamps(logs_rejected.is_some()),
        held_against(*held, rest.saturating_add(*state), memory_rest(*state), *budget).1,
        held_against(*held, rest.saturating_add(*state), memory_rest(*state), *budget).2,
        timestamps_advice(*requests, logs_rejected.as_deref())
    )]
    Memory {
        held: u64,
        /// Delayed requests and requests waiting to retry, with closed
        /// clients' next requests.
        rest: u64,
        /// The limiters' own state (every client key's, a copy per node),
        /// named only when the parts above stay within the budget without it.
        state: u64,
        budget: u64,
        requests: u64,
        /// The limiter holding the most timestamps, when it logs rejected
        /// requests too (then the limit does not bound them).
        logs_rejected: Option<String>,
    },
    #[error(
        "the limiters on nodes hold {} of their own state and the rest of the run {} (window timestamps, queues), {} \
in all, more than the {} the run may use (--memory): {}",
        fmt_bytes(*state), fmt_bytes(*held),
        crate::export::fmt_bytes_apart(state.saturating_add(*held), *budget).0,
        crate::export::fmt_bytes_apart(state.saturating_add(*held), *budget).1,
        node_state_advice(*mode)
    )]
    NodeState {
        /// The limiters' state: every copy on a node, the store's writes in
        /// flight or each node's requests since its last sync.
        state: u64,
        /// Everything else the budget counts.
        held: u64,
        budget: u64,
        mode: crate::nodes::Mode,
    },
    #[error(
        "`{limiter}` had up to {peak} delayed requests waiting for the backend at once{}: its queue holds {} for \
them, and with the {} the rest of the run holds (window timestamps, limiter state, other queues) that passes the {} the run may use \
(--memory). {advice}",
        if pending < peak { format!(" ({pending} wait now)") } else { String::new() },
        fmt_bytes(*queue), fmt_bytes(*held), fmt_bytes(*budget)
    )]
    DelayQueue {
        /// The label of the shaping limiter holding the most.
        limiter: String,
        /// Delayed requests waiting when the run stopped.
        pending: u64,
        /// The most that waited at once: what its queue's buffers hold
        /// places for (they never shrink), up to twice over as they double.
        peak: u64,
        /// Bytes of its queue.
        queue: u64,
        /// Everything else the budget counts: window timestamps and the
        /// other limiters' queues.
        held: u64,
        budget: u64,
        /// What bounds its queue, and what to change.
        advice: String,
    },
    #[error(
        "the run keeps limiters for {keys} client keys{}: their state and window timestamps hold {}{}, more than \
the {} the run may use (--memory). Every distinct client key gets its own limiter and exact-window tracker in each of \
the {lanes} limiters run{}: use fewer clients, or a `key_column` with fewer distinct values, or a shorter trace or \
`duration`{}, or, if the machine has the memory, raise --memory",
        from.as_deref().map(|f| format!(" (from {f})")).unwrap_or_default(),
        held_against(*bytes, *held, "", *budget).0,
        held_against(*bytes, *held, "", *budget).1.replacen(" and ", " and waiting requests ", 1),
        held_against(*bytes, *held, "", *budget).2,
        nodes.map(|n| format!(", and each limiter on [nodes] a copy on every one of its {n} nodes")).unwrap_or_default(),
        if nodes.is_some() { ", or fewer nodes" } else { "" }
    )]
    Keys {
        /// Distinct client keys seen so far.
        keys: u64,
        /// Where they come from (`traffic[0].clients` = 1000000), when
        /// the caller knows the scenario.
        from: Option<String>,
        /// Bytes of per-key state (every lane's limiters and trackers, the
        /// reader's table of keys) and of the window timestamps they hold.
        bytes: u64,
        /// Everything else the budget counts.
        held: u64,
        budget: u64,
        /// Limiters run, the exact reference included.
        lanes: usize,
        /// The nodes of `[nodes]`, when the limiters run on many.
        nodes: Option<u16>,
    },
    #[error(
        "{clients} closed clients keep their next request in each of the {} limiters run (the exact reference \
included): {} a limiter, {} in all, more than the {} the run may use (--memory). Run fewer closed clients or \
fewer limiters, or, if the machine has the memory, raise --memory",
        lanes, fmt_bytes(*per_lane), crate::export::fmt_bytes_apart(per_lane.saturating_mul(*lanes), *budget).0,
        crate::export::fmt_bytes_apart(per_lane.saturating_mul(*lanes), *budget).1
    )]
    ClosedClients {
        clients: u64,
        lanes: u64,
        /// Bytes one lane's queue holds for them
        /// ([`crate::clients::closed_queue_bytes`]).
        per_lane: u64,
        budget: u64,
    },
    #[error(
        "the clients of `{limiter}` keep {pending} requests waiting to retry{}: they hold {}, and with the {} the rest \
of the run holds that passes the {} the run may use (--memory). Every rejected request waits in memory until its retry: \
shorten the waits (`base`, `cap`), lower `max_attempts`, add a retry `budget`, {}",
        if *closed > 0 { format!(" and {closed} closed clients their next request") } else { String::new() },
        fmt_bytes(*bytes), fmt_bytes(*held), fmt_bytes(*budget),
        if *closed > 0 { "or run fewer closed clients or a shorter trace" } else { "or use a shorter trace" }
    )]
    RetryQueue {
        /// The label of the lane whose clients hold the most.
        limiter: String,
        pending: u64,
        /// Closed clients, each with its next request in the queue.
        closed: u64,
        bytes: u64,
        /// Everything else the budget counts.
        held: u64,
        budget: u64,
    },
    #[error("{}", chunk_attempts(limiter, *logs_rejected, overrun, *budget, *lanes))]
    ChunkAttempts {
        /// The label of the lane that passed what it may hold.
        limiter: String,
        /// Its limiter logs rejected requests too.
        logs_rejected: bool,
        /// Boxed: the error stays small for every `Result` that carries it.
        overrun: Box<lane::Overrun>,
        budget: u64,
        /// Limiters run, the exact reference included.
        lanes: u64,
    },
}

/// Everything a run measured.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub limit: Limit,
    pub arrivals: u64,
    /// Distinct client keys the limiters saw (1 for an unkeyed trace with
    /// arrivals; closed clients are key 0).
    pub keys: u64,
    /// Distinct client keys among the trace's arrivals (without the key 0
    /// of closed clients when no arrival sent it).
    pub trace_keys: u64,
    /// End of the simulated span: the configured end, else just after the last arrival.
    pub end: Nanos,
    pub first_arrival: Option<Nanos>,
    pub last_arrival: Option<Nanos>,
    pub limiters: Vec<LimiterReport>,
    /// Index of the sliding log reference in `limiters`.
    pub reference: usize,
    pub timeline: Timeline,
}

/// The limiters to run: the listed ones, plus the reference if not listed.
/// Returns the specs and the reference's index.
pub fn with_reference(listed: &[LimiterSpec]) -> (Vec<LimiterSpec>, usize) {
    let mut specs = listed.to_vec();
    let reference = LimiterSpec::reference();
    let idx = match specs.iter().position(|s| *s == reference) {
        Some(i) => i,
        None => {
            specs.push(reference);
            specs.len() - 1
        }
    };
    (specs, idx)
}

/// The columns a run's timelines hold (see [`crate::timeline::max_bins`]):
/// one per lane (the listed limiters and the exact reference) and one per
/// node of every lane on `nodes` nodes (all but the reference).
pub fn timeline_columns(listed: &[LimiterSpec], nodes: Option<u16>) -> u64 {
    let lanes = with_reference(listed).0.len() as u64;
    lanes + nodes.map_or(0, |k| u64::from(k) * (lanes - 1))
}

/// Unique labels: a repeated limiter gets `#2`, `#3`, ...
pub fn labels(specs: &[LimiterSpec]) -> Vec<String> {
    // How many of each label came before (a map: 10 000 limiters took
    // seconds when each looked through the labels before it).
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    specs
        .iter()
        .map(|spec| {
            let base = spec.label();
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            if *n == 1 { base } else { format!("{base}#{n}") }
        })
        .collect()
}

/// Disagreement from the outcomes of open-loop logical requests, when
/// clients react: each lane's outcomes arrive in arrival order, at its own
/// pace, and are compared with the reference lane's as far as both reach.
/// Holds only what some lane has not reached yet.
struct OutcomeComparison {
    reference: usize,
    /// Per lane, outcomes not compared yet; for the reference, those some
    /// lane has not compared yet, from arrival `reference_base` on.
    queues: Vec<VecDeque<bool>>,
    compared: Vec<u64>,
    reference_base: u64,
    differ: Vec<u64>,
}

impl OutcomeComparison {
    fn new(lanes: usize, reference: usize) -> OutcomeComparison {
        OutcomeComparison {
            reference,
            queues: vec![VecDeque::new(); lanes],
            compared: vec![0; lanes],
            reference_base: 0,
            differ: vec![0; lanes],
        }
    }

    fn add(&mut self, lane: usize, outcomes: &[bool]) {
        self.queues[lane].extend(outcomes);
        let r = self.reference;
        for i in (0..self.queues.len()).filter(|&i| i != r) {
            while let Some(&mine) = self.queues[i].front() {
                let at = (self.compared[i] - self.reference_base) as usize;
                let Some(&theirs) = self.queues[r].get(at) else { break };
                self.differ[i] += u64::from(mine != theirs);
                self.queues[i].pop_front();
                self.compared[i] += 1;
            }
        }
        let reached = (0..self.queues.len()).filter(|&i| i != r).map(|i| self.compared[i]).min();
        let reached = reached.unwrap_or(self.reference_base + self.queues[r].len() as u64);
        while self.reference_base < reached {
            self.queues[r].pop_front();
            self.reference_base += 1;
        }
    }
}

/// Runs the arrivals through every limiter (see the module comment).
pub fn run(
    config: &RunConfig,
    arrivals: impl Iterator<Item = ArrivalResult> + Send,
    mut decisions: Option<&mut dyn DecisionSink>,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunReport, RunError> {
    let (specs, reference) = with_reference(&config.limiters);
    let limit = config.limit;
    let record = decisions.is_some();
    let clients = config.clients.as_ref().filter(|c| c.active());
    let columns = timeline_columns(&config.limiters, config.topology.as_ref().map(|t| t.count));
    if let Some(end) = config.end {
        // Refuse a too-fine explicit bin before any work is done.
        Timeline::new(config.bin, 1)
            .in_run_of(columns)
            .reserve_until(Nanos::new(end.get().saturating_sub(1)))?;
    }
    // Every lane schedules each closed client's first request as it is
    // built: refuse a population past the budget before holding it.
    let closed_clients: u64 = clients.map_or(0, |c| c.closed.iter().map(|s| s.clients).sum());
    if closed_clients > 0 {
        let per_lane = crate::clients::closed_queue_bytes(closed_clients);
        let all = per_lane.saturating_mul(specs.len() as u64);
        if all > config.memory_budget {
            return Err(RunError::ClosedClients {
                clients: closed_clients,
                lanes: specs.len() as u64,
                per_lane,
                budget: config.memory_budget,
            });
        }
    }
    // What a lane with clients holds between arrivals is checked against
    // its share of the budget ([`lane::Overrun`]).
    let lane_budget = lane_share(config.memory_budget, specs.len() as u64);
    let mut lanes: Vec<Box<dyn LaneOps>> = specs
        .iter()
        .enumerate()
        .map(|(index, s)| {
            let header = s.retry_after;
            // The exact reference judges the whole stream: never on nodes.
            let topology = config.topology.as_ref().filter(|_| index != reference);
            let (bin, curve, seed) = (config.bin, config.admission_curve, config.seed);
            let (shapes, client_keys) = (s.delays(), config.client_keys);
            s.visit(MakeLane {
                limit,
                bin,
                columns,
                curve,
                clients,
                header,
                topology,
                seed,
                shapes,
                client_keys,
                budget: lane_budget,
            })
        })
        .collect();
    let names = labels(&specs);
    let mut reader = Reader::new(arrivals, config.end, record, clients.is_some());
    let mut slice = delay_chunk(config.memory_budget, specs.iter().filter(|s| s.delays()).count() as u64);
    if record && clients.is_some() {
        let (chunk, end_slice) = attempt_chunks(lane_budget);
        reader.limit_chunk(chunk);
        slice = slice.min(end_slice);
    }
    reader.limit_chunk(slice);
    // A limiter on many nodes holds a copy per node for every client key:
    // chunks short enough that their new keys add at most a quarter of the
    // budget between two checks (1000 nodes once took 3.9 GB in one chunk
    // of 262 144 keys under --memory 64MiB).
    let (per_key, heap): (u64, u64) =
        lanes.iter().map(|l| l.key_cost()).fold((0, 0), |(a, b), (c, d)| (a + c, b + d));
    if config.client_keys && heap > 0 {
        let per_chunk = config.memory_budget / per_key.saturating_mul(4).max(1);
        reader.limit_chunk(usize::try_from(per_chunk).unwrap_or(CHUNK).clamp(MIN_DELAY_CHUNK, CHUNK));
    }
    if clients.is_some_and(|c| !c.closed.is_empty()) {
        reader.reserve_key_zero();
    }
    let mut disagreements = vec![0u64; lanes.len()];
    let mut outcomes = OutcomeComparison::new(lanes.len(), reference);
    let mut attempts_seen = vec![0u64; lanes.len()];
    let mut report_chunk = |chunk: &Chunk, outs: &[LaneOut]| -> Result<(), RunError> {
        if clients.is_some() {
            for (i, out) in outs.iter().enumerate() {
                outcomes.add(i, &out.outcomes);
            }
        } else {
            let reference_bits = &outs[reference].bits;
            for (count, out) in disagreements.iter_mut().zip(outs) {
                let differ: u32 =
                    out.bits.iter().zip(reference_bits).map(|(a, b)| (a ^ b).count_ones()).sum();
                *count += u64::from(differ);
            }
        }
        // Checked before the chunk's decisions are written: a run past its
        // budget stops without writing another chunk's worth.
        let keys = (chunk.keys as u64, reader::key_bytes(chunk.keys));
        check_memory(config, &names, &specs, outs, closed_clients, keys)?;
        if let Some(sink) = decisions.as_deref_mut() {
            if clients.is_some() {
                write_attempts(sink, outs, &mut attempts_seen)?;
            } else {
                write_decisions(sink, chunk, outs)?;
            }
        }
        progress(Progress {
            arrivals: chunk.first_seq + chunk.times.len() as u64,
            now: *chunk.times.last().expect("chunk is not empty"),
        });
        Ok(())
    };
    schedule::run(&mut reader, &mut lanes, record, &mut report_chunk)?;

    // What the lanes scheduled for themselves and have not run yet (a
    // closed population's whole run): in slices of at most `CHUNK`
    // attempts per lane, each written out, checked against the memory
    // budget and reported like a chunk of arrivals.
    let mut outs: Vec<LaneOut> = lanes.iter().map(|_| LaneOut::new(record)).collect();
    let mut last_events: Vec<Option<Nanos>> = vec![None; lanes.len()];
    loop {
        let slices = schedule::run_pending(&mut lanes, &mut outs, config.end, slice as u64)?;
        for (i, (slice, out)) in slices.iter().zip(&outs).enumerate() {
            last_events[i] = last_events[i].max(slice.last_event);
            outcomes.add(i, &out.outcomes);
        }
        let keys = (reader.keys.len() as u64, reader::key_bytes(reader.keys.len()));
        check_memory(config, &names, &specs, &outs, closed_clients, keys)?;
        if let Some(sink) = decisions.as_deref_mut() {
            write_attempts(sink, &outs, &mut attempts_seen)?;
        }
        if slices.iter().all(|s| s.done) {
            break;
        }
        // Where the slowest lane still running has reached.
        let now = slices.iter().zip(&last_events).filter(|(s, _)| !s.done).filter_map(|(_, t)| *t).min();
        progress(Progress { arrivals: reader.seq, now: now.unwrap_or(Nanos::ZERO) });
    }
    let mut run_end = match config.end {
        Some(e) => e,
        None => reader.last_time.map_or(Nanos::ZERO, |t| Nanos::new(t.get().saturating_add(1))),
    };
    if config.end.is_none() {
        for t in last_events.into_iter().flatten() {
            run_end = run_end.max(Nanos::new(t.get().saturating_add(1)));
        }
    }
    for (i, (lane, out)) in lanes.iter_mut().zip(&mut outs).enumerate() {
        lane.finish(run_end, out)?;
        outcomes.add(i, &out.outcomes);
    }
    if clients.is_some() {
        disagreements = outcomes.differ;
    }
    for (lane, differ) in lanes.iter_mut().zip(&disagreements) {
        lane.counts_mut().disagreements += differ;
    }
    progress(Progress { arrivals: reader.seq, now: run_end });

    let results: Vec<lane::LaneResult> = lanes.into_iter().map(|l| l.into_result()).collect();
    let reference_admitted = results[reference].counts.admitted;
    let mut columns = Vec::with_capacity(results.len());
    let mut limiters = Vec::with_capacity(results.len());
    for ((spec, label), r) in specs.into_iter().zip(names).zip(results) {
        columns.push(r.timeline);
        limiters.push(LimiterReport {
            spec,
            label,
            counts: r.counts,
            state: r.state,
            reference_admitted,
            limit: limit.requests,
            admission_curve: r.curve,
            clients: r.clients,
            nodes: r.nodes,
            node_timeline: r.node_timeline,
            delays: r.delays,
        });
    }
    Ok(RunReport {
        limit,
        arrivals: reader.seq,
        keys: reader.keys.len() as u64,
        trace_keys: reader.trace_keys() as u64,
        end: run_end,
        first_arrival: reader.first,
        last_arrival: reader.last_time,
        limiters,
        reference,
        timeline: Timeline::from_columns(columns),
    })
}

/// The fewest arrivals in a chunk cut short for a small memory budget.
const MIN_DELAY_CHUNK: usize = 64;

/// Arrivals per chunk (and scheduled attempts per slice at the end) for a
/// run with `shaping` limiters that delay: the budget is checked after
/// each chunk, and each arrival adds at most one delayed request to each
/// of their queues ([`lane::RELEASE_BYTES`]), so a chunk adds at most a
/// quarter of `budget`. A queue within the budget at one check thus holds
/// at most twice the budget at the next (its buffers double as it grows),
/// instead of a whole chunk's 262 144 arrivals (6 MiB) more: Guava's
/// acquire() under a 64 KiB budget once stopped at 597 KiB. [`CHUNK`] for
/// the default budget (8 GiB) or none that shape.
fn delay_chunk(budget: u64, shaping: u64) -> usize {
    if shaping == 0 {
        return CHUNK;
    }
    let per_chunk = budget / (4 * lane::RELEASE_BYTES * shaping);
    usize::try_from(per_chunk).unwrap_or(CHUNK).clamp(MIN_DELAY_CHUNK, CHUNK)
}

/// A lane's share of `budget` among `lanes` lanes with clients: they
/// decide side by side and each checks only what it holds itself
/// ([`lane::Overrun`]), so an equal share is what keeps them all within
/// the budget, whatever thread runs which.
fn lane_share(budget: u64, lanes: u64) -> u64 {
    budget / lanes.max(1)
}

/// Arrivals per chunk, and scheduled attempts per slice at the end, when
/// decisions are written and clients react, for lanes that may each hold
/// `share`: every arrival of a chunk is kept for decisions.csv before a
/// lane looks at what it holds, in each of the [`schedule::IN_FLIGHT`] + 1
/// chunks it may hold at once, so together they take at most a quarter of
/// the share; at the end the lane does not look, and one slice is held at
/// a time, so a slice's attempts take at most a quarter too (up to half as
/// their vector doubles). Never longer than they are without a budget; the
/// default budget (8 GiB) cuts chunks only past 1872 limiters, and slices
/// past 146.
fn attempt_chunks(share: u64) -> (usize, usize) {
    let quarter = share / (4 * lane::ATTEMPT_BYTES);
    let fit = |n: u64| usize::try_from(n).unwrap_or(CHUNK).clamp(MIN_DELAY_CHUNK, CHUNK);
    (fit(quarter / (schedule::IN_FLIGHT as u64 + 1)), fit(quarter))
}

/// What the window timestamps of one client key in one lane hold when its
/// windows have a few dozen requests: the limiter's ring and the tracker's.
/// Past this on average, a run's timestamps are deep windows, not many keys.
const FEW_TIMESTAMPS_BYTES: u64 = 1 << 10;

/// Stops the run when what it holds passes its memory budget: window
/// timestamps (each lane counts its own rings), delayed requests, requests
/// waiting to retry and closed clients' next requests, and the state of
/// every client key (`keys`: how many, and the reader's bytes for them).
fn check_memory(
    config: &RunConfig,
    names: &[String],
    specs: &[LimiterSpec],
    outs: &[LaneOut],
    closed_clients: u64,
    (keys, reader_key_bytes): (u64, u64),
) -> Result<(), RunError> {
    let limit = config.limit;
    let budget = config.memory_budget;
    // The window rings of this run's lanes (another run's, side by side in
    // a sweep, are not this one's).
    let held: u64 = outs.iter().map(|o| o.ring_bytes).sum();
    // Delayed requests wait in their lane's event queue; a limiter that
    // never refuses (Guava's acquire()) lets it grow for as long as the
    // overload lasts. Requests waiting to retry are bounded by the trace,
    // not by the limiter, so a long wait on a large trace grows too.
    let queues: u64 = outs.iter().map(|o| o.delay_queue_bytes).sum();
    let clients: u64 = outs.iter().map(|o| o.client_bytes).sum();
    let key_state: u64 = outs.iter().map(|o| o.key_bytes).sum::<u64>() + reader_key_bytes;
    if held.saturating_add(queues).saturating_add(clients).saturating_add(key_state) <= budget {
        // A lane that passed the budget between two arrivals stopped
        // running its attempts, so the run must stop here even when what it
        // holds after the chunk (attempts kept for decisions.csv are not
        // counted above) is back within the budget.
        if let Some((i, overrun)) =
            outs.iter().enumerate().find_map(|(i, o)| o.overrun.as_ref().map(|r| (i, r)))
        {
            return Err(RunError::ChunkAttempts {
                limiter: names[i].clone(),
                logs_rejected: specs.get(i).is_some_and(|s| s.logs_rejected()),
                overrun: Box::new(overrun.clone()),
                budget,
                lanes: outs.len() as u64,
            });
        }
        return Ok(());
    }
    // Many client keys, each with its own limiters and trackers in every
    // lane: the window timestamps are theirs too when each key's windows
    // hold few (rings start at 4 entries), not a deep window of one key.
    let lanes = outs.len() as u64;
    let keyed = key_state.saturating_add(held);
    if keys > 1
        && held <= keys.saturating_mul(lanes).saturating_mul(FEW_TIMESTAMPS_BYTES)
        && keyed >= queues
        && keyed >= clients
    {
        return Err(RunError::Keys {
            keys,
            from: None,
            bytes: keyed,
            held: queues + clients,
            budget,
            lanes: outs.len(),
            nodes: config.topology.as_ref().map(|t| t.count),
        });
    }
    // The limiters' own state, grown past everything else: on nodes, the
    // store's writes in flight or the requests counted since a sync.
    if key_state > held
        && key_state >= queues
        && key_state >= clients
        && let Some(t) = config.topology.as_ref().filter(|t| !matches!(t.mode, crate::nodes::Mode::Local))
    {
        return Err(RunError::NodeState {
            state: key_state,
            held: held + queues + clients,
            budget,
            mode: t.mode,
        });
    }
    // Past the budget: the error names the largest part, what holds it and
    // what to change.
    if held >= queues && held >= clients {
        // The parts the message names add up past the budget: the
        // limiters' own state (each client key's, a copy per node) is named
        // too when it is what passes it (482.5 KiB "more than the 512.0
        // KiB" once).
        let named = held.saturating_add(queues).saturating_add(clients);
        let state = if named <= budget { key_state } else { 0 };
        // The lane holding the most timestamps (the first of equals).
        let largest = (0..outs.len()).max_by_key(|&i| (outs[i].ring_bytes, std::cmp::Reverse(i)));
        let logs_rejected =
            largest.filter(|&i| specs.get(i).is_some_and(|s| s.logs_rejected())).map(|i| names[i].clone());
        return Err(RunError::Memory {
            held,
            rest: queues + clients,
            state,
            budget,
            requests: limit.requests,
            logs_rejected,
        });
    }
    if queues >= clients
        && let Some(i) = (0..outs.len()).max_by_key(|&i| (outs[i].delay_queue_bytes, std::cmp::Reverse(i)))
    {
        let queue = outs[i].delay_queue_bytes;
        return Err(RunError::DelayQueue {
            limiter: names[i].clone(),
            pending: outs[i].pending_delays,
            peak: outs[i].peak_delays,
            queue,
            held: held + clients + key_state + (queues - queue),
            budget,
            advice: specs[i].queue_advice(limit),
        });
    }
    if let Some(i) = (0..outs.len()).max_by_key(|&i| (outs[i].client_bytes, std::cmp::Reverse(i))) {
        return Err(RunError::RetryQueue {
            limiter: names[i].clone(),
            pending: outs[i].pending_retries,
            closed: closed_clients,
            bytes: outs[i].client_bytes,
            held: held + queues + key_state + (clients - outs[i].client_bytes),
            budget,
        });
    }
    Ok(())
}

/// decisions.csv rows when clients react: each lane's attempts in its own
/// order (`seq` counts a lane's attempts), lane after lane for each chunk.
fn write_attempts(sink: &mut dyn DecisionSink, outs: &[LaneOut], seen: &mut [u64]) -> Result<(), RunError> {
    for (i, out) in outs.iter().enumerate() {
        for a in &out.attempts {
            let record = DecisionRecord {
                seq: seen[i],
                time: a.time,
                key: 0,
                limiter: i,
                admitted: a.admitted,
                window_count: a.window_count,
                attempt: Some((a.attempt, a.logical)),
                delay: a.delay,
                node: a.node,
            };
            seen[i] += 1;
            sink.record(&record).map_err(RunError::Decisions)?;
        }
    }
    Ok(())
}

fn write_decisions(sink: &mut dyn DecisionSink, chunk: &Chunk, outs: &[LaneOut]) -> Result<(), RunError> {
    for (j, (&time, &key)) in chunk.times.iter().zip(&chunk.key_values).enumerate() {
        for (i, out) in outs.iter().enumerate() {
            let record = DecisionRecord {
                seq: chunk.first_seq + j as u64,
                time,
                key,
                limiter: i,
                admitted: out.admitted(j),
                window_count: out.window_counts.as_ref().map_or(0, |w| w[j]),
                attempt: None,
                delay: out.delays.get(j).copied().unwrap_or(Nanos::ZERO),
                node: out.nodes.get(j).copied(),
            };
            sink.record(&record).map_err(RunError::Decisions)?;
        }
    }
    Ok(())
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::limiter::{FixedWindowSpec, SlotCounterSpec, StateSize};
    use crate::trace::Arrival;

    /// A repeated limiter is numbered from its second: `#2`, `#3`, each
    /// label counted on its own.
    #[test]
    fn repeated_limiters_are_numbered() {
        let fixed = LimiterSpec::from(FixedWindowSpec::ALIGNED);
        let log = LimiterSpec::reference();
        assert_eq!(
            labels(&[fixed.clone(), log.clone(), fixed.clone(), fixed, log]),
            ["fixed_window", "sliding_log", "fixed_window#2", "fixed_window#3", "sliding_log#2"]
        );
    }

    fn arrivals(v: &[(u64, u64)]) -> impl Iterator<Item = ArrivalResult> + Send + use<> {
        v.iter().map(|&(t, key)| Ok(Arrival::keyed(Nanos::new(t), key))).collect::<Vec<_>>().into_iter()
    }

    #[test]
    fn each_key_has_its_own_limiter() {
        // L = 1 per 10 ns. Keys 7 and 9 each get one request through per window.
        let config = RunConfig::new(
            Limit { requests: 1, window: Nanos::new(10) },
            vec![LimiterSpec::from(SlotCounterSpec { slots: 2 })],
        );
        let r =
            run(&config, arrivals(&[(0, 7), (1, 9), (2, 7), (3, 9), (10, 7)]), None, &mut |_| {}).unwrap();
        assert_eq!(r.keys, 2);
        for l in &r.limiters {
            assert_eq!(l.counts.admitted, 3, "{}", l.label);
            assert_eq!(l.counts.rejected, 2, "{}", l.label);
            assert_eq!(l.counts.peak, 1, "{}", l.label);
        }
        // Sliding log state: each key held one timestamp at its peak.
        assert_eq!(r.limiters[1].state, StateSize { entries: 2, bytes: 16 });
    }

    /// Collects decisions in memory.
    struct Collect(Vec<DecisionRecord>);
    impl DecisionSink for Collect {
        fn record(&mut self, record: &DecisionRecord) -> std::io::Result<()> {
            self.0.push(*record);
            Ok(())
        }
    }

    #[test]
    fn decision_window_counts_are_right_in_every_chunk() {
        // Three chunks' worth of arrivals, one every 3 ns, L = 5 per 100 ns.
        // Each decision's window_count must be that limiter's admitted
        // requests in (t - W, t] before it, counted by brute force; the
        // second and third chunks once repeated the first chunk's counts.
        let n = CHUNK as u64 * 2 + 100;
        let times: Vec<(u64, u64)> = (0..n).map(|i| (i * 3, 0)).collect();
        let config = RunConfig::new(
            Limit { requests: 5, window: Nanos::new(100) },
            vec![LimiterSpec::from(SlotCounterSpec { slots: 4 })],
        );
        let mut sink = Collect(Vec::new());
        run(&config, arrivals(&times), Some(&mut sink), &mut |_| {}).unwrap();
        assert_eq!(sink.0.len() as u64, 2 * n);
        let mut admitted: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
        for r in &sink.0 {
            let log = &mut admitted[r.limiter];
            let expect = log.iter().rev().take_while(|&&a| a + 100 > r.time.get()).count() as u64;
            assert_eq!(r.window_count, expect, "seq {} limiter {}", r.seq, r.limiter);
            if r.admitted {
                log.push(r.time.get());
            }
        }
    }

    #[test]
    fn chunks_do_not_change_results() {
        // More arrivals than one chunk, with decisions crossing chunk edges.
        let times: Vec<(u64, u64)> = (0..(CHUNK as u64 * 2 + 17)).map(|i| (i * 3, i % 3)).collect();
        let config = RunConfig {
            bin: Some(Nanos::new(1000)),
            ..RunConfig::new(
                Limit { requests: 5, window: Nanos::new(100) },
                vec![LimiterSpec::from(FixedWindowSpec {
                    align: crate::limiter::WindowAlign::Epoch { offset: Nanos::new(0) },
                })],
            )
        };
        let r = run(&config, arrivals(&times), None, &mut |_| {}).unwrap();
        // Per key: one request every 9 ns, 5 per 100 ns window admitted.
        // Recompute by brute force per key.
        let mut expect_fixed = 0;
        let mut expect_log = 0;
        for key in 0..3 {
            let ts: Vec<u64> = times.iter().filter(|(_, k)| *k == key).map(|(t, _)| *t).collect();
            let mut counts = std::collections::HashMap::new();
            let mut log: Vec<u64> = vec![];
            for &t in &ts {
                let c = counts.entry(t / 100).or_insert(0);
                if *c < 5 {
                    *c += 1;
                    expect_fixed += 1;
                }
                let in_window = log.iter().rev().take_while(|&&a| a + 100 > t).count();
                if in_window < 5 {
                    log.push(t);
                    expect_log += 1;
                }
            }
        }
        assert_eq!(r.limiters[0].counts.admitted, expect_fixed);
        assert_eq!(r.limiters[1].counts.admitted, expect_log);
        assert_eq!(r.arrivals, times.len() as u64);
    }

    /// A huge limit over a dense trace would keep more window timestamps
    /// than memory holds: the run stops with an error that says how much a
    /// window may need, instead of running out of memory.
    /// The amounts of a memory message: a sum that passed the budget is never
    /// written as the budget itself.
    #[test]
    fn memory_amounts_that_round_alike_are_written_whole() {
        let mib = 1 << 20;
        assert_eq!(
            held_against(mib + 10, 0, "", mib),
            ("1048586 B".into(), String::new(), "1048576 B".into())
        );
        assert_eq!(
            held_against(16 * mib, 73_600, " of waiting requests", 16 * mib),
            (
                "16.0 MiB".into(),
                " and 71.9 KiB of waiting requests (16.1 MiB in all)".into(),
                "16.0 MiB".into()
            )
        );
        assert_eq!(
            held_against(mib, 20, " x", mib),
            ("1.0 MiB".into(), " and 20 B x (1048596 B in all)".into(), "1048576 B".into())
        );
    }

    #[test]
    fn window_timestamps_past_the_budget_stop_the_run() {
        // L = 10^12 per 1 s; 300 000 arrivals 1 us apart: every one admitted,
        // every one still in the window; more than 1 MiB of timestamps after
        // the first chunk.
        let times: Vec<(u64, u64)> = (0..300_000u64).map(|i| (i * 1000, 0)).collect();
        let limit = Limit { requests: 1_000_000_000_000, window: Nanos::from_secs(1) };
        let config = RunConfig {
            memory_budget: 1 << 20,
            ..RunConfig::new(limit, vec![LimiterSpec::from(SlotCounterSpec { slots: 10 })])
        };
        let e = run(&config, arrivals(&times), None, &mut |_| {}).unwrap_err();
        assert!(matches!(e, RunError::Memory { budget: 1_048_576, requests: 1_000_000_000_000, .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("more than the 1.0 MiB it may use (--memory)"), "{text}");
        assert!(text.ends_with("or, if the machine has the memory, raise --memory"), "{text}");
        assert!(text.contains("up to 2000000000000 timestamps"), "{text}");
        assert!(
            text.contains("(the sliding log: 1000000000000 entries of 16 bytes, a timestamp and a running count), 14.6 TiB each;"),
            "{text}"
        );
    }

    /// With decisions and clients, chunks and end slices are cut only for a
    /// small share: their arrivals' attempts in 5 chunks, or one slice's,
    /// take at most a quarter of it (56 bytes each).
    #[test]
    fn attempt_chunks_are_cut_short_only_for_a_small_share() {
        assert_eq!(lane::ATTEMPT_BYTES, 56);
        assert_eq!(lane_share(64 << 20, 17), 3_947_580);
        // 3947580 / 224 = 17623 attempts; 3524 arrivals in each of 5 chunks.
        assert_eq!(attempt_chunks(3_947_580), (3524, 17623));
        // Under the default budget: 52531 arrivals, past the 4096 of a
        // chunk of decisions with clients, so no chunk is cut.
        assert_eq!(attempt_chunks(lane_share(8 << 30, 146)), (52_531, CHUNK), "the default budget");
        assert_eq!(attempt_chunks(lane_share(8 << 30, 147)).1, 260_870);
        // Chunks of decisions with clients are 4096 arrivals already.
        assert_eq!(reader::ATTEMPT_CHUNK, 4096);
        assert_eq!(attempt_chunks(lane_share(8 << 30, 1872)).0, 4097);
        assert_eq!(attempt_chunks(lane_share(8 << 30, 1873)).0, 4094);
        assert_eq!(attempt_chunks(100), (MIN_DELAY_CHUNK, MIN_DELAY_CHUNK));
    }

    #[test]
    fn chunks_are_cut_short_for_a_small_budget_only_when_a_limiter_delays() {
        assert_eq!(delay_chunk(1 << 20, 0), CHUNK);
        assert_eq!(delay_chunk(8 << 30, 1), CHUNK, "the default budget");
        assert_eq!(delay_chunk(1 << 20, 1), (1 << 20) / (4 * lane::RELEASE_BYTES) as usize);
        assert_eq!(delay_chunk(1 << 20, 2), (1 << 20) / (8 * lane::RELEASE_BYTES) as usize);
        assert_eq!(delay_chunk(100, 1), MIN_DELAY_CHUNK);
    }

    /// Guava's acquire() at 3 x L under small budgets: the run stops with
    /// its queue within twice the budget (it once stopped at 9 times a
    /// 64 KiB budget: the budget was checked every 262 144 arrivals), and
    /// the error's figures agree: the queue holds places for the most that
    /// waited at once, up to twice over.
    #[test]
    fn a_delay_queue_stops_the_run_within_twice_the_budget() {
        use crate::limiter::GuavaSpec;
        const MS: u64 = 1_000_000;
        let limit = Limit { requests: 100, window: Nanos::from_secs(1) };
        let times: Vec<(u64, u64)> = (0..300_000u64).map(|i| (i / 3 * 10 * MS, 0)).collect();
        let spec = LimiterSpec::from(GuavaSpec {
            permits_per_second: Some(100.0),
            max_burst_seconds: 1.0,
            timeout: None,
        });
        for budget in [256 << 10, 1 << 20, 4 << 20] {
            let config = RunConfig { memory_budget: budget, ..RunConfig::new(limit, vec![spec.clone()]) };
            let Err(e) = run(&config, arrivals(&times), None, &mut |_| {}) else {
                panic!("{budget}: it ran")
            };
            let RunError::DelayQueue { pending, peak, queue, held, .. } = e else { panic!("{budget}: {e}") };
            assert!(queue + held > budget && queue <= 2 * budget, "{budget}: queue {queue}");
            assert!(pending <= peak && peak > 0, "{budget}: {pending} of {peak}");
            let per = lane::RELEASE_BYTES;
            assert!((peak * per..=2 * peak * per).contains(&queue), "{budget}: {queue} for {peak}");
        }
    }

    /// Runs `f` as the CLI does (on the calling thread: the pooled schedule
    /// when rayon's pool has more than one thread) and inside a one-thread
    /// pool (the plain loop), and returns both results.
    fn on_both_schedules<T: Send>(f: impl Fn() -> T + Sync) -> [T; 2] {
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        [f(), one.install(&f)]
    }

    /// Three limiters over `arrivals`; returns the error and the arrival
    /// counts of the progress reports (one per reported chunk).
    fn failing_run(
        config: &RunConfig,
        arrivals: Vec<ArrivalResult>,
        sink: Option<&mut dyn DecisionSink>,
    ) -> (RunError, Vec<u64>) {
        let mut reported = Vec::new();
        let e = run(config, arrivals.into_iter(), sink, &mut |p| reported.push(p.arrivals)).unwrap_err();
        (e, reported)
    }

    fn three_limiters(bin: Option<Nanos>) -> RunConfig {
        RunConfig {
            bin,
            ..RunConfig::new(
                Limit { requests: 10, window: Nanos::new(1000) },
                vec![
                    LimiterSpec::from(FixedWindowSpec::ALIGNED),
                    LimiterSpec::from(SlotCounterSpec { slots: 10 }),
                    LimiterSpec::from(SlotCounterSpec { slots: 2 }),
                ],
            )
        }
    }

    const C: u64 = CHUNK as u64;

    /// A trace that breaks in its fourth chunk: the three chunks before it
    /// are reported, then the read error is returned.
    #[test]
    fn a_read_error_comes_after_every_chunk_before_it() {
        let [pooled, in_turn] = on_both_schedules(|| {
            let mut arrivals: Vec<ArrivalResult> =
                (0..3 * C + 100).map(|t| Ok(Arrival::at(Nanos::new(t)))).collect();
            let row = TraceError::Row {
                path: "t.csv".into(),
                line: 3 * C + 51,
                message: "bad time".into(),
                entry: None,
            };
            arrivals.insert(3 * C as usize + 50, Err(row));
            let (e, reported) = failing_run(&three_limiters(None), arrivals, None);
            (matches!(e, RunError::Trace(TraceError::Row { line, .. }) if line == 3 * C + 51), reported)
        });
        assert_eq!(pooled, (true, vec![C, 2 * C, 3 * C]));
        assert_eq!(in_turn, pooled);
    }

    /// Every lane fails in the fourth chunk (a 1 ns bin cannot reach past
    /// 10^6 ns): the three chunks before it are reported, then the error.
    #[test]
    fn a_lane_error_comes_after_every_chunk_before_it() {
        let [pooled, in_turn] = on_both_schedules(|| {
            let arrivals: Vec<ArrivalResult> = (0..4 * C)
                .map(|i| Ok(Arrival::at(Nanos::new(if i < 3 * C + 10 { i } else { 2_000_000 + i }))))
                .collect();
            let (e, reported) = failing_run(&three_limiters(Some(Nanos::new(1))), arrivals, None);
            (matches!(e, RunError::Timeline(TooManyBins { width: 1, .. })), reported)
        });
        assert_eq!(pooled, (true, vec![C, 2 * C, 3 * C]));
        assert_eq!(in_turn, pooled);
    }

    /// The decisions sink fails on an arrival of the third chunk: the run
    /// stops there, after reporting two chunks, and returns the write error.
    #[test]
    fn a_report_error_stops_the_run() {
        struct FailAt(u64, u64);
        impl DecisionSink for FailAt {
            fn record(&mut self, record: &DecisionRecord) -> std::io::Result<()> {
                self.1 += 1;
                if record.seq == self.0 {
                    return Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "closed"));
                }
                Ok(())
            }
        }
        let [pooled, in_turn] = on_both_schedules(|| {
            let arrivals: Vec<ArrivalResult> = (0..6 * C).map(|t| Ok(Arrival::at(Nanos::new(t)))).collect();
            let mut sink = FailAt(2 * C + 7, 0);
            let (e, reported) = failing_run(&three_limiters(None), arrivals, Some(&mut sink));
            (matches!(e, RunError::Decisions(_)), reported)
        });
        assert_eq!(pooled, (true, vec![C, 2 * C]));
        assert_eq!(in_turn, pooled);
    }

    /// A source that panics (a bug, not bad input) fails the run with that
    /// panic on either schedule; the pooled one must not wait forever for
    /// the chunk it never read.
    #[test]
    fn a_panicking_source_fails_the_run_instead_of_hanging() {
        let [pooled, in_turn] = on_both_schedules(|| {
            let arrivals = (0..3 * C).map(|t| {
                assert!(t != 2 * C + 3, "source bug");
                Ok(Arrival::at(Nanos::new(t)))
            });
            let config = three_limiters(None);
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run(&config, arrivals, None, &mut |_| {}).map(|_| ())
            }));
            caught.err().and_then(|p| p.downcast_ref::<&str>().map(|m| m.to_string()))
        });
        assert_eq!(pooled.as_deref(), Some("source bug"));
        assert_eq!(in_turn, pooled);
    }
}
