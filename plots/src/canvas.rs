//! A thin pixel-space layer over a plotters drawing area: text that is measured before
//! it is placed, shapes, value scales, axes and legends.
//!
//! The charts lay out everything in pixels themselves (plotters' chart mesh cannot be told
//! where to put category labels, nor rotate them by anything but 90°, nor measure long
//! labels before reserving room for them), and use plotters for the primitives and the
//! two backends.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::{PlotError, draw_err};
use crate::style::{FAMILY, GRID, INK, LineStyle, MUTED, Ticks, TypeScale};

/// A rectangle in pixels, `x0 < x1`, `y0 < y1` (y grows downwards).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rect {
    pub x0: i32,
    pub y0: i32,
    pub x1: i32,
    pub y1: i32,
}

impl Rect {
    pub(crate) fn width(&self) -> i32 {
        self.x1 - self.x0
    }
    pub(crate) fn height(&self) -> i32 {
        self.y1 - self.y0
    }
    pub(crate) fn mid_x(&self) -> i32 {
        (self.x0 + self.x1) / 2
    }
    pub(crate) fn mid_y(&self) -> i32 {
        (self.y0 + self.y1) / 2
    }
}

/// plotters' font size unit per CSS pixel: plotters writes `font-size = size / 1.24` into
/// the SVG and rasterises the PNG glyphs at the same em size.
const PLOTTERS_PER_PX: f64 = 1.24;

/// How a text is set: size, weight, colour, anchor, and whether it reads bottom to top.
#[derive(Clone, Copy)]
pub(crate) struct Font {
    /// Font size (em) in pixels, as in CSS: 16 gives `font-size="16"` in the SVG.
    pub size: f64,
    pub bold: bool,
    pub color: RGBColor,
    pub h: HPos,
    pub v: VPos,
    pub vertical: bool,
}

impl Font {
    pub(crate) fn new(size: f64) -> Self {
        Self {
            size,
            bold: false,
            color: INK,
            h: HPos::Left,
            v: VPos::Top,
            vertical: false,
        }
    }
    pub(crate) fn bold(mut self) -> Self {
        self.bold = true;
        self
    }
    pub(crate) fn color(mut self, c: RGBColor) -> Self {
        self.color = c;
        self
    }
    pub(crate) fn anchor(mut self, h: HPos, v: VPos) -> Self {
        self.h = h;
        self.v = v;
        self
    }
    /// Rotated 90° counter-clockwise (reads bottom to top). The anchor applies to the
    /// unrotated text: `HPos::Right` puts the end of the text at the point, running down.
    pub(crate) fn vertical(mut self) -> Self {
        self.vertical = true;
        self
    }
    fn style(&self) -> TextStyle<'static> {
        let weight = if self.bold {
            FontStyle::Bold
        } else {
            FontStyle::Normal
        };
        let size = self.size * PLOTTERS_PER_PX;
        let mut desc = FontDesc::new(FontFamily::Name(FAMILY), size, weight);
        if self.vertical {
            desc = desc.transform(FontTransform::Rotate270);
        }
        desc.color(&self.color).pos(Pos::new(self.h, self.v))
    }
}

/// Width and height of `s` set horizontally in `f`, as the PNG sets it (from the font's
/// advances; browsers set the SVG's text a little narrower). Needs no drawing area, so
/// that charts can plan their size before drawing; the fonts must be registered.
pub(crate) fn text_size(s: &str, f: Font) -> Result<(i32, i32), PlotError> {
    if s.is_empty() {
        return Ok((0, f.size.round() as i32));
    }
    let style = Font {
        vertical: false,
        ..f
    }
    .style();
    let ((x0, y0), (x1, y1)) = style.font.layout_box(s).map_err(draw_err)?;
    Ok((x1 - x0, y1 - y0))
}

/// The largest size from `f.size` down to `min` at which `s` fits in `max_w`.
pub(crate) fn shrink_to(s: &str, f: Font, max_w: i32, min: f64) -> Result<Font, PlotError> {
    let mut g = f;
    while g.size > min && text_size(s, g)?.0 > max_w {
        g.size -= 1.0;
    }
    Ok(g)
}

/// `s` broken into lines no wider than `max_w` in `f`, never cut: at spaces first, then
/// after `_ / - . , ( )` (bench names, paths), and only then between two characters.
/// The spaces at the breaks are all that is dropped.
pub(crate) fn wrap(s: &str, f: Font, max_w: i32) -> Result<Vec<String>, PlotError> {
    // A glyph is a pixel wide at least, so a line holds at most `most` characters: only
    // those are measured for each line, and a long text costs its length, not its square.
    let most = max_w.max(1) as usize;
    let mut lines = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        let short = rest.char_indices().nth(most).is_none();
        if short && text_size(rest, f)?.0 <= max_w {
            lines.push(rest.to_string());
            break;
        }
        let (line, tail) = rest.split_at(break_at(rest, f, max_w, most)?);
        lines.push(line.trim_end().to_string());
        rest = tail.trim_start();
    }
    Ok(lines)
}

/// Where to end the first line of `s` (a byte index, after at least one character and
/// at most `most`).
fn break_at(s: &str, f: Font, max_w: i32, most: usize) -> Result<usize, PlotError> {
    let ends: Vec<usize> = s
        .char_indices()
        .skip(1)
        .take(most)
        .map(|(i, _)| i)
        .collect();
    // Binary search for the most characters that fit (at least one).
    let (mut lo, mut hi) = (0usize, ends.len().saturating_sub(1));
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if text_size(&s[..ends[mid]], f)?.0 <= max_w {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let Some(&fits) = ends.get(lo) else {
        return Ok(s.len());
    };
    let head = &s[..fits];
    // A break at a space is best, but not one that leaves a line of a character or two.
    let min = head.chars().count() / 3;
    let good = |i: usize| head[..i].chars().count() > min;
    let space = if s[fits..].starts_with(' ') {
        Some(fits)
    } else {
        head.rfind(' ')
    };
    if let Some(i) = space.filter(|i| *i > 0 && good(*i)) {
        return Ok(i);
    }
    if let Some(i) = head.rfind(['_', '/', '-', '.', ',', '(', ')']) {
        let after = i + 1;
        if good(after) {
            return Ok(after);
        }
    }
    Ok(fits)
}

/// Text wrapped into lines, set in one font.
#[derive(Clone)]
pub(crate) struct Para {
    pub lines: Vec<String>,
    pub font: Font,
    /// Baseline-to-baseline distance.
    pub line_h: i32,
}

impl Para {
    /// `s` in `f`, wrapped at `max_w`.
    pub(crate) fn new(s: &str, f: Font, max_w: i32) -> Result<Self, PlotError> {
        Ok(Self {
            lines: wrap(s, f, max_w)?,
            font: f,
            line_h: (f.size * 1.25).round() as i32,
        })
    }

    /// No text.
    pub(crate) fn empty() -> Self {
        Self {
            lines: Vec::new(),
            font: Font::new(1.0),
            line_h: 0,
        }
    }

    /// `s` on one line at the largest size down to `min` where it fits `max_w`, else
    /// wrapped at that smallest size.
    pub(crate) fn shrunk(s: &str, f: Font, max_w: i32, min: f64) -> Result<Self, PlotError> {
        Self::new(s, shrink_to(s, f, max_w, min)?, max_w)
    }

    /// Total height (across the lines for vertical text): the last line is one em.
    pub(crate) fn height(&self) -> i32 {
        match self.lines.len() {
            0 => 0,
            n => (n as i32 - 1) * self.line_h + self.font.size.round() as i32,
        }
    }

    /// The widest line.
    pub(crate) fn width(&self) -> Result<i32, PlotError> {
        let mut w = 0;
        for l in &self.lines {
            w = w.max(text_size(l, self.font)?.0);
        }
        Ok(w)
    }

    /// Draws the lines from `at` down (vertical text: from `at` rightwards), each
    /// anchored as the font says.
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        at: (i32, i32),
    ) -> Result<(), PlotError> {
        for (k, line) in self.lines.iter().enumerate() {
            let d = k as i32 * self.line_h;
            let p = if self.font.vertical {
                (at.0 + d, at.1)
            } else {
                (at.0, at.1 + d)
            };
            c.text(line, p, self.font)?;
        }
        Ok(())
    }
}

/// The widest tick label of `ticks` at the tick size of `ts`.
pub(crate) fn ticks_width(ticks: &Ticks, ts: TypeScale) -> Result<i32, PlotError> {
    let mut w = 0;
    for v in &ticks.values {
        w = w.max(text_size(&ticks.label(*v), Font::new(ts.tick))?.0);
    }
    Ok(w)
}

/// A chart's title (bold, centred, shrunk then wrapped to the width) and subtitle.
pub(crate) struct TitleBlock {
    title: Para,
    /// The subtitle and its top.
    subtitle: Option<(Para, i32)>,
    margin: i32,
    /// The y below the block, where the plot may start.
    pub bottom: i32,
}

impl TitleBlock {
    pub(crate) fn new(
        ts: TypeScale,
        width: i32,
        title: &str,
        subtitle: Option<&str>,
    ) -> Result<Self, PlotError> {
        let margin = (ts.title * 0.5).round() as i32;
        let max_w = width - 2 * margin;
        let f = Font::new(ts.title).bold().anchor(HPos::Center, VPos::Top);
        let title = Para::shrunk(title, f, max_w, ts.label)?;
        let mut y = margin;
        if !title.lines.is_empty() {
            y += title.height() + margin / 2;
        }
        let subtitle = match subtitle.filter(|s| !s.is_empty()) {
            None => None,
            Some(sub) => {
                let f = Font::new(ts.small)
                    .color(MUTED)
                    .anchor(HPos::Center, VPos::Top);
                let p = Para::new(sub, f, max_w)?;
                let top = y;
                y += p.height() + margin / 2;
                Some((p, top))
            }
        };
        Ok(Self {
            title,
            subtitle,
            margin,
            bottom: y + margin / 2,
        })
    }

    pub(crate) fn draw<DB: DrawingBackend>(&self, c: &Canvas<'_, DB>) -> Result<(), PlotError> {
        let x = c.width / 2;
        self.title.draw(c, (x, self.margin))?;
        if let Some((sub, y)) = &self.subtitle {
            sub.draw(c, (x, *y))?;
        }
        Ok(())
    }
}

/// A value axis: maps `lo..=hi` (logarithmically if `log`) onto pixels `p0..=p1`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scale {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
    pub p0: i32,
    pub p1: i32,
}

impl Scale {
    fn t(&self, v: f64) -> f64 {
        if self.log {
            (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }
    /// The pixel of `v` (values outside the range map outside `p0..p1`, clamped to a
    /// few pixels beyond so that nothing wraps).
    pub(crate) fn map(&self, v: f64) -> i32 {
        let t = self.t(v).clamp(-0.05, 1.05);
        (f64::from(self.p0) + t * f64::from(self.p1 - self.p0)).round() as i32
    }
}

/// Pads `lo..hi` by `frac` of its span on each side (in log space if `log`), and widens a
/// degenerate range so that the axis has room.
pub(crate) fn padded(lo: f64, hi: f64, frac: f64, log: bool) -> (f64, f64) {
    if log {
        let (a, b) = (lo.ln(), hi.ln());
        let pad = ((b - a) * frac).max(0.05);
        ((a - pad).exp(), (b + pad).exp())
    } else {
        let span = hi - lo;
        let pad = if span > 0.0 {
            span * frac
        } else {
            (lo.abs() * 0.05).max(0.5)
        };
        (lo - pad, hi + pad)
    }
}

/// The drawing area plus the type scale of the chart.
pub(crate) struct Canvas<'a, DB: DrawingBackend> {
    area: &'a DrawingArea<DB, Shift>,
    pub ts: TypeScale,
    pub width: i32,
    pub height: i32,
}

impl<'a, DB: DrawingBackend> Canvas<'a, DB> {
    pub(crate) fn new(area: &'a DrawingArea<DB, Shift>, width: u32, height: u32) -> Self {
        Self {
            area,
            ts: TypeScale::for_width(width),
            width: width as i32,
            height: height as i32,
        }
    }

    /// The same canvas with other type sizes.
    pub(crate) fn with_type(mut self, ts: TypeScale) -> Self {
        self.ts = ts;
        self
    }

    pub(crate) fn fill(&self, c: RGBColor) -> Result<(), PlotError> {
        self.area.fill(&c).map_err(draw_err)
    }

    pub(crate) fn text(&self, s: &str, at: (i32, i32), f: Font) -> Result<(), PlotError> {
        if s.is_empty() {
            return Ok(());
        }
        self.area
            .draw(&Text::new(s.to_string(), at, f.style()))
            .map_err(draw_err)
    }

    /// Width and height of `s` set horizontally in `f`.
    pub(crate) fn measure(&self, s: &str, f: Font) -> Result<(i32, i32), PlotError> {
        text_size(s, f)
    }

    /// The widest of `items` set in `f`.
    pub(crate) fn max_width<'s>(
        &self,
        items: impl IntoIterator<Item = &'s str>,
        f: Font,
    ) -> Result<i32, PlotError> {
        let mut w = 0;
        for s in items {
            w = w.max(self.measure(s, f)?.0);
        }
        Ok(w)
    }

    /// `s`, shortened with an ellipsis in the middle if wider than `max_w` in `f` (the
    /// ends of bench names are what tells them apart).
    pub(crate) fn fit(&self, s: &str, f: Font, max_w: i32) -> Result<String, PlotError> {
        if self.measure(s, f)?.0 <= max_w {
            return Ok(s.to_string());
        }
        let chars: Vec<char> = s.chars().collect();
        let shortened = |keep: usize| -> String {
            let head = keep.div_ceil(2);
            let tail = keep - head;
            chars[..head]
                .iter()
                .chain(std::iter::once(&'…'))
                .chain(chars[chars.len() - tail..].iter())
                .collect()
        };
        // Binary search for the most characters kept that still fit.
        let (mut lo, mut hi) = (0usize, chars.len().saturating_sub(1));
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.measure(&shortened(mid), f)?.0 <= max_w {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Ok(shortened(lo))
    }

    /// The largest size from `f.size` down to `min` at which `s` fits in `max_w`.
    pub(crate) fn shrink_to(
        &self,
        s: &str,
        f: Font,
        max_w: i32,
        min: f64,
    ) -> Result<Font, PlotError> {
        shrink_to(s, f, max_w, min)
    }

    pub(crate) fn rect(
        &self,
        a: (i32, i32),
        b: (i32, i32),
        style: ShapeStyle,
    ) -> Result<(), PlotError> {
        self.area
            .draw(&Rectangle::new([a, b], style))
            .map_err(draw_err)
    }

    pub(crate) fn line(&self, pts: Vec<(i32, i32)>, style: ShapeStyle) -> Result<(), PlotError> {
        self.area
            .draw(&PathElement::new(pts, style))
            .map_err(draw_err)
    }

    pub(crate) fn dashed(
        &self,
        pts: Vec<(i32, i32)>,
        dash: i32,
        gap: i32,
        style: ShapeStyle,
    ) -> Result<(), PlotError> {
        self.area
            .draw(&DashedPathElement::new(pts, dash, gap, style))
            .map_err(draw_err)
    }

    /// A line in `style`'s colour (at `alpha`) and dash pattern, `width` px wide.
    pub(crate) fn styled(
        &self,
        pts: Vec<(i32, i32)>,
        style: LineStyle,
        width: u32,
        alpha: f64,
    ) -> Result<(), PlotError> {
        let stroke = style.rgb().mix(alpha).stroke_width(width);
        match style.dash.pattern() {
            None => self.line(pts, stroke),
            Some((dash, gap)) => self.dashed(pts, dash, gap, stroke),
        }
    }

    pub(crate) fn circle(&self, c: (i32, i32), r: i32, style: ShapeStyle) -> Result<(), PlotError> {
        self.area.draw(&Circle::new(c, r, style)).map_err(draw_err)
    }

    pub(crate) fn polygon(&self, pts: Vec<(i32, i32)>, style: ShapeStyle) -> Result<(), PlotError> {
        self.area.draw(&Polygon::new(pts, style)).map_err(draw_err)
    }

    /// An × of half-size `r` centred on `c`.
    pub(crate) fn cross(&self, c: (i32, i32), r: i32, style: ShapeStyle) -> Result<(), PlotError> {
        let (x, y) = c;
        self.line(vec![(x - r, y - r), (x + r, y + r)], style)?;
        self.line(vec![(x - r, y + r), (x + r, y - r)], style)
    }

    /// The title (bold, centred) and an optional subtitle; returns the y below them.
    pub(crate) fn title(&self, title: &str, subtitle: Option<&str>) -> Result<i32, PlotError> {
        let block = TitleBlock::new(self.ts, self.width, title, subtitle)?;
        block.draw(self)?;
        Ok(block.bottom)
    }

    /// Horizontal grid lines at `ticks` across `frame`, with tick marks and labels left of
    /// it (the y axis of `scale`).
    pub(crate) fn y_axis(
        &self,
        frame: Rect,
        scale: &Scale,
        ticks: &Ticks,
        grid: bool,
    ) -> Result<(), PlotError> {
        let f = Font::new(self.ts.tick).anchor(HPos::Right, VPos::Center);
        for &v in &ticks.values {
            let y = scale.map(v);
            if grid {
                self.line(vec![(frame.x0, y), (frame.x1, y)], GRID.stroke_width(1))?;
            }
            self.line(vec![(frame.x0 - 5, y), (frame.x0, y)], INK.stroke_width(1))?;
            self.text(&ticks.label(v), (frame.x0 - 8, y), f)?;
        }
        self.line(
            vec![(frame.x0, frame.y0), (frame.x0, frame.y1)],
            INK.stroke_width(1),
        )
    }

    /// Vertical grid lines at `ticks` across `frame`, with tick marks and labels below it
    /// (the x axis of `scale`).
    pub(crate) fn x_axis(
        &self,
        frame: Rect,
        scale: &Scale,
        ticks: &Ticks,
        grid: bool,
    ) -> Result<(), PlotError> {
        let f = Font::new(self.ts.tick).anchor(HPos::Center, VPos::Top);
        for &v in &ticks.values {
            let x = scale.map(v);
            if grid {
                self.line(vec![(x, frame.y0), (x, frame.y1)], GRID.stroke_width(1))?;
            }
            self.line(vec![(x, frame.y1), (x, frame.y1 + 5)], INK.stroke_width(1))?;
            self.text(&ticks.label(v), (x, frame.y1 + 8), f)?;
        }
        self.line(
            vec![(frame.x0, frame.y1), (frame.x1, frame.y1)],
            INK.stroke_width(1),
        )
    }

    /// The widest tick label of `ticks`.
    pub(crate) fn tick_width(&self, ticks: &Ticks) -> Result<i32, PlotError> {
        ticks_width(ticks, self.ts)
    }
}

/// The sample drawn before a legend label.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Key {
    /// A filled box (bars, cells).
    Box(RGBColor),
    /// A solid line.
    Line(RGBColor),
    /// A line in a colour and dash pattern (curves).
    Styled(LineStyle),
    /// A dashed line.
    Dashed(RGBColor),
    /// An × (missing values).
    Cross(RGBColor),
    /// A translucent band.
    Band(RGBColor),
    /// A dot (points).
    Dot(RGBColor),
}

/// A legend: its entries (labels wrapped, never cut) and, once laid out, where each goes.
pub(crate) struct Legend {
    entries: Vec<(Key, Para)>,
    row_h: i32,
    positions: Vec<(i32, i32)>,
    /// Size of the laid-out legend.
    pub width: i32,
    pub height: i32,
}

impl Legend {
    const SWATCH: i32 = 26;
    const GAP: i32 = 8;
    /// What an entry takes before its label: the swatch and a gap.
    pub(crate) const KEY_W: i32 = Self::SWATCH + Self::GAP;

    /// Lays `entries` out in one column whose labels wrap at `max_label` px.
    pub(crate) fn column(
        ts: TypeScale,
        entries: Vec<(Key, String)>,
        max_label: i32,
    ) -> Result<Self, PlotError> {
        let mut legend = Self::wrapped(ts, entries, max_label)?;
        let mut y = 0;
        for (_, p) in &legend.entries {
            legend.positions.push((0, y));
            legend.width = legend.width.max(Self::SWATCH + Self::GAP + p.width()?);
            y += legend.entry_h(p);
        }
        legend.height = y;
        Ok(legend)
    }

    /// Lays `entries` out in rows that wrap at `max_w` px (labels too, if one is wider):
    /// one centred row when they all fit, else a grid of equal columns, row by row.
    pub(crate) fn rows(
        ts: TypeScale,
        entries: Vec<(Key, String)>,
        max_w: i32,
    ) -> Result<Self, PlotError> {
        let mut legend = Self::wrapped(ts, entries, max_w - Self::SWATCH - Self::GAP)?;
        let mut widths = Vec::with_capacity(legend.entries.len());
        for (_, p) in &legend.entries {
            widths.push(Self::SWATCH + Self::GAP + p.width()?);
        }
        let spacing = 3 * Self::GAP;
        let one_row = widths.iter().sum::<i32>() + spacing * (widths.len() as i32 - 1);
        let col_w = widths.iter().copied().max().unwrap_or(0);
        let cols = if one_row <= max_w {
            widths.len().max(1)
        } else {
            (((max_w + spacing) / (col_w + spacing)).max(1)) as usize
        };
        let (mut y, mut row_bottom) = (0, 0);
        for (k, (_, p)) in legend.entries.iter().enumerate() {
            let col = k % cols;
            if k > 0 && col == 0 {
                y = row_bottom;
            }
            let x = if cols == widths.len() {
                widths[..k].iter().map(|w| w + spacing).sum()
            } else {
                col as i32 * (col_w + spacing)
            };
            legend.positions.push((x, y));
            legend.width = legend.width.max(x + widths[k]);
            row_bottom = row_bottom.max(y + legend.entry_h(p));
        }
        legend.height = row_bottom;
        Ok(legend)
    }

    /// The height of an entry: a row, and a line more per wrapped line.
    fn entry_h(&self, p: &Para) -> i32 {
        self.row_h + p.height() - p.font.size.round() as i32
    }

    fn wrapped(
        ts: TypeScale,
        entries: Vec<(Key, String)>,
        max_label: i32,
    ) -> Result<Self, PlotError> {
        let font = Font::new(ts.tick).anchor(HPos::Left, VPos::Center);
        let entries = entries
            .into_iter()
            .map(|(k, label)| Ok((k, Para::new(&label, font, max_label.max(40))?)))
            .collect::<Result<Vec<_>, PlotError>>()?;
        Ok(Self {
            positions: Vec::with_capacity(entries.len()),
            entries,
            row_h: (ts.tick * 1.5).round() as i32,
            width: 0,
            height: 0,
        })
    }

    /// Draws the legend with its top-left corner at `origin`.
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        canvas: &Canvas<'_, DB>,
        origin: (i32, i32),
    ) -> Result<(), PlotError> {
        for ((key, label), (dx, dy)) in self.entries.iter().zip(&self.positions) {
            let (x, y) = (origin.0 + dx, origin.1 + dy + self.row_h / 2);
            self.swatch(canvas, *key, x, y)?;
            label.draw(canvas, (x + Self::SWATCH + Self::GAP, y))?;
        }
        Ok(())
    }

    fn swatch<DB: DrawingBackend>(
        &self,
        canvas: &Canvas<'_, DB>,
        key: Key,
        x: i32,
        y: i32,
    ) -> Result<(), PlotError> {
        let (x1, half) = (x + Self::SWATCH - 4, (self.row_h / 3).max(4));
        match key {
            Key::Box(c) => {
                canvas.rect((x, y - half), (x1, y + half), c.filled())?;
                canvas.rect((x, y - half), (x1, y + half), INK.mix(0.6).stroke_width(1))
            }
            Key::Line(c) => canvas.line(vec![(x, y), (x1, y)], c.stroke_width(2)),
            Key::Styled(s) => canvas.styled(vec![(x, y), (x1, y)], s, 2, 1.0),
            Key::Dashed(c) => canvas.dashed(vec![(x, y), (x1, y)], 5, 3, c.stroke_width(2)),
            Key::Cross(c) => canvas.cross(((x + x1) / 2, y), half - 1, c.stroke_width(2)),
            Key::Band(c) => canvas.rect((x, y - half), (x1, y + half), c.mix(0.3).filled()),
            Key::Dot(c) => canvas.circle(((x + x1) / 2, y), 5, c.filled()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::ensure_fonts;

    fn font() -> Font {
        ensure_fonts().expect("fonts");
        Font::new(16.0)
    }

    /// The lines put back together: nothing but the spaces at the breaks is lost.
    fn rejoined(lines: &[String]) -> String {
        lines.concat().replace(' ', "")
    }

    #[test]
    fn wrap_breaks_at_spaces_then_punctuation_and_never_drops_text() {
        let f = font();
        let s = "output0 GPU 0 (submissions/acme-corp/output0/fast_0.json#9)";
        for max_w in [60, 120, 200, 400, 1000] {
            let lines = wrap(s, f, max_w).expect("wrap");
            assert_eq!(rejoined(&lines), s.replace(' ', ""), "at {max_w} px");
            for l in &lines {
                let w = text_size(l, f).expect("size").0;
                // A single character wider than the room is the only excuse.
                assert!(w <= max_w || l.chars().count() == 1, "{l:?}: {w} > {max_w}");
            }
        }
        let lines = wrap(s, f, 200).expect("wrap");
        assert_eq!(lines[0], "output0 GPU 0", "{lines:?}");
        // A name without spaces breaks after an underscore.
        let w = text_size("convnet_distributed_", f).expect("size").0;
        let lines = wrap("convnet_distributed_fp16", f, w + 5).expect("wrap");
        assert_eq!(lines, ["convnet_distributed_", "fp16"]);
        // Fits: one line; empty: none.
        assert_eq!(wrap("vae", f, 100).expect("wrap"), ["vae"]);
        assert!(wrap("", f, 100).expect("wrap").is_empty());
        // Not even a character fits: one per line, still nothing lost.
        assert_eq!(wrap("abc", f, 1).expect("wrap"), ["a", "b", "c"]);
    }

    #[test]
    fn legend_rows_keep_labels_whole_and_within_the_width() {
        font();
        let ts = TypeScale::for_width(1200);
        let long = "x".repeat(200);
        let entries = vec![
            (Key::Line(INK), "short".to_string()),
            (Key::Line(INK), long.clone()),
        ];
        let legend = Legend::rows(ts, entries.clone(), 600).expect("legend");
        assert!(legend.width <= 600, "{}", legend.width);
        let (_, p) = &legend.entries[1];
        assert!(p.lines.len() > 1);
        assert_eq!(p.lines.concat(), long);
        // Two rows at least: the long label wraps below the short one.
        assert!(legend.height > 2 * legend.row_h);
        let column = Legend::column(ts, entries, 300).expect("legend");
        assert!(column.width <= 300 + Legend::SWATCH + Legend::GAP);
    }
}
