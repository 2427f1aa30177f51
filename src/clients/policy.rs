//! Retry policies: when a client whose request was rejected tries again
//! (`docs/semantics.md`, "Reacting clients"), and the retry budget or
//! gRPC's retry throttling that may stop it.

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
    /// gRPC's retry throttling, if any.
    pub throttle: Option<Throttle>,
    /// The AWS SDKs' retry quota (botocore's standard mode), if any: the
    /// capacity a client starts with and never exceeds, in whole units.
    pub retry_quota: Option<u32>,
}

/// What a retry takes from an AWS retry quota after a throttling error
/// (botocore's `_RETRY_COST`, and `_THROTTLING_RETRY_COST` under its
/// newer retry rules: 5 either way), and what a successful request that
/// retried gives back (its last acquisition: the same 5).
pub const QUOTA_RETRY_COST: u32 = 5;
/// What a request that succeeds at its first attempt gives back
/// (botocore's `_NO_RETRY_INCREMENT`).
pub const QUOTA_NO_RETRY_INCREMENT: u32 = 1;
/// botocore's `RetryQuota.INITIAL_CAPACITY`, the capacity a scenario
/// usually gives, and the most `retry_quota` may be (many clients' worth).
pub const QUOTA_DEFAULT: u32 = 500;
pub const QUOTA_MAX: u32 = 1_000_000;

/// gRPC's retry throttling (`retryThrottling` in a service config, gRFC A6),
/// as grpc-java's `RetriableStream.Throttle` counts it: a client's token
/// count starts at `max_tokens`, every rejected attempt takes one token (not
/// below 0), every admitted attempt adds `token_ratio` (not above
/// `max_tokens`), and a rejected attempt may retry only if the count it left
/// is above half of `max_tokens`. All in thousandths of a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throttle {
    /// `maxTokens` in thousandths: where the count starts, and its most.
    pub max_tokens: u32,
    /// `tokenRatio` in thousandths: what an admitted attempt adds.
    pub token_ratio: u32,
}

impl Throttle {
    /// The most `maxTokens` may be (gRFC A6; grpc-go caps it there).
    pub const MAX_TOKENS: f64 = 1000.0;

    /// A service config's number in thousandths, as grpc-java reads it:
    /// the JSON number to a `float`, times 1000 in `float`, truncated to
    /// an `int`. Most values with 3 decimal places come out exact, but not
    /// all: 0.251 is 250 thousandths (0.251f * 1000 is 250.99998).
    pub fn thousandths(v: f64) -> u32 {
        ((v as f32) * 1000.0f32) as u32
    }

    /// The count a rejected attempt leaves, and whether the client may
    /// retry (grpc-java's `onQualifiedFailureThenCheckIsAboveThreshold`):
    /// at 0 the count stays 0 and no retry; otherwise one token less (not
    /// below 0), and a retry only if that is above half of `max_tokens`
    /// (integer halving in thousandths, as grpc-java's `threshold`).
    pub fn on_rejected(&self, count: u32) -> (u32, bool) {
        if count == 0 {
            return (0, false);
        }
        let decremented = i64::from(count) - i64::from(TOKEN);
        (decremented.max(0) as u32, decremented > i64::from(self.max_tokens / 2))
    }

    /// The count an admitted attempt leaves (grpc-java's `onSuccess`).
    pub fn on_admitted(&self, count: u32) -> u32 {
        count.saturating_add(self.token_ratio).min(self.max_tokens)
    }
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
        throttle: None,
        retry_quota: None,
    };

    /// Whether a client under this policy ever retries: a policy other
    /// than `none` that allows a second attempt.
    pub fn retries(&self) -> bool {
        self.backoff != Backoff::None && self.max_attempts > 1
    }

    /// Whether a client under this policy draws its waits at random (so
    /// that another seed changes them): it retries, with full, equal or
    /// decorrelated jitter, or after the header with a `jitter`.
    pub fn draws(&self) -> bool {
        self.retries()
            && match self.backoff {
                Backoff::FullJitter | Backoff::EqualJitter | Backoff::Decorrelated => true,
                Backoff::RetryAfter => self.jitter > Nanos::ZERO,
                Backoff::None | Backoff::Immediate | Backoff::Fixed | Backoff::Exponential => false,
            }
    }

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
        if let Some(t) = self.throttle {
            settings.push(format!(
                "gRPC throttling: max_tokens {}, token_ratio {}",
                format_budget(t.max_tokens),
                format_budget(t.token_ratio)
            ));
        }
        if let Some(q) = self.retry_quota {
            settings.push(format!("AWS retry quota {q}"));
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
            throttle: None,
            retry_quota: None,
        }
    }

    /// grpc-java's own test of its throttle (`RetriableStreamTest.throttle`,
    /// `new Throttle(4f, 0.8f)`), step for step: the count after each call
    /// and whether a retry is allowed.
    #[test]
    fn throttle_counts_as_grpc_java_tests_it() {
        let t = Throttle { max_tokens: Throttle::thousandths(4.0), token_ratio: Throttle::thousandths(0.8) };
        assert_eq!((t.max_tokens, t.token_ratio), (4000, 800));
        let above = |c: u32| c > t.max_tokens / 2; // isAboveThreshold
        let mut c = t.max_tokens;
        assert!(above(c));
        for (count, retry) in [(3000, true), (2000, false), (1000, false), (0, false), (0, false), (0, false)]
        {
            let (next, ok) = t.on_rejected(c);
            assert_eq!((next, ok), (count, retry));
            c = next;
        }
        assert!(!above(c));
        for (count, is_above) in
            [(800, false), (1600, false), (2400, true), (3200, true), (4000, true), (4000, true)]
        {
            c = t.on_admitted(c);
            assert_eq!((c, above(c)), (count, is_above));
        }
        assert_eq!(t.on_rejected(c), (3000, true));
        assert_eq!(t.on_rejected(3000), (2000, false));
    }

    /// grpc-java reads the numbers through `float` and truncates: most
    /// values with 3 decimal places are exact, a few lose a thousandth.
    #[test]
    fn throttle_numbers_are_read_as_grpc_java_reads_them() {
        assert_eq!(Throttle::thousandths(0.1), 100);
        assert_eq!(Throttle::thousandths(10.0), 10_000);
        assert_eq!(Throttle::thousandths(1000.0), 1_000_000);
        assert_eq!(Throttle::thousandths(0.251), 250);
        assert_eq!(Throttle::thousandths(1.004), 1003);
        assert_eq!(Throttle::thousandths(0.0005), 0);
        // An odd max: the threshold is halved in whole thousandths, 1.
        let t = Throttle { max_tokens: 3, token_ratio: 1 };
        assert_eq!(t.on_rejected(3), (0, false));
        assert_eq!(t.on_rejected(1003), (3, true));
        assert_eq!(t.on_admitted(2), 3);
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

    // ---- the draws themselves ------------------------------------------------

    /// A uniform draw in `[low, high]` from `rng`'s next 64-bit words, as
    /// docs/semantics.md says waits are drawn ("`rand`'s `random_range`
    /// over the integers"): rand 0.10 (without its `unbiased` feature)
    /// multiplies one word by the range's size and keeps the high 64 bits;
    /// when the low bits fall in the biased zone it draws a second word and
    /// carries 1 if the two low parts overflow. Written from that
    /// description with plain `u128` arithmetic, on words read straight
    /// from the generator.
    fn uniform(words: &mut ChaCha8Rng, low: u64, high: u64) -> u64 {
        use rand::Rng;
        let range = (high - low).wrapping_add(1);
        if range == 0 {
            return words.next_u64(); // the whole of u64
        }
        let wide = u128::from(words.next_u64()) * u128::from(range);
        let (mut hi, lo) = ((wide >> 64) as u64, wide as u64);
        if lo > range.wrapping_neg() {
            let next = ((u128::from(words.next_u64()) * u128::from(range)) >> 64) as u64;
            hi += u64::from(lo.checked_add(next).is_none());
        }
        low + hi
    }

    /// Every jittered policy's waits for a fixed seed equal the documented
    /// formula applied to draws taken independently from a second ChaCha8
    /// generator seeded the same way: full jitter uniform in `[0, E(a)]`,
    /// equal jitter `floor(E / 2) + uniform in [0, E - floor(E / 2)]`,
    /// decorrelated `min(cap, uniform in [base, max(base, 3 * previous)])`,
    /// `retry_after` the header's wait plus uniform in `[0, jitter)`
    /// (docs/semantics.md, "Retry policies"). A policy that ignored its
    /// draws, or took them from another range, would not match.
    #[test]
    fn jittered_waits_are_the_documented_draws() {
        let now = Nanos::from_secs(3);
        for seed in [0u64, 1, 42, u64::MAX] {
            for stream in [0u64, 1 << 32, (1 << 32) + 5] {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                rng.set_stream(stream);
                let mut words = ChaCha8Rng::seed_from_u64(seed);
                words.set_stream(stream);
                let mut previous = Nanos::from_millis(100);
                for step in 0..300u32 {
                    let a = step % 7 + 1;
                    let e = (100_000_000u64 << (a - 1)).min(1_000_000_000); // E(a), base 100 ms, cap 1 s
                    let (backoff, expected) = match step % 4 {
                        0 => (Backoff::FullJitter, uniform(&mut words, 0, e)),
                        1 => (Backoff::EqualJitter, e / 2 + uniform(&mut words, 0, e - e / 2)),
                        2 => {
                            let hi = (3 * previous.get()).max(100_000_000);
                            (Backoff::Decorrelated, uniform(&mut words, 100_000_000, hi).min(1_000_000_000))
                        }
                        _ => (Backoff::RetryAfter, 250_000_000 + uniform(&mut words, 0, 50_000_000 - 1)),
                    };
                    let mut p = policy(backoff);
                    p.max_attempts = 8;
                    p.jitter = Nanos::from_millis(50);
                    let header = Some(now + Nanos::from_millis(250));
                    let got = p.wait(&mut rng, now, a, previous, header).unwrap();
                    assert_eq!(got.get(), expected, "seed {seed}, stream {stream}, step {step}: {backoff:?}");
                    if backoff == Backoff::Decorrelated {
                        previous = got;
                    }
                }
                // Both generators took the same words, no more.
                use rand::Rng;
                assert_eq!(rng.next_u64(), words.next_u64());
            }
        }
    }

    /// The first full-jitter waits of a lane's stream (seed 42, lane 0:
    /// stream 2^32) at attempt 3 (E = 400 ms), as [`uniform`] computes them
    /// from the generator's words, and as a separate implementation
    /// computed them (ChaCha8 written from its specification, seeded as
    /// rand_core's `seed_from_u64` documents, with the same range method):
    /// pinned, so that a change of generator, stream or range method (which
    /// would change every jittered run's output) shows here.
    #[test]
    fn full_jitter_waits_for_a_fixed_seed() {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        rng.set_stream(1 << 32);
        let mut words = ChaCha8Rng::seed_from_u64(42);
        words.set_stream(1 << 32);
        let p = policy(Backoff::FullJitter);
        let got: Vec<u64> =
            (0..4).map(|_| p.wait(&mut rng, Nanos::ZERO, 3, Nanos::ZERO, None).unwrap().get()).collect();
        let expected: Vec<u64> = (0..4).map(|_| uniform(&mut words, 0, 400_000_000)).collect();
        assert_eq!(got, expected);
        assert_eq!(got, PINNED_FULL_JITTER);
    }

    const PINNED_FULL_JITTER: [u64; 4] = [228_070_704, 113_757_893, 52_325_955, 310_218_064];

    /// Over many draws each policy's mean wait is the mean of its
    /// distribution (within 6 standard errors): full jitter `E / 2`, equal
    /// jitter `floor(E / 2) + (E - floor(E / 2)) / 2`, decorrelated (cap
    /// above `3 * previous`) `(base + 3 * previous) / 2`, `retry_after` the
    /// header's wait plus `(jitter - 1) / 2`. A stub that returned the top
    /// (or the bottom) of each range would be off by half a range.
    #[test]
    fn jittered_waits_have_the_documented_mean() {
        let mut rng = ChaCha8Rng::seed_from_u64(2024);
        let now = Nanos::from_secs(1);
        let n = 200_000u32;
        let mean = |p: RetryPolicy, rng: &mut ChaCha8Rng, a: u32, previous: u64, header: Option<Nanos>| {
            let sum: u128 = (0..n)
                .map(|_| u128::from(p.wait(rng, now, a, Nanos::new(previous), header).unwrap().get()))
                .sum();
            sum as f64 / f64::from(n)
        };
        // (mean, expected mean, width of the uniform range)
        let e = 400_000_000.0; // E(3) with base 100 ms
        let mut rows = vec![
            (mean(policy(Backoff::FullJitter), &mut rng, 3, 0, None), e / 2.0, e),
            (mean(policy(Backoff::EqualJitter), &mut rng, 3, 0, None), e / 2.0 + e / 4.0, e / 2.0),
        ];
        let mut decorrelated = policy(Backoff::Decorrelated);
        decorrelated.cap = Nanos::from_secs(10);
        rows.push((mean(decorrelated, &mut rng, 3, 300_000_000, None), 500_000_000.0, 800_000_000.0));
        let mut after = policy(Backoff::RetryAfter);
        after.jitter = Nanos::from_millis(50);
        let header = Some(now + Nanos::from_millis(250));
        rows.push((
            mean(after, &mut rng, 1, 0, header),
            250_000_000.0 + (50_000_000.0 - 1.0) / 2.0,
            50_000_000.0,
        ));
        for (got, want, width) in rows {
            // A uniform range's standard deviation is width / sqrt(12).
            let error = width / 12f64.sqrt() / f64::from(n).sqrt();
            assert!((got - want).abs() < 6.0 * error, "mean {got}, expected {want} (+- {})", 6.0 * error);
        }
    }

    /// Both ends of each range are drawn, and nothing outside them: with a
    /// range of 3 values each comes up about a third of the time (full
    /// jitter `[0, 2]`, equal jitter `[1, 3]`); `retry_after`'s jitter of
    /// 3 ns adds 0, 1 or 2, never 3.
    #[test]
    fn small_ranges_draw_every_value_evenly() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let ns = Nanos::new;
        let mut full = policy(Backoff::FullJitter);
        (full.base, full.cap) = (ns(1), ns(1000));
        let mut equal = full;
        equal.backoff = Backoff::EqualJitter;
        equal.base = ns(3);
        let mut after = policy(Backoff::RetryAfter);
        after.jitter = ns(3);
        let cases: [(RetryPolicy, u32, Option<Nanos>, [u64; 3]); 3] =
            [(full, 2, None, [0, 1, 2]), (equal, 1, None, [1, 2, 3]), (after, 1, Some(ns(10)), [0, 1, 2])];
        for (p, a, header, values) in cases {
            let mut seen = [0u32; 3];
            for _ in 0..30_000 {
                let w = p.wait(&mut rng, Nanos::ZERO, a, ns(0), header).unwrap().get();
                let w = if header.is_some() { w - 10 } else { w };
                let k = values
                    .iter()
                    .position(|&v| v == w)
                    .unwrap_or_else(|| panic!("{:?}: wait {w}", p.backoff));
                seen[k] += 1;
            }
            assert!(seen.iter().all(|&c| (9_000..11_000).contains(&c)), "{:?}: {seen:?}", p.backoff);
        }
    }
}
