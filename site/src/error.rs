//! What can go wrong publishing or verifying a site: each error names its file.

use mlbench_schema::class::{Classify, ErrorClass};
use std::path::PathBuf;

/// An error of `history`, `publish` or `verify`.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    /// The store could not be used.
    #[error(transparent)]
    Archive(#[from] mlbench_archive::ArchiveError),
    /// Zips of the store are missing or changed on disk.
    #[error(transparent)]
    Tampered(#[from] mlbench_archive::Tampered),
    /// The history could not be made.
    #[error(transparent)]
    History(#[from] mlbench_analyzer::history::HistoryError),
    /// A round's grid could not be made.
    #[error("round {round}: {source}")]
    Grid {
        /// The round.
        round: String,
        /// Why.
        source: mlbench_analyzer::compare::CompareError,
    },
    /// A page could not be drawn.
    #[error(transparent)]
    Export(#[from] mlbench_export::ExportError),
    /// The suite's tables could not be read (a bug in the shipped tables).
    #[error(transparent)]
    Targets(#[from] mlbench_schema::targets::TargetsError),
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A file of the site to verify could not be read (input, not an output).
    #[error("{}: {source}", path.display())]
    Unreadable {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// `--out` is the store, lies inside it, or holds it.
    #[error("{}: the site would replace or hold the store {}; publish it elsewhere", out.display(), store.display())]
    OverStore {
        /// The site's folder.
        out: PathBuf,
        /// The store's.
        store: PathBuf,
    },
    /// `--out` holds files already.
    #[error("{}: not empty; publish writes a whole site into an empty folder (or replace it with --force)", .0.display())]
    NotEmpty(PathBuf),
    /// A file of the site that should be JSON of a known layout is not.
    #[error("{}: {why}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
}

impl SiteError {
    /// A file of a site that could not be read.
    pub(crate) fn unreadable(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> SiteError {
        let path = path.into();
        move |source| SiteError::Unreadable { path, source }
    }

    /// An I/O error on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> SiteError {
        let path = path.into();
        move |source| SiteError::Io { path, source }
    }
}

impl Classify for SiteError {
    /// A store or a site changed on disk is a finding (exit 1); a store, a folder or a
    /// site file that cannot be used is input (2); an output not written, 3.
    fn class(&self) -> ErrorClass {
        match self {
            SiteError::Archive(e) => e.class(),
            SiteError::Tampered(e) => e.class(),
            SiteError::History(e) => e.class(),
            SiteError::Grid { source, .. } => source.class(),
            SiteError::Export(e) => e.class(),
            SiteError::Targets(e) => e.class(),
            SiteError::Io { .. } => ErrorClass::Internal,
            SiteError::NotEmpty(_)
            | SiteError::OverStore { .. }
            | SiteError::Malformed { .. }
            | SiteError::Unreadable { .. } => ErrorClass::Input,
        }
    }
}
