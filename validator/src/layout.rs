//! What each file of a submission is: the schema's one classifier
//! ([`mlbench_schema::layout`]), applied to the files of an intake.

use crate::intake::SubmittedFile;
pub use mlbench_schema::layout::{
    MANIFEST_NAME, Role, SUBMISSION_NAME, base_name, looks_like_jobs_bytes, parent,
};

/// Classifies one file of a submission (its content decides whether a `*.json` is a jobs
/// file).
pub fn classify(file: &SubmittedFile) -> Role {
    mlbench_schema::layout::classify(&file.path, || looks_like_jobs_bytes(&file.bytes))
}
