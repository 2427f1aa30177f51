//! `which_limiter`: accuracy against cost, one point per limiter: peak/L
//! and over-admission under Poisson load (one load of the load sweep)
//! against the state the limiter holds per client key, so the trade-off
//! between what a limiter lets through and what it stores shows at a glance.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::sweep::LoadPoint;
use ratesim::time::format_duration;

pub struct WhichLimiter<'a> {
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

/// Bytes in decimal units, the same on the axis and in the legend: `16 B`,
/// `168 B`, `1 kB`, `16 kB`, three significant digits at most (a log axis
/// ticks at powers of ten, which binary units wrote `1000 B`, `9.8 KiB`).
pub fn fmt_si_bytes(v: f64) -> String {
    const UNITS: [(f64, &str); 4] = [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")];
    let Some((div, unit)) = UNITS.iter().copied().find(|(d, _)| v >= *d) else {
        return format!("{v:.0} B");
    };
    let x = v / div;
    let d = if x >= 100.0 {
        0
    } else if x >= 10.0 {
        1
    } else {
        2
    };
    let s = format!("{x:.d$}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    format!("{s} {unit}")
}

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

impl Chart for WhichLimiter<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = &self.point.report;
        let title = format!(
            "Which limiter? Accuracy vs state (Poisson load {}, L = {} per {})",
            ratesim::export::fmt_ratio(self.point.load),
            r.limit.requests,
            format_duration(r.limit.window)
        );
        let area = titled(root, &title)?;
        let pts = points(self.point);
        // A point another limiter's point covers exactly (limiters that
        // decide alike, such as the fixed window and the timer bucket at
        // their defaults) is drawn as a ring around it, one ring wider per
        // point on top.
        let covered = |i: usize, k: usize| -> usize {
            let value = |p: &(f64, f64, Option<f64>)| if k == 0 { Some(p.1) } else { p.2 };
            pts[i + 1..]
                .iter()
                .filter(|q| q.0 == pts[i].0 && value(q).is_some() && value(q) == value(&pts[i]))
                .count()
        };
        let mut entries = vec![LegendEntry::new("state / key, peak/L, over-adm.:", BLACK, Mark::Heading)];
        for (i, (l, p)) in r.limiters.iter().zip(&pts).enumerate() {
            let mark = if covered(i, 0) + covered(i, 1) > 0 { Mark::Ring } else { Mark::Dot };
            entries.push(LegendEntry::new(
                format!(
                    "{}: {}, {}, {}",
                    short_label(&l.spec),
                    fmt_si_bytes(p.0),
                    ratesim::export::fmt_ratio_fixed(p.1, 2),
                    p.2.map_or("n/a".to_string(), fmt_over)
                ),
                self.palette.colour(&l.spec),
                mark,
            ));
        }
        let (plots, legend) = with_legend_for(&area, &entries);
        let panels = plots.split_evenly((1, 2));
        let x_max = pts.iter().map(|p| p.0).fold(16.0, f64::max) * 3.0;
        let x_min = pts.iter().map(|p| p.0).fold(f64::MAX, f64::min).min(x_max) / 3.0;
        for (k, panel) in panels.iter().enumerate() {
            let value = |p: &(f64, f64, Option<f64>)| if k == 0 { Some(p.1) } else { p.2 };
            let y_max = pts.iter().filter_map(value).fold(0.0, f64::max);
            let y_min = pts.iter().filter_map(value).fold(f64::MAX, f64::min);
            let (y0, y1) = if k == 0 {
                ((y_min - 0.1).max(0.0), (y_max * 1.08).max(1.2))
            } else {
                (y_min.min(0.0) * 1.15 - 0.5, (y_max * 1.15).max(1.0))
            };
            let mut chart = ChartBuilder::on(panel)
                .margin(12)
                .caption(
                    if k == 0 { "peak in one exact window" } else { "over-admission vs exact" },
                    font(LABEL_SIZE),
                )
                .x_label_area_size(60)
                .y_label_area_size(80)
                .build_cartesian_2d((x_min..x_max).log_scale(), y0..y1)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("state per client key (bytes, log)")
                .y_desc(if k == 0 { "peak / L" } else { "over-admission (%)" })
                .axis_desc_style(font(LABEL_SIZE))
                .label_style(font(TICK_SIZE))
                .x_label_formatter(&|v| fmt_si_bytes(*v))
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(err)?;
            if k == 0 {
                let ideal = vec![(x_min, 1.0), (x_max, 1.0)];
                chart.draw_series(DashedLineSeries::new(ideal, 10, 6, BLACK.stroke_width(1))).map_err(err)?;
            }
            for (i, (l, p)) in r.limiters.iter().zip(&pts).enumerate() {
                // Over-admission n/a: no point (the legend says n/a).
                let Some(y) = value(p) else { continue };
                let c = self.palette.colour(&l.spec);
                let point = match covered(i, k) {
                    0 => Circle::new((p.0, y), 8, c.filled()),
                    n => Circle::new((p.0, y), 8 + 5 * n as i32, c.stroke_width(3)),
                };
                chart.draw_series(std::iter::once(point)).map_err(err)?;
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
        // The axis ticks of a log axis and the legend, in one unit.
        let ticks: Vec<String> =
            [10.0, 100.0, 1000.0, 10_000.0, 100_000.0].iter().map(|v| fmt_si_bytes(*v)).collect();
        assert_eq!(ticks, ["10 B", "100 B", "1 kB", "10 kB", "100 kB"]);
        assert_eq!(fmt_si_bytes(16_008.0), "16 kB");
        assert_eq!(fmt_si_bytes(168.0), "168 B");
        assert_eq!(fmt_si_bytes(1_536.0), "1.54 kB");
    }
}
