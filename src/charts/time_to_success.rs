//! `time_to_success`: for each limiter, the share of succeeded requests
//! whose time to success (first attempt to admitted attempt) is at most x,
//! x on a log scale. Requests admitted on their first attempt have time 0,
//! which a log axis cannot place: each curve starts at the left edge at
//! their share (a dot marks it), and the legend gives that share.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::RunReport;
use ratesim::export::markdown::fmt_seconds;

pub struct TimeToSuccess<'a> {
    /// The run's colours.
    pub palette: &'a RunPalette,
    pub scenario: &'a str,
    pub report: &'a RunReport,
}

/// The powers of ten around `[lo, hi]`: the axis range.
fn decades(lo: f64, hi: f64) -> (f64, f64) {
    let lo = 10f64.powf(lo.log10().floor());
    let hi = 10f64.powf(hi.log10().ceil());
    if hi > lo { (lo, hi) } else { (lo, lo * 10.0) }
}

/// A time in seconds as a short tick label: `1 ms`, `100 ms`, `10 s`.
fn time_tick(v: &f64) -> String {
    if *v >= 1.0 {
        format!("{} s", tick(v))
    } else if *v >= 1e-3 {
        format!("{} ms", tick(&(v * 1e3)))
    } else if *v >= 1e-6 {
        format!("{} µs", tick(&(v * 1e6)))
    } else {
        format!("{} ns", tick(&(v * 1e9)))
    }
}

/// A share as a percentage for the legend: `5 %`, `0.4 %`, `100 %`.
fn fmt_share(v: f64) -> String {
    let p = v * 100.0;
    if p > 0.0 && p < 1.0 { format!("{p:.1} %") } else { format!("{p:.0} %") }
}

impl Chart for TimeToSuccess<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = self.report;
        let cdfs: Vec<_> =
            r.limiters.iter().map(|l| (l, l.clients.as_ref().and_then(|k| k.tts_cdf()))).collect();
        let positive = cdfs.iter().flat_map(|(_, c)| c.iter().flat_map(|(_, pts)| pts.iter()));
        let (lo, hi) = positive
            .map(|(x, _)| x.as_secs_f64())
            .fold((f64::INFINITY, 0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
        // With no positive time at all, any decade will do: 1 ms to 1 s.
        let (x0, x1) = if hi > 0.0 { decades(lo, hi) } else { (1e-3, 1.0) };
        let area = titled(root, &format!("{}: time to success, share of succeeded requests", self.scenario))?;
        let (plot, legend) = with_legend(&area);
        let mut chart = ChartBuilder::on(&plot)
            .margin(10)
            .margin_right(30)
            .x_label_area_size(60)
            .y_label_area_size(90)
            .build_cartesian_2d((x0..x1).log_scale(), 0f64..105f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time to success x (log scale; 0 at the left edge)")
            .y_desc("succeeded with time ≤ x (%)")
            .axis_desc_style(font(LABEL_SIZE))
            .label_style(font(TICK_SIZE))
            .x_label_formatter(&time_tick)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(err)?;
        let mut order: Vec<_> = cdfs.iter().collect();
        order.sort_by_key(|(l, _)| std::cmp::Reverse(line_width(&l.spec)));
        for (l, cdf) in order {
            let Some((at_once, points)) = cdf else { continue };
            let c = self.palette.colour(&l.spec);
            // A step curve: flat at the first-attempt share from the left
            // edge, rising at each recorded time.
            let mut pts = vec![(x0, at_once * 100.0)];
            let mut y = at_once * 100.0;
            for (x, share) in points {
                let x = x.as_secs_f64();
                pts.push((x, y));
                y = share * 100.0;
                pts.push((x, y));
            }
            pts.push((x1, y));
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(line_width(&l.spec).min(4))))
                .map_err(err)?;
            chart
                .draw_series(std::iter::once(Circle::new((x0, at_once * 100.0), 6, c.filled())))
                .map_err(err)?;
        }
        let mut entries = Vec::new();
        for (l, cdf) in &cdfs {
            entries.push(LegendEntry::new(short_label(&l.spec), self.palette.colour(&l.spec), Mark::Line));
            let stats = match (cdf, l.clients.as_ref().and_then(|k| k.tts_quantile(0.5))) {
                (Some((at_once, _)), Some(p50)) => {
                    format!("      {} at time 0, median {}", fmt_share(*at_once), fmt_seconds(p50))
                }
                _ => "      no request succeeded".to_string(),
            };
            entries.push(LegendEntry::new(stats, BLACK, Mark::Heading));
        }
        draw_legend(&legend, &entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axis_spans_whole_decades() {
        assert_eq!(decades(0.0004, 3.2), (1e-4, 10.0));
        assert_eq!(decades(0.5, 0.5), (0.1, 1.0));
        assert_eq!(time_tick(&0.01), "10 ms");
        assert_eq!(time_tick(&10.0), "10 s");
    }
}
