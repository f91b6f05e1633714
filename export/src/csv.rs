//! CSV (RFC 4180): one header, one row per record, full precision, empty cells for
//! missing figures. Every column comes from the data, never spliced into finished text.

use crate::rows::findings;
use crate::{ExportError, Exporter, bytes};
use mlbench_results::{Grid, Report, ReportDoc, RuleList, Scaling, ValidationDoc};

/// CSV (`--format csv`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Csv;

/// Quotes a text cell when it needs it.
pub fn text(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// A figure at full precision; empty when missing.
fn cell(x: Option<f64>) -> String {
    x.map_or_else(String::new, |v| format!("{v}"))
}

/// The document: header and rows, each cell quoted as needed.
fn document<S: AsRef<str>>(header: &[&str], rows: impl IntoIterator<Item = Vec<S>>) -> String {
    let mut out = header.join(",");
    out.push('\n');
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| text(c.as_ref())).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

impl Exporter<ReportDoc> for Csv {
    /// The bench table; with `--ci`, two more columns `ci_low,ci_high`; then the precision
    /// section's half-widths and runs needed (empty where unknown).
    fn export(&self, doc: &ReportDoc) -> Result<Vec<u8>, ExportError> {
        let (mut header, mut rows): (Vec<&str>, Vec<Vec<String>>) = match &doc.report {
            Report::Classic(r) => (
                vec!["bench", "n", "target", "result", "sd", "sd_pct", "diff"],
                r.benches
                    .iter()
                    .map(|b| {
                        vec![
                            b.bench.clone(),
                            b.n.to_string(),
                            cell(b.target),
                            cell(b.result),
                            cell(b.sd),
                            cell(b.sd_pct),
                            cell(b.diff),
                        ]
                    })
                    .collect(),
            ),
            Report::Score(r) => (
                vec![
                    "bench",
                    "n",
                    "mean",
                    "sd",
                    "sd_pct",
                    "target",
                    "perf",
                    "perf_target",
                    "sd_target",
                    "perf_pass",
                    "sd_pass",
                ],
                r.benches
                    .iter()
                    .map(|b| {
                        vec![
                            b.bench.clone(),
                            b.n.to_string(),
                            cell(b.mean),
                            cell(b.sd),
                            cell(b.sd_pct),
                            cell(b.target),
                            cell(b.perf),
                            cell(b.perf_target),
                            cell(b.sd_target),
                            b.perf_pass.to_string(),
                            b.sd_pass.to_string(),
                        ]
                    })
                    .collect(),
            ),
        };
        if let Some(ci) = &doc.ci {
            header.extend(["ci_low", "ci_high"]);
            for row in &mut rows {
                let interval = ci.by_bench.get(&row[0]).map(|c| c.ci);
                row.push(cell(interval.map(|c| c[0])));
                row.push(cell(interval.map(|c| c[1])));
            }
        }
        if let Some(p) = &doc.precision {
            header.extend([
                "fixed_half_width",
                "fixed_runs_needed",
                "anytime_half_width",
                "anytime_runs_needed",
            ]);
            for row in &mut rows {
                let bench = p.benches.iter().find(|b| b.bench == row[0]);
                let count = |n: Option<u32>| n.map_or_else(String::new, |n| n.to_string());
                row.push(cell(bench.and_then(|b| b.fixed.half_width)));
                row.push(count(bench.and_then(|b| b.fixed.runs_needed)));
                row.push(cell(bench.and_then(|b| b.anytime.half_width)));
                row.push(count(bench.and_then(|b| b.anytime.runs_needed)));
            }
        }
        bytes(document(&header, rows))
    }
}

impl Exporter<Grid> for Csv {
    /// One row per submission and bench, then one `(overall)` row per submission.
    fn export(&self, grid: &Grid) -> Result<Vec<u8>, ExportError> {
        let tier = |t: Option<usize>| t.map_or_else(String::new, |t| t.to_string());
        let mut rows = Vec::new();
        for v in &grid.vendors {
            for b in &grid.benches {
                if let Some(c) = v.cells.get(b) {
                    rows.push(vec![
                        v.name.clone(),
                        v.track.as_str().to_owned(),
                        b.clone(),
                        cell(c.ratio),
                        cell(c.ci.map(|c| c[0])),
                        cell(c.ci.map(|c| c[1])),
                        c.n.to_string(),
                        c.gpus.to_string(),
                        cell(c.mean),
                        c.missing.to_string(),
                        tier(v.tier),
                    ]);
                }
            }
            rows.push(vec![
                v.name.clone(),
                v.track.as_str().to_owned(),
                "(overall)".into(),
                cell(v.overall),
                cell(v.ci.map(|c| c[0])),
                cell(v.ci.map(|c| c[1])),
                String::new(),
                String::new(),
                String::new(),
                (!v.missing.is_empty()).to_string(),
                tier(v.tier),
            ]);
        }
        let header = [
            "vendor", "track", "bench", "ratio", "ci_low", "ci_high", "n", "gpus", "mean",
            "missing", "tier",
        ];
        bytes(document(&header, rows))
    }
}

impl Exporter<Scaling> for Csv {
    /// One row per submission and bench, then one `(overall)` row per submission.
    fn export(&self, s: &Scaling) -> Result<Vec<u8>, ExportError> {
        let mut rows = Vec::new();
        for r in &s.rows {
            for (bench, c) in &r.benches {
                rows.push(vec![
                    r.label.clone(),
                    r.devices.to_string(),
                    r.nodes.to_string(),
                    bench.clone(),
                    c.devices.to_string(),
                    c.per_device.to_string(),
                    c.throughput.to_string(),
                    cell(c.efficiency),
                ]);
            }
            rows.push(vec![
                r.label.clone(),
                r.devices.to_string(),
                r.nodes.to_string(),
                "(overall)".into(),
                String::new(),
                String::new(),
                String::new(),
                cell(r.efficiency),
            ]);
        }
        let header = [
            "submission",
            "devices",
            "nodes",
            "bench",
            "bench_devices",
            "per_device",
            "throughput",
            "efficiency",
        ];
        bytes(document(&header, rows))
    }
}

impl Exporter<ValidationDoc> for Csv {
    /// One row per finding (waived ones with severity `waived`).
    fn export(&self, doc: &ValidationDoc) -> Result<Vec<u8>, ExportError> {
        bytes(document(&findings::HEADER, findings::rows(doc)))
    }
}

impl Exporter<RuleList> for Csv {
    fn export(&self, list: &RuleList) -> Result<Vec<u8>, ExportError> {
        let rows = list
            .0
            .iter()
            .map(|r| vec![r.id, r.severity.as_str(), r.summary, r.hint]);
        bytes(document(&["rule", "severity", "summary", "hint"], rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{self, text};

    #[test]
    fn classic_report_quotes_awkward_names() {
        insta::assert_snapshot!(text(Csv.export(&testdata::classic_doc())));
    }

    #[test]
    fn score_report_with_intervals() {
        insta::assert_snapshot!(text(Csv.export(&testdata::score_doc())));
    }

    #[test]
    fn interval_columns_follow_each_bench_even_when_a_name_holds_a_newline() {
        // The old splice went line by line: a quoted name with a newline shifted every
        // later row's interval. Built from data, each row keeps its own.
        let mut doc = testdata::score_doc();
        if let Report::Score(r) = &mut doc.report {
            r.benches[0].bench = "two\nlines".into();
        }
        let ci = doc.ci.as_mut().unwrap();
        let c = ci.by_bench.remove("cart").unwrap();
        ci.by_bench.insert("two\nlines".into(), c);
        let out = text(Csv.export(&doc));
        assert!(out.contains("\"two\nlines\",5,1900,"), "{out}");
        assert!(out.contains(",1885.5,1914.25\nscaling,"), "{out}");
        assert!(out.ends_with(",false,false,,\n"), "{out}");
    }

    #[test]
    fn grid() {
        insta::assert_snapshot!(text(Csv.export(&testdata::grid())));
    }

    #[test]
    fn scaling() {
        insta::assert_snapshot!(text(Csv.export(&testdata::scaling())));
    }

    #[test]
    fn findings() {
        insta::assert_snapshot!(text(Csv.export(&testdata::validation())));
    }

    #[test]
    fn rule_list_has_a_row_per_rule() {
        let out = text(Csv.export(&RuleList::all()));
        assert_eq!(
            out.lines().count(),
            1 + mlbench_validator::rules::RULES.len()
        );
    }
}
