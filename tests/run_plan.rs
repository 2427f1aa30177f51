//! `ratesim::run::run`, the library function that decides what a run
//! writes, called directly with no chart backend.

mod common;

use ratesim::run::{ChartKind, RunOptions, run};
use ratesim::scenario::Scenario;

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
    let ChartKind::WindowsDiagram(d) = &outputs.charts[2].kind else { panic!("not a diagram") };
    assert_eq!(d.instant.to_string(), "1.0099");
    let in_window: Vec<u64> = d.lanes().iter().map(|l| l.in_window).collect();
    assert_eq!(in_window, [200, 100, 100]);
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
    assert_eq!(names, ["window_count", "timeline", "retry_timeline", "time_to_success", "windows_diagram"]);
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
