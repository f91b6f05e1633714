//! `mlbench archive`: the store keeps and indexes (`mlbench_archive`); the analyzer says
//! what each submission is; this reads the arguments and says what was done.

use super::tool;
use crate::cli::{ArchiveAction, ArchiveArgs, Format};
use crate::exit::{CommandError, Outcome};
use mlbench_analyzer::compare::{self, parse_label};
use mlbench_archive::{Added, NewEntry, Store, date};
use mlbench_export::{Csv, Exporter, Json, Markdown, Table};
use mlbench_results::archive::{ARCHIVE_SCHEMA_VERSION, ArchiveEntry, ArchiveListing};
use mlbench_validator::pack::{PackOptions, pack_folder};
use std::path::{Path, PathBuf};

/// Runs `mlbench archive`.
pub fn run(args: &ArchiveArgs) -> Result<Outcome, CommandError> {
    let root = (args.store.clone())
        .or_else(|| std::env::var_os("MLBENCH_STORE").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("mlbench-store"));
    let mut store = Store::open(&root)?;
    let entries = match &args.action {
        ArchiveAction::Add {
            round,
            submissions,
            labels,
            release,
            allow_errors,
        } => {
            let release = release.as_deref().map(checked_date).transpose()?;
            for sub in submissions {
                let label = label_of(sub, labels)?;
                add(
                    &mut store,
                    round,
                    sub,
                    &label,
                    release.clone(),
                    *allow_errors,
                )?;
            }
            return Ok(Outcome::Ok);
        }
        ArchiveAction::List => store.list()?,
        ArchiveAction::Show { id } => vec![store.find(id)?],
        ArchiveAction::Remove { id } => {
            let e = store.remove(id, &date::today())?;
            eprintln!(
                "removed #{} ({} of round {}); its zip stays",
                e.id, e.label, e.round
            );
            return Ok(Outcome::Ok);
        }
        ArchiveAction::Check => {
            let problems = store.check()?;
            for p in &problems {
                let id = p.id.map_or_else(String::new, |i| format!("#{i} "));
                println!("{id}{}: {}", p.path.display(), p.what);
            }
            let n = store.list()?.len();
            let counted = mlbench_schema::words::count(problems.len(), "problem", "problems");
            eprintln!("checked {n} entries of {}: {counted}", root.display());
            return Ok(Outcome::failed_if(!problems.is_empty()));
        }
    };
    let store = root.display().to_string();
    let listing = ArchiveListing {
        schema_version: ARCHIVE_SCHEMA_VERSION,
        store,
        entries,
    };
    let exporter: &dyn Exporter<ArchiveListing> = match args.format {
        Format::Table => &Table,
        Format::Json => &Json,
        Format::Csv => &Csv,
        Format::Markdown => &Markdown,
    };
    super::write(exporter, &listing, None, false)?;
    Ok(Outcome::Ok)
}

fn checked_date(text: &str) -> Result<String, CommandError> {
    let why = format!("--release {text}: not a date YYYY-MM-DD");
    date::parse(text)
        .map(str::to_owned)
        .ok_or(CommandError::Usage(why))
}

/// `sub`'s label: its `--label NAME=SUB`, else its file or folder name.
fn label_of(sub: &Path, labels: &[String]) -> Result<String, CommandError> {
    for text in labels {
        let (name, path) = parse_label(text)?;
        if path == sub {
            return Ok(name);
        }
    }
    Ok(compare::default_label(sub))
}

/// Keeps `sub` (packed first when a folder) in `round` as `label`, and says what it did.
fn add(
    store: &mut Store,
    round: &str,
    sub: &Path,
    label: &str,
    released: Option<String>,
    allow_errors: bool,
) -> Result<(), CommandError> {
    let bytes = match sub.is_dir() {
        true => {
            let options = PackOptions {
                allow_errors,
                ..PackOptions::defaults(tool())
            };
            pack_folder(sub, None, &options)?.zip
        }
        false => std::fs::read(sub)
            .map_err(|e| CommandError::Input(format!("{}: {e}", sub.display())))?,
    };
    let (sha256, path) = store.put_zip(&bytes)?;
    let l = compare::describe(&path, label)?;
    let validity = mlbench_validator::validity_of_check(l.check(), &l.sub.listing);
    let new = NewEntry {
        round: round.to_owned(),
        label: label.to_owned(),
        track: l.track.as_str().to_owned(),
        hardware: l.hardware(),
        runtime: l.runtime.short_label(),
        validity,
        tool: tool(),
        received: date::today(),
        released,
    };
    let said = |e: &ArchiveEntry| {
        format!(
            "{} as #{} (round {round}, sha256 {})",
            e.label,
            e.id,
            &e.sha256[..12]
        )
    };
    match store.add(&sha256, &new)? {
        Added::New(e) => eprintln!("archived {}", said(&e)),
        Added::AlreadyThere(e) => eprintln!("already archived: {}; nothing changed", said(&e)),
    }
    Ok(())
}
