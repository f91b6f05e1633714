//! What a report's HTML page shows of its inputs beside the figures: each whole
//! submission validated, the digests of its provenance, and the power traces. Each
//! submission is the one the report opened (a folder walked once, a zip listed once);
//! a zip the report already read is taken from the report's intake, not read again.

use crate::energy::{TraceError, held_traces, opened_traces, page_traces};
use crate::samples::SampleSet;
use crate::views::{gpu_relative, run_means};
use mlbench_results::trace::Trace;
use mlbench_results::{Provenance, ReportDoc, ReportPage, SubmissionCheck};
use mlbench_schema::TargetTable;
use mlbench_submission::digest::input_digests;
use mlbench_submission::{Intake, Limits, Opened};
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

/// What the page of a report of `paths` shows of them: `checks`, the validation the
/// report made of each whole submission among them, and what is read here; `held` is
/// what the report read of them (a zip's files, the folders it opened), the other paths
/// are opened within `limits`. The traces are read only where the report has `energy`.
pub fn page_inputs(
    paths: &[PathBuf],
    held: &Held,
    energy: bool,
    checks: Vec<SubmissionCheck>,
    limits: &Limits,
) -> PageInputs {
    let opened = match held {
        Held::Opened(opened) => &opened[..],
        Held::Nothing | Held::Zip(..) => &[],
    };
    let digests = input_digests(paths, opened, limits);
    let power = match held {
        Held::Zip(zip, intake) => held_traces(zip, intake, energy),
        Held::Nothing | Held::Opened(_) => match opened.len() == paths.len() {
            true => opened_traces(opened, energy),
            false => page_traces(paths, energy, limits.max_bytes),
        },
    };
    PageInputs {
        checks,
        digests,
        power,
    }
}

/// The HTML page of a report: `doc`, the figures of `set` against `targets`, and what
/// [`page_inputs`] reads of `paths` (`held`: what the report read of them) within
/// `limits`, with `checks`, the report's validation of each whole submission;
/// `provenance` makes the page's provenance of the digests. Power traces that cannot be
/// read cost the page its section, not the report: why is handed back beside the page.
pub fn report_page(
    (set, targets, doc): (&SampleSet, &TargetTable, &ReportDoc),
    (paths, held): (&[PathBuf], &Held),
    (limits, checks): (&Limits, Vec<SubmissionCheck>),
    provenance: impl FnOnce(Vec<(String, String)>) -> Provenance,
) -> (ReportPage, Option<TraceError>) {
    let inputs = page_inputs(paths, held, doc.energy.is_some(), checks, limits);
    let (power, no_power) = match inputs.power {
        Ok(power) => (power, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    let page = ReportPage {
        suite: set.suite.clone(),
        gpus: (!set.devices.is_empty()).then(|| gpu_relative(set)),
        runs: run_means(set, targets),
        gpu_model: targets.gpu_model.clone(),
        checks: inputs.checks,
        power,
        provenance: provenance(inputs.digests),
        doc: doc.clone(),
    };
    (page, no_power)
}
