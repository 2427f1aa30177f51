//! `shaping_timeline`: per limiter, the requests offered per bin (grey)
//! against those that reached the backend per bin (its colour): admitted at
//! once, plus delayed ones whose wait ended in the bin. A policing limiter
//! passes part of a burst at once; a shaping one spreads it over the bins
//! that follow, near the rate `L / W` (dashed).
//!
//! Every strip has the same scale, the tallest backend bin of any strip and
//! the rate with some room, so that a burst flattened to a few requests per
//! bin looks as low as it is beside a policing limiter's spike; offered bins
//! taller than that are cut at the top and their count is written there. The
//! names and figures of the strips sit beside them, one row per strip, so
//! no text covers the data.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::*;
use ratesim::RunReport;
use ratesim::export::markdown::fmt_seconds;
use ratesim::time::format_duration;

pub struct ShapingTimeline<'a> {
    /// The run's colours.
    pub palette: &'a RunPalette,
    pub scenario: &'a str,
    pub report: &'a RunReport,
}

/// Height of the band under the strips: the time axis title, and the
/// legend of the marks every strip shares.
const BOTTOM: u32 = 44;
/// Height of the time axis' tick labels, under the last strip.
const AXIS: u32 = 30;

/// `n` rows of `height` pixels from the top of `area`, the last one taking
/// whatever is left.
fn split_rows<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    n: usize,
    height: u32,
) -> Vec<DrawingArea<DB, Shift>> {
    let mut rows = Vec::with_capacity(n);
    let mut rest = area.clone();
    for _ in 1..n {
        let (row, below) = rest.split_vertically(height);
        rows.push(row);
        rest = below;
    }
    rows.push(rest);
    rows
}

impl Chart for ShapingTimeline<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = self.report;
        // Bars wide enough to see: bins merged for drawing (the CSV keeps them).
        let timeline = chart_bins(&r.timeline, None);
        let width = timeline.width().get();
        let bins = timeline.bins();
        let end = bins_end(r);
        let (div, unit) = time_unit(end);
        let x_end = end as f64 / div;
        let bin_name = format_duration(timeline.width());
        // The rate L / W, in requests per bin.
        let rate = r.limit.requests as f64 * width as f64 / r.limit.window.get() as f64;
        let area = titled(
            root,
            &format!("{}: reaching the backend per {bin_name} bin, against the rate L / W", self.scenario),
        )?;
        let (plots, legend) = with_legend(&area);
        let n = r.limiters.len();
        let (strips, bottom) = plots.split_vertically(plots.dim_in_pixel().1.saturating_sub(BOTTOM));
        let (rows_legend, shared_legend) =
            legend.split_vertically(legend.dim_in_pixel().1.saturating_sub(BOTTOM));
        let strips = strip_titles(
            &strips,
            &bottom,
            &format!("time ({unit})"),
            10,
            &format!("requests per {bin_name} bin"),
        )?;
        // Every strip gets the same plot height; the last one also holds the
        // time axis' tick labels.
        let row_h = (strips.dim_in_pixel().1.saturating_sub(AXIS) / n.max(1) as u32).max(1);
        let rows = split_rows(&strips, n, row_h);
        let labels = split_rows(&rows_legend, n, row_h);
        let grey = RGBColor(170, 170, 170);
        let x_of = |b: usize| ((b as u64).saturating_mul(width) as f64 / div).min(x_end);
        // One scale for every strip: what reached the backend, compared.
        let backend_max =
            bins.iter().flat_map(|row| row.iter().map(|b| b.backend())).max().unwrap_or(0) as f64;
        let y_max = (backend_max.max(rate) * 1.3).max(1.0);
        // Every strip offered the same requests (open traffic, no
        // retries): the counts of the cut offered bins once, over the top
        // strip, not the same numbers in every strip (go_rate's twenty,
        // seven times over).
        let same_offered = bins.iter().all(|row| row.iter().all(|b| b.offered == row[0].offered));
        for (i, (strip, label)) in rows.iter().zip(&labels).enumerate() {
            let last = i + 1 == n;
            let l = &r.limiters[i];
            // 0 and the rate labelled (`2.5` where it is not whole).
            let y_label = |v: &f64| if v.fract() == 0.0 { whole(v) } else { tick(v) };
            let mut chart = strip_chart_in(strip, last, 0f64..x_end, 0.0..y_max, 3, &y_label, Some(rate))?;
            let offered = steps(
                bins.iter()
                    .enumerate()
                    .map(|(b, row)| (x_of(b), x_of(b + 1), (row[i].offered as f64).min(y_max))),
            );
            chart.draw_series(AreaSeries::new(offered, 0.0, grey.mix(0.45))).map_err(err)?;
            let c = self.palette.colour(&l.spec);
            let backend = steps(
                bins.iter().enumerate().map(|(b, row)| (x_of(b), x_of(b + 1), row[i].backend() as f64)),
            );
            chart
                .draw_series(AreaSeries::new(backend, 0.0, c.mix(0.6)).border_style(c.stroke_width(2)))
                .map_err(err)?;
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(0.0, rate), (x_end, rate)],
                    8,
                    6,
                    BLACK.stroke_width(1),
                ))
                .map_err(err)?;
            // The count of each run of cut bins, once, at its tallest bin.
            if i == 0 || !same_offered {
                let offered: Vec<u64> = bins.iter().map(|row| row[i].offered).collect();
                draw_cut_counts(
                    &mut chart,
                    &cut_runs(&offered, y_max),
                    &x_of,
                    x_end * 0.003,
                    y_max,
                    VPos::Top,
                )?;
            }
            strip_label(label, l, c, row_h as i32)?;
        }
        // The marks every strip shares, under the rows of names.
        let style = font(LEGEND_SIZE - 1.0).pos(Pos::new(HPos::Left, VPos::Center));
        let y = 20;
        shared_legend
            .draw(&Rectangle::new([(8, y - 8), (34, y + 8)], grey.mix(0.45).filled()))
            .map_err(err)?;
        shared_legend.draw_text("offered", &style, (40, y)).map_err(err)?;
        for x in [128, 140, 152] {
            shared_legend
                .draw(&PathElement::new(vec![(x, y), (x + 7, y)], BLACK.stroke_width(2)))
                .map_err(err)?;
        }
        shared_legend
            .draw_text(&format!("rate {} per bin", ratesim::export::fmt_ratio_short(rate)), &style, (166, y))
            .map_err(err)?;
        Ok(())
    }

    fn height(&self) -> u32 {
        strips_height(self.report.limiters.len())
    }
}

/// A strip's name and figures, beside it: a swatch of its colour and its
/// name, then what it admitted and how many of those waited.
fn strip_label<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    l: &ratesim::metrics::LimiterReport,
    c: RGBColor,
    h: i32,
) -> Result<()> {
    // A long name or figures are drawn smaller, not cut off at the edge.
    let room = area.dim_in_pixel().0.saturating_sub(32 + 4);
    let left = Pos::new(HPos::Left, VPos::Center);
    let (y1, y2) = (h / 2 - 9, h / 2 + 10);
    area.draw(&Rectangle::new([(8, y1 - 7), (26, y1 + 7)], c.mix(0.6).filled())).map_err(err)?;
    area.draw(&Rectangle::new([(8, y1 - 7), (26, y1 + 7)], c.stroke_width(2))).map_err(err)?;
    let name = l.spec.short_name();
    let (name, size) = fit_line(area, &name, LEGEND_SIZE - 2.0, room);
    area.draw_text(&name, &font(size).pos(left), (32, y1)).map_err(err)?;
    let figures = match &l.delays {
        Some(d) if d.delayed > 0 => format!(
            "admitted {} of {}, {} waited (up to {})",
            l.counts.admitted,
            offered_count(l),
            d.delayed,
            fmt_seconds(d.max)
        ),
        Some(_) => format!("admitted {} of {}, none waited", l.counts.admitted, offered_count(l)),
        None => format!("admitted {} of {}, at once", l.counts.admitted, offered_count(l)),
    };
    let (figures, size) = fit_line(area, &figures, LEGEND_SIZE - 4.0, room);
    area.draw_text(&figures, &font(size).pos(left), (32, y2)).map_err(err)?;
    Ok(())
}
