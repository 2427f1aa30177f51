//! `time_to_success`: for each limiter, the share of **all** its logical
//! requests that succeeded with a time to success (first attempt to
//! admitted attempt) of at most x, x on a log scale. A request that gave up,
//! or was still waiting when the run ended, never succeeds: each curve
//! levels off at its succeeded share, which the legend gives, so a limiter
//! that loses requests cannot draw the best curve on the few that got
//! through. Requests admitted on their first attempt have time 0, which a
//! log axis cannot place: the axis starts with a tick of its own for 0, set
//! apart from the first decade (at least half a decade to its left), and
//! each curve starts there at its share (a dot marks it).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::RunReport;
use ratesim::clients::ClientReport;
use ratesim::export::markdown::fmt_seconds;
use ratesim::time::Nanos;

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

/// The time axis: 0 at the left edge, then a log scale over whole decades
/// from `10^lo` to `10^hi` seconds. 0 sits `gap` decades left of `10^lo`,
/// so that neither the first positive time nor its tick label can merge
/// into the time-0 dot and its label. Ticks are 0 and the powers of ten
/// (thinned to as many as there is room for), light grid lines also at
/// 2..9 times them.
#[derive(Clone, Debug)]
struct TimeAxis {
    lo: i32,
    hi: i32,
    gap: f64,
}

impl TimeAxis {
    fn new(lo: i32, hi: i32) -> TimeAxis {
        let hi = hi.max(lo + 1);
        TimeAxis { lo, hi, gap: (0.1 * f64::from(hi - lo)).max(0.5) }
    }

    /// Where `v` seconds sits, in decades from the left edge.
    fn position(&self, v: f64) -> f64 {
        let u = if v > 0.0 { v.log10() } else { f64::from(self.lo) - self.gap };
        u - (f64::from(self.lo) - self.gap)
    }

    fn span(&self) -> f64 {
        f64::from(self.hi - self.lo) + self.gap
    }

    /// The powers of ten labelled, every `step`-th, so that no more than
    /// `most` labels (0 among them) share the axis.
    fn decades(&self, most: usize) -> Vec<f64> {
        let n = (self.hi - self.lo + 1) as usize;
        let step = n.div_ceil(most.saturating_sub(1).max(1)).max(1);
        (self.lo..=self.hi).step_by(step).map(|k| 10f64.powi(k)).collect()
    }
}

impl plotters::coord::ranged1d::Ranged for TimeAxis {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let f = self.position(*value) / self.span();
        limit.0 + (f * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        let mut points = vec![0.0];
        points.extend(self.decades(hint.max_num_points()));
        if hint.weight().allow_light_points() {
            for k in self.lo..self.hi {
                points.extend((2..10).map(|m| f64::from(m) * 10f64.powi(k)));
            }
        }
        points
    }

    fn range(&self) -> std::ops::Range<f64> {
        0.0..10f64.powi(self.hi)
    }
}

/// A time in seconds as a short tick label: `0`, `1 ms`, `100 ms`, `10 s`.
fn time_tick(v: &f64) -> String {
    if *v == 0.0 {
        "0".to_string()
    } else if *v >= 1.0 {
        format!("{} s", tick(v))
    } else if *v >= 1e-3 {
        format!("{} ms", tick(&(v * 1e3)))
    } else if *v >= 1e-6 {
        format!("{} µs", tick(&(v * 1e6)))
    } else {
        format!("{} ns", tick(&(v * 1e9)))
    }
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
        let axis = TimeAxis::new(x0.log10().round() as i32, x1.log10().round() as i32);
        let x1 = axis.range().end;
        let area = titled(root, &format!("{}: time to success, share of all requests", self.scenario))?;
        // Each lane's step curve over all logical requests: flat at the
        // first-attempt share from the left edge, rising at each recorded
        // time, level at the succeeded share to the right edge.
        let curves: Vec<Option<Vec<(f64, f64)>>> = cdfs
            .iter()
            .map(|(l, cdf)| {
                let (at_once, points) = cdf.as_ref()?;
                let scale = l.clients.as_ref().and_then(succeeded_share).unwrap_or(0.0) * 100.0;
                let mut pts = vec![(0.0, at_once * scale)];
                let mut y = at_once * scale;
                for (x, share) in points {
                    let x = x.as_secs_f64();
                    pts.push((x, y));
                    y = share * scale;
                    pts.push((x, y));
                }
                pts.push((x1, y));
                Some(pts)
            })
            .collect();
        let mut entries = Vec::new();
        for (l, _) in &cdfs {
            entries.push(LegendEntry::new(
                l.spec.short_name(),
                self.palette.colour(&l.spec),
                self.palette.line_mark(&l.spec),
            ));
            for line in legend_lines(l.clients.as_ref()) {
                entries.push(LegendEntry::new(format!("      {line}"), BLACK, Mark::Heading));
            }
        }
        // Lanes that decide alike draw the same curve (retry_after_rounding's
        // ceil_seconds and redis_cell headers): the one drawn first is
        // wider, a border around the other, as in window_count.
        let equal = |a: usize, b: usize| curves[a].is_some() && curves[a] == curves[b];
        entries.extend(nested_note(
            cdfs.len(),
            |a, b| equal(a, b).then_some(0.0),
            "curves",
            |g| format!("{g}"),
        ));
        let (plot, legend) = with_legend(&area);
        let mut chart = ChartBuilder::on(&plot)
            .margin(10)
            .margin_right(30)
            .x_label_area_size(60)
            .y_label_area_size(90)
            .build_cartesian_2d(axis, 0f64..105f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_labels(8)
            .x_desc("time to success x (log scale from the first tick after 0)")
            .y_desc("succeeded with time ≤ x (% of all)")
            .axis_desc_style(font(LABEL_SIZE))
            .label_style(font(TICK_SIZE))
            .x_label_formatter(&time_tick)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(err)?;
        // One width for every curve (a wider one would read as emphasis);
        // equal curves nest.
        const WIDTH: u32 = 3;
        let order: Vec<usize> = (0..cdfs.len()).collect();
        let widths = covered_widths(&vec![WIDTH; order.len()], |a, b| equal(order[a], order[b]));
        for (&i, &w) in order.iter().zip(&widths) {
            let Some(pts) = &curves[i] else { continue };
            let spec = &cdfs[i].0.spec;
            let (c, pattern) = (self.palette.colour(spec), self.palette.pattern(spec));
            let start = pts[0];
            draw_line(&mut chart, pts.clone(), c.stroke_width(w), pattern)?;
            // The dot at 0 grows with the line, so a nested one shows too.
            let dot = 6 + (w - WIDTH) as i32;
            draw_marker(&mut chart, start, dot, c.filled(), pattern)?;
        }
        draw_legend(&legend, &entries)
    }
}

/// The share of a lane's logical requests that succeeded.
fn succeeded_share(k: &ClientReport) -> Option<f64> {
    (k.logical > 0).then(|| k.succeeded as f64 / k.logical as f64)
}

/// The median time to success over all logical requests: `None` when
/// fewer than half succeeded (the median request did not, within the run).
fn median_of_all(k: &ClientReport) -> Option<Nanos> {
    let share = succeeded_share(k)?;
    if share < 0.5 {
        return None;
    }
    k.tts_quantile(0.5 / share)
}

/// A lane's legend lines under its name: what became of its requests (the
/// share that succeeded, gave up, was unfinished), then the median request's
/// time to success, the median of **all** requests (those that never
/// succeeded count as never), which is not the table's "time to success
/// p50", over the successes only (retry_storm's sliding log: 1.39 s here,
/// 0 s there): the legend says "of all requests".
fn legend_lines(k: Option<&ClientReport>) -> Vec<String> {
    let Some(k) = k.filter(|k| k.succeeded > 0) else { return vec!["no request succeeded".to_string()] };
    let share = succeeded_share(k).unwrap_or(0.0);
    let median = median_of_all(k).map_or("not reached".to_string(), fmt_seconds);
    let of_all = |n: u64| fmt_share(n as f64 / k.logical as f64);
    let mut shares = vec![format!("{} succeeded", fmt_share(share))];
    if k.gave_up > 0 {
        shares.push(format!("{} gave up", of_all(k.gave_up)));
    }
    if k.unfinished > 0 {
        shares.push(format!("{} unfinished", of_all(k.unfinished)));
    }
    vec![shares.join(", "), format!("median of all requests: {median}")]
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
        assert_eq!(time_tick(&0.0), "0");
    }

    /// retry_after_rounding's `floor_seconds` lane: 1000 of 1434 succeeded,
    /// all on their first attempt, 434 gave up. The legend says 70 %, and
    /// the median request (the 717th) is one of the successes: 0 s. Under
    /// half succeeded: the median is not reached.
    #[test]
    fn the_legend_gives_the_succeeded_share() {
        // The library records successes itself; here, by hand.
        let record = |k: &mut ClientReport, t: Nanos| {
            k.succeeded += 1;
            k.time_to_success.record(t.get()).unwrap();
            k.tts_max = k.tts_max.max(t);
        };
        let mut k = ClientReport::new();
        k.logical = 1434;
        k.gave_up = 434;
        for _ in 0..1000 {
            record(&mut k, Nanos::ZERO);
        }
        assert_eq!(legend_lines(Some(&k)), ["70 % succeeded, 30 % gave up", "median of all requests: 0 s"]);
        let mut k = ClientReport::new();
        k.logical = 100;
        k.gave_up = 60;
        k.unfinished = 10;
        for ms in 0..30 {
            record(&mut k, Nanos::from_millis(ms));
        }
        assert_eq!(median_of_all(&k), None);
        assert_eq!(
            legend_lines(Some(&k)),
            ["30 % succeeded, 60 % gave up, 10 % unfinished", "median of all requests: not reached"]
        );
        // 80 of 100 within 0..79 ms: the 50th request of all took 49 ms.
        let mut k = ClientReport::new();
        k.logical = 100;
        k.unfinished = 20;
        for ms in 0..80 {
            record(&mut k, Nanos::from_millis(ms));
        }
        let m = median_of_all(&k).unwrap();
        assert!(m >= Nanos::from_millis(49) && m.get() <= 49_100_000, "{m}");
        assert_eq!(legend_lines(None), ["no request succeeded"]);
    }

    /// A fixed backoff of 100 ms: the smallest time is exactly the power of
    /// ten the axis starts at. Time 0 has its own tick half a decade to the
    /// left of 100 ms (the first time once sat on the edge that stood for
    /// 0, unlabelled), and the ticks are 0 and the decades, never the
    /// 90 ns and 100 ns that were written into one another.
    #[test]
    fn time_zero_has_a_tick_of_its_own() {
        use plotters::coord::ranged1d::{BoldPoints, Ranged};
        let (x0, x1) = decades(0.1, 4.4);
        let axis = TimeAxis::new(x0.log10().round() as i32, x1.log10().round() as i32);
        let px = |v: f64| axis.map(&v, (0, 700));
        // 0 .. 100 ms is half a decade of 2.5: 140 px.
        assert_eq!((px(0.0), px(0.1), px(10.0)), (0, 140, 700));
        let ticks: Vec<String> = axis.key_points(BoldPoints(8)).iter().map(time_tick).collect();
        assert_eq!(ticks, ["0", "100 ms", "1 s", "10 s"]);
        // Nanoseconds over one decade: 0, 10 ns and 100 ns only.
        let axis = TimeAxis::new(-8, -7);
        let ticks: Vec<String> = axis.key_points(BoldPoints(8)).iter().map(time_tick).collect();
        assert_eq!(ticks, ["0", "10 ns", "100 ns"]);
        // Many decades: thinned, labels at least a label's width apart.
        let axis = TimeAxis::new(-9, 3);
        let points = axis.key_points(BoldPoints(8));
        assert!(points.len() <= 8, "{points:?}");
        let xs: Vec<i32> = points.iter().map(|v| axis.map(v, (0, 700))).collect();
        assert!(xs.windows(2).all(|w| w[1] - w[0] >= 60), "{xs:?}");
    }
}
