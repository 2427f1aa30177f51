//! Text in PNG charts, drawn glyph by glyph where each glyph belongs.
//!
//! plotters' ab_glyph text drawing puts every glyph's bitmap at the pen
//! position rounded down, dropping the glyph's own left side bearing and
//! the pen's fraction of a pixel: narrow glyphs ("1", "i", "l") sit against
//! the glyph before them and a space can vanish, so "10 slots" read
//! "1 0 slots" and "sliding log" "slidin g log" in every PNG (plotters
//! issue 576; SVGs leave text to the viewer and are not affected).
//! [`PngBackend`] is the bitmap backend with that one step replaced: each
//! glyph is outlined at its exact pen position and drawn at its own pixel
//! bounds. Everything else, text layout and anchoring included, is the
//! bitmap backend's and plotters' own, so text sits where it did.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, ScaleFont, point};
use plotters::prelude::BitMapBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind, FontStyle,
};

/// The chart fonts, regular and bold, as [`super::init_fonts`] registered them.
static FONTS: OnceLock<(FontRef<'static>, FontRef<'static>)> = OnceLock::new();

/// Makes `regular` and `bold` the fonts PNG text is drawn with (the first
/// call wins, as for plotters' own registry).
pub fn set_fonts(regular: &'static [u8], bold: &'static [u8]) -> Result<(), ab_glyph::InvalidFont> {
    let fonts = (FontRef::try_from_slice(regular)?, FontRef::try_from_slice(bold)?);
    let _ = FONTS.set(fonts);
    Ok(())
}

/// A bitmap backend whose text is drawn with each glyph at its own bounds.
pub struct PngBackend<'a>(pub BitMapBackend<'a>);

impl DrawingBackend for PngBackend<'_> {
    type ErrorType = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let width = style.stroke_width();
        if width <= 1 || style.color().alpha < 1.0 {
            return self.0.draw_path(path, style);
        }
        // A wide line is drawn a segment at a time, with a w x w square
        // filling each corner, not as plotters' one outline of the whole
        // path: that outline truncates a collinear point's offset and
        // rounds a corner's, so the edge of a level slants a pixel before
        // each corner (a notch under every small step of a curve). The ends
        // keep plotters' flat caps, and a point on a straight run gets no
        // square (it would stick out past a nearby end). The square reaches
        // as far as plotters' outline of a segment does (it rounds the
        // offsets of half the width, and its fill includes the edge).
        // Opaque only: the overlaps would otherwise show as darker joins.
        let reach = |v: i32, side: f64| (f64::from(v) + side * f64::from(width) / 2.0).round() as i32;
        let (mut before, mut from): (Option<BackendCoord>, Option<BackendCoord>) = (None, None);
        for point in path {
            let Some(at) = from else {
                from = Some(point);
                continue;
            };
            if at == point {
                continue;
            }
            if let Some(b) = before {
                let (d1, d2) = ((at.0 - b.0, at.1 - b.1), (point.0 - at.0, point.1 - at.1));
                if i64::from(d1.0) * i64::from(d2.1) != i64::from(d1.1) * i64::from(d2.0) {
                    let near = (reach(at.0, -1.0), reach(at.1, -1.0));
                    let far = (reach(at.0, 1.0), reach(at.1, 1.0));
                    self.0.draw_rect(near, far, &style.color(), true)?;
                }
            }
            self.0.draw_path([at, point], style)?;
            (before, from) = (Some(at), Some(point));
        }
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let width = style.stroke_width();
        if fill || width <= 1 || width / 2 >= radius {
            return self.0.draw_circle(center, radius, style, fill);
        }
        // A wide ring is drawn pixel by pixel, each inked by how much of
        // it lies within half the width of the circle, not as plotters'
        // annulus: that joins its eight arcs with straight pieces on only
        // some of the diagonals, so the ring showed a notch on the others
        // (which_limiter's rings, the legend's); SVG strokes are whole.
        let (r, half) = (f64::from(radius), f64::from(width) / 2.0);
        let reach = (r + half).ceil() as i32 + 1;
        let colour = style.color();
        for dy in -reach..=reach {
            for dx in -reach..=reach {
                let d = f64::from(dx).hypot(f64::from(dy));
                let ink = (half + 0.5 - (d - r).abs()).clamp(0.0, 1.0);
                if ink > 0.0 {
                    let c = BackendColor { alpha: colour.alpha * ink, rgb: colour.rgb };
                    self.0.draw_pixel((center.0 + dx, center.1 + dy), c)?;
                }
            }
        }
        Ok(())
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.blit_bitmap(pos, size, src)
    }

    fn estimate_text_size<T: BackendTextStyle>(
        &self,
        text: &str,
        style: &T,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        self.0.estimate_text_size(text, style)
    }

    /// plotters' `draw_text` (the same layout box, anchor and rotation),
    /// with the glyphs drawn by [`draw_glyphs`].
    fn draw_text<T: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &T,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let Some((regular, bold)) = FONTS.get() else {
            // No font of ours (a caller that skipped `init_fonts`): plotters' own.
            return self.0.draw_text(text, style, pos);
        };
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) =
            style.layout_box(text).map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let font = if matches!(style.style(), FontStyle::Bold) { bold } else { regular };
        let trans = style.transform();
        let (w, h) = self.get_size();
        let mut result = Ok(());
        draw_glyphs(font, style.size() as f32, text, |x, y, coverage| {
            if result.is_err() {
                return;
            }
            let (x, y) = trans.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && x < w as i32 && y >= 0 && y < h as i32 {
                result = self.0.draw_pixel((x, y), color.mix(f64::from(coverage)));
            }
        });
        result
    }
}

/// Calls `pixel(x, y, coverage)` for every pixel of `text` in `font` at
/// `size` pixels, laid out as plotters lays it out (advances and kerning
/// from x = 0, the baseline `size / 2` below y = 0), each glyph outlined at
/// its exact pen position and drawn at its own pixel bounds.
pub fn draw_glyphs(font: &FontRef<'_>, size: f32, text: &str, mut pixel: impl FnMut(i32, i32, f32)) {
    let scaled = font.as_scaled(size);
    let mut pen = 0f32;
    let mut previous = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = previous {
            pen += scaled.kern(p, id);
        }
        previous = Some(id);
        if let Some(outline) = scaled.outline_glyph(id.with_scale_and_position(size, point(pen, 0.0))) {
            let bounds = outline.px_bounds();
            let (left, top) = (bounds.min.x as i32, (size / 2.0 + bounds.min.y).floor() as i32);
            outline.draw(|x, y, coverage| pixel(left + x as i32, top + y as i32, coverage));
        }
        pen += scaled.h_advance(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The columns of `text` with ink in them, at 20 px.
    fn inked_columns(text: &str) -> Vec<i32> {
        let font = FontRef::try_from_slice(dejavu::sans::regular()).unwrap();
        let mut columns = std::collections::BTreeSet::new();
        draw_glyphs(&font, 20.0, text, |x, _, c| {
            if c > 0.5 {
                columns.insert(x);
            }
        });
        columns.into_iter().collect()
    }

    /// The runs of blank columns between inked ones.
    fn gaps(columns: &[i32]) -> Vec<i32> {
        columns.windows(2).map(|w| w[1] - w[0] - 1).filter(|&g| g > 0).collect()
    }

    /// The blank columns between the two glyphs of `pair` (a space between
    /// them allowed) against what the font's metrics put there: the first
    /// glyph's right side bearing, the space's advance, the second's left
    /// side bearing, at 20 px.
    fn gap_and_metrics(pair: &str) -> (i32, f32) {
        let font = FontRef::try_from_slice(dejavu::sans::regular()).unwrap();
        let scaled = font.as_scaled(20.0);
        let chars: Vec<char> = pair.chars().collect();
        let (first, last) = (scaled.glyph_id(chars[0]), scaled.glyph_id(*chars.last().unwrap()));
        let ink = |id| font.outline(id).unwrap().bounds;
        let rsb = scaled.h_advance(first)
            - scaled.h_side_bearing(first)
            - ink(first).width() * scaled.scale_factor().horizontal;
        let between: f32 =
            chars[1..chars.len() - 1].iter().map(|&c| scaled.h_advance(scaled.glyph_id(c))).sum();
        let g = gaps(&inked_columns(pair));
        assert_eq!(g.len(), 1, "{pair}: {g:?}");
        (g[0], rsb + between + scaled.h_side_bearing(last))
    }

    /// Each glyph is drawn at its pen position plus its own side bearing,
    /// within a pixel of what the font's metrics say (plotters dropped the
    /// bearing and the pen's fraction: "01" gapped 2 px where the font puts
    /// 3, and this test fails on its drawing).
    #[test]
    fn glyphs_keep_their_side_bearings() {
        for pair in ["10", "01", "il", "0l", "g l", "1 0", "s 1"] {
            let (gap, metrics) = gap_and_metrics(pair);
            assert!(
                (gap as f32 - metrics).abs() <= 1.0,
                "{pair}: gap {gap} px, the font's metrics {metrics} px"
            );
        }
    }

    /// A space between words is the widest gap of "sliding log".
    #[test]
    fn a_space_is_the_widest_gap() {
        let g = gaps(&inked_columns("sliding log"));
        let widest = *g.iter().max().unwrap();
        assert_eq!(g.iter().filter(|&&x| x == widest).count(), 1, "{g:?}");
        assert!(widest >= 2 * g.iter().filter(|&&x| x < widest).max().unwrap(), "{g:?}");
    }

    /// The ink ends within the last glyph's advance, where the layout box
    /// plotters measures for anchoring ends.
    #[test]
    fn text_ends_within_its_layout_box() {
        let font = FontRef::try_from_slice(dejavu::sans::regular()).unwrap();
        let scaled = font.as_scaled(20.0);
        let width: f32 = "ratesim".chars().map(|c| scaled.h_advance(scaled.glyph_id(c))).sum();
        let last = scaled.h_advance(scaled.glyph_id('m'));
        let columns = inked_columns("ratesim");
        let right = *columns.last().unwrap() as f32;
        assert!(right < width && right > width - last, "{right} not in the last advance before {width}");
        assert!((0..=2).contains(&columns[0]), "{columns:?}");
    }

    /// Whether each pixel of a 60 x 30 image is inked after drawing `path`
    /// `width` px wide, with this backend or (`plain`) the bitmap backend
    /// as it is; indexed `[y][x]`.
    fn draw_wide(path: &[(i32, i32)], width: u32, plain: bool) -> Vec<Vec<bool>> {
        let (w, h) = (60u32, 30u32);
        let mut buf = vec![255u8; (w * h * 3) as usize];
        {
            let mut backend = PngBackend(BitMapBackend::with_buffer(&mut buf, (w, h)));
            let style = plotters::style::Color::stroke_width(&plotters::style::BLACK, width);
            if plain {
                backend.0.draw_path(path.iter().copied(), &style).unwrap();
            } else {
                backend.draw_path(path.iter().copied(), &style).unwrap();
            }
            backend.present().unwrap();
        }
        (0..h).map(|y| (0..w).map(|x| buf[((y * w + x) * 3) as usize] < 128).collect()).collect()
    }

    /// A ring 3 px wide (which_limiter's, radius 10 to 14) is inked all
    /// the way round: at every degree, the pixel on the circle is. Where
    /// plotters' annulus left a notch, a diagonal's pixel was blank.
    #[test]
    fn a_wide_ring_has_no_notch() {
        let (w, h) = (60u32, 60u32);
        for radius in 4..=20u32 {
            let mut buf = vec![255u8; (w * h * 3) as usize];
            {
                let mut backend = PngBackend(BitMapBackend::with_buffer(&mut buf, (w, h)));
                let style = plotters::style::Color::stroke_width(&plotters::style::BLACK, 3);
                backend.draw_circle((30, 30), radius, &style, false).unwrap();
                backend.present().unwrap();
            }
            let ink = |x: i32, y: i32| 255 - buf[((y as u32 * w + x as u32) * 3) as usize];
            let r = f64::from(radius);
            for deg in 0..360 {
                let a = f64::from(deg).to_radians();
                let (x, y) = (30 + (r * a.cos()).round() as i32, 30 + (r * a.sin()).round() as i32);
                assert!(ink(x, y) > 200, "radius {radius}, {deg}°: ({x}, {y}) inked {}", ink(x, y));
            }
            // Hollow: the middle and a pixel 3 px inside the ring blank,
            // one 3 px outside too.
            assert_eq!(ink(30, 30), 0);
            assert_eq!(ink(30 + radius as i32 - 3, 30), 0);
            assert_eq!(ink(30 + radius as i32 + 3, 30), 0);
        }
    }

    /// The lowest inked row of each column from x = 5 to 54 of a rising
    /// step curve 3 px wide, drawn through points as a time-to-success
    /// curve has them (collinear points on a level, then a rise of one
    /// pixel).
    fn bottom_edge(plain: bool) -> Vec<u32> {
        let path = [(5, 15), (20, 15), (20, 15), (40, 15), (40, 14), (47, 14), (47, 13), (55, 13)];
        let ink = draw_wide(&path, 3, plain);
        (5..55).map(|x| (0..30).rev().find(|&y| ink[y as usize][x]).unwrap_or(0)).collect()
    }

    /// A wide line through points on a straight run (window_count's
    /// steps, one point per bin) ends flat where plotters' own drawing
    /// ends it: no square at a point where it does not turn, which would
    /// stick out half a width before the start.
    #[test]
    fn a_wide_line_ends_where_plotters_ends_it() {
        let path = [(20, 15), (23, 15), (26, 15), (26, 15), (40, 15)];
        let inked = |plain: bool| -> Vec<usize> {
            let ink = draw_wide(&path, 9, plain);
            (0..60).filter(|&x| ink[15][x]).collect()
        };
        let (ours, plotters) = (inked(false), inked(true));
        assert_eq!(ours, plotters);
        assert_eq!(ours[0], 20, "{ours:?}");
    }

    /// A rising curve's lower edge never steps down: plotters' outline of
    /// the whole path rounds a collinear point's offset one way and a
    /// corner's the other, so the edge slants down a pixel along a level
    /// (a notch under the line in time_to_success.png, where the curve
    /// rises by a pixel between close successes).
    #[test]
    fn a_wide_step_curve_has_no_notch() {
        let rises = |edge: &[u32]| edge.windows(2).all(|p| p[1] <= p[0]);
        let edge = bottom_edge(false);
        assert!(rises(&edge), "{edge:?}");
        // Three levels, each 3 px wide on the 15, 14 and 13 rows (the fill
        // takes the rounded edge too: rows y - 1 to y + 2).
        assert_eq!((edge[0], edge[40], edge[49]), (17, 16, 15), "{edge:?}");
        let plain = bottom_edge(true);
        assert!(!rises(&plain), "plotters' outline no longer notches: this workaround can go {plain:?}");
    }
}
