//! The one error type of the crate: what stops a sampler. A source that cannot be opened
//! or read is not an error but a fact ([`crate::Unavailable`], a sample's `failed`).

use std::path::PathBuf;

/// Why a sampler could not start or finish.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// The sampling rate is not a positive finite number of at most 1000 Hz.
    #[error("sampling rate {0} Hz: must be more than 0 and at most 1000")]
    Rate(f64),
    /// The destination (or its `.part` file) is already there; telemetry never replaces a
    /// file.
    #[error("{}: already exists; not overwriting it", .0.display())]
    Exists(PathBuf),
    /// The file could not be created, written or moved into place.
    #[error("{}: cannot write", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The sampler thread could not be started.
    #[error("cannot start the sampler thread")]
    Thread(#[source] std::io::Error),
    /// The sampler thread panicked (a source's library misbehaved); the `.part` file is
    /// left for inspection.
    #[error("{}: the sampler thread panicked; its partial file is left there", .0.display())]
    Panicked(PathBuf),
    /// The finished file could not be read back for its summary.
    #[error(transparent)]
    Read(#[from] mlbench_schema::telemetry::TelemetryReadError),
}
