//! `which_limiter`: accuracy against cost, one point per limiter: peak/L
//! and over-admission under Poisson load (one load of the load sweep)
//! against the state the limiter holds per client key, so the trade-off
//! between what a limiter lets through and what it stores shows at a glance.

use std::ops::Range;

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

/// A part of a panel: its caption (the top part's), its value range,
/// whether it draws the state axis (the bottom part), its axis title and
/// how many ticks it has room for.
struct Part<'a> {
    caption: Option<&'a str>,
    y: Range<f64>,
    x_axis: bool,
    y_desc: Option<&'a str>,
    /// The most value ticks.
    ticks: usize,
}

/// How an axis is cut in two: the main range, where most values and the
/// reference 0 sit, and the far one, of a few values far from them (pacers
/// that admit 39 % less than the exact rule, against limiters within 3 %
/// of it), below or above the main one.
#[derive(Clone, Debug, PartialEq)]
struct Split {
    main: Range<f64>,
    far: Range<f64>,
    far_below: bool,
}

/// Whether `values` (over-admissions in %) call for a broken axis, and
/// where: when the largest gap between two values in order is at least
/// 60 % of their whole range, the side with more values (with the
/// reference 0 on a tie) keeps the main part, unless its own span, 0
/// included, would still take more than a quarter of the range anyway.
fn broken_axis(values: &[f64]) -> Option<Split> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let (&lo, &hi) = (v.first()?, v.last()?);
    let total = hi.max(0.0) - lo.min(0.0);
    if v.len() < 3 || total <= 0.0 {
        return None;
    }
    let (i, gap) =
        v.windows(2).enumerate().map(|(i, w)| (i, w[1] - w[0])).max_by(|a, b| a.1.total_cmp(&b.1))?;
    let (below, above) = v.split_at(i + 1);
    // 0 belongs with the side it is nearer to.
    let zero_above = 0.0 >= (below[below.len() - 1] + above[0]) / 2.0;
    let main_above = above.len() > below.len() || above.len() == below.len() && zero_above;
    let (main, far) = if main_above { (above, below) } else { (below, above) };
    let with_zero = |s: &[f64], has_zero: bool| {
        let (a, b) = (s[0], s[s.len() - 1]);
        if has_zero { (a.min(0.0), b.max(0.0)) } else { (a, b) }
    };
    let (m0, m1) = with_zero(main, zero_above == main_above);
    let (f0, f1) = with_zero(far, zero_above != main_above);
    if gap < 0.6 * total || m1 - m0 > 0.25 * total {
        return None;
    }
    // Room around the values, for the points' size.
    let pad = |a: f64, b: f64| ((b - a) * 0.15).max(0.01 * total).max(0.5);
    let (pm, pf) = (pad(m0, m1), pad(f0, f1));
    Some(Split { main: m0 - pm..m1 + pm, far: f0 - pf..f1 + pf, far_below: main_above })
}

/// An over-admission tick: `+2`, `0`, `-39.5`.
fn fmt_axis_percent(v: f64) -> String {
    let t = tick(&v);
    if v > 0.0 { format!("+{t}") } else { t }
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
            let values: Vec<f64> = pts.iter().filter_map(value).collect();
            let y_max = values.iter().copied().fold(0.0, f64::max);
            let y_min = values.iter().copied().fold(f64::MAX, f64::min);
            let caption = if k == 0 { "peak in one exact window" } else { "over-admission vs exact" };
            // The reference: peak = L, or over-admission 0.
            let ideal = if k == 0 { 1.0 } else { 0.0 };
            let part = |area: &DrawingArea<DB, Shift>, part: Part<'_>| -> Result<(Range<i32>, Range<i32>)> {
                let mut builder = ChartBuilder::on(area);
                builder.margin(12).x_label_area_size(if part.x_axis { 60 } else { 0 }).y_label_area_size(80);
                if let Some(c) = part.caption {
                    builder.caption(c, font(LABEL_SIZE));
                } else {
                    builder.margin_top(14);
                }
                if !part.x_axis {
                    builder.margin_bottom(14);
                }
                let mut chart =
                    builder.build_cartesian_2d((x_min..x_max).log_scale(), part.y.clone()).map_err(err)?;
                let x_fmt = |v: &f64| fmt_si_bytes(*v);
                let y_fmt = |v: &f64| fmt_axis_percent(*v);
                let mut mesh = chart.configure_mesh();
                mesh.axis_desc_style(font(LABEL_SIZE))
                    .label_style(font(TICK_SIZE))
                    .x_label_formatter(&x_fmt)
                    .y_labels(part.ticks)
                    .light_line_style(WHITE.mix(0.0));
                if k == 1 {
                    mesh.y_label_formatter(&y_fmt);
                }
                if part.x_axis {
                    mesh.x_desc("state per client key (bytes, log)");
                }
                if let Some(d) = part.y_desc {
                    mesh.y_desc(d);
                }
                mesh.draw().map_err(err)?;
                if part.y.contains(&ideal) {
                    let line = vec![(x_min, ideal), (x_max, ideal)];
                    chart
                        .draw_series(DashedLineSeries::new(line, 10, 6, BLACK.stroke_width(1)))
                        .map_err(err)?;
                }
                for (i, (l, p)) in r.limiters.iter().zip(&pts).enumerate() {
                    // Over-admission n/a: no point (the legend says n/a).
                    let Some(y) = value(p) else { continue };
                    if !part.y.contains(&y) {
                        continue;
                    }
                    let c = self.palette.colour(&l.spec);
                    let point = match covered(i, k) {
                        0 => Circle::new((p.0, y), 8, c.filled()),
                        n => Circle::new((p.0, y), 8 + 5 * n as i32, c.stroke_width(3)),
                    };
                    chart.draw_series(std::iter::once(point)).map_err(err)?;
                }
                Ok(chart.plotting_area().get_pixel_range())
            };
            let desc = if k == 0 { "peak / L" } else { "over-admission (%)" };
            let split = if k == 1 { broken_axis(&values) } else { None };
            let Some(split) = split else {
                let y = if k == 0 {
                    (y_min - 0.1).max(0.0)..(y_max * 1.08).max(1.2)
                } else {
                    y_min.min(0.0) * 1.15 - 0.5..(y_max * 1.15).max(1.0)
                };
                part(panel, Part { caption: Some(caption), y, x_axis: true, y_desc: Some(desc), ticks: 10 })?;
                continue;
            };
            // A broken axis: the values near the reference get most of the
            // height, a few far ones a band of their own past a break, so
            // that neither squeezes the other into a few pixels.
            let h = panel.dim_in_pixel().1;
            let far_h = h * 30 / 100;
            let (upper, lower) = if split.far_below {
                panel.split_vertically(h - far_h)
            } else {
                panel.split_vertically(far_h)
            };
            let ((top_y, top_ticks), (bottom_y, bottom_ticks)) = if split.far_below {
                ((split.main, 10), (split.far, 3))
            } else {
                ((split.far, 3), (split.main, 10))
            };
            let top = Part {
                caption: Some(caption),
                y: top_y,
                x_axis: false,
                y_desc: Some(desc),
                ticks: top_ticks,
            };
            let top = part(&upper, top)?;
            let bottom = Part { caption: None, y: bottom_y, x_axis: true, y_desc: None, ticks: bottom_ticks };
            let bottom = part(&lower, bottom)?;
            // Break marks where the axis is cut: the foot of the upper part
            // and the head of the lower one.
            let (bx, by) = panel.get_base_pixel();
            for (x, y) in [(top.0.start, top.1.end), (bottom.0.start, bottom.1.start)] {
                let (x, y) = (x - bx, y - by);
                for dy in [-3, 3] {
                    panel
                        .draw(&PathElement::new(
                            vec![(x - 8, y + dy + 3), (x + 8, y + dy - 3)],
                            BLACK.stroke_width(2),
                        ))
                        .map_err(err)?;
                }
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

    /// algorithms.toml at load 1.5: three pacers near -39 %, the rest from
    /// 0 to +2.9 %. The pacers get a band below a break; the others the
    /// main part, 0 in it, instead of the top 6 % of a -45..+3 axis.
    #[test]
    fn far_values_get_a_band_past_a_break() {
        let v = [1.9, 1.6, 0.0, -39.3, 2.9, -39.3, 2.9, 1.9, -37.3, 0.2, 1.2];
        let s = broken_axis(&v).unwrap();
        assert!(s.far_below);
        assert!(s.main.start < 0.0 && s.main.start > -1.0 && s.main.end > 2.9 && s.main.end < 4.0, "{s:?}");
        assert!(s.far.start < -39.3 && s.far.end > -37.3 && s.far.end < -35.0, "{s:?}");
        // Values that spread evenly, or few: one axis.
        assert_eq!(broken_axis(&[0.0, 1.0, 2.0, 3.0]), None);
        assert_eq!(broken_axis(&[0.0, -40.0]), None);
        assert_eq!(broken_axis(&[0.0, 0.0, 0.0]), None);
        // One far value above: its band is above.
        let s = broken_axis(&[0.0, 0.5, 1.0, 80.0]).unwrap();
        assert!(!s.far_below && s.far.contains(&80.0) && s.main.contains(&0.0), "{s:?}");
        // Far values and 0 together (the sliding log at 0, pacers at -40,
        // two limiters at +50): 0 stays with the values it is nearer to.
        assert_eq!(broken_axis(&[-40.0, -41.0, 0.0, 50.0, 51.0]), None);
        assert_eq!(fmt_axis_percent(2.0), "+2");
        assert_eq!(fmt_axis_percent(-39.5), "-39.5");
        assert_eq!(fmt_axis_percent(0.0), "0");
    }
}
