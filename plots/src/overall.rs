//! One horizontal bar per vendor: the overall ratio to the baseline, grouped by tier.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::canvas::{Canvas, Font, Rect, Scale, padded};
use crate::error::PlotError;
use crate::render::{Figure, check_log_estimate, non_empty, render};
use crate::style::{GRID, INK, MUTED, PAPER, SHADE, clean_label, log_ticks, series_color};
use crate::{Chart, Estimate, Size};

/// One vendor's overall result.
#[derive(Debug, Clone, PartialEq)]
pub struct OverallEntry {
    /// Vendor (row label).
    pub label: String,
    /// Ratio to the baseline (> 0) and its interval.
    pub estimate: Estimate,
    /// Tier the vendor belongs to; rows are grouped by tier, lowest first.
    pub tier: u32,
}

impl OverallEntry {
    /// An entry.
    pub fn new(label: impl Into<String>, estimate: Estimate, tier: u32) -> Self {
        Self {
            label: label.into(),
            estimate,
            tier,
        }
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
    /// x-axis title; default "overall throughput relative to `<baseline>` (log scale)".
    pub x_label: Option<String>,
    /// Image size; default 1200 × 700.
    pub size: Size,
}

/// Horizontal bars of each vendor's overall ratio to the baseline, with its interval.
///
/// Rows are sorted by tier (lowest first), then by ratio (highest first); when there is
/// more than one tier each group gets a "tier N" heading and a rule above it. Bars start
/// at the baseline line (1) on a logarithmic axis; whiskers show the interval; the value
/// and interval are printed in a column right of the plot.
///
/// # Errors
/// [`PlotError`] for no entries, a value or bound that is NaN, infinite or not positive,
/// an interval that does not contain its value, or an unusable size.
pub fn overall_bars(spec: &OverallBars) -> Result<Chart, PlotError> {
    render(&Prepared::new(spec)?)
}

enum Row {
    Tier(u32),
    Bar {
        label: String,
        estimate: Estimate,
        color: RGBColor,
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
            ea.tier
                .cmp(&eb.tier)
                .then(eb.estimate.value.total_cmp(&ea.estimate.value))
                .then(ea.label.cmp(&eb.label))
                .then(a.cmp(&b))
        });
        let tiers = {
            let mut t: Vec<u32> = spec.entries.iter().map(|e| e.tier).collect();
            t.sort_unstable();
            t.dedup();
            t.len()
        };
        let mut rows = Vec::new();
        let mut current = None;
        for i in order {
            let e = &spec.entries[i];
            if tiers > 1 && current != Some(e.tier) {
                rows.push(Row::Tier(e.tier));
                current = Some(e.tier);
            }
            rows.push(Row::Bar {
                label: clean_label(&e.label),
                estimate: e.estimate,
                color: series_color(i),
            });
        }
        let baseline = clean_label(&spec.baseline);
        Ok(Self {
            title: clean_label(&spec.title),
            subtitle: spec.subtitle.as_deref().map(clean_label),
            rows,
            x_label: match &spec.x_label {
                Some(l) => clean_label(l),
                None => format!("overall throughput relative to {baseline} (log scale)"),
            },
            size: spec.size,
            range: padded(lo, hi, 0.08, true),
        })
    }
}

fn value_text(e: &Estimate) -> String {
    if e.lo == e.hi {
        format!("{:.2}", e.value)
    } else {
        format!("{:.2}  [{:.2}, {:.2}]", e.value, e.lo, e.hi)
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

        let row_font = Font::new(c.ts.tick);
        let head_font = Font::new(c.ts.tick).bold();
        let mut label_w = 0;
        let mut value_w = 0;
        for r in &self.rows {
            match r {
                Row::Tier(t) => {
                    label_w = label_w.max(c.measure(&format!("tier {t}"), head_font)?.0)
                }
                Row::Bar {
                    label, estimate, ..
                } => {
                    label_w = label_w.max(c.measure(label, row_font)?.0);
                    value_w = value_w.max(c.measure(&value_text(estimate), row_font)?.0);
                }
            }
        }
        // Labels may take at most a third of the width; longer ones are shortened.
        let label_w = label_w.min(c.width / 3);
        let (lo, hi) = self.range;
        let ticks = log_ticks(lo, hi);
        let label_font = Font::new(c.ts.label);
        let (_, tick_h) = c.measure("0", Font::new(c.ts.tick))?;
        let (_, xlabel_h) = c.measure(&self.x_label, label_font)?;
        let frame = Rect {
            x0: margin + label_w + 14,
            y0: top,
            x1: c.width - margin - value_w - 16,
            y1: c.height - margin - xlabel_h - tick_h - 24,
        };
        if frame.width() < 60 || frame.height() < 20 {
            return Err(PlotError::Invalid {
                what: format!("image size {}×{}", self.size.width, self.size.height),
                reason: "too small for the labels of this chart".into(),
            });
        }
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
        c.x_axis(frame, &xs, &ticks, true)?;
        let x_one = xs.map(1.0);

        for (i, r) in self.rows.iter().enumerate() {
            let cy = (row_y(i) + row_h / 2.0).round() as i32;
            match r {
                Row::Tier(t) => {
                    if i > 0 {
                        let y = row_y(i).round() as i32;
                        c.line(
                            vec![(margin, y), (c.width - margin, y)],
                            MUTED.stroke_width(1),
                        )?;
                    }
                    let f = head_font.anchor(HPos::Left, VPos::Center);
                    c.text(&format!("tier {t}"), (margin, cy), f)?;
                }
                Row::Bar {
                    label,
                    estimate,
                    color,
                } => {
                    let f = row_font.anchor(HPos::Right, VPos::Center);
                    let shown = c.fit(label, f, label_w)?;
                    c.text(&shown, (frame.x0 - 10, cy), f)?;
                    let half = (thick / 2.0).round() as i32;
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
                    c.circle((xv, cy), r, INK.stroke_width(1))?;
                    let f = row_font.anchor(HPos::Left, VPos::Center);
                    c.text(&value_text(estimate), (frame.x1 + 16, cy), f)?;
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

        let f = label_font.anchor(HPos::Center, VPos::Bottom);
        let f = c.shrink_to(&self.x_label, f, frame.width(), c.ts.small)?;
        let shown = c.fit(&self.x_label, f, frame.width())?;
        c.text(&shown, (frame.mid_x(), c.height - margin), f)
    }
}
