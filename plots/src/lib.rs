//! Publication-quality charts of benchmark results, from plain Rust data.
//!
//! Every chart is a function that takes a spec struct (data, labels, size) and returns a
//! [`Chart`]: PNG bytes and SVG text of the same drawing.
//!
//! - [`grid_bars`]: grouped bars, one group per bench and one bar per vendor, of each
//!   vendor's ratio to the baseline with its interval, on a logarithmic axis;
//! - [`overall_bars`]: one horizontal bar per vendor (overall ratio and interval), sorted
//!   and grouped by tier;
//! - both of throughput or, with [`Measure::ItemsPerJoule`], of items per joule (the
//!   grid's energy view);
//! - [`heatmap`]: GPUs × benches, colour and printed value of the relative performance;
//! - [`distributions`]: small multiples, one panel per bench, of the run values against
//!   the target;
//! - [`power_trace`]: one bench's power over time, a line per device, the timed windows
//!   shaded, the idle baselines dashed, each window's energy in the legend;
//! - [`sweep_lines`]: a line per bench of its throughput against batch size, each
//!   point's interval a capped bar, both axes logarithmic;
//! - [`loss_curves`]: one bench's loss curves, one thin line per run or GPU, each in its
//!   own colour and dash pattern ([`loss_styles`]), over the validator's band.
//!
//! Output is deterministic (same input, same bytes) and needs no system font: the text is
//! set in DejaVu Sans, bundled in the binary and rasterised by ab_glyph. Text is measured
//! before it is placed, and labels, titles and legends wrap rather than being cut. Colours come
//! from the colour-blind-safe Okabe–Ito palette ([`OKABE_ITO`]) and, for the heatmap, a
//! blue–white–orange diverging scale ([`DIVERGING`]).
//!
//! Input is checked before anything is drawn: empty lists, NaN or infinite numbers,
//! inconsistent lengths and intervals give a [`PlotError`], never a panic.
#![warn(missing_docs)]

mod axes;
mod canvas;
mod distributions;
mod error;
mod grid;
mod heatmap;
mod loss;
mod overall;
mod power;
mod render;
mod style;
mod sweep;

pub use distributions::{BenchRuns, Distributions, distributions};
pub use error::{MAX_SIDE, MIN_SIDE, PlotError};
pub use grid::{GridBars, grid_bars};
pub use heatmap::{Heatmap, heatmap};
pub use loss::{Band, LossCurves, LossLine, loss_curves, loss_styles};
pub use overall::{OverallBars, OverallEntry, overall_bars};
pub use power::{PowerLine, PowerTrace, PowerWindow, WindowEnergy, joules, power_trace};
pub use render::svg_only;
pub use style::{DIVERGING, Dash, LINE_STYLES, LineStyle, OKABE_ITO};
pub use sweep::{SweepLine, SweepLines, sweep_lines};

/// The most characters of a name that charts and page headings show ([`shortened`]).
pub const NAME_CHARS: usize = 80;

/// `name` as charts (titles, labels, legends) and page headings show it: itself when it
/// has at most [`NAME_CHARS`] characters, else its first 40 and last 39 around an
/// ellipsis (the ends are what tell bench names apart). Cut between characters, never
/// inside one; the data (JSON, CSV) keeps the whole name.
pub fn shortened(name: &str) -> std::borrow::Cow<'_, str> {
    let head = NAME_CHARS / 2;
    let tail = NAME_CHARS - head - 1;
    let mut ends = name.char_indices().map(|(i, _)| i);
    let (Some(cut), true) = (ends.nth(head), ends.nth(tail).is_some()) else {
        return std::borrow::Cow::Borrowed(name);
    };
    let from = name
        .char_indices()
        .rev()
        .nth(tail - 1)
        .map_or(name.len(), |(i, _)| i);
    std::borrow::Cow::Owned(format!("{}…{}", &name[..cut], &name[from..]))
}

/// The width in pixels of `text` set in the charts' font (DejaVu Sans) at `size` px,
/// bold or not, as the charts measure it to lay text out (the PNG's advance widths;
/// browsers set the SVG's text a little narrower). For checks that text fits.
///
/// # Errors
/// [`PlotError::Font`] if the bundled font cannot be registered.
pub fn text_width(text: &str, size: f64, bold: bool) -> Result<u32, PlotError> {
    style::ensure_fonts()?;
    let font = canvas::Font::new(size);
    let font = if bold { font.bold() } else { font };
    Ok(canvas::text_size(text, font)?.0.max(0) as u32)
}

/// What the ratios of [`grid_bars`] and [`overall_bars`] are ratios of; it words their
/// default axis title.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Measure {
    /// Items per second (the grid's figure).
    #[default]
    Throughput,
    /// Items per joule (the grid's energy view).
    ItemsPerJoule,
}

impl Measure {
    /// How an axis title says it: `throughput`, `items per joule`.
    pub fn words(self) -> &'static str {
        match self {
            Measure::Throughput => "throughput",
            Measure::ItemsPerJoule => "items per joule",
        }
    }
}

/// A rendered chart: the same drawing as PNG and as SVG.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chart {
    /// 8-bit RGB PNG of the requested size.
    pub png: Vec<u8>,
    /// Standalone SVG document (text as `<text>` elements in DejaVu Sans, sans-serif).
    pub svg: String,
}

/// Image size in pixels (the SVG uses the same user units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl Size {
    /// A size of `width` × `height` pixels.
    pub const fn new(width: u32, height: u32) -> Self {
        Self { width, height }
    }
}

impl Default for Size {
    /// 1200 × 700 px, the size the type sizes are tuned for.
    fn default() -> Self {
        Self::new(1200, 700)
    }
}

/// A point estimate with its interval (e.g. a ratio and its 95 % confidence interval).
///
/// `lo <= value <= hi` is required; `lo == hi` (no interval) is fine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The estimate.
    pub value: f64,
    /// Lower end of the interval.
    pub lo: f64,
    /// Upper end of the interval.
    pub hi: f64,
}

impl Estimate {
    /// An estimate with its interval.
    pub const fn new(value: f64, lo: f64, hi: f64) -> Self {
        Self { value, lo, hi }
    }

    /// An estimate without an interval (`lo == hi == value`).
    pub const fn exact(value: f64) -> Self {
        Self::new(value, value, value)
    }
}

/// One vendor's (or GPU's) values, one per category of the chart, `None` where missing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// One entry per category, in the chart's category order.
    pub values: Vec<Option<Estimate>>,
}

impl Series {
    /// A series labelled `label`.
    pub fn new(label: impl Into<String>, values: Vec<Option<Estimate>>) -> Self {
        Self {
            label: label.into(),
            values,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_only_draws_the_same_svg_and_no_png_then_restores() {
        let spec = GridBars {
            title: "t".into(),
            benches: vec!["a".into()],
            series: vec![Series::new("v", vec![Some(Estimate::new(1.1, 1.0, 1.2))])],
            baseline: "b".into(),
            ..GridBars::default()
        };
        let whole = grid_bars(&spec).unwrap();
        let svg = svg_only(|| grid_bars(&spec).unwrap());
        assert_eq!((svg.svg.as_str(), svg.png.len()), (whole.svg.as_str(), 0));
        assert!(whole.png.starts_with(b"\x89PNG"));
        assert_eq!(
            grid_bars(&spec).unwrap(),
            whole,
            "the setting ends with the closure"
        );
    }

    #[test]
    fn names_are_shortened_in_the_middle_between_characters() {
        assert_eq!(
            shortened("convnet_distributed_fp16"),
            "convnet_distributed_fp16"
        );
        let eighty = "a".repeat(80);
        assert_eq!(shortened(&eighty), eighty);
        let long = format!(
            "{}{}{}",
            "h".repeat(40),
            "m".repeat(2_000_000),
            "t".repeat(39)
        );
        let short = shortened(&long);
        assert_eq!(short, format!("{}…{}", "h".repeat(40), "t".repeat(39)));
        assert_eq!(short.chars().count(), NAME_CHARS);
        // Characters of several bytes are kept whole.
        let wide = "é".repeat(81);
        let short = shortened(&wide);
        assert_eq!(short, format!("{}…{}", "é".repeat(40), "é".repeat(39)));
        let mixed = format!("ab{}", "日本".repeat(60));
        assert_eq!(shortened(&mixed).chars().count(), NAME_CHARS);
    }

    #[test]
    fn a_long_text_wraps_in_lines_that_each_fit_and_lose_nothing() {
        style::ensure_fonts().expect("fonts");
        let f = canvas::Font::new(16.0);
        let text = "x_".repeat(50_000);
        let lines = canvas::wrap(&text, f, 300).expect("wrap");
        assert_eq!(lines.concat(), text);
        assert!(lines.len() > 100, "{}", lines.len());
        for l in &lines {
            assert!(canvas::text_size(l, f).expect("size").0 <= 300, "{l}");
        }
    }
}
