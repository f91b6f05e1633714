//! Aggregation, statistics and scores over benchmark reports.
//!
//! The flow: [`load`] reads a submission (a folder tree found by
//! [`mlbench_submission::discover()`], or a zip or folder through `mlbench_submission`'s
//! listing) and
//! reduces each report file to its samples as it is parsed ([`samples::FileSamples`]),
//! then puts them together into a [`SampleSet`] (plain Rust: exclusions, selection rules,
//! failures, configuration conflicts); [`report_of`] computes either scoring over it
//! ([`classic_report`], [`score_report`]: Polars lazy frames and statrs), and
//! [`report_document`] adds intervals, stragglers and notes. [`compare`] loads several
//! submissions side by side for the [`grid()`]; [`views`] gives the charts their data.
#![warn(missing_docs)]

pub mod anytime;
pub mod batch;
pub mod batch_sweep;
pub mod bootstrap;
pub mod classic;
pub mod compare;
pub mod context;
pub mod document;
pub mod energy;
pub mod expected;
pub mod fleet;
pub mod fleet_resample;
pub mod frame;
pub mod grid;
pub mod grid_frame;
pub mod grid_page;
pub mod hardware;
pub mod history;
pub mod inputs;
pub mod load;
pub mod page;
pub mod precision;
pub mod result_ci;
pub mod runtime;
pub mod samples;
pub mod scaling;
pub mod score;
pub mod straggler;
pub mod targets;
pub mod until;
pub mod views;

pub use bootstrap::{MeanCi, bench_mean_cis, mean_ci};
pub use classic::classic_report;
pub use document::{DocOptions, report_document};
pub use expected::{Expected, ExpectedFrom, pick_jobs_file};
pub use grid::{Grid, GridError, GridInput, GridOptions, Weights, grid};
pub use load::{
    LoadError, LoadedSamples, LoadedSubmission, discover_inputs, load_samples, load_submission,
    read_intake, samples_of_intake,
};
pub use mlbench_results::report::Report;
pub use samples::SampleSet;
pub use score::score_report;
pub use straggler::{Straggler, StragglerOptions, stragglers};

use mlbench_schema::{Scoring, TargetTable};

/// Why a report could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// Fewer runs than required.
    #[error("found {found} run{s} ({names}), fewer than the {required} required: the statistics need at least {required} runs of the suite", s = if *found == 1 { "" } else { "s" })]
    TooFewRuns {
        /// Runs found.
        found: usize,
        /// Runs required.
        required: u32,
        /// The runs, for the message.
        names: String,
    },
    /// Nothing to compute on.
    #[error("no report entries to compute on")]
    NoEntries,
    /// Polars failed (a bug, not an input problem).
    #[error("computing the statistics failed: {0}")]
    Polars(#[from] polars::prelude::PolarsError),
}

impl mlbench_schema::class::Classify for AnalyzeError {
    fn class(&self) -> mlbench_schema::class::ErrorClass {
        use mlbench_schema::class::ErrorClass;
        match self {
            AnalyzeError::TooFewRuns { .. } | AnalyzeError::NoEntries => ErrorClass::Input,
            // The statistics engine failing on data that loaded is a bug.
            AnalyzeError::Polars(_) => ErrorClass::Internal,
        }
    }
}

/// Options of a report.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// Which scheme.
    pub scoring: Scoring,
    /// Runs required.
    pub min_runs: u32,
    /// Price for RPP (score scoring).
    pub price: Option<f64>,
    /// The benches expected (`None`: every bench of the targets).
    pub expected: Option<Expected>,
}

/// The report of `set` under `options`: its scoring, after the check that there are
/// samples and enough runs.
pub fn report_of(
    set: &SampleSet,
    targets: &TargetTable,
    options: &ReportOptions,
) -> Result<Report, AnalyzeError> {
    enough_runs(set, options.min_runs)?;
    let expected = options
        .expected
        .clone()
        .unwrap_or_else(|| Expected::from_targets(targets));
    Ok(match options.scoring {
        Scoring::Classic => {
            Report::Classic(classic_report(set, targets, &expected, options.min_runs)?)
        }
        Scoring::Score => Report::Score(score_report(set, targets, &expected, options.price)?),
    })
}

/// Refuses `set` without samples or with fewer runs than `min_runs`.
///
/// # Errors
/// [`AnalyzeError::NoEntries`], [`AnalyzeError::TooFewRuns`].
pub fn enough_runs(set: &SampleSet, min_runs: u32) -> Result<(), AnalyzeError> {
    if set.samples.is_empty() {
        return Err(AnalyzeError::NoEntries);
    }
    if set.runs.len() < min_runs as usize {
        let mut names = set
            .runs
            .iter()
            .take(6)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if set.runs.len() > 6 {
            names.push_str(", …");
        }
        return Err(AnalyzeError::TooFewRuns {
            found: set.runs.len(),
            required: min_runs,
            names,
        });
    }
    Ok(())
}
