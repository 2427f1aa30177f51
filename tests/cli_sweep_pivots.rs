//! The pivots `ratesim run` prints of its load and topology sweeps: a row
//! per limiter, a column per swept value, each cell the figure the sweep's
//! CSV holds for that limiter and value, as its `.md` table writes it.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::terminal::{Printed, markdown_table, printed_seconds, printed_table, printed_value};
use common::{ratesim, read, read_records};

/// Writes `text` as `name.toml` into `dir` and runs `ratesim <command>` on
/// it into `dir/name` (no charts) with `args`; returns its stdout and the
/// output folder.
fn run_in(dir: &Path, command: &str, name: &str, text: &str, args: &[&str]) -> (String, PathBuf) {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    let out = dir.join(name);
    let assert = ratesim()
        .args([command, path.to_str().unwrap(), "--no-charts", "--out", out.to_str().unwrap()])
        .args(args)
        .assert()
        .success();
    (String::from_utf8(assert.get_output().stdout.clone()).unwrap(), out)
}

/// A small scenario: L = 10 per 1 s, Poisson at 2 x L for 3 s, a fixed
/// window and a 5-slot counter, then `more` (more limiters, a `[nodes]`
/// and a `[sweep]` table).
fn scenario(more: &str) -> String {
    format!(
        "name = \"pivots\"\nduration = \"3s\"\nseed = 7\n\n[limit]\nrequests = 10\nwindow = \"1s\"\n\n\
[[traffic]]\nkind = \"poisson\"\nload = 2\n\n[[limiter]]\nkind = \"fixed_window\"\n\n[[limiter]]\n\
kind = \"slot_counter\"\nslots = [5]\n\n{more}"
    )
}

/// Whether a pivot's cell shows the CSV's field: the same figure to the
/// cell's last digit (the CSV keeps 6 decimals), or none in both.
fn agrees(cell: &str, field: &str) -> bool {
    match printed_value(cell) {
        None => field.is_empty(),
        Some((shown, half)) => {
            let exact: f64 = field.parse().unwrap_or_else(|e| panic!("{field:?}: {e}"));
            (shown - exact).abs() <= half + 1e-6
        }
    }
}

/// The CSV records of `file` in `out` keyed by the fields of `key`.
fn records(out: &Path, file: &str, key: &[&str]) -> BTreeMap<Vec<String>, BTreeMap<String, String>> {
    read_records(&out.join(file))
        .into_iter()
        .map(|r| (key.iter().map(|k| r[*k].clone()).collect(), r))
        .collect()
}

/// The limiters of a CSV table in their order, each once.
fn limiters(out: &Path, file: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for r in read_records(&out.join(file)) {
        if !seen.contains(&r["limiter"]) {
            seen.push(r["limiter"].clone());
        }
    }
    seen
}

/// The labels of a pivot's rows: its first `labels` cells joined by " / ".
fn row_labels(pivot: &Printed, labels: usize) -> Vec<String> {
    pivot.rows.iter().map(|r| r[..labels].join(" / ")).collect()
}

/// A limiter that is not a window limiter, for the scenarios that take one
/// (nodes that sync their counts do not).
const GCRA: &str = "[[limiter]]\nkind = \"gcra\"\n\n";

const LOAD_SWEEP: &str = "[sweep]\ngrid = 20\nloads = [0.5, 1.5, 3]\nload_duration = \"20s\"\n";

/// The load sweep's pivot: every limiter (the sliding log too) by load
/// factor, each cell its peak/L in load_sweep.csv and load_sweep.md; after
/// the burst-pair table, before the line that says what was written; the
/// same under `ratesim sweep`.
#[test]
fn the_load_sweep_pivot_shows_each_limiters_peak_ratio_per_load() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, out) = run_in(dir.path(), "run", "load", &scenario(&format!("{GCRA}{LOAD_SWEEP}")), &[]);
    let pivot = printed_table(&stdout, "load sweep: peak/L", 1).unwrap_or_else(|| panic!("{stdout}"));
    assert!(stdout.find("burst pairs:") < stdout.find("load sweep:"), "{stdout}");
    assert!(stdout.find("load sweep:") < stdout.find("\nwrote "), "{stdout}");
    assert!(stdout.contains("the full table is load_sweep.md"), "{stdout}");
    assert_eq!(pivot.headers, ["limiter", "load 0.5", "load 1.5", "load 3"]);
    assert_eq!(row_labels(&pivot, 1), limiters(&out, "load_sweep.csv"));
    assert!(pivot.rows.iter().any(|r| r[0] == "sliding_log"));
    let csv = records(&out, "load_sweep.csv", &["load", "limiter"]);
    let md = markdown_table(&read(&out, "load_sweep.md"));
    for row in &pivot.rows {
        for (header, cell) in pivot.headers[1..].iter().zip(&row[1..]) {
            let load = header.strip_prefix("load ").unwrap();
            let record = &csv[&vec![load.to_string(), row[0].clone()]];
            assert!(agrees(cell, &record["peak_ratio"]), "{} at {load}: {cell} against {record:?}", row[0]);
            assert_eq!(cell, md.cell(&[load, &row[0]], "peak/L"), "{} at {load}", row[0]);
        }
    }

    let (sweep_stdout, _) =
        run_in(dir.path(), "sweep", "load_sweeps", &scenario(&format!("{GCRA}{LOAD_SWEEP}")), &[]);
    let again =
        printed_table(&sweep_stdout, "load sweep: peak/L", 1).unwrap_or_else(|| panic!("{sweep_stdout}"));
    assert_eq!((again.headers, again.rows), (pivot.headers, pivot.rows));
}

/// `-q` prints nothing, the pivots included; the files are written.
#[test]
fn quiet_prints_no_pivot() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = "[nodes]\ncount = 2\nmode = \"local\"\n\n[sweep]\nnodes = [1, 2]\ngrid = 20\nloads = [1]\nload_duration = \"5s\"\n";
    let (stdout, out) = run_in(dir.path(), "run", "quiet", &scenario(nodes), &["-q"]);
    assert_eq!(stdout, "");
    assert!(out.join("load_sweep.csv").exists() && out.join("nodes_sweep.csv").exists());
    let (stdout, _) = run_in(dir.path(), "run", "loud", &scenario(nodes), &[]);
    assert!(printed_table(&stdout, "load sweep:", 1).is_some(), "{stdout}");
    assert!(printed_table(&stdout, "nodes sweep:", 1).is_some(), "{stdout}");
}

/// The nodes sweep's pivot: every limiter by K, its peak/L in
/// nodes_sweep.csv, and the analytic K × per node / L under them.
#[test]
fn the_nodes_sweep_pivot_shows_peak_ratio_per_node_count_and_the_analytic_bound() {
    let dir = tempfile::tempdir().unwrap();
    let more = format!("{GCRA}[nodes]\ncount = 2\nmode = \"local\"\n\n[sweep]\nnodes = [1, 3, 4]\n");
    let (stdout, out) = run_in(dir.path(), "run", "nodes", &scenario(&more), &[]);
    let pivot = printed_table(&stdout, "nodes sweep: peak/L", 1).unwrap_or_else(|| panic!("{stdout}"));
    assert!(stdout.contains("each allowed ceil(L/K); the full table is nodes_sweep.md"), "{stdout}");
    assert_eq!(pivot.headers, ["limiter", "K=1", "K=3", "K=4"]);
    let all = limiters(&out, "nodes_sweep.csv");
    let on_nodes: Vec<&String> = all.iter().filter(|l| *l != "sliding_log").collect();
    assert_eq!(on_nodes, ["fixed_window", "slot_counter(N=5)", "gcra"]);
    let mut expected = all.clone();
    expected.push("analytic: K × per node / L".into());
    assert_eq!(row_labels(&pivot, 1), expected);
    let csv = records(&out, "nodes_sweep.csv", &["nodes", "limiter"]);
    let md = markdown_table(&read(&out, "nodes_sweep.md"));
    for row in &pivot.rows {
        for (header, cell) in pivot.headers[1..].iter().zip(&row[1..]) {
            let k = header.strip_prefix("K=").unwrap();
            if row[0].starts_with("analytic") {
                // The same for every limiter on the nodes.
                for limiter in &on_nodes {
                    let record = &csv[&vec![k.to_string(), limiter.to_string()]];
                    assert!(
                        agrees(cell, &record["analytic_peak_ratio"]),
                        "K = {k}: {cell} against {record:?}"
                    );
                }
                continue;
            }
            let record = &csv[&vec![k.to_string(), row[0].clone()]];
            assert!(agrees(cell, &record["peak_ratio"]), "{} at K = {k}: {cell} against {record:?}", row[0]);
            assert_eq!(cell, md.cell(&[k, &record["per_node"], &row[0]], "peak/L"));
        }
    }
}

/// The rtt sweep's pivot: a row per store and limiter on the nodes (not
/// the sliding log, whose over-admission is 0 by definition), a column per
/// round trip, each cell its over-admission in rtt_sweep.csv; then the
/// estimate rate × rtt of the get-then-set rows.
#[test]
fn the_rtt_sweep_pivot_shows_over_admission_per_store_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let more = format!(
        "{GCRA}[nodes]\ncount = 3\nmode = \"central\"\nrtt = \"1ms\"\natomic = false\n\n[sweep]\nrtts = [\"0ms\", \"20ms\", \"100ms\"]\n"
    );
    let (stdout, out) = run_in(dir.path(), "run", "rtt", &scenario(&more), &[]);
    let pivot = printed_table(&stdout, "rtt sweep: over-admission", 2).unwrap_or_else(|| panic!("{stdout}"));
    assert!(stdout.contains("the full table is rtt_sweep.md"), "{stdout}");
    assert_eq!(pivot.headers, ["store", "limiter", "0s", "20ms", "100ms"]);
    let on_nodes: Vec<String> =
        limiters(&out, "rtt_sweep.csv").into_iter().filter(|l| l != "sliding_log").collect();
    let mut expected = Vec::new();
    for store in ["atomic", "get-then-set"] {
        expected.extend(on_nodes.iter().map(|l| format!("{store} / {l}")));
    }
    expected.push("get-then-set / estimate: rate × rtt".into());
    assert_eq!(row_labels(&pivot, 2), expected);
    let csv = records(&out, "rtt_sweep.csv", &["rtt", "store", "limiter"]);
    let rtts: Vec<String> = csv.keys().map(|k| k[0].clone()).collect();
    for row in &pivot.rows {
        for (header, cell) in pivot.headers[2..].iter().zip(&row[2..]) {
            let rtt =
                rtts.iter().find(|r| (r.parse::<f64>().unwrap() - printed_seconds(header)).abs() < 1e-12);
            let rtt = rtt.unwrap_or_else(|| panic!("no rtt {header} in rtt_sweep.csv"));
            let (store, label) = (&row[0], &row[1]);
            if label.starts_with("estimate") {
                for limiter in &on_nodes {
                    let record = &csv[&vec![rtt.clone(), store.clone(), limiter.clone()]];
                    let field = &record["estimated_over_admission"];
                    assert!(agrees(cell, field), "estimate at {header}: {cell} against {record:?}");
                }
                continue;
            }
            let record = &csv[&vec![rtt.clone(), store.clone(), label.clone()]];
            assert!(
                agrees(cell, &record["over_admission"]),
                "{store} {label} at {header}: {cell} against {record:?}"
            );
        }
    }
}

/// The sync sweep's pivot: a row per limiter on the nodes, a column per
/// sync interval, each cell its over-admission in sync_sweep.csv.
#[test]
fn the_sync_sweep_pivot_shows_over_admission_per_interval() {
    let dir = tempfile::tempdir().unwrap();
    let more = "[nodes]\ncount = 3\nmode = \"sync\"\nsync_interval = \"100ms\"\n\n[sweep]\nsync_intervals = [\"10ms\", \"500ms\", \"1s\"]\n";
    let (stdout, out) = run_in(dir.path(), "run", "sync", &scenario(more), &[]);
    let pivot = printed_table(&stdout, "sync sweep: over-admission", 1).unwrap_or_else(|| panic!("{stdout}"));
    assert!(stdout.contains("3 nodes; the full table is sync_sweep.md"), "{stdout}");
    assert_eq!(pivot.headers, ["limiter", "10ms", "500ms", "1s"]);
    let on_nodes: Vec<String> =
        limiters(&out, "sync_sweep.csv").into_iter().filter(|l| l != "sliding_log").collect();
    assert_eq!(row_labels(&pivot, 1), on_nodes);
    let csv = records(&out, "sync_sweep.csv", &["sync_interval", "limiter"]);
    let md = markdown_table(&read(&out, "sync_sweep.md"));
    for row in &pivot.rows {
        for (header, cell) in pivot.headers[1..].iter().zip(&row[1..]) {
            let (key, record) = csv
                .iter()
                .find(|(k, _)| {
                    k[1] == row[0] && (k[0].parse::<f64>().unwrap() - printed_seconds(header)).abs() < 1e-12
                })
                .unwrap_or_else(|| panic!("no {} at {header} in sync_sweep.csv", row[0]));
            assert!(agrees(cell, &record["over_admission"]), "{key:?}: {cell} against {record:?}");
            assert_eq!(cell, md.cell(&[header, &row[0]], "over-admission"));
        }
    }
}

/// A load sweep of 30 loads is too wide for one table of 120 characters:
/// the pivot takes the bare load factors as headers and comes in blocks,
/// each at most 120 wide, with every load once, in order, and every cell
/// still the CSV's.
#[test]
fn a_pivot_too_wide_for_the_terminal_comes_in_blocks_with_every_column() {
    let dir = tempfile::tempdir().unwrap();
    let loads: Vec<String> = (1..=30).map(|i| format!("{}", f64::from(i) / 10.0)).collect();
    let sweep = format!("[sweep]\ngrid = 20\nloads = [{}]\nload_duration = \"5s\"\n", loads.join(", "));
    let (stdout, out) = run_in(dir.path(), "run", "wide", &scenario(&sweep), &[]);
    let at = stdout.find("load sweep:").unwrap();
    let end = stdout.find("\nwrote ").unwrap();
    assert!(stdout[at..end].lines().all(|l| l.chars().count() <= 120), "{stdout}");
    assert!(stdout[at..end].matches("\nlimiter ").count() > 1, "{stdout}");
    let pivot = printed_table(&stdout, "load sweep:", 1).unwrap();
    let shown: Vec<String> = pivot.headers[1..].to_vec();
    let csv_loads: Vec<String> = {
        let mut seen: Vec<String> = Vec::new();
        for r in read_records(&out.join("load_sweep.csv")) {
            if !seen.contains(&r["load"]) {
                seen.push(r["load"].clone());
            }
        }
        seen
    };
    assert_eq!(shown, csv_loads);
    assert_eq!(shown.len(), 30);
    let csv = records(&out, "load_sweep.csv", &["load", "limiter"]);
    for row in &pivot.rows {
        for (load, cell) in shown.iter().zip(&row[1..]) {
            let record = &csv[&vec![load.clone(), row[0].clone()]];
            assert!(agrees(cell, &record["peak_ratio"]), "{} at {load}: {cell} against {record:?}", row[0]);
        }
    }
}

/// The pivot docs/charts_and_sweeps.md shows is what
/// `scenarios/nodes_central.toml` prints.
#[test]
fn the_docs_pivot_is_what_nodes_central_prints() {
    let doc = read(&common::root().join("docs"), "charts_and_sweeps.md");
    let at = doc.find("`scenarios/nodes_central.toml`:\n\n  ```text\n").expect("the docs' example");
    let block = &doc[at..];
    let start = block.find("```text\n").unwrap() + "```text\n".len();
    let end = block[start..].find("  ```").unwrap() + start;
    let shown: String =
        block[start..end].lines().map(|l| format!("{}\n", l.strip_prefix("  ").unwrap_or(l))).collect();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nc");
    let assert = ratesim()
        .args(["run", common::scenario("nodes_central.toml").to_str().unwrap(), "--no-charts", "--out"])
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains(&shown), "docs:\n{shown}\nprinted:\n{stdout}");
}
