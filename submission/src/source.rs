//! What every source of a submission (a folder, a zip archive) shares: its files, the
//! limits it is read under, why it cannot be read at all, and what the reads of its files
//! came to. Below both the zip reader ([`crate::archive`]) and the front
//! ([`crate::intake`]), which re-exports the public types.

use crate::fact::Fact;
use std::path::PathBuf;

/// One file of a submission.
#[derive(Debug, Clone)]
pub struct SubmittedFile {
    /// Its path inside the submission: relative, `/`-separated.
    pub path: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl SubmittedFile {
    /// A file at `path` (relative, `/`-separated) holding `bytes`.
    pub fn new(path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        SubmittedFile {
            path: path.into(),
            bytes: bytes.into(),
        }
    }
}

/// Where a submission came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// A folder on disk.
    Folder,
    /// A zip archive, read in place.
    Zip,
}

/// A submission read into memory: its files, sorted by path, and what reading it found.
#[derive(Debug, Clone)]
pub struct Intake {
    /// Folder or zip.
    pub kind: SourceKind,
    /// The files that could be read safely, sorted by path.
    pub files: Vec<SubmittedFile>,
    /// Facts of the container itself (hostile entries, unreadable files…).
    pub facts: Vec<Fact>,
}

/// Limits that keep a hostile submission from exhausting memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Total uncompressed bytes read (default 4 GiB).
    pub max_bytes: u64,
    /// Largest compression ratio accepted for an entry over 1 MiB (default 200).
    pub max_ratio: u64,
    /// Most files (default 100,000).
    pub max_files: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 4 << 30,
            max_ratio: 200,
            max_files: 100_000,
        }
    }
}

impl Limits {
    /// The default limits with at most `max_bytes` read (a command's `--max-bytes`).
    pub fn within(max_bytes: u64) -> Self {
        Limits {
            max_bytes,
            ..Limits::default()
        }
    }
}

/// Why a submission could not be read at all (exit 2, not a fact).
#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    /// The path does not exist.
    #[error("{0}: no such file or folder")]
    NotFound(PathBuf),
    /// The path could not be opened or listed.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Not a folder and not named `.zip`.
    #[error("{0}: not a folder or a .zip file")]
    NotASubmission(PathBuf),
    /// The path is a FIFO, a socket or a device: never opened.
    #[error("{0}: {1}, not a folder or a .zip file")]
    NotRegular(PathBuf, &'static str),
}

// A submission that cannot be opened or read at all is input the user gave.
mlbench_schema::classify_all!(Input: IntakeError);

/// What the reads of a listing's files came to: facts, and the files they leave out
/// (indices into the listing, ascending).
#[derive(Debug, Default)]
pub struct Settled {
    /// The facts of the files that failed.
    pub facts: Vec<Fact>,
    /// The files left out.
    pub dropped: Vec<usize>,
}
