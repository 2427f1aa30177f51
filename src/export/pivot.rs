//! The sweeps' pivots for the terminal. A load or topology sweep's table
//! has a row per swept value per limiter (`load_sweep.md`: 66 rows for 6
//! loads and 11 limiters), too long to read in a terminal; its pivot has a
//! row per limiter and a column per swept value, each cell the sweep's
//! headline figure, written as its table writes it (the same cell
//! functions of [`super::markdown`], on the same results).
//!
//! The figure is what the sweep is for (`docs/semantics.md`): peak/L for
//! the load sweep (under overload every coarse limiter's over-admission is
//! about the same, "quote peak/L or excess, not over-admission") and the
//! nodes sweep (whose table sets it beside the analytic `K × per node / L`),
//! over-admission for the round-trip and sync sweeps (the rtt sweep's
//! estimate is of it). A pivot of over-admission leaves out the sliding-log
//! reference, 0 by definition.

use super::fmt_ratio;
use super::markdown::{peak_ratio_cell, topology_bound_cell, topology_over_admission_cell};
use super::table::{Align, Table};
use crate::engine::RunReport;
use crate::metrics::LimiterReport;
use crate::nodes::Mode;
use crate::sweep::LoadPoint;
use crate::sweep::topology::{Parameter, TopologyPoint, TopologySweepResult};
use crate::time::format_duration;

/// What peak/L is, for a pivot's heading.
const PEAK: &str = "peak/L (the most admitted in one exact window, over L)";

/// What peak/L is on many nodes, for a pivot's heading.
const PEAK_NODES: &str = "peak/L (the most all nodes admitted together in one exact window, over L)";

/// What over-admission is, for a pivot's heading.
const OVER: &str = "over-admission (admitted / admitted by the sliding-log reference - 1)";

/// A sweep's pivot: a row per limiter, a column per swept value.
#[derive(Clone, Debug)]
pub struct Pivot {
    /// What the cells are, and which file holds the full table.
    pub heading: String,
    /// The columns that label the rows (the limiter; for the rtt sweep the
    /// store first), then one per swept value.
    pub table: Table,
    /// How many of the table's columns label the rows.
    pub labels: usize,
    /// Shorter headers of the swept values' columns (`0.5` for `load 0.5`),
    /// for a pivot too wide with the table's own.
    pub short: Vec<String>,
}

/// A swept value's column: its header, and a shorter one.
struct Column {
    header: String,
    short: String,
}

impl Column {
    fn same(header: String) -> Column {
        Column { short: header.clone(), header }
    }
}

fn pivot(heading: String, labels: &[&str], columns: Vec<Column>, rows: Vec<Vec<String>>) -> Pivot {
    let mut headers: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
    let mut align = vec![Align::Left; labels.len()];
    headers.extend(columns.iter().map(|c| c.header.clone()));
    align.extend(columns.iter().map(|_| Align::Right));
    let mut table = Table { headers, align, rows: Vec::new() };
    for row in rows {
        table.push(row);
    }
    Pivot { heading, table, labels: labels.len(), short: columns.into_iter().map(|c| c.short).collect() }
}

/// The limiter labelled `label` in a report's limiters.
fn find<'a>(limiters: &'a [LimiterReport], label: &str) -> Option<&'a LimiterReport> {
    limiters.iter().find(|l| l.label == label)
}

/// The load sweep's pivot: peak/L, a column per load factor. `None`
/// without points.
pub fn load_sweep(points: &[LoadPoint]) -> Option<Pivot> {
    let first = points.first()?;
    let columns = points
        .iter()
        .map(|p| Column { header: format!("load {}", fmt_ratio(p.load)), short: fmt_ratio(p.load) })
        .collect();
    let reports: Vec<&RunReport> = points.iter().map(|p| &p.report).collect();
    let rows = rows_of(&reports, &first.report.limiters, |_| true, peak_ratio_cell);
    let heading = format!(
        "load sweep: {PEAK} at each load factor (Poisson arrivals at load × L/W, {} each); the full table is load_sweep.md",
        format_duration(first.report.end)
    );
    Some(pivot(heading, &["limiter"], columns, rows))
}

/// A topology sweep's pivot: peak/L against the node count, over-admission
/// against the round trip (a row per store and limiter) or the sync
/// interval. `None` without points.
pub fn topology_sweep(result: &TopologySweepResult) -> Option<Pivot> {
    let first = result.points.first()?;
    let all: Vec<&TopologyPoint> = result.points.iter().collect();
    let file = format!("{}.md", result.parameter.file());
    let count = crate::export::count_of(u64::from(first.topology.count), "node");
    match result.parameter {
        Parameter::Nodes => {
            let nodes = match first.topology.mode {
                Mode::Local => format!("each allowed {}", result.per_node.describe()),
                Mode::Sync { interval } => format!("synced every {}", format_duration(interval)),
                Mode::Central { .. } => "one central store".to_string(),
            };
            let heading = format!("nodes sweep: {PEAK_NODES} on K nodes, {nodes}; the full table is {file}");
            let columns = result
                .points
                .iter()
                .map(|p| Column {
                    header: format!("K={}", p.topology.count),
                    short: p.topology.count.to_string(),
                })
                .collect();
            let mut rows = rows_of(&reports(&all), &first.report.limiters, |_| true, peak_ratio_cell);
            let bound = match first.topology.mode {
                Mode::Local => "analytic: K × per node / L",
                _ => "never synced: K",
            };
            rows.extend(bound_row(result, &all, bound));
            Some(pivot(heading, &["limiter"], columns, rows))
        }
        Parameter::SyncInterval => {
            let heading =
                format!("sync sweep: {OVER} at each sync interval, {count}; the full table is {file}");
            let columns = result.points.iter().map(|p| Column::same(interval(p))).collect();
            let rows =
                rows_of(&reports(&all), &first.report.limiters, on_nodes, topology_over_admission_cell);
            Some(pivot(heading, &["limiter"], columns, rows))
        }
        Parameter::Rtt => {
            let heading = format!(
                "rtt sweep: {OVER} at each round trip to the central store, {count}; the full table is {file}"
            );
            // Each round trip runs atomic, then get-then-set (`TopologySweep::plans`).
            let store = |atomic: bool| -> Vec<&TopologyPoint> {
                result
                    .points
                    .iter()
                    .filter(|p| matches!(p.topology.mode, Mode::Central { atomic: a, .. } if a == atomic))
                    .collect()
            };
            let (atomic, get_then_set) = (store(true), store(false));
            let columns = atomic.iter().map(|p| Column::same(rtt(p))).collect();
            let mut rows = Vec::new();
            for (name, points) in [("atomic", &atomic), ("get-then-set", &get_then_set)] {
                for mut row in
                    rows_of(&reports(points), &first.report.limiters, on_nodes, topology_over_admission_cell)
                {
                    row.insert(0, name.to_string());
                    rows.push(row);
                }
            }
            if let Some(mut row) = bound_row(result, &get_then_set, "estimate: rate × rtt") {
                row.insert(0, "get-then-set".to_string());
                rows.push(row);
            }
            Some(pivot(heading, &["store", "limiter"], columns, rows))
        }
    }
}

/// The runs of a sweep's points.
fn reports<'a>(points: &[&'a TopologyPoint]) -> Vec<&'a RunReport> {
    points.iter().map(|p| &p.report).collect()
}

/// Whether a limiter ran on the nodes (all but the sliding-log reference).
fn on_nodes(l: &LimiterReport) -> bool {
    !l.nodes.is_empty()
}

fn interval(p: &TopologyPoint) -> String {
    match p.topology.mode {
        Mode::Sync { interval } => format_duration(interval),
        _ => "–".into(),
    }
}

fn rtt(p: &TopologyPoint) -> String {
    match p.topology.mode {
        Mode::Central { rtt, .. } => format_duration(rtt),
        _ => "–".into(),
    }
}

/// A row per limiter of `limiters` that `keep` keeps, labelled, a cell per
/// report (a sweep's points, in order).
fn rows_of(
    reports: &[&RunReport],
    limiters: &[LimiterReport],
    keep: fn(&LimiterReport) -> bool,
    cell: fn(&LimiterReport) -> String,
) -> Vec<Vec<String>> {
    limiters
        .iter()
        .filter(|l| keep(l))
        .map(|l| {
            let mut row = vec![l.label.clone()];
            row.extend(reports.iter().map(|r| find(&r.limiters, &l.label).map_or("–".into(), cell)));
            row
        })
        .collect()
}

/// The table's last column (the analytic peak/L, the never-synced K, the
/// rtt estimate) as a row labelled `label`, a cell per point: it is the
/// same for every limiter on the nodes where it depends on the topology
/// alone. `None` when no point has one, or when the limiters' differ at
/// some point (the rtt estimate is capped by what each limiter's clients
/// offered, which differs when they retry).
fn bound_row(result: &TopologySweepResult, points: &[&TopologyPoint], label: &str) -> Option<Vec<String>> {
    let mut row = vec![label.to_string()];
    for p in points {
        let mut cells = p
            .report
            .limiters
            .iter()
            .filter(|l| on_nodes(l))
            .map(|l| topology_bound_cell(result.parameter, p, l));
        let cell = cells.next().unwrap_or_else(|| "–".into());
        if cells.any(|c| c != cell) {
            return None;
        }
        row.push(cell);
    }
    row[1..].iter().any(|c| c != "–").then_some(row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::markdown::{load_sweep_table, topology_sweep_table};
    use crate::scenario::Scenario;

    /// The cell of `column` in the row of `table` whose cells under the
    /// headers of `keys` are theirs.
    fn cell(table: &Table, keys: &[(&str, &str)], column: &str) -> String {
        let at =
            |h: &str| table.headers.iter().position(|x| x == h).unwrap_or_else(|| panic!("no column {h}"));
        let row = table
            .rows
            .iter()
            .find(|r| keys.iter().all(|(h, v)| r[at(h)] == *v))
            .unwrap_or_else(|| panic!("no row {keys:?}"));
        row[at(column)].clone()
    }

    /// The topology sweeps of a small scenario on `nodes` (a `[nodes]`
    /// table's body) sweeping `sweep` (a `[sweep]` key and list).
    fn topology(nodes: &str, sweep: &str) -> Vec<TopologySweepResult> {
        let text = format!(
            "name = \"t\"\nduration = \"4s\"\nseed = 3\n[limit]\nrequests = 20\nwindow = \"1s\"\n[nodes]\n{nodes}\n\
[[traffic]]\nkind = \"poisson\"\nload = 3\n[[limiter]]\nkind = \"fixed_window\"\n[[limiter]]\nkind = \"slot_counter\"\n\
slots = [5]\n[sweep]\n{sweep}\n"
        );
        let scenario = Scenario::parse(&text, std::path::Path::new("t.toml")).unwrap();
        crate::sweep::topology::run(&scenario, scenario.topology_sweep.as_ref().unwrap(), None, &|_| {})
            .unwrap()
    }

    /// Each cell is the load sweep table's peak/L of that load and limiter,
    /// the sliding log's row included.
    #[test]
    fn the_load_pivot_holds_the_tables_peak_ratios() {
        let config = crate::sweep::LoadSweepConfig {
            limit: crate::limiter::Limit { requests: 20, window: crate::time::Nanos::from_secs(1) },
            limiters: crate::engine::with_reference(&crate::sweep::default_limiters()).0,
            loads: vec![0.5, 1.5, 3.0],
            duration: crate::time::Nanos::from_secs(10),
            seed: 5,
        };
        let points = crate::sweep::load::run(&config, &|_| {}).unwrap();
        let pivot = load_sweep(&points).unwrap();
        let md = load_sweep_table(&points);
        assert_eq!(pivot.table.headers, ["limiter", "load 0.5", "load 1.5", "load 3"]);
        assert_eq!(pivot.short, ["0.5", "1.5", "3"]);
        assert_eq!(pivot.table.rows.len(), points[0].report.limiters.len());
        assert_eq!(pivot.table.rows.last().unwrap()[0], "sliding_log");
        for row in &pivot.table.rows {
            for (i, load) in pivot.short.iter().enumerate() {
                assert_eq!(row[i + 1], cell(&md, &[("load", load), ("limiter", &row[0])], "peak/L"));
            }
        }
        assert!(pivot.heading.contains("peak/L") && pivot.heading.contains("load_sweep.md"));
        assert!(load_sweep(&[]).is_none());
    }

    /// A row per store and limiter on the nodes (not the reference, whose
    /// over-admission is 0 by definition), the table's over-admission in
    /// each cell, and the estimate under them.
    #[test]
    fn the_rtt_pivot_holds_the_tables_over_admission_per_store() {
        let results =
            topology("count = 3\nmode = \"central\"\nrtt = \"1ms\"", "rtts = [\"0ms\", \"5ms\", \"20ms\"]");
        let pivot = topology_sweep(&results[0]).unwrap();
        let md = topology_sweep_table(&results[0]);
        assert_eq!(pivot.table.headers, ["store", "limiter", "0s", "5ms", "20ms"]);
        let labels: Vec<(&str, &str)> =
            pivot.table.rows.iter().map(|r| (r[0].as_str(), r[1].as_str())).collect();
        assert_eq!(
            labels,
            [
                ("atomic", "fixed_window"),
                ("atomic", "slot_counter(N=5)"),
                ("get-then-set", "fixed_window"),
                ("get-then-set", "slot_counter(N=5)"),
                ("get-then-set", "estimate: rate × rtt"),
            ]
        );
        for row in &pivot.table.rows {
            for (i, rtt) in pivot.short.iter().enumerate() {
                let (store, limiter) = (&row[0], &row[1]);
                let expected = if limiter.starts_with("estimate") {
                    let at = [("rtt", rtt.as_str()), ("store", store.as_str()), ("limiter", "fixed_window")];
                    cell(&md, &at, "estimate: rate × rtt")
                } else {
                    let at =
                        [("rtt", rtt.as_str()), ("store", store.as_str()), ("limiter", limiter.as_str())];
                    cell(&md, &at, "over-admission")
                };
                assert_eq!(row[i + 2], expected, "{store} {limiter} at {rtt}");
            }
        }
        assert!(pivot.heading.contains("over-admission") && pivot.heading.contains("rtt_sweep.md"));
    }

    /// Peak/L on K nodes for every limiter, the reference included, and
    /// the analytic K × per node / L under them; over-admission against
    /// the sync interval for the limiters on the nodes.
    #[test]
    fn the_nodes_and_sync_pivots_hold_the_tables_figures() {
        let results = topology("count = 2\nmode = \"local\"\nper_node = \"ceil\"", "nodes = [1, 3, 7]");
        let pivot = topology_sweep(&results[0]).unwrap();
        let md = topology_sweep_table(&results[0]);
        assert_eq!(pivot.table.headers, ["limiter", "K=1", "K=3", "K=7"]);
        assert_eq!(pivot.short, ["1", "3", "7"]);
        let labels: Vec<&str> = pivot.table.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(
            labels,
            ["fixed_window", "slot_counter(N=5)", "sliding_log", "analytic: K × per node / L"]
        );
        for row in &pivot.table.rows {
            for (i, k) in pivot.short.iter().enumerate() {
                let expected = match row[0].as_str() {
                    "analytic: K × per node / L" => cell(
                        &md,
                        &[("nodes K", k), ("limiter", "fixed_window")],
                        "analytic peak/L (K × per node / L)",
                    ),
                    limiter => cell(&md, &[("nodes K", k), ("limiter", limiter)], "peak/L"),
                };
                assert_eq!(row[i + 1], expected, "{} at K = {k}", row[0]);
            }
        }
        // ceil(20 / 7) = 3 per node: 21 / 20.
        assert_eq!(pivot.table.rows[3][3], "1.05");
        assert!(pivot.heading.contains("ceil(L/K)") && pivot.heading.contains("nodes_sweep.md"));

        let results = topology(
            "count = 3\nmode = \"sync\"\nsync_interval = \"100ms\"",
            "sync_intervals = [\"10ms\", \"1s\"]",
        );
        let pivot = topology_sweep(&results[0]).unwrap();
        let md = topology_sweep_table(&results[0]);
        assert_eq!(pivot.table.headers, ["limiter", "10ms", "1s"]);
        let labels: Vec<&str> = pivot.table.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(labels, ["fixed_window", "slot_counter(N=5)"]);
        for row in &pivot.table.rows {
            for (i, interval) in pivot.short.iter().enumerate() {
                let at = [("sync interval", interval.as_str()), ("limiter", row[0].as_str())];
                assert_eq!(row[i + 1], cell(&md, &at, "over-admission"));
            }
        }
        assert!(pivot.heading.contains("3 nodes") && pivot.heading.contains("sync_sweep.md"));
    }
}
