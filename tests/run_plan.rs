//! `ratesim::run::run`, the library function that decides what a run
//! writes, called directly with no chart backend.

mod common;

use ratesim::diagram::WindowsDiagram;
use ratesim::engine::{self, DecisionRecord, DecisionSink};
use ratesim::run::{ChartKind, RunOptions, default_out_dir, run, runs_retries};
use ratesim::scenario::Scenario;
use ratesim::simulate;

fn options(out: &std::path::Path, sweep_only: bool) -> RunOptions {
    RunOptions {
        out_dir: out.to_path_buf(),
        sweep_only,
        decisions: false,
        charts: true,
        overrides: Vec::new(),
        inputs: Vec::new(),
    }
}

/// With no `--out`, `sweep` writes beside the run's folder, never over it;
/// it sends the traffic with its retries only in a retry-policy (or
/// topology) sweep, where the run always does.
#[test]
fn where_a_run_writes_and_whether_it_retries() {
    let storm = Scenario::load(&common::scenario("retry_storm.toml")).unwrap();
    assert_eq!(default_out_dir(&storm, false), std::path::Path::new("output/retry_storm"));
    assert_eq!(default_out_dir(&storm, true), std::path::Path::new("output/retry_storm-sweeps"));
    assert!(runs_retries(&storm, false));
    assert!(!runs_retries(&storm, true), "no sweep of retry_storm sends its traffic");
    let backoff = Scenario::load(&common::scenario("backoff.toml")).unwrap();
    assert!(runs_retries(&backoff, false) && runs_retries(&backoff, true), "its retry_policies sweep does");
}

#[test]
fn a_trace_run_writes_its_tables_and_asks_for_three_charts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bb");
    let scenario = Scenario::load(&common::scenario("boundary_burst.toml")).unwrap();
    let outputs = run(&scenario, &options(&out, false), &|_| {}).unwrap();
    let names: Vec<&str> = outputs.charts.iter().map(|c| c.name).collect();
    assert_eq!(names, ["window_count", "timeline", "windows_diagram"]);
    // The diagram centres on the fixed window's worst instant: the last
    // request of the second burst (1.0099 s), where 200 are in its window.
    // Its rows are the run's window limiters: the fixed window, 2, 10 and 100
    // slots, the sliding log.
    let ChartKind::WindowsDiagram(d) = &outputs.charts[2].kind else { panic!("not a diagram") };
    assert_eq!(d.instant.to_string(), "1.0099");
    let lanes = d.lanes();
    let names: Vec<&str> = lanes.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["fixed window", "2 slots", "10 slots", "100 slots", "sliding log (exact)"]);
    let in_window: Vec<u64> = lanes.iter().map(|l| l.in_window).collect();
    assert_eq!(in_window, [200, 100, 100, 100, 100]);
    // Nothing is in place before the commit.
    assert!(!out.exists());
    let report = outputs.report.as_ref().unwrap();
    assert_eq!(report.limiters[0].counts.admitted, 200);
    // Committed with no chart drawn: the report links none.
    let committed = outputs.commit(&[vec![], vec![], vec![]]).unwrap();
    let files: Vec<String> = common::snapshot(&out).keys().map(|p| p.display().to_string()).collect();
    assert_eq!(files, ["report.md", "summary.csv", "summary.md", "timeline.csv"]);
    assert!(!common::read(&out, "report.md").contains("!["));
    assert!(committed.summary.contains("wrote ") && committed.summary.contains("fixed_window"));
}

#[test]
fn a_sweep_asks_for_the_sweep_charts_and_the_pair_diagram() {
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"s\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[sweep]\ngrid = 20\nloads = [1.0]\nload_duration = \"5s\"\nmap_slots = [2]\n";
    let scenario = Scenario::parse(text, &dir.path().join("s.toml")).unwrap();
    let outputs = run(&scenario, &options(&dir.path().join("out"), false), &|_| {}).unwrap();
    let names: Vec<&str> = outputs.charts.iter().map(|c| c.name).collect();
    assert_eq!(names, ["error_vs_slots", "burst_pair_map", "load_sweep", "which_limiter", "windows_diagram"]);
    // The only load, 1.0, is the one nearest 1.5.
    assert!(matches!(outputs.charts[3].kind, ChartKind::WhichLimiter(0)));
    assert!(matches!(&outputs.charts[1].kind, ChartKind::BurstPairMap(s) if s == &[2]));
    assert!(outputs.report.is_none());
    assert_eq!(outputs.burst_pair.as_ref().unwrap().grid, 20);
}

#[test]
fn sweep_only_takes_the_default_sweep_and_skips_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let mut scenario = Scenario::load(&common::scenario("boundary_burst.toml")).unwrap();
    scenario.limit.window = ratesim::Nanos::from_millis(10);
    let outputs =
        run(&scenario, &RunOptions { charts: false, ..options(&dir.path().join("o"), true) }, &|_| {})
            .unwrap();
    assert!(outputs.report.is_none() && outputs.charts.is_empty());
    // The default grid: 2000 steps.
    assert_eq!(outputs.burst_pair.as_ref().unwrap().grid, 2000);
}

#[test]
fn reacting_clients_add_their_charts_and_say_when_bins_are_coarse() {
    let dir = tempfile::tempdir().unwrap();
    let text = |bin: &str| {
        format!(
            "name = \"r\"\nduration = \"60s\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n{bin}\
[retry]\npolicy = \"retry_after\"\nmax_attempts = 3\n[[traffic]]\nkind = \"poisson\"\nload = 2.0\n"
        )
    };
    // 60 s in at most 2000 automatic bins: 100 ms, a tenth of the window.
    let scenario = Scenario::parse(&text(""), &dir.path().join("r.toml")).unwrap();
    let outputs = run(&scenario, &options(&dir.path().join("a"), false), &|_| {}).unwrap();
    let names: Vec<&str> = outputs.charts.iter().map(|c| c.name).collect();
    // No windows diagram: each limiter's attempts are its own, not a replay
    // of the trace.
    assert_eq!(names, ["window_count", "timeline", "retry_timeline", "time_to_success"]);
    assert!(!outputs.charts[2].caption.contains("too coarse"), "{}", outputs.charts[2].caption);
    // 1 s bins smear a window's boundary herd over the window: say so.
    let scenario = Scenario::parse(&text("[output]\nbin = \"1s\"\n"), &dir.path().join("r.toml")).unwrap();
    let outputs = run(&scenario, &options(&dir.path().join("b"), false), &|_| {}).unwrap();
    let caption = &outputs.charts[2].caption;
    assert!(
        caption.contains("Bins of 1s are wider than a tenth of the 1s window")
            && caption.contains("[output] bin")
    );
}

#[test]
fn a_retry_policy_comparison_runs_alone_and_asks_for_its_chart() {
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"p\"\n[limit]\nrequests = 2\nwindow = \"1s\"\n[[traffic]]\nkind = \"burst\"\ncount = 6\n\
[sweep]\nretry_policies = [{ policy = \"none\" }, { policy = \"fixed\", base = \"1s\", max_attempts = 3 }]\n";
    let scenario = Scenario::parse(text, &dir.path().join("p.toml")).unwrap();
    let outputs = run(&scenario, &options(&dir.path().join("o"), false), &|_| {}).unwrap();
    assert!(outputs.burst_pair.is_none() && outputs.load.is_none());
    let names: Vec<&str> = outputs.charts.iter().map(|c| c.name).collect();
    assert_eq!(names, ["window_count", "timeline", "windows_diagram", "retry_policies"]);
    // 6 requests at 0 against 2 per 1 s; the default limiters (a retry
    // comparison alone does not take the sweeps' ten), the fixed window
    // first. none: 2 admitted, 4 give up. fixed 1 s, 3 attempts: 2 at 0, 2 at
    // 1 s, 2 at 2 s: 6 + 4 + 2 = 12 attempts, all succeed.
    let points = outputs.retry_policies.as_ref().unwrap();
    let labels: Vec<&str> = points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels, ["none", "fixed"]);
    let log = |i: usize| points[i].report.limiters[0].clients.clone().unwrap();
    assert_eq!((log(0).logical, log(0).succeeded, log(0).gave_up, log(0).retries), (6, 2, 4, 0));
    assert_eq!((log(1).succeeded, log(1).gave_up, log(1).retries), (6, 0, 6));
    assert_eq!(points[1].report.limiters[0].label, "fixed_window");
    assert_eq!(points[1].report.limiters[0].counts.offered, 12);
    assert_eq!(points[1].report.limiters.len(), scenario.limiters.len());
    assert!(scenario.limiters.len() < 10);
}

/// The sweeps' progress bar is one bar for every sweep a run makes (burst
/// pairs, loads, retry tables, node counts), its length their work
/// (`SweepWork`), and it reaches that length exactly, in increasing
/// steps. By hand, with `ratesim sweep` (no own run): burst pairs on a
/// grid of 10, 2 rows of 10 x 11 requests, 220; loads 1 and 2 for 10 s at
/// 10 per 1 s, 100 and 200 requests x 2 lanes, 600; two retry tables and
/// two node counts, four reruns of (100 Poisson + 20 closed requests) x 2
/// lanes: 1780. After the scenario's own run, a rerun counts the open-loop
/// arrivals that run had.
#[test]
fn the_sweeps_progress_counts_their_work_and_reaches_all_of_it() {
    use ratesim::run::Step;
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"w\"\nduration = \"10s\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n\
[[traffic]]\nkind = \"poisson\"\nload = 1.0\n[[traffic]]\nkind = \"closed\"\nclients = 2\nthink = \"1s\"\n\
[[limiter]]\nkind = \"fixed_window\"\n\
[sweep]\ngrid = 10\nloads = [1.0, 2.0]\nload_duration = \"10s\"\nmap_slots = [1]\n\
retry_policies = [{ policy = \"none\" }, { policy = \"fixed\", base = \"1s\", max_attempts = 3 }]\n\
nodes = [1, 2]\n";
    let scenario = Scenario::parse(text, &dir.path().join("w.toml")).unwrap();
    for sweep_only in [true, false] {
        let steps = std::sync::Mutex::new(Vec::new());
        let record = |step| {
            if let Step::Sweep { done, total } = step {
                steps.lock().unwrap().push((done, total));
            }
        };
        let out = dir.path().join(format!("o{sweep_only}"));
        let opts = RunOptions { charts: false, ..options(&out, sweep_only) };
        let outputs = run(&scenario, &opts, &record).unwrap();
        assert_eq!(outputs.topology.len(), 1);
        assert_eq!(outputs.retry_policies.as_ref().map(Vec::len), Some(2));
        let total = match &outputs.report {
            None => 1780,
            Some(r) => 220 + 600 + 4 * (r.arrivals + 20) * 2,
        };
        let steps = steps.into_inner().unwrap();
        assert!(steps.iter().all(|&(_, t)| t == total), "{total}: {steps:?}");
        assert!(steps.windows(2).all(|w| w[0].0 < w[1].0), "{steps:?}");
        assert_eq!(steps.last(), Some(&(total, total)));
    }
}

/// Keeps every decision of a run.
struct Decisions(Vec<DecisionRecord>);

impl DecisionSink for Decisions {
    fn record(&mut self, record: &DecisionRecord) -> std::io::Result<()> {
        self.0.push(*record);
        Ok(())
    }
}

/// The windows diagram never tells another story than the run: its rows are
/// limiters the run ran, each deciding the diagram's requests as the run
/// decided them (the run's own decisions, compared one by one), and its top
/// row's count at t* is that limiter's peak in the summary. With many
/// clients it shows the client where that peak is. (It once replayed a
/// fixed window, 10 slots and a sliding log of its own on the bare trace,
/// and drew 1.34×L where the run's summary said 2.03×L.)
#[test]
fn the_windows_diagram_shows_the_runs_own_limiters_and_decisions() {
    for file in
        ["boundary_burst.toml", "clients.toml", "sliding_minute.toml", "poisson.toml", "algorithms.toml"]
    {
        let scenario = Scenario::load(&common::scenario(file)).unwrap();
        let mut decisions = Decisions(Vec::new());
        let report = simulate::run_scenario(&scenario, Some(&mut decisions), &mut |_| {}).unwrap();
        let d = WindowsDiagram::of_run(&scenario, &report).unwrap().unwrap_or_else(|| panic!("{file}"));
        let (specs, _) = engine::with_reference(&scenario.limiters);
        let lanes = d.lanes();
        assert!(lanes.len() >= 2, "{file}");
        assert_eq!(d.client.is_some(), report.keys > 1, "{file}");
        for lane in &lanes {
            let i =
                specs.iter().position(|s| *s == lane.spec).unwrap_or_else(|| panic!("{file}: {}", lane.name));
            let run: Vec<(u64, bool)> = decisions
                .0
                .iter()
                .filter(|r| r.limiter == i && d.client.is_none_or(|c| r.key == c) && r.time < d.view.1)
                .map(|r| (r.time.get(), r.admitted))
                .collect();
            let drawn: Vec<(u64, bool)> =
                d.arrivals.iter().zip(&lane.admitted).map(|(t, a)| (t.get(), *a)).collect();
            assert!(!drawn.is_empty(), "{file}: {}", lane.name);
            assert_eq!(drawn, run, "{file}: {} decides as in the run", lane.name);
        }
        let top = specs.iter().position(|s| *s == lanes[0].spec).unwrap();
        assert_eq!(
            lanes[0].in_window, report.limiters[top].counts.peak,
            "{file}: the top row's count is its peak"
        );
        // In the unit of the run's other charts (minutes for sliding_minute).
        assert_eq!(d.unit_span, report.end, "{file}");
    }
    // The sliding log that counts its rejects and the first-request window
    // do not cut time on a grid: not drawn.
    let scenario = Scenario::load(&common::scenario("sliding_minute.toml")).unwrap();
    let report = simulate::run_scenario(&scenario, None, &mut |_| {}).unwrap();
    let d = WindowsDiagram::of_run(&scenario, &report).unwrap().unwrap();
    let names: Vec<String> = d.lanes().into_iter().map(|l| l.name).collect();
    assert_eq!(names, ["fixed window", "6 slots", "60 slots", "sliding log (exact)"]);
}

/// Where the admitted stream is not a replay of the trace (clients that
/// retry or wait for answers, limiters on nodes) or the run has no fixed
/// window or slot counter to draw (the shaping scenario), a run has no
/// windows diagram, and its report does not link one.
#[test]
fn runs_the_diagram_cannot_replay_have_none() {
    for file in
        ["retry_storm.toml", "backoff_closed.toml", "nodes_central.toml", "nodes_local.toml", "shaping.toml"]
    {
        let scenario = Scenario::load(&common::scenario(file)).unwrap();
        let report = simulate::run_scenario(&scenario, None, &mut |_| {}).unwrap();
        assert!(WindowsDiagram::of_run(&scenario, &report).unwrap().is_none(), "{file}");
    }
    let dir = tempfile::tempdir().unwrap();
    let scenario = Scenario::load(&common::scenario("nodes_central.toml")).unwrap();
    let outputs = run(&scenario, &options(&dir.path().join("n"), false), &|_| {}).unwrap();
    assert!(outputs.charts.iter().all(|c| c.name != "windows_diagram"));
    let drawn: Vec<Vec<String>> = outputs.charts.iter().map(|c| vec![format!("{}.svg", c.name)]).collect();
    outputs.commit(&drawn).unwrap();
    let report = common::read(&dir.path().join("n"), "report.md");
    assert!(report.contains("](nodes_timeline.svg)") && !report.contains("windows_diagram"), "{report}");
}
