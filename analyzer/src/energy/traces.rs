//! The power traces of a submission (`mlbench plot power`, the report page's power
//! section): each run's `telemetry` folder found among the files the validator's intake
//! lists ([`Submitted`]: a folder or a zip, listed; or a zip the report holds), its
//! files read in one pass each, grouped by bench and made into traces ([`build`]).
//!
//! One [`Trace`] per bench and run folder: the files of its copies
//! (`<bench>.<copy>.jsonl`; a `.2` file, a second configuration or an appended run, is a
//! trace of its own), a line per device of each file. Each device's idle baseline comes
//! from the run's `idle.<device>.jsonl` files. Only the regular files within the
//! submission are opened: a link, a FIFO or a device in a telemetry folder, or a file
//! over the limits, is passed over and said ([`Loaded::skipped`]).

pub mod build;

pub use build::{check_lines, trace, trace_of};

use super::submitted::{self, Submitted, display_parent, in_telemetry};
use crate::load::LoadError;
use mlbench_results::trace::Trace;
use mlbench_results::validation::Severity;
use mlbench_schema::telemetry::{TELEMETRY_FOLDER, TelemetryFile, TelemetryReadError};
use mlbench_submission::intake::{Intake, IntakeError, Limits, Opened};
use mlbench_submission::layout::base_name;
use mlbench_telemetry::fold::Reduced;
use mlbench_telemetry::summary::WindowSummary;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The bench name of the idle baseline's files (`idle.<device>.jsonl`), as `mlbench run`
/// writes them.
const IDLE_FILE: &str = "idle";

/// Why traces could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// A path that cannot be listed as a submission (not there, neither a folder nor a
    /// zip, a FIFO, a folder that cannot be listed).
    #[error(transparent)]
    Intake(#[from] IntakeError),
    /// A zip whose container is unsafe or broken (its first error, which names it).
    #[error("{message}")]
    Zip {
        /// The zip.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A submission without telemetry.
    #[error(
        "{}: no telemetry files (looked for telemetry/*.jsonl in it and in its folders)",
        .0.display()
    )]
    NoTelemetry(PathBuf),
    /// A telemetry file that cannot be read.
    #[error(transparent)]
    Read(#[from] TelemetryReadError),
}

// Telemetry that cannot be found or read is input the user gave.
mlbench_schema::classify_all!(Input: TraceError);

/// The traces under some paths, and what was passed over (a bench whose devices have no
/// power or energy to draw, a file not read), in words.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Loaded {
    /// One per bench (and numbered file) and run folder, in folder and bench order.
    pub traces: Vec<Trace>,
    /// What was passed over.
    pub skipped: Vec<String>,
}

impl Loaded {
    /// What `mlbench plot power` says: a warning per thing passed over, then a line per
    /// device ([`check_lines`]).
    pub fn lines(&self) -> Vec<String> {
        let warnings = self.skipped.iter().map(|s| format!("warning: {s}"));
        warnings
            .chain(self.traces.iter().flat_map(check_lines))
            .collect()
    }
}

/// The first trace of each bench, in the order given: a page shows one per bench, not
/// one per run folder and numbered file.
pub fn one_per_bench(traces: Vec<Trace>) -> Vec<Trace> {
    let mut seen = std::collections::HashSet::new();
    traces
        .into_iter()
        .filter(|t| seen.insert(t.bench.clone()))
        .collect()
}

/// The power traces of every run folder under each of `paths`, each listed by the
/// validator's intake within `max_bytes` (as every command reads a submission): a run
/// folder (`output0`, holding `telemetry/`), a submission or `mlbench run --out-dir`
/// folder (holding `output*/telemetry/`), a `telemetry` folder itself, or the zip of
/// any of them (refused where its container is unsafe or broken, as every command
/// refuses one; a folder's links and special files are passed over and said).
///
/// # Errors
/// [`TraceError`]: a path that cannot be listed or holds no telemetry, a zip whose
/// container is unsafe or broken, a telemetry file that cannot be read.
pub fn power_traces(paths: &[PathBuf], max_bytes: u64) -> Result<Loaded, TraceError> {
    let limits = Limits::within(max_bytes);
    let mut subs = Vec::with_capacity(paths.len());
    for path in paths {
        let sub = Submitted::list(path, &limits)?;
        if mlbench_schema::read_buffer::has_zip_extension(path) {
            refuse_broken(&sub, path)?;
        }
        subs.push((path.clone(), sub));
    }
    load(&subs)
}

/// The traces of a report's HTML page, one per bench ([`one_per_bench`]), where the
/// report has `energy` (none otherwise: nothing is read).
///
/// # Errors
/// As [`power_traces`].
pub fn page_traces(
    paths: &[PathBuf],
    energy: bool,
    max_bytes: u64,
) -> Result<Vec<Trace>, TraceError> {
    match energy {
        true => Ok(one_per_bench(power_traces(paths, max_bytes)?.traces)),
        false => Ok(Vec::new()),
    }
}

/// [`page_traces`] of the submissions `opened` once for the whole command (their listings,
/// not walked again).
///
/// # Errors
/// As [`power_traces`].
pub fn opened_traces(opened: &[Opened], energy: bool) -> Result<Vec<Trace>, TraceError> {
    if !energy {
        return Ok(Vec::new());
    }
    let subs: Vec<(PathBuf, Submitted)> = (opened.iter())
        .map(|o| (o.path().to_owned(), Submitted::Opened(o.listing())))
        .collect();
    Ok(one_per_bench(load(&subs)?.traces))
}

/// [`page_traces`] of the zip `zip` that `intake` already holds (read by the report).
///
/// # Errors
/// As [`power_traces`].
pub fn held_traces(zip: &Path, intake: &Intake, energy: bool) -> Result<Vec<Trace>, TraceError> {
    if !energy {
        return Ok(Vec::new());
    }
    let loaded = load(&[(zip.to_owned(), Submitted::Held(intake))])?;
    Ok(one_per_bench(loaded.traces))
}

/// A zip's listing, unless its container is unsafe or broken (as every command refuses
/// one: its first error).
fn refuse_broken(sub: &Submitted, zip: &Path) -> Result<(), TraceError> {
    match sub
        .findings()
        .into_iter()
        .find(|f| f.severity == Severity::Error)
    {
        Some(f) => Err(TraceError::Zip {
            path: zip.to_owned(),
            message: LoadError::Container {
                path: zip.to_owned(),
                rule: f.rule,
                location: f.location(),
                found: f.found.clone(),
            }
            .to_string(),
        }),
        None => Ok(()),
    }
}

/// The traces of `subs` (each with the path it was read from), named uniquely.
fn load(subs: &[(PathBuf, Submitted)]) -> Result<Loaded, TraceError> {
    let mut out = Loaded::default();
    for (path, sub) in subs {
        let within = Within::of(path);
        let folders = telemetry_folders(path, sub, &within)?;
        for finding in submitted::left_out(sub, within.prefix) {
            out.skipped.push(format!(
                "{}: {}; not drawn",
                path.join(&finding.0).display(),
                finding.1
            ));
        }
        for (run, dir) in folders {
            let run = match subs.len() > 1 {
                true => format!("{}-{run}", name_of(path)),
                false => run,
            };
            load_folder(path, sub, &dir, &run, &mut out)?;
        }
    }
    // Names unique among all: a second `a/output0` (two submissions named alike) gets `-2`.
    let mut seen: Vec<String> = Vec::new();
    for t in &mut out.traces {
        let base = t.name.clone();
        let mut n = 1;
        while seen.contains(&t.name) {
            n += 1;
            t.name = format!("{base}-{n}");
        }
        seen.push(t.name.clone());
    }
    Ok(out)
}

/// Where a submission's files are in a run's layout: a `telemetry` folder given itself
/// holds its files at its top.
struct Within {
    /// What its paths are below, for the classifier (`telemetry/`, or nothing).
    prefix: &'static str,
    /// The run of a `telemetry` folder at its top: the folder above the path's, or the
    /// path's own (a run folder, a zip's stem).
    top_run: String,
}

impl Within {
    fn of(path: &Path) -> Within {
        let is_telemetry = path.file_name().is_some_and(|n| n == TELEMETRY_FOLDER);
        if is_telemetry && path.is_dir() {
            let run = path.parent().map_or_else(|| "run".into(), name_of);
            return Within {
                prefix: "telemetry/",
                top_run: run,
            };
        }
        let top_run = match mlbench_schema::read_buffer::has_zip_extension(path) {
            true => path
                .file_stem()
                .map_or_else(|| "run".into(), |s| s.to_string_lossy().into_owned()),
            false => name_of(path),
        };
        Within {
            prefix: "",
            top_run,
        }
    }
}

fn name_of(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// `(run name, folder in the submission)` of each `telemetry` folder among `sub`'s files
/// (its run the folder above it), by run then folder.
fn telemetry_folders(
    path: &Path,
    sub: &Submitted,
    within: &Within,
) -> Result<Vec<(String, String)>, TraceError> {
    let paths = sub.paths();
    let dirs: BTreeSet<&str> = (paths.iter())
        .filter(|file| in_telemetry(&format!("{}{file}", within.prefix)))
        .map(|file| display_parent(file))
        .collect();
    if dirs.is_empty() {
        return Err(TraceError::NoTelemetry(path.to_owned()));
    }
    let mut folders: Vec<(String, String)> = (dirs.into_iter())
        .map(|dir| {
            let full = format!("{}{dir}", within.prefix);
            let above = full.trim_end_matches('/').rsplit('/').nth(1);
            let run = above.map_or_else(|| within.top_run.clone(), str::to_owned);
            (run, dir.to_owned())
        })
        .collect();
    folders.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(folders)
}

/// A bench file's group: its bench and what follows `<bench>.<copy>` in its name
/// (empty, or `.2`); `None` for an idle baseline's file.
fn group_of(name: &str, file: &TelemetryFile) -> Option<(String, String)> {
    let bench = file.header.bench.clone().filter(|b| b != IDLE_FILE)?;
    let stem = name.trim_end_matches(".jsonl").to_owned();
    let copy = file.header.copy.unwrap_or(0);
    let rest = stem
        .strip_prefix(&format!("{bench}.{copy}"))
        .map_or_else(|| format!(" ({stem})"), str::to_owned);
    Some((bench, rest))
}

/// The traces of the telemetry folder `dir` of `sub` (read from `path`), run `run`.
fn load_folder(
    path: &Path,
    sub: &Submitted,
    dir: &str,
    run: &str,
    out: &mut Loaded,
) -> Result<(), TraceError> {
    let display = match dir {
        "" => path.to_owned(),
        dir => path.join(dir),
    };
    let in_dir = |file: &str| display_parent(file) == dir;
    for file in sub.paths().into_iter().filter(|f| in_dir(f)) {
        if file.ends_with(".jsonl.part") {
            out.skipped.push(format!(
                "{}/{}: a sampler's unfinished file (its copy died, or is still running); not drawn",
                display.display(),
                base_name(file)
            ));
        }
    }
    let read = sub.read_each(
        |file| in_dir(file) && file.ends_with(".jsonl"),
        |file, content| {
            let shown = display.join(base_name(file));
            submitted::reduce_content(&shown.to_string_lossy(), content)
        },
    );
    let mut idle: Vec<WindowSummary> = Vec::new();
    // (bench, suffix) → files, in name order (copy 0 first).
    let mut groups: Vec<((String, String), Vec<Reduced>)> = Vec::new();
    for (file, read) in read {
        let name = base_name(&file);
        let file = match read {
            Ok(reduced) => reduced?,
            Err(why) => {
                let shown = display.join(name);
                out.skipped
                    .push(format!("{}: {why}; not drawn", shown.display()));
                continue;
            }
        };
        match group_of(name, &file.file) {
            None => idle.extend(file.summary_with_idle(&[]).windows),
            Some(key) => match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, files)) => files.push(file),
                None => groups.push((key, vec![file])),
            },
        }
    }
    idle.retain(|w| w.name == mlbench_schema::telemetry::IDLE_WINDOW);
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    for ((bench, suffix), mut files) in groups {
        files.sort_by_key(|f| f.file.header.copy);
        let name = format!("{run}-{bench}{suffix}");
        let trace = trace_of(&name, run, &bench, &files, &idle);
        if trace.lines.iter().all(|l| l.points.is_empty()) {
            out.skipped.push(format!(
                "{}/{bench}{suffix}: no device has power or an energy counter; not drawn",
                display.display()
            ));
        } else {
            out.traces.push(trace);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
