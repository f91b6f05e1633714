//! One bench's power over time: a line per device, the timed windows shaded, each
//! device's idle baseline as a dashed level, each window's energy in the legend.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::axes::{Axes, Layout};
use crate::canvas::{Canvas, Font, Key, Para, Scale, TitleBlock};
use crate::error::PlotError;
use crate::render::{Figure, check_size, finite, non_empty, render};
use crate::style::{
    HUGE, LINE_STYLES, LineStyle, MUTED, PAPER, Ticks, TypeScale, clean_label, ensure_fonts,
    linear_ticks,
};
use crate::{Chart, Size};

/// One device's power readings (one copy's device, or a CPU package).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PowerLine {
    /// Legend label (`cuda:0 · copy 0`).
    pub label: String,
    /// `(t_s, watts)` in time order. Empty: the device has no power to draw (said in the
    /// legend).
    pub points: Vec<(f64, f64)>,
    /// The nominal time between two readings, s: the line breaks where two readings are
    /// more than two periods apart, rather than bridging the gap. `None`: the median
    /// spacing of the points.
    pub period_s: Option<f64>,
    /// The device's mean idle power, W, drawn as a dashed level in the line's colour.
    pub idle_w: Option<f64>,
    /// The points are not readings but the mean power between two readings of the
    /// device's energy counter (it has no power reading); said in the legend.
    pub from_counter: bool,
    /// The device's energy over the timed windows, printed in the legend.
    pub energy: Vec<WindowEnergy>,
}

impl PowerLine {
    /// A line of readings.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            label: label.into(),
            points,
            ..Self::default()
        }
    }
}

/// A device's energy over one timed window.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WindowEnergy {
    /// The window's name (`train`).
    pub window: String,
    /// Its energy, J.
    pub gross_j: f64,
    /// The same less the idle power over the window, J (may be negative).
    pub net_j: Option<f64>,
}

/// A timed window, shaded behind the lines.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PowerWindow {
    /// Its name; windows of one name share a shade and a legend entry.
    pub name: String,
    /// Its start, s.
    pub start_s: f64,
    /// Its end, s (`start_s <= end_s`; equal: drawn as a vertical line).
    pub end_s: f64,
}

/// Input of [`power_trace`]: one bench (its copies and devices).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PowerTrace {
    /// Chart title (usually the bench).
    pub title: String,
    /// Optional line under the title.
    pub subtitle: Option<String>,
    /// One line per device.
    pub lines: Vec<PowerLine>,
    /// The timed windows.
    pub windows: Vec<PowerWindow>,
    /// Sentences printed under the plot (how the clocks were aligned, what is left out).
    pub notes: Vec<String>,
    /// x-axis title; default "time (s)".
    pub x_label: Option<String>,
    /// Image size; default 1200 × 700. The image grows taller by the legend's height
    /// when the legend goes below the plot.
    pub size: Size,
}

/// One bench's power over time: a line per device (in its own colour and dash pattern,
/// as [`crate::loss_styles`] gives distinct styles), the timed windows shaded behind
/// them, each device's idle level dashed in its colour, and each device's energy over
/// each window in its legend entry.
///
/// A line breaks where two readings are more than two sampling periods apart, and a
/// reading alone between gaps is a dot; a window of zero length is a vertical line. The
/// y axis starts at 0 W (or below, for a negative reading). Thousands of readings are
/// drawn as their envelope per pixel column (first, lowest, highest, last), so that
/// spikes stay and the SVG stays small. Notes and the automatic ones (gaps broken,
/// windows of zero length) are printed under the plot.
///
/// # Errors
/// [`PlotError`] for no lines, no reading in any line, a NaN or infinite number, points
/// out of time order, a period that is not positive, a window that ends before it starts,
/// or an unusable size.
pub fn power_trace(spec: &PowerTrace) -> Result<Chart, PlotError> {
    render(&Prepared::new(spec)?)
}

/// `j` joules with an SI prefix and three significant digits: `812 J`, `1.23 kJ`,
/// `45.6 MJ`, `-95.1 J`; `1.23e15 J` past GJ.
pub fn joules(j: f64) -> String {
    let a = j.abs();
    // Past GJ (no run draws a TJ: a broken file's counter does), in scientific notation,
    // not a line of hundreds of digits.
    if a >= HUGE {
        return format!("{j:.2e} J");
    }
    let (v, unit) = if a >= 1e9 {
        (j / 1e9, "GJ")
    } else if a >= 1e6 {
        (j / 1e6, "MJ")
    } else if a >= 1e3 {
        (j / 1e3, "kJ")
    } else {
        (j, "J")
    };
    let digits = if v.abs() >= 99.95 || v == 0.0 {
        0
    } else if v.abs() >= 9.995 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

/// `w` watts to a tenth (`61.2 W`), in scientific notation past a MW (a broken file).
fn watts(w: f64) -> String {
    match w.abs() >= 1e6 {
        true => format!("{w:.2e} W"),
        false => format!("{w:.1} W"),
    }
}

/// The runs of `points` between gaps of more than two periods (`period_s`, or the
/// median spacing when `None`).
pub(crate) fn segments(points: &[(f64, f64)], period_s: Option<f64>) -> Vec<&[(f64, f64)]> {
    let Some(period) = period_s.or_else(|| median_spacing(points)) else {
        return if points.is_empty() {
            Vec::new()
        } else {
            vec![points]
        };
    };
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..points.len() {
        if points[i].0 - points[i - 1].0 > 2.0 * period {
            out.push(&points[start..i]);
            start = i;
        }
    }
    if start < points.len() {
        out.push(&points[start..]);
    }
    out
}

fn median_spacing(points: &[(f64, f64)]) -> Option<f64> {
    let mut d: Vec<f64> = points.windows(2).map(|w| w[1].0 - w[0].0).collect();
    if d.is_empty() {
        return None;
    }
    d.sort_by(f64::total_cmp);
    // The lower median: a line with gaps still reads its period from its even steps.
    Some(d[(d.len() - 1) / 2]).filter(|m| *m > 0.0)
}

/// The pixels of a polyline, reduced to at most four per pixel column (the first, the
/// lowest and highest in the order they come, the last): the same ink, far fewer points.
fn envelope(pts: Vec<(i32, i32)>) -> Vec<(i32, i32)> {
    let mut out: Vec<(i32, i32)> = Vec::with_capacity(pts.len().min(4096));
    let mut i = 0;
    while i < pts.len() {
        let x = pts[i].0;
        let j = i + pts[i..].iter().take_while(|p| p.0 == x).count();
        let run = &pts[i..j];
        let lo = run
            .iter()
            .enumerate()
            .min_by_key(|(_, p)| p.1)
            .map(|(k, _)| k);
        let hi = run
            .iter()
            .enumerate()
            .max_by_key(|(_, p)| p.1)
            .map(|(k, _)| k);
        let mut keep = vec![0, run.len() - 1];
        keep.extend(lo);
        keep.extend(hi);
        keep.sort_unstable();
        keep.dedup();
        out.extend(keep.into_iter().map(|k| run[k]));
        i = j;
    }
    out.dedup();
    out
}

/// A checked line: its style, its runs between gaps, its legend text.
struct Line {
    style: LineStyle,
    segments: Vec<Vec<(f64, f64)>>,
    idle_w: Option<f64>,
    legend: String,
}

/// The checked input.
struct Data {
    lines: Vec<Line>,
    /// Distinct window names, each with its windows.
    windows: Vec<(String, Vec<(f64, f64)>)>,
    notes: Vec<String>,
    x: (f64, f64),
    y: (f64, f64),
}

impl Data {
    fn new(spec: &PowerTrace) -> Result<Self, PlotError> {
        non_empty(&spec.lines, "the list of power lines")?;
        let mut bounds = Bounds::default();
        let mut lines = Vec::with_capacity(spec.lines.len());
        let mut broken = false;
        for (k, l) in spec.lines.iter().enumerate() {
            check_line(l)?;
            bounds.line(l);
            let segments: Vec<Vec<(f64, f64)>> = segments(&l.points, l.period_s)
                .into_iter()
                .map(<[_]>::to_vec)
                .collect();
            broken |= segments.len() > 1;
            lines.push(Line {
                style: LineStyle::nth(k % LINE_STYLES),
                segments,
                idle_w: l.idle_w,
                legend: legend_text(l),
            });
        }
        if lines.iter().all(|l| l.segments.is_empty()) {
            return Err(PlotError::Empty {
                what: "the power readings of every line".into(),
            });
        }
        let (windows, zero) = check_windows(&spec.windows, &mut bounds)?;
        let mut notes: Vec<String> = spec.notes.iter().map(|n| clean_label(n)).collect();
        if broken {
            notes.push(
                "A line breaks where two readings are more than two sampling periods apart.".into(),
            );
        }
        if !zero.is_empty() {
            let mut names = zero[..zero.len().min(LEGEND_WINDOWS)].join(", ");
            if zero.len() > LEGEND_WINDOWS {
                names.push_str(&format!(" and {} more", zero.len() - LEGEND_WINDOWS));
            }
            notes.push(format!(
                "A window of zero length is drawn as a line: {names}."
            ));
        }
        if windows.len() > LEGEND_WINDOWS {
            notes.push(format!(
                "{} windows are shaded; the legend names the first {LEGEND_WINDOWS}.",
                windows.len()
            ));
        }
        Ok(Self {
            lines,
            windows,
            notes,
            x: bounds.x_range(),
            y: bounds.y_range(),
        })
    }

    fn legend_entries(&self) -> Vec<(Key, String)> {
        let mut entries: Vec<(Key, String)> = self
            .lines
            .iter()
            .map(|l| {
                let key = if l.segments.is_empty() {
                    Key::Cross(MUTED)
                } else {
                    Key::Styled(l.style)
                };
                (key, l.legend.clone())
            })
            .collect();
        for (k, (name, _)) in self.windows.iter().enumerate().take(LEGEND_WINDOWS) {
            entries.push((Key::Band(window_color(k)), format!("timed window `{name}`")));
        }
        if self.lines.iter().any(|l| l.idle_w.is_some()) {
            entries.push((
                Key::Dashed(MUTED),
                "idle baseline (in its line's colour)".into(),
            ));
        }
        entries
    }
}

/// The range the data spans.
#[derive(Default)]
struct Bounds {
    x: Option<(f64, f64)>,
    y: (f64, f64),
}

impl Bounds {
    fn x(&mut self, v: f64) {
        let (lo, hi) = self.x.unwrap_or((v, v));
        self.x = Some((lo.min(v), hi.max(v)));
    }
    fn y(&mut self, v: f64) {
        self.y = (self.y.0.min(v), self.y.1.max(v));
    }
    fn line(&mut self, l: &PowerLine) {
        for &(t, w) in &l.points {
            self.x(t);
            self.y(w);
        }
        if let Some(idle) = l.idle_w {
            self.y(idle);
        }
    }
    /// The span of the data; one second either side of a single time.
    fn x_range(&self) -> (f64, f64) {
        match self.x {
            Some((lo, hi)) if hi > lo => (lo, hi),
            Some((v, _)) => (v - 1.0, v + 1.0),
            None => (0.0, 1.0),
        }
    }
    /// From 0 (or the lowest reading) to a little above the highest.
    fn y_range(&self) -> (f64, f64) {
        let (lo, hi) = self.y;
        let span = hi - lo;
        if span > 0.0 {
            (
                lo - if lo < 0.0 { span * 0.05 } else { 0.0 },
                hi + span * 0.08,
            )
        } else {
            (lo, lo + 1.0)
        }
    }
}

fn check_line(l: &PowerLine) -> Result<(), PlotError> {
    let name = || format!("power line `{}`", l.label);
    let mut prev = f64::NEG_INFINITY;
    for (i, &(t, w)) in l.points.iter().enumerate() {
        finite(t, || format!("{}, point {i}: time", name()))?;
        finite(w, || format!("{}, point {i}: power", name()))?;
        if t < prev {
            return Err(PlotError::Invalid {
                what: format!("{}, point {i}", name()),
                reason: format!(
                    "its time {t} s is before the previous point's {prev} s: points must be in time order"
                ),
            });
        }
        prev = t;
    }
    if let Some(p) = l.period_s {
        finite(p, || format!("{}: sampling period", name()))?;
        if p <= 0.0 {
            return Err(PlotError::Invalid {
                what: format!("{}: sampling period", name()),
                reason: format!("{p} s: must be more than 0"),
            });
        }
    }
    if let Some(idle) = l.idle_w {
        finite(idle, || format!("{}: idle power", name()))?;
    }
    for e in &l.energy {
        finite(e.gross_j, || {
            format!("{}, window `{}`: energy", name(), e.window)
        })?;
        if let Some(net) = e.net_j {
            finite(net, || {
                format!("{}, window `{}`: net energy", name(), e.window)
            })?;
        }
    }
    Ok(())
}

/// The window names the legend lists (with each line's energy over them): `mlbench run`
/// marks one (`train`); a file with thousands would give a legend no chart can hold.
const LEGEND_WINDOWS: usize = 8;

/// The windows grouped by name, and the names of those of zero length.
type Windows = (Vec<(String, Vec<(f64, f64)>)>, Vec<String>);

fn check_windows(windows: &[PowerWindow], bounds: &mut Bounds) -> Result<Windows, PlotError> {
    let mut named: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    // Name → place in `named`: a file may hold thousands of names (a broken one does).
    let mut place: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut zero = Vec::new();
    let mut zero_seen = std::collections::HashSet::new();
    for w in windows {
        let name = clean_label(&w.name);
        finite(w.start_s, || format!("window `{name}`: start"))?;
        finite(w.end_s, || format!("window `{name}`: end"))?;
        if w.end_s < w.start_s {
            return Err(PlotError::Invalid {
                what: format!("window `{name}`"),
                reason: format!("it ends ({} s) before it starts ({} s)", w.end_s, w.start_s),
            });
        }
        if w.end_s == w.start_s && zero_seen.insert(name.clone()) {
            zero.push(name.clone());
        }
        bounds.x(w.start_s);
        bounds.x(w.end_s);
        match place.get(&name) {
            Some(&i) => named[i].1.push((w.start_s, w.end_s)),
            None => {
                place.insert(name.clone(), named.len());
                named.push((name, vec![(w.start_s, w.end_s)]));
            }
        }
    }
    Ok((named, zero))
}

/// `cuda:0 · copy 0: train 12.3 kJ (8.10 kJ net of idle 61.2 W)`, with what the reader
/// must know about the points.
fn legend_text(l: &PowerLine) -> String {
    let mut text = clean_label(&l.label);
    if l.points.is_empty() {
        text.push_str(": no power readings");
    } else if l.from_counter {
        text.push_str(" (power from its energy counter's differences)");
    }
    let mut energies: Vec<String> = l
        .energy
        .iter()
        .take(LEGEND_WINDOWS)
        .map(|e| {
            let gross = format!("{} {}", clean_label(&e.window), joules(e.gross_j));
            match (e.net_j, l.idle_w) {
                (Some(net), Some(idle)) => {
                    format!("{gross} ({} net of idle {})", joules(net), watts(idle))
                }
                (Some(net), None) => format!("{gross} ({} net of idle)", joules(net)),
                (None, _) => gross,
            }
        })
        .collect();
    if l.energy.len() > LEGEND_WINDOWS {
        energies.push(format!("{} more windows", l.energy.len() - LEGEND_WINDOWS));
    }
    if !energies.is_empty() {
        text.push_str(": ");
        text.push_str(&energies.join("; "));
    } else if let Some(idle) = l.idle_w {
        text.push_str(&format!(": idle {}", watts(idle)));
    }
    text
}

/// The shade of the `k`-th window name: grey, then tints that stay behind the lines.
fn window_color(k: usize) -> RGBColor {
    const SHADES: [RGBColor; 4] = [
        RGBColor(0x88, 0x88, 0x88),
        RGBColor(0x56, 0xB4, 0xE9),
        RGBColor(0xF0, 0xE4, 0x42),
        RGBColor(0xCC, 0x79, 0xA7),
    ];
    SHADES[k % SHADES.len()]
}

/// Where everything goes, worked out before drawing (the legend sets the image height).
struct Prepared {
    data: Data,
    title: TitleBlock,
    layout: Layout,
    notes: Vec<Para>,
    x_ticks: Ticks,
    y_ticks: Ticks,
}

impl Prepared {
    fn new(spec: &PowerTrace) -> Result<Self, PlotError> {
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
        let note_font = Font::new(ts.small)
            .color(MUTED)
            .anchor(HPos::Left, VPos::Top);
        let notes = data
            .notes
            .iter()
            .map(|n| Para::new(n, note_font, w - 2 * margin))
            .collect::<Result<Vec<_>, _>>()?;
        let notes_h: i32 = notes.iter().map(|p| p.height() + p.line_h / 3).sum();
        let x_label = clean_label(spec.x_label.as_deref().unwrap_or("time (s)"));
        let y_ticks = linear_ticks(data.y.0, data.y.1, 6);
        let x_ticks = linear_ticks(data.x.0, data.x.1, 8);
        let axes = Axes {
            ts,
            w,
            h: h - notes_h,
            margin,
            top: title.bottom,
            tick_w: crate::canvas::ticks_width(&y_ticks, ts)?,
        };
        let layout = axes.lay_out(
            || data.legend_entries(),
            (&x_label, "power (W)"),
            spec.size,
            "labels, notes and legend",
        )?;
        Ok(Self {
            data,
            title,
            layout,
            notes,
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
        let xs = Scale {
            lo: self.data.x.0,
            hi: self.data.x.1,
            log: false,
            p0: frame.x0,
            p1: frame.x1,
        };
        let ys = Scale {
            lo: self.data.y.0,
            hi: self.data.y.1,
            log: false,
            p0: frame.y1,
            p1: frame.y0,
        };
        self.draw_windows(&c, &xs)?;
        c.y_axis(frame, &ys, &self.y_ticks, true)?;
        c.x_axis(frame, &xs, &self.x_ticks, true)?;
        for l in &self.data.lines {
            if let Some(idle) = l.idle_w {
                let y = ys.map(idle);
                let stroke = l.style.rgb().mix(0.9).stroke_width(1);
                c.dashed(vec![(frame.x0, y), (frame.x1, y)], 6, 4, stroke)?;
            }
        }
        for l in &self.data.lines {
            for seg in &l.segments {
                let pts: Vec<(i32, i32)> =
                    seg.iter().map(|&(t, w)| (xs.map(t), ys.map(w))).collect();
                match pts.as_slice() {
                    [] => {}
                    [p] => c.circle(*p, 3, l.style.rgb().filled())?,
                    _ => c.styled(envelope(pts), l.style, 2, 0.9)?,
                }
            }
        }
        self.draw_titles_notes_and_legend(&c)
    }
}

impl Prepared {
    /// Each name's windows: their union shaded, each edge a thin line; a window of zero
    /// length a line of two pixels.
    fn draw_windows<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        xs: &Scale,
    ) -> Result<(), PlotError> {
        let f = self.layout.frame;
        for (k, (_, spans)) in self.data.windows.iter().enumerate() {
            let color = window_color(k);
            for &(a, b) in &union(spans) {
                let (xa, xb) = (xs.map(a), xs.map(b));
                if xb > xa {
                    c.rect((xa, f.y0), (xb, f.y1), color.mix(0.18).filled())?;
                }
            }
            for &(a, b) in spans {
                let width = if a == b { 2 } else { 1 };
                for x in [xs.map(a), xs.map(b)] {
                    c.line(
                        vec![(x, f.y0), (x, f.y1)],
                        color.mix(0.8).stroke_width(width),
                    )?;
                }
            }
        }
        Ok(())
    }

    fn draw_titles_notes_and_legend<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
    ) -> Result<(), PlotError> {
        let frame = self.layout.frame;
        let margin = (c.ts.title * 0.6).round() as i32;
        let tick_h = c.ts.tick.round() as i32;
        let x_title_y = frame.y1 + tick_h + 20;
        self.layout.x_title.draw(c, (frame.mid_x(), x_title_y))?;
        self.layout.y_title.draw(c, (margin, frame.mid_y()))?;
        let mut y =
            x_title_y + self.layout.x_title.height().max(c.ts.label.round() as i32) + margin / 2;
        for p in &self.notes {
            p.draw(c, (margin, y))?;
            y += p.height() + p.line_h / 3;
        }
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

/// The union of `spans` as disjoint spans in order.
fn union(spans: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut sorted = spans.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (a, b) in sorted {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joules_take_an_si_prefix_and_three_digits() {
        assert_eq!(joules(812.4), "812 J");
        assert_eq!(joules(1234.0), "1.23 kJ");
        assert_eq!(joules(45_600_000.0), "45.6 MJ");
        assert_eq!(joules(-95.1), "-95.1 J");
        assert_eq!(joules(0.0), "0 J");
        assert_eq!(joules(1.5e300), "1.50e300 J");
        assert_eq!(joules(-2e12), "-2.00e12 J");
        assert_eq!(
            (watts(61.25), watts(3e300)),
            ("61.2 W".into(), "3.00e300 W".into())
        );
        assert_eq!(joules(5.0), "5.00 J");
    }

    #[test]
    fn segments_break_at_gaps_over_two_periods() {
        let pts = [(0.0, 1.0), (1.0, 1.0), (3.0, 1.0), (5.5, 1.0), (6.5, 1.0)];
        // 1 → 3 is two periods (kept), 3 → 5.5 is 2.5 (broken).
        let s = segments(&pts, Some(1.0));
        assert_eq!(s, vec![&pts[..3], &pts[3..]]);
        // The median spacing (1.0) stands in for a missing period.
        assert_eq!(segments(&pts, None), s);
        assert_eq!(segments(&pts[..1], None), vec![&pts[..1]]);
        assert!(segments(&[], Some(1.0)).is_empty());
    }

    #[test]
    fn envelope_keeps_first_extremes_and_last_per_column() {
        let pts = vec![(0, 5), (0, 9), (0, 1), (0, 4), (1, 3), (2, 7), (2, 7)];
        assert_eq!(
            envelope(pts),
            vec![(0, 5), (0, 9), (0, 1), (0, 4), (1, 3), (2, 7)]
        );
    }

    #[test]
    fn union_merges_overlapping_spans() {
        let u = union(&[(5.0, 6.0), (0.0, 2.0), (1.0, 3.0), (3.0, 3.0)]);
        assert_eq!(u, vec![(0.0, 3.0), (5.0, 6.0)]);
    }

    #[test]
    fn legend_text_says_energy_idle_and_where_power_came_from() {
        let mut l = PowerLine::new("cpu:package-0 · copy 0", vec![(0.0, 40.0)]);
        l.from_counter = true;
        l.idle_w = Some(41.25);
        l.energy = vec![WindowEnergy {
            window: "train".into(),
            gross_j: 1234.0,
            net_j: Some(-95.1),
        }];
        assert_eq!(
            legend_text(&l),
            "cpu:package-0 · copy 0 (power from its energy counter's differences): \
             train 1.23 kJ (-95.1 J net of idle 41.2 W)"
        );
        assert_eq!(
            legend_text(&PowerLine::new("cpu:proc", vec![])),
            "cpu:proc: no power readings"
        );
    }
}
