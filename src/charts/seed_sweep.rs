//! `seed_sweep`: each limiter's over-admission at every seed of the seed
//! sweep, one row per limiter: a dot per seed, a bar at the mean, a ring
//! around the scenario's own seed, so that whether two limiters' ranges
//! overlap shows at a glance.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::*;
use ratesim::sweep::SeedSweepResult;
use ratesim::sweep::seeds::{Metric, stats};

pub struct SeedSweep<'a> {
    /// The scenario's name, which starts the title.
    pub scenario: &'a str,
    /// The run's colours.
    pub palette: &'a RunPalette,
    pub result: &'a SeedSweepResult,
}

/// One limiter's row: its name, colour and over-admission (%) at each
/// seed, `None` where it has none (the sliding log admitted nothing).
struct Row {
    name: String,
    colour: RGBColor,
    values: Vec<Option<f64>>,
}

impl SeedSweep<'_> {
    fn rows(&self) -> Vec<Row> {
        let Some(own) = self.result.own() else { return Vec::new() };
        own.limiters
            .iter()
            .enumerate()
            .map(|(i, l)| Row {
                name: l.spec.short_name(),
                colour: self.palette.colour(&l.spec),
                values: self
                    .result
                    .values(Metric::OverAdmission, i)
                    .into_iter()
                    .map(|v| v.map(|v| v * 100.0))
                    .collect(),
            })
            .filter(|r| r.values.iter().any(Option::is_some))
            .collect()
    }
}

/// How far up or down of its row's line a seed's dot is drawn, as a share
/// of the distance between rows: spread over ±[`SPREAD`] by the golden
/// ratio, seed after seed, so that many equal values show as a column of
/// dots rather than one, and the same sweep draws alike every time.
fn offset(k: usize) -> f64 {
    const GOLDEN: f64 = 0.618_033_988_749_895;
    ((k as f64 * GOLDEN).fract() - 0.5) * 2.0 * SPREAD
}

/// The most a dot is drawn off its row's line, in rows.
const SPREAD: f64 = 0.22;
/// Half the height of the mean's bar, in rows.
const MEAN_HALF: f64 = 0.34;
/// A seed's dot, and the ring around the scenario's own seed (pixels).
const DOT: i32 = 5;
const RING: i32 = 10;

/// The over-admission axis: every value and 0 (the exact rule), with a
/// margin either side; a few tenths of a point around 0 when every value
/// is 0.
fn x_range(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values.fold((0.0f64, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let pad = ((hi - lo) * 0.06).max(0.05);
    (lo - pad)..(hi + pad)
}

/// The height of the legend's line under the title.
const LEGEND_BAND: u32 = 36;

/// The legend, one line: a seed's dot, the mean's bar, the ring of the
/// scenario's own seed, the exact rule's dashed 0.
fn legend_line<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, own: u64) -> Result<()> {
    let style = font(LEGEND_SIZE).pos(Pos::new(HPos::Left, VPos::Center));
    let y = (LEGEND_BAND / 2) as i32;
    let mut x = 24;
    let entries = [
        "one dot per seed".to_string(),
        "mean over the seeds".to_string(),
        format!("seed {own}, the scenario's own run"),
        "the exact rule, 0 %".to_string(),
    ];
    for (k, label) in entries.iter().enumerate() {
        match k {
            0 => area.draw(&Circle::new((x + 6, y), DOT, RGBColor(110, 110, 110).mix(0.6).filled())),
            1 => area.draw(&PathElement::new(vec![(x + 6, y - 11), (x + 6, y + 11)], BLACK.stroke_width(3))),
            2 => area.draw(&Circle::new((x + 6, y), RING, BLACK.stroke_width(2))),
            _ => area
                .draw(&PathElement::new(vec![(x + 6, y - 11), (x + 6, y - 3)], LIMIT_COLOUR.stroke_width(2)))
                .and_then(|_| {
                    area.draw(&PathElement::new(
                        vec![(x + 6, y + 3), (x + 6, y + 11)],
                        LIMIT_COLOUR.stroke_width(2),
                    ))
                }),
        }
        .map_err(err)?;
        area.draw_text(label, &style, (x + 24, y)).map_err(err)?;
        let width = area.estimate_text_size(label, &style).map_or(0, |(w, _)| w) as i32;
        x += 24 + width + 36;
    }
    Ok(())
}

/// A row's note: its mean and deviation over the seeds (`mean +1.73 %,
/// sd 0.102 pp`), or its one value when every seed gave it.
fn note(row: &Row) -> String {
    let known: Vec<f64> = row.values.iter().flatten().copied().collect();
    match stats(&known) {
        Some(s) if s.min != s.max => {
            let sd = s.sd.unwrap_or(0.0);
            format!("mean {}, sd {:.p$} pp", pct(s.mean, true), sd, p = if sd < 1.0 { 3 } else { 2 })
        }
        Some(s) => format!("{} at every seed", pct(s.mean, true)),
        None => String::new(),
    }
}

/// A percentage for the row's note: two decimals, three under 1 %; an
/// exact 0 is `0 %`.
fn pct(v: f64, signed: bool) -> String {
    if v == 0.0 {
        return "0 %".to_string();
    }
    let d = if v.abs() < 1.0 { 3 } else { 2 };
    if signed && v > 0.0 { format!("+{v:.d$} %") } else { format!("{v:.d$} %") }
}

impl Chart for SeedSweep<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let rows = self.rows();
        let n = self.result.points.len();
        let title = format!(
            "{}: over-admission at {n} seeds, {} to {}",
            self.scenario,
            self.result.first_seed(),
            self.result.last_seed()
        );
        let area = titled(root, &title)?;
        // The legend is a line under the title: the plot keeps the width.
        let (key, plot) = area.split_vertically(LEGEND_BAND);
        legend_line(&key, self.result.first_seed())?;
        // Each row's mean and deviation in a column of their own, right of
        // the plot, where no dot can be.
        let notes: Vec<String> = rows.iter().map(note).collect();
        let note_width = notes
            .iter()
            .map(|n| plot.estimate_text_size(n, &font(TICK_SIZE)).map_or(0, |(w, _)| w))
            .max()
            .unwrap_or(0)
            + 60;
        let (plot, column) = plot.split_horizontally(plot.dim_in_pixel().0.saturating_sub(note_width));
        let x = x_range(rows.iter().flat_map(|r| r.values.iter().flatten().copied()));
        let count = rows.len().max(1) as f64;
        // Row i on line count - 1 - i: the run's first limiter on top.
        let line = |i: usize| count - 1.0 - i as f64;
        let label_width = rows
            .iter()
            .map(|r| plot.estimate_text_size(&r.name, &font(LABEL_SIZE)).map_or(0, |(w, _)| w))
            .max()
            .unwrap_or(0)
            + 24;
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .margin_right(20)
            .x_label_area_size(60)
            .y_label_area_size(label_width)
            .build_cartesian_2d(x.clone(), -0.6..(count - 0.4))
            .map_err(err)?;
        chart
            .configure_mesh()
            .axis_desc_style(font(LABEL_SIZE))
            .label_style(font(TICK_SIZE))
            .x_desc("over-admission: admitted / admitted by the sliding log - 1 (%)")
            .x_label_formatter(&|v| tick(v))
            .y_labels(0)
            .disable_y_mesh()
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(err)?;
        // A light band behind every other row, to guide the eye.
        for i in (1..rows.len()).step_by(2) {
            let y = line(i);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x.start, y - 0.5), (x.end, y + 0.5)],
                    RGBColor(244, 244, 244).filled(),
                )))
                .map_err(err)?;
        }
        // The exact rule admits what the sliding log does: 0.
        let dashes = 24;
        let (y0, y1) = (-0.6, count - 0.4);
        for k in (0..dashes).step_by(2) {
            let at = |j: usize| y0 + (y1 - y0) * j as f64 / dashes as f64;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(0.0, at(k)), (0.0, at(k + 1))],
                    LIMIT_COLOUR.stroke_width(2),
                )))
                .map_err(err)?;
        }
        let base = plot.get_base_pixel();
        for (i, row) in rows.iter().enumerate() {
            let y = line(i);
            let known: Vec<f64> = row.values.iter().flatten().copied().collect();
            let Some(s) = stats(&known) else { continue };
            // The range, min to max.
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(s.min, y), (s.max, y)],
                    row.colour.mix(0.5).stroke_width(2),
                )))
                .map_err(err)?;
            let dots = row.values.iter().enumerate().filter_map(|(k, v)| Some((k, (*v)?)));
            chart
                .draw_series(
                    dots.map(|(k, v)| Circle::new((v, y + offset(k)), DOT, row.colour.mix(0.6).filled())),
                )
                .map_err(err)?;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(s.mean, y - MEAN_HALF), (s.mean, y + MEAN_HALF)],
                    BLACK.stroke_width(3),
                )))
                .map_err(err)?;
            if let Some(v) = row.values.first().copied().flatten() {
                chart
                    .draw_series(std::iter::once(Circle::new(
                        (v, y + offset(0)),
                        RING,
                        BLACK.stroke_width(2),
                    )))
                    .map_err(err)?;
            }
            // The limiter's name left of its row, its mean and deviation
            // right of the plot.
            let (px, py) = chart.backend_coord(&(x.start, y));
            let at = |area: (i32, i32), p: (i32, i32)| (p.0 - area.0, p.1 - area.1);
            plot.draw_text(
                &row.name,
                &font(LABEL_SIZE).pos(Pos::new(HPos::Right, VPos::Center)),
                at(base, (px - 12, py)),
            )
            .map_err(err)?;
            column
                .draw_text(
                    &notes[i],
                    &font(TICK_SIZE).pos(Pos::new(HPos::Left, VPos::Center)),
                    at(column.get_base_pixel(), (column.get_base_pixel().0 + 8, py)),
                )
                .map_err(err)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dots spread over the row's band and never past it; the same seed
    /// always at the same place.
    #[test]
    fn dots_spread_within_their_row() {
        let all: Vec<f64> = (0..1000).map(offset).collect();
        assert!(all.iter().all(|o| o.abs() <= SPREAD), "{all:?}");
        assert!(all.iter().any(|&o| o > SPREAD * 0.9) && all.iter().any(|&o| o < -SPREAD * 0.9));
        assert_eq!(offset(7), offset(7));
    }

    /// The axis always holds 0, the exact rule.
    #[test]
    fn the_axis_holds_every_value_and_zero() {
        let r = x_range([1.2, 2.5].into_iter());
        assert!(r.start < 0.0 && r.end > 2.5);
        let r = x_range([-39.0, 3.0].into_iter());
        assert!(r.start < -39.0 && r.end > 3.0);
        let r = x_range(std::iter::empty());
        assert!(r.start < 0.0 && r.end > 0.0);
    }
}
