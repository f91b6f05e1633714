//! The archive's listing (`mlbench archive list`, `show`): what the store's index says of
//! each submission it keeps. Plain data; the store is `mlbench_archive`'s.

use serde::Serialize;

/// The listing's JSON layout version (docs/archive.md).
pub const ARCHIVE_SCHEMA_VERSION: u32 = 1;

/// The entries of a store, as `archive list` prints them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArchiveListing {
    /// [`ARCHIVE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The store's folder.
    pub store: String,
    /// Every entry, removed ones included, by id.
    pub entries: Vec<ArchiveEntry>,
}

/// One archived submission, as the index has it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArchiveEntry {
    /// Its id in this store.
    pub id: i64,
    /// The SHA-256 of its zip.
    pub sha256: String,
    /// The zip's size.
    pub bytes: u64,
    /// Round, label and track.
    pub round: String,
    /// The vendor's label.
    pub label: String,
    /// Its track.
    pub track: String,
    /// Its GPUs in a few words (`2 × TITAN RTX`).
    pub gpus: Option<String>,
    /// What it ran on, as the report JSON's `hardware`.
    pub hardware: Option<crate::Hardware>,
    /// Its runtime.
    pub runtime: Option<String>,
    /// Its validation passed.
    pub passed: bool,
    /// Errors and warnings of its validation.
    pub errors: u64,
    /// Warnings.
    pub warnings: u64,
    /// Packed with errors (`SUBMISSION.json`'s `allowed_errors`).
    pub allowed_errors: bool,
    /// The tool that archived it.
    pub tool: String,
    /// The day it was received.
    pub received: String,
    /// The day it may be published.
    pub released: Option<String>,
    /// The day it was removed (its bytes stay).
    pub removed: Option<String>,
}
