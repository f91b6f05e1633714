//! Every presentation of mlbench's results, one file per format behind one trait (as
//! hyperfine's exporters): a result model in, bytes out. No Polars, no clap, no file
//! reads: the analyzer and the validator compute, `mlbench-results` holds what they found,
//! and this crate only shows it. Verdicts, counts and thresholds come from the models;
//! nothing here recomputes them.
//!
//! | format | report | grid | findings | rule list | page |
//! |---|---|---|---|---|---|
//! | [`Table`] | ✓ | ✓ | ✓ (grouped lines) | ✓ | |
//! | [`Csv`] | ✓ | ✓ | ✓ | ✓ | |
//! | [`Markdown`] | ✓ | ✓ | ✓ | ✓ | |
//! | [`Json`] | ✓ | ✓ | ✓ | ✓ | |
//! | [`Sarif`] | | | ✓ | ✓ (as JSON) | |
//! | [`Html`] | | | | | report, grid |
#![warn(missing_docs)]

pub mod charts;
mod csv;
pub mod html;
mod json;
mod markdown;
pub mod rows;
mod sarif;
mod table;
#[cfg(test)]
mod testdata;

pub use csv::Csv;
pub use html::Html;
pub use json::Json;
pub use markdown::Markdown;
pub use sarif::Sarif;
pub use table::{Table, paint_verdicts};

/// Why a model could not be presented (a bug or a chart that could not be drawn, never
/// the user's input).
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Serializing to JSON failed.
    #[error("writing JSON failed: {0}")]
    Json(#[from] serde_json::Error),
    /// A chart could not be drawn.
    #[error("drawing {what} failed: {source}")]
    Chart {
        /// The chart.
        what: String,
        /// The cause.
        source: mlbench_plots::PlotError,
    },
}

// A chart that cannot be drawn from a model that was made is a bug.
mlbench_schema::classify_all!(Internal: ExportError);

/// One output format of one model: the model in, the bytes to write out.
pub trait Exporter<M: ?Sized> {
    /// Presents `model`.
    fn export(&self, model: &M) -> Result<Vec<u8>, ExportError>;
}

/// Text into bytes, for the text formats.
fn bytes(text: String) -> Result<Vec<u8>, ExportError> {
    Ok(text.into_bytes())
}
