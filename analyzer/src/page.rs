//! What a report's HTML page shows of its inputs beside the figures: each whole
//! submission validated, and the power traces. A zip the report already read is taken
//! from the report's intake, not read again.

use crate::energy::{TraceError, held_traces, page_traces};
use mlbench_results::SubmissionCheck;
use mlbench_results::trace::Trace;
use mlbench_validator::{Intake, IntakeError, Limits, checks_of_inputs, page_check};
use std::path::PathBuf;

/// The page's inputs.
#[derive(Debug)]
pub struct PageInputs {
    /// The validation of each whole submission (a folder, a zip) among the inputs.
    pub checks: Vec<SubmissionCheck>,
    /// The power traces, one per bench, or why they could not be read (the page then
    /// goes without them, not the report).
    pub power: Result<Vec<Trace>, TraceError>,
}

/// What the page of a report of `paths` shows of them, with `min_runs`; `held` is the
/// zip the report read (its path and files), else the paths are read within `limits`.
/// The traces are read only where the report has `energy`.
///
/// # Errors
/// [`IntakeError`]: a submission among `paths` that cannot be read at all.
pub fn page_inputs(
    paths: &[PathBuf],
    held: Option<&(PathBuf, Intake)>,
    energy: bool,
    min_runs: usize,
    limits: &Limits,
) -> Result<PageInputs, IntakeError> {
    Ok(match held {
        Some((zip, intake)) => PageInputs {
            checks: vec![page_check(zip.display().to_string(), intake, min_runs)],
            power: held_traces(zip, intake, energy),
        },
        None => PageInputs {
            checks: checks_of_inputs(paths, min_runs, limits)?,
            power: page_traces(paths, energy, limits.max_bytes),
        },
    })
}
