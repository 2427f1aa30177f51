//! `ratesim::run::run`, the library function that decides what a run
//! writes, called directly with no chart backend.

mod common;

use ratesim::run::{ChartKind, RunOptions, run};
use ratesim::scenario::Scenario;

fn options(out: &std::path::Path, sweep_only: bool) -> RunOptions {
    RunOptions { out_dir: out.to_path_buf(), sweep_only, decisions: false, charts: true }
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
