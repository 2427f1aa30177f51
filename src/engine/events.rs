//! A lane's own event queue: the events a lane schedules for itself (a
//! client's retry, a delayed release), kept in a binary heap ordered by
//! (time, sequence). The sequence is the order of scheduling, so events at
//! the same instant come back first in, first out, as in a discrete-event
//! simulator's calendar. The lane merges them with the shared arrivals
//! (`lane.rs` says how ties between the two are broken).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::Nanos;

/// One scheduled event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event<P> {
    pub time: Nanos,
    /// Order of scheduling within the lane: FIFO among equal times.
    pub seq: u64,
    pub payload: P,
}

/// Heap entry: the smallest (time, seq) on top.
struct Entry<P>(Event<P>);

impl<P> PartialEq for Entry<P> {
    fn eq(&self, other: &Self) -> bool {
        (self.0.time, self.0.seq) == (other.0.time, other.0.seq)
    }
}
impl<P> Eq for Entry<P> {}
impl<P> PartialOrd for Entry<P> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<P> Ord for Entry<P> {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.0.time, other.0.seq).cmp(&(self.0.time, self.0.seq))
    }
}

/// A calendar of pending events. Holds only what is scheduled and not yet
/// run, so its memory is bounded by the pending events, not by the trace.
pub struct EventQueue<P> {
    heap: BinaryHeap<Entry<P>>,
    next_seq: u64,
    /// The earliest pending time, `u64::MAX` when empty: one comparison per
    /// arrival tells the lane there is nothing to merge.
    next_time: u64,
}

impl<P> Default for EventQueue<P> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), next_seq: 0, next_time: u64::MAX }
    }
}

impl<P> EventQueue<P> {
    pub fn new() -> EventQueue<P> {
        EventQueue::default()
    }

    /// Schedules `payload` at `time`, after everything already scheduled
    /// for the same instant.
    pub fn schedule(&mut self, time: Nanos, payload: P) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry(Event { time, seq, payload }));
        self.next_time = self.next_time.min(time.get());
    }

    /// The earliest pending time as a number, `u64::MAX` when none is pending.
    #[inline(always)]
    pub fn next_time(&self) -> u64 {
        self.next_time
    }

    /// Removes and returns the earliest event if it is due strictly before `t`.
    pub fn pop_before(&mut self, t: Nanos) -> Option<Event<P>> {
        if self.next_time >= t.get() {
            return None;
        }
        let Entry(event) = self.heap.pop()?;
        self.next_time = self.heap.peek().map_or(u64::MAX, |e| e.0.time.get());
        Some(event)
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Bytes the queue's buffer holds (its capacity, which never shrinks:
    /// the most events it held at once).
    pub fn bytes(&self) -> u64 {
        (self.heap.capacity() * std::mem::size_of::<Entry<P>>()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_fifo_on_ties() {
        let mut q = EventQueue::new();
        q.schedule(Nanos::new(30), 'a');
        q.schedule(Nanos::new(10), 'b');
        q.schedule(Nanos::new(30), 'c');
        q.schedule(Nanos::new(10), 'd');
        q.schedule(Nanos::new(20), 'e');
        assert_eq!(q.next_time(), 10);
        // Nothing is due before 10.
        assert!(q.pop_before(Nanos::new(10)).is_none());
        let order: Vec<char> = std::iter::from_fn(|| q.pop_before(Nanos::MAX)).map(|e| e.payload).collect();
        assert_eq!(order, ['b', 'd', 'e', 'a', 'c']);
        assert_eq!(q.next_time(), u64::MAX);
        assert!(q.is_empty());
    }
}
