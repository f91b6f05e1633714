//! What a store may publish on a day: its entries not removed whose release date has
//! come, each zip re-hashed before it is read.

use crate::error::ArchiveError;
use crate::store::{Entry, Problem, Store, sha256_hex};

/// The entries of a store that are out on a day, and how many are not.
#[derive(Debug, Clone, PartialEq)]
pub struct Released {
    /// The entries not removed whose release date is on or before the day, by id.
    pub entries: Vec<Entry>,
    /// Entries not removed whose release date is after the day: left out.
    pub unreleased: usize,
    /// Entries removed: left out.
    pub removed: usize,
}

impl Store {
    /// The entries out on `now` (`YYYY-MM-DD`): not removed, released on or before it.
    pub fn released(&self, now: &str) -> Result<Released, ArchiveError> {
        let mut out = Released {
            entries: Vec::new(),
            unreleased: 0,
            removed: 0,
        };
        for e in self.list()? {
            if e.removed.is_some() {
                out.removed += 1;
            } else if e.released.as_deref().is_some_and(|day| day > now) {
                out.unreleased += 1;
            } else {
                out.entries.push(e);
            }
        }
        Ok(out)
    }

    /// Each of `entries` whose zip is missing or no longer hashes to its address: what
    /// must not be read as what it claims to be.
    pub fn verify_entries(&self, entries: &[Entry]) -> Vec<Problem> {
        let mut problems = Vec::new();
        for e in entries {
            let path = self.zip_path(&e.sha256);
            let what = match std::fs::read(&path) {
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    "missing: the index lists it, the store has no such file".to_owned()
                }
                Err(err) => format!("unreadable: {err}"),
                Ok(bytes) => match sha256_hex(&bytes) {
                    found if found == e.sha256 => continue,
                    found => format!("changed on disk: its bytes hash to {found}"),
                },
            };
            problems.push(Problem {
                id: Some(e.id),
                path,
                what,
            });
        }
        problems
    }
}

/// A store's entries refused because their zips are not what the index says.
#[derive(Debug, thiserror::Error)]
#[error(
    "the store's zips are not what its index says (run `mlbench archive check`):\n{}",
    .0.iter().map(|p| format!("  #{} {}: {}", p.id.unwrap_or(0), p.path.display(), p.what)).collect::<Vec<_>>().join("\n")
)]
pub struct Tampered(pub Vec<Problem>);

// A zip changed or lost is a verification difference, as `archive check` says.
mlbench_schema::classify_all!(Failed: Tampered);
