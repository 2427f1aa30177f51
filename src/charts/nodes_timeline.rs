//! `nodes_timeline`: requests each node admitted per bin, a strip per
//! limiter on nodes (the exact reference is not on nodes), with each node's
//! own limit (local mode) dashed where it is comparable with a bin.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::RunReport;
use ratesim::nodes::{Mode, Topology};
use ratesim::time::format_duration;

/// Nodes drawn one line each; with more, a band from the least to the most
/// any node admitted in the bin, and their mean (five or more lines become
/// a tangle).
pub const NODE_LINES: usize = 4;

/// A colour per node (Okabe-Ito and Tableau: told apart in colour-blind
/// vision too), the same in every strip.
const NODE_COLOURS: [(u8, u8, u8); NODE_LINES] =
    [(0, 114, 178), (230, 159, 0), (0, 158, 115), (204, 121, 167)];

/// The area of all nodes together.
fn total_colour() -> RGBColor {
    RGBColor(150, 150, 150)
}

/// The global limit L, dark so that it shows on the nodes' area.
fn global_colour() -> RGBColor {
    RGBColor(40, 40, 40)
}

pub fn node_colour(i: usize) -> RGBColor {
    rgb(NODE_COLOURS[i % NODE_LINES])
}

/// The width of each node's line in one bin: 2 px, and for a node that
/// admitted as many as a later node in the bin (or within `tol`, a few
/// pixels: one line to the eye), a border of 1.5 px around its line
/// ([`covered_widths_by`]; bins 4 px wide held 14 px of nested lines as
/// blocks): nodes nest where they are equal, and the lines
/// of nodes that differ stay thin, so that they do not tangle.
fn bin_widths(row: &[ratesim::timeline::Bin], tol: f64) -> Vec<u32> {
    covered_widths_by(&vec![2; row.len()], |a, b| admitted_gap(row, a, b) <= tol, 3)
}

/// How far apart nodes `a` and `b` are in a bin.
fn admitted_gap(row: &[ratesim::timeline::Bin], a: usize, b: usize) -> f64 {
    row[a].admitted.abs_diff(row[b].admitted) as f64
}

/// A piece of a node's line: the node, its points and its width.
type Piece = (usize, Vec<(f64, f64)>, u32);

/// A step line cut where its width changes: runs of `(x0, x1, value,
/// width)` steps of one width, each run with the riser to the next step,
/// so that the pieces join.
fn runs_of_width(steps_in: &[(f64, f64, f64, u32)]) -> Vec<(Vec<(f64, f64)>, u32)> {
    let mut out: Vec<(Vec<(f64, f64)>, u32)> = Vec::new();
    for (i, &(x0, x1, v, w)) in steps_in.iter().enumerate() {
        if i == 0 || steps_in[i - 1].3 != w {
            if let Some((last, _)) = out.last_mut() {
                last.push((x0, v));
            }
            out.push((Vec::new(), w));
        }
        let (pts, _) = out.last_mut().expect("a run");
        pts.extend([(x0, v), (x1, v)]);
    }
    out
}

pub struct NodesTimeline<'a> {
    pub scenario: &'a str,
    pub report: &'a RunReport,
    pub topology: &'a Topology,
}

impl NodesTimeline<'_> {
    /// The per-node limit to draw, when a bar of admitted requests is in
    /// its unit: local mode, and bars (bins merged for drawing) exactly one
    /// window long (a bin is then
    /// an aligned window, which a node holding its own limit never passes;
    /// shorter bins hold a part of a window and longer ones several).
    fn limit_line(&self) -> Option<f64> {
        let r = self.report;
        let drawn = r.timeline.width().get() * r.timeline.chart_factor(None) as u64;
        (self.topology.mode == Mode::Local && drawn == r.limit.window.get())
            .then_some(self.topology.per_node as f64)
    }
}

impl Chart for NodesTimeline<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = self.report;
        let on_nodes: Vec<_> = r.limiters.iter().filter(|l| l.node_timeline.is_some()).collect();
        // Bars wide enough to see: bins merged for drawing (the CSV keeps
        // them), as many to a bar as the run's timeline merges.
        let factor = r.timeline.chart_factor(None);
        let merged: Vec<ratesim::timeline::Timeline> =
            on_nodes.iter().filter_map(|l| l.node_timeline.as_ref()).map(|t| t.merged(factor)).collect();
        let Some(first) = merged.first() else { return Ok(()) };
        let width = first.width().get();
        let k = usize::from(self.topology.count);
        // From the bin of the first arrival when the traffic starts late
        // (a run whose nodes' clocks lag must start late): the nodes' part
        // is what this chart is for.
        let end = bins_end(r);
        let start = r.first_arrival.map_or(0, |t| t.get() / width * width).min(r.end.get().saturating_sub(1));
        let start = if start.saturating_mul(10) < end { 0 } else { start };
        let (div, unit) = time_unit(end - start);
        let x_start = start as f64 / div;
        let first_bin = (start / width) as usize;
        let x_end = end as f64 / div;
        // The nodes together: the highest bin of any limiter's sum.
        let y_data = merged
            .iter()
            .flat_map(|t| t.bins().iter().map(|row| row.iter().map(|b| b.admitted).sum::<u64>()))
            .max()
            .unwrap_or(0) as f64;
        let limit = self.limit_line();
        // With the limit lines drawn, the global limit L is one of them.
        let lines_top = limit.map_or(0.0, |y| y.max(r.limit.requests as f64));
        let y_max = (y_data.max(lines_top) * 1.3).max(1.0);
        let bin = format_duration(first.width());
        let area = titled(
            root,
            &format!(
                "{}: admitted per {bin} bin on each of {k} node{}",
                self.scenario,
                if k == 1 { "" } else { "s" }
            ),
        )?;
        let (plots, legend) = with_legend(&area);
        let strips =
            strip_frame(&plots, &format!("time ({unit})"), &format!("admitted per {bin} bin, per node"))?;
        let rows = super::strips(&strips, on_nodes.len(), 30);
        let limit_colour = RGBColor(200, 0, 0);
        // The most nodes nested in one bin part by (0: only equal ones).
        let mut nested: Option<f64> = None;
        for (s, (strip, l)) in rows.iter().zip(&on_nodes).enumerate() {
            let last = s + 1 == on_nodes.len();
            let bins = merged[s].bins();
            // L labelled where it is drawn.
            let mark = limit.map(|_| r.limit.requests as f64);
            let mut chart = strip_chart_in(strip, last, x_start..x_end, 0.0..y_max, 3, &whole, mark)?;
            let span = |b: usize| {
                let x0 = (b as u64).saturating_mul(width) as f64 / div;
                let x1 = (b as u64 + 1).saturating_mul(width) as f64 / div;
                (x0.max(x_start), x1.min(x_end))
            };
            let total = steps(bins.iter().enumerate().skip(first_bin).map(|(b, row)| {
                let (x0, x1) = span(b);
                (x0, x1, row.iter().map(|c| c.admitted).sum::<u64>() as f64)
            }));
            chart.draw_series(AreaSeries::new(total, 0.0, total_colour().mix(0.35))).map_err(err)?;
            if k <= NODE_LINES {
                // Node 0 first; in a bin where a node admitted as many as a
                // later node (round robin, equal weights) its line is wider,
                // a border around the later one, so equal nodes show as
                // nested stripes; where nodes differ, thin lines.
                // Nodes a few pixels apart (1 request on a strip of 3.5 px
                // a request) are one line to the eye: they nest too.
                let plot_h = strip.dim_in_pixel().1.saturating_sub(if last { 34 } else { 4 }).max(1);
                let tol = NEAR_PX * y_max / f64::from(plot_h);
                let widths: Vec<Vec<u32>> = bins.iter().map(|row| bin_widths(row, tol)).collect();
                for row in bins.iter().skip(first_bin) {
                    for (a, b) in (0..k).flat_map(|a| (a + 1..k).map(move |b| (a, b))) {
                        let gap = admitted_gap(row, a, b);
                        if gap <= tol {
                            nested = Some(nested.unwrap_or(0.0).max(gap));
                        }
                    }
                }
                // The wide pieces first, so that a thin line (a node apart
                // from the others) is never under a border.
                let mut pieces: Vec<Piece> = Vec::new();
                for node in 0..k {
                    let node_steps: Vec<(f64, f64, f64, u32)> = bins
                        .iter()
                        .enumerate()
                        .skip(first_bin)
                        .map(|(b, row)| {
                            let (x0, x1) = span(b);
                            (x0, x1, row[node].admitted as f64, widths[b][node])
                        })
                        .collect();
                    pieces.extend(runs_of_width(&node_steps).into_iter().map(|(pts, w)| (node, pts, w)));
                }
                pieces.sort_by_key(|p| std::cmp::Reverse(p.2));
                // A line at 0 is drawn with its lower edge on 0, not across
                // it, as window_count's: nodes nested at 0 (nodes_skew's,
                // between their windows) nest upward instead of reaching
                // under the axis and into the strip below.
                let per_px = y_max / f64::from(plot_h);
                for (node, pts, w) in pieces {
                    let floor = f64::from(w) / 2.0 * per_px;
                    let pts: Vec<(f64, f64)> = pts.into_iter().map(|(x, v)| (x, v.max(floor))).collect();
                    chart
                        .draw_series(LineSeries::new(pts, node_colour(node).stroke_width(w)))
                        .map_err(err)?;
                }
            } else {
                let lo: Vec<(f64, f64)> = steps(bins.iter().enumerate().skip(first_bin).map(|(b, row)| {
                    let (x0, x1) = span(b);
                    (x0, x1, row.iter().map(|c| c.admitted).min().unwrap_or(0) as f64)
                }));
                let hi: Vec<(f64, f64)> = steps(bins.iter().enumerate().skip(first_bin).map(|(b, row)| {
                    let (x0, x1) = span(b);
                    (x0, x1, row.iter().map(|c| c.admitted).max().unwrap_or(0) as f64)
                }));
                let mut band = hi.clone();
                band.extend(lo.iter().rev());
                chart
                    .draw_series(std::iter::once(Polygon::new(band, node_colour(0).mix(0.3).filled())))
                    .map_err(err)?;
                let mean = steps(bins.iter().enumerate().skip(first_bin).map(|(b, row)| {
                    let (x0, x1) = span(b);
                    (x0, x1, row.iter().map(|c| c.admitted).sum::<u64>() as f64 / k as f64)
                }));
                chart.draw_series(LineSeries::new(mean, node_colour(0).stroke_width(2))).map_err(err)?;
            }
            if let Some(y) = limit {
                chart
                    .draw_series(DashedLineSeries::new(
                        vec![(x_start, y), (x_end, y)],
                        12,
                        8,
                        limit_colour.stroke_width(2),
                    ))
                    .map_err(err)?;
                let global = r.limit.requests as f64;
                chart
                    .draw_series(DashedLineSeries::new(
                        vec![(x_start, global), (x_end, global)],
                        6,
                        6,
                        global_colour().stroke_width(2),
                    ))
                    .map_err(err)?;
            }
            // Each node's count when they fit across the plot, else the
            // least and the most of them, else none (a title never runs
            // into the legend).
            let admitted: Vec<u64> = l.nodes.iter().map(|n| n.admitted).collect();
            let sums = (admitted.len() <= 2 * NODE_LINES).then(|| {
                let each: Vec<String> = admitted.iter().map(u64::to_string).collect();
                format!(" (nodes: {})", each.join(" + "))
            });
            let range = match (admitted.iter().min(), admitted.iter().max()) {
                (Some(least), Some(most)) => format!(" (nodes: {least} to {most} each)"),
                _ => String::new(),
            };
            let title = |per_node: &str| {
                format!(
                    "{}: admitted {} of {}{per_node}, peak {}",
                    l.spec.short_name(),
                    l.counts.admitted,
                    offered_count(l),
                    window_count::fmt_ratio_x(l.peak_ratio())
                )
            };
            let room = (chart.plotting_area().dim_in_pixel().0 as f64 * 0.97) as u32;
            let fits = |text: &String| {
                chart
                    .plotting_area()
                    .estimate_text_size(text, &font(TICK_SIZE - 1.0))
                    .is_ok_and(|(w, _)| w <= room)
            };
            let text = sums
                .map(|s| title(&s))
                .filter(&fits)
                .or_else(|| Some(title(&range)).filter(&fits))
                .unwrap_or_else(|| title(""));
            chart
                .draw_series(std::iter::once(Text::new(
                    text,
                    (x_start + (x_end - x_start) * 0.01, y_max * 0.97),
                    font(TICK_SIZE - 1.0),
                )))
                .map_err(err)?;
        }
        let mut entries = vec![LegendEntry::new("all nodes together", total_colour(), Mark::Area)];
        if k <= NODE_LINES {
            let skews: Vec<i64> =
                (0..k).map(|node| self.topology.skew.get(node).copied().unwrap_or(0)).collect();
            let skewed = self.topology.skew.iter().any(|&s| s != 0);
            for (node, clock) in ratesim::nodes::fmt_skews(&skews).iter().enumerate() {
                let clock = if skewed { format!(", clock {clock}") } else { String::new() };
                entries.push(LegendEntry::new(format!("node {node}{clock}"), node_colour(node), Mark::Line));
            }
            if let Some(gap) = nested {
                let text = if gap == 0.0 {
                    "where nodes are equal: lines nested".to_string()
                } else {
                    format!("where nodes are equal or within {gap:.0}: lines nested")
                };
                entries.push(LegendEntry::new(text, BLACK, Mark::Heading));
            }
        } else {
            entries.push(LegendEntry::new(format!("least to most of {k} nodes"), node_colour(0), Mark::Area));
            entries.push(LegendEntry::new("mean of the nodes", node_colour(0), Mark::Line));
        }
        if let Some(y) = limit {
            let window = format_duration(r.limit.window);
            entries.push(LegendEntry::new(
                format!("node limit {y} per {window}"),
                limit_colour,
                Mark::Dashed,
            ));
            entries.push(LegendEntry::new(
                format!("limit L = {} per {window}", r.limit.requests),
                global_colour(),
                Mark::Dashed,
            ));
        }
        draw_legend(&legend, &entries)?;
        Ok(())
    }

    fn height(&self) -> u32 {
        strips_height(self.report.limiters.iter().filter(|l| l.node_timeline.is_some()).count())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratesim::timeline::Bin;

    fn row(admitted: &[u64]) -> Vec<Bin> {
        admitted.iter().map(|&a| Bin { admitted: a, ..Bin::default() }).collect()
    }

    /// Three nodes: all equal in a bin nest (8, 5, 2 px); two equal, the
    /// third apart: those two nest and the other is thin; all apart: thin.
    #[test]
    fn node_lines_nest_only_where_nodes_are_equal() {
        assert_eq!(bin_widths(&row(&[5, 5, 5]), 0.0), [8, 5, 2]);
        assert_eq!(bin_widths(&row(&[5, 6, 5]), 0.0), [5, 2, 2]);
        assert_eq!(bin_widths(&row(&[4, 5, 6]), 0.0), [2, 2, 2]);
        // Within a few pixels: one line to the eye, nested too.
        assert_eq!(bin_widths(&row(&[4, 5, 6]), 1.2), [8, 5, 2]);
        assert_eq!(bin_widths(&row(&[4, 9, 9]), 1.2), [2, 5, 2]);
        // A line cut where its width changes, each piece joined to the
        // next by its riser.
        let runs = runs_of_width(&[(0.0, 1.0, 5.0, 8), (1.0, 2.0, 5.0, 8), (2.0, 3.0, 7.0, 2)]);
        assert_eq!(
            runs,
            vec![
                (vec![(0.0, 5.0), (1.0, 5.0), (1.0, 5.0), (2.0, 5.0), (2.0, 7.0)], 8),
                (vec![(2.0, 7.0), (3.0, 7.0)], 2),
            ]
        );
    }
}
