//! The cross-vendor grid: every submission against every bench, normalized to a baseline
//! submission, with bootstrap intervals, tiers and an attribution of the gap between two
//! submissions. The JSON contract is `docs/grid-json.md`; the method, `docs/scoring.md`
//! ("The grid").
//!
//! Per submission and bench the figure is the mean of every usable sample (GPUs × runs,
//! failures and conflicts removed), divided by the baseline's; the overall figure is the
//! weighted geometric mean of those ratios over the benches present, times the share of
//! the weight present (a missing bench counts against the submission, never as a zero).

mod compute;
mod tiers;
pub mod weights;

pub use tiers::assign_tiers;
pub use weights::{Weights, WeightsError};

use crate::samples::SampleSet;
pub use mlbench_schema::Track;
use serde::Serialize;
use std::collections::BTreeMap;

/// Resamples when none are asked for (`--resamples`).
pub const DEFAULT_RESAMPLES: usize = 2000;
/// The seed when none is given: fixed, so that a grid is reproducible by default.
pub const DEFAULT_SEED: u64 = 2019;
/// The confidence level of every interval by default.
pub const DEFAULT_LEVEL: f64 = 0.95;

/// The track of a submission: the rules it was run under (the schema's [`Track`], one
/// type for every crate; this name is kept for the grid's callers).
pub type GridTrack = Track;

/// One submission of the grid.
#[derive(Debug, Clone)]
pub struct GridInput {
    /// The vendor's name.
    pub label: String,
    /// Its track; a vendor may give one submission per track.
    pub track: GridTrack,
    /// Its samples (`FileSamples::extract` then `SampleSet::assemble`).
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
        track: GridTrack,
    },
    /// A name matches no submission.
    #[error("{role} `{name}` is none of the submissions ({known})")]
    UnknownSubmission {
        /// `baseline` or `--explain`.
        role: &'static str,
        /// The name given.
        name: String,
        /// The row ids, for the message.
        known: String,
    },
    /// The baseline has no usable sample: nothing can be normalized.
    #[error("the baseline `{0}` has no usable sample (every entry failed, or none was read)")]
    EmptyBaseline(String),
    /// A submission of `--explain` has no overall figure.
    #[error("--explain: `{0}` has no overall figure (no bench present)")]
    NoOverall(String),
    /// Zero resamples.
    #[error("--resamples must be at least 1")]
    Resamples,
    /// A level outside (0, 1).
    #[error("the confidence level must be strictly between 0 and 1, found {0}")]
    Level(f64),
}

/// The grid (`docs/grid-json.md`); keys serialize in this order.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Grid {
    /// The id of the baseline row.
    pub baseline: String,
    /// Every bench (column), sorted by name.
    pub benches: Vec<String>,
    /// The weight of every bench in the overall figure.
    pub weights: BTreeMap<String, f64>,
    /// Benches the baseline lacks: shown without ratio, left out of every overall.
    pub unnormalized: Vec<String>,
    /// One row per submission, by overall figure descending (rows without one last).
    pub vendors: Vec<VendorRow>,
    /// Row ids by tier: `tiers[0]` is tier 1.
    pub tiers: Vec<Vec<String>>,
    /// The attribution of `--explain`.
    pub explain: Option<Attribution>,
    /// Bootstrap resamples.
    pub resamples: usize,
    /// The seed.
    pub seed: u64,
    /// The confidence level.
    pub level: f64,
    /// What the reader should know: benches not normalized, samples left out, …
    pub notes: Vec<String>,
}

/// One submission's row.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct VendorRow {
    /// The vendor's label.
    pub name: String,
    /// Its track.
    pub track: GridTrack,
    /// `name` on the baseline track, `name/tweaked` on the tweaked one.
    pub id: String,
    /// Weighted geometric mean of the ratios × `weight_share` (`None`: no bench present).
    pub overall: Option<f64>,
    /// Its bootstrap interval.
    pub ci: Option<[f64; 2]>,
    /// 1 is the best tier (`None` without an overall figure).
    pub tier: Option<usize>,
    /// Weighted geometric mean of the ratios of the benches present (before the penalty).
    pub geomean: Option<f64>,
    /// Weight of the normalized benches present ÷ weight of all normalized benches.
    pub weight_share: f64,
    /// Normalized benches present.
    pub present: usize,
    /// Normalized benches missing (no usable sample).
    pub missing: Vec<String>,
    /// Bench → cell.
    pub cells: BTreeMap<String, Cell>,
}

/// One submission on one bench.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Cell {
    /// Mean ÷ the baseline's mean (`None`: missing or unnormalized).
    pub ratio: Option<f64>,
    /// Its bootstrap interval.
    pub ci: Option<[f64; 2]>,
    /// Usable samples (GPU × run entries).
    pub n: usize,
    /// GPUs contributing (entries that ran on several devices count as one).
    pub gpus: usize,
    /// Mean throughput of those samples.
    pub mean: Option<f64>,
    /// No usable sample.
    pub missing: bool,
    /// The baseline has no usable sample of this bench.
    pub unnormalized: bool,
}

/// The gap between two rows, bench by bench (`--explain A,B`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Attribution {
    /// Row id of A.
    pub a: String,
    /// Row id of B.
    pub b: String,
    /// A's overall figure.
    pub overall_a: f64,
    /// B's overall figure.
    pub overall_b: f64,
    /// overall_a ÷ overall_b.
    pub ratio: f64,
    /// Its bootstrap interval (paired resamples: the baseline's noise cancels).
    pub ratio_ci: [f64; 2],
    /// ln(ratio): the sum of the terms and the penalty.
    pub gap: f64,
    /// Each normalized bench's share of the gap, by |term| descending.
    pub terms: Vec<AttributionTerm>,
    /// The part of the gap due to the share of weight missing: ln(share_a ÷ share_b).
    pub penalty: f64,
}

/// One bench's part of the gap.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AttributionTerm {
    /// The bench.
    pub bench: String,
    /// Its weight.
    pub weight: f64,
    /// ln ratio of A (`None`: missing in A).
    pub log_ratio_a: Option<f64>,
    /// ln ratio of B (`None`: missing in B).
    pub log_ratio_b: Option<f64>,
    /// w·ln r_A ÷ W_A − w·ln r_B ÷ W_B (a missing side contributes 0).
    pub term: f64,
}

/// Computes the grid.
pub fn grid(inputs: &[GridInput], options: &GridOptions) -> Result<Grid, GridError> {
    compute::grid(inputs, options)
}

/// `name` on the baseline track, `name/tweaked` on the tweaked one.
pub fn row_id(label: &str, track: GridTrack) -> String {
    match track {
        GridTrack::Baseline => label.to_owned(),
        GridTrack::Tweaked => format!("{label}/tweaked"),
    }
}
