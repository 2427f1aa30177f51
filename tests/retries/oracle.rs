//! A brute-force model of a lane whose open-loop clients retry, written
//! from `docs/semantics.md` ("Reacting clients", the window limiters, GCRA)
//! and nothing of the library's limiter, queue or reactor code, compared
//! attempt by attempt and figure by figure with the engine.
//!
//! The model keeps one plain `Vec` of pending retries and scans it for the
//! earliest (time, order of scheduling) before every step; an arrival at
//! `t` goes before every retry due at `t` (arrivals first at an instant).
//! Each attempt is decided from scratch on its key's whole history of
//! decided attempts by the limiter's rule as the docs state it, and a
//! rejection's advertised retry time is solved from the same history by the
//! docs' formula. The header rounding, the policy's wait, the retry budget
//! (thousandths, capped at 10 tokens, shared by a key's sources), gRPC's
//! retry throttling (a count from `max_tokens` in thousandths, one token
//! less per rejection, `token_ratio` more per admission, a retry only above
//! half of `max_tokens`, shared by a key's sources), the AWS SDKs' retry
//! quota (5 a retry, 5 back for a request that succeeds after retrying, 1
//! for one that succeeds at once, never above its capacity) and the
//! end of the run are applied here again. Jittered waits are the documented
//! draws (`random_range` on ChaCha8 stream `2^32` of the seed, one per
//! rejection that asks the policy for a wait, in the lane's order), so the
//! model covers them as exactly as the deterministic ones.

use std::collections::HashMap;

use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ratesim::clients::{Backoff, Clients, Logical, RetryPolicy, Throttle};
use ratesim::engine::{self, DecisionRecord, RunConfig};
use ratesim::limiter::{
    AlgorithmSpec, FixedWindowSpec, GcraSpec, Limit, LimiterSpec, RetryAfter, SlidingLogSpec,
    SlotCounterSpec, WindowAlign,
};
use ratesim::metrics::LimiterReport;
use ratesim::time::Nanos;
use ratesim::trace::Arrival;

use crate::common::Collect;

const MS: u64 = 1_000_000;
const SECOND: u64 = 1_000_000_000;
/// The grid most times of a case sit on, so that arrivals, window starts,
/// advertised times and fixed waits often meet at one instant.
const UNIT: u64 = 100 * MS;
/// Retry tokens in thousandths: one token, and the most a bucket holds.
const TOKEN: u32 = 1000;
const BUDGET_CAP: u32 = 10 * TOKEN;

/// One random run: a limit, open-loop arrivals (time, key, source), each
/// source's retry policy, the run's end, the seed, the limiters.
#[derive(Clone, Debug)]
pub struct Case {
    limit: u64,
    window: u64,
    arrivals: Vec<(u64, u64, u16)>,
    keyed: bool,
    policies: Vec<RetryPolicy>,
    end: Option<u64>,
    seed: u64,
    lanes: Vec<LimiterSpec>,
}

/// A limiter's rule as the docs state it.
#[derive(Clone, Copy, Debug)]
enum Rule {
    /// Aligned windows `[offset + kW, offset + (k+1)W)`, `offset < W`.
    Aligned {
        offset: u64,
    },
    FirstRequest,
    Slots {
        n: u64,
    },
    Log {
        count_rejected: bool,
    },
    Gcra {
        burst: u64,
    },
}

impl Rule {
    fn of(spec: &LimiterSpec, limit: u64, window: u64) -> Rule {
        match &spec.algorithm {
            AlgorithmSpec::FixedWindow(FixedWindowSpec { align: WindowAlign::Epoch { offset } }) => {
                Rule::Aligned { offset: offset.get() % window }
            }
            AlgorithmSpec::FixedWindow(FixedWindowSpec { align: WindowAlign::FirstRequest }) => {
                Rule::FirstRequest
            }
            AlgorithmSpec::SlotCounter(SlotCounterSpec { slots }) => Rule::Slots { n: *slots },
            AlgorithmSpec::SlidingLog(SlidingLogSpec { count_rejected }) => {
                Rule::Log { count_rejected: *count_rejected }
            }
            AlgorithmSpec::Gcra(GcraSpec { burst, max_wait: None }) => {
                Rule::Gcra { burst: burst.unwrap_or(limit) }
            }
            other => panic!("no model for {other:?}"),
        }
    }
}

/// One key's decided attempts, in order: (time, admitted).
type History = [(u64, bool)];

/// Admitted attempts in the exact window `(t - W, t]`.
fn window_count(h: &History, window: u64, t: u64) -> u64 {
    h.iter().filter(|&&(x, a)| a && x + window > t).count() as u64
}

/// The aligned window holding `x`, counted from the one before time 0.
fn aligned_index(x: u64, window: u64, offset: u64) -> u64 {
    (x + window - offset) / window
}

fn slot(x: u64, window: u64, n: u64) -> u64 {
    (u128::from(x) * u128::from(n) / u128::from(window)) as u64
}

/// The first-request window open at `t` after history `h`: the admitted
/// attempt that opened it (a request at or after the end of the last
/// window opens one, and is admitted), if one is open at `t`.
fn first_request_start(h: &History, window: u64, t: u64) -> Option<u64> {
    let mut start: Option<u64> = None;
    for &(x, admitted) in h {
        if admitted && start.is_none_or(|s| x >= s + window) {
            start = Some(x);
        }
    }
    start.filter(|&s| t < s + window)
}

/// GCRA's theoretical arrival time after history `h` (`None`: unset).
fn gcra_tat(h: &History, t_emission: u64) -> Option<u64> {
    let mut tat: Option<u64> = None;
    for &(x, admitted) in h {
        if admitted {
            tat = Some(tat.unwrap_or(x).max(x) + t_emission);
        }
    }
    tat
}

/// `T = floor(W / L)`, at least 1, and `tau = T (b - 1)`.
fn gcra_params(limit: u64, window: u64, burst: u64) -> (u64, u64) {
    let t = (window / limit).max(1);
    (t, t * (burst - 1))
}

/// Whether `rule` admits a request at `t` after the key's history `h`.
fn decide(rule: Rule, limit: u64, window: u64, h: &History, t: u64) -> bool {
    match rule {
        Rule::Aligned { offset } => {
            let k = aligned_index(t, window, offset);
            let count = h.iter().filter(|&&(x, a)| a && aligned_index(x, window, offset) == k).count();
            (count as u64) < limit
        }
        Rule::FirstRequest => match first_request_start(h, window, t) {
            None => true,
            Some(s) => (h.iter().filter(|&&(x, a)| a && x >= s).count() as u64) < limit,
        },
        Rule::Slots { n } => {
            let k = slot(t, window, n);
            let count = h.iter().filter(|&&(x, a)| a && slot(x, window, n) + n > k).count();
            (count as u64) < limit
        }
        Rule::Log { count_rejected } => {
            let count = h.iter().filter(|&&(x, a)| (a || count_rejected) && x + window > t).count();
            (count as u64) < limit
        }
        Rule::Gcra { burst } => {
            let (t_emission, tau) = gcra_params(limit, window, burst);
            let tat0 = gcra_tat(h, t_emission).unwrap_or(t);
            t + tau >= tat0
        }
    }
}

/// The advertised retry time after a reject at `t`, from the key's history
/// `h` with that reject in it (docs: "The advertised retry time").
fn advertised(rule: Rule, limit: u64, window: u64, h: &History, t: u64) -> Option<u64> {
    Some(match rule {
        // The next window start.
        Rule::Aligned { offset } => offset + aligned_index(t, window, offset) * window,
        // The current window's start + W.
        Rule::FirstRequest => {
            first_request_start(h, window, t).expect("a reject is inside a window") + window
        }
        // The start of slot s + N for the oldest counted slot s whose
        // leaving makes room.
        Rule::Slots { n } => {
            let k = slot(t, window, n);
            let s = ((k + 1).saturating_sub(n)..=k)
                .find(|&s| {
                    let left = h.iter().filter(|&&(x, a)| a && slot(x, window, n) > s).count();
                    (left as u64) < limit
                })
                .expect("slot k leaving empties the span");
            (u128::from(s + n) * u128::from(window)).div_ceil(u128::from(n)) as u64
        }
        // entry + W for the oldest logged entry that must leave.
        Rule::Log { count_rejected } => {
            let logged: Vec<u64> = h
                .iter()
                .filter(|&&(x, a)| (a || count_rejected) && x + window > t)
                .map(|&(x, _)| x)
                .collect();
            let m = logged.len() as u64;
            assert!(m >= limit, "a reject with {m} logged");
            logged[(m - limit) as usize] + window
        }
        // tat - tau (cost 1).
        Rule::Gcra { burst } => {
            let (t_emission, tau) = gcra_params(limit, window, burst);
            gcra_tat(h, t_emission).expect("a reject has a tat") - tau
        }
    })
}

/// The instant a client reads from the header sent at `t` for `at`.
fn header(rounding: RetryAfter, t: u64, at: u64) -> u64 {
    let wait = at - t;
    let seconds = match rounding {
        RetryAfter::Exact => return at,
        RetryAfter::CeilSeconds => wait.div_ceil(SECOND),
        RetryAfter::FloorSeconds => wait / SECOND,
        // Truncated, plus 1 when the fraction holds a whole millisecond
        // (the f64 of the docs is exact for waits this short).
        RetryAfter::RedisCell => wait / SECOND + u64::from(wait % SECOND >= MS),
    };
    t + seconds * SECOND
}

/// `min(cap, base * 2^(a-1))`.
fn exponential(p: &RetryPolicy, attempt: u32) -> u64 {
    let grown = u128::from(p.base.get()) << (attempt - 1).min(63);
    grown.min(u128::from(p.cap.get())) as u64
}

/// A pending retry.
#[derive(Clone, Copy, Debug)]
struct Pending {
    time: u64,
    /// Order of scheduling in the lane.
    order: u64,
    logical: u64,
    attempt: u32,
    key: u64,
    source: usize,
    first: u64,
    /// The wait before this attempt.
    previous: u64,
    /// The rounded header instant and the limiter's own time at the reject.
    header: u64,
    advertised: u64,
}

/// One attempt as both sides record it: time, attempt number, logical
/// request, admitted, window count.
type Attempt = (u64, u32, u64, bool, u64);

/// What the model predicts for one lane.
#[derive(Debug, Default)]
struct Expected {
    attempts: Vec<Attempt>,
    logical: u64,
    retries: u64,
    gave_up: u64,
    early_retries: u64,
    too_early: u64,
    /// Time to success of each succeeded request.
    tts: Vec<u64>,
    /// Each open-loop request's outcome: succeeded or not.
    succeeded: Vec<bool>,
}

fn model_lane(case: &Case, spec: &LimiterSpec) -> Expected {
    let (limit, window) = (case.limit, case.window);
    let rule = Rule::of(spec, limit, window);
    let mut rng = ChaCha8Rng::seed_from_u64(case.seed);
    rng.set_stream(1 << 32);
    let arrivals: Vec<(u64, u64, u16)> =
        case.arrivals.iter().copied().filter(|&(t, _, _)| case.end.is_none_or(|e| t < e)).collect();
    let mut out = Expected { succeeded: vec![false; arrivals.len()], ..Expected::default() };
    let mut histories: HashMap<u64, Vec<(u64, bool)>> = HashMap::new();
    let mut budgets: HashMap<u64, u32> = HashMap::new();
    let mut throttles: HashMap<u64, i64> = HashMap::new();
    let mut quotas: HashMap<u64, u64> = HashMap::new();
    let mut pending: Vec<Pending> = Vec::new();
    let mut scheduled = 0u64;
    let mut next_arrival = 0;
    loop {
        // The earliest pending retry that runs before the end.
        let due = pending
            .iter()
            .enumerate()
            .filter(|(_, p)| case.end.is_none_or(|e| p.time < e))
            .min_by_key(|(_, p)| (p.time, p.order))
            .map(|(i, _)| i);
        let arrival = arrivals.get(next_arrival);
        let event = match (arrival, due) {
            (None, None) => break,
            (Some(&(t, key, source)), due) if due.is_none_or(|i| t <= pending[i].time) => {
                // At one instant the arrivals come first.
                let logical = next_arrival as u64;
                next_arrival += 1;
                out.logical += 1;
                Pending {
                    time: t,
                    order: u64::MAX,
                    logical,
                    attempt: 1,
                    key,
                    source: usize::from(source),
                    first: t,
                    previous: case.policies[usize::from(source)].base.get(),
                    header: 0,
                    advertised: 0,
                }
            }
            (_, Some(i)) => pending.remove(i),
            (Some(_), None) => unreachable!(),
        };
        let Pending { time: t, logical, attempt, key, source, first, previous, .. } = event;
        let h = histories.entry(key).or_default();
        let count = window_count(h, window, t);
        let admitted = decide(rule, limit, window, h, t);
        h.push((t, admitted));
        out.attempts.push((t, attempt, logical, admitted, count));
        if attempt > 1 {
            out.retries += 1;
            if !admitted {
                // At or after the (rounded) header instant it read: early.
                out.early_retries += u64::from(t >= event.header);
                // Before the limiter's own time: too early.
                out.too_early += u64::from(t < event.advertised);
            }
        }
        let p = case.policies[source];
        let bucket = budgets.entry(key).or_default();
        if attempt == 1
            && let Some(ratio) = p.budget
        {
            *bucket = (*bucket + ratio).min(BUDGET_CAP);
        }
        // gRPC's throttle: every outcome counts; a rejection that leaves
        // the count at or below half of max_tokens may not retry.
        let mut throttled = false;
        if let Some(th) = p.throttle {
            let (max, ratio) = (i64::from(th.max_tokens), i64::from(th.token_ratio));
            let c = throttles.entry(key).or_insert(max);
            if admitted {
                *c = (*c + ratio).min(max);
            } else if *c == 0 {
                throttled = true;
            } else {
                let left = *c - i64::from(TOKEN);
                *c = left.max(0);
                throttled = 2 * left <= max;
            }
        }
        if admitted && let Some(capacity) = p.retry_quota {
            let q = quotas.entry(key).or_insert(u64::from(capacity));
            *q = (*q + if attempt > 1 { 5 } else { 1 }).min(u64::from(capacity));
        }
        if admitted {
            out.tts.push(t - first);
            out.succeeded[logical as usize] = true;
            continue;
        }
        let at = advertised(rule, limit, window, h, t).expect("every modelled limiter advertises");
        let read = header(spec.retry_after, t, at);
        let wait = if attempt >= p.max_attempts || throttled {
            None
        } else {
            match p.backoff {
                Backoff::None => None,
                Backoff::Immediate => Some(1),
                Backoff::Fixed => Some(p.base.get()),
                Backoff::Exponential => Some(exponential(&p, attempt)),
                Backoff::FullJitter => Some(rng.random_range(0..=exponential(&p, attempt))),
                Backoff::EqualJitter => {
                    let e = exponential(&p, attempt);
                    Some(e / 2 + rng.random_range(0..=e - e / 2))
                }
                Backoff::Decorrelated => {
                    let hi = (3 * previous).max(p.base.get());
                    Some(rng.random_range(p.base.get()..=hi).min(p.cap.get()))
                }
                Backoff::RetryAfter => {
                    let jitter = p.jitter.get();
                    Some(read - t + if jitter == 0 { 0 } else { rng.random_range(0..jitter) })
                }
            }
        };
        // A retry takes a token; with less than one the request gives up.
        let wait = match (wait, p.budget) {
            (Some(_), Some(_)) if *bucket < TOKEN => None,
            (Some(w), Some(_)) => {
                *bucket -= TOKEN;
                Some(w)
            }
            (w, None) => w,
            (None, Some(_)) => None,
        };
        // A retry takes 5 from the AWS quota; with less the request gives up.
        let wait = match (wait, p.retry_quota) {
            (Some(w), Some(capacity)) => {
                let q = quotas.entry(key).or_insert(u64::from(capacity));
                if *q >= 5 {
                    *q -= 5;
                    Some(w)
                } else {
                    None
                }
            }
            (w, _) => w,
        };
        match wait {
            Some(wait) => {
                pending.push(Pending {
                    time: t + wait,
                    order: scheduled,
                    logical,
                    attempt: attempt + 1,
                    key,
                    source,
                    first,
                    previous: wait,
                    header: read,
                    advertised: at,
                });
                scheduled += 1;
            }
            None => out.gave_up += 1,
        }
    }
    out
}

/// The engine's run of a case: its report and every lane's attempts.
fn run_engine(case: &Case) -> (ratesim::RunReport, Vec<DecisionRecord>) {
    let limit = Limit { requests: case.limit, window: Nanos::new(case.window) };
    let config = RunConfig {
        end: case.end.map(Nanos::new),
        clients: Some(Clients { open: case.policies.clone(), closed: Vec::new(), seed: case.seed }),
        seed: case.seed,
        client_keys: case.keyed,
        ..RunConfig::new(limit, case.lanes.clone())
    };
    let arrivals: Vec<_> = case
        .arrivals
        .iter()
        .map(|&(t, key, source)| Ok(Arrival { time: Nanos::new(t), key, source }))
        .collect();
    let mut sink = Collect::default();
    let report = engine::run(&config, arrivals.into_iter(), Some(&mut sink), &mut |_| {}).unwrap();
    (report, sink.0)
}

/// The value of rank `ceil(q n)` (at least 1) among the sorted `values`.
fn nearest_rank(sorted: &[u64], q: f64) -> u64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
    sorted[rank - 1]
}

/// Compares one lane of the engine with the model.
fn check_lane(
    r: &LimiterReport,
    records: &[&DecisionRecord],
    want: &Expected,
    reference: &Expected,
    limit: u64,
) -> Result<(), TestCaseError> {
    let label = &r.label;
    let got: Vec<Attempt> = records
        .iter()
        .map(|d| {
            let (attempt, logical) = d.attempt.expect("clients react");
            let Some(Logical::Open(logical)) = logical else { panic!("{label}: not open-loop: {logical:?}") };
            (d.time.get(), attempt, logical, d.admitted, d.window_count)
        })
        .collect();
    if let Some(i) = (0..got.len().max(want.attempts.len())).find(|&i| got.get(i) != want.attempts.get(i)) {
        let from = i.saturating_sub(3);
        return Err(TestCaseError::fail(format!(
            "{label}: attempt {i} (time, attempt, logical, admitted, window count) differs\n  \
             engine: {:?}\n  model:  {:?}",
            &got[from.min(got.len())..(i + 3).min(got.len())],
            &want.attempts[from.min(want.attempts.len())..(i + 3).min(want.attempts.len())],
        )));
    }
    let c = r.clients.as_ref().expect("clients react");
    let succeeded = want.tts.len() as u64;
    let figures = |logical, succeeded, gave_up, unfinished, retries, early, too_early| {
        [logical, succeeded, gave_up, unfinished, retries, early, too_early]
    };
    prop_assert_eq!(
        figures(c.logical, c.succeeded, c.gave_up, c.unfinished, c.retries, c.early_retries, c.too_early),
        figures(
            want.logical,
            succeeded,
            want.gave_up,
            want.logical - succeeded - want.gave_up,
            want.retries,
            want.early_retries,
            want.too_early
        ),
        "{}: logical, succeeded, gave_up, unfinished, retries, early_retries, too_early",
        label
    );
    prop_assert_eq!(c.open_logical, want.logical, "{}", label);
    let attempts = want.attempts.len() as u64;
    prop_assert_eq!(c.amplification(), (want.logical > 0).then(|| attempts as f64 / want.logical as f64));
    // The Part 1 counters on the lane's own attempts.
    let admitted = want.attempts.iter().filter(|a| a.3).count() as u64;
    let peak = want.attempts.iter().filter(|a| a.3).map(|a| a.4 + 1).max().unwrap_or(0);
    let excess = want.attempts.iter().filter(|a| a.3 && a.4 >= limit).count() as u64;
    let false_rejects = want.attempts.iter().filter(|a| !a.3 && a.4 < limit).count() as u64;
    let differ = want.succeeded.iter().zip(&reference.succeeded).filter(|(a, b)| a != b).count() as u64;
    let k = &r.counts;
    prop_assert_eq!(
        [k.offered, k.admitted, k.rejected, k.peak, k.excess, k.false_rejects, k.disagreements],
        [attempts, admitted, attempts - admitted, peak, excess, false_rejects, differ],
        "{}: offered, admitted, rejected, peak, excess, false_rejects, disagreements",
        label
    );
    // Time to success: the exact maximum, the same histogram, and each
    // quantile the top of the bucket of the exact nearest-rank value.
    let mut tts = want.tts.clone();
    tts.sort_unstable();
    prop_assert_eq!(c.tts_max.get(), tts.last().copied().unwrap_or(0), "{}: tts max", label);
    let mut histogram = hdrhistogram::Histogram::<u64>::new(3).unwrap();
    for &v in &tts {
        histogram.record(v).unwrap();
    }
    prop_assert!(c.time_to_success == histogram, "{}: time-to-success histogram", label);
    for q in [0.5, 0.95, 0.99] {
        let got = c.tts_quantile(q).map(Nanos::get);
        if tts.is_empty() {
            prop_assert_eq!(got, None);
        } else {
            let (v, got) = (nearest_rank(&tts, q), got.unwrap());
            prop_assert!(
                v <= got && got <= (v + v / 1000 + 1).min(*tts.last().unwrap()),
                "{}: p{} {} for exact {}",
                label,
                q,
                got,
                v
            );
        }
    }
    Ok(())
}

/// Runs a case through the engine and the model and compares every lane.
pub fn check(case: &Case) -> Result<(), TestCaseError> {
    let (report, records) = run_engine(case);
    let read = case.arrivals.iter().filter(|&&(t, _, _)| case.end.is_none_or(|e| t < e)).count();
    prop_assert_eq!(report.arrivals, read as u64);
    let reference = model_lane(case, &report.limiters[report.reference].spec);
    for (i, r) in report.limiters.iter().enumerate() {
        let want = model_lane(case, &r.spec);
        let lane: Vec<&DecisionRecord> = records.iter().filter(|d| d.limiter == i).collect();
        check_lane(r, &lane, &want, &reference, case.limit)?;
    }
    Ok(())
}

// ---- random cases ----------------------------------------------------------

fn backoff() -> impl Strategy<Value = Backoff> {
    prop_oneof![
        1 => Just(Backoff::None),
        3 => Just(Backoff::Immediate),
        2 => Just(Backoff::Fixed),
        2 => Just(Backoff::Exponential),
        1 => Just(Backoff::FullJitter),
        1 => Just(Backoff::EqualJitter),
        1 => Just(Backoff::Decorrelated),
        4 => Just(Backoff::RetryAfter),
    ]
}

/// A retry table as a scenario would give it: settings the policy does not
/// use are 0; `none` is `RetryPolicy::NONE`.
fn policy(window: u64) -> impl Strategy<Value = RetryPolicy> {
    let base = prop_oneof![3 => (1u64..=12).prop_map(|k| k * UNIT / 2), 1 => 1u64..2 * window];
    let jitter = prop_oneof![2 => Just(0u64), 1 => 1u64..5 * UNIT];
    // No limit, a budget, gRPC's throttling or an AWS retry quota (small
    // counts, so that they stop retries within a case).
    let limit = prop_oneof![
        2 => Just((None, None, None)),
        2 => prop_oneof![Just(100u32), Just(250), Just(500), Just(1000), 1u32..=1000].prop_map(|b| (Some(b), None, None)),
        1 => (prop_oneof![Just(2000u32), Just(3000), Just(3001), 1u32..=6000], prop_oneof![Just(100u32), Just(800), 1u32..=2000])
            .prop_map(|(max_tokens, token_ratio)| (None, Some(Throttle { max_tokens, token_ratio }), None)),
        1 => prop_oneof![Just(5u32), Just(10), Just(12), 1u32..=30].prop_map(|q| (None, None, Some(q))),
    ];
    (backoff(), base, 1u64..=8, 1u32..=6, jitter, limit).prop_map(
        |(backoff, base, cap, max_attempts, jitter, (budget, throttle, retry_quota))| {
            if backoff == Backoff::None {
                return RetryPolicy::NONE;
            }
            let zero = Nanos::ZERO;
            RetryPolicy {
                backoff,
                base: if backoff.uses_base() { Nanos::new(base) } else { zero },
                cap: if backoff.uses_cap() { Nanos::new(base * cap) } else { zero },
                max_attempts,
                jitter: if backoff == Backoff::RetryAfter { Nanos::new(jitter) } else { zero },
                budget,
                throttle,
                retry_quota,
            }
        },
    )
}

/// Every modelled limiter with every header rounding.
fn lanes(window: u64, offset: u64, slots: u64, burst: u64) -> Vec<LimiterSpec> {
    let algorithms: [AlgorithmSpec; 6] = [
        AlgorithmSpec::FixedWindow(FixedWindowSpec {
            align: WindowAlign::Epoch { offset: Nanos::new(offset) },
        }),
        AlgorithmSpec::FixedWindow(FixedWindowSpec { align: WindowAlign::FirstRequest }),
        AlgorithmSpec::SlotCounter(SlotCounterSpec { slots: slots.min(window) }),
        AlgorithmSpec::SlidingLog(SlidingLogSpec { count_rejected: false }),
        AlgorithmSpec::SlidingLog(SlidingLogSpec { count_rejected: true }),
        AlgorithmSpec::Gcra(GcraSpec { burst: Some(burst), max_wait: None }),
    ];
    let roundings =
        [RetryAfter::Exact, RetryAfter::CeilSeconds, RetryAfter::FloorSeconds, RetryAfter::RedisCell];
    algorithms
        .iter()
        .flat_map(|a| roundings.map(|retry_after| LimiterSpec { algorithm: a.clone(), retry_after }))
        .collect()
}

/// Small random runs: 4 to 39 arrivals over three windows, mostly on a
/// 100 ms grid (ties between arrivals, window starts and waits), some off
/// it by up to a unit, under a millisecond (redis-cell's rounding) or 1 ns
/// before a grid point; or a quiet stretch of requests spaced to be
/// admitted (8 to 29 of them: enough to fill a budget past its cap) and
/// then a burst at one instant. One to three sources, each with its own
/// policy; keys or not; an end or not.
pub fn case() -> impl Strategy<Value = Case> {
    (1u64..=4, 3u64..=25, 1usize..=3, any::<bool>(), any::<u64>())
        .prop_flat_map(|(limit, units, sources, keyed, seed)| {
            let window = units * UNIT;
            let span = 3 * units;
            let time = prop_oneof![
                6 => (0..span).prop_map(|g| g * UNIT),
                2 => (0..span, 1..UNIT).prop_map(|(g, d)| g * UNIT + d),
                1 => (0..span, 1..MS).prop_map(|(g, d)| g * UNIT + d),
                1 => (1..span).prop_map(|g| g * UNIT - 1),
            ];
            let tags = (0usize..4, 0..sources as u16);
            let scattered = proptest::collection::vec((time, tags.clone()), 4..40);
            // Requests spaced to be admitted, earning retry tokens (past the
            // cap of 10 with enough of them), then a burst that spends them.
            let gap = (window / limit).div_ceil(UNIT) * UNIT;
            let quiet_then_burst = (8u64..30, 5usize..25, 0..span, proptest::collection::vec(tags, 60))
                .prop_map(move |(quiet, burst, after, tags)| {
                    let times =
                        (0..quiet).map(|i| i * gap).chain(std::iter::repeat_n((quiet + after) * gap, burst));
                    times.zip(tags).collect::<Vec<_>>()
                });
            let arrivals = prop_oneof![3 => scattered, 1 => quiet_then_burst]
                .prop_map(|v| v.into_iter().map(|(t, (k, s))| (t, k, s)).collect::<Vec<_>>());
            let policies = proptest::collection::vec(policy(window), sources);
            let end = prop_oneof![1 => Just(None), 2 => (1..=span + 2 * units).prop_map(|g| Some(g * UNIT))];
            let limiters = (0..window, 1u64..=12, 1u64..=4);
            (Just((limit, window, keyed, seed)), arrivals, policies, end, limiters)
        })
        .prop_map(
            |((limit, window, keyed, seed), mut arrivals, mut policies, end, (offset, slots, burst))| {
                // Merged order: by time, ties in the order drawn.
                arrivals.sort_by_key(|a| a.0);
                const KEYS: [u64; 4] = [0, 1, 42, u64::MAX];
                let arrivals = arrivals
                    .into_iter()
                    .map(|(t, k, s)| (t, if keyed { KEYS[k] } else { 0 }, s))
                    .collect::<Vec<_>>();
                // Some source retries (else the clients do not react at all).
                if policies.iter().all(|p| p.backoff == Backoff::None) {
                    policies[0] =
                        RetryPolicy { backoff: Backoff::Immediate, max_attempts: 3, ..RetryPolicy::NONE };
                }
                // An end after the first arrival (a run that reads nothing is refused).
                let end = end.map(|e: u64| e.max(arrivals[0].0 + 1));
                Case {
                    limit,
                    window,
                    arrivals,
                    keyed,
                    policies,
                    end,
                    seed,
                    lanes: lanes(window, offset, slots, burst),
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// Every lane's attempts (time, attempt number, logical request,
    /// decision, window count) and figures (succeeded, gave up, unfinished,
    /// amplification, early and too-early retries, time to success, the
    /// Part 1 counters, disagreement) are the brute-force model's.
    #[test]
    fn retrying_lanes_match_a_brute_force_model(case in case()) {
        check(&case)?;
    }
}
