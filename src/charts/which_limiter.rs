//! `which_limiter`: accuracy against cost, one point per limiter: peak/L
//! and over-admission under Poisson load (one load of the load sweep)
//! against the state the limiter holds per client key, so the trade-off
//! between what a limiter lets through and what it stores shows at a glance.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::broken_axis::{Part, Pixels, broken_axis, draw_panel, fmt_axis_percent};
use super::*;
use ratesim::sweep::LoadPoint;
use ratesim::time::format_duration;

pub struct WhichLimiter<'a> {
    /// The scenario's name, which starts the title.
    pub scenario: &'a str,
    /// The run's colours.
    pub palette: &'a RunPalette,
    pub point: &'a LoadPoint,
}

/// (state bytes per key, peak/L, over-admission %) of each limiter; no
/// over-admission where the sliding log admitted nothing (n/a).
fn points(p: &LoadPoint) -> Vec<(f64, f64, Option<f64>)> {
    let keys = p.report.keys.max(1) as f64;
    p.report
        .limiters
        .iter()
        .map(|l| {
            let bytes = (l.state.bytes as f64 / keys).max(1.0);
            (bytes, l.peak_ratio(), l.over_admission().map(|v| v * 100.0))
        })
        .collect()
}

/// State in the binary units of the tables (`summary.md` writes
/// `8 (136 B)`, `1.1 KiB`): the legend's figure per key, as
/// [`ratesim::export::fmt_bytes`] writes it.
pub fn fmt_state(v: f64) -> String {
    ratesim::export::fmt_bytes(v.round() as u64)
}

/// A tick of the state axis, which ticks at powers of two: `16 B`,
/// `512 B`, `4 KiB`, in the tables' units (`4 KiB`, not `4.0 KiB`).
pub fn fmt_state_tick(v: f64) -> String {
    fmt_state(v).replace(".0 ", " ")
}

/// The most ticks the state axis has: at every power of two it would
/// crowd, so it ticks at every second, third ... one (4, 16, 64 B ...).
const STATE_TICKS: usize = 5;

/// Over-admission in percent for the legend: one decimal, more where one
/// would write a value that is not 0 as 0 (`+0.031%`, not `+0.0%`).
pub fn fmt_over(v: f64) -> String {
    if v == 0.0 {
        return "0%".to_string();
    }
    // Two significant digits below 0.1 %.
    let d = if v.abs() >= 0.1 { 1 } else { (1 - v.abs().log10().floor() as i32).max(1) as usize };
    format!("{v:+.d$}%")
}

/// The radius each point is drawn with, in drawing order, from its place
/// in pixels (`None`: not drawn): `r`, a filled dot, for a point no later
/// one covers; for a point that a later one covers, wholly or in part
/// (closer than a dot's width), a ring around its own place wide enough
/// to hold the later one's mark with a gap: several points on one place
/// nest, a ring each (`weighted window` 3 px under `weighted window,
/// floor`, the fixed window under the timer bucket). Rings only where a
/// point is covered: points apart stay dots.
fn ring_radii(points: &[Option<(i32, i32)>], r: i32) -> Vec<i32> {
    let mut radii = vec![r; points.len()];
    for i in (0..points.len()).rev() {
        let Some((x, y)) = points[i] else { continue };
        for j in i + 1..points.len() {
            let Some((xj, yj)) = points[j] else { continue };
            let d = f64::from(x - xj).hypot(f64::from(y - yj));
            if d < f64::from(2 * r) {
                radii[i] = radii[i].max(d.ceil() as i32 + radii[j] + 5);
            }
        }
    }
    radii
}

impl Chart for WhichLimiter<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = &self.point.report;
        // The points are the load sweep's, not the scenario's own run.
        let title = format!(
            "{}: accuracy vs state, load sweep at {} x L, L = {} per {} ({} s Poisson)",
            self.scenario,
            ratesim::export::fmt_ratio(self.point.load),
            r.limit.requests,
            format_duration(r.limit.window),
            r.end
        );
        let area = titled(root, &title)?;
        let pts = points(self.point);
        let mut entries = vec![LegendEntry::new("state / key, peak/L, over-adm.:", BLACK, Mark::Heading)];
        for (l, p) in r.limiters.iter().zip(&pts) {
            entries.push(LegendEntry::new(
                format!(
                    "{}: {}, {}, {}",
                    l.spec.short_name(),
                    fmt_state(p.0),
                    ratesim::export::fmt_ratio_fixed(p.1, 2),
                    p.2.map_or("n/a".to_string(), fmt_over)
                ),
                self.palette.colour(&l.spec),
                self.palette.dot_mark(&l.spec),
            ));
        }
        let (plots, legend) = with_legend(&area);
        let panels = plots.split_evenly((1, 2));
        let x_max = pts.iter().map(|p| p.0).fold(16.0, f64::max) * 3.0;
        let x_min = pts.iter().map(|p| p.0).fold(f64::MAX, f64::min).min(x_max) / 3.0;
        // The points drawn as rings, in either panel (the legend shows them so).
        let mut ringed = vec![false; pts.len()];
        for (k, panel) in panels.iter().enumerate() {
            let value = |p: &(f64, f64, Option<f64>)| if k == 0 { Some(p.1) } else { p.2 };
            let values: Vec<f64> = pts.iter().filter_map(value).collect();
            let y_max = values.iter().copied().fold(0.0, f64::max);
            let y_min = values.iter().copied().fold(f64::MAX, f64::min);
            let caption = if k == 0 { "peak in one exact window" } else { "over-admission vs exact" };
            let desc = if k == 0 { "peak / L" } else { "over-admission (%)" };
            // The reference: peak = L, or over-admission 0.
            let ideal = if k == 0 { 1.0 } else { 0.0 };
            let mut part = |area: &DrawingArea<DB, Shift>, part: &Part| -> Result<Pixels> {
                let mut builder = ChartBuilder::on(area);
                builder.margin(12).x_label_area_size(if part.bottom { 60 } else { 0 }).y_label_area_size(80);
                if part.top {
                    builder.caption(caption, font(LABEL_SIZE));
                } else {
                    builder.margin_top(14);
                }
                if !part.bottom {
                    builder.margin_bottom(14);
                }
                let mut chart = builder
                    .build_cartesian_2d((x_min..x_max).log_scale().base(2.0), part.y.clone())
                    .map_err(err)?;
                let height = chart.plotting_area().dim_in_pixel().1;
                let x_fmt = |v: &f64| fmt_state_tick(*v);
                // No tick label at a break mark (peak/L's at the mark at
                // its foot too, written as plotters writes it).
                let y_fmt = |v: &f64| {
                    match part.clear_of_break(*v, height) {
                    false => String::new(),
                    true if k == 1 => fmt_axis_percent(*v),
                    true => <plotters::coord::types::RangedCoordf64 as plotters::coord::ranged1d::ValueFormatter<f64>>::format(v),
                }
                };
                let mut mesh = chart.configure_mesh();
                mesh.axis_desc_style(font(LABEL_SIZE))
                    .label_style(font(TICK_SIZE))
                    .x_label_formatter(&x_fmt)
                    .x_labels(STATE_TICKS)
                    .y_labels(part.ticks)
                    .y_label_formatter(&y_fmt)
                    .light_line_style(WHITE.mix(0.0));
                if part.bottom {
                    mesh.x_desc("state per client key (bytes, log)");
                }
                if part.top {
                    mesh.y_desc(desc);
                }
                mesh.draw().map_err(err)?;
                if part.y.contains(&ideal) {
                    let line = vec![(x_min, ideal), (x_max, ideal)];
                    chart
                        .draw_series(DashedLineSeries::new(line, 10, 6, BLACK.stroke_width(1)))
                        .map_err(err)?;
                }
                // Over-admission n/a: no point (the legend says n/a).
                let at: Vec<Option<(f64, f64)>> =
                    pts.iter().map(|p| value(p).filter(|y| part.y.contains(y)).map(|y| (p.0, y))).collect();
                let px: Vec<Option<(i32, i32)>> =
                    at.iter().map(|p| p.map(|p| chart.backend_coord(&p))).collect();
                let radii = ring_radii(&px, 8);
                for (i, (l, p)) in r.limiters.iter().zip(&at).enumerate() {
                    let Some(p) = *p else { continue };
                    let c = self.palette.colour(&l.spec);
                    let style = if radii[i] == 8 {
                        c.filled()
                    } else {
                        ringed[i] = true;
                        c.stroke_width(3)
                    };
                    draw_marker(&mut chart, p, radii[i], style, self.palette.pattern(&l.spec))?;
                }
                Ok(chart.plotting_area().get_pixel_range())
            };
            let split = if k == 1 { broken_axis(&values) } else { None };
            let y = if k == 0 {
                (y_min - 0.1).max(0.0)..(y_max * 1.08).max(1.2)
            } else {
                y_min.min(0.0) * 1.15 - 0.5..(y_max * 1.15).max(1.0)
            };
            draw_panel(panel, y, split.as_ref(), &mut part)?;
        }
        for ((e, ringed), l) in entries[1..].iter_mut().zip(ringed).zip(&r.limiters) {
            if ringed {
                e.mark = self.palette.ring_mark(&l.spec);
            }
        }
        draw_legend(&legend, &entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legend_numbers_show_what_is_not_zero_in_one_unit() {
        // N = 1000 at load 1.5 over-admits 0.0306 %.
        assert_eq!(fmt_over(0.0306), "+0.031%");
        assert_eq!(fmt_over(1.916), "+1.9%");
        assert_eq!(fmt_over(-39.2988), "-39.3%");
        assert_eq!(fmt_over(0.0), "0%");
        assert_eq!(fmt_over(0.1), "+0.1%");
        assert_eq!(fmt_over(0.0004), "+0.00040%");
    }

    /// The state per key in the tables' binary units (`summary.md`: 100
    /// slots hold `1.1 KiB`, where the chart said `1.14 kB`), on the axis
    /// at powers of two, written whole.
    #[test]
    fn state_is_in_the_tables_units() {
        assert_eq!(fmt_state(1_140.0), "1.1 KiB");
        assert_eq!(fmt_state(1_140.0), ratesim::export::fmt_bytes(1_140));
        assert_eq!(fmt_state(168.0), "168 B");
        assert_eq!(fmt_state(16_008.0), "15.6 KiB");
        assert_eq!(fmt_state(7.6), "8 B");
        // The ticks of algorithms' axis (8 B to 800 B, padded to 2.7 B to
        // 2.4 KiB) and of error_vs_slots' (16 B to 15.6 KiB).
        use plotters::coord::ranged1d::Ranged;
        for ((lo, hi), want) in [
            ((8.0 / 3.0, 2400.0), vec!["4 B", "16 B", "64 B", "256 B", "1 KiB"]),
            ((16.0 / 3.0, 48_024.0), vec!["8 B", "64 B", "512 B", "4 KiB", "32 KiB"]),
        ] {
            let axis: LogCoord<f64> = (lo..hi).log_scale().base(2.0).into();
            let ticks: Vec<String> =
                axis.key_points(STATE_TICKS).iter().map(|v| fmt_state_tick(*v)).collect();
            assert_eq!(ticks, want);
        }
    }

    /// The left panel of `algorithms`: the weighted window 3 px under the
    /// floor one and the token bucket of 1 7 px under nginx get rings that
    /// hold the later dot; the timer bucket on the fixed window, one ring;
    /// points apart stay dots.
    #[test]
    fn points_covered_in_part_are_rings() {
        let radii =
            ring_radii(&[Some((100, 100)), Some((100, 103)), Some((200, 100)), None, Some((200, 93))], 8);
        assert_eq!(radii, [16, 8, 20, 8, 8]);
        // Exactly on one place: 8 + 5 per point on top, as before.
        assert_eq!(ring_radii(&[Some((5, 5)), Some((5, 5)), Some((5, 5))], 8), [18, 13, 8]);
        // A dot's width apart or more: dots.
        assert_eq!(ring_radii(&[Some((0, 0)), Some((16, 0))], 8), [8, 8]);
    }
}
