//! What reading a submission found about its container: a link, a FIFO, a name that is
//! not UTF-8, an entry over the limits, a damaged archive. Plain data: each fact carries
//! the id of the validator's rule it stands for, and the validator turns it into a
//! finding (severity and hint from its catalogue); the loaders refuse a submission with
//! such an error, `validate` reports them all.

/// One fact about a submission's container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// The id of the validator's rule it is a case of (`file.symlink`, `archive.too-large`…).
    pub rule: &'static str,
    /// The file inside the submission (`/`-separated, relative to its root); `None` for
    /// the container as a whole.
    pub file: Option<String>,
    /// What was expected.
    pub expected: String,
    /// What was found.
    pub found: String,
}

impl Fact {
    /// Sets the file.
    pub fn file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }
}

/// A fact of rule `rule`: `expected`, `found` instead.
pub fn fact(rule: &'static str, expected: impl Into<String>, found: impl Into<String>) -> Fact {
    Fact {
        rule,
        file: None,
        expected: expected.into(),
        found: found.into(),
    }
}
