//! Markdown: the terminal's tables for issues, wikis and pull requests.

use crate::rows::{
    Form, Rows, benches, energy as energy_rows, findings, grid as grid_rows, report as report_rows,
};
use crate::{ExportError, Exporter, bytes};
use mlbench_results::{Grid, ReportDoc, RuleList, Scaling, ValidationDoc};
use std::fmt::Write as _;

/// Markdown (`--format markdown`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Markdown;

/// Escapes a cell for a Markdown table.
pub fn escape(cell: &str) -> String {
    cell.replace('|', "\\|").replace('\n', "<br>")
}

/// Appends a table: the first column left-aligned, the others (figures) right; every
/// column left-aligned with `text`.
fn table(out: &mut String, header: &[String], rows: &[Vec<String>], text: bool) {
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| escape(c)).collect();
        format!("| {} |", cells.join(" | "))
    };
    let _ = writeln!(out, "{}", line(header));
    let align: Vec<&str> = (0..header.len())
        .map(|i| if i == 0 || text { ":---" } else { "---:" })
        .collect();
    let _ = writeln!(out, "| {} |", align.join(" | "));
    for row in rows {
        let _ = writeln!(out, "{}", line(row));
    }
    out.push('\n');
}

fn figures(out: &mut String, t: &Rows) {
    table(out, &t.header, &t.rows, false);
}

fn strings(cells: &[&str]) -> Vec<String> {
    cells.iter().map(|c| (*c).to_owned()).collect()
}

impl Exporter<ReportDoc> for Markdown {
    fn export(&self, doc: &ReportDoc) -> Result<Vec<u8>, ExportError> {
        let report = &doc.report;
        let mut out = String::new();
        let _ = writeln!(out, "## {}\n", report_rows::heading(report));
        for line in &doc.notes {
            let _ = writeln!(out, "- {}", escape(line));
        }
        if !doc.notes.is_empty() {
            out.push('\n');
        }
        figures(&mut out, &benches::bench_table(report, Form::People));
        if let Some(t) = report_rows::world_size_rows(report) {
            let _ = writeln!(out, "### {}\n", t.title);
            figures(&mut out, &t);
        }
        let failures = report_rows::failure_rows(report);
        if !failures.is_empty() {
            let _ = writeln!(out, "### Failures\n");
            let rows: Vec<Vec<String>> = failures
                .into_iter()
                .map(|[file, entry, bench, reason]| vec![format!("`{file}`"), entry, bench, reason])
                .collect();
            table(
                &mut out,
                &strings(&["file", "entry", "bench", "reason"]),
                &rows,
                false,
            );
        }
        let _ = writeln!(out, "### Statistics\n");
        let rows: Vec<Vec<String>> = report_rows::statistics_rows(report)
            .into_iter()
            .map(|r| r.to_vec())
            .collect();
        table(
            &mut out,
            &strings(&["statistic", "value", "pass"]),
            &rows,
            false,
        );
        for t in report_rows::per_gpu_tables(report)
            .into_iter()
            .chain(report_rows::fleet_rows(doc))
        {
            let _ = writeln!(out, "### {}\n", t.title);
            figures(&mut out, &t);
        }
        let _ = writeln!(out, "**Result: {}**", report_rows::result_line(doc));
        if let Some(ci) = &doc.ci {
            let t = report_rows::ci_rows(ci);
            let _ = writeln!(out, "## {}\n", t.title);
            figures(&mut out, &t);
        }
        if let Some(p) = &doc.precision {
            let t = report_rows::precision_rows(p);
            let _ = writeln!(out, "## How many runs\n\n{}\n", escape(&t.title));
            figures(&mut out, &t);
        }
        if let Some(line) = report_rows::stopping_line(doc) {
            let _ = writeln!(out, "{}\n", escape(&line));
        }
        if let Some(e) = &doc.energy {
            let t = energy_rows::energy_rows(e);
            let _ = writeln!(out, "## Energy\n\n{}\n", escape(&t.title));
            figures(&mut out, &t);
            for line in energy_rows::notes(e) {
                let _ = writeln!(out, "- {}", escape(&line));
            }
        }
        bytes(out)
    }
}

impl Exporter<Grid> for Markdown {
    fn export(&self, grid: &Grid) -> Result<Vec<u8>, ExportError> {
        let mut out = format!("# {}\n\n", grid_rows::title(grid));
        for n in grid_rows::notes(grid) {
            let _ = writeln!(out, "- {}", escape(&n));
        }
        out.push_str("\n## Overall\n\n");
        figures(&mut out, &grid_rows::overall_rows(grid));
        out.push_str("## Ratio to the baseline, by bench\n\n");
        figures(&mut out, &grid_rows::ratio_rows(grid));
        if let Some(t) = grid_rows::explain_rows(grid) {
            let _ = writeln!(out, "## Explained\n\n{}\n", t.title);
            figures(&mut out, &t);
        }
        bytes(out)
    }
}

impl Exporter<mlbench_results::BatchSweep> for Markdown {
    /// The notes as a list, a table per GPU model, then the best batches.
    fn export(&self, s: &mlbench_results::BatchSweep) -> Result<Vec<u8>, ExportError> {
        use crate::rows::batch_sweep as rows;
        let mut out = format!("## Batch sizes of suite `{}`\n\n", s.suite);
        for line in &s.notes {
            let _ = writeln!(out, "- {}", escape(line));
        }
        out.push('\n');
        for t in rows::point_rows(s).into_iter().chain([rows::best_rows(s)]) {
            let _ = writeln!(out, "### {}\n", t.title);
            figures(&mut out, &t);
        }
        bytes(out)
    }
}

impl Exporter<Scaling> for Markdown {
    fn export(&self, s: &Scaling) -> Result<Vec<u8>, ExportError> {
        let mut out = String::new();
        for t in [
            crate::rows::scaling::overall_rows(s),
            crate::rows::scaling::bench_rows(s),
        ] {
            let _ = writeln!(out, "### {}\n", t.title);
            figures(&mut out, &t);
        }
        bytes(out)
    }
}

impl Exporter<ValidationDoc> for Markdown {
    /// A table of the findings and the summary line.
    fn export(&self, doc: &ValidationDoc) -> Result<Vec<u8>, ExportError> {
        let mut out = String::new();
        let rows = findings::rows(doc);
        if !rows.is_empty() {
            table(&mut out, &strings(&findings::HEADER), &rows, true);
        }
        out.push_str(&findings::summary_line(&doc.validation));
        bytes(out)
    }
}

impl Exporter<mlbench_results::archive::ArchiveListing> for Markdown {
    /// One row per entry (hashes cut to 12 digits).
    fn export(&self, l: &mlbench_results::archive::ArchiveListing) -> Result<Vec<u8>, ExportError> {
        let r = crate::rows::archive::entry_rows(l, true);
        let mut out = format!("**{}**\n\n", escape(&r.title));
        table(&mut out, &r.header, &r.rows, true);
        bytes(out)
    }
}

impl Exporter<mlbench_results::history::History> for Markdown {
    /// The title, then one row per series and round.
    fn export(&self, h: &mlbench_results::history::History) -> Result<Vec<u8>, ExportError> {
        let r = crate::rows::history::history_rows(h, crate::rows::Form::People);
        let mut out = format!("**{}**\n\n", escape(&r.title));
        table(&mut out, &r.header, &r.rows, true);
        bytes(out)
    }
}

impl Exporter<RuleList> for Markdown {
    fn export(&self, list: &RuleList) -> Result<Vec<u8>, ExportError> {
        let rows: Vec<Vec<String>> = list
            .0
            .iter()
            .map(|r| {
                vec![
                    format!("`{}`", r.id),
                    r.severity.as_str().to_owned(),
                    r.summary.to_owned(),
                ]
            })
            .collect();
        let mut out = String::new();
        table(
            &mut out,
            &strings(&["rule", "severity", "checks"]),
            &rows,
            true,
        );
        bytes(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{self, text};

    #[test]
    fn classic_report() {
        insta::assert_snapshot!(text(Markdown.export(&testdata::classic_doc())));
    }

    #[test]
    fn score_report_with_failures_and_intervals() {
        insta::assert_snapshot!(text(Markdown.export(&testdata::score_doc())));
    }

    #[test]
    fn grid() {
        insta::assert_snapshot!(text(Markdown.export(&testdata::grid())));
    }

    #[test]
    fn findings() {
        insta::assert_snapshot!(text(Markdown.export(&testdata::validation())));
    }

    #[test]
    fn a_pipe_or_a_newline_in_a_cell_does_not_break_the_table() {
        assert_eq!(escape("a|b\nc"), "a\\|b<br>c");
    }

    #[test]
    fn rule_list_has_a_row_per_rule() {
        let out = text(Markdown.export(&testdata::rules()));
        assert_eq!(out.lines().count(), 3 + testdata::rules().0.len());
    }
}
