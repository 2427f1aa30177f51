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

/// The smallest count a log-scale strip shows: empty bins sit on its
/// floor, and a bin of 1 stands clear of it.
const LOG_FLOOR: f64 = 0.5;

/// Whether the strips need a log scale: when the tallest admitted bin would
/// be under a tenth of a linear scale set by the tallest offered bin
/// (clients retrying against 10 per second offer ~270 a bin), so that what
/// got through stays visible beside what was offered. Above that a linear
/// scale shows both, and shows a herd of retries as the spike it is.
pub fn log_scale(offered_max: u64, admitted_max: u64) -> bool {
    admitted_max.saturating_mul(10) < offered_max
}

impl Chart for Timeline<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = self.report;
        // When all the traffic falls in a small part of the run, the bins
        // around it as they are; else the whole run, the bins merged for
        // drawing into bars wide enough to see (the CSV keeps them).
        let zoom = ratesim::run::timeline_zoom(&r.timeline, r.end);
        let merged;
        let timeline = if zoom.is_some() {
            &r.timeline
        } else {
            merged = chart_bins(&r.timeline, None);
            &merged
        };
        let width = timeline.width().get();
        let bins = timeline.bins();
        let shown = zoom.clone().unwrap_or(0..bins.len());
        let (t0, t1) = match &zoom {
            Some(z) => (z.start as u64 * width, (z.end as u64 * width).min(r.end.get())),
            None => (0, r.end.get()),
        };
        let (div, unit) = time_unit(t1 - t0);
        let (x_start, x_end) = (t0 as f64 / div, t1 as f64 / div);
        // A limiter that may delay is drawn where its requests reached the
        // backend (admitted at once, plus delayed ones whose wait ended in
        // the bin): a shaping limiter's bars are its shaping, not the
        // burst it admitted to wait.
        let waits: Vec<bool> = r.limiters.iter().map(|l| l.delays.is_some()).collect();
        let drawn = |i: usize, b: &ratesim::timeline::Bin| if waits[i] { b.backend() } else { b.admitted };
        let rows = || bins.iter().enumerate().skip(shown.start).take(shown.len());
        let offered_max = rows().flat_map(|(_, row)| row.iter().map(|b| b.offered)).max().unwrap_or(1).max(1);
        let admitted_max =
            rows().flat_map(|(_, row)| row.iter().enumerate().map(|(i, b)| drawn(i, b))).max().unwrap_or(0);
        let log = log_scale(offered_max, admitted_max);
        // Linear: counts from 0, with room for the strip's title. Log: the
        // logarithms of the counts, from the floor.
        let y_top = offered_max.max(admitted_max) as f64;
        let (y, to_y): (std::ops::Range<f64>, fn(u64) -> f64) = if log {
            (LOG_FLOOR.log10()..y_top.log10() + 0.45, |v| (v as f64).max(LOG_FLOOR).log10())
        } else {
            (0.0..y_top * 1.3, |v| v as f64)
        };
        let at_backend = waits.iter().any(|&w| w);
        let bin = format_duration(timeline.width());
        let title = if at_backend {
            format!("{}: offered and reaching the backend per {bin} bin", self.scenario)
        } else {
            format!("{}: offered and admitted per {bin} bin", self.scenario)
        };
        let area = titled(root, &title)?;
        // Opaque, and dark enough that a rejected burst a few pixels wide
        // shows beside the admitted part.
        let grey = RGBColor(195, 195, 195);
        let mut entries = vec![LegendEntry::new("offered", grey, Mark::Solid)];
        for (l, &w) in r.limiters.iter().zip(&waits) {
            let what = if w { "at the backend" } else { "admitted" };
            entries.push(LegendEntry::new(
                format!("{what}: {}", short_label(&l.spec)),
                self.palette.colour(&l.spec),
                Mark::Fill(ADMITTED_ALPHA),
            ));
        }
        let (plots, legend) = with_legend_for(&area, &entries);
        let n = r.limiters.len();
        // One strip per limiter, same axes; time labels on the last only.
        let per_bin = format!("requests per {bin} bin");
        let x_title = match &zoom {
            Some(_) => format!(
                "time ({unit}), zoomed to the traffic: none in the rest of the {} run",
                format_duration(r.end)
            ),
            None => format!("time ({unit})"),
        };
        let strips =
            strip_frame(&plots, &x_title, &if log { format!("{per_bin} (log scale)") } else { per_bin })?;
        // Many strips are thin: the last one gets its own room for the time
        // labels, and fewer value labels.
        let compact = n >= STRIPS_FROM;
        let strip_rows = super::strips(&strips, n, 30);
        let series = |i: usize, f: &dyn Fn(&ratesim::timeline::Bin) -> u64| {
            steps(rows().map(|(b, row)| {
                let x0 = (b as u64 * width) as f64 / div;
                let x1 = ((b as u64 + 1) * width) as f64 / div;
                (x0, x1.min(x_end), to_y(f(&row[i])))
            }))
        };
        // A log axis is labelled at the powers of ten (its values are their
        // logarithms), a linear one as counts.
        let log_label = |v: &f64| {
            if *v >= 0.0 && v.fract() == 0.0 { count(&10f64.powi(*v as i32)) } else { String::new() }
        };
        let label: &dyn Fn(&f64) -> String = if log { &log_label } else { &whole };
        for (i, strip) in strip_rows.iter().enumerate() {
            let last = i + 1 == n;
            let l = &r.limiters[i];
            // A label at every power of ten, where a linear strip has 2 or 3.
            let labels = if log {
                y.end.floor() as usize + 1
            } else if compact {
                2
            } else {
                3
            };
            let mut chart = strip_chart_in(strip, last, x_start..x_end, y.clone(), labels, label)?;
            let c = self.palette.colour(&l.spec);
            chart
                .draw_series(AreaSeries::new(series(i, &|b| b.offered), y.start, grey.filled()))
                .map_err(err)?;
            chart
                .draw_series(
                    AreaSeries::new(
                        series(i, &|b| drawn(i, b)),
                        y.start,
                        c.mix(f64::from(ADMITTED_ALPHA) / 100.0),
                    )
                    .border_style(c.stroke_width(1)),
                )
                .map_err(err)?;
            let delayed = l.delays.as_ref().map_or(0, |d| d.delayed);
            let text = if delayed > 0 {
                format!(
                    "{}: admitted {} of {}, {delayed} delayed",
                    short_label(&l.spec),
                    l.counts.admitted,
                    l.counts.offered
                )
            } else {
                format!("{}: admitted {} of {}", short_label(&l.spec), l.counts.admitted, l.counts.offered)
            };
            let size = if compact { TICK_SIZE - 3.0 } else { TICK_SIZE - 1.0 };
            let top = y.end - (y.end - y.start) * 0.008;
            strip_title(&mut chart, text, x_start..x_end, top, size, compact)?;
        }
        draw_legend(&legend, &entries)?;
        Ok(())
    }
}

/// How strongly the admitted bars are coloured (percent), in the strips
/// and in the legend's swatches alike.
const ADMITTED_ALPHA: u8 = 75;

#[cfg(test)]
mod tests {
    use super::*;

    /// backoff: 270 offered in the first 200 ms bin, at most 10 admitted in
    /// any: a log scale. The boundary burst, 200 offered and 100 admitted,
    /// and retry_storm's herds of ~600 against 100: linear.
    #[test]
    fn a_log_scale_only_where_admitted_would_be_a_sliver() {
        assert!(log_scale(270, 10));
        assert!(!log_scale(200, 100));
        assert!(!log_scale(600, 100));
        assert!(!log_scale(100, 10));
        assert!(log_scale(101, 10));
    }
}
