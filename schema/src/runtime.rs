//! Runtime provenance: what produced a submission's entries. Either the suite's own
//! Python scripts (mila-iqia/training, run by its `run.py` on PyTorch) or `mlbench run`
//! (the tch runner on libtorch). The two do not measure the same thing to the percent
//! (libtorch has less overhead per step than Python, and some jobs differ), so
//! a throughput of one is compared with a throughput of the other only knowingly.
//!
//! This module is the one place where mlbench decides what produced a submission:
//!
//! 1. **Declared.** `mlbench run` writes `system.json` with a `runtime` field
//!    ([`crate::SystemInfo::runtime_of`]; a description of an earlier mlbench without
//!    the field counts as `mlbench run` with its `libtorch` version), and `mlbench pack`
//!    copies it into `SUBMISSION.json`. A declaration gives the version, never the kind
//!    over what the entries show: entries of another kind than the declared one make
//!    the submission `mixed`, and the declaration is said to be contradicted
//!    (`validate`'s `runtime.declared`).
//! 2. **Inferred from the entries** ([`entry_runtime`]), each entry by the fields its
//!    writer leaves:
//!    - `mlbench run` writes `peak_rss_bytes` / `peak_device_bytes` (every entry whose
//!      loop ran), `smoke` (with `--smoke`), `synthetic_data` (with `--synthetic-data`), `gpu` as `cuda:<i>` on a GPU (tch has no
//!      device-name query) and `gpu` = the CPU model with `cuda: false` on a CPU device;
//!    - the suite's `make_report` writes `start_time`, `end_time` and `suite` (from
//!      2019-12, E3), records `cuda` among the arguments and adds `gpu` =
//!      `torch.cuda.get_device_name()` only when `cuda` is true: a device name with
//!      `cuda` not false, or `cuda` without `gpu` (cart's `--no-cuda`), is the suite's;
//!    - anything else (a failure stub of the 2019 streams, a hand-made entry) says
//!      nothing.
//!
//!    `mlbench run`'s marks are looked at first: they stay its own even if the runner
//!    also comes to write the suite's fields. The submission's runtime is the one kind
//!    its entries show ([`resolve`]); entries of both kinds make it `mixed`
//!    (`validate`'s `runtime.mixed`), none `unknown` (or the declared one).
//!
//! The suite's entries never record torch's version, so an inferred runtime has none.
//! [`ParityTable`] holds, per bench, how the two runtimes' throughputs compare where the
//! parity harness measured it (`baselines/parity.toml`).

use crate::entry::ReportEntry;
use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Which program wrote the entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuntimeKind {
    /// The suite's own scripts (mila-iqia/training) on PyTorch.
    SuiteScripts,
    /// `mlbench run`, the tch runner on libtorch.
    MlbenchRun,
}

impl RuntimeKind {
    /// Both kinds, in a fixed order.
    pub const ALL: [RuntimeKind; 2] = [RuntimeKind::SuiteScripts, RuntimeKind::MlbenchRun];

    /// The stable id of JSON and TOML: `suite-scripts`, `mlbench-run`.
    pub fn id(self) -> &'static str {
        match self {
            RuntimeKind::SuiteScripts => "suite-scripts",
            RuntimeKind::MlbenchRun => "mlbench-run",
        }
    }

    /// The name for people: `mila-iqia/training scripts`, `mlbench run`.
    pub fn name(self) -> &'static str {
        match self {
            RuntimeKind::SuiteScripts => "mila-iqia/training scripts",
            RuntimeKind::MlbenchRun => "mlbench run",
        }
    }

    /// The writer of entries of this kind, in a sentence: `the mila-iqia/training
    /// scripts`, `mlbench run`.
    pub fn writer(self) -> String {
        match self {
            RuntimeKind::SuiteScripts => format!("the {}", self.name()),
            RuntimeKind::MlbenchRun => self.name().to_owned(),
        }
    }

    /// The other kind.
    pub fn other(self) -> RuntimeKind {
        match self {
            RuntimeKind::SuiteScripts => RuntimeKind::MlbenchRun,
            RuntimeKind::MlbenchRun => RuntimeKind::SuiteScripts,
        }
    }

    /// The framework whose version [`Runtime::version`] is: `torch`, `libtorch`.
    pub fn framework(self) -> &'static str {
        match self {
            RuntimeKind::SuiteScripts => "torch",
            RuntimeKind::MlbenchRun => "libtorch",
        }
    }
}

/// What produced a submission: the program and its framework's version.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Runtime {
    /// The program.
    pub kind: RuntimeKind,
    /// torch's version (the suite's scripts) or libtorch's (`mlbench run`), when known.
    #[serde(default)]
    pub version: Option<String>,
}

impl Runtime {
    /// `kind` at `version`.
    pub fn new(kind: RuntimeKind, version: Option<String>) -> Runtime {
        Runtime { kind, version }
    }

    /// `mlbench run` on libtorch `version`.
    pub fn mlbench_run(version: Option<String>) -> Runtime {
        Runtime::new(RuntimeKind::MlbenchRun, version)
    }

    /// The suite's scripts on torch `version`.
    pub fn suite_scripts(version: Option<String>) -> Runtime {
        Runtime::new(RuntimeKind::SuiteScripts, version)
    }
}

/// `mila-iqia/training scripts, torch 2.13.0`, `mlbench run, libtorch 2.13.0`, or
/// `mlbench run (libtorch version unknown)`. [`Runtime::from_str`] reads it back.
impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, framework) = (self.kind.name(), self.kind.framework());
        match &self.version {
            Some(v) => write!(f, "{name}, {framework} {v}"),
            None => write!(f, "{name} ({framework} version unknown)"),
        }
    }
}

/// A runtime that does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "runtime `{0}`: expected `mila-iqia/training scripts[, torch VERSION]` or `mlbench run[, libtorch VERSION]` (or the ids suite-scripts, mlbench-run)"
)]
pub struct RuntimeSyntaxError(pub String);

impl std::str::FromStr for Runtime {
    type Err = RuntimeSyntaxError;

    /// Reads what [`Runtime`]'s `Display` writes, or a kind's id with an optional
    /// `, <framework> <version>`.
    fn from_str(text: &str) -> Result<Runtime, RuntimeSyntaxError> {
        let err = || RuntimeSyntaxError(text.to_owned());
        let text = text.trim();
        let kind_of = |name: &str| {
            RuntimeKind::ALL
                .into_iter()
                .find(|k| name.eq_ignore_ascii_case(k.name()) || name.eq_ignore_ascii_case(k.id()))
        };
        if let Some(kind) = kind_of(text) {
            return Ok(Runtime::new(kind, None));
        }
        if let Some((name, _)) = text.split_once(" (")
            && let Some(kind) = kind_of(name)
            && text == format!("{name} ({} version unknown)", kind.framework())
        {
            return Ok(Runtime::new(kind, None));
        }
        let (name, rest) = text.split_once(", ").ok_or_else(err)?;
        let kind = kind_of(name).ok_or_else(err)?;
        let version = rest
            .strip_prefix(kind.framework())
            .and_then(|v| v.strip_prefix(' '))
            .map(str::trim)
            .filter(|v| !v.is_empty() && !v.contains(char::is_whitespace))
            .ok_or_else(err)?;
        Ok(Runtime::new(kind, Some(version.to_owned())))
    }
}

/// Whether `gpu` is tch's name of a CUDA device, `cuda:<index>`.
fn is_cuda_ordinal(gpu: &str) -> bool {
    gpu.strip_prefix("cuda:")
        .is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()))
}

/// Which runtime wrote `entry`, by the fields each writer leaves (see the module's
/// documentation); `None` when nothing in it tells.
pub fn entry_runtime(entry: &ReportEntry) -> Option<RuntimeKind> {
    let has = |key: &str| entry.get(key).is_some();
    if has("peak_rss_bytes") || has("peak_device_bytes") || has("smoke") || has("synthetic_data") {
        return Some(RuntimeKind::MlbenchRun);
    }
    let gpu = entry.get("gpu").and_then(Value::as_str);
    let cuda_off = entry.get("cuda") == Some(&Value::Bool(false));
    if let Some(gpu) = gpu
        && (is_cuda_ordinal(gpu) || cuda_off)
    {
        return Some(RuntimeKind::MlbenchRun);
    }
    // The suite records `cuda` among the arguments and `gpu` only when it is true; the
    // runner always writes `gpu`: `cuda` without `gpu` (cart's `--no-cuda`) is the suite's.
    if has("start_time") || has("end_time") || has("suite") || gpu.is_some() || has("cuda") {
        return Some(RuntimeKind::SuiteScripts);
    }
    None
}

/// How many entries each runtime wrote ([`entry_runtime`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RuntimeTally {
    /// Entries the suite's scripts wrote.
    pub suite_scripts: usize,
    /// Entries `mlbench run` wrote.
    pub mlbench_run: usize,
    /// Entries that do not say.
    pub unknown: usize,
}

impl RuntimeTally {
    /// Counts one entry of `kind` (`None`: it does not say).
    pub fn add(&mut self, kind: Option<RuntimeKind>) {
        match kind {
            Some(RuntimeKind::SuiteScripts) => self.suite_scripts += 1,
            Some(RuntimeKind::MlbenchRun) => self.mlbench_run += 1,
            None => self.unknown += 1,
        }
    }

    /// Adds `other`'s counts.
    pub fn merge(&mut self, other: &RuntimeTally) {
        self.suite_scripts += other.suite_scripts;
        self.mlbench_run += other.mlbench_run;
        self.unknown += other.unknown;
    }

    /// Entries of `kind`.
    pub fn of(&self, kind: RuntimeKind) -> usize {
        match kind {
            RuntimeKind::SuiteScripts => self.suite_scripts,
            RuntimeKind::MlbenchRun => self.mlbench_run,
        }
    }

    /// The kinds some entry shows, in [`RuntimeKind::ALL`]'s order.
    pub fn kinds(&self) -> Vec<RuntimeKind> {
        RuntimeKind::ALL
            .into_iter()
            .filter(|k| self.of(*k) > 0)
            .collect()
    }

    /// Every entry counted.
    pub fn total(&self) -> usize {
        self.suite_scripts + self.mlbench_run + self.unknown
    }
}

/// How a submission's runtime is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuntimeBasis {
    /// Its machine descriptions (`system.json`) say it, and no entry says otherwise.
    Declared,
    /// Its entries show one runtime.
    Entries,
    /// Its entries show both runtimes, its descriptions name both, or its entries show
    /// another runtime than the one its descriptions declare.
    Mixed,
    /// Nothing tells.
    Unknown,
}

/// What produced a submission, and how mlbench knows ([`resolve`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmissionRuntime {
    /// The runtime; `None` when unknown or mixed.
    pub runtime: Option<Runtime>,
    /// How it is known.
    pub basis: RuntimeBasis,
    /// What the entries show.
    pub entries: RuntimeTally,
    /// What the machine descriptions declare (their versions joined with `/`); `None`
    /// when none declares a runtime, or they name both kinds.
    pub declared: Option<Runtime>,
}

/// The one rule: the entries say what ran, the declaration (every machine
/// description's [`crate::SystemInfo::runtime_of`]) what version. Entries of both kinds
/// are `mixed`; so are descriptions that disagree on the kind, and entries of another
/// kind than the declared one (a declaration never overrides the entries). Else the
/// declared runtime (its versions, if they differ, joined with `/`) when there is one,
/// the one kind the entries show when not; neither, `unknown`.
pub fn resolve(declared: &[Runtime], entries: RuntimeTally) -> SubmissionRuntime {
    let of = |runtime, basis, declared| SubmissionRuntime {
        runtime,
        basis,
        entries,
        declared,
    };
    let declaration = match declared.first() {
        None => None,
        Some(first) if declared.iter().any(|r| r.kind != first.kind) => {
            return of(None, RuntimeBasis::Mixed, None);
        }
        Some(first) => {
            let mut versions: Vec<&str> = declared
                .iter()
                .filter_map(|r| r.version.as_deref())
                .collect();
            versions.sort_unstable();
            versions.dedup();
            let version = (!versions.is_empty()).then(|| versions.join("/"));
            Some(Runtime::new(first.kind, version))
        }
    };
    match (declaration, entries.kinds().as_slice()) {
        (declaration, [_, _, ..]) => of(None, RuntimeBasis::Mixed, declaration),
        (Some(d), [kind]) if d.kind != *kind => of(None, RuntimeBasis::Mixed, Some(d)),
        (Some(d), _) => of(Some(d.clone()), RuntimeBasis::Declared, Some(d)),
        (None, [kind]) => of(Some(Runtime::new(*kind, None)), RuntimeBasis::Entries, None),
        (None, _) => of(None, RuntimeBasis::Unknown, None),
    }
}

impl SubmissionRuntime {
    /// What two submissions are compared by: the kind, `mixed`, or `None` when unknown
    /// (an unknown runtime is never said to differ).
    pub fn key(&self) -> Option<&'static str> {
        match (&self.runtime, self.basis) {
            (Some(r), _) => Some(r.kind.id()),
            (None, RuntimeBasis::Mixed) => Some("mixed"),
            (None, _) => None,
        }
    }

    /// Whether this runtime and `other` are known and differ (in kind, not version).
    pub fn differs_from(&self, other: &SubmissionRuntime) -> bool {
        matches!((self.key(), other.key()), (Some(a), Some(b)) if a != b)
    }

    /// Whether this runtime is known and differs in kind from `other` (the targets').
    pub fn differs_from_runtime(&self, other: Option<&Runtime>) -> bool {
        matches!((self.key(), other), (Some(a), Some(b)) if a != b.kind.id())
    }

    /// The entries written by another runtime than the declared one (0 when none is
    /// declared).
    pub fn contradicting(&self) -> usize {
        self.declared
            .as_ref()
            .map_or(0, |d| self.entries.of(d.kind.other()))
    }

    /// `system.json declares …, contradicted by N entries written by …`, when entries
    /// contradict the declaration.
    pub fn contradiction(&self) -> Option<String> {
        let d = self.declared.as_ref()?;
        let n = self.contradicting();
        (n > 0).then(|| {
            format!(
                "system.json declares {d}, contradicted by {} written by {}",
                crate::words::count(n, "entry", "entries"),
                d.kind.other().writer()
            )
        })
    }

    /// The runtime in a few words, for a table's cell: the runtime without how it is
    /// known; [`SubmissionRuntime::label`] when there is no one runtime.
    pub fn short_label(&self) -> String {
        self.runtime
            .as_ref()
            .map_or_else(|| self.label(), ToString::to_string)
    }

    /// One line for people: the runtime and how it is known; for a mixed one, how many
    /// entries each runtime wrote, and the declaration they contradict.
    pub fn label(&self) -> String {
        let t = &self.entries;
        match (&self.runtime, self.basis) {
            (Some(r), RuntimeBasis::Declared) => format!("{r} (declared by system.json)"),
            (Some(r), _) => format!(
                "{r} (inferred from the entries: {} of {})",
                t.of(r.kind),
                t.total()
            ),
            (None, RuntimeBasis::Mixed) if t.kinds().len() > 1 || self.declared.is_some() => {
                let mut label = format!(
                    "mixed: {} by {}, {} by {}",
                    crate::words::count(t.suite_scripts, "entry", "entries"),
                    RuntimeKind::SuiteScripts.writer(),
                    t.mlbench_run,
                    RuntimeKind::MlbenchRun.writer()
                );
                if let Some(c) = self.contradiction() {
                    label.push_str("; ");
                    label.push_str(&c);
                }
                label
            }
            (None, RuntimeBasis::Mixed) => {
                "mixed: its machine descriptions name both runtimes".to_owned()
            }
            (None, _) => "unknown (nothing in the entries tells)".to_owned(),
        }
    }
}

/// As the JSON documents carry it: `kind` (`suite-scripts`, `mlbench-run`, `mixed`, or
/// `null` when unknown) and `version` (`null` when unknown or mixed), `label`, `basis`,
/// the `entries` tally, the `declared` runtime (`null` when none) and the
/// `contradicting_entries` (entries of another runtime than the declared one).
impl Serialize for SubmissionRuntime {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("SubmissionRuntime", 7)?;
        s.serialize_field("kind", &self.key())?;
        s.serialize_field(
            "version",
            &self.runtime.as_ref().and_then(|r| r.version.as_deref()),
        )?;
        s.serialize_field("label", &self.label())?;
        s.serialize_field("basis", &self.basis)?;
        s.serialize_field("entries", &self.entries)?;
        s.serialize_field("declared", &self.declared)?;
        s.serialize_field("contradicting_entries", &self.contradicting())?;
        s.end()
    }
}

/// The parity table's file, compiled in.
const BUILTIN_PARITY: &str = include_str!("../../baselines/parity.toml");

/// How `mlbench run`'s throughput compares with the suite's scripts', per bench: the
/// items/s of `mlbench run` ÷ the items/s of the suite's script for the same job on the
/// same machine, as the parity harness measures it (`baselines/parity.toml`, filled from
/// docs/runner.md's parity tables). A bench not in the table has no known parity.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParityTable {
    /// Where the figures come from.
    pub source: String,
    /// One row per bench.
    pub benches: Vec<Parity>,
}

/// One bench's parity.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parity {
    /// The bench.
    pub name: String,
    /// `mlbench run` items/s ÷ the suite's script items/s.
    pub ratio: f64,
    /// The machine it was measured on (`CPU, 1 core of a 2-core VM, PyTorch 2.13`,
    /// `H100`): a ratio holds for that machine, not for every one.
    pub measured_on: String,
    /// The day it was measured (`YYYY-MM-DD`): a ratio holds for the two runtimes of
    /// that day.
    pub date: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParity {
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    bench: Vec<Parity>,
}

/// A parity table that does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ParityError {
    /// The file.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl ParityTable {
    /// The project's table, `baselines/parity.toml`.
    pub fn builtin() -> Result<ParityTable, ParityError> {
        Self::from_toml("baselines/parity.toml", BUILTIN_PARITY)
    }

    /// Reads a table in `baselines/parity.toml`'s layout: each ratio finite and
    /// positive, each bench once.
    pub fn from_toml(name: &str, text: &str) -> Result<ParityTable, ParityError> {
        let invalid = |message: String| ParityError {
            path: name.to_owned(),
            message,
        };
        let raw: RawParity =
            toml::from_str(text).map_err(|e| invalid(e.to_string().trim_end().to_owned()))?;
        for (i, row) in raw.bench.iter().enumerate() {
            if !(row.ratio.is_finite() && row.ratio > 0.0) {
                return Err(invalid(format!(
                    "bench `{}`: ratio {} is not a positive number",
                    row.name, row.ratio
                )));
            }
            if row.measured_on.trim().is_empty() {
                return Err(invalid(format!(
                    "bench `{}`: measured_on is empty",
                    row.name
                )));
            }
            if crate::calendar::parse_date(&row.date).is_none() {
                return Err(invalid(format!(
                    "bench `{}`: date `{}` is not a day (YYYY-MM-DD)",
                    row.name, row.date
                )));
            }
            if raw.bench[..i].iter().any(|r| r.name == row.name) {
                return Err(invalid(format!("bench `{}` is listed twice", row.name)));
            }
        }
        Ok(ParityTable {
            source: raw.source.unwrap_or_else(|| name.to_owned()),
            benches: raw.bench,
        })
    }

    /// The parity of `bench`, when known.
    pub fn ratio(&self, bench: &str) -> Option<f64> {
        self.get(bench).map(|p| p.ratio)
    }

    /// The row of `bench`, when known.
    pub fn get(&self, bench: &str) -> Option<&Parity> {
        self.benches.iter().find(|p| p.name == bench)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> ReportEntry {
        ReportEntry::new(
            crate::pyjson::parse(text.as_bytes())
                .unwrap()
                .as_object()
                .unwrap()
                .clone(),
        )
    }

    #[test]
    fn runtimes_print_and_read_back() {
        let cases = [
            (
                Runtime::mlbench_run(Some("2.13.0".into())),
                "mlbench run, libtorch 2.13.0",
            ),
            (
                Runtime::suite_scripts(None),
                "mila-iqia/training scripts (torch version unknown)",
            ),
            (
                Runtime::suite_scripts(Some("1.3.1".into())),
                "mila-iqia/training scripts, torch 1.3.1",
            ),
            (
                Runtime::mlbench_run(None),
                "mlbench run (libtorch version unknown)",
            ),
        ];
        for (runtime, text) in cases {
            assert_eq!(runtime.to_string(), text);
            assert_eq!(text.parse::<Runtime>().unwrap(), runtime);
        }
        assert_eq!(
            "suite-scripts".parse::<Runtime>().unwrap(),
            Runtime::suite_scripts(None)
        );
        assert_eq!(
            "mlbench-run, libtorch 2.12".parse::<Runtime>().unwrap(),
            Runtime::mlbench_run(Some("2.12".into()))
        );
        for bad in [
            "pytorch",
            "mlbench run, torch 2.13",
            "mlbench run, libtorch",
            "mlbench run (torch version unknown)",
            "",
        ] {
            assert!(bad.parse::<Runtime>().is_err(), "{bad}");
        }
        let json = serde_json::to_string(&Runtime::mlbench_run(Some("2.13.0".into()))).unwrap();
        assert_eq!(json, r#"{"kind":"mlbench-run","version":"2.13.0"}"#);
    }

    /// Entries as `mlbench run` writes them (runner/src/report.rs: `gpu` from the
    /// device, the peaks after a loop ran, `smoke` with --smoke, a failure entry with
    /// neither) and as the suite's scripts write them (the 2019 streams: a device name;
    /// E3: `start_time`, `end_time`, `suite`; run.py's failure stubs).
    #[test]
    fn each_writer_is_told_by_its_fields() {
        let mlbench = [
            r#"{"name": "vae", "gpu": "cuda:0", "cuda": true, "peak_rss_bytes": 1, "peak_device_bytes": 2}"#,
            r#"{"name": "vae", "gpu": "cuda:12", "cuda": true, "completed": false}"#,
            r#"{"name": "vae", "gpu": "AMD EPYC 9654", "cuda": false, "peak_rss_bytes": 1}"#,
            r#"{"name": "vae", "gpu": "AMD EPYC 9654", "cuda": false, "completed": false}"#,
            r#"{"name": "vae", "gpu": "cuda:0", "smoke": true}"#,
            r#"{"name": "vae", "gpu": "TITAN RTX", "cuda": true, "synthetic_data": true}"#,
            // Should the runner come to write the suite's fields, its own marks still win.
            r#"{"name": "vae", "gpu": "cuda:0", "start_time": "x", "suite": "fast"}"#,
        ];
        for text in mlbench {
            assert_eq!(
                entry_runtime(&entry(text)),
                Some(RuntimeKind::MlbenchRun),
                "{text}"
            );
        }
        let suite = [
            r#"{"name": "vae", "gpu": "TITAN RTX", "cuda": true}"#,
            r#"{"name": "vae", "gpu": "Tesla V100-SXM2-16GB"}"#,
            r#"{"name": "cart", "cuda": false, "start_time": "Thu Dec 12 21:04:05 2019"}"#,
            r#"{"name": "vae", "end_time": "Thu Dec 12 21:04:05 2019"}"#,
            r#"{"completed": false, "suite": "fast", "name": null, "run_id": 0, "vcd": "0"}"#,
            r#"{"name": "vae", "gpu": "cuda", "cuda": true}"#,
            r#"{"name": "cart", "cuda": false}"#,
        ];
        for text in suite {
            assert_eq!(
                entry_runtime(&entry(text)),
                Some(RuntimeKind::SuiteScripts),
                "{text}"
            );
        }
        for text in [
            r#"{"name": "vae", "version": "v", "vcd": "0"}"#,
            r#"{"completed": false, "name": "vae", "run_id": 0}"#,
        ] {
            assert_eq!(entry_runtime(&entry(text)), None, "{text}");
        }
    }

    /// The shipped example submission was written as the suite's 2019 scripts write:
    /// every entry is the suite's.
    #[test]
    fn the_example_submission_is_the_suites() {
        let root = std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../submissions/example"
        ));
        // Its report streams are `output<run>/<suite>_<job>.json`, one folder down.
        let mut reports = Vec::new();
        for run in std::fs::read_dir(root).unwrap() {
            let run = run.unwrap().path();
            if !run.is_dir() {
                continue;
            }
            for file in std::fs::read_dir(&run).unwrap() {
                let path = file.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if crate::reader::FileName::parse(&name).is_some() {
                    reports.push(path);
                }
            }
        }
        let mut tally = RuntimeTally::default();
        for path in &reports {
            let display = path.display().to_string();
            for (_, e) in &crate::reader::read_file(path, &display).entries {
                tally.add(entry_runtime(e));
            }
        }
        assert_eq!(tally.suite_scripts, 175);
        assert_eq!((tally.mlbench_run, tally.unknown), (0, 0));
        let sub = resolve(&[], tally);
        assert_eq!(sub.runtime, Some(Runtime::suite_scripts(None)));
        assert_eq!(sub.basis, RuntimeBasis::Entries);
        assert_eq!(
            sub.label(),
            "mila-iqia/training scripts (torch version unknown) (inferred from the entries: 175 of 175)"
        );
    }

    #[test]
    fn the_entries_decide_the_kind_and_a_declaration_the_version() {
        let tally = |s, m, u| RuntimeTally {
            suite_scripts: s,
            mlbench_run: m,
            unknown: u,
        };
        let run = |v: &str| Runtime::mlbench_run(Some(v.into()));
        // Entries that agree with the declaration, or do not say: declared.
        let declared = resolve(&[run("2.13.0"), run("2.13.0")], tally(0, 3, 2));
        assert_eq!(declared.runtime, Some(run("2.13.0")));
        assert_eq!(declared.basis, RuntimeBasis::Declared);
        assert_eq!(declared.contradicting(), 0);
        assert_eq!(
            declared.label(),
            "mlbench run, libtorch 2.13.0 (declared by system.json)"
        );
        assert_eq!(
            resolve(&[run("2")], tally(0, 0, 4)).basis,
            RuntimeBasis::Declared
        );
        // The suite's entries under a declaration of mlbench run: mixed, never the
        // declared runtime, and the declaration is said to be contradicted.
        let wrong = resolve(&[run("2.13.0")], tally(3, 0, 1));
        assert_eq!(
            (wrong.runtime.clone(), wrong.basis),
            (None, RuntimeBasis::Mixed)
        );
        assert_eq!(wrong.contradicting(), 3);
        assert_eq!(
            wrong.label(),
            "mixed: 3 entries by the mila-iqia/training scripts, 0 by mlbench run; system.json declares mlbench run, libtorch 2.13.0, contradicted by 3 entries written by the mila-iqia/training scripts"
        );
        let both = resolve(&[run("2.13.0")], tally(1, 4, 0));
        assert_eq!(both.basis, RuntimeBasis::Mixed);
        assert_eq!(
            both.label(),
            "mixed: 1 entry by the mila-iqia/training scripts, 4 by mlbench run; system.json declares mlbench run, libtorch 2.13.0, contradicted by 1 entry written by the mila-iqia/training scripts"
        );
        let json = serde_json::to_value(&both).unwrap();
        assert_eq!(json["kind"], "mixed");
        assert_eq!(json["basis"], "mixed");
        assert_eq!(json["declared"]["kind"], "mlbench-run");
        assert_eq!(json["declared"]["version"], "2.13.0");
        assert_eq!(json["contradicting_entries"], 1);
        assert_eq!(json["entries"]["suite_scripts"], 1);
        assert_eq!(json["entries"]["mlbench_run"], 4);
        assert!(both.differs_from(&resolve(&[], tally(0, 5, 0))));
        let two = resolve(&[run("2.13.0"), run("2.12.1")], tally(0, 3, 0));
        assert_eq!(two.runtime, Some(run("2.12.1/2.13.0")));
        let odd = resolve(&[run("2"), Runtime::suite_scripts(None)], tally(0, 0, 0));
        assert_eq!((odd.runtime, odd.basis), (None, RuntimeBasis::Mixed));
        let mixed = resolve(&[], tally(2, 1, 4));
        assert_eq!(
            (mixed.runtime.clone(), mixed.basis),
            (None, RuntimeBasis::Mixed)
        );
        assert_eq!(
            mixed.label(),
            "mixed: 2 entries by the mila-iqia/training scripts, 1 by mlbench run"
        );
        let unknown = resolve(&[], tally(0, 0, 4));
        assert_eq!(unknown.basis, RuntimeBasis::Unknown);
        let scripts = resolve(&[], tally(5, 0, 1));
        let mlbench = resolve(&[], tally(0, 5, 0));
        assert!(scripts.differs_from(&mlbench));
        assert!(mixed.differs_from(&scripts));
        assert!(!unknown.differs_from(&scripts) && !scripts.differs_from(&unknown));
        assert!(!scripts.differs_from(&resolve(&[], tally(1, 0, 0))));
        assert!(mlbench.differs_from_runtime(Some(&Runtime::suite_scripts(None))));
        assert!(!mlbench.differs_from_runtime(Some(&run("2.12"))));
        assert!(!mlbench.differs_from_runtime(None));
        let json = serde_json::to_value(&scripts).unwrap();
        assert_eq!(json["kind"], "suite-scripts");
        assert_eq!(json["version"], serde_json::Value::Null);
        assert_eq!(json["basis"], "entries");
        assert_eq!(json["entries"]["unknown"], 1);
        assert_eq!(json["declared"], serde_json::Value::Null);
        assert_eq!(json["contradicting_entries"], 0);
    }

    #[test]
    fn the_parity_table_reads_and_checks() {
        let builtin = ParityTable::builtin().unwrap();
        for row in &builtin.benches {
            assert!(row.ratio > 0.0);
        }
        let t = ParityTable::from_toml(
            "p.toml",
            "[[bench]]\nname = \"toy_reg\"\nratio = 2.2\nmeasured_on = \"CPU\"\ndate = \"2026-12-03\"\n",
        )
        .unwrap();
        assert_eq!(t.get("toy_reg").unwrap().date, "2026-12-03");
        assert_eq!(t.ratio("toy_reg"), Some(2.2));
        assert_eq!(t.ratio("vae"), None);
        assert_eq!(t.source, "p.toml");
        let err = |text: &str| ParityTable::from_toml("p.toml", text).unwrap_err().message;
        let on = "measured_on = \"CPU\"\ndate = \"2026-12-03\"\n";
        let row = |name: &str, ratio: &str| {
            format!("[[bench]]\nname = \"{name}\"\nratio = {ratio}\n{on}")
        };
        assert!(err(&row("a", "0.0")).contains("not a positive"));
        assert!(err(&(row("a", "1.0") + &row("a", "2.0"))).contains("listed twice"));
        assert!(!err(&(row("a", "1.0") + "note = 1\n")).is_empty());
        // A ratio without its machine or its day is refused: it would read as a fact
        // about every machine.
        assert!(
            err("[[bench]]\nname = \"a\"\nratio = 1.0\ndate = \"2026-12-03\"\n")
                .contains("measured_on")
        );
        assert!(
            err("[[bench]]\nname = \"a\"\nratio = 1.0\nmeasured_on = \"CPU\"\n").contains("date")
        );
        let bad_day = row("a", "1.0").replace("2026-12-03", "2026-02-30");
        assert!(err(&bad_day).contains("not a day"), "{}", err(&bad_day));
    }
}
