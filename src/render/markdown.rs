//! Markdown: the same tables as the terminal report, for issues, wikis and pull requests.

use super::{bench_rows, per_gpu_tables, statistics_rows, verdict};
use mlbench_analyzer::Report;
use std::fmt::Write as _;

/// Escapes a cell for a Markdown table.
pub fn escape(cell: &str) -> String {
    cell.replace('|', "\\|")
}

/// Appends a Markdown table: the first column left-aligned, the others (figures) right.
pub fn md_table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    md_table_aligned(out, header, rows, false);
}

/// Appends a Markdown table of text: every column left-aligned.
pub fn md_text_table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    md_table_aligned(out, header, rows, true);
}

fn md_table_aligned(out: &mut String, header: &[String], rows: &[Vec<String>], text: bool) {
    let _ = writeln!(
        out,
        "| {} |",
        header
            .iter()
            .map(|h| escape(h))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let align: Vec<&str> = (0..header.len())
        .map(|i| if i == 0 || text { ":---" } else { "---:" })
        .collect();
    let _ = writeln!(out, "| {} |", align.join(" | "));
    for row in rows {
        let _ = writeln!(
            out,
            "| {} |",
            row.iter()
                .map(|c| escape(c))
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
    out.push('\n');
}

/// Renders the report as Markdown.
pub fn render(report: &Report, notes: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## {}\n", super::heading(report));
    for line in notes {
        let _ = writeln!(out, "- {}", escape(line));
    }
    if !notes.is_empty() {
        out.push('\n');
    }
    let (header, rows) = bench_rows(report);
    md_table(
        &mut out,
        &header.into_iter().map(String::from).collect::<Vec<_>>(),
        &rows,
    );
    if let Some((title, header, rows)) = super::world_size_rows(report) {
        let _ = writeln!(out, "### {title}\n");
        md_table(&mut out, &header, &rows);
    }
    if let Report::Score(r) = report
        && !r.failures.is_empty()
    {
        let _ = writeln!(out, "### Failures\n");
        let rows: Vec<Vec<String>> = r
            .failures
            .iter()
            .map(|f| {
                vec![
                    format!("`{}`", f.file),
                    f.entry.to_string(),
                    f.bench.clone().unwrap_or_else(|| "—".into()),
                    f.reason.to_string(),
                ]
            })
            .collect();
        md_table(
            &mut out,
            &[
                "file".into(),
                "entry".into(),
                "bench".into(),
                "reason".into(),
            ],
            &rows,
        );
    }
    let _ = writeln!(out, "### Statistics\n");
    let rows: Vec<Vec<String>> = statistics_rows(report)
        .into_iter()
        .map(|r| r.to_vec())
        .collect();
    md_table(
        &mut out,
        &["statistic".into(), "value".into(), "pass".into()],
        &rows,
    );
    for (title, header, rows) in per_gpu_tables(report) {
        let _ = writeln!(out, "### {title}\n");
        md_table(&mut out, &header, &rows);
    }
    let _ = writeln!(out, "**Result: {}**", verdict(report.passed()));
    out
}
