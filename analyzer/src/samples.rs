//! From report files to samples: one row per entry with its bench, run, device and
//! throughput, after the target table's exclusions and selection rules, with failures
//! and configuration conflicts marked. Plain Rust; the statistics come later in Polars.

use crate::model::{Conflict, Failure, FieldDifference, InputSummary};
use mlbench_schema::reader::FileName;
use mlbench_schema::{FailureKind, LoadedReports, ReportEntry, TargetTable};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One entry, reduced to what the statistics need.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Bench name (`None` for failure stubs).
    pub bench: Option<String>,
    /// Index into [`SampleSet::runs`].
    pub run: u32,
    /// The single device the entry ran on.
    pub device: Option<u32>,
    /// `train_item.avg`.
    pub value: Option<f64>,
    /// Why this entry is a failed run.
    pub failure: Option<FailureKind>,
    /// Set aside because its configuration differs from its bench's main group.
    pub conflict: bool,
    /// Index into the loaded files.
    pub file: u32,
    /// Entry index in its file.
    pub entry: u32,
}

/// The samples of a submission, with what was set aside on the way.
#[derive(Debug, Clone)]
pub struct SampleSet {
    /// The suite name.
    pub suite: String,
    /// Run names, sorted.
    pub runs: Vec<String>,
    /// Devices seen, sorted.
    pub devices: Vec<u32>,
    /// Every entry kept, in file order.
    pub samples: Vec<Sample>,
    /// File names for messages, by file index.
    pub files: Vec<String>,
    /// What was read.
    pub summary: InputSummary,
    /// Configuration conflicts, by bench.
    pub conflicts: Vec<Conflict>,
}

impl SampleSet {
    /// Builds the samples of `reports` under `targets`' exclusions and selection rules.
    pub fn build(reports: &LoadedReports, targets: &TargetTable) -> SampleSet {
        let runs: Vec<String> = reports
            .files
            .iter()
            .map(|f| f.run.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let run_index: HashMap<&str, u32> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| (r.as_str(), i as u32))
            .collect();
        let mut samples = Vec::new();
        let mut excluded = 0;
        let mut not_selected: BTreeMap<String, usize> = BTreeMap::new();
        let mut entries_read = 0;
        // Entries kept, by sample index, for the conflict check.
        let mut kept_entries: Vec<&ReportEntry> = Vec::new();
        let (mut legacy, mut per_test) = (false, false);
        for (file_idx, file) in reports.files.iter().enumerate() {
            let fail_file = match &file.name {
                FileName::Legacy { .. } => {
                    legacy = true;
                    false
                }
                FileName::PerTest { fail, .. } => {
                    per_test = true;
                    *fail
                }
            };
            let legacy_device = match &file.name {
                FileName::Legacy { job_id, .. } => Some(*job_id),
                FileName::PerTest { .. } => None,
            };
            for (entry_idx, entry) in &file.parsed.entries {
                entries_read += 1;
                let bench = entry.name().map(str::to_owned);
                if let Some(b) = &bench {
                    if targets.is_excluded(b) {
                        excluded += 1;
                        continue;
                    }
                    if let Some(rule) = targets.rejecting_rule(b, entry) {
                        *not_selected.entry(rule.to_string()).or_default() += 1;
                        continue;
                    }
                }
                let device = if entry.get("vcd").is_some() {
                    entry.single_device()
                } else {
                    legacy_device
                };
                samples.push(Sample {
                    bench,
                    run: run_index[file.run.as_str()],
                    device,
                    value: entry.train_item_avg(),
                    failure: entry.failure(fail_file),
                    conflict: false,
                    file: file_idx as u32,
                    entry: *entry_idx as u32,
                });
                kept_entries.push(entry);
            }
        }
        let files: Vec<String> = reports.files.iter().map(|f| f.display.clone()).collect();
        let conflicts = mark_conflicts(&mut samples, &kept_entries, &files);
        let devices: Vec<u32> = samples
            .iter()
            .filter_map(|s| s.device)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let layout = match (legacy, per_test) {
            (true, false) => "legacy",
            (false, true) => "per-test",
            _ => "mixed",
        };
        let summary = InputSummary {
            layout: layout.to_owned(),
            files: reports.files.len(),
            entries: entries_read,
            runs: runs.len(),
            gpus: devices.len(),
            excluded,
            not_selected: not_selected.into_iter().collect(),
        };
        SampleSet {
            suite: reports.suite.clone(),
            runs,
            devices,
            samples,
            files,
            summary,
            conflicts,
        }
    }

    /// Every failed entry, in file order.
    pub fn failures(&self) -> Vec<Failure> {
        self.samples
            .iter()
            .filter_map(|s| {
                s.failure.map(|kind| Failure {
                    file: self.files[s.file as usize].clone(),
                    entry: s.entry as usize,
                    bench: s.bench.clone(),
                    reason: kind.as_str(),
                })
            })
            .collect()
    }
}

/// Groups each bench's usable entries by configuration; every group but the largest is
/// marked as a conflict and described.
fn mark_conflicts(
    samples: &mut [Sample],
    entries: &[&ReportEntry],
    files: &[String],
) -> Vec<Conflict> {
    // bench → configuration key → sample indices, in order of first appearance.
    let mut groups: BTreeMap<&str, Vec<(u64, Vec<usize>)>> = BTreeMap::new();
    let keys: Vec<Option<u64>> = samples
        .iter()
        .zip(entries)
        .map(|(s, e)| (s.failure.is_none() && s.bench.is_some()).then(|| e.configuration_key()))
        .collect();
    for (i, (sample, key)) in samples.iter().zip(&keys).enumerate() {
        let (Some(bench), Some(key)) = (sample.bench.as_deref(), key) else {
            continue;
        };
        let bench_groups = groups.entry(bench).or_default();
        match bench_groups.iter_mut().find(|(k, _)| k == key) {
            Some((_, members)) => members.push(i),
            None => bench_groups.push((*key, vec![i])),
        }
    }
    let mut conflicts = Vec::new();
    let mut set_aside = Vec::new();
    for (bench, bench_groups) in groups {
        if bench_groups.len() < 2 {
            continue;
        }
        // The largest group is kept; on a tie, the one seen first.
        let main = bench_groups
            .iter()
            .enumerate()
            .max_by(|(ia, a), (ib, b)| a.1.len().cmp(&b.1.len()).then(ib.cmp(ia)))
            .map_or(0, |(i, _)| i);
        let reference = entries[bench_groups[main].1[0]];
        for (g, (_, members)) in bench_groups.iter().enumerate() {
            if g == main {
                continue;
            }
            let other = entries[members[0]];
            conflicts.push(Conflict {
                bench: bench.to_owned(),
                kept: bench_groups[main].1.len(),
                set_aside: members.len(),
                differences: differences(reference, other),
                examples: members
                    .iter()
                    .take(5)
                    .map(|&i| format!("{}#{}", files[samples[i].file as usize], samples[i].entry))
                    .collect(),
            });
            set_aside.extend(members.iter().copied());
        }
    }
    for i in set_aside {
        samples[i].conflict = true;
    }
    conflicts
}

fn differences(kept: &ReportEntry, other: &ReportEntry) -> Vec<FieldDifference> {
    let a: BTreeMap<&str, String> = kept
        .configuration()
        .into_iter()
        .map(|(k, v)| (k, mlbench_schema::pyrepr::py_repr(v)))
        .collect();
    let b: BTreeMap<&str, String> = other
        .configuration()
        .into_iter()
        .map(|(k, v)| (k, mlbench_schema::pyrepr::py_repr(v)))
        .collect();
    let fields: BTreeSet<&str> = a.keys().chain(b.keys()).copied().collect();
    fields
        .into_iter()
        .filter(|f| a.get(f) != b.get(f))
        .map(|f| FieldDifference {
            field: f.to_owned(),
            kept: a.get(f).cloned(),
            found: b.get(f).cloned(),
        })
        .collect()
}
