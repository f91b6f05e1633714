//! SARIF 2.1.0, for code-scanning dashboards: one run, the rule catalogue as the driver's
//! rules, each finding a result, waivers as suppressed results.

use crate::rows::findings::message;
use crate::{ExportError, Exporter, Json};
use mlbench_results::Finding;
use mlbench_results::{RuleList, ValidationDoc};
use serde_json::{Value, json};

/// SARIF 2.1.0 (`--format sarif`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Sarif;

fn result(f: &Finding, suppressed: bool) -> Value {
    let mut result = json!({
        "ruleId": f.rule,
        "level": f.severity.as_str(),
        "message": { "text": message(f) },
    });
    if let Some(file) = &f.file {
        let mut location = json!({ "physicalLocation": { "artifactLocation": { "uri": file } } });
        let logical: Vec<String> = f
            .entry
            .map(|e| format!("entry {e}"))
            .into_iter()
            .chain(f.field.clone())
            .collect();
        if !logical.is_empty() {
            location["logicalLocations"] = json!([{ "fullyQualifiedName": logical.join("/") }]);
        }
        result["locations"] = json!([location]);
    }
    if suppressed {
        result["suppressions"] = json!([{ "kind": "external", "justification": "--waive" }]);
    }
    result
}

impl Exporter<ValidationDoc> for Sarif {
    fn export(&self, doc: &ValidationDoc) -> Result<Vec<u8>, ExportError> {
        let rules: Vec<Value> = doc
            .rules
            .0
            .iter()
            .map(|r| {
                json!({
                    "id": r.id,
                    "shortDescription": { "text": r.summary },
                    "help": { "text": r.hint },
                    "defaultConfiguration": { "level": r.severity.as_str() },
                })
            })
            .collect();
        let results: Vec<Value> = doc.all_findings().map(|(f, w)| result(f, w)).collect();
        let sarif = json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": { "driver": {
                    "name": "mlbench",
                    "version": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                }},
                "originalUriBaseIds": {
                    "SUBMISSION": { "description": { "text": doc.submission } }
                },
                "results": results,
            }],
        });
        let mut out = serde_json::to_vec_pretty(&sarif)?;
        out.push(b'\n');
        Ok(out)
    }
}

impl Exporter<RuleList> for Sarif {
    /// The catalogue has no SARIF form of its own: its JSON.
    fn export(&self, list: &RuleList) -> Result<Vec<u8>, ExportError> {
        Json.export(list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    #[test]
    fn results_locations_and_suppressions() {
        let v: Value =
            serde_json::from_slice(&Sarif.export(&testdata::validation()).unwrap()).unwrap();
        let results = v["runs"][0]["results"].as_array().unwrap();
        // The driver's rule list grows with the catalogue: the snapshot keeps the results.
        insta::assert_snapshot!(serde_json::to_string_pretty(results).unwrap());
        assert_eq!(results.len(), 3);
        assert_eq!(results[2]["suppressions"][0]["justification"], "--waive");
        assert_eq!(
            v["runs"][0]["tool"]["driver"]["rules"]
                .as_array()
                .unwrap()
                .len(),
            testdata::rules().0.len()
        );
    }
}
