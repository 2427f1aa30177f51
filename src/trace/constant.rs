//! A fixed rate between `start` and `end`.

use super::Arrival;
use crate::time::Nanos;

#[derive(Clone, Debug)]
pub struct Constant {
    start: u64,
    end: u64,
    period_ns: f64,
    next: u64,
}

impl Constant {
    /// Request `i` arrives at `start + round(i * 1e9 / rate)`, while before `end`.
    /// Each time is computed from `i` directly, so rounding never accumulates.
    pub fn new(start: Nanos, end: Nanos, rate_per_sec: f64) -> Constant {
        assert!(rate_per_sec > 0.0 && rate_per_sec.is_finite());
        Constant { start: start.get(), end: end.get(), period_ns: 1e9 / rate_per_sec, next: 0 }
    }
}

impl Iterator for Constant {
    type Item = Arrival;
    fn next(&mut self) -> Option<Arrival> {
        let offset = (self.next as f64 * self.period_ns).round();
        if offset >= u64::MAX as f64 {
            return None;
        }
        let t = self.start.checked_add(offset as u64)?;
        if t >= self.end {
            return None;
        }
        self.next += 1;
        Some(Arrival::at(Nanos::new(t)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_half_open_range() {
        let times: Vec<u64> =
            Constant::new(Nanos::from_secs(1), Nanos::from_secs(2), 4.0).map(|a| a.time.get()).collect();
        assert_eq!(times, [1_000_000_000, 1_250_000_000, 1_500_000_000, 1_750_000_000]);
    }

    #[test]
    fn no_drift_over_many_periods() {
        let n = Constant::new(Nanos::new(0), Nanos::from_secs(1000), 3.0).count();
        assert_eq!(n, 3000);
    }
}
