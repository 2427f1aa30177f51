//! `load_sweep`: over-admission (and peak/L) against the load factor, one
//! line per limiter.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::sweep::LoadPoint;
use ratesim::time::format_duration;

pub struct LoadSweep<'a> {
    /// The run's colours.
    pub palette: &'a RunPalette,
    pub points: &'a [LoadPoint],
}

impl Chart for LoadSweep<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let Some(first) = self.points.first() else { return Ok(()) };
        let limit = first.report.limit;
        let title = format!(
            "Poisson load sweep, L = {} per {}, {} s per load",
            limit.requests,
            format_duration(limit.window),
            first.report.end
        );
        let area = titled(root, &title)?;
        let entries: Vec<LegendEntry> = first
            .report
            .limiters
            .iter()
            .map(|l| LegendEntry::new(short_label(&l.spec), self.palette.colour(&l.spec), Mark::Line))
            .collect();
        let (plots, legend) = with_legend_for(&area, &entries);
        let panels = plots.split_evenly((1, 2));
        let x_max = self.points.iter().map(|p| p.load).fold(0.0, f64::max) * 1.05;
        let x_min = self.points.iter().map(|p| p.load).fold(f64::MAX, f64::min).min(x_max) * 0.9;
        let n = first.report.limiters.len();
        for (k, panel) in panels.iter().enumerate() {
            let value = |p: &LoadPoint, i: usize| -> f64 {
                let l = &p.report.limiters[i];
                if k == 0 { l.over_admission().unwrap_or(0.0) * 100.0 } else { l.peak_ratio() }
            };
            let y_max = self
                .points
                .iter()
                .flat_map(|p| (0..n).map(move |i| (p, i)))
                .map(|(p, i)| value(p, i))
                .fold(0.0, f64::max);
            let y_min = self
                .points
                .iter()
                .flat_map(|p| (0..n).map(move |i| (p, i)))
                .map(|(p, i)| value(p, i))
                .fold(f64::MAX, f64::min);
            let (y0, y1) = if k == 0 {
                // Below 0 only for a limiter stricter than the exact rule
                // (a bucket of one token): then down to it, not cut off.
                let low = if y_min < 0.0 { y_min - (y_max - y_min) * 0.05 } else { 0.0 };
                (low, (y_max * 1.15).max(0.5))
            } else {
                ((y_min - 0.1).max(0.0), (y_max * 1.05).max(1.2))
            };
            let mut chart = ChartBuilder::on(panel)
                .margin(12)
                .caption(
                    if k == 0 { "over-admission vs exact" } else { "peak in one exact window" },
                    font(LABEL_SIZE),
                )
                .x_label_area_size(60)
                .y_label_area_size(80)
                .build_cartesian_2d(x_min..x_max, y0..y1)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("load factor (× L / W)")
                .y_desc(if k == 0 { "over-admission (%)" } else { "peak / L" })
                .axis_desc_style(font(LABEL_SIZE))
                .label_style(font(TICK_SIZE))
                .x_label_formatter(&tick)
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(err)?;
            let widths = covered_widths(
                &first.report.limiters.iter().map(|l| line_width(&l.spec)).collect::<Vec<_>>(),
                |a, b| self.points.iter().all(|p| value(p, a) == value(p, b)),
            );
            for (i, (l, &w)) in first.report.limiters.iter().zip(&widths).enumerate() {
                let c = self.palette.colour(&l.spec);
                let pts: Vec<(f64, f64)> = self.points.iter().map(|p| (p.load, value(p, i))).collect();
                chart.draw_series(LineSeries::new(pts.clone(), c.stroke_width(w))).map_err(err)?;
                chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 5, c.filled()))).map_err(err)?;
            }
        }
        draw_legend(&legend, &entries)?;
        Ok(())
    }
}
