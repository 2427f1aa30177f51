//! `error_vs_slots`: vulnerable band width and violation probability against
//! N (log axes), measured points beside the analytic curves and the common
//! rule of thumb (N = 10: about 10 %, N = 100: about 1 %).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::sweep::burst_pair::Unmeasured;
use ratesim::sweep::{BurstPairResult, rule_of_thumb};
use ratesim::time::format_duration;

pub struct ErrorVsSlots<'a> {
    /// The scenario's name, which starts the title.
    pub scenario: &'a str,
    /// The run's colours.
    pub palette: &'a RunPalette,
    pub result: &'a BurstPairResult,
}

/// A limiter on the N axis: (N, measured band, measured violation,
/// colour and pattern, legend label, ringed).
type Point = (f64, f64, f64, (RGBColor, Pattern), String, bool);

impl ErrorVsSlots<'_> {
    fn legend(&self, pts: &[Point]) -> Vec<LegendEntry> {
        let r = self.result;
        let mut entries = vec![LegendEntry::new("analytic 1/N and 1/(2N)", BLACK, Mark::Dashed)];
        // Only the crosses drawn: the claim is about N = 10 and 100.
        let claims = rule_of_thumb_slots(r);
        if !claims.is_empty() {
            let ns: Vec<String> = claims.iter().map(|n| n.to_string()).collect();
            entries.push(LegendEntry::new(
                format!("rule of thumb (N = {})", ns.join(", ")),
                BLACK,
                Mark::Cross,
            ));
        }
        if !pts.is_empty() {
            entries.push(LegendEntry::new("measured:", BLACK, Mark::Heading));
        }
        for (_, _, _, (c, pattern), label, ringed) in pts {
            let mark = match (*ringed, *pattern) {
                (true, _) => Mark::Ring,
                (false, Pattern::SOLID) => Mark::Dot,
                (false, p) => Mark::Marked(p),
            };
            entries.push(LegendEntry::new(label.clone(), *c, mark));
        }
        // Not drawn: a band finer than the grid, which it may miss, and a
        // limiter a lone pair cannot break.
        for row in r.rows.iter().filter(|row| !row.measured()) {
            let label = match row.unmeasured {
                Some(Unmeasured::FinerThanGrid) => {
                    format!("{}: not resolved (N > G = {})", row.spec.short_name(), r.grid)
                }
                _ => format!("{} not measured (a lone pair opens its window)", row.spec.short_name()),
            };
            entries.push(LegendEntry::new(label, self.palette.colour(&row.spec), Mark::Heading));
        }
        // Measured limiters off the N axis: how often pairs broke them.
        // While none was broken (the sliding log), a count says so;
        // otherwise their band and violation probability, as the axes
        // measure them.
        let off: Vec<_> = r
            .rows
            .iter()
            .filter(|r| r.measured() && r.spec.sweep_traits().equivalent_slots.is_none())
            .collect();
        if off.iter().all(|row| row.violations == 0) {
            for row in off {
                entries.push(LegendEntry::new(
                    format!("{}: {} pairs broken", row.spec.short_name(), row.violations),
                    self.palette.colour(&row.spec),
                    self.palette.dot_mark(&row.spec),
                ));
            }
        } else {
            entries.push(LegendEntry::new("not on the N axis (band, violation):", BLACK, Mark::Heading));
            // As the tables write them: 99.90 % must not read as 100 %.
            let pct = |v: f64| if v == 0.0 { "0 %".to_string() } else { ratesim::export::fmt_percent2(v) };
            for row in off {
                entries.push(LegendEntry::new(
                    format!(
                        "{}: {}, {}",
                        row.spec.short_name(),
                        pct(row.band_width(r.grid)),
                        pct(row.violation_probability(r.grid))
                    ),
                    self.palette.colour(&row.spec),
                    self.palette.dot_mark(&row.spec),
                ));
            }
        }
        entries
    }

    /// (N, measured band, measured violation, colour, label, ringed) of the
    /// limiters that sit on the N axis. Those that are not slot counters (the
    /// aligned fixed window is N = 1) are drawn as rings, so that the slot
    /// counter at the same N shows inside.
    fn points(&self) -> Vec<Point> {
        let g = self.result.grid;
        self.result
            .rows
            .iter()
            .filter(|r| r.measured())
            .filter_map(|r| {
                let n = r.spec.sweep_traits().equivalent_slots?;
                Some((
                    n as f64,
                    r.band_width(g),
                    r.violation_probability(g),
                    (self.palette.colour(&r.spec), self.palette.pattern(&r.spec)),
                    r.spec.short_name(),
                    r.spec.slots().is_none(),
                ))
            })
            .collect()
    }
}

/// The slot counts of the sweep's slot counters that the rule of thumb
/// speaks of (10 and 100), in increasing order, once each: where the chart
/// draws its crosses.
fn rule_of_thumb_slots(r: &BurstPairResult) -> Vec<u64> {
    let mut ns: Vec<u64> = r
        .rows
        .iter()
        .filter(|row| rule_of_thumb(&row.spec).is_some())
        .filter_map(|row| row.spec.slots())
        .collect();
    ns.sort_unstable();
    ns.dedup();
    ns
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
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = self.result;
        let title = format!(
            "{}: how much does N buy? Burst pairs against L = {} per {}",
            self.scenario,
            r.limit.requests,
            format_duration(r.limit.window)
        );
        let area = titled(root, &title)?;
        let pts = self.points();
        let entries = self.legend(&pts);
        let (plots, legend) = with_legend(&area);
        let panels = plots.split_evenly((1, 2));
        // At least up to N = 200: a log axis over less crowds its labels.
        let n_max = pts.iter().map(|p| p.0).fold(100.0, f64::max) * 2.0;
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
            // The rule of thumb first, so the measured points sit on top of it.
            if k == 0 {
                for row in &r.rows {
                    if let (Some(claim), Some(n)) = (rule_of_thumb(&row.spec), row.spec.slots()) {
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
            for (n, band, prob, (c, pattern), _, ringed) in &pts {
                let v = if k == 0 { *band } else { *prob };
                if v > 0.0 {
                    if *ringed {
                        chart
                            .draw_series(std::iter::once(Circle::new((*n, v), 13, c.stroke_width(3))))
                            .map_err(err)?;
                    } else {
                        draw_marker(&mut chart, (*n, v), 8, c.filled(), *pattern)?;
                    }
                }
            }
        }
        draw_legend(&legend, &entries)?;
        Ok(())
    }
}
