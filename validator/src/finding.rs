//! Findings: what a rule found, where, and what was expected.

use serde::Serialize;

/// How bad a finding is: errors fail the validation (exit 1), warnings do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Fails the submission.
    Error,
    /// Worth a look; does not fail the submission.
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One problem found in a submission.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The stable rule id, e.g. `loss.nan` (see [`crate::rules::RULES`]).
    pub rule: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// The file inside the submission (`/`-separated, relative to its root); `None` when the
    /// finding is about the submission as a whole.
    pub file: Option<String>,
    /// The index of the entry in the file (0-based), where it applies.
    pub entry: Option<usize>,
    /// The field, e.g. `batch_loss[17]` or `train_item.avg`, where it applies.
    pub field: Option<String>,
    /// What was expected.
    pub expected: String,
    /// What was found.
    pub found: String,
    /// How to fix it or what it means.
    pub hint: String,
}

impl Finding {
    /// A finding of `rule` with its catalogued severity and hint; refine with the setters.
    ///
    /// # Panics
    /// Never for the ids in [`crate::rules::RULES`]; an unknown id is a programming error
    /// caught by the unit test that walks every rule.
    pub fn new(rule: &'static str, expected: impl Into<String>, found: impl Into<String>) -> Self {
        let info = crate::rules::rule(rule);
        Finding {
            rule,
            severity: info.map_or(Severity::Error, |r| r.severity),
            file: None,
            entry: None,
            field: None,
            expected: expected.into(),
            found: found.into(),
            hint: info.map_or_else(String::new, |r| r.hint.to_owned()),
        }
    }

    /// Sets the file.
    pub fn file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }

    /// Sets the entry index.
    pub fn entry(mut self, entry: usize) -> Self {
        self.entry = Some(entry);
        self
    }

    /// Sets the field.
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Replaces the catalogued hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = hint.into();
        self
    }

    /// Sets the severity (for rules whose severity depends on options, e.g. the track).
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Where it applies, for one-line output: `file`, `file: entry 3`, `file: entry 3: field`.
    pub fn location(&self) -> String {
        let mut out = self.file.clone().unwrap_or_else(|| "(submission)".into());
        if let Some(entry) = self.entry {
            out.push_str(&format!(": entry {entry}"));
        }
        if let Some(field) = &self.field {
            out.push_str(&format!(": {field}"));
        }
        out
    }

    /// The order findings are listed in: rule, file, entry, field.
    pub fn sort_key(&self) -> (&str, &str, Option<usize>, &str) {
        (
            self.rule,
            self.file.as_deref().unwrap_or(""),
            self.entry,
            self.field.as_deref().unwrap_or(""),
        )
    }
}
