//! `retry_timeline`: attempts per bin, one strip per limiter, with first
//! attempts (grey) and retries (the limiter's colour) stacked. Retries that a Retry-After header sends
//! back at one instant stand out as spikes at window boundaries.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::RunReport;
use ratesim::time::format_duration;

pub struct RetryTimeline<'a> {
    /// The run's colours.
    pub palette: &'a RunPalette,
    pub scenario: &'a str,
    pub report: &'a RunReport,
}

impl Chart for RetryTimeline<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = self.report;
        // Bars wide enough to see, but no wider than a tenth of the window
        // (where the bins are that narrow): herds at boundaries stay spikes.
        let timeline = chart_bins(&r.timeline, r.timeline.boundary_bars(r.limit.window));
        let width = timeline.width().get();
        let bins = timeline.bins();
        let end = bins_end(r);
        let (div, unit) = time_unit(end);
        let x_end = end as f64 / div;
        let bin = format_duration(timeline.width());
        // A square-root scale where a linear one would flatten most bars
        // (the library decides, and the caption says so): the bars are
        // drawn as the roots of their counts, the labels are counts.
        let sqrt = ratesim::run::retry_timeline_sqrt(r);
        let scale = |v: u64| if sqrt { (v as f64).sqrt() } else { v as f64 };
        let y_max =
            scale(bins.iter().flat_map(|row| row.iter().map(|b| b.offered)).max().unwrap_or(1).max(1));
        // (On a square-root scale too, the tick above the tallest bar is
        // labelled: a bare tick and grid line there read as a missing
        // label.)
        let label = |v: &f64| if sqrt { whole(&(v * v).round()) } else { whole(v) };
        let area = titled(root, &format!("{}: first attempts and retries per {bin} bin", self.scenario))?;
        let (plots, legend) = with_legend(&area);
        let n = r.limiters.len();
        let y_title = if sqrt {
            format!("attempts per {bin} bin (square-root scale)")
        } else {
            format!("attempts per {bin} bin")
        };
        let strips = strip_frame(&plots, &format!("time ({unit})"), &y_title)?;
        let rows = super::strips(&strips, n, 30);
        let grey = RGBColor(150, 150, 150);
        // Each bin of limiter `i` as a step of the height `f` draws it.
        let series = |i: usize, f: &dyn Fn(&ratesim::timeline::Bin) -> f64| {
            steps(bins.iter().enumerate().map(|(b, row)| {
                let x0 = (b as u64).saturating_mul(width) as f64 / div;
                let x1 = (b as u64 + 1).saturating_mul(width) as f64 / div;
                (x0, x1.min(x_end), f(&row[i]))
            }))
        };
        for (i, strip) in rows.iter().enumerate() {
            let last = i + 1 == n;
            let l = &r.limiters[i];
            // (Ticks evenly spaced in roots: 0, 100, 400 reads as a
            // square-root scale; more of them, as each is further apart.)
            let labels = if sqrt { 5 } else { 3 };
            // A little room left of 0, so that a herd in the first bar
            // (all clients at once at the start) stands clear of the axis.
            let plot_h = f64::from(strip.dim_in_pixel().1.saturating_sub(if last { 34 } else { 4 }).max(1));
            let top = axis_top(y_max * 1.35, labels, plot_h);
            let mut chart = strip_chart(strip, last, -x_end * 0.004..x_end, top, labels, &label)?;
            let c = self.palette.colour(&l.spec);
            // Stacked: all attempts (retries on top) in colour, first
            // attempts over them in grey.
            chart
                .draw_series(
                    AreaSeries::new(series(i, &|b| scale(b.offered)), 0.0, c.mix(0.85))
                        .border_style(c.stroke_width(1)),
                )
                .map_err(err)?;
            // The grey part is the first attempts' share of the bar's
            // height, so that on a square-root scale too a bar of half
            // retries is half colour (the root of the first attempts alone
            // would draw them taller than their share).
            // Outlined in grey as well: the coloured outline would
            // otherwise show along the top of every bar, retries or not.
            let first = series(i, &|b| first_attempts_height(b, sqrt));
            chart
                .draw_series(AreaSeries::new(first, 0.0, grey.filled()).border_style(grey.stroke_width(1)))
                .map_err(err)?;
            let retries: u64 = bins.iter().map(|row| row[i].retries).sum();
            let amp = l.clients.as_ref().and_then(|k| k.amplification());
            let text = format!(
                "{}: {} attempts ({} retries{}), {} admitted",
                l.spec.short_name(),
                l.counts.offered,
                retries,
                amp.map_or(String::new(), |a| format!(
                    ", {} per request",
                    ratesim::export::fmt_ratio_fixed(a, 2)
                )),
                l.counts.admitted
            );
            chart
                .draw_series(std::iter::once(Text::new(
                    text,
                    (x_end * 0.01, y_max * 1.32),
                    font(TICK_SIZE - 1.0),
                )))
                .map_err(err)?;
        }
        let mut entries = vec![
            LegendEntry::new("first attempts", grey, Mark::Solid),
            LegendEntry::new("retries, by limiter:", BLACK, Mark::Heading),
        ];
        for l in &r.limiters {
            entries.push(LegendEntry::new(l.spec.short_name(), self.palette.colour(&l.spec), Mark::Solid));
        }
        draw_legend(&legend, &entries)?;
        Ok(())
    }

    fn height(&self) -> u32 {
        strips_height(self.report.limiters.len())
    }
}

/// The top of a strip's value axis of at most `labels` ticks, on a plot
/// `height` pixels tall: `top`, or, where the highest tick would sit within
/// [`STRIP_TOP_CLEAR`] of it (its label astride the strip above's bottom
/// edge and its `0`, which [`strip_ticks`] then leaves it out for), a
/// little higher.
fn axis_top(top: f64, labels: usize, height: f64) -> f64 {
    let clear = ((STRIP_TOP_CLEAR + 1.0) / height).min(0.5);
    use plotters::coord::ranged1d::Ranged;
    let highest = |t: f64| {
        plotters::coord::types::RangedCoordf64::from(0.0..t)
            .key_points(count_labels_in(0.0..t, labels))
            .into_iter()
            .fold(0.0, f64::max)
    };
    let mut t = top;
    // (Raising the top can change the ticks; a few rounds settle them.)
    for _ in 0..4 {
        let k = highest(t);
        if t - k >= t * clear {
            break;
        }
        t = k / (1.0 - clear);
    }
    t
}

/// How tall a bin's first attempts are drawn: their share of the bar,
/// whose height is the count of attempts or, on a square-root scale, its
/// root.
fn first_attempts_height(bin: &ratesim::timeline::Bin, sqrt: bool) -> f64 {
    let first = bin.offered - bin.retries;
    if !sqrt || bin.offered == 0 {
        return first as f64;
    }
    (bin.offered as f64).sqrt() * first as f64 / bin.offered as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(offered: u64, retries: u64) -> ratesim::timeline::Bin {
        ratesim::timeline::Bin { offered, retries, ..Default::default() }
    }

    #[test]
    fn the_highest_tick_keeps_clear_of_the_top_edge() {
        use plotters::coord::ranged1d::Ranged;
        // backoff's square-root strips, 100 px tall: 230 attempts at most,
        // a root of 15.2 and a top of 20.5, where the tick at 20 (400) sat
        // on the edge; outage_recovery's tick at 30 (900) of 34.4, 12.8 %
        // under the top, is clear of it on 120 px, raised a hair on 100.
        assert!(axis_top(230f64.sqrt() * 1.35, 5, 100.0) > 22.9);
        assert_eq!(axis_top(34.4, 5, 120.0), 34.4);
        assert!((axis_top(34.4, 5, 100.0) - 30.0 / 0.87).abs() < 1e-9);
        let clear = (STRIP_TOP_CLEAR + 1.0) / 100.0;
        for i in 1..2000 {
            let top = i as f64 * 0.37;
            for labels in [3, 5] {
                let t = axis_top(top, labels, 100.0);
                assert!(t >= top);
                let range = 0.0..t;
                let ticks = plotters::coord::types::RangedCoordf64::from(range.clone())
                    .key_points(count_labels_in(range, labels));
                let k = ticks.into_iter().fold(0.0, f64::max);
                assert!(t - k >= t * clear * 0.999, "top {top}, {labels} labels: tick {k} of {t}");
            }
        }
    }

    #[test]
    fn first_attempts_are_drawn_as_their_share_of_the_bar() {
        // Linear: the count. Square root: 100 attempts, 50 of them retries,
        // is a bar 10 tall, half of it (5) grey; the root of 50 (7.07)
        // would show them as 71 % of the bar.
        assert_eq!(first_attempts_height(&bin(100, 50), false), 50.0);
        assert_eq!(first_attempts_height(&bin(100, 50), true), 5.0);
        assert_eq!(first_attempts_height(&bin(400, 0), true), 20.0);
        assert_eq!(first_attempts_height(&bin(400, 400), true), 0.0);
        assert_eq!(first_attempts_height(&bin(0, 0), true), 0.0);
    }
}
