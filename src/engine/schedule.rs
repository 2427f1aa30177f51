//! Who runs what: the reader, the lanes and the report of each chunk.
//!
//! Threaded, the reader and every lane get a thread of their own, joined by
//! bounded `std::sync::mpsc` channels: the reader hands each chunk to every
//! lane (at most [`AHEAD`] chunks ahead of the slowest lane), each lane
//! decides its chunks in order and hands back its output, and the calling
//! thread reports chunk after chunk (disagreements, decisions, progress:
//! the sinks are not `Send`). Buffers go back to where they came from, so a
//! run holds a handful of chunks whatever its length. On one thread (or
//! inside a rayon pool, where the sweeps run many engines at once) the same
//! steps run in a plain loop. Each lane sees the same chunks in the same
//! order either way, so results never depend on the thread count.
//!
//! Errors keep the trace's order: a lane's failure on chunk `k` is returned
//! before chunk `k` is reported, a read failure for chunk `k` after chunk
//! `k - 1` is. When the reporter stops, it drops its ends of the channels
//! and every other thread finds its channel closed and returns.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use super::RunError;
use super::lane::{LaneOps, LaneOut};
use super::reader::{Chunk, Reader};
use crate::trace::ArrivalResult;

/// Chunks a lane's inbox holds: how far the reader may run ahead of it.
pub const AHEAD: usize = 4;

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
        run_threaded(reader, lanes, record, report)
    } else {
        run_in_turn(reader, lanes, record, report)
    }
}

/// Runs every lane's pending events (those before `end`, or all of them)
/// once the arrivals are done, the lanes side by side when threaded;
/// returns the time of each lane's last one.
pub fn run_pending(
    lanes: &mut [Box<dyn LaneOps>],
    outs: &mut [LaneOut],
    end: Option<crate::time::Nanos>,
) -> Result<Vec<Option<crate::time::Nanos>>, RunError> {
    if !threaded() {
        return lanes
            .iter_mut()
            .zip(outs)
            .map(|(l, o)| l.run_pending(end, o).map_err(RunError::from))
            .collect();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> =
            lanes.iter_mut().zip(outs).map(|(l, o)| scope.spawn(move || l.run_pending(end, o))).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a lane thread panicked").map_err(RunError::from))
            .collect()
    })
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

/// One lane's ends of its channels.
struct LaneLink {
    inbox: Receiver<Arc<Chunk>>,
    outbox: SyncSender<Result<LaneOut, RunError>>,
    /// Outputs the reporter is done with, to reuse.
    spent: Receiver<LaneOut>,
}

/// The reader, each lane and the reporter on threads of their own.
fn run_threaded<I: Iterator<Item = ArrivalResult> + Send>(
    reader: &mut Reader<I>,
    lanes: &mut [Box<dyn LaneOps>],
    record: bool,
    report: &mut Report<'_>,
) -> Result<(), RunError> {
    let mut inboxes = Vec::new();
    let mut links = Vec::new();
    let mut outboxes = Vec::new();
    let mut spent_senders = Vec::new();
    for _ in 0..lanes.len() {
        let (to_lane, inbox) = sync_channel::<Arc<Chunk>>(AHEAD);
        let (outbox, from_lane) = sync_channel(AHEAD);
        let (spent_tx, spent) = sync_channel(AHEAD + 2);
        inboxes.push(to_lane);
        links.push(LaneLink { inbox, outbox, spent });
        outboxes.push(from_lane);
        spent_senders.push(spent_tx);
    }
    // Chunks in the order read, for the reporter; and used chunk buffers
    // back to the reader.
    let (to_reporter, chunks) = sync_channel::<Result<Arc<Chunk>, RunError>>(AHEAD + 2);
    let (recycle, recycled) = sync_channel::<Chunk>(AHEAD + 2);
    std::thread::scope(|scope| {
        scope.spawn(move || read_chunks(reader, &inboxes, &to_reporter, &recycled));
        for (lane, link) in lanes.iter_mut().zip(links) {
            scope.spawn(move || decide_chunks(lane.as_mut(), link, record));
        }
        // The reporter owns its receivers: when it returns, early on an
        // error too, they close and every other thread stops.
        report_chunks(chunks, outboxes, &spent_senders, &recycle, report)
    })
}

/// The reader's thread: fills chunks (reusing returned buffers) and sends
/// each to every lane, then to the reporter. Stops at the end of the trace,
/// at a read error (sent to the reporter) or when a receiver has gone.
fn read_chunks<I: Iterator<Item = ArrivalResult>>(
    reader: &mut Reader<I>,
    inboxes: &[SyncSender<Arc<Chunk>>],
    to_reporter: &SyncSender<Result<Arc<Chunk>, RunError>>,
    recycled: &Receiver<Chunk>,
) {
    loop {
        let mut chunk = recycled.try_recv().unwrap_or_default();
        if let Err(e) = reader.fill(&mut chunk) {
            let _ = to_reporter.send(Err(e.into()));
            return;
        }
        if chunk.times.is_empty() {
            return;
        }
        let chunk = Arc::new(chunk);
        for inbox in inboxes {
            if inbox.send(Arc::clone(&chunk)).is_err() {
                return;
            }
        }
        if to_reporter.send(Ok(chunk)).is_err() {
            return;
        }
    }
}

/// A lane's thread: decides every chunk in its inbox, in order.
fn decide_chunks(lane: &mut dyn LaneOps, link: LaneLink, record: bool) {
    while let Ok(chunk) = link.inbox.recv() {
        let mut out = link.spent.try_recv().unwrap_or_else(|_| LaneOut::new(record));
        let decided = lane.process(&chunk, &mut out).map(|()| out).map_err(RunError::from);
        drop(chunk);
        let failed = decided.is_err();
        if link.outbox.send(decided).is_err() || failed {
            return;
        }
    }
}

/// The calling thread: reports chunk after chunk once every lane has
/// decided it, and sends the buffers back.
fn report_chunks(
    chunks: Receiver<Result<Arc<Chunk>, RunError>>,
    outboxes: Vec<Receiver<Result<LaneOut, RunError>>>,
    spent: &[SyncSender<LaneOut>],
    recycle: &SyncSender<Chunk>,
    report: &mut Report<'_>,
) -> Result<(), RunError> {
    let mut outs = Vec::with_capacity(outboxes.len());
    // The trace has ended when the reader hangs up.
    while let Ok(chunk) = chunks.recv() {
        let chunk = chunk?;
        outs.clear();
        for outbox in &outboxes {
            // A lane that hung up without a result has seen a failure that
            // another lane or the reader reports; it cannot happen alone.
            let out = outbox.recv().map_err(|_| RunError::LaneStopped)?;
            outs.push(out?);
        }
        report(&chunk, &outs)?;
        for (out, back) in outs.drain(..).zip(spent) {
            let _ = back.try_send(out);
        }
        if let Ok(chunk) = Arc::try_unwrap(chunk) {
            let _ = recycle.try_send(chunk);
        }
    }
    Ok(())
}
