//! A lane's own event queue: the events a lane schedules for itself (a
//! client's retry, a closed client's next request, a delayed release).
//! They come back in (time, order of scheduling) order: events at the same
//! instant first in, first out, as in a discrete-event simulator's
//! calendar. The lane merges them with the shared arrivals (`lane.rs` says
//! how ties between the two are broken).
//!
//! # A monotone radix heap
//!
//! The queue relies on what a lane guarantees: nothing is scheduled before
//! the time of the last event taken out (a lane schedules only at or after
//! the decision it reacts to, and takes events out in time order). Call
//! that time `last`. Every pending time `t` is then at or after `last`, and
//! it is filed by the highest 6-bit digit in which it differs from `last`
//! (its *level*) and its own value of that digit: bucket (level, digit)
//! holds the times that agree with `last` above that digit and have that
//! digit. Buckets in (level, digit) order are in time order: every time in
//! one is earlier than every time in the next. One 64-bit word per level
//! says which of its 64 buckets are occupied, one more word which levels
//! are, so the earliest occupied bucket is two `trailing_zeros` away.
//!
//! Taking out the earliest event when none is due at `last` empties the
//! earliest occupied bucket: its earliest time (kept per bucket) becomes
//! `last`, its events at that time are due now, and the others are filed
//! again, each at a lower level than before (they now agree with `last` on
//! one more digit). An event is filed at most 11 times (64 / 6 levels) and,
//! in the closed-loop and retry benches, about twice: scheduling and taking
//! out are a few instructions and no comparison chain, where a binary heap
//! of 1000 events does about 10 dependent, unpredictable comparisons per
//! pop (`docs/performance.md`, "The lane's event queue").
//!
//! Ties stay first in, first out with no sequence number: an event's bucket
//! is a function of its time and `last` only, so all pending events of one
//! time are in one bucket; a bucket is a list kept in the order events
//! joined it, and refiling a bucket walks it in order into buckets that are
//! empty (all are later than the bucket being emptied, and it was the
//! earliest).
//!
//! # Memory
//!
//! Events live in one slab, linked into their bucket's list, and a slot is
//! reused as soon as its event is taken out: the queue holds its peak number
//! of pending events (each its time, its payload and a 4-byte link) plus a
//! fixed 15 KB of list heads, tails and minima, however long the run.

use crate::time::Nanos;

/// One scheduled event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event<P> {
    pub time: Nanos,
    pub payload: P,
}

/// Bits per digit: one occupancy word per level.
const DIGIT: u32 = 6;
/// Levels of 6-bit digits in a 64-bit time.
const LEVELS: usize = 64_usize.div_ceil(DIGIT as usize);
const BUCKETS: usize = LEVELS << DIGIT;
/// The list of events due at `last`, after the buckets' lists.
const NOW: usize = BUCKETS;
/// Lists, padded to a power of two: a list index masked with `LISTS - 1`
/// is in bounds without a check.
const LISTS: usize = (BUCKETS + 1).next_power_of_two();
/// The first slot of an event (`next` has a head before it for each list).
const FIRST: usize = BUCKETS + 1;
/// Occupancy words, padded to a power of two for the same reason.
const WORDS: usize = LEVELS.next_power_of_two();
/// The end of a list.
const NIL: u32 = u32::MAX;

/// A calendar of pending events. Holds only what is scheduled and not yet
/// run, so its memory is bounded by the pending events, not by the trace.
pub struct EventQueue<P> {
    /// Links: `next[l]` for a list `l` (a bucket, or `NOW`) is its first
    /// slot; `next[s]` for a slot `s` is the slot after it in its list (or,
    /// for a free slot, the next free one). `NIL` ends a list.
    next: Vec<u32>,
    /// The event in slot `s` is `events[s - FIRST]`.
    events: Vec<(u64, P)>,
    /// The last slot of each list (the list's own index when it is empty).
    tails: Box<[u32; LISTS]>,
    /// Free slots, linked through `next`.
    free: u32,
    /// The earliest time in each bucket (`u64::MAX` when it is empty).
    mins: Box<[u64; LISTS]>,
    /// Bit `d` of `occupied[level]`: bucket (level, d) holds events.
    occupied: [u64; WORDS],
    /// Bit `level`: some bucket of that level holds events.
    levels: u64,
    /// The time of the last event taken out (0 before the first): nothing
    /// may be scheduled before it.
    last: u64,
    /// The earliest pending time, `u64::MAX` when empty: one comparison per
    /// arrival tells the lane there is nothing to merge.
    next_time: u64,
    len: usize,
}

impl<P: Copy> Default for EventQueue<P> {
    fn default() -> Self {
        let mut tails = Box::new([0; LISTS]);
        for (list, tail) in tails.iter_mut().enumerate() {
            *tail = list as u32;
        }
        EventQueue {
            next: vec![NIL; FIRST],
            events: Vec::new(),
            tails,
            free: NIL,
            mins: Box::new([u64::MAX; LISTS]),
            occupied: [0; WORDS],
            levels: 0,
            last: 0,
            next_time: u64::MAX,
            len: 0,
        }
    }
}

impl<P: Copy> EventQueue<P> {
    pub fn new() -> EventQueue<P> {
        EventQueue::default()
    }

    /// Schedules `payload` at `time`, after everything already scheduled
    /// for the same instant.
    ///
    /// Panics if `time` is before the last event taken out: a lane
    /// schedules only at or after the decision it reacts to.
    #[inline]
    pub fn schedule(&mut self, time: Nanos, payload: P) {
        let t = time.get();
        assert!(t >= self.last, "an event was scheduled in the past");
        self.len += 1;
        self.next_time = self.next_time.min(t);
        let slot = match self.free {
            NIL => {
                self.events.push((t, payload));
                // The links grow with the slots, so that `bytes` is what
                // they hold: doubling on their own (from the list heads
                // before them), the first event would take 2.8 KB of links.
                let slots = FIRST + self.events.capacity();
                if self.next.capacity() < slots {
                    self.next.reserve_exact(slots - self.next.len());
                }
                self.next.push(NIL);
                let slot = self.next.len() - 1;
                assert!(slot < NIL as usize, "too many pending events");
                slot as u32
            }
            slot => {
                self.free = self.next[slot as usize];
                self.next[slot as usize] = NIL;
                self.events[slot as usize - FIRST] = (t, payload);
                slot
            }
        };
        if t == self.last {
            self.append(NOW, slot);
        } else {
            self.file(slot, t);
        }
    }

    /// Links `slot` (whose `next` is `NIL`) at the end of list `list`.
    #[inline(always)]
    fn append(&mut self, list: usize, slot: u32) {
        let list = list & (LISTS - 1);
        let tail = self.tails[list];
        self.next[tail as usize] = slot;
        self.tails[list] = slot;
    }

    /// Puts `slot`, at time `t` after `last`, in its bucket.
    #[inline(always)]
    fn file(&mut self, slot: u32, t: u64) {
        debug_assert!(t > self.last);
        let level = (63 - (t ^ self.last).leading_zeros()) / DIGIT;
        let digit = (t >> (level * DIGIT)) as usize & ((1 << DIGIT) - 1);
        let bucket = (((level as usize) << DIGIT) | digit) & (LISTS - 1);
        self.append(bucket, slot);
        self.mins[bucket] = self.mins[bucket].min(t);
        self.occupied[level as usize & (WORDS - 1)] |= 1 << digit;
        self.levels |= 1 << level;
    }

    /// The earliest occupied bucket (some must be).
    #[inline(always)]
    fn earliest_bucket(&self) -> usize {
        let level = self.levels.trailing_zeros() as usize;
        let digit = self.occupied[level & (WORDS - 1)].trailing_zeros() as usize;
        ((level << DIGIT) | digit) & (LISTS - 1)
    }

    /// The earliest pending time as a number, `u64::MAX` when none is pending.
    #[inline(always)]
    pub fn next_time(&self) -> u64 {
        self.next_time
    }

    /// Removes and returns the earliest event if it is due strictly before `t`.
    /// (No bound lies beyond `u64::MAX`: an event there comes out of
    /// [`EventQueue::pop`] only.)
    #[inline]
    pub fn pop_before(&mut self, t: Nanos) -> Option<Event<P>> {
        if self.next_time >= t.get() {
            return None;
        }
        Some(self.take_earliest())
    }

    /// Removes and returns the earliest event, whenever it is due: the end
    /// of a run without an end runs every event, those at `u64::MAX` too.
    pub fn pop(&mut self) -> Option<Event<P>> {
        if self.len == 0 {
            return None;
        }
        Some(self.take_earliest())
    }

    /// Removes and returns the earliest event; some must be pending.
    #[inline(always)]
    fn take_earliest(&mut self) -> Event<P> {
        if self.next[NOW] == NIL {
            self.refill();
        }
        let slot = self.next[NOW] as usize;
        let after = self.next[slot];
        self.next[NOW] = after;
        self.next[slot] = self.free;
        self.free = slot as u32;
        self.len -= 1;
        self.next_time = if after != NIL {
            self.last
        } else {
            self.tails[NOW] = NOW as u32;
            if self.levels == 0 { u64::MAX } else { self.mins[self.earliest_bucket()] }
        };
        let (time, payload) = self.events[slot - FIRST];
        Event { time: Nanos::new(time), payload }
    }

    /// Nothing is due at `last` and some bucket is occupied: the earliest
    /// bucket's earliest time becomes `last`, its events at that time are
    /// due now, in order, and the others go to lower levels.
    #[inline(never)]
    fn refill(&mut self) {
        debug_assert!(self.levels != 0 && self.next[NOW] == NIL);
        let bucket = self.earliest_bucket();
        let last = self.mins[bucket];
        self.last = last;
        self.mins[bucket] = u64::MAX;
        let (level, digit) = (bucket >> DIGIT, bucket & ((1 << DIGIT) - 1));
        let word = &mut self.occupied[level & (WORDS - 1)];
        *word &= !(1 << digit);
        if *word == 0 {
            self.levels &= !(1 << level);
        }
        let mut slot = self.next[bucket];
        self.next[bucket] = NIL;
        let tail = self.tails[bucket];
        self.tails[bucket] = bucket as u32;
        if slot == tail {
            // One event (common where buckets are finer than the gaps
            // between events): it is the earliest, due now; its link is
            // already NIL.
            self.next[NOW] = slot;
            self.tails[NOW] = slot;
            return;
        }
        while slot != NIL {
            let after = self.next[slot as usize];
            self.next[slot as usize] = NIL;
            let t = self.events[slot as usize - FIRST].0;
            if t == last {
                self.append(NOW, slot);
            } else {
                self.file(slot, t);
            }
            slot = after;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Event slots the queue holds, taken or free: its peak number of
    /// pending events.
    pub fn slots(&self) -> usize {
        self.events.len()
    }

    /// Bytes the queue's event slots and links hold (their capacity, which
    /// never shrinks: the most events it held at once), without the fixed
    /// list heads.
    pub fn bytes(&self) -> u64 {
        let slots = self.events.capacity() * std::mem::size_of::<(u64, P)>();
        let links = (self.next.capacity() - FIRST) * std::mem::size_of::<u32>();
        (slots + links) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    use proptest::prelude::*;

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

    /// `pop` takes what is due at u64::MAX, in order, after the rest.
    #[test]
    fn pop_takes_events_at_the_end_of_time() {
        let mut q = EventQueue::new();
        q.schedule(Nanos::MAX, 'a');
        q.schedule(Nanos::new(5), 'b');
        q.schedule(Nanos::MAX, 'c');
        assert_eq!(q.pop_before(Nanos::MAX).map(|e| e.payload), Some('b'));
        assert!(q.pop_before(Nanos::MAX).is_none());
        assert_eq!(q.pop().map(|e| (e.time, e.payload)), Some((Nanos::MAX, 'a')));
        q.schedule(Nanos::MAX, 'd');
        let rest: Vec<char> = std::iter::from_fn(|| q.pop()).map(|e| e.payload).collect();
        assert_eq!(rest, ['c', 'd']);
        assert!(q.is_empty() && q.pop().is_none());
    }

    #[test]
    #[should_panic(expected = "scheduled in the past")]
    fn scheduling_before_the_last_event_taken_out_panics() {
        let mut q = EventQueue::new();
        q.schedule(Nanos::new(10), ());
        q.pop_before(Nanos::MAX).unwrap();
        q.schedule(Nanos::new(9), ());
    }

    /// A closed population's queue: however many events go through it, it
    /// holds as many slots as were ever pending at once.
    #[test]
    fn memory_is_the_peak_of_pending_events() {
        let mut q = EventQueue::new();
        let mut state = 1u64;
        for c in 0..1000u64 {
            q.schedule(Nanos::new(c * 7919 % 100_000), c);
        }
        for _ in 0..1_000_000 {
            let e = q.pop_before(Nanos::MAX).unwrap();
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            q.schedule(e.time + Nanos::new((state >> 40) % 200_000), e.payload);
        }
        assert_eq!((q.len(), q.slots()), (1000, 1000));
    }

    /// The bytes reported are those of the slots the queue has places for,
    /// with a link each: one event once counted 2.8 KB of links (the link
    /// buffer doubled from its 705 list heads), so a run with a budget of
    /// a few hundred bytes said it kept 0 requests in 3.3 KiB.
    #[test]
    fn bytes_follow_the_slots() {
        let per_slot = (std::mem::size_of::<(u64, u32)>() + std::mem::size_of::<u32>()) as u64;
        let mut q = EventQueue::new();
        assert_eq!(q.bytes(), 0);
        for n in 1..=5000u64 {
            q.schedule(Nanos::new(n), n as u32);
            let places = q.events.capacity() as u64;
            assert_eq!(q.bytes(), places * per_slot, "{n} events");
            assert!(places < 2 * n.max(4), "{places} places for {n}");
        }
    }

    /// What a lane does to its queue.
    #[derive(Clone, Debug)]
    enum Op {
        /// Schedules an event this long after the clock.
        Schedule(u64),
        /// Takes out the earliest event if it is due before the clock plus
        /// this (the clock moves to its time); if none is, the clock moves
        /// to that bound (the lane decides an arrival there).
        PopBefore(u64),
    }

    /// A gap: often 0 (ties), often small (times that share all but their
    /// lowest digits), sometimes anywhere up to the top of the range.
    fn gap() -> impl Strategy<Value = u64> {
        prop_oneof![
            3 => Just(0u64),
            4 => 0u64..8,
            3 => 0u64..1 << 20,
            1 => 0u64..1 << 40,
            1 => any::<u64>(),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => gap().prop_map(Op::Schedule),
            2 => gap().prop_map(Op::PopBefore),
            1 => Just(Op::PopBefore(u64::MAX)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// Against a binary heap on (time, order of scheduling): the same
        /// events, in the same order, and the same earliest pending time,
        /// after any interleaving of schedules and pops with monotone times.
        #[test]
        fn pops_what_a_binary_heap_on_time_and_sequence_pops(
            start in prop_oneof![Just(0u64), 0u64..1 << 40, any::<u64>()],
            ops in proptest::collection::vec(op(), 0..400),
        ) {
            let mut q = EventQueue::new();
            let mut reference: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new();
            let mut clock = start;
            let mut seq = 0u64;
            for op in ops {
                match op {
                    Op::Schedule(dt) => {
                        let t = clock.saturating_add(dt);
                        q.schedule(Nanos::new(t), seq);
                        reference.push(Reverse((t, seq)));
                        seq += 1;
                    }
                    Op::PopBefore(dt) => {
                        let bound = clock.saturating_add(dt);
                        let expected = match reference.peek() {
                            Some(&Reverse((t, _))) if t < bound => reference.pop().map(|Reverse(e)| e),
                            _ => None,
                        };
                        let got = q.pop_before(Nanos::new(bound)).map(|e| (e.time.get(), e.payload));
                        prop_assert_eq!(got, expected);
                        clock = got.map_or(bound, |(t, _)| t);
                    }
                }
                let earliest = reference.peek().map_or(u64::MAX, |Reverse((t, _))| *t);
                prop_assert_eq!(q.next_time(), earliest);
                prop_assert_eq!(q.len(), reference.len());
                prop_assert_eq!(q.is_empty(), reference.is_empty());
            }
            // Everything left comes out in order too ("before u64::MAX" is
            // the latest bound there is, so an event at u64::MAX does not;
            // `pop` takes it).
            while let Some(Reverse(expected)) = reference.pop() {
                let got = match q.pop_before(Nanos::MAX) {
                    Some(e) => Some(e),
                    None => {
                        prop_assert_eq!(expected.0, u64::MAX);
                        q.pop()
                    }
                };
                prop_assert_eq!(got.map(|e| (e.time.get(), e.payload)), Some(expected));
            }
            prop_assert!(q.pop().is_none());
        }
    }
}
