//! The simulation: one streaming pass that feeds every arrival, in
//! (time, source order) order, to every limiter and updates every metric.
//!
//! Arrivals are read a chunk at a time. Each limiter is a *lane* with its own
//! state (one limiter instance per client key), exact-window tracker, counters
//! and timeline column; lanes never look at each other, so a chunk is handed to
//! all lanes in parallel (rayon) while the next chunk is read. Every lane still
//! sees every arrival in order, so results do not depend on the thread count.
//! Disagreement with the sliding log is counted after each chunk by comparing
//! decision bitsets.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use std::sync::{Condvar, Mutex, MutexGuard, RwLock};

use crate::limiter::{
    AnyLimiter, FixedWindow, Limit, Limiter, LimiterSpec, SlidingLog, SlotCounter, StateSize,
};
use crate::metrics::{Counts, LimiterReport, WindowCounts, WindowTracker};
use crate::time::Nanos;
use crate::timeline::{Bin, Timeline, TooManyBins};
use crate::trace::{ArrivalResult, TraceError};

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
    /// just before it.
    pub window_count: u64,
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

/// Arrivals read and decided per step.
pub const CHUNK: usize = 1 << 18;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(transparent)]
    Timeline(#[from] TooManyBins),
    #[error("cannot write decisions")]
    Decisions(#[source] std::io::Error),
}

/// Everything a run measured.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub limit: Limit,
    pub arrivals: u64,
    /// Distinct client keys seen (1 for an unkeyed trace with arrivals).
    pub keys: u64,
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

/// Unique labels: a repeated limiter gets `#2`, `#3`, ...
pub fn labels(specs: &[LimiterSpec]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(specs.len());
    for spec in specs {
        let base = spec.label();
        let n = out.iter().filter(|l| **l == base || l.starts_with(&format!("{base}#"))).count();
        out.push(if n == 0 { base } else { format!("{base}#{}", n + 1) });
    }
    out
}

// ---- chunks of arrivals ----------------------------------------------------

/// A run of arrivals with their keys turned into dense ids (0, 1, 2, ... in
/// order of first appearance).
#[derive(Default)]
struct Chunk {
    first_seq: u64,
    times: Vec<Nanos>,
    ids: Vec<u32>,
    /// Distinct keys seen up to the end of this chunk (every id is below).
    keys: usize,
    /// Each arrival's key, kept only when decisions are written.
    key_values: Vec<u64>,
}

/// A small, fixed multiplicative hasher for key ids (keys are already hashes
/// or small integers; SipHash's DoS resistance buys nothing here).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        self.0 ^= self.0 >> 32;
    }
}

struct Reader<I> {
    arrivals: I,
    /// Arrivals at or after this are not read. Not `Nanos::MAX` for "no end":
    /// an arrival at u64::MAX counts then.
    end: Option<Nanos>,
    ids: HashMap<u64, u32, BuildHasherDefault<KeyHasher>>,
    keys: Vec<u64>,
    last: Option<(u64, u32)>,
    seq: u64,
    first: Option<Nanos>,
    last_time: Option<Nanos>,
    done: bool,
    /// Keep each arrival's key in the chunk (for decisions.csv).
    record_keys: bool,
}

impl<I: Iterator<Item = ArrivalResult>> Reader<I> {
    /// Refills `chunk`; an empty chunk means the trace has ended.
    fn fill(&mut self, chunk: &mut Chunk) -> Result<(), TraceError> {
        chunk.times.clear();
        chunk.ids.clear();
        chunk.key_values.clear();
        chunk.first_seq = self.seq;
        while !self.done && chunk.times.len() < CHUNK {
            let Some(a) = self.arrivals.next() else {
                self.done = true;
                break;
            };
            let a = a?;
            if self.end.is_some_and(|end| a.time >= end) {
                self.done = true;
                break;
            }
            let id = match self.last {
                Some((k, id)) if k == a.key => id,
                _ => {
                    let next = self.keys.len() as u32;
                    let id = *self.ids.entry(a.key).or_insert(next);
                    if id == next {
                        self.keys.push(a.key);
                    }
                    self.last = Some((a.key, id));
                    id
                }
            };
            chunk.times.push(a.time);
            chunk.ids.push(id);
            if self.record_keys {
                chunk.key_values.push(a.key);
            }
        }
        if let (Some(&first), Some(&last)) = (chunk.times.first(), chunk.times.last()) {
            self.first.get_or_insert(first);
            self.last_time = Some(last);
        }
        self.seq += chunk.times.len() as u64;
        chunk.keys = self.keys.len();
        Ok(())
    }
}

// ---- lanes -----------------------------------------------------------------

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

/// One limiter (one instance per key) with its metrics.
struct Lane<L> {
    prototype: L,
    window: Nanos,
    limit: u64,
    keys: Vec<KeyState<L>>,
    counts: Counts,
    timeline: Timeline,
    /// The limiter reports its own exact window count (no tracker needed).
    self_tracking: bool,
}

/// What a lane hands back for one chunk, besides its own counters.
struct LaneOut {
    /// One bit per arrival: admitted or not.
    bits: Vec<u64>,
    /// Each arrival's exact window count, kept only when decisions are written.
    window_counts: Option<Vec<u64>>,
}

impl LaneOut {
    fn new(record: bool) -> LaneOut {
        LaneOut { bits: vec![0; CHUNK / 64], window_counts: record.then(|| Vec::with_capacity(CHUNK)) }
    }
}

impl<L: Limiter + Clone> Lane<L> {
    fn new(prototype: L, limit: Limit, bin: Option<Nanos>) -> Lane<L> {
        let self_tracking = prototype.clone().exact_window_count(Nanos::ZERO).is_some();
        Lane {
            self_tracking,
            prototype,
            window: limit.window,
            limit: limit.requests,
            keys: Vec::new(),
            counts: Counts::default(),
            timeline: Timeline::new(bin, 1),
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

    fn process(&mut self, chunk: &Chunk, out: &mut LaneOut) -> Result<(), TooManyBins> {
        // Every key of the chunk gets its state up front, so the loop only
        // indexes.
        while self.keys.len() < chunk.keys {
            self.keys
                .push(KeyState { limiter: self.prototype.clone(), tracker: WindowTracker::new(self.window) });
        }
        if let Some(wc) = &mut out.window_counts {
            wc.clear();
        }
        // One loop per combination, so neither choice is a test per arrival.
        match (self.self_tracking, out.window_counts.is_some()) {
            (false, false) => self.decide_chunk::<false, false>(chunk, out),
            (true, false) => self.decide_chunk::<true, false>(chunk, out),
            (false, true) => self.decide_chunk::<false, true>(chunk, out),
            (true, true) => self.decide_chunk::<true, true>(chunk, out),
        }
    }

    /// Decides a chunk and updates the metrics. `OWN`: the limiter counts
    /// its own exact window (no tracker); `RECORD`: keep each arrival's
    /// window count for decisions.csv.
    ///
    /// The loop keeps counters, the current bin and the current word of
    /// decision bits in locals, and does only what needs the arrival's
    /// window count: offered, admitted and rejected come from the chunk's
    /// length and its decision bits afterwards.
    #[inline(always)]
    fn decide_chunk<const OWN: bool, const RECORD: bool>(
        &mut self,
        chunk: &Chunk,
        out: &mut LaneOut,
    ) -> Result<(), TooManyBins> {
        let limit = self.limit;
        let mut window = WindowCounts { peak: self.counts.peak, ..WindowCounts::default() };
        let mut bits = 0u64;
        let mut bin_index = usize::MAX;
        let mut bin_end = 0u64;
        let mut bin_first = 0usize;
        let mut bin = Bin::default();
        let mut window_counts = if RECORD { out.window_counts.take() } else { None };
        for (j, (&t, &id)) in chunk.times.iter().zip(&chunk.ids).enumerate() {
            if t.get() >= bin_end {
                if bin_index != usize::MAX {
                    bin.close(j - bin_first);
                    self.timeline.add(bin_index, 0, &bin);
                }
                let keys = &mut self.keys;
                bin_index = self.timeline.bin_for(t, |_, start| Self::carry(keys, start, OWN))?;
                bin_end = (bin_index as u64 + 1).saturating_mul(self.timeline.width().get());
                bin_first = j;
                bin = Bin::default();
            }
            let ks = &mut self.keys[id as usize];
            let before = ks.window_count(t, OWN);
            // Debug builds (the tests) keep the tracker for a self-tracking
            // limiter too and check the two counts agree.
            debug_assert!(!OWN || ks.tracker.count_at(t) == before);
            let admitted = ks.limiter.decide(t, 1).admitted();
            if admitted {
                if !OWN || cfg!(debug_assertions) {
                    ks.tracker.admit(t);
                }
                bits |= 1 << (j % 64);
            }
            if j % 64 == 63 {
                out.bits[j / 64] = bits;
                bits = 0;
            }
            window.record(limit, before, admitted);
            bin.record_admitted(admitted, before + u64::from(admitted));
            if RECORD && let Some(wc) = &mut window_counts {
                wc.push(before);
            }
        }
        let n = chunk.times.len();
        if !n.is_multiple_of(64) {
            out.bits[n / 64] = bits;
        }
        for w in &mut out.bits[n.div_ceil(64)..] {
            *w = 0;
        }
        if bin_index != usize::MAX {
            bin.close(n - bin_first);
            self.timeline.add(bin_index, 0, &bin);
        }
        let admitted: u64 = out.bits.iter().map(|w| u64::from(w.count_ones())).sum();
        self.counts.add_chunk(n as u64, admitted, &window);
        if RECORD {
            out.window_counts = window_counts;
        }
        Ok(())
    }

    fn finish(&mut self, end: Nanos) -> Result<(), TooManyBins> {
        let (keys, own) = (&mut self.keys, self.self_tracking);
        self.timeline.extend_to(end, |_, start| Self::carry(keys, start, own))
    }

    /// Sum over keys of each key's peak state.
    fn state(&self) -> StateSize {
        self.keys.iter().fold(StateSize::default(), |acc, k| {
            let s = k.limiter.peak_state();
            StateSize { entries: acc.entries + s.entries, bytes: acc.bytes + s.bytes }
        })
    }
}

/// Lanes are generic over the limiter so the per-arrival loop is
/// monomorphised; this enum picks the loop once per chunk.
enum AnyLane {
    Fixed(Lane<FixedWindow>),
    Slots(Lane<SlotCounter>),
    Log(Lane<SlidingLog>),
}

macro_rules! each_lane {
    ($lane:expr, $l:ident => $body:expr) => {
        match $lane {
            AnyLane::Fixed($l) => $body,
            AnyLane::Slots($l) => $body,
            AnyLane::Log($l) => $body,
        }
    };
}

impl AnyLane {
    fn new(spec: &LimiterSpec, limit: Limit, bin: Option<Nanos>) -> AnyLane {
        match spec.build(limit) {
            AnyLimiter::Fixed(l) => AnyLane::Fixed(Lane::new(l, limit, bin)),
            AnyLimiter::Slots(l) => AnyLane::Slots(Lane::new(l, limit, bin)),
            AnyLimiter::Log(l) => AnyLane::Log(Lane::new(l, limit, bin)),
        }
    }
    fn process(&mut self, chunk: &Chunk, out: &mut LaneOut) -> Result<(), TooManyBins> {
        each_lane!(self, l => l.process(chunk, out))
    }
    fn finish(&mut self, end: Nanos) -> Result<(), TooManyBins> {
        each_lane!(self, l => l.finish(end))
    }
    fn counts_mut(&mut self) -> &mut Counts {
        each_lane!(self, l => &mut l.counts)
    }
    fn into_parts(self) -> (Counts, Timeline, StateSize) {
        each_lane!(self, l => { let s = l.state(); (l.counts, l.timeline, s) })
    }
}

// ---- the run ---------------------------------------------------------------

/// Chunks in flight: one being read, the others being decided or waiting
/// to be reported. With three, the reader can run a chunk ahead and lanes
/// can work on two chunks at once, so no thread waits for the slowest lane
/// of a chunk.
const SLOTS: usize = 3;

/// One chunk buffer with each lane's output for it.
struct Slot {
    chunk: RwLock<Chunk>,
    outs: Vec<Mutex<LaneOut>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotState {
    Free,
    Reading,
    /// Chunk `k` is read; `left` lanes have not decided it yet.
    Ready {
        k: u64,
        left: usize,
    },
    /// Every lane has decided chunk `k`; it waits to be reported.
    Decided {
        k: u64,
    },
}

/// A piece of work for a thread.
enum Job {
    Read {
        slot: usize,
        k: u64,
    },
    Decide {
        lane: usize,
        slot: usize,
        k: u64,
    },
    /// Count disagreements, write decisions and report progress for chunk
    /// `k`, in chunk order, on the calling thread (the sinks are not `Send`).
    Report {
        slot: usize,
        k: u64,
    },
}

/// Who does what next. Each lane decides its chunks in order and chunks are
/// reported in order, so the results do not depend on which thread ran what.
struct Schedule {
    slots: [SlotState; SLOTS],
    next_read: u64,
    reading: bool,
    /// The number of chunks, once a read has come back empty.
    total: Option<u64>,
    lane_next: Vec<u64>,
    lane_busy: Vec<bool>,
    next_report: u64,
    /// The first failure and the chunk it belongs to: a lane's failure on
    /// chunk `k` is returned before chunk `k` is reported, a read failure
    /// for chunk `k` after chunk `k - 1` is.
    error: Option<(u64, RunError)>,
    stop: bool,
}

impl Schedule {
    fn new(lanes: usize) -> Schedule {
        Schedule {
            slots: [SlotState::Free; SLOTS],
            next_read: 0,
            reading: false,
            total: None,
            lane_next: vec![0; lanes],
            lane_busy: vec![false; lanes],
            next_report: 0,
            error: None,
            stop: false,
        }
    }

    fn fail(&mut self, k: u64, e: RunError) {
        if self.error.as_ref().is_none_or(|(at, _)| k < *at) {
            self.error = Some((k, e));
        }
    }

    /// The next job for any thread: read ahead first, then the lane that
    /// is furthest behind.
    fn pick(&mut self) -> Option<Job> {
        let limit = self.error.as_ref().map_or(u64::MAX, |(k, _)| *k);
        if !self.reading
            && self.total.is_none()
            && self.next_read < limit
            && let Some(slot) = self.slots.iter().position(|s| *s == SlotState::Free)
        {
            self.slots[slot] = SlotState::Reading;
            self.reading = true;
            return Some(Job::Read { slot, k: self.next_read });
        }
        let mut best: Option<(u64, usize, usize)> = None;
        for (lane, (&k, &busy)) in self.lane_next.iter().zip(&self.lane_busy).enumerate() {
            if busy || k >= limit || best.is_some_and(|(bk, _, _)| bk <= k) {
                continue;
            }
            let ready =
                self.slots.iter().position(|s| matches!(*s, SlotState::Ready { k: sk, .. } if sk == k));
            if let Some(slot) = ready {
                best = Some((k, lane, slot));
            }
        }
        let (k, lane, slot) = best?;
        self.lane_busy[lane] = true;
        Some(Job::Decide { lane, slot, k })
    }

    /// What the calling thread, which alone reports chunks, does next.
    fn next_for_caller(&mut self) -> Next {
        let k = self.next_report;
        if self.error.as_ref().is_some_and(|(at, _)| *at <= k) {
            return Next::Failed;
        }
        if self.total == Some(k) {
            return Next::Done;
        }
        if let Some(slot) = self.slots.iter().position(|s| *s == SlotState::Decided { k }) {
            return Next::Job(Job::Report { slot, k });
        }
        self.pick().map_or(Next::Wait, Next::Job)
    }
}

/// See [`Schedule::next_for_caller`].
enum Next {
    Job(Job),
    Wait,
    Done,
    Failed,
}

/// Runs the arrivals through every limiter.
///
/// The calling thread and `rayon::current_num_threads() - 1` helpers (none
/// when called from inside a rayon pool, as the sweeps do) take jobs from
/// one [`Schedule`]: read the next chunk, decide a chunk on a lane, and (the
/// calling thread only) report a decided chunk.
pub fn run(
    config: &RunConfig,
    arrivals: impl Iterator<Item = ArrivalResult> + Send,
    mut decisions: Option<&mut dyn DecisionSink>,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunReport, RunError> {
    let (specs, reference) = with_reference(&config.limiters);
    let limit = config.limit;
    let record = decisions.is_some();
    let lanes: Vec<Mutex<AnyLane>> =
        specs.iter().map(|s| Mutex::new(AnyLane::new(s, limit, config.bin))).collect();
    if let Some(end) = config.end {
        // Refuse a too-fine explicit bin before any work is done.
        Timeline::new(config.bin, 1).reserve_until(Nanos::new(end.get().saturating_sub(1)))?;
    }
    let reader = Mutex::new(Reader {
        arrivals,
        end: config.end,
        ids: HashMap::default(),
        keys: Vec::new(),
        last: None,
        seq: 0,
        first: None,
        last_time: None,
        done: false,
        record_keys: record,
    });
    let slots: Vec<Slot> = (0..SLOTS)
        .map(|_| Slot {
            chunk: RwLock::new(Chunk::default()),
            outs: (0..lanes.len()).map(|_| Mutex::new(LaneOut::new(record))).collect(),
        })
        .collect();
    let schedule = Mutex::new(Schedule::new(lanes.len()));
    let wake = Condvar::new();
    let mut disagreements = vec![0u64; lanes.len()];

    // Runs one job that is not a report and records how it went.
    let work = |job: Job| {
        let done = match job {
            Job::Read { slot, k } => {
                let mut chunk = slots[slot].chunk.write().expect("chunk lock");
                let read = lock(&reader).fill(&mut chunk);
                let empty = chunk.times.is_empty();
                drop(chunk);
                let mut s = lock(&schedule);
                s.reading = false;
                match read {
                    Ok(()) if empty => {
                        s.total = Some(k);
                        s.slots[slot] = SlotState::Free;
                    }
                    Ok(()) => {
                        s.next_read = k + 1;
                        s.slots[slot] = SlotState::Ready { k, left: lanes.len() };
                    }
                    Err(e) => {
                        s.slots[slot] = SlotState::Free;
                        s.fail(k, e.into());
                    }
                }
                s
            }
            Job::Decide { lane, slot, k } => {
                let chunk = slots[slot].chunk.read().expect("chunk lock");
                let decided = lock(&lanes[lane]).process(&chunk, &mut lock(&slots[slot].outs[lane]));
                drop(chunk);
                let mut s = lock(&schedule);
                s.lane_busy[lane] = false;
                s.lane_next[lane] = k + 1;
                if let SlotState::Ready { k, left } = s.slots[slot] {
                    s.slots[slot] = if left == 1 {
                        SlotState::Decided { k }
                    } else {
                        SlotState::Ready { k, left: left - 1 }
                    };
                }
                if let Err(e) = decided {
                    s.fail(k, e.into());
                }
                s
            }
            Job::Report { .. } => unreachable!("reports run on the calling thread"),
        };
        drop(done);
        wake.notify_all();
    };

    let helpers = if rayon::current_thread_index().is_some() { 0 } else { rayon::current_num_threads() - 1 };
    let outcome = std::thread::scope(|scope| {
        for _ in 0..helpers {
            scope.spawn(|| {
                loop {
                    let mut s = lock(&schedule);
                    let job = loop {
                        if s.stop {
                            return;
                        }
                        if let Some(job) = s.pick() {
                            break job;
                        }
                        s = wake.wait(s).expect("schedule lock");
                    };
                    drop(s);
                    work(job);
                }
            });
        }
        let result = (|| loop {
            let mut s = lock(&schedule);
            let job = loop {
                match s.next_for_caller() {
                    Next::Job(job) => break job,
                    Next::Wait => s = wake.wait(s).expect("schedule lock"),
                    Next::Done => return Ok(()),
                    Next::Failed => return Err(s.error.take().expect("a failure").1),
                }
            };
            drop(s);
            match job {
                Job::Report { slot, k } => {
                    let chunk = slots[slot].chunk.read().expect("chunk lock");
                    let outs: Vec<_> = slots[slot].outs.iter().map(lock).collect();
                    let reference_bits = &outs[reference].bits;
                    for (count, out) in disagreements.iter_mut().zip(&outs) {
                        let differ: u32 =
                            out.bits.iter().zip(reference_bits).map(|(a, b)| (a ^ b).count_ones()).sum();
                        *count += u64::from(differ);
                    }
                    if let Some(sink) = decisions.as_deref_mut() {
                        write_decisions(sink, &chunk, &outs)?;
                    }
                    progress(Progress {
                        arrivals: chunk.first_seq + chunk.times.len() as u64,
                        now: *chunk.times.last().expect("chunk is not empty"),
                    });
                    drop(outs);
                    drop(chunk);
                    let mut s = lock(&schedule);
                    s.slots[slot] = SlotState::Free;
                    s.next_report = k + 1;
                    drop(s);
                    wake.notify_all();
                }
                other => work(other),
            }
        })();
        lock(&schedule).stop = true;
        wake.notify_all();
        result
    });
    outcome?;

    let reader = reader.into_inner().expect("reader lock");
    let mut lanes: Vec<AnyLane> = lanes.into_iter().map(|l| l.into_inner().expect("lane lock")).collect();
    let run_end = match config.end {
        Some(e) => e,
        None => reader.last_time.map_or(Nanos::ZERO, |t| Nanos::new(t.get().saturating_add(1))),
    };
    for (lane, differ) in lanes.iter_mut().zip(&disagreements) {
        lane.counts_mut().disagreements += differ;
        lane.finish(run_end)?;
    }
    progress(Progress { arrivals: reader.seq, now: run_end });

    let names = labels(&specs);
    let mut columns = Vec::with_capacity(lanes.len());
    let mut parts = Vec::with_capacity(lanes.len());
    for lane in lanes {
        let (counts, timeline, state) = lane.into_parts();
        columns.push(timeline);
        parts.push((counts, state));
    }
    let reference_admitted = parts[reference].0.admitted;
    let limiters = specs
        .into_iter()
        .zip(names)
        .zip(parts)
        .map(|((spec, label), (counts, state))| LimiterReport {
            spec,
            label,
            counts,
            state,
            reference_admitted,
            limit: limit.requests,
        })
        .collect();
    Ok(RunReport {
        limit,
        arrivals: reader.seq,
        keys: reader.keys.len() as u64,
        end: run_end,
        first_arrival: reader.first,
        last_arrival: reader.last_time,
        limiters,
        reference,
        timeline: Timeline::from_columns(columns),
    })
}

/// Locks a mutex; a poisoned lock means a thread panicked, which is a bug.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().expect("a run thread panicked")
}

fn write_decisions(
    sink: &mut dyn DecisionSink,
    chunk: &Chunk,
    outs: &[MutexGuard<'_, LaneOut>],
) -> Result<(), RunError> {
    for (j, (&time, &key)) in chunk.times.iter().zip(&chunk.key_values).enumerate() {
        for (i, out) in outs.iter().enumerate() {
            let record = DecisionRecord {
                seq: chunk.first_seq + j as u64,
                time,
                key,
                limiter: i,
                admitted: out.bits[j / 64] >> (j % 64) & 1 == 1,
                window_count: out.window_counts.as_ref().map_or(0, |w| w[j]),
            };
            sink.record(&record).map_err(RunError::Decisions)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Arrival;

    fn arrivals(v: &[(u64, u64)]) -> impl Iterator<Item = ArrivalResult> + Send + use<> {
        v.iter().map(|&(t, key)| Ok(Arrival { time: Nanos::new(t), key })).collect::<Vec<_>>().into_iter()
    }

    #[test]
    fn each_key_has_its_own_limiter() {
        // L = 1 per 10 ns. Keys 7 and 9 each get one request through per window.
        let config = RunConfig {
            limit: Limit { requests: 1, window: Nanos::new(10) },
            limiters: vec![LimiterSpec::SlotCounter { slots: 2 }],
            end: None,
            bin: None,
        };
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
        // requests in (t - W, t) before it, counted by brute force; the
        // second and third chunks once repeated the first chunk's counts.
        let n = CHUNK as u64 * 2 + 100;
        let times: Vec<(u64, u64)> = (0..n).map(|i| (i * 3, 0)).collect();
        let config = RunConfig {
            limit: Limit { requests: 5, window: Nanos::new(100) },
            limiters: vec![LimiterSpec::SlotCounter { slots: 4 }],
            end: None,
            bin: None,
        };
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
            limit: Limit { requests: 5, window: Nanos::new(100) },
            limiters: vec![LimiterSpec::FixedWindow {
                align: crate::limiter::WindowAlign::Epoch { offset: Nanos::new(0) },
            }],
            end: None,
            bin: Some(Nanos::new(1000)),
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
}
