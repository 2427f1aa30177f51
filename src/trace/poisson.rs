//! Poisson arrivals: exponential gaps from a seeded, portable ChaCha8 stream.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::Arrival;
use crate::random::{Zipf, exp1};
use crate::time::Nanos;

#[derive(Clone, Debug)]
pub struct Poisson {
    rng: ChaCha8Rng,
    mean_gap_ns: f64,
    t: u64,
    end: u64,
    /// Client keys 0..n drawn from Zipf(n, skew), if the source has clients.
    keys: Option<Zipf>,
}

impl Poisson {
    /// Arrivals at `rate_per_sec` on average in `[start, end)`. `stream`
    /// separates sources that share one scenario seed.
    pub fn new(seed: u64, stream: u64, start: Nanos, end: Nanos, rate_per_sec: f64) -> Poisson {
        assert!(rate_per_sec > 0.0 && rate_per_sec.is_finite());
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        let mut p =
            Poisson { rng, mean_gap_ns: 1e9 / rate_per_sec, t: start.get(), end: end.get(), keys: None };
        // The first arrival is one gap after start, as in a Poisson process.
        p.t = p.t.saturating_add(p.gap());
        p
    }

    /// Gives each arrival a client key in `0..clients`, Zipf-distributed with
    /// exponent `skew` (key 0 the busiest). `clients >= 1`, `skew >= 0`.
    pub fn with_zipf_keys(mut self, clients: u64, skew: f64) -> Poisson {
        self.keys = Some(Zipf::new(clients, skew));
        self
    }

    #[inline]
    fn gap(&mut self) -> u64 {
        let e = exp1(&mut self.rng);
        // Rounded to whole nanoseconds; from here on all is integer.
        // (x + 0.5) as u64 rounds half up for x >= 0 without a libm call.
        (e * self.mean_gap_ns + 0.5) as u64
    }
}

impl Iterator for Poisson {
    type Item = Arrival;
    #[inline]
    fn next(&mut self) -> Option<Arrival> {
        if self.t >= self.end {
            return None;
        }
        let t = self.t;
        let key = match &self.keys {
            Some(z) => z.sample(&mut self.rng),
            None => 0,
        };
        self.t = self.t.saturating_add(self.gap());
        Some(Arrival::keyed(Nanos::new(t), key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_and_repeatable() {
        let a: Vec<_> = Poisson::new(7, 0, Nanos::new(0), Nanos::from_secs(1), 1000.0).collect();
        let b: Vec<_> = Poisson::new(7, 0, Nanos::new(0), Nanos::from_secs(1), 1000.0).collect();
        let c: Vec<_> = Poisson::new(7, 1, Nanos::new(0), Nanos::from_secs(1), 1000.0).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn mean_rate_is_close_to_the_asked_rate() {
        // 100 s at 1000/s: the count is Poisson(100000), sd ~316; 5 sd = 1600.
        let n = Poisson::new(1, 0, Nanos::new(0), Nanos::from_secs(100), 1000.0).count() as i64;
        assert!((n - 100_000).abs() < 1_600, "{n}");
    }

    #[test]
    fn zipf_keys_favour_low_keys_and_stay_in_range() {
        let p = Poisson::new(1, 0, Nanos::new(0), Nanos::from_secs(10), 10_000.0).with_zipf_keys(1000, 1.1);
        let mut counts = vec![0u64; 1000];
        for a in p {
            counts[a.key as usize] += 1;
        }
        // Zipf(1000, 1.1): P(key 0) / P(key 1) = 2^1.1 ~ 2.14.
        let ratio = counts[0] as f64 / counts[1] as f64;
        assert!((1.9..2.4).contains(&ratio), "{ratio}");
        assert!(counts[999] < counts[0] / 100);
    }

    #[test]
    fn times_are_sorted_and_in_range() {
        let start = Nanos::from_secs(2);
        let end = Nanos::from_secs(3);
        let v: Vec<u64> = Poisson::new(3, 0, start, end, 500.0).map(|a| a.time.get()).collect();
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
        assert!(v.iter().all(|&t| t > start.get() && t < end.get()));
    }
}
