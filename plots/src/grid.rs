//! Grouped bars: one group per bench, one bar per vendor, ratio to the baseline.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::canvas::{Canvas, Font, Key, Legend, Para, Rect, Scale, padded};
use crate::error::PlotError;
use crate::render::{Figure, check_log_estimate, non_empty, render, same_len};
use crate::style::{INK, MUTED, PAPER, SHADE, Ticks, clean_label, log_ticks, series_color};
use crate::{Chart, Measure, Series, Size};

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
    /// What the ratios are ratios of: throughput (the default) or items per joule.
    pub measure: Measure,
    /// y-axis title; default "`<measure>` relative to `<baseline>` (log scale)".
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
/// Legend labels and the y title wrap rather than being cut; the plot makes room.
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
            None => format!(
                "{} relative to {baseline} (log scale)",
                spec.measure.words()
            ),
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

/// Where the parts of the chart go.
struct Layout {
    frame: Rect,
    legend: Legend,
    legend_right: bool,
    ticks: Ticks,
    y_title: Para,
    /// Width of one bench's slot.
    slot: f64,
    names: Vec<String>,
    horizontal: bool,
    name_font: Font,
}

/// The plot frame and bench names for given room on the left.
struct Columns {
    frame: Rect,
    slot: f64,
    names: Vec<String>,
    horizontal: bool,
    name_font: Font,
}

impl Prepared {
    fn layout<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        top: i32,
    ) -> Result<Layout, PlotError> {
        let margin = (c.ts.title * 0.6).round() as i32;
        // Legend: a column on the right if narrow enough, rows below the plot otherwise.
        let column = Legend::column(c.ts, self.legend_entries(), c.width / 4 - Legend::KEY_W)?;
        let legend_right = column.width <= c.width * 22 / 100;
        let legend = if legend_right {
            column
        } else {
            Legend::rows(c.ts, self.legend_entries(), c.width - 2 * margin)?
        };
        let (lo, hi) = self.range;
        let ticks = log_ticks(lo, hi);
        let tick_w = c.tick_width(&ticks)?;
        // The y title is wrapped to the plot's height, which depends on its own width:
        // measure with one line, wrap, measure again.
        let title_font = Font::new(c.ts.label)
            .vertical()
            .anchor(HPos::Center, VPos::Top);
        let mut left = margin + c.ts.label.round() as i32 + 12 + tick_w + 10;
        let mut cols = self.columns(c, &legend, legend_right, top, left)?;
        let mut y_title = Para::empty();
        for _ in 0..2 {
            y_title = Para::shrunk(&self.y_label, title_font, cols.frame.height(), c.ts.small)?;
            left = margin + y_title.height() + 12 + tick_w + 10;
            cols = self.columns(c, &legend, legend_right, top, left)?;
        }
        Ok(Layout {
            frame: cols.frame,
            legend,
            legend_right,
            ticks,
            y_title,
            slot: cols.slot,
            names: cols.names,
            horizontal: cols.horizontal,
            name_font: cols.name_font,
        })
    }

    fn columns<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        legend: &Legend,
        legend_right: bool,
        top: i32,
        x0: i32,
    ) -> Result<Columns, PlotError> {
        let margin = (c.ts.title * 0.6).round() as i32;
        let x1 = if legend_right {
            c.width - margin - legend.width - 2 * margin
        } else {
            c.width - margin
        };
        let slot = f64::from(x1 - x0) / self.benches.len() as f64;
        // Bench names: horizontal if they fit their slot, else vertical.
        let mut name_font = Font::new(c.ts.tick);
        let widest = c.max_width(self.benches.iter().map(String::as_str), name_font)?;
        let horizontal = f64::from(widest) <= slot - 6.0;
        let (names, names_h) = if horizontal {
            (self.benches.clone(), c.measure("Ag", name_font)?.1)
        } else {
            // The text height must fit the slot when set vertically.
            name_font.size = name_font.size.min((slot * 0.9).floor()).max(8.0);
            let mut names = Vec::with_capacity(self.benches.len());
            let mut tallest = 0;
            for b in &self.benches {
                let fitted = c.fit(b, name_font, c.height * 40 / 100)?;
                tallest = tallest.max(c.measure(&fitted, name_font)?.0);
                names.push(fitted);
            }
            (names, tallest)
        };
        let below = if legend_right {
            0
        } else {
            legend.height + margin
        };
        let frame = Rect {
            x0,
            y0: top,
            x1,
            y1: c.height - margin - names_h - 12 - below,
        };
        if frame.width() < 40 || frame.height() < 40 {
            return Err(PlotError::Invalid {
                what: format!("image size {}×{}", self.size.width, self.size.height),
                reason: "too small for the labels and legend of this chart".into(),
            });
        }
        Ok(Columns {
            frame,
            slot,
            names,
            horizontal,
            name_font,
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
        let ys = Scale {
            lo,
            hi,
            log: true,
            p0: frame.y1,
            p1: frame.y0,
        };
        let slot_x = |i: usize| f64::from(frame.x0) + l.slot * i as f64;

        // Alternate shading so that groups read as units, then grid and axis.
        for i in (1..self.benches.len()).step_by(2) {
            let (a, b) = (slot_x(i).round() as i32, slot_x(i + 1).round() as i32);
            c.rect((a, frame.y0), (b, frame.y1), SHADE.filled())?;
        }
        c.y_axis(frame, &ys, &l.ticks, true)?;
        self.draw_bars(&c, &l, &ys)?;

        // Bench names.
        for (i, name) in l.names.iter().enumerate() {
            let cx = (slot_x(i) + l.slot / 2.0).round() as i32;
            let f = if l.horizontal {
                l.name_font.anchor(HPos::Center, VPos::Top)
            } else {
                l.name_font.anchor(HPos::Right, VPos::Center).vertical()
            };
            c.text(name, (cx, frame.y1 + 8), f)?;
        }

        // y title, centred on the plot (lines side by side when wrapped).
        l.y_title.draw(&c, (margin, frame.mid_y()))?;
        if l.legend_right {
            l.legend.draw(&c, (frame.x1 + 2 * margin, frame.y0))
        } else {
            let y = c.height - margin - l.legend.height;
            l.legend.draw(&c, ((c.width - l.legend.width) / 2, y))
        }
    }
}

impl Prepared {
    /// Bars from the baseline (1) to the value, then the baseline line, whiskers and
    /// missing marks over them.
    fn draw_bars<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        l: &Layout,
        ys: &Scale,
    ) -> Result<(), PlotError> {
        let frame = l.frame;
        let k = self.series.len();
        // Few series: narrower groups, so that one bar per bench is not a wall of colour.
        let group = l.slot * (0.25 + 0.15 * k as f64).min(0.8);
        let bw = group / k as f64;
        let y_one = ys.map(1.0);
        let mut marks = Vec::new();
        for bi in 0..self.benches.len() {
            let gx = f64::from(frame.x0) + l.slot * bi as f64 + (l.slot - group) / 2.0;
            for (si, s) in self.series.iter().enumerate() {
                let a = (gx + bw * si as f64).round() as i32;
                let b = (gx + bw * (si + 1) as f64).round() as i32;
                let (a, b) = if b - a >= 4 {
                    (a + 1, b - 1)
                } else {
                    (a, b.max(a + 1))
                };
                let color = series_color(si);
                marks.push(match s.values.get(bi).copied().flatten() {
                    Some(e) => bar(c, ys, (a, b), e, color)?,
                    None => Mark::Missing {
                        x: (a + b) / 2,
                        y: y_one,
                        r: ((b - a) * 4 / 10).clamp(4, 8),
                        color,
                    },
                });
            }
        }
        c.line(
            vec![(frame.x0, y_one), (frame.x1, y_one)],
            INK.stroke_width(2),
        )?;
        for m in &marks {
            m.draw(c)?;
        }
        Ok(())
    }
}

/// Draws one bar between x `a..b` and returns its whisker.
fn bar<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    ys: &Scale,
    (a, b): (i32, i32),
    e: crate::Estimate,
    color: RGBColor,
) -> Result<Mark, PlotError> {
    let y_one = ys.map(1.0);
    let yv = ys.map(e.value);
    let (mut t, mut u) = (yv.min(y_one), yv.max(y_one));
    // A ratio of (about) 1: a short stub that shows on both sides of the baseline line
    // drawn over it.
    if u - t < 6 {
        t = yv - 3;
        u = yv + 3;
    }
    c.rect((a, t), (b, u), color.filled())?;
    if b - a >= 5 {
        c.rect((a, t), (b, u), INK.mix(0.55).stroke_width(1))?;
    }
    Ok(Mark::Whisker {
        x: (a + b) / 2,
        lo: ys.map(e.lo),
        hi: ys.map(e.hi),
        cap: ((b - a) / 4).clamp(2, 10),
        thick: b - a >= 6,
    })
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
