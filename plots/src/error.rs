//! The one error type of the crate.

/// Smallest accepted image side, in pixels.
pub const MIN_SIDE: u32 = 320;
/// Largest accepted image side, in pixels.
pub const MAX_SIDE: u32 = 6000;

/// Why a chart could not be drawn.
///
/// Input problems (empty data, NaN or infinite numbers, inconsistent lengths) are refused
/// before anything is drawn; they never panic.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlotError {
    /// There is nothing to draw.
    #[error("nothing to plot: {what} is empty")]
    Empty {
        /// What is empty, e.g. "benches".
        what: String,
    },
    /// A number is NaN or infinite.
    #[error("{what} is {value}, but must be a finite number")]
    NonFinite {
        /// Which number, e.g. "series `A`, bench `vae`: upper bound".
        what: String,
        /// The offending value.
        value: f64,
    },
    /// A number that goes on a logarithmic axis is zero or negative.
    #[error("{what} is {value}, but must be greater than 0 (it goes on a logarithmic axis)")]
    NotPositive {
        /// Which number.
        what: String,
        /// The offending value.
        value: f64,
    },
    /// A list has the wrong length.
    #[error("{what} has {found} values, but {expected} were expected")]
    LengthMismatch {
        /// Which list.
        what: String,
        /// The length it should have.
        expected: usize,
        /// The length it has.
        found: usize,
    },
    /// Any other inconsistent input (an interval with `lo > hi`, an empty range…).
    #[error("{what}: {reason}")]
    Invalid {
        /// Which input.
        what: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The requested image size is unusable.
    #[error(
        "image size {width}×{height} px is outside the accepted {MIN_SIDE}–{MAX_SIDE} px per side"
    )]
    Size {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
    },
    /// The bundled font could not be registered (a build problem, not an input problem).
    #[error("the bundled DejaVu Sans font could not be registered with plotters")]
    Font,
    /// plotters failed while drawing (a bug, not an input problem).
    #[error("drawing failed: {0}")]
    Draw(String),
    /// The PNG encoder failed.
    #[error("PNG encoding failed: {0}")]
    Png(#[from] png::EncodingError),
}

/// Maps any plotters error (they carry the backend error, e.g. a missing font) into
/// [`PlotError::Draw`]; `Debug` shows the inner error, `Display` does not always.
pub(crate) fn draw_err<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError::Draw(format!("{e:?}"))
}
