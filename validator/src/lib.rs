//! The submission validator: the rules, findings and waivers, and deterministic packing.
//!
//! Data flows one way: `mlbench_submission` lists and reads the files (its container
//! facts become findings here: [`finding::of_fact`]), [`layout`] says what each is,
//! [`facts`] parses the report files in parallel and runs the per-entry rules (as each
//! file is read, for a submission validated from its listing), the cross-file [`rules`]
//! run on the facts kept, and [`validate`](mod@validate) applies the waivers.
//! [`submission`] holds the files `pack` adds (SUBMISSION.json, the manifest) and the
//! digests, below both [`validate`](mod@validate) and [`pack`], the act of packing.
#![warn(missing_docs)]

pub mod curve;
pub mod facts;
mod files;
pub mod finding;
pub mod layout;
pub mod pack;
pub mod page;
#[cfg(feature = "git")]
pub mod repo;
#[cfg(feature = "git")]
pub mod repo_oracle;
pub mod rules;
pub mod submission;
pub mod validate;

// The submission's own types, as every caller of the validator hands them in.
pub use mlbench_submission::{
    Intake, IntakeError, Limits, Listing, Opened, SourceKind, SubmittedFile, list_submission,
    read_submission,
};
pub use pack::{PackError, PackOptions, PackOutcome, pack_folder};
pub use page::{
    checks_of_inputs, page_check, page_check_listed, validity_of_check, validity_of_intake,
};
pub use submission::SubmissionInfo;
pub use validate::{
    DEFAULT_MIN_RUNS, LISTED_PER_RULE, Options, Phases, Waiver, validate, validate_listing,
    validate_listing_timed,
};
