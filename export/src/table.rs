//! For a terminal: comfy-table tables, the statistics block and the verdict in words; the
//! findings as lines grouped by rule.

use crate::rows::{
    Form, Rows, benches, energy as energy_rows, findings, grid as grid_rows, report as report_rows,
};
use crate::{ExportError, Exporter, bytes};
use comfy_table::{CellAlignment, presets};
use mlbench_results::{Grid, ReportDoc, RuleList, Scaling, ValidationDoc};
use std::fmt::Write as _;

/// Terminal tables (`--format table`; `human` for findings).
#[derive(Debug, Clone, Copy, Default)]
pub struct Table;

/// A rule under the header and around the table, none between rows.
const STYLE: comfy_table::TableStyle =
    presets::UTF8_HORIZONTAL_ONLY.row_separator(comfy_table::LineStyle::none());

/// A table in the house style, numbers right-aligned (the first column is a name).
pub fn comfy(header: Vec<String>, rows: Vec<Vec<String>>) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(STYLE);
    t.set_header(header);
    for row in rows {
        t.add_row(row);
    }
    for i in 1..t.column_count() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// The verdicts of a table rendered for a terminal, in colour: PASS green, FAIL red,
/// SLOW yellow (ANSI codes, which take no column, so the layout is unchanged). Only whole
/// words are painted; the binary decides when (a terminal, and no `NO_COLOR`).
pub fn paint_verdicts(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let code = match word.as_str() {
            "PASS" => Some("32"),
            "FAIL" => Some("31"),
            "SLOW" => Some("33"),
            _ => None,
        };
        match code {
            Some(code) => {
                let _ = write!(out, "\x1b[1;{code}m{word}\x1b[0m");
            }
            None => out.push_str(word),
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

fn titled(out: &mut String, t: Rows) {
    let _ = writeln!(out, "{}\n{}\n", t.title, comfy(t.header, t.rows));
}

impl Exporter<ReportDoc> for Table {
    fn export(&self, doc: &ReportDoc) -> Result<Vec<u8>, ExportError> {
        let report = &doc.report;
        let mut out = String::new();
        let _ = writeln!(out, "{}", report_rows::heading(report));
        for line in &doc.notes {
            let _ = writeln!(out, "  {line}");
        }
        out.push('\n');
        let t = benches::bench_table(report, Form::People);
        let _ = writeln!(out, "{}\n", comfy(t.header, t.rows));
        if let Some(t) = report_rows::world_size_rows(report) {
            titled(&mut out, t);
        }
        let failures = report_rows::failure_rows(report);
        if !failures.is_empty() {
            let _ = writeln!(out, "Failures");
            for [file, entry, bench, reason] in failures {
                let _ = writeln!(out, "  {file}#{entry} {bench}: {reason}");
            }
            out.push('\n');
        }
        let mut stats = comfy_table::Table::new();
        stats.load_style(presets::NOTHING);
        stats.set_header(vec!["Statistics", "Value", "Pass"]);
        for row in report_rows::statistics_rows(report) {
            stats.add_row(row.to_vec());
        }
        let _ = writeln!(out, "{stats}\n");
        for t in report_rows::per_gpu_tables(report) {
            titled(&mut out, t);
        }
        if let Some(t) = report_rows::fleet_rows(doc) {
            titled(&mut out, t);
        }
        let _ = writeln!(out, "Result: {}", report_rows::result_line(doc));
        if let Some(ci) = &doc.ci {
            let t = report_rows::ci_rows(ci);
            let _ = writeln!(out, "\n{}\n{}", t.title, comfy(t.header, t.rows));
        }
        if let Some(p) = &doc.precision {
            let t = report_rows::precision_rows(p);
            let _ = writeln!(out, "\n{}\n{}", t.title, comfy(t.header, t.rows));
        }
        if let Some(line) = report_rows::stopping_line(doc) {
            let _ = writeln!(out, "{line}");
        }
        if let Some(e) = &doc.energy {
            let t = energy_rows::energy_rows(e);
            let _ = writeln!(out, "\n{}\n{}", t.title, comfy(t.header, t.rows));
            for line in energy_rows::notes(e) {
                let _ = writeln!(out, "  {line}");
            }
        }
        bytes(out)
    }
}

impl Exporter<Grid> for Table {
    fn export(&self, grid: &Grid) -> Result<Vec<u8>, ExportError> {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}: {}",
            grid_rows::title(grid),
            crate::rows::plural(grid.vendors.len(), "submission")
        );
        for n in grid_rows::notes(grid) {
            let _ = writeln!(out, "  {n}");
        }
        out.push('\n');
        let t = grid_rows::overall_rows(grid);
        let _ = writeln!(out, "{}\n", comfy(t.header, t.rows));
        let t = grid_rows::ratio_rows(grid);
        let _ = writeln!(out, "{}", comfy(t.header, t.rows));
        if let Some(t) = grid_rows::explain_rows(grid) {
            let _ = writeln!(out, "\n{}\n{}", t.title, comfy(t.header, t.rows));
        }
        bytes(out)
    }
}

impl Exporter<mlbench_results::BatchSweep> for Table {
    /// The notes, a table per GPU model, then the best batches.
    fn export(&self, s: &mlbench_results::BatchSweep) -> Result<Vec<u8>, ExportError> {
        use crate::rows::batch_sweep as rows;
        let mut out = format!("Batch sizes of suite `{}`\n", s.suite);
        for line in &s.notes {
            let _ = writeln!(out, "  {line}");
        }
        out.push('\n');
        for t in rows::point_rows(s) {
            titled(&mut out, t);
        }
        titled(&mut out, rows::best_rows(s));
        bytes(out)
    }
}

impl Exporter<Scaling> for Table {
    fn export(&self, s: &Scaling) -> Result<Vec<u8>, ExportError> {
        let mut out = String::new();
        titled(&mut out, crate::rows::scaling::overall_rows(s));
        titled(&mut out, crate::rows::scaling::bench_rows(s));
        bytes(out)
    }
}

impl Exporter<ValidationDoc> for Table {
    /// Findings grouped by rule (errors first), waivers, the summary line; when all is
    /// well, the summary line alone.
    fn export(&self, doc: &ValidationDoc) -> Result<Vec<u8>, ExportError> {
        bytes(findings::human(&doc.validation, &doc.rules))
    }
}

impl Exporter<mlbench_results::archive::ArchiveListing> for Table {
    /// The title line, then one row per entry (hashes cut to 12 digits).
    fn export(&self, l: &mlbench_results::archive::ArchiveListing) -> Result<Vec<u8>, ExportError> {
        let r = crate::rows::archive::entry_rows(l, true);
        bytes(format!("{}\n{}\n", r.title, comfy(r.header, r.rows)))
    }
}

impl Exporter<mlbench_results::history::History> for Table {
    /// The title line, then one row per series and round.
    fn export(&self, h: &mlbench_results::history::History) -> Result<Vec<u8>, ExportError> {
        let r = crate::rows::history::history_rows(h, crate::rows::Form::People);
        bytes(format!("{}\n{}\n", r.title, comfy(r.header, r.rows)))
    }
}

impl Exporter<RuleList> for Table {
    /// One aligned line per rule: id, severity, what it checks.
    fn export(&self, list: &RuleList) -> Result<Vec<u8>, ExportError> {
        let width = list.0.iter().map(|r| r.id.len()).max().unwrap_or(0);
        let mut out = String::new();
        for r in list.0 {
            let _ = writeln!(
                out,
                "{:width$}  {:7}  {}",
                r.id,
                r.severity.as_str(),
                r.summary
            );
        }
        bytes(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{self, text};

    #[test]
    fn verdicts_painted_as_whole_words_only() {
        let painted = paint_verdicts("Result: PASS\n x  FAIL  PASSED SLOW_x SLOW\n");
        assert_eq!(
            painted,
            "Result: \x1b[1;32mPASS\x1b[0m\n x  \x1b[1;31mFAIL\x1b[0m  PASSED SLOW_x \x1b[1;33mSLOW\x1b[0m\n"
        );
        // Without the codes, the text is what it was.
        let plain = painted
            .replace("\x1b[1;32m", "")
            .replace("\x1b[1;31m", "")
            .replace("\x1b[1;33m", "")
            .replace("\x1b[0m", "");
        assert_eq!(plain, "Result: PASS\n x  FAIL  PASSED SLOW_x SLOW\n");
    }

    #[test]
    fn classic_report() {
        insta::assert_snapshot!(text(Table.export(&testdata::classic_doc())));
    }

    #[test]
    fn score_report_with_failures_and_intervals() {
        insta::assert_snapshot!(text(Table.export(&testdata::score_doc())));
    }

    #[test]
    fn grid() {
        insta::assert_snapshot!(text(Table.export(&testdata::grid())));
    }

    /// A row of another runtime than the baseline's, and its cells with a ratio, carry
    /// the model's mark; the others do not.
    #[test]
    fn mixed_runtime_rows_and_cells_are_marked() {
        let mut grid = testdata::grid();
        let row = grid.vendors.last_mut().unwrap();
        assert_eq!(
            (row.name.as_str(), row.track),
            ("B", mlbench_schema::Track::Baseline)
        );
        row.mixed_runtime = true;
        for cell in row.cells.values_mut() {
            cell.mixed_runtime = cell.ratio.is_some();
        }
        let out = text(Table.export(&grid));
        // The overall row, the ratio table's column, the cell with a ratio (not the
        // missing one).
        assert_eq!(out.matches(" †").count(), 3, "{out}");
        let overall = out.lines().find(|l| l.contains("B (baseline) †")).unwrap();
        assert!(overall.contains("0.400"), "{out}");
        assert!(out.contains("1.200 †"), "{out}");
        let plain = text(Table.export(&testdata::grid()));
        assert!(!plain.contains('†'), "{plain}");
    }

    #[test]
    fn a_grid_of_one_submission_says_so_in_the_singular() {
        let mut grid = testdata::grid();
        grid.vendors.truncate(1);
        let out = text(Table.export(&grid));
        assert!(out.starts_with("mlbench grid: 1 submission\n"), "{out}");
    }

    #[test]
    fn scaling() {
        insta::assert_snapshot!(text(Table.export(&testdata::scaling())));
    }

    #[test]
    fn findings() {
        insta::assert_snapshot!(text(Table.export(&testdata::validation())));
    }

    #[test]
    fn rule_list_names_every_rule() {
        let out = text(Table.export(&testdata::rules()));
        assert_eq!(out.lines().count(), testdata::rules().0.len());
        assert!(out.contains("loss.nan"), "{out}");
    }

    #[test]
    fn the_table_shows_the_models_verdicts_not_its_own() {
        // A statistics block that contradicts the thresholds: the exporter must print
        // what the model says, so a drifted renderer would show up here.
        let mut doc = testdata::classic_doc();
        if let mlbench_results::Report::Classic(r) = &mut doc.report {
            r.statistics.deviation_pass = false;
            r.statistics.benches_usable = 1;
        }
        let out = text(Table.export(&doc));
        let line = out
            .lines()
            .find(|l| l.contains("Deviation quantile"))
            .unwrap();
        assert!(line.trim_end().ends_with("FAIL"), "{line}");
        assert!(out.contains("1/2 benches"), "{out}");
    }
}
