//! A lane: one limiter configuration, one instance of it per client key,
//! with its exact metrics (`docs/semantics.md`, "Metrics"). A lane decides
//! every arrival of every chunk in order, merged with the events it
//! schedules for itself in its own [`EventQueue`]; lanes never look at each
//! other, so the schedule may run them on any thread.
//!
//! Order: an arrival at `t` is decided after every scheduled event due
//! strictly before `t`, and before the events due at `t` itself (open-loop
//! arrivals come first at an instant, in trace order; then the lane's own
//! events, first scheduled first). Events still pending at the end of a
//! chunk wait for the next chunk, or for [`LaneOps::finish`] at the end of
//! the run, so the order does not depend on where chunks are cut.

use super::events::EventQueue;
use super::reader::{CHUNK, Chunk};
use crate::limiter::{Algorithm, Limit, Limiter, SpecVisitor, StateSize};
use crate::metrics::{Counts, CurveTracker, WindowCounts, WindowTracker};
use crate::time::Nanos;
use crate::timeline::{Bin, Timeline, TooManyBins};

/// What follows from a lane's decisions: the events the lane schedules for
/// itself. Open-loop runs react to nothing ([`OpenLoop`]).
pub trait Reactor: Send + 'static {
    /// What an event carries besides its time and key.
    type Event: Copy + Send + 'static;
    /// Called after every decision with what was decided; may schedule
    /// events at or after `decided.time`.
    fn react(&mut self, decided: &Decided<'_, Self::Event>, queue: &mut EventQueue<Scheduled<Self::Event>>);
}

/// A decision as a [`Reactor`] sees it. (Only the tests' reactors read it
/// until a source reacts to decisions.)
#[cfg_attr(not(test), allow(dead_code))]
pub struct Decided<'a, E> {
    pub time: Nanos,
    /// The dense key id of the request.
    pub key: u32,
    pub admitted: bool,
    /// The scheduled event that was decided, or `None` for an arrival.
    pub event: Option<&'a E>,
}

/// An event in a lane's queue: a request of client `key` to decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scheduled<E> {
    pub key: u32,
    pub event: E,
}

/// Nothing reacts: the lane decides the shared arrivals only.
pub struct OpenLoop;

impl Reactor for OpenLoop {
    type Event = ();
    #[inline(always)]
    fn react(&mut self, _: &Decided<'_, ()>, _: &mut EventQueue<Scheduled<()>>) {}
}

/// What the schedule needs of a lane, whatever its limiter.
pub trait LaneOps: Send {
    /// Decides a chunk and updates the metrics; writes one decision bit per
    /// arrival into `out` (and each window count when `out` records them).
    fn process(&mut self, chunk: &Chunk, out: &mut LaneOut) -> Result<(), TooManyBins>;
    /// Runs the events still pending before `end` and extends the timeline to it.
    fn finish(&mut self, end: Nanos) -> Result<(), TooManyBins>;
    fn counts_mut(&mut self) -> &mut Counts;
    fn into_result(self: Box<Self>) -> LaneResult;
}

/// What a lane measured over the run.
pub struct LaneResult {
    pub counts: Counts,
    pub timeline: Timeline,
    /// The peak state, summed over keys.
    pub state: StateSize,
    /// The admission curve (the largest over keys), if measured.
    pub curve: Vec<(Nanos, u64)>,
}

/// Builds an open-loop lane for a spec, monomorphised over its limiter.
pub struct MakeLane {
    pub limit: Limit,
    pub bin: Option<Nanos>,
    /// Measure the admission curve.
    pub curve: bool,
}

impl SpecVisitor for MakeLane {
    type Out = Box<dyn LaneOps>;
    fn visit<A: Algorithm>(self, spec: &A) -> Box<dyn LaneOps> {
        let mut lane = Lane::new(spec.build(self.limit), self.limit, self.bin, OpenLoop);
        lane.curve = self.curve;
        Box::new(lane)
    }
}

/// What a lane hands back for one chunk, besides its own counters.
pub struct LaneOut {
    /// One bit per arrival: admitted or not.
    pub bits: Vec<u64>,
    /// Each arrival's exact window count, kept only when decisions are written.
    pub window_counts: Option<Vec<u64>>,
}

impl LaneOut {
    pub fn new(record: bool) -> LaneOut {
        LaneOut { bits: vec![0; CHUNK / 64], window_counts: record.then(|| Vec::with_capacity(CHUNK)) }
    }

    pub fn admitted(&self, j: usize) -> bool {
        self.bits[j / 64] >> (j % 64) & 1 == 1
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
    events: EventQueue<Scheduled<R::Event>>,
    reactor: R,
    /// Measure the admission curve: one tracker per key in `curves`.
    curve: bool,
    curves: Vec<CurveTracker>,
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
    /// Scheduled attempts decided in this pass, and how many were admitted.
    events: u64,
    events_admitted: u64,
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
        }
    }
}

impl<L: Limiter + Clone + Send + 'static, R: Reactor> Lane<L, R> {
    pub fn new(prototype: L, limit: Limit, bin: Option<Nanos>, reactor: R) -> Lane<L, R> {
        let self_tracking = prototype.clone().exact_window_count(Nanos::ZERO).is_some();
        Lane {
            self_tracking,
            prototype,
            window: limit.window,
            limit: limit.requests,
            keys: Vec::new(),
            counts: Counts::default(),
            timeline: Timeline::new(bin, 1),
            events: EventQueue::new(),
            reactor,
            curve: false,
            curves: Vec::new(),
        }
    }

    /// Makes sure every key id below `keys` has its state.
    fn grow_keys(&mut self, keys: usize) {
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
    /// scheduled event before it) and updates the metrics. Returns whether
    /// it was admitted and the window count it found.
    #[inline(always)]
    fn attempt<const OWN: bool, const CURVE: bool>(
        &mut self,
        p: &mut Pass,
        t: Nanos,
        id: u32,
        j: usize,
    ) -> Result<(bool, u64), TooManyBins> {
        if t.get() >= p.bin_end {
            self.next_bin::<OWN>(p, t, j)?;
        }
        let ks = &mut self.keys[id as usize];
        let before = ks.window_count(t, OWN);
        let admitted = ks.limiter.decide(t, 1).admitted();
        if admitted && !OWN {
            ks.tracker.admit(t);
        }
        if CURVE && admitted {
            self.curves[id as usize].admit(t);
        }
        p.window.record(self.limit, before, admitted);
        p.bin.record_admitted(admitted, before + u64::from(admitted));
        Ok((admitted, before))
    }

    /// Decides the scheduled events due strictly before `t`, in (time,
    /// sequence) order; `j` arrivals of the pass come before them.
    #[cold]
    #[inline(never)]
    fn run_events<const OWN: bool, const CURVE: bool>(
        &mut self,
        p: &mut Pass,
        t: Nanos,
        j: usize,
    ) -> Result<(), TooManyBins> {
        let mut last = Nanos::ZERO;
        while let Some(ev) = self.events.pop_before(t) {
            assert!(ev.time >= last, "an event was scheduled in the past");
            last = ev.time;
            let Scheduled { key, event } = ev.payload;
            self.grow_keys(key as usize + 1);
            let (admitted, _) = self.attempt::<OWN, CURVE>(p, ev.time, key, j)?;
            p.bin_events += 1;
            p.events += 1;
            p.events_admitted += u64::from(admitted);
            let decided = Decided { time: ev.time, key, admitted, event: Some(&event) };
            self.reactor.react(&decided, &mut self.events);
        }
        Ok(())
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
        for (j, (&t, &id)) in chunk.times.iter().zip(&chunk.ids).enumerate() {
            if t.get() > self.events.next_time() {
                self.run_events::<OWN, CURVE>(&mut p, t, j)?;
            }
            let (admitted, before) = self.attempt::<OWN, CURVE>(&mut p, t, id, j)?;
            bits |= u64::from(admitted) << (j % 64);
            if j % 64 == 63 {
                out.bits[j / 64] = bits;
                bits = 0;
            }
            if RECORD && let Some(wc) = &mut window_counts {
                wc.push(before);
            }
            let decided = Decided { time: t, key: id, admitted, event: None };
            self.reactor.react(&decided, &mut self.events);
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
        Ok(())
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
        // One loop per combination, so no choice is a test per arrival.
        match (self.self_tracking, out.window_counts.is_some(), self.curve) {
            (false, false, false) => self.decide_chunk::<false, false, false>(chunk, out),
            (true, false, false) => self.decide_chunk::<true, false, false>(chunk, out),
            (false, true, false) => self.decide_chunk::<false, true, false>(chunk, out),
            (true, true, false) => self.decide_chunk::<true, true, false>(chunk, out),
            (false, false, true) => self.decide_chunk::<false, false, true>(chunk, out),
            (true, false, true) => self.decide_chunk::<true, false, true>(chunk, out),
            (false, true, true) => self.decide_chunk::<false, true, true>(chunk, out),
            (true, true, true) => self.decide_chunk::<true, true, true>(chunk, out),
        }
    }

    fn finish(&mut self, end: Nanos) -> Result<(), TooManyBins> {
        let own = self.self_tracking;
        if !self.events.is_empty() {
            let mut p = Pass::new(self.counts.peak);
            match (own, self.curve) {
                (true, true) => self.run_events::<true, true>(&mut p, end, 0),
                (true, false) => self.run_events::<true, false>(&mut p, end, 0),
                (false, true) => self.run_events::<false, true>(&mut p, end, 0),
                (false, false) => self.run_events::<false, false>(&mut p, end, 0),
            }?;
            self.close_bin(&mut p, 0);
            self.counts.add_chunk(p.events, p.events_admitted, &p.window);
        }
        let keys = &mut self.keys;
        self.timeline.extend_to(end, |_, start| Self::carry(keys, start, own))
    }

    fn counts_mut(&mut self) -> &mut Counts {
        &mut self.counts
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
        LaneResult { counts: self.counts, timeline: self.timeline, state, curve }
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
        fn react(&mut self, d: &Decided<'_, u64>, queue: &mut EventQueue<Scheduled<u64>>) {
            self.log.push((d.time.get(), d.key, d.admitted, d.event.is_some()));
            if !d.admitted && d.event.is_none() {
                queue.schedule(d.time + Nanos::new(5), Scheduled { key: d.key, event: d.time.get() });
            }
        }
    }

    fn chunk(arrivals: &[(u64, u32)]) -> Chunk {
        Chunk {
            first_seq: 0,
            times: arrivals.iter().map(|&(t, _)| Nanos::new(t)).collect(),
            ids: arrivals.iter().map(|&(_, k)| k).collect(),
            keys: arrivals.iter().map(|&(_, k)| k as usize + 1).max().unwrap_or(0),
            key_values: Vec::new(),
        }
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
        lane.finish(Nanos::new(30)).unwrap();
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
