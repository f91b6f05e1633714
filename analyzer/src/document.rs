//! The whole result of `mlbench report` as one model ([`ReportDoc`]): the scoring's
//! report, the flagged stragglers, the intervals of `--ci` and the notes that say what
//! was read and set aside. The binary only presents it.

use crate::batch::BATCH_SIZE_FIELD;
use crate::grid::{DEFAULT_LEVEL, DEFAULT_SEED};
use crate::load::LoadedSamples;
use crate::straggler::{StragglerOptions, stragglers};
use crate::{AnalyzeError, Expected, ReportOptions, SampleSet, report_of};
use mlbench_results::SubmissionValidity;
use mlbench_results::report::{GpuMatch, GpuName, Report, ReportDoc};
use mlbench_schema::runtime::ParityTable;
use mlbench_schema::words::count;
use mlbench_schema::{Scoring, TargetTable};

/// The precision section's design when neither the flags nor the submission state one:
/// ±1 % at 95 %, tuned for a CV of 2 %.
pub fn default_design() -> crate::anytime::Design {
    crate::anytime::Design::plan(0.95, 0.01, 0.02).unwrap_or(crate::anytime::Design {
        level: 0.95,
        precision: 0.01,
        expected_cv: 0.02,
        mixture: 4.568_712_599_819_225,
        planned_runs: 42,
    })
}

/// Resamples of `--ci`.
pub const CI_RESAMPLES: usize = 2000;

/// What `mlbench report` asks for.
#[derive(Debug, Clone)]
pub struct DocOptions {
    /// Which scheme.
    pub scoring: Scoring,
    /// Runs required.
    pub min_runs: u32,
    /// Price for RPP (score scoring).
    pub price: Option<f64>,
    /// Bootstrap intervals of each bench's result (`--ci`).
    pub intervals: bool,
    /// The parity of the two runtimes per bench, said beside a runtime mismatch.
    pub parity: ParityTable,
    /// The precision section's design: level, target precision, expected CV (`None`: the
    /// one the submission's stopping record states, else [`default_design`]).
    pub design: Option<crate::anytime::Design>,
}

/// The report document of `loaded` against `targets`, with the samples it was computed
/// from (the HTML page draws them). The expected benches come from the submission's jobs
/// file where it has one ([`Expected::new`]).
pub fn report_document(
    (loaded, validity): (LoadedSamples, Vec<SubmissionValidity>),
    targets: &TargetTable,
    options: &DocOptions,
) -> Result<(SampleSet, ReportDoc), AnalyzeError> {
    let report_options = ReportOptions {
        scoring: options.scoring,
        min_runs: options.min_runs,
        price: options.price,
        expected: Some(Expected::new(
            loaded.jobs.as_ref().ok().and_then(Option::as_ref),
            targets,
        )),
    };
    let systems = loaded.systems;
    let read = Read {
        other_suites: loaded.other_suites,
        ignored: loaded.ignored,
        jobs_files: loaded.jobs_files,
        jobs_note: loaded.jobs.err(),
    };
    let clock = mlbench_schema::Timings::start();
    let set = loaded.set;
    // Three independent readings of the same samples, side by side: the scoring (Polars, on
    // its own threads), the stragglers and the fleet; each has serial stretches that the
    // others' parallel work fills. The intervals of `--ci` are of the scoring's results.
    let (report, (flagged, fleet)) = rayon::join(
        || report_of(&set, targets, &report_options),
        || {
            rayon::join(
                || {
                    stragglers(&set, &StragglerOptions::default())
                        .into_iter()
                        .filter(|s| s.flagged)
                        .collect()
                },
                || crate::fleet::fleet(&set, &crate::fleet::FleetOptions::default()),
            )
        },
    );
    let mut doc = ReportDoc::new(report?);
    (doc.stragglers, doc.fleet) = (flagged, fleet);
    let how = crate::result_ci::Resampling {
        resamples: CI_RESAMPLES,
        seed: DEFAULT_SEED,
        level: DEFAULT_LEVEL,
    };
    doc.ci = options
        .intervals
        .then(|| crate::result_ci::result_intervals(&set, &doc.report, &how));
    let benches: Vec<String> = doc
        .report
        .bench_names()
        .into_iter()
        .map(String::from)
        .collect();
    doc.stopping = systems.iter().find_map(|s| s.stopping.clone());
    let recorded = doc
        .stopping
        .as_ref()
        .and_then(|r| crate::anytime::Design::plan(r.level, r.precision, r.expected_cv));
    let design = options.design.or(recorded).unwrap_or_else(default_design);
    doc.precision = Some(crate::precision::precision(
        &set,
        &benches,
        &design,
        CI_RESAMPLES,
        DEFAULT_SEED,
    ));
    clock.lap("  scoring, stragglers, intervals, fleet");
    let runtime = crate::runtime::submission_runtime(&systems, &set);
    let (runtimes, mismatch) =
        crate::runtime::report_runtimes(runtime, targets, &doc.report, &options.parity);
    (doc.runtime, doc.runtime_mismatch) = (Some(runtimes), mismatch);
    doc.hardware = Some(crate::hardware::hardware_of(&set, &systems));
    doc.gpu_match = gpu_match(&set, targets);
    doc.validity = validity;
    doc.systems = systems;
    doc.batch_mismatches = crate::batch::batch_mismatches(&set, targets);
    doc.notes = notes(&set, &doc, targets, &read);
    Ok((set, doc))
}

/// The entries' GPU models against the targets' (`None` when no entry names one).
fn gpu_match(set: &SampleSet, targets: &TargetTable) -> Option<GpuMatch> {
    use mlbench_schema::gpu_names::{runs_on, targets_model};
    let entries: Vec<GpuName> = (set.models.iter())
        .map(|name| GpuName {
            name: name.clone(),
            model: targets_model(name).map(str::to_owned),
        })
        .collect();
    (!entries.is_empty()).then(|| GpuMatch {
        targets: targets.gpu_model.clone(),
        matches: entries.iter().all(|g| runs_on(&g.name, &targets.gpu_model)),
        entries,
    })
}

/// The hardware, whether it is the targets' model, and each submission's validation.
fn hardware_lines(doc: &ReportDoc) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(hardware) = &doc.hardware {
        lines.push(format!("hardware: {}", hardware.summary()));
    }
    if let Some(m) = doc.gpu_match.as_ref().filter(|m| !m.matches) {
        let other: Vec<&str> = (m.entries.iter())
            .filter(|g| !mlbench_schema::gpu_names::runs_on(&g.name, &m.targets))
            .map(|g| g.name.as_str())
            .collect();
        lines.push(format!(
            "warning: the entries ran on {}, not on the targets' model {}: each diff compares different GPUs (docs/gpu-models.md)",
            other.join(", "),
            m.targets
        ));
    }
    for v in &doc.validity {
        lines.push(format!(
            "validation of {}: {}",
            v.submission,
            v.validity.summary()
        ));
    }
    lines
}

/// What the loader passed over, for the notes.
struct Read {
    other_suites: Vec<String>,
    ignored: usize,
    jobs_files: Vec<String>,
    jobs_note: Option<String>,
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// What mlbench read and what it set aside, one line each.
fn notes(set: &SampleSet, doc: &ReportDoc, targets: &TargetTable, read: &Read) -> Vec<String> {
    let mut lines = read_lines(set, doc, targets);
    lines.extend(hardware_lines(doc));
    lines.extend(expected_lines(doc, read));
    lines.extend(conflict_lines(doc));
    lines.extend(crate::batch::mismatch_lines(&doc.batch_mismatches));
    lines.extend(finding_lines(set, doc));
    lines
}

/// What was read, the machines, the runtimes and the targets, and what the targets set
/// aside.
fn read_lines(set: &SampleSet, doc: &ReportDoc, targets: &TargetTable) -> Vec<String> {
    let s = &set.summary;
    let layout = match s.layout.as_str() {
        "legacy" => "per-GPU streams",
        "per-test" => "per-test files",
        _ => "per-GPU streams and per-test files",
    };
    let mut lines = vec![format!(
        "read {} of suite `{}` ({layout}): {}, {}, {}",
        count(s.files, "file", "files"),
        set.suite,
        s.runs_told_apart,
        count(s.gpus, "GPU", "GPUs"),
        count(s.entries, "entry", "entries")
    )];
    if s.smoke > 0 {
        lines.push(format!(
            "smoke run: {} of {} entries ran with `mlbench run --smoke` (reduced sizes): a set-up check, not comparable with the targets",
            s.smoke, s.entries
        ));
    }
    let declared = doc.systems.iter().any(|s| s.synthetic_data);
    if let Some(summary) =
        mlbench_schema::system::synthetic_data_summary(s.synthetic_data, s.entries, declared)
    {
        lines.push(format!("synthetic data: {summary}"));
    }
    for system in &doc.systems {
        lines.push(format!("system: {}", system.summary()));
    }
    for p in &s.profiles {
        let of = count(p.entries, "entry", "entries");
        lines.push(format!(
            "profile: {} ({of}, per entry): {}",
            p.bench,
            p.profile.line()
        ));
    }
    let mut runtime_lines = doc.runtime.as_ref().map_or_else(Vec::new, |r| {
        crate::runtime::runtime_notes(r, doc.runtime_mismatch.as_ref())
    });
    let mismatch = (runtime_lines.len() > 1)
        .then(|| runtime_lines.pop())
        .flatten();
    lines.extend(runtime_lines);
    if let Some(r) = &doc.runtime {
        lines.extend(crate::runtime::runtime_warnings(&r.submission));
    }
    lines.push(format!(
        "targets: {} ({}), {}",
        targets.gpu_model,
        targets.source,
        crate::runtime::targets_measured_by(targets)
    ));
    lines.extend(mismatch);
    if s.excluded > 0 {
        lines.push(format!(
            "set aside: {} of benches the targets exclude ({})",
            count(s.excluded, "entry", "entries"),
            targets.exclude.join(", ")
        ));
    }
    for (rule, n) in &s.not_selected {
        lines.push(format!(
            "not selected: {} by the rule {rule}",
            count(*n, "entry", "entries")
        ));
    }
    lines
}

/// The jobs file, the benches expected, and the files passed over.
fn expected_lines(doc: &ReportDoc, read: &Read) -> Vec<String> {
    let mut lines = Vec::new();
    if !read.jobs_files.is_empty() {
        lines.push(format!("jobs file: {}", read.jobs_files.join(", ")));
    }
    let context = doc.report.context();
    let n = context.expected.len();
    let es = if n == 1 { "" } else { "es" };
    lines.push(match &context.jobs_file {
        Some(file) => {
            format!("expected: {n} bench{es} (the jobs of {file} that the targets score)")
        }
        None => format!(
            "expected: {n} bench{es} (every bench of the targets{})",
            read.jobs_note
                .as_deref()
                .map_or_else(String::new, |why| format!("; jobs file: {why}"))
        ),
    });
    if read.ignored > 0 || !read.other_suites.is_empty() {
        let mut what = Vec::new();
        if read.ignored > 0 {
            what.push(format!(
                "{} file{} not named like reports",
                read.ignored,
                plural(read.ignored)
            ));
        }
        if !read.other_suites.is_empty() {
            what.push(format!(
                "reports of other suites ({})",
                read.other_suites.join(", ")
            ));
        }
        lines.push(format!("passed over: {}", what.join("; ")));
    }
    lines
}

/// One line per configuration conflict.
fn conflict_lines(doc: &ReportDoc) -> Vec<String> {
    doc.report
        .conflicts()
        .iter()
        .map(|c| {
            let diffs = c
                .differences
                .iter()
                .map(|d| {
                    format!(
                        "{}: {} here, {} there",
                        d.field,
                        d.kept.as_deref().unwrap_or("absent"),
                        d.found.as_deref().unwrap_or("absent")
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            // Each side's runtime, when the two sides come from different ones.
            let (by_set_aside, by_kept, alone) = match (c.set_aside_runtime, c.kept_runtime) {
                (Some(a), Some(k)) if a != k => (
                    format!(" (written by {})", a.writer()),
                    format!(" (written by {})", k.writer()),
                    format!("; the bench is scored on the entries of {} alone", k.writer()),
                ),
                _ => Default::default(),
            };
            // Entries apart in their batch size alone are a sweep, which has its view.
            let sweep = c.differences.iter().any(|d| d.field == BATCH_SIZE_FIELD)
                && c.differences.iter().all(|d| d.field == BATCH_SIZE_FIELD);
            let pointer = match sweep {
                true => "; a batch-size sweep: `mlbench report --by batch_size` shows each",
                false => "",
            };
            format!(
                "conflict: {}: {}{by_set_aside} set aside, their configuration differs from the {} kept{by_kept} ({diffs}){alone}{pointer}; e.g. {}",
                c.bench,
                mlbench_schema::words::count(c.set_aside, "entry", "entries"),
                c.kept,
                c.examples.join(", ")
            )
        })
        .collect()
}

/// Failures kept by the classic scoring, mixed hardware, the fleet and its slow nodes,
/// and the stragglers.
fn finding_lines(set: &SampleSet, doc: &ReportDoc) -> Vec<String> {
    let mut lines = Vec::new();
    if let Report::Classic(r) = &doc.report
        && !r.failures.is_empty()
    {
        lines.push(format!(
            "note: {} entr{} failed (NaN loss or incomplete); classic scoring keeps those with a throughput, as the original tool did (the score scoring removes them)",
            r.failures.len(),
            if r.failures.len() == 1 { "y" } else { "ies" }
        ));
    }
    if set.models.len() > 1 {
        lines.push(format!(
            "mixed hardware: {} GPU models ({}); stragglers and slow nodes are looked for among peers of one model, never across models",
            set.models.len(),
            set.models.join(", ")
        ));
    }
    if let Some(fleet) = &doc.fleet {
        lines.push(format!(
            "fleet: {} nodes; the 10th-percentile node at {:.3} of the median node, {:.0}% of the nodes within 5% of it (table below; docs/scoring.md)",
            fleet.nodes.len(),
            fleet.p10,
            fleet.within_5pct * 100.0
        ));
        for n in fleet.nodes.iter().filter(|n| n.flagged) {
            lines.push(format!(
                "slow node: {} is significantly below the other nodes on {} of {} benches tested ({:.3} of the median node)",
                n.node, n.below, n.tested, n.relative
            ));
        }
    }
    for s in &doc.stragglers {
        lines.push(format!(
            "straggler: GPU {} is significantly below its peers on {} of {} benches tested (median deficit {:.1}%; docs/scoring.md)",
            s.gpu,
            s.below,
            s.tested,
            s.median_deficit * 100.0
        ));
    }
    lines
}
