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
    started: bool,
    failed: bool,
}

impl<S: Iterator<Item = ArrivalResult>> Merge<S> {
    pub fn new(sources: Vec<S>) -> Merge<S> {
        let heads = vec![None; sources.len()];
        Merge { sources, heads, started: false, failed: false }
    }

    fn refill(&mut self, i: usize) -> Result<(), super::TraceError> {
        self.heads[i] = self.sources[i].next().transpose()?;
        Ok(())
    }
}

impl<S: Iterator<Item = ArrivalResult>> Iterator for Merge<S> {
    type Item = ArrivalResult;

    #[inline]
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
        if let Err(e) = self.refill(i) {
            self.failed = true;
            return Some(Err(e));
        }
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

    #[test]
    fn empty_sources() {
        let m: Merge<std::vec::IntoIter<ArrivalResult>> = Merge::new(vec![]);
        assert_eq!(m.count(), 0);
        let m = Merge::new(vec![src(&[]), src(&[3])]);
        assert_eq!(m.count(), 1);
    }
}
