//! What `mlbench validate` found, as plain data: findings, the validation and its
//! summary, the rules (the catalogue itself is the validator's), and the document of
//! `validate` (`docs/validate-json.md`).

use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};
use std::collections::BTreeSet;

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
    /// The stable rule id, e.g. `loss.nan` (the validator's catalogue: `mlbench_validator::rules::RULES`).
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

/// The rules whose error means there is no submission to validate at all: the archive
/// cannot be opened, or it holds no report file. Every command exits 2 on such input
/// (docs/exit-codes.md); `validate` still writes its findings.
pub const UNREADABLE: &[&str] = &["archive.unreadable", "reports.none"];

/// Counts describing what was validated.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// The suite.
    pub suite: Option<String>,
    /// Files in the submission.
    pub files: usize,
    /// Report files of the suite.
    pub report_files: usize,
    /// Entries read.
    pub entries: usize,
    /// Runs.
    pub runs: usize,
    /// How the runs were told apart: `folders` (each run's streams in a folder of its
    /// own, or per-test names), or `run_id` (a folder's streams held several runs).
    pub runs_from: String,
    /// GPUs.
    pub gpus: usize,
    /// Distinct bench names.
    pub benches: usize,
    /// The vendor's jobs file used.
    pub jobs_file: Option<String>,
    /// The baselines compared with.
    pub baselines: Option<String>,
}

/// The result of a validation.
#[derive(Debug, Clone, Default)]
pub struct Validation {
    /// Findings not waived, sorted by rule, file, entry, field.
    pub findings: Vec<Finding>,
    /// Errors turned into waivers, sorted the same way.
    pub waived: Vec<Finding>,
    /// How each bench's version was checked against the repository.
    pub versions: Vec<VersionNote>,
    /// What was validated.
    pub summary: Summary,
    /// Findings past the validator's `LISTED_PER_RULE` of their rule, counted and not listed (waived
    /// ones counted apart), by rule.
    pub omitted: Vec<Omitted>,
}

/// The findings of one rule left out of the list: the document stays bounded on any
/// input, and the counts stay exact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Omitted {
    /// The rule.
    pub rule: &'static str,
    /// Its findings' severity.
    pub severity: Severity,
    /// Whether they were waived.
    pub waived: bool,
    /// How many were left out.
    pub count: usize,
}

impl Validation {
    /// Number of errors (waived ones excluded), those left out of the list included.
    pub fn errors(&self) -> usize {
        self.count(Severity::Error)
    }

    fn count(&self, severity: Severity) -> usize {
        let listed = self
            .findings
            .iter()
            .filter(|f| f.severity == severity)
            .count();
        let omitted: usize = (self.omitted.iter())
            .filter(|o| o.severity == severity && !o.waived)
            .map(|o| o.count)
            .sum();
        listed + omitted
    }

    /// Number of waived errors, those left out of the list included.
    pub fn waived_count(&self) -> usize {
        let omitted: usize = self
            .omitted
            .iter()
            .filter(|o| o.waived)
            .map(|o| o.count)
            .sum();
        self.waived.len() + omitted
    }

    /// Whether the submission could not be read at all: an error, not waived, of a rule
    /// of [`UNREADABLE`] (not a zip, no report file in it).
    pub fn unreadable(&self) -> bool {
        self.unreadable_because().is_some()
    }

    /// What the first such error found (`invalid Zip archive: …`, `no report files`).
    pub fn unreadable_because(&self) -> Option<&str> {
        self.findings
            .iter()
            .find(|f| f.severity == Severity::Error && UNREADABLE.contains(&f.rule))
            .map(|f| f.found.as_str())
    }

    /// Number of warnings, those left out of the list included.
    pub fn warnings(&self) -> usize {
        self.count(Severity::Warning)
    }

    /// Number of distinct files the findings are in (the submission as a whole counts once).
    pub fn files_with_findings(&self) -> usize {
        self.findings
            .iter()
            .map(|f| f.file.as_deref())
            .collect::<BTreeSet<_>>()
            .len()
    }
}

/// A rule of the validator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The stable id, `family.name`.
    pub id: &'static str,
    /// Its default severity.
    pub severity: Severity,
    /// What it checks, one line.
    pub summary: &'static str,
    /// The default hint printed with a finding.
    pub hint: &'static str,
}

/// How one bench's version was checked, for the JSON output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VersionNote {
    /// The bench.
    pub bench: String,
    /// The version recorded.
    pub version: String,
    /// The entries recording it.
    pub entries: usize,
    /// How it matched, or the rule it broke.
    pub result: String,
}

/// The version of the validation JSON; raised when a field changes meaning or disappears.
pub const VALIDATION_SCHEMA_VERSION: u32 = 1;

/// One submission's validation, named as the user gave it.
#[derive(Debug, Clone)]
pub struct ValidationDoc {
    /// The submission, as given on the command line.
    pub submission: String,
    /// The findings, waivers, summary and versions.
    pub validation: Validation,
    /// The catalogue it was validated against (for the rules' summaries).
    pub rules: RuleList,
}

impl serde::Serialize for ValidationDoc {
    /// Fields in the order docs/validate-json.md lists them.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = &self.validation;
        let mut doc = s.serialize_struct("ValidationDoc", 9)?;
        doc.serialize_field("schema_version", &VALIDATION_SCHEMA_VERSION)?;
        doc.serialize_field("submission", &self.submission)?;
        doc.serialize_field("errors", &v.errors())?;
        doc.serialize_field("warnings", &v.warnings())?;
        doc.serialize_field("findings", &v.findings)?;
        doc.serialize_field("waived", &v.waived)?;
        // Only when a rule had more findings than are listed: documents stay as they were.
        if v.omitted.is_empty() {
            doc.skip_field("omitted")?;
        } else {
            let omitted: Vec<OmittedRow> = v.omitted.iter().map(OmittedRow::from).collect();
            doc.serialize_field("omitted", &omitted)?;
        }
        doc.serialize_field("summary", &v.summary)?;
        doc.serialize_field("versions", &v.versions)?;
        doc.end()
    }
}

/// One rule's findings left out of the list, as the JSON shows it.
#[derive(serde::Serialize)]
struct OmittedRow {
    rule: &'static str,
    severity: &'static str,
    waived: bool,
    count: usize,
}

impl From<&Omitted> for OmittedRow {
    fn from(o: &Omitted) -> Self {
        OmittedRow {
            rule: o.rule,
            severity: o.severity.as_str(),
            waived: o.waived,
            count: o.count,
        }
    }
}

impl ValidationDoc {
    /// Findings then waived ones, each with whether it was waived.
    pub fn all_findings(&self) -> impl Iterator<Item = (&Finding, bool)> {
        let v = &self.validation;
        v.findings
            .iter()
            .map(|f| (f, false))
            .chain(v.waived.iter().map(|f| (f, true)))
    }
}

/// A rule catalogue (`validate --list-rules`; the validator's is
/// `mlbench_validator::rules::RULES`).
#[derive(Debug, Clone, Copy)]
pub struct RuleList(pub &'static [Rule]);

impl RuleList {
    /// The rule `id`, if the catalogue has it.
    pub fn rule(&self, id: &str) -> Option<&'static Rule> {
        self.0.iter().find(|r| r.id == id)
    }
}

/// A submission's validation verdict, computed once (by the validator, from the listing
/// a command opened) and carried with its figures: `report`, `grid` and `targets` show
/// it; a grid leaves failing rows out of its tiers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Validity {
    /// No error, waived ones aside.
    pub passed: bool,
    /// Errors, not waived.
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
    /// Errors waived (`--waive`).
    pub waived: usize,
    /// `SUBMISSION.json` records that the folder was packed despite errors
    /// (`mlbench pack --allow-errors`).
    pub allowed_errors: bool,
    /// Each rule with errors, by rule id: how many, and where the first one is.
    pub failed: Vec<FailedRule>,
}

/// The [`Validity`] of one submission among a command's inputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubmissionValidity {
    /// The submission as it was given (its path, or its label in a grid).
    pub submission: String,
    /// Its verdict.
    #[serde(flatten)]
    pub validity: Validity,
}

/// One rule's errors in a [`Validity`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedRule {
    /// The rule id, e.g. `loss.nan`.
    pub rule: String,
    /// Its errors.
    pub count: usize,
    /// The first one's place (`output0/fast_0.json: entry 3, batch_loss[3]`).
    pub first: String,
}

impl Validity {
    /// The verdict of `validation`; `allowed_errors` as `SUBMISSION.json` records it.
    pub fn of(validation: &Validation, allowed_errors: bool) -> Validity {
        let mut failed: Vec<FailedRule> = Vec::new();
        let errors = validation
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error);
        for finding in errors {
            match failed.iter_mut().find(|r| r.rule == finding.rule) {
                Some(rule) => rule.count += 1,
                None => failed.push(FailedRule {
                    rule: finding.rule.to_owned(),
                    count: 1,
                    first: finding.location(),
                }),
            }
        }
        let omitted = validation.omitted.iter();
        for o in omitted.filter(|o| o.severity == Severity::Error && !o.waived) {
            if let Some(rule) = failed.iter_mut().find(|r| r.rule == o.rule) {
                rule.count += o.count;
            }
        }
        failed.sort_by(|a, b| a.rule.cmp(&b.rule));
        Validity {
            passed: validation.errors() == 0,
            errors: validation.errors(),
            warnings: validation.warnings(),
            waived: validation.waived_count(),
            allowed_errors,
            failed,
        }
    }

    /// The verdict in a few words: `pass`, `pass, 2 warnings`, `FAIL: 3 errors (loss.nan,
    /// coverage.missing), packed with --allow-errors`.
    pub fn summary(&self) -> String {
        use mlbench_schema::words::count as plural;
        if self.passed {
            return match self.warnings {
                0 => "pass".into(),
                n => format!("pass, {}", plural(n, "warning", "warnings")),
            };
        }
        format!("FAIL: {}", self.errors_text())
    }

    /// The errors in a few words, without a verdict word: `3 errors (loss.nan,
    /// coverage.missing), packed with --allow-errors`.
    pub fn errors_text(&self) -> String {
        use mlbench_schema::words::count as plural;
        let rules: Vec<&str> = self.failed.iter().map(|r| r.rule.as_str()).collect();
        let mut text = plural(self.errors, "error", "errors");
        if !rules.is_empty() {
            text.push_str(&format!(" ({})", rules.join(", ")));
        }
        if self.allowed_errors {
            text.push_str(", packed with --allow-errors");
        }
        text
    }
}

#[cfg(test)]
mod validity_tests {
    use super::*;

    fn error(rule: &'static str, file: &str, entry: usize) -> Finding {
        Finding {
            rule,
            severity: Severity::Error,
            file: Some(file.into()),
            entry: Some(entry),
            field: None,
            expected: String::new(),
            found: String::new(),
            hint: String::new(),
        }
    }

    #[test]
    fn a_verdict_counts_each_rule_and_names_its_first_place() {
        let mut validation = Validation {
            findings: vec![
                error("loss.nan", "output0/fast_0.json", 3),
                error("coverage.missing", "output1/fast_0.json", 0),
                error("loss.nan", "output2/fast_1.json", 7),
            ],
            ..Validation::default()
        };
        validation.omitted.push(Omitted {
            rule: "loss.nan",
            severity: Severity::Error,
            waived: false,
            count: 4,
        });
        let v = Validity::of(&validation, true);
        assert!(!v.passed);
        assert_eq!(v.errors, 7);
        let rules: Vec<(&str, usize, &str)> = (v.failed.iter())
            .map(|r| (r.rule.as_str(), r.count, r.first.as_str()))
            .collect();
        assert_eq!(
            rules,
            [
                ("coverage.missing", 1, "output1/fast_0.json: entry 0"),
                ("loss.nan", 6, "output0/fast_0.json: entry 3"),
            ]
        );
        assert_eq!(
            v.summary(),
            "FAIL: 7 errors (coverage.missing, loss.nan), packed with --allow-errors"
        );
        let clean = Validity::of(&Validation::default(), false);
        assert_eq!((clean.passed, clean.summary().as_str()), (true, "pass"));
    }
}
