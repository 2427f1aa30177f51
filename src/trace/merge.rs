//! Merges sources in (time, source order): ties keep the order of the
//! scenario's `[[traffic]]` entries, and each source keeps its own order.
//!
//! Scenarios have a handful of sources, so the next arrival is found by a
//! scan of the heads; a heap would only pay off for dozens of sources.

use super::{Arrival, ArrivalResult};

pub struct Merge<S> {
    sources: Vec<S>,
    /// The next arrival of each source, if it has one.
    heads: Vec<Option<Arrival>>,
    /// The run's end in nanoseconds (`u64::MAX`: none, see [`Merge::until`]).
    end: u64,
    started: bool,
    failed: bool,
}

impl<S: Iterator<Item = ArrivalResult>> Merge<S> {
    pub fn new(sources: Vec<S>) -> Merge<S> {
        let heads = vec![None; sources.len()];
        Merge { sources, heads, end: u64::MAX, started: false, failed: false }
    }

    /// Merges for a run that ends at `end`, which reads no arrival at or
    /// after it: a source whose arrival at or after `end` was handed out is
    /// not read on. The merge reads one arrival ahead of each source, and
    /// that look-ahead once read the row after such an arrival: a bad row
    /// there failed a run with two sources and not one with a single source
    /// (which the reader stops reading at that arrival).
    pub fn until(mut self, end: Option<crate::time::Nanos>) -> Merge<S> {
        self.end = end.map_or(u64::MAX, |e| e.get());
        self
    }

    fn refill(&mut self, i: usize) -> Result<(), super::TraceError> {
        self.heads[i] = self.sources[i].next().transpose()?;
        Ok(())
    }
}

impl<S: Iterator<Item = ArrivalResult>> Iterator for Merge<S> {
    type Item = ArrivalResult;

    #[inline(always)]
    fn next(&mut self) -> Option<ArrivalResult> {
        if self.failed {
            return None;
        }
        if let [only] = self.sources.as_mut_slice() {
            // One source: nothing to merge.
            return only.next();
        }
        if !self.started {
            self.started = true;
            for i in 0..self.sources.len() {
                if let Err(e) = self.refill(i) {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
        let mut best: Option<(usize, Arrival)> = None;
        for (i, head) in self.heads.iter().enumerate() {
            if let Some(a) = head {
                // Strictly earlier wins; a tie keeps the lower source index.
                if best.is_none_or(|(_, b)| a.time < b.time) {
                    best = Some((i, *a));
                }
            }
        }
        let (i, mut arrival) = best?;
        // At or after the end, the run stops at this arrival: the source's
        // next one is not read. (At u64::MAX without an end it is: a later
        // arrival there is still one.)
        if arrival.time.get() < self.end || self.end == u64::MAX {
            if let Err(e) = self.refill(i) {
                self.failed = true;
                return Some(Err(e));
            }
        } else {
            self.heads[i] = None;
        }
        // Scenarios have at most `scenario::MAX_SOURCES` (65 536) sources.
        debug_assert!(i <= usize::from(u16::MAX), "source {i} does not fit in 16 bits");
        arrival.source = i as u16;
        Some(Ok(arrival))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Nanos;

    fn src(times: &[u64]) -> std::vec::IntoIter<ArrivalResult> {
        times.iter().map(|&t| Ok(Arrival::at(Nanos::new(t)))).collect::<Vec<_>>().into_iter()
    }

    #[test]
    fn merges_in_time_order_with_stable_ties() {
        // Tag sources by time offsets we can recognise: all equal times.
        let m = Merge::new(vec![src(&[1, 5, 5, 9]), src(&[0, 5, 10]), src(&[5])]);
        let times: Vec<u64> = m.map(|r| r.unwrap().time.get()).collect();
        assert_eq!(times, [0, 1, 5, 5, 5, 5, 9, 10]);
    }

    #[test]
    fn ties_take_the_earlier_source_first() {
        // Each source's arrivals carry its index as their key.
        let tagged = |k: u64, times: &[u64]| -> std::vec::IntoIter<ArrivalResult> {
            times.iter().map(|&t| Ok(Arrival::keyed(Nanos::new(t), k))).collect::<Vec<_>>().into_iter()
        };
        let m = Merge::new(vec![tagged(0, &[5, 5, 7]), tagged(1, &[3, 5]), tagged(2, &[5, 6])]);
        let order: Vec<(u64, u64)> = m.map(|r| r.unwrap()).map(|a| (a.time.get(), a.key)).collect();
        // At t = 5: both of source 0, then source 1's, then source 2's.
        assert_eq!(order, [(3, 1), (5, 0), (5, 0), (5, 1), (5, 2), (6, 2), (7, 0)]);
        // Each arrival says which source it came from.
        let m = Merge::new(vec![tagged(0, &[5, 5, 7]), tagged(1, &[3, 5]), tagged(2, &[5, 6])]);
        assert!(m.map(|r| r.unwrap()).all(|a| u64::from(a.source) == a.key));
    }

    /// With an end, a source is not read past its first arrival at or
    /// after it: an error there never shows, as with a single source.
    #[test]
    fn a_source_is_not_read_past_the_end() {
        let bad = || -> std::vec::IntoIter<ArrivalResult> {
            let row = |t| Ok(Arrival::at(Nanos::new(t)));
            let e =
                super::super::TraceError::File { path: "t.csv".into(), message: "bad".into(), entry: None };
            vec![row(5), row(50), Err(e)].into_iter()
        };
        let times = |m: Merge<_>| m.map(|r| r.map(|a| a.time.get())).collect::<Result<Vec<_>, _>>();
        let m = Merge::new(vec![bad(), src(&[1])]).until(Some(Nanos::new(10)));
        assert_eq!(times(m).unwrap(), [1, 5, 50]);
        // Without the end the look-ahead reads the bad row.
        assert!(times(Merge::new(vec![bad(), src(&[1])])).is_err());
    }

    #[test]
    fn empty_sources() {
        let m: Merge<std::vec::IntoIter<ArrivalResult>> = Merge::new(vec![]);
        assert_eq!(m.count(), 0);
        let m = Merge::new(vec![src(&[]), src(&[3])]);
        assert_eq!(m.count(), 1);
    }
}
