//! Rows × columns (GPUs × benches) of relative performance, coloured and printed.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::canvas::{Canvas, Font, Para, Rect};
use crate::error::PlotError;
use crate::render::{Figure, finite, non_empty, render, same_len};
use crate::style::{INK, MISSING, MUTED, PAPER, clean_label, diverging, is_light};
use crate::{Chart, Size};

/// Input of [`heatmap`].
#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    /// Chart title.
    pub title: String,
    /// Optional line under the title.
    pub subtitle: Option<String>,
    /// Row labels, top to bottom (e.g. GPUs).
    pub rows: Vec<String>,
    /// Column labels, left to right (e.g. benches).
    pub columns: Vec<String>,
    /// `values[row][column]`, `None` where there is no result.
    pub values: Vec<Vec<Option<f64>>>,
    /// The neutral value (white); default 1.
    pub center: f64,
    /// The values at the two ends of the colour scale, `low < center < high`; values
    /// beyond get the end colour (their printed value is exact). Default 0.9 – 1.1.
    pub range: (f64, f64),
    /// Decimals of the printed values; default 2.
    pub decimals: usize,
    /// Title of the colour bar; default "relative performance".
    pub value_label: String,
    /// A note under the cells (wrapped, never cut), e.g. what the chart leaves out.
    pub note: Option<String>,
    /// Image size; default 1200 × 700.
    pub size: Size,
}

impl Default for Heatmap {
    fn default() -> Self {
        Self {
            title: String::new(),
            subtitle: None,
            rows: Vec::new(),
            columns: Vec::new(),
            values: Vec::new(),
            center: 1.0,
            range: (0.9, 1.1),
            decimals: 2,
            value_label: "relative performance".to_string(),
            note: None,
            size: Size::default(),
        }
    }
}

/// A heatmap of `values`, one cell per row and column, its value printed in it.
///
/// The colour is diverging around `center`: orange below, white at, blue above
/// ([`crate::DIVERGING`]), saturating at `range`. Text is black or white, whichever
/// reads better on the cell. Missing cells are grey with "n/a". A colour bar with ticks
/// stands right of the cells. Column labels are horizontal when they fit their cell,
/// vertical otherwise; cell values shrink with the cells and are left out below 8 px.
/// The `note`, if any, goes under the column labels, wrapped to the width.
///
/// # Errors
/// [`PlotError`] for no rows or columns, a row of the wrong length, a NaN or infinite
/// value, center or range bound, `range` not around `center`, or an unusable size.
pub fn heatmap(spec: &Heatmap) -> Result<Chart, PlotError> {
    render(&Prepared::new(spec)?)
}

struct Prepared {
    spec: Heatmap,
    any_missing: bool,
}

impl Prepared {
    fn new(spec: &Heatmap) -> Result<Self, PlotError> {
        non_empty(&spec.rows, "the list of rows")?;
        non_empty(&spec.columns, "the list of columns")?;
        same_len(&spec.values, spec.rows.len(), || {
            "values (one list per row)".to_string()
        })?;
        let mut any_missing = false;
        for (row, vals) in spec.rows.iter().zip(&spec.values) {
            same_len(vals, spec.columns.len(), || {
                format!("row `{row}` (one value per column)")
            })?;
            for (col, v) in spec.columns.iter().zip(vals) {
                match v {
                    Some(v) => {
                        finite(*v, || format!("row `{row}`, column `{col}`"))?;
                    }
                    None => any_missing = true,
                }
            }
        }
        let center = finite(spec.center, || "center".to_string())?;
        let lo = finite(spec.range.0, || "range: low end".to_string())?;
        let hi = finite(spec.range.1, || "range: high end".to_string())?;
        if !(lo < center && center < hi) {
            return Err(PlotError::Invalid {
                what: "range".into(),
                reason: format!("{lo} < {center} < {hi} (low < center < high) does not hold"),
            });
        }
        let mut spec = spec.clone();
        spec.title = clean_label(&spec.title);
        spec.subtitle = spec.subtitle.as_deref().map(clean_label);
        spec.rows = spec.rows.iter().map(|s| clean_label(s)).collect();
        spec.columns = spec.columns.iter().map(|s| clean_label(s)).collect();
        spec.value_label = clean_label(&spec.value_label);
        spec.note = spec.note.as_deref().map(clean_label);
        spec.decimals = spec.decimals.min(6);
        Ok(Self { spec, any_missing })
    }

    /// Position of `v` on the colour scale, 0..=1 (0.5 at the center).
    fn t(&self, v: f64) -> f64 {
        let (lo, hi) = self.spec.range;
        let c = self.spec.center;
        if v < c {
            0.5 * ((v - lo) / (c - lo)).max(0.0)
        } else {
            0.5 + 0.5 * ((v - c) / (hi - c)).min(1.0)
        }
    }
}

impl Prepared {
    /// The colour bar's ticks and their labels (the ends say that values saturate).
    fn bar_ticks(&self) -> Vec<(f64, String)> {
        let s = &self.spec;
        let (lo, hi, d) = (s.range.0, s.range.1, s.decimals);
        let mid = [(lo + s.center) / 2.0, s.center, (s.center + hi) / 2.0];
        let mut out = vec![(lo, format!("≤{lo:.d$}"))];
        out.extend(mid.iter().map(|v| (*v, format!("{v:.d$}"))));
        out.push((hi, format!("≥{hi:.d$}")));
        out
    }

    /// The note under the cells, wrapped to the width.
    fn note<DB: DrawingBackend>(&self, c: &Canvas<'_, DB>, margin: i32) -> Result<Para, PlotError> {
        let Some(n) = &self.spec.note else {
            return Ok(Para::empty());
        };
        let f = Font::new(c.ts.small)
            .color(MUTED)
            .anchor(HPos::Left, VPos::Top);
        Para::new(n, f, c.width - 2 * margin)
    }
}

impl Figure for Prepared {
    fn size(&self) -> Size {
        self.spec.size
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let s = &self.spec;
        let c = Canvas::new(root, s.size.width, s.size.height);
        c.fill(PAPER)?;
        let margin = (c.ts.title * 0.6).round() as i32;
        let top = c.title(&s.title, s.subtitle.as_deref())?;
        let tick = Font::new(c.ts.tick);

        // Colour bar on the right: bar, tick labels, vertical title.
        let mut bar_tick_w = 0;
        for (_, label) in self.bar_ticks() {
            bar_tick_w = bar_tick_w.max(c.measure(&label, tick)?.0);
        }
        let (_, title_h) = c.measure(&s.value_label, Font::new(c.ts.label))?;
        let right = BAR_W + 8 + bar_tick_w + 14 + title_h + margin;

        // Row labels on the left, column labels below (vertical if they do not fit).
        let row_w = c
            .max_width(s.rows.iter().map(String::as_str), tick)?
            .min(c.width / 4);
        let x0 = margin + row_w + 10;
        let x1 = c.width - margin - right;
        let cell_w = f64::from(x1 - x0) / s.columns.len() as f64;
        let widest = c.max_width(s.columns.iter().map(String::as_str), tick)?;
        let horizontal = f64::from(widest) <= cell_w - 4.0;
        let mut col_font = tick;
        let (cols, cols_h) = if horizontal {
            (s.columns.clone(), c.measure("Ag", tick)?.1)
        } else {
            col_font.size = col_font.size.min((cell_w * 0.9).floor()).max(8.0);
            let mut cols = Vec::with_capacity(s.columns.len());
            let mut tallest = 0;
            for name in &s.columns {
                let fitted = c.fit(name, col_font, c.height * 35 / 100)?;
                tallest = tallest.max(c.measure(&fitted, col_font)?.0);
                cols.push(fitted);
            }
            (cols, tallest)
        };
        // The note, if any, at the bottom: the cells end above it.
        let note = self.note(&c, margin)?;
        let note_h = match note.lines.len() {
            0 => 0,
            _ => note.height() + 12,
        };
        note.draw(&c, (margin, c.height - margin - note.height()))?;
        let frame = Rect {
            x0,
            y0: top,
            x1,
            y1: c.height - margin - note_h - cols_h - 10,
        };
        if frame.width() < 20 || frame.height() < 20 {
            return Err(PlotError::Invalid {
                what: format!("image size {}×{}", s.size.width, s.size.height),
                reason: "too small for the labels of this heatmap".into(),
            });
        }
        let cell_h = f64::from(frame.height()) / s.rows.len() as f64;
        let cx = |j: usize| (f64::from(frame.x0) + cell_w * j as f64).round() as i32;
        let cy = |i: usize| (f64::from(frame.y0) + cell_h * i as f64).round() as i32;
        self.draw_cells(&c, &cx, &cy, cell_w, cell_h)?;

        for (i, name) in s.rows.iter().enumerate() {
            let f = tick.anchor(HPos::Right, VPos::Center);
            let shown = c.fit(name, f, row_w)?;
            c.text(&shown, (frame.x0 - 10, (cy(i) + cy(i + 1)) / 2), f)?;
        }
        for (j, name) in cols.iter().enumerate() {
            let x = (cx(j) + cx(j + 1)) / 2;
            let f = if horizontal {
                col_font.anchor(HPos::Center, VPos::Top)
            } else {
                col_font.anchor(HPos::Right, VPos::Center).vertical()
            };
            c.text(name, (x, frame.y1 + 8), f)?;
        }
        self.draw_bar(&c, frame, margin, bar_tick_w)
    }
}

/// Width of the colour bar.
const BAR_W: i32 = 22;

impl Prepared {
    /// Cells, with a 1 px white gap, and their values.
    fn draw_cells<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        cx: &dyn Fn(usize) -> i32,
        cy: &dyn Fn(usize) -> i32,
        cell_w: f64,
        cell_h: f64,
    ) -> Result<(), PlotError> {
        let d = self.spec.decimals;
        let value_size = (c.ts.tick.min(cell_h * 0.45).min(cell_w / 3.4)).floor();
        for (i, row) in self.spec.values.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                let (a, b) = ((cx(j), cy(i)), (cx(j + 1) - 1, cy(i + 1) - 1));
                let fill = v.map_or(MISSING, |v| diverging(self.t(v)));
                c.rect(a, b, fill.filled())?;
                if value_size < 8.0 {
                    continue;
                }
                let text = v.map_or("n/a".to_string(), |v| format!("{v:.d$}"));
                let ink = match v {
                    None => MUTED,
                    Some(_) if is_light(fill) => INK,
                    Some(_) => PAPER,
                };
                let f = Font::new(value_size)
                    .color(ink)
                    .anchor(HPos::Center, VPos::Center);
                let text = c.fit(&text, f, b.0 - a.0 - 2)?;
                c.text(&text, ((a.0 + b.0) / 2, (a.1 + b.1) / 2), f)?;
            }
        }
        Ok(())
    }

    /// The colour bar right of the cells: 100 steps from high (top) to low (bottom), its
    /// ticks, its title and the key of missing cells.
    fn draw_bar<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        frame: Rect,
        margin: i32,
        bar_tick_w: i32,
    ) -> Result<(), PlotError> {
        let s = &self.spec;
        let bx = frame.x1 + margin;
        let key_h = if self.any_missing { 40 } else { 0 };
        let bar_h = (frame.height() - key_h).min(360);
        let by = frame.y0 + (frame.height() - bar_h) / 2;
        let steps = 100;
        for k in 0..steps {
            let t = 1.0 - (f64::from(k) + 0.5) / f64::from(steps);
            let (ya, yb) = (by + bar_h * k / steps, by + bar_h * (k + 1) / steps);
            c.rect((bx, ya), (bx + BAR_W, yb), diverging(t).filled())?;
        }
        c.rect((bx, by), (bx + BAR_W, by + bar_h), INK.stroke_width(1))?;
        for (v, label) in self.bar_ticks() {
            let y = by + bar_h - (self.t(v) * f64::from(bar_h)).round() as i32;
            c.line(
                vec![(bx + BAR_W, y), (bx + BAR_W + 5, y)],
                INK.stroke_width(1),
            )?;
            let f = Font::new(c.ts.tick).anchor(HPos::Left, VPos::Center);
            c.text(&label, (bx + BAR_W + 10, y), f)?;
        }
        let title_font = Font::new(c.ts.label).vertical();
        let f = c.shrink_to(&s.value_label, title_font, bar_h + 80, c.ts.small)?;
        let f = f.anchor(HPos::Center, VPos::Top);
        let tx = bx + BAR_W + 10 + bar_tick_w + 12;
        c.text(&s.value_label, (tx, by + bar_h / 2), f)?;
        if self.any_missing {
            let y = by + bar_h + 16;
            c.rect((bx, y), (bx + BAR_W, y + 14), MISSING.filled())?;
            let f = Font::new(c.ts.small).anchor(HPos::Left, VPos::Center);
            c.text("no result", (bx + BAR_W + 8, y + 7), f)?;
        }
        Ok(())
    }
}
