//! `mlbench grid`: submissions against a baseline submission.

use crate::cli::{CompareArgs, GridArgs, GridFormat};
use crate::{Failure, Outcome, output};
use anyhow::anyhow;
use mlbench_analyzer::compare::{self, CompareOptions};
use mlbench_schema::Timings;

/// `grid`'s and `plot`'s comparison arguments, as the analyzer takes them.
impl From<&CompareArgs> for CompareOptions {
    fn from(args: &CompareArgs) -> Self {
        CompareOptions {
            labels: args.labels.clone(),
            baseline: args.baseline.clone(),
            suite: args.name.clone(),
            weights: args.weights.clone(),
            track: args.track.into(),
            resamples: args.resamples,
            seed: args.seed,
        }
    }
}

/// Runs `mlbench grid`.
pub fn run(args: &GridArgs) -> Result<Outcome, Failure> {
    let explain = args
        .explain
        .as_deref()
        .map(compare::parse_explain)
        .transpose()?;
    if args.format == GridFormat::Parquet && args.output.is_none() {
        return Err(anyhow!("--format parquet writes binary data: give --output FILE").into());
    }
    if args.compare.resamples == 0 {
        return Err(anyhow!("--resamples must be at least 1").into());
    }
    // Refuse before any work (and before writing either file) when one would be replaced.
    output::refuse_existing(args.output.iter().chain(args.html.iter()), args.force)?;
    let clock = Timings::start();
    let options = CompareOptions::from(&args.compare);
    let loaded = compare::load_all(&args.subs, &options)?;
    clock.lap("read and extract");
    // What the HTML page shows besides the grid: each submission's validation, inputs.
    let page_extras = match &args.html {
        Some(_) => Some(crate::html_pages::Extras::gather(
            &loaded,
            &args.subs,
            crate::html_pages::GRID_MIN_RUNS,
        )?),
        None => None,
    };
    clock.skip();
    let grid = compare::compute(loaded, &options, explain)?;
    clock.lap("grid and bootstrap");
    if let (Some(path), Some(extras)) = (&args.html, page_extras) {
        let text = crate::html_pages::grid_page(&grid, extras)?;
        output::emit(&text, Some(path), args.force)?;
    }
    match args.format {
        GridFormat::Table => output::emit(
            &crate::render::grid::table(&grid),
            args.output.as_deref(),
            args.force,
        )?,
        GridFormat::Markdown => output::emit(
            &crate::render::grid::markdown(&grid),
            args.output.as_deref(),
            args.force,
        )?,
        GridFormat::Json => output::emit(
            &crate::render::grid::json(&grid)?,
            args.output.as_deref(),
            args.force,
        )?,
        GridFormat::Csv => output::emit(
            &crate::render::grid::csv(&grid),
            args.output.as_deref(),
            args.force,
        )?,
        GridFormat::Parquet => output::emit_bytes(
            &mlbench_analyzer::grid_frame::grid_parquet(&grid)?,
            args.output.as_deref(),
            args.force,
        )?,
    }
    Ok(Outcome::Ok)
}
