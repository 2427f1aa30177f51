//! The seed sweep (`[sweep] seeds = N`): the scenario's own traffic, limit,
//! limiters, clients and nodes rerun with the seeds `seed`, `seed + 1`, ...,
//! `seed + N - 1` (the scenario's seed first), in parallel, so that every
//! headline figure of the summary comes with its spread over seeds: how far
//! another draw of the same random traffic moves it. Within one seed every
//! limiter sees the same arrivals, as in any run.

use rayon::prelude::*;

use crate::engine::{RunError, RunReport};
use crate::metrics::LimiterReport;
use crate::scenario::Scenario;
use crate::simulate;

use super::work::{RunShare, rerun_work};

/// The most seeds a sweep may run. A thousand runs pin the mean down to
/// about 3 % of the standard deviation (its standard error is sd / √N) and
/// put a seed past every 1-in-1000 draw into min and max; more would
/// sharpen a third decimal, not change a conclusion. It is also what the
/// load sweep runs at most (`MAX_LOADS`), and the chart still shows a
/// thousand dots a limiter as one band.
pub const MAX_SEEDS: u32 = 1000;

/// The most decisions the seed sweep may make over all its runs: the load
/// sweep's bound ([`super::load::MAX_DECISIONS`], about half an hour of one
/// core).
pub const MAX_DECISIONS: f64 = super::load::MAX_DECISIONS;

/// The largest seed a scenario's `seed` (a TOML integer) and `--seed` can
/// hold: every seed the sweep runs can be written back as the scenario's
/// `seed` to rerun that draw alone.
pub const MAX_SEED: u64 = i64::MAX as u64;

/// The seeds of a sweep of `count` seeds from `first`, in order.
pub fn seeds(first: u64, count: u32) -> impl Iterator<Item = u64> {
    (0..u64::from(count)).map(move |k| first.saturating_add(k))
}

/// Why the seeds `seed` to `seed + count - 1` cannot all be a scenario's
/// `seed`, if they cannot: the last is past [`MAX_SEED`]. `given` is how
/// the user set the first ("`seed` = 9223372036854775805", "--seed
/// 9223372036854775805"), `count_given` how they set the count, and `which`
/// what to lower ("`seed`", "--seed").
pub fn overflow_problem(
    seed: u64,
    count: u32,
    given: &str,
    count_given: &str,
    which: &str,
) -> Option<String> {
    let last = u128::from(seed) + u128::from(count) - 1;
    (last > u128::from(MAX_SEED)).then(|| {
        let most = u128::from(MAX_SEED) + 1 - u128::from(count);
        format!(
            "{count_given} with {given} would run seeds {seed} to {last}, past {MAX_SEED}, the largest seed a \
scenario can hold (each seed of the sweep can be written back as the scenario's `seed` to rerun it): give a \
{which} of at most {most}, or fewer `seeds`"
        )
    })
}

/// Why a seed sweep of `count` runs, each of about `requests` first
/// attempts (`counted` says how they were counted) decided by `lanes`
/// limiters, the reference included, would take too long, if it would:
/// past [`MAX_DECISIONS`]. `fewer` says what else to have fewer of.
pub fn work_problem(requests: f64, lanes: usize, count: u32, counted: &str, fewer: &str) -> Option<String> {
    let per_run = requests * lanes as f64;
    let decided = per_run * f64::from(count);
    (decided > MAX_DECISIONS).then(|| {
        let most = (MAX_DECISIONS / per_run).floor() as u64;
        let lower = if most >= 2 {
            format!("give `seeds` of at most {most}, ")
        } else {
            "even 2 seeds would pass it: give ".to_string()
        };
        let (decided, most) = crate::shown::about_apart(decided as u128, MAX_DECISIONS as u128);
        format!(
            "`sweep.seeds` = {count} reruns the scenario {count} times, each run about {} requests ({counted}) \
decided by its {lanes} limiters (the sliding-log reference included): about {decided} decisions, more than the \
{most} a sweep may make; {lower}a shorter `duration` or fewer requests, or {fewer}",
            crate::shown::about(requests),
        )
    })
}

/// One seed's run.
#[derive(Clone, Debug)]
pub struct SeedPoint {
    pub seed: u64,
    pub report: RunReport,
}

/// The seed sweep's runs, in seed order: the first is the scenario's own
/// seed.
#[derive(Clone, Debug)]
pub struct SeedSweepResult {
    pub points: Vec<SeedPoint>,
}

/// Runs the scenario once per seed from its own (in parallel; results in
/// seed order). `progress` is called, from any thread, with the work each
/// run adds as it goes ([`rerun_work`], shared out over the run's time):
/// the calls add up to that times `count`. `open_arrivals`: the open-loop
/// arrivals of the scenario's own run, if it ran ([`rerun_work`]). Each run
/// keeps only its totals: the tables need nothing else, and a thousand
/// runs' timelines would hold gigabytes.
pub fn run(
    scenario: &Scenario,
    count: u32,
    open_arrivals: Option<u64>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SeedSweepResult, RunError> {
    let (weight, end) = (rerun_work(scenario, open_arrivals), simulate::known_end(scenario));
    let runs = count as usize;
    let points = seeds(scenario.seed, count)
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|seed| {
            let mut s = scenario.clone();
            s.seed = seed;
            // The admission curve costs about 3x and is no summary figure.
            s.output.admission_curve = false;
            let mut share = RunShare::new(weight, end, progress).or_arrivals(open_arrivals);
            let mut report = simulate::run_in_sweep(&s, runs, &mut |p| share.at(p))?;
            share.finish();
            report.timeline = crate::timeline::Timeline::new(Some(report.timeline.width()), 0);
            for l in &mut report.limiters {
                l.node_timeline = None;
            }
            Ok(SeedPoint { seed, report })
        })
        .collect::<Result<Vec<_>, RunError>>()?;
    Ok(SeedSweepResult { points })
}

/// A headline figure of the summary, as the seed sweep's table gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Admitted,
    PeakRatio,
    Excess,
    FalseRejects,
    OverAdmission,
    Disagreement,
    /// Attempts per logical request (reacting clients).
    Amplification,
    /// Logical requests that gave up (reacting clients).
    GaveUp,
    /// Time to success, 99th percentile (reacting clients).
    TimeToSuccessP99,
    /// Added latency, 99th percentile of the admitted requests (shaping
    /// limiters).
    DelayP99,
    /// The busiest node's peak over the scenario's L (limiters on nodes).
    NodePeakRatio,
}

/// How a [`Metric`]'s values are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A count of requests.
    Count,
    /// A ratio such as peak/L.
    Ratio,
    /// A fraction, written as a percentage.
    Percent,
    /// Nanoseconds, written as a duration.
    Seconds,
}

impl Metric {
    /// The name the Markdown table gives it, as the summary tables name it.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Admitted => "admitted",
            Metric::PeakRatio => "peak/L",
            Metric::Excess => "excess",
            Metric::FalseRejects => "false rejects",
            Metric::OverAdmission => "over-admission",
            Metric::Disagreement => "disagreement",
            Metric::Amplification => "attempts/logical",
            Metric::GaveUp => "gave up",
            Metric::TimeToSuccessP99 => "time to success p99",
            Metric::DelayP99 => "delay p99",
            Metric::NodePeakRatio => "busiest node peak/L",
        }
    }

    pub fn unit(self) -> Unit {
        match self {
            Metric::Admitted | Metric::Excess | Metric::FalseRejects | Metric::GaveUp => Unit::Count,
            Metric::PeakRatio | Metric::Amplification | Metric::NodePeakRatio => Unit::Ratio,
            Metric::OverAdmission | Metric::Disagreement => Unit::Percent,
            Metric::TimeToSuccessP99 | Metric::DelayP99 => Unit::Seconds,
        }
    }

    /// Its value for limiter `l` of a run at limit `requests` (L), as
    /// `summary.csv` has it; `None` where the summary has none (n/a, a
    /// limiter without clients, delays or nodes).
    pub fn of(self, l: &LimiterReport, requests: u64) -> Option<f64> {
        let c = &l.counts;
        let seconds = |t: Option<crate::time::Nanos>| t.map(|t| t.get() as f64);
        match self {
            Metric::Admitted => Some(c.admitted as f64),
            Metric::PeakRatio => Some(l.peak_ratio()),
            Metric::Excess => Some(c.excess as f64),
            Metric::FalseRejects => Some(c.false_rejects as f64),
            Metric::OverAdmission => l.over_admission(),
            Metric::Disagreement => l.disagreement(),
            Metric::Amplification => l.clients.as_ref()?.amplification(),
            Metric::GaveUp => l.clients.as_ref().map(|k| k.gave_up as f64),
            Metric::TimeToSuccessP99 => seconds(l.clients.as_ref()?.tts_quantile(0.99)),
            Metric::DelayP99 => seconds(l.delays.as_ref()?.quantile(0.99)),
            Metric::NodePeakRatio => l.nodes.iter().map(|n| n.peak).max().map(|p| p as f64 / requests as f64),
        }
    }
}

/// The figures the table gives for a run: the summary's six, then the
/// clients' when they react, the delays' when a limiter shapes, and the
/// busiest node's peak when limiters run on nodes.
pub fn metrics(report: &RunReport) -> Vec<Metric> {
    let mut out = vec![
        Metric::Admitted,
        Metric::PeakRatio,
        Metric::Excess,
        Metric::FalseRejects,
        Metric::OverAdmission,
        Metric::Disagreement,
    ];
    let any = |f: &dyn Fn(&LimiterReport) -> bool| report.limiters.iter().any(f);
    if any(&|l| l.clients.is_some()) {
        out.extend([Metric::Amplification, Metric::GaveUp, Metric::TimeToSuccessP99]);
    }
    if any(&|l| l.delays.is_some()) {
        out.push(Metric::DelayP99);
    }
    if any(&|l| !l.nodes.is_empty()) {
        out.push(Metric::NodePeakRatio);
    }
    out
}

/// Statistics of one figure over the seeds that have it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// The seeds with a value.
    pub n: usize,
    pub mean: f64,
    /// The sample standard deviation, `sqrt(sum (x - mean)^2 / (n - 1))`;
    /// `None` for a single value.
    pub sd: Option<f64>,
    pub min: f64,
    pub max: f64,
}

/// The statistics of `values` (in seed order; `None` when there are
/// none). Values all alike have that mean and a deviation of exactly 0,
/// not a rounding's worth (0.1 three times sums to 0.30000000000000004).
pub fn stats(values: &[f64]) -> Option<Stats> {
    let n = values.len();
    let min = values.iter().copied().reduce(f64::min)?;
    let max = values.iter().copied().fold(min, f64::max);
    if min == max {
        return Some(Stats { n, mean: min, sd: (n > 1).then_some(0.0), min, max });
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let squares: f64 = values.iter().map(|x| (x - mean) * (x - mean)).sum();
    let sd = (n > 1).then(|| (squares / (n - 1) as f64).sqrt());
    Some(Stats { n, mean, sd, min, max })
}

/// One line of the table: a figure of one limiter over the seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedRow {
    pub metric: Metric,
    /// The limiter's index in each run's report.
    pub limiter: usize,
    /// Its value at the scenario's own seed (the first).
    pub own: Option<f64>,
    pub stats: Stats,
}

impl SeedSweepResult {
    /// The scenario's own seed, the first.
    pub fn first_seed(&self) -> u64 {
        self.points.first().map_or(0, |p| p.seed)
    }

    pub fn last_seed(&self) -> u64 {
        self.points.last().map_or(0, |p| p.seed)
    }

    /// The run at the scenario's own seed.
    pub fn own(&self) -> Option<&RunReport> {
        self.points.first().map(|p| &p.report)
    }

    /// The values of `metric` for limiter `i`, one per seed (`None` where
    /// that seed's run has none).
    pub fn values(&self, metric: Metric, i: usize) -> Vec<Option<f64>> {
        self.points
            .iter()
            .map(|p| p.report.limiters.get(i).and_then(|l| metric.of(l, p.report.limit.requests)))
            .collect()
    }

    /// The table's rows, figure by figure ([`metrics`]), each limiter in
    /// the run's order; a limiter with no value at any seed (the reference
    /// has no nodes) has no row.
    pub fn rows(&self) -> Vec<SeedRow> {
        let Some(own) = self.own() else { return Vec::new() };
        let mut rows = Vec::new();
        for metric in metrics(own) {
            for i in 0..own.limiters.len() {
                let values = self.values(metric, i);
                let known: Vec<f64> = values.iter().flatten().copied().collect();
                if let Some(stats) = stats(&known) {
                    rows.push(SeedRow { metric, limiter: i, own: values[0], stats });
                }
            }
        }
        rows
    }

    /// Every seed gave every figure of the table alike: the scenario draws
    /// nothing at random that moves them.
    pub fn identical(&self) -> bool {
        let n = self.points.len();
        self.rows().iter().all(|r| r.stats.n == n && r.stats.min == r.stats.max)
    }

    /// The fewest and most open-loop arrivals a seed's run had.
    pub fn arrivals_range(&self) -> (u64, u64) {
        let a = self.points.iter().map(|p| p.report.arrivals);
        (a.clone().min().unwrap_or(0), a.max().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: 2, 4, 4, 4, 5, 5, 7, 9 sum to 40, mean 5; the squares of
    /// the deviations, 9 1 1 1 0 0 4 16, sum to 32, so the sample variance
    /// is 32 / 7 and the deviation sqrt(32 / 7) = 2.138089935...
    #[test]
    fn stats_by_hand() {
        let s = stats(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!((s.n, s.mean, s.min, s.max), (8, 5.0, 2.0, 9.0));
        assert!((s.sd.unwrap() - 2.138_089_935_299_395).abs() < 1e-12, "{s:?}");
        // Two values: mean 1.5, deviations ±0.5, variance 0.5 / 1.
        let s = stats(&[1.0, 2.0]).unwrap();
        assert_eq!((s.mean, s.sd), (1.5, Some(0.5f64.sqrt())));
        // Over-admissions of +1.5 %, +2 %, +2.5 %: mean 2 %, sd 0.5 pp.
        let s = stats(&[0.015, 0.02, 0.025]).unwrap();
        assert!((s.mean - 0.02).abs() < 1e-15 && (s.sd.unwrap() - 0.005).abs() < 1e-15, "{s:?}");
        // One value: no deviation; none: no statistics.
        assert_eq!(stats(&[3.0]), Some(Stats { n: 1, mean: 3.0, sd: None, min: 3.0, max: 3.0 }));
        assert_eq!(stats(&[]), None);
    }

    /// 0.1 three times sums to 0.30000000000000004 in floating point: the
    /// mean of equal values is still the value, the deviation exactly 0.
    #[test]
    fn equal_values_have_no_spread() {
        let s = stats(&[0.1, 0.1, 0.1]).unwrap();
        assert_eq!((s.mean, s.sd, s.min, s.max), (0.1, Some(0.0), 0.1, 0.1));
    }

    #[test]
    fn seeds_run_from_the_scenarios_own() {
        assert_eq!(seeds(42, 3).collect::<Vec<_>>(), [42, 43, 44]);
        assert_eq!(seeds(MAX_SEED - 1, 2).last(), Some(MAX_SEED));
    }

    /// The last seed may be 2^63 - 1 and no more; the message says the
    /// seeds it would run and the largest first seed that fits.
    #[test]
    fn seeds_past_the_largest_are_refused() {
        assert_eq!(overflow_problem(MAX_SEED - 4, 5, "`seed` = x", "`sweep.seeds` = 5", "`seed`"), None);
        let e =
            overflow_problem(MAX_SEED - 2, 5, "`seed` = 9223372036854775805", "`sweep.seeds` = 5", "`seed`")
                .unwrap();
        assert_eq!(
            e,
            "`sweep.seeds` = 5 with `seed` = 9223372036854775805 would run seeds 9223372036854775805 to \
9223372036854775809, past 9223372036854775807, the largest seed a scenario can hold (each seed of the sweep \
can be written back as the scenario's `seed` to rerun it): give a `seed` of at most 9223372036854775803, or \
fewer `seeds`"
        );
        // u64::MAX itself (past what a scenario holds) does not wrap.
        assert!(overflow_problem(u64::MAX, 1000, "s", "n", "w").is_some());
    }

    /// 1e11 decisions: 1000 seeds of 2e7 requests by 5 limiters is 1e11,
    /// taken; 1001 are not, and at most 1000 fit.
    #[test]
    fn the_work_bound_names_the_most_seeds_that_fit() {
        assert_eq!(work_problem(2e7, 5, 1000, "c", "f"), None);
        let e =
            work_problem(2e7, 5, 1001, "its sources' expected requests", "compare fewer limiters").unwrap();
        assert!(e.contains("about 100100000000 decisions, more than the 100000000000"), "{e}");
        assert!(e.contains("`seeds` of at most 1000,"), "{e}");
        let e = work_problem(4e10, 5, 2, "c", "f").unwrap();
        assert!(e.contains("even 2 seeds would pass it: give a shorter `duration`"), "{e}");
    }
}
