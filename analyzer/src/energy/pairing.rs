//! Which telemetry file belongs to which report entry.
//!
//! `mlbench run` writes, per run folder, one report stream per copy
//! (`output<r>/<jobsname>_<copy>.json`: one entry per bench and configuration, in the
//! order they ran) and one telemetry file per bench, copy and configuration
//! (`output<r>/telemetry/<bench>.<copy>.jsonl`, then `.2`, `.3` … for the next ones of
//! the same bench and copy, in the order they ran: each takes the first free name). So
//! the k-th entry of bench B in `<jobsname>_<copy>.json` pairs with the k-th telemetry
//! file of `B.<copy>`. The pairing is made only where it cannot be wrong by one:
//!
//! - the numbers agree (as many entries of B as files of `B.<copy>`, numbered without a
//!   hole), else none of that bench and copy is paired and a note says why;
//! - each file's header names the same bench and copy;
//! - a window shorter than the observations its entry timed is flagged
//!   (`window_shorter_than_timed`): the pair is then suspect, and said to be.

use mlbench_schema::reader::{FileName, read_file};
use mlbench_schema::telemetry::{TELEMETRY_FOLDER, nth_file_name};
use mlbench_schema::{Discovery, ReportEntry};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One report entry and the telemetry file of its timed window.
#[derive(Debug, Clone)]
pub struct Paired {
    /// The run, as the report names it.
    pub run: String,
    /// The report file, as the report names files.
    pub report: String,
    /// The entry's index in it.
    pub entry_index: usize,
    /// The entry.
    pub entry: ReportEntry,
    /// The bench.
    pub bench: String,
    /// The copy (`JOB_ID` of the report file's name).
    pub copy: u32,
    /// The entry's place among the entries of its bench in its file (from 0): the copies'
    /// entries at one place ran side by side (one configuration).
    pub ordinal: usize,
    /// The telemetry file.
    pub telemetry: PathBuf,
    /// The telemetry file as the report would name it.
    pub telemetry_display: String,
}

/// A run folder with telemetry: its idle files, and the pairs of its report files.
#[derive(Debug, Clone, Default)]
pub struct RunFolder {
    /// The run.
    pub run: String,
    /// Its `telemetry` folder.
    pub dir: PathBuf,
    /// The same as the report names files (`output0/telemetry`).
    pub display: String,
    /// Its idle baselines (`idle.<device>.jsonl`).
    pub idle: Vec<PathBuf>,
    /// Its entries paired with their files.
    pub pairs: Vec<Paired>,
}

/// The folder of a display path (`output0/fast_0.json` → `output0`; empty at the top).
fn display_parent(display: &str) -> &str {
    display.rsplit_once('/').map_or("", |(parent, _)| parent)
}

/// `parent/telemetry/name`, as the report names files.
fn telemetry_display(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        format!("{TELEMETRY_FOLDER}/{name}")
    } else {
        format!("{parent}/{TELEMETRY_FOLDER}/{name}")
    }
}

/// The idle baselines in a telemetry folder, sorted by name.
fn idle_files(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("idle.") && n.ends_with(".jsonl"))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// The numbered names of `bench` and `copy` in `dir`, from 1 up to the first free one,
/// each with its file when it is whole: a crashed sampler's `.part` holds its number (the
/// runner numbers past it), so it keeps its entry's place without a file.
fn numbered_files(dir: &Path, bench: &str, copy: u32) -> Vec<(Option<PathBuf>, String)> {
    (1..)
        .map(|n| nth_file_name(bench, copy, n))
        .map(|name| {
            let path = dir.join(&name);
            let part = dir.join(format!("{name}.part"));
            let slot = if path.is_file() {
                Some(Some(path))
            } else if part.exists() {
                Some(None)
            } else {
                None
            };
            (slot, name)
        })
        .take_while(|(slot, _)| slot.is_some())
        .map(|(slot, name)| (slot.flatten(), name))
        .collect()
}

/// Pairs one report stream's entries with the files of `dir`, bench by bench; a note for
/// each bench whose numbers disagree.
fn pair_stream(
    found: &mlbench_schema::discover::FoundFile,
    copy: u32,
    dir: &Path,
    notes: &mut Vec<String>,
) -> Vec<Paired> {
    let parsed = read_file(&found.path, &found.display);
    let mut by_bench: BTreeMap<String, Vec<(usize, ReportEntry)>> = BTreeMap::new();
    for (index, entry) in parsed.entries {
        if let Some(bench) = entry.name().map(str::to_owned) {
            by_bench.entry(bench).or_default().push((index, entry));
        }
    }
    let parent = display_parent(&found.display);
    let mut out = Vec::new();
    for (bench, entries) in by_bench {
        let files = numbered_files(dir, &bench, copy);
        if files.is_empty() {
            continue;
        }
        if files.len() != entries.len() {
            notes.push(format!(
                "{}: {} entr{} of {bench} but {} telemetry file{} of {bench}.{copy}: not paired (which file is whose cannot be told)",
                found.display,
                entries.len(),
                if entries.len() == 1 { "y" } else { "ies" },
                files.len(),
                if files.len() == 1 { "" } else { "s" },
            ));
            continue;
        }
        for (ordinal, ((entry_index, entry), (path, name))) in
            entries.into_iter().zip(files).enumerate()
        {
            let Some(path) = path else {
                notes.push(format!(
                    "{}: entry {entry_index} ({bench}): its telemetry was never finished ({name}.part)",
                    found.display
                ));
                continue;
            };
            out.push(Paired {
                run: found.run.clone(),
                report: found.display.clone(),
                entry_index,
                entry,
                bench: bench.clone(),
                copy,
                ordinal,
                telemetry: path,
                telemetry_display: telemetry_display(parent, &name),
            });
        }
    }
    out
}

/// The run folders of `discovery` that have a `telemetry` folder beside their report
/// streams, with their pairs; notes say what could not be paired. Per-test (E3) files
/// and zips have no telemetry.
pub fn run_folders(discovery: &Discovery, notes: &mut Vec<String>) -> Vec<RunFolder> {
    let mut folders: BTreeMap<PathBuf, RunFolder> = BTreeMap::new();
    for found in &discovery.files {
        let FileName::Legacy { job_id, .. } = found.name else {
            continue;
        };
        let Some(dir) = found.path.parent().map(|p| p.join(TELEMETRY_FOLDER)) else {
            continue;
        };
        if !dir.is_dir() {
            continue;
        }
        let pairs = pair_stream(found, job_id, &dir, notes);
        let folder = folders.entry(dir.clone()).or_insert_with(|| RunFolder {
            run: found.run.clone(),
            display: telemetry_display(display_parent(&found.display), "")
                .trim_end_matches('/')
                .to_owned(),
            idle: idle_files(&dir),
            dir,
            pairs: Vec::new(),
        });
        folder.pairs.extend(pairs);
    }
    folders.into_values().collect()
}
