//! Fonts, colours, type sizes, ticks and number formats shared by every chart.

use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use plotters::style::{FontStyle, RGBColor, register_font};

use crate::error::PlotError;

/// The family every text uses. plotters writes it verbatim into the SVG
/// (`font-family="DejaVu Sans, sans-serif"`, a valid CSS font list) and looks it up in
/// its table of registered fonts for the PNG, where it resolves to the bundled font.
pub(crate) const FAMILY: &str = "DejaVu Sans, sans-serif";

static REGULAR: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
static BOLD: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-Bold.ttf");

/// Registers the bundled DejaVu Sans (regular and bold) with plotters, once per process.
///
/// PNG text is then rasterised by ab_glyph from these bytes only, so it is identical on
/// every machine, with or without system fonts. `"sans-serif"` (plotters' default family)
/// is registered too, so no plotters default can reach for a missing font. This is the
/// only place that calls `register_font`: plotters may replace it with a per-area font
/// context (plotters#736).
pub(crate) fn ensure_fonts() -> Result<(), PlotError> {
    static ONCE: Once = Once::new();
    static REGISTERED: AtomicBool = AtomicBool::new(false);
    ONCE.call_once(|| {
        let ok = [FAMILY, "sans-serif"].iter().all(|name| {
            register_font(name, FontStyle::Normal, REGULAR).is_ok()
                && register_font(name, FontStyle::Bold, BOLD).is_ok()
        });
        REGISTERED.store(ok, Ordering::Release);
    });
    if REGISTERED.load(Ordering::Acquire) {
        Ok(())
    } else {
        Err(PlotError::Font)
    }
}

/// The Okabe–Ito colour-blind-safe palette, as `[r, g, b]`, in the order the series of a
/// chart use it: blue, orange, bluish green, vermillion, reddish purple, sky blue, yellow,
/// black. Yellow, the weakest on white, comes late. A chart with more than eight series
/// starts again at the first colour.
pub const OKABE_ITO: [[u8; 3]; 8] = [
    [0x00, 0x72, 0xB2], // blue
    [0xE6, 0x9F, 0x00], // orange
    [0x00, 0x9E, 0x73], // bluish green
    [0xD5, 0x5E, 0x00], // vermillion
    [0xCC, 0x79, 0xA7], // reddish purple
    [0x56, 0xB4, 0xE9], // sky blue
    [0xF0, 0xE4, 0x42], // yellow
    [0x00, 0x00, 0x00], // black
];

/// The colour of the `i`-th series.
pub(crate) fn series_color(i: usize) -> RGBColor {
    let [r, g, b] = OKABE_ITO[i % OKABE_ITO.len()];
    RGBColor(r, g, b)
}

/// How a line is stroked. With the eight [`OKABE_ITO`] colours, the four patterns give
/// 32 distinct line styles, so that curves stay apart without relying on colour alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dash {
    /// A continuous line.
    Solid,
    /// Long dashes.
    Dashed,
    /// Short dashes.
    Short,
    /// Dots.
    Dotted,
}

impl Dash {
    /// Every pattern, in the order styles use them.
    pub const ALL: [Dash; 4] = [Dash::Solid, Dash::Dashed, Dash::Short, Dash::Dotted];

    /// (dash, gap) lengths in pixels; `None` for a solid line.
    pub(crate) fn pattern(self) -> Option<(i32, i32)> {
        match self {
            Dash::Solid => None,
            Dash::Dashed => Some((10, 5)),
            Dash::Short => Some((4, 4)),
            Dash::Dotted => Some((2, 3)),
        }
    }
}

/// A line's colour and dash pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LineStyle {
    /// `[r, g, b]`, one of [`OKABE_ITO`].
    pub color: [u8; 3],
    /// The dash pattern.
    pub dash: Dash,
}

impl LineStyle {
    /// Colour `c` and dash `d` (both taken modulo their counts).
    pub(crate) fn of(c: usize, d: usize) -> Self {
        Self {
            color: OKABE_ITO[c % OKABE_ITO.len()],
            dash: Dash::ALL[d % Dash::ALL.len()],
        }
    }

    /// The `i`-th of the 32 distinct styles: every colour solid, then every colour
    /// dashed, and so on.
    pub(crate) fn nth(i: usize) -> Self {
        Self::of(i, i / OKABE_ITO.len())
    }

    pub(crate) fn rgb(self) -> RGBColor {
        let [r, g, b] = self.color;
        RGBColor(r, g, b)
    }
}

/// How many distinct [`LineStyle`]s there are.
pub const LINE_STYLES: usize = OKABE_ITO.len() * Dash::ALL.len();

/// The diverging scale of the heatmap, low to high: dark orange, light orange, near white,
/// light blue, dark blue (ColorBrewer PuOr's orange arm and RdBu's blue arm; both arms
/// stay distinct under the common colour-vision deficiencies).
pub const DIVERGING: [[u8; 3]; 5] = [
    [0xB3, 0x58, 0x06],
    [0xFD, 0xB8, 0x63],
    [0xF7, 0xF7, 0xF7],
    [0x92, 0xC5, 0xDE],
    [0x21, 0x66, 0xAC],
];

/// The colour of `t` in 0..=1 on [`DIVERGING`] (clamped), interpolated linearly.
pub(crate) fn diverging(t: f64) -> RGBColor {
    let t = if t.is_nan() { 0.5 } else { t.clamp(0.0, 1.0) };
    let last = DIVERGING.len() - 1;
    let pos = t * last as f64;
    let i = (pos.floor() as usize).min(last - 1);
    let f = pos - i as f64;
    let (a, b) = (DIVERGING[i], DIVERGING[i + 1]);
    let mix = |k: usize| (f64::from(a[k]) + (f64::from(b[k]) - f64::from(a[k])) * f).round() as u8;
    RGBColor(mix(0), mix(1), mix(2))
}

/// Whether black text has more contrast than white on `c` (WCAG relative luminance above
/// 0.179, where the two contrast ratios are equal).
pub(crate) fn is_light(c: RGBColor) -> bool {
    let lin = |v: u8| {
        let v = f64::from(v) / 255.0;
        if v <= 0.040_45 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c.0) + 0.7152 * lin(c.1) + 0.0722 * lin(c.2) > 0.179
}

/// Text and axis colour (near black).
pub(crate) const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
/// Secondary text (subtitles, notes).
pub(crate) const MUTED: RGBColor = RGBColor(0x55, 0x55, 0x55);
/// Grid lines.
pub(crate) const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
/// Alternate-group shading behind categories.
pub(crate) const SHADE: RGBColor = RGBColor(0xF3, 0xF3, 0xF3);
/// Cells and markers of missing values.
pub(crate) const MISSING: RGBColor = RGBColor(0xD9, 0xD9, 0xD9);
/// Background.
pub(crate) const PAPER: RGBColor = RGBColor(0xFF, 0xFF, 0xFF);

/// Type sizes in pixels (CSS `font-size`, the em of the PNG glyphs too), tuned for the
/// reference width of 1200 px; charts scale them with their width.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TypeScale {
    pub title: f64,
    pub label: f64,
    pub tick: f64,
    pub small: f64,
}

impl TypeScale {
    /// The sizes for an image `width` px wide: 28/20/16/14 at 1200 px, never below
    /// 20/15/13/12 (small images), never above twice the reference.
    pub(crate) fn for_width(width: u32) -> Self {
        let k = (f64::from(width) / 1200.0).clamp(0.0, 2.0);
        let s = |reference: f64, floor: f64| (reference * k).max(floor).round();
        Self {
            title: s(28.0, 20.0),
            label: s(20.0, 15.0),
            tick: s(16.0, 13.0),
            small: s(14.0, 12.0),
        }
    }
}

/// Tick positions and how many decimals their labels get (`None`: as few as needed).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ticks {
    pub values: Vec<f64>,
    pub decimals: Option<usize>,
}

impl Ticks {
    /// The label of tick `v`.
    pub(crate) fn label(&self, v: f64) -> String {
        match self.decimals {
            Some(d) if v.abs() < HUGE => format!("{v:.d$}"),
            _ => short_number(v),
        }
    }
}

/// From here on a number is written in scientific notation (`1.00e308`): no benchmark
/// gives one, but a broken file can, and hundreds of digits leave no room for a chart.
pub(crate) const HUGE: f64 = 1e12;

/// Round-number ticks for a linear axis over `lo..=hi`, about `target` of them.
pub(crate) fn linear_ticks(lo: f64, hi: f64, target: usize) -> Ticks {
    let span = hi - lo;
    if !span.is_finite() || span <= 0.0 {
        return Ticks {
            values: vec![lo],
            decimals: None,
        };
    }
    let raw = span / target.max(2) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let (mult, extra) = [(1.0, 0), (2.0, 0), (2.5, 1), (5.0, 0), (10.0, 0)]
        .into_iter()
        .find(|(m, _)| m * mag >= raw)
        .unwrap_or((10.0, 0));
    let (mult, mag) = if mult >= 10.0 {
        (1.0, mag * 10.0)
    } else {
        (mult, mag)
    };
    let step = mult * mag;
    // Decimals that print the step exactly: 0.05 → 2, 0.25 → 2, 2.5 → 1, 25 → 0.
    let k = mag.log10().round() as i64;
    let decimals = ((-k).max(0) + if k <= 0 { extra } else { 0 }) as usize;
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    let values = (first..=last)
        .take(50)
        .map(|k| {
            let v = k as f64 * step;
            // Snap -0.0 and binary noise (0.30000000000000004) to the printed value.
            let p = 10f64.powi(decimals as i32 + 2);
            (v * p).round() / p + 0.0
        })
        .collect();
    Ticks {
        values,
        decimals: Some(decimals.min(6)),
    }
}

/// Ticks for a logarithmic axis over `lo..=hi` (both > 0). Narrow ranges (under a factor
/// of 2) get linear round numbers, which read better than powers; wide ones the densest
/// of 1–2–5-style mantissa sets that gives at most eight ticks.
pub(crate) fn log_ticks(lo: f64, hi: f64) -> Ticks {
    if hi / lo < 2.0 {
        return linear_ticks(lo, hi, 5);
    }
    const LEVELS: [&[f64]; 6] = [
        &[1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0],
        &[1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0],
        &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0],
        &[1.0, 2.0, 5.0],
        &[1.0, 3.0],
        &[1.0],
    ];
    let d0 = lo.log10().floor() as i32;
    let d1 = hi.log10().ceil() as i32;
    let mut best = Vec::new();
    for level in LEVELS {
        let values: Vec<f64> = (d0..=d1)
            .flat_map(|d| {
                // Dividing by 10^-d gives the literal's double (0.6, not 0.6000000000000001).
                level.iter().map(move |m| {
                    if d < 0 {
                        m / 10f64.powi(-d)
                    } else {
                        m * 10f64.powi(d)
                    }
                })
            })
            .filter(|v| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9))
            .collect();
        let n = values.len();
        best = values;
        if n <= 8 {
            break;
        }
    }
    Ticks {
        values: best,
        decimals: None,
    }
}

/// A compact label: up to three significant digits, no trailing zeros, thousands as
/// `k`, millions as `M` (`0.5`, `1.25`, `2000`, `12.5k`, `3.2M`).
pub(crate) fn short_number(v: f64) -> String {
    let a = v.abs();
    if a >= HUGE {
        return format!("{v:.2e}");
    }
    if a >= 1e6 {
        return format!("{}M", trim(format!("{:.2}", v / 1e6)));
    }
    if a >= 1e4 {
        return format!("{}k", trim(format!("{:.1}", v / 1e3)));
    }
    if a == 0.0 {
        return "0".to_string();
    }
    let digits = (2 - a.log10().floor() as i64).clamp(0, 8) as usize;
    trim(format!("{v:.digits$}"))
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A deterministic jitter in -0.5..0.5 for the `i`-th point: the golden-ratio sequence,
/// evenly spread with no random generator (same input, same bytes).
pub(crate) fn jitter(i: usize) -> f64 {
    const PHI: f64 = 0.618_033_988_749_895;
    ((i as f64 + 1.0) * PHI).fract() - 0.5
}

/// Replaces control characters (which would make the SVG ill-formed) with spaces.
pub(crate) fn clean_label(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round() {
        let t = linear_ticks(0.93, 1.12, 5);
        assert_eq!(t.values, vec![0.95, 1.0, 1.05, 1.1]);
        assert_eq!(t.decimals, Some(2));
        assert_eq!(t.label(1.0), "1.00");
        let t = linear_ticks(28_700.0, 29_600.0, 4);
        assert_eq!(t.values, vec![28_750.0, 29_000.0, 29_250.0, 29_500.0]);
        assert_eq!(t.label(29_250.0), "29250");
        let t = linear_ticks(1.0, 2.0, 4);
        assert_eq!(t.label(1.25), "1.25");
        let t = linear_ticks(1.186, 1.222, 4);
        assert_eq!(t.values, vec![1.19, 1.2, 1.21, 1.22]);
        assert_eq!(t.label(1.2), "1.20");
        let t = linear_ticks(-0.2, 0.4, 4);
        assert_eq!(t.values, vec![-0.2, 0.0, 0.2, 0.4]);
        assert_eq!(t.label(0.0), "0.0");
    }

    #[test]
    fn log_ticks_cover_decades() {
        let t = log_ticks(0.08, 12.0);
        assert_eq!(t.values, vec![0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]);
        assert_eq!(t.label(0.5), "0.5");
        let t = log_ticks(0.55, 1.8);
        assert_eq!(t.values, vec![0.6, 0.8, 1.0, 1.2, 1.5]);
        let t = log_ticks(0.9, 1.1);
        assert_eq!(t.values, vec![0.9, 0.95, 1.0, 1.05, 1.1]);
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short_number(2021.52), "2022");
        assert_eq!(short_number(5.47), "5.47");
        assert_eq!(short_number(0.0123), "0.0123");
        assert_eq!(short_number(12_500.0), "12.5k");
        assert_eq!(short_number(3_200_000.0), "3.2M");
        assert_eq!(short_number(1.0), "1");
        assert_eq!(short_number(-1e308), "-1.00e308");
        let ticks = linear_ticks(0.0, 1e308, 6);
        assert!(
            ticks.values.iter().all(|&v| ticks.label(v).len() <= 9),
            "{ticks:?}"
        );
    }

    #[test]
    fn diverging_ends_and_middle() {
        assert_eq!(diverging(0.0), RGBColor(0xB3, 0x58, 0x06));
        assert_eq!(diverging(0.5), RGBColor(0xF7, 0xF7, 0xF7));
        assert_eq!(diverging(2.0), RGBColor(0x21, 0x66, 0xAC));
        assert!(is_light(diverging(0.5)));
        assert!(!is_light(diverging(1.0)));
    }

    #[test]
    fn jitter_is_bounded_and_spread() {
        let j: Vec<f64> = (0..20).map(jitter).collect();
        assert!(j.iter().all(|v| (-0.5..0.5).contains(v)));
        assert!(j.iter().any(|v| *v < -0.3) && j.iter().any(|v| *v > 0.3));
    }
}
