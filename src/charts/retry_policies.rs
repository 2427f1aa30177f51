//! `retry_policies`: the retry-policy comparison as grouped bars, a group
//! per retry table and a bar per limiter (in its colour), taller always
//! worse: attempts per success on top (every attempt, those of requests
//! that gave up included, over the requests that succeeded), the share of
//! requests that gave up in the middle, time to success of the successes
//! below (the bar is the longest, the ring the median). A policy that gives
//! up costs many attempts per success and shows its give-ups, instead of
//! looking cheap and fast on the few requests that got through.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::*;
use ratesim::metrics::LimiterReport;
use ratesim::sweep::RetryPolicyPoint;

pub struct RetryPolicies<'a> {
    /// The scenario's name, which starts the title.
    pub scenario: &'a str,
    /// The run's colours.
    pub palette: &'a RunPalette,
    pub points: &'a [RetryPolicyPoint],
}

/// The limiters whose clients react, in the order of the first run (every
/// run has the same).
fn limiters(points: &[RetryPolicyPoint]) -> Vec<&LimiterReport> {
    points.first().map_or(Vec::new(), |p| p.report.limiters.iter().filter(|l| l.clients.is_some()).collect())
}

/// One bar: its group, its place in the group and its value.
struct Bar {
    x0: f64,
    x1: f64,
    value: f64,
    colour: RGBColor,
}

/// What a bar shows of a limiter's run: its value and, maybe, a ring.
type Measure<'a> = &'a dyn Fn(&LimiterReport) -> Option<(f64, Option<f64>)>;

/// Draws bars from `floor` up, with an optional ring (the median) on each.
fn draw_bars<DB: DrawingBackend, Y: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, Y>>,
    bars: &[(Bar, Option<f64>)],
    floor: f64,
) -> Result<()> {
    for (b, ring) in bars {
        if b.value > floor {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(b.x0, floor), (b.x1, b.value)],
                    b.colour.filled(),
                )))
                .map_err(err)?;
        }
        if let Some(r) = ring {
            // White with a black ring: visible on any bar colour. A ring on
            // the floor (0 s) stands on the axis line, not across it.
            let at = ((b.x0 + b.x1) / 2.0, r.max(floor));
            let lift = if *r <= floor { -7 } else { 0 };
            chart
                .draw_series([
                    EmptyElement::at(at) + Circle::new((0, lift), 5, WHITE.filled()),
                    EmptyElement::at(at) + Circle::new((0, lift), 5, BLACK.stroke_width(2)),
                ])
                .map_err(err)?;
        }
    }
    Ok(())
}

/// Every panel's margins and y label column, in pixels.
const MARGIN: u32 = 8;
const MARGIN_RIGHT: u32 = 20;
const Y_LABEL_AREA: u32 = 80;

/// A panel of bars on a linear value axis from 0 to `y_top`, one group of
/// bars per policy along `x`.
fn bar_panel<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    x: std::ops::Range<f64>,
    y_top: f64,
    y_desc: &str,
    y_labels: usize,
    x_fmt: &dyn Fn(&f64) -> String,
    x_label_area: u32,
) -> Result<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    let groups = x.end - x.start;
    let mut chart = ChartBuilder::on(area)
        .margin(MARGIN)
        .margin_right(MARGIN_RIGHT)
        .x_label_area_size(x_label_area)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(x, 0f64..y_top)
        .map_err(err)?;
    chart
        .configure_mesh()
        .y_desc(y_desc)
        .axis_desc_style(font(LABEL_SIZE - 4.0))
        .label_style(font(TICK_SIZE - 2.0))
        .x_labels(2 * groups.round() as usize + 1)
        .x_label_formatter(x_fmt)
        .y_label_formatter(&tick)
        .y_labels(y_labels)
        .disable_x_mesh()
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// The groups' names on several lines each when one line would run a name
/// into its neighbour's: the policy, then its settings (`retry_after` over
/// `(jitter=1us)`), the settings broken after a comma where they are still
/// too wide (`(max_tokens=10,` over `token_ratio=0.1)`); `None` when every
/// name fits its group's width.
fn two_line_names<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    names: &[String],
) -> Option<Vec<Vec<String>>> {
    // The panels' plotting width: the area less the y labels and margins.
    let width = area.dim_in_pixel().0.saturating_sub(Y_LABEL_AREA + MARGIN + MARGIN_RIGHT);
    let group = width / names.len().max(1) as u32;
    let style = font(TICK_SIZE - 2.0);
    let fits = |text: &str| area.estimate_text_size(text, &style).is_ok_and(|(w, _)| w + 8 <= group);
    if names.iter().all(|n| fits(n)) {
        return None;
    }
    Some(
        names
            .iter()
            .map(|name| match name.find('(') {
                Some(i) if i > 0 => {
                    let mut lines = vec![name[..i].to_string()];
                    let mut line = String::new();
                    for piece in name[i..].split_inclusive(", ") {
                        let longer = format!("{line}{piece}");
                        if line.is_empty() || fits(longer.trim_end()) {
                            line = longer;
                        } else {
                            lines.push(line.trim_end().to_string());
                            line = piece.to_string();
                        }
                    }
                    lines.push(line.trim_end().to_string());
                    lines
                }
                _ => vec![name.clone()],
            })
            .collect(),
    )
}

/// Writes group names of several lines under a panel's plotting area,
/// each centred under its group (groups are `n` equal spans of the x range).
fn write_names<DB: DrawingBackend, X: Ranged, Y: Ranged>(
    area: &DrawingArea<DB, Shift>,
    chart: &ChartContext<'_, DB, Cartesian2d<X, Y>>,
    names: &[Vec<String>],
) -> Result<()> {
    let (xs, ys) = chart.plotting_area().get_pixel_range();
    let (bx, by) = area.get_base_pixel();
    let n = names.len().max(1) as f64;
    let style = font(TICK_SIZE - 2.0).pos(Pos::new(HPos::Center, VPos::Top));
    let line = (TICK_SIZE - 2.0) as i32 + 2;
    for (g, lines) in names.iter().enumerate() {
        let x = xs.start + ((g as f64 + 0.5) / n * f64::from(xs.end - xs.start)).round() as i32;
        for (k, text) in lines.iter().enumerate() {
            let y = ys.end + 6 + k as i32 * line;
            area.draw(&Text::new(text.as_str(), (x - bx, y - by), style.clone())).map_err(err)?;
        }
    }
    Ok(())
}

/// Where labels over bars go, left to right: each at `bottom` (its bar's
/// top, in pixels, y down) unless it would run into the label before it
/// ("10.00 10.00" over bars 31 px apart, 4 px from each other, read as
/// one run of digits), then just above that one. `labels` holds each
/// label's centre x, bottom and width; `h` is a label's height. Returns
/// each label's bottom.
fn place_labels(labels: &[(i32, i32, u32)], h: i32) -> Vec<i32> {
    const LABEL_GAP: i32 = 8;
    let mut out: Vec<i32> = Vec::with_capacity(labels.len());
    for (k, &(x, bottom, w)) in labels.iter().enumerate() {
        let mut at = bottom;
        if let Some(&(px, _, pw)) = k.checked_sub(1).map(|p| &labels[p]) {
            let prev = out[k - 1];
            // Closer than two spaces, two numbers read as one.
            let apart = (x - px).abs() >= (w + pw) as i32 / 2 + LABEL_GAP;
            if !apart && at > prev - h - 1 && at - h < prev {
                at = prev - h - 1;
            }
        }
        out.push(at);
    }
    out
}

/// The thin grey line from a bar up to its label, where the label was
/// lifted over the one before it.
const LEADER: ShapeStyle =
    ShapeStyle { color: RGBAColor(110, 110, 110, 1.0), filled: false, stroke_width: 1 };

/// Writes each label centred just over its bar, `dy` above its top; a
/// label that would run into the one before it goes just above that one,
/// hung from its bar by a thin line, so that labels stay apart at a size
/// that reads.
fn write_over<'b, DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    labelled: impl Iterator<Item = (&'b Bar, String)>,
    dy: f64,
) -> Result<()> {
    let labelled: Vec<(&Bar, String)> = labelled.collect();
    let style = font(TICK_SIZE - 6.0);
    let at = |b: &Bar| ((b.x0 + b.x1) / 2.0, b.value + dy);
    let area = chart.plotting_area();
    let boxes: Vec<(i32, i32, u32)> = labelled
        .iter()
        .map(|(b, l)| {
            let (x, y) = chart.backend_coord(&at(b));
            (x, y, area.estimate_text_size(l, &style).map_or(0, |(w, _)| w))
        })
        .collect();
    let bottoms = place_labels(&boxes, (TICK_SIZE - 6.0) as i32);
    for (((b, label), (_, y, _)), bottom) in labelled.into_iter().zip(&boxes).zip(bottoms) {
        // A label lifted over the one before it hangs from its bar by a
        // thin line, so that it reads as that bar's, not the gap's.
        if bottom < *y {
            let foot = ((b.x0 + b.x1) / 2.0, b.value);
            let (_, top) = chart.backend_coord(&foot);
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at(foot) + PathElement::new(vec![(0, -1), (0, bottom - top + 1)], LEADER),
                ))
                .map_err(err)?;
        }
        chart
            .draw_series(std::iter::once(
                EmptyElement::at(at(b))
                    + Text::new(label, (0, bottom - y), style.pos(Pos::new(HPos::Center, VPos::Bottom))),
            ))
            .map_err(err)?;
    }
    Ok(())
}

/// The top label of the give-up axis, in %, for shares up to `max`: the
/// least of 1, 2, 5, 10, 20, 50 and 100 that is at least `max`, so that
/// bars of a few per cent fill the panel (outage_recovery's 6 %: to 10),
/// and bars near 100 % (backoff's 99 %) still have their 100.
fn share_top(max: f64) -> f64 {
    [1.0, 2.0, 5.0, 10.0, 20.0, 50.0].into_iter().find(|&t| max <= t).unwrap_or(100.0)
}

/// Where to cut the attempts-per-success axis, if anywhere: at the
/// tallest bar no taller than twice the median when some bar is more than
/// three times that tall (backoff: 100 and 50.5 against bars of 6.7-10,
/// cut at 10), else `None`.
fn cost_cut(values: &[f64]) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let median = *sorted.get(sorted.len() / 2)?;
    let cap = sorted.iter().copied().filter(|&v| v <= 2.0 * median).fold(0.0, f64::max);
    (cap > 0.0 && sorted.last().is_some_and(|&top| top > 3.0 * cap)).then_some(cap)
}

impl Chart for RetryPolicies<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let points = self.points;
        let lanes = limiters(points);
        let Some(first) = points.first() else { return Ok(()) };
        // The number of logical requests, when every run has the same
        // (open-loop traffic); a closed population's depends on the run.
        let mut logical =
            points.iter().flat_map(|p| p.report.limiters.iter().filter_map(|l| l.clients.as_ref()));
        let count = logical.next().map(|k| k.logical);
        let same = count.filter(|&c| logical.all(|k| k.logical == c));
        let title = format!(
            "{}: retry policies, {} per {}{}",
            self.scenario,
            first.report.limit.requests,
            ratesim::time::format_duration(first.report.limit.window),
            same.map_or(String::new(), |c| format!(", {c} logical requests"))
        );
        let area = titled(root, &title)?;
        let (plots, legend) = with_legend(&area);
        // Cost per success, give-ups, time to success of the successes.
        let h = plots.dim_in_pixel().1;
        let (top, rest) = plots.split_vertically(h * 37 / 100);
        let (middle, bottom) = rest.split_vertically(h * 25 / 100);
        let n = points.len();
        let m = lanes.len().max(1);
        let find = |p: &'_ RetryPolicyPoint, label: &str| {
            p.report.limiters.iter().find(|l| l.label == label).cloned()
        };
        // Group g spans [g - 0.4, g + 0.4]; bar j takes its share of that.
        let bars = |f: Measure<'_>| -> Vec<(Bar, Option<f64>)> {
            let w = 0.8 / m as f64;
            let mut out = Vec::new();
            for (g, p) in points.iter().enumerate() {
                for (j, l) in lanes.iter().enumerate() {
                    let Some((value, ring)) = find(p, &l.label).as_ref().and_then(f) else { continue };
                    let x0 = g as f64 - 0.4 + w * j as f64;
                    let bar = Bar {
                        x0: x0 + w * 0.08,
                        x1: x0 + w * 0.92,
                        value,
                        colour: self.palette.colour(&l.spec),
                    };
                    out.push((bar, ring));
                }
            }
            out
        };
        let names: Vec<String> = points.iter().map(|p| p.label.clone()).collect();
        let two_lines = two_line_names(&plots, &names);
        let extra_lines = two_lines.as_ref().map_or(0, |n| n.iter().map(Vec::len).max().unwrap_or(1) - 1);
        let x_label_area = 30 + extra_lines as u32 * TICK_SIZE as u32;
        let x_fmt = |v: &f64| {
            let g = v.round();
            if two_lines.is_none() && (v - g).abs() < 1e-6 && g >= 0.0 && (g as usize) < n {
                names[g as usize].clone()
            } else {
                String::new()
            }
        };
        let x_range = -0.5f64..n as f64 - 0.5;

        // Top: attempts per success, linear, with each value written: what
        // a success cost, the calls of the requests that gave up included,
        // so that a policy that gives up does not look cheap.
        // A few bars far taller than the rest (not retrying against a
        // limiter that admits one at a time: 100 against 7-10) would
        // flatten the comparison: they are cut, torn under the cut and
        // labelled with their value.
        let mut cost =
            bars(&|l| l.clients.as_ref().and_then(|k| k.attempts_per_success()).map(|a| (a, None)));
        // One precision for every bar (6.98 beside 6.90, not 6.9).
        let values: Vec<f64> = cost.iter().map(|(b, _)| b.value).collect();
        let labels = ratesim::export::fmt_ratios_fixed(&values, 1);
        let cut = cost_cut(&values);
        let y_max = match cut {
            Some(cap) => cap * 1.2,
            None => values.iter().copied().fold(1.0, f64::max),
        };
        for (b, _) in &mut cost {
            b.value = b.value.min(y_max);
        }
        let mut chart =
            bar_panel(&top, x_range.clone(), y_max * 1.2, "attempts per success", 5, &x_fmt, x_label_area)?;
        if let Some(names) = &two_lines {
            write_names(&top, &chart, names)?;
        }
        draw_bars(&mut chart, &cost, 0.0)?;
        if let Some(cap) = cut {
            let torn = cost
                .iter()
                .filter(|(b, _)| b.value > cap)
                .map(|(b, _)| Rectangle::new([(b.x0, cap * 1.06), (b.x1, cap * 1.1)], WHITE.filled()));
            chart.draw_series(torn).map_err(err)?;
        }
        write_over(&mut chart, cost.iter().map(|(b, _)| b).zip(labels), y_max * 0.02)?;
        // A lane where nothing succeeded has no cost per success: it says so.
        let nothing = bars(&|l| l.clients.as_ref().filter(|k| k.succeeded == 0).map(|_| (0.0, None)));
        for (b, _) in &nothing {
            chart
                .draw_series(std::iter::once(Text::new(
                    "∞",
                    ((b.x0 + b.x1) / 2.0, y_max * 0.02),
                    font(TICK_SIZE).pos(Pos::new(HPos::Center, VPos::Bottom)),
                )))
                .map_err(err)?;
        }

        // Middle: the share of requests that gave up (out of attempts or
        // budget: they never succeed), written over every bar that is not 0.
        // Requests still waiting for a retry when the run ended (a closed
        // population's last requests) stand pale on top: neither success
        // nor give-up, and the label counts them in.
        let lost = bars(&|l| l.clients.as_ref().and_then(|k| k.gave_up_share()).map(|s| (s * 100.0, None)));
        let open = bars(&|l| {
            l.clients
                .as_ref()
                .filter(|k| k.logical > 0)
                .map(|k| ((k.gave_up + k.unfinished) as f64 / k.logical as f64 * 100.0, None))
        });
        let unfinished = open.iter().zip(&lost).any(|((o, _), (g, _))| o.value > g.value);
        let desc = if unfinished { "no success (%)" } else { "gave up (%)" };
        // To a round top over the tallest bar, not to 100 (outage_recovery's
        // 0 to 6 % drew bars of a few pixels), with room for the labels.
        let top = share_top(open.iter().map(|(b, _)| b.value).fold(0.0, f64::max));
        let mut chart = bar_panel(&middle, x_range.clone(), top * 1.25, desc, 3, &x_fmt, x_label_area)?;
        if let Some(names) = &two_lines {
            write_names(&middle, &chart, names)?;
        }
        for ((o, _), (g, _)) in open.iter().zip(&lost).filter(|((o, _), (g, _))| o.value > g.value) {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(o.x0, g.value), (o.x1, o.value)],
                    o.colour.mix(0.3).filled(),
                )))
                .map_err(err)?;
        }
        draw_bars(&mut chart, &lost, 0.0)?;
        // The axis says %: the labels are the numbers alone, narrow enough
        // to stand over their own bars (`0.3 %` ran over the next bar's).
        let labels = open.iter().map(|(b, _)| {
            if b.value > 0.0 {
                fmt_share(b.value / 100.0).trim_end_matches(" %").to_string()
            } else {
                "0".into()
            }
        });
        write_over(&mut chart, open.iter().map(|(b, _)| b).zip(labels), top * 0.024)?;

        // Bottom: the longest time to success (bar) and the median (ring)
        // of the requests that succeeded, on a log scale; 0 (every success
        // on its first attempt) sits on the floor. Where requests gave up,
        // a pale bar goes on up to "never".
        let secs = |q: f64, l: &LimiterReport| {
            l.clients.as_ref().and_then(|k| k.tts_quantile(q)).map(|t| t.as_secs_f64())
        };
        let tts = bars(&|l| secs(1.0, l).map(|max| (max, secs(0.5, l))));
        let positive = tts.iter().flat_map(|(b, r)| [Some(b.value), *r]).flatten().filter(|v| *v > 0.0);
        let (lo, hi) = positive.fold((f64::INFINITY, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let (y0, y1) = if hi > 0.0 {
            // A decade below the shortest time, so that only 0 sits on the floor.
            (10f64.powf(lo.log10().floor() - 1.0), 10f64.powf((hi * 1.5).log10().ceil()))
        } else {
            (1e-3, 1.0)
        };
        // Requests that gave up never succeed: a lane with any draws a pale
        // bar on from its longest time into a band "never" above the times.
        let never = bars(&|l| {
            l.clients
                .as_ref()
                .filter(|k| k.gave_up > 0)
                .map(|k| (k.tts_quantile(1.0).map_or(0.0, |t| t.as_secs_f64()), None))
        });
        let y_top = if never.is_empty() { y1 } else { y1 * 10f64.powf(0.8) };
        // Under "never" the top time's label (its dashed line) would touch
        // it: it is left out, the decade under it labelled.
        let y_fmt = |v: &f64| {
            if !never.is_empty() && (v / y1 - 1.0).abs() < 1e-6 { String::new() } else { tick(v) }
        };
        let mut chart = ChartBuilder::on(&bottom)
            .margin(MARGIN)
            .margin_right(MARGIN_RIGHT)
            .x_label_area_size(x_label_area)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(x_range.clone(), (y0..y_top).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .y_desc("time to success (s, log)")
            .axis_desc_style(font(LABEL_SIZE - 4.0))
            .label_style(font(TICK_SIZE - 2.0))
            .x_labels(2 * n + 1)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .disable_x_mesh()
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(err)?;
        if let Some(names) = &two_lines {
            write_names(&bottom, &chart, names)?;
        }
        if !never.is_empty() {
            let band = (y1 * y_top).sqrt();
            chart
                .draw_series(DashedLineSeries::new(
                    [(x_range.start, y1), (x_range.end, y1)],
                    6,
                    4,
                    BLACK.stroke_width(1),
                ))
                .map_err(err)?;
            // "never" stands as a tick label on the axis, at the band's middle.
            let (px, py) = chart.backend_coord(&(x_range.start, band));
            let (bx, by) = bottom.get_base_pixel();
            bottom
                .draw(&Text::new(
                    "never",
                    (px - bx - 8, py - by),
                    font(TICK_SIZE - 2.0).pos(Pos::new(HPos::Right, VPos::Center)),
                ))
                .map_err(err)?;
            for (b, _) in &never {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(b.x0, b.value.max(y0)), (b.x1, y_top)],
                        b.colour.mix(0.3).filled(),
                    )))
                    .map_err(err)?;
            }
        }
        draw_bars(&mut chart, &tts, y0)?;

        let mut entries: Vec<LegendEntry> = lanes
            .iter()
            .map(|l| LegendEntry::new(l.spec.short_name(), self.palette.colour(&l.spec), Mark::Solid))
            .collect();
        entries.push(LegendEntry::new("attempts per success =", BLACK, Mark::Heading));
        entries.push(LegendEntry::new("  all attempts / successes", BLACK, Mark::Heading));
        if cut.is_some() {
            entries.push(LegendEntry::new("  (torn bars cut)", BLACK, Mark::Heading));
        }
        entries.push(LegendEntry::new("time to success (log):", BLACK, Mark::Heading));
        entries.push(LegendEntry::new("bar = longest", RGBColor(120, 120, 120), Mark::Solid));
        entries.push(LegendEntry::new("ring = median", BLACK, Mark::Ring));
        entries.push(LegendEntry::new("on the floor: 0 s", BLACK, Mark::Heading));
        if !never.is_empty() {
            entries.push(LegendEntry::new("pale, to \"never\": some", RGBColor(120, 120, 120), Mark::Area));
            entries.push(LegendEntry::new("  requests gave up", BLACK, Mark::Heading));
        }
        if unfinished {
            entries.push(LegendEntry::new(
                "pale over gave up:",
                RGBColor(120, 120, 120),
                Mark::PaleOverSolid,
            ));
            entries.push(LegendEntry::new("  unfinished at the end,", BLACK, Mark::Heading));
            entries.push(LegendEntry::new("  not timed (longest is", BLACK, Mark::Heading));
            entries.push(LegendEntry::new("  of those done in time)", BLACK, Mark::Heading));
        }
        draw_legend(&legend, &entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plots' area of a 1200 px chart is about 900 px wide: five names as
    /// backoff's fit on one line each; outage_recovery's six, four of them
    /// `retry_after(jitter=...)`, would run together and go on two lines,
    /// broken before the settings; a name without settings stays whole.
    #[test]
    fn names_too_wide_for_their_groups_go_on_more_lines() {
        init_fonts(None).unwrap();
        let mut svg = String::new();
        let area = SVGBackend::with_string(&mut svg, (900, 500)).into_drawing_area();
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let backoff = names(&["none", "exponential", "full_jitter", "equal_jitter", "decorrelated"]);
        assert_eq!(two_line_names(&area, &backoff), None);
        let outage = names(&[
            "retry_after(jitter=0s)",
            "retry_after(jitter=1us)",
            "retry_after(jitter=1s)",
            "retry_after(jitter=3s)",
            "exponential",
            "full_jitter",
        ]);
        let lines = two_line_names(&area, &outage).expect("too wide for one line");
        assert_eq!(lines[1], ["retry_after", "(jitter=1us)"]);
        assert_eq!(lines[4], ["exponential"]);
        // retry_throttling's five: the throttle's settings on two lines.
        let limits = names(&[
            "none",
            "full_jitter",
            "full_jitter(budget=0.1)",
            "full_jitter(max_tokens=10, token_ratio=0.1)",
            "full_jitter(retry_quota=500)",
        ]);
        let lines = two_line_names(&area, &limits).expect("too wide for one line");
        assert_eq!(lines[3], ["full_jitter", "(max_tokens=10,", "token_ratio=0.1)"]);
        assert_eq!(lines[4], ["full_jitter", "(retry_quota=500)"]);
    }

    /// backoff's "none": "10.00" (28 px) over bars 31 px apart, the third
    /// bar far taller: the second label goes above the first; the third
    /// and the fourth, clear of the label before them, stay over their
    /// bars. Labels far enough apart stay where they are.
    /// backoff: not retrying against the leaky bucket costs 100 attempts
    /// per success, exponential 50.5, the rest 6.65 to 10: cut at 10.
    /// backoff_closed: 4.15 to 10.93, nothing far taller: no cut.
    #[test]
    fn only_bars_far_taller_than_the_rest_are_cut() {
        let backoff =
            [10.0, 10.0, 100.0, 10.0, 8.2, 8.2, 50.5, 8.2, 6.98, 7.02, 7.89, 7.01, 6.65, 6.69, 7.73];
        assert_eq!(cost_cut(&backoff), Some(10.0));
        let closed = [9.97, 9.97, 10.93, 10.05, 4.20, 4.15, 5.23, 4.97, 6.77, 6.44, 6.93, 6.55];
        assert_eq!(cost_cut(&closed), None);
        // Three times the cap exactly is not cut; just over it is.
        assert_eq!(cost_cut(&[1.0, 1.0, 3.0]), None);
        assert_eq!(cost_cut(&[1.0, 1.0, 3.01]), Some(1.0));
        assert_eq!(cost_cut(&[]), None);
    }

    /// outage_recovery gives up 0 to 6 %: an axis to 10, not 100;
    /// backoff's 99 % and backoff_closed's 91 % keep 100.
    #[test]
    fn the_give_up_axis_ends_at_a_round_top_over_the_tallest_bar() {
        assert_eq!(share_top(6.0), 10.0);
        assert_eq!(share_top(0.04), 1.0);
        assert_eq!(share_top(0.0), 1.0);
        assert_eq!(share_top(10.0), 10.0);
        assert_eq!(share_top(10.5), 20.0);
        assert_eq!(share_top(91.0), 100.0);
        assert_eq!(share_top(99.0), 100.0);
    }

    #[test]
    fn labels_that_would_touch_go_above_the_one_before() {
        let h = 12;
        let labels = [(100, 200, 28), (131, 200, 28), (162, 40, 40), (193, 200, 28)];
        assert_eq!(place_labels(&labels, h), [200, 187, 40, 200]);
        // backoff_closed: 10.06 then 10.88, 5 px higher: above it.
        assert_eq!(place_labels(&[(100, 60, 30), (131, 55, 30)], h), [60, 47]);
        // 60 px apart: as they are.
        assert_eq!(place_labels(&[(100, 60, 28), (160, 60, 28)], h), [60, 60]);
    }
}
