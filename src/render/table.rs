//! The human report: comfy-table tables, the statistics block and the verdict in words.

use super::{bench_rows, per_gpu_tables, statistics_rows, verdict};
use comfy_table::{CellAlignment, Table, presets};

/// A rule under the header and around the table, none between rows.
const STYLE: comfy_table::TableStyle =
    presets::UTF8_HORIZONTAL_ONLY.row_separator(comfy_table::LineStyle::none());
use mlbench_analyzer::Report;
use std::fmt::Write as _;

/// A table in the house style, numbers right-aligned.
pub fn table(header: Vec<String>, rows: Vec<Vec<String>>) -> Table {
    let mut t = Table::new();
    t.load_style(STYLE);
    t.set_header(header);
    for row in rows {
        t.add_row(row);
    }
    // Numbers read best right-aligned; the first column is a name.
    let n = t.column_count();
    for i in 1..n {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// Renders the report for a terminal.
pub fn render(report: &Report, notes: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", super::heading(report));
    for line in notes {
        let _ = writeln!(out, "  {line}");
    }
    out.push('\n');
    let (header, rows) = bench_rows(report);
    let _ = writeln!(
        out,
        "{}\n",
        table(header.into_iter().map(String::from).collect(), rows)
    );
    if let Some((title, header, rows)) = super::world_size_rows(report) {
        let _ = writeln!(out, "{title}\n{}\n", table(header, rows));
    }

    if let Report::Score(r) = report
        && !r.failures.is_empty()
    {
        let _ = writeln!(out, "Failures");
        for f in &r.failures {
            let _ = writeln!(
                out,
                "  {}#{} {}: {}",
                f.file,
                f.entry,
                f.bench.as_deref().unwrap_or("(unnamed stub)"),
                f.reason
            );
        }
        out.push('\n');
    }

    let mut stats = Table::new();
    stats.load_style(presets::NOTHING);
    stats.set_header(vec!["Statistics", "Value", "Pass"]);
    for row in statistics_rows(report) {
        stats.add_row(row.to_vec());
    }
    let _ = writeln!(out, "{stats}\n");

    for (title, header, rows) in per_gpu_tables(report) {
        let _ = writeln!(out, "{title}\n{}\n", table(header, rows));
    }
    let _ = writeln!(out, "Result: {}", verdict(report.passed()));
    out
}
