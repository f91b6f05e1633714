//! What kind of failure an error is, said by the library that owns the error: each error
//! type implements [`Classify`] (one whose variants differ in kind matches them one by
//! one, with no wildcard, so a new variant needs its class). The binary turns the class
//! into its exit code (docs/exit-codes.md).

/// The kind of a failure, as the exit codes tell them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Findings, or failed criteria (exit 1).
    Failed,
    /// Usage, or input that cannot be read (exit 2).
    Input,
    /// An output that could not be written, or an internal error (exit 3).
    Internal,
}

impl ErrorClass {
    /// The exit status of this class.
    pub fn code(self) -> u8 {
        match self {
            ErrorClass::Failed => 1,
            ErrorClass::Input => 2,
            ErrorClass::Internal => 3,
        }
    }
}

/// An error that says its own class.
pub trait Classify {
    /// The kind of failure this is.
    fn class(&self) -> ErrorClass;
}

/// Implements [`Classify`] for error types every variant of which is of one class.
#[macro_export]
macro_rules! classify_all {
    ($class:ident: $($error:ty),+ $(,)?) => {$(
        impl $crate::class::Classify for $error {
            fn class(&self) -> $crate::class::ErrorClass {
                $crate::class::ErrorClass::$class
            }
        }
    )+};
}

classify_all!(
    Input: crate::destination::DestinationError,
    crate::targets::TargetsError,
    crate::jobs::JobsError,
    crate::scripts::ScriptsError,
);
// An output not written once the work is done; a compiled-in parity table that does not
// read is a bug.
classify_all!(
    Internal: crate::destination::WriteError,
    crate::destination::OutputError,
    crate::runtime::ParityError,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_the_documented_exit_codes() {
        let codes =
            [ErrorClass::Failed, ErrorClass::Input, ErrorClass::Internal].map(ErrorClass::code);
        assert_eq!(codes, [1, 2, 3]);
        let missing = crate::jobs::JobsFile::load(std::path::Path::new("/no/such/jobs.json"));
        assert_eq!(missing.unwrap_err().class(), ErrorClass::Input);
    }
}
