//! `report.md`: the scenario, its limit, its tables and its charts (relative
//! links), ready to drop into docs.

use std::fmt::Write;

use super::markdown::{
    burst_pair_method, error_vs_slots_table, load_sweep_method, load_sweep_table, render_table, summary_table,
};
use crate::engine::RunReport;
use crate::limiter::Limit;
use crate::sweep::{BurstPairResult, LoadPoint, RetryPolicyPoint};
use crate::time::format_duration;

/// A chart written beside the report: its name (`timeline`, ...), its file
/// (relative to the report) and a caption.
#[derive(Clone, Debug)]
pub struct ChartRef {
    pub name: String,
    pub file: String,
    pub caption: String,
}

/// Everything the report shows; missing parts are left out.
pub struct ReportInput<'a> {
    pub name: &'a str,
    pub description: Option<&'a str>,
    /// The scenario file as the user named it.
    pub scenario_file: &'a str,
    /// The command that makes the same outputs again.
    pub command: &'a str,
    pub seed: u64,
    pub limit: Limit,
    pub run: Option<&'a RunReport>,
    /// Who the clients are and how they retry (`Scenario::clients_sentence`).
    pub clients: Option<String>,
    pub burst_pair: Option<&'a BurstPairResult>,
    /// What the burst-pair and load sweeps leave out of the scenario
    /// ([`crate::sweep::window_sweeps_scope`]).
    pub sweep_scope: Option<String>,
    pub load: Option<&'a [LoadPoint]>,
    pub retry_policies: Option<&'a [RetryPolicyPoint]>,
    /// The seed sweep, if any.
    pub seeds: Option<&'a crate::sweep::SeedSweepResult>,
    /// The scenario (for what the seed sweep says it drew).
    pub scenario: &'a crate::scenario::Scenario,
    /// The nodes the limiters ran on, if many.
    pub nodes: Option<&'a crate::nodes::Topology>,
    /// The topology sweeps, if any.
    pub topology: &'a [crate::sweep::TopologySweepResult],
    pub charts: &'a [ChartRef],
    /// Data files written beside the report.
    pub files: &'a [String],
}

/// Escapes the characters that Markdown would read as markup in alt text and
/// captions (`]` would end the alt text, `*` would end the italics).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '*' | '_' | '[' | ']' | '`' | '<' | '>') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn charts(out: &mut String, all: &[ChartRef], names: &[&str]) {
    for name in names {
        for c in all.iter().filter(|c| c.name == *name) {
            let caption = escape(&c.caption);
            let _ = writeln!(out, "![{caption}]({})\n", c.file);
            let _ = writeln!(out, "*{caption}*\n");
        }
    }
}

/// Renders `report.md`.
pub fn report(input: &ReportInput) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", input.name);
    if let Some(d) = input.description {
        let _ = writeln!(out, "{d}\n");
    }
    let _ = writeln!(
        out,
        "Scenario `{}`, seed {}. Limit: **{} requests per {}**, judged on the exact window (t - W, t]; \
the sliding log is the exact reference.\n",
        input.scenario_file,
        input.seed,
        input.limit.requests,
        format_duration(input.limit.window)
    );
    let _ = writeln!(out, "Regenerate with `{}`.\n", input.command);
    if let Some(scope) = &input.sweep_scope {
        let _ = writeln!(out, "**Sweeps.** {scope}\n");
    }
    if let Some(run) = input.run {
        let _ = writeln!(out, "## Run\n");
        let _ = writeln!(out, "{}\n", super::markdown::trace_sentence(run));
        if let Some(clients) = &input.clients {
            let _ = writeln!(out, "{clients}\n");
        }
        out.push_str(&render_table(&summary_table(run)));
        let _ = writeln!(out, "\n{}\n", super::markdown::summary_note(run));
        let clients = super::markdown::clients_table(run);
        if !clients.rows.is_empty() {
            let _ = writeln!(out, "{}\n", super::markdown::CLIENTS_NOTE);
            out.push_str(&render_table(&clients));
            out.push('\n');
        }
        let delays = super::markdown::delays_table(run);
        if !delays.rows.is_empty() {
            let _ = writeln!(out, "{}\n", super::markdown::DELAYS_NOTE);
            out.push_str(&render_table(&delays));
            out.push('\n');
        }
        let curve = super::markdown::admission_curve_table(run);
        if !curve.rows.is_empty() {
            let _ = writeln!(
                out,
                "Admission curve: A(τ), the most requests admitted in any interval (t - τ, t], for each interval \
length τ; A(W) is the peak.\n"
            );
            out.push_str(&render_table(&curve));
            out.push('\n');
        }
        charts(
            &mut out,
            input.charts,
            &[
                "window_count",
                "timeline",
                "shaping_timeline",
                "delay_cdf",
                "retry_timeline",
                "time_to_success",
                "admission_curve",
                "windows_diagram",
            ],
        );
        if let Some(t) = input.nodes {
            let _ = writeln!(out, "## Nodes\n");
            let _ = writeln!(out, "{}\n", super::markdown::topology_sentence(t));
            let _ = writeln!(
                out,
                "Per node: what each node admitted and rejected, its share of the limiter's admitted requests, and \
its peak, the most it admitted in one exact window (all client keys together), over the scenario's L.\n"
            );
            out.push_str(&render_table(&super::markdown::nodes_table(run, t)));
            out.push('\n');
            charts(&mut out, input.charts, &["nodes_timeline"]);
        }
    }
    if let Some(result) = input.seeds {
        let _ = writeln!(out, "## Seed sweep\n");
        let _ = writeln!(out, "{}\n", super::markdown::seed_sweep_method(result, input.scenario));
        out.push_str(&render_table(&super::markdown::seed_sweep_table(result)));
        out.push('\n');
        charts(&mut out, input.charts, &["seed_sweep"]);
    }
    if let Some(bp) = input.burst_pair {
        let _ = writeln!(out, "## Error versus slot count\n");
        let _ = writeln!(out, "{}\n", burst_pair_method(bp));
        out.push_str(&render_table(&error_vs_slots_table(bp)));
        out.push('\n');
        if !bp.on_n_axis() {
            let _ = writeln!(
                out,
                "No error-versus-N chart: none of these limiters is a fixed window or a slot counter measured \
here, so none sits on its N axis; the table above has their figures.\n"
            );
        }
        charts(&mut out, input.charts, &["error_vs_slots", "burst_pair_map"]);
        if input.run.is_none() {
            charts(&mut out, input.charts, &["windows_diagram"]);
        }
    }
    if let Some(points) = input.load {
        let _ = writeln!(out, "## Load sweep\n");
        let _ = writeln!(out, "{}\n", load_sweep_method(points, input.seed));
        out.push_str(&render_table(&load_sweep_table(points)));
        out.push('\n');
        charts(&mut out, input.charts, &["load_sweep", "which_limiter"]);
    }
    if let Some(points) = input.retry_policies {
        let _ = writeln!(out, "## Retry policies\n");
        let _ = writeln!(out, "{}\n", super::markdown::retry_policies_method(points, input.seed));
        out.push_str(&render_table(&super::markdown::retry_policies_table(points)));
        out.push('\n');
        charts(&mut out, input.charts, &["retry_policies"]);
    }

    for sweep in input.topology {
        let heading = match sweep.parameter {
            crate::sweep::topology::Parameter::Nodes => "Nodes sweep",
            crate::sweep::topology::Parameter::Rtt => "Round-trip sweep",
            crate::sweep::topology::Parameter::SyncInterval => "Sync sweep",
        };
        let _ = writeln!(out, "## {heading}\n");
        let _ = writeln!(out, "{}\n", super::markdown::topology_sweep_method(sweep));
        out.push_str(&render_table(&super::markdown::topology_sweep_table(sweep)));
        out.push('\n');
        charts(&mut out, input.charts, &[sweep.parameter.file()]);
    }
    if !input.files.is_empty() {
        let _ = writeln!(out, "## Files\n");
        for f in input.files {
            let _ = writeln!(out, "- [{f}]({f})");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captions_cannot_break_the_image_link() {
        assert_eq!(escape("window (t* - W, t*] of a_b"), "window (t\\* - W, t\\*\\] of a\\_b");
    }
}
