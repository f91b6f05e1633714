//! The HTML pages of `grid --html` and `report --html`: the tables, the plots as inline
//! SVG, each submission's validation summary and a provenance block, in one offline file.

use crate::render::html::{
    Block, FindingLine, HtmlDoc, HtmlTable, Provenance, Section, input_digests, render,
};
use mlbench_analyzer::compare::Labelled;
use mlbench_analyzer::grid::Grid;
use mlbench_validator::{Options, Severity, Validation, validate};
use std::path::PathBuf;

/// Findings listed per submission on a page, at most (the JSON of `validate` has them all).
const MAX_FINDINGS: usize = 50;

/// `--min-runs` of the validation shown on a grid page (`validate`'s default).
pub const GRID_MIN_RUNS: usize = 4;

/// What a page shows besides its results.
pub struct Extras {
    /// (label, validation) per submission.
    pub validations: Vec<(String, Validation)>,
    /// The provenance block.
    pub provenance: Provenance,
}

impl Extras {
    /// Validates every submission (default rules, `min_runs`) and hashes the inputs.
    pub fn gather(
        loaded: &[Labelled],
        inputs: &[PathBuf],
        min_runs: usize,
    ) -> anyhow::Result<Extras> {
        let options = Options {
            min_runs,
            ..Options::default()
        };
        let validations = loaded
            .iter()
            .map(|l| (l.label.clone(), validate(&l.sub.intake, &options)))
            .collect();
        Ok(Extras {
            validations,
            provenance: provenance(inputs)?,
        })
    }
}

/// Tool, command line and the SHA-256 of every input file.
pub fn provenance(inputs: &[PathBuf]) -> anyhow::Result<Provenance> {
    Ok(Provenance {
        tool: format!("mlbench {}", env!("CARGO_PKG_VERSION")),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        inputs: input_digests(inputs)?,
        generated: None,
    })
}

/// A table for the page; every column but the first is numeric.
pub fn table(id: &str, caption: String, header: Vec<String>, rows: Vec<Vec<String>>) -> Block {
    let numeric = (0..header.len()).map(|i| i > 0).collect();
    Block::Table(HtmlTable {
        caption,
        header,
        rows,
        numeric,
        id: id.to_owned(),
    })
}

/// The validation of one submission as a findings block.
pub fn findings_block(v: &Validation) -> Block {
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
pub fn validation_section(validations: &[(String, Validation)]) -> Section {
    let mut blocks = Vec::new();
    for (label, v) in validations {
        blocks.push(Block::Paragraph(format!(
            "{label}: {} errors, {} warnings in {} files{}",
            v.errors(),
            v.warnings(),
            v.summary.files,
            if v.findings.len() > MAX_FINDINGS {
                format!(" (the first {MAX_FINDINGS} are listed; `mlbench validate` lists all)")
            } else {
                String::new()
            }
        )));
        blocks.push(findings_block(v));
    }
    Section {
        heading: "Validation".into(),
        blocks,
    }
}

/// The grid page.
pub fn grid_page(grid: &Grid, extras: Extras) -> anyhow::Result<String> {
    let charts = crate::charts::grid_charts(grid)?;
    let svg = |name: &str| {
        charts
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c.svg.clone())
    };
    let mut tables = crate::render::grid::html_tables(grid).into_iter();
    let mut overall = vec![Block::Notes(crate::render::grid::notes(grid))];
    if let Some((caption, h, r)) = tables.next() {
        overall.push(table("overall", caption, h, r));
    }
    if let Some(svg) = svg("grid-overall") {
        overall.push(Block::Svg {
            caption: "Overall figure per submission with its 95% interval, by tier".into(),
            svg,
        });
    }
    let mut by_bench = Vec::new();
    if let Some((caption, h, r)) = tables.next() {
        by_bench.push(table("ratios", caption, h, r));
    }
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
    if let Some((caption, h, r)) = tables.next() {
        sections.push(Section {
            heading: "Explained".into(),
            blocks: vec![table("explain", caption, h, r)],
        });
    }
    sections.push(validation_section(&extras.validations));
    Ok(render(&HtmlDoc {
        title: "mlbench grid".into(),
        subtitle: Some(format!(
            "{} submissions relative to {}",
            grid.vendors.len(),
            grid.baseline
        )),
        sections,
        provenance: extras.provenance,
    }))
}

/// The report page: verdict, notes, the bench and statistics tables, intervals, per-GPU
/// tables, the heatmap and run plots, the validation of each input, provenance.
pub fn report_page(
    report: &mlbench_analyzer::Report,
    set: &mlbench_analyzer::SampleSet,
    targets: &mlbench_schema::TargetTable,
    notes: &[String],
    cis: Option<&std::collections::BTreeMap<String, mlbench_analyzer::MeanCi>>,
    inputs: &[PathBuf],
    min_runs: usize,
) -> anyhow::Result<String> {
    use crate::render::{bench_rows, per_gpu_tables, statistics_rows};
    let (header, rows) = bench_rows(report);
    let mut result = vec![
        Block::Status {
            passed: report.passed(),
            text: crate::render::heading(report),
        },
        Block::Notes(notes.to_vec()),
        table(
            "benches",
            "Benches".into(),
            header.into_iter().map(str::to_owned).collect(),
            rows,
        ),
        table(
            "statistics",
            "Statistics".into(),
            ["statistic", "value", "pass"].map(str::to_owned).to_vec(),
            statistics_rows(report)
                .into_iter()
                .map(|r| r.to_vec())
                .collect(),
        ),
    ];
    if let Some((title, h, r)) = crate::render::world_size_rows(report) {
        result.insert(3, table("world-sizes", title, h, r));
    }
    if let Some(cis) = cis {
        let (h, r) = crate::render::ci_rows(cis);
        result.push(table(
            "intervals",
            "95% confidence intervals of the means (bootstrap)".into(),
            h,
            r,
        ));
    }
    let mut sections = vec![Section {
        heading: "Result".into(),
        blocks: result,
    }];
    let gpu_tables: Vec<Block> = per_gpu_tables(report)
        .into_iter()
        .enumerate()
        .map(|(i, (title, h, r))| table(&format!("gpu{i}"), title, h, r))
        .collect();
    let mut per_gpu = gpu_tables;
    let label = set.suite.clone();
    if !set.devices.is_empty() {
        let heatmap = crate::charts::heatmap_chart(&label, set)?;
        per_gpu.push(Block::Svg {
            caption: "Each GPU's mean throughput relative to the mean of all GPUs".into(),
            svg: heatmap.svg,
        });
    }
    let runs = crate::charts::runs_chart(&label, set, targets)?;
    per_gpu.push(Block::Svg {
        caption: "Each run's throughput (mean over GPUs) against the target".into(),
        svg: runs.svg,
    });
    sections.push(Section {
        heading: "GPUs and runs".into(),
        blocks: per_gpu,
    });
    // Validate each input that is a whole submission (a folder or a zip), with the
    // report's own --min-runs.
    let options = Options {
        min_runs,
        ..Options::default()
    };
    let mut validations = Vec::new();
    for path in inputs {
        if path.is_dir() || path.extension().is_some_and(|e| e == "zip") {
            let intake =
                mlbench_validator::read_submission(path, &mlbench_validator::Limits::default())?;
            validations.push((path.display().to_string(), validate(&intake, &options)));
        }
    }
    if !validations.is_empty() {
        sections.push(validation_section(&validations));
    }
    Ok(render(&HtmlDoc {
        title: format!("mlbench report: {}", set.suite),
        subtitle: Some(crate::render::heading(report)),
        sections,
        provenance: provenance(inputs)?,
    }))
}
