//! A FIFO ring of `Copy` values with power-of-two capacity and free-running
//! indices: the queue under the exact-window tracker, the sliding log and the
//! slot counter. Cheaper per operation than `VecDeque` (no wrap-around
//! branches, no capacity re-reads), which matters because every limiter runs
//! one on every arrival.
//!
//! Every ring's buffer is counted in a total of the thread it lives on
//! ([`held_on_this_thread`]) when it grows, is cloned or is dropped (never
//! per push or pop). A lane measures what its own rings added while it
//! decided ([`crate::engine`]), so a run can refuse to hold more window
//! timestamps than memory allows, judged on its own rings only: a sweep's
//! runs side by side do not see each other's, and whether one stops does
//! not depend on how the threads were scheduled.

use std::cell::Cell;

/// Values [`Ring::pop_expired`] tests per round.
const PROBES: usize = 4;

thread_local! {
    /// Bytes ring buffers grew by on this thread, less those dropped here
    /// (wrapping: a thread may drop rings another one filled).
    static HELD: Cell<u64> = const { Cell::new(0) };
}

/// The running total of ring bytes grown on this thread, less those
/// dropped on it, wrapping: the difference of two readings (with
/// `wrapping_sub`) is what the rings touched in between grew by.
pub fn held_on_this_thread() -> u64 {
    HELD.with(Cell::get)
}

fn add_held(bytes: u64) {
    HELD.with(|h| h.set(h.get().wrapping_add(bytes)));
}

fn sub_held(bytes: u64) {
    HELD.with(|h| h.set(h.get().wrapping_sub(bytes)));
}

fn buffer_bytes<T>(capacity: usize) -> u64 {
    (capacity * std::mem::size_of::<T>()) as u64
}

#[derive(Debug)]
pub struct Ring<T> {
    buf: Vec<T>,
    head: usize,
    tail: usize,
}

impl<T: Copy> Clone for Ring<T> {
    fn clone(&self) -> Self {
        add_held(buffer_bytes::<T>(self.buf.len()));
        Ring { buf: self.buf.clone(), head: self.head, tail: self.tail }
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        sub_held(buffer_bytes::<T>(self.buf.len()));
    }
}

impl<T: Copy + Default> Default for Ring<T> {
    fn default() -> Self {
        Ring::new()
    }
}

impl<T: Copy + Default> Ring<T> {
    pub const fn new() -> Ring<T> {
        Ring { buf: Vec::new(), head: 0, tail: 0 }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.tail.wrapping_sub(self.head)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == self.tail
    }

    #[inline]
    fn mask(&self) -> usize {
        self.buf.len().wrapping_sub(1)
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        if self.is_empty() { None } else { Some(&self.buf[self.head & self.mask()]) }
    }

    /// The `i`-th value from the front.
    pub fn get(&self, i: usize) -> Option<&T> {
        (i < self.len()).then(|| &self.buf[self.head.wrapping_add(i) & self.mask()])
    }

    /// Free-running position of the front value (the back one is at
    /// `front_position() + len() - 1`); positions stay valid as the ring
    /// grows and wraps.
    #[inline]
    pub fn front_position(&self) -> usize {
        self.head
    }

    /// The value at free-running position `pos`, which must lie in
    /// `[front_position(), front_position() + len())`.
    #[inline(always)]
    pub fn at(&self, pos: usize) -> T {
        debug_assert!(pos.wrapping_sub(self.head) < self.len());
        self.buf[pos & self.mask()]
    }

    /// Drops the values before free-running position `pos`.
    #[inline]
    pub fn pop_to(&mut self, pos: usize) {
        debug_assert!(pos.wrapping_sub(self.head) <= self.len());
        self.head = pos;
    }

    #[inline]
    pub fn back_mut(&mut self) -> Option<&mut T> {
        if self.is_empty() {
            None
        } else {
            let i = self.tail.wrapping_sub(1) & self.mask();
            Some(&mut self.buf[i])
        }
    }

    /// Drops the leading values for which `expired` holds and returns how
    /// many it dropped. `expired` must hold for a prefix of the ring (the
    /// values are in order).
    ///
    /// Four values are tested at once and the number dropped is the sum of
    /// the tests: no branch on "has the oldest value left?" (a coin toss the
    /// branch predictor loses), and the next call waits for one round of
    /// loads, not a chain of them. Slots past the tail hold stale values;
    /// they are read but never counted.
    #[inline]
    pub fn pop_expired(&mut self, expired: impl Fn(&T) -> bool) -> usize {
        if self.buf.is_empty() {
            return 0;
        }
        let mask = self.mask();
        let start = self.head;
        loop {
            let head = self.head;
            let live = self.tail.wrapping_sub(head);
            let mut dropped = 0;
            for i in 0..PROBES {
                dropped += usize::from((i < live) & expired(&self.buf[head.wrapping_add(i) & mask]));
            }
            self.head = head.wrapping_add(dropped);
            if dropped < PROBES {
                return self.head.wrapping_sub(start);
            }
        }
    }

    /// Drops leading values while `expired` holds (it must hold for a
    /// prefix). The first two checks are branch-free (a comparison added to
    /// the head index); only a third drop at one call takes the loop. Cheaper
    /// than [`Ring::pop_expired`] when values usually leave one at a time.
    #[inline]
    pub fn pop_while(&mut self, expired: impl Fn(&T) -> bool) {
        if self.buf.is_empty() {
            return;
        }
        let mask = self.mask();
        for _ in 0..2 {
            let pop = self.head != self.tail && expired(&self.buf[self.head & mask]);
            self.head += usize::from(pop);
        }
        while self.head != self.tail && expired(&self.buf[self.head & mask]) {
            self.head += 1;
        }
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.is_empty() {
            return None;
        }
        let v = self.buf[self.head & self.mask()];
        self.head = self.head.wrapping_add(1);
        Some(v)
    }

    #[inline]
    pub fn push_back(&mut self, v: T) {
        if self.len() == self.buf.len() {
            self.grow();
        }
        let i = self.tail & self.mask();
        self.buf[i] = v;
        self.tail = self.tail.wrapping_add(1);
    }

    #[cold]
    fn grow(&mut self) {
        let len = self.len();
        let old_mask = self.mask();
        let mut bigger = vec![T::default(); (self.buf.len() * 2).max(4)];
        add_held(buffer_bytes::<T>(bigger.len() - self.buf.len()));
        // Values keep their free-running positions (head and tail stay).
        let new_mask = bigger.len() - 1;
        for i in 0..len {
            let pos = self.head.wrapping_add(i);
            bigger[pos & new_mask] = self.buf[pos & old_mask];
        }
        self.buf = bigger;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn behaves_like_a_vecdeque() {
        let mut ring: Ring<u64> = Ring::new();
        let mut model: VecDeque<u64> = VecDeque::new();
        // A deterministic mix of pushes and pops that wraps and grows.
        let mut x: u64 = 1;
        for step in 0..10_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if x >> 62 == 0 && !model.is_empty() {
                assert_eq!(ring.pop_front(), model.pop_front());
            } else if x >> 61 == 2 {
                if let (Some(a), Some(b)) = (ring.back_mut(), model.back_mut()) {
                    *a += 1;
                    *b += 1;
                }
            } else {
                ring.push_back(step);
                model.push_back(step);
            }
            assert_eq!(ring.len(), model.len());
            assert_eq!(ring.front(), model.front());
        }
        // pop_while and pop_expired drop exactly the leading run that matches.
        let mut other = ring.clone();
        let cut = model.len() / 2;
        let limit = model[cut];
        ring.pop_while(|v| *v < limit);
        let mut dropped = 0;
        while model.front().is_some_and(|v| *v < limit) {
            model.pop_front();
            dropped += 1;
        }
        assert_eq!(other.pop_expired(|v| *v < limit), dropped);
        assert_eq!(other.len(), model.len());
        assert_eq!(ring.len(), model.len());
        while let Some(v) = model.pop_front() {
            assert_eq!(ring.pop_front(), Some(v));
        }
        assert_eq!(ring.pop_front(), None);
        assert!(ring.back_mut().is_none());
    }

    #[test]
    fn held_bytes_follow_growth_clones_and_drops() {
        // This thread's total: other tests' rings live on other threads.
        let start = held_on_this_thread();
        let held = || held_on_this_thread().wrapping_sub(start);
        let mut ring: Ring<u64> = Ring::new();
        assert_eq!(held(), 0);
        for v in 0..100_000 {
            ring.push_back(v);
        }
        // 100 000 values need a buffer of 131 072 (1 MiB of u64).
        assert_eq!(held(), 1 << 20);
        let copy = ring.clone();
        assert_eq!(held(), 2 << 20);
        drop(copy);
        assert_eq!(held(), 1 << 20);
        // Dropped on another thread, it counts there: this one still
        // holds its 1 MiB, and the other's total went down by as much.
        let there = std::thread::spawn(move || {
            let before = held_on_this_thread();
            drop(ring);
            before.wrapping_sub(held_on_this_thread())
        });
        assert_eq!(there.join().unwrap(), 1 << 20);
        assert_eq!(held(), 1 << 20);
    }

    #[test]
    fn pop_expired_never_counts_stale_slots_past_the_tail() {
        let mut ring: Ring<u64> = Ring::new();
        for v in 0..10 {
            ring.push_back(v);
        }
        // More than four at once: three rounds of probes.
        assert_eq!(ring.pop_expired(|v| *v < 100), 10);
        assert!(ring.is_empty());
        // The slots still hold 0..9, all "expired"; only live values count.
        ring.push_back(50);
        ring.push_back(60);
        assert_eq!(ring.pop_expired(|v| *v < 55), 1);
        assert_eq!(ring.pop_expired(|v| *v < 55), 0);
        assert_eq!(ring.front(), Some(&60));
        assert_eq!(Ring::<u64>::new().pop_expired(|_| true), 0);
    }
}
