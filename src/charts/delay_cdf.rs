//! `delay_cdf`: for each limiter that may delay, the share of its admitted
//! requests whose added latency (the wait before the backend) is at most x.
//! Requests passed at once wait 0: each curve starts at the left edge at
//! their share, and ends at 100 % at the longest wait. The curve is read
//! from the delays' histogram (3 significant digits; the longest wait
//! exact), on a linear axis so that 0 has its place.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::RunReport;
use ratesim::export::markdown::fmt_seconds;
use ratesim::time::Nanos;

/// A limiter's delay curve: the undelayed share and the steps.
type Curve = (f64, Vec<(Nanos, f64)>);

pub struct DelayCdf<'a> {
    /// The run's colours.
    pub palette: &'a RunPalette,
    pub scenario: &'a str,
    pub report: &'a RunReport,
}

/// The share of admitted requests with a delay at most `x` (in ns), on a
/// curve of [`ratesim::metrics::DelayReport::cdf`].
fn share_at(undelayed: f64, points: &[(Nanos, f64)], x: u64) -> f64 {
    let n = points.partition_point(|(p, _)| p.get() <= x);
    if n == 0 { undelayed } else { points[n - 1].1 }
}

/// Whether two curves would look the same: each within one percentage
/// point of the other shifted by at most `dx` ns either way (a few pixels),
/// checked wherever either steps. A steep stretch shifted by a millisecond
/// is the same picture, though its shares differ by more than a point.
fn coincide(a: Option<&Curve>, b: Option<&Curve>, dx: u64) -> bool {
    let (Some((ua, pa)), Some((ub, pb))) = (a, b) else { return false };
    let within = |(uf, pf): (f64, &[(Nanos, f64)]), (ug, pg): (f64, &[(Nanos, f64)]), x: u64| {
        let g = share_at(ug, pg, x);
        g <= share_at(uf, pf, x.saturating_add(dx)) + 0.01
            && g >= share_at(uf, pf, x.saturating_sub(dx)) - 0.01
    };
    let xs: Vec<u64> = pa.iter().chain(pb).map(|(x, _)| x.get()).chain([0]).collect();
    xs.iter().all(|&x| within((*ua, pa), (*ub, pb), x) && within((*ub, pb), (*ua, pa), x))
}

impl Chart for DelayCdf<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = self.report;
        let shaping: Vec<_> = r.limiters.iter().filter_map(|l| l.delays.as_ref().map(|d| (l, d))).collect();
        let longest = shaping.iter().map(|(_, d)| d.max.get()).max().unwrap_or(0);
        // With no wait at all, any span will do: 1 s.
        let span = if longest > 0 { longest } else { 1_000_000_000 };
        let (div, unit) = time_unit(span);
        let x_end = span as f64 / div * 1.05;
        let area = titled(root, &format!("{}: added latency of admitted requests", self.scenario))?;
        let (plot, legend) = with_legend(&area);
        let mut chart = ChartBuilder::on(&plot)
            .margin(10)
            .margin_right(30)
            .x_label_area_size(60)
            .y_label_area_size(90)
            .build_cartesian_2d(0f64..x_end, 0f64..105f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(format!("added latency x ({unit}): wait before the backend"))
            .y_desc("admitted with latency ≤ x (%)")
            .axis_desc_style(font(LABEL_SIZE))
            .label_style(font(TICK_SIZE))
            .x_label_formatter(&tick)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .light_line_style(RGBColor(245, 245, 245))
            .draw()
            .map_err(err)?;
        let curves: Vec<_> = shaping.iter().map(|(l, d)| (*l, d.cdf())).collect();
        // Limiters whose curves (nearly) coincide, such as a token bucket
        // and a GCRA of the same shape, would hide each other: a curve
        // within a point of an earlier one is drawn dashed over it, and the
        // legend says which it matches.
        let like: Vec<Option<usize>> = (0..curves.len())
            .map(|k| (0..k).find(|&j| coincide(curves[j].1.as_ref(), curves[k].1.as_ref(), span / 200)))
            .collect();
        for ((l, cdf), same) in curves.iter().zip(&like) {
            let Some((undelayed, points)) = cdf else { continue };
            let c = self.palette.colour(&l.spec);
            // A step curve: flat at the undelayed share from 0, rising at
            // each recorded wait, flat at 100 % after the longest.
            let mut pts = vec![(0.0, undelayed * 100.0)];
            let mut y = undelayed * 100.0;
            for (x, share) in points {
                let x = x.get() as f64 / div;
                pts.push((x, y));
                y = share * 100.0;
                pts.push((x, y));
            }
            pts.push((x_end, y));
            let style = c.stroke_width(line_width(&l.spec).min(4));
            if same.is_some() {
                chart.draw_series(DashedLineSeries::new(pts, 10, 10, style)).map_err(err)?;
            } else {
                chart.draw_series(LineSeries::new(pts, style)).map_err(err)?;
                chart
                    .draw_series(std::iter::once(Circle::new((0.0, undelayed * 100.0), 6, c.filled())))
                    .map_err(err)?;
            }
        }
        let mut entries = Vec::new();
        for ((l, d), same) in shaping.iter().zip(&like) {
            let mark = if same.is_some() { Mark::Dashed } else { Mark::Line };
            entries.push(LegendEntry::new(l.spec.short_name(), self.palette.colour(&l.spec), mark));
            let stats = match (same, d.cdf(), d.quantile(0.99)) {
                (Some(j), _, _) => format!("    ≈ {}", curves[*j].0.spec.short_name()),
                (None, Some((undelayed, _)), Some(p99)) => {
                    format!("    {} at once, p99 {}", fmt_share(undelayed), fmt_seconds(p99))
                }
                _ => "    nothing admitted".to_string(),
            };
            entries.push(LegendEntry::new(stats, BLACK, Mark::Heading));
        }
        draw_legend(&legend, &entries)
    }
}
