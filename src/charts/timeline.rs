//! `timeline`: offered and admitted requests per bin, one line per limiter.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::RunReport;
use ratesim::time::format_duration;

pub struct Timeline<'a> {
    pub scenario: &'a str,
    pub report: &'a RunReport,
}

impl Chart for Timeline<'_> {
    fn name(&self) -> &'static str {
        "timeline"
    }

    fn caption(&self) -> String {
        format!(
            "Offered and admitted requests per {} bin, {}",
            format_duration(self.report.timeline.width()),
            self.scenario
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = self.report;
        let width = r.timeline.width().0;
        let bins = r.timeline.bins();
        let (div, unit) = time_unit(r.end.0);
        let x_end = r.end.0 as f64 / div;
        let y_max =
            bins.iter().flat_map(|row| row.iter().map(|b| b.offered)).max().unwrap_or(1).max(1) as f64;
        let area = titled(
            root,
            &format!("{}: requests per {} bin", self.scenario, format_duration(r.timeline.width())),
        )?;
        let (plot, legend) = with_legend(&area);
        let mut chart = ChartBuilder::on(&plot)
            .margin(10)
            .x_label_area_size(60)
            .y_label_area_size(90)
            .build_cartesian_2d(0f64..x_end, 0f64..y_max * 1.08)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(format!("time ({unit})"))
            .y_desc(format!("requests per {} bin", format_duration(r.timeline.width())))
            .axis_desc_style(font(LABEL_SIZE))
            .label_style(font(TICK_SIZE))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(err)?;
        let series = |i: usize, f: &dyn Fn(&ratesim::timeline::Bin) -> u64| {
            steps(bins.iter().enumerate().map(|(b, row)| {
                let x0 = (b as u64 * width) as f64 / div;
                let x1 = ((b as u64 + 1) * width) as f64 / div;
                (x0, x1.min(x_end), f(&row[i]) as f64)
            }))
        };
        let grey = RGBColor(150, 150, 150);
        chart.draw_series(AreaSeries::new(series(0, &|b| b.offered), 0.0, grey.mix(0.35))).map_err(err)?;
        let mut entries = vec![LegendEntry::new("offered (all limiters)", grey, Mark::Area)];
        // The reference first, so the approximations draw over it.
        let mut order: Vec<usize> = (0..r.limiters.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(line_width(&r.limiters[i].spec)));
        for &i in &order {
            let c = colour(&r.limiters[i].spec);
            let w = line_width(&r.limiters[i].spec);
            chart.draw_series(LineSeries::new(series(i, &|b| b.admitted), c.stroke_width(w))).map_err(err)?;
        }
        for l in &r.limiters {
            entries.push(LegendEntry::new(
                format!("admitted: {}", short_label(&l.spec)),
                colour(&l.spec),
                Mark::Line,
            ));
        }
        draw_legend(&legend, &entries)?;
        Ok(())
    }
}
