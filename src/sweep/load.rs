//! The load sweep: Poisson arrivals at several load factors (multiples of
//! `L / W`), each run through every limiter by the engine, in parallel.

use rayon::prelude::*;

use crate::engine::{self, RunConfig, RunError, RunReport};
use crate::limiter::{Limit, LimiterSpec};
use crate::time::Nanos;
use crate::trace::{Poisson, Source};

use super::work::RunShare;

pub const DEFAULT_LOADS: [f64; 6] = [0.5, 0.8, 1.0, 1.5, 2.0, 3.0];
/// Default length of each run, in windows.
pub const DEFAULT_WINDOWS: u64 = 100;

#[derive(Clone, Debug, PartialEq)]
pub struct LoadSweepConfig {
    pub limit: Limit,
    pub limiters: Vec<LimiterSpec>,
    /// Load factors: the Poisson rate is `load * L / W`.
    pub loads: Vec<f64>,
    /// Length of each run.
    pub duration: Nanos,
    /// Every load uses ChaCha8 stream 0 of this seed.
    pub seed: u64,
}

/// One load factor's run.
#[derive(Clone, Debug)]
pub struct LoadPoint {
    pub load: f64,
    pub report: RunReport,
}

/// The Poisson rate of load factor `load`, in requests per second:
/// `load * L / W`. May underflow to 0 or overflow to infinity; the
/// scenario's `[sweep]` validation refuses such loads.
pub fn rate(limit: Limit, load: f64) -> f64 {
    load * limit.requests as f64 / limit.window.as_secs_f64()
}

/// The requests the load sweep is expected to generate over all of
/// `loads`, each run for `duration`.
pub fn expected_requests(limit: Limit, loads: &[f64], duration: Nanos) -> f64 {
    loads.iter().map(|&l| rate(limit, l) * duration.as_secs_f64()).sum()
}

/// The work of the run at load factor `load`, for the sweeps' progress:
/// its expected requests ([`expected_requests`]) times the `lanes`
/// (limiters, the reference included) deciding each, at least 1.
pub fn run_work(limit: Limit, load: f64, duration: Nanos, lanes: usize) -> u64 {
    (expected_requests(limit, &[load], duration) * lanes as f64).round().max(1.0) as u64
}

/// The work of the whole load sweep, for the sweeps' progress: each run's
/// [`run_work`], about the decisions its work guard counts.
pub fn work(limit: Limit, loads: &[f64], duration: Nanos, lanes: usize) -> u64 {
    loads.iter().map(|&l| run_work(limit, l, duration, lanes)).fold(0, u64::saturating_add)
}

/// The most requests the load sweep may decide: each request it generates
/// is decided by every limiter, the sliding-log reference included (10 to
/// 25 ns a request and limiter: 1e11 is about half an hour of one core).
pub const MAX_DECISIONS: f64 = 1e11;

/// Why the load sweep of `loads`, each run for `duration`, would take too
/// long for `limiters`, if it would: the requests it generates times the
/// limiters deciding each are past [`MAX_DECISIONS`]. `fewer` says what
/// else to have fewer of.
pub fn work_problem(
    limit: Limit,
    loads: &[f64],
    duration: Nanos,
    limiters: &[LimiterSpec],
    fewer: &str,
) -> Option<String> {
    let generated = expected_requests(limit, loads, duration);
    let lanes = engine::with_reference(limiters).0.len();
    let decided = generated * lanes as f64;
    (decided > MAX_DECISIONS).then(|| {
        format!(
            "the load sweep would generate about {} requests over its {} (`loads` over `load_duration`, {} s each), each decided by its {lanes} limiters (the sliding-log reference included): about {} decisions, more than the {} it may make; give fewer or smaller `loads`, a shorter `load_duration`, or {fewer}",
            crate::shown::about(generated),
            crate::export::count_of(loads.len() as u64, "load"),
            duration,
            crate::shown::about(decided),
            crate::shown::about(MAX_DECISIONS)
        )
    })
}

/// Runs every load factor (in parallel; results in the order of `loads`).
/// `progress` is called, from any thread, with the work each run adds as
/// it goes ([`run_work`], shared out over the run's time as its Poisson
/// arrivals are): the calls add up to [`work`].
pub fn run(config: &LoadSweepConfig, progress: &(dyn Fn(u64) + Sync)) -> Result<Vec<LoadPoint>, RunError> {
    let lanes = config.limiters.len();
    config
        .loads
        .par_iter()
        .map(|&load| {
            let mut share = RunShare::new(
                run_work(config.limit, load, config.duration, lanes),
                Some(config.duration),
                progress,
            );
            let rate = rate(config.limit, load);
            let source = Source::Poisson(Poisson::new(config.seed, 0, Nanos::ZERO, config.duration, rate));
            let run_config = crate::simulate::share_memory(
                RunConfig {
                    end: Some(config.duration),
                    ..RunConfig::new(config.limit, config.limiters.clone())
                },
                config.loads.len(),
            );
            let report = engine::run(&run_config, source, None, &mut |p| share.at(p))?;
            share.finish();
            Ok(LoadPoint { load, report })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(loads: Vec<f64>) -> LoadSweepConfig {
        LoadSweepConfig {
            limit: Limit { requests: 100, window: Nanos::from_secs(1) },
            limiters: crate::sweep::default_limiters(),
            loads,
            duration: Nanos::from_secs(20),
            seed: 7,
        }
    }

    #[test]
    fn the_reference_is_exact_and_overload_hurts_coarse_limiters_most() {
        let points = run(&config(vec![0.5, 3.0]), &|_| {}).unwrap();
        for p in &points {
            let log = p.report.limiters.last().unwrap();
            assert_eq!(log.label, "sliding_log");
            assert!(log.counts.peak <= 100 && log.counts.excess == 0);
            for l in &p.report.limiters {
                assert_eq!(l.counts.false_rejects, 0, "{} at {}", l.label, p.load);
            }
        }
        // N = 1 is the aligned fixed window (`docs/semantics.md`), decision for decision.
        for p in &points {
            let l = &p.report.limiters;
            assert_eq!(l[0].counts, l[1].counts, "load {}", p.load);
        }
        // More slots, fewer wrongly admitted requests, at the same trace.
        let heavy = &points[1].report.limiters;
        let get = |label: &str| heavy.iter().find(|l| l.label == label).unwrap();
        assert!(get("slot_counter(N=1000)").counts.excess < get("slot_counter(N=10)").counts.excess);
        assert!(get("slot_counter(N=10)").counts.excess <= get("fixed_window").counts.excess);
    }

    /// The progress bar's weights, by hand: at L = 100 per 1 s, load 0.5
    /// for 20 s is 1000 requests expected, each decided by the ten
    /// default limiters: 10000; loads 0.5, 1 and 3, 90000 in all, the
    /// decisions the work guard counts. A run too small to expect a
    /// request still weighs 1, so that the bar moves.
    #[test]
    fn the_progress_weighs_each_run_by_its_requests_times_its_limiters() {
        let c = config(vec![0.5, 1.0, 3.0]);
        assert_eq!(c.limiters.len(), 10);
        assert_eq!(run_work(c.limit, 0.5, c.duration, 10), 10_000);
        assert_eq!(run_work(c.limit, 3.0, c.duration, 10), 60_000);
        assert_eq!(work(c.limit, &c.loads, c.duration, 10), 90_000);
        let guard = expected_requests(c.limit, &c.loads, c.duration) * 10.0;
        assert_eq!(guard, 90_000.0);
        assert_eq!(run_work(c.limit, 1e-6, c.duration, 10), 1);
    }

    /// A run reports its work as it goes, shared over its time (its
    /// arrivals come a chunk of 262144 at a time: load 3 for 1000 s is
    /// 300000 expected, two chunks), and what it reports adds up to the
    /// sweep's work whatever it drew.
    #[test]
    fn a_load_run_reports_its_work_as_it_goes_and_all_of_it() {
        let c = LoadSweepConfig {
            limiters: vec![crate::limiter::FixedWindowSpec::ALIGNED.into(), LimiterSpec::reference()],
            loads: vec![0.5, 3.0],
            duration: Nanos::from_secs(1000),
            ..config(vec![])
        };
        let reported = std::sync::Mutex::new(Vec::new());
        run(&c, &|w| reported.lock().unwrap().push(w)).unwrap();
        let reported = reported.into_inner().unwrap();
        assert_eq!(reported.iter().sum::<u64>(), work(c.limit, &c.loads, c.duration, 2));
        assert_eq!(work(c.limit, &c.loads, c.duration, 2), 700_000);
        // Load 3 reported a share before its end: more calls than runs.
        assert!(reported.len() > 2, "{reported:?}");
        assert!(reported.iter().all(|&w| w < 600_000), "{reported:?}");
    }

    #[test]
    fn parallel_and_serial_agree() {
        let c = config(vec![0.8, 1.5, 2.0]);
        let a = run(&c, &|_| {}).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let b = pool.install(|| run(&c, &|_| {})).unwrap();
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.load, y.load);
            assert_eq!(x.report.limiters, y.report.limiters);
        }
    }
}
