//! Many nodes sharing one limit (`docs/semantics.md`, "Many nodes"): K
//! gateway nodes behind a load balancer, each with its own copy of a
//! limiter (local), all consulting one store (central), or syncing their
//! counts now and then (sync). A [`Fleet`] is one key's limiter across the
//! nodes; the lane's [`Balancer`] picks the node of each request and
//! [`NodeStats`] keeps per-node figures. The exact reference stays one
//! limiter over the whole stream, and every metric is judged on the union
//! of what the nodes admitted.

use std::collections::VecDeque;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::limiter::{Decision, Limit, Limiter, StateSize};
use crate::metrics::WindowTracker;
use crate::time::Nanos;
use crate::timeline::{Bin, Timeline, TooManyBins};

/// How the load balancer spreads requests over the nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Balance {
    RoundRobin,
    /// Uniformly at random, from the lane's seeded stream.
    Random,
    /// The same client key always on the same node.
    KeyHash,
    /// Smooth weighted round robin (nginx's): node `i` gets `w_i / sum(w)`
    /// of the requests, interleaved.
    Weights(Vec<u64>),
}

/// How the nodes share the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Each node enforces its own limit (`per_node`), knowing nothing of
    /// the others.
    Local,
    /// One shared limiter state in a store a round trip `rtt` away: checks
    /// reach it `rtt / 2` after arrival. `atomic`: check and update in one
    /// step (a Lua script, INCR); otherwise get-then-set, the write landing
    /// `rtt` after the read, so reads in between see the old state.
    Central { rtt: Nanos, atomic: bool },
    /// Each node decides on the counts of all nodes at the last sync plus
    /// its own since; every `interval` the nodes exchange counts.
    Sync { interval: Nanos },
}

/// A window when the store cannot be reached (central and sync modes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outage {
    pub start: Nanos,
    pub end: Nanos,
    /// Admit everything (fail open, Envoy's default), or reject everything.
    pub fail_open: bool,
}

/// A validated `[nodes]` table.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    pub count: u16,
    pub balance: Balance,
    pub mode: Mode,
    /// Local mode: the limit each node enforces.
    pub per_node: u64,
    /// Each node's clock offset in ns (its decisions happen at `t + skew`).
    pub skew: Vec<i64>,
    pub outages: Vec<Outage>,
}

impl Topology {
    /// The limit a node's copy enforces: `per_node` per W locally, the
    /// scenario's limit otherwise.
    pub fn node_limit(&self, limit: Limit) -> Limit {
        match self.mode {
            Mode::Local => Limit { requests: self.per_node, window: limit.window },
            _ => limit,
        }
    }

    /// What the nodes' limits add up to when none knows of the others: the
    /// most the fleet can let through in one window when each node sees
    /// enough traffic (local mode, `K * per_node`).
    pub fn uncoordinated_bound(&self) -> Option<u64> {
        (self.mode == Mode::Local).then(|| u64::from(self.count) * self.per_node)
    }

    /// A short description: `5 nodes, local, 20 per node, round robin`
    /// (`1 node, ...` for one).
    pub fn describe(&self) -> String {
        let mode = match self.mode {
            Mode::Local => format!("local, {} per node", self.per_node),
            Mode::Central { rtt, atomic } => format!(
                "central store, rtt {}, {}",
                crate::time::format_duration(rtt),
                if atomic { "atomic" } else { "get-then-set" }
            ),
            Mode::Sync { interval } => format!("sync every {}", crate::time::format_duration(interval)),
        };
        let balance = match &self.balance {
            Balance::RoundRobin => "round robin".to_string(),
            Balance::Random => "random".to_string(),
            Balance::KeyHash => "by key".to_string(),
            Balance::Weights(w) => format!("weights {w:?}"),
        };
        let nodes = if self.count == 1 { "node" } else { "nodes" };
        let mut s = format!("{} {nodes}, {mode}, {balance}", self.count);
        if self.skew.iter().any(|&k| k != 0) {
            s.push_str(&format!(", clocks {}", fmt_skews(&self.skew).join(" / ")));
        }
        for o in &self.outages {
            let fail = if o.fail_open { "open" } else { "closed" };
            s.push_str(&format!("; store down [{} s, {} s), failing {fail}", o.start, o.end));
        }
        s
    }
}

/// The nodes' clock offsets for one legend, all in one unit: the largest
/// in which each is a whole number (`-40ms`, `0ms`, `+40ms`, where each on
/// its own would be `-40ms`, `0s`, `40ms`), a sign on every one but 0.
pub fn fmt_skews(skews: &[i64]) -> Vec<String> {
    if skews.iter().all(|&s| s == 0) {
        return vec!["0s".to_string(); skews.len()];
    }
    let (scale, unit) = crate::time::DURATION_UNITS
        .into_iter()
        .find(|(u, _)| skews.iter().all(|s| s.unsigned_abs().is_multiple_of(*u)))
        .unwrap_or((1, "ns"));
    skews
        .iter()
        .map(|&s| {
            let v = s.unsigned_abs() / scale;
            match s.signum() {
                -1 => format!("-{v}{unit}"),
                1 => format!("+{v}{unit}"),
                _ => format!("0{unit}"),
            }
        })
        .collect()
}

/// The lane's load balancer.
pub struct Balancer {
    balance: Balance,
    nodes: u16,
    next: u16,
    rng: ChaCha8Rng,
    /// Smooth weighted round robin: each node's current weight.
    current: Vec<i64>,
}

impl Balancer {
    /// A balancer (its random draws: ChaCha8 stream `2^33` of the
    /// scenario seed). Every lane's balancer draws the same stream, so in
    /// an open-loop run the same request lands on the same node whichever
    /// limiter decides it: the node a request goes to is the load
    /// balancer's choice, not the limiter's.
    pub fn new(topology: &Topology, seed: u64) -> Balancer {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(1 << 33);
        Balancer {
            balance: topology.balance.clone(),
            nodes: topology.count,
            next: 0,
            rng,
            current: vec![0; usize::from(topology.count)],
        }
    }

    /// The node of the next request, of key id `key`.
    #[inline(always)]
    pub fn pick(&mut self, key: u32) -> u16 {
        match &self.balance {
            Balance::RoundRobin => {
                // A compare, not a division: this runs once per request.
                let n = self.next;
                self.next = if n + 1 == self.nodes { 0 } else { n + 1 };
                n
            }
            Balance::Random => self.rng.random_range(0..self.nodes),
            // Key ids are dense, in order of first appearance: a fixed mix
            // of the id spreads them evenly and the same id always lands on
            // the same node.
            Balance::KeyHash => {
                let h =
                    u64::from(key).wrapping_add(0x9E37_79B9_7F4A_7C15).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                ((h >> 32) % u64::from(self.nodes)) as u16
            }
            Balance::Weights(w) => {
                // Every node gains its weight; the one with the most (the
                // first on ties) takes the request and pays the total.
                let total: i64 = w.iter().map(|&x| x as i64).sum();
                let mut pick = 0;
                for (c, &wi) in self.current.iter_mut().zip(w) {
                    *c += wi as i64;
                }
                for i in 1..self.current.len() {
                    if self.current[i] > self.current[pick] {
                        pick = i;
                    }
                }
                self.current[pick] -= total;
                pick as u16
            }
        }
    }
}

/// One key's limiter on every node, in the fleet's mode.
#[derive(Clone, Debug)]
pub struct Fleet<L> {
    shared: FleetMode<L>,
    /// The node the next decision happens on (set by [`Fleet::route`]).
    node: u16,
    skew: Vec<i64>,
    outages: Vec<Outage>,
}

#[derive(Clone, Debug)]
enum FleetMode<L> {
    Local(Vec<L>),
    Central {
        store: L,
        /// Reads (and atomic decisions) reach the store `rtt / 2` after
        /// arrival, rounded down to whole nanoseconds.
        half_rtt: u64,
        /// A get-then-set write lands `rtt` after its read: at `t + 3 rtt / 2`
        /// rounded down, as the contract says, for an odd `rtt` in ns too.
        rtt: u64,
        atomic: bool,
        /// Get-then-set writes still in flight: (when it lands, the state it writes).
        writes: VecDeque<(u64, L)>,
        peak_writes: usize,
        /// The largest state the store held before its last write landed:
        /// a write replaces the state, and with it the peak it had reached.
        store_peak: StateSize,
    },
    Sync {
        /// Everyone's counts as of the last sync.
        global: L,
        /// Each node's view: the last sync's counts plus its own since.
        views: Vec<L>,
        /// The largest state each view held before its last sync (a sync
        /// makes the view a copy of `global` and restarts its peak).
        view_peaks: Vec<StateSize>,
        /// Requests counted since the last sync (admitted, and rejected
        /// ones for a limiter that counts them): (node time, cost).
        since: Vec<(u64, u32)>,
        interval: u64,
        next_sync: u64,
        /// A node has decided since the last exchange: a view may differ
        /// from `global` (a rejection can move a view too: a window rolls,
        /// a `count_rejected` log grows) or `since` holds admissions.
        dirty: bool,
    },
}

impl<L: Limiter + Clone> Fleet<L> {
    /// The fleet of a limiter whose node copies are `node`.
    pub fn new(node: L, topology: &Topology) -> Fleet<L> {
        let k = usize::from(topology.count);
        let shared = match topology.mode {
            Mode::Local => FleetMode::Local(vec![node; k]),
            Mode::Central { rtt, atomic } => FleetMode::Central {
                store: node,
                half_rtt: rtt.get() / 2,
                rtt: rtt.get(),
                atomic,
                writes: VecDeque::new(),
                peak_writes: 0,
                store_peak: StateSize::default(),
            },
            Mode::Sync { interval } => FleetMode::Sync {
                views: vec![node.clone(); k],
                view_peaks: vec![StateSize::default(); k],
                global: node,
                since: Vec::new(),
                interval: interval.get(),
                next_sync: interval.get(),
                dirty: true,
            },
        };
        Fleet { shared, node: 0, skew: topology.skew.clone(), outages: topology.outages.clone() }
    }

    /// Node `node`'s clock at true time `t`.
    fn node_time(&self, t: u64) -> u64 {
        let skew = self.skew.get(usize::from(self.node)).copied().unwrap_or(0);
        t.saturating_add_signed(skew)
    }

    /// The store's answer when it is down at true time `t`: admit or reject.
    fn outage(&self, t: u64) -> Option<Decision> {
        self.outages
            .iter()
            .find(|o| o.start.get() <= t && t < o.end.get())
            .map(|o| if o.fail_open { Decision::Admit } else { Decision::Reject })
    }

    /// The retry time the limiter's state gives (the node's, or the
    /// store's), in true time, leaving outages aside.
    fn limiter_retry_at(&self, now: Nanos, cost: u32) -> Option<Nanos> {
        let node = usize::from(self.node);
        let skew = self.skew.get(node).copied().unwrap_or(0);
        let local = match &self.shared {
            FleetMode::Local(nodes) => nodes[node].retry_at(Nanos::new(self.node_time(now.get())), cost)?,
            FleetMode::Central { store, half_rtt, .. } => {
                let at = store.retry_at(Nanos::new(now.get().saturating_add(*half_rtt)), cost)?;
                return Some(Nanos::new(at.get().saturating_sub(*half_rtt).max(now.get() + 1)));
            }
            FleetMode::Sync { views, .. } => {
                views[node].retry_at(Nanos::new(self.node_time(now.get())), cost)?
            }
        };
        Some(Nanos::new(local.get().saturating_add_signed(-skew).max(now.get() + 1)))
    }

    /// Brings the synced counts up to true time `t`: every sync due at or
    /// before it merges all nodes' admissions since the last one.
    ///
    /// The syncs happen at `k * interval` (`k >= 1`) and, once that passes
    /// `u64::MAX`, at `u64::MAX`; one inside an outage does not happen. A
    /// sync (an exchange) adds `since` to `global` and makes every view a
    /// copy of it. A second exchange with no decision since the first is a
    /// no-op: `since` is empty and every view is already a copy of the
    /// unchanged `global`. So of the syncs due now only the first outside an
    /// outage can change anything, and only if a node has decided since the
    /// last exchange (`dirty`); the others are skipped and `next_sync` jumps
    /// past `t` arithmetically. A catch-up costs at most one exchange and a
    /// look at each outage, however many intervals it spans.
    fn sync_to(&mut self, t: u64) {
        let Fleet { shared, outages, .. } = self;
        let FleetMode::Sync { global, views, view_peaks, since, interval, next_sync, dirty } = shared else {
            return;
        };
        if *next_sync > t {
            return;
        }
        let interval = *interval;
        if *dirty {
            // The first sync due at or before `t` outside every outage.
            let mut at = *next_sync;
            let due = loop {
                match outages.iter().find(|o| o.start.get() <= at && at < o.end.get()) {
                    None => break true,
                    // `end > at`: this moves on, past each outage at most once.
                    Some(o) => at = first_sync_at_or_after(o.end.get(), interval),
                }
                if at > t {
                    break false;
                }
            };
            if due {
                since.sort_by_key(|&(time, _)| time);
                for &(time, cost) in since.iter() {
                    global.absorb(Nanos::new(time), cost);
                }
                since.clear();
                for (v, peak) in views.iter_mut().zip(view_peaks.iter_mut()) {
                    *peak = larger(*peak, v.peak_state());
                    v.clone_from(global);
                    v.restart_peak();
                }
                *dirty = false;
            }
        }
        // The first sync after `t`; `u64::MAX` stays due at `u64::MAX`.
        *next_sync = if t == u64::MAX { u64::MAX } else { first_sync_at_or_after(t + 1, interval) };
    }
}

/// The larger of two states, field by field.
fn larger(a: StateSize, b: StateSize) -> StateSize {
    StateSize { entries: a.entries.max(b.entries), bytes: a.bytes.max(b.bytes) }
}

/// The first sync instant at or after `x >= 1` for syncs every `interval`:
/// `ceil(x / interval) * interval`, or `u64::MAX` when that is past it (the
/// sync schedule saturates there).
fn first_sync_at_or_after(x: u64, interval: u64) -> u64 {
    let k = x.div_ceil(interval);
    u64::try_from(u128::from(k) * u128::from(interval)).unwrap_or(u64::MAX)
}

impl<L: Limiter + Clone> Limiter for Fleet<L> {
    #[inline]
    fn route(&mut self, node: u16) {
        self.node = node;
    }

    /// The syncs due before the run's end `[0, end)` after the key's last
    /// request: the shared state absorbs what was counted since the sync
    /// before, and every view becomes a copy of it (their state counts).
    fn settle(&mut self, end: Nanos) {
        if end.get() > 0 {
            self.sync_to(end.get() - 1);
        }
    }

    /// Every copy of the key's limiter is made by what holds it when a
    /// request of the key first reaches it: a node's copy at that node's
    /// first request of the key (on its own clock), the store's at the
    /// store's first.
    fn heap_bytes(&self) -> u64 {
        use std::mem::size_of;
        let size = size_of::<L>() as u64;
        let own =
            (self.skew.capacity() * size_of::<i64>() + self.outages.capacity() * size_of::<Outage>()) as u64;
        own + match &self.shared {
            FleetMode::Local(nodes) => {
                nodes.capacity() as u64 * size + nodes.iter().map(L::heap_bytes).sum::<u64>()
            }
            FleetMode::Central { store, writes, .. } => writes.capacity() as u64 * size + store.heap_bytes(),
            FleetMode::Sync { global, views, view_peaks, since, .. } => {
                views.capacity() as u64 * size
                    + views.iter().map(L::heap_bytes).sum::<u64>()
                    + global.heap_bytes()
                    + (view_peaks.capacity() * size_of::<StateSize>()
                        + since.capacity() * size_of::<(u64, u32)>()) as u64
            }
        }
    }

    /// The store's writes in flight (get-then-set) and the requests a
    /// node counted since its last sync grow with the traffic: one entry
    /// per admission within a round trip, or within a sync interval (an
    /// hour of syncs once held 3 GB unseen by `--memory`).
    fn heap_grows(&self) -> bool {
        matches!(self.shared, FleetMode::Central { atomic: false, .. } | FleetMode::Sync { .. })
    }

    fn create_on_first_request(&mut self) {
        match &mut self.shared {
            FleetMode::Local(nodes) => nodes.iter_mut().for_each(L::create_on_first_request),
            FleetMode::Central { store, writes, .. } => {
                store.create_on_first_request();
                writes.iter_mut().for_each(|(_, w)| w.create_on_first_request());
            }
            FleetMode::Sync { global, views, .. } => {
                global.create_on_first_request();
                views.iter_mut().for_each(L::create_on_first_request);
            }
        }
    }

    /// The advertised retry time of the node (or store) that rejected, in
    /// true time: a node's own clock runs `skew` ahead. While the store is
    /// down and fails closed nothing is admitted, so the time is at least
    /// the outage's end, and never inside an outage that fails closed.
    fn retry_at(&self, now: Nanos, cost: u32) -> Option<Nanos> {
        let store_down = !matches!(self.shared, FleetMode::Local(_));
        let closed_until = |t: u64| {
            self.outages.iter().find(|o| !o.fail_open && o.start.get() <= t && t < o.end.get()).map(|o| o.end)
        };
        let mut at = match (self.limiter_retry_at(now, cost), store_down) {
            (Some(at), _) => at,
            (None, true) => closed_until(now.get())?,
            (None, false) => return None,
        };
        while store_down && let Some(end) = closed_until(at.get()) {
            at = end;
        }
        Some(at)
    }

    #[inline(always)]
    fn decide(&mut self, now: Nanos, cost: u32) -> Decision {
        let t = now.get();
        let node = usize::from(self.node);
        let local = self.node_time(t);
        if !matches!(self.shared, FleetMode::Local(_))
            && let Some(d) = self.outage(t)
        {
            return d;
        }
        if let FleetMode::Sync { next_sync, .. } = &self.shared
            && *next_sync <= t
        {
            self.sync_to(t);
        }
        match &mut self.shared {
            FleetMode::Local(nodes) => nodes[node].decide(Nanos::new(local), cost),
            FleetMode::Central { store, half_rtt, atomic: true, .. } => {
                store.decide(Nanos::new(t.saturating_add(*half_rtt)), cost)
            }
            FleetMode::Central { store, half_rtt, rtt, atomic: false, writes, peak_writes, store_peak } => {
                let read = t.saturating_add(*half_rtt);
                while writes.front().is_some_and(|&(at, _)| at <= read) {
                    let (_, state) = writes.pop_front().expect("a write");
                    *store_peak = larger(*store_peak, store.peak_state());
                    *store = state;
                }
                let mut view = store.clone();
                let d = view.decide(Nanos::new(read), cost);
                // The state after the decision is written back when the
                // decision moved it: an admission, or a rejection the
                // limiter counts (`count_rejected`).
                if d.admitted() || view.counts_rejected() {
                    writes.push_back((read.saturating_add(*rtt), view));
                    *peak_writes = (*peak_writes).max(writes.len());
                }
                d
            }
            FleetMode::Sync { views, since, dirty, .. } => {
                *dirty = true;
                let view = &mut views[node];
                let d = view.decide(Nanos::new(local), cost);
                // What the node counted: its admissions, and its rejections
                // too when the limiter counts them.
                if d.admitted() || view.counts_rejected() {
                    since.push((local, cost));
                }
                d
            }
        }
    }

    /// The state of every node copy (or the store's, with the writes in
    /// flight), added up.
    fn peak_state(&self) -> StateSize {
        let add = |a: StateSize, b: StateSize| StateSize {
            entries: a.entries + b.entries,
            bytes: a.bytes + b.bytes,
        };
        match &self.shared {
            FleetMode::Local(nodes) => nodes.iter().map(|n| n.peak_state()).fold(StateSize::default(), add),
            FleetMode::Central { store, peak_writes, store_peak, writes, .. } => {
                // The writes still in flight land on the store (after the
                // key's last read, no read applies them).
                let s = writes
                    .iter()
                    .fold(larger(*store_peak, store.peak_state()), |s, (_, w)| larger(s, w.peak_state()));
                StateSize {
                    entries: s.entries * (1 + *peak_writes as u64),
                    bytes: s.bytes * (1 + *peak_writes as u64),
                }
            }
            FleetMode::Sync { global, views, view_peaks, .. } => views
                .iter()
                .zip(view_peaks)
                .map(|(v, &peak)| larger(peak, v.peak_state()))
                .fold(global.peak_state(), add),
        }
    }
}

/// Per-node figures of one lane: what each node admitted and rejected, the
/// most it admitted in one exact window (all keys together), and admitted
/// per timeline bin.
pub struct NodeStats {
    /// One entry per node: everything a decision touches in one place.
    nodes: Vec<NodeCounters>,
    /// One column per node: requests each node admitted per bin (complete
    /// once [`NodeStats::finish`] has run).
    pub timeline: Timeline,
    /// The bin admissions go to now (`usize::MAX` before the first) and
    /// the instant it ends; each node's `open` holds what it admitted in it
    /// that the timeline has not been told yet: one division and one
    /// timeline update per bin, not per admission.
    open: usize,
    open_end: u64,
}

struct NodeCounters {
    admitted: u64,
    rejected: u64,
    peak: u64,
    open: u64,
    tracker: WindowTracker,
}

impl NodeStats {
    /// `columns`: the run's timeline columns ([`crate::engine::timeline_columns`]).
    pub fn new(nodes: u16, window: Nanos, bin: Option<Nanos>, columns: u64) -> NodeStats {
        let k = usize::from(nodes);
        NodeStats {
            nodes: (0..k)
                .map(|_| NodeCounters {
                    admitted: 0,
                    rejected: 0,
                    peak: 0,
                    open: 0,
                    tracker: WindowTracker::new(window),
                })
                .collect(),
            timeline: Timeline::new(bin, k).in_run_of(columns),
            open: usize::MAX,
            open_end: 0,
        }
    }

    /// Hands the open bin's counts to the timeline.
    fn flush(&mut self) {
        if self.open == usize::MAX {
            return;
        }
        for (n, c) in self.nodes.iter_mut().enumerate() {
            if c.open > 0 {
                let bin = Bin { offered: c.open, admitted: c.open, ..Bin::default() };
                self.timeline.add(self.open, n, &bin);
                c.open = 0;
            }
        }
    }

    /// Closes the timeline at the end of the run: it covers `[0, end)`.
    pub fn finish(&mut self, end: Nanos) -> Result<(), TooManyBins> {
        self.flush();
        self.open = usize::MAX;
        self.open_end = 0;
        self.timeline.extend_to(end, |_, _| 0)
    }

    /// Counts a decision of node `node` at true time `t`, an admitted
    /// request reaching the backend at once.
    #[inline(always)]
    pub fn record(&mut self, node: u16, t: Nanos, admitted: bool) -> Result<(), TooManyBins> {
        let c = &mut self.nodes[usize::from(node)];
        if !admitted {
            c.rejected += 1;
            return Ok(());
        }
        c.admitted += 1;
        self.reach(node, t)
    }

    /// Counts a request node `node` admitted with a delay: it reaches the
    /// backend later ([`NodeStats::reach`]).
    pub fn record_delayed(&mut self, node: u16) {
        self.nodes[usize::from(node)].admitted += 1;
    }

    /// A request node `node` admitted reaches the backend at `t`: its exact
    /// window (the node's peak) and its timeline bin see it now.
    #[inline(always)]
    pub fn reach(&mut self, node: u16, t: Nanos) -> Result<(), TooManyBins> {
        if t.get() >= self.open_end {
            self.next_bin(t)?;
        }
        let c = &mut self.nodes[usize::from(node)];
        c.open += 1;
        let before = c.tracker.count_at(t);
        c.tracker.admit(t);
        c.peak = c.peak.max(before + 1);
        Ok(())
    }

    /// Opens the bin of `t`. The timeline may widen on the way, so the
    /// open bin's counts go in first and the bin is looked up after.
    #[cold]
    #[inline(never)]
    fn next_bin(&mut self, t: Nanos) -> Result<(), TooManyBins> {
        self.flush();
        self.open = self.timeline.bin_for(t, |_, _| 0)?;
        self.open_end = (self.open as u64 + 1).saturating_mul(self.timeline.width().get());
        Ok(())
    }

    /// What each node did.
    pub fn reports(&self) -> Vec<NodeReport> {
        self.nodes
            .iter()
            .map(|c| NodeReport { admitted: c.admitted, rejected: c.rejected, peak: c.peak })
            .collect()
    }
}

/// What one node of a lane did over the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeReport {
    pub admitted: u64,
    pub rejected: u64,
    pub peak: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_share_one_unit() {
        assert_eq!(fmt_skews(&[-40_000_000, 0, 40_000_000]), ["-40ms", "0ms", "+40ms"]);
        assert_eq!(fmt_skews(&[-1_500_000, 2_000_000_000]), ["-1500us", "+2000000us"]);
        assert_eq!(fmt_skews(&[0, 0]), ["0s", "0s"]);
    }

    /// The topology line of a run's header and report names clock offsets
    /// and outages, which change what the nodes admit.
    #[test]
    fn a_topology_describes_its_clocks_and_outages() {
        let mut t = Topology {
            count: 3,
            balance: Balance::RoundRobin,
            mode: Mode::Local,
            per_node: 30,
            skew: vec![-40_000_000, 0, 40_000_000],
            outages: vec![],
        };
        assert_eq!(t.describe(), "3 nodes, local, 30 per node, round robin, clocks -40ms / 0ms / +40ms");
        t.skew = vec![0; 3];
        t.mode = Mode::Central { rtt: Nanos::from_millis(2), atomic: true };
        t.outages = vec![
            Outage { start: Nanos::from_millis(5_000), end: Nanos::from_millis(6_000), fail_open: false },
            Outage { start: Nanos::from_millis(8_000), end: Nanos::from_millis(8_500), fail_open: true },
        ];
        assert_eq!(
            t.describe(),
            "3 nodes, central store, rtt 2ms, atomic, round robin; store down [5 s, 6 s), failing closed; \
             store down [8 s, 8.5 s), failing open"
        );
    }
}
