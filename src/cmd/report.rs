//! `mlbench report`: read, score (the analyzer), present (the exporters), write.

use super::{provenance, write};
use crate::cli::{Format, ReportArgs, ScoringArg};
use crate::exit::{CommandError, Outcome};
use crate::output;
use mlbench_analyzer::batch_sweep::{read_sweep, sweep_of};
use mlbench_analyzer::inputs::read_report_inputs;
use mlbench_analyzer::page::report_page;
use mlbench_analyzer::{DocOptions, report_document};
use mlbench_export::{Csv, Exporter, Html, Json, Markdown, Table, paint_verdicts};
use mlbench_schema::runtime::ParityTable;
use mlbench_schema::{Scoring, TargetTable, Timings};
use mlbench_submission::Limits;

/// `report --by batch_size`: throughput against batch size instead of the scores.
fn by_batch_size(args: &ReportArgs, targets: TargetTable) -> Result<Outcome, CommandError> {
    let (paths, of) = (&args.submissions[..], (targets, args.skip_unreadable));
    let input = (paths, args.name.as_deref(), args.size.max_bytes);
    let set = read_sweep(input, of, |l| eprintln!("{l}"))?;
    let sweep = sweep_of(&set, args.min_runs)?;
    say_notes(args, &sweep.notes);
    let (path, format) = (args.output.as_deref(), exporter(args.format));
    write(format, &sweep, path, args.force)?;
    Ok(Outcome::Ok)
}

/// Table and Markdown carry the notes; for the data formats, or a file, they go to
/// standard error.
fn say_notes(args: &ReportArgs, notes: &[String]) {
    if !matches!(args.format, Format::Table | Format::Markdown) || args.output.is_some() {
        notes.iter().for_each(|line| eprintln!("{line}"));
    }
}

fn exporter<M>(format: Format) -> &'static dyn Exporter<M>
where
    Table: Exporter<M>,
    Json: Exporter<M>,
    Csv: Exporter<M>,
    Markdown: Exporter<M>,
{
    match format {
        Format::Table => &Table,
        Format::Json => &Json,
        Format::Csv => &Csv,
        Format::Markdown => &Markdown,
    }
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
    if args.by.is_some() {
        return by_batch_size(args, targets);
    }
    let clock = Timings::start();
    let (paths, name, max_bytes) = (&args.submissions, args.name.as_deref(), args.size.max_bytes);
    let (page, of) = (args.html.is_some(), (&targets, &clock, args.min_runs));
    let read = read_report_inputs(paths, name, max_bytes, page, of)?;
    let (energy, loaded, held) = (read.energy, read.loaded, read.held);
    clock.lap("read, parse and extract, energy");
    let (lines, refused) = loaded.unreadable_lines(args.skip_unreadable);
    lines.iter().for_each(|line| eprintln!("{line}"));
    refused.map_or(Ok(()), |why| Err(CommandError::Input(why)))?;
    let options = DocOptions {
        scoring,
        min_runs: args.min_runs,
        price: args.price,
        intervals: args.ci,
        parity: ParityTable::builtin()?,
        design: args.precision.design().map_err(CommandError::Usage)?,
    };
    let (set, mut doc) = report_document((loaded, read.validity), &targets, &options)?;
    doc.energy = energy;
    clock.lap("samples, statistics, stragglers and intervals");
    if let Some(path) = &args.html {
        let limits = (&Limits::within(args.size.max_bytes), read.checks);
        let of = (&set, &targets, &doc);
        let (page, no_power) = report_page(of, (paths, &held), limits, provenance);
        if let Some(e) = no_power {
            eprintln!("warning: the HTML page has no power traces: {e}");
        }
        write(&Html, &page, Some(path), args.force)?;
    }
    say_notes(args, &doc.notes);
    let mut bytes = exporter(args.format).export(&doc)?;
    if args.format == Format::Table && args.output.is_none() && super::colour_on_stdout() {
        bytes = paint_verdicts(&String::from_utf8_lossy(&bytes)).into_bytes();
    }
    super::emit_bytes(&bytes, args.output.as_deref(), args.force)?;
    clock.lap("render and write");
    Ok(Outcome::failed_if(args.check && !doc.passed()))
}
