//! What a report's HTML page shows of its inputs beside the figures: each whole
//! submission validated, the digests of its provenance, and the power traces. Each
//! submission is the one the report opened (a folder walked once, a zip listed once);
//! a zip the report already read is taken from the report's intake, not read again.

use crate::energy::{TraceError, held_traces, page_traces};
use mlbench_results::SubmissionCheck;
use mlbench_results::trace::Trace;
use mlbench_submission::digest::input_digests;
use mlbench_submission::{Intake, IntakeError, Limits, Opened};
use mlbench_validator::{checks_of_inputs, page_check};
use std::path::{Path, PathBuf};

/// The page's inputs.
#[derive(Debug)]
pub struct PageInputs {
    /// The validation of each whole submission (a folder, a zip) among the inputs.
    pub checks: Vec<SubmissionCheck>,
    /// (path, SHA-256) of every input file, for the page's provenance (a file not read,
    /// a link or a FIFO, is named with why in place of its digest).
    pub digests: Vec<(String, String)>,
    /// The power traces, one per bench, or why they could not be read (the page then
    /// goes without them, not the report).
    pub power: Result<Vec<Trace>, TraceError>,
}

/// What a report read of its inputs that its page reads again, so that each is read once.
#[derive(Debug, Default)]
pub enum Held {
    /// Nothing: the page opens its inputs.
    #[default]
    Nothing,
    /// A zip read whole: its path and files.
    Zip(PathBuf, Intake),
    /// The folders opened (walked once).
    Opened(Vec<Opened>),
}

impl Held {
    /// The zip at `path` with its files `intake` where a `page` will read them.
    pub fn zip(page: bool, path: &Path, intake: Intake) -> Held {
        match page {
            true => Held::Zip(path.to_owned(), intake),
            false => Held::Nothing,
        }
    }
}

/// What the page of a report of `paths` shows of them, with `min_runs`; `held` is what
/// the report read of them (a zip's files, the folders it opened), the other paths are
/// opened within `limits`. The traces are read only where the report has `energy`.
///
/// # Errors
/// [`IntakeError`]: a submission among `paths` that cannot be read at all.
pub fn page_inputs(
    paths: &[PathBuf],
    held: &Held,
    energy: bool,
    min_runs: usize,
    limits: &Limits,
) -> Result<PageInputs, IntakeError> {
    let opened = match held {
        Held::Opened(opened) => &opened[..],
        Held::Nothing | Held::Zip(..) => &[],
    };
    let digests = input_digests(paths, opened, limits);
    Ok(match held {
        Held::Zip(zip, intake) => PageInputs {
            checks: vec![page_check(zip.display().to_string(), intake, min_runs)],
            digests,
            power: held_traces(zip, intake, energy),
        },
        Held::Nothing | Held::Opened(_) => PageInputs {
            checks: checks_of_inputs(paths, opened, min_runs, limits)?,
            digests,
            power: page_traces(paths, energy, limits.max_bytes),
        },
    })
}
