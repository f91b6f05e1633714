//! The cross-vendor grid: every submission against every bench, normalized to a baseline
//! submission, with bootstrap intervals, tiers and an attribution of the gap between two
//! submissions. The JSON contract is `docs/grid-json.md`; the method, `docs/scoring.md`
//! ("The grid").
//!
//! Per submission and bench the figure is the mean of every usable sample (GPUs × runs,
//! failures and conflicts removed), divided by the baseline's; the overall figure is the
//! weighted geometric mean of those ratios over the benches present, times the share of
//! the weight present (a missing bench counts against the submission, never as a zero).

mod anytime;
mod compute;
mod tiers;
pub mod weights;

pub use tiers::{Link, assign_tiers, assign_tiers_paired};
pub use weights::{Weights, WeightsError};

use crate::samples::SampleSet;
use mlbench_schema::Track;

/// Resamples when none are asked for (`--resamples`).
pub const DEFAULT_RESAMPLES: usize = 2000;
/// The seed when none is given: fixed, so that a grid is reproducible by default.
pub const DEFAULT_SEED: u64 = 2019;
/// The confidence level of every interval by default.
pub const DEFAULT_LEVEL: f64 = 0.95;

/// One submission of the grid.
#[derive(Debug, Clone)]
pub struct GridInput {
    /// The vendor's name.
    pub label: String,
    /// Its track; a vendor may give one submission per track.
    pub track: Track,
    /// Its samples (`FileSamples::extract_content` then `SampleSet::assemble`).
    pub set: SampleSet,
}

/// How the grid is computed.
#[derive(Debug, Clone)]
pub struct GridOptions {
    /// The submission every other is divided by: a row id (`A`, `A/tweaked`) or a label
    /// (its baseline-track submission if it has one, else its only one).
    pub baseline: String,
    /// Bench weights of the overall figure (`None`: every bench weighs 1).
    pub weights: Option<Weights>,
    /// Bootstrap resamples (at least 1).
    pub resamples: usize,
    /// The seed of every bootstrap stream.
    pub seed: u64,
    /// Confidence level of the intervals, strictly between 0 and 1.
    pub level: f64,
    /// Two submissions (ids or labels) whose gap is attributed to the benches.
    pub explain: Option<(String, String)>,
    /// The benches expected (the jobs file's); `None`: every bench some submission has.
    pub benches: Option<Vec<String>>,
    /// Which intervals the cells and rows carry, and the tiers are decided on.
    pub interval: Interval,
    /// Row ids given no tier (submissions that failed their validation): they keep
    /// their figures and intervals, and the rows around them are compared without them.
    pub untiered: Vec<String>,
}

impl GridOptions {
    /// The defaults around a baseline: no weights, 2000 resamples, seed 2019, 95 %.
    pub fn new(baseline: &str) -> GridOptions {
        GridOptions {
            baseline: baseline.to_owned(),
            weights: None,
            resamples: DEFAULT_RESAMPLES,
            seed: DEFAULT_SEED,
            level: DEFAULT_LEVEL,
            explain: None,
            benches: None,
            interval: Interval::Bootstrap,
            untiered: Vec::new(),
        }
    }
}

/// Why a grid could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum GridError {
    /// No submission at all.
    #[error("no submission to put in the grid")]
    NoInputs,
    /// A label was given twice on one track.
    #[error("submission `{label}` appears twice on the {track} track", track = track.as_str())]
    Duplicate {
        /// The label.
        label: String,
        /// The track.
        track: Track,
    },
    /// A name matches no submission.
    #[error("{role} `{name}` is none of the submissions ({known})")]
    UnknownSubmission {
        /// `baseline` or `explain`.
        role: &'static str,
        /// The name given.
        name: String,
        /// The row ids, for the message.
        known: String,
    },
    /// The baseline has no usable sample: nothing can be normalized.
    #[error("the baseline `{0}` has no usable sample (every entry failed, or none was read)")]
    EmptyBaseline(String),
    /// A submission to explain has no overall figure.
    #[error("`{0}` has no overall figure to explain (no bench present)")]
    NoOverall(String),
    /// Zero resamples.
    #[error("the bootstrap needs at least 1 resample")]
    Resamples,
    /// A level outside (0, 1).
    #[error("the confidence level must be strictly between 0 and 1, found {0}")]
    Level(f64),
}

mlbench_schema::classify_all!(Input: GridError);

pub use mlbench_results::grid::{Attribution, AttributionTerm, Cell, Grid, Interval, VendorRow};

/// Computes the grid.
pub fn grid(inputs: &[GridInput], options: &GridOptions) -> Result<Grid, GridError> {
    compute::grid(inputs, options)
}

/// `name` on the baseline track, `name/tweaked` on the tweaked one.
pub fn row_id(label: &str, track: Track) -> String {
    match track {
        Track::Baseline => label.to_owned(),
        Track::Tweaked => format!("{label}/tweaked"),
    }
}
