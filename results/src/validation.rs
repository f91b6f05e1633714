//! What `mlbench validate` found, as one document (`docs/validate-json.md`), the rule
//! catalogue, and SUBMISSION.json (defined beside the packer that writes it).

use mlbench_validator::rules::Rule;
pub use mlbench_validator::submission::SubmissionInfo;
use mlbench_validator::{Finding, Validation};
use serde::ser::{Serialize, SerializeStruct, Serializer};

/// The version of the validation JSON; raised when a field changes meaning or disappears.
pub const VALIDATION_SCHEMA_VERSION: u32 = 1;

/// One submission's validation, named as the user gave it.
#[derive(Debug, Clone)]
pub struct ValidationDoc {
    /// The submission, as given on the command line.
    pub submission: String,
    /// The findings, waivers, summary and versions.
    pub validation: Validation,
}

impl Serialize for ValidationDoc {
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

impl From<&mlbench_validator::Omitted> for OmittedRow {
    fn from(o: &mlbench_validator::Omitted) -> Self {
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

/// The rule catalogue (`validate --list-rules`).
#[derive(Debug, Clone, Copy)]
pub struct RuleList(pub &'static [Rule]);

impl RuleList {
    /// Every rule the validator knows.
    pub fn all() -> RuleList {
        RuleList(mlbench_validator::rules::RULES)
    }
}
