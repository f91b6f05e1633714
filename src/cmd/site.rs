//! `mlbench history`, `publish` and `verify`: the store's rounds over time and the site
//! (`mlbench_site`); this reads the arguments and says what was done.

use super::write;
use crate::cli::{Format, HistoryArgs, PublishArgs, VerifyArgs};
use crate::exit::{CommandError, Outcome};
use crate::output;
use mlbench_analyzer::history::HistoryOptions;
use mlbench_archive::{Store, date};
use mlbench_export::charts::{ImageFiles, history_charts, write_charts};
use mlbench_export::{Csv, Exporter, Json, Markdown, Table};
use mlbench_results::history::History;
use mlbench_site::SiteOptions;
use std::path::{Path, PathBuf};

/// `--store`, else `$MLBENCH_STORE`, else `./mlbench-store`; it must hold an index.
fn open_store(store: &Option<PathBuf>) -> Result<Store, CommandError> {
    let root = (store.clone())
        .or_else(|| std::env::var_os("MLBENCH_STORE").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("mlbench-store"));
    if !root.join(mlbench_archive::store::INDEX_NAME).is_file() {
        let why = format!(
            "{}: no store here (no index.sqlite; `mlbench archive add` makes one)",
            root.display()
        );
        return Err(CommandError::Input(why));
    }
    Ok(Store::open(&root)?)
}

/// `--now`, checked, else today.
fn now_of(now: &Option<String>) -> Result<String, CommandError> {
    match now {
        None => Ok(date::today()),
        Some(text) => date::parse(text)
            .map(str::to_owned)
            .ok_or_else(|| CommandError::Usage(format!("--now {text}: not a date YYYY-MM-DD"))),
    }
}

fn left_out(unreleased: usize, removed: usize, now: &str) -> String {
    let count = mlbench_schema::words::count;
    format!(
        "left out: {} released after {now}, {}",
        count(unreleased, "submission", "submissions"),
        count(removed, "removed", "removed")
    )
}

/// Runs `mlbench history`.
pub fn history(args: &HistoryArgs) -> Result<Outcome, CommandError> {
    output::check_files(args.output.iter(), args.force)?;
    if let Some(dir) = &args.plot {
        output::check_folder(dir)?;
    }
    let store = open_store(&args.store)?;
    let now = now_of(&args.now)?;
    let options = HistoryOptions {
        resamples: args.resamples,
        seed: args.seed,
        ..HistoryOptions::default()
    };
    let made = mlbench_site::store_history(&store, &now, &options)?;
    eprintln!("{}", left_out(made.unreleased, made.removed, &now));
    if let Some(dir) = &args.plot {
        let files = ImageFiles {
            png: true,
            svg: true,
        };
        let written = write_charts(dir, &history_charts(&made.history)?, files, args.force)?;
        eprintln!("wrote {} files into {}", written.len(), dir.display());
    }
    let exporter: &dyn Exporter<History> = match args.format {
        Format::Table => &Table,
        Format::Json => &Json,
        Format::Csv => &Csv,
        Format::Markdown => &Markdown,
    };
    write(exporter, &made.history, args.output.as_deref(), args.force)?;
    Ok(Outcome::Ok)
}

/// Runs `mlbench publish`.
pub fn publish(args: &PublishArgs) -> Result<Outcome, CommandError> {
    let store = open_store(&args.store)?;
    let now = now_of(&args.now)?;
    let options = SiteOptions {
        resamples: args.resamples,
        seed: args.seed,
        gpu_model: args.gpu_model.clone(),
        ..SiteOptions::default()
    };
    let p = mlbench_site::publish(&store, &args.out, &now, options, args.force)?;
    eprintln!(
        "published {} in {} into {} ({} files, {} bytes); {}",
        mlbench_schema::words::count(p.submissions, "submission", "submissions"),
        mlbench_schema::words::count(p.rounds, "round", "rounds"),
        args.out.display(),
        p.files,
        p.bytes,
        left_out(p.unreleased, p.removed, &now)
    );
    Ok(Outcome::Ok)
}

/// Runs `mlbench verify`.
pub fn verify(args: &VerifyArgs) -> Result<Outcome, CommandError> {
    let site: &Path = &args.site;
    let differences = mlbench_site::verify(site)?;
    for d in &differences {
        println!("{d}");
    }
    let counted = mlbench_schema::words::count(differences.len(), "difference", "differences");
    match differences.is_empty() {
        true => eprintln!(
            "{}: every figure is what its zips make; SHA256SUMS holds",
            site.display()
        ),
        false => eprintln!("{}: {counted} from what its zips make", site.display()),
    }
    Ok(Outcome::failed_if(!differences.is_empty()))
}
