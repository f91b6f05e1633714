//! A mean with its bootstrap interval: the report's `--ci` and its energy figures.

use serde::Serialize;

/// A mean with its bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MeanCi {
    /// Samples pooled.
    pub n: usize,
    /// The mean over them.
    pub mean: f64,
    /// The percentile interval of the resampled means, `[low, high]`.
    pub ci: [f64; 2],
}
