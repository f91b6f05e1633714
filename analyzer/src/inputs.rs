//! What `report` reads of its inputs, each once: a packed zip read in place (alone: its
//! runs are complete in it), or a folder's (or files') report files and its telemetry,
//! with what its HTML page will read again kept ([`Held`]).

use crate::energy::{self, Energy};
use crate::load::{LoadError, LoadedSamples, discover_inputs, load_samples};
use crate::load::{read_intake, samples_of_intake};
use crate::page::Held;
use mlbench_results::{SubmissionCheck, SubmissionValidity};
use mlbench_schema::{TargetTable, Timings};
use mlbench_submission::{Limits, Opened};
use mlbench_validator::{page_check, page_check_listed, validity_of_check, validity_of_intake};
use std::path::{Path, PathBuf};

/// What [`read_report_inputs`] read.
pub struct ReportInputs {
    /// The energy of the runs, where their telemetry gives it.
    pub energy: Option<Energy>,
    /// The samples, with every problem met reading them.
    pub loaded: LoadedSamples,
    /// What the page will read again: the zip's path and files, or the folder opened.
    pub held: Held,
    /// Each whole submission among the inputs (a zip, a folder) validated, once: the
    /// report carries its verdict, the page shows its findings.
    pub checks: Vec<SubmissionCheck>,
    /// The verdict of each of `checks`, with the `allowed_errors` its `SUBMISSION.json`
    /// records.
    pub validity: Vec<SubmissionValidity>,
}

/// The zip among `paths`, when one is given.
///
/// # Errors
/// [`LoadError::ZipNotAlone`]: a zip given with other paths.
pub fn zip_input(paths: &[PathBuf]) -> Result<Option<&Path>, LoadError> {
    let is_zip = |p: &PathBuf| p.is_file() && mlbench_schema::read_buffer::has_zip_extension(p);
    match paths {
        [one] if is_zip(one) => Ok(Some(one)),
        many => match many.iter().find(|p| is_zip(p)) {
            Some(zip) => Err(LoadError::ZipNotAlone(zip.clone())),
            None => Ok(None),
        },
    }
}

/// The samples of the submission at `paths` (of `suite`, or the only one) and its energy:
/// a zip read in place within `max_bytes` (its files kept where a `page` needs them), or
/// the report files (those past `max_bytes` set aside, among the errors) and the
/// telemetry within the same limit. Each phase is timed on `clock`.
///
/// # Errors
/// A zip given with other paths, a zip that cannot be read or is broken, report files
/// that cannot be found or of no one suite ([`LoadError`]).
pub fn read_report_inputs(
    paths: &[PathBuf],
    suite: Option<&str>,
    max_bytes: u64,
    page: bool,
    (targets, clock, min_runs): (&TargetTable, &Timings, u32),
) -> Result<ReportInputs, LoadError> {
    let min_runs = min_runs as usize;
    Ok(match zip_input(paths)? {
        Some(zip) => {
            let intake = read_intake(zip, &Limits::within(max_bytes))?;
            clock.lap("read the zip");
            let loaded = samples_of_intake(&intake, zip, suite, targets)?;
            let energy = energy::energy_of_intake(&intake, &loaded.set.suite);
            let check = page_check(zip.display().to_string(), &intake, min_runs);
            let validity = vec![SubmissionValidity {
                submission: check.label.clone(),
                validity: validity_of_intake(&check, &intake),
            }];
            clock.lap("validate");
            let held = Held::zip(page, zip, intake);
            ReportInputs {
                energy,
                loaded,
                held,
                checks: vec![check],
                validity,
            }
        }
        None => {
            let (mut discovery, opened) = discover_inputs(paths, suite, max_bytes)?;
            let set_aside = discovery.set_aside_over(max_bytes);
            clock.lap("discover");
            let mut loaded = load_samples(discovery, targets);
            loaded.errors.splice(0..0, set_aside);
            // A folder opened for the discovery is read from that walk; other inputs anew.
            let energy = match opened.len() == paths.len() {
                true => energy::energy_of_opened(&opened, &loaded.set.suite),
                false => energy::energy_of_paths(paths, &loaded.set.suite, max_bytes),
            };
            let (checks, validity) = checks_of_opened(paths, &opened, min_runs);
            clock.lap("validate");
            let held = Held::Opened(opened);
            ReportInputs {
                energy,
                loaded,
                held,
                checks,
                validity,
            }
        }
    })
}

/// Each input among `paths` that is a folder the discovery `opened`, validated from that
/// walk with `min_runs`, and its verdict (report files given one by one are not
/// submissions: they are not validated).
fn checks_of_opened(
    paths: &[PathBuf],
    opened: &[Opened],
    min_runs: usize,
) -> (Vec<SubmissionCheck>, Vec<SubmissionValidity>) {
    let folders = paths
        .iter()
        .filter_map(|p| opened.iter().find(|o| o.path() == p));
    folders
        .map(|sub| {
            let label = sub.path().display().to_string();
            let check = page_check_listed(label, sub.listing(), min_runs);
            let validity = SubmissionValidity {
                submission: check.label.clone(),
                validity: validity_of_check(&check, sub.listing()),
            };
            (check, validity)
        })
        .unzip()
}

/// The samples of the submission at `paths` (of `suite`, or the only one) alone, as
/// [`read_report_inputs`] reads them but with no validation, energy or page: a zip read
/// in place within `max_bytes`, or the report files (those past `max_bytes` set aside,
/// among the errors). What `report --by batch_size` and `plot batch-size` read.
///
/// # Errors
/// As [`read_report_inputs`].
pub fn read_samples(
    paths: &[PathBuf],
    suite: Option<&str>,
    max_bytes: u64,
    targets: &TargetTable,
) -> Result<LoadedSamples, LoadError> {
    Ok(match zip_input(paths)? {
        Some(zip) => {
            let intake = read_intake(zip, &Limits::within(max_bytes))?;
            samples_of_intake(&intake, zip, suite, targets)?
        }
        None => {
            let (mut discovery, _) = discover_inputs(paths, suite, max_bytes)?;
            let set_aside = discovery.set_aside_over(max_bytes);
            let mut loaded = load_samples(discovery, targets);
            loaded.errors.splice(0..0, set_aside);
            loaded
        }
    })
}
