//! The per-file pass: parse a report file, run the per-entry rules, and keep only the
//! few facts the cross-file rules need (the parsed tree is dropped right away, so a large
//! submission never sits in memory whole).

use crate::curve::Curve;
use crate::finding::catalogued;
use crate::rules::entry::{At, JobConfigs, check};
use mlbench_results::validation::Finding;
use mlbench_schema::entry::{FailureKind, ReportEntry, configuration_key_of};
use mlbench_schema::reader::{Content, FileName, Location, ReadError, Reading, parse_each_of};
use mlbench_schema::value::Value;
use std::borrow::Cow;

/// Which GPU (or the whole machine) an entry ran on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Device {
    /// One GPU, by index.
    Gpu(u32),
    /// Several GPUs at once (a whole-machine job, `vcd` = `0,1,…`), with their count:
    /// scaling writes one entry per world size, which are not duplicates of each other.
    Machine(u32),
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Device::Gpu(i) => write!(f, "GPU {i}"),
            Device::Machine(0) => f.write_str("the whole machine"),
            Device::Machine(n) => write!(f, "{n} GPUs together"),
        }
    }
}

/// What the cross-file rules need to know about one entry.
#[derive(Debug, Clone)]
pub struct EntryFacts {
    /// Index of the file in the submission's report files.
    pub file: usize,
    /// Index of the entry in its file.
    pub entry: usize,
    /// The run (an index into the submission's runs, set once every file is read: a
    /// stream may hold several runs, told apart by `run_id`).
    pub run: u32,
    /// The entry's `run_id`.
    pub run_id: Option<String>,
    /// Where it ran.
    pub device: Device,
    /// The bench name (`None` for stubs with `name: null`).
    pub name: Option<String>,
    /// The recorded version.
    pub version: Option<String>,
    /// Why the entry is a failed run, if it is.
    pub failure: Option<FailureKind>,
    /// A hash of the entry's configuration (arguments minus per-process ones).
    pub config: u64,
    /// `batch_loss`, when present and all finite.
    pub losses: Curve,
    /// A hash of the bits of `losses` when it has at least two distinct values (a
    /// constant curve, e.g. a reward of 1 per step, is no sign of a copy).
    pub losses_hash: Option<u64>,
    /// `train` {avg, min, max, sd} as bits, when present: identical timings mean a copy.
    pub timing: Option<[u64; 4]>,
    /// Run with `mlbench run --smoke` (`smoke: true` among its arguments).
    pub smoke: bool,
    /// Run with `mlbench run --synthetic-data` (`synthetic_data: true`).
    pub synthetic_data: bool,
    /// The node it ran on (`hostname`).
    pub host: Option<String>,
    /// The device's name (`gpu`).
    pub gpu: Option<String>,
    /// What wrote it ([`mlbench_schema::runtime::entry_runtime`]; `None`: it does not say).
    pub runtime: Option<mlbench_schema::RuntimeKind>,
    /// `train_item.avg`: the throughput (for `runs.stopping`).
    pub throughput: Option<f64>,
}

impl EntryFacts {
    /// An entry of `name` on GPU 0 in run `run` with nothing else known: the one
    /// constructor of the rules' and the charts' tests (a field added here is added there).
    #[doc(hidden)]
    pub fn blank(file: usize, entry: usize, run: u32, name: &str) -> EntryFacts {
        EntryFacts {
            file,
            entry,
            run,
            run_id: None,
            device: Device::Gpu(0),
            name: Some(name.into()),
            version: None,
            failure: None,
            config: 0,
            losses: Curve::default(),
            losses_hash: None,
            timing: None,
            smoke: false,
            synthetic_data: false,
            host: None,
            gpu: None,
            runtime: None,
            throughput: None,
        }
    }
}

/// The outcome of the per-file pass.
#[derive(Debug, Clone, Default)]
pub struct FileFacts {
    /// Findings of the file and of its entries.
    pub findings: Vec<Finding>,
    /// Facts of the entries that parsed.
    pub entries: Vec<EntryFacts>,
}

/// Turns a reader error into a finding.
pub fn read_error_finding(e: &ReadError) -> Finding {
    let finding = match &e.location {
        Location::Field(field) => {
            let (expected, found) = e
                .message
                .strip_prefix("expected ")
                .and_then(|m| m.split_once(", found "))
                .map_or_else(
                    || (String::new(), e.message.clone()),
                    |(a, b)| (a.to_owned(), b.to_owned()),
                );
            let rule = if found.contains("missing") {
                "parse.missing-field"
            } else {
                "parse.type"
            };
            catalogued(rule, expected, found).field(field.clone())
        }
        Location::Measurement(field) => catalogued(
            "work.not-a-measurement",
            "a measurement: a finite number, not negative, at most 1e12",
            e.message.clone(),
        )
        .field(field.clone()),
        Location::Offset {
            offset,
            line,
            column,
        } => catalogued(
            "parse.json",
            "valid JSON",
            format!(
                "{} at byte {offset} (line {line}, column {column})",
                e.message
            ),
        ),
        Location::File => catalogued("parse.json", "a report file", e.message.clone()),
    };
    let finding = finding.file(e.file.clone());
    match e.entry {
        Some(entry) => finding.entry(entry),
        None => finding,
    }
}

/// Parses one report file and runs the per-entry rules.
pub fn file_facts(
    index: usize,
    path: &str,
    name: &FileName,
    content: Content<'_>,
    jobs: Option<&JobConfigs>,
) -> FileFacts {
    let (fail_file, file_device) = match name {
        FileName::Legacy { job_id, .. } => (false, Device::Gpu(*job_id)),
        FileName::PerTest { vcd, fail, .. } => {
            (*fail, vcd_device(vcd).unwrap_or(Device::Machine(0)))
        }
    };
    // Each entry is checked and let go as soon as it is read (a stream of appended runs
    // holds 1,600 of them); its findings follow the file's read errors, as before.
    // Room for as many entries as 2 KiB each would make (the suite's are 3–4 KiB with
    // their 100 losses): grown by doubling, a 600 KB stream's facts were copied twice.
    let room = match &content {
        Content::Bytes(bytes) => bytes.len() / 2048,
        Content::Stream(_) => 0,
    };
    let mut entries = Vec::with_capacity(room);
    let mut entry_findings = Vec::new();
    let parsed = parse_each_of(path, content, Reading::Values, |entry_index, mut entry| {
        let at = At {
            file: path,
            entry: entry_index,
        };
        let failure = entry.failure(fail_file);
        let args = entry.arguments();
        let config = configuration_key_of(&args);
        check(
            &entry,
            &args,
            config,
            &at,
            failure == Some(FailureKind::FailStub),
            jobs,
            &mut entry_findings,
        );
        let mut facts = EntryFacts {
            file: index,
            entry: entry_index,
            run: 0,
            run_id: mlbench_schema::runs::run_id_of(&entry).map(Cow::into_owned),
            device: entry
                .vcd()
                .as_deref()
                .and_then(vcd_device)
                .unwrap_or(file_device),
            name: entry.name().map(str::to_owned),
            version: entry.version().map(str::to_owned),
            failure,
            config,
            losses_hash: None,
            losses: Curve::default(),
            timing: timing(&entry),
            smoke: entry.is_smoke(),
            synthetic_data: entry.is_synthetic_data(),
            host: text_field(&entry, "hostname"),
            gpu: text_field(&entry, "gpu"),
            runtime: mlbench_schema::runtime::entry_runtime(&entry),
            throughput: entry.train_item_avg(),
        };
        (facts.losses, facts.losses_hash) = Curve::kept(loss_values(&mut entry));
        entries.push(facts);
    });
    let mut findings: Vec<Finding> = parsed.errors.iter().map(read_error_finding).collect();
    findings.append(&mut entry_findings);
    FileFacts { findings, entries }
}

/// The device a `CUDA_VISIBLE_DEVICES` value names.
pub fn vcd_device(vcd: &str) -> Option<Device> {
    let mut parts = vcd.split(',');
    let first: u32 = parts.next()?.trim().parse().ok()?;
    let rest = parts.count() as u32;
    Some(if rest > 0 {
        Device::Machine(rest + 1)
    } else {
        Device::Gpu(first)
    })
}

/// The entry's loss values, taken from it rather than copied where the read kept them as
/// numbers.
fn loss_values(entry: &mut ReportEntry) -> Vec<f64> {
    match entry.loss_values.take() {
        Some(values) => values,
        None => entry
            .batch_loss_values()
            .map(std::borrow::Cow::into_owned)
            .unwrap_or_default(),
    }
}

fn timing(entry: &ReportEntry) -> Option<[u64; 4]> {
    let train = entry.get("train")?.as_object()?;
    let get = |k: &str| train.get(k).and_then(Value::as_f64);
    let (avg, min, max, sd) = (get("avg")?, get("min")?, get("max")?, get("sd")?);
    // A stage with fewer observations than StatStream drops (scaling's one per world
    // size, docs/suite.md#statstream) reads avg 0, min Infinity, max -Infinity whatever the run: it
    // measured nothing, so equal values are no sign of a copy.
    if !(min.is_finite() && max.is_finite()) {
        return None;
    }
    Some([avg, min, max, sd].map(f64::to_bits))
}

/// A string field of an entry.
fn text_field(entry: &mlbench_schema::ReportEntry, key: &str) -> Option<String> {
    entry
        .get(key)
        .and_then(mlbench_schema::Value::as_str)
        .map(str::to_owned)
}
