//! Rendering a validated figure to PNG bytes and SVG text, and the input checks the
//! charts share.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::{MAX_SIDE, MIN_SIDE, PlotError, draw_err};
use crate::style::ensure_fonts;
use crate::{Chart, Size};

/// A chart whose input has been checked; it draws itself on any plotters backend.
pub(crate) trait Figure {
    /// The image size.
    fn size(&self) -> Size;
    /// Draws the whole image on `root` (the full backend area, origin top-left).
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>;
}

/// Draws `fig` twice, on the bitmap backend (encoded as an 8-bit RGB PNG) and on the SVG
/// backend. Both are deterministic: the same figure gives the same bytes.
pub(crate) fn render(fig: &impl Figure) -> Result<Chart, PlotError> {
    let Size { width, height } = fig.size();
    check_size(fig.size())?;
    ensure_fonts()?;

    let png = match SVG_ONLY.get() {
        true => Vec::new(),
        false => {
            let mut rgb = vec![0u8; width as usize * height as usize * 3];
            {
                let root =
                    BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
                fig.draw(&root)?;
                root.present().map_err(draw_err)?;
            }
            encode_png(&rgb, width, height)?
        }
    };

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        fig.draw(&root)?;
        root.present().map_err(draw_err)?;
    }
    Ok(Chart { png, svg })
}

thread_local! {
    /// Set within [`svg_only`].
    static SVG_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with every chart this thread draws made as SVG only, its `png` left empty:
/// for the HTML pages, which inline the SVG and never show the PNG (rasterising and
/// encoding it was most of a chart's cost). Charts drawn on other threads are whole.
pub fn svg_only<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SVG_ONLY.set(self.0);
        }
    }
    let _restore = Restore(SVG_ONLY.replace(true));
    f()
}

/// Refuses a size outside [`MIN_SIDE`]..=[`MAX_SIDE`] on either side.
pub(crate) fn check_size(size: Size) -> Result<(), PlotError> {
    let ok = |v: u32| (MIN_SIDE..=MAX_SIDE).contains(&v);
    if ok(size.width) && ok(size.height) {
        Ok(())
    } else {
        Err(PlotError::Size {
            width: size.width,
            height: size.height,
        })
    }
}

fn encode_png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, PlotError> {
    let mut out = Vec::with_capacity(rgb.len() / 8);
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Balanced);
        let mut writer = enc.write_header()?;
        writer.write_image_data(rgb)?;
        writer.finish()?;
    }
    Ok(out)
}

/// Refuses NaN and infinities, naming the number.
pub(crate) fn finite(value: f64, what: impl FnOnce() -> String) -> Result<f64, PlotError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(PlotError::NonFinite {
            what: what(),
            value,
        })
    }
}

/// Refuses NaN, infinities, zero and negative numbers (for logarithmic axes).
pub(crate) fn positive(value: f64, what: impl Fn() -> String) -> Result<f64, PlotError> {
    finite(value, &what)?;
    if value > 0.0 {
        Ok(value)
    } else {
        Err(PlotError::NotPositive {
            what: what(),
            value,
        })
    }
}

/// Refuses an empty list.
pub(crate) fn non_empty<T>(items: &[T], what: &str) -> Result<(), PlotError> {
    if items.is_empty() {
        Err(PlotError::Empty {
            what: what.to_string(),
        })
    } else {
        Ok(())
    }
}

/// Refuses a list whose length is not `expected`.
pub(crate) fn same_len<T>(
    items: &[T],
    expected: usize,
    what: impl FnOnce() -> String,
) -> Result<(), PlotError> {
    if items.len() == expected {
        Ok(())
    } else {
        Err(PlotError::LengthMismatch {
            what: what(),
            expected,
            found: items.len(),
        })
    }
}

/// Checks an estimate that goes on a logarithmic axis: all three numbers finite and
/// positive, `lo <= value <= hi`.
pub(crate) fn check_log_estimate(
    e: &crate::Estimate,
    what: &dyn Fn() -> String,
) -> Result<(), PlotError> {
    positive(e.value, || format!("{}: value", what()))?;
    positive(e.lo, || format!("{}: lower bound", what()))?;
    positive(e.hi, || format!("{}: upper bound", what()))?;
    let tol = 1e-9 * e.value.abs();
    if e.lo > e.value + tol || e.value > e.hi + tol {
        return Err(PlotError::Invalid {
            what: what(),
            reason: format!(
                "the interval [{}, {}] does not contain the value {} (lo <= value <= hi is required)",
                e.lo, e.hi, e.value
            ),
        });
    }
    Ok(())
}
