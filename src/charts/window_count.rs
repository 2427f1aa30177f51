//! `window_count`: the exact sliding-window count `(t - W, t]` over time for
//! each limiter, against the limit: the picture of the 2x boundary spike.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::broken_axis::{axis_break, clear_of_foot_mark};
use super::*;
use ratesim::RunReport;
use ratesim::time::format_duration;

pub struct WindowCount<'a> {
    /// The run's colours.
    pub palette: &'a RunPalette,
    pub scenario: &'a str,
    pub report: &'a RunReport,
}

/// The y range of the window counts `lo ..= hi` against a limit `limit`:
/// from 0, with room above, unless every count drawn stays above half of
/// the top, where an axis from 0 would squeeze them into a line (102
/// against a limit of 100 on an axis to 115): then from just under the
/// lowest, whole numbers at both ends.
pub fn count_range(lo: u64, hi: u64, limit: u64) -> std::ops::Range<f64> {
    let top = hi.max(limit) as f64;
    if (lo as f64) <= top / 2.0 {
        return 0.0..top * 1.12;
    }
    let pad = ((top - lo as f64) * 0.25).max(1.0);
    (lo as f64 - pad).floor()..(top + pad).ceil()
}

impl WindowCount<'_> {
    /// The bins drawn: merged to at most [`ratesim::timeline::CHART_MAX_BINS`]
    /// (each the highest count of the bins it merges), with the x axis
    /// title that says so when they are.
    fn drawn(&self, unit: &str) -> (ratesim::timeline::Timeline, String) {
        let r = self.report;
        let timeline = chart_bins(&r.timeline, None);
        let title = if timeline.width() == r.timeline.width() {
            format!("time t ({unit})")
        } else {
            format!(
                "time t ({unit}); each step the highest count in its {}",
                format_duration(timeline.width())
            )
        };
        (timeline, title)
    }
}

impl Chart for WindowCount<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        if self.report.limiters.len() >= STRIPS_FROM {
            return self.draw_strips(root);
        }
        let r = self.report;
        let (div, unit) = time_unit(r.end.get());
        // Thousands of steps of thick lines draw, in a PNG, as hollow
        // outlines and wedges: the bins are merged for drawing.
        let (timeline, x_title) = self.drawn(unit);
        let width = timeline.width().get();
        let bins = timeline.bins();
        let x_end = r.end.get() as f64 / div;
        let limit = r.limit.requests as f64;
        let peak = r.limiters.iter().map(|l| l.counts.peak).max().unwrap_or(0);
        let lowest = bins.iter().flat_map(|row| row.iter().map(|b| b.window_peak)).min().unwrap_or(0);
        let y = count_range(lowest, peak, r.limit.requests);
        let zoomed = y.start > 0.0;
        let title = format!(
            "{}: requests in the exact window of {}{} (limit {})",
            self.scenario,
            format_duration(r.limit.window),
            worst_client(r),
            r.limit.requests
        );
        let area = titled(root, &title)?;
        let mut entries = self.legend();
        // The limit is drawn under the lines, so that a limiter at L keeps
        // its own colour; where lines at L cover more than half the bins
        // (the sliding log on nodes_uneven, from the first bin to the last)
        // its dashes hardly show, and the legend says where they went.
        let at_limit = |row: &[ratesim::timeline::Bin]| row.iter().any(|b| b.window_peak == r.limit.requests);
        if bins.iter().filter(|row| at_limit(row)).count() * 2 > bins.len() {
            entries[0].label = format!("limit L = {n} (hidden by lines at {n})", n = r.limit.requests);
        }
        let n = r.limiters.len();
        // Counts per pixel of the plot's height (its margins and the time
        // labels off the area's).
        let per_px = (y.end - y.start) / f64::from(area.dim_in_pixel().1.saturating_sub(80).max(1));
        // Lines that never part by more than a few pixels are one line to
        // the eye (sliding_minute's fixed window under its first-request
        // window, 2 apart in half the steps), and so are lines that do at
        // a few points only, a little: they nest as equal ones do.
        let gap = |a: usize, b: usize| {
            near_gap(
                bins.iter().map(|row| (row[a].window_peak as f64, row[b].window_peak as f64)),
                NEAR_PX * per_px,
            )
        };
        entries.extend(nested_note(n, gap, "counts", |g| format!("{g:.0}")));
        let (plot, legend) = with_legend(&area);
        // Wider lines first; a line that a later one covers (the same
        // count in every bin, or within a few pixels) is drawn wider
        // still, as a border around it.
        let mut order: Vec<usize> = (0..r.limiters.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(line_width(&r.limiters[i].spec)));
        let same = |a: usize, b: usize| gap(order[a], order[b]).is_some();
        // A line whose count changes every few times its width draws its
        // steps into blocks and hollow outlines: such a line is thin
        // (identical lines still nest).
        let plot_px = plot.dim_in_pixel().0 as usize;
        let width_of = |i: usize| {
            let w = line_width(&r.limiters[i].spec);
            let steps = runs(bins.iter().map(|row| row[i].window_peak));
            if steps * 3 * w as usize > plot_px { w.min(2) } else { w }
        };
        let widths = covered_widths(&order.iter().map(|&i| width_of(i)).collect::<Vec<_>>(), same);
        // The plot starts 90 px in, as the strips of `timeline` and the
        // other time charts do, so that charts one above the other line up.
        let mut chart = ChartBuilder::on(&plot)
            .margin(10)
            .x_label_area_size(60)
            .y_label_area_size(80)
            .build_cartesian_2d(0f64..x_end, y.clone())
            .map_err(err)?;
        let height = chart.plotting_area().dim_in_pixel().1;
        // No label at the break mark at the foot of a zoomed axis.
        let y_fmt = |v: &f64| if clear_of_foot_mark(*v, &y, height) { count(v) } else { String::new() };
        chart
            .configure_mesh()
            .x_desc(x_title)
            .y_desc(format!(
                "{} in (t - {}, t]{}",
                counted(r),
                format_duration(r.limit.window),
                worst_client(r)
            ))
            .axis_desc_style(font(LABEL_SIZE))
            .label_style(font(TICK_SIZE))
            .x_label_formatter(&tick)
            .y_label_formatter(&y_fmt)
            .y_labels(count_labels_in(y.clone(), 10))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(err)?;
        // On an axis from 0, a line of `w` pixels at a count under half
        // its width is drawn with its lower edge on 0, not across it: no
        // count is drawn under 0 (the boundary burst's bundle of nested
        // lines at 0 reached 3 below it, under the time axis), and lines
        // nested at 0 nest upward, each still a border over the next.
        let px = (y.end - y.start) / f64::from(height.max(1));
        let floor_of = |w: u32| if zoomed { f64::MIN } else { y.start + f64::from(w) / 2.0 * px };
        let series = |i: usize, w: u32| -> Vec<(f64, f64)> {
            let floor = floor_of(w);
            steps(bins.iter().enumerate().map(|(b, row)| {
                let x0 = (b as u64).saturating_mul(width) as f64 / div;
                let x1 = (b as u64 + 1).saturating_mul(width) as f64 / div;
                (x0, x1.min(x_end), (row[i].window_peak as f64).max(floor))
            }))
        };
        // The limit under the lines: a limiter at L (the sliding log,
        // always) stays its own colour, the dashes showing on either side.
        chart
            .draw_series(DashedLineSeries::new(
                vec![(0.0, limit), (x_end, limit)],
                12,
                8,
                LIMIT_COLOUR.stroke_width(2),
            ))
            .map_err(err)?;
        for (&i, &w) in order.iter().zip(&widths) {
            let spec = &r.limiters[i].spec;
            draw_line(
                &mut chart,
                series(i, w),
                self.palette.colour(spec).stroke_width(w),
                self.palette.pattern(spec),
            )?;
        }
        if zoomed {
            axis_break(&plot, &chart.plotting_area().get_pixel_range())?;
        }
        draw_legend(&legend, &entries)?;
        Ok(())
    }

    fn height(&self) -> u32 {
        let n = self.report.limiters.len();
        if n >= STRIPS_FROM { strips_height(n) } else { HEIGHT }
    }
}

impl WindowCount<'_> {
    fn legend(&self) -> Vec<LegendEntry> {
        let r = self.report;
        let mut entries = vec![
            LegendEntry::new(format!("limit L = {}", r.limit.requests), LIMIT_COLOUR, Mark::Dashed),
            LegendEntry::new("highest count (peak / L):", BLACK, Mark::Heading),
        ];
        for l in &r.limiters {
            entries.push(LegendEntry::new(
                format!("{} ({})", l.spec.short_name(), fmt_ratio_x(l.peak_ratio())),
                self.palette.colour(&l.spec),
                self.palette.line_mark(&l.spec),
            ));
        }
        entries
    }

    /// Many limiters: a strip each, with the limit dashed in every strip, so
    /// that no line hides another (limiters that decide alike would draw the
    /// same line).
    fn draw_strips<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = self.report;
        let (div, unit) = time_unit(r.end.get());
        let (timeline, x_title) = self.drawn(unit);
        let width = timeline.width().get();
        let bins = timeline.bins();
        let x_end = r.end.get() as f64 / div;
        let limit = r.limit.requests as f64;
        let peak = r.limiters.iter().map(|l| l.counts.peak).max().unwrap_or(0) as f64;
        let y_max = peak.max(limit) * 1.35;
        let window = format_duration(r.limit.window);
        let title = format!(
            "{}: requests in the exact window of {window}{} (limit {})",
            self.scenario,
            worst_client(r),
            r.limit.requests
        );
        let area = titled(root, &title)?;
        let entries = self.legend();
        let (plots, legend) = with_legend(&area);
        let strips = strip_frame(
            &plots,
            &x_title,
            &format!("{} in (t - {window}, t]{}", counted(r), worst_client(r)),
        )?;
        let n = r.limiters.len();
        let rows = super::strips(&strips, n, 30);
        for (i, strip) in rows.iter().enumerate() {
            let l = &r.limiters[i];
            // 0, L (dashed in each strip) and a round count over it, where
            // there is room ([`strip_ticks`]).
            let mut chart =
                strip_chart_in(strip, i + 1 == n, 0f64..x_end, 0.0..y_max, 2, &whole, Some(limit))?;
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(0.0, limit), (x_end, limit)],
                    8,
                    6,
                    LIMIT_COLOUR.stroke_width(1),
                ))
                .map_err(err)?;
            let pts = steps(bins.iter().enumerate().map(|(b, row)| {
                let x0 = (b as u64).saturating_mul(width) as f64 / div;
                let x1 = (b as u64 + 1).saturating_mul(width) as f64 / div;
                (x0, x1.min(x_end), row[i].window_peak as f64)
            }));
            let c = self.palette.colour(&l.spec);
            draw_line(&mut chart, pts, c.stroke_width(2), self.palette.pattern(&l.spec))?;
            let text =
                format!("{}: peak {} ({})", l.spec.short_name(), l.counts.peak, fmt_ratio_x(l.peak_ratio()));
            // Strips here are always compact (from `STRIPS_FROM` limiters).
            strip_title(&mut chart, text, 0.0..x_end, y_max * 0.99, TICK_SIZE - 1.0, true)?;
        }
        draw_legend(&legend, &entries)?;
        Ok(())
    }
}

/// How many runs of one value `values` make: the steps a line draws.
fn runs(values: impl Iterator<Item = u64>) -> usize {
    let mut n = 0;
    let mut last = None;
    for v in values {
        if last != Some(v) {
            n += 1;
        }
        last = Some(v);
    }
    n
}

/// What the window counts: admitted requests, or with a shaping limiter
/// those that reached the backend (a delayed request enters the windows at
/// `t + d`, as the timeline says).
fn counted(r: &RunReport) -> &'static str {
    if r.limiters.iter().any(|l| l.delays.is_some()) { "reaching the backend" } else { "admitted" }
}

/// With many clients each has its own window, and a bin shows the largest
/// count of any client at an arrival in it (`docs/semantics.md`, "The
/// timeline"): not one client's, but the worst client of each bin.
fn worst_client(r: &RunReport) -> &'static str {
    if r.keys > 1 { ", worst client per bin" } else { "" }
}

/// `2×L`, `1.37×L`, `1.002×L` (never `1×L` for a peak above L).
pub fn fmt_ratio_x(v: f64) -> String {
    format!("{}×L", ratesim::export::fmt_ratio_short(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nodes_ceil: the nodes admit 102 against L = 100, the sliding log
    /// 100, in every bin: an axis from 99 to 103 (on one from 0 to 115 the
    /// two lines were one). The boundary burst, from 0 to 200: from 0.
    #[test]
    fn counts_near_the_limit_get_an_axis_of_their_own() {
        assert_eq!(count_range(100, 102, 100), 99.0..103.0);
        let from_zero = count_range(0, 200, 100);
        assert!(from_zero.start == 0.0 && (from_zero.end - 224.0).abs() < 1e-9, "{from_zero:?}");
        assert_eq!(count_range(60, 100, 100), 50.0..110.0);
        // Half the top or less: from 0.
        assert_eq!(count_range(50, 100, 100).start, 0.0);
        assert_eq!(runs([0, 0, 5, 5, 5, 0].into_iter()), 3);
        assert_eq!(runs([0, 0, 0].into_iter()), 1);
        // Whole-number labels on the zoomed axis.
        let y = count_range(100, 102, 100);
        assert!(count_labels_in(y, 10) >= 4);
    }
}
