//! One horizontal bar per vendor: the overall ratio to the baseline, grouped by tier.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::canvas::{Canvas, Font, Para, Rect, Scale, padded};
use crate::error::PlotError;
use crate::render::{Figure, check_log_estimate, non_empty, render};
use crate::style::{GRID, INK, MUTED, PAPER, SHADE, clean_label, log_ticks, series_color};
use crate::{Chart, Estimate, Measure, Size};

/// One vendor's overall result.
#[derive(Debug, Clone, PartialEq)]
pub struct OverallEntry {
    /// Vendor (row label).
    pub label: String,
    /// Ratio to the baseline (> 0) and its interval.
    pub estimate: Estimate,
    /// Tier the vendor belongs to; rows are grouped by tier, lowest first. `None`: the
    /// entry is not tiered (its submission failed validation, say); such rows come last,
    /// under [`OverallBars::untiered`].
    pub tier: Option<u32>,
    /// The figure printed right of the bar, e.g. formatted as the caller's tables format
    /// it; `None`: the value and interval with two decimals (`1.21  [1.15, 1.26]`).
    pub text: Option<String>,
}

impl OverallEntry {
    /// An entry in `tier`.
    pub fn new(label: impl Into<String>, estimate: Estimate, tier: u32) -> Self {
        Self {
            label: label.into(),
            estimate,
            tier: Some(tier),
            text: None,
        }
    }

    /// An entry in no tier.
    pub fn untiered(label: impl Into<String>, estimate: Estimate) -> Self {
        Self {
            tier: None,
            ..Self::new(label, estimate, 0)
        }
    }

    /// The same entry, printing `text` as its figure.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }
}

/// Input of [`overall_bars`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OverallBars {
    /// Chart title.
    pub title: String,
    /// Optional line under the title.
    pub subtitle: Option<String>,
    /// One entry per vendor, in any order. The bar colour follows this order (the same
    /// Okabe–Ito order as the series of [`crate::grid_bars`], so give both the same order).
    pub entries: Vec<OverallEntry>,
    /// Name of the baseline (ratio 1).
    pub baseline: String,
    /// The heading of the entries in no tier, when others are tiered; default "not
    /// tiered".
    pub untiered: Option<String>,
    /// What the ratios are ratios of: throughput (the default) or items per joule.
    pub measure: Measure,
    /// x-axis title; default "overall `<measure>` relative to `<baseline>` (log scale)".
    pub x_label: Option<String>,
    /// Image size; default 1200 × 700.
    pub size: Size,
}

/// Horizontal bars of each vendor's overall ratio to the baseline, with its interval.
///
/// Rows are sorted by tier (lowest first, entries in no tier last), then by ratio (highest
/// first); when there is more than one group each gets a heading ("tier N", or
/// [`OverallBars::untiered`]) and a rule above it. Bars start
/// at the baseline line (1) on a logarithmic axis; whiskers show the interval; the value
/// and interval (or each entry's `text`) are printed in a column right of the plot. Row
/// labels wrap at a third of the width and the axis title at the plot's: none is cut.
///
/// # Errors
/// [`PlotError`] for no entries, a value or bound that is NaN, infinite or not positive,
/// an interval that does not contain its value, or an unusable size.
pub fn overall_bars(spec: &OverallBars) -> Result<Chart, PlotError> {
    render(&Prepared::new(spec)?)
}

enum Row {
    /// A group's heading.
    Heading(String),
    Bar {
        label: String,
        estimate: Estimate,
        color: RGBColor,
        /// The figure printed right of the plot.
        text: String,
    },
}

struct Prepared {
    title: String,
    subtitle: Option<String>,
    rows: Vec<Row>,
    x_label: String,
    size: Size,
    range: (f64, f64),
}

impl Prepared {
    fn new(spec: &OverallBars) -> Result<Self, PlotError> {
        non_empty(&spec.entries, "the list of entries")?;
        let (mut lo, mut hi) = (1.0f64, 1.0f64);
        for e in &spec.entries {
            check_log_estimate(&e.estimate, &|| format!("entry `{}`", e.label))?;
            lo = lo.min(e.estimate.lo);
            hi = hi.max(e.estimate.hi);
        }
        let mut order: Vec<usize> = (0..spec.entries.len()).collect();
        order.sort_by(|&a, &b| {
            let (ea, eb) = (&spec.entries[a], &spec.entries[b]);
            group(ea)
                .cmp(&group(eb))
                .then(eb.estimate.value.total_cmp(&ea.estimate.value))
                .then(ea.label.cmp(&eb.label))
                .then(a.cmp(&b))
        });
        let groups = {
            let mut t: Vec<_> = spec.entries.iter().map(group).collect();
            t.sort_unstable();
            t.dedup();
            t.len()
        };
        let untiered = spec.untiered.as_deref().unwrap_or("not tiered");
        let mut rows = Vec::new();
        let mut current = None;
        for i in order {
            let e = &spec.entries[i];
            if groups > 1 && current != Some(group(e)) {
                rows.push(Row::Heading(match e.tier {
                    Some(t) => format!("tier {t}"),
                    None => clean_label(untiered),
                }));
                current = Some(group(e));
            }
            rows.push(Row::Bar {
                label: clean_label(&e.label),
                estimate: e.estimate,
                color: series_color(i),
                text: match &e.text {
                    Some(t) => clean_label(t),
                    None => value_text(&e.estimate),
                },
            });
        }
        let baseline = clean_label(&spec.baseline);
        Ok(Self {
            title: clean_label(&spec.title),
            subtitle: spec.subtitle.as_deref().map(clean_label),
            rows,
            x_label: match &spec.x_label {
                Some(l) => clean_label(l),
                None => format!(
                    "overall {} relative to {baseline} (log scale)",
                    spec.measure.words()
                ),
            },
            size: spec.size,
            range: padded(lo, hi, 0.08, true),
        })
    }
}

/// The group an entry is drawn in, in drawing order: its tier, then no tier.
fn group(e: &OverallEntry) -> (bool, u32) {
    (e.tier.is_none(), e.tier.unwrap_or(0))
}

fn value_text(e: &Estimate) -> String {
    if e.lo == e.hi {
        format!("{:.2}", e.value)
    } else {
        format!("{:.2}  [{:.2}, {:.2}]", e.value, e.lo, e.hi)
    }
}

/// Where the parts of the chart go.
struct Layout {
    frame: Rect,
    /// Row labels (wrapped at a third of the width, never cut), one per row.
    labels: Vec<Para>,
    x_title: Para,
}

impl Prepared {
    fn layout<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        top: i32,
    ) -> Result<Layout, PlotError> {
        let margin = (c.ts.title * 0.6).round() as i32;
        let row_font = Font::new(c.ts.tick).anchor(HPos::Right, VPos::Center);
        let head_font = Font::new(c.ts.tick).bold().anchor(HPos::Left, VPos::Center);
        let (mut label_w, mut value_w) = (0, 0);
        let mut labels = Vec::with_capacity(self.rows.len());
        for r in &self.rows {
            let p = match r {
                Row::Heading(h) => Para::new(h, head_font, c.width / 3)?,
                Row::Bar { label, text, .. } => {
                    value_w = value_w.max(c.measure(text, row_font)?.0);
                    Para::new(label, row_font, c.width / 3)?
                }
            };
            label_w = label_w.max(p.width()?);
            labels.push(p);
        }
        let x0 = margin + label_w + 14;
        let x1 = c.width - margin - value_w - 16;
        let f = Font::new(c.ts.label).anchor(HPos::Center, VPos::Bottom);
        let x_title = Para::shrunk(&self.x_label, f, (x1 - x0).max(60), c.ts.small)?;
        let tick_h = c.ts.tick.round() as i32;
        let frame = Rect {
            x0,
            y0: top,
            x1,
            y1: c.height - margin - x_title.height() - tick_h - 24,
        };
        if frame.width() < 60 || frame.height() < 20 {
            return Err(PlotError::Invalid {
                what: format!("image size {}×{}", self.size.width, self.size.height),
                reason: "too small for the labels of this chart".into(),
            });
        }
        Ok(Layout {
            frame,
            labels,
            x_title,
        })
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
        let l = self.layout(&c, top)?;
        let frame = l.frame;
        let (lo, hi) = self.range;
        let xs = Scale {
            lo,
            hi,
            log: true,
            p0: frame.x0,
            p1: frame.x1,
        };
        let row_h = f64::from(frame.height()) / self.rows.len() as f64;
        let row_y = |i: usize| f64::from(frame.y0) + row_h * i as f64;
        let thick = (row_h * 0.6).clamp(2.0, 40.0);

        // Shade every other bar row, then the grid and the axis.
        let mut bar_index = 0;
        for (i, r) in self.rows.iter().enumerate() {
            if let Row::Bar { .. } = r {
                if bar_index % 2 == 1 {
                    let (a, b) = (row_y(i).round() as i32, row_y(i + 1).round() as i32);
                    c.rect((frame.x0, a), (frame.x1, b), SHADE.filled())?;
                }
                bar_index += 1;
            }
        }
        c.x_axis(frame, &xs, &log_ticks(lo, hi), true)?;
        let x_one = xs.map(1.0);

        for (i, (r, label)) in self.rows.iter().zip(&l.labels).enumerate() {
            let cy = (row_y(i) + row_h / 2.0).round() as i32;
            // Wrapped labels: centred on the row as a block.
            let label_y = cy - (label.height() - label.font.size.round() as i32) / 2;
            match r {
                Row::Heading(_) => {
                    if i > 0 {
                        let y = row_y(i).round() as i32;
                        c.line(
                            vec![(margin, y), (c.width - margin, y)],
                            MUTED.stroke_width(1),
                        )?;
                    }
                    label.draw(&c, (margin, label_y))?;
                }
                Row::Bar {
                    estimate,
                    color,
                    text,
                    ..
                } => {
                    label.draw(&c, (frame.x0 - 10, label_y))?;
                    let half = (thick / 2.0).round() as i32;
                    draw_bar(&c, &xs, cy, half, estimate, *color)?;
                    let f = Font::new(c.ts.tick).anchor(HPos::Left, VPos::Center);
                    c.text(text, (frame.x1 + 16, cy), f)?;
                }
            }
        }
        c.line(
            vec![(x_one, frame.y0), (x_one, frame.y1)],
            INK.stroke_width(2),
        )?;
        c.line(
            vec![(frame.x1, frame.y0), (frame.x1, frame.y1)],
            GRID.stroke_width(1),
        )?;
        let tick_h = c.ts.tick.round() as i32;
        let y = frame.y1 + tick_h + 24 + l.x_title.height();
        let bottom_first = y - (l.x_title.height() - l.x_title.font.size.round() as i32);
        l.x_title.draw(&c, (frame.mid_x(), bottom_first))
    }
}

/// One bar from the baseline (1) to the value, its whisker and its point.
fn draw_bar<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    xs: &Scale,
    cy: i32,
    half: i32,
    estimate: &Estimate,
    color: RGBColor,
) -> Result<(), PlotError> {
    let x_one = xs.map(1.0);
    let xv = xs.map(estimate.value);
    let (mut a, mut b) = (xv.min(x_one), xv.max(x_one));
    if b - a < 2 {
        a = xv - 1;
        b = xv + 1;
    }
    c.rect((a, cy - half), (b, cy + half), color.filled())?;
    c.rect(
        (a, cy - half),
        (b, cy + half),
        INK.mix(0.55).stroke_width(1),
    )?;
    let (l, h) = (xs.map(estimate.lo), xs.map(estimate.hi));
    let cap = (half / 2).max(2);
    let style = INK.stroke_width(2);
    if l != h {
        c.line(vec![(l, cy), (h, cy)], style)?;
    }
    c.line(vec![(l, cy - cap), (l, cy + cap)], style)?;
    c.line(vec![(h, cy - cap), (h, cy + cap)], style)?;
    // The point over the bar, so that a ratio of 1 still shows.
    let r = (half / 2).clamp(3, 7);
    c.circle((xv, cy), r, color.filled())?;
    c.circle((xv, cy), r, INK.stroke_width(1))
}
