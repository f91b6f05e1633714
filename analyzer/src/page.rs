//! What a report's HTML page shows of its inputs beside the figures: each whole
//! submission validated, and the power traces. A zip the report already read is taken
//! from the report's intake, not read again.

use crate::energy::page_traces;
use mlbench_results::SubmissionCheck;
use mlbench_schema::telemetry::TELEMETRY_FOLDER;
use mlbench_telemetry::trace::{self, Trace, TraceError};
use mlbench_validator::{Intake, IntakeError, Limits, checks_of_inputs, page_check};
use std::path::{Path, PathBuf};

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
            power: traces_of_intake(zip, intake, energy),
        },
        None => PageInputs {
            checks: checks_of_inputs(paths, min_runs, limits)?,
            power: page_traces(paths, energy, limits.max_bytes),
        },
    })
}

/// [`page_traces`] of a zip already read: its telemetry files copied out of `intake`.
fn traces_of_intake(zip: &Path, intake: &Intake, energy: bool) -> Result<Vec<Trace>, TraceError> {
    if !energy {
        return Ok(Vec::new());
    }
    let in_telemetry = |path: &str| {
        (path.rsplit_once('/'))
            .is_some_and(|(dir, _)| dir.rsplit('/').next() == Some(TELEMETRY_FOLDER))
    };
    let held = |_: &Path| {
        Ok((intake.files.iter())
            .filter(|f| in_telemetry(&f.path))
            .map(|f| (f.path.clone(), f.bytes.clone()))
            .collect())
    };
    let loaded = trace::load_with(&[zip.to_owned()], &held)?;
    Ok(trace::one_per_bench(loaded.traces))
}
