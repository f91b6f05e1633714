//! One bench's loss curves over the validator's band.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::canvas::{Canvas, Font, Key, Legend, Rect, Scale, padded};
use crate::error::PlotError;
use crate::render::{Figure, finite, non_empty, render, same_len};
use crate::style::{MUTED, PAPER, clean_label, linear_ticks, series_color};
use crate::{Chart, Size};

/// One logged loss curve (one run on one GPU).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LossLine {
    /// Legend label. Lines with the same label share a colour and one legend entry
    /// (e.g. label by GPU and pass every run of it).
    pub label: String,
    /// Batch losses in logged order; the x position is the index.
    pub values: Vec<f64>,
}

impl LossLine {
    /// A line.
    pub fn new(label: impl Into<String>, values: Vec<f64>) -> Self {
        Self {
            label: label.into(),
            values,
        }
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
    /// Image size; default 1200 × 700.
    pub size: Size,
}

/// The loss curves of one bench: thin semi-transparent lines, one per run/GPU, over the
/// shaded band. One chart per bench; callers lay several out (e.g. in an HTML grid).
///
/// Where lines overlap the colour darkens, which shows where most runs are. The legend
/// (one entry per distinct label, at most 14 listed) stands right of the plot.
///
/// # Errors
/// [`PlotError`] for no lines (or only empty ones and no band), a NaN or infinite loss or
/// band edge, band edges of different lengths or crossed (`lo > hi`), or an unusable size.
pub fn loss_curves(spec: &LossCurves) -> Result<Chart, PlotError> {
    render(&Prepared::new(spec)?)
}

struct Prepared {
    title: String,
    subtitle: Option<String>,
    /// (colour index, values)
    lines: Vec<(usize, Vec<f64>)>,
    labels: Vec<String>,
    band: Option<(Vec<f64>, Vec<f64>, String)>,
    x_label: String,
    y_label: String,
    size: Size,
    x_max: f64,
    range: (f64, f64),
}

impl Prepared {
    fn new(spec: &LossCurves) -> Result<Self, PlotError> {
        non_empty(&spec.lines, "the list of loss curves")?;
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut n_max = 0;
        let mut labels: Vec<String> = Vec::new();
        let mut lines = Vec::with_capacity(spec.lines.len());
        for (k, l) in spec.lines.iter().enumerate() {
            for (i, v) in l.values.iter().enumerate() {
                finite(*v, || {
                    format!("loss curve #{} (`{}`), step {}", k + 1, l.label, i)
                })?;
                lo = lo.min(*v);
                hi = hi.max(*v);
            }
            n_max = n_max.max(l.values.len());
            let label = clean_label(&l.label);
            let idx = match labels.iter().position(|x| *x == label) {
                Some(i) => i,
                None => {
                    labels.push(label);
                    labels.len() - 1
                }
            };
            lines.push((idx, l.values.clone()));
        }
        let band = match &spec.band {
            None => None,
            Some(b) => {
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
                    lo = lo.min(*l);
                    hi = hi.max(*h);
                }
                n_max = n_max.max(b.lo.len());
                let label = b.label.as_deref().unwrap_or("validator band");
                Some((b.lo.clone(), b.hi.clone(), clean_label(label)))
            }
        };
        if n_max == 0 {
            return Err(PlotError::Empty {
                what: "every loss curve".into(),
            });
        }
        Ok(Self {
            title: clean_label(&spec.title),
            subtitle: spec.subtitle.as_deref().map(clean_label),
            lines,
            labels,
            band,
            x_label: clean_label(spec.x_label.as_deref().unwrap_or("step (last 100 logged)")),
            y_label: clean_label(spec.y_label.as_deref().unwrap_or("batch loss")),
            size: spec.size,
            x_max: (n_max.max(2) - 1) as f64,
            range: padded(lo, hi, 0.05, false),
        })
    }

    fn legend_entries(&self) -> Vec<(Key, String)> {
        const MAX: usize = 14;
        let mut entries: Vec<(Key, String)> = self
            .labels
            .iter()
            .take(MAX)
            .enumerate()
            .map(|(i, l)| (Key::Line(series_color(i)), l.clone()))
            .collect();
        if self.labels.len() > MAX {
            entries.push((
                Key::Line(MUTED),
                format!("… {} more", self.labels.len() - MAX),
            ));
        }
        if let Some((_, _, label)) = &self.band {
            entries.push((Key::Band(MUTED), label.clone()));
        }
        entries
    }
}

impl Figure for Prepared {
    fn size(&self) -> Size {
        self.size
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let c = Canvas::new(root, self.size.width, self.size.height);
        c.fill(PAPER)?;
        let margin = (c.ts.title * 0.6).round() as i32;
        let top = c.title(&self.title, self.subtitle.as_deref())?;
        let legend = Legend::layout(&c, self.legend_entries(), None)?;
        let legend_w = legend.width;

        let (lo, hi) = self.range;
        let yt = linear_ticks(lo, hi, 6);
        let xt = linear_ticks(0.0, self.x_max, 8);
        let label_font = Font::new(c.ts.label);
        let (_, label_h) = c.measure("Ag", label_font)?;
        let (_, tick_h) = c.measure("0", Font::new(c.ts.tick))?;
        let frame = Rect {
            x0: margin + label_h + 12 + c.tick_width(&yt)? + 10,
            y0: top,
            x1: c.width - 3 * margin - legend_w,
            y1: c.height - margin - label_h - tick_h - 24,
        };
        if frame.width() < 40 || frame.height() < 40 {
            return Err(PlotError::Invalid {
                what: format!("image size {}×{}", self.size.width, self.size.height),
                reason: "too small for the labels and legend of this chart".into(),
            });
        }
        let xs = Scale {
            lo: 0.0,
            hi: self.x_max,
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
        c.y_axis(frame, &ys, &yt, true)?;
        c.x_axis(frame, &xs, &xt, true)?;

        if let Some((blo, bhi, _)) = &self.band {
            let fill = MUTED.mix(0.22);
            if blo.len() == 1 {
                let (a, b) = (ys.map(bhi[0]), ys.map(blo[0]));
                c.rect(
                    (xs.map(0.0) - 3, a),
                    (xs.map(0.0) + 3, b.max(a + 1)),
                    fill.filled(),
                )?;
            } else {
                let upper = bhi
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (xs.map(i as f64), ys.map(*v)));
                let lower = blo
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (xs.map(i as f64), ys.map(*v)));
                let mut poly: Vec<(i32, i32)> = upper.clone().collect();
                poly.extend(lower.clone().rev());
                c.polygon(poly, fill.filled())?;
                c.line(upper.collect(), MUTED.mix(0.6).stroke_width(1))?;
                c.line(lower.collect(), MUTED.mix(0.6).stroke_width(1))?;
            }
        }
        for (idx, values) in &self.lines {
            let color = series_color(*idx).mix(0.6);
            let pts: Vec<(i32, i32)> = values
                .iter()
                .enumerate()
                .map(|(i, v)| (xs.map(i as f64), ys.map(*v)))
                .collect();
            match pts.as_slice() {
                [] => {}
                [p] => c.circle(*p, 3, color.filled())?,
                _ => c.line(pts, color.stroke_width(1))?,
            }
        }

        // Axis titles.
        let f = label_font.anchor(HPos::Center, VPos::Bottom);
        let f = c.shrink_to(&self.x_label, f, frame.width(), c.ts.small)?;
        let shown = c.fit(&self.x_label, f, frame.width())?;
        c.text(&shown, (frame.mid_x(), c.height - margin), f)?;
        let f = label_font.vertical().anchor(HPos::Center, VPos::Top);
        let f = c.shrink_to(&self.y_label, f, frame.height(), c.ts.small)?;
        let shown = c.fit(&self.y_label, f, frame.height())?;
        c.text(&shown, (margin, frame.mid_y()), f)?;

        legend.draw(&c, (frame.x1 + 2 * margin, frame.y0))
    }
}
