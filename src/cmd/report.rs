//! `mlbench report`: read, score (the analyzer), present (the exporters), write.

use super::{provenance, write};
use crate::cli::{Format, ReportArgs, ScoringArg};
use crate::exit::{CommandError, Outcome};
use crate::output;
use mlbench_analyzer::energy;
use mlbench_analyzer::page::{Held, page_inputs};
use mlbench_analyzer::views::{gpu_relative, run_means};
use mlbench_analyzer::{DocOptions, discover_inputs, report_document};
use mlbench_export::{Csv, Exporter, Html, Json, Markdown, Table, paint_verdicts};
use mlbench_results::{ReportDoc, ReportPage};
use mlbench_schema::runtime::ParityTable;
use mlbench_schema::{Scoring, TargetTable, Timings};
use mlbench_submission::Limits;
use std::path::{Path, PathBuf};

/// The zip among the inputs, when one is given: it is read alone (its runs are complete
/// in it), so mixing it with other paths is a usage error.
fn zip_input(paths: &[PathBuf]) -> Result<Option<&Path>, CommandError> {
    let is_zip = |p: &PathBuf| p.is_file() && mlbench_schema::read_buffer::has_zip_extension(p);
    match paths {
        [one] if is_zip(one) => Ok(Some(one)),
        many => match many.iter().find(|p| is_zip(p)) {
            Some(zip) => Err(CommandError::Usage(format!(
                "{}: a zipped submission is read alone; give it as the only submission",
                zip.display()
            ))),
            None => Ok(None),
        },
    }
}

fn exporter(format: Format) -> &'static dyn Exporter<ReportDoc> {
    match format {
        Format::Table => &Table,
        Format::Json => &Json,
        Format::Csv => &Csv,
        Format::Markdown => &Markdown,
    }
}

/// What `load` read: the energy, the samples, and the zip's path and files or the folder
/// opened where the HTML page will need them (each read once).
type Loaded = (
    Option<energy::Energy>,
    mlbench_analyzer::LoadedSamples,
    Held,
);

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The samples of the submission and its energy: a packed zip read in place with the
/// validator's limits (its files kept where the HTML page needs them too), or a folder's
/// report files (those past the size limit set aside, named) and its telemetry within
/// the same limit.
fn load(args: &ReportArgs, targets: &TargetTable, clock: &Timings) -> Result<Loaded, CommandError> {
    let (max_bytes, name) = (args.size.max_bytes, args.name.as_deref());
    Ok(match zip_input(&args.submissions)? {
        Some(zip) => {
            let intake = mlbench_analyzer::read_intake(zip, &Limits::within(max_bytes))?;
            clock.lap("read the zip");
            let loaded = mlbench_analyzer::samples_of_intake(&intake, zip, name, targets)?;
            let energy = energy::energy_of_intake(&intake, &loaded.set.suite);
            (energy, loaded, Held::zip(args.html.is_some(), zip, intake))
        }
        None => {
            let (mut discovery, opened) = discover_inputs(&args.submissions, name, max_bytes)?;
            let set_aside = discovery.set_aside_over(max_bytes);
            clock.lap("discover");
            let mut loaded = mlbench_analyzer::load_samples(discovery, targets);
            loaded.errors.splice(0..0, set_aside);
            let energy = energy::energy_of_paths(&args.submissions, &loaded.set.suite, max_bytes);
            (energy, loaded, Held::Opened(opened))
        }
    })
}

/// Names every unreadable file on standard error; an error unless `skip` (then the
/// report is computed from the entries that could be read).
fn say_unreadable(
    loaded: &mlbench_analyzer::LoadedSamples,
    skip: bool,
) -> Result<(), CommandError> {
    if loaded.errors.is_empty() {
        return Ok(());
    }
    let level = if skip { "warning" } else { "error" };
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
    let (ps, fs) = (plural(problems), plural(files));
    if !skip {
        return Err(CommandError::Input(format!(
            "{problems} problem{ps} in {files} file{fs}: no report computed (--skip-unreadable computes one from the entries that could be read)"
        )));
    }
    eprintln!(
        "warning: {problems} problem{ps} in {files} file{fs}: the report uses only the entries that could be read"
    );
    Ok(())
}

/// Runs the report command.
pub fn run(args: &ReportArgs) -> Result<Outcome, CommandError> {
    let scoring = match args.scoring {
        ScoringArg::Classic => Scoring::Classic,
        ScoringArg::Score => Scoring::Score,
    };
    if let Some(price) = args.price
        && !(price.is_finite() && price > 0.0)
    {
        return Err(CommandError::Usage(format!(
            "--price must be a positive number, got {price}"
        )));
    }
    let targets = TargetTable::load_or_builtin(args.targets.as_deref(), scoring, &args.gpu_model)?;
    for warning in targets.warnings() {
        eprintln!("warning: {}: {warning}", targets.source);
    }
    // Refuse before any work (and before writing either file) when one would be replaced.
    output::check_files(args.output.iter().chain(args.html.iter()), args.force)?;
    let clock = Timings::start();
    let (energy, loaded, held) = load(args, &targets, &clock)?;
    clock.lap("read, parse and extract, energy");
    say_unreadable(&loaded, args.skip_unreadable)?;
    let options = DocOptions {
        scoring,
        min_runs: args.min_runs,
        price: args.price,
        intervals: args.ci,
        parity: ParityTable::builtin()?,
        design: args.precision.design().map_err(CommandError::Usage)?,
    };
    let (set, mut doc) = report_document(loaded, &targets, &options)?;
    doc.energy = energy;
    clock.lap("samples, statistics, stragglers and intervals");
    if let Some(path) = &args.html {
        let limits = Limits::within(args.size.max_bytes);
        let (energy, min_runs) = (doc.energy.is_some(), args.min_runs as usize);
        let inputs = page_inputs(&args.submissions, &held, energy, min_runs, &limits)?;
        let page = ReportPage {
            suite: set.suite.clone(),
            gpus: (!set.devices.is_empty()).then(|| gpu_relative(&set)),
            runs: run_means(&set, &targets),
            gpu_model: targets.gpu_model.clone(),
            checks: inputs.checks,
            // A trace that cannot be read costs the page its section, not the report.
            power: inputs.power.unwrap_or_else(|e| {
                eprintln!("warning: the HTML page has no power traces: {e}");
                Vec::new()
            }),
            provenance: provenance(inputs.digests),
            doc: doc.clone(),
        };
        write(&Html, &page, Some(path), args.force)?;
    }
    // Table and Markdown carry the notes; for the data formats they go to standard error.
    let embedded = matches!(args.format, Format::Table | Format::Markdown);
    if !embedded || args.output.is_some() {
        for line in &doc.notes {
            eprintln!("{line}");
        }
    }
    let mut bytes = exporter(args.format).export(&doc)?;
    if args.format == Format::Table && args.output.is_none() && super::colour_on_stdout() {
        bytes = paint_verdicts(&String::from_utf8_lossy(&bytes)).into_bytes();
    }
    super::emit_bytes(&bytes, args.output.as_deref(), args.force)?;
    clock.lap("render and write");
    Ok(Outcome::failed_if(args.check && !doc.report.passed()))
}
