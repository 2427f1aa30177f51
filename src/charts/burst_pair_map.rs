//! `burst_pair_map`: for a few N, where over (gap, offset) a burst pair breaks
//! the limit.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;
use ratesim::export::fmt_percent2;
use ratesim::sweep::{BurstPairResult, BurstPairRow};
use ratesim::time::format_duration;

pub struct BurstPairMap<'a> {
    /// The scenario's name, which starts the title.
    pub scenario: &'a str,
    /// The run's colours.
    pub palette: &'a RunPalette,
    /// One row per panel, in order (`[sweep] map_slots`).
    pub result: &'a BurstPairResult,
    /// For each panel, whether its limiter is a reference the sweep added
    /// for the map, not one of the scenario's.
    pub reference: Vec<bool>,
}

/// Most rows drawn per panel (runs of neighbouring offsets are merged).
const MAX_ROWS: u32 = 200;

impl BurstPairMap<'_> {
    fn rows(&self) -> Vec<&BurstPairRow> {
        self.result.rows.iter().collect()
    }
}

impl Chart for BurstPairMap<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let r = self.result;
        let w = format_duration(r.limit.window);
        let all_reference = !self.reference.is_empty() && self.reference.iter().all(|&x| x);
        let title = if all_reference {
            format!(
                "{}: reference window limiters, not this scenario's: where two bursts of {} break the limit \
(coloured; grey: held to L), W = {w}",
                self.scenario, r.limit.requests
            )
        } else {
            format!(
                "{}: where two bursts of {} break the limit (coloured; grey: held to L), W = {w}",
                self.scenario, r.limit.requests
            )
        };
        let area = titled(root, &title)?;
        let rows = self.rows();
        let (cols, lines) = match rows.len() {
            0..=2 => (rows.len().max(1), 1),
            3..=4 => (2, 2),
            _ => (3, rows.len().div_ceil(3)),
        };
        let panels = area.split_evenly((lines, cols));
        let g = r.grid;
        let group = g.div_ceil(MAX_ROWS);
        for (k, (row, panel)) in rows.iter().zip(&panels).enumerate() {
            let c = self.palette.colour(&row.spec);
            // Marked one by one where the scenario has some of the panels.
            let name = match self.reference.get(k) {
                Some(true) if !all_reference => format!("{} (reference)", row.spec.short_name()),
                _ => row.spec.short_name(),
            };
            let caption = if row.resolved() {
                format!(
                    "{name}: band {}, {} of pairs",
                    fmt_percent2(row.band_width(g)),
                    fmt_percent2(row.violation_probability(g))
                )
            } else {
                format!("{name}: not resolved (N > G = {g})")
            };
            let mut chart = ChartBuilder::on(panel)
                .margin(8)
                .margin_right(30)
                .caption(caption, font(TICK_SIZE + 2.0))
                .x_label_area_size(if lines == 1 { 60 } else { 46 })
                .y_label_area_size(70)
                .build_cartesian_2d(0f64..1f64, 0f64..1f64)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc(format!("gap g (share of W = {w})"))
                .y_desc("offset p (share of W)")
                .axis_desc_style(font(TICK_SIZE))
                .label_style(font(TICK_SIZE - 2.0))
                .x_labels(6)
                .y_labels(6)
                .disable_mesh()
                .draw()
                .map_err(err)?;
            // Pairs that stay within the limit: a light ground, so the shaded
            // part reads as a region of the whole (gap, offset) square.
            chart.plotting_area().fill(&RGBColor(242, 242, 242)).map_err(err)?;
            let gf = f64::from(g);
            let mut rects = Vec::new();
            let mut j = 0;
            while j < g {
                let y0 = f64::from(j) / gf;
                let y1 = f64::from((j + group).min(g)) / gf;
                for &(a, b) in &row.runs[j as usize] {
                    rects
                        .push(Rectangle::new([(f64::from(a) / gf, y0), (f64::from(b) / gf, y1)], c.filled()));
                }
                j += group;
            }
            chart.draw_series(rects).map_err(err)?;
        }
        Ok(())
    }
}
