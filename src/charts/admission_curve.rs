//! `admission_curve`: for each limiter, the most requests it admitted in
//! any interval `(t - tau, t]` against `tau` (log-log), with the exact rule's
//! bound `L * ceil(tau / W)` dashed. Shows at a glance what a bucket lets
//! through over short and long spans, where windows break the limit.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::RunReport;
use ratesim::metrics::exact_bound;
use ratesim::time::format_duration;

pub struct AdmissionCurve<'a> {
    pub scenario: &'a str,
    pub report: &'a RunReport,
}

impl Chart for AdmissionCurve<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = self.report;
        let curves: Vec<&ratesim::metrics::LimiterReport> =
            r.limiters.iter().filter(|l| !l.admission_curve.is_empty()).collect();
        let Some(first) = curves.first() else { return Ok(()) };
        let taus: Vec<f64> = first.admission_curve.iter().map(|(t, _)| t.as_secs_f64()).collect();
        let bound: Vec<(f64, f64)> = first
            .admission_curve
            .iter()
            .map(|(t, _)| (t.as_secs_f64(), exact_bound(r.limit, *t) as f64))
            .collect();
        let y_max = curves
            .iter()
            .flat_map(|l| l.admission_curve.iter().map(|(_, a)| *a as f64))
            .chain(bound.iter().map(|b| b.1))
            .fold(1.0, f64::max);
        let (x0, x1) = (taus[0] / 1.3, taus[taus.len() - 1] * 1.3);
        let window = format_duration(r.limit.window);
        let title = format!(
            "{}: the most admitted in any interval of length τ (limit {} per {window})",
            self.scenario, r.limit.requests
        );
        let area = titled(root, &title)?;
        let (plot, legend) = with_legend(&area);
        let mut chart = ChartBuilder::on(&plot)
            .margin(10)
            .x_label_area_size(60)
            .y_label_area_size(90)
            .build_cartesian_2d((x0..x1).log_scale(), (0.8f64..y_max * 1.5).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("interval length τ (s, log scale)")
            .y_desc("most admitted in (t - τ, t], log")
            .axis_desc_style(font(LABEL_SIZE))
            .label_style(font(TICK_SIZE))
            .x_label_formatter(&tick)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(err)?;
        let bound_colour = RGBColor(200, 0, 0);
        chart
            .draw_series(DashedLineSeries::new(bound.clone(), 12, 8, bound_colour.stroke_width(2)))
            .map_err(err)?;
        let mut order: Vec<&&ratesim::metrics::LimiterReport> = curves.iter().collect();
        order.sort_by_key(|l| std::cmp::Reverse(line_width(&l.spec)));
        for l in order {
            let c = colour(&l.spec);
            let pts: Vec<(f64, f64)> =
                l.admission_curve.iter().map(|(t, a)| (t.as_secs_f64(), (*a as f64).max(0.8))).collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(line_width(&l.spec))))
                .map_err(err)?;
            chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 4, c.filled()))).map_err(err)?;
        }
        let mut entries =
            vec![LegendEntry::new(format!("exact bound L·⌈τ/W⌉, W = {window}"), bound_colour, Mark::Dashed)];
        entries.push(LegendEntry::new("A(W) / L:", BLACK, Mark::Heading));
        for l in &curves {
            entries.push(LegendEntry::new(
                format!("{} ({})", short_label(&l.spec), super::window_count::fmt_ratio_x(l.peak_ratio())),
                colour(&l.spec),
                Mark::Line,
            ));
        }
        draw_legend(&legend, &entries)
    }
}
