//! The exit-code policy, in one place (docs/exit-codes.md): 0 ok; 1 findings, or failed
//! criteria with `--check`; 2 usage, or input that cannot be read; 3 an output that could
//! not be written, or an internal error.

use crate::output::OutputError;

/// The line every command's `--help` ends with.
pub const HELP: &str = "Exit codes: 0 ok; 1 findings, or failed criteria with --check; 2 usage, or input \
that cannot be read; 3 an output that could not be written, or an internal error \
(docs/exit-codes.md).";

/// Findings, or failed criteria with `--check`.
pub const FAILED: u8 = 1;
/// Usage, or input that cannot be read.
pub const INPUT: u8 = 2;
/// An output that could not be written, or an internal error.
pub const INTERNAL: u8 = 3;

/// The exit status of an error that ended a command: 3 when some cause in its chain is an
/// output that could not be written, a presentation that failed, or a failure the
/// library calls a bug; 2 otherwise.
pub fn code_of(error: &anyhow::Error) -> u8 {
    let internal = error.chain().any(|cause| {
        cause.is::<OutputError>()
            || cause.is::<mlbench_export::ExportError>()
            || matches!(
                cause.downcast_ref::<mlbench_analyzer::AnalyzeError>(),
                Some(mlbench_analyzer::AnalyzeError::Polars(_))
            )
    });
    if internal { INTERNAL } else { INPUT }
}

/// How a command ended, when it did not fail outright.
pub enum Outcome {
    /// Everything passed.
    Ok,
    /// Criteria failed or findings were made (exit 1).
    Failed,
}

/// An error that ended a command, with the exit status it maps to (`Failure` in the
/// models is a failed bench entry; this is not one).
pub struct CommandError {
    /// The error chain.
    pub error: anyhow::Error,
    /// The exit status.
    pub code: u8,
}

impl<E: Into<anyhow::Error>> From<E> for CommandError {
    fn from(e: E) -> Self {
        let error = e.into();
        CommandError {
            code: code_of(&error),
            error,
        }
    }
}
