//! Grouped bars: one group per bench, one bar per vendor, ratio to the baseline.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::canvas::{Canvas, Font, Key, Legend, Rect, Scale, padded};
use crate::error::PlotError;
use crate::render::{Figure, check_log_estimate, non_empty, render, same_len};
use crate::style::{INK, MUTED, PAPER, SHADE, clean_label, log_ticks, series_color};
use crate::{Chart, Series, Size};

/// Input of [`grid_bars`].
///
/// ```
/// use mlbench_plots::{Estimate, GridBars, Series, grid_bars};
/// let spec = GridBars {
///     title: "Throughput by bench".into(),
///     benches: vec!["vae".into(), "ppo".into()],
///     series: vec![Series::new("AMD MI50", vec![Some(Estimate::new(1.1, 1.0, 1.2)), None])],
///     baseline: "NVIDIA V100".into(),
///     ..GridBars::default()
/// };
/// let chart = grid_bars(&spec)?;
/// assert!(chart.svg.contains("vae"));
/// # Ok::<(), mlbench_plots::PlotError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GridBars {
    /// Chart title.
    pub title: String,
    /// Optional line under the title (e.g. "bars: median ratio · whiskers: 95 % CI").
    pub subtitle: Option<String>,
    /// The x categories, in order.
    pub benches: Vec<String>,
    /// One series per vendor; each has one value per bench (`None`: no result).
    /// Values are ratios to the baseline, > 0.
    pub series: Vec<Series>,
    /// Name of the baseline the ratios are relative to.
    pub baseline: String,
    /// y-axis title; default "throughput relative to `<baseline>` (log scale)".
    pub y_label: Option<String>,
    /// Image size; default 1200 × 700.
    pub size: Size,
}

/// Grouped bars of each vendor's ratio to the baseline, per bench.
///
/// Bars start at the baseline line (ratio 1) and go up or down to the ratio, on a
/// logarithmic axis, so that ×2 and ×½ have the same length; whiskers show the interval.
/// A missing value is drawn as an × on the baseline line (with a legend entry), never as a
/// bar. The legend goes right of the plot, or below it when the labels are too long.
/// Bench names are set horizontally when they fit under their group, vertically otherwise
/// (shortened in the middle with "…" only if longer than 40 % of the image height).
///
/// # Errors
/// [`PlotError`] for no benches or no series, a series of the wrong length, a value or
/// bound that is NaN, infinite or not positive, an interval that does not contain its
/// value, or an unusable size.
pub fn grid_bars(spec: &GridBars) -> Result<Chart, PlotError> {
    render(&Prepared::new(spec)?)
}

struct Prepared {
    title: String,
    subtitle: Option<String>,
    benches: Vec<String>,
    series: Vec<Series>,
    baseline: String,
    y_label: String,
    size: Size,
    any_missing: bool,
    range: (f64, f64),
}

impl Prepared {
    fn new(spec: &GridBars) -> Result<Self, PlotError> {
        non_empty(&spec.benches, "the list of benches")?;
        non_empty(&spec.series, "the list of series")?;
        let (mut lo, mut hi) = (1.0f64, 1.0f64);
        let mut any_missing = false;
        for s in &spec.series {
            same_len(&s.values, spec.benches.len(), || {
                format!("series `{}` (one value per bench)", s.label)
            })?;
            for (bench, v) in spec.benches.iter().zip(&s.values) {
                match v {
                    None => any_missing = true,
                    Some(e) => {
                        check_log_estimate(e, &|| {
                            format!("series `{}`, bench `{}`", s.label, bench)
                        })?;
                        lo = lo.min(e.lo);
                        hi = hi.max(e.hi);
                    }
                }
            }
        }
        let baseline = clean_label(&spec.baseline);
        let y_label = match &spec.y_label {
            Some(l) => clean_label(l),
            None => format!("throughput relative to {baseline} (log scale)"),
        };
        Ok(Self {
            title: clean_label(&spec.title),
            subtitle: spec.subtitle.as_deref().map(clean_label),
            benches: spec.benches.iter().map(|b| clean_label(b)).collect(),
            series: spec
                .series
                .iter()
                .map(|s| Series::new(clean_label(&s.label), s.values.clone()))
                .collect(),
            baseline,
            y_label,
            size: spec.size,
            any_missing,
            range: padded(lo, hi, 0.06, true),
        })
    }

    fn legend_entries(&self) -> Vec<(Key, String)> {
        let mut entries: Vec<(Key, String)> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| (Key::Box(series_color(i)), s.label.clone()))
            .collect();
        entries.push((Key::Line(INK), format!("{} = 1", self.baseline)));
        if self.any_missing {
            entries.push((Key::Cross(MUTED), "no result".to_string()));
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

        // Legend: a column on the right if narrow enough, rows below the plot otherwise.
        let column = Legend::layout(&c, self.legend_entries(), None)?;
        let (legend, legend_right) = if column.width <= c.width * 22 / 100 {
            (column, true)
        } else {
            (
                Legend::layout(&c, self.legend_entries(), Some(c.width - 2 * margin))?,
                false,
            )
        };

        // Left: the y title (vertical), then the tick labels.
        let (lo, hi) = self.range;
        let ticks = log_ticks(lo, hi);
        let tick_w = c.tick_width(&ticks)?;
        let label_font = Font::new(c.ts.label).vertical();
        let (_, label_h) = c.measure(&self.y_label, label_font)?;
        let x0 = margin + label_h + 12 + tick_w + 10;
        let x1 = if legend_right {
            c.width - margin - legend.width - 2 * margin
        } else {
            c.width - margin
        };
        let n = self.benches.len() as i32;
        let slot = f64::from(x1 - x0) / f64::from(n);

        // Bench names: horizontal if they fit their slot, else vertical.
        let mut tick_font = Font::new(c.ts.tick);
        let widest = c.max_width(self.benches.iter().map(String::as_str), tick_font)?;
        let horizontal = f64::from(widest) <= slot - 6.0;
        let max_label = c.height * 40 / 100;
        let (names, names_h) = if horizontal {
            (self.benches.clone(), c.measure("Ag", tick_font)?.1)
        } else {
            // The text height must fit the slot when set vertically.
            tick_font.size = tick_font.size.min((slot * 0.9).floor()).max(8.0);
            let mut names = Vec::with_capacity(self.benches.len());
            let mut tallest = 0;
            for b in &self.benches {
                let fitted = c.fit(b, tick_font, max_label)?;
                tallest = tallest.max(c.measure(&fitted, tick_font)?.0);
                names.push(fitted);
            }
            (names, tallest)
        };
        let legend_below = if legend_right {
            0
        } else {
            legend.height + margin
        };
        let y1 = c.height - margin - names_h - 12 - legend_below;
        let frame = Rect {
            x0,
            y0: top,
            x1,
            y1,
        };
        if frame.width() < 40 || frame.height() < 40 {
            return Err(PlotError::Invalid {
                what: format!("image size {}×{}", self.size.width, self.size.height),
                reason: "too small for the labels and legend of this chart".into(),
            });
        }
        let ys = Scale {
            lo,
            hi,
            log: true,
            p0: frame.y1,
            p1: frame.y0,
        };
        let slot_x = |i: usize| f64::from(frame.x0) + slot * i as f64;

        // Alternate shading so that groups read as units, then grid and axis.
        for i in (1..self.benches.len()).step_by(2) {
            let (a, b) = (slot_x(i).round() as i32, slot_x(i + 1).round() as i32);
            c.rect((a, frame.y0), (b, frame.y1), SHADE.filled())?;
        }
        c.y_axis(frame, &ys, &ticks, true)?;

        // Bars, from the baseline (1) to the value.
        let k = self.series.len();
        // Few series: narrower groups, so that one bar per bench is not a wall of colour.
        let group = slot * (0.25 + 0.15 * k as f64).min(0.8);
        let bw = group / k as f64;
        let y_one = ys.map(1.0);
        let mut marks = Vec::new();
        for (bi, _) in self.benches.iter().enumerate() {
            let gx = slot_x(bi) + (slot - group) / 2.0;
            for (si, s) in self.series.iter().enumerate() {
                let a = (gx + bw * si as f64).round() as i32;
                let b = (gx + bw * (si + 1) as f64).round() as i32;
                let (a, b) = if b - a >= 4 {
                    (a + 1, b - 1)
                } else {
                    (a, b.max(a + 1))
                };
                let cx = (a + b) / 2;
                let color = series_color(si);
                match s.values.get(bi).copied().flatten() {
                    Some(e) => {
                        let yv = ys.map(e.value);
                        let (mut t, mut u) = (yv.min(y_one), yv.max(y_one));
                        // A ratio of (about) 1: a short stub that shows on both sides
                        // of the baseline line drawn over it.
                        if u - t < 6 {
                            t = yv - 3;
                            u = yv + 3;
                        }
                        c.rect((a, t), (b, u), color.filled())?;
                        if b - a >= 5 {
                            c.rect((a, t), (b, u), INK.mix(0.55).stroke_width(1))?;
                        }
                        marks.push(Mark::Whisker {
                            x: cx,
                            lo: ys.map(e.lo),
                            hi: ys.map(e.hi),
                            cap: ((b - a) / 4).clamp(2, 10),
                            thick: b - a >= 6,
                        });
                    }
                    None => marks.push(Mark::Missing {
                        x: cx,
                        y: y_one,
                        r: ((b - a) * 4 / 10).clamp(4, 8),
                        color,
                    }),
                }
            }
        }

        // The baseline over the bars, then whiskers and missing marks over it.
        c.line(
            vec![(frame.x0, y_one), (frame.x1, y_one)],
            INK.stroke_width(2),
        )?;
        for m in &marks {
            m.draw(&c)?;
        }

        // Bench names.
        for (i, name) in names.iter().enumerate() {
            let cx = (slot_x(i) + slot / 2.0).round() as i32;
            if horizontal {
                let f = tick_font.anchor(HPos::Center, VPos::Top);
                c.text(name, (cx, frame.y1 + 8), f)?;
            } else {
                let f = tick_font.anchor(HPos::Right, VPos::Center).vertical();
                c.text(name, (cx, frame.y1 + 8), f)?;
            }
        }

        // y title, centred on the plot, shrunk if the plot is shorter than the text.
        let f = c.shrink_to(&self.y_label, label_font, frame.height(), c.ts.small)?;
        let f = f.anchor(HPos::Center, VPos::Top);
        let y_label = c.fit(&self.y_label, f, frame.height())?;
        c.text(&y_label, (margin, frame.mid_y()), f)?;

        if legend_right {
            legend.draw(&c, (frame.x1 + 2 * margin, frame.y0))?;
        } else {
            let y = c.height - margin - legend.height;
            legend.draw(&c, ((c.width - legend.width) / 2, y))?;
        }
        Ok(())
    }
}

/// Marks drawn over the bars and the baseline line.
enum Mark {
    Whisker {
        x: i32,
        lo: i32,
        hi: i32,
        cap: i32,
        thick: bool,
    },
    Missing {
        x: i32,
        y: i32,
        r: i32,
        color: RGBColor,
    },
}

impl Mark {
    fn draw<DB: DrawingBackend>(&self, c: &Canvas<'_, DB>) -> Result<(), PlotError> {
        match *self {
            Mark::Whisker {
                x,
                lo,
                hi,
                cap,
                thick,
            } => {
                let style = INK.stroke_width(if thick { 2 } else { 1 });
                if lo != hi {
                    c.line(vec![(x, lo), (x, hi)], style)?;
                }
                c.line(vec![(x - cap, lo), (x + cap, lo)], style)?;
                c.line(vec![(x - cap, hi), (x + cap, hi)], style)
            }
            Mark::Missing { x, y, r, color } => {
                c.cross((x, y), r, PAPER.stroke_width(6))?;
                c.cross((x, y), r, INK.stroke_width(4))?;
                c.cross((x, y), r, color.stroke_width(2))
            }
        }
    }
}
