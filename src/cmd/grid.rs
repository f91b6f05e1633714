//! `mlbench grid`: submissions against a baseline submission (the analyzer compares, the
//! exporters present).

use super::{provenance, write};
use crate::cli::{GridArgs, GridFormat};
use crate::exit::{CommandError, Outcome};
use crate::output;
use mlbench_analyzer::compare::{self, CompareOptions};
use mlbench_analyzer::energy;
use mlbench_analyzer::grid_page::PageExtras;
use mlbench_export::{Csv, Exporter, Html, Json, Markdown, Table};
use mlbench_results::{Grid, Scaling};
use mlbench_schema::Timings;

/// The exporter of `--scaling` in `format` (the scaling table has no Parquet form).
fn scaling_exporter(format: GridFormat) -> Result<&'static dyn Exporter<Scaling>, CommandError> {
    Ok(match format {
        GridFormat::Table => &Table,
        GridFormat::Markdown => &Markdown,
        GridFormat::Json => &Json,
        GridFormat::Csv => &Csv,
        GridFormat::Parquet => {
            let message = "--scaling writes table, json, csv or markdown, not parquet";
            return Err(CommandError::Usage(message.into()));
        }
    })
}

/// Runs `mlbench grid`.
pub fn run(args: &GridArgs) -> Result<Outcome, CommandError> {
    let explain = args.explain.clone();
    if args.format == GridFormat::Parquet && args.output.is_none() {
        return Err(CommandError::Usage(
            "--format parquet writes binary data: give --output FILE".into(),
        ));
    }
    let scaling = args.scaling.then(|| scaling_exporter(args.format));
    let scaling = scaling.transpose()?;
    // Refuse before any work (and before writing either file) when one would be replaced.
    output::check_files(args.output.iter().chain(args.html.iter()), args.force)?;
    let clock = Timings::start();
    let options = CompareOptions::from(&args.compare);
    let keep = compare::Keep::for_grid(args.html.is_some(), args.per);
    let loaded = compare::load_all(&args.submissions, &options, keep)?;
    clock.lap("read and extract");
    if let Some(exporter) = scaling {
        let table = mlbench_analyzer::scaling::scaling(&loaded)?;
        write(exporter, &table, args.output.as_deref(), args.force)?;
        return Ok(Outcome::Ok);
    }
    // What the HTML page shows besides the grid, before the samples are consumed.
    let extras = args.html.as_ref().map(|_| PageExtras::of(&loaded));
    clock.skip();
    let grid = energy::grid_per(loaded, &args.submissions, &options, explain, args.per)?;
    clock.lap("grid and bootstrap");
    if let (Some(path), Some(extras)) = (&args.html, extras) {
        let page = extras.page(grid.clone(), provenance);
        write(&Html, &page, Some(path), args.force)?;
    }
    let exporter: &dyn Exporter<Grid> = match args.format {
        GridFormat::Table => &Table,
        GridFormat::Markdown => &Markdown,
        GridFormat::Json => &Json,
        GridFormat::Csv => &Csv,
        GridFormat::Parquet => {
            // Parquet is written by the analyzer: it needs Polars, which the exporters
            // never compile.
            let bytes = mlbench_analyzer::grid_frame::grid_parquet(&grid)
                .map_err(mlbench_analyzer::AnalyzeError::from)?;
            super::emit_bytes(&bytes, args.output.as_deref(), args.force)?;
            return Ok(Outcome::Ok);
        }
    };
    write(exporter, &grid, args.output.as_deref(), args.force)?;
    Ok(Outcome::Ok)
}
