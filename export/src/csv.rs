//! CSV (RFC 4180): one header, one row per record, full precision, empty cells for
//! missing figures. Every column comes from the data, never spliced into finished text.

use crate::rows::{benches, findings, raw};
use crate::{ExportError, Exporter, bytes};
use mlbench_results::{Grid, ReportDoc, RuleList, Scaling, ValidationDoc};

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

/// The document: header and rows, each cell quoted as needed.
fn document<H: AsRef<str>, S: AsRef<str>>(
    header: &[H],
    rows: impl IntoIterator<Item = Vec<S>>,
) -> String {
    let header: Vec<&str> = header.iter().map(AsRef::as_ref).collect();
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
    /// The bench table as data ([`benches::bench_data`]): with `--ci`, two more columns
    /// `ci_low,ci_high`; then the precision section's half-widths and runs needed.
    fn export(&self, doc: &ReportDoc) -> Result<Vec<u8>, ExportError> {
        let t = benches::bench_data(doc);
        bytes(document(&t.header, t.rows))
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
                    let mut row = vec![
                        v.name.clone(),
                        v.track.as_str().to_owned(),
                        b.clone(),
                        raw(c.ratio),
                        raw(c.ci.map(|c| c[0])),
                        raw(c.ci.map(|c| c[1])),
                        c.n.to_string(),
                        c.gpus.to_string(),
                        raw(c.mean),
                        c.missing.to_string(),
                        tier(v.tier),
                        grid.per.name().to_owned(),
                    ];
                    row.extend(system(v));
                    rows.push(row);
                }
            }
            let mut overall = vec![
                v.name.clone(),
                v.track.as_str().to_owned(),
                "(overall)".into(),
                raw(v.overall),
                raw(v.ci.map(|c| c[0])),
                raw(v.ci.map(|c| c[1])),
                String::new(),
                String::new(),
                String::new(),
                (!v.missing.is_empty()).to_string(),
                tier(v.tier),
                grid.per.name().to_owned(),
            ];
            overall.extend(system(v));
            rows.push(overall);
        }
        // `per` says what `mean` counts (items per second or per joule), so that a file
        // read on its own says its unit.
        let header = [
            "vendor",
            "track",
            "bench",
            "ratio",
            "ci_low",
            "ci_high",
            "n",
            "gpus",
            "mean",
            "missing",
            "tier",
            "per",
            "valid",
            "errors",
            "gpu_models",
            "gpu_count",
            "hosts",
            "runtime",
        ];
        bytes(document(&header, rows))
    }
}

/// A grid row's validation and system, as CSV cells (`valid`: `pass`, `fail`; empty
/// when the grid was made without them; several models or hosts joined by `;`).
fn system(v: &mlbench_results::grid::VendorRow) -> [String; 6] {
    let validity = v.validity.as_ref();
    let hardware = v.hardware.as_ref();
    let models = hardware.map(|h| h.gpus.iter().map(|g| g.name.as_str()).collect::<Vec<_>>());
    [
        validity.map_or_else(String::new, |x| {
            if x.passed { "pass" } else { "fail" }.into()
        }),
        validity.map_or_else(String::new, |x| x.errors.to_string()),
        models.map_or_else(String::new, |m| m.join(";")),
        hardware.map_or_else(String::new, |h| h.gpu_count.to_string()),
        hardware.map_or_else(String::new, |h| h.hosts.join(";")),
        (v.runtime.as_ref()).map_or_else(String::new, |r| r.short_label()),
    ]
}

impl Exporter<mlbench_results::BatchSweep> for Csv {
    /// A row per GPU model and bench, a column per batch size
    /// ([`crate::rows::batch_sweep::csv_rows`]).
    fn export(&self, s: &mlbench_results::BatchSweep) -> Result<Vec<u8>, ExportError> {
        let t = crate::rows::batch_sweep::csv_rows(s);
        bytes(document(&t.header, t.rows))
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
                    raw(c.efficiency),
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
                raw(r.efficiency),
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

impl Exporter<mlbench_results::archive::ArchiveListing> for Csv {
    /// One row per entry, the whole hash.
    fn export(&self, l: &mlbench_results::archive::ArchiveListing) -> Result<Vec<u8>, ExportError> {
        let r = crate::rows::archive::entry_rows(l, false);
        bytes(document(&r.header, r.rows))
    }
}

impl Exporter<mlbench_results::history::History> for Csv {
    /// One row per series and round, every figure at full precision.
    fn export(&self, h: &mlbench_results::history::History) -> Result<Vec<u8>, ExportError> {
        let r = crate::rows::history::history_rows(h, crate::rows::Form::Data);
        bytes(document(&r.header, r.rows))
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
    use mlbench_results::Report;

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
        let out = text(Csv.export(&testdata::rules()));
        assert_eq!(out.lines().count(), 1 + testdata::rules().0.len());
    }
}
