//! `error_vs_slots`: vulnerable band width and violation probability against
//! N (log axes), measured points beside the analytic curves and seed 004's
//! claims.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::sweep::{BurstPairResult, seed_claim};
use ratesim::time::format_duration;

pub struct ErrorVsSlots<'a> {
    pub result: &'a BurstPairResult,
}

impl ErrorVsSlots<'_> {
    /// (N, measured band, measured violation, colour, label) of the limiters
    /// that have a slot count (the aligned fixed window is N = 1).
    fn points(&self) -> Vec<(f64, f64, f64, RGBColor, String)> {
        let g = self.result.grid;
        self.result
            .rows
            .iter()
            .filter_map(|r| {
                let n = match &r.spec {
                    LimiterSpec::SlotCounter { slots } => *slots,
                    LimiterSpec::FixedWindow { align: WindowAlign::Epoch { .. } } => 1,
                    _ => return None,
                };
                Some((
                    n as f64,
                    r.band_width(g),
                    r.violation_probability(g),
                    colour(&r.spec),
                    short_label(&r.spec),
                ))
            })
            .collect()
    }
}

fn pct(v: &f64) -> String {
    let p = v * 100.0;
    if p >= 1.0 {
        format!("{p:.0} %")
    } else if p >= 0.1 {
        format!("{p:.1} %")
    } else {
        format!("{p:.2} %")
    }
}

impl Chart for ErrorVsSlots<'_> {
    fn name(&self) -> &'static str {
        "error_vs_slots"
    }

    fn caption(&self) -> String {
        format!(
            "Burst pairs (2 × {} requests at single instants, {}×{} grid of gap and offset): measured vulnerable band \
and violation probability against N, with the analytic 1/N and 1/(2N); the sliding log is 0 on both",
            self.result.limit.requests, self.result.grid, self.result.grid
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = self.result;
        let title = format!(
            "How much does N buy? Burst pairs against L = {} per {}",
            r.limit.requests,
            format_duration(r.limit.window)
        );
        let area = titled(root, &title)?;
        let (plots, legend) = with_legend(&area);
        let panels = plots.split_evenly((1, 2));
        let pts = self.points();
        let n_max = pts.iter().map(|p| p.0).fold(10.0, f64::max) * 2.0;
        let floor = 1.0 / (4.0 * f64::from(r.grid)).max(n_max * 4.0);
        for (k, panel) in panels.iter().enumerate() {
            let (name, analytic): (&str, fn(f64) -> f64) = if k == 0 {
                ("vulnerable band (share of W)", |n| 1.0 / n)
            } else {
                ("violation probability", |n| 1.0 / (2.0 * n))
            };
            let mut chart = ChartBuilder::on(panel)
                .margin(12)
                .caption(
                    if k == 0 { "vulnerable band width" } else { "violation probability" },
                    font(LABEL_SIZE),
                )
                .x_label_area_size(60)
                .y_label_area_size(90)
                .build_cartesian_2d((0.8f64..n_max).log_scale(), (floor..1.5f64).log_scale())
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("slots N (log scale)")
                .y_desc(format!("{name}, log"))
                .axis_desc_style(font(LABEL_SIZE))
                .label_style(font(TICK_SIZE))
                .y_label_formatter(&pct)
                .x_label_formatter(&|v| format!("{v:.0}"))
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(err)?;
            let curve: Vec<(f64, f64)> = (0..=200)
                .map(|s| {
                    let n = 0.8 * (n_max / 0.8f64).powf(f64::from(s) / 200.0);
                    (n, analytic(n))
                })
                .collect();
            chart.draw_series(DashedLineSeries::new(curve, 10, 6, BLACK.stroke_width(2))).map_err(err)?;
            // Seed claims first, so the measured points sit on top of them.
            if k == 0 {
                for row in &r.rows {
                    if let (Some(claim), Some(n)) = (seed_claim(&row.spec), row.spec.slots()) {
                        chart
                            .draw_series(std::iter::once(Cross::new(
                                (n as f64, claim),
                                12,
                                BLACK.stroke_width(3),
                            )))
                            .map_err(err)?;
                    }
                }
            }
            for (n, band, prob, c, label) in &pts {
                let v = if k == 0 { *band } else { *prob };
                if v > 0.0 {
                    // The fixed window sits where N = 1 does: a ring around it.
                    if label == "fixed window" {
                        chart
                            .draw_series(std::iter::once(Circle::new((*n, v), 13, c.stroke_width(3))))
                            .map_err(err)?;
                    } else {
                        chart
                            .draw_series(std::iter::once(Circle::new((*n, v), 8, c.filled())))
                            .map_err(err)?;
                    }
                }
            }
        }
        let mut entries = vec![
            LegendEntry::new("analytic 1/N and 1/(2N)", BLACK, Mark::Dashed),
            LegendEntry::new("seed 004 claim (N=10, 100)", BLACK, Mark::Cross),
        ];
        entries.push(LegendEntry::new("measured:", BLACK, Mark::Heading));
        for (_, _, _, c, label) in &pts {
            let mark = if label == "fixed window" { Mark::Ring } else { Mark::Dot };
            entries.push(LegendEntry::new(label.clone(), *c, mark));
        }
        if let Some(log) = r.rows.iter().find(|r| matches!(r.spec, LimiterSpec::SlidingLog { .. })) {
            entries.push(LegendEntry::new(
                format!("{}: {} pairs broken", short_label(&log.spec), log.violations),
                colour(&log.spec),
                Mark::Dot,
            ));
        }
        draw_legend(&legend, &entries)?;
        Ok(())
    }
}
