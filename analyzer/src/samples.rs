//! From report files to samples: one row per entry with its bench, run, device and
//! throughput, after the target table's exclusions and selection rules, with failures
//! and configuration conflicts marked. Plain Rust; the statistics come later in Polars.

use mlbench_results::report::{BenchProfile, Conflict, Failure, FieldDifference, InputSummary};
use mlbench_schema::entry::KeyHasher;
use mlbench_schema::profile::ProfileSummary;
use mlbench_schema::reader::FileName;
use mlbench_schema::runs::{FileRuns, RunIds, RunSplit, resolve, run_id_of};
use mlbench_schema::runtime::{RuntimeKind, RuntimeTally, entry_runtime};
use mlbench_schema::value::Value;
use mlbench_schema::{FailureKind, ReportEntry, TargetTable};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::BuildHasherDefault;

/// One entry, reduced to what the statistics need.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Bench name (`None` for failure stubs).
    pub bench: Option<String>,
    /// Index into [`SampleSet::runs`].
    pub run: u32,
    /// The single device the entry ran on.
    pub device: Option<u32>,
    /// Index into [`SampleSet::hosts`]: the node (`hostname`) it ran on.
    pub host: Option<u32>,
    /// Index into [`SampleSet::models`]: the GPU model (`gpu`) it ran on.
    pub model: Option<u32>,
    /// How many devices it ran on together (the world size of a `scaling` entry).
    pub world: Option<u32>,
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
    /// The `--batch-size` it was given ([`ReportEntry::given_batch_size`]).
    pub batch_size: Option<i64>,
}

/// The samples of a submission, with what was set aside on the way.
#[derive(Debug, Clone)]
pub struct SampleSet {
    /// The suite name.
    pub suite: String,
    /// Run names, in natural order (see [`mlbench_schema::runs`]).
    pub runs: Vec<String>,
    /// Set when some folder's streams held several runs, told apart by `run_id`.
    pub run_split: Option<RunSplit>,
    /// Devices seen, sorted.
    pub devices: Vec<u32>,
    /// The nodes (`hostname` of the entries), sorted; a fleet when there are several.
    pub hosts: Vec<String>,
    /// The GPU models (`gpu` of the entries), sorted: peers are compared within a model.
    pub models: Vec<String>,
    /// On several hosts, the name of each device (`host/index`; devices are then numbered
    /// across hosts); empty on one host, where a device is its index.
    pub gpu_labels: Vec<String>,
    /// Every entry kept, in file order.
    pub samples: Vec<Sample>,
    /// File names for messages, by file index.
    pub files: Vec<String>,
    /// What was read.
    pub summary: InputSummary,
    /// Configuration conflicts, by bench.
    pub conflicts: Vec<Conflict>,
    /// What wrote the entries, every entry read counted
    /// ([`mlbench_schema::runtime::entry_runtime`]).
    pub runtimes: RuntimeTally,
}

/// What one file contributes, extracted as soon as it is parsed.
#[derive(Debug, Clone)]
pub struct FileSamples {
    /// The file, for messages.
    pub display: String,
    /// Its run.
    pub run: String,
    /// Whether it is a legacy stream (else a per-test file).
    pub legacy: bool,
    /// Its samples (`run` and `file` are filled in when the files are put together).
    pub samples: Vec<Sample>,
    /// The configuration key of each usable sample (see [`ReportEntry::configuration_key`];
    /// the bench's `pool_over` fields left out).
    pub keys: Vec<Option<u64>>,
    /// What wrote each sample ([`entry_runtime`]; `None`: it does not say).
    pub writers: Vec<Option<RuntimeKind>>,
    /// The `run_id` of each sample.
    pub run_ids: RunIds,
    /// Entries read.
    pub entries: usize,
    /// Entries of excluded benches.
    pub excluded: usize,
    /// Entries that ran with `mlbench run --smoke`.
    pub smoke: usize,
    /// Entries that ran with `mlbench run --synthetic-data`.
    pub synthetic_data: usize,
    /// The profiles of entries that carry one (`mlbench run --profile`), with the bench.
    pub profiles: Vec<(String, ProfileSummary)>,
    /// Entries dropped, by rule.
    pub not_selected: Vec<(String, usize)>,
    /// The host names of this file's samples (their `host` indexes it until the files
    /// are put together).
    pub hosts: Vec<String>,
    /// The GPU models of this file's samples (as `hosts`, for `model`).
    pub models: Vec<String>,
    /// What wrote its entries, every entry counted.
    pub runtimes: RuntimeTally,
    /// Whether the file is a failure stub (`.FAIL.` in its name).
    fail_file: bool,
    /// The device its name gives (a legacy stream's `_<K>`).
    legacy_device: Option<u32>,
}

/// Each bench's profile over its entries.
fn bench_profiles(by_bench: BTreeMap<String, Vec<ProfileSummary>>) -> Vec<BenchProfile> {
    (by_bench.into_iter())
        .filter_map(|(bench, all)| {
            let profile = mlbench_schema::profile::combine(&all)?;
            let entries = all.len();
            Some(BenchProfile {
                bench,
                entries,
                profile,
            })
        })
        .collect()
}

/// Every name of `lists`, sorted and once.
fn all_names<'a>(lists: impl Iterator<Item = &'a Vec<String>>) -> Vec<String> {
    let names: BTreeSet<&String> = lists.flatten().collect();
    names.into_iter().cloned().collect()
}

/// For each name of `local`, its index in the sorted `global`.
fn global_indices(local: &[String], global: &[String]) -> Vec<u32> {
    (local.iter())
        .map(|name| global.binary_search(name).unwrap_or_default() as u32)
        .collect()
}

/// The index of `name` in `names`, added at the end when it is new.
fn index_of(names: &mut Vec<String>, name: &str) -> u32 {
    match names.iter().position(|known| known == name) {
        Some(i) => i as u32,
        None => {
            names.push(name.to_owned());
            (names.len() - 1) as u32
        }
    }
}

impl FileSamples {
    /// The samples of the report `display` (its `run` and `name`) read from `content`,
    /// each entry taken as it is parsed (lean): a stream is never held whole. Returns the
    /// file's problems too.
    pub fn extract_content(
        display: &str,
        run: &str,
        name: &FileName,
        content: mlbench_schema::reader::Content<'_>,
        targets: &TargetTable,
    ) -> (Vec<mlbench_schema::ReadError>, FileSamples) {
        use mlbench_schema::reader::{Reading, parse_each_of};
        let mut out = FileSamples::begin(display, run, name);
        let parsed = parse_each_of(display, content, Reading::Lean, |index, entry| {
            out.push(index, &entry, targets);
        });
        (parsed.errors, out)
    }

    /// No samples yet, of the report `display`.
    pub fn begin(display: &str, run: &str, name: &FileName) -> FileSamples {
        FileSamples {
            display: display.to_owned(),
            run: run.to_owned(),
            legacy: matches!(name, FileName::Legacy { .. }),
            fail_file: matches!(name, FileName::PerTest { fail: true, .. }),
            legacy_device: match name {
                FileName::Legacy { job_id, .. } => Some(*job_id),
                FileName::PerTest { .. } => None,
            },
            samples: Vec::new(),
            keys: Vec::new(),
            writers: Vec::new(),
            run_ids: RunIds::default(),
            entries: 0,
            excluded: 0,
            smoke: 0,
            synthetic_data: 0,
            profiles: Vec::new(),
            not_selected: Vec::new(),
            hosts: Vec::new(),
            models: Vec::new(),
            runtimes: RuntimeTally::default(),
        }
    }

    /// Takes entry `entry_idx` of the file.
    fn push(&mut self, entry_idx: usize, entry: &ReportEntry, targets: &TargetTable) {
        self.entries += 1;
        let writer = entry_runtime(entry);
        self.runtimes.add(writer);
        let smoke = entry.is_smoke();
        self.smoke += usize::from(smoke);
        self.synthetic_data += usize::from(entry.is_synthetic_data());
        let bench = entry.name().map(str::to_owned);
        let profile = entry.get("profile").and_then(ProfileSummary::from_value);
        if let (Some(b), Some(p)) = (&bench, profile) {
            self.profiles.push((b.clone(), p));
        }
        if let Some(b) = &bench {
            if targets.is_excluded(b) {
                self.excluded += 1;
                return;
            }
            // A smoke entry's sizes are reduced by design: the rules that pick the sizes
            // the targets were measured at do not apply to it.
            if let Some(rule) = targets.rejecting_rule(b, entry).filter(|_| !smoke) {
                let rule = rule.to_string();
                match self.not_selected.iter_mut().find(|(r, _)| *r == rule) {
                    Some((_, n)) => *n += 1,
                    None => self.not_selected.push((rule, 1)),
                }
                return;
            }
        }
        let device = if entry.get("vcd").is_some() {
            entry.single_device()
        } else {
            self.legacy_device
        };
        let failure = entry.failure(self.fail_file);
        let key = match (&failure, &bench) {
            (None, Some(b)) => Some(pooled_configuration_key(entry, &targets.pooled_fields(b))),
            _ => None,
        };
        self.keys.push(key);
        self.writers.push(writer);
        self.run_ids.push(run_id_of(entry).as_deref());
        let host =
            (entry.get("hostname").and_then(Value::as_str)).map(|h| index_of(&mut self.hosts, h));
        let model =
            (entry.get("gpu").and_then(Value::as_str)).map(|m| index_of(&mut self.models, m));
        self.samples.push(Sample {
            bench,
            run: 0,
            device,
            host,
            model,
            world: entry.world_size(),
            value: entry.train_item_avg(),
            failure,
            conflict: false,
            file: 0,
            entry: entry_idx as u32,
            batch_size: entry.given_batch_size(),
        });
    }
}

/// On several hosts a GPU is a host and an index: GPU 0 of two nodes are two GPUs. They
/// are numbered anew in (host, index) order; their names, `host/index`, are returned.
fn number_gpus_across_hosts(samples: &mut [Sample], hosts: &[String]) -> Vec<String> {
    // Successive samples mostly share their GPU (a stream is one GPU's): repeats are
    // dropped before the sort.
    let mut pairs: Vec<(Option<u32>, u32)> = Vec::new();
    for pair in samples.iter().filter_map(|s| Some((s.host, s.device?))) {
        if pairs.last() != Some(&pair) {
            pairs.push(pair);
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    // Successive samples mostly share their GPU: the last answer is kept.
    let mut last: Option<((Option<u32>, u32), u32)> = None;
    for s in samples.iter_mut() {
        if let Some(d) = s.device {
            let pair = (s.host, d);
            let index = match last {
                Some((seen, i)) if seen == pair => i,
                _ => {
                    let i = pairs.binary_search(&pair).unwrap_or_default() as u32;
                    last = Some((pair, i));
                    i
                }
            };
            s.device = Some(index);
        }
    }
    pairs
        .iter()
        .map(|(h, d)| match h {
            Some(h) => format!("{}/{d}", hosts[*h as usize]),
            None => format!("?/{d}"),
        })
        .collect()
}

impl SampleSet {
    /// Puts the files' samples together. `entry_at(file, entry)` fetches an entry again,
    /// to describe a configuration conflict (rare: only then is anything re-read).
    pub fn assemble(
        suite: &str,
        targets: &TargetTable,
        parts: Vec<FileSamples>,
        entry_at: impl Fn(usize, usize) -> Option<ReportEntry>,
    ) -> SampleSet {
        let mut parts = parts;
        let run_index = resolve(
            &parts
                .iter_mut()
                .map(|f| FileRuns {
                    run: std::mem::take(&mut f.run),
                    legacy: f.legacy,
                    run_ids: std::mem::take(&mut f.run_ids),
                })
                .collect::<Vec<_>>(),
        );
        let runs_told_apart = run_index.describe();
        let total: usize = parts.iter().map(|p| p.samples.len()).sum();
        let mut samples = Vec::with_capacity(total);
        let mut keys = Vec::with_capacity(total);
        let mut writers = Vec::with_capacity(total);
        let mut not_selected: BTreeMap<String, usize> = BTreeMap::new();
        let (mut entries, mut excluded, mut smoke, mut synthetic_data) = (0, 0, 0, 0);
        let mut profiles: BTreeMap<String, Vec<ProfileSummary>> = BTreeMap::new();
        let mut runtimes = RuntimeTally::default();
        let (mut legacy, mut per_test) = (false, false);
        let mut files = Vec::with_capacity(parts.len());
        let hosts = all_names(parts.iter().map(|p| &p.hosts));
        let models = all_names(parts.iter().map(|p| &p.models));
        for (file_idx, part) in parts.into_iter().enumerate() {
            let of_entry = &run_index.of_entry[file_idx];
            let global = global_indices(&part.hosts, &hosts);
            let global_model = global_indices(&part.models, &models);
            samples.extend(part.samples.into_iter().zip(of_entry).map(|(mut s, &run)| {
                s.run = run;
                s.file = file_idx as u32;
                s.host = s.host.and_then(|h| global.get(h as usize).copied());
                s.model = s.model.and_then(|m| global_model.get(m as usize).copied());
                s
            }));
            keys.extend(part.keys);
            writers.extend(part.writers);
            entries += part.entries;
            excluded += part.excluded;
            smoke += part.smoke;
            synthetic_data += part.synthetic_data;
            (part.profiles.into_iter()).for_each(|(b, p)| profiles.entry(b).or_default().push(p));
            runtimes.merge(&part.runtimes);
            for (rule, n) in part.not_selected {
                *not_selected.entry(rule).or_default() += n;
            }
            legacy |= part.legacy;
            per_test |= !part.legacy;
            files.push(part.display);
        }
        let of = (&keys[..], &writers[..], &files[..]);
        let conflicts = mark_conflicts(&mut samples, of, targets, &entry_at);
        let gpu_labels = if hosts.len() > 1 {
            number_gpus_across_hosts(&mut samples, &hosts)
        } else {
            Vec::new()
        };
        let mut devices: Vec<u32> = samples.iter().filter_map(|s| s.device).collect();
        devices.sort_unstable();
        devices.dedup();
        let layout = match (legacy, per_test) {
            (true, false) => "legacy",
            (false, true) => "per-test",
            _ => "mixed",
        };
        let summary = InputSummary {
            layout: layout.to_owned(),
            files: files.len(),
            entries,
            runs: run_index.names.len(),
            runs_told_apart,
            gpus: devices.len(),
            excluded,
            smoke,
            synthetic_data,
            not_selected: not_selected.into_iter().collect(),
            profiles: bench_profiles(profiles),
        };
        SampleSet {
            suite: suite.to_owned(),
            runs: run_index.names,
            run_split: run_index.split,
            devices,
            hosts,
            models,
            gpu_labels,
            samples,
            files,
            summary,
            conflicts,
            runtimes,
        }
    }

    /// The group of peers `sample` (of `bench`) is compared with, for stragglers and the
    /// fleet: the bench, and on hardware of several GPU models, the bench on its model
    /// (`convnet on NVIDIA A100`): a node of A100s is no straggler among H100s.
    pub fn peer_group<'a>(&'a self, sample: &Sample, bench: &'a str) -> std::borrow::Cow<'a, str> {
        if self.models.len() < 2 {
            return std::borrow::Cow::Borrowed(bench);
        }
        let model = sample.model.and_then(|m| self.models.get(m as usize));
        let model = model.map_or("an unnamed GPU", String::as_str);
        std::borrow::Cow::Owned(format!("{bench} on {model}"))
    }

    /// How a device is named: its index on one host, `host/index` on several.
    pub fn gpu_label(&self, device: u32) -> String {
        self.gpu_labels
            .get(device as usize)
            .cloned()
            .unwrap_or_else(|| device.to_string())
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

/// The one runtime that wrote the samples `members` (`writers` by sample), when they
/// show one.
fn group_runtime(members: &[usize], writers: &[Option<RuntimeKind>]) -> Option<RuntimeKind> {
    let mut tally = RuntimeTally::default();
    for &i in members {
        tally.add(writers.get(i).copied().flatten());
    }
    match tally.kinds().as_slice() {
        [kind] => Some(*kind),
        _ => None,
    }
}

/// Groups each bench's usable entries by configuration (`keys`, by sample); every group
/// but the largest is marked as a conflict and described, with the runtime of each side
/// (`writers`, by sample).
fn mark_conflicts(
    samples: &mut [Sample],
    (keys, writers, files): (&[Option<u64>], &[Option<RuntimeKind>], &[String]),
    targets: &TargetTable,
    entry_at: &impl Fn(usize, usize) -> Option<ReportEntry>,
) -> Vec<Conflict> {
    // bench → configuration key → sample indices, in order of first appearance.
    let mut groups: BTreeMap<&str, Vec<(u64, Vec<usize>)>> = BTreeMap::new();
    for (i, (sample, key)) in samples.iter().zip(keys).enumerate() {
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
        let fetch = |i: usize| entry_at(samples[i].file as usize, samples[i].entry as usize);
        let reference = fetch(bench_groups[main].1[0]);
        for (g, (_, members)) in bench_groups.iter().enumerate() {
            if g == main {
                continue;
            }
            let other = fetch(members[0]);
            conflicts.push(Conflict {
                bench: bench.to_owned(),
                kept: bench_groups[main].1.len(),
                set_aside: members.len(),
                differences: match (&reference, &other) {
                    (Some(a), Some(b)) => differences(a, b, &targets.pooled_fields(bench)),
                    _ => Vec::new(),
                },
                examples: members
                    .iter()
                    .take(5)
                    .map(|&i| format!("{}#{}", files[samples[i].file as usize], samples[i].entry))
                    .collect(),
                kept_runtime: group_runtime(&bench_groups[main].1, writers),
                set_aside_runtime: group_runtime(members, writers),
            });
            set_aside.extend(members.iter().copied());
        }
    }
    for i in set_aside {
        samples[i].conflict = true;
    }
    conflicts
}

/// The configuration key of `entry` with the bench's pooled fields left out.
fn pooled_configuration_key(entry: &ReportEntry, pool_over: &[String]) -> u64 {
    entry.configuration_key_without(pool_over)
}

fn differences(kept: &ReportEntry, other: &ReportEntry, pooled: &[String]) -> Vec<FieldDifference> {
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
        .filter(|f| a.get(f) != b.get(f) && !pooled.iter().any(|p| p == f))
        .map(|f| FieldDifference {
            field: f.to_owned(),
            kept: a.get(f).cloned(),
            found: b.get(f).cloned(),
        })
        .collect()
}

/// The distinct names among `names`, sorted, and the rank of each of `names` among them.
/// Names are numbered as first seen (a map of a few dozen benches), then in name order:
/// sorting or searching the name of every sample compares strings a million times.
pub fn name_ranks<'a>(names: impl IntoIterator<Item = &'a str>) -> (Vec<&'a str>, Vec<u32>) {
    let mut seen: HashMap<&str, u32, BuildHasherDefault<KeyHasher>> = HashMap::default();
    let mut distinct: Vec<&str> = Vec::new();
    let mut ids: Vec<u32> = names
        .into_iter()
        .map(|name| {
            *seen.entry(name).or_insert_with(|| {
                distinct.push(name);
                (distinct.len() - 1) as u32
            })
        })
        .collect();
    let mut order: Vec<u32> = (0..distinct.len() as u32).collect();
    order.sort_unstable_by_key(|&i| distinct[i as usize]);
    let mut rank = vec![0u32; distinct.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i as usize] = r as u32;
    }
    for id in &mut ids {
        *id = rank[*id as usize];
    }
    (order.iter().map(|&i| distinct[i as usize]).collect(), ids)
}

#[cfg(test)]
mod tests {
    use super::name_ranks;

    #[test]
    fn names_are_ranked_in_name_order_whatever_order_they_come_in() {
        let (names, ranks) = name_ranks(["vae", "cart", "vae", "atari", "cart", "dcgan_all"]);
        assert_eq!(names, ["atari", "cart", "dcgan_all", "vae"]);
        assert_eq!(ranks, [3, 1, 3, 0, 1, 2]);
        let (names, ranks) = name_ranks([]);
        assert!(names.is_empty() && ranks.is_empty());
    }
}
