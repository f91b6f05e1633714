//! Findings for people (grouped lines), JSON (docs/validate-json.md), SARIF 2.1.0, CSV
//! and Markdown.

use crate::cli::FindingsFormat;
use mlbench_validator::rules::RULES;
use mlbench_validator::{Finding, Validation};
use serde_json::json;
use std::fmt::Write as _;

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// `N errors, M warnings in K files` (K = files in the submission), plus the waivers.
pub fn summary_line(v: &Validation) -> String {
    let mut line = format!(
        "{}, {} in {}",
        plural(v.errors(), "error"),
        plural(v.warnings(), "warning"),
        plural(v.summary.files, "file")
    );
    if v.summary.runs_from == "run_id" {
        let _ = write!(
            line,
            " ({}, told apart by run_id)",
            plural(v.summary.runs, "run")
        );
    }
    if !v.waived.is_empty() {
        let _ = write!(line, " ({} waived)", plural(v.waived.len(), "error"));
    }
    line.push('\n');
    line
}

fn line(f: &Finding) -> String {
    let mut out = format!("  {}: ", f.location());
    if f.expected.is_empty() {
        let _ = write!(out, "found {}", f.found);
    } else {
        let _ = write!(out, "expected {}, found {}", f.expected, f.found);
    }
    out
}

fn grouped(out: &mut String, findings: &[Finding], waived: bool) {
    let mut i = 0;
    while i < findings.len() {
        let rule = findings[i].rule;
        let group: Vec<&Finding> = findings[i..]
            .iter()
            .take_while(|f| f.rule == rule)
            .collect();
        i += group.len();
        let summary = mlbench_validator::rules::rule(rule).map_or("", |r| r.summary);
        let level = if waived {
            "waived"
        } else {
            group[0].severity.as_str()
        };
        let _ = writeln!(out, "{level}[{rule}]: {summary}");
        let same_hint = group.iter().all(|f| f.hint == group[0].hint);
        for f in &group {
            let _ = writeln!(out, "{}", line(f));
            if !same_hint && !f.hint.is_empty() {
                let _ = writeln!(out, "    hint: {}", f.hint);
            }
        }
        if same_hint && !group[0].hint.is_empty() {
            let _ = writeln!(out, "  hint: {}", group[0].hint);
        }
    }
}

/// The human output: findings grouped by rule (errors first), waivers, the summary line.
/// When all is well it is the summary line alone.
pub fn human(v: &Validation) -> String {
    let mut out = String::new();
    let mut ordered = v.findings.clone();
    ordered.sort_by(|a, b| (a.severity, a.sort_key()).cmp(&(b.severity, b.sort_key())));
    grouped(&mut out, &ordered, false);
    grouped(&mut out, &v.waived, true);
    out.push_str(&summary_line(v));
    out
}

/// The JSON document; fields in the order docs/validate-json.md lists them.
#[derive(serde::Serialize)]
struct JsonDoc<'a> {
    submission: &'a str,
    errors: usize,
    warnings: usize,
    findings: &'a [Finding],
    waived: &'a [Finding],
    summary: &'a mlbench_validator::Summary,
    versions: &'a [mlbench_validator::rules::versions::VersionNote],
}

/// The JSON document of docs/validate-json.md.
pub fn json(submission: &str, v: &Validation) -> anyhow::Result<String> {
    let doc = JsonDoc {
        submission,
        errors: v.errors(),
        warnings: v.warnings(),
        findings: &v.findings,
        waived: &v.waived,
        summary: &v.summary,
        versions: &v.versions,
    };
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    Ok(text)
}

fn message(f: &Finding) -> String {
    let mut text = if f.expected.is_empty() {
        format!("found {}", f.found)
    } else {
        format!("expected {}, found {}", f.expected, f.found)
    };
    if let Some(field) = &f.field {
        text = format!("{field}: {text}");
    }
    if let Some(entry) = f.entry {
        text = format!("entry {entry}: {text}");
    }
    if !f.hint.is_empty() {
        let _ = write!(text, " ({})", f.hint);
    }
    text
}

fn sarif_result(f: &Finding, suppressed: bool) -> serde_json::Value {
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

/// SARIF 2.1.0: one run, the rule catalogue as the driver's rules, waivers as suppressed results.
pub fn sarif(submission: &str, v: &Validation) -> anyhow::Result<String> {
    let rules: Vec<serde_json::Value> = RULES
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
    let results: Vec<serde_json::Value> = v
        .findings
        .iter()
        .map(|f| sarif_result(f, false))
        .chain(v.waived.iter().map(|f| sarif_result(f, true)))
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "mlbench",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "originalUriBaseIds": { "SUBMISSION": { "description": { "text": submission } } },
            "results": results,
        }],
    });
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    Ok(text)
}

fn rows(v: &Validation) -> Vec<Vec<String>> {
    let row = |f: &Finding, waived: bool| {
        vec![
            f.rule.to_owned(),
            if waived {
                "waived".to_owned()
            } else {
                f.severity.as_str().to_owned()
            },
            f.file.clone().unwrap_or_default(),
            f.entry.map(|e| e.to_string()).unwrap_or_default(),
            f.field.clone().unwrap_or_default(),
            f.expected.clone(),
            f.found.clone(),
            f.hint.clone(),
        ]
    };
    v.findings
        .iter()
        .map(|f| row(f, false))
        .chain(v.waived.iter().map(|f| row(f, true)))
        .collect()
}

const HEADER: [&str; 8] = [
    "rule", "severity", "file", "entry", "field", "expected", "found", "hint",
];

/// One row per finding (waived ones with severity `waived`).
pub fn csv(v: &Validation) -> String {
    let mut out = HEADER.join(",");
    out.push('\n');
    for row in rows(v) {
        let cells: Vec<String> = row.iter().map(|c| super::csv::text(c)).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// A Markdown table of the findings and the summary line.
pub fn markdown(v: &Validation) -> String {
    let mut out = String::new();
    let rows = rows(v);
    if !rows.is_empty() {
        let header: Vec<String> = HEADER.iter().map(|h| (*h).to_owned()).collect();
        super::markdown::md_text_table(&mut out, &header, &rows);
    }
    out.push_str(&summary_line(v));
    out
}

/// The rule catalogue in the requested format (human = aligned lines).
pub fn rules_list(format: FindingsFormat) -> anyhow::Result<String> {
    let mut out = String::new();
    match format {
        FindingsFormat::Json | FindingsFormat::Sarif => {
            let list: Vec<serde_json::Value> = RULES
                .iter()
                .map(|r| json!({"rule": r.id, "severity": r.severity.as_str(), "summary": r.summary, "hint": r.hint}))
                .collect();
            out = serde_json::to_string_pretty(&list)?;
            out.push('\n');
        }
        FindingsFormat::Csv => {
            out.push_str("rule,severity,summary,hint\n");
            for r in RULES {
                let _ = writeln!(
                    out,
                    "{},{},{},{}",
                    r.id,
                    r.severity.as_str(),
                    super::csv::text(r.summary),
                    super::csv::text(r.hint)
                );
            }
        }
        FindingsFormat::Markdown => {
            let header: Vec<String> = ["rule", "severity", "checks"]
                .iter()
                .map(|h| (*h).to_owned())
                .collect();
            let rows: Vec<Vec<String>> = RULES
                .iter()
                .map(|r| {
                    vec![
                        format!("`{}`", r.id),
                        r.severity.as_str().to_owned(),
                        r.summary.to_owned(),
                    ]
                })
                .collect();
            super::markdown::md_text_table(&mut out, &header, &rows);
        }
        FindingsFormat::Human => {
            let width = RULES.iter().map(|r| r.id.len()).max().unwrap_or(0);
            for r in RULES {
                let _ = writeln!(
                    out,
                    "{:width$}  {:7}  {}",
                    r.id,
                    r.severity.as_str(),
                    r.summary
                );
            }
        }
    }
    Ok(out)
}
