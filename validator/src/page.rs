//! The validation a page (the report's, the grid's) shows of each submission it was
//! made from: one place, so every page checks its inputs alike.

use crate::validate::{Options, validate, validate_listing};
use mlbench_results::{SubmissionCheck, Validity};
use mlbench_submission::{Intake, IntakeError, Limits, Listing, Opened};
use std::path::PathBuf;

/// The validation a page shows of one submission (`label`, its files `intake`): the
/// default rules with `min_runs`.
pub fn page_check(label: String, intake: &Intake, min_runs: usize) -> SubmissionCheck {
    let options = Options {
        min_runs,
        ..Options::default()
    };
    let validation = validate(intake, &options);
    SubmissionCheck { label, validation }
}

/// [`page_check`] of a submission's `listing`, each file read as the validation goes (a
/// large file is streamed, never held whole): the same validation.
pub fn page_check_listed(label: String, listing: &Listing, min_runs: usize) -> SubmissionCheck {
    let options = Options {
        min_runs,
        ..Options::default()
    };
    let validation = validate_listing(listing, &options);
    SubmissionCheck { label, validation }
}

/// The verdict of a validation already made of `listing` (`check`), with the
/// `allowed_errors` its `SUBMISSION.json` records.
pub fn validity_of_check(check: &SubmissionCheck, listing: &Listing) -> Validity {
    let info = listing.read_again(crate::submission::SUBMISSION_NAME);
    let info = info.and_then(|bytes| crate::SubmissionInfo::from_json(&bytes).ok());
    Validity::of(&check.validation, info.is_some_and(|i| i.allowed_errors))
}

/// The verdict of a validation already made of a zip read whole (`intake`), with the
/// `allowed_errors` its `SUBMISSION.json` records.
pub fn validity_of_intake(check: &SubmissionCheck, intake: &Intake) -> Validity {
    let info = crate::SubmissionInfo::of_files(&intake.files);
    Validity::of(&check.validation, info.is_some_and(|i| i.allowed_errors))
}

/// [`page_check_listed`] of each input that is a whole submission (a folder or a zip):
/// the one among `opened` at its path, else opened here within `limits` (the command's
/// own); report files given one by one are not checked.
///
/// # Errors
/// [`IntakeError`]: a submission that cannot be read at all.
pub fn checks_of_inputs(
    inputs: &[PathBuf],
    opened: &[Opened],
    min_runs: usize,
    limits: &Limits,
) -> Result<Vec<SubmissionCheck>, IntakeError> {
    let whole = |p: &PathBuf| p.is_dir() || mlbench_schema::read_buffer::has_zip_extension(p);
    let mut checks = Vec::new();
    for path in inputs.iter().filter(|p| whole(p)) {
        let label = path.display().to_string();
        let check = match opened.iter().find(|o| o.path() == path) {
            Some(sub) => page_check_listed(label, sub.listing(), min_runs),
            None => page_check_listed(label, &Opened::open(path, limits)?.into_listing(), min_runs),
        };
        checks.push(check);
    }
    Ok(checks)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The findings that name the size limit.
    fn over_limit(check: &SubmissionCheck) -> usize {
        let f = &check.validation.findings;
        f.iter()
            .filter(|f| f.expected.contains("--max-bytes"))
            .count()
    }

    /// A folder is checked within the command's limit, as the command read it; a report
    /// file given on its own is not a submission and has no check.
    #[test]
    fn inputs_are_checked_within_the_commands_limit_and_loose_files_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("sub/output0");
        std::fs::create_dir_all(&run).unwrap();
        let report = run.join("fast_0.json");
        std::fs::write(&report, "[\n]\n".repeat(100)).unwrap();
        let inputs = [report, dir.path().join("sub")];

        let checks = checks_of_inputs(&inputs, &[], 1, &Limits::default()).unwrap();
        let labels: Vec<&str> = checks.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, [inputs[1].display().to_string()]);
        assert_eq!(over_limit(&checks[0]), 0);

        let small = checks_of_inputs(&inputs, &[], 1, &Limits::within(100)).unwrap();
        assert_eq!(
            over_limit(&small[0]),
            1,
            "{:?}",
            small[0].validation.findings
        );
    }
}
