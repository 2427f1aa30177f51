//! Who runs what: the reader, the lanes and the report of each chunk.
//!
//! Threaded, the reader and every lane are tasks on rayon's pool (one
//! thread per core). A task keeps going while it has work: the reader
//! while fewer than [`IN_FLIGHT`] chunks wait to be reported, a lane while
//! the reader is ahead of it. Then it *parks*: it returns, leaving its
//! reader or lane in the shared state, and whoever next makes work for it
//! (the reader publishing a chunk, the reporter freeing room) spawns it
//! again. Reading comes first: a lane task that finds the reader parked
//! with room runs it before its own next chunk, since every lane waits on
//! it. The calling thread reports chunk after chunk in order
//! (disagreements, decisions, progress: the sinks are not `Send`, so it
//! runs inside `rayon::in_place_scope`) and recycles the buffers, so a run
//! holds a handful of chunks whatever its length. Nothing waits for the
//! slowest lane of a chunk and no more threads run than there are cores;
//! `docs/performance.md` ("Scheduling the lanes") has the measurements
//! against a thread per lane with bounded channels and against lock-step
//! chunks, both slower. On one thread (or inside a rayon pool, where the
//! sweeps run many engines at once) the same steps run in a plain loop.
//! Each lane sees the same chunks in the same order either way, so results
//! never depend on the thread count.
//!
//! Errors keep the trace's order: a lane's failure on chunk `k` is returned
//! after chunk `k - 1` is reported and before chunk `k` is, a read failure
//! for chunk `k` the same; a failing report stops every task.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use rayon::prelude::*;

use super::RunError;
use super::lane::{LaneOps, LaneOut, PendingSlice};
use super::reader::{Chunk, Reader};
use crate::time::Nanos;
use crate::timeline::TooManyBins;
use crate::trace::ArrivalResult;

/// Reports one decided chunk with every lane's output for it, in lane order.
pub type Report<'a> = dyn FnMut(&Chunk, &[LaneOut]) -> Result<(), RunError> + 'a;

/// Whether to run on threads: more than one is available and this is not
/// already a rayon worker.
pub fn threaded() -> bool {
    rayon::current_thread_index().is_none() && rayon::current_num_threads() > 1
}

/// Reads every chunk, has every lane decide it and reports it.
pub fn run<I>(
    reader: &mut Reader<I>,
    lanes: &mut [Box<dyn LaneOps>],
    record: bool,
    report: &mut Report<'_>,
) -> Result<(), RunError>
where
    I: Iterator<Item = ArrivalResult> + Send,
{
    if threaded() {
        run_pooled(reader, lanes, record, report)
    } else {
        run_in_turn(reader, lanes, record, report)
    }
}

/// Runs one slice (at most `max_events` attempts per lane) of every lane's
/// pending events (those before `end`, or all of them) once the arrivals
/// are done, the lanes side by side when threaded; says for each lane
/// when its last one was and whether it is done.
pub fn run_pending(
    lanes: &mut [Box<dyn LaneOps>],
    outs: &mut [LaneOut],
    end: Option<Nanos>,
    max_events: u64,
) -> Result<Vec<PendingSlice>, RunError> {
    let pending = |(lane, out): (&mut Box<dyn LaneOps>, &mut LaneOut)| lane.run_pending(end, max_events, out);
    let ran: Result<Vec<_>, TooManyBins> = if threaded() {
        lanes.par_iter_mut().zip(outs.par_iter_mut()).map(pending).collect()
    } else {
        lanes.iter_mut().zip(outs.iter_mut()).map(pending).collect()
    };
    Ok(ran?)
}

/// The plain loop: read, decide on each lane, report.
fn run_in_turn<I: Iterator<Item = ArrivalResult>>(
    reader: &mut Reader<I>,
    lanes: &mut [Box<dyn LaneOps>],
    record: bool,
    report: &mut Report<'_>,
) -> Result<(), RunError> {
    let mut chunk = Chunk::default();
    let mut outs: Vec<LaneOut> = lanes.iter().map(|_| LaneOut::new(record)).collect();
    loop {
        reader.fill(&mut chunk)?;
        if chunk.times.is_empty() {
            return Ok(());
        }
        for (lane, out) in lanes.iter_mut().zip(&mut outs) {
            lane.process(&chunk, out)?;
        }
        report(&chunk, &outs)?;
    }
}

/// Chunks read and not yet reported: how far the reader may run ahead of
/// the report. With the one being reported, a lane's outputs for up to
/// `IN_FLIGHT + 1` chunks are held at once (the attempts a lane keeps for
/// decisions.csv count them all against its share of the memory budget:
/// [`super::lane::Overrun`]).
pub(super) const IN_FLIGHT: usize = 4;

/// What the tasks of [`run_pooled`] share, under one lock.
struct State<'a, I> {
    /// The reader, when no task holds it: parked because `IN_FLIGHT`
    /// chunks wait, or done.
    reader: Option<&'a mut Reader<I>>,
    /// Each lane, when no task holds it: parked until its next chunk is
    /// read.
    lanes: Vec<Option<&'a mut Box<dyn LaneOps>>>,
    /// Chunks read and not reported; the first is chunk `first`.
    chunks: std::collections::VecDeque<Arc<Chunk>>,
    first: u64,
    /// Each lane's output for each chunk of `chunks`, once decided.
    outs: std::collections::VecDeque<Vec<Option<LaneOut>>>,
    /// The chunk each lane decides next.
    lane_next: Vec<u64>,
    /// The trace has ended after the chunks read.
    ended: bool,
    /// The first failure and the chunk it belongs to: reported once every
    /// chunk before it is.
    failure: Option<(u64, RunError)>,
    /// The reporter has returned: every task stops.
    stop: bool,
    /// A task panicked: the reporter returns at once, and the scope then
    /// hands the panic on, instead of waiting for a chunk never decided.
    panicked: bool,
    /// Buffers the reporter is done with, to reuse.
    spare_chunks: Vec<Chunk>,
    spare_outs: Vec<Vec<LaneOut>>,
}

impl<I> State<'_, I> {
    fn fail(&mut self, k: u64, error: RunError) {
        if self.failure.as_ref().is_none_or(|(first, _)| k < *first) {
            self.failure = Some((k, error));
        }
    }

    /// Whether the reader may read another chunk.
    fn has_room(&self) -> bool {
        !self.stop && !self.ended && self.failure.is_none() && self.chunks.len() < IN_FLIGHT
    }

    /// Whether the reporter can act: the first chunk is decided by every
    /// lane, or it has failed, or the trace has ended.
    fn reportable(&self) -> bool {
        self.panicked
            || self.failure.as_ref().is_some_and(|(k, _)| *k == self.first)
            || self.outs.front().is_some_and(|o| o.iter().all(Option::is_some))
            || (self.chunks.is_empty() && self.ended)
    }
}

struct Shared<'a, I> {
    state: Mutex<State<'a, I>>,
    /// Signalled when the first chunk may have become reportable.
    reportable: Condvar,
    record: bool,
}

impl<'a, I> Shared<'a, I> {
    fn lock(&self) -> MutexGuard<'_, State<'a, I>> {
        // A task that panicked has poisoned the lock; its panic reaches the
        // caller when the scope ends, so the state is still good to finish.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Work-conserving: the reader and every lane are rayon tasks that keep
/// going while they have work and park (return, leaving their reader or
/// lane in the shared state) when they have none; whoever makes work for a
/// parked one spawns it again. The calling thread reports chunks in order.
fn run_pooled<'a, I: Iterator<Item = ArrivalResult> + Send>(
    reader: &'a mut Reader<I>,
    lanes: &'a mut [Box<dyn LaneOps>],
    record: bool,
    report: &mut Report<'_>,
) -> Result<(), RunError> {
    let lane_count = lanes.len();
    let shared = Shared {
        state: Mutex::new(State {
            reader: None,
            lanes: lanes.iter_mut().map(Some).collect(),
            chunks: Default::default(),
            first: 0,
            outs: Default::default(),
            lane_next: vec![0; lane_count],
            ended: false,
            failure: None,
            stop: false,
            panicked: false,
            spare_chunks: Vec::new(),
            spare_outs: Vec::new(),
        }),
        reportable: Condvar::new(),
        record,
    };
    rayon::in_place_scope(|scope| {
        let shared = &shared;
        scope.spawn(move |scope| read_task(scope, shared, reader));
        let result = report_in_order(scope, shared, report);
        shared.lock().stop = true;
        result
    })
}

/// The calling thread's part: waits for the first chunk to be decided by
/// every lane, reports it, recycles its buffers and restarts the reader if
/// it was waiting for room.
fn report_in_order<'s, 'a: 's, I: Iterator<Item = ArrivalResult> + Send>(
    scope: &rayon::Scope<'s>,
    shared: &'s Shared<'a, I>,
    report: &mut Report<'_>,
) -> Result<(), RunError> {
    loop {
        let mut s = shared.lock();
        while !s.reportable() {
            s = shared.reportable.wait(s).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        if s.panicked {
            return Ok(()); // the scope re-raises the task's panic
        }
        if s.failure.as_ref().is_some_and(|(k, _)| *k == s.first) {
            return Err(s.failure.take().expect("a failure").1);
        }
        let (Some(chunk), Some(outs)) = (s.chunks.pop_front(), s.outs.pop_front()) else {
            return Ok(()); // the trace has ended
        };
        s.first += 1;
        drop(s);
        let mut outs: Vec<LaneOut> = outs.into_iter().map(|o| o.expect("decided")).collect();
        report(&chunk, &outs)?;
        // A spare keeps no attempts: they are written, and a lane counts
        // only its last chunks' against its share of the budget.
        outs.iter_mut().for_each(LaneOut::drop_attempts);
        let mut s = shared.lock();
        if let Ok(chunk) = Arc::try_unwrap(chunk) {
            s.spare_chunks.push(chunk);
        }
        s.spare_outs.push(outs);
        if s.has_room()
            && let Some(reader) = s.reader.take()
        {
            scope.spawn(move |scope| read_task(scope, shared, reader));
        }
    }
}

/// The reader's task: reads chunks while fewer than [`IN_FLIGHT`] wait,
/// and wakes the lanes parked on each.
fn read_task<'s, 'a: 's, I: Iterator<Item = ArrivalResult> + Send>(
    scope: &rayon::Scope<'s>,
    shared: &'s Shared<'a, I>,
    reader: &'a mut Reader<I>,
) {
    let _wake = WakeOnPanic(shared);
    loop {
        let mut s = shared.lock();
        if !s.has_room() {
            s.reader = Some(reader);
            return;
        }
        let mut chunk = s.spare_chunks.pop().unwrap_or_default();
        drop(s);
        let read = reader.fill(&mut chunk);
        let mut s = shared.lock();
        let k = s.first + s.chunks.len() as u64;
        match read {
            Ok(()) if !chunk.times.is_empty() => {
                s.chunks.push_back(Arc::new(chunk));
                let outs = s.lane_next.iter().map(|_| None).collect();
                s.outs.push_back(outs);
                for j in 0..s.lanes.len() {
                    if s.lane_next[j] == k
                        && let Some(lane) = s.lanes[j].take()
                    {
                        scope.spawn(move |scope| lane_task(scope, shared, j, lane));
                    }
                }
            }
            Ok(()) => {
                s.ended = true;
                s.reader = Some(reader);
                shared.reportable.notify_one();
                return;
            }
            Err(e) => {
                s.fail(k, e.into());
                s.ended = true;
                shared.reportable.notify_one();
                return;
            }
        }
    }
}

/// Lane `j`'s task: decides the chunks read, in order, and parks when it
/// has caught up with the reader.
fn lane_task<'s, 'a: 's, I: Iterator<Item = ArrivalResult> + Send>(
    scope: &rayon::Scope<'s>,
    shared: &'s Shared<'a, I>,
    j: usize,
    lane: &'a mut Box<dyn LaneOps>,
) {
    let _wake = WakeOnPanic(shared);
    loop {
        let mut s = shared.lock();
        // Reading comes first (every lane waits on it): a parked reader
        // with room to read runs here, before this lane's next chunk.
        if s.has_room()
            && let Some(reader) = s.reader.take()
        {
            drop(s);
            read_task(scope, shared, reader);
            continue;
        }
        let k = s.lane_next[j];
        let Some(chunk) = (!s.stop).then(|| s.chunks.get((k - s.first) as usize).cloned()).flatten() else {
            s.lanes[j] = Some(lane);
            return;
        };
        let mut out = s
            .spare_outs
            .iter_mut()
            .find_map(|outs| outs.pop())
            .unwrap_or_else(|| LaneOut::new(shared.record));
        drop(s);
        let decided = lane.process(&chunk, &mut out);
        drop(chunk);
        let mut s = shared.lock();
        let i = (k - s.first) as usize;
        match decided {
            Ok(()) => s.outs[i][j] = Some(out),
            Err(e) => {
                // The lane stops here; the run stops when the reporter
                // reaches chunk `k`.
                s.fail(k, e.into());
                shared.reportable.notify_one();
                return;
            }
        }
        s.lane_next[j] = k + 1;
        if i == 0 && s.reportable() {
            shared.reportable.notify_one();
        }
    }
}

/// Held by every task: if the task panics (a bug, never bad input), the
/// reporter learns it and stops waiting, so the run fails with the panic
/// rather than hanging.
struct WakeOnPanic<'s, 'a, I>(&'s Shared<'a, I>);

impl<I> Drop for WakeOnPanic<'_, '_, I> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut s = self.0.lock();
            s.panicked = true;
            s.stop = true;
            self.0.reportable.notify_one();
        }
    }
}
