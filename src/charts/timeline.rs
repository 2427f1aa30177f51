//! `timeline`: offered and admitted requests per bin, one line per limiter.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::RunReport;
use ratesim::time::format_duration;

pub struct Timeline<'a> {
    /// The run's colours.
    pub palette: &'a RunPalette,
    pub scenario: &'a str,
    pub report: &'a RunReport,
}

impl Chart for Timeline<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = self.report;
        // Bars wide enough to see: bins merged for drawing (the CSV keeps them).
        let timeline = chart_bins(&r.timeline, None);
        let width = timeline.width().get();
        let bins = timeline.bins();
        let (div, unit) = time_unit(r.end.get());
        let x_end = r.end.get() as f64 / div;
        let y_max =
            bins.iter().flat_map(|row| row.iter().map(|b| b.offered)).max().unwrap_or(1).max(1) as f64;
        let area = titled(
            root,
            &format!("{}: offered and admitted per {} bin", self.scenario, format_duration(timeline.width())),
        )?;
        // Opaque, and dark enough that a rejected burst a few pixels wide
        // shows beside the admitted part.
        let grey = RGBColor(195, 195, 195);
        let mut entries = vec![LegendEntry::new("offered", grey, Mark::Solid)];
        for l in &r.limiters {
            entries.push(LegendEntry::new(
                format!("admitted: {}", short_label(&l.spec)),
                self.palette.colour(&l.spec),
                Mark::Area,
            ));
        }
        let (plots, legend) = with_legend_for(&area, &entries);
        let n = r.limiters.len();
        // One strip per limiter, same axes; time labels on the last only.
        let strips = strip_frame(
            &plots,
            &format!("time ({unit})"),
            &format!("requests per {} bin", format_duration(timeline.width())),
        )?;
        // Many strips are thin: the last one gets its own room for the time
        // labels, and fewer value labels.
        let compact = n >= STRIPS_FROM;
        let rows = super::strips(&strips, n, 30);
        let series = |i: usize, f: &dyn Fn(&ratesim::timeline::Bin) -> u64| {
            steps(bins.iter().enumerate().map(|(b, row)| {
                let x0 = (b as u64 * width) as f64 / div;
                let x1 = ((b as u64 + 1) * width) as f64 / div;
                (x0, x1.min(x_end), f(&row[i]) as f64)
            }))
        };
        for (i, strip) in rows.iter().enumerate() {
            let last = i + 1 == n;
            let l = &r.limiters[i];
            let mut chart =
                strip_chart(strip, last, 0f64..x_end, y_max * 1.3, if compact { 2 } else { 3 }, &whole)?;
            let c = self.palette.colour(&l.spec);
            chart.draw_series(AreaSeries::new(series(i, &|b| b.offered), 0.0, grey.filled())).map_err(err)?;
            chart
                .draw_series(
                    AreaSeries::new(series(i, &|b| b.admitted), 0.0, c.mix(0.75))
                        .border_style(c.stroke_width(1)),
                )
                .map_err(err)?;
            let text =
                format!("{}: admitted {} of {}", short_label(&l.spec), l.counts.admitted, l.counts.offered);
            let size = if compact { TICK_SIZE - 3.0 } else { TICK_SIZE - 1.0 };
            strip_title(&mut chart, text, 0.0..x_end, y_max * 1.29, size, compact)?;
        }
        draw_legend(&legend, &entries)?;
        Ok(())
    }
}
