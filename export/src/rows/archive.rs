//! The archive's listing as a table: one row per entry.

use super::Rows;
use mlbench_results::archive::{ArchiveEntry, ArchiveListing};

/// The columns of [`entry_rows`].
pub const HEADER: [&str; 12] = [
    "id", "round", "label", "track", "GPUs", "runtime", "valid", "received", "released", "removed",
    "bytes", "sha256",
];

/// An entry's validation in a cell: `pass`, `FAIL 3 errors`, `FAIL 1 error, packed with
/// errors`.
pub fn verdict(e: &ArchiveEntry) -> String {
    if e.passed {
        return "pass".into();
    }
    let errors = mlbench_schema::words::count(e.errors as usize, "error", "errors");
    match e.allowed_errors {
        true => format!("FAIL {errors}, packed with errors"),
        false => format!("FAIL {errors}"),
    }
}

/// One row per entry; `short` cuts the hash to 12 digits (for people; CSV keeps it whole).
pub fn entry_rows(listing: &ArchiveListing, short: bool) -> Rows {
    let none = |v: &Option<String>| v.clone().unwrap_or_default();
    let rows = (listing.entries.iter())
        .map(|e| {
            vec![
                e.id.to_string(),
                e.round.clone(),
                e.label.clone(),
                e.track.clone(),
                none(&e.gpus),
                none(&e.runtime),
                verdict(e),
                e.received.clone(),
                none(&e.released),
                none(&e.removed),
                e.bytes.to_string(),
                match short {
                    true => e.sha256.chars().take(12).collect(),
                    false => e.sha256.clone(),
                },
            ]
        })
        .collect();
    let title = format!(
        "{} in {}",
        mlbench_schema::words::count(listing.entries.len(), "submission", "submissions"),
        listing.store
    );
    Rows::new(title, &HEADER, rows)
}
