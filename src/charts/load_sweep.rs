//! `load_sweep`: over-admission (and peak/L) against the load factor, one
//! line per limiter.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::broken_axis::{Part, Pixels, broken_axis, draw_panel, fmt_axis_percent};
use super::*;
use ratesim::sweep::LoadPoint;
use ratesim::time::format_duration;

pub struct LoadSweep<'a> {
    /// The scenario's name, which starts the title.
    pub scenario: &'a str,
    /// The run's colours.
    pub palette: &'a RunPalette,
    pub points: &'a [LoadPoint],
}

impl Chart for LoadSweep<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let Some(first) = self.points.first() else { return Ok(()) };
        let limit = first.report.limit;
        let title = format!(
            "{}: Poisson load sweep, L = {} per {}, {} s per load",
            self.scenario,
            limit.requests,
            format_duration(limit.window),
            first.report.end
        );
        let area = titled(root, &title)?;
        let n = first.report.limiters.len();
        // Over-admission is n/a where the sliding log admitted nothing:
        // no point there, rather than a 0 that was not measured.
        let value = |k: usize, p: &LoadPoint, i: usize| -> Option<f64> {
            let l = &p.report.limiters[i];
            if k == 0 { l.over_admission().map(|v| v * 100.0) } else { Some(l.peak_ratio()) }
        };
        // Limiters that decide alike (the GCRA and the token bucket when L
        // divides W) draw one line: the covered one is a border around the
        // other, in each panel.
        let same =
            |k: usize, a: usize, b: usize| self.points.iter().all(|p| value(k, p, a) == value(k, p, b));
        let mut entries: Vec<LegendEntry> = first
            .report
            .limiters
            .iter()
            .map(|l| {
                LegendEntry::new(
                    l.spec.short_name(),
                    self.palette.colour(&l.spec),
                    self.palette.line_mark(&l.spec),
                )
            })
            .collect();
        let equal = |a: usize, b: usize| (same(0, a, b) || same(1, a, b)).then_some(0.0);
        entries.extend(nested_note(n, equal, "values", |_| String::new()));
        let (plots, legend) = with_legend(&area);
        let panels = plots.split_evenly((1, 2));
        let (x_min, x_max) = x_range(self.points.iter().map(|p| p.load));
        for (k, panel) in panels.iter().enumerate() {
            let value = |p: &LoadPoint, i: usize| value(k, p, i);
            let values = || self.points.iter().flat_map(|p| (0..n).filter_map(move |i| value(p, i)));
            let y_max = values().fold(0.0, f64::max);
            let y_min = values().fold(f64::MAX, f64::min);
            let (y0, y1) = if k == 0 {
                // Below 0 only for a limiter stricter than the exact rule
                // (a bucket of one token): then down to it, not cut off.
                let low = if y_min < 0.0 { y_min - (y_max - y_min) * 0.05 } else { 0.0 };
                (low, (y_max * 1.15).max(0.5))
            } else {
                ((y_min - 0.1).max(0.0), (y_max * 1.05).max(1.2))
            };
            let widths = covered_widths(
                &first.report.limiters.iter().map(|l| line_width(&l.spec)).collect::<Vec<_>>(),
                |a, b| same(k, a, b),
            );
            let lines: Vec<Vec<(f64, f64)>> =
                (0..n).map(|i| by_load(self.points.iter().map(|p| (p.load, value(p, i))))).collect();
            // Over-admission: a few lines far from the rest (the pacers at
            // -46 to -22 % against the others within -1 to +9 %) get a band
            // of their own past a break, as in `which_limiter`.
            let split = if k == 0 { broken_axis(&values().collect::<Vec<_>>()) } else { None };
            let ys: Vec<Vec<f64>> = lines.iter().map(|l| l.iter().map(|p| p.1).collect()).collect();
            let split = split.filter(|s| s.separates(ys.iter().map(|v| &v[..])));
            let mut part = |area: &DrawingArea<DB, Shift>, part: &Part| -> Result<Pixels> {
                let mut builder = ChartBuilder::on(area);
                builder.margin(12).x_label_area_size(if part.bottom { 60 } else { 0 }).y_label_area_size(80);
                if part.top {
                    builder.caption(
                        if k == 0 { "over-admission vs exact" } else { "peak in one exact window" },
                        font(LABEL_SIZE),
                    );
                } else {
                    builder.margin_top(14);
                }
                if !part.bottom {
                    builder.margin_bottom(14);
                }
                let mut chart = builder.build_cartesian_2d(x_min..x_max, part.y.clone()).map_err(err)?;
                let height = chart.plotting_area().dim_in_pixel().1;
                // No tick label at a break mark (peak/L's at the mark at
                // its foot too, written as plotters writes it).
                let y_fmt = |v: &f64| {
                    match part.clear_of_break(*v, height) {
                    false => String::new(),
                    true if split.is_some() => fmt_axis_percent(*v),
                    true => <plotters::coord::types::RangedCoordf64 as plotters::coord::ranged1d::ValueFormatter<f64>>::format(v),
                }
                };
                let mut mesh = chart.configure_mesh();
                mesh.axis_desc_style(font(LABEL_SIZE))
                    .label_style(font(TICK_SIZE))
                    .x_labels(X_LABELS)
                    .x_label_formatter(&tick)
                    .y_labels(part.ticks)
                    .y_label_formatter(&y_fmt)
                    .light_line_style(WHITE.mix(0.0));
                if part.bottom {
                    mesh.x_desc("load factor (× L / W)");
                }
                if part.top {
                    mesh.y_desc(if k == 0 { "over-admission (%)" } else { "peak / L" });
                }
                mesh.draw().map_err(err)?;
                for ((l, &w), pts) in first.report.limiters.iter().zip(&widths).zip(&lines) {
                    if split.is_some() && !pts.iter().all(|p| part.y.contains(&p.1)) {
                        continue;
                    }
                    let (c, pattern) = (self.palette.colour(&l.spec), self.palette.pattern(&l.spec));
                    draw_line(&mut chart, pts.clone(), c.stroke_width(w), pattern)?;
                    for &p in pts {
                        draw_marker(&mut chart, p, 5, c.filled(), pattern)?;
                    }
                }
                Ok(chart.plotting_area().get_pixel_range())
            };
            draw_panel(panel, y0..y1, split.as_ref(), &mut part)?;
        }
        draw_legend(&legend, &entries)?;
        Ok(())
    }
}

/// The most load labels a panel shows: more run together ("1.361.381.4")
/// in a panel under half the chart wide.
const X_LABELS: usize = 6;

/// The load axis: from 0.9 times the least load to 1.05 times the greatest;
/// for a single load (or loads all alike) half of it either side, since a
/// span of 15 % of one load has only crowded ticks.
fn x_range(loads: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = loads.fold((f64::MAX, 0.0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
    if lo > hi {
        return (0.0, 1.0);
    }
    if hi - lo <= hi * 0.2 {
        let half = if hi > 0.0 { hi * 0.5 } else { 1.0 };
        return ((lo - half).max(0.0), hi + half);
    }
    (lo * 0.9, hi * 1.05)
}

/// A line's points in load order (a scenario may list its loads in any
/// order, and a line drawn in that order zig-zags), without the loads that
/// have no value.
fn by_load(points: impl Iterator<Item = (f64, Option<f64>)>) -> Vec<(f64, f64)> {
    let mut pts: Vec<(f64, f64)> = points.filter_map(|(x, y)| Some((x, y?))).collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    pts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_drawn_in_load_order_without_the_missing_ones() {
        let pts = by_load(
            [(3.0, Some(0.3)), (0.5, Some(0.05)), (1.0, None), (1.0, Some(0.1)), (2.0, None)].into_iter(),
        );
        assert_eq!(pts, vec![(0.5, 0.05), (1.0, 0.1), (3.0, 0.3)]);
        assert!(by_load([(1.0, None)].into_iter()).is_empty());
    }

    /// The axis of one load spans it widely enough for few, distinct ticks
    /// (it was 1.35 to 1.575 for load 1.5: "1.361.381.41.42..."); several
    /// loads keep the axis they always had.
    #[test]
    fn one_load_gets_an_axis_with_readable_ticks() {
        use plotters::coord::ranged1d::Ranged;
        use plotters::coord::types::RangedCoordf64;
        for loads in [vec![1.5], vec![1.0], vec![0.001], vec![1000.0], vec![1.5, 1.51], vec![0.5, 3.0]] {
            let (x0, x1) = x_range(loads.iter().copied());
            assert!(x0 < x1 && loads.iter().all(|l| (x0..=x1).contains(l)), "{loads:?}: {x0}..{x1}");
            let ticks: Vec<String> =
                RangedCoordf64::from(x0..x1).key_points(X_LABELS).iter().map(tick).collect();
            assert!((2..=X_LABELS).contains(&ticks.len()), "{loads:?}: {ticks:?}");
            let mut distinct = ticks.clone();
            distinct.dedup();
            assert_eq!(distinct, ticks, "{loads:?}");
            assert!(ticks.iter().all(|t| t.len() <= 6), "{loads:?}: {ticks:?}");
        }
        assert_eq!(x_range([1.0, 3.0, 0.5, 2.0].into_iter()), (0.5 * 0.9, 3.0 * 1.05));
    }
}
