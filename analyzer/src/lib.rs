//! Aggregation, statistics and scores over benchmark reports.
//!
//! The flow: [`SampleSet::build`] turns loaded report files into samples (plain Rust:
//! exclusions, selection rules, failures, configuration conflicts); [`classic_report`]
//! and [`score_report`] compute the two scorings with Polars lazy frames and statrs.
#![warn(missing_docs)]

pub mod bootstrap;
pub mod classic;
pub mod context;
pub mod expected;
pub mod frame;
pub mod grid;
pub mod grid_frame;
pub mod model;
pub mod samples;
pub mod score;
pub mod straggler;

pub use bootstrap::{MeanCi, bench_mean_cis, mean_ci};
pub use classic::classic_report;
pub use expected::{Expected, ExpectedFrom, pick_jobs_file};
pub use grid::{Grid, GridError, GridInput, GridOptions, GridTrack, Weights, grid};
pub use model::Report;
pub use samples::SampleSet;
pub use score::score_report;
pub use straggler::{Straggler, StragglerOptions, stragglers};

use mlbench_schema::{Discovery, JobsFile, LoadedReports, ReadError, Scoring, TargetTable};
use samples::FileSamples;

/// Why a report could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// Fewer runs than required.
    #[error("found {found} run{s} ({names}), but --min-runs is {required}: the statistics need at least {required} runs of the suite", s = if *found == 1 { "" } else { "s" })]
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

/// Computes a report over files already loaded.
pub fn report(
    reports: &LoadedReports,
    targets: &TargetTable,
    options: &ReportOptions,
) -> Result<(SampleSet, Report), AnalyzeError> {
    report_samples(SampleSet::build(reports, targets), targets, options)
}

/// What [`load_samples`] read.
pub struct LoadedSamples {
    /// The samples.
    pub set: SampleSet,
    /// Every problem met reading the files.
    pub errors: Vec<ReadError>,
    /// Report files of other suites passed over.
    pub other_suites: Vec<String>,
    /// Files not named like reports.
    pub ignored: usize,
    /// Jobs files met among them (not counted in `ignored`).
    pub jobs_files: Vec<String>,
    /// The jobs file the submission ran, picked among them ([`pick_jobs_file`]), or why
    /// none was.
    pub jobs: Result<Option<(String, JobsFile)>, String>,
}

/// Reads the files of a discovery in parallel, extracting samples from each as soon as
/// it is parsed (memory stays small however large the submission).
pub fn load_samples(discovery: Discovery, targets: &TargetTable) -> LoadedSamples {
    let suite = discovery.suite.clone();
    let other_suites = discovery.other_suites.clone();
    let ignored = discovery.ignored;
    let jobs_files = discovery.jobs_files.clone();
    // Jobs files are small (discovery read those it recognised, up to 4 MiB).
    let jobs_bytes: Vec<(String, Vec<u8>)> = discovery
        .jobs_files
        .iter()
        .zip(&discovery.jobs_paths)
        .filter_map(|(name, path)| Some((name.clone(), std::fs::read(path).ok()?)))
        .collect();
    let jobs = pick_jobs_file(&suite, &jobs_bytes);
    let paths: Vec<(std::path::PathBuf, String)> = discovery
        .files
        .iter()
        .map(|f| (f.path.clone(), f.display.clone()))
        .collect();
    let parts = mlbench_schema::load_map(discovery, |file| {
        (
            file.parsed.errors.clone(),
            FileSamples::extract(&file, targets),
        )
    });
    let mut errors = Vec::new();
    let parts = parts
        .into_iter()
        .map(|(e, part)| {
            errors.extend(e);
            part
        })
        .collect();
    let set = SampleSet::assemble(&suite, targets, parts, |file, entry| {
        let (path, display) = &paths[file];
        mlbench_schema::reader::read_file(path, display)
            .entries
            .into_iter()
            .find(|(i, _)| *i == entry)
            .map(|(_, e)| e)
    });
    LoadedSamples {
        set,
        errors,
        other_suites,
        ignored,
        jobs_files,
        jobs,
    }
}

/// Computes a report over samples.
pub fn report_samples(
    set: SampleSet,
    targets: &TargetTable,
    options: &ReportOptions,
) -> Result<(SampleSet, Report), AnalyzeError> {
    if set.samples.is_empty() {
        return Err(AnalyzeError::NoEntries);
    }
    if set.runs.len() < options.min_runs as usize {
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
            required: options.min_runs,
            names,
        });
    }
    let expected = options
        .expected
        .clone()
        .unwrap_or_else(|| Expected::from_targets(targets));
    let report = match options.scoring {
        Scoring::Classic => {
            Report::Classic(classic_report(&set, targets, &expected, options.min_runs)?)
        }
        Scoring::Score => Report::Score(score_report(&set, targets, &expected, options.price)?),
    };
    Ok((set, report))
}
