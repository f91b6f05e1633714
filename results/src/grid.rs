//! The cross-vendor grid (`docs/grid-json.md`): every submission against every bench,
//! normalized to a baseline submission. Computed by `mlbench_analyzer::grid`.

use mlbench_schema::Track;
pub use mlbench_schema::runtime::SubmissionRuntime;
use serde::Serialize;
use std::collections::BTreeMap;

/// The version of the grid JSON; raised when a field changes meaning or disappears.
pub const GRID_SCHEMA_VERSION: u32 = 2;

/// The grid (`docs/grid-json.md`); keys serialize in this order.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Grid {
    /// [`GRID_SCHEMA_VERSION`].
    pub schema_version: u32,
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
    /// Which intervals the cells and rows carry (absent: `bootstrap`).
    #[serde(skip_serializing_if = "Interval::is_bootstrap")]
    pub interval: Interval,
    /// What the figures are per (absent: `second`, throughput; `joule`: items per joule,
    /// `grid --per joule`).
    #[serde(skip_serializing_if = "Per::is_second")]
    pub per: Per,
    /// Why the grid is informative only and not tiered (`None`: tiered as usual), e.g.
    /// `board sensors differ by vendor: A nvml, B amdsmi`. Absent when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub informative: Option<String>,
    /// What the reader should know: benches not normalized, samples left out, …
    pub notes: Vec<String>,
}

/// Which intervals a grid carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Interval {
    /// The paired bootstrap of the samples (valid at run counts fixed in advance).
    #[default]
    Bootstrap,
    /// The anytime-valid sequences of the runs (valid however many runs were made).
    Anytime,
}

impl Interval {
    /// Whether this is the default, [`Interval::Bootstrap`] (not written in the JSON).
    pub fn is_bootstrap(&self) -> bool {
        *self == Interval::Bootstrap
    }
}

/// What a grid's figures are per.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Per {
    /// Items per second: the throughput (the default).
    #[default]
    Second,
    /// Items per joule: the items of each timed window ÷ the energy its devices drew.
    Joule,
}

impl Per {
    /// `second` or `joule`, as `--per` takes it.
    ///
    /// # Errors
    /// Any other word, with the two it could be.
    pub fn from_name(name: &str) -> Result<Self, String> {
        match name {
            "second" => Ok(Per::Second),
            "joule" => Ok(Per::Joule),
            _ => Err(format!("{name:?}: second or joule")),
        }
    }

    /// `second` or `joule`: the word `--per` takes, and the CSV's and Parquet's `per`.
    pub fn name(&self) -> &'static str {
        match self {
            Per::Second => "second",
            Per::Joule => "joule",
        }
    }

    /// Whether this is the default, [`Per::Second`] (not written in the JSON).
    pub fn is_second(&self) -> bool {
        *self == Per::Second
    }
}

/// One submission's row.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct VendorRow {
    /// The vendor's label.
    pub name: String,
    /// Its track.
    pub track: Track,
    /// `name` on the baseline track, `name/tweaked` on the tweaked one.
    pub id: String,
    /// Weighted geometric mean of the ratios × `weight_share` (`None`: no bench present).
    pub overall: Option<f64>,
    /// Its bootstrap interval.
    pub ci: Option<[f64; 2]>,
    /// 1 is the best tier (`None` without an overall figure).
    pub tier: Option<usize>,
    /// overall ÷ the next row's overall (`None`: last row, no figure, or
    /// `--interval anytime`).
    pub ratio_to_next: Option<f64>,
    /// Its interval over the paired resamples (the baseline's noise cancels): a new
    /// tier starts below this row exactly when it excludes 1.
    pub ratio_to_next_ci: Option<[f64; 2]>,
    /// The share of paired resamples in which this row's overall is above the next
    /// row's.
    pub p_above_next: Option<f64>,
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
    /// What produced the submission, and how mlbench knows (as in the report JSON;
    /// `null` when the grid was made without it).
    pub runtime: Option<SubmissionRuntime>,
    /// Its runtime differs from the baseline's: its ratios compare software as well as
    /// hardware (only ever true when mixed runtimes were allowed).
    pub mixed_runtime: bool,
    /// What it ran on: GPUs as its entries name them, hosts, CPU, driver (`null` when
    /// the grid was made without it).
    pub hardware: Option<crate::Hardware>,
    /// Its validation verdict, computed once from the listing the grid read (`null`
    /// when the grid was made without it). A failing row has no tier unless the grid
    /// was made with `--include-failing`.
    pub validity: Option<crate::Validity>,
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
    /// The submission's runtime differs from the baseline's, and the cell has a ratio
    /// (its row's `mixed_runtime`, on the cells it affects).
    pub mixed_runtime: bool,
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
