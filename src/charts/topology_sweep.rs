//! `nodes_sweep`, `rtt_sweep`, `sync_sweep`: peak/L and over-admission
//! against the swept value of the topology, one line per limiter, with the
//! analytic figure where one exists (dashed).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::broken_axis::{Pixels, axis_break, clear_of_foot_mark};
use super::*;
use ratesim::nodes::Mode;
use ratesim::sweep::TopologySweepResult;
use ratesim::sweep::topology::{Parameter, TopologyPoint};
use ratesim::time::format_duration;

pub struct TopologySweep<'a> {
    /// The run's colours.
    pub palette: &'a RunPalette,
    pub scenario: &'a str,
    pub result: &'a TopologySweepResult,
}

/// One line: a limiter's points, solid or dashed.
struct Line {
    colour: RGBColor,
    dashed: bool,
    points: Vec<(f64, f64, f64)>,
}

impl TopologySweep<'_> {
    /// The x value of a point: K, arrivals per round trip, or the interval
    /// (in the unit of [`Self::x_unit`]).
    fn x(&self, p: &TopologyPoint) -> f64 {
        match (self.result.parameter, p.topology.mode) {
            (Parameter::Rtt, _) => p.arrivals_per_rtt().unwrap_or(0.0),
            (Parameter::SyncInterval, Mode::Sync { interval }) => interval.get() as f64 / self.x_unit().0,
            _ => f64::from(p.topology.count),
        }
    }

    fn x_unit(&self) -> (f64, &'static str) {
        let longest = self
            .result
            .points
            .iter()
            .filter_map(|p| match p.topology.mode {
                Mode::Sync { interval } => Some(interval.get()),
                _ => None,
            })
            .max()
            .unwrap_or(1);
        time_unit(longest)
    }

    fn x_desc(&self) -> String {
        match self.result.parameter {
            Parameter::Nodes => "nodes K".into(),
            Parameter::Rtt => "arrivals per round trip (mean rate × rtt)".into(),
            Parameter::SyncInterval => format!("sync interval ({}, log scale)", self.x_unit().1),
        }
    }

    /// One line per limiter (get-then-set solid and atomic dashed, for the
    /// round-trip sweep); each point is (x, over-admission %, peak/L).
    fn lines(&self) -> Vec<(String, Line)> {
        let points = &self.result.points;
        let Some(first) = points.first() else { return Vec::new() };
        let mut out = Vec::new();
        let stores: &[Option<bool>] =
            if self.result.parameter == Parameter::Rtt { &[Some(false), Some(true)] } else { &[None] };
        for &store in stores {
            for (i, l) in first.report.limiters.iter().enumerate() {
                let chosen = points.iter().filter(|p| match (store, p.topology.mode) {
                    (Some(a), Mode::Central { atomic, .. }) => a == atomic,
                    _ => true,
                });
                // The reference is not on nodes: it is the same in both stores.
                if store == Some(true) && l.nodes.is_empty() {
                    continue;
                }
                let pts = chosen
                    .map(|p| {
                        let r = &p.report.limiters[i];
                        // n/a (nothing admitted by the reference): no point.
                        (self.x(p), r.over_admission().map_or(f64::NAN, |o| o * 100.0), r.peak_ratio())
                    })
                    .collect();
                let name = match store {
                    Some(true) => format!("{}, atomic", l.spec.short_name()),
                    Some(false) if !l.nodes.is_empty() => format!("{}, get-then-set", l.spec.short_name()),
                    _ if l.nodes.is_empty() => format!("{} (reference)", l.spec.short_name()),
                    _ => l.spec.short_name(),
                };
                let line =
                    Line { colour: self.palette.colour(&l.spec), dashed: store == Some(true), points: pts };
                out.push((name, line));
            }
        }
        out
    }

    /// The estimated get-then-set over-admission (%) per point.
    fn estimate(&self) -> Vec<(f64, f64)> {
        self.result
            .points
            .iter()
            .filter_map(|p| {
                let l = p.report.limiters.iter().find(|l| !l.nodes.is_empty())?;
                Some((self.x(p), p.estimated_over_admission(l)? * 100.0))
            })
            .collect()
    }

    /// The analytic peak/L per point (the first limiter on nodes has it).
    fn analytic(&self) -> Vec<(f64, f64)> {
        self.result
            .points
            .iter()
            .filter_map(|p| {
                let l = p.report.limiters.iter().find(|l| !l.nodes.is_empty())?;
                Some((self.x(p), p.analytic_peak_ratio(l)?))
            })
            .collect()
    }
}

/// The share of the peak/L axis' height under its lowest value.
const UNDER_LOWEST: f64 = 0.12;

/// The peak/L axis for peaks from `lo` to `hi`: from just under the lowest
/// (a sweep whose peaks stay near L, ceil(L/K) per node, shows its few
/// percent), far enough under it that the lowest, the sliding log's 1
/// (peak = L), stands [`UNDER_LOWEST`] of the height over the foot, its
/// label clear of the break mark there (at 0.1 under it, the mark took
/// `nodes_sync`'s and `nodes_central`'s `1`, and the line at 1 sat on the
/// mark with no value); from 0, with no mark, when that would start under
/// half the lowest anyway (`nodes_local`'s 1 to 10).
fn peak_range(lo: f64, hi: f64) -> std::ops::Range<f64> {
    let top = (hi * 1.05).max(lo + 0.3);
    let start = (lo - UNDER_LOWEST * top) / (1.0 - UNDER_LOWEST);
    if start < lo / 2.0 { 0.0..top } else { start..top }
}

/// Every line's width.
const WIDTH: u32 = 3;

/// A point of a line: its value and where it is drawn (pixels).
type Drawn = ((f64, f64), (i32, i32));

/// Draws every line in one panel, one segment (between two sweep points)
/// at a time: a segment that a later line's covers to the eye (both ends
/// within [`NEAR_PX`] pixels: the fixed and the weighted window at the same
/// 200 %) is drawn wider, a border around it ([`covered_widths`]), so that
/// no line hides under another where they meet. Returns whether any
/// segment nested.
fn draw_lines<DB: DrawingBackend, X: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, RangedCoordf64>>,
    lines: &[&Line],
    value: impl Fn(&(f64, f64, f64)) -> f64,
) -> Result<bool> {
    // Each line's points in this panel and in pixels (None: no point).
    let pts: Vec<Vec<Option<Drawn>>> = lines
        .iter()
        .map(|l| {
            l.points
                .iter()
                .map(|p| {
                    let v = (p.0, value(p));
                    (!v.1.is_nan()).then(|| (v, chart.backend_coord(&v)))
                })
                .collect()
        })
        .collect();
    let segment =
        |i: usize, j: usize| match (pts[i].get(j).copied().flatten(), pts[i].get(j + 1).copied().flatten()) {
            (Some(a), Some(b)) => Some((a, b)),
            _ => None,
        };
    let near = |(a, b): (Drawn, Drawn), (c, d): (Drawn, Drawn)| {
        let close = |p: (i32, i32), q: (i32, i32)| p.0 == q.0 && f64::from((p.1 - q.1).abs()) <= NEAR_PX;
        close(a.1, c.1) && close(b.1, d.1)
    };
    let segments = pts.iter().map(Vec::len).max().unwrap_or(0).saturating_sub(1);
    let mut nested = false;
    // Each point's marker grows with the widest segment at it.
    let mut at_point = vec![vec![WIDTH; segments + 1]; lines.len()];
    let mut widths_of = Vec::with_capacity(segments);
    for j in 0..segments {
        let widths = covered_widths_by(
            &vec![WIDTH; lines.len()],
            |a, b| match (segment(a, j), segment(b, j)) {
                (Some(x), Some(y)) => near(x, y),
                _ => false,
            },
            4,
        );
        for (i, &w) in widths.iter().enumerate() {
            nested |= w > WIDTH;
            at_point[i][j] = at_point[i][j].max(w);
            at_point[i][j + 1] = at_point[i][j + 1].max(w);
        }
        widths_of.push(widths);
    }
    for (i, line) in lines.iter().enumerate() {
        for (j, widths) in widths_of.iter().enumerate() {
            let Some((a, b)) = segment(i, j) else { continue };
            let style = line.colour.stroke_width(widths[i]);
            if line.dashed {
                chart.draw_series(DashedLineSeries::new([a.0, b.0], 10, 6, style)).map_err(err)?;
            } else {
                chart.draw_series(LineSeries::new([a.0, b.0], style)).map_err(err)?;
            }
        }
        for (j, p) in pts[i].iter().enumerate() {
            let Some((v, _)) = p else { continue };
            let grow = (at_point[i][j] - WIDTH) as i32 / 2;
            if line.dashed {
                chart
                    .draw_series(std::iter::once(Circle::new(*v, 6 + grow, line.colour.stroke_width(2))))
                    .map_err(err)?;
            } else {
                chart
                    .draw_series(std::iter::once(Circle::new(*v, 5 + grow, line.colour.filled())))
                    .map_err(err)?;
            }
        }
    }
    Ok(nested)
}

/// One panel of the sweep chart, on a linear or a logarithmic x axis.
struct Panel<'a> {
    caption: &'a str,
    x_desc: String,
    y_desc: &'a str,
    lines: &'a [&'a Line],
    /// The analytic figure or the estimate, dashed, where one exists.
    dashed: &'a [(f64, f64)],
    grey: RGBColor,
    /// A value the axis must label, if in range: peak/L's 1, where the
    /// sliding log stands (peak = L).
    labelled: Option<f64>,
}

impl Panel<'_> {
    /// Draws the panel on `area` over `x` and `y`, each line's points
    /// valued by `value`: its mesh, its lines ([`draw_lines`]) and the
    /// dashed figure on top. Returns whether any segment nested, and the
    /// plotting area's pixel range. The axes may start a little under the
    /// data, so that a point at 0 is drawn whole, clear of the axis and its
    /// labels; no label is written under `floor` (x, y), where there are
    /// no data.
    fn draw<DB: DrawingBackend, X>(
        &self,
        area: &DrawingArea<DB, Shift>,
        x: X,
        y: std::ops::Range<f64>,
        floor: (f64, f64),
        value: impl Fn(&(f64, f64, f64)) -> f64,
    ) -> Result<(bool, Pixels)>
    where
        X: AsRangedCoord<Value = f64>,
        X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let mut chart = ChartBuilder::on(area)
            .margin(12)
            .caption(self.caption, font(LABEL_SIZE))
            .x_label_area_size(60)
            .y_label_area_size(80)
            .build_cartesian_2d(x, y.clone())
            .map_err(err)?;
        let height = chart.plotting_area().dim_in_pixel().1;
        // No label under the floor, nor at the break mark at the foot of
        // an axis from above 0.
        let y_fmt = |v: &f64| {
            if *v < floor.1 - 1e-9 || !clear_of_foot_mark(*v, &y, height) { String::new() } else { tick(v) }
        };
        let y_labels = match self.labelled {
            Some(at) if y.contains(&at) => labels_at(y.clone(), at, 10),
            _ => 10,
        };
        chart
            .configure_mesh()
            .y_labels(y_labels)
            .x_desc(&self.x_desc)
            .y_desc(self.y_desc)
            .axis_desc_style(font(LABEL_SIZE))
            .label_style(font(TICK_SIZE))
            .x_label_formatter(&|v| if *v < floor.0 - 1e-9 { String::new() } else { tick(v) })
            .y_label_formatter(&y_fmt)
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(err)?;
        let nested = draw_lines(&mut chart, self.lines, value)?;
        // On top: where it matches the measurement exactly it must still
        // show.
        if !self.dashed.is_empty() {
            chart
                .draw_series(DashedLineSeries::new(self.dashed.to_vec(), 8, 6, self.grey.stroke_width(2)))
                .map_err(err)?;
            // Crosses too: where the figure matches the measurement the
            // dashes hide under its line.
            chart
                .draw_series(self.dashed.iter().map(|&p| Cross::new(p, 7, self.grey.stroke_width(2))))
                .map_err(err)?;
        }
        Ok((nested, chart.plotting_area().get_pixel_range()))
    }
}

impl Chart for TopologySweep<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let Some(first) = self.result.points.first() else { return Ok(()) };
        let limit = first.report.limit;
        let what = match self.result.parameter {
            Parameter::Nodes => format!("K nodes, per node {}", self.result.per_node.describe()),
            Parameter::Rtt => format!("one central store, {} nodes", first.topology.count),
            Parameter::SyncInterval => format!("{} nodes syncing", first.topology.count),
        };
        let title = format!(
            "{}: {what}, L = {} per {}",
            self.scenario,
            limit.requests,
            format_duration(limit.window)
        );
        let area = titled(root, &title)?;
        let (plots, legend) = with_legend(&area);
        let panels = plots.split_evenly((1, 2));
        let lines = self.lines();
        let mut analytic = self.analytic();
        let estimate = self.estimate();
        // Bound points far over every measured peak (K = 8 nodes never
        // synced: 8 x L, against peaks of 1.0 to 1.3) would squeeze the
        // measured lines into a few pixels: they are left off the chart,
        // and the legend gives the largest; the others stay.
        let measured_peak = lines.iter().flat_map(|(_, l)| l.points.iter().map(|p| p.2)).fold(0.0, f64::max);
        let bound_max = analytic.iter().map(|a| a.1).fold(0.0, f64::max);
        let off_scale = (bound_max > 3.0 * measured_peak).then_some(bound_max);
        analytic.retain(|a| a.1 <= 3.0 * measured_peak);
        let xs: Vec<f64> = self.result.points.iter().map(|p| self.x(p)).collect();
        let x_lo = xs.iter().copied().fold(f64::MAX, f64::min);
        let x_hi = xs.iter().copied().fold(0.0, f64::max);
        let log_x = self.result.parameter == Parameter::SyncInterval && x_lo > 0.0 && x_hi / x_lo >= 20.0;
        let grey = RGBColor(90, 90, 90);
        let mut nested = false;
        for (k, panel_area) in panels.iter().enumerate() {
            let value = |p: &(f64, f64, f64)| if k == 0 { p.1 } else { p.2 };
            let mut all: Vec<f64> = lines.iter().flat_map(|(_, l)| l.points.iter().map(value)).collect();
            if k == 1 {
                all.extend(analytic.iter().map(|a| a.1));
            } else {
                all.extend(estimate.iter().map(|a| a.1));
            }
            let y_hi = all.iter().copied().fold(0.0, f64::max);
            let y_lo = all.iter().copied().fold(f64::MAX, f64::min).min(0.0);
            // peak/L from just below the lowest point: a sweep whose peaks stay
            // near L (ceil(L/K) per node) shows its few percent.
            let y_min = all.iter().copied().fold(f64::MAX, f64::min);
            let (y0, y1) = if k == 0 {
                let (y0, y1) = (y_lo * 1.1, (y_hi * 1.15).max(1.0));
                // Points at 0 (atomic writes, no over-admission) whole
                // above the axis, not half under it.
                (y0 - (y1 - y0) * 0.03, y1)
            } else {
                let y = peak_range(y_min, y_hi);
                (y.start, y.end)
            };
            let caption = if k == 0 { "over-admission vs exact" } else { "peak in one exact window" };
            let y_desc = if k == 0 { "over-admission (%)" } else { "peak / L" };
            let dashed = if k == 1 { &analytic } else { &estimate };
            let lines: Vec<&Line> = lines.iter().map(|(_, l)| l).collect();
            let labelled = (k == 1).then_some(1.0);
            let panel =
                Panel { caption, x_desc: self.x_desc(), y_desc, lines: &lines, dashed, grey, labelled };
            let floor = (x_lo.min(0.0), y_lo);
            let (drawn_nested, pixels) = if log_x {
                panel.draw(panel_area, (x_lo * 0.7..x_hi * 1.4).log_scale(), y0..y1, floor, value)?
            } else {
                // A point at x = 0 clear of the value axis and its labels.
                let pad = ((x_hi - x_lo) * 0.04).max(0.1);
                panel.draw(panel_area, x_lo - pad..x_hi + pad, y0..y1, floor, value)?
            };
            nested |= drawn_nested;
            // peak/L zoomed in above 0: window_count's mark at its foot.
            if y0 > 0.0 {
                axis_break(panel_area, &pixels)?;
            }
        }
        let mut entries: Vec<LegendEntry> = lines
            .iter()
            .map(|(name, l)| {
                LegendEntry::new(name.clone(), l.colour, if l.dashed { Mark::Ring } else { Mark::Line })
            })
            .collect();
        if nested {
            entries.push(LegendEntry::new("where lines meet: nested", BLACK, Mark::Heading));
        }
        if !analytic.is_empty() || off_scale.is_some() {
            let label = match self.result.parameter {
                Parameter::SyncInterval => "K: each node at L, never synced",
                _ => "analytic K × per node / L",
            };
            match off_scale {
                None => entries.push(LegendEntry::new(label, grey, Mark::Cross)),
                Some(v) => {
                    let (mark, colour) =
                        if analytic.is_empty() { (Mark::Heading, BLACK) } else { (Mark::Cross, grey) };
                    let what = if analytic.is_empty() { "" } else { "up to " };
                    entries.push(LegendEntry::new(label, colour, mark));
                    entries.push(LegendEntry::new(
                        format!("  {what}{} × L: off the scale", ratesim::export::fmt_ratio_short(v)),
                        BLACK,
                        Mark::Heading,
                    ));
                }
            }
            // A fixed window admits up to 2L in an exact window on each
            // node: K bounds only the exact limiters.
            entries.push(LegendEntry::new("  (exact limiters' bound)", BLACK, Mark::Heading));
        }
        if !estimate.is_empty() {
            entries.push(LegendEntry::new("estimate r × rtt (get-then-set)", grey, Mark::Cross));
        }
        if self.result.parameter == Parameter::Rtt {
            let rtts: Vec<String> = self
                .result
                .points
                .iter()
                .filter_map(|p| match p.topology.mode {
                    Mode::Central { rtt, atomic: true } => Some(format_duration(rtt)),
                    _ => None,
                })
                .collect();
            entries.push(LegendEntry::new(format!("rtt: {}", rtts.join(", ")), BLACK, Mark::Heading));
        }
        draw_legend(&legend, &entries)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nodes_sync's peaks from 1 (the sliding log) to 3.32: from 0.66, the
    /// 1 an eighth of the height up, labelled (every 0.5); nodes_local's 1
    /// to 10: from 0, labelled every 1; nodes_ceil's near L: zoomed, 1
    /// still labelled.
    #[test]
    fn the_peak_axis_labels_the_limit() {
        let sync = peak_range(1.0, 3.32);
        assert!((sync.start - 0.661).abs() < 0.001 && (sync.end - 3.486).abs() < 1e-9, "{sync:?}");
        assert!(((1.0 - sync.start) / (sync.end - sync.start) - UNDER_LOWEST).abs() < 1e-9);
        assert_eq!(labels_at(sync.clone(), 1.0, 10), 10);
        let local = peak_range(1.0, 10.0);
        assert_eq!(local.start, 0.0);
        assert_eq!(labels_at(local, 1.0, 10), 11);
        let ceil = peak_range(1.0, 1.02);
        assert!(ceil.start > 0.95 && ceil.start < 1.0, "{ceil:?}");
        assert!(labels_at(ceil, 1.0, 10) >= 4);
    }
}
