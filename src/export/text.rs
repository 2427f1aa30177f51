//! The terminal table.

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

/// What `ratesim run` prints when it is done: the scenario, the limit, the
/// trace, the summary table (and the burst-pair table), and where the
/// outputs went.
pub fn run_summary(
    scenario: &crate::scenario::Scenario,
    report: Option<&crate::engine::RunReport>,
    burst_pair: Option<&crate::sweep::BurstPairResult>,
    retry_policies: Option<&[crate::sweep::RetryPolicyPoint]>,
    target: &std::path::Path,
    files: &[String],
    charts: usize,
) -> String {
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
    let _ = writeln!(out);
    let charts =
        if charts > 0 { format!(" and {}", super::count_of(charts as u64, "chart")) } else { String::new() };
    let _ = writeln!(out, "wrote {}/ ({}{charts})", target.display(), files.join(", "));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_at_spaces_within_the_width() {
        assert_eq!(wrap("aa bb cc dd", 5), "aa bb\ncc dd");
        assert_eq!(wrap("aa bb cc", 8), "aa bb cc");
        // A word longer than the width stays whole, on its own line.
        assert_eq!(wrap("a toolongword b", 4), "a\ntoolongword\nb");
        assert_eq!(wrap("", 4), "");
    }
}
