//! How much work the sweeps of a run are, for their progress bar: in
//! decisions, a request decided by one limiter (for the burst-pair sweep,
//! the requests its work guard counts). The sweeps' ticks (a grid row, a
//! whole load run, a whole rerun) differ in cost by orders of magnitude;
//! weighted by their work, and a run's work shared out as it goes, the
//! bar's position moves with the time spent, so that the time left can be
//! estimated from it. Progress only: nothing here changes what a sweep
//! computes or writes.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::engine::{self, Progress};
use crate::scenario::{Scenario, Traffic};
use crate::time::Nanos;

use super::{burst_pair, load};

/// The work of each of a run's sweeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SweepWork {
    /// The burst-pair sweep and its heat map ([`burst_pair::work`]).
    pub burst_pairs: u64,
    /// The load sweep ([`load::work`]).
    pub loads: u64,
    /// One rerun of the scenario's traffic ([`rerun_work`]).
    pub rerun: u64,
    /// The reruns: one per `[sweep] retry_policies` entry, one per seed of
    /// `[sweep] seeds` and one per point of the topology sweeps.
    pub reruns: u64,
}

impl SweepWork {
    /// The work of `scenario`'s sweeps (its `[sweep]` table and topology
    /// sweeps as the run makes them). `open_arrivals`: the open-loop
    /// arrivals of the scenario's own run, when it ran before the sweeps
    /// (see [`rerun_work`]).
    pub fn of(scenario: &Scenario, open_arrivals: Option<u64>) -> SweepWork {
        let limit = scenario.limit;
        let lanes = engine::with_reference(&scenario.limiters).0.len();
        let mut work = SweepWork::default();
        if let Some(s) = scenario.sweep.as_ref() {
            if s.window_sweeps {
                work.burst_pairs = burst_pair::work(limit, s.grid, &scenario.limiters, &s.map_slots);
                work.loads = load::work(limit, &s.loads, s.load_duration, lanes);
            }
            work.reruns += s.retry_policies.len() as u64;
            work.reruns += s.seeds.map_or(0, u64::from);
        }
        if let Some(t) = &scenario.topology_sweep {
            work.reruns += t.runs() as u64;
        }
        if work.reruns > 0 {
            work.rerun = rerun_work(scenario, open_arrivals);
        }
        work
    }

    /// All of it: the length of the sweeps' progress bar.
    pub fn total(&self) -> u64 {
        self.burst_pairs.saturating_add(self.loads).saturating_add(self.rerun.saturating_mul(self.reruns))
    }
}

/// The work of one rerun of `scenario`'s traffic (a retry-policy, seed or
/// topology sweep's run): its requests times the lanes (limiters, the
/// reference included) deciding each, at least 1. The requests are first
/// attempts: `open_arrivals` when the scenario's own run counted them (a
/// rerun sends the same open-loop arrivals), else each generated source's
/// expected requests (a trace's rows are not known before it is read, and
/// count nothing), plus what the closed populations are expected to send
/// ([`Traffic::expected_requests`]). Retries are not counted: how many a
/// run makes depends on its decisions.
pub fn rerun_work(scenario: &Scenario, open_arrivals: Option<u64>) -> u64 {
    let lanes = engine::with_reference(&scenario.limiters).0.len();
    (rerun_requests(&scenario.traffic, open_arrivals) * lanes as f64).round().max(1.0) as u64
}

/// The first attempts one rerun of `traffic` sends, as [`rerun_work`]
/// counts them: `open_arrivals` when known, else each generated open-loop
/// source's expected requests (a trace counts none), plus what the closed
/// populations are expected to send.
pub fn rerun_requests(traffic: &[Traffic], open_arrivals: Option<u64>) -> f64 {
    let expected = |closed: bool| -> f64 {
        traffic
            .iter()
            .filter(|t| matches!(t, Traffic::Closed { .. }) == closed)
            .filter_map(Traffic::expected_requests)
            .sum()
    };
    let open = open_arrivals.map_or_else(|| expected(false), |n| n as f64);
    open + expected(true)
}

/// The sweeps' work done so far out of their total, summed from what each
/// sweep reports (the `progress` of its `run`) and passed to `report` as
/// `(done, total)`, from any thread, each call past the one before: the
/// last is `(total, total)` when the sweeps did the work [`SweepWork`]
/// counts.
pub struct Tally<'a> {
    total: u64,
    done: AtomicU64,
    shown: Mutex<u64>,
    report: &'a (dyn Fn(u64, u64) + Sync),
}

impl<'a> Tally<'a> {
    pub fn new(total: u64, report: &'a (dyn Fn(u64, u64) + Sync)) -> Tally<'a> {
        Tally { total, done: AtomicU64::new(0), shown: Mutex::new(0), report }
    }

    /// `work` more is done.
    pub fn add(&self, work: u64) {
        if work == 0 {
            return;
        }
        let done = self.done.fetch_add(work, Ordering::Relaxed).saturating_add(work).min(self.total);
        // Reported in order: a thread that added earlier may get here later.
        let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        if done > *shown {
            *shown = done;
            (self.report)(done, self.total);
        }
    }
}

/// One run of a sweep, of `weight` work: its share reported to `progress`
/// as the run goes (the share of its time it has reached, or of the
/// arrivals it is known to have), the rest when it is done.
pub(crate) struct RunShare<'a> {
    weight: u64,
    reported: u64,
    end: Option<Nanos>,
    arrivals: Option<u64>,
    progress: &'a (dyn Fn(u64) + Sync),
}

impl<'a> RunShare<'a> {
    /// A run that ends at `end`, if known.
    pub fn new(weight: u64, end: Option<Nanos>, progress: &'a (dyn Fn(u64) + Sync)) -> RunShare<'a> {
        RunShare { weight, reported: 0, end, arrivals: None, progress }
    }

    /// Where the run's end is not known: measured by its open-loop
    /// arrivals instead, when their number is.
    pub fn or_arrivals(self, arrivals: Option<u64>) -> RunShare<'a> {
        RunShare { arrivals, ..self }
    }

    /// How far the run is, from 0 to 1, if that can be told.
    fn fraction(&self, p: Progress) -> Option<f64> {
        match (self.end, self.arrivals) {
            (Some(end), _) if end > Nanos::ZERO => Some(p.now.get() as f64 / end.get() as f64),
            (_, Some(n)) if n > 0 => Some(p.arrivals as f64 / n as f64),
            _ => None,
        }
    }

    /// The run has reached `p`: reports the work that adds.
    pub fn at(&mut self, p: Progress) {
        let Some(f) = self.fraction(p) else { return };
        let now = ((self.weight as f64 * f.clamp(0.0, 1.0)) as u64).min(self.weight);
        if now > self.reported {
            (self.progress)(now - self.reported);
            self.reported = now;
        }
    }

    /// The run is done: reports the rest of its work.
    pub fn finish(self) {
        if self.weight > self.reported {
            (self.progress)(self.weight - self.reported);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// L = 10 per 1 s for 10 s: Poisson at load 1 sends 100 requests
    /// expected, two closed clients thinking 1 s 20; a fixed window and
    /// the reference decide each.
    fn scenario(sweep: &str) -> Scenario {
        let text = format!(
            "name = \"w\"\nduration = \"10s\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n\
[[traffic]]\nkind = \"poisson\"\nload = 1.0\n\
[[traffic]]\nkind = \"closed\"\nclients = 2\nthink = \"1s\"\n\
[[limiter]]\nkind = \"fixed_window\"\n{sweep}"
        );
        Scenario::parse(&text, std::path::Path::new("w.toml")).unwrap()
    }

    /// By hand: a rerun is (100 + 20) requests x 2 lanes = 240, or with
    /// the own run's 97 open-loop arrivals (97 + 20) x 2 = 234. The burst
    /// pairs on a grid of 10: 2 rows (the map's N = 1 is the fixed window)
    /// of 10 x 11 requests, 220; loads 1 and 2 for 10 s: 100 and 200
    /// requests x 2 lanes, 600; two retry tables and two node counts,
    /// four reruns of 240: 1780 in all.
    #[test]
    fn the_sweeps_work_by_hand() {
        let s = scenario(
            "[sweep]\ngrid = 10\nloads = [1.0, 2.0]\nload_duration = \"10s\"\nmap_slots = [1]\n\
retry_policies = [{ policy = \"none\" }, { policy = \"fixed\", base = \"1s\", max_attempts = 3 }]\n\
nodes = [1, 2]\n",
        );
        assert_eq!(rerun_work(&s, None), 240);
        assert_eq!(rerun_work(&s, Some(97)), 234);
        let work = SweepWork::of(&s, None);
        assert_eq!(work, SweepWork { burst_pairs: 220, loads: 600, rerun: 240, reruns: 4 });
        assert_eq!(work.total(), 1780);
        assert_eq!(SweepWork::of(&s, Some(97)).total(), 220 + 600 + 4 * 234);
        // No sweep: no work; reruns alone: no burst pairs or loads.
        assert_eq!(SweepWork::of(&scenario(""), None).total(), 0);
        let reruns = SweepWork::of(&scenario("[sweep]\nnodes = [1, 2, 3]\n"), None);
        assert_eq!(reruns, SweepWork { burst_pairs: 0, loads: 0, rerun: 240, reruns: 3 });
        // A seed sweep of 5 seeds beside the node counts: eight reruns.
        let seeds = SweepWork::of(&scenario("[sweep]\nnodes = [1, 2, 3]\nseeds = 5\n"), None);
        assert_eq!(seeds, SweepWork { burst_pairs: 0, loads: 0, rerun: 240, reruns: 8 });
    }

    /// A run's share: a quarter of its time reports a quarter of its
    /// weight, never back, the rest at its end or when it is done; by its
    /// arrivals where its end is not known; all of it when done where
    /// neither is.
    #[test]
    fn a_run_reports_its_share_as_it_goes_and_the_rest_when_done() {
        let at = |secs: u64, arrivals: u64| Progress { arrivals, now: Nanos::from_secs(secs) };
        let reported = Mutex::new(Vec::new());
        let progress = |w| reported.lock().unwrap().push(w);
        let mut share = RunShare::new(1000, Some(Nanos::from_secs(8)), &progress);
        share.at(at(2, 0));
        share.at(at(1, 0));
        share.at(at(6, 0));
        share.finish();
        assert_eq!(std::mem::take(&mut *reported.lock().unwrap()), [250, 500, 250]);
        let mut share = RunShare::new(1000, None, &progress).or_arrivals(Some(400));
        share.at(at(3, 100));
        share.at(at(9, 400));
        share.finish();
        assert_eq!(std::mem::take(&mut *reported.lock().unwrap()), [250, 750]);
        let mut share = RunShare::new(1000, None, &progress);
        share.at(at(3, 100));
        share.finish();
        assert_eq!(std::mem::take(&mut *reported.lock().unwrap()), [1000]);
    }

    /// Work added from several threads is reported increasing, the last
    /// report the total.
    #[test]
    fn the_tally_reports_in_order_and_ends_at_the_total() {
        let reports = Mutex::new(Vec::new());
        let report = |done, total| reports.lock().unwrap().push((done, total));
        let tally = Tally::new(4 * 5050, &report);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| (1..=100).for_each(|w| tally.add(w)));
            }
        });
        let reports = reports.into_inner().unwrap();
        assert!(reports.windows(2).all(|w| w[0].0 < w[1].0), "{reports:?}");
        assert!(reports.iter().all(|&(_, total)| total == 20200));
        assert_eq!(reports.last(), Some(&(20200, 20200)));
    }
}
