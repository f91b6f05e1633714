//! What can go wrong making or reading a data set: each error names the file, and the
//! place in it where there is one.

use std::path::PathBuf;

/// An error of this crate.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// A file or folder could not be read, written or listed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A file is not in the format its data set has.
    #[error("{}: {place}: {what}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// Where in it (`byte 16`, `line 3`, `entry 2`).
        place: String,
        /// What is wrong.
        what: String,
    },
    /// A data set a job reads is missing or partial: the path, and the command that
    /// makes it.
    #[error("{}: {what}; make it with `{command}`", path.display())]
    Missing {
        /// The file or folder that is not there.
        path: PathBuf,
        /// What is missing.
        what: String,
        /// The command that makes it (`mlbench data prepare DIR --bench NAME`).
        command: String,
    },
}

impl DataError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> DataError {
        let path = path.into();
        move |source| DataError::Io { path, source }
    }
}

/// Exit classes: a file that cannot be written or read is an I/O failure (exit 3; the
/// command writes), a file in the wrong format or a missing set is input (exit 2).
impl mlbench_schema::class::Classify for DataError {
    fn class(&self) -> mlbench_schema::class::ErrorClass {
        use mlbench_schema::class::ErrorClass;
        match self {
            DataError::Io { .. } => ErrorClass::Internal,
            DataError::Format { .. } | DataError::Missing { .. } => ErrorClass::Input,
        }
    }
}
