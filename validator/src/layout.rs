//! What each file of a submission is: the schema's one classifier
//! ([`mlbench_submission::layout`]), applied to the files of an intake.

use mlbench_submission::SubmittedFile;
pub use mlbench_submission::layout::{
    MANIFEST_NAME, Role, SUBMISSION_NAME, base_name, looks_like_jobs_bytes, parent,
};

/// Classifies one file of a submission (its content decides whether a `*.json` is a jobs
/// file).
pub fn classify(file: &SubmittedFile) -> Role {
    mlbench_submission::layout::classify(&file.path, || looks_like_jobs_bytes(&file.bytes))
}
