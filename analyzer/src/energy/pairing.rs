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
//!
//! The files are read through [`Submitted`]: a folder and a zip, listed or held, pair
//! alike.

use super::submitted::{Submitted, display_parent, telemetry_display};
use mlbench_schema::ReportEntry;
use mlbench_schema::reader::{FileName, Reading, parse_each_of};
use mlbench_schema::telemetry::nth_file_name;
use mlbench_submission::layout::{Role, classify};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One report stream (`<suite>_<copy>.json`) of a submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    /// The file, as the report names files (`output0/fast_0.json`): its path in its
    /// submission.
    pub display: String,
    /// Its run.
    pub run: String,
    /// Its copy (`JOB_ID`).
    pub copy: u32,
    /// The telemetry folder beside it (`output0/telemetry`).
    pub dir: String,
}

/// The report streams of `suite` among `paths` (per-test files have no telemetry), by
/// run then path.
pub fn streams(paths: &[&str], suite: &str) -> Vec<Stream> {
    let mut streams: Vec<Stream> = (paths.iter())
        .filter_map(|path| match classify(path, || false) {
            Role::Report {
                name: FileName::Legacy { suite: s, job_id },
                run,
            } if s == suite => Some(Stream {
                dir: telemetry_display(display_parent(path), ""),
                display: (*path).to_owned(),
                run,
                copy: job_id,
            }),
            _ => None,
        })
        .collect();
    streams.sort_by(|a, b| (&a.run, &a.display).cmp(&(&b.run, &b.display)));
    streams
}

/// The names of the files directly in the folder `dir` among `paths` (sorted).
fn names_in(paths: &[&str], dir: &str) -> BTreeSet<String> {
    let prefix = format!("{dir}/");
    (paths.iter())
        .filter_map(|path| path.strip_prefix(&prefix))
        .filter(|rest| !rest.contains('/'))
        .map(str::to_owned)
        .collect()
}

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
    /// The telemetry file's name in its run's telemetry folder ([`RunFolder::dir`]).
    pub telemetry: String,
    /// The telemetry file as the report would name it: its path in its submission.
    pub telemetry_display: String,
}

/// A run folder with telemetry: its idle files, and the pairs of its report files.
#[derive(Debug, Clone, Default)]
pub struct RunFolder {
    /// The run.
    pub run: String,
    /// Its `telemetry` folder, as the report names files (`output0/telemetry`).
    pub dir: String,
    /// Its idle baselines' names (`idle.<device>.jsonl`), sorted.
    pub idle: Vec<String>,
    /// Its entries paired with their files.
    pub pairs: Vec<Paired>,
}

/// The idle baselines among a telemetry folder's `names`, sorted.
fn idle_files(names: &BTreeSet<String>) -> Vec<String> {
    (names.iter())
        .filter(|n| n.starts_with("idle.") && n.ends_with(".jsonl"))
        .cloned()
        .collect()
}

/// The numbered names of `bench` and `copy` among `names`, from 1 up to the first free
/// one, each with whether its file is whole: a crashed sampler's `.part` holds its number
/// (the runner numbers past it), so it keeps its entry's place without a file.
fn numbered_files(names: &BTreeSet<String>, bench: &str, copy: u32) -> Vec<(bool, String)> {
    (1..)
        .map(|n| nth_file_name(bench, copy, n))
        .map(|name| {
            let whole = names.contains(&name);
            let part = names.contains(&format!("{name}.part"));
            ((whole || part).then_some(whole), name)
        })
        .map_while(|(slot, name)| Some((slot?, name)))
        .collect()
}

/// Pairs one report stream's `entries` with the files named `names` of its telemetry
/// folder, bench by bench; a note for each bench whose numbers disagree.
fn pair_stream(
    stream: &Stream,
    entries: Vec<(usize, ReportEntry)>,
    names: &BTreeSet<String>,
    notes: &mut Vec<String>,
) -> Vec<Paired> {
    let mut by_bench: BTreeMap<String, Vec<(usize, ReportEntry)>> = BTreeMap::new();
    for (index, entry) in entries {
        if let Some(bench) = entry.name().map(str::to_owned) {
            by_bench.entry(bench).or_default().push((index, entry));
        }
    }
    let (parent, copy) = (display_parent(&stream.display), stream.copy);
    let mut out = Vec::new();
    for (bench, entries) in by_bench {
        let files = numbered_files(names, &bench, copy);
        if files.is_empty() {
            continue;
        }
        if files.len() != entries.len() {
            notes.push(format!(
                "{}: {} entr{} of {bench} but {} telemetry file{} of {bench}.{copy}: not paired (which file is whose cannot be told)",
                stream.display,
                entries.len(),
                if entries.len() == 1 { "y" } else { "ies" },
                files.len(),
                if files.len() == 1 { "" } else { "s" },
            ));
            continue;
        }
        for (ordinal, ((entry_index, entry), (whole, name))) in
            entries.into_iter().zip(files).enumerate()
        {
            if !whole {
                notes.push(format!(
                    "{}: entry {entry_index} ({bench}): its telemetry was never finished ({name}.part)",
                    stream.display
                ));
                continue;
            }
            out.push(Paired {
                run: stream.run.clone(),
                report: stream.display.clone(),
                entry_index,
                entry,
                bench: bench.clone(),
                copy,
                ordinal,
                telemetry_display: telemetry_display(parent, &name),
                telemetry: name,
            });
        }
    }
    out
}

/// The run folders of `sub`'s report streams of `suite` that have a `telemetry` folder
/// beside them, with their pairs; notes say what could not be paired. Only those streams
/// are read; per-test (E3) files have no telemetry.
pub fn run_folders(sub: &Submitted, suite: &str, notes: &mut Vec<String>) -> Vec<RunFolder> {
    let paths = sub.paths();
    let mut folders: BTreeMap<String, (BTreeSet<String>, RunFolder)> = BTreeMap::new();
    let mut beside: Vec<Stream> = Vec::new();
    for stream in streams(&paths, suite) {
        if !folders.contains_key(&stream.dir) {
            let names = names_in(&paths, &stream.dir);
            if names.is_empty() {
                continue;
            }
            let folder = RunFolder {
                run: stream.run.clone(),
                dir: stream.dir.clone(),
                idle: idle_files(&names),
                pairs: Vec::new(),
            };
            folders.insert(stream.dir.clone(), (names, folder));
        }
        beside.push(stream);
    }
    let wanted: BTreeSet<&str> = beside.iter().map(|s| s.display.as_str()).collect();
    let mut entries: HashMap<String, Vec<(usize, ReportEntry)>> = (sub.read_each(
        |path| wanted.contains(path),
        |path, content| {
            let mut entries = Vec::new();
            parse_each_of(path, content, Reading::Full, |i, e| entries.push((i, e)));
            entries
        },
    ))
    .into_iter()
    .filter_map(|(path, read)| Some((path, read.ok()?)))
    .collect();
    for stream in beside {
        let Some((names, folder)) = folders.get_mut(&stream.dir) else {
            continue;
        };
        let read = entries.remove(&stream.display).unwrap_or_default();
        folder
            .pairs
            .extend(pair_stream(&stream, read, names, notes));
    }
    folders.into_values().map(|(_, folder)| folder).collect()
}
