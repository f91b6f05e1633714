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
use crate::style::{FAMILY, GRID, INK, MUTED, Ticks, TypeScale};

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
        if s.is_empty() {
            return Ok((0, f.size.round() as i32));
        }
        let style = Font {
            vertical: false,
            ..f
        }
        .style();
        let (w, h) = self.area.estimate_text_size(s, &style).map_err(draw_err)?;
        Ok((w as i32, h as i32))
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
        let mut g = f;
        while g.size > min && self.measure(s, g)?.0 > max_w {
            g.size -= 1.0;
        }
        Ok(g)
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
        let margin = (self.ts.title * 0.5).round() as i32;
        let mut y = margin;
        let f = Font::new(self.ts.title)
            .bold()
            .anchor(HPos::Center, VPos::Top);
        let f = self.shrink_to(title, f, self.width - 2 * margin, self.ts.label)?;
        let title = self.fit(title, f, self.width - 2 * margin)?;
        if !title.is_empty() {
            self.text(&title, (self.width / 2, y), f)?;
            y += self.measure(&title, f)?.1 + margin / 2;
        }
        if let Some(sub) = subtitle.filter(|s| !s.is_empty()) {
            let f = Font::new(self.ts.small)
                .color(MUTED)
                .anchor(HPos::Center, VPos::Top);
            let sub = self.fit(sub, f, self.width - 2 * margin)?;
            self.text(&sub, (self.width / 2, y), f)?;
            y += self.measure(&sub, f)?.1 + margin / 2;
        }
        Ok(y + margin / 2)
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
        let labels: Vec<String> = ticks.values.iter().map(|v| ticks.label(*v)).collect();
        self.max_width(labels.iter().map(String::as_str), Font::new(self.ts.tick))
    }
}

/// The sample drawn before a legend label.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Key {
    /// A filled box (bars, cells).
    Box(RGBColor),
    /// A solid line.
    Line(RGBColor),
    /// A dashed line.
    Dashed(RGBColor),
    /// An × (missing values).
    Cross(RGBColor),
    /// A translucent band.
    Band(RGBColor),
    /// A dot (points).
    Dot(RGBColor),
}

/// A legend: its entries and, once laid out, where each goes.
pub(crate) struct Legend {
    entries: Vec<(Key, String)>,
    font: Font,
    positions: Vec<(i32, i32)>,
    /// Size of the laid-out legend.
    pub width: i32,
    pub height: i32,
}

impl Legend {
    const SWATCH: i32 = 26;
    const GAP: i32 = 8;

    /// Lays `entries` out in one column (`max_w: None`, labels shortened to a quarter of
    /// the image width) or in rows that wrap at `max_w`.
    pub(crate) fn layout<DB: DrawingBackend>(
        canvas: &Canvas<'_, DB>,
        mut entries: Vec<(Key, String)>,
        max_w: Option<i32>,
    ) -> Result<Self, PlotError> {
        let font = Font::new(canvas.ts.tick).anchor(HPos::Left, VPos::Center);
        let row_h = (canvas.ts.tick * 1.5).round() as i32;
        let max_label = max_w.unwrap_or(canvas.width / 4) - Self::SWATCH - Self::GAP;
        for (_, label) in &mut entries {
            *label = canvas.fit(label, font, max_label)?;
        }
        let mut positions = Vec::with_capacity(entries.len());
        let (mut x, mut y, mut width) = (0, 0, 0);
        for (_, label) in &entries {
            let w = Self::SWATCH + Self::GAP + canvas.measure(label, font)?.0;
            match max_w {
                None => {
                    positions.push((0, y));
                    y += row_h;
                    width = width.max(w);
                }
                Some(max_w) => {
                    if x > 0 && x + w > max_w {
                        x = 0;
                        y += row_h;
                    }
                    positions.push((x, y));
                    x += w + 3 * Self::GAP;
                    width = width.max(x - 3 * Self::GAP);
                }
            }
        }
        let height = match max_w {
            None => y,
            Some(_) if entries.is_empty() => 0,
            Some(_) => y + row_h,
        };
        Ok(Self {
            entries,
            font,
            positions,
            width,
            height,
        })
    }

    /// Draws the legend with its top-left corner at `origin`.
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        canvas: &Canvas<'_, DB>,
        origin: (i32, i32),
    ) -> Result<(), PlotError> {
        let row_h = (canvas.ts.tick * 1.5).round() as i32;
        for ((key, label), (dx, dy)) in self.entries.iter().zip(&self.positions) {
            let (x, y) = (origin.0 + dx, origin.1 + dy + row_h / 2);
            let (x1, half) = (x + Self::SWATCH - 4, (row_h / 3).max(4));
            match *key {
                Key::Box(c) => {
                    canvas.rect((x, y - half), (x1, y + half), c.filled())?;
                    canvas.rect((x, y - half), (x1, y + half), INK.mix(0.6).stroke_width(1))?;
                }
                Key::Line(c) => canvas.line(vec![(x, y), (x1, y)], c.stroke_width(2))?,
                Key::Dashed(c) => canvas.dashed(vec![(x, y), (x1, y)], 5, 3, c.stroke_width(2))?,
                Key::Cross(c) => canvas.cross(((x + x1) / 2, y), half - 1, c.stroke_width(2))?,
                Key::Band(c) => {
                    canvas.rect((x, y - half), (x1, y + half), c.mix(0.3).filled())?;
                }
                Key::Dot(c) => canvas.circle(((x + x1) / 2, y), 5, c.filled())?,
            }
            canvas.text(label, (x + Self::SWATCH + Self::GAP, y), self.font)?;
        }
        Ok(())
    }
}
