//! `window_count`: the exact sliding-window count `(t - W, t]` over time for
//! each limiter, against the limit: the picture of the 2x boundary spike.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::RunReport;
use ratesim::time::format_duration;

pub struct WindowCount<'a> {
    /// The run's colours.
    pub palette: &'a RunPalette,
    pub scenario: &'a str,
    pub report: &'a RunReport,
}

impl Chart for WindowCount<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        if self.report.limiters.len() >= STRIPS_FROM {
            return self.draw_strips(root);
        }
        let r = self.report;
        let width = r.timeline.width().get();
        let bins = r.timeline.bins();
        let (div, unit) = time_unit(r.end.get());
        let x_end = r.end.get() as f64 / div;
        let limit = r.limit.requests as f64;
        let peak = r.limiters.iter().map(|l| l.counts.peak).max().unwrap_or(0) as f64;
        let y_max = peak.max(limit) * 1.12;
        let title = format!(
            "{}: requests in the exact window of {}{} (limit {})",
            self.scenario,
            format_duration(r.limit.window),
            worst_client(r),
            r.limit.requests
        );
        let area = titled(root, &title)?;
        let limit_colour = RGBColor(200, 0, 0);
        let entries = self.legend(limit_colour);
        let (plot, legend) = with_legend_for(&area, &entries);
        let mut chart = ChartBuilder::on(&plot)
            .margin(10)
            .x_label_area_size(60)
            .y_label_area_size(90)
            .build_cartesian_2d(0f64..x_end, 0f64..y_max)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(format!("time t ({unit})"))
            .y_desc(format!("admitted in (t - {}, t]{}", format_duration(r.limit.window), worst_client(r)))
            .axis_desc_style(font(LABEL_SIZE))
            .label_style(font(TICK_SIZE))
            .x_label_formatter(&tick)
            .y_label_formatter(&count)
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(err)?;
        let mut order: Vec<usize> = (0..r.limiters.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(line_width(&r.limiters[i].spec)));
        for &i in &order {
            let pts = steps(bins.iter().enumerate().map(|(b, row)| {
                let x0 = (b as u64 * width) as f64 / div;
                let x1 = ((b as u64 + 1) * width) as f64 / div;
                (x0, x1.min(x_end), row[i].window_peak as f64)
            }));
            let w = line_width(&r.limiters[i].spec);
            chart
                .draw_series(LineSeries::new(pts, self.palette.colour(&r.limiters[i].spec).stroke_width(w)))
                .map_err(err)?;
        }
        chart
            .draw_series(DashedLineSeries::new(
                vec![(0.0, limit), (x_end, limit)],
                12,
                8,
                limit_colour.stroke_width(2),
            ))
            .map_err(err)?;
        draw_legend(&legend, &entries)?;
        Ok(())
    }
}

impl WindowCount<'_> {
    fn legend(&self, limit_colour: RGBColor) -> Vec<LegendEntry> {
        let r = self.report;
        let mut entries = vec![
            LegendEntry::new(format!("limit L = {}", r.limit.requests), limit_colour, Mark::Dashed),
            LegendEntry::new("highest count (peak / L):", BLACK, Mark::Heading),
        ];
        for l in &r.limiters {
            entries.push(LegendEntry::new(
                format!("{} ({})", short_label(&l.spec), fmt_ratio_x(l.peak_ratio())),
                self.palette.colour(&l.spec),
                Mark::Line,
            ));
        }
        entries
    }

    /// Many limiters: a strip each, with the limit dashed in every strip, so
    /// that no line hides another (limiters that decide alike would draw the
    /// same line).
    fn draw_strips<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = self.report;
        let width = r.timeline.width().get();
        let bins = r.timeline.bins();
        let (div, unit) = time_unit(r.end.get());
        let x_end = r.end.get() as f64 / div;
        let limit = r.limit.requests as f64;
        let peak = r.limiters.iter().map(|l| l.counts.peak).max().unwrap_or(0) as f64;
        let y_max = peak.max(limit) * 1.35;
        let window = format_duration(r.limit.window);
        let title = format!(
            "{}: requests in the exact window of {window}{} (limit {})",
            self.scenario,
            worst_client(r),
            r.limit.requests
        );
        let area = titled(root, &title)?;
        let limit_colour = RGBColor(200, 0, 0);
        let entries = self.legend(limit_colour);
        let (plots, legend) = with_legend_for(&area, &entries);
        let strips = strip_frame(
            &plots,
            &format!("time t ({unit})"),
            &format!("admitted in (t - {window}, t]{}", worst_client(r)),
        )?;
        let n = r.limiters.len();
        let rows = super::strips(&strips, n, 30);
        for (i, strip) in rows.iter().enumerate() {
            let l = &r.limiters[i];
            let mut chart = strip_chart(strip, i + 1 == n, 0f64..x_end, y_max, 2, &whole)?;
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(0.0, limit), (x_end, limit)],
                    8,
                    6,
                    limit_colour.stroke_width(1),
                ))
                .map_err(err)?;
            let pts = steps(bins.iter().enumerate().map(|(b, row)| {
                let x0 = (b as u64 * width) as f64 / div;
                let x1 = ((b as u64 + 1) * width) as f64 / div;
                (x0, x1.min(x_end), row[i].window_peak as f64)
            }));
            let c = self.palette.colour(&l.spec);
            chart.draw_series(LineSeries::new(pts, c.stroke_width(2))).map_err(err)?;
            let text =
                format!("{}: peak {} ({})", short_label(&l.spec), l.counts.peak, fmt_ratio_x(l.peak_ratio()));
            // Strips here are always compact (from `STRIPS_FROM` limiters).
            strip_title(&mut chart, text, 0.0..x_end, y_max * 0.99, TICK_SIZE - 3.0, true)?;
        }
        draw_legend(&legend, &entries)?;
        Ok(())
    }
}

/// With many clients each has its own window, and a bin shows the largest
/// count of any client at an arrival in it (`docs/semantics.md`, "The
/// timeline"): not one client's, but the worst client of each bin.
fn worst_client(r: &RunReport) -> &'static str {
    if r.keys > 1 { ", worst client per bin" } else { "" }
}

/// `2×L`, `1.37×L`, `1.002×L` (never `1×L` for a peak above L).
pub fn fmt_ratio_x(v: f64) -> String {
    format!("{}×L", ratesim::export::fmt_ratio_short(v))
}
