//! Lines of estimates against a positive x (throughput against batch size): one line per
//! series, each point's interval drawn as a capped vertical bar, both axes logarithmic.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::axes::{Axes, Layout};
use crate::canvas::{Canvas, Key, Scale, TitleBlock, padded};
use crate::error::PlotError;
use crate::render::{Figure, check_log_estimate, check_size, non_empty, positive, render};
use crate::style::{
    LINE_STYLES, LineStyle, PAPER, Ticks, TypeScale, clean_label, ensure_fonts, log_ticks,
};
use crate::{Chart, Estimate, Size};

/// One line: its points, by x ascending.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepLine {
    /// Legend label (one per line).
    pub label: String,
    /// (x, estimate) per point; x strictly ascending, every number positive.
    pub points: Vec<(f64, Estimate)>,
    /// The x of a point drawn larger (the best batch), if any; one of `points`' x.
    pub marked: Option<f64>,
}

/// Input of [`sweep_lines`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepLines {
    /// Chart title.
    pub title: String,
    /// Optional line under the title.
    pub subtitle: Option<String>,
    /// The lines (at most 32 get distinct styles; more are refused).
    pub lines: Vec<SweepLine>,
    /// x-axis title; default "batch size (log scale)".
    pub x_label: Option<String>,
    /// y-axis title; default "items/s (log scale)".
    pub y_label: Option<String>,
    /// Image size; default 1200 × 700. The image grows taller when the legend goes below
    /// the plot.
    pub size: Size,
}

/// Lines of estimates against x, both axes logarithmic: a line per series through its
/// points, each point's interval a capped vertical bar, the marked point a larger dot.
/// The x ticks are the points' x values (up to 12 of them; more get round ticks).
///
/// # Errors
/// [`PlotError`] for no lines or a line without points, more lines than
/// [`LINE_STYLES`], a NaN, infinite, zero or negative number, x not strictly ascending
/// within a line, an interval that does not hold its value, a marked x that is not a
/// point's, or an unusable size.
pub fn sweep_lines(spec: &SweepLines) -> Result<Chart, PlotError> {
    render(&Prepared::new(spec)?)
}

/// Checks the lines; returns the x values (sorted, once each) and the y range.
fn check(spec: &SweepLines) -> Result<(Vec<f64>, (f64, f64)), PlotError> {
    non_empty(&spec.lines, "the list of lines")?;
    if spec.lines.len() > LINE_STYLES {
        return Err(PlotError::Invalid {
            what: "the list of lines".into(),
            reason: format!(
                "{} lines, more than the {LINE_STYLES} distinct styles",
                spec.lines.len()
            ),
        });
    }
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut xs: Vec<f64> = Vec::new();
    for (k, line) in spec.lines.iter().enumerate() {
        let name = || format!("line #{} (`{}`)", k + 1, line.label);
        non_empty(&line.points, &format!("{}'s points", name()))?;
        let mut last = 0.0;
        for (x, e) in &line.points {
            positive(*x, || format!("{}: x", name()))?;
            if *x <= last {
                return Err(PlotError::Invalid {
                    what: name(),
                    reason: format!("x {x} does not follow {last} in ascending order"),
                });
            }
            last = *x;
            check_log_estimate(e, &|| format!("{} at x {x}", name()))?;
            (lo, hi) = (lo.min(e.lo), hi.max(e.hi));
            xs.push(*x);
        }
        if let Some(m) = line
            .marked
            .filter(|m| !line.points.iter().any(|(x, _)| x == m))
        {
            return Err(PlotError::Invalid {
                what: name(),
                reason: format!("the marked x {m} is not one of its points"),
            });
        }
    }
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    Ok((xs, (lo, hi)))
}

/// Where everything goes, worked out before drawing (the legend sets the image height).
struct Prepared {
    lines: Vec<(LineStyle, SweepLine)>,
    title: TitleBlock,
    layout: Layout,
    x_range: (f64, f64),
    y_range: (f64, f64),
    x_ticks: Ticks,
    y_ticks: Ticks,
}

impl Prepared {
    fn new(spec: &SweepLines) -> Result<Self, PlotError> {
        let (xs, (lo, hi)) = check(spec)?;
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
        let x_range = padded(xs[0], xs[xs.len() - 1], 0.06, true);
        let y_range = padded(lo, hi, 0.06, true);
        // The batch sizes themselves, where they are few enough to label.
        let x_ticks = match xs.len() {
            0..=12 => Ticks {
                values: xs,
                decimals: None,
            },
            _ => log_ticks(x_range.0, x_range.1),
        };
        let y_ticks = log_ticks(y_range.0, y_range.1);
        let tick_w = crate::canvas::ticks_width(&y_ticks, ts)?;
        let axes = Axes {
            ts,
            w,
            h,
            margin,
            top: title.bottom,
            tick_w,
        };
        let lines: Vec<(LineStyle, SweepLine)> = (spec.lines.iter().enumerate())
            .map(|(i, l)| (LineStyle::nth(i), l.clone()))
            .collect();
        let entries = || {
            (lines.iter())
                .map(|(s, l)| (Key::Styled(*s), clean_label(&l.label)))
                .collect()
        };
        let x_label = clean_label(spec.x_label.as_deref().unwrap_or("batch size (log scale)"));
        let y_label = clean_label(spec.y_label.as_deref().unwrap_or("items/s (log scale)"));
        let what = "labels and legend";
        let layout = axes.lay_out(entries, (&x_label, &y_label), spec.size, what)?;
        Ok(Self {
            lines,
            title,
            layout,
            x_range,
            y_range,
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
        let scale = |(lo, hi): (f64, f64), p0, p1| Scale {
            lo,
            hi,
            log: true,
            p0,
            p1,
        };
        let xs = scale(self.x_range, frame.x0, frame.x1);
        let ys = scale(self.y_range, frame.y1, frame.y0);
        c.y_axis(frame, &ys, &self.y_ticks, true)?;
        c.x_axis(frame, &xs, &self.x_ticks, true)?;
        for (style, line) in &self.lines {
            draw_line(&c, (&xs, &ys), *style, line)?;
        }
        draw_titles_and_legend(&c, &self.layout)
    }
}

/// A line through the points, a capped bar per interval, a dot per point.
fn draw_line<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    (xs, ys): (&Scale, &Scale),
    style: LineStyle,
    line: &SweepLine,
) -> Result<(), PlotError> {
    let pts: Vec<(i32, i32)> = (line.points.iter())
        .map(|(x, e)| (xs.map(*x), ys.map(e.value)))
        .collect();
    if pts.len() > 1 {
        c.styled(pts.clone(), style, 2, 0.9)?;
    }
    let ink = style.rgb();
    for ((x, e), p) in line.points.iter().zip(&pts) {
        let (top, bottom) = (ys.map(e.hi), ys.map(e.lo));
        if bottom - top > 1 {
            let stroke = ink.mix(0.8).stroke_width(1);
            c.line(vec![(p.0, top), (p.0, bottom)], stroke)?;
            c.line(vec![(p.0 - 4, top), (p.0 + 4, top)], stroke)?;
            c.line(vec![(p.0 - 4, bottom), (p.0 + 4, bottom)], stroke)?;
        }
        let r = if line.marked == Some(*x) { 6 } else { 3 };
        c.circle(*p, r, ink.filled())?;
    }
    Ok(())
}

fn draw_titles_and_legend<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    layout: &Layout,
) -> Result<(), PlotError> {
    let frame = layout.frame;
    let margin = (c.ts.title * 0.6).round() as i32;
    let tick_h = c.ts.tick.round() as i32;
    layout
        .x_title
        .draw(c, (frame.mid_x(), frame.y1 + tick_h + 20))?;
    layout.y_title.draw(c, (margin, frame.mid_y()))?;
    if layout.legend_below {
        let y = layout.size.height as i32 - margin - layout.legend.height;
        layout
            .legend
            .draw(c, ((c.width - layout.legend.width) / 2, y))
    } else {
        layout.legend.draw(c, (frame.x1 + 2 * margin, frame.y0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(label: &str, points: &[(f64, f64)]) -> SweepLine {
        SweepLine {
            label: label.into(),
            points: (points.iter())
                .map(|&(x, v)| (x, Estimate::new(v, v * 0.97, v * 1.03)))
                .collect(),
            marked: None,
        }
    }

    fn spec(lines: Vec<SweepLine>) -> SweepLines {
        SweepLines {
            title: "Throughput by batch size".into(),
            lines,
            ..SweepLines::default()
        }
    }

    #[test]
    fn draws_the_same_bytes_twice_and_a_line_per_series() {
        let mut convnet = line("convnet", &[(64.0, 180.0), (128.0, 300.0), (256.0, 310.0)]);
        convnet.marked = Some(256.0);
        let s = spec(vec![
            convnet,
            line("vae", &[(64.0, 7600.0), (128.0, 9000.0)]),
        ]);
        let a = sweep_lines(&s).expect("chart");
        let b = sweep_lines(&s).expect("chart");
        assert_eq!(a, b);
        assert!(a.png.starts_with(b"\x89PNG"));
        // A polyline per series of more than one point, both labels in the legend, and the
        // batch sizes as the x ticks.
        assert_eq!(a.svg.matches("opacity=\"0.9\"").count(), 2, "{}", a.svg);
        for text in ["convnet", "vae", "\n64\n", "\n128\n", "\n256\n"] {
            assert!(a.svg.contains(text), "{text}");
        }
    }

    #[test]
    fn bad_input_is_refused_before_drawing() {
        let err = |s: &SweepLines| sweep_lines(s).unwrap_err().to_string();
        assert!(err(&spec(vec![])).contains("the list of lines is empty"));
        let down = line("x", &[(128.0, 1.0), (64.0, 2.0)]);
        assert!(err(&spec(vec![down])).contains("does not follow 128"));
        let zero = line("x", &[(0.0, 1.0)]);
        assert!(err(&spec(vec![zero])).contains("must be greater than 0"));
        let mut marked = line("x", &[(64.0, 1.0)]);
        marked.marked = Some(32.0);
        assert!(err(&spec(vec![marked])).contains("the marked x 32 is not one of its points"));
        let mut outside = line("x", &[(64.0, 1.0)]);
        outside.points[0].1 = Estimate::new(1.0, 1.5, 2.0);
        assert!(err(&spec(vec![outside])).contains("does not contain the value"));
        let many = (0..33)
            .map(|i| line(&i.to_string(), &[(1.0, 1.0)]))
            .collect();
        assert!(err(&spec(many)).contains("33 lines"));
    }
}
