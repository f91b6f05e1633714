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
//! The files are read through [`Files`]: a folder on disk and a zip in memory pair alike.

use super::files::{Files, Stream, display_parent, telemetry_display};
use mlbench_schema::ReportEntry;
use mlbench_schema::telemetry::nth_file_name;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

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
    /// The telemetry file as the report would name it.
    pub telemetry_display: String,
}

/// A run folder with telemetry: its idle files, and the pairs of its report files.
#[derive(Debug, Clone, Default)]
pub struct RunFolder {
    /// The run.
    pub run: String,
    /// Its `telemetry` folder, as its [`Files`] knows it ([`Stream::dir`]).
    pub dir: String,
    /// The same as the report names files (`output0/telemetry`).
    pub display: String,
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

/// The run folders of `files` that have a `telemetry` folder beside their report
/// streams, with their pairs; notes say what could not be paired. Per-test (E3) files
/// have no telemetry.
pub fn run_folders(files: &dyn Files, notes: &mut Vec<String>) -> Vec<RunFolder> {
    let mut folders: BTreeMap<String, (BTreeSet<String>, RunFolder)> = BTreeMap::new();
    for stream in files.streams() {
        let (names, folder) = match folders.entry(stream.dir.clone()) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(new) => {
                let Some(names) = files.names_in(&stream.dir).filter(|n| !n.is_empty()) else {
                    continue;
                };
                let folder = RunFolder {
                    run: stream.run.clone(),
                    dir: stream.dir.clone(),
                    display: telemetry_display(display_parent(&stream.display), ""),
                    idle: idle_files(&names),
                    pairs: Vec::new(),
                };
                new.insert((names, folder))
            }
        };
        let pairs = pair_stream(&stream, files.entries(&stream), names, notes);
        folder.pairs.extend(pairs);
    }
    folders.into_values().map(|(_, folder)| folder).collect()
}
