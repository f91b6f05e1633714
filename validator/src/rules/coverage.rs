//! Coverage: every bench of the jobs file on every GPU in every run, once, and enough
//! runs of each.

use crate::facts::{Device, EntryFacts};
use crate::finding::catalogued;
use crate::rules::{EntryMap, EntrySet};
use mlbench_results::validation::Finding;
use mlbench_schema::jobs::JobsFile;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Up to this many benches missing in one place are a finding each; more are one
/// finding that lists them.
const MISSING_ONE_BY_ONE: usize = 4;

/// What the coverage rules need to know about the submission.
pub struct Coverage<'a> {
    /// Every entry.
    pub entries: &'a [EntryFacts],
    /// Run names by index.
    pub runs: &'a [String],
    /// Report file paths by index.
    pub files: &'a [String],
    /// (run, GPU) → the legacy stream of that GPU in that run, where there is one.
    pub streams: &'a HashMap<(u32, u32), usize>,
    /// Run folders by run index (`None`: per-test files at the submission root).
    pub run_folders: &'a [Option<String>],
    /// The GPUs of the machine.
    pub gpus: &'a BTreeSet<u32>,
    /// The jobs expected.
    pub jobs: &'a JobsFile,
    /// `--min-runs`.
    pub min_runs: usize,
}

impl Coverage<'_> {
    /// Runs every coverage rule.
    pub fn check(&self, out: &mut Vec<Finding>) {
        let benches = Benches::of(self.entries);
        self.missing(&benches, out);
        self.duplicates(&benches, out);
        self.unknown(&benches, out);
        self.too_few(&benches, out);
    }

    /// The file a missing bench belongs in: the GPU's stream of that run, else the run's
    /// folder; `None` for per-test files at the root (the run is named in `expected`).
    fn where_missing(&self, run: u32, device: Device) -> Option<String> {
        let gpu = match device {
            Device::Gpu(g) => g,
            Device::Machine(_) => 0,
        };
        match self.streams.get(&(run, gpu)) {
            Some(&f) => Some(self.files[f].clone()),
            None => self.run_folders[run as usize].clone(),
        }
    }

    /// A finding `bench.missing` of `expected` in the file where `run` on `device` writes.
    fn missing_finding(&self, run: u32, device: Device, expected: String) -> Finding {
        let finding = catalogued("bench.missing", expected, "absent");
        match self.where_missing(run, device) {
            Some(file) => finding.file(file),
            None => finding,
        }
    }

    fn missing(&self, benches: &Benches, out: &mut Vec<Finding>) {
        let mut present: EntrySet<(u32, Device, u32)> = EntrySet::default();
        let mut present_anywhere: EntrySet<(u32, u32)> = EntrySet::default();
        present.reserve(self.entries.len());
        for (e, bench) in self.entries.iter().zip(&benches.of_entry) {
            if let Some(bench) = *bench {
                present.insert((e.run, e.device, bench));
                present_anywhere.insert((e.run, bench));
            }
        }
        let mut seen_jobs = HashSet::new();
        // Each job once, with its bench id (a bench no entry names is missing everywhere).
        let jobs: Vec<(&str, bool, u32)> = (self.jobs.jobs.iter())
            .filter(|job| seen_jobs.insert(job.name.as_str()))
            .map(|job| {
                let bench = benches.id(&job.name).unwrap_or(u32::MAX);
                (job.name.as_str(), job.whole_machine(), bench)
            })
            .collect();
        for run in 0..self.runs.len() as u32 {
            let absent = |device: Device| -> Vec<&str> {
                (jobs.iter())
                    .filter(|(_, whole, bench)| match device {
                        Device::Machine(_) => *whole && !present_anywhere.contains(&(run, *bench)),
                        Device::Gpu(_) => !*whole && !present.contains(&(run, device, *bench)),
                    })
                    .map(|(name, _, _)| *name)
                    .collect()
            };
            let places = std::iter::once(Device::Machine(0))
                .chain(self.gpus.iter().map(|&gpu| Device::Gpu(gpu)));
            for device in places {
                self.missing_on(run, device, &absent(device), out);
            }
        }
    }

    /// The benches of `names` missing on `device` in `run`: a finding each, or one for
    /// them all when there are many (a stream that holds nothing: one line, not 17; on a
    /// submission of 70,000 empty streams, 70,000 findings, not 1.2 million).
    fn missing_on(&self, run: u32, device: Device, names: &[&str], out: &mut Vec<Finding>) {
        let place = match device {
            Device::Machine(_) => "on the whole machine".to_owned(),
            Device::Gpu(gpu) => format!("on GPU {gpu}"),
        };
        let run_name = &self.runs[run as usize];
        if names.len() <= MISSING_ONE_BY_ONE {
            for name in names {
                let expected = format!("`{name}` {place} in run {run_name}");
                out.push(self.missing_finding(run, device, expected));
            }
            return;
        }
        let expected = format!("the {} benches {place} in run {run_name}", names.len());
        let mut finding = self.missing_finding(run, device, expected);
        let listed: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        finding.found = format!("every one absent: {}", listed.join(", "));
        out.push(finding);
    }

    fn duplicates(&self, benches: &Benches, out: &mut Vec<Finding>) {
        let configs: HashMap<&str, usize> =
            self.jobs.jobs.iter().fold(HashMap::new(), |mut m, j| {
                *m.entry(j.name.as_str()).or_default() += j.configs().len().max(1);
                m
            });
        // Sorted by (run, device, bench, file, entry), each group is a contiguous slice.
        // Benches are sorted by their rank among the few distinct names, not by comparing
        // the names of every pair of entries the sort meets.
        let rank = benches.ranks();
        let mut named: Vec<(&EntryFacts, &str, u32)> = self
            .entries
            .iter()
            .zip(&benches.of_entry)
            .filter_map(|(e, bench)| {
                let bench = (*bench)?;
                Some((e, benches.names[bench as usize], rank[bench as usize]))
            })
            .collect();
        named.sort_unstable_by_key(|(e, _, bench)| (e.run, e.device, *bench, e.file, e.entry));
        for group in named.chunk_by(|a, b| (a.0.run, a.0.device, a.2) == (b.0.run, b.0.device, b.2))
        {
            let (first, name, _) = group[0];
            if group.len() == 1 {
                continue;
            }
            let allowed = configs.get(name).copied().unwrap_or(1);
            let mut seen: Vec<(u64, &EntryFacts)> = Vec::new();
            for &(e, _, _) in group {
                let same = seen.iter().find(|(c, _)| *c == e.config).map(|(_, f)| *f);
                if same.is_some() || seen.len() >= allowed {
                    let other = same.unwrap_or(seen[0].1);
                    out.push(
                        catalogued(
                            "bench.duplicate",
                            format!(
                                "`{name}` once per configuration on {} in run {}",
                                first.device, self.runs[first.run as usize]
                            ),
                            format!(
                                "again after {} entry {}",
                                self.files[other.file], other.entry
                            ),
                        )
                        .file(self.files[e.file].clone())
                        .entry(e.entry),
                    );
                } else {
                    seen.push((e.config, e));
                }
            }
        }
    }

    fn unknown(&self, benches: &Benches, out: &mut Vec<Finding>) {
        let known: EntrySet<&str> = self.jobs.jobs.iter().map(|j| j.name.as_str()).collect();
        // Whether each bench is a job, asked once per bench, not once per entry.
        let unknown: Vec<bool> = benches.names.iter().map(|n| !known.contains(n)).collect();
        let mut first: BTreeMap<&str, (&EntryFacts, usize)> = BTreeMap::new();
        for (e, bench) in self.entries.iter().zip(&benches.of_entry) {
            if let Some(bench) = *bench
                && unknown[bench as usize]
            {
                let slot = first.entry(benches.names[bench as usize]).or_insert((e, 0));
                slot.1 += 1;
            }
        }
        for (name, (e, count)) in first {
            out.push(
                catalogued(
                    "bench.unknown",
                    "a bench of the jobs file",
                    format!(
                        "`{name}` ({count} {})",
                        if count == 1 { "entry" } else { "entries" }
                    ),
                )
                .file(self.files[e.file].clone())
                .entry(e.entry),
            );
        }
    }

    fn too_few(&self, benches: &Benches, out: &mut Vec<Finding>) {
        if self.runs.len() < self.min_runs {
            out.push(catalogued(
                "runs.too-few",
                format!(
                    "at least {} (--min-runs)",
                    mlbench_schema::words::count(self.min_runs, "run", "runs")
                ),
                format!(
                    "{} run{} ({})",
                    self.runs.len(),
                    if self.runs.len() == 1 { "" } else { "s" },
                    self.runs.join(", ")
                ),
            ));
            return;
        }
        // Whether each bench runs on the whole machine, asked once per bench.
        let whole: EntrySet<&str> = self
            .jobs
            .jobs
            .iter()
            .filter(|j| j.whole_machine())
            .map(|j| j.name.as_str())
            .collect();
        let on_machine: Vec<bool> = benches.names.iter().map(|n| whole.contains(n)).collect();
        // The runs with a usable result, by bench and device (sorted and deduplicated
        // after: a run appears once per entry).
        let mut usable: EntryMap<(u32, Device), Vec<u32>> = EntryMap::default();
        for (e, bench) in self.entries.iter().zip(&benches.of_entry) {
            if let (Some(bench), None) = (*bench, e.failure) {
                let device = if on_machine[bench as usize] {
                    Device::Machine(0)
                } else {
                    e.device
                };
                usable.entry((bench, device)).or_default().push(e.run);
            }
        }
        for runs in usable.values_mut() {
            runs.sort_unstable();
            runs.dedup();
        }
        let mut seen_jobs = HashSet::new();
        for job in &self.jobs.jobs {
            if !seen_jobs.insert(job.name.as_str()) {
                continue;
            }
            let devices: Vec<Device> = if job.whole_machine() {
                vec![Device::Machine(0)]
            } else {
                self.gpus.iter().map(|&g| Device::Gpu(g)).collect()
            };
            let bench = benches.id(&job.name);
            for device in devices {
                let runs = bench.and_then(|b| usable.get(&(b, device)));
                let n = runs.map_or(0, Vec::len);
                if n < self.min_runs {
                    let names: Vec<&str> = runs
                        .into_iter()
                        .flatten()
                        .map(|&r| self.runs[r as usize].as_str())
                        .collect();
                    out.push(
                        catalogued(
                            "runs.too-few",
                            format!(
                                "at least {} runs of `{}` on {device} with a usable result",
                                self.min_runs, job.name
                            ),
                            if names.is_empty() {
                                "none".to_owned()
                            } else {
                                format!("{n} ({})", names.join(", "))
                            },
                        )
                        .field(job.name.clone()),
                    );
                }
            }
        }
    }
}

/// The bench of each entry as a small number, found once by name: the coverage rules key
/// their sets and maps by it rather than hashing each entry's name in every rule.
struct Benches<'a> {
    /// Distinct bench names, by id (in the order first met).
    names: Vec<&'a str>,
    /// Each entry's bench id (`None` for stubs with `name: null`).
    of_entry: Vec<Option<u32>>,
    ids: EntryMap<&'a str, u32>,
}

impl<'a> Benches<'a> {
    fn of(entries: &'a [EntryFacts]) -> Self {
        let mut ids: EntryMap<&str, u32> = EntryMap::default();
        let mut names = Vec::new();
        let of_entry = entries
            .iter()
            .map(|e| {
                let name = e.name.as_deref()?;
                Some(*ids.entry(name).or_insert_with(|| {
                    names.push(name);
                    names.len() as u32 - 1
                }))
            })
            .collect();
        Benches {
            names,
            of_entry,
            ids,
        }
    }

    /// The id of the bench `name`, when some entry names it.
    fn id(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }

    /// Each bench's rank among the names sorted, by id.
    fn ranks(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.names.len() as u32).collect();
        order.sort_unstable_by_key(|&id| self.names[id as usize]);
        let mut rank = vec![0; order.len()];
        for (r, &id) in order.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        rank
    }
}
