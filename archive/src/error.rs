//! What can go wrong with a store: each error names the store's file or the entry.

use std::path::PathBuf;

/// An error of the store.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// A file or folder of the store could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The index could not be opened, read or written.
    #[error("{}: {source}", path.display())]
    Index {
        /// The index file.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// The index was written by a newer mlbench.
    #[error("{}: index schema_version {found}; this mlbench reads up to {known}", path.display())]
    NewerIndex {
        /// The index file.
        path: PathBuf,
        /// Its version.
        found: u32,
        /// The newest this build reads.
        known: u32,
    },
    /// The same bytes are already archived under another round, label or track.
    #[error(
        "these bytes (sha256 {sha256}) are already archived as #{id}, round {round}, label {label} ({track}): one submission cannot stand for two"
    )]
    SameBytes {
        /// The zip's SHA-256.
        sha256: String,
        /// The entry that has them.
        id: i64,
        /// Its round.
        round: String,
        /// Its label.
        label: String,
        /// Its track.
        track: String,
    },
    /// The round already holds another submission of this label and track.
    #[error(
        "round {round} already holds {label} ({track}) as #{id}, other bytes: `mlbench archive remove {id}` first"
    )]
    LabelTaken {
        /// The round.
        round: String,
        /// The label.
        label: String,
        /// The track.
        track: String,
        /// The entry that holds it.
        id: i64,
    },
    /// No entry has this id or hash prefix.
    #[error("no archived submission {0} (an id as `archive list` prints it, or a hash prefix)")]
    NotFound(String),
    /// Several entries share this hash prefix.
    #[error("{prefix} names several submissions: {}", ids.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(", "))]
    Ambiguous {
        /// The prefix given.
        prefix: String,
        /// The entries it matches.
        ids: Vec<i64>,
    },
    /// The entry was removed already.
    #[error("#{id} was removed on {date}")]
    AlreadyRemoved {
        /// The entry.
        id: i64,
        /// When.
        date: String,
    },
    /// A stored zip's bytes are not those of its address.
    #[error("{}: holds bytes of sha256 {found}, not {expected}: the store was changed on disk (`mlbench archive check`)", path.display())]
    Corrupt {
        /// The zip.
        path: PathBuf,
        /// Its address.
        expected: String,
        /// The hash of what it holds.
        found: String,
    },
}

impl ArchiveError {
    /// An I/O error on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> ArchiveError {
        let path = path.into();
        move |source| ArchiveError::Io { path, source }
    }
}

impl mlbench_schema::class::Classify for ArchiveError {
    /// A store that cannot be read or written is an internal failure (exit 3); a store
    /// changed on disk is a finding (exit 1); what the request names wrongly, or an
    /// index of a newer mlbench, is input (exit 2).
    fn class(&self) -> mlbench_schema::class::ErrorClass {
        use mlbench_schema::class::ErrorClass;
        match self {
            ArchiveError::Io { .. } | ArchiveError::Index { .. } => ErrorClass::Internal,
            ArchiveError::Corrupt { .. } => ErrorClass::Failed,
            ArchiveError::NewerIndex { .. }
            | ArchiveError::SameBytes { .. }
            | ArchiveError::LabelTaken { .. }
            | ArchiveError::NotFound(_)
            | ArchiveError::Ambiguous { .. }
            | ArchiveError::AlreadyRemoved { .. } => ErrorClass::Input,
        }
    }
}
