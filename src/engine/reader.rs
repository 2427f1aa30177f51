//! The read side of a run: arrivals from the merged sources, cut into
//! chunks, with client keys turned into dense ids (0, 1, 2, ... in order of
//! first appearance) so that lanes index their per-key state by id.

use std::collections::HashMap;

use rustc_hash::FxBuildHasher;

use crate::time::Nanos;
use crate::trace::{ArrivalResult, TraceError};

/// Arrivals read and decided per step.
pub const CHUNK: usize = 1 << 18;

/// A run of arrivals, in (time, source order).
#[derive(Default)]
pub struct Chunk {
    /// Position of the first arrival in the merged trace.
    pub first_seq: u64,
    pub times: Vec<Nanos>,
    /// Each arrival's dense key id.
    pub ids: Vec<u32>,
    /// Distinct keys seen up to the end of this chunk (every id is below).
    pub keys: usize,
    /// Each arrival's key, kept only when decisions are written.
    pub key_values: Vec<u64>,
    /// Each arrival's source, kept only when clients react (their retry
    /// policy is the source's).
    pub sources: Vec<u16>,
}

pub struct Reader<I> {
    arrivals: I,
    /// Arrivals at or after this are not read. Not `Nanos::MAX` for "no end":
    /// an arrival at u64::MAX counts then.
    end: Option<Nanos>,
    /// Key to dense id. Keys are already hashes or small integers, so a fast
    /// non-cryptographic hash (rustc's Fx) is all the map needs.
    ids: HashMap<u64, u32, FxBuildHasher>,
    pub keys: Vec<u64>,
    /// Key value 0 was given id 0 before any arrival, and whether an
    /// arrival has sent it since (see [`Reader::trace_keys`]).
    key_zero_reserved: bool,
    key_zero_seen: bool,
    last: Option<(u64, u32)>,
    pub seq: u64,
    pub first: Option<Nanos>,
    pub last_time: Option<Nanos>,
    done: bool,
    /// Keep each arrival's key in the chunk (for decisions.csv).
    record_keys: bool,
    /// Keep each arrival's source in the chunk (for reacting clients).
    record_sources: bool,
    /// Arrivals per chunk: [`CHUNK`], or [`ATTEMPT_CHUNK`] when each
    /// attempt of reacting clients is kept for decisions.csv.
    chunk_len: usize,
}

/// Arrivals per chunk when decisions are written and clients react: a lane
/// holds every attempt of a chunk until it is written, and with retries a
/// chunk's arrivals can make up to `max_attempts` (1000) times as many
/// attempts, so the chunk is kept small to bound what is held.
pub const ATTEMPT_CHUNK: usize = CHUNK / 64;

impl<I: Iterator<Item = ArrivalResult>> Reader<I> {
    pub fn new(arrivals: I, end: Option<Nanos>, record_keys: bool, record_sources: bool) -> Reader<I> {
        Reader {
            arrivals,
            end,
            ids: HashMap::default(),
            keys: Vec::new(),
            key_zero_reserved: false,
            key_zero_seen: false,
            last: None,
            seq: 0,
            first: None,
            last_time: None,
            done: false,
            record_keys,
            record_sources,
            chunk_len: if record_keys && record_sources { ATTEMPT_CHUNK } else { CHUNK },
        }
    }

    /// Cuts chunks at `len` arrivals when they are longer (a run whose
    /// queues must be checked against a small memory budget more often).
    pub fn limit_chunk(&mut self, len: usize) {
        self.chunk_len = self.chunk_len.min(len.max(1));
    }

    /// Gives key value 0 the dense id 0 before any arrival: closed clients
    /// send with id 0, so they share the limiter of key 0 (every request of
    /// a source without keys), whatever key an open-loop source sends first.
    pub fn reserve_key_zero(&mut self) {
        if self.keys.is_empty() {
            self.ids.insert(0, 0);
            self.keys.push(0);
            self.key_zero_reserved = true;
        }
    }

    /// Distinct keys the trace's arrivals sent: [`Reader::keys`] without a
    /// reserved key 0 that no arrival used.
    pub fn trace_keys(&self) -> usize {
        self.keys.len() - usize::from(self.key_zero_reserved && !self.key_zero_seen)
    }

    /// Refills `chunk`; an empty chunk means the trace has ended.
    pub fn fill(&mut self, chunk: &mut Chunk) -> Result<(), TraceError> {
        chunk.times.clear();
        chunk.ids.clear();
        chunk.key_values.clear();
        chunk.sources.clear();
        chunk.first_seq = self.seq;
        while !self.done && chunk.times.len() < self.chunk_len {
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
                    self.key_zero_seen |= id == 0;
                    self.last = Some((a.key, id));
                    id
                }
            };
            chunk.times.push(a.time);
            chunk.ids.push(id);
            if self.record_keys {
                chunk.key_values.push(a.key);
            }
            if self.record_sources {
                chunk.sources.push(a.source);
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

/// The bytes a reader holds for `keys` distinct keys, as its tables grow:
/// the map from key to dense id (a power of two of buckets, at most seven
/// in eight full, each a key, an id and a control byte) and the list of
/// keys (doubling).
pub fn key_bytes(keys: usize) -> u64 {
    if keys <= 1 {
        return 0;
    }
    let buckets = (keys * 8 / 7 + 1).next_power_of_two() as u64;
    let entry = (std::mem::size_of::<(u64, u32)>() + 1) as u64;
    buckets * entry + keys.next_power_of_two() as u64 * std::mem::size_of::<u64>() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Arrival;

    fn reader(keys: &[u64]) -> Reader<impl Iterator<Item = ArrivalResult>> {
        let arrivals: Vec<ArrivalResult> = keys
            .iter()
            .enumerate()
            .map(|(i, &key)| Ok(Arrival { time: Nanos::new(i as u64), key, source: 0 }))
            .collect();
        Reader::new(arrivals.into_iter(), None, false, false)
    }

    /// Closed clients are key 0 of the limiters, not a key of the trace: a
    /// trace of key 7 alone sent one key, though the limiters saw two.
    #[test]
    fn a_reserved_key_zero_counts_in_the_trace_only_when_an_arrival_sends_it() {
        let mut chunk = Chunk::default();
        let mut r = reader(&[7, 7, 9]);
        r.reserve_key_zero();
        r.fill(&mut chunk).unwrap();
        assert_eq!(chunk.ids, [1, 1, 2]);
        assert_eq!((r.keys.len(), r.trace_keys()), (3, 2));

        let mut r = reader(&[7, 0, 0]);
        r.reserve_key_zero();
        r.fill(&mut chunk).unwrap();
        assert_eq!(chunk.ids, [1, 0, 0]);
        assert_eq!((r.keys.len(), r.trace_keys()), (2, 2));

        let mut r = reader(&[0, 7]);
        r.fill(&mut chunk).unwrap();
        assert_eq!((r.keys.len(), r.trace_keys()), (2, 2));
    }
}
