//! Retry policies: when a client whose request was rejected tries again
//! (`docs/semantics.md`, "Reacting clients"), and the retry budget that
//! may stop it.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::time::Nanos;

/// How the wait before the next attempt is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backoff {
    /// Never retry.
    None,
    /// At `t + 1 ns`, after the instant's other events.
    Immediate,
    /// At `t + base`.
    Fixed,
    /// At `t + min(cap, base * 2^(a-1))` after attempt `a` (1-based).
    Exponential,
    /// AWS's full jitter: a uniform draw in `[0, min(cap, base * 2^(a-1))]`.
    FullJitter,
    /// AWS's equal jitter: half of that, plus a uniform draw in the other half.
    EqualJitter,
    /// AWS's decorrelated jitter: `min(cap, uniform in [base, 3 * previous])`.
    Decorrelated,
    /// At the time the limiter's `Retry-After` header says, plus a uniform
    /// draw in `[0, jitter)`.
    RetryAfter,
}

impl Backoff {
    pub const NAMES: [&'static str; 8] = [
        "none",
        "immediate",
        "fixed",
        "exponential",
        "full_jitter",
        "equal_jitter",
        "decorrelated",
        "retry_after",
    ];

    pub fn parse(name: &str) -> Option<Backoff> {
        Some(match name {
            "none" => Backoff::None,
            "immediate" => Backoff::Immediate,
            "fixed" => Backoff::Fixed,
            "exponential" => Backoff::Exponential,
            "full_jitter" => Backoff::FullJitter,
            "equal_jitter" => Backoff::EqualJitter,
            "decorrelated" => Backoff::Decorrelated,
            "retry_after" => Backoff::RetryAfter,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        Backoff::NAMES[self as usize]
    }

    /// Whether the policy waits `base` (and `cap`) nanoseconds.
    pub fn uses_base(self) -> bool {
        matches!(
            self,
            Backoff::Fixed
                | Backoff::Exponential
                | Backoff::FullJitter
                | Backoff::EqualJitter
                | Backoff::Decorrelated
        )
    }

    /// Whether the policy grows its wait up to `cap`.
    pub fn uses_cap(self) -> bool {
        matches!(
            self,
            Backoff::Exponential | Backoff::FullJitter | Backoff::EqualJitter | Backoff::Decorrelated
        )
    }
}

/// A validated retry policy (`[retry]`, or a source's own `[traffic.retry]`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    pub backoff: Backoff,
    pub base: Nanos,
    pub cap: Nanos,
    /// Attempts per logical request, the first included.
    pub max_attempts: u32,
    /// `retry_after`: a uniform extra wait in `[0, jitter)`.
    pub jitter: Nanos,
    /// Thousandths of a retry token each first attempt earns (a client-side
    /// budget), if any: 1 to [`TOKEN`]. Whole numbers, as gRPC's retry
    /// throttling and Finagle's `TokenRetryBudget` count them, so ten
    /// deposits of 0.1 make exactly one token.
    pub budget: Option<u32>,
}

/// One retry token, in the thousandths a budget counts in.
pub const TOKEN: u32 = 1000;
/// The most a client's budget holds: 10 tokens.
pub const BUDGET_CAP: u32 = 10 * TOKEN;

/// A budget in thousandths as the decimal a scenario writes: `0.1`, `0.125`, `1`.
pub fn format_budget(thousandths: u32) -> String {
    let (whole, frac) = (thousandths / TOKEN, thousandths % TOKEN);
    if frac == 0 { whole.to_string() } else { format!("{whole}.{frac:03}").trim_end_matches('0').to_string() }
}

/// The most attempts a policy may allow per logical request: a guard
/// against retry storms that would grow without bound.
pub const MAX_ATTEMPTS: u32 = 1000;

impl RetryPolicy {
    /// No retries.
    pub const NONE: RetryPolicy = RetryPolicy {
        backoff: Backoff::None,
        base: Nanos::ZERO,
        cap: Nanos::ZERO,
        max_attempts: 1,
        jitter: Nanos::ZERO,
        budget: None,
    };

    /// The policy in words, with the settings it uses, as `ratesim check`
    /// and a run's header show it: `full_jitter (base 100ms, cap 10s, at
    /// most 5 attempts, budget 0.1)`.
    pub fn describe(&self) -> String {
        let fmt = crate::time::format_duration;
        let mut settings = Vec::new();
        if self.backoff.uses_base() {
            settings.push(format!("base {}", fmt(self.base)));
        }
        if self.backoff.uses_cap() {
            settings.push(format!("cap {}", fmt(self.cap)));
        }
        if self.backoff == Backoff::RetryAfter {
            settings.push(match self.jitter {
                Nanos::ZERO => "at the advertised time".to_string(),
                j => format!("at the advertised time plus up to {} of jitter", fmt(j)),
            });
        }
        if self.backoff != Backoff::None {
            settings.push(format!("at most {} attempts", self.max_attempts));
        }
        if let Some(b) = self.budget {
            settings.push(format!("budget {}", format_budget(b)));
        }
        if settings.is_empty() {
            self.backoff.name().to_string()
        } else {
            format!("{} ({})", self.backoff.name(), settings.join(", "))
        }
    }

    /// `min(cap, base * 2^(a-1))`, exactly, saturating.
    fn exponential(&self, attempt: u32) -> u64 {
        let shift = attempt.saturating_sub(1).min(63);
        let grown = u128::from(self.base.get()) << shift;
        grown.min(u128::from(self.cap.get())) as u64
    }

    /// The wait before the next attempt after attempt `attempt` (1-based)
    /// was rejected at `now`; `previous` is the last wait (for decorrelated
    /// jitter; `base` before the first retry) and `header` the instant the
    /// limiter's Retry-After header gave, if it gave one. `None`: no retry.
    pub fn wait(
        &self,
        rng: &mut ChaCha8Rng,
        now: Nanos,
        attempt: u32,
        previous: Nanos,
        header: Option<Nanos>,
    ) -> Option<Nanos> {
        if attempt >= self.max_attempts {
            return None;
        }
        let wait = match self.backoff {
            Backoff::None => return None,
            Backoff::Immediate => 1,
            Backoff::Fixed => self.base.get(),
            Backoff::Exponential => self.exponential(attempt),
            Backoff::FullJitter => rng.random_range(0..=self.exponential(attempt)),
            Backoff::EqualJitter => {
                let temp = self.exponential(attempt);
                temp / 2 + rng.random_range(0..=temp - temp / 2)
            }
            Backoff::Decorrelated => {
                let hi = previous.get().saturating_mul(3).max(self.base.get());
                rng.random_range(self.base.get()..=hi).min(self.cap.get())
            }
            Backoff::RetryAfter => {
                let at = header?;
                let extra =
                    if self.jitter == Nanos::ZERO { 0 } else { rng.random_range(0..self.jitter.get()) };
                at.get().saturating_sub(now.get()).saturating_add(extra)
            }
        };
        Some(Nanos::new(wait))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn policies_describe_the_settings_they_use() {
        let mut p = policy(Backoff::FullJitter);
        p.budget = Some(100);
        assert_eq!(p.describe(), "full_jitter (base 100ms, cap 1s, at most 6 attempts, budget 0.1)");
        assert_eq!(policy(Backoff::Fixed).describe(), "fixed (base 100ms, at most 6 attempts)");
        assert_eq!(policy(Backoff::Immediate).describe(), "immediate (at most 6 attempts)");
        assert_eq!(RetryPolicy::NONE.describe(), "none");
        let mut p = policy(Backoff::RetryAfter);
        assert_eq!(p.describe(), "retry_after (at the advertised time, at most 6 attempts)");
        p.jitter = Nanos::from_millis(50);
        assert_eq!(
            p.describe(),
            "retry_after (at the advertised time plus up to 50ms of jitter, at most 6 attempts)"
        );
    }

    #[test]
    fn budgets_print_as_written() {
        assert_eq!(format_budget(100), "0.1");
        assert_eq!(format_budget(125), "0.125");
        assert_eq!(format_budget(1), "0.001");
        assert_eq!(format_budget(1000), "1");
    }

    use super::*;
    use rand::SeedableRng;

    fn policy(backoff: Backoff) -> RetryPolicy {
        RetryPolicy {
            backoff,
            base: Nanos::from_millis(100),
            cap: Nanos::from_secs(1),
            max_attempts: 6,
            jitter: Nanos::ZERO,
            budget: None,
        }
    }

    #[test]
    fn deterministic_waits() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let now = Nanos::from_secs(5);
        let ms = Nanos::from_millis;
        let wait = |p: RetryPolicy, rng: &mut ChaCha8Rng, a: u32| p.wait(rng, now, a, ms(100), None);
        assert_eq!(wait(policy(Backoff::None), &mut rng, 1), None);
        assert_eq!(wait(policy(Backoff::Immediate), &mut rng, 1), Some(Nanos::new(1)));
        assert_eq!(wait(policy(Backoff::Fixed), &mut rng, 3), Some(ms(100)));
        // 100, 200, 400, 800 ms, then capped at 1 s.
        let exp: Vec<_> = (1..=5).map(|a| wait(policy(Backoff::Exponential), &mut rng, a)).collect();
        assert_eq!(exp, [Some(ms(100)), Some(ms(200)), Some(ms(400)), Some(ms(800)), Some(ms(1000))]);
        // Attempt 6 of at most 6: no more.
        assert_eq!(wait(policy(Backoff::Exponential), &mut rng, 6), None);
        // Retry-After: exactly the header, or nothing without one.
        let p = policy(Backoff::RetryAfter);
        assert_eq!(p.wait(&mut rng, now, 1, ms(100), Some(Nanos::from_millis(5_250))), Some(ms(250)));
        assert_eq!(p.wait(&mut rng, now, 1, ms(100), None), None);
    }

    #[test]
    fn jittered_waits_stay_in_their_ranges() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let now = Nanos::from_secs(1);
        let ms = |v| Nanos::from_millis(v).get();
        for a in 1..=5u32 {
            let top = (ms(100) << (a - 1)).min(ms(1000));
            for _ in 0..200 {
                let full =
                    policy(Backoff::FullJitter).wait(&mut rng, now, a, Nanos::ZERO, None).unwrap().get();
                assert!(full <= top);
                let equal =
                    policy(Backoff::EqualJitter).wait(&mut rng, now, a, Nanos::ZERO, None).unwrap().get();
                assert!(equal >= top / 2 && equal <= top);
                let prev = Nanos::from_millis(300);
                let dec = policy(Backoff::Decorrelated).wait(&mut rng, now, a, prev, None).unwrap().get();
                assert!(dec >= ms(100) && dec <= ms(900));
            }
        }
        let mut p = policy(Backoff::RetryAfter);
        p.jitter = Nanos::from_millis(50);
        for _ in 0..200 {
            let w = p.wait(&mut rng, now, 1, Nanos::ZERO, Some(Nanos::from_secs(2))).unwrap().get();
            assert!(w >= ms(1000) && w < ms(1050));
        }
    }
}
