//! Markdown tables for docs: `summary.md`.

use std::fmt::Write;

use super::table::{Align, Table, pad};
use super::{fmt_bytes, fmt_percent};
use crate::engine::RunReport;
use crate::time::format_duration;

/// Renders a table as GitHub-flavoured Markdown, columns aligned in the source too.
pub fn render_table(table: &Table) -> String {
    let widths: Vec<usize> = table.widths().iter().map(|w| (*w).max(3)).collect();
    let mut out = String::new();
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    out.push_str(&line(
        table.headers.iter().enumerate().map(|(i, h)| pad(h, widths[i], table.align[i])).collect(),
    ));
    out.push_str(&line(
        widths
            .iter()
            .zip(&table.align)
            .map(|(w, a)| match a {
                Align::Left => format!(":{}", "-".repeat(w - 1)),
                Align::Right => format!("{}:", "-".repeat(w - 1)),
            })
            .collect(),
    ));
    for row in &table.rows {
        out.push_str(&line(row.iter().enumerate().map(|(i, c)| pad(c, widths[i], table.align[i])).collect()));
    }
    out
}

/// The human summary table: one row per limiter, percentages for the ratios.
pub fn summary_table(report: &RunReport) -> Table {
    use Align::*;
    let mut t = Table::new(&[
        ("limiter", Left),
        ("admitted", Right),
        ("rejected", Right),
        ("peak", Right),
        ("peak/L", Right),
        ("excess", Right),
        ("false rejects", Right),
        ("over-admission", Right),
        ("disagreement", Right),
        ("state", Right),
    ]);
    for l in &report.limiters {
        let c = &l.counts;
        t.push(vec![
            l.label.clone(),
            c.admitted.to_string(),
            c.rejected.to_string(),
            c.peak.to_string(),
            format!("{:.2}", l.peak_ratio()),
            c.excess.to_string(),
            c.false_rejects.to_string(),
            l.over_admission().map_or("n/a".into(), |v| fmt_percent(v, true)),
            l.disagreement().map_or("n/a".into(), |v| fmt_percent(v, false)),
            format!("{} ({})", l.state.entries, fmt_bytes(l.state.bytes)),
        ]);
    }
    t
}

/// `summary.md`: a heading line on the run, then the table.
pub fn summary(title: &str, report: &RunReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### {title}\n");
    let _ = writeln!(
        out,
        "Limit: {} requests per {}{}. Trace: {} requests{} over {} s. Reference: sliding log (exact).\n",
        report.limit.requests,
        format_duration(report.limit.window),
        if report.keys > 1 { " per client key" } else { "" },
        report.arrivals,
        if report.keys > 1 { format!(" from {} client keys", report.keys) } else { String::new() },
        report.end
    );
    out.push_str(&render_table(&summary_table(report)));
    out
}
