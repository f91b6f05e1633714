//! JSON: each model's serde form, pretty-printed, with a final newline. The contracts are
//! documented in docs/report-json.md, docs/grid-json.md and docs/validate-json.md.

use crate::{ExportError, Exporter};
use mlbench_results::{Grid, ReportDoc, RuleList, Scaling, ValidationDoc};
use serde::Serialize;

/// JSON (`--format json`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Json;

fn pretty<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, ExportError> {
    let mut out = serde_json::to_vec_pretty(value)?;
    out.push(b'\n');
    Ok(out)
}

impl Exporter<ReportDoc> for Json {
    fn export(&self, doc: &ReportDoc) -> Result<Vec<u8>, ExportError> {
        pretty(doc)
    }
}

impl Exporter<Grid> for Json {
    fn export(&self, grid: &Grid) -> Result<Vec<u8>, ExportError> {
        pretty(grid)
    }
}

impl Exporter<mlbench_results::BatchSweep> for Json {
    fn export(&self, s: &mlbench_results::BatchSweep) -> Result<Vec<u8>, ExportError> {
        pretty(s)
    }
}

impl Exporter<Scaling> for Json {
    fn export(&self, s: &Scaling) -> Result<Vec<u8>, ExportError> {
        pretty(s)
    }
}

impl Exporter<ValidationDoc> for Json {
    fn export(&self, doc: &ValidationDoc) -> Result<Vec<u8>, ExportError> {
        pretty(doc)
    }
}

/// One rule of the catalogue as JSON.
#[derive(Serialize)]
struct RuleJson {
    rule: &'static str,
    severity: &'static str,
    summary: &'static str,
    hint: &'static str,
}

impl Exporter<mlbench_results::archive::ArchiveListing> for Json {
    /// The listing's serde form (docs/archive.md).
    fn export(&self, l: &mlbench_results::archive::ArchiveListing) -> Result<Vec<u8>, ExportError> {
        pretty(l)
    }
}

impl Exporter<mlbench_results::history::History> for Json {
    /// The history's serde form (docs/archive.md).
    fn export(&self, h: &mlbench_results::history::History) -> Result<Vec<u8>, ExportError> {
        pretty(h)
    }
}

impl Exporter<RuleList> for Json {
    fn export(&self, list: &RuleList) -> Result<Vec<u8>, ExportError> {
        let rules: Vec<RuleJson> = list
            .0
            .iter()
            .map(|r| RuleJson {
                rule: r.id,
                severity: r.severity.as_str(),
                summary: r.summary,
                hint: r.hint,
            })
            .collect();
        pretty(&rules)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    fn value(bytes: Result<Vec<u8>, ExportError>) -> serde_json::Value {
        serde_json::from_slice(&bytes.unwrap()).unwrap()
    }

    #[test]
    fn score_report() {
        insta::assert_snapshot!(
            String::from_utf8(Json.export(&testdata::score_doc()).unwrap()).unwrap()
        );
    }

    #[test]
    fn every_document_leads_with_its_schema_version() {
        use mlbench_results::{grid::GRID_SCHEMA_VERSION, report::REPORT_SCHEMA_VERSION};
        for (doc, version) in [
            (Json.export(&testdata::classic_doc()), REPORT_SCHEMA_VERSION),
            (Json.export(&testdata::grid()), GRID_SCHEMA_VERSION),
            (Json.export(&testdata::validation()), 1),
        ] {
            let text = String::from_utf8(doc.unwrap()).unwrap();
            let key = text.lines().nth(1).unwrap().trim();
            assert!(
                key.starts_with(&format!("\"schema_version\": {version}")),
                "{text}"
            );
        }
    }

    #[test]
    fn report_without_intervals_has_no_ci_key_and_notes_stay_out() {
        let v = value(Json.export(&testdata::classic_doc()));
        assert!(v.get("ci").is_none());
        assert!(v.get("notes").is_none());
        assert_eq!(v["statistics"]["benches_usable"], 2);
        assert_eq!(v["statistics"]["deviation_limit"], 0.05);
        assert_eq!(v["stragglers"], serde_json::json!([]));
    }

    #[test]
    fn intervals_serialize_as_the_map_alone() {
        let v = value(Json.export(&testdata::score_doc()));
        assert_eq!(
            v["ci"],
            serde_json::json!({"cart": {
                "statistic": "pooled mean of run × GPU values",
                "n": 5,
                "result": 1900.0,
                "ci": [1885.5, 1914.25]
            }})
        );
    }

    #[test]
    fn grid() {
        insta::assert_snapshot!(
            String::from_utf8(Json.export(&testdata::grid()).unwrap()).unwrap()
        );
    }

    #[test]
    fn findings() {
        insta::assert_snapshot!(
            String::from_utf8(Json.export(&testdata::validation()).unwrap()).unwrap()
        );
    }
}
