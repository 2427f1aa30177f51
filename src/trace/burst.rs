//! `count` requests spread evenly over `[start, start + span)`.

use super::Arrival;
use crate::time::Nanos;

#[derive(Clone, Debug)]
pub struct Burst {
    start: u64,
    span: u64,
    count: u64,
    next: u64,
}

impl Burst {
    /// Request `i` arrives at `start + floor(i * span / count)`.
    pub fn new(start: Nanos, span: Nanos, count: u64) -> Burst {
        Burst { start: start.get(), span: span.get(), count, next: 0 }
    }
}

impl Iterator for Burst {
    type Item = Arrival;
    fn next(&mut self) -> Option<Arrival> {
        if self.next >= self.count {
            return None;
        }
        let offset = (self.next as u128 * self.span as u128 / self.count as u128) as u64;
        self.next += 1;
        Some(Arrival::at(Nanos::new(self.start.saturating_add(offset))))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.count - self.next) as usize;
        (left, Some(left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evenly_spread_and_half_open() {
        let times: Vec<u64> =
            Burst::new(Nanos::from_millis(990), Nanos::from_millis(10), 100).map(|a| a.time.get()).collect();
        assert_eq!(times.len(), 100);
        assert_eq!(times[0], 990_000_000);
        assert_eq!(times[1], 990_100_000);
        assert_eq!(times[99], 999_900_000); // strictly before start + span
    }

    #[test]
    fn zero_span_is_one_instant() {
        let times: Vec<u64> = Burst::new(Nanos::new(5), Nanos::new(0), 3).map(|a| a.time.get()).collect();
        assert_eq!(times, [5, 5, 5]);
    }
}
