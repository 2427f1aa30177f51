//! `windows_diagram`: how the three algorithms cut the time axis (fixed
//! windows, N slots, the exact sliding window at one instant), with the
//! requests as marks: admitted in the algorithm's colour, rejected in grey.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::diagram::{Cutting, WindowsDiagram};
use ratesim::time::format_duration;

/// Draws a [`WindowsDiagram`] (its content is decided by the library).
pub struct Diagram<'a>(pub &'a WindowsDiagram);

impl Chart for Diagram<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let d = self.0;
        let w = d.limit.window.get();
        let (v0, v1) = (d.view.0.get(), d.view.1.get());
        let (div, unit) = time_unit(v1 - v0);
        let x = |t: u64| t as f64 / div;
        let area = titled(root, &d.title)?;
        let (plot, legend) = with_legend(&area);
        let mut chart = ChartBuilder::on(&plot)
            .margin(10)
            .x_label_area_size(60)
            .y_label_area_size(10)
            .build_cartesian_2d(x(v0)..x(v1), 0f64..3.3f64)
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
        let t_star = d.instant.get();
        // The instant t*.
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x(t_star), 0.0), (x(t_star), 3.0)],
                8,
                6,
                RGBColor(90, 90, 90).stroke_width(1),
            ))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(Text::new("t*", (x(t_star), 3.22), font(TICK_SIZE))))
            .map_err(err)?;
        let lanes = d.lanes();
        let grey = RGBColor(190, 190, 190);
        for (k, lane) in lanes.iter().enumerate() {
            // Lane k occupies y in [2 - k, 3 - k) (top to bottom), cells in
            // the lower 60 %, marks in the upper part.
            let y0 = 2.0 - k as f64;
            let (cell0, cell1) = (y0 + 0.08, y0 + 0.48);
            let c = rgb(lane.style.rgb);
            let counted = |a: u64, b: u64| -> bool {
                match lane.cutting {
                    Cutting::Windows => a <= t_star && t_star < b,
                    Cutting::Slots(n) => {
                        b > t_star.saturating_sub(w) && a <= t_star && {
                            let n = n as u128;
                            let k_star = (t_star as u128 * n) / w as u128;
                            let k_a = (a as u128 * n) / w as u128;
                            k_a + n > k_star
                        }
                    }
                    Cutting::Exact => false,
                }
            };
            // Cells: windows or slots that cover the view.
            let cell = match lane.cutting {
                Cutting::Slots(n) => w / n,
                Cutting::Windows | Cutting::Exact => w,
            };
            if lane.cutting != Cutting::Exact {
                let mut a = v0 / cell * cell;
                let mut alt = (v0 / cell) % 2 == 0;
                while a < v1 {
                    let b = a + cell;
                    let fill = if counted(a, b) {
                        c.mix(0.45)
                    } else if alt {
                        RGBColor(235, 235, 235).mix(1.0)
                    } else {
                        RGBColor(250, 250, 250).mix(1.0)
                    };
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(x(a.max(v0)), cell0), (x(b.min(v1)), cell1)],
                            fill.filled(),
                        )))
                        .map_err(err)?;
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(x(a.max(v0)), cell0), (x(a.max(v0)), cell1)],
                            RGBColor(120, 120, 120).stroke_width(1),
                        )))
                        .map_err(err)?;
                    a = b;
                    alt = !alt;
                }
            } else {
                let a = t_star.saturating_sub(w);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x(a.max(v0)), cell0), (x(t_star), cell1)],
                        c.mix(0.35).filled(),
                    )))
                    .map_err(err)?;
            }
            // Request marks.
            let mut ticks = Vec::new();
            for (t, adm) in d.arrivals.iter().zip(&lane.admitted) {
                if t.get() < v0 || t.get() >= v1 {
                    continue;
                }
                let col = if *adm { c } else { grey };
                ticks.push(PathElement::new(
                    vec![(x(t.get()), y0 + 0.52), (x(t.get()), y0 + 0.78)],
                    col.stroke_width(3),
                ));
            }
            chart.draw_series(ticks).map_err(err)?;
            // Requests at one instant: say how many.
            let mut k = 0;
            while k < d.arrivals.len() {
                let t = d.arrivals[k];
                let same = d.arrivals[k..].iter().take_while(|u| **u == t).count();
                if same > 1 && t.get() >= v0 && t.get() < v1 {
                    let admitted = lane.admitted[k..k + same].iter().filter(|a| **a).count();
                    let label = format!("{admitted} of {same} admitted");
                    chart
                        .draw_series(std::iter::once(Text::new(
                            label,
                            (x(t.get()) + (x(v1) - x(v0)) * 0.005, y0 + 0.6),
                            font(TICK_SIZE - 2.0),
                        )))
                        .map_err(err)?;
                }
                k += same;
            }
            let over = lane.in_window > d.limit.requests;
            let text = format!(
                "{}: {} admitted in (t* - {}, t*]{}",
                lane.name,
                lane.in_window,
                format_duration(d.limit.window),
                if over {
                    format!(
                        ", {}",
                        super::window_count::fmt_ratio_x(lane.in_window as f64 / d.limit.requests as f64)
                    )
                } else {
                    String::new()
                }
            );
            let style = if over { bold(TICK_SIZE).color(&RGBColor(180, 0, 0)) } else { font(TICK_SIZE) };
            chart
                .draw_series(std::iter::once(Text::new(
                    text,
                    (x(v0) + (x(v1) - x(v0)) * 0.01, y0 + 0.93),
                    style,
                )))
                .map_err(err)?;
        }
        let mut entries = Vec::new();
        for lane in &lanes {
            entries.push(LegendEntry::new(
                format!("{}: admitted", lane.name),
                rgb(lane.style.rgb),
                Mark::Line,
            ));
        }
        entries.push(LegendEntry::new("rejected (any)", grey, Mark::Line));
        entries.push(LegendEntry::new("shaded: counted at t*", BLACK, Mark::Heading));
        entries.push(LegendEntry::new(
            format!("limit: L = {} per {}", d.limit.requests, format_duration(d.limit.window)),
            BLACK,
            Mark::Heading,
        ));
        draw_legend(&legend, &entries)?;
        Ok(())
    }
}
