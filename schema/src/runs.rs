//! Telling the runs of a submission apart: one rule for every command.
//!
//! A *run* is one repetition of the suite. Where its entries are depends on how the
//! suite was run:
//! - `run_10.sh` moved each run's output into its own folder (`output0` … `output9`):
//!   a legacy stream belongs to the run of its folder;
//! - E3 per-test files carry their run in the name (`…R3…`): `folder/R3`;
//! - when the suite ran several times into one folder (`run.sh` repeated without the
//!   move, or a vendor's own loop), every GPU's stream holds every run in turn. The
//!   entries' `run_id` (the suite's `RUN_ID`) then tells the runs apart: a folder whose
//!   streams carry several `run_id`s holds one run per `run_id`, named `folder/run 3`.
//!
//! Without `run_id`, or with one `run_id` per folder, the folder is the run, as before.

use crate::entry::ReportEntry;
use crate::value::Value;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// The entry's `run_id` as text (the suite wrote `str(uid)`, or the int 0 when unset).
pub fn run_id_of(entry: &ReportEntry) -> Option<Cow<'_, str>> {
    match entry.get("run_id")? {
        Value::Str(s) => Some(Cow::Borrowed(s)),
        Value::Int(i) => Some(Cow::Owned(i.to_string())),
        _ => None,
    }
}

/// One report file, as far as runs go.
#[derive(Debug, Clone)]
pub struct FileRuns {
    /// The run its name and folder give (see `mlbench_submission::discover`).
    pub run: String,
    /// A legacy stream (whose runs `run_id` may split); per-test files name their run.
    pub legacy: bool,
    /// The `run_id`s of its entries, in order, as stretches of entries that share one
    /// ([`RunIds`]).
    pub run_ids: RunIds,
}

/// The `run_id`s of a file's entries as stretches: a stream's entries come run after
/// run, so a file of any length holds a stretch per run (one id stored per stretch, not
/// per entry).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunIds {
    /// Each stretch's `run_id` and how many entries in a row carry it.
    stretches: Vec<(Option<String>, u32)>,
}

impl RunIds {
    /// Adds the next entry's `run_id`.
    pub fn push(&mut self, id: Option<&str>) {
        match self.stretches.last_mut() {
            Some((last, n)) if last.as_deref() == id => *n += 1,
            _ => self.stretches.push((id.map(str::to_owned), 1)),
        }
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.stretches.iter().map(|(_, n)| *n as usize).sum()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.stretches.is_empty()
    }

    /// The stretches: a `run_id` and how many entries in a row carry it.
    pub fn stretches(&self) -> impl Iterator<Item = (Option<&str>, usize)> {
        self.stretches
            .iter()
            .map(|(id, n)| (id.as_deref(), *n as usize))
    }
}

impl<'a> FromIterator<Option<&'a str>> for RunIds {
    fn from_iter<I: IntoIterator<Item = Option<&'a str>>>(ids: I) -> RunIds {
        let mut out = RunIds::default();
        for id in ids {
            out.push(id);
        }
        out
    }
}

/// How the runs were told apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSplit {
    /// Runs found by `run_id` inside folders.
    pub runs: usize,
    /// The streams that held them.
    pub streams: usize,
}

/// The runs of a submission and the run of every entry.
#[derive(Debug, Clone)]
pub struct RunIndex {
    /// Run names, in natural order (`output2` before `output10`, `run 2` before `run 10`).
    pub names: Vec<String>,
    /// For each file, the run index of each of its entries.
    pub of_entry: Vec<Vec<u32>>,
    /// Set when some folder's streams held several runs, told apart by `run_id`.
    pub split: Option<RunSplit>,
}

impl RunIndex {
    /// Says how the runs were told apart, for the summary line.
    pub fn describe(&self) -> String {
        let n = self.names.len();
        let runs = format!("{n} run{}", if n == 1 { "" } else { "s" });
        match &self.split {
            Some(s) => format!(
                "{runs}, told apart by run_id in {} stream{}",
                s.streams,
                if s.streams == 1 { "" } else { "s" }
            ),
            None => runs,
        }
    }
}

/// The name of the run with `run_id` inside folder run `folder`.
fn split_name(folder: &str, run_id: Option<&str>) -> String {
    let id = run_id.map_or_else(|| "without run_id".to_owned(), |id| format!("run {id}"));
    if folder == "." {
        id
    } else {
        format!("{folder}/{id}")
    }
}

/// Sorts `output10` after `output9` and `run 10` after `run 9`: every maximal digit
/// sequence compares as a number.
pub fn natural_key(s: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut digits = c.to_string();
            while let Some(d) = chars.next_if(char::is_ascii_digit) {
                digits.push(d);
            }
            // Longer than u64: compared as text after the prefix (never met in practice).
            let n = digits.parse().unwrap_or(u64::MAX);
            out.push((std::mem::take(&mut text), n));
        } else {
            text.push(c);
        }
    }
    out.push((text, 0));
    out
}

/// Works out the runs of `files` (see the module docs).
pub fn resolve(files: &[FileRuns]) -> RunIndex {
    // Each legacy folder's run_ids (a stream's stretches, one id each).
    let mut ids_of_folder: BTreeMap<&str, BTreeSet<Option<&str>>> = BTreeMap::new();
    for f in files.iter().filter(|f| f.legacy) {
        let ids = ids_of_folder.entry(&f.run).or_default();
        ids.extend(f.run_ids.stretches().map(|(id, _)| id));
    }
    let split_folders: BTreeSet<&str> = ids_of_folder
        .iter()
        .filter(|(_, ids)| ids.len() > 1)
        .map(|(folder, _)| *folder)
        .collect();
    let is_split = |f: &FileRuns| f.legacy && split_folders.contains(f.run.as_str());
    // The run names: a split folder's `folder/run <id>` for each of its run_ids, any other
    // file's folder.
    let mut names: BTreeSet<String> = BTreeSet::new();
    for folder in &split_folders {
        names.extend(
            ids_of_folder[folder]
                .iter()
                .map(|id| split_name(folder, *id)),
        );
    }
    // Files come folder by folder: a folder is named once per stretch of its files.
    let mut last: Option<&str> = None;
    for f in files.iter().filter(|f| !is_split(f)) {
        if last != Some(f.run.as_str()) {
            names.insert(f.run.clone());
            last = Some(f.run.as_str());
        }
    }
    let mut names: Vec<String> = names.into_iter().collect();
    names.sort_by_cached_key(|n| natural_key(n));
    let index: BTreeMap<&str, u32> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i as u32))
        .collect();
    // A split folder's run index by run_id, named once per run rather than per entry.
    let of_split: BTreeMap<(&str, Option<&str>), u32> = split_folders
        .iter()
        .flat_map(|folder| {
            let index = &index;
            ids_of_folder[folder]
                .iter()
                .map(move |id| ((*folder, *id), index[split_name(folder, *id).as_str()]))
        })
        .collect();
    let mut last_folder: Option<(&str, u32)> = None;
    let of_entry = files
        .iter()
        .map(|f| {
            if !is_split(f) {
                let run = match last_folder {
                    Some((folder, run)) if folder == f.run => run,
                    _ => index[f.run.as_str()],
                };
                last_folder = Some((f.run.as_str(), run));
                return vec![run; f.run_ids.len()];
            }
            let mut of_entry = Vec::with_capacity(f.run_ids.len());
            for (id, n) in f.run_ids.stretches() {
                let run = of_split[&(f.run.as_str(), id)];
                of_entry.extend(std::iter::repeat_n(run, n));
            }
            of_entry
        })
        .collect();
    let split = (!split_folders.is_empty()).then(|| {
        let runs = split_folders
            .iter()
            .map(|folder| ids_of_folder[folder].len())
            .sum();
        let streams = files.iter().filter(|f| is_split(f)).count();
        RunSplit { runs, streams }
    });
    RunIndex {
        names,
        of_entry,
        split,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(run: &str, ids: &[Option<&str>]) -> FileRuns {
        FileRuns {
            run: run.into(),
            legacy: true,
            run_ids: ids.iter().copied().collect(),
        }
    }

    #[test]
    fn one_run_id_per_folder_keeps_the_folder() {
        let files = [
            stream("output0", &[Some("0"), Some("0")]),
            stream("output10", &[Some("10")]),
            stream("output2", &[None]),
        ];
        let idx = resolve(&files);
        assert_eq!(idx.names, ["output0", "output2", "output10"]);
        assert_eq!(idx.of_entry, [vec![0, 0], vec![2], vec![1]]);
        assert_eq!(idx.split, None);
        assert_eq!(idx.describe(), "3 runs");
    }

    #[test]
    fn several_run_ids_in_one_folder_are_several_runs() {
        // Two GPUs' streams, runs 0, 1, 2 and 10 appended; another folder run-per-folder.
        let ids = [Some("0"), Some("1"), Some("2"), Some("10")];
        let files = [
            stream("vendor", &ids),
            stream("vendor", &ids),
            stream("other/output1", &[Some("1")]),
        ];
        let idx = resolve(&files);
        assert_eq!(
            idx.names,
            [
                "other/output1",
                "vendor/run 0",
                "vendor/run 1",
                "vendor/run 2",
                "vendor/run 10"
            ]
        );
        assert_eq!(idx.of_entry[0], [1, 2, 3, 4]);
        assert_eq!(idx.of_entry[1], [1, 2, 3, 4]);
        assert_eq!(idx.of_entry[2], [0]);
        assert_eq!(
            idx.split,
            Some(RunSplit {
                runs: 4,
                streams: 2
            })
        );
        assert_eq!(idx.describe(), "5 runs, told apart by run_id in 2 streams");
    }

    #[test]
    fn root_folder_and_missing_run_id() {
        let files = [stream(".", &[Some("1"), None, Some("1")])];
        let idx = resolve(&files);
        assert_eq!(idx.names, ["run 1", "without run_id"]);
        assert_eq!(idx.of_entry[0], [0, 1, 0]);
    }

    #[test]
    fn per_test_files_keep_their_named_run() {
        let per_test = FileRuns {
            run: "e3/R2".into(),
            legacy: false,
            run_ids: [Some("7")].into_iter().collect(),
        };
        let idx = resolve(&[per_test, stream("e3", &[Some("0"), Some("1")])]);
        assert_eq!(idx.names, ["e3/R2", "e3/run 0", "e3/run 1"]);
        assert_eq!(idx.of_entry, [vec![0], vec![1, 2]]);
    }

    #[test]
    fn run_ids_are_kept_as_stretches() {
        let ids: RunIds = [Some("1"), Some("1"), None, Some("1"), Some("10")]
            .into_iter()
            .collect();
        let stretches: Vec<_> = ids.stretches().collect();
        assert_eq!(
            stretches,
            [(Some("1"), 2), (None, 1), (Some("1"), 1), (Some("10"), 1)]
        );
        assert_eq!(ids.len(), 5);
        assert!(!ids.is_empty());
        assert!(RunIds::default().is_empty());
    }

    #[test]
    fn natural_order() {
        let mut v = vec!["output10", "output9", "a/run 10", "a/run 2", "b"];
        v.sort_by_key(|s| natural_key(s));
        assert_eq!(v, ["a/run 2", "a/run 10", "b", "output9", "output10"]);
    }
}
