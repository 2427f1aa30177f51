//! `windows_diagram`: how window limiters cut the time axis (fixed windows,
//! N slots, the exact sliding window at one instant), a lane each, with the
//! requests as marks: admitted in the limiter's colour, rejected in grey
//! (one mark per pixel column, split by the share admitted).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use plotters::coord::types::RangedCoordf64;
use ratesim::diagram::{Cutting, DiagramLane, WindowsDiagram};
use ratesim::time::format_duration;

/// Draws a [`WindowsDiagram`] (its content is decided by the library) in
/// the run's colours.
pub struct Diagram<'a>(pub &'a WindowsDiagram, pub &'a RunPalette);

/// The plot's coordinates: time in the view's unit, lanes stacked in y.
type Plot<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Lane `k` of `n` occupies y in `[n - 1 - k, n - k)` (top to bottom):
/// cells in the lower part, request marks above them, the caption on top.
fn lane_y(k: usize, n: usize) -> f64 {
    (n - 1 - k) as f64
}

/// Cells narrower than this many pixels are drawn without their edges
/// (100 slots in a view of two windows): only what is counted at `t*`.
const MIN_CELL_PX: f64 = 4.0;

const GREY: RGBColor = RGBColor(190, 190, 190);

impl Diagram<'_> {
    /// Time in ns to the x axis.
    fn x(&self, t: u64) -> f64 {
        let d = self.0;
        t as f64 / time_unit(d.unit_span.get()).0
    }

    /// The windows or slots covering the view (shaded where counted at
    /// `t*`), or the exact window ending at `t*`.
    fn draw_cells<DB: DrawingBackend>(
        &self,
        chart: &mut Plot<'_, DB>,
        (k, n): (usize, usize),
        lane: &DiagramLane,
    ) -> Result<()> {
        let d = self.0;
        let (w, t_star) = (d.limit.window.get(), d.instant.get());
        let (v0, v1) = (d.view.0.get(), d.view.1.get());
        let y0 = lane_y(k, n);
        let (cell0, cell1) = (y0 + 0.08, y0 + 0.48);
        let c = self.1.colour(&lane.spec);
        if lane.cutting == Cutting::Exact {
            let a = t_star.saturating_sub(w);
            let shade =
                Rectangle::new([(self.x(a.max(v0)), cell0), (self.x(t_star), cell1)], c.mix(0.35).filled());
            chart.draw_series(std::iter::once(shade)).map_err(err)?;
            return Ok(());
        }
        let cell = lane.cutting.cell(w);
        let px = chart.plotting_area().dim_in_pixel().0 as f64 * cell as f64 / (v1 - v0) as f64;
        if px < MIN_CELL_PX {
            // Only the span counted at t*: its slots are too thin to tell
            // apart, and may be trillions (a slot counter of 3.6e12 slots in
            // an hour, walked slot by slot, drew for hours).
            let (lo, hi) = counted_span(lane.cutting, cell, (v0, v1), t_star, w).unzip();
            let back =
                Rectangle::new([(self.x(v0), cell0), (self.x(v1), cell1)], RGBColor(242, 242, 242).filled());
            chart.draw_series(std::iter::once(back)).map_err(err)?;
            if let (Some(lo), Some(hi)) = (lo, hi) {
                let shade = Rectangle::new([(self.x(lo), cell0), (self.x(hi), cell1)], c.mix(0.45).filled());
                chart.draw_series(std::iter::once(shade)).map_err(err)?;
            }
            return Ok(());
        }
        let mut a = v0 / cell * cell;
        let mut alt = (v0 / cell).is_multiple_of(2);
        while a < v1 {
            let b = a.saturating_add(cell);
            let fill = if lane.cutting.counts(a, b, t_star, w) {
                c.mix(0.45)
            } else if alt {
                RGBColor(235, 235, 235).mix(1.0)
            } else {
                RGBColor(250, 250, 250).mix(1.0)
            };
            let (xa, xb) = (self.x(a.max(v0)), self.x(b.min(v1)));
            chart
                .draw_series(std::iter::once(Rectangle::new([(xa, cell0), (xb, cell1)], fill.filled())))
                .map_err(err)?;
            let edge =
                PathElement::new(vec![(xa, cell0), (xa, cell1)], RGBColor(120, 120, 120).stroke_width(1));
            chart.draw_series(std::iter::once(edge)).map_err(err)?;
            if b == u64::MAX {
                break;
            }
            a = b;
            alt = !alt;
        }
        Ok(())
    }

    /// A mark per pixel column (admitted in the lane's colour, rejected in
    /// grey, split by the share admitted),
    /// and "n of m admitted" beside requests at one instant.
    fn draw_marks<DB: DrawingBackend>(
        &self,
        chart: &mut Plot<'_, DB>,
        (k, n): (usize, usize),
        lane: &DiagramLane,
    ) -> Result<()> {
        let d = self.0;
        let (v0, v1) = (d.view.0.get(), d.view.1.get());
        let y0 = lane_y(k, n);
        let c = self.1.colour(&lane.spec);
        // One mark per pixel column: requests drawn at one column (at one
        // instant, or a fraction of a pixel apart) share it, the admitted
        // share of its height in the lane's colour from the bottom, the
        // rest grey (a grey mark drawn over a coloured one had hidden
        // "3 of 4 admitted").
        let mut ticks = Vec::new();
        let shown: Vec<(f64, bool)> = d
            .arrivals
            .iter()
            .zip(&lane.admitted)
            .filter(|(t, _)| t.get() >= v0 && t.get() < v1)
            .map(|(t, &adm)| (self.x(t.get()), adm))
            .collect();
        let column = |x: f64| chart.backend_coord(&(x, y0)).0;
        let mut j = 0;
        while j < shown.len() {
            let px = column(shown[j].0);
            let same = shown[j..].iter().take_while(|(x, _)| column(*x) == px).count();
            let admitted = shown[j..j + same].iter().filter(|(_, a)| *a).count();
            let x = shown[j].0;
            let split = y0 + 0.52 + 0.26 * admitted as f64 / same as f64;
            if admitted > 0 {
                ticks.push(PathElement::new(vec![(x, y0 + 0.52), (x, split)], c.stroke_width(3)));
            }
            if admitted < same {
                ticks.push(PathElement::new(vec![(x, split), (x, y0 + 0.78)], GREY.stroke_width(3)));
            }
            j += same;
        }
        chart.draw_series(ticks).map_err(err)?;
        let mut j = 0;
        while j < d.arrivals.len() {
            let t = d.arrivals[j];
            let same = d.arrivals[j..].iter().take_while(|u| **u == t).count();
            if same > 1 && t.get() >= v0 && t.get() < v1 {
                let admitted = lane.admitted[j..j + same].iter().filter(|a| **a).count();
                let label = format!("{admitted} of {same} admitted");
                // Right of the mark, or left of it where it would run past
                // the plot into the legend (a burst at t*, near the end).
                let gap = (self.x(v1) - self.x(v0)) * 0.005;
                let style = font(TICK_SIZE - 2.0);
                let area = chart.plotting_area().strip_coord_spec();
                let right = area.get_pixel_range().0.end;
                let wide = text_width(&area, &label, &style) as i32;
                let x = self.x(t.get());
                let fits = chart.backend_coord(&(x + gap, y0)).0 + wide <= right;
                let (at, style) = if fits {
                    ((x + gap, y0 + 0.6), style)
                } else {
                    use plotters::style::text_anchor::{HPos, Pos, VPos};
                    ((x - gap, y0 + 0.6), style.pos(Pos::new(HPos::Right, VPos::Top)))
                };
                chart.draw_series(std::iter::once(Text::new(label, at, style))).map_err(err)?;
            }
            j += same;
        }
        Ok(())
    }

    /// "fixed window: 200 admitted in (t* - 1s, t*], 2×L" over the lane, in
    /// red when over the limit.
    fn draw_caption<DB: DrawingBackend>(
        &self,
        chart: &mut Plot<'_, DB>,
        (k, n): (usize, usize),
        lane: &DiagramLane,
    ) -> Result<()> {
        let d = self.0;
        let (v0, v1) = (d.view.0.get(), d.view.1.get());
        let over = lane.in_window > d.limit.requests;
        let ratio = if over {
            format!(", {}", super::window_count::fmt_ratio_x(lane.in_window as f64 / d.limit.requests as f64))
        } else {
            String::new()
        };
        let text = format!(
            "{}: {} admitted in (t* - {}, t*]{ratio}",
            lane.name,
            lane.in_window,
            format_duration(d.limit.window),
        );
        let style = if over { bold(TICK_SIZE).color(&RGBColor(180, 0, 0)) } else { font(TICK_SIZE) };
        let at = (self.x(v0) + (self.x(v1) - self.x(v0)) * 0.01, lane_y(k, n) + 0.93);
        chart.draw_series(std::iter::once(Text::new(text, at, style))).map_err(err)?;
        Ok(())
    }
}

impl Chart for Diagram<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let d = self.0;
        let (v0, v1) = (d.view.0.get(), d.view.1.get());
        let unit = time_unit(d.unit_span.get()).1;
        let lanes = d.lanes();
        let n = lanes.len();
        let top = n as f64;
        let area = titled(root, &d.title)?;
        let (plot, legend) = with_legend(&area);
        let mut chart = ChartBuilder::on(&plot)
            .margin(10)
            .x_label_area_size(60)
            .y_label_area_size(10)
            .build_cartesian_2d(self.x(v0)..self.x(v1), 0f64..top + 0.3)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(format!("time ({unit})"))
            .axis_desc_style(font(LABEL_SIZE))
            .label_style(font(TICK_SIZE))
            .x_label_formatter(&tick)
            .disable_y_axis()
            .disable_mesh()
            .draw()
            .map_err(err)?;
        // The instant t*.
        let t_star = self.x(d.instant.get());
        chart
            .draw_series(DashedLineSeries::new(
                vec![(t_star, 0.0), (t_star, top)],
                8,
                6,
                RGBColor(90, 90, 90).stroke_width(1),
            ))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(Text::new("t*", (t_star, top + 0.22), font(TICK_SIZE))))
            .map_err(err)?;
        for (k, lane) in lanes.iter().enumerate() {
            self.draw_cells(&mut chart, (k, n), lane)?;
            self.draw_marks(&mut chart, (k, n), lane)?;
            self.draw_caption(&mut chart, (k, n), lane)?;
        }
        let mut entries: Vec<LegendEntry> = lanes
            .iter()
            .map(|lane| {
                LegendEntry::new(format!("{}: admitted", lane.name), self.1.colour(&lane.spec), Mark::Line)
            })
            .collect();
        entries.push(LegendEntry::new("rejected (any)", GREY, Mark::Line));
        entries.push(LegendEntry::new("shaded: counted at t*", BLACK, Mark::Heading));
        entries.push(LegendEntry::new(
            format!("limit: L = {} per {}", d.limit.requests, format_duration(d.limit.window)),
            BLACK,
            Mark::Heading,
        ));
        draw_legend(&legend, &entries)
    }
}

/// The part of the view `(v0, v1)` (ns) that the cells of `cutting` (each
/// `cell` ns, aligned to 0) counted at `t_star` cover, if any, found
/// without walking the cells: those counted are consecutive and end with
/// the one holding `t_star` (a cell counted, every later one up to it is).
pub fn counted_span(
    cutting: Cutting,
    cell: u64,
    (v0, v1): (u64, u64),
    t_star: u64,
    w: u64,
) -> Option<(u64, u64)> {
    if v1 <= v0 || cell == 0 {
        return None;
    }
    let counted = |j: u64| {
        let a = j.saturating_mul(cell);
        cutting.counts(a, a.saturating_add(cell), t_star, w)
    };
    let (first, star) = (v0 / cell, t_star / cell);
    let top = star.min((v1 - 1) / cell);
    if star < first || !counted(top) {
        return None;
    }
    // The first counted cell in first..=top: the predicate is false, then true.
    let (mut lo, mut hi) = (first, top);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if counted(mid) { hi = mid } else { lo = mid + 1 }
    }
    Some((lo.saturating_mul(cell).max(v0), top.saturating_mul(cell).saturating_add(cell).min(v1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The span walked cell by cell, as the diagram once did.
    fn walked(cutting: Cutting, cell: u64, (v0, v1): (u64, u64), t_star: u64, w: u64) -> Option<(u64, u64)> {
        let (mut lo, mut hi) = (None, None);
        let mut a = v0 / cell * cell;
        while a < v1 {
            let b = a.saturating_add(cell);
            if cutting.counts(a, b, t_star, w) {
                lo = lo.or(Some(a.max(v0)));
                hi = Some(b.min(v1));
            }
            if b == u64::MAX {
                break;
            }
            a = b;
        }
        lo.zip(hi)
    }

    /// Every small case: windows and slot counters, views around and away
    /// from t*, windows not a multiple of the slot count.
    #[test]
    fn the_counted_span_is_the_walked_one() {
        for w in [1u64, 6, 10, 17] {
            for cutting in [Cutting::Windows, Cutting::Slots(1), Cutting::Slots(3), Cutting::Slots(w)] {
                let cell = cutting.cell(w);
                // More slots than nanoseconds: refused by validation.
                if cell == 0 {
                    continue;
                }
                for t_star in 0..3 * w {
                    for v0 in 0..3 * w {
                        for v1 in v0 + 1..4 * w {
                            assert_eq!(
                                counted_span(cutting, cell, (v0, v1), t_star, w),
                                walked(cutting, cell, (v0, v1), t_star, w),
                                "{cutting:?} w={w} t*={t_star} view={v0}..{v1}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// 3.6e12 slots in an hour, which the walk took hours over: the span
    /// counted at t* is the window's, whatever the view.
    #[test]
    fn trillions_of_slots_at_once() {
        let w = 3_600_000_000_000;
        let cutting = Cutting::Slots(w);
        let t_star = 5_000_000_000_000;
        assert_eq!(counted_span(cutting, 1, (0, 2 * w), t_star, w), Some((t_star - w + 1, t_star + 1)));
    }
}
