//! One bench's loss curves over the validator's band.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::axes::{Axes, Layout};
use crate::canvas::{Canvas, Key, Scale, TitleBlock, padded};
use crate::error::PlotError;
use crate::render::{Figure, check_size, finite, non_empty, render, same_len};
use crate::style::{
    LINE_STYLES, LineStyle, MUTED, PAPER, Ticks, TypeScale, clean_label, ensure_fonts, linear_ticks,
};
use crate::{Chart, Size};

/// One logged loss curve (one run on one GPU).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LossLine {
    /// Legend label. Lines with the same label share a style and one legend entry
    /// (e.g. label by GPU and pass every run of it).
    pub label: String,
    /// Batch losses in logged order; the x position is the index.
    pub values: Vec<f64>,
    /// Lines of one colour group share a colour (e.g. one run); `None`: the label is
    /// the group.
    pub color_group: Option<String>,
    /// Lines of one dash group share a dash pattern (e.g. one GPU); `None`: one group.
    pub dash_group: Option<String>,
}

impl LossLine {
    /// A line.
    pub fn new(label: impl Into<String>, values: Vec<f64>) -> Self {
        Self {
            label: label.into(),
            values,
            ..Self::default()
        }
    }

    /// The same line, coloured by `color` and dashed by `dash` (e.g. run and GPU).
    pub fn grouped(mut self, color: impl Into<String>, dash: impl Into<String>) -> Self {
        self.color_group = Some(color.into());
        self.dash_group = Some(dash.into());
        self
    }
}

/// The validator's acceptance band: per logged step, its lower and upper loss.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Band {
    /// Lower edge per step.
    pub lo: Vec<f64>,
    /// Upper edge per step (same length as `lo`, `lo[i] <= hi[i]`).
    pub hi: Vec<f64>,
    /// Legend label; `None`: "validator band".
    pub label: Option<String>,
}

/// Input of [`loss_curves`]: one bench.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LossCurves {
    /// Chart title (usually the bench name).
    pub title: String,
    /// Optional line under the title.
    pub subtitle: Option<String>,
    /// The curves.
    pub lines: Vec<LossLine>,
    /// The validator's band, shaded behind the curves.
    pub band: Option<Band>,
    /// x-axis title; default "step (last 100 logged)".
    pub x_label: Option<String>,
    /// y-axis title; default "batch loss".
    pub y_label: Option<String>,
    /// Image size; default 1200 × 700. The image grows taller when the legend goes
    /// below the plot.
    pub size: Size,
}

/// The loss curves of one bench: thin semi-transparent lines, one per run/GPU, over the
/// shaded band. One chart per bench; callers lay several out (e.g. in an HTML grid).
///
/// Each distinct label gets its own colour and dash pattern ([`loss_styles`]), distinct
/// for up to 32 labels. The legend lists every label in full: right of the plot when it
/// fits there, else in rows below it, the image growing taller by the legend's height.
///
/// # Errors
/// [`PlotError`] for no lines (or only empty ones and no band), a NaN or infinite loss or
/// band edge, band edges of different lengths or crossed (`lo > hi`), or an unusable size.
pub fn loss_curves(spec: &LossCurves) -> Result<Chart, PlotError> {
    render(&Prepared::new(spec)?)
}

/// The style of each line of `lines`, as [`loss_curves`] draws them.
///
/// Lines of one colour group share a colour and lines of one dash group a pattern; where
/// that would give two labels the same style (more than 8 colour groups and too many
/// dash groups), every label gets the next of the 32 distinct styles in turn instead.
/// Deterministic: it depends on the labels and groups in order, nothing else.
pub fn loss_styles(lines: &[LossLine]) -> Vec<LineStyle> {
    // Each distinct label with the groups of its first line.
    let mut firsts: Vec<(String, String, String)> = Vec::new();
    for l in lines {
        let label = clean_label(&l.label);
        if !firsts.iter().any(|f| f.0 == label) {
            let color = l.color_group.clone().unwrap_or_else(|| label.clone());
            firsts.push((label, color, l.dash_group.clone().unwrap_or_default()));
        }
    }
    let colors = distinct(firsts.iter().map(|f| &f.1));
    let dashes = distinct(firsts.iter().map(|f| &f.2));
    let grouped: Vec<LineStyle> = firsts
        .iter()
        .map(|(_, color, dash)| {
            let (c, d) = (index_of(&colors, &color), index_of(&dashes, &dash));
            // Past eight colour groups, the next patterns take over.
            LineStyle::of(c, d + dashes.len() * (c / 8))
        })
        .collect();
    let clash = distinct(grouped.iter()).len() < grouped.len();
    let per_label: Vec<LineStyle> = if clash && firsts.len() <= LINE_STYLES {
        (0..firsts.len()).map(LineStyle::nth).collect()
    } else {
        grouped
    };
    lines
        .iter()
        .map(|l| {
            let label = clean_label(&l.label);
            per_label[firsts.iter().position(|f| f.0 == label).unwrap_or(0)]
        })
        .collect()
}

fn distinct<T: PartialEq>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

fn index_of<T: PartialEq>(items: &[T], item: &T) -> usize {
    items.iter().position(|x| x == item).unwrap_or(0)
}

/// The checked input: curves with their styles, the band, the axis range.
struct Data {
    /// (style, values) per line.
    lines: Vec<(LineStyle, Vec<f64>)>,
    /// Distinct labels with their styles, in order.
    labels: Vec<(String, LineStyle)>,
    band: Option<Checked>,
    x_max: f64,
    range: (f64, f64),
}

impl Data {
    fn new(spec: &LossCurves) -> Result<Self, PlotError> {
        non_empty(&spec.lines, "the list of loss curves")?;
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut n_max = 0;
        for (k, l) in spec.lines.iter().enumerate() {
            for (i, v) in l.values.iter().enumerate() {
                finite(*v, || {
                    format!("loss curve #{} (`{}`), step {}", k + 1, l.label, i)
                })?;
                lo = lo.min(*v);
                hi = hi.max(*v);
            }
            n_max = n_max.max(l.values.len());
        }
        let band = check_band(spec.band.as_ref(), &mut lo, &mut hi)?;
        if let Some((b, _, _)) = &band {
            n_max = n_max.max(b.len());
        }
        if n_max == 0 {
            return Err(PlotError::Empty {
                what: "every loss curve".into(),
            });
        }
        let styles = loss_styles(&spec.lines);
        let lines = spec
            .lines
            .iter()
            .zip(&styles)
            .map(|(l, s)| (*s, l.values.clone()))
            .collect();
        let labels = distinct(
            spec.lines
                .iter()
                .zip(&styles)
                .map(|(l, s)| (clean_label(&l.label), *s)),
        );
        Ok(Self {
            lines,
            labels,
            band,
            x_max: (n_max.max(2) - 1) as f64,
            range: padded(lo, hi, 0.05, false),
        })
    }

    /// Every label (up to the 32 distinct styles), then the band.
    fn legend_entries(&self) -> Vec<(Key, String)> {
        let mut entries: Vec<(Key, String)> = self
            .labels
            .iter()
            .take(LINE_STYLES)
            .map(|(l, s)| (Key::Styled(*s), l.clone()))
            .collect();
        if self.labels.len() > LINE_STYLES {
            let more = self.labels.len() - LINE_STYLES;
            entries.push((
                Key::Line(MUTED),
                format!("and {more} more, in the styles above again"),
            ));
        }
        if let Some((_, _, label)) = &self.band {
            entries.push((Key::Band(MUTED), label.clone()));
        }
        entries
    }
}

/// A checked band: lower and upper edges, legend label.
type Checked = (Vec<f64>, Vec<f64>, String);

/// Checks the band and widens `lo..hi` to it.
fn check_band(
    band: Option<&Band>,
    lo: &mut f64,
    hi: &mut f64,
) -> Result<Option<Checked>, PlotError> {
    let Some(b) = band else {
        return Ok(None);
    };
    same_len(&b.hi, b.lo.len(), || {
        "band upper edge (as many as the lower)".into()
    })?;
    for (i, (l, h)) in b.lo.iter().zip(&b.hi).enumerate() {
        finite(*l, || format!("band lower edge, step {i}"))?;
        finite(*h, || format!("band upper edge, step {i}"))?;
        if l > h {
            return Err(PlotError::Invalid {
                what: format!("band, step {i}"),
                reason: format!("lower edge {l} is above upper edge {h}"),
            });
        }
        *lo = lo.min(*l);
        *hi = hi.max(*h);
    }
    let label = b.label.as_deref().unwrap_or("validator band");
    Ok(Some((b.lo.clone(), b.hi.clone(), clean_label(label))))
}

/// Where everything goes, worked out before drawing (the legend sets the image height).
struct Prepared {
    data: Data,
    title: TitleBlock,
    layout: Layout,
    x_ticks: Ticks,
    y_ticks: Ticks,
}

impl Prepared {
    fn new(spec: &LossCurves) -> Result<Self, PlotError> {
        let data = Data::new(spec)?;
        // Both before the layout, which measures text in the requested size.
        check_size(spec.size)?;
        ensure_fonts()?;
        let Size { width, height } = spec.size;
        let ts = TypeScale::for_width(width);
        let (w, h) = (width as i32, height as i32);
        let margin = (ts.title * 0.6).round() as i32;
        let title = TitleBlock::new(
            ts,
            w,
            &clean_label(&spec.title),
            spec.subtitle.as_deref().map(clean_label).as_deref(),
        )?;
        let x_label = clean_label(spec.x_label.as_deref().unwrap_or("step (last 100 logged)"));
        let y_label = clean_label(spec.y_label.as_deref().unwrap_or("batch loss"));
        let (lo, hi) = data.range;
        let y_ticks = linear_ticks(lo, hi, 6);
        let x_ticks = linear_ticks(0.0, data.x_max, 8);
        let tick_w = crate::canvas::ticks_width(&y_ticks, ts)?;
        let axes = Axes {
            ts,
            w,
            h,
            margin,
            top: title.bottom,
            tick_w,
        };

        let layout = axes.lay_out(
            || data.legend_entries(),
            (&x_label, &y_label),
            spec.size,
            "labels and legend",
        )?;
        Ok(Self {
            data,
            title,
            layout,
            x_ticks,
            y_ticks,
        })
    }
}

impl Figure for Prepared {
    fn size(&self) -> Size {
        self.layout.size
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let c = Canvas::new(root, self.layout.size.width, self.layout.size.height);
        c.fill(PAPER)?;
        self.title.draw(&c)?;
        let frame = self.layout.frame;
        let (lo, hi) = self.data.range;
        let xs = Scale {
            lo: 0.0,
            hi: self.data.x_max,
            log: false,
            p0: frame.x0,
            p1: frame.x1,
        };
        let ys = Scale {
            lo,
            hi,
            log: false,
            p0: frame.y1,
            p1: frame.y0,
        };
        c.y_axis(frame, &ys, &self.y_ticks, true)?;
        c.x_axis(frame, &xs, &self.x_ticks, true)?;
        if let Some((blo, bhi, _)) = &self.data.band {
            draw_band(&c, &xs, &ys, blo, bhi)?;
        }
        for (style, values) in &self.data.lines {
            let pts: Vec<(i32, i32)> = values
                .iter()
                .enumerate()
                .map(|(i, v)| (xs.map(i as f64), ys.map(*v)))
                .collect();
            match pts.as_slice() {
                [] => {}
                [p] => c.circle(*p, 3, style.rgb().mix(0.7).filled())?,
                _ => c.styled(pts, *style, 1, 0.7)?,
            }
        }
        self.draw_titles_and_legend(&c)
    }
}

impl Prepared {
    fn draw_titles_and_legend<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
    ) -> Result<(), PlotError> {
        let frame = self.layout.frame;
        let margin = (c.ts.title * 0.6).round() as i32;
        let tick_h = c.ts.tick.round() as i32;
        self.layout
            .x_title
            .draw(c, (frame.mid_x(), frame.y1 + tick_h + 20))?;
        let y = frame.mid_y();
        self.layout.y_title.draw(c, (margin, y))?;
        if self.layout.legend_below {
            let y = self.layout.size.height as i32 - margin - self.layout.legend.height;
            self.layout
                .legend
                .draw(c, ((c.width - self.layout.legend.width) / 2, y))
        } else {
            self.layout
                .legend
                .draw(c, (frame.x1 + 2 * margin, frame.y0))
        }
    }
}

fn draw_band<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    xs: &Scale,
    ys: &Scale,
    blo: &[f64],
    bhi: &[f64],
) -> Result<(), PlotError> {
    let fill = MUTED.mix(0.22);
    if blo.len() == 1 {
        let (a, b) = (ys.map(bhi[0]), ys.map(blo[0]));
        let x = xs.map(0.0);
        return c.rect((x - 3, a), (x + 3, b.max(a + 1)), fill.filled());
    }
    let edge = |vals: &[f64]| -> Vec<(i32, i32)> {
        vals.iter()
            .enumerate()
            .map(|(i, v)| (xs.map(i as f64), ys.map(*v)))
            .collect()
    };
    let (upper, lower) = (edge(bhi), edge(blo));
    let mut poly = upper.clone();
    poly.extend(lower.iter().rev());
    c.polygon(poly, fill.filled())?;
    c.line(upper, MUTED.mix(0.6).stroke_width(1))?;
    c.line(lower, MUTED.mix(0.6).stroke_width(1))
}
