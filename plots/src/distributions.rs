//! Small multiples: one panel per bench with its run values against the target.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::canvas::{Canvas, Font, Key, Legend, Para, Rect, Scale, padded, text_size, wrap};
use crate::error::PlotError;
use crate::render::{Figure, finite, non_empty, render};
use crate::style::{
    GRID, INK, MUTED, PAPER, SHADE, Ticks, TypeScale, clean_label, jitter, linear_ticks,
    series_color,
};
use crate::{Chart, Size};

/// One bench's run values.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BenchRuns {
    /// Bench name (panel heading).
    pub bench: String,
    /// The values of the runs (any order; drawn as jittered points).
    pub values: Vec<f64>,
    /// The target, drawn as a dashed line; `None`: no target for this bench.
    pub target: Option<f64>,
    /// Unit of the values, shown after the bench name (e.g. "items/s"); may be empty.
    pub unit: String,
}

impl BenchRuns {
    /// A bench's runs.
    pub fn new(
        bench: impl Into<String>,
        values: Vec<f64>,
        target: Option<f64>,
        unit: impl Into<String>,
    ) -> Self {
        Self {
            bench: bench.into(),
            values,
            target,
            unit: unit.into(),
        }
    }
}

/// Input of [`distributions`].
#[derive(Debug, Clone, PartialEq)]
pub struct Distributions {
    /// Chart title.
    pub title: String,
    /// Optional line under the title.
    pub subtitle: Option<String>,
    /// One panel per bench, in reading order.
    pub benches: Vec<BenchRuns>,
    /// Panels per row; default 5.
    pub columns: usize,
    /// Image size; default 1500 × 1000 (19 panels in 5 × 4).
    pub size: Size,
}

impl Default for Distributions {
    fn default() -> Self {
        Self {
            title: String::new(),
            subtitle: None,
            benches: Vec::new(),
            columns: 5,
            size: Size::new(1500, 1000),
        }
    }
}

/// Small multiples of the run values per bench against their targets.
///
/// Each panel: the bench name and unit, "n = …" and the median's difference to the target;
/// the runs as points with a deterministic jitter; their median (line) and, from four
/// runs, the interquartile box behind them; the target as a dashed line. A bench without
/// runs gets an empty panel that says so.
///
/// Why this layout for ~19 benches: each bench has its own unit and magnitude (5.4
/// items/s next to 2000), a target may be missing, and the question per bench is "where do
/// the runs fall against the target, and how spread are they". One panel per bench on its
/// own raw axis answers that in the real units with no normalisation to explain, and the
/// heading prints the median's difference to the target in %, which is what compares
/// across benches. Each axis spans at least ±1 % around the target (or the median), so
/// noise of a few tenths of a percent does not fill a panel and look alarming. Five
/// columns keep the bench names horizontal and readable (4 rows for 19 benches at the
/// default 1500 × 1000 px); one shared axis would have needed 19 rotated labels and one
/// scale for very different numbers, or a normalisation that fails where there is no
/// target.
///
/// # Errors
/// [`PlotError`] for no benches, a NaN or infinite value or target, zero columns, or an
/// unusable size.
pub fn distributions(spec: &Distributions) -> Result<Chart, PlotError> {
    render(&Prepared::new(spec)?)
}

struct Panel {
    title: String,
    unit: String,
    sorted: Vec<f64>,
    values: Vec<f64>,
    target: Option<f64>,
}

impl Panel {
    fn quantile(&self, q: f64) -> Option<f64> {
        let n = self.sorted.len();
        if n == 0 {
            return None;
        }
        let pos = q * (n - 1) as f64;
        let (i, f) = (pos.floor() as usize, pos.fract());
        let a = self.sorted[i];
        let b = self.sorted[(i + 1).min(n - 1)];
        Some(a + (b - a) * f)
    }

    fn note(&self) -> String {
        let n = self.values.len();
        match (self.quantile(0.5), self.target) {
            (None, _) => "no runs".to_string(),
            (Some(m), Some(t)) if t != 0.0 => {
                format!("n = {n} · median {:+.2} % vs target", (m / t - 1.0) * 100.0)
            }
            (Some(_), _) => format!("n = {n} · no target"),
        }
    }

    /// The y range: values and target, at least ±1 % around the target (or median),
    /// padded by 12 %.
    fn range(&self) -> (f64, f64) {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for v in self.values.iter().chain(self.target.iter()) {
            lo = lo.min(*v);
            hi = hi.max(*v);
        }
        if !lo.is_finite() {
            return (0.0, 1.0);
        }
        let center = self.target.or(self.quantile(0.5)).unwrap_or(lo);
        let half = (center.abs() * 0.01).max(1e-9);
        padded(lo.min(center - half), hi.max(center + half), 0.12, false)
    }
}

struct Prepared {
    title: String,
    subtitle: Option<String>,
    panels: Vec<Panel>,
    columns: usize,
    size: Size,
    any_target: bool,
}

impl Prepared {
    fn new(spec: &Distributions) -> Result<Self, PlotError> {
        non_empty(&spec.benches, "the list of benches")?;
        if spec.columns == 0 {
            return Err(PlotError::Invalid {
                what: "columns".into(),
                reason: "at least one panel per row is needed".into(),
            });
        }
        let mut panels = Vec::with_capacity(spec.benches.len());
        for b in &spec.benches {
            for (i, v) in b.values.iter().enumerate() {
                finite(*v, || format!("bench `{}`, run value #{}", b.bench, i + 1))?;
            }
            if let Some(t) = b.target {
                finite(t, || format!("bench `{}`, target", b.bench))?;
            }
            let mut sorted = b.values.clone();
            sorted.sort_by(f64::total_cmp);
            panels.push(Panel {
                title: clean_label(&b.bench),
                unit: clean_label(&b.unit),
                sorted,
                values: b.values.clone(),
                target: b.target,
            });
        }
        Ok(Self {
            title: clean_label(&spec.title),
            subtitle: spec.subtitle.as_deref().map(clean_label),
            any_target: panels.iter().any(|p| p.target.is_some()),
            panels,
            columns: spec.columns.min(spec.benches.len()),
            size: spec.size,
        })
    }
}

impl Figure for Prepared {
    fn size(&self) -> Size {
        self.size
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        // Panels are small: type sized as for a 1200 px image at most.
        let c = Canvas::new(root, self.size.width, self.size.height)
            .with_type(TypeScale::for_width(self.size.width.min(1200)));
        c.fill(PAPER)?;
        let margin = (c.ts.title * 0.6).round() as i32;
        let mut top = c.title(&self.title, self.subtitle.as_deref())?;

        let mut entries = vec![
            (Key::Dot(series_color(0)), "run".to_string()),
            (
                Key::Box(SHADE),
                "median and interquartile range".to_string(),
            ),
        ];
        if self.any_target {
            entries.push((Key::Dashed(series_color(3)), "target".to_string()));
        }
        let legend = Legend::rows(c.ts, entries, c.width - 2 * margin)?;
        legend.draw(&c, ((c.width - legend.width) / 2, top))?;
        top += legend.height + margin / 2;

        let cols = self.columns;
        let rows = self.panels.len().div_ceil(cols);
        let pw = f64::from(c.width - 2 * margin) / cols as f64;
        let ph = f64::from(c.height - margin - top) / rows as f64;
        // Every panel's heading takes the height of the tallest, so that plots line up.
        let inner_w = pw.floor() as i32 - 2 * PAD - 1;
        let heads = self
            .panels
            .iter()
            .map(|p| Head::new(p, c.ts, inner_w))
            .collect::<Result<Vec<_>, _>>()?;
        let head_h = heads.iter().map(Head::height).max().unwrap_or(0);
        for (k, (p, head)) in self.panels.iter().zip(&heads).enumerate() {
            let (r, col) = (k / cols, k % cols);
            let cell = Rect {
                x0: (f64::from(margin) + pw * col as f64).round() as i32,
                y0: (f64::from(top) + ph * r as f64).round() as i32,
                x1: (f64::from(margin) + pw * (col + 1) as f64).round() as i32,
                y1: (f64::from(top) + ph * (r + 1) as f64).round() as i32,
            };
            head.draw(&c, (cell.x0 + PAD, cell.y0 + 4))?;
            draw_panel(&c, p, cell, cell.y0 + 4 + head_h)?;
        }
        Ok(())
    }
}

/// Inner padding of a panel.
const PAD: i32 = 10;

/// A panel's heading: the bench name in bold (shrunk, then wrapped: never cut), its unit
/// after it when there is room (else first on the note line), and the note, wrapped.
struct Head {
    name: Para,
    /// The unit on the name's last line, at this x offset.
    unit: Option<(Para, i32)>,
    note: Para,
}

impl Head {
    fn new(p: &Panel, ts: TypeScale, inner_w: i32) -> Result<Self, PlotError> {
        let head = Font::new(ts.tick).bold().anchor(HPos::Left, VPos::Top);
        let small = Font::new(ts.small)
            .color(MUTED)
            .anchor(HPos::Left, VPos::Top);
        let name = Para::shrunk(&p.title, head, inner_w, ts.small)?;
        let last_w = match name.lines.last() {
            Some(l) => text_size(l, name.font)?.0,
            None => 0,
        };
        let unit_w = text_size(&p.unit, small)?.0;
        let inline = last_w + 8 + unit_w <= inner_w;
        let mut note = Para::new(&p.note(), small, inner_w)?;
        let unit = if p.unit.is_empty() {
            None
        } else if inline {
            Some((Para::new(&p.unit, small, inner_w)?, last_w + 8))
        } else {
            // No room after the name: the unit leads the note, on lines of its own.
            let mut lines = wrap(&p.unit, small, inner_w)?;
            lines.append(&mut note.lines);
            note.lines = lines;
            None
        };
        Ok(Self { name, unit, note })
    }

    fn height(&self) -> i32 {
        self.name.height() + 4 + self.note.height()
    }

    fn draw<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        at: (i32, i32),
    ) -> Result<(), PlotError> {
        self.name.draw(c, at)?;
        if let Some((unit, dx)) = &self.unit {
            // Bottoms aligned with the name's last line.
            let last = self.name.height() - unit.font.size.round() as i32;
            unit.draw(c, (at.0 + dx, at.1 + last))?;
        }
        self.note.draw(c, (at.0, at.1 + self.name.height() + 4))
    }
}

/// A panel's plot, below its heading (which ends at `head_bottom`).
fn draw_panel<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    p: &Panel,
    cell: Rect,
    head_bottom: i32,
) -> Result<(), PlotError> {
    let (lo, hi) = p.range();
    let ticks = panel_ticks(lo, hi);
    let tick_w = c.tick_width(&ticks)?;
    let frame = Rect {
        x0: cell.x0 + PAD + tick_w + 10,
        y0: head_bottom + 6 + (c.ts.tick * 0.6).round() as i32,
        x1: cell.x1 - PAD,
        y1: cell.y1 - 14,
    };
    if frame.height() < 10 || frame.width() < 10 {
        return Err(PlotError::Invalid {
            what: "image size".into(),
            reason: "too small for this many panels".into(),
        });
    }
    if p.values.is_empty() && p.target.is_none() {
        c.rect(
            (frame.x0, frame.y0),
            (frame.x1, frame.y1),
            GRID.stroke_width(1),
        )?;
        let f = Font::new(c.ts.small)
            .color(MUTED)
            .anchor(HPos::Center, VPos::Center);
        return c.text("no runs", (frame.mid_x(), frame.mid_y()), f);
    }
    let ys = Scale {
        lo,
        hi,
        log: false,
        p0: frame.y1,
        p1: frame.y0,
    };
    c.y_axis(frame, &ys, &ticks, true)?;
    c.line(
        vec![(frame.x0, frame.y1), (frame.x1, frame.y1)],
        INK.stroke_width(1),
    )?;
    draw_runs(c, p, frame, &ys)
}

/// The quartile box, the median, the target and the runs of a panel.
fn draw_runs<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    p: &Panel,
    frame: Rect,
    ys: &Scale,
) -> Result<(), PlotError> {
    let cx = frame.mid_x();
    let half_box = (frame.width() * 2 / 10).max(6);
    if let (Some(q1), Some(q3)) = (p.quantile(0.25), p.quantile(0.75)) {
        if p.values.len() >= 4 {
            let (a, b) = (ys.map(q3), ys.map(q1));
            c.rect(
                (cx - half_box, a),
                (cx + half_box, b.max(a + 1)),
                SHADE.filled(),
            )?;
            c.rect(
                (cx - half_box, a),
                (cx + half_box, b.max(a + 1)),
                MUTED.stroke_width(1),
            )?;
        }
    }
    if let Some(m) = p.quantile(0.5) {
        let y = ys.map(m);
        c.line(
            vec![(cx - half_box, y), (cx + half_box, y)],
            INK.stroke_width(2),
        )?;
    }
    if let Some(t) = p.target {
        let y = ys.map(t);
        c.dashed(
            vec![(frame.x0, y), (frame.x1, y)],
            6,
            4,
            series_color(3).stroke_width(2),
        )?;
    }
    let spread = f64::from(frame.width()) * 0.55;
    let color = series_color(0);
    for (i, v) in p.values.iter().enumerate() {
        let x = cx + (jitter(i) * spread).round() as i32;
        let y = ys.map(*v);
        c.circle((x, y), 5, color.mix(0.75).filled())?;
        c.circle((x, y), 5, INK.mix(0.8).stroke_width(1))?;
    }
    Ok(())
}

/// About four round ticks (panels are short).
fn panel_ticks(lo: f64, hi: f64) -> Ticks {
    let t = linear_ticks(lo, hi, 4);
    if t.values.len() > 6 {
        linear_ticks(lo, hi, 3)
    } else {
        t
    }
}
