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
        // When all the traffic falls in a small part of the run, the bins
        // around it as they are; else the whole run, the bins merged for
        // drawing into bars wide enough to see (the CSV keeps them). A few
        // offered bars that would squeeze the rest are cut.
        let ratesim::run::TimelineBars { bars: timeline, shown, cut } = ratesim::run::timeline_bars(r);
        let zoomed = shown.len() < timeline.bins().len();
        let width = timeline.width().get();
        let bins = timeline.bins();
        let (t0, t1) = (
            (shown.start as u64).saturating_mul(width),
            (shown.end as u64).saturating_mul(width).min(bins_end(r)),
        );
        let (div, unit) = time_unit(t1 - t0);
        let (x_start, x_end) = (t0 as f64 / div, t1 as f64 / div);
        let drawn = |i: usize, b: &ratesim::timeline::Bin| ratesim::run::timeline_drawn(&r.limiters[i], b);
        let rows = || bins.iter().enumerate().skip(shown.start).take(shown.len());
        let offered_max = rows().flat_map(|(_, row)| row.iter().map(|b| b.offered)).max().unwrap_or(1).max(1);
        let admitted_max =
            rows().flat_map(|(_, row)| row.iter().enumerate().map(|(i, b)| drawn(i, b))).max().unwrap_or(0);
        let at_backend = r.limiters.iter().any(|l| l.delays.is_some());
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
        // With retries on, each attempt is offered: the bars count attempts.
        let offered =
            if r.limiters.iter().any(|l| l.clients.is_some()) { "offered: attempts" } else { "offered" };
        let mut entries = vec![LegendEntry::new(offered, grey, Mark::Solid)];
        if let Some(level) = cut {
            entries.push(LegendEntry::new(
                format!("offered bars cut at {}", count(&(level as f64))),
                BLACK,
                Mark::Heading,
            ));
        }
        for l in &r.limiters {
            let what = if l.delays.is_some() { "at the backend" } else { "admitted" };
            entries.push(LegendEntry::new(
                format!("{what}: {}", l.spec.short_name()),
                self.palette.colour(&l.spec),
                Mark::Fill(ADMITTED_ALPHA),
            ));
        }
        let (plots, legend) = with_legend(&area);
        let n = r.limiters.len();
        // One strip per limiter, same axes; time labels on the last only.
        let x_title = if zoomed {
            format!(
                "time ({unit}), zoomed to the traffic: none in the rest of the {} run",
                format_duration(r.end)
            )
        } else {
            format!("time ({unit})")
        };
        let strips = strip_frame(&plots, &x_title, &format!("requests per {bin} bin"))?;
        // Many strips are thin: the last one gets its own room for the time
        // labels, and fewer value labels.
        let compact = n >= STRIPS_FROM;
        let strip_rows = super::strips(&strips, n, 30);
        // A linear scale, so that each admitted bar is its true share of the
        // offered one, with room for the strip's title; where offered bars
        // are cut, room too for their counts under it.
        let y_end = match cut {
            Some(level) => {
                let h = f64::from(strip_rows[0].dim_in_pixel().1.saturating_sub(4).max(1));
                level as f64 * (h / (h - CUT_ROOM_PX).max(h / 2.0)).max(1.3)
            }
            None => offered_max.max(admitted_max) as f64 * 1.3,
        };
        let cap = cut.map_or(f64::INFINITY, |c| c as f64);
        let x_of = |b: usize| ((b as u64).saturating_mul(width) as f64 / div).min(x_end);
        let series = |i: usize, f: &dyn Fn(&ratesim::timeline::Bin) -> u64| {
            steps(rows().map(|(b, row)| (x_of(b), x_of(b + 1), (f(&row[i]) as f64).min(cap))))
        };
        for (i, strip) in strip_rows.iter().enumerate() {
            let last = i + 1 == n;
            let l = &r.limiters[i];
            let labels = if compact { 2 } else { 3 };
            let mut chart = strip_chart(strip, last, x_start..x_end, y_end, labels, &whole)?;
            let c = self.palette.colour(&l.spec);
            chart.draw_series(AreaSeries::new(series(i, &|b| b.offered), 0.0, grey.filled())).map_err(err)?;
            chart
                .draw_series(
                    AreaSeries::new(
                        series(i, &|b| drawn(i, b)),
                        0.0,
                        c.mix(f64::from(ADMITTED_ALPHA) / 100.0),
                    )
                    .border_style(c.stroke_width(1)),
                )
                .map_err(err)?;
            if cut.is_some() {
                // Each cut bar torn by a white gap under its cut top, and
                // the count of each run's tallest beside it, above the cut.
                let offered: Vec<u64> = rows().map(|(_, row)| row[i].offered).collect();
                let per_px = y_end / f64::from(strip.dim_in_pixel().1.max(1));
                let torn = offered.iter().zip(rows()).filter(|(o, _)| **o as f64 > cap).map(|(_, (b, _))| {
                    Rectangle::new(
                        [(x_of(b), cap - 6.0 * per_px), (x_of(b + 1), cap - 4.0 * per_px)],
                        WHITE.filled(),
                    )
                });
                chart.draw_series(torn).map_err(err)?;
                let runs: Vec<(usize, u64)> =
                    cut_runs(&offered, cap).into_iter().map(|(k, v)| (k + shown.start, v)).collect();
                draw_cut_counts(
                    &mut chart,
                    &runs,
                    &x_of,
                    (x_end - x_start) * 0.003,
                    cap + 2.0 * per_px,
                    plotters::style::text_anchor::VPos::Bottom,
                )?;
            }
            let delayed = l.delays.as_ref().map_or(0, |d| d.delayed);
            let share = if l.counts.offered > 0 {
                format!(
                    " ({})",
                    ratesim::export::fmt_percent(l.counts.admitted as f64 / l.counts.offered as f64, false)
                )
            } else {
                String::new()
            };
            let text = if delayed > 0 {
                format!(
                    "{}: admitted {} of {}{share}, {delayed} delayed",
                    l.spec.short_name(),
                    l.counts.admitted,
                    offered_count(l)
                )
            } else {
                format!(
                    "{}: admitted {} of {}{share}",
                    l.spec.short_name(),
                    l.counts.admitted,
                    offered_count(l)
                )
            };
            // (One size whatever the count: many strips make the chart
            // taller, not the text smaller.)
            strip_title(&mut chart, text, x_start..x_end, y_end * 0.992, TICK_SIZE - 1.0, compact)?;
        }
        draw_legend(&legend, &entries)?;
        Ok(())
    }

    fn height(&self) -> u32 {
        strips_height(self.report.limiters.len())
    }
}

/// The room (pixels) above the cut of offered bars, for the counts written
/// there and the strip's title over them.
const CUT_ROOM_PX: f64 = 36.0;

/// How strongly the admitted bars are coloured (percent), in the strips
/// and in the legend's swatches alike.
const ADMITTED_ALPHA: u8 = 75;
