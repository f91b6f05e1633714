//! `mlbench report`.

use crate::cli::{Format, ReportArgs, ScoringArg};
use crate::{Failure, Outcome, output, render};
use anyhow::anyhow;
use mlbench_analyzer::grid::{DEFAULT_LEVEL, DEFAULT_SEED};
use mlbench_analyzer::{MeanCi, ReportOptions, SampleSet, Straggler, StragglerOptions};
use mlbench_schema::{Scoring, TargetTable, Timings, discover};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The zip among `--reports`, when one is given: it is read alone (its runs are complete
/// in it), so mixing it with other paths is a usage error.
fn zip_input(paths: &[PathBuf]) -> anyhow::Result<Option<&Path>> {
    let is_zip =
        |p: &PathBuf| p.is_file() && p.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip"));
    match paths {
        [one] if is_zip(one) => Ok(Some(one)),
        many => match many.iter().find(|p| is_zip(p)) {
            Some(zip) => Err(anyhow!(
                "{}: a zipped submission is read alone; pass it as the only --reports",
                zip.display()
            )),
            None => Ok(None),
        },
    }
}

/// Runs the report command.
pub fn run(args: &ReportArgs) -> Result<Outcome, Failure> {
    let scoring = match args.scoring {
        ScoringArg::Classic => Scoring::Classic,
        ScoringArg::Score => Scoring::Score,
    };
    if let Some(price) = args.price
        && !(price.is_finite() && price > 0.0)
    {
        return Err(anyhow!("--price must be a positive number, got {price}").into());
    }
    let targets = match &args.targets {
        Some(path) => TargetTable::load(path, scoring, &args.gpu_model)?,
        None => TargetTable::builtin(scoring, &args.gpu_model)?,
    };
    // Refuse before any work (and before writing either file) when one would be replaced.
    output::refuse_existing(args.output.iter().chain(args.html.iter()), args.force)?;
    let clock = Timings::start();
    let loaded = match zip_input(&args.reports)? {
        // A packed submission, read in place with the validator's limits.
        Some(zip) => {
            let intake = mlbench_analyzer::read_intake(zip, &Default::default())?;
            clock.lap("read the zip");
            mlbench_analyzer::samples_of_intake(&intake, zip, args.name.as_deref(), &targets)?
        }
        None => {
            let discovery = discover(&args.reports, args.name.as_deref())?;
            clock.lap("discover");
            mlbench_analyzer::load_samples(discovery, &targets)
        }
    };
    clock.lap("read, parse and extract");
    if !loaded.errors.is_empty() {
        let level = if args.skip_unreadable {
            "warning"
        } else {
            "error"
        };
        for e in &loaded.errors {
            eprintln!("{level}: {e}");
        }
        let files = loaded
            .errors
            .iter()
            .map(|e| e.file.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        let problems = loaded.errors.len();
        if !args.skip_unreadable {
            return Err(anyhow!(
                "{problems} problem{} in {files} file{}: no report computed (--skip-unreadable computes one from the entries that could be read)",
                plural(problems),
                plural(files)
            )
            .into());
        }
        eprintln!(
            "warning: {problems} problem{} in {files} file{}: the report uses only the entries that could be read",
            plural(problems),
            plural(files)
        );
    }
    let options = ReportOptions {
        scoring,
        min_runs: args.min_runs,
        price: args.price,
        expected: Some(mlbench_analyzer::Expected::new(
            loaded.jobs.as_ref().ok().and_then(Option::as_ref),
            &targets,
        )),
    };
    let jobs_note = loaded.jobs.as_ref().err().cloned();
    let (set, report) = mlbench_analyzer::report_samples(loaded.set, &targets, &options)?;
    clock.lap("samples and statistics");
    let stragglers: Vec<Straggler> =
        mlbench_analyzer::stragglers(&set, &StragglerOptions::default())
            .into_iter()
            .filter(|s| s.flagged)
            .collect();
    let cis = args
        .ci
        .then(|| mlbench_analyzer::bench_mean_cis(&set, CI_RESAMPLES, DEFAULT_SEED, DEFAULT_LEVEL));
    clock.lap("stragglers and intervals");
    let mut notes = notes(
        &set,
        &report,
        &targets,
        &loaded.other_suites,
        loaded.ignored,
        &loaded.jobs_files,
        jobs_note.as_deref(),
    );
    for s in &stragglers {
        notes.push(format!(
            "straggler: GPU {} is significantly below its peers on {} of {} benches tested (median deficit {:.1}%; docs/scoring.md)",
            s.device,
            s.below,
            s.tested,
            s.median_deficit * 100.0
        ));
    }
    let mut text = match args.format {
        Format::Table => render::table::render(&report, &notes),
        Format::Json => extended_json(&report, cis.as_ref(), &stragglers)?,
        Format::Csv => render::csv::render(&report, cis.as_ref()),
        Format::Markdown => render::markdown::render(&report, &notes),
    };
    if let Some(cis) = &cis {
        match args.format {
            Format::Table => text.push_str(&format!("\n{}\n", ci_table(cis))),
            Format::Markdown => {
                text.push_str("## 95% confidence intervals of the means\n\n");
                let (h, r) = render::ci_rows(cis);
                render::markdown::md_table(&mut text, &h, &r);
            }
            Format::Json | Format::Csv => {}
        }
    }
    if let Some(path) = &args.html {
        let page = crate::html_pages::report_page(
            &report,
            &set,
            &targets,
            &notes,
            cis.as_ref(),
            &args.reports,
            args.min_runs as usize,
        )?;
        output::emit(&page, Some(path), args.force)?;
    }
    // Table and Markdown carry the notes; for the data formats they go to standard error.
    let embedded = matches!(args.format, Format::Table | Format::Markdown);
    if !embedded || args.output.is_some() {
        for line in &notes {
            eprintln!("{line}");
        }
    }
    output::emit(&text, args.output.as_deref(), args.force)?;
    clock.lap("render and write");
    Ok(if args.check && !report.passed() {
        Outcome::Failed
    } else {
        Outcome::Ok
    })
}

/// Resamples of `--ci`.
const CI_RESAMPLES: usize = 2000;

/// The report JSON with what `--ci` and the straggler check add (fields only added:
/// `ci` with `--ci`, `stragglers` always).
fn extended_json(
    report: &mlbench_analyzer::Report,
    ci: Option<&BTreeMap<String, MeanCi>>,
    stragglers: &[Straggler],
) -> anyhow::Result<String> {
    #[derive(serde::Serialize)]
    struct Extended<'a> {
        #[serde(flatten)]
        report: &'a mlbench_analyzer::Report,
        #[serde(skip_serializing_if = "Option::is_none")]
        ci: Option<&'a BTreeMap<String, MeanCi>>,
        stragglers: &'a [Straggler],
    }
    let mut text = serde_json::to_string_pretty(&Extended {
        report,
        ci,
        stragglers,
    })?;
    text.push('\n');
    Ok(text)
}

fn ci_table(cis: &BTreeMap<String, MeanCi>) -> String {
    let (h, r) = render::ci_rows(cis);
    format!(
        "95% confidence intervals of the means (bootstrap: runs resampled within GPUs, {CI_RESAMPLES} resamples, seed {DEFAULT_SEED})\n{}",
        render::table::table(h, r)
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// What mlbench read and what it set aside, one line each.
fn notes(
    set: &SampleSet,
    report: &mlbench_analyzer::Report,
    targets: &TargetTable,
    other_suites: &[String],
    ignored: usize,
    jobs_files: &[String],
    jobs_note: Option<&str>,
) -> Vec<String> {
    let s = &set.summary;
    let layout = match s.layout.as_str() {
        "legacy" => "per-GPU streams",
        "per-test" => "per-test files",
        _ => "per-GPU streams and per-test files",
    };
    let mut lines = vec![format!(
        "read {} file{} of suite `{}` ({layout}): {}, {} GPU{}, {} entries",
        s.files,
        plural(s.files),
        set.suite,
        s.runs_told_apart,
        s.gpus,
        plural(s.gpus),
        s.entries
    )];
    lines.push(format!(
        "targets: {} ({})",
        targets.gpu_model, targets.source
    ));
    if s.excluded > 0 {
        lines.push(format!(
            "set aside: {} entries of benches the targets exclude ({})",
            s.excluded,
            targets.exclude.join(", ")
        ));
    }
    for (rule, n) in &s.not_selected {
        lines.push(format!("not selected: {n} entries by the rule {rule}"));
    }
    if !jobs_files.is_empty() {
        lines.push(format!("jobs file: {}", jobs_files.join(", ")));
    }
    let context = report.context();
    let n = context.expected.len();
    lines.push(match &context.jobs_file {
        Some(file) => format!(
            "expected: {n} bench{} (the jobs of {file} that the targets score)",
            if n == 1 { "" } else { "es" }
        ),
        None => format!(
            "expected: {n} bench{} (every bench of the targets{})",
            if n == 1 { "" } else { "es" },
            jobs_note.map_or_else(String::new, |why| format!("; jobs file: {why}"))
        ),
    });
    if ignored > 0 || !other_suites.is_empty() {
        let mut what = Vec::new();
        if ignored > 0 {
            what.push(format!(
                "{ignored} file{} not named like reports",
                plural(ignored)
            ));
        }
        if !other_suites.is_empty() {
            what.push(format!(
                "reports of other suites ({})",
                other_suites.join(", ")
            ));
        }
        lines.push(format!("passed over: {}", what.join("; ")));
    }
    for c in report.conflicts() {
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
        lines.push(format!(
            "conflict: {}: {} entries set aside, their configuration differs from the {} kept ({diffs}); e.g. {}",
            c.bench,
            c.set_aside,
            c.kept,
            c.examples.join(", ")
        ));
    }
    if let mlbench_analyzer::Report::Classic(r) = report
        && !r.failures.is_empty()
    {
        lines.push(format!(
            "note: {} entr{} failed (NaN loss or incomplete); classic scoring keeps those with a throughput, as the original tool did (--scoring score removes them)",
            r.failures.len(),
            if r.failures.len() == 1 { "y" } else { "ies" }
        ));
    }
    lines
}
