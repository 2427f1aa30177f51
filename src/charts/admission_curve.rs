//! `admission_curve`: for each limiter, the most requests it admitted in
//! any interval `(t - tau, t]` against `tau`. Left, `A(tau)` itself
//! (log-log) under the exact rule's bound `L * ceil(tau / W)` (dashed);
//! right, `A(tau)` as a multiple of that bound, where 1 is the exact rule and
//! anything above it broke the limit over intervals of that length. Shows at
//! a glance what a bucket lets through over short and long spans, and where
//! windows break the limit.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::RunReport;
use ratesim::export::fmt_ratio_short;
use ratesim::metrics::{LimiterReport, exact_bound};
use ratesim::time::{Nanos, format_duration};

pub struct AdmissionCurve<'a> {
    /// The run's colours.
    pub palette: &'a RunPalette,
    pub scenario: &'a str,
    pub report: &'a RunReport,
}

/// `v` to two decimals, without needless zeros: `2`, `1.58`, `1.1`; more
/// when two would hide that it is above or below a whole number (`1.002`).
fn ratio(v: f64) -> String {
    fmt_ratio_short(v)
}

impl AdmissionCurve<'_> {
    /// `A(tau) / (L * ceil(tau / W))` at `tau`, if the curve has that point.
    fn over_bound(&self, l: &LimiterReport, tau: Nanos) -> Option<f64> {
        let bound = exact_bound(self.report.limit, tau).max(1) as f64;
        l.admission_curve.iter().find(|(t, _)| *t == tau).map(|(_, a)| *a as f64 / bound)
    }
}

impl Chart for AdmissionCurve<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = self.report;
        let curves: Vec<&LimiterReport> =
            r.limiters.iter().filter(|l| !l.admission_curve.is_empty()).collect();
        let Some(first) = curves.first() else { return Ok(()) };
        let taus: Vec<f64> = first.admission_curve.iter().map(|(t, _)| t.as_secs_f64()).collect();
        let bound: Vec<(f64, f64)> = first
            .admission_curve
            .iter()
            .map(|(t, _)| (t.as_secs_f64(), exact_bound(r.limit, *t) as f64))
            .collect();
        let (x0, x1) = (taus[0] / 1.3, taus[taus.len() - 1] * 1.3);
        let window = format_duration(r.limit.window);
        let ten = Nanos::new(r.limit.window.get().saturating_mul(10));
        let title = format!(
            "{}: the most admitted in any interval of length τ (limit {} per {window})",
            self.scenario, r.limit.requests
        );
        let area = titled(root, &title)?;
        let bound_colour = BLACK;
        let mut entries = vec![
            LegendEntry::new(format!("exact bound L·⌈τ/W⌉, W = {window}"), bound_colour, Mark::Dashed),
            LegendEntry::new("A(W)/L, A(10W)/(10L):", BLACK, Mark::Heading),
        ];
        for l in &curves {
            let at = |tau| self.over_bound(l, tau).map_or("–".to_string(), ratio);
            entries.push(LegendEntry::new(
                format!("{}: {}, {}", l.spec.short_name(), at(r.limit.window), at(ten)),
                self.palette.colour(&l.spec),
                self.palette.line_mark(&l.spec),
            ));
        }
        // Wider lines first, so that a limiter deciding exactly as another
        // (the same curve) shows as a thin line inside a wide one.
        let mut order: Vec<&&LimiterReport> = curves.iter().collect();
        order.sort_by_key(|l| std::cmp::Reverse(line_width(&l.spec)));
        let same = |a: usize, b: usize| order[a].admission_curve == order[b].admission_curve;
        entries.extend(nested_note(
            order.len(),
            |a, b| same(a, b).then_some(0.0),
            "curves",
            |_| String::new(),
        ));
        let (plots, legend) = with_legend(&area);
        let panels = plots.split_evenly((1, 2));
        let widths = covered_widths(&order.iter().map(|l| line_width(&l.spec)).collect::<Vec<_>>(), same);
        let ratios = |l: &LimiterReport| -> Vec<(f64, f64)> {
            l.admission_curve
                .iter()
                .map(|(t, a)| (t.as_secs_f64(), *a as f64 / exact_bound(r.limit, *t).max(1) as f64))
                .collect()
        };
        for (k, panel) in panels.iter().enumerate() {
            if k == 0 {
                let y_max = curves
                    .iter()
                    .flat_map(|l| l.admission_curve.iter().map(|(_, a)| *a as f64))
                    .chain(bound.iter().map(|b| b.1))
                    .fold(1.0, f64::max);
                let mut chart = ChartBuilder::on(panel)
                    .margin(12)
                    .caption("requests admitted", font(LABEL_SIZE))
                    .x_label_area_size(60)
                    .y_label_area_size(80)
                    .build_cartesian_2d((x0..x1).log_scale(), (0.8f64..y_max * 1.5).log_scale())
                    .map_err(err)?;
                chart
                    .configure_mesh()
                    .x_desc("interval length τ (s, log)")
                    .y_desc("most admitted in (t - τ, t], log")
                    .axis_desc_style(font(LABEL_SIZE))
                    .label_style(font(TICK_SIZE))
                    .x_label_formatter(&tick)
                    .y_label_formatter(&count)
                    .light_line_style(WHITE.mix(0.0))
                    .draw()
                    .map_err(err)?;
                for (l, &w) in order.iter().zip(&widths) {
                    let (c, pattern) = (self.palette.colour(&l.spec), self.palette.pattern(&l.spec));
                    let pts: Vec<(f64, f64)> = l
                        .admission_curve
                        .iter()
                        .map(|(t, a)| (t.as_secs_f64(), (*a as f64).max(0.8)))
                        .collect();
                    draw_line(&mut chart, pts.clone(), c.stroke_width(w), pattern)?;
                    for p in pts {
                        draw_marker(&mut chart, p, 3, c.filled(), pattern)?;
                    }
                }
                // The bound last, on top: the curves that keep to it hide it otherwise.
                chart
                    .draw_series(DashedLineSeries::new(bound.clone(), 10, 7, bound_colour.stroke_width(2)))
                    .map_err(err)?;
            } else {
                let all: Vec<f64> = curves.iter().flat_map(|l| ratios(l)).map(|p| p.1).collect();
                let y_max = all.iter().copied().fold(1.0, f64::max);
                let y_min = all.iter().copied().fold(1.0, f64::min);
                let mut chart = ChartBuilder::on(panel)
                    .margin(12)
                    .caption("as a multiple of the exact bound", font(LABEL_SIZE))
                    .x_label_area_size(60)
                    .y_label_area_size(80)
                    .build_cartesian_2d((x0..x1).log_scale(), (y_min - 0.05).max(0.0)..y_max * 1.06)
                    .map_err(err)?;
                chart
                    .configure_mesh()
                    .x_desc("interval length τ (s, log)")
                    .y_desc("A(τ) / (L·⌈τ/W⌉)")
                    .axis_desc_style(font(LABEL_SIZE))
                    .label_style(font(TICK_SIZE))
                    .x_label_formatter(&tick)
                    .y_label_formatter(&|v| ratio(*v))
                    .light_line_style(WHITE.mix(0.0))
                    .draw()
                    .map_err(err)?;
                for (l, &w) in order.iter().zip(&widths) {
                    let (c, pattern) = (self.palette.colour(&l.spec), self.palette.pattern(&l.spec));
                    let pts = ratios(l);
                    draw_line(&mut chart, pts.clone(), c.stroke_width(w), pattern)?;
                    for p in pts {
                        draw_marker(&mut chart, p, 3, c.filled(), pattern)?;
                    }
                }
                chart
                    .draw_series(DashedLineSeries::new(
                        vec![(x0, 1.0), (x1, 1.0)],
                        10,
                        7,
                        bound_colour.stroke_width(2),
                    ))
                    .map_err(err)?;
            }
        }
        draw_legend(&legend, &entries)
    }
}
