//! The submission validator: intake of a zip or folder, the rules, findings and waivers,
//! and deterministic packing.
#![warn(missing_docs)]

pub mod archive;
pub mod finding;
pub mod intake;
pub mod rules;

pub use finding::{Finding, Severity};
pub use intake::{Intake, IntakeError, Limits, SourceKind, SubmittedFile, read_submission};
