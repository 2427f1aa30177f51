//! The `[retry]` table (and a source's own `[traffic.retry]`): how clients
//! react to a rejection (`docs/semantics.md`, "Reacting clients").

use serde::Deserialize;
use toml::Spanned;

use super::diagnostics::{Ctx, ScenarioError, TableName, Whole};
use crate::clients::Backoff;
use crate::clients::policy::{MAX_ATTEMPTS, QUOTA_DEFAULT, QUOTA_MAX, RetryPolicy, TOKEN, Throttle};
use crate::time::Nanos;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRetry {
    policy: Spanned<String>,
    base: Option<Spanned<String>>,
    cap: Option<Spanned<String>>,
    max_attempts: Option<Spanned<Whole>>,
    jitter: Option<Spanned<String>>,
    budget: Option<Spanned<f64>>,
    max_tokens: Option<Spanned<f64>>,
    token_ratio: Option<Spanned<f64>>,
    retry_quota: Option<Spanned<Whole>>,
}

impl TableName for RawRetry {
    const STRUCT: &'static str = "RawRetry";
}

/// Validates a retry table whose keys are named `{table}.key`, starting at
/// `span` (its header, for keys it lacks).
pub(super) fn validate(
    ctx: &Ctx,
    table: &str,
    span: std::ops::Range<usize>,
    r: &RawRetry,
) -> Result<RetryPolicy, ScenarioError> {
    let key = |k: &str| format!("{table}.{k}");
    let backoff = Backoff::parse(r.policy.get_ref())
        .ok_or_else(|| ctx.one_of(&key("policy"), &r.policy, &Backoff::NAMES))?;
    let needless = |k: &str, v: &std::ops::Range<usize>| {
        ctx.at(
            v.clone(),
            format!("`{}` has no effect with policy = \"{}\"{}", key(k), backoff.name(), takes(k)),
        )
    };
    if backoff == Backoff::None {
        for (k, span) in [
            ("base", r.base.as_ref().map(|v| v.span())),
            ("cap", r.cap.as_ref().map(|v| v.span())),
            ("max_attempts", r.max_attempts.as_ref().map(|v| v.span())),
            ("jitter", r.jitter.as_ref().map(|v| v.span())),
            ("budget", r.budget.as_ref().map(|v| v.span())),
            ("max_tokens", r.max_tokens.as_ref().map(|v| v.span())),
            ("token_ratio", r.token_ratio.as_ref().map(|v| v.span())),
            ("retry_quota", r.retry_quota.as_ref().map(|v| v.span())),
        ] {
            if let Some(s) = span {
                return Err(needless(k, &s));
            }
        }
        return Ok(RetryPolicy::NONE);
    }
    let missing = |k: &str, why: &str| ctx.at(span.clone(), format!("`{}` is required {why}", key(k)));
    let base = match (&r.base, backoff.uses_base()) {
        (Some(b), true) => ctx.positive_duration(&key("base"), b)?,
        (Some(b), false) => return Err(needless("base", &b.span())),
        (None, true) => {
            return Err(missing(
                "base",
                &format!("for policy = \"{}\": the first wait, like \"100ms\"", backoff.name()),
            ));
        }
        (None, false) => Nanos::ZERO,
    };
    let cap = match (&r.cap, backoff.uses_cap()) {
        (Some(c), true) => {
            let cap = ctx.positive_duration(&key("cap"), c)?;
            if cap < base {
                return Err(ctx.at(
                    c.span(),
                    format!("`{}` ({} s) must be at least `base` ({} s)", key("cap"), cap, base),
                ));
            }
            cap
        }
        (Some(c), false) => return Err(needless("cap", &c.span())),
        (None, true) => {
            return Err(missing(
                "cap",
                &format!("for policy = \"{}\": the longest wait, like \"10s\"", backoff.name()),
            ));
        }
        (None, false) => base,
    };
    // Without a bound on attempts a storm grows without end: required.
    let max_attempts = match &r.max_attempts {
        None => {
            return Err(missing(
                "max_attempts",
                "when clients retry: attempts per request, the first included, like 5",
            ));
        }
        Some(m) => {
            let v = m.get_ref().0;
            if v < 1 || v > i128::from(MAX_ATTEMPTS) {
                return Err(ctx.at(
                    m.span(),
                    format!("`{}` must be a whole number from 1 to {MAX_ATTEMPTS} (the first attempt included), got {v}", key("max_attempts")),
                ));
            }
            v as u32
        }
    };
    let jitter = match (&r.jitter, backoff) {
        (Some(j), Backoff::RetryAfter) => ctx.duration(&key("jitter"), j)?,
        (Some(j), _) => return Err(needless("jitter", &j.span())),
        (None, _) => Nanos::ZERO,
    };
    let budget = match &r.budget {
        None => None,
        Some(b) => {
            let v = *b.get_ref();
            if !(v.is_finite() && v > 0.0 && v <= 1.0) {
                return Err(ctx.at(
                    b.span(),
                    format!(
                        "`{}` must be above 0 and at most 1 (retry tokens each first attempt earns), got {v}",
                        key("budget")
                    ),
                ));
            }
            // Tokens are whole thousandths, as gRPC and Finagle count them:
            // a finer ratio would be rounded, so it is refused instead.
            let thousandths = (v * f64::from(TOKEN)).round();
            if (v * f64::from(TOKEN) - thousandths).abs() > 1e-6 {
                return Err(ctx.at(
                    b.span(),
                    format!(
                        "`{}` = {v} has more than 3 decimal places: retry tokens are counted in thousandths (0.001 to 1)",
                        key("budget")
                    ),
                ));
            }
            Some(thousandths as u32)
        }
    };
    let throttle = throttle(ctx, &key, span, r)?;
    let retry_quota = match &r.retry_quota {
        None => None,
        Some(q) => {
            // One rule limits a client's retries, not two.
            let other = if r.budget.is_some() {
                Some("budget")
            } else if r.max_tokens.is_some() {
                Some("max_tokens")
            } else {
                None
            };
            if let Some(other) = other {
                return Err(ctx.at(
                    q.span(),
                    format!(
                        "`{}` (the AWS SDKs' retry quota) and `{}` both limit retries: give one of them",
                        key("retry_quota"),
                        key(other)
                    ),
                ));
            }
            let v = q.get_ref().0;
            if v < 1 || v > i128::from(QUOTA_MAX) {
                return Err(ctx.at(
                    q.span(),
                    format!(
                        "`{}` must be a whole number from 1 to {QUOTA_MAX} (a client's retry capacity; the AWS SDKs start with {QUOTA_DEFAULT}), got {v}",
                        key("retry_quota")
                    ),
                ));
            }
            Some(v as u32)
        }
    };
    Ok(RetryPolicy { backoff, base, cap, max_attempts, jitter, budget, throttle, retry_quota })
}

/// What to do with a retry key its policy does not use: remove it, or
/// use a policy that takes it (named as a scenario writes them).
fn takes(k: &str) -> String {
    let uses = |b: Backoff| match k {
        "base" => b.uses_base(),
        "cap" => b.uses_cap(),
        "jitter" => b == Backoff::RetryAfter,
        _ => b != Backoff::None,
    };
    let names: Vec<String> = Backoff::NAMES
        .iter()
        .filter_map(|n| Backoff::parse(n))
        .filter(|&b| uses(b))
        .map(|b| format!("\"{}\"", b.name()))
        .collect();
    match names.as_slice() {
        [one] => format!(": remove it, or use policy = {one}, which takes it"),
        _ if !uses(Backoff::None) && names.len() == Backoff::NAMES.len() - 1 => {
            ", which never retries: remove it, or choose a policy that retries".to_string()
        }
        [rest @ .., last] => {
            format!(": remove it, or use a policy that takes it: {} or {last}", rest.join(", "))
        }
        [] => ": remove it".to_string(),
    }
}

/// gRPC's retry throttling: `max_tokens` and `token_ratio`, both or
/// neither, read as grpc-java reads them ([`Throttle::thousandths`]); not
/// with a `budget`, another rule for the same thing.
fn throttle(
    ctx: &Ctx,
    key: &dyn Fn(&str) -> String,
    span: std::ops::Range<usize>,
    r: &RawRetry,
) -> Result<Option<Throttle>, ScenarioError> {
    let (max, ratio) = match (&r.max_tokens, &r.token_ratio) {
        (None, None) => return Ok(None),
        (Some(m), Some(t)) => (m, t),
        (Some(_), None) | (None, Some(_)) => {
            let (has, lacks) = if r.max_tokens.is_some() {
                ("max_tokens", "token_ratio")
            } else {
                ("token_ratio", "max_tokens")
            };
            return Err(ctx.at(
                span,
                format!(
                    "`{}` is required with `{}`: gRPC's retry throttling takes both (like max_tokens = 10, token_ratio = 0.1)",
                    key(lacks),
                    key(has)
                ),
            ));
        }
    };
    if let Some(b) = &r.budget {
        return Err(ctx.at(
            b.span(),
            format!(
                "`{}` and gRPC's retry throttling (`{}`, `{}`) both limit retries: give one of them",
                key("budget"),
                key("max_tokens"),
                key("token_ratio")
            ),
        ));
    }
    let read = |k: &str, v: &Spanned<f64>, what: &str| {
        let x = *v.get_ref();
        let t =
            if x.is_finite() && x > 0.0 && x <= Throttle::MAX_TOKENS { Throttle::thousandths(x) } else { 0 };
        if t == 0 {
            return Err(
                ctx.at(v.span(), format!("`{}` must be from 0.001 to 1000 ({what}), got {x}", key(k)))
            );
        }
        Ok(t)
    };
    let max_tokens = read("max_tokens", max, "where a client's token count starts, and its most")?;
    let token_ratio = read("token_ratio", ratio, "tokens an admitted attempt adds")?;
    Ok(Some(Throttle { max_tokens, token_ratio }))
}

/// `[sweep] retry_policies` (first entry at `at`, if any) replaces the
/// retry table of every source: it needs sources, and none may have a
/// table of its own, which would override every entry. `policies`: the
/// `[retry]` table, then each source's own, with their places.
pub(super) fn swept(
    ctx: &Ctx,
    at: Option<std::ops::Range<usize>>,
    traffic: &[super::Traffic],
    policies: &[(std::ops::Range<usize>, Option<RetryPolicy>)],
) -> Result<(), ScenarioError> {
    let Some(at) = at else { return Ok(()) };
    if traffic.is_empty() {
        return Err(ctx.at(
            at,
            "`sweep.retry_policies` runs the scenario's traffic once per retry table, but there is no [[traffic]] source",
        ));
    }
    if let Some(i) = policies.iter().skip(1).position(|(_, p)| p.is_some()) {
        return Err(ctx.at(
            policies[i + 1].0.clone(),
            format!(
                "`traffic[{i}].retry` would override every entry of `sweep.retry_policies` for this source: \
remove it, and give the policies to compare in `sweep.retry_policies`"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::Scenario;

    const HEAD: &str = "name = \"t\"\nduration = \"2s\"\n[limit]\nrequests = 1\nwindow = \"1s\"\n";
    const EXAMPLE: &str = "[[limiter]]\nkind = \"example\"\n";

    fn error(text: &str) -> String {
        Scenario::parse(text, Path::new("s.toml")).unwrap_err().to_string()
    }

    /// Only the test-only example limiter sends no Retry-After header (every
    /// shipped limiter advertises one), so the CLI cannot reach this error:
    /// it is checked here, at the retry table that asks for the header.
    #[test]
    fn following_a_header_needs_limiters_that_send_one() {
        let burst = "[[traffic]]\nkind = \"burst\"\ncount = 3\n";
        let follow = "policy = \"retry_after\"\nmax_attempts = 2\n";
        let sends_none =
            "policy = \"retry_after\" follows each limiter's Retry-After header, but `example` sends none";
        // [retry] starts on line 11.
        let e = error(&format!("{HEAD}{burst}{EXAMPLE}[retry]\n{follow}"));
        assert!(e.starts_with("s.toml:11:1: ") && e.contains(sends_none), "{e}");
        // A source's own table, on line 9.
        let e = error(&format!("{HEAD}{burst}[traffic.retry]\n{follow}{EXAMPLE}"));
        assert!(e.starts_with("s.toml:9:1: ") && e.contains(sends_none), "{e}");
        // An entry of the policy comparison (line 12, column 40).
        let e = error(&format!(
            "{HEAD}{burst}{EXAMPLE}[sweep]\nretry_policies = [{{ policy = \"none\" }}, {{ policy = \"retry_after\", max_attempts = 2 }}]\n"
        ));
        assert!(e.starts_with("s.toml:12:40: ") && e.contains(sends_none), "{e}");
        // Other policies do not need the header.
        let text = format!("{HEAD}{burst}{EXAMPLE}[retry]\npolicy = \"immediate\"\nmax_attempts = 2\n");
        assert!(Scenario::parse(&text, Path::new("s.toml")).is_ok());
    }
}
