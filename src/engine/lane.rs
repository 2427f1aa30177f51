//! A lane: one limiter configuration, one instance of it per client key,
//! with its exact metrics (`docs/semantics.md`, "Metrics"). A lane decides
//! every arrival of every chunk in order, merged with the events it
//! schedules for itself in its own [`EventQueue`]; lanes never look at each
//! other, so the schedule may run them on any thread.
//!
//! Order: an arrival at `t` is decided after every scheduled event due
//! strictly before `t`, and before the events due at `t` itself. At one
//! instant the releases of delayed requests come first (they reach the
//! backend before anything decided at that instant), then the open-loop
//! arrivals in trace order, then the lane's own events, first scheduled
//! first. Events still pending at the end of a
//! chunk wait for the next chunk, or for [`LaneOps::finish`] at the end of
//! the run, so the order does not depend on where chunks are cut.

use super::events::EventQueue;
use super::reader::{CHUNK, Chunk};
use super::schedule::IN_FLIGHT;
use crate::clients::{ClientReactor, ClientReport, Clients, Logical};
use crate::limiter::{Algorithm, Decision, Limit, Limiter, RetryAfter, SpecVisitor, StateSize};
use crate::metrics::DelayReport;
use crate::metrics::{Counts, CurveTracker, WindowCounts, WindowTracker};
use crate::nodes::{Balancer, Fleet, NodeReport, NodeStats, Topology};
use crate::time::Nanos;
use crate::timeline::{Bin, Timeline, TooManyBins};

/// What follows from a lane's decisions: the events the lane schedules for
/// itself (clients' retries and next requests, `crate::clients`). Open-loop
/// runs react to nothing (`OpenLoop`).
pub trait Reactor: Send + 'static {
    /// What an event carries besides its time and key.
    type Event: Copy + Send + 'static;
    /// Whether [`Decided::retry_at`] is wanted: the limiter's advertised
    /// retry time at every reject.
    const WANTS_RETRY_AT: bool = false;
    /// Schedules the events the lane starts with.
    fn start(&mut self, _calendar: &mut Calendar<'_, Self::Event>) {}
    /// Called after every decision with what was decided; may schedule
    /// events at or after `decided.time`.
    fn react(&mut self, decided: &Decided<'_, Self::Event>, calendar: &mut Calendar<'_, Self::Event>);
    /// The attempt number (1: a first attempt) and logical request of an
    /// event about to be decided, for decisions.csv and the timeline.
    fn attempt_of(&self, _event: &Self::Event) -> (u32, Option<Logical>) {
        (1, None)
    }
    /// Appends the outcomes of open-loop logical requests that became final
    /// since the last call, in arrival order (succeeded or not).
    fn take_outcomes(&mut self, _into: &mut Vec<bool>) {}
    /// Requests waiting for a retry, and the bytes the reactor holds for
    /// what it has pending (the run checks them against its memory budget).
    fn held(&self) -> (u64, u64) {
        (0, 0)
    }
    /// The run has ended: whatever is pending will not happen.
    fn close(&mut self) {}
    /// What the reactor measured.
    fn report(self) -> Option<ClientReport>;
}

/// A decision as a [`Reactor`] sees it.
pub struct Decided<'a, E> {
    pub time: Nanos,
    /// The dense key id of the request.
    pub key: u32,
    pub admitted: bool,
    /// How long an admitted request waits before it reaches the backend
    /// (a shaping limiter's delay; 0 otherwise).
    pub delay: Nanos,
    /// The scheduled event that was decided, or `None` for an arrival.
    pub event: Option<&'a E>,
    /// For an arrival: its position in the merged trace and its source.
    pub arrival: Option<(u64, u16)>,
    /// At a reject, when the reactor wants it: the limiter's advertised
    /// retry time (`None` if it cannot say).
    pub retry_at: Option<Nanos>,
}

/// An event a reactor schedules: a request of client `key` to decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scheduled<E> {
    pub key: u32,
    pub event: E,
}

/// Bytes a lane's queue of delayed requests holds per place: a slot (its
/// time and [`Release`]) and a link. The queue's buffers double, so it
/// holds up to twice this per request waiting at its peak.
pub const RELEASE_BYTES: u64 = (std::mem::size_of::<(u64, Release)>() + std::mem::size_of::<u32>()) as u64;

/// A delayed request of key `key` reaching the backend, from `node` (0 when
/// the limiter is not on nodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Release {
    key: u32,
    node: u16,
}

/// A reactor's view of its lane's event queue: it may schedule requests.
pub struct Calendar<'a, E> {
    queue: &'a mut EventQueue<Scheduled<E>>,
    /// The lane's [`Lane::due`], kept up to date.
    due: &'a mut u64,
}

impl<E: Copy> Calendar<'_, E> {
    pub fn schedule(&mut self, time: Nanos, event: Scheduled<E>) {
        self.queue.schedule(time, event);
        *self.due = (*self.due).min(time.get());
    }
}

/// Nothing reacts: the lane decides the shared arrivals only.
pub struct OpenLoop;

impl Reactor for OpenLoop {
    type Event = ();
    #[inline(always)]
    fn react(&mut self, _: &Decided<'_, ()>, _: &mut Calendar<'_, ()>) {}
    fn report(self) -> Option<ClientReport> {
        None
    }
}

/// What the schedule needs of a lane, whatever its limiter.
pub trait LaneOps: Send {
    /// Decides a chunk and updates the metrics; writes one decision bit per
    /// arrival into `out` (and each window count when `out` records them).
    fn process(&mut self, chunk: &Chunk, out: &mut LaneOut) -> Result<(), TooManyBins>;
    /// Runs the events still pending (all of them, or those before `end`),
    /// at most `max_events` attempts of them, so that the run can write
    /// decisions, check memory and show progress between slices.
    fn run_pending(
        &mut self,
        end: Option<Nanos>,
        max_events: u64,
        out: &mut LaneOut,
    ) -> Result<PendingSlice, TooManyBins>;
    /// Closes the run at `end`: the remaining outcomes go to `out`, the
    /// timeline reaches `end`.
    fn finish(&mut self, end: Nanos, out: &mut LaneOut) -> Result<(), TooManyBins>;
    fn counts_mut(&mut self) -> &mut Counts;
    fn into_result(self: Box<Self>) -> LaneResult;
    /// The bytes each client key's state adds to the lane, besides its
    /// window timestamps, and of that what its limiter holds on the heap
    /// ([`Limiter::heap_bytes`]: a copy per node).
    fn key_cost(&self) -> (u64, u64);
}

/// What one slice of [`LaneOps::run_pending`] did.
#[derive(Clone, Copy, Debug, Default)]
pub struct PendingSlice {
    /// The time of the last event it ran.
    pub last_event: Option<Nanos>,
    /// Nothing is left to run.
    pub done: bool,
}

/// What a lane measured over the run.
pub struct LaneResult {
    pub counts: Counts,
    pub timeline: Timeline,
    /// The peak state, summed over keys.
    pub state: StateSize,
    /// The admission curve (the largest over keys), if measured.
    pub curve: Vec<(Nanos, u64)>,
    /// What its clients measured, when they react.
    pub clients: Option<ClientReport>,
    /// Per node, when the limiter runs on many nodes.
    pub nodes: Vec<NodeReport>,
    /// One column per node: admitted per bin (empty without nodes).
    pub node_timeline: Option<Timeline>,
    /// Delays, when the limiter shapes.
    pub delays: Option<DelayReport>,
}

/// Builds a lane for a spec, monomorphised over its limiter: open-loop, or
/// with reacting clients.
pub struct MakeLane<'a> {
    pub limit: Limit,
    pub bin: Option<Nanos>,
    /// The run's timeline columns ([`super::timeline_columns`]).
    pub columns: u64,
    /// Measure the admission curve.
    pub curve: bool,
    pub clients: Option<&'a Clients>,
    /// How the limiter rounds its Retry-After header.
    pub header: RetryAfter,
    /// The nodes it runs on, if many (not for the exact reference).
    pub topology: Option<&'a Topology>,
    /// The scenario seed (the balancer's random stream).
    pub seed: u64,
    /// The limiter may delay requests.
    pub shapes: bool,
    /// The arrivals carry client keys: each key's copy of the limiter is
    /// made at the key's first request ([`Limiter::create_on_first_request`]).
    pub client_keys: bool,
    /// What a lane with clients may hold between arrivals, checked by
    /// itself ([`Overrun`]): its share of the run's memory budget
    /// ([`super::lane_share`]).
    pub budget: u64,
}

impl MakeLane<'_> {
    /// A lane of `limiter`, with its clients and its nodes.
    fn lane<L: Limiter + Clone + Send + 'static>(&self, mut limiter: L) -> Box<dyn LaneOps> {
        // The prototype every key's copy is cloned from.
        if self.client_keys {
            limiter.create_on_first_request();
        }
        let nodes = self.topology.map(|t| {
            (Balancer::new(t, self.seed), NodeStats::new(t.count, self.limit.window, self.bin, self.columns))
        });
        match self.clients {
            Some(clients) => {
                let reactor = ClientReactor::new(clients, self.header);
                let mut lane = Lane::new(limiter, self.limit, self.bin, reactor);
                lane.timeline = Timeline::new(self.bin, 1).in_run_of(self.columns);
                (lane.curve, lane.nodes, lane.shapes) = (self.curve, nodes, self.shapes);
                lane.budget = self.budget;
                Box::new(lane)
            }
            None => {
                let mut lane = Lane::new(limiter, self.limit, self.bin, OpenLoop);
                lane.timeline = Timeline::new(self.bin, 1).in_run_of(self.columns);
                (lane.curve, lane.nodes, lane.shapes) = (self.curve, nodes, self.shapes);
                Box::new(lane)
            }
        }
    }
}

impl SpecVisitor for MakeLane<'_> {
    type Out = Box<dyn LaneOps>;
    fn visit<A: Algorithm>(self, spec: &A) -> Box<dyn LaneOps> {
        match self.topology {
            Some(t) => self.lane(Fleet::new(spec.build(t.node_limit(self.limit)), t)),
            None => self.lane(spec.build(self.limit)),
        }
    }
}

/// One decided attempt, for decisions.csv when clients react.
#[derive(Clone, Copy, Debug)]
pub struct AttemptRecord {
    pub time: Nanos,
    pub admitted: bool,
    pub window_count: u64,
    pub attempt: u32,
    pub logical: Option<Logical>,
    pub delay: Nanos,
    /// The node that decided it, when the limiter runs on many nodes.
    pub node: Option<u16>,
}

/// Scheduled attempts a lane decides between two looks at what it holds,
/// while it runs its clients' attempts between two arrivals.
const CHECK_EVERY: u64 = 4096;

/// Bytes an attempt kept for decisions.csv takes ([`AttemptRecord`]).
pub const ATTEMPT_BYTES: u64 = std::mem::size_of::<AttemptRecord>() as u64;

/// What a lane with clients held when, running the attempts its clients
/// scheduled among a chunk's arrivals (closed clients' requests, retries),
/// it passed what it may hold on its own ([`MakeLane::budget`]). The run
/// checks the budget after each chunk of arrivals, but the attempts of a
/// chunk are not bounded by its length: a closed population runs any
/// number of them between two sparse open-loop requests, and with
/// decisions.csv every attempt of the chunk is kept until it is written (a
/// million immediate retries of a thousand requests). The lane then stops
/// running them, and the run stops with an error at that chunk's check.
///
/// The lanes decide side by side, each checking only what it holds
/// itself, so each checks itself against an equal share of the budget.
/// Without decisions.csv a lane already past its share when the chunk
/// began (its arrivals' timestamps, which the run's check after each chunk
/// covers) may hold what it held then, but its clients may not add to it.
/// With decisions.csv the lanes each keep their attempts until the
/// reporter writes them, for up to [`IN_FLIGHT`] + 1 chunks at once, so
/// each counts the attempts of its last [`IN_FLIGHT`] chunks as still
/// held. All of it depends only on the lane's own chunks, so whether a run
/// stops, and where, never depends on threads or timing.
#[derive(Clone, Debug)]
pub struct Overrun {
    /// The lane's window rings (admitted timestamps).
    pub rings: u64,
    /// Its queues: requests waiting to retry, closed clients' next
    /// requests, delayed requests, the clients' tables.
    pub waiting: u64,
    /// The room for this chunk's attempts kept for decisions.csv: for
    /// those kept so far and those it may keep before it looks again.
    pub records: u64,
    /// Attempts of this chunk kept so far, and the room made for more.
    pub kept: u64,
    pub room: u64,
    /// The attempts its [`IN_FLIGHT`] chunks before this one kept, which
    /// may not be written yet.
    pub earlier: u64,
    /// Scheduled attempts decided in the chunk so far.
    pub attempts: u64,
    /// The time of the last of them.
    pub at: Nanos,
    /// The lane's share of the budget ([`MakeLane::budget`]).
    pub share: u64,
    /// Without decisions.csv, what the lane held (rings and queues) when
    /// the chunk began: it may hold the larger of this and `share`. 0 with
    /// decisions.csv.
    pub started: u64,
}

impl Overrun {
    pub fn bytes(&self) -> u64 {
        self.rings.saturating_add(self.waiting).saturating_add(self.records).saturating_add(self.earlier)
    }
}

/// What a lane hands back for one chunk, besides its own counters.
pub struct LaneOut {
    /// One bit per arrival: admitted or not (its first attempt, when
    /// clients retry).
    pub bits: Vec<u64>,
    /// Each arrival's exact window count, kept only when decisions are written.
    pub window_counts: Option<Vec<u64>>,
    /// Every attempt the lane decided, when decisions are written and
    /// clients react.
    pub attempts: Vec<AttemptRecord>,
    /// Outcomes of open-loop logical requests that became final, in arrival
    /// order (when clients react).
    pub outcomes: Vec<bool>,
    /// Each arrival's delay, when decisions are written and the limiter
    /// shapes.
    pub delays: Vec<Nanos>,
    /// The node that decided each arrival, when decisions are written and
    /// the limiter runs on many nodes.
    pub nodes: Vec<u16>,
    /// When the limiter shapes: the delayed requests not yet at the
    /// backend, and the bytes of the event queue that holds them, after
    /// this chunk (the run checks them against its memory budget).
    pub pending_delays: u64,
    pub delay_queue_bytes: u64,
    /// The most delayed requests that waited at once so far: what the
    /// queue's bytes were sized for.
    pub peak_delays: u64,
    /// When clients react and the limiter does not shape: the requests
    /// waiting to retry and the bytes the lane holds for its clients (the
    /// event queue and the reactor's tables), after this chunk.
    pub pending_retries: u64,
    pub client_bytes: u64,
    /// The bytes of the per-key state the lane holds (its limiter and
    /// window tracker for every client key), after this chunk.
    pub key_bytes: u64,
    /// The bytes the lane's window rings hold, after this chunk.
    pub ring_bytes: u64,
    /// The lane passed the memory budget on its own while it ran its
    /// clients' attempts between two arrivals, and stopped running them.
    pub overrun: Option<Overrun>,
}

impl LaneOut {
    pub fn new(record: bool) -> LaneOut {
        LaneOut {
            bits: vec![0; CHUNK / 64],
            window_counts: record.then(|| Vec::with_capacity(CHUNK)),
            attempts: Vec::new(),
            outcomes: Vec::new(),
            delays: Vec::new(),
            nodes: Vec::new(),
            pending_delays: 0,
            delay_queue_bytes: 0,
            peak_delays: 0,
            pending_retries: 0,
            client_bytes: 0,
            key_bytes: 0,
            ring_bytes: 0,
            overrun: None,
        }
    }

    pub fn admitted(&self, j: usize) -> bool {
        self.bits[j / 64] >> (j % 64) & 1 == 1
    }

    /// Frees the attempts kept for decisions.csv (written, or to be made
    /// again): each chunk's grow from nothing, so the room they take, which
    /// a lane counts against its budget, is the same whatever `LaneOut`
    /// the pooled schedule hands it.
    pub fn drop_attempts(&mut self) {
        if self.attempts.capacity() > 0 {
            self.attempts = Vec::new();
        }
    }
}

struct KeyState<L> {
    limiter: L,
    /// Admitted timestamps in the exact window; unused (empty) when the
    /// limiter itself holds exactly those (the sliding log).
    tracker: WindowTracker,
}

impl<L: Limiter> KeyState<L> {
    /// Admitted requests in `(t - W, t]` so far.
    #[inline(always)]
    fn window_count(&mut self, t: Nanos, self_tracking: bool) -> u64 {
        if self_tracking {
            self.limiter.exact_window_count(t).expect("self-tracking limiter")
        } else {
            self.tracker.count_at(t)
        }
    }
}

/// One limiter (one instance per key) with its metrics and its events.
pub struct Lane<L, R: Reactor> {
    prototype: L,
    window: Nanos,
    limit: u64,
    keys: Vec<KeyState<L>>,
    counts: Counts,
    timeline: Timeline,
    /// The limiter reports its own exact window count (no tracker needed).
    self_tracking: bool,
    /// The requests the reactor scheduled (retries, closed clients' next
    /// requests): decided after the arrivals of their instant.
    events: EventQueue<Scheduled<R::Event>>,
    /// Delayed requests on their way to the backend. One decided before an
    /// instant reaches the backend before anything is decided at that
    /// instant, so a request decided then finds it in its window.
    releases: EventQueue<Release>,
    /// An arrival at `t` must wait for the lane's own events when
    /// `t > due`: the earliest scheduled request, or 1 ns before the
    /// earliest release (one comparison per arrival for both queues).
    due: u64,
    reactor: R,
    /// Measure the admission curve: one tracker per key in `curves`.
    curve: bool,
    curves: Vec<CurveTracker>,
    /// The load balancer and per-node figures, when the limiter runs on
    /// many nodes.
    nodes: Option<(Balancer, NodeStats)>,
    /// The node that decided the last request (with `nodes`).
    last_node: u16,
    /// Delays, when the limiter shapes (`shapes`: it may delay).
    delays: DelayReport,
    shapes: bool,
    /// The bytes of the window rings (the limiters' and the trackers') of
    /// this lane: what they grew by while it decided, measured on the
    /// thread that ran it ([`crate::ring::held_on_this_thread`]).
    ring_bytes: u64,
    /// The thread's ring total when the lane started its current chunk.
    rings_mark: u64,
    /// The lane's share of the run's memory budget, checked between
    /// arrivals ([`Overrun`]); `u64::MAX` (never) for a lane without
    /// clients.
    budget: u64,
    /// What the lane held (rings and queues) when its current chunk began.
    held_at_start: u64,
    /// Set once the lane passed `budget` between arrivals: it runs no more
    /// scheduled attempts, and the run stops at this chunk's check.
    overrun: Option<Overrun>,
    /// The bytes of the attempts kept for decisions.csv in each of the
    /// lane's last [`IN_FLIGHT`] chunks (chunk `c` at `c % IN_FLIGHT`),
    /// and how many chunks it has decided.
    earlier: [u64; IN_FLIGHT],
    chunks: u64,
    /// The arrivals of the chunk the lane decides (0 at the end).
    arrivals: usize,
}

/// The running state of one pass over a chunk (or over the events at the
/// end): locals the loop keeps in registers.
struct Pass {
    window: WindowCounts,
    /// The open bin: its index (`usize::MAX` before the first), its end,
    /// the first arrival in it and the scheduled attempts decided in it.
    bin_index: usize,
    bin_end: u64,
    bin_first: usize,
    bin_events: u64,
    bin: Bin,
    /// Scheduled attempts decided in this pass, how many were admitted,
    /// and the time of the last.
    events: u64,
    events_admitted: u64,
    last_event: Option<Nanos>,
}

impl Pass {
    fn new(peak: u64) -> Pass {
        Pass {
            window: WindowCounts { peak, ..WindowCounts::default() },
            bin_index: usize::MAX,
            bin_end: 0,
            bin_first: 0,
            bin_events: 0,
            bin: Bin::default(),
            events: 0,
            events_admitted: 0,
            last_event: None,
        }
    }
}

impl<L: Limiter + Clone + Send + 'static, R: Reactor> Lane<L, R> {
    pub fn new(prototype: L, limit: Limit, bin: Option<Nanos>, reactor: R) -> Lane<L, R> {
        let self_tracking = prototype.clone().exact_window_count(Nanos::ZERO).is_some();
        let mut lane = Lane {
            self_tracking,
            prototype,
            window: limit.window,
            limit: limit.requests,
            keys: Vec::new(),
            counts: Counts::default(),
            timeline: Timeline::new(bin, 1),
            events: EventQueue::new(),
            releases: EventQueue::new(),
            due: u64::MAX,
            reactor,
            curve: false,
            curves: Vec::new(),
            nodes: None,
            last_node: 0,
            delays: DelayReport::new(),
            shapes: false,
            ring_bytes: 0,
            rings_mark: 0,
            budget: u64::MAX,
            held_at_start: 0,
            overrun: None,
            earlier: [0; IN_FLIGHT],
            chunks: 0,
            arrivals: 0,
        };
        lane.reactor.start(&mut Calendar { queue: &mut lane.events, due: &mut lane.due });
        lane
    }

    /// Makes sure every key id below `keys` has its state.
    #[inline(always)]
    fn grow_keys(&mut self, keys: usize) {
        if keys > self.keys.len() || (self.curve && keys > self.curves.len()) {
            self.add_keys(keys);
        }
    }

    #[cold]
    #[inline(never)]
    fn add_keys(&mut self, keys: usize) {
        while self.keys.len() < keys {
            self.keys
                .push(KeyState { limiter: self.prototype.clone(), tracker: WindowTracker::new(self.window) });
        }
        while self.curve && self.curves.len() < keys {
            self.curves.push(CurveTracker::new(self.window));
        }
    }

    /// The window count this lane carries into a new bin. With one key it is
    /// exact; with many keys a bin's peak is taken from its arrivals only
    /// (asking every key at every bin start would cost O(keys) per bin).
    fn carry(keys: &mut [KeyState<L>], start: Nanos, self_tracking: bool) -> u64 {
        match keys {
            [only] => only.window_count(start, self_tracking),
            _ => 0,
        }
    }

    /// Closes the open bin (if any) at arrival index `j` and opens the one
    /// holding `t`.
    fn next_bin<const OWN: bool>(&mut self, p: &mut Pass, t: Nanos, j: usize) -> Result<(), TooManyBins> {
        self.close_bin(p, j);
        let keys = &mut self.keys;
        p.bin_index = self.timeline.bin_for(t, |_, start| Self::carry(keys, start, OWN))?;
        p.bin_end = (p.bin_index as u64 + 1).saturating_mul(self.timeline.width().get());
        p.bin_first = j;
        p.bin_events = 0;
        p.bin = Bin::default();
        Ok(())
    }

    /// Adds the open bin's counts to the timeline; `j` arrivals of the pass
    /// come before its end.
    fn close_bin(&mut self, p: &mut Pass, j: usize) {
        if p.bin_index != usize::MAX {
            p.bin.close(j - p.bin_first + p.bin_events as usize);
            self.timeline.add(p.bin_index, 0, &p.bin);
        }
    }

    /// Decides one request of key `id` at `t` (arrival `j` of the pass, or a
    /// scheduled event before it) and updates the metrics. Returns the
    /// decision and the window count it found. A delayed request is judged
    /// when it reaches the backend ([`Lane::release`]).
    #[inline(always)]
    fn attempt<const OWN: bool, const CURVE: bool>(
        &mut self,
        p: &mut Pass,
        t: Nanos,
        id: u32,
        j: usize,
    ) -> Result<(Decision, u64), TooManyBins> {
        if t.get() >= p.bin_end {
            self.next_bin::<OWN>(p, t, j)?;
        }
        let ks = &mut self.keys[id as usize];
        let before = ks.window_count(t, OWN);
        let node = match &mut self.nodes {
            Some((balancer, _)) => {
                let node = balancer.pick(id);
                ks.limiter.route(node);
                self.last_node = node;
                Some(node)
            }
            None => None,
        };
        let decision = ks.limiter.decide(t, 1);
        let admitted = decision.admitted();
        if let (Some(node), Some((_, stats))) = (node, &mut self.nodes) {
            // A delayed request reaches the node's window at the backend.
            match decision {
                Decision::Delay(d) if d > Nanos::ZERO => stats.record_delayed(node),
                _ => stats.record(node, t, admitted)?,
            }
        }
        if let Decision::Delay(d) = decision
            && d > Nanos::ZERO
        {
            self.delay(p, t, id, d, before);
            return Ok((decision, before));
        }
        if admitted && !OWN {
            ks.tracker.admit(t);
        }
        if CURVE && admitted {
            self.curves[id as usize].admit(t);
        }
        p.window.record(self.limit, before, admitted);
        p.bin.record_admitted(admitted, before + u64::from(admitted));
        Ok((decision, before))
    }

    /// A request of key `id` admitted at `t` after a wait `d`: it counts as
    /// admitted now, and reaches the backend (where it is judged) at `t + d`.
    /// Its key's window held `before` at `t`, and still does: that is the
    /// count it reached at its arrival, for the bin's window peak.
    #[cold]
    fn delay(&mut self, p: &mut Pass, t: Nanos, id: u32, d: Nanos, before: u64) {
        p.bin.record_admitted(true, before);
        p.bin.delayed += 1;
        self.delays.record(t, d);
        // One due past the end of time (u64::MAX ns) never reaches the
        // backend: it waits to the end of the run, as one due after `end`.
        if let Some(at) = t.checked_add(d) {
            self.releases.schedule(at, Release { key: id, node: self.last_node });
            self.due = self.due.min(at.get() - 1);
        }
    }

    /// A delayed request of key `id` from `node` reaches the backend at
    /// `t`: the exact windows (the lane's and the node's) see it now.
    #[cold]
    fn release<const OWN: bool, const CURVE: bool>(
        &mut self,
        p: &mut Pass,
        t: Nanos,
        id: u32,
        node: u16,
        j: usize,
    ) -> Result<(), TooManyBins> {
        if t.get() >= p.bin_end {
            self.next_bin::<OWN>(p, t, j)?;
        }
        if let Some((_, stats)) = &mut self.nodes {
            stats.reach(node, t)?;
        }
        self.delays.release(t);
        let ks = &mut self.keys[id as usize];
        let before = ks.window_count(t, OWN);
        if !OWN {
            ks.tracker.admit(t);
        }
        if CURVE {
            self.curves[id as usize].admit(t);
        }
        p.window.record(self.limit, before, true);
        p.bin.released += 1;
        p.bin.window_peak = p.bin.window_peak.max(before + 1);
        Ok(())
    }

    /// Takes the earliest delayed request to the backend (some must be
    /// pending, none due before `last`); returns its time.
    #[cold]
    fn take_release<const OWN: bool, const CURVE: bool>(
        &mut self,
        p: &mut Pass,
        last: Nanos,
        j: usize,
    ) -> Result<Nanos, TooManyBins> {
        let ev = self.releases.pop().expect("a release is pending");
        assert!(ev.time >= last, "an event was scheduled in the past");
        p.last_event = Some(ev.time);
        self.release::<OWN, CURVE>(p, ev.time, ev.payload.key, ev.payload.node, j)?;
        Ok(ev.time)
    }

    /// The node that decided the last request, when the limiter runs on
    /// many nodes.
    #[inline(always)]
    fn node(&self) -> Option<u16> {
        self.nodes.as_ref().map(|_| self.last_node)
    }

    /// The limiter's advertised retry time for key `id` after a reject at
    /// `t`, when the reactor wants it.
    #[inline(always)]
    fn retry_at(&self, id: u32, t: Nanos, admitted: bool) -> Option<Nanos> {
        if R::WANTS_RETRY_AT && !admitted { self.keys[id as usize].limiter.retry_at(t, 1) } else { None }
    }

    /// Decides the scheduled events due strictly before `t` (before
    /// `u64::MAX` for `None`), in (time, sequence) order, and takes the
    /// delayed requests due by then to the backend, each before the
    /// scheduled events of its instant: those due at `t` too when `t` is an
    /// arrival's time (`arrival`), not at the end of a run. `j` arrivals of
    /// the pass come before them. `ALL`: then every event left, at
    /// `u64::MAX` too (and those they schedule there): the end of a run
    /// without an end. Records each attempt when `record`.
    #[cold]
    #[inline(never)]
    fn run_events<const OWN: bool, const CURVE: bool, const ALL: bool>(
        &mut self,
        p: &mut Pass,
        t: Option<Nanos>,
        j: usize,
        mut record: Option<&mut Vec<AttemptRecord>>,
        max_events: u64,
        arrival: bool,
    ) -> Result<(), TooManyBins> {
        if arrival && self.overrun.is_some() {
            return Ok(());
        }
        let mut last = Nanos::ZERO;
        let bound = t.unwrap_or(Nanos::MAX);
        // Releases due strictly before this (at `t` included for an arrival).
        let release_bound = if arrival { bound.get().saturating_add(1) } else { bound.get() };
        while p.events < max_events {
            // (An empty queue's next time is u64::MAX, never below the bound.)
            let release_time = self.releases.next_time();
            if release_time < release_bound && release_time <= self.events.next_time() {
                last = self.take_release::<OWN, CURVE>(p, last, j)?;
                continue;
            }
            let ev = match self.events.pop_before(bound) {
                Some(ev) => ev,
                // The end of a run without an end: what is due at u64::MAX,
                // releases first.
                None if ALL && !self.releases.is_empty() => {
                    last = self.take_release::<OWN, CURVE>(p, last, j)?;
                    continue;
                }
                None if ALL => match self.events.pop() {
                    Some(ev) => ev,
                    None => break,
                },
                None => break,
            };
            assert!(ev.time >= last, "an event was scheduled in the past");
            last = ev.time;
            p.last_event = Some(ev.time);
            let Scheduled { key, event } = ev.payload;
            self.grow_keys(key as usize + 1);
            let (attempt, logical) = self.reactor.attempt_of(&event);
            let (decision, before) = self.attempt::<OWN, CURVE>(p, ev.time, key, j)?;
            let admitted = decision.admitted();
            p.bin_events += 1;
            p.bin.retries += u64::from(attempt > 1);
            p.events += 1;
            p.events_admitted += u64::from(admitted);
            if let Some(r) = record.as_deref_mut() {
                let delay = decision.delay();
                r.push(AttemptRecord {
                    time: ev.time,
                    admitted,
                    window_count: before,
                    attempt,
                    logical,
                    delay,
                    node: self.node(),
                });
            }
            let retry_at = self.retry_at(key, ev.time, admitted);
            let delay = decision.delay();
            let decided =
                Decided { time: ev.time, key, admitted, delay, event: Some(&event), arrival: None, retry_at };
            self.reactor.react(&decided, &mut Calendar { queue: &mut self.events, due: &mut self.due });
            // The attempts between two arrivals are not bounded by the
            // chunk's length: the lane looks at what it holds every so often.
            if arrival
                && p.events.is_multiple_of(CHECK_EVERY)
                && self.passed_budget(p, ev.time, j, record.as_deref_mut())
            {
                break;
            }
        }
        self.due = self.events.next_time().min(self.releases.next_time().saturating_sub(1));
        Ok(())
    }

    /// Whether what the lane holds now passes its share of the budget (or,
    /// without decisions.csv, what it held when the chunk began, if more):
    /// its window rings,
    /// its queues and, with decisions.csv, the room for the attempts it
    /// keeps until their chunk is written, those of its last chunks
    /// included ([`Overrun`]). The room is for those kept so far and for
    /// every one it may keep before it looks again (`CHECK_EVERY` scheduled
    /// attempts and the chunk's arrivals from `j` on), made now when it
    /// fits, so that it does not grow past the budget between two looks.
    /// Past it, records it in `overrun`.
    #[cold]
    fn passed_budget(
        &mut self,
        p: &Pass,
        at: Nanos,
        j: usize,
        record: Option<&mut Vec<AttemptRecord>>,
    ) -> bool {
        let rings =
            self.ring_bytes.wrapping_add(crate::ring::held_on_this_thread().wrapping_sub(self.rings_mark));
        let waiting = self.waiting_bytes();
        let (kept, room) = match &record {
            Some(r) => (r.len(), CHECK_EVERY as usize + self.arrivals.saturating_sub(j)),
            None => (0, 0),
        };
        // The vector's capacity is the same at any thread count: it grows
        // from nothing in every chunk (`LaneOut::drop_attempts`), by
        // doubling, and only here once the lane has looked.
        let capacity = record.as_ref().map_or(0, |r| r.capacity());
        let needed = if kept + room <= capacity { capacity } else { (kept + room).max(2 * capacity) };
        let earlier = if record.is_some() { self.earlier.iter().sum() } else { 0 };
        let overrun = Overrun {
            rings,
            waiting,
            records: needed as u64 * ATTEMPT_BYTES,
            kept: kept as u64,
            room: room as u64,
            earlier,
            attempts: p.events,
            at,
            share: self.budget,
            started: if record.is_some() { 0 } else { self.held_at_start },
        };
        if overrun.bytes() <= self.budget.max(overrun.started) {
            if let Some(r) = record {
                r.reserve_exact(needed - kept);
            }
            return false;
        }
        self.overrun = Some(overrun);
        true
    }

    /// What the lane's queues hold: requests waiting to retry, closed
    /// clients' next requests, delayed requests, the clients' tables.
    fn waiting_bytes(&self) -> u64 {
        self.events.bytes() + self.releases.bytes() + self.reactor.held().1
    }

    /// Decides a chunk. `OWN`: the limiter counts its own exact window (no
    /// tracker); `RECORD`: keep each arrival's window count for
    /// decisions.csv.
    ///
    /// Offered, admitted and rejected come from the chunk's length and its
    /// decision bits afterwards; the loop does only what needs each
    /// arrival's window count.
    #[inline(always)]
    fn decide_chunk<const OWN: bool, const RECORD: bool, const CURVE: bool>(
        &mut self,
        chunk: &Chunk,
        out: &mut LaneOut,
    ) -> Result<(), TooManyBins> {
        let mut p = Pass::new(self.counts.peak);
        let mut bits = 0u64;
        let mut window_counts = if RECORD { out.window_counts.take() } else { None };
        // Every attempt, when decisions are written and clients react.
        let mut attempts = (RECORD && R::WANTS_RETRY_AT).then(|| std::mem::take(&mut out.attempts));
        for (j, (&t, &id)) in chunk.times.iter().zip(&chunk.ids).enumerate() {
            if t.get() > self.due {
                self.run_events::<OWN, CURVE, false>(&mut p, Some(t), j, attempts.as_mut(), u64::MAX, true)?;
            }
            let (decision, before) = self.attempt::<OWN, CURVE>(&mut p, t, id, j)?;
            let admitted = decision.admitted();
            bits |= u64::from(admitted) << (j % 64);
            if j % 64 == 63 {
                out.bits[j / 64] = bits;
                bits = 0;
            }
            if RECORD && let Some(wc) = &mut window_counts {
                wc.push(before);
                out.delays.push(decision.delay());
                if let Some(node) = self.node() {
                    out.nodes.push(node);
                }
            }
            let seq = chunk.first_seq + j as u64;
            let delay = decision.delay();
            if let Some(a) = attempts.as_mut() {
                let logical = Some(crate::clients::Logical::Open(seq));
                let node = self.node();
                a.push(AttemptRecord {
                    time: t,
                    admitted,
                    window_count: before,
                    attempt: 1,
                    logical,
                    delay,
                    node,
                });
            }
            let source = chunk.sources.get(j).copied().unwrap_or(0);
            let retry_at = self.retry_at(id, t, admitted);
            let arrival = Some((seq, source));
            let decided = Decided { time: t, key: id, admitted, delay, event: None, arrival, retry_at };
            self.reactor.react(&decided, &mut Calendar { queue: &mut self.events, due: &mut self.due });
        }
        let n = chunk.times.len();
        if !n.is_multiple_of(64) {
            out.bits[n / 64] = bits;
        }
        for w in &mut out.bits[n.div_ceil(64)..] {
            *w = 0;
        }
        self.close_bin(&mut p, n);
        let admitted: u64 = out.bits.iter().map(|w| u64::from(w.count_ones())).sum();
        self.counts.add_chunk(n as u64 + p.events, admitted + p.events_admitted, &p.window);
        if RECORD {
            out.window_counts = window_counts;
        }
        if let Some(a) = attempts {
            out.attempts = a;
        }
        self.reactor.take_outcomes(&mut out.outcomes);
        self.report_queue(out);
        Ok(())
    }

    /// Adds what this lane's rings grew by since `before` (this thread's
    /// ring total then: nothing else runs on the thread while a lane
    /// decides) and reports the lane's ring bytes.
    fn count_rings(&mut self, before: u64, out: &mut LaneOut) {
        let grown = crate::ring::held_on_this_thread().wrapping_sub(before);
        self.ring_bytes = self.ring_bytes.wrapping_add(grown);
        out.ring_bytes = self.ring_bytes;
    }

    /// What the delayed requests hold, for the run's memory check.
    fn report_queue(&self, out: &mut LaneOut) {
        out.overrun.clone_from(&self.overrun);
        out.key_bytes = (self.keys.capacity() * std::mem::size_of::<KeyState<L>>()
            + self.curves.capacity() * std::mem::size_of::<CurveTracker>()) as u64
            + if self.prototype.heap_grows() {
                self.keys.iter().map(|k| k.limiter.heap_bytes()).sum::<u64>()
            } else {
                self.keys.len() as u64 * self.prototype.heap_bytes()
            };
        // Every field is set, to 0 when it does not apply: the pooled
        // schedule hands a lane whichever spare `LaneOut` it finds, perhaps
        // one a shaping lane filled (whose queue was then counted twice).
        (out.pending_delays, out.delay_queue_bytes, out.peak_delays) = if self.shapes {
            (self.delays.pending, self.releases.bytes(), self.releases.slots() as u64)
        } else {
            (0, 0, 0)
        };
        (out.pending_retries, out.client_bytes) = if R::WANTS_RETRY_AT {
            let (pending, bytes) = self.reactor.held();
            (pending, self.events.bytes() + bytes)
        } else {
            (0, 0)
        };
    }

    /// Sum over keys of each key's peak state.
    fn state(&self) -> StateSize {
        self.keys.iter().fold(StateSize::default(), |acc, k| {
            let s = k.limiter.peak_state();
            StateSize { entries: acc.entries + s.entries, bytes: acc.bytes + s.bytes }
        })
    }
}

impl<L: Limiter + Clone + Send + 'static, R: Reactor> LaneOps for Lane<L, R> {
    fn process(&mut self, chunk: &Chunk, out: &mut LaneOut) -> Result<(), TooManyBins> {
        // Every key of the chunk gets its state up front, so the loop only
        // indexes.
        self.grow_keys(chunk.keys);
        if let Some(wc) = &mut out.window_counts {
            wc.clear();
        }
        out.drop_attempts();
        out.outcomes.clear();
        out.delays.clear();
        out.nodes.clear();
        if self.overrun.is_some() {
            // The run stops at the chunk where the lane passed its budget
            // (its `LaneOut` says so), so nothing decided after it would be
            // read: the lane decides no more, and holds no more for it.
            self.report_queue(out);
            return Ok(());
        }
        let rings = crate::ring::held_on_this_thread();
        self.rings_mark = rings;
        self.arrivals = chunk.times.len();
        if R::WANTS_RETRY_AT {
            self.held_at_start = self.ring_bytes.saturating_add(self.waiting_bytes());
        }
        // One loop per combination, so no choice is a test per arrival.
        let decided = match (self.self_tracking, out.window_counts.is_some(), self.curve) {
            (false, false, false) => self.decide_chunk::<false, false, false>(chunk, out),
            (true, false, false) => self.decide_chunk::<true, false, false>(chunk, out),
            (false, true, false) => self.decide_chunk::<false, true, false>(chunk, out),
            (true, true, false) => self.decide_chunk::<true, true, false>(chunk, out),
            (false, false, true) => self.decide_chunk::<false, false, true>(chunk, out),
            (true, false, true) => self.decide_chunk::<true, false, true>(chunk, out),
            (false, true, true) => self.decide_chunk::<false, true, true>(chunk, out),
            (true, true, true) => self.decide_chunk::<true, true, true>(chunk, out),
        };
        self.count_rings(rings, out);
        // What this chunk keeps until it is written, for the chunks after it.
        self.earlier[(self.chunks % IN_FLIGHT as u64) as usize] =
            out.attempts.capacity() as u64 * ATTEMPT_BYTES;
        self.chunks += 1;
        decided
    }

    fn run_pending(
        &mut self,
        end: Option<Nanos>,
        max_events: u64,
        out: &mut LaneOut,
    ) -> Result<PendingSlice, TooManyBins> {
        out.drop_attempts();
        out.outcomes.clear();
        if self.events.is_empty() && self.releases.is_empty() {
            self.report_queue(out);
            return Ok(PendingSlice { last_event: None, done: true });
        }
        let rings = crate::ring::held_on_this_thread();
        let mut p = Pass::new(self.counts.peak);
        let record = (out.window_counts.is_some() && R::WANTS_RETRY_AT).then_some(&mut out.attempts);
        let max = max_events;
        // With an end, events due at or after it do not happen; without
        // one, every event does, those at u64::MAX too.
        match (self.self_tracking, self.curve, end.is_none()) {
            (true, true, false) => self.run_events::<true, true, false>(&mut p, end, 0, record, max, false),
            (true, false, false) => self.run_events::<true, false, false>(&mut p, end, 0, record, max, false),
            (false, true, false) => self.run_events::<false, true, false>(&mut p, end, 0, record, max, false),
            (false, false, false) => {
                self.run_events::<false, false, false>(&mut p, end, 0, record, max, false)
            }
            (true, true, true) => self.run_events::<true, true, true>(&mut p, end, 0, record, max, false),
            (true, false, true) => self.run_events::<true, false, true>(&mut p, end, 0, record, max, false),
            (false, true, true) => self.run_events::<false, true, true>(&mut p, end, 0, record, max, false),
            (false, false, true) => self.run_events::<false, false, true>(&mut p, end, 0, record, max, false),
        }?;
        self.close_bin(&mut p, 0);
        self.counts.add_chunk(p.events, p.events_admitted, &p.window);
        self.reactor.take_outcomes(&mut out.outcomes);
        self.report_queue(out);
        self.count_rings(rings, out);
        // Stopped short of `max_events`: nothing was left before `end`.
        Ok(PendingSlice { last_event: p.last_event, done: p.events < max_events })
    }

    fn finish(&mut self, end: Nanos, out: &mut LaneOut) -> Result<(), TooManyBins> {
        out.outcomes.clear();
        self.reactor.close();
        self.reactor.take_outcomes(&mut out.outcomes);
        if let Some((_, stats)) = &mut self.nodes {
            stats.finish(end)?;
        }
        let (keys, own) = (&mut self.keys, self.self_tracking);
        self.timeline.extend_to(end, |_, start| Self::carry(keys, start, own))?;
        // Only the state reads the limiters after this.
        for key in &mut self.keys {
            key.limiter.settle(end);
        }
        Ok(())
    }

    fn counts_mut(&mut self) -> &mut Counts {
        &mut self.counts
    }

    fn key_cost(&self) -> (u64, u64) {
        let curve = if self.curve { std::mem::size_of::<CurveTracker>() } else { 0 };
        let heap = self.prototype.heap_bytes();
        ((std::mem::size_of::<KeyState<L>>() + curve) as u64 + heap, heap)
    }

    fn into_result(self: Box<Self>) -> LaneResult {
        let state = self.state();
        let mut curve: Vec<(Nanos, u64)> = Vec::new();
        for c in &self.curves {
            let mine = c.curve();
            if curve.is_empty() {
                curve = mine;
            } else {
                for (point, (_, a)) in curve.iter_mut().zip(mine) {
                    point.1 = point.1.max(a);
                }
            }
        }
        let (nodes, node_timeline) = match self.nodes {
            Some((_, stats)) => (stats.reports(), Some(stats.timeline)),
            None => (Vec::new(), None),
        };
        let mut delays = self.delays;
        delays.admitted = self.counts.admitted;
        LaneResult {
            counts: self.counts,
            timeline: self.timeline,
            state,
            curve,
            clients: self.reactor.report(),
            nodes,
            node_timeline,
            delays: self.shapes.then_some(delays),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limiter::{Algorithm, FixedWindowSpec};

    /// Retries every rejected arrival once, 5 ns later, and logs every
    /// decision it sees as (time, key, admitted, was it an event).
    #[derive(Default)]
    struct RetryOnce {
        log: Vec<(u64, u32, bool, bool)>,
    }

    impl Reactor for RetryOnce {
        type Event = u64;
        fn react(&mut self, d: &Decided<'_, u64>, queue: &mut Calendar<'_, u64>) {
            self.log.push((d.time.get(), d.key, d.admitted, d.event.is_some()));
            if !d.admitted && d.event.is_none() {
                queue.schedule(d.time + Nanos::new(5), Scheduled { key: d.key, event: d.time.get() });
            }
        }
        fn report(self) -> Option<ClientReport> {
            None
        }
    }

    fn chunk(arrivals: &[(u64, u32)]) -> Chunk {
        Chunk {
            first_seq: 0,
            times: arrivals.iter().map(|&(t, _)| Nanos::new(t)).collect(),
            ids: arrivals.iter().map(|&(_, k)| k).collect(),
            keys: arrivals.iter().map(|&(_, k)| k as usize + 1).max().unwrap_or(0),
            key_values: Vec::new(),
            sources: Vec::new(),
        }
    }

    /// A lane that does not delay or retry says so in every `LaneOut` it
    /// fills, whatever a lane before it left there: the pooled schedule
    /// hands out spare ones, and a shaping lane's queue once got counted
    /// again in the reference lane's out, doubling "the rest of the run".
    #[test]
    fn a_lane_out_says_only_what_its_lane_holds() {
        let limit = Limit { requests: 1, window: Nanos::new(10) };
        let mut lane =
            Lane::new(FixedWindowSpec::ALIGNED.build(limit), limit, Some(Nanos::new(10)), OpenLoop);
        let mut out = LaneOut::new(false);
        (out.pending_delays, out.delay_queue_bytes, out.peak_delays) = (7, 655_360, 9);
        (out.pending_retries, out.client_bytes) = (3, 1000);
        lane.process(&chunk(&[(0, 0), (1, 0)]), &mut out).unwrap();
        assert_eq!((out.pending_delays, out.delay_queue_bytes, out.peak_delays), (0, 0, 0));
        assert_eq!((out.pending_retries, out.client_bytes), (0, 0));
    }

    /// Events scheduled from decisions come back in (time, sequence) order,
    /// merged with the arrivals: before a later arrival, after the arrivals
    /// of their own instant, and across the cut between two chunks.
    #[test]
    fn scheduled_events_merge_with_arrivals_in_order() {
        // L = 1 per 10 ns, aligned windows [0, 10), [10, 20), ...
        let limit = Limit { requests: 1, window: Nanos::new(10) };
        let mut lane = Lane::new(
            FixedWindowSpec::ALIGNED.build(limit),
            limit,
            Some(Nanos::new(10)),
            RetryOnce::default(),
        );
        let mut out = LaneOut::new(false);
        // Arrivals: key 0 at 0 (admitted), 1 and 2 (rejected: retries at 6
        // and 7); key 0 at 6 (rejected, retry at 11); first chunk ends.
        lane.process(&chunk(&[(0, 0), (1, 0), (2, 0), (6, 0)]), &mut out).unwrap();
        // Second chunk: the retries at 6 and 7 (pending at the cut) run
        // before the arrival at 11, the one at 6 after the arrival at 6;
        // the arrival at 11 opens a new window and is admitted; the retry
        // due at 11 comes after it, at the end of the run, and is rejected.
        lane.process(&chunk(&[(11, 0)]), &mut out).unwrap();
        // In slices of one attempt: the retry at 11, then nothing left.
        let slice = lane.run_pending(Some(Nanos::new(30)), 1, &mut out).unwrap();
        assert_eq!((slice.last_event, slice.done), (Some(Nanos::new(11)), false));
        let slice = lane.run_pending(Some(Nanos::new(30)), 1, &mut out).unwrap();
        assert_eq!((slice.last_event, slice.done), (None, true));
        lane.finish(Nanos::new(30), &mut out).unwrap();
        assert_eq!(
            lane.reactor.log,
            [
                (0, 0, true, false),
                (1, 0, false, false),
                (2, 0, false, false),
                (6, 0, false, false),
                (6, 0, false, true),
                (7, 0, false, true),
                (11, 0, true, false),
                (11, 0, false, true),
            ]
        );
        // Every decision counts: 5 arrivals and 3 retries, 2 admitted.
        let result = Box::new(lane).into_result();
        let counts = result.counts;
        assert_eq!((counts.offered, counts.admitted, counts.rejected), (8, 2, 6));
        let offered: Vec<u64> = result.timeline.bins().iter().map(|row| row[0].offered).collect();
        assert_eq!(offered, [6, 2, 0]);
    }
}
