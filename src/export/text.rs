//! The terminal table.

use super::pivot::Pivot;
use super::table::{Table, pad};

/// The widest line of a note under a table.
const NOTE_WIDTH: usize = 100;

/// `text` broken at spaces into lines of at most `width` characters (a
/// longer word stays whole on its own line).
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split(' ') {
        let n = word.chars().count();
        if line > 0 && line + 1 + n > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += n;
    }
    out
}

/// Renders a table in aligned plain-text columns with a rule under the header.
pub fn render_table(table: &Table) -> String {
    let widths = table.widths();
    let render = |cells: &[String]| -> String {
        let parts: Vec<String> =
            cells.iter().enumerate().map(|(i, c)| pad(c, widths[i], table.align[i])).collect();
        format!("{}\n", parts.join("  ").trim_end())
    };
    let mut out = render(&table.headers);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&format!("{}\n", rule.join("  ")));
    for row in &table.rows {
        out.push_str(&render(row));
    }
    out
}

/// The widest a sweep's pivot is drawn, in characters.
const PIVOT_WIDTH: usize = 120;

/// The width of `table` as [`render_table`] draws it.
fn table_width(table: &Table) -> usize {
    let widths = table.widths();
    widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1)
}

/// A sweep's pivot within `width` characters where it can be: with its
/// own headers if they fit, else with the shorter ones, else cut into
/// blocks of as many columns as fit, each with the rows' labels, so that
/// every swept value is shown.
fn render_pivot(pivot: &Pivot, width: usize) -> String {
    if table_width(&pivot.table) <= width {
        return render_table(&pivot.table);
    }
    let mut table = pivot.table.clone();
    table.headers.truncate(pivot.labels);
    table.headers.extend(pivot.short.iter().cloned());
    if table_width(&table) <= width {
        return render_table(&table);
    }
    let widths = table.widths();
    let labels: Vec<usize> = (0..pivot.labels).collect();
    let labels_width = table_width(&table.select(&labels));
    // The blocks as full as they fit, then as many with about as many
    // columns each (17 and 4 columns become 11 and 10).
    let cuts = |most: usize| {
        let mut cuts = Vec::new();
        let mut start = pivot.labels;
        while start < widths.len() {
            let (mut end, mut used) = (start + 1, labels_width + 2 + widths[start]);
            while end < widths.len() && end - start < most && used + 2 + widths[end] <= width {
                used += 2 + widths[end];
                end += 1;
            }
            cuts.push(start..end);
            start = end;
        }
        cuts
    };
    let values = widths.len() - pivot.labels;
    let blocks = cuts(usize::MAX).len();
    let blocks: Vec<String> = cuts(values.div_ceil(blocks))
        .into_iter()
        .map(|range| {
            let columns: Vec<usize> = labels.iter().copied().chain(range).collect();
            render_table(&table.select(&columns))
        })
        .collect();
    blocks.join("\n")
}

/// What the terminal shows of a run: its results (missing parts are left
/// out) and where they went.
pub struct SummaryInput<'a> {
    pub scenario: &'a crate::scenario::Scenario,
    pub report: Option<&'a crate::engine::RunReport>,
    pub burst_pair: Option<&'a crate::sweep::BurstPairResult>,
    pub load: Option<&'a [crate::sweep::LoadPoint]>,
    pub retry_policies: Option<&'a [crate::sweep::RetryPolicyPoint]>,
    /// The seed sweep: its over-admission rows only (the chart's figure).
    pub seeds: Option<&'a crate::sweep::SeedSweepResult>,
    /// The topology sweeps, if any.
    pub topology: &'a [crate::sweep::TopologySweepResult],
    /// The output folder, in place.
    pub target: &'a std::path::Path,
    /// The data files written.
    pub files: &'a [String],
    /// How many charts were drawn.
    pub charts: usize,
}

/// What `ratesim run` prints when it is done: the scenario, the limit, the
/// trace, the summary table (and the burst-pair and retry-policy tables,
/// the seed sweep's over-admission),
/// a pivot of each load or topology sweep ([`super::pivot`]: their own
/// tables are too long for a terminal), and where the outputs went.
pub fn run_summary(input: &SummaryInput) -> String {
    let SummaryInput {
        scenario,
        report,
        burst_pair,
        load,
        retry_policies,
        seeds,
        topology,
        target,
        files,
        charts,
    } = *input;
    use std::fmt::Write;
    let mut out = String::new();
    let path = scenario.path.to_string_lossy();
    let _ = writeln!(out, "scenario  {} ({})", scenario.name, crate::shown::escape(&path));
    if let Some(d) = &scenario.description {
        let _ = writeln!(out, "          {d}");
    }
    let per_key = if report.is_some_and(|r| r.keys > 1) { " per client key" } else { "" };
    let _ = writeln!(
        out,
        "limit     {} requests per {}{per_key} (exact window (t - W, t])",
        scenario.limit.requests,
        crate::time::format_duration(scenario.limit.window)
    );
    if let Some(t) = &scenario.nodes {
        let _ = writeln!(out, "nodes     {} (every limiter but the sliding-log reference)", t.describe());
    }
    if let Some(report) = report {
        let covers = match scenario.duration {
            Some(d) => format!("run covers [0, {d} s)"),
            None if report.limiters.iter().any(|l| l.clients.is_some()) => {
                "run ends 1 ns after the last attempt".to_string()
            }
            None if report.limiters.iter().any(|l| l.delays.is_some()) => {
                "run ends 1 ns after the last arrival or release".to_string()
            }
            None => "run ends 1 ns after the last arrival".to_string(),
        };
        let requests = if super::markdown::only_closed_clients(report) {
            "no open-loop requests (closed clients only)".to_string()
        } else {
            super::arrivals_phrase(report)
        };
        let _ = writeln!(out, "trace     {requests}; {covers}; seed {}", scenario.seed);
        let closed = scenario.closed_populations();
        if !closed.is_empty() {
            let _ = writeln!(out, "clients   {}", closed.join("; "));
        }
        for line in scenario.retry_lines() {
            let _ = writeln!(out, "{line}");
        }
        let _ = writeln!(out);
        out.push_str(&render_table(&super::markdown::summary_table(report)));
        let clients = super::markdown::clients_table(report);
        if !clients.rows.is_empty() {
            // What the summary's last two columns and the clients table
            // mean: the report's note, in plain text.
            let note = super::markdown::CLIENTS_NOTE.replace("**", "");
            let _ = writeln!(out, "\n{}", wrap(&note, NOTE_WIDTH));
        }
        for extra in [clients, super::markdown::delays_table(report)] {
            if !extra.rows.is_empty() {
                let _ = writeln!(out);
                out.push_str(&render_table(&extra));
            }
        }
    }
    if let Some(bp) = burst_pair {
        let _ = writeln!(out);
        if let Some(scope) = crate::sweep::window_sweeps_scope(scenario) {
            let _ = writeln!(out, "{scope}\n");
        }
        let _ = writeln!(
            out,
            "burst pairs: {} x {} (gap, offset) grid, two bursts of {} at single instants",
            bp.grid, bp.grid, bp.limit.requests
        );
        let _ = writeln!(out);
        out.push_str(&render_table(&super::markdown::error_vs_slots_table(bp)));
        for note in super::markdown::burst_pair_notes(bp) {
            let _ = writeln!(out, "\n{}", note.replace("**", ""));
        }
    }
    if let Some(points) = retry_policies {
        let _ = writeln!(out);
        let _ = writeln!(out, "retry policies: the traffic run once per retry table");
        let _ = writeln!(out);
        out.push_str(&render_table(&super::markdown::retry_policies_table(points)));
    }
    if let Some(result) = seeds {
        let mut table = super::markdown::seed_sweep_table(result);
        let over = crate::sweep::seeds::Metric::OverAdmission.name();
        // The over-admission block only, the chart's figure.
        let mut current = String::new();
        table.rows.retain(|r| {
            if !r[0].is_empty() {
                current.clone_from(&r[0]);
            }
            current == over
        });
        if !table.rows.is_empty() {
            let _ = writeln!(out);
            let _ = writeln!(
                out,
                "seed sweep: {} seeds, {} to {} (every figure in seed_sweep.md)",
                result.points.len(),
                result.first_seed(),
                result.last_seed()
            );
            let _ = writeln!(out);
            out.push_str(&render_table(&table));
        }
    }
    let pivots = load.and_then(super::pivot::load_sweep).into_iter();
    for pivot in pivots.chain(topology.iter().filter_map(super::pivot::topology_sweep)) {
        let _ = writeln!(out, "\n{}\n", wrap(&pivot.heading, NOTE_WIDTH));
        out.push_str(&render_pivot(&pivot, PIVOT_WIDTH));
    }
    let _ = writeln!(out);
    let charts =
        if charts > 0 { format!(" and {}", super::count_of(charts as u64, "chart")) } else { String::new() };
    let _ = writeln!(out, "wrote {}/ ({}{charts})", target.display(), files.join(", "));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pivot of `values` columns, each cell `cell` wide, headers
    /// `value 0`, `value 1`, ... (short: `0`, `1`, ...).
    fn pivot(values: usize, cell: usize) -> Pivot {
        use super::super::table::Align;
        let mut columns: Vec<(String, Align)> = vec![("limiter".into(), Align::Left)];
        columns.extend((0..values).map(|i| (format!("value {i}"), Align::Right)));
        let names: Vec<(&str, Align)> = columns.iter().map(|(h, a)| (h.as_str(), *a)).collect();
        let mut table = Table::new(&names);
        for label in ["fixed_window", "sliding_log"] {
            let mut row = vec![label.to_string()];
            row.extend((0..values).map(|i| format!("{i:>cell$}")));
            table.push(row);
        }
        Pivot {
            heading: String::new(),
            table,
            labels: 1,
            short: (0..values).map(|i| i.to_string()).collect(),
        }
    }

    /// A pivot that fits keeps its headers; one that does not takes the
    /// short ones; one still too wide is cut into blocks about as wide,
    /// each with the labels, every column in one of them, in order.
    #[test]
    fn a_wide_pivot_takes_its_short_headers_then_blocks_of_columns() {
        let shown = render_pivot(&pivot(6, 4), 120);
        assert!(shown.starts_with("limiter       value 0  value 1"), "{shown}");
        assert_eq!(shown.lines().count(), 4);
        // 12 columns of "value 10": 12 + 12 x 10 = 132 wide; short, 12 + 12 x 6 = 84.
        let shown = render_pivot(&pivot(12, 4), 120);
        assert!(shown.starts_with("limiter          0     1"), "{shown}");
        assert_eq!(shown.lines().count(), 4);
        // 30 columns of 6: 12 + 30 x 8 = 252, three blocks of 10 (13 would fit).
        let shown = render_pivot(&pivot(30, 6), 120);
        let blocks: Vec<&str> = shown.split("\n\n").collect();
        assert_eq!(blocks.len(), 3, "{shown}");
        let mut seen = Vec::new();
        for block in &blocks {
            let header: Vec<&str> = block.lines().next().unwrap().split_whitespace().collect();
            assert_eq!(header[0], "limiter");
            assert_eq!(header.len(), 11, "{block}");
            seen.extend(header[1..].iter().map(|h| h.parse::<usize>().unwrap()));
            assert!(block.lines().all(|l| l.chars().count() <= 120), "{block}");
            assert_eq!(block.lines().count(), 4);
        }
        assert_eq!(seen, (0..30).collect::<Vec<_>>());
        // A column wider than the width on its own still has a block.
        let shown = render_pivot(&pivot(2, 200), 120);
        assert_eq!(shown.split("\n\n").count(), 2, "{shown}");
    }

    #[test]
    fn wrap_breaks_at_spaces_within_the_width() {
        assert_eq!(wrap("aa bb cc dd", 5), "aa bb\ncc dd");
        assert_eq!(wrap("aa bb cc", 8), "aa bb cc");
        // A word longer than the width stays whole, on its own line.
        assert_eq!(wrap("a toolongword b", 4), "a\ntoolongword\nb");
        assert_eq!(wrap("", 4), "");
    }
}
