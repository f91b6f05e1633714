//! The report and grid pages: tables, charts as inline SVG, each submission's validation
//! and the provenance block, laid out as an [`HtmlDoc`].

use super::{Block, FindingLine, HtmlDoc, HtmlTable, Section};
use crate::ExportError;
use crate::charts::{Subject, gpu_heatmap_chart, grid_charts, runs_chart};
use crate::rows::benches::bench_table;
use crate::rows::system::system_rows;
use crate::rows::{
    Form, Rows, energy as energy_rows, grid as grid_rows, plural, report as report_rows,
};
use mlbench_results::Severity;
use mlbench_results::report::SystemInfo;
use mlbench_results::{GridPage, ReportPage, SubmissionCheck};

/// Findings listed per submission on a page, at most (the JSON of `validate` has them all).
const MAX_FINDINGS: usize = 50;

/// A table for the page; every column but the first is numeric.
fn table(id: &str, t: Rows) -> Block {
    let numeric = (0..t.header.len())
        .map(|i| i > 0 && figures_column(&t.rows, i))
        .collect();
    Block::Table(HtmlTable {
        caption: t.title,
        header: t.header,
        rows: t.rows,
        numeric,
        id: id.to_owned(),
    })
}

/// Whether column `i` holds figures, drawn right-aligned on one line: at least half its
/// non-empty cells hold no word (`1.395 [1.394–1.397] P 1.00`, `19/19`, `—`), where text
/// such as `2 × TITAN RTX` or `FAIL 1 error` is left-aligned and may wrap, so that a wide
/// table still fits the page.
fn figures_column(rows: &[Vec<String>], i: usize) -> bool {
    let cells: Vec<&str> = (rows.iter())
        .filter_map(|r| r.get(i).map(|c| c.trim()))
        .filter(|c| !c.is_empty())
        .collect();
    let figures = cells.iter().filter(|c| !has_word(c)).count();
    2 * figures >= cells.len()
}

/// Whether `text` holds a word: three letters in a row (`P` or `ms` are units, not words).
fn has_word(text: &str) -> bool {
    let mut run = 0;
    for c in text.chars() {
        run = if c.is_alphabetic() { run + 1 } else { 0 };
        if run == 3 {
            return true;
        }
    }
    false
}

/// A table of text (no numeric column).
fn text_table(id: &str, t: Rows) -> Block {
    let numeric = vec![false; t.header.len()];
    Block::Table(HtmlTable {
        caption: t.title,
        header: t.header,
        rows: t.rows,
        numeric,
        id: id.to_owned(),
    })
}

/// The validation of one submission as a findings block.
fn findings_block(check: &SubmissionCheck) -> Block {
    let v = &check.validation;
    let lines = v
        .findings
        .iter()
        .take(MAX_FINDINGS)
        .map(|f| FindingLine {
            severity: match f.severity {
                Severity::Error => "error".into(),
                Severity::Warning => "warning".into(),
            },
            rule: f.rule.to_owned(),
            location: f.location(),
            message: format!("expected {}, found {}", f.expected, f.found),
        })
        .collect();
    Block::Findings {
        errors: v.errors(),
        warnings: v.warnings(),
        lines,
    }
}

/// The validation section: one findings block per submission.
fn validation_section(checks: &[SubmissionCheck]) -> Section {
    let mut blocks = Vec::new();
    for check in checks {
        let v = &check.validation;
        blocks.push(Block::Paragraph(format!(
            "{}: {}, {} in {}{}",
            check.label,
            plural(v.errors(), "error"),
            plural(v.warnings(), "warning"),
            plural(v.summary.files, "file"),
            if v.findings.len() > MAX_FINDINGS {
                format!(" (the first {MAX_FINDINGS} are listed; `mlbench validate` lists all)")
            } else {
                String::new()
            }
        )));
        blocks.push(findings_block(check));
    }
    Section {
        heading: "Validation".into(),
        blocks,
    }
}

/// The grid page: overall, by bench, explained, validation.
pub fn grid(page: &GridPage) -> Result<HtmlDoc, ExportError> {
    let grid = &page.grid;
    let charts = grid_charts(grid)?;
    let svg = |name: &str| {
        charts
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c.svg.clone())
    };
    let mut overall = vec![
        Block::Notes(grid_rows::notes(grid)),
        table("overall", grid_rows::overall_rows(grid)),
    ];
    if let Some(svg) = svg("grid-overall") {
        overall.push(Block::Svg {
            caption: "Overall figure per submission with its 95% interval, by tier".into(),
            svg,
        });
    }
    let mut by_bench = vec![table("ratios", grid_rows::ratio_rows(grid))];
    if let Some(svg) = svg("grid-ratios") {
        by_bench.push(Block::Svg {
            caption: "Ratio to the baseline per bench with 95% intervals (log scale)".into(),
            svg,
        });
    }
    let mut sections = vec![
        Section {
            heading: "Overall".into(),
            blocks: overall,
        },
        Section {
            heading: "By bench".into(),
            blocks: by_bench,
        },
    ];
    if let Some(t) = grid_rows::explain_rows(grid) {
        sections.push(Section {
            heading: "Explained".into(),
            blocks: vec![table("explain", t)],
        });
    }
    let columns: Vec<(String, Vec<&SystemInfo>)> = page
        .systems
        .iter()
        .map(|(label, s)| (label.clone(), s.iter().collect()))
        .collect();
    if let Some(t) = system_rows("The machines of each submission (system.json)", &columns) {
        sections.push(Section {
            heading: "System".into(),
            blocks: vec![text_table("system", t)],
        });
    }
    sections.push(validation_section(&page.checks));
    Ok(HtmlDoc {
        title: grid_rows::title(grid).into(),
        subtitle: Some(format!(
            "{} relative to {}",
            plural(grid.vendors.len(), "submission"),
            mlbench_plots::shortened(&grid.baseline)
        )),
        sections,
        provenance: page.provenance.clone(),
    })
}

/// The failed entries a score report left out, as the text lists them (`None`: none).
fn failures_table(report: &mlbench_results::Report) -> Option<Block> {
    let failures = report_rows::failure_rows(report);
    if failures.is_empty() {
        return None;
    }
    let header = ["file", "entry", "bench", "reason"];
    let rows = failures.into_iter().map(|r| r.to_vec()).collect();
    let title = "Failed entries (left out of the score)";
    Some(table("failures", Rows::new(title, &header, rows)))
}

/// The section of per-GPU tables, the fleet, the heatmap and the runs chart, whose
/// charts say what the submission ran on and with.
fn gpus_and_runs(page: &ReportPage) -> Result<Section, ExportError> {
    let doc = &page.doc;
    let report = &doc.report;
    let mut per_gpu: Vec<Block> = report_rows::per_gpu_tables(report)
        .into_iter()
        .enumerate()
        .map(|(i, t)| table(&format!("gpu{i}"), t))
        .collect();
    if let Some(t) = report_rows::fleet_rows(doc) {
        per_gpu.push(table("fleet", t));
    }
    let subject = Subject::ran_on(
        &page.suite,
        doc.hardware.as_ref(),
        doc.runtime.as_ref().map(|r| &r.submission),
    );
    if let Some(gpus) = &page.gpus {
        per_gpu.push(Block::Svg {
            caption: "Each GPU's mean throughput relative to the mean of all GPUs".into(),
            svg: gpu_heatmap_chart(&subject, gpus, &page.runs)?.svg,
        });
    }
    per_gpu.push(Block::Svg {
        caption: "Each run's throughput (mean over GPUs) against the target".into(),
        svg: runs_chart(&subject, &page.gpu_model, &page.runs)?.svg,
    });
    Ok(Section {
        heading: "GPUs and runs".into(),
        blocks: per_gpu,
    })
}

/// The report page: verdict, notes, the bench and statistics tables, world sizes,
/// intervals, per-GPU tables, the heatmap and run charts, validations, provenance.
pub fn report(page: &ReportPage) -> Result<HtmlDoc, ExportError> {
    let doc = &page.doc;
    let report = &doc.report;
    let benches = Rows {
        title: "Benches".into(),
        ..bench_table(report, Form::People)
    };
    let mut result = vec![
        Block::Status {
            passed: doc.passed(),
            text: match report_rows::failed_parts(doc) {
                failed if failed.is_empty() => report_rows::heading(report),
                failed => format!(
                    "{}; failed: {}",
                    report_rows::heading(report),
                    failed.join("; ")
                ),
            },
        },
        Block::Notes(doc.notes.clone()),
        table("benches", benches),
    ];
    result.extend(failures_table(report));
    if let Some(t) = report_rows::world_size_rows(report) {
        result.push(table("world-sizes", t));
    }
    let statistics = report_rows::statistics_rows(report)
        .into_iter()
        .map(|r| r.to_vec())
        .collect();
    result.push(table(
        "statistics",
        Rows::new("Statistics", &["statistic", "value", "pass"], statistics),
    ));
    if let Some(ci) = &doc.ci {
        result.push(table("intervals", report_rows::ci_rows(ci)));
    }
    if let Some(p) = &doc.precision {
        result.push(table("precision", report_rows::precision_rows(p)));
    }
    let mut sections = vec![Section {
        heading: "Result".into(),
        blocks: result,
    }];
    if let Some(e) = &doc.energy {
        sections.push(Section {
            heading: "Energy".into(),
            blocks: vec![
                table("energy", energy_rows::energy_rows(e)),
                Block::Notes(energy_rows::notes(e)),
            ],
        });
    }
    sections.extend(super::power::power_section(&page.power)?);
    sections.push(gpus_and_runs(page)?);
    let columns: Vec<(String, Vec<&SystemInfo>)> = doc
        .systems
        .iter()
        .map(|s| (s.hostname.clone(), vec![s]))
        .collect();
    if let Some(t) = system_rows("The machines the runs ran on (system.json)", &columns) {
        sections.push(Section {
            heading: "System".into(),
            blocks: vec![text_table("system", t)],
        });
    }
    if !page.checks.is_empty() {
        sections.push(validation_section(&page.checks));
    }
    Ok(HtmlDoc {
        title: format!("mlbench report: {}", mlbench_plots::shortened(&page.suite)),
        subtitle: Some(report_rows::heading(report)),
        sections,
        provenance: page.provenance.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;
    use crate::{Exporter, Html};
    use mlbench_results::views::{GpuRelative, RunMeans};

    #[test]
    fn figures_are_right_aligned_and_text_may_wrap() {
        let rows: Vec<Vec<String>> = [
            [
                "vendorA",
                "1.395 [1.394–1.397] P 1.00",
                "1",
                "pass",
                "2 × TITAN RTX",
                "19/19",
            ],
            [
                "vendorB",
                "—",
                "— (failed validation)",
                "FAIL 1 error",
                "2 × TITAN RTX",
                "",
            ],
            [
                "vendorC",
                "0.9 ms",
                "— (failed validation)",
                "pass",
                "2 × H100",
                "",
            ],
        ]
        .iter()
        .map(|r| r.iter().map(|c| c.to_string()).collect())
        .collect();
        let kinds: Vec<bool> = (1..6).map(|i| figures_column(&rows, i)).collect();
        // Ratios with units; tiers, two of three with words; validity; GPUs, two of
        // three with words; counts with blanks.
        assert_eq!(kinds, [true, false, false, false, true]);
        assert!(
            figures_column(&rows, 9),
            "an empty column is drawn as figures"
        );
    }

    fn report_page() -> ReportPage {
        ReportPage {
            doc: testdata::score_doc(),
            suite: "fast".into(),
            gpus: Some(GpuRelative {
                gpus: vec![0, 1],
                names: vec!["GPU 0".into(), "GPU 1".into()],
                benches: vec!["cart".into()],
                values: vec![vec![Some(1.01)], vec![Some(0.99)]],
            }),
            runs: vec![RunMeans {
                bench: "cart".into(),
                means: vec![1890.0, 1900.0, 1910.0],
                target: Some(2000.0),
            }],
            gpu_model: "RTX".into(),
            checks: vec![SubmissionCheck {
                label: "vendor.zip".into(),
                validation: testdata::validation().validation,
            }],
            power: Vec::new(),
            provenance: testdata::provenance(),
        }
    }

    /// The page's structure: section headings, table captions and figure captions, in
    /// order (the SVG itself is the plots crate's, snapshot-tested there).
    fn outline(doc: &HtmlDoc) -> String {
        let mut out = format!("# {}\n", doc.title);
        for s in &doc.sections {
            out.push_str(&format!("## {}\n", s.heading));
            for b in &s.blocks {
                out.push_str(&match b {
                    Block::Paragraph(p) => format!("- paragraph: {p}\n"),
                    Block::Notes(n) => format!("- notes: {}\n", n.join(" | ")),
                    Block::Table(t) => format!(
                        "- table #{}: {} [{}] × {} rows\n",
                        t.id,
                        t.caption,
                        t.header.join(", "),
                        t.rows.len()
                    ),
                    Block::Svg { caption, svg } => {
                        format!("- svg ({}): {caption}\n", svg.starts_with("<svg"))
                    }
                    Block::Status { passed, text } => format!("- status {passed}: {text}\n"),
                    Block::Linked { table, .. } => format!("- linked #{}\n", table.id),
                    Block::Findings {
                        errors,
                        warnings,
                        lines,
                    } => {
                        format!(
                            "- findings: {errors} errors, {warnings} warnings, {} lines\n",
                            lines.len()
                        )
                    }
                });
            }
        }
        out
    }

    #[test]
    fn report_page_outline() {
        insta::assert_snapshot!(outline(&report(&report_page()).unwrap()));
    }

    #[test]
    fn grid_page_outline() {
        let page = GridPage {
            grid: testdata::grid(),
            checks: Vec::new(),
            systems: Vec::new(),
            provenance: testdata::provenance(),
        };
        insta::assert_snapshot!(outline(&grid(&page).unwrap()));
    }

    #[test]
    fn a_page_is_the_same_bytes_each_time_and_carries_no_script() {
        let a = Html.export(&report_page()).unwrap();
        assert_eq!(a, Html.export(&report_page()).unwrap());
        let text = String::from_utf8(a).unwrap();
        assert!(!text.to_ascii_lowercase().contains("<script"));
        assert!(text.contains("1885.5"), "the interval is on the page");
    }
}
