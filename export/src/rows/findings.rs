//! The findings as lines for people and as rows (CSV, Markdown).

use super::plural;
use mlbench_results::validation::{Finding, Omitted, RuleList, Validation, ValidationDoc};
use std::fmt::Write as _;

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
    if v.waived_count() > 0 {
        let _ = write!(line, " ({} waived)", plural(v.waived_count(), "error"));
    }
    line.push('\n');
    line
}

/// A finding's line under its rule's heading.
pub fn line(f: &Finding) -> String {
    let mut out = format!("  {}: ", f.location());
    if f.expected.is_empty() {
        let _ = write!(out, "found {}", f.found);
    } else {
        let _ = write!(out, "expected {}, found {}", f.expected, f.found);
    }
    out
}

/// Findings grouped by rule, each group under its rule's summary (from `rules`) and hint
/// (and how many of the rule's findings were left out of the list, from `omitted`).
pub fn grouped(
    out: &mut String,
    (findings, omitted): (&[Finding], &[Omitted]),
    rules: &RuleList,
    waived: bool,
) {
    let mut i = 0;
    while i < findings.len() {
        let rule = findings[i].rule;
        let group: Vec<&Finding> = findings[i..]
            .iter()
            .take_while(|f| f.rule == rule)
            .collect();
        i += group.len();
        let summary = rules.rule(rule).map_or("", |r| r.summary);
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
        if let Some(o) = omitted
            .iter()
            .find(|o| o.rule == rule && o.waived == waived)
        {
            let _ = writeln!(out, "  … and {} more, not listed", o.count);
        }
        if same_hint && !group[0].hint.is_empty() {
            let _ = writeln!(out, "  hint: {}", group[0].hint);
        }
    }
}

/// The human output: findings grouped by rule (errors first) under the summaries of
/// `rules`, waivers, the summary line. When all is well it is the summary line alone.
pub fn human(v: &Validation, rules: &RuleList) -> String {
    let mut out = String::new();
    let mut ordered = v.findings.clone();
    ordered.sort_by(|a, b| (a.severity, a.sort_key()).cmp(&(b.severity, b.sort_key())));
    grouped(&mut out, (&ordered, &v.omitted), rules, false);
    grouped(&mut out, (&v.waived, &v.omitted), rules, true);
    out.push_str(&summary_line(v));
    out
}

/// A finding in one sentence (SARIF's message).
pub fn message(f: &Finding) -> String {
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

/// One row per finding (waived ones with severity `waived`), columns of [`HEADER`].
pub fn rows(doc: &ValidationDoc) -> Vec<Vec<String>> {
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
    doc.all_findings()
        .map(|(f, waived)| row(f, waived))
        .collect()
}

/// The columns of the findings table.
pub const HEADER: [&str; 8] = [
    "rule", "severity", "file", "entry", "field", "expected", "found", "hint",
];
