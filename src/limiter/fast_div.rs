//! Division by a divisor fixed at construction, without a divide instruction
//! on the hot path: an estimate from a precomputed reciprocal, corrected by at
//! most two subtractions, so the quotient is always exact.

#[derive(Clone, Copy, Debug)]
pub struct FastDiv {
    divisor: u64,
    /// `floor((2^64 - 1) / divisor)`.
    reciprocal: u64,
}

impl FastDiv {
    pub fn new(divisor: u64) -> FastDiv {
        assert!(divisor > 0, "division by zero");
        FastDiv { divisor, reciprocal: u64::MAX / divisor }
    }

    pub fn divisor(&self) -> u64 {
        self.divisor
    }

    /// `(n / d, n % d)`, exact for every `n`.
    #[inline]
    pub fn div_rem(&self, n: u64) -> (u64, u64) {
        // q_est = floor(n * m / 2^64) is at most 2 below n / d, because
        // 2^64 / d - m < 2 and n < 2^64.
        let mut q = ((u128::from(n) * u128::from(self.reciprocal)) >> 64) as u64;
        let mut r = n - q * self.divisor;
        while r >= self.divisor {
            q += 1;
            r -= self.divisor;
        }
        (q, r)
    }

    #[inline]
    pub fn div(&self, n: u64) -> u64 {
        self.div_rem(n).0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn edges() {
        for d in [1, 2, 3, 7, 10, 1_000_000_000, u64::MAX / 3, u64::MAX - 1, u64::MAX] {
            let f = FastDiv::new(d);
            for n in [0, 1, d - 1, d, d.saturating_add(1), u64::MAX - 1, u64::MAX, u64::MAX / 2] {
                assert_eq!(f.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }

    proptest! {
        #[test]
        fn matches_the_divide_instruction(n: u64, d in 1u64..) {
            prop_assert_eq!(FastDiv::new(d).div_rem(n), (n / d, n % d));
        }

        #[test]
        fn matches_for_small_divisors(n: u64, d in 1u64..100_000) {
            prop_assert_eq!(FastDiv::new(d).div_rem(n), (n / d, n % d));
        }
    }
}
