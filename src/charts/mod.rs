//! Charts, drawn with plotters as SVG and PNG (binary side only: the library
//! never sees plotters). Which charts a run has, and their captions, the
//! library decides (`ratesim::run`); this module only draws them. Every chart is 1200 x 600 with a title, axis titles
//! with units and a legend; each limiter has the same colour in every chart
//! of a run, and no two limiters of a run look alike ([`RunPalette`]).

pub mod admission_curve;
pub mod broken_axis;
pub mod burst_pair_map;
pub mod colour;
pub mod delay_cdf;
pub mod error_vs_slots;
pub mod load_sweep;
pub mod nodes_timeline;
pub mod png_text;
pub mod retry_policies;
pub mod retry_timeline;
pub mod seed_sweep;
pub mod shaping_timeline;
pub mod time_to_success;
pub mod timeline;
pub mod topology_sweep;
pub mod which_limiter;
pub mod window_count;
pub mod windows_diagram;

use std::path::Path;
use std::sync::Once;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

use colour::luma;
use ratesim::LimiterSpec;
use ratesim::export::OutputDir;
use ratesim::limiter::RetryAfter;
use ratesim::run::{self, ChartKind, RunOutputs};

pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 600;
/// The font family every chart uses; registered from DejaVu Sans (embedded)
/// or from the user's font.
pub const FONT: &str = "sans-serif";
pub const TITLE_SIZE: f64 = 30.0;
pub const LABEL_SIZE: f64 = 22.0;
pub const TICK_SIZE: f64 = 18.0;
pub const LEGEND_SIZE: f64 = 17.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Svg,
    Png,
}

impl Format {
    pub fn ext(self) -> &'static str {
        match self {
            Format::Svg => "svg",
            Format::Png => "png",
        }
    }
}

/// Makes the chart font available. DejaVu Sans is compiled in, so no system
/// font library is needed; `custom` replaces it (for scripts DejaVu lacks,
/// such as Chinese). Only the first call has an effect.
pub fn init_fonts(custom: Option<&Path>) -> Result<()> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = (|| {
            let (regular, bold): (&'static [u8], &'static [u8]) = match custom {
                Some(path) => {
                    // Refused as `[output] font` is (a FIFO unopened, a
                    // huge file unread), in the same words.
                    let bytes: &'static [u8] = Box::leak(ratesim::font::read_font(path)?.into_boxed_slice());
                    (bytes, bytes)
                }
                None => (dejavu::sans::regular(), dejavu::sans::bold()),
            };
            let name = custom.map_or("the embedded DejaVu Sans".to_string(), |p| p.display().to_string());
            let bad = || anyhow!("{name} is not a usable TrueType/OpenType font");
            plotters::style::register_font(FONT, FontStyle::Normal, regular).map_err(|_| bad())?;
            plotters::style::register_font(FONT, FontStyle::Bold, bold).map_err(|_| bad())?;
            png_text::set_fonts(regular, bold).map_err(|_| bad())?;
            Ok(())
        })();
    });
    result
}

/// The characters of `text` that the embedded DejaVu Sans cannot draw (in a
/// PNG they would show as boxes): the cue to pass `--font`.
pub fn missing_glyphs(text: &str) -> Vec<char> {
    use ab_glyph::Font;
    let Ok(font) = ab_glyph::FontRef::try_from_slice(dejavu::sans::regular()) else { return Vec::new() };
    let mut missing: Vec<char> =
        text.chars().filter(|c| !c.is_whitespace() && font.glyph_id(*c).0 == 0).collect();
    missing.dedup();
    missing
}

/// The own colour of a limiter (its algorithm's file chooses it); charts
/// draw a limiter in its run's [`RunPalette`] colour, which is this one unless
/// another limiter of the run already looks like it. A limiter whose
/// Retry-After header is rounded gets a colour near its algorithm's, the
/// hue turned [`ROUNDED_HUE_TURN`] degrees one way for `ceil_seconds` and the
/// other way for `floor_seconds` and three times as far for `redis_cell`
/// ([`turned`]), so that limiters differing
/// only by that rounding can be told apart as lines beside the black sliding
/// log and as bars against the grey of offered requests. (A darker shade
/// for `ceil_seconds`, maroon beside the fixed window's red, was told from
/// the sliding log mostly by its width; a lighter one for `floor_seconds`,
/// pink, nearly vanished against the grey bars.)
pub fn colour(spec: &LimiterSpec) -> RGBColor {
    let own = spec.style().rgb;
    match spec.retry_after {
        RetryAfter::Exact => rgb(own),
        RetryAfter::CeilSeconds => rgb(turned(own, -ROUNDED_HUE_TURN)),
        RetryAfter::FloorSeconds => rgb(turned(own, ROUNDED_HUE_TURN)),
        RetryAfter::RedisCell => rgb(turned(own, 3.0 * ROUNDED_HUE_TURN)),
    }
}

/// How far (degrees) a rounded Retry-After header turns its limiter's hue.
const ROUNDED_HUE_TURN: f64 = 40.0;

/// The most a colour [`turned`] gives may weigh in light (its luma, 0 to
/// 255): lighter ones fade against the grey of offered requests.
const TURNED_MAX_LUMA: f64 = 150.0;

/// `c` with its hue turned by `degrees`, strong enough to read as a thin
/// line and as a bar on grey: saturation at least 0.6, value from 0.55 to
/// 0.85, and no lighter than [`TURNED_MAX_LUMA`]. A grey or black (the
/// sliding log) turns from red, hue 0.
fn turned(c: (u8, u8, u8), degrees: f64) -> (u8, u8, u8) {
    let (h, s, v) = to_hsv(c);
    let t = hsv((h + degrees).rem_euclid(360.0), s.max(0.6), v.clamp(0.55, 0.85));
    let l = luma(t);
    if l <= TURNED_MAX_LUMA {
        return t;
    }
    let f = TURNED_MAX_LUMA / l;
    let dim = |u: u8| (f64::from(u) * f).round() as u8;
    (dim(t.0), dim(t.1), dim(t.2))
}

/// The colour of hue `h` (degrees), saturation `s` and value `v` (0 to 1).
fn hsv(h: f64, s: f64, v: f64) -> (u8, u8, u8) {
    let c = v * s;
    let x = c * (1.0 - ((h / 60.0) % 2.0 - 1.0).abs());
    let (r, g, b) = match (h / 60.0) as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = v - c;
    let byte = |u: f64| ((u + m) * 255.0).round() as u8;
    (byte(r), byte(g), byte(b))
}

/// A colour's hue (degrees, 0 for a grey), saturation and value: the
/// inverse of [`hsv`].
fn to_hsv(c: (u8, u8, u8)) -> (f64, f64, f64) {
    let (r, g, b) = (f64::from(c.0) / 255.0, f64::from(c.1) / 255.0, f64::from(c.2) / 255.0);
    let max = r.max(g).max(b);
    let d = max - r.min(g).min(b);
    let h = if d == 0.0 {
        0.0
    } else if max == r {
        60.0 * ((g - b) / d).rem_euclid(6.0)
    } else if max == g {
        60.0 * ((b - r) / d + 2.0)
    } else {
        60.0 * ((r - g) / d + 4.0)
    };
    (h, if max == 0.0 { 0.0 } else { d / max }, max)
}

pub fn rgb((r, g, b): (u8, u8, u8)) -> RGBColor {
    RGBColor(r, g, b)
}

/// How far apart two colours look: their CIEDE2000 difference
/// ([`colour::delta_e`]; 0 for the same colour, 100 for black and white).
pub fn colour_distance(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    colour::delta_e(a, b)
}

/// Two limiters of one run whose colours are closer than this
/// ([`colour_distance`], CIEDE2000) look alike in a chart: the later one is
/// given another colour. The two token buckets (capacity 1 and the
/// default) were 15.8 apart and the leaky buckets of `shaping` 10.8, hard
/// to tell apart as lines; Tableau 10, the palette many of the limiters'
/// colours come from, has its red and brown 16.2 apart. About a dozen
/// colours strong enough for a line on white can be 20 apart; past that a
/// run's limiters share colours and are told apart by their dashes
/// ([`Pattern`]).
pub const MIN_COLOUR_DISTANCE: f64 = 20.0;

/// A colour given to a limiter whose own is taken is chosen as far as this
/// from every other, where it can be: farther than this no longer counts.
const ENOUGH_COLOUR_DISTANCE: f64 = 28.0;

/// How far from its own colour a shade of its hue may be and still be
/// that limiter's colour ([`colour::shades`]).
const SHADE_REACH: f64 = 20.0;

/// Colours charts draw themselves beside the limiters' (the grey of
/// offered requests, the red of a node's limit, the dark grey of the limit
/// line): a limiter given another colour keeps away from them too.
const RESERVED_COLOURS: [(u8, u8, u8); 3] = [(170, 170, 170), (200, 0, 0), LIMIT_RGB];

/// The limit line's colour in `window_count`: a dark grey no limiter is
/// drawn in (its red dashes once merged into the fixed window's red where
/// the fixed window sat at L).
const LIMIT_RGB: (u8, u8, u8) = (90, 90, 90);
pub const LIMIT_COLOUR: RGBColor = RGBColor(LIMIT_RGB.0, LIMIT_RGB.1, LIMIT_RGB.2);

/// The colours a limiter may be given when neither its own nor a shade of
/// it is free, first to last: Okabe and Ito's palette for colour-blind
/// readers (without its yellow, too light for a line on white), Tableau
/// 10 (without its grey, the offered requests'), then dark ones. Each is
/// strong enough for a line on white.
const SPARE_COLOURS: [(u8, u8, u8); 21] = [
    (0, 114, 178),
    (230, 159, 0),
    (0, 158, 115),
    (213, 94, 0),
    (204, 121, 167),
    (86, 180, 233),
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (188, 189, 34),
    (23, 190, 207),
    (0, 0, 128),
    (128, 0, 0),
    (0, 100, 0),
    (100, 0, 100),
    (0, 128, 128),
    (128, 128, 0),
];

/// How a limiter's line is drawn besides its colour: solid, or, where a
/// run has more limiters than colours far enough apart, dashed: limiters
/// of one colour (or near) then differ by their dashes in line charts and
/// by their marker in charts of points ([`Pattern::marker`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pattern(pub u8);

impl Pattern {
    pub const SOLID: Pattern = Pattern(0);
    /// How many patterns there are: solid and three dashes.
    pub const COUNT: u8 = 4;

    /// The dash and the gap between dashes, in pixels; `None` for solid.
    /// Each unlike the limit line's dashes (12 and 8, dark grey).
    pub fn dashes(self) -> Option<(u32, u32)> {
        match self.0 {
            0 => None,
            1 => Some((8, 5)),
            2 => Some((2, 4)),
            _ => Some((22, 6)),
        }
    }

    /// The marker of a point in charts of points: a dot, a square, a
    /// triangle or a diamond.
    pub fn marker(self) -> Marker {
        match self.0 {
            0 => Marker::Dot,
            1 => Marker::Square,
            2 => Marker::Triangle,
            _ => Marker::Diamond,
        }
    }
}

/// A point's marker ([`Pattern::marker`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Dot,
    Square,
    Triangle,
    Diamond,
}

/// The colours of one run's limiters, the same in every chart of the run.
/// Each limiter keeps its own colour ([`colour`]: every shipped scenario's
/// limiters do) unless a limiter listed before it already has a colour
/// closer than [`MIN_COLOUR_DISTANCE`] (3, 8 and 13 slots share a magenta,
/// GCRA bursts 4 to 7 a light gold). Then it gets the shade of its own hue
/// farthest from every colour taken ([`colour::shades`], up to
/// [`SHADE_REACH`] from its own: a family stays recognisable), else the
/// spare colour farthest from them ([`SPARE_COLOURS`]). Where none is far
/// enough (more limiters than a dozen or so), it keeps its own colour, or
/// the farthest shade or spare, dashed ([`Pattern`]): no two limiters of a
/// run look alike.
#[derive(Clone, Debug, Default)]
pub struct RunPalette {
    colours: Vec<(LimiterSpec, RGBColor, Pattern)>,
}

impl RunPalette {
    /// The palette of these limiters, in this order (a repeated one once).
    pub fn new<'a>(specs: impl IntoIterator<Item = &'a LimiterSpec>) -> RunPalette {
        let mut unique: Vec<&LimiterSpec> = Vec::new();
        for s in specs {
            if !unique.contains(&s) {
                unique.push(s);
            }
        }
        let own: Vec<(u8, u8, u8)> = unique.iter().map(|s| colour(s).rgb()).collect();
        // First every limiter that can keep its own colour, in order; then
        // the others, each as far as it can be from all taken so far.
        let mut taken: Vec<((u8, u8, u8), Pattern)> = Vec::new();
        let mut keeps = vec![false; unique.len()];
        for (i, c) in own.iter().enumerate() {
            if taken.iter().all(|(t, _)| colour_distance(*c, *t) >= MIN_COLOUR_DISTANCE) {
                keeps[i] = true;
                taken.push((*c, Pattern::SOLID));
            }
        }
        let mut colours = Vec::with_capacity(unique.len());
        for (i, spec) in unique.iter().enumerate() {
            let chosen = if keeps[i] { (own[i], Pattern::SOLID) } else { Self::another(own[i], &taken) };
            if !keeps[i] {
                taken.push(chosen);
            }
            colours.push(((*spec).clone(), rgb(chosen.0), chosen.1));
        }
        RunPalette { colours }
    }

    /// The colour and pattern of a limiter whose own colour `own` is taken.
    fn another(own: (u8, u8, u8), taken: &[((u8, u8, u8), Pattern)]) -> ((u8, u8, u8), Pattern) {
        let shades: Vec<(u8, u8, u8)> =
            colour::shades(own).into_iter().filter(|s| colour_distance(*s, own) <= SHADE_REACH).collect();
        for p in (0..Pattern::COUNT).map(Pattern) {
            // How near the nearest colour of this pattern, or reserved, is.
            let nearest = |c: (u8, u8, u8)| {
                taken
                    .iter()
                    .filter(|(_, q)| *q == p)
                    .map(|(t, _)| *t)
                    .chain(RESERVED_COLOURS)
                    .map(|t| colour_distance(c, t))
                    .fold(f64::INFINITY, f64::min)
            };
            // The farthest of these, up to ENOUGH (the first of equally
            // far ones: the same run gets the same colours), if far enough.
            let farthest = |cands: &[(u8, u8, u8)]| {
                cands
                    .iter()
                    .map(|&c| (c, nearest(c).min(ENOUGH_COLOUR_DISTANCE)))
                    .fold(None, |best: Option<((u8, u8, u8), f64)>, (c, d)| match best {
                        Some((_, bd)) if bd >= d => best,
                        _ => Some((c, d)),
                    })
                    .filter(|(_, d)| *d >= MIN_COLOUR_DISTANCE)
                    .map(|(c, _)| (c, p))
            };
            // Dashed, its own colour first: the same colour, told apart by
            // the dashes.
            if p != Pattern::SOLID && nearest(own) >= MIN_COLOUR_DISTANCE {
                return (own, p);
            }
            let spares: Vec<(u8, u8, u8)> =
                SPARE_COLOURS.iter().copied().filter(|c| !taken.contains(&(*c, p))).collect();
            if let Some(found) = farthest(&shades).or_else(|| farthest(&spares)) {
                return found;
            }
        }
        // Every pattern crowded: its own colour in the last.
        (own, Pattern(Pattern::COUNT - 1))
    }

    /// The palette of a run's limiters: its simulation's first, then its
    /// sweeps'. (A run's windows diagram draws only limiters of the run; the
    /// sweeps' burst-pair diagram's lanes that are not among them keep their
    /// own colours.)
    pub fn of_run(outputs: &RunOutputs) -> RunPalette {
        let mut specs: Vec<&LimiterSpec> = Vec::new();
        let reports = outputs
            .report
            .iter()
            .chain(outputs.load.iter().flatten().map(|p| &p.report))
            .chain(outputs.retry_policies.iter().flatten().map(|p| &p.report))
            .chain(outputs.seeds.iter().flat_map(|s| s.own()))
            .chain(outputs.topology.iter().flat_map(|t| t.points.iter().map(|p| &p.report)));
        for r in reports {
            specs.extend(r.limiters.iter().map(|l| &l.spec));
        }
        if let Some(bp) = &outputs.burst_pair {
            specs.extend(bp.rows.iter().map(|r| &r.spec));
        }
        RunPalette::new(specs)
    }

    /// The colour `spec` is drawn in; its own ([`colour`]) for a limiter not
    /// in the run.
    pub fn colour(&self, spec: &LimiterSpec) -> RGBColor {
        self.colours.iter().find(|(s, ..)| s == spec).map_or_else(|| colour(spec), |(_, c, _)| *c)
    }

    /// How `spec`'s line is drawn besides its colour: solid unless the run
    /// has more limiters than colours far enough apart.
    pub fn pattern(&self, spec: &LimiterSpec) -> Pattern {
        self.colours.iter().find(|(s, ..)| s == spec).map_or(Pattern::SOLID, |(.., p)| *p)
    }

    /// The legend mark of `spec`'s line: [`Mark::Line`], or its dashes.
    pub fn line_mark(&self, spec: &LimiterSpec) -> Mark {
        match self.pattern(spec) {
            Pattern::SOLID => Mark::Line,
            p => Mark::Patterned(p),
        }
    }

    /// The legend mark of `spec`'s points: [`Mark::Dot`], or its marker.
    pub fn dot_mark(&self, spec: &LimiterSpec) -> Mark {
        match self.pattern(spec) {
            Pattern::SOLID => Mark::Dot,
            p => Mark::Marked(p),
        }
    }

    /// The legend mark of `spec`'s points drawn hollow: [`Mark::Ring`], or
    /// its marker's outline.
    pub fn ring_mark(&self, spec: &LimiterSpec) -> Mark {
        match self.pattern(spec) {
            Pattern::SOLID => Mark::Ring,
            p => Mark::Outline(p),
        }
    }
}

/// A limiter's line through `points` in `style`: solid, or in `pattern`'s
/// dashes.
pub fn draw_line<DB, CT>(
    chart: &mut ChartContext<'_, DB, CT>,
    points: Vec<CT::From>,
    style: ShapeStyle,
    pattern: Pattern,
) -> Result<()>
where
    DB: DrawingBackend,
    CT: plotters::coord::CoordTranslate,
    CT::From: Clone + 'static,
{
    match pattern.dashes() {
        None => chart.draw_series(LineSeries::new(points, style)).map(|_| ()),
        Some((dash, gap)) => chart.draw_series(DashedLineSeries::new(points, dash, gap, style)).map(|_| ()),
    }
    .map_err(err)
}

/// A limiter's point at `at`, of radius `r` pixels: a dot, or the marker
/// of its pattern ([`Pattern::marker`]) of about the dot's area; filled,
/// or an outline (a ring) as `style` says.
pub fn draw_marker<DB, CT>(
    chart: &mut ChartContext<'_, DB, CT>,
    at: CT::From,
    r: i32,
    style: ShapeStyle,
    pattern: Pattern,
) -> Result<()>
where
    DB: DrawingBackend,
    CT: plotters::coord::CoordTranslate,
    CT::From: Clone + 'static,
{
    let Some(points) = marker_outline(pattern.marker(), r) else {
        return chart.draw_series(std::iter::once(Circle::new(at, r, style))).map(|_| ()).map_err(err);
    };
    if style.filled {
        chart.draw_series(std::iter::once(EmptyElement::at(at) + Polygon::new(points, style)))
    } else {
        let mut closed = points.clone();
        closed.push(points[0]);
        chart.draw_series(std::iter::once(EmptyElement::at(at) + PathElement::new(closed, style)))
    }
    .map(|_| ())
    .map_err(err)
}

/// The corners of `marker` around (0, 0), of about the area of a dot of
/// radius `r` pixels; `None` for the dot.
pub fn marker_outline(marker: Marker, r: i32) -> Option<Vec<(i32, i32)>> {
    let scaled = |f: f64| (f64::from(r) * f).round() as i32;
    match marker {
        Marker::Dot => None,
        Marker::Square => {
            let s = scaled(0.89);
            Some(vec![(-s, -s), (s, -s), (s, s), (-s, s)])
        }
        Marker::Triangle => {
            let (t, w) = (scaled(1.35), scaled(1.17));
            Some(vec![(0, -t), (w, t * 2 / 3), (-w, t * 2 / 3)])
        }
        Marker::Diamond => {
            let d = scaled(1.25);
            Some(vec![(0, -d), (d, 0), (0, d), (-d, 0)])
        }
    }
}

/// What a limiter was offered, for "admitted X of {offered}" in a chart:
/// the count, and "attempts" when clients retry (a retried request is
/// offered once per attempt, so the count is not of requests).
pub fn offered_count(l: &ratesim::metrics::LimiterReport) -> String {
    match l.clients {
        Some(_) => format!("{} attempts", l.counts.offered),
        None => l.counts.offered.to_string(),
    }
}

/// Line width for a limiter in line charts (the aligned fixed window is drawn
/// wide and first, so that N = 1, identical by definition, shows on top).
pub fn line_width(spec: &LimiterSpec) -> u32 {
    spec.style().line_width
}

/// Which charts, in which formats.
#[derive(Clone, Debug)]
pub struct ChartSet {
    pub formats: Vec<Format>,
}

/// A chart's drawing, generic over the backend.
pub trait Chart {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>;

    /// The image's height in pixels: [`HEIGHT`], or more for a chart of
    /// many strips ([`strips_height`]). Every chart is [`WIDTH`] wide.
    fn height(&self) -> u32 {
        HEIGHT
    }
}

/// The least height (in pixels) each of a chart's stacked strips keeps.
pub const MIN_STRIP: u32 = 60;

/// The height of a chart of `n` strips stacked: [`HEIGHT`], or taller where
/// that would leave a strip under [`MIN_STRIP`] pixels (the 11 strips of
/// `algorithms` were 44 px each, their names and labels squeezed small), so
/// that text keeps its size whatever the count.
pub fn strips_height(n: usize) -> u32 {
    // The title band, the time axis title and the last strip's time labels.
    const AROUND: u32 = TITLE_BAND + 40 + 30;
    HEIGHT.max(AROUND.saturating_add(MIN_STRIP.saturating_mul(u32::try_from(n).unwrap_or(u32::MAX))))
}

/// Draws a chart the run's outputs call for, in every format, into the
/// staged folder; returns the file names written.
pub fn draw(set: &ChartSet, chart: &run::Chart, outputs: &RunOutputs) -> Result<Vec<String>> {
    let staged = outputs.staged();
    let name = outputs.scenario.name.as_str();
    let (report, bp, load) = (outputs.report.as_ref(), outputs.burst_pair.as_ref(), outputs.load.as_deref());
    let missing = || anyhow!("chart {} has no data", chart.name);
    let palette = &RunPalette::of_run(outputs);
    match &chart.kind {
        ChartKind::WindowCount => {
            let report = report.ok_or_else(missing)?;
            write(staged, set, chart.name, &window_count::WindowCount { scenario: name, report, palette })
        }
        ChartKind::Timeline => {
            let report = report.ok_or_else(missing)?;
            write(staged, set, chart.name, &timeline::Timeline { scenario: name, report, palette })
        }
        ChartKind::RetryTimeline => {
            let report = report.ok_or_else(missing)?;
            write(staged, set, chart.name, &retry_timeline::RetryTimeline { scenario: name, report, palette })
        }
        ChartKind::TimeToSuccess => {
            let report = report.ok_or_else(missing)?;
            write(
                staged,
                set,
                chart.name,
                &time_to_success::TimeToSuccess { scenario: name, report, palette },
            )
        }
        ChartKind::ShapingTimeline => {
            let report = report.ok_or_else(missing)?;
            write(
                staged,
                set,
                chart.name,
                &shaping_timeline::ShapingTimeline { scenario: name, report, palette },
            )
        }
        ChartKind::DelayCdf => {
            let report = report.ok_or_else(missing)?;
            write(staged, set, chart.name, &delay_cdf::DelayCdf { scenario: name, report, palette })
        }
        ChartKind::AdmissionCurve => {
            let report = report.ok_or_else(missing)?;
            write(
                staged,
                set,
                chart.name,
                &admission_curve::AdmissionCurve { scenario: name, report, palette },
            )
        }
        ChartKind::WindowsDiagram(d) => write(staged, set, chart.name, &windows_diagram::Diagram(d, palette)),
        ChartKind::ErrorVsSlots => {
            let result = bp.ok_or_else(missing)?;
            write(staged, set, chart.name, &error_vs_slots::ErrorVsSlots { scenario: name, result, palette })
        }
        ChartKind::BurstPairMap(_) => {
            let result = outputs.burst_pair_map.as_ref().ok_or_else(missing)?;
            let own = bp.map_or(&[][..], |b| &b.rows[..]);
            let reference = result.rows.iter().map(|r| !own.iter().any(|o| o.spec == r.spec)).collect();
            write(
                staged,
                set,
                chart.name,
                &burst_pair_map::BurstPairMap { scenario: name, palette, result, reference },
            )
        }
        ChartKind::WhichLimiter(i) => {
            let point = load.and_then(|l| l.get(*i)).ok_or_else(missing)?;
            write(staged, set, chart.name, &which_limiter::WhichLimiter { scenario: name, point, palette })
        }
        ChartKind::RetryPolicies => {
            let points = outputs.retry_policies.as_deref().ok_or_else(missing)?;
            write(staged, set, chart.name, &retry_policies::RetryPolicies { scenario: name, points, palette })
        }
        ChartKind::LoadSweep => {
            let points = load.ok_or_else(missing)?;
            write(staged, set, chart.name, &load_sweep::LoadSweep { scenario: name, points, palette })
        }
        ChartKind::NodesTimeline => {
            let report = report.ok_or_else(missing)?;
            let topology = outputs.scenario.nodes.as_ref().ok_or_else(missing)?;
            write(
                staged,
                set,
                chart.name,
                &nodes_timeline::NodesTimeline { scenario: name, report, topology },
            )
        }
        ChartKind::TopologySweep(i) => {
            let result = outputs.topology.get(*i).ok_or_else(missing)?;
            write(staged, set, chart.name, &topology_sweep::TopologySweep { scenario: name, result, palette })
        }
        ChartKind::SeedSweep => {
            let result = outputs.seeds.as_ref().ok_or_else(missing)?;
            write(staged, set, chart.name, &seed_sweep::SeedSweep { scenario: name, result, palette })
        }
    }
}

pub fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("chart drawing failed: {e:?}")
}

/// Renders a chart to an SVG string.
pub fn svg_string(chart: &impl Chart) -> Result<String> {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (WIDTH, chart.height())).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        chart.draw(&root)?;
        root.present().map_err(err)?;
    }
    Ok(s)
}

/// Renders a chart to PNG bytes: drawn into memory, then encoded here, so
/// that the file is written like every other output file, through the
/// staged folder, and a failed write says why in plain words ("File too
/// large"), not in the drawing library's nested error values. The pixels
/// are those the drawing library saved; zlib's default level (where it
/// saved at the fastest) halves the files (backoff's five charts: 533 KB
/// -> 250 KB) for about 15 ms more per chart.
pub fn png_bytes(chart: &impl Chart) -> Result<Vec<u8>> {
    let height = chart.height();
    let mut rgb = vec![0; WIDTH as usize * height as usize * 3];
    {
        let root =
            png_text::PngBackend(BitMapBackend::with_buffer(&mut rgb, (WIDTH, height))).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        chart.draw(&root)?;
        root.present().map_err(err)?;
    }
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, WIDTH, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Default);
    encoder.set_filter(png::FilterType::Sub);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    encoder
        .write_header()
        .and_then(|mut w| w.write_image_data(&rgb))
        .map_err(|e| anyhow!("cannot encode the PNG: {e}"))?;
    Ok(bytes)
}

/// Writes the chart in every format into the staged output; returns the
/// file names written.
pub fn write(staged: &OutputDir, set: &ChartSet, name: &str, chart: &impl Chart) -> Result<Vec<String>> {
    let mut files = Vec::new();
    for f in &set.formats {
        let file = format!("{name}.{}", f.ext());
        match f {
            Format::Svg => staged.write(&file, svg_string(chart)?)?,
            Format::Png => staged.write(&file, png_bytes(chart)?)?,
        }
        files.push(file);
    }
    Ok(files)
}

pub fn font(size: f64) -> TextStyle<'static> {
    (FONT, size).into_font().into()
}

pub fn bold(size: f64) -> TextStyle<'static> {
    (FONT, size, FontStyle::Bold).into_font().into()
}

/// The height of the title band.
const TITLE_BAND: u32 = 50;
/// The smallest a title that fits on one line is drawn, before it wraps.
const TITLE_MIN_SIZE: f64 = 20.0;

/// Splits off a title band at the top of the root and draws the title there;
/// returns the rest. A title too wide for the image (a long scenario name)
/// is drawn smaller, down to [`TITLE_MIN_SIZE`], then on two or three lines
/// of a size that fits the band: never cut off.
pub fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
) -> Result<DrawingArea<DB, Shift>> {
    let (top, rest) = root.split_vertically(TITLE_BAND);
    let width = top.dim_in_pixel().0.saturating_sub(40);
    let (size, lines) = title_layout(&top, title, width);
    // One line at full size where it always was; smaller ones centred in
    // the band.
    let line_h = (size * 1.15).ceil() as i32;
    let y0 = if lines.len() == 1 && size == TITLE_SIZE {
        12
    } else {
        ((TITLE_BAND as i32 - line_h * lines.len() as i32) / 2).max(0) + (line_h - size as i32) / 2
    };
    for (k, line) in lines.iter().enumerate() {
        top.draw_text(line, &bold(size), (20, y0 + line_h * k as i32)).map_err(err)?;
    }
    Ok(rest)
}

/// The title's size and lines: the largest size at which it fits `width`
/// on one line (down to [`TITLE_MIN_SIZE`]), else on as few lines as fit
/// the band.
fn title_layout<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    width: u32,
) -> (f64, Vec<String>) {
    let mut size = TITLE_SIZE;
    while size >= TITLE_MIN_SIZE {
        if text_width(area, title, &bold(size)) <= width {
            return (size, vec![title.to_string()]);
        }
        size -= 1.0;
    }
    for n in 2..=3 {
        // The largest size whose n lines fit the band's height.
        let mut size = ((f64::from(TITLE_BAND) - 4.0) / (n as f64 * 1.15)).floor().min(TITLE_MIN_SIZE - 1.0);
        while size >= 9.0 {
            let lines = wrap(area, title, &bold(size), width);
            if lines.len() <= n {
                return (size, lines);
            }
            size -= 1.0;
        }
    }
    // Past three lines of 9 px (a name of several hundred characters): the
    // first three lines, the last ending in an ellipsis.
    let mut lines = wrap(area, title, &bold(9.0), width);
    lines.truncate(3);
    if let Some(last) = lines.last_mut() {
        while !last.is_empty() && text_width(area, &format!("{last}…"), &bold(9.0)) > width {
            last.pop();
        }
        last.push('…');
    }
    (9.0, lines)
}

/// The width `text` takes in `style`, in pixels.
fn text_width<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, text: &str, style: &TextStyle) -> u32 {
    area.estimate_text_size(text, style).map_or(0, |(w, _)| w)
}

/// One line of `text` no wider than `width` pixels, and its font size:
/// `size` if it fits, else smaller, down to 9; past that the line is cut
/// short with an ellipsis (where a row has room for one line only).
pub fn fit_line<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    size: f64,
    width: u32,
) -> (String, f64) {
    const SMALLEST: f64 = 9.0;
    let mut s = size;
    while s > SMALLEST && text_width(area, text, &font(s)) > width {
        s -= 1.0;
    }
    let mut line = text.to_string();
    if text_width(area, &line, &font(s)) > width {
        while !line.is_empty() && text_width(area, &format!("{line}…"), &font(s)) > width {
            line.pop();
        }
        line.push('…');
    }
    (line, s)
}

/// `text` in lines no wider than `width` pixels in `style`: broken between
/// words, and inside a word only where the word alone is wider.
pub fn wrap<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
    width: u32,
) -> Vec<String> {
    wrap_with(text, width, &|s| text_width(area, s, style))
}

/// A share as a percentage for a legend: whole percents (`5 %`, `38 %`),
/// one decimal under 1 % and over 99 % (`0.4 %`, `99.7 %`), and more where
/// that still rounds to 0 or 100: only a share of exactly 0 or 1 reads
/// `0 %` or `100 %` (2399 of 2406 succeeded is `99.7 %`, beside `0.3 %`
/// that gave up, not `100 %`).
pub fn fmt_share(v: f64) -> String {
    let p = v * 100.0;
    let mut decimals = usize::from((p > 0.0 && p < 1.0) || (p > 99.0 && p < 100.0));
    let rounds_to = |d: usize, to: f64| format!("{p:.d$}").parse::<f64>() == Ok(to);
    while decimals < 6 && ((p > 0.0 && rounds_to(decimals, 0.0)) || (p < 100.0 && rounds_to(decimals, 100.0)))
    {
        decimals += 1;
    }
    format!("{p:.decimals$} %")
}

/// A tick label without a needless `.0`: `10`, `2.5`.
pub fn tick(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 { format!("{:.0}", v) } else { format!("{}", (v * 1e6).round() / 1e6) }
}

/// Where a chart of the run's bins ends, in ns: the end of the bin that
/// holds the run's last instant, so the last bin is drawn as wide as the
/// others. (A run without `duration` ends 1 ns after its last event; when
/// that event is on a bin's start, as retries sent to a window's start
/// are, its bin would be drawn 1 ns wide.)
pub fn bins_end(r: &ratesim::RunReport) -> u64 {
    let w = r.timeline.width().get();
    r.end.get().div_ceil(w).checked_mul(w).unwrap_or(r.end.get())
}

/// A time axis unit that keeps tick labels short: (divisor in ns, unit name).
pub fn time_unit(span_ns: u64) -> (f64, &'static str) {
    if span_ns >= 180_000_000_000 {
        (60e9, "min")
    } else if span_ns >= 2_000_000_000 {
        (1e9, "s")
    } else if span_ns >= 2_000_000 {
        (1e6, "ms")
    } else if span_ns >= 2_000 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    }
}

/// How a legend entry is marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Line,
    Dashed,
    /// A limiter's line in its dashes ([`Pattern`]).
    Patterned(Pattern),
    Dot,
    /// A limiter's point in its marker ([`Pattern::marker`]).
    Marked(Pattern),
    /// [`Mark::Ring`] in a limiter's marker: the outline of its square,
    /// triangle or diamond.
    Outline(Pattern),
    /// A light swatch (35 % of the colour), for shaded areas.
    Area,
    /// A swatch at this percentage of the colour with a 1 px border in
    /// it, for bars drawn so (the timeline's admitted bars, 75 %).
    Fill(u8),
    /// A solid swatch, for bars and areas drawn at full colour.
    Solid,
    /// A solid lower half under a light upper half ([`Mark::Area`]'s
    /// shade), for a light bar stacked on a solid one.
    PaleOverSolid,
    Cross,
    /// A ring, for a point drawn under another of the same place.
    Ring,
    /// No mark: a heading.
    Heading,
}

#[derive(Clone, Debug)]
pub struct LegendEntry {
    pub label: String,
    pub colour: RGBColor,
    pub mark: Mark,
}

impl LegendEntry {
    pub fn new(label: impl Into<String>, colour: RGBColor, mark: Mark) -> LegendEntry {
        LegendEntry { label: label.into(), colour, mark }
    }
}

/// Every chart's legend column is this wide, whatever its labels, so that
/// the plots of charts one above the other (a run's `window_count` over its
/// `timeline` in `report.md`) span the same pixels. (Columns grew from 300
/// to 420 px to fit their longest label, and plots shrank by as much.) At
/// 360 px all but a few legends fit at [`LEGEND_SIZE`]; the longest labels,
/// such as `at the backend: token bucket, waits ≤ 1s`, are drawn a little
/// smaller or wrap ([`legend_layout`]).
pub const LEGEND_WIDTH: u32 = 360;
/// The smallest font a legend too wide for its column shrinks to before
/// its long labels wrap onto more lines.
const LEGEND_SHRINK_MIN: f64 = 14.0;
/// The smallest font a legend too long for its column shrinks to.
const LEGEND_MIN_SIZE: f64 = 8.0;
/// Legend rows: the first row's centre and the distance between rows.
const LEGEND_TOP: i32 = 30;
const LEGEND_ROW: i32 = 28;

/// Splits a legend column, [`LEGEND_WIDTH`] wide, off the right of an
/// area.
pub fn with_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
) -> (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>) {
    let w = area.dim_in_pixel().0;
    area.split_horizontally(w.saturating_sub(LEGEND_WIDTH))
}

/// The room a legend keeps right of its longest label, clear of the
/// chart's edge, about the title's margin on the left (6 px let
/// `weighted window, floor: 1.07, 1` end at the very edge).
const LEGEND_RIGHT_MARGIN: u32 = 24;

/// Where an entry's label starts.
fn label_x(mark: Mark) -> i32 {
    if mark == Mark::Heading { 8 } else { 54 }
}

/// How a legend is drawn: the font size, the distance between entries,
/// the distance between the lines of one entry, and each entry's lines.
#[derive(Clone, Debug, PartialEq)]
struct LegendLayout {
    size: f64,
    row: i32,
    line: i32,
    lines: Vec<Vec<String>>,
}

impl LegendLayout {
    /// The y of the centre of each entry's first line.
    fn rows(&self) -> Vec<i32> {
        let mut y = LEGEND_TOP;
        self.lines
            .iter()
            .map(|l| {
                let at = y;
                y += self.row + self.line * (l.len() as i32 - 1);
                at
            })
            .collect()
    }
}

/// Lays a legend out in an area of `width` x `height` pixels, `measure`
/// giving a text's width at a font size. At [`LEGEND_SIZE`] when it fits;
/// a label too wide is drawn smaller, down to [`LEGEND_SHRINK_MIN`], then
/// wraps onto two lines (at a size of 12 or more), then more; a legend too
/// long for the height draws its rows closer, then smaller. Never wider or
/// (short of dozens of entries) longer than the area.
fn legend_layout(
    entries: &[LegendEntry],
    width: u32,
    height: u32,
    measure: &dyn Fn(&str, f64) -> u32,
) -> LegendLayout {
    let room = height as i32 - LEGEND_TOP - 12;
    let avail = |e: &LegendEntry| width.saturating_sub(label_x(e.mark) as u32 + LEGEND_RIGHT_MARGIN);
    // At `size`, each label on at most `most` lines.
    let fit = |size: f64, most: usize| -> Option<LegendLayout> {
        let mut lines = Vec::with_capacity(entries.len());
        for e in entries {
            let wrapped = if measure(&e.label, size) <= avail(e) {
                vec![e.label.clone()]
            } else {
                wrap_with(&e.label, avail(e), &|s| measure(s, size))
            };
            if wrapped.len() > most {
                return None;
            }
            lines.push(wrapped);
        }
        let line = (size * 1.15).ceil() as i32;
        let rows = entries.len().saturating_sub(1) as i32;
        let extra: i32 = lines.iter().map(|l: &Vec<String>| line * (l.len() as i32 - 1)).sum();
        let row =
            if rows > 0 && LEGEND_ROW * rows + extra > room { (room - extra) / rows } else { LEGEND_ROW };
        // Rows of one line closer than a line apart would overlap.
        let least = if size >= LEGEND_SIZE { 16 } else { line + 1 };
        (rows == 0 || row >= least).then_some(LegendLayout { size, row, line, lines })
    };
    let sizes = |from: f64, to: f64| {
        std::iter::successors(Some(from), |s| Some(s - 1.0)).take_while(move |s| *s >= to)
    };
    sizes(LEGEND_SIZE, LEGEND_SHRINK_MIN)
        .find_map(|size| fit(size, 1))
        .or_else(|| sizes(LEGEND_SIZE, LEGEND_MIN_SIZE + 4.0).find_map(|size| fit(size, 2)))
        .or_else(|| sizes(LEGEND_SIZE, LEGEND_MIN_SIZE).find_map(|size| fit(size, usize::MAX)))
        .unwrap_or_else(|| {
            // Dozens of entries: the smallest font, rows as close as lines.
            let size = LEGEND_MIN_SIZE;
            let lines =
                entries.iter().map(|e| wrap_with(&e.label, avail(e), &|s| measure(s, size))).collect();
            let line = (size * 1.15).ceil() as i32;
            LegendLayout { size, row: line + 1, line, lines }
        })
}

/// [`wrap`], with the width of a text given by `measure`.
fn wrap_with(text: &str, width: u32, measure: &dyn Fn(&str) -> u32) -> Vec<String> {
    let fits = |s: &str| measure(s) <= width;
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let joined = if line.is_empty() { word.to_string() } else { format!("{line} {word}") };
        if fits(&joined) {
            line = joined;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        if fits(word) {
            line = word.to_string();
            continue;
        }
        // A word wider than the line: as many characters as fit, each line.
        for ch in word.chars() {
            line.push(ch);
            if !fits(&line) && line.chars().count() > 1 {
                line.pop();
                lines.push(std::mem::take(&mut line));
                line.push(ch);
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Draws a legend down a column, beside (never over) the plot, and never
/// cut off: a label too wide for its column is drawn smaller (down to
/// [`LEGEND_SHRINK_MIN`]), then wraps onto a second line (or more); a legend
/// too long for its column draws its rows closer, then smaller. One that
/// fits is drawn at [`LEGEND_SIZE`].
pub fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[LegendEntry]) -> Result<()> {
    let (width, height) = area.dim_in_pixel();
    let layout = legend_layout(entries, width, height, &|text, size| text_width(area, text, &font(size)));
    let style = font(layout.size);
    for ((e, y), lines) in entries.iter().zip(layout.rows()).zip(&layout.lines) {
        let c = e.colour;
        match e.mark {
            Mark::Line => area.draw(&PathElement::new(vec![(8, y), (44, y)], c.stroke_width(3))),
            Mark::Dashed => {
                area.draw(&PathElement::new(vec![(8, y), (18, y)], c.stroke_width(3))).and_then(|_| {
                    area.draw(&PathElement::new(vec![(26, y), (36, y)], c.stroke_width(3)))?;
                    area.draw(&PathElement::new(vec![(42, y), (44, y)], c.stroke_width(3)))
                })
            }
            Mark::Patterned(p) => match p.dashes() {
                Some((dash, gap)) => area.draw(&plotters::element::DashedPathElement::new(
                    vec![(8, y), (44, y)],
                    dash,
                    gap,
                    c.stroke_width(3),
                )),
                None => area.draw(&PathElement::new(vec![(8, y), (44, y)], c.stroke_width(3))),
            },
            Mark::Dot => area.draw(&Circle::new((26, y), 6, c.filled())),
            Mark::Outline(p) => match marker_outline(p.marker(), 9) {
                Some(mut points) => {
                    points.push(points[0]);
                    area.draw(&PathElement::new(
                        points.into_iter().map(|(x, dy)| (26 + x, y + dy)).collect::<Vec<_>>(),
                        c.stroke_width(3),
                    ))
                }
                None => area.draw(&Circle::new((26, y), 9, c.stroke_width(3))),
            },
            Mark::Marked(p) => match marker_outline(p.marker(), 6) {
                Some(points) => area.draw(&Polygon::new(
                    points.into_iter().map(|(x, dy)| (26 + x, y + dy)).collect::<Vec<_>>(),
                    c.filled(),
                )),
                None => area.draw(&Circle::new((26, y), 6, c.filled())),
            },
            Mark::Area => area.draw(&Rectangle::new([(8, y - 8), (44, y + 8)], c.mix(0.35).filled())),
            Mark::Fill(p) => area
                .draw(&Rectangle::new([(8, y - 8), (44, y + 8)], c.mix(f64::from(p) / 100.0).filled()))
                .and_then(|_| area.draw(&Rectangle::new([(8, y - 8), (44, y + 8)], c.stroke_width(1)))),
            Mark::Solid => area.draw(&Rectangle::new([(8, y - 8), (44, y + 8)], c.filled())),
            Mark::PaleOverSolid => area
                .draw(&Rectangle::new([(8, y - 8), (44, y)], c.mix(0.35).filled()))
                .and_then(|_| area.draw(&Rectangle::new([(8, y), (44, y + 8)], c.filled()))),
            Mark::Cross => area.draw(&Cross::new((26, y), 7, c.stroke_width(3))),
            Mark::Ring => area.draw(&Circle::new((26, y), 9, c.stroke_width(3))),
            Mark::Heading => Ok(()),
        }
        .map_err(err)?;
        let x = label_x(e.mark);
        for (k, line) in lines.iter().enumerate() {
            area.draw_text(
                line,
                &style.pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Left,
                    plotters::style::text_anchor::VPos::Center,
                )),
                (x, y + layout.line * k as i32),
            )
            .map_err(err)?;
        }
    }
    Ok(())
}

/// Line widths for lines drawn one over another, in drawing order: a line
/// that a later one covers exactly (`same(a, b)`: limiters that decided
/// alike, such as the GCRA and the token bucket when L divides W) is drawn
/// 6 px wider than the widest line drawn on it, so that it shows as a
/// 3 px border around them; several identical lines nest, each a border
/// around the next (the sliding log, 2 and 10 slots around 100 slots, in
/// the boundary burst). Lines nobody covers keep `widths`.
pub fn covered_widths(widths: &[u32], same: impl Fn(usize, usize) -> bool) -> Vec<u32> {
    covered_widths_by(widths, same, 6)
}

/// [`covered_widths`], each covered line `step` px wider than the widest
/// drawn on it (a border of `step / 2` either side).
pub fn covered_widths_by(widths: &[u32], same: impl Fn(usize, usize) -> bool, step: u32) -> Vec<u32> {
    let mut out = widths.to_vec();
    for a in (0..widths.len()).rev() {
        out[a] =
            (a + 1..widths.len()).filter(|&b| same(a, b)).map(|b| out[b] + step).fold(widths[a], u32::max);
    }
    out
}

/// How far apart (in pixels, at most) two lines may be at every point and
/// still draw as one to the eye: a 2 px line 3 px from another hides most
/// of it. Such lines nest ([`covered_widths`]) as equal ones do.
pub const NEAR_PX: f64 = 4.0;

/// The most two lines drawn over the same points part by, when they are
/// one line to the eye (and nest): never more than `tol` apart, or more
/// at no more than 1 in 50 of the points (at least one), and by no more
/// than twice `tol` there (outage_recovery's fixed window and 10 slots
/// are equal but for one bar, 2 apart: drawn one over the other, the fixed
/// window did not show at all). The most they part by, or `None`.
pub fn near_gap(pairs: impl IntoIterator<Item = (f64, f64)>, tol: f64) -> Option<f64> {
    let (mut points, mut apart, mut most) = (0usize, 0usize, 0f64);
    for (a, b) in pairs {
        let d = (a - b).abs();
        if d > 2.0 * tol {
            return None;
        }
        points += 1;
        apart += usize::from(d > tol);
        most = most.max(d);
    }
    (apart <= (points / 50).max(1)).then_some(most)
}

/// The legend's note on nested lines ([`covered_widths`]), when any pair of
/// the `n` lines nests: `gap(a, b)` is the most lines `a` and `b` part by
/// when they nest, `None` when they do not. "equal counts: lines nested"
/// when every nested pair is equal; "counts equal or within 2: lines
/// nested" when some pair is only near, `fmt` writing the largest gap.
pub fn nested_note(
    n: usize,
    gap: impl Fn(usize, usize) -> Option<f64>,
    what: &str,
    fmt: impl Fn(f64) -> String,
) -> Option<LegendEntry> {
    let most = (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b))).filter_map(|(a, b)| gap(a, b));
    let most = most.fold(None, |m: Option<f64>, g| Some(m.map_or(g, |m| m.max(g))))?;
    let text = if most == 0.0 {
        format!("equal {what}: lines nested")
    } else {
        format!("{what} equal or within {}: lines nested", fmt(most))
    };
    Some(LegendEntry::new(text, BLACK, Mark::Heading))
}

/// From this many limiters on, charts that draw one line per limiter in one
/// plot draw a strip per limiter instead (`window_count`), and strip charts
/// go compact (`timeline`): more lines than this in one plot hide each other.
pub const STRIPS_FROM: usize = 7;

/// The frame of a chart of strips: the time axis title under them and the
/// value axis title, rotated, left of them. Returns the area left for the
/// strips.
pub fn strip_frame<DB: DrawingBackend>(
    plots: &DrawingArea<DB, Shift>,
    x_title: &str,
    y_title: &str,
) -> Result<DrawingArea<DB, Shift>> {
    let (strips, bottom) = plots.split_vertically(plots.dim_in_pixel().1.saturating_sub(40));
    strip_titles(&strips, &bottom, x_title, 6, y_title)
}

/// `strip_frame`'s titles on areas already split: the time axis title in
/// `bottom`, `x_title_y` pixels down, the value axis title left of
/// `strips`. Returns the area left for the strips.
pub fn strip_titles<DB: DrawingBackend>(
    strips: &DrawingArea<DB, Shift>,
    bottom: &DrawingArea<DB, Shift>,
    x_title: &str,
    x_title_y: i32,
    y_title: &str,
) -> Result<DrawingArea<DB, Shift>> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    bottom
        .draw_text(
            x_title,
            &font(LABEL_SIZE).pos(Pos::new(HPos::Center, VPos::Top)),
            (((bottom.dim_in_pixel().0 + 90) / 2) as i32, x_title_y),
        )
        .map_err(err)?;
    let (ylab, strips) = strips.split_horizontally(30);
    ylab.draw_text(
        y_title,
        &font(LABEL_SIZE).transform(FontTransform::Rotate270).pos(Pos::new(HPos::Center, VPos::Top)),
        (4, (ylab.dim_in_pixel().1 / 2) as i32),
    )
    .map_err(err)?;
    Ok(strips)
}

/// `n` strips down `area`, the last `axis` pixels taller: room for the
/// time axis labels under it, so that it keeps the others' plot height.
pub fn strips<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    n: usize,
    axis: u32,
) -> Vec<DrawingArea<DB, Shift>> {
    if n <= 1 {
        return vec![area.clone()];
    }
    let each = area.dim_in_pixel().1.saturating_sub(axis) / n as u32;
    let (top, last) = area.split_vertically(each * (n as u32 - 1));
    let mut v = top.split_evenly((n - 1, 1));
    v.push(last);
    v
}

/// The axes of one strip in a stack of strips (`strips`): time `x` along
/// the bottom, labelled under the last strip only, counts from 0 to
/// `y_max` with at most `y_labels` labels, on whole numbers, written by
/// `y_label`, and no grid lines but the major ones ([`strip_ticks`]).
pub fn strip_chart<'a, DB: DrawingBackend>(
    strip: &'a DrawingArea<DB, Shift>,
    last: bool,
    x: std::ops::Range<f64>,
    y_max: f64,
    y_labels: usize,
    y_label: &dyn Fn(&f64) -> String,
) -> Result<StripChart<'a, DB>> {
    strip_chart_in(strip, last, x, 0.0..y_max, y_labels, y_label, None)
}

/// A strip's chart: time along x, the value axis with the ticks
/// [`strip_ticks`] chose.
pub type StripChart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, StripAxis>>;

/// A strip's value axis: plotters' axis over f64, ticked at the values
/// [`strip_ticks`] chose instead of at its own.
#[derive(Clone)]
pub struct StripAxis {
    inner: plotters::coord::types::RangedCoordf64,
    ticks: Vec<f64>,
}

impl plotters::coord::ranged1d::Ranged for StripAxis {
    type FormatOption = plotters::coord::ranged1d::NoDefaultFormatting;
    type ValueType = f64;
    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }
    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // No light lines: the major ones only, as the strips always drew.
        if hint.weight().allow_light_points() { Vec::new() } else { self.ticks.clone() }
    }
    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

impl plotters::coord::ranged1d::ValueFormatter<f64> for StripAxis {
    fn format(value: &f64) -> String {
        tick(value)
    }
}

/// How far (in pixels) a strip's tick label stays under the strip's top:
/// the label at the foot of the strip above, `0`, reaches 6 px into this
/// one (its 4 px margin and 2 px of the plot), and a label's digits 6 px
/// over its middle (`0` touched `50` in a short strip, and `400` at the
/// top of a tall one, when every strip labelled 0).
pub const STRIP_TOP_CLEAR: f64 = 12.0;
/// How far (in pixels) two tick labels of a strip stand apart, middle to
/// middle, at the least: their digits are 12 px tall, and at 15 px
/// `go_rate`'s `5` over its limit `3` read as one stack of digits.
pub const STRIP_LABEL_GAP: f64 = 18.0;

/// The ticks a strip of `height` pixels over `y` labels: plotters' own for
/// at most `most` labels on whole numbers ([`count_labels_in`]), those
/// within [`STRIP_TOP_CLEAR`] of the strip's top left out, so that the
/// foot's `0` can stand on every strip (strips once left it out, to keep
/// it off the top label of the strip below); then, keeping each clear of
/// those kept before it by [`STRIP_LABEL_GAP`]: the foot (0), `mark` (the
/// limit a strip draws dashed, L), the others. With more labels, up to
/// twice `most`, until at least two are left (`algorithms`' window count
/// strips labelled only 200, `nodes_skew`'s only 10).
pub fn strip_ticks(y: std::ops::Range<f64>, height: f64, most: usize, mark: Option<f64>) -> Vec<f64> {
    use plotters::coord::ranged1d::Ranged;
    let span = (y.end - y.start).max(f64::MIN_POSITIVE);
    let down = |v: f64| (y.end - v) / span * height;
    let below_top = |v: &f64| y.contains(v) && down(*v) >= STRIP_TOP_CLEAR;
    let key_points = |n: usize| plotters::coord::types::RangedCoordf64::from(y.clone()).key_points(n);
    let ticks_for = |n: usize| {
        let points: Vec<f64> = key_points(n).into_iter().filter(below_top).collect();
        let (foot, rest): (Vec<f64>, Vec<f64>) = points.into_iter().partition(|&v| v == y.start);
        let mut kept: Vec<f64> = Vec::new();
        for v in foot.into_iter().chain(mark.filter(below_top)).chain(rest) {
            if kept.iter().all(|&k| (down(v) - down(k)).abs() >= STRIP_LABEL_GAP) {
                kept.push(v);
            }
        }
        kept.sort_by(f64::total_cmp);
        kept
    };
    let first = count_labels_in(y.clone(), most);
    let whole = |n: usize| key_points(n).iter().all(|v| v.fract() == 0.0);
    (first..=2 * most.max(1))
        .filter(|&n| n == first || whole(n))
        .map(ticks_for)
        .find(|t| t.len() >= 2)
        .unwrap_or_else(|| ticks_for(first))
}

/// [`strip_chart`] with the value axis over `y`, which need not start at 0
/// (a log scale drawn as the logarithms of the counts), and `mark` labelled
/// on it ([`strip_ticks`]).
pub fn strip_chart_in<'a, DB: DrawingBackend>(
    strip: &'a DrawingArea<DB, Shift>,
    last: bool,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
    y_labels: usize,
    y_label: &dyn Fn(&f64) -> String,
    mark: Option<f64>,
) -> Result<StripChart<'a, DB>> {
    let build = |ticks: Vec<f64>| {
        ChartBuilder::on(strip)
            .margin_right(10)
            .margin_top(4)
            .x_label_area_size(if last { 30 } else { 0 })
            .y_label_area_size(60)
            .build_cartesian_2d(x.clone(), StripAxis { inner: y.clone().into(), ticks })
            .map_err(err)
    };
    // The plot's height, for the ticks' spacing: that of a chart built
    // with none (the ticks do not change it).
    let height = f64::from(build(Vec::new())?.plotting_area().dim_in_pixel().1);
    let ticks = strip_ticks(y.clone(), height, y_labels, mark);
    let mut chart = build(ticks.clone())?;
    chart
        .configure_mesh()
        .label_style(font(TICK_SIZE - 2.0))
        .x_label_formatter(&tick)
        .y_label_formatter(y_label)
        .y_labels(ticks.len().max(1))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// A strip's title, top-anchored at height `y`: at the left of the plot,
/// or, in a compact strip (one of [`STRIPS_FROM`] or more), at the right,
/// away from the value labels left of the axis, where it read as one with
/// the top label ("100 fixed window: admitted ...").
pub fn strip_title<DB: DrawingBackend>(
    chart: &mut StripChart<'_, DB>,
    text: String,
    x: std::ops::Range<f64>,
    y: f64,
    size: f64,
    compact: bool,
) -> Result<()> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let span = x.end - x.start;
    let (at, h) =
        if compact { (x.end - span * 0.005, HPos::Right) } else { (x.start + span * 0.01, HPos::Left) };
    chart
        .draw_series(std::iter::once(Text::new(text, (at, y), font(size).pos(Pos::new(h, VPos::Top)))))
        .map_err(err)?;
    Ok(())
}

/// The bars a chart draws of a timeline: its bins merged so that there are
/// at most [`ratesim::timeline::CHART_MAX_BINS`] (none wider than `widest`).
pub fn chart_bins(
    timeline: &ratesim::timeline::Timeline,
    widest: Option<ratesim::Nanos>,
) -> ratesim::timeline::Timeline {
    timeline.merged(timeline.chart_factor(widest))
}

/// Of bars of `values` (one per bar, in order), those taller than `cap`,
/// which a chart cuts at it: each run of adjacent cut bars once, as its
/// tallest bar and that bar's count (one label for a herd several bars
/// wide).
pub fn cut_runs(values: &[u64], cap: f64) -> Vec<(usize, u64)> {
    let cut = |b: usize| values[b] as f64 > cap;
    let mut runs = Vec::new();
    let mut b = 0;
    while b < values.len() {
        if !cut(b) {
            b += 1;
            continue;
        }
        let start = b;
        while b < values.len() && cut(b) {
            b += 1;
        }
        let top = (start..b).max_by_key(|&k| values[k]).expect("a cut bar");
        runs.push((top, values[top]));
    }
    runs
}

/// Writes the count of each run of cut bars ([`cut_runs`]) `gap` right of
/// its tallest bar (bar `b` spans `x_of(b)` to `x_of(b + 1)`), at height
/// `y`, anchored there by `v`. A count that would touch the one before it
/// (runs a few bars apart, which once read `4544` for 45 and 44) or run
/// past the plot's right edge is left out, so that every count shown
/// stands alone beside its own bar; [`shown_cut_counts`] chooses them.
pub fn draw_cut_counts<DB: DrawingBackend>(
    chart: &mut StripChart<'_, DB>,
    runs: &[(usize, u64)],
    x_of: &dyn Fn(usize) -> f64,
    gap: f64,
    y: f64,
    v: plotters::style::text_anchor::VPos,
) -> Result<()> {
    use plotters::style::text_anchor::{HPos, Pos};
    let style = font(TICK_SIZE - 4.0).color(&RGBColor(60, 60, 60)).pos(Pos::new(HPos::Left, v));
    let area = chart.plotting_area();
    let right = area.get_pixel_range().0.end;
    let placed: Vec<(i32, u32)> = runs
        .iter()
        .map(|&(top, n)| {
            let (px, _) = chart.backend_coord(&(x_of(top + 1) + gap, y));
            (px, text_width(&area.strip_coord_spec(), &n.to_string(), &style))
        })
        .collect();
    // The space a digit leaves between two counts.
    let space = text_width(&area.strip_coord_spec(), "0", &style) / 2;
    for k in shown_cut_counts(&placed, space, right) {
        let (top, n) = runs[k];
        chart
            .draw_series(std::iter::once(Text::new(format!("{n}"), (x_of(top + 1) + gap, y), style.clone())))
            .map_err(err)?;
    }
    Ok(())
}

/// Which of the counts at `placed` (left pixel and width, left to right)
/// to write: each that starts at least `space` pixels after the end of the
/// last one written and ends before `right`.
pub fn shown_cut_counts(placed: &[(i32, u32)], space: u32, right: i32) -> Vec<usize> {
    let mut shown = Vec::new();
    let mut free_from = i32::MIN;
    for (k, &(x, w)) in placed.iter().enumerate() {
        let end = x.saturating_add(w as i32);
        if x >= free_from && end <= right {
            shown.push(k);
            free_from = end.saturating_add(space as i32);
        }
    }
    shown
}

/// A count as a strip's y label ([`count`]; [`strip_chart`] puts labels on
/// whole numbers only).
pub fn whole(v: &f64) -> String {
    count(v)
}

/// A count as an axis label, short enough for the label area beside a
/// rotated axis title: as it is below 10,000 (`250`, `9500`), with an SI
/// suffix from there (`10k`, `250k`, `1.5M`, `2G`).
pub fn count(v: &f64) -> String {
    const UNITS: [(f64, &str); 4] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    if v.abs() < 10_000.0 {
        return format!("{v:.0}");
    }
    let (div, unit) = UNITS.iter().copied().find(|(d, _)| v.abs() >= *d).unwrap_or((1e3, "k"));
    let s = format!("{:.3}", v / div);
    format!("{}{unit}", s.trim_end_matches('0').trim_end_matches('.'))
}

/// At most `most` labels on a count axis over `range`, as many as keeps
/// every label on a whole number (from 0 to 1.3 three labels would put one
/// at 0.5, which [`whole`] writes as a second `0`).
pub fn count_labels_in(range: std::ops::Range<f64>, most: usize) -> usize {
    use plotters::coord::ranged1d::Ranged;
    (2..=most.max(2))
        .rev()
        .find(|&n| {
            plotters::coord::types::RangedCoordf64::from(range.clone())
                .key_points(n)
                .iter()
                .all(|v| v.fract() == 0.0)
        })
        .unwrap_or(1)
}

/// How many labels to ask of an axis over `range` so that one of them is
/// `at` (peak/L's reference 1, the limit): at most `most` if some count
/// of at most `most` puts one there, else the fewest above `most`, up to
/// twice as many (from 0 to 10.5, ten labels go every 2, eleven every 1),
/// else `most`.
pub fn labels_at(range: std::ops::Range<f64>, at: f64, most: usize) -> usize {
    use plotters::coord::ranged1d::Ranged;
    let coord = plotters::coord::types::RangedCoordf64::from(range);
    let has = |n: usize| coord.key_points(n).iter().any(|v| (v - at).abs() < 1e-9 * at.abs().max(1.0));
    (2..=most.max(2)).rev().chain(most + 1..=2 * most).find(|&n| has(n)).unwrap_or(most)
}

/// Points of a step line over bins: each value held over its bin.
pub fn steps(values: impl Iterator<Item = (f64, f64, f64)>) -> Vec<(f64, f64)> {
    let mut pts = Vec::new();
    for (x0, x1, v) in values {
        pts.push((x0, v));
        pts.push((x1, v));
    }
    pts
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratesim::limiter::{FixedWindowSpec, SlidingLogSpec, WindowAlign};

    /// Every strip labels 0 and at least one more value, the limit where
    /// it is drawn: `algorithms`' window count strips (0 to 270 on 56 px,
    /// L = 100) labelled only 200, now 0, 100 and 200; `go_rate`'s (0 to
    /// 8.1 on 63 px, L = 3) only 5, now 0 and 3 (5 stood 16 px over 3: its
    /// digits ran into them); `nodes_skew`'s node strips only 10.
    #[test]
    fn strips_label_their_foot_and_their_limit() {
        assert_eq!(strip_ticks(0.0..270.0, 56.0, 2, Some(100.0)), [0.0, 100.0, 200.0]);
        assert_eq!(strip_ticks(0.0..8.1, 63.0, 2, Some(3.0)), [0.0, 3.0]);
        assert_eq!(strip_ticks(0.0..19.5, 230.0, 3, None), [0.0, 10.0]);
        // shaping's rate of 5 per bin, 9 px over 0: 0 keeps its place, the
        // round counts over it theirs.
        assert_eq!(strip_ticks(0.0..28.6, 54.0, 3, Some(5.0)), [0.0, 10.0, 20.0]);
        // No label within 12 px of the top (10 of 10.5, 5 px under it),
        // where the `0` of the strip above stands.
        assert_eq!(strip_ticks(0.0..10.5, 100.0, 10, None), [0.0, 2.0, 4.0, 6.0, 8.0]);
        // Too short for two labels 18 px apart: more are asked for, else
        // what there is.
        assert_eq!(strip_ticks(0.0..1.3, 20.0, 2, None), [0.0]);
    }

    /// Up to 8 strips fit 600 px at 60 px each; more make the chart
    /// taller (algorithms' 11: 780 px), each strip keeping 60 px.
    #[test]
    fn many_strips_make_the_chart_taller() {
        for n in 0..=8 {
            assert_eq!(strips_height(n), HEIGHT);
        }
        assert_eq!(strips_height(9), 660);
        assert_eq!(strips_height(11), 780);
        for n in 1..40 {
            let each = (strips_height(n) - TITLE_BAND - 40 - 30) / n as u32;
            assert!(each >= MIN_STRIP, "{n} strips: {each} px each");
        }
    }

    #[test]
    fn shares_read_as_percentages_and_only_all_reads_100() {
        assert_eq!(fmt_share(1.0), "100 %");
        assert_eq!(fmt_share(0.0), "0 %");
        assert_eq!(fmt_share(0.004), "0.4 %");
        assert_eq!(fmt_share(0.375), "38 %");
        assert_eq!(fmt_share(0.95), "95 %");
        // outage_recovery's sliding log: 2399 of 2406 succeeded, 7 gave up.
        assert_eq!(fmt_share(2399.0 / 2406.0), "99.7 %");
        assert_eq!(fmt_share(7.0 / 2406.0), "0.3 %");
        // 9996 of 10 000, 4 of 10 000: one decimal would read 100.0 and 0.0.
        assert_eq!(fmt_share(0.9996), "99.96 %");
        assert_eq!(fmt_share(0.0004), "0.04 %");
    }

    /// 20 requests at 0.5 s against 10 per 1 s: the 10 the fixed window
    /// refuses retry at its next window's start (1 s), the 10 the sliding
    /// log refuses when its entries leave (1.5 s), and the run (no
    /// `duration`) ends 1 ns after that. The charts end with that 10 ms
    /// bin, not 1 ns into it.
    #[test]
    fn the_last_bin_is_drawn_whole() {
        let text = "name = \"t\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[output]\nbin = \"10ms\"\n\
                    [retry]\npolicy = \"retry_after\"\nmax_attempts = 3\n[[traffic]]\nkind = \"burst\"\nstart = \"500ms\"\n\
                    count = 20\n[[limiter]]\nkind = \"fixed_window\"\n";
        let s = ratesim::scenario::Scenario::parse(text, Path::new("t.toml")).unwrap();
        let r = ratesim::simulate::run_scenario(&s, None, &mut |_| {}).unwrap();
        assert_eq!(r.end.get(), 1_500_000_001);
        assert_eq!(bins_end(&r), 1_510_000_000);
    }

    #[test]
    fn every_default_limiter_has_its_own_colour_and_name() {
        let mut specs = ratesim::sweep::default_limiters();
        specs.push(FixedWindowSpec { align: WindowAlign::FirstRequest }.into());
        specs.push(SlidingLogSpec { count_rejected: true }.into());
        let mut colours: Vec<(u8, u8, u8)> = specs.iter().map(|s| colour(s).rgb()).collect();
        colours.sort();
        colours.dedup();
        assert_eq!(colours.len(), specs.len());
        let mut names: Vec<String> = specs.iter().map(LimiterSpec::short_name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), specs.len());
    }

    /// `scenarios/algorithms.toml` puts every algorithm side by side: no two
    /// of its limiters may look alike in a chart (their own colours at
    /// least [`MIN_COLOUR_DISTANCE`] apart; the two token buckets' violets
    /// were 15.8), and no two may share a legend name. A crude guard
    /// against near-equal colours; whether the charts read well is still a
    /// matter of looking at them.
    #[test]
    fn the_algorithms_scenario_tells_every_limiter_apart() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/algorithms.toml");
        let scenario = ratesim::scenario::Scenario::load(&path).unwrap();
        let (specs, _) = ratesim::engine::with_reference(&scenario.limiters);
        assert!(specs.len() >= 11, "{} limiters", specs.len());
        for (i, a) in specs.iter().enumerate() {
            for b in &specs[i + 1..] {
                let d = colour_distance(a.style().rgb, b.style().rgb);
                assert!(
                    d >= MIN_COLOUR_DISTANCE,
                    "{} and {} look alike: {:?} and {:?}, {d:.0} apart",
                    a.label(),
                    b.label(),
                    a.style().rgb,
                    b.style().rgb
                );
                assert_ne!(a.short_name(), b.short_name());
            }
        }
    }

    /// retry_after_rounding: four fixed windows that differ only in their
    /// Retry-After header, beside the sliding log. The rounded ones were
    /// shades of the fixed window's red: maroon, told from the black log
    /// mostly by its width, and pink, lost against the grey offered bars.
    /// Each now has a hue of its own, strong enough for a line beside black
    /// and a bar on grey (CIEDE2000 at least 25 from every other and from
    /// the grey).
    #[test]
    fn rounded_headers_turn_the_hue() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/retry_after_rounding.toml");
        let scenario = ratesim::scenario::Scenario::load(&path).unwrap();
        let specs = ratesim::engine::with_reference(&scenario.limiters).0;
        assert_eq!(specs.len(), 5, "four fixed windows and the sliding log");
        let palette = RunPalette::new(&specs);
        let colours: Vec<(u8, u8, u8)> = specs.iter().map(|s| palette.colour(s).rgb()).collect();
        for i in 0..colours.len() {
            for j in i + 1..colours.len() {
                let d = colour_distance(colours[i], colours[j]);
                assert!(d >= 25.0, "{} and {}: {d:.1}", specs[i].label(), specs[j].label());
            }
        }
        // The timeline's offered grey.
        let grey = (195, 195, 195);
        for (s, &c) in specs.iter().zip(&colours).filter(|(s, _)| s.retry_after != RetryAfter::Exact) {
            assert!(luma(c) <= TURNED_MAX_LUMA + 0.5, "{}: {c:?}", s.label());
            assert!(colour_distance(c, grey) >= 25.0, "{}: {c:?}", s.label());
        }
        // Any colour turns, a grey or black from red; the result is never
        // pale, and turning back and forth keeps the hue apart.
        for c in [(214, 39, 40), (20, 20, 20), (218, 165, 32), (0, 109, 44), (31, 31, 204), (255, 255, 255)] {
            let (a, b) = (turned(c, -ROUNDED_HUE_TURN), turned(c, ROUNDED_HUE_TURN));
            assert!(colour_distance(a, b) >= MIN_COLOUR_DISTANCE, "{c:?}: {a:?} {b:?}");
            assert!(luma(a) <= TURNED_MAX_LUMA + 0.5 && luma(b) <= TURNED_MAX_LUMA + 0.5, "{c:?}");
            assert!(to_hsv(a).1 >= 0.55 && to_hsv(b).1 >= 0.55, "{c:?}: {a:?} {b:?}");
        }
        assert_eq!(hsv(0.0, 0.0, 1.0), (255, 255, 255));
        let (h, s, v) = to_hsv((214, 39, 40));
        assert_eq!(hsv(h, s, v), (214, 39, 40));
    }

    fn limiters_of(toml: &str) -> Vec<LimiterSpec> {
        let scenario = ratesim::scenario::Scenario::parse(toml, Path::new("test.toml")).unwrap();
        ratesim::engine::with_reference(&scenario.limiters).0
    }

    /// Slot counts off the fixed list share a five-colour palette (3, 8 and
    /// 13 the same magenta), GCRA bursts 4 to 7 one light gold, leaky
    /// buckets of any burst one teal: in a run of them all, no two may look
    /// alike. Nineteen limiters are more than there are colours 20 apart:
    /// the last ones are dashed, and no two of one pattern look alike.
    #[test]
    fn a_run_of_many_limiters_draws_each_in_a_colour_of_its_own() {
        let specs = limiters_of(
            r#"
name = "many"
duration = "1s"
[limit]
requests = 100
window = "1s"
[[traffic]]
kind = "poisson"
load = 1.5
[[limiter]]
kind = "slot_counter"
slots = [3, 4, 6, 7, 8, 9, 12, 13, 15, 30, 40]
[[limiter]]
kind = "gcra"
burst = [2, 4, 5, 6, 7]
[[limiter]]
kind = "leaky_bucket"
burst = [5, 50]
"#,
        );
        assert_eq!(specs.len(), 19, "11 slot counters, 5 GCRAs, 2 leaky buckets and the sliding log");
        // Without the palette they clash.
        assert_eq!(colour(&specs[0]), colour(&specs[4]), "3 and 8 slots share a colour of their own");
        let palette = RunPalette::new(&specs);
        let colours: Vec<(u8, u8, u8)> = specs.iter().map(|s| palette.colour(s).rgb()).collect();
        let patterns: Vec<Pattern> = specs.iter().map(|s| palette.pattern(s)).collect();
        for i in 0..specs.len() {
            for j in i + 1..specs.len() {
                let d = colour_distance(colours[i], colours[j]);
                assert!(
                    patterns[i] != patterns[j] || d >= MIN_COLOUR_DISTANCE,
                    "{} and {} look alike: {:?} and {:?}, {d:.1} apart, both {:?}",
                    specs[i].label(),
                    specs[j].label(),
                    colours[i],
                    colours[j],
                    patterns[i]
                );
            }
        }
        assert!(patterns.iter().any(|p| *p != Pattern::SOLID), "{patterns:?}");
        // A dozen colours before the first dashes (the sliding log and
        // the GCRAs of bursts 2 and 4 keep theirs, solid).
        assert!(patterns[..9].iter().all(|p| *p == Pattern::SOLID), "{patterns:?}");
        // No colour given is too light for a line on white, or near the
        // grey of offered requests.
        for (s, &c) in specs.iter().zip(&colours).filter(|(s, c)| colour(s).rgb() != **c) {
            assert!(luma(c) <= colour::MAX_LUMA, "{}: {c:?}", s.label());
            assert!(colour_distance(c, (170, 170, 170)) >= MIN_COLOUR_DISTANCE, "{}: {c:?}", s.label());
        }
        // The first of each clashing group, and every limiter that clashed
        // with none, keeps its own colour, solid.
        let mut kept: Vec<(u8, u8, u8)> = Vec::new();
        for s in &specs {
            let own = colour(s).rgb();
            if kept.iter().all(|k| colour_distance(own, *k) >= MIN_COLOUR_DISTANCE) {
                kept.push(own);
                assert_eq!(
                    (palette.colour(s).rgb(), palette.pattern(s)),
                    (own, Pattern::SOLID),
                    "{}",
                    s.label()
                );
            }
        }
        assert!(kept.len() >= 6, "{kept:?}");
        // A limiter that is dashed keeps its own colour where it can: 30
        // slots the teal of 15 slots.
        assert_eq!((colours[9], patterns[9]), (colours[8], Pattern(1)), "{}", specs[9].label());
        // The same run, the same colours.
        let again = RunPalette::new(&specs);
        assert!(
            specs
                .iter()
                .all(|s| again.colour(s) == palette.colour(s) && again.pattern(s) == palette.pattern(s))
        );
    }

    /// The shipped scenarios' limiters are told apart by their own colours
    /// already: the palette keeps them, and their charts draw every limiter
    /// in the colour it has in any other run.
    #[test]
    fn shipped_scenarios_keep_every_limiters_own_colour() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        let (mut checked, mut changed) = (0, Vec::new());
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let scenario = ratesim::scenario::Scenario::load(&path).unwrap();
            let mut specs = ratesim::engine::with_reference(&scenario.limiters).0;
            if scenario.sweep.is_some() && scenario.limiters.is_empty() {
                specs.extend(ratesim::sweep::default_limiters());
            }
            let palette = RunPalette::new(&specs);
            for s in &specs {
                if palette.colour(s) != colour(s) {
                    changed.push(format!(
                        "{}: {} {:?} -> {:?}",
                        path.display(),
                        s.label(),
                        colour(s),
                        palette.colour(s)
                    ));
                }
            }
            checked += 1;
        }
        assert!(checked >= 5);
        assert!(changed.is_empty(), "{changed:#?}");
    }

    #[test]
    fn missing_glyphs_finds_chinese_only() {
        assert!(missing_glyphs("fixed window (2×L) ≈ 10 %").is_empty());
        assert_eq!(missing_glyphs("边界 ok"), vec!['边', '界']);
    }

    /// `--font` loads a font file and charts draw with it (here DejaVu Sans
    /// Mono, written out from the embedded copy; a CJK font works the same).
    #[test]
    fn a_font_file_replaces_the_embedded_font() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mono.ttf");
        std::fs::write(&path, dejavu::sans_mono::regular()).unwrap();
        init_fonts(Some(&path)).unwrap();
        let result = ratesim::sweep::burst_pair::run(
            &ratesim::sweep::BurstPairConfig {
                limit: ratesim::Limit { requests: 10, window: ratesim::Nanos::from_secs(1) },
                limiters: ratesim::sweep::default_limiters(),
                grid: 20,
            },
            &|_| {},
        )
        .unwrap();
        let svg = svg_string(&error_vs_slots::ErrorVsSlots {
            scenario: "s",
            result: &result,
            palette: &RunPalette::default(),
        })
        .unwrap();
        assert!(svg.contains("slots N (log scale)") && svg.contains("1000 slots"));
    }

    /// Text `0.6 × size` pixels per character: a stand-in for a font.
    fn measure(text: &str, size: f64) -> u32 {
        (text.chars().count() as f64 * size * 0.6).ceil() as u32
    }

    fn entry(label: &str) -> LegendEntry {
        LegendEntry::new(label, BLACK, Mark::Line)
    }

    /// Every line of a layout within the column, and its last row above
    /// the bottom.
    fn assert_inside(layout: &LegendLayout, entries: &[LegendEntry], width: u32, height: u32) {
        for (e, lines) in entries.iter().zip(&layout.lines) {
            for l in lines {
                assert!(
                    label_x(e.mark) as u32 + measure(l, layout.size) <= width,
                    "{l:?} at {}",
                    layout.size
                );
            }
            assert_eq!(
                lines.concat().replace(' ', ""),
                e.label.replace(' ', ""),
                "nothing of a label is lost"
            );
        }
        let last = layout.rows().last().copied().unwrap_or(0)
            + layout.line * (layout.lines.last().map_or(1, Vec::len) as i32 - 1);
        assert!(last + (layout.size / 2.0) as i32 <= height as i32, "bottom {last} of {height}");
    }

    #[test]
    fn a_legend_that_fits_is_drawn_as_it_always_was() {
        let entries =
            vec![entry("fixed window (2×L)"), entry("10 slots (1.1×L)"), entry("sliding log (1×L)")];
        let layout = legend_layout(&entries, 300, 550, &measure);
        assert_eq!((layout.size, layout.row), (LEGEND_SIZE, LEGEND_ROW));
        assert!(layout.lines.iter().all(|l| l.len() == 1));
    }

    /// `weighted window, floor, counting rejects, header floor: ...` ran
    /// off the right edge of a 420 px column: it wraps, at a size still
    /// readable, and nothing is cut.
    #[test]
    fn a_label_too_wide_for_its_column_wraps_rather_than_runs_off() {
        let entries = vec![
            entry("analytic 1/N and 1/(2N)"),
            entry("weighted window, floor, counting rejects, header floor: 99.50 %, 49.75 %"),
            entry("timer bucket max 150 every 100ms, header ceil: 100.00 %, 100.00 %"),
            entry("sliding log: 0 %, 0 %"),
        ];
        let layout = legend_layout(&entries, 420, 550, &measure);
        assert!(layout.size >= LEGEND_SHRINK_MIN, "{}", layout.size);
        assert_eq!(layout.lines[1].len(), 2, "{:?}", layout.lines[1]);
        assert_inside(&layout, &entries, 420, 550);
        // A word longer than the column breaks inside itself.
        let long = vec![entry(&"x".repeat(80))];
        let layout = legend_layout(&long, 300, 550, &measure);
        assert_inside(&layout, &long, 300, 550);
    }

    /// Twenty limiters with long names: rows closer, then smaller, all of
    /// them inside the column.
    #[test]
    fn a_long_legend_fits_its_column() {
        let entries: Vec<LegendEntry> = (0..20)
            .map(|i| entry(&format!("token bucket cap {i}000 (empty), header floor: 16 B, 1.10, +1.3%")))
            .collect();
        let layout = legend_layout(&entries, 420, 550, &measure);
        assert!(layout.size >= 10.0, "{}", layout.size);
        assert_inside(&layout, &entries, 420, 550);
        let many: Vec<LegendEntry> = (0..40).map(|i| entry(&format!("{i} slots (1.1×L)"))).collect();
        let layout = legend_layout(&many, 300, 550, &measure);
        assert_inside(&layout, &many, 300, 550);
    }

    /// A title of a 67-character scenario name fits the image: smaller, or
    /// on two lines, every line within the band and the image's width.
    #[test]
    fn a_long_title_is_drawn_smaller_or_wrapped_never_cut() {
        init_fonts(None).unwrap();
        let mut svg = String::new();
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let short = "boundary_burst: requests in the exact window of 1s (limit 100)";
        assert_eq!(title_layout(&root, short, WIDTH - 40), (TITLE_SIZE, vec![short.to_string()]));
        let name = "long_labels_with_a_rather_long_scenario_name_for_the_title_bar_here";
        assert_eq!(name.len(), 67);
        for title in [
            format!("{name}: requests in the exact window of 1s (limit 100)"),
            format!("{name}: offered and admitted per 10ms bin"),
            format!("{name} {}", "and more words ".repeat(12).trim_end()),
        ] {
            let (size, lines) = title_layout(&root, &title, WIDTH - 40);
            assert!(size < TITLE_SIZE, "{title}");
            for l in &lines {
                assert!(text_width(&root, l, &bold(size)) <= WIDTH - 40, "{l:?} at {size}");
            }
            assert_eq!(lines.join(" "), title);
            assert!(
                lines.len() as f64 * (size * 1.15).ceil() <= f64::from(TITLE_BAND),
                "{size} x {}",
                lines.len()
            );
        }
    }

    #[test]
    fn counts_stay_short_on_an_axis() {
        assert_eq!(count(&0.0), "0");
        assert_eq!(count(&250.0), "250");
        assert_eq!(count(&9999.0), "9999");
        assert_eq!(count(&10_000.0), "10k");
        assert_eq!(count(&250_000.0), "250k");
        assert_eq!(count(&1_000_000.0), "1M");
        assert_eq!(count(&1_500_000.0), "1.5M");
        assert_eq!(count(&1_250_000.0), "1.25M");
        assert_eq!(count(&12_000_000.0), "12M");
        assert_eq!(count(&3e9), "3G");
    }

    /// An all-zero strip (a node that admitted nothing) had labels 0, 0.5
    /// and 1 written "0, 0, 1": the labels of a count strip are whole
    /// numbers, each once.
    #[test]
    fn count_strips_label_whole_numbers_once() {
        use plotters::coord::ranged1d::Ranged;
        for (y_max, most) in
            [(1.0, 3), (1.3, 3), (1.3, 2), (2.6, 3), (6.5, 3), (135.0, 3), (1.35e6, 2), (0.5, 3)]
        {
            let n = count_labels_in(0.0..y_max, most);
            assert!((1..=most).contains(&n), "{y_max}: {n}");
            let points = plotters::coord::types::RangedCoordf64::from(0.0..y_max).key_points(n);
            let labels: Vec<String> = points.iter().map(whole).collect();
            let mut distinct = labels.clone();
            distinct.dedup();
            assert_eq!(distinct, labels, "{y_max} with {most}");
            assert!(points.iter().all(|v| v.fract() == 0.0), "{y_max}: {points:?}");
        }
        // Where whole numbers allow them, as many labels as asked.
        assert_eq!(count_labels_in(0.0..135.0, 3), 3);
    }

    /// Identical lines nest: each covered one 6 px wider than the widest
    /// drawn on it (the boundary burst's sliding log, 2, 10 and 100 slots,
    /// in drawing order, all one line: 20, 14, 8, 2); a line nobody covers
    /// keeps its width. Before, all three covered lines were 6 px wide and
    /// hid each other.
    #[test]
    fn identical_lines_nest() {
        let widths = covered_widths(&[7, 4, 2, 2, 2], |a, b| a > 0 && b > 0);
        assert_eq!(widths, [7, 20, 14, 8, 2]);
        assert_eq!(covered_widths(&[3, 3, 2], |a, b| (a, b) == (0, 1)), [9, 3, 2]);
    }

    /// sliding_minute: the fixed window 0 or 2 from its first-request
    /// window in every step, on an axis of 2.3 requests a pixel: one line
    /// to the eye, so they nest, and the note says by how much they part.
    /// The 6 slots, 58 apart at worst, do not.
    #[test]
    fn near_lines_nest_and_the_note_says_how_near() {
        let fixed = [600.0, 602.0, 900.0, 300.0];
        let first = [600.0, 600.0, 898.0, 300.0];
        let six = [600.0, 660.0, 900.0, 320.0];
        let tol = NEAR_PX * 2.3;
        assert_eq!(near_gap(fixed.iter().copied().zip(first), tol), Some(2.0));
        assert_eq!(near_gap(fixed.iter().copied().zip(six), tol), None);
        assert_eq!(near_gap(fixed.iter().copied().zip(fixed), 0.0), Some(0.0));
        let lines = [&fixed, &first, &six];
        let gap = |a: usize, b: usize| near_gap(lines[a].iter().copied().zip(lines[b].iter().copied()), tol);
        let note = nested_note(3, gap, "counts", |g| format!("{g:.0}")).unwrap();
        assert_eq!(note.label, "counts equal or within 2: lines nested");
        assert_eq!(note.mark, Mark::Heading);
        let equal = nested_note(3, |a, b| (a, b).eq(&(0, 2)).then_some(0.0), "curves", |_| String::new());
        assert_eq!(equal.unwrap().label, "equal curves: lines nested");
        assert!(nested_note(3, |_, _| None, "counts", |_| String::new()).is_none());
    }

    /// Runs of bars over the cap, each once at its tallest: the first herd
    /// of three bars one label, a lone tall bar another.
    #[test]
    fn cut_bars_are_labelled_once_per_run() {
        assert_eq!(cut_runs(&[268, 80, 52, 10, 5, 90, 3], 50.0), [(0, 268), (5, 90)]);
        assert_eq!(cut_runs(&[10, 60, 70, 60], 50.0), [(2, 70)]);
        assert!(cut_runs(&[10, 50], 50.0).is_empty());
    }

    /// outage_recovery's fixed window and 10 slots: equal in 149 of 150
    /// bars, 2 apart in one, on an axis where 4 px are 1.8 requests: one
    /// line to the eye. Four bars apart are too many of 150; 4 apart (more
    /// than twice the tolerance) in one bar is too far.
    #[test]
    fn lines_near_but_at_a_point_or_two_nest() {
        let tol = 1.8;
        let fixed: Vec<f64> = (0..150).map(|k| f64::from(k % 90)).collect();
        let mut slots = fixed.clone();
        slots[128] += 2.0;
        let pairs = |b: &[f64]| fixed.iter().copied().zip(b.to_vec()).collect::<Vec<_>>();
        assert_eq!(near_gap(pairs(&slots), tol), Some(2.0));
        assert_eq!(near_gap(pairs(&fixed), tol), Some(0.0));
        // 1 in 50 of 150: 3 bars may part, not 4.
        let mut three = slots.clone();
        for k in [20, 40] {
            three[k] += 2.0;
        }
        assert_eq!(near_gap(pairs(&three), tol), Some(2.0));
        three[60] += 2.0;
        assert_eq!(near_gap(pairs(&three), tol), None);
        slots[128] += 2.0;
        assert_eq!(near_gap(pairs(&slots), tol), None);
        // Few points: one may part.
        assert_eq!(near_gap([(1.0, 3.0), (5.0, 5.0)], tol), Some(2.0));
    }

    /// Counts of cut bars a few bars apart (go_rate: 45 and 44 read as
    /// `4544`) or past the plot's edge are left out; the rest stand alone.
    #[test]
    fn cut_counts_that_would_touch_are_left_out() {
        // Left pixel and width of each count; a space of 5 px; plot ends at 900.
        let placed = [(100, 16), (118, 16), (122, 16), (140, 16), (886, 16), (895, 4)];
        assert_eq!(shown_cut_counts(&placed, 5, 900), [0, 2, 5]);
        assert!(shown_cut_counts(&[], 5, 900).is_empty());
    }

    #[test]
    fn ticks_drop_needless_decimals() {
        assert_eq!(tick(&10.0), "10");
        assert_eq!(tick(&2.5), "2.5");
    }
}
