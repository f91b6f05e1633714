//! Reading a submission, a folder or a zip archive, safely: the one walk of a folder
//! ([`tree`]: at most 64 levels, links never followed, only regular files opened), the
//! zip read in place ([`archive`]), the one listing with each file's size known before
//! it is read and the limits applied ([`intake`]), each file's role ([`layout`]), the
//! report files found for the loaders ([`discover`]), and digests streamed in bounded
//! memory ([`digest`]).
//!
//! What the container holds that is not a plain readable file (a link, a FIFO, an entry
//! over the limits, a `..` path, a zip bomb) is a [`Fact`], plain data: the validator
//! turns facts into findings, the loaders refuse a submission with such an error. Of the
//! workspace it depends on `mlbench-schema` only.
#![warn(missing_docs)]

pub mod archive;
pub mod digest;
pub mod discover;
pub mod fact;
pub mod intake;
pub mod layout;
pub mod source;
pub mod tree;

pub use discover::{DiscoverError, Discovery, discover};
pub use fact::{Fact, fact};
pub use intake::{
    Intake, IntakeError, Limits, Listing, Opened, SourceKind, SubmittedFile, list_submission,
    read_submission,
};
