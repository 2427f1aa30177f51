//! The retry-policy comparison (`[sweep] retry_policies`): the scenario's
//! traffic, limit and limiters, run once per retry table, in parallel. The
//! open-loop arrivals are the same in every run (the same seed), and each
//! lane draws its clients' random numbers from the same stream in every run
//! (common random numbers), so the runs differ in their policy only.

use rayon::prelude::*;

use crate::clients::{Backoff, RetryPolicy};
use crate::engine::{RunError, RunReport};
use crate::scenario::Scenario;
use crate::simulate;
use crate::time::Nanos;

use super::work::{RunShare, rerun_work};

/// One retry table's run.
#[derive(Clone, Debug)]
pub struct RetryPolicyPoint {
    /// A name for tables and charts, unique within the sweep (see [`labels`]).
    pub label: String,
    pub policy: RetryPolicy,
    pub report: RunReport,
}

/// Runs the scenario once per policy, each in place of `[retry]` for every
/// source (in parallel; results in the order of `policies`). `progress` is
/// called, from any thread, with the work each run adds as it goes
/// ([`rerun_work`], shared out over the run's time): the calls add up to
/// that times the policies. `open_arrivals`: the open-loop arrivals of the
/// scenario's own run, if it ran ([`rerun_work`]).
pub fn run(
    scenario: &Scenario,
    policies: &[RetryPolicy],
    open_arrivals: Option<u64>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<RetryPolicyPoint>, RunError> {
    let names = labels(policies);
    let (weight, end) = (rerun_work(scenario, open_arrivals), simulate::known_end(scenario));
    policies
        .par_iter()
        .zip(names)
        .map(|(&policy, label)| {
            let mut s = scenario.clone();
            s.retry = Some(runs_as(policy));
            s.source_retry = vec![None; s.traffic.len()];
            let mut share = RunShare::new(weight, end, progress).or_arrivals(open_arrivals);
            let report = simulate::run_in_sweep(&s, policies.len(), &mut |p| share.at(p))?;
            share.finish();
            Ok(RetryPolicyPoint { label, policy, report })
        })
        .collect()
}

/// The policy a run uses for `policy`: itself, except that `none` runs as
/// a policy that never retries (`immediate` with one attempt), so that the
/// run still counts logical requests, give-ups and time to success; the
/// decisions are the same.
fn runs_as(policy: RetryPolicy) -> RetryPolicy {
    if policy.backoff == Backoff::None {
        RetryPolicy { backoff: Backoff::Immediate, max_attempts: 1, ..policy }
    } else {
        policy
    }
}

/// Names for a sweep's retry tables: the policy's name, and where several
/// tables share a policy, the settings that tell them apart
/// (`full_jitter(base=100ms)`, `full_jitter(base=1s)`); tables that are
/// the same in every setting are numbered (`none#2`).
pub fn labels(policies: &[RetryPolicy]) -> Vec<String> {
    let fmt = |d: Nanos| crate::time::format_duration(d);
    let settings = |p: &RetryPolicy| -> [(&str, String); 8] {
        [
            ("base", fmt(p.base)),
            ("cap", fmt(p.cap)),
            ("max_attempts", p.max_attempts.to_string()),
            ("jitter", fmt(p.jitter)),
            ("budget", p.budget.map_or("none".into(), crate::clients::policy::format_budget)),
            (
                "max_tokens",
                p.throttle.map_or("none".into(), |t| crate::clients::policy::format_budget(t.max_tokens)),
            ),
            (
                "token_ratio",
                p.throttle.map_or("none".into(), |t| crate::clients::policy::format_budget(t.token_ratio)),
            ),
            ("retry_quota", p.retry_quota.map_or("none".into(), |q| q.to_string())),
        ]
    };
    let mut out: Vec<String> = Vec::with_capacity(policies.len());
    for p in policies {
        let same: Vec<&RetryPolicy> = policies.iter().filter(|q| q.backoff == p.backoff).collect();
        let mine = settings(p);
        // Only the settings the policy has (`cap` of `fixed` is its base,
        // `jitter` belongs to `retry_after`).
        let has = |k: usize| match mine[k].0 {
            "base" => p.backoff.uses_base(),
            "cap" => p.backoff.uses_cap(),
            "jitter" => p.backoff == Backoff::RetryAfter,
            _ => true,
        };
        let differ: Vec<String> = (0..mine.len())
            // A retry limit the policy lacks goes unsaid (`full_jitter`
            // beside `full_jitter(budget=0.1)`).
            .filter(|&k| has(k) && mine[k].1 != "none" && same.iter().any(|q| settings(q)[k].1 != mine[k].1))
            .map(|k| format!("{}={}", mine[k].0, mine[k].1))
            .collect();
        let base = if differ.is_empty() {
            p.backoff.name().to_string()
        } else {
            format!("{}({})", p.backoff.name(), differ.join(", "))
        };
        let n = out.iter().filter(|l| **l == base || l.starts_with(&format!("{base}#"))).count();
        out.push(if n == 0 { base } else { format!("{base}#{}", n + 1) });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(backoff: Backoff, base_ms: u64) -> RetryPolicy {
        RetryPolicy {
            backoff,
            base: Nanos::from_millis(base_ms),
            cap: Nanos::from_secs(10),
            max_attempts: 10,
            jitter: Nanos::ZERO,
            budget: None,
            throttle: None,
            retry_quota: None,
        }
    }

    #[test]
    fn labels_name_the_policy_and_only_the_settings_that_differ() {
        let v = [
            RetryPolicy::NONE,
            policy(Backoff::FullJitter, 100),
            policy(Backoff::FullJitter, 1000),
            policy(Backoff::Exponential, 100),
            RetryPolicy::NONE,
        ];
        assert_eq!(
            labels(&v),
            ["none", "full_jitter(base=100ms)", "full_jitter(base=1s)", "exponential", "none#2"]
        );
        // `fixed` has no cap of its own (it is its base): not in the label.
        let fixed =
            |base_ms| RetryPolicy { cap: Nanos::from_millis(base_ms), ..policy(Backoff::Fixed, base_ms) };
        assert_eq!(labels(&[fixed(100), fixed(200)]), ["fixed(base=100ms)", "fixed(base=200ms)"]);
        // Retry limits: named where a policy has one.
        let p = policy(Backoff::FullJitter, 100);
        let budget = RetryPolicy { budget: Some(100), ..p };
        let throttle = RetryPolicy {
            throttle: Some(crate::clients::Throttle { max_tokens: 10_000, token_ratio: 100 }),
            ..p
        };
        let quota = RetryPolicy { retry_quota: Some(500), ..p };
        assert_eq!(
            labels(&[p, budget, throttle, quota]),
            [
                "full_jitter",
                "full_jitter(budget=0.1)",
                "full_jitter(max_tokens=10, token_ratio=0.1)",
                "full_jitter(retry_quota=500)"
            ]
        );
    }
}
