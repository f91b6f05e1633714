//! `mlbench history`: the store's released entries, their zips checked, read (through the
//! store's cache of each zip's values) and put in series.

use crate::error::SiteError;
use crate::index::SiteEntry;
use mlbench_analyzer::history::{HistoryInput, HistoryOptions, Located, history, load_inputs};
use mlbench_archive::{Store, Tampered};
use mlbench_results::history::History;
use std::path::{Path, PathBuf};

/// A store's history on a day, and what it left out.
#[derive(Debug, Clone)]
pub struct StoreHistory {
    /// The history of the entries out on that day.
    pub history: History,
    /// Entries whose release date is after the day.
    pub unreleased: usize,
    /// Entries removed.
    pub removed: usize,
}

/// The folder of the store's cache of each zip's values (docs/archive.md).
pub fn cache_dir(store: &Store) -> PathBuf {
    store.root().join("cache/values")
}

/// The history of `store`'s entries out on `now`: every zip re-hashed first (one missing
/// or changed is refused, naming it), then read through the store's cache.
pub fn store_history(
    store: &Store,
    now: &str,
    options: &HistoryOptions,
) -> Result<StoreHistory, SiteError> {
    let released = store.released(now)?;
    let problems = store.verify_entries(&released.entries);
    if !problems.is_empty() {
        return Err(Tampered(problems).into());
    }
    let entries: Vec<SiteEntry> = released.entries.iter().map(SiteEntry::of).collect();
    let cache = cache_dir(store);
    let history = history_of(&entries, |sha| store.zip_path(sha), Some(&cache), options)?;
    Ok(StoreHistory {
        history,
        unreleased: released.unreleased,
        removed: released.removed,
    })
}

/// The history of `entries`, each zip at `zip_of(sha256)`.
pub(crate) fn history_of(
    entries: &[SiteEntry],
    zip_of: impl Fn(&str) -> PathBuf,
    cache: Option<&Path>,
    options: &HistoryOptions,
) -> Result<History, SiteError> {
    let located = (entries.iter())
        .map(|e| Located {
            entry: HistoryInput {
                round: e.round.clone(),
                label: e.label.clone(),
                track: e.track.clone(),
                hardware: e.hardware(),
                sha256: e.sha256.clone(),
                benches: Default::default(),
            },
            path: zip_of(&e.sha256),
        })
        .collect();
    let inputs = load_inputs(located, cache)?;
    Ok(history(&inputs, options)?)
}
