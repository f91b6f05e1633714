//! The report entry of one copy (spec §1.2) and its appending to the legacy stream
//! `<jobs>_<K>.json` (spec §1.4).
//!
//! Failure semantics: the legacy stream layout is kept (`[{…},{…},`), with the E3 field
//! `completed` added to every entry so failures are visible to every reader:
//! - a NaN loss writes a full entry with `completed: false`; its `batch_loss` ends with
//!   the NaN (so the c48adfc+ NaN rule flags it too) and `train` covers the
//!   observations finished before it;
//! - a bench error or panic writes a short entry (the arguments, `name`, `version`,
//!   `hostname`, `gpu`, `run_id`, `unique_id`, `completed: false`) with no `train`,
//!   like the E3 failure stubs but with the bench's real `name` (the stubs' `null` was a
//!   bug of run.py, spec §1.5).

use crate::plan::CopyPlan;
use crate::timing::Measurement;
use mlbench_schema::entry::ReportEntry;
use mlbench_schema::unique_id::{EXCLUDED_FINAL, script_version, unique_id};
use mlbench_schema::value::{Object, Value};
use mlbench_schema::writer::append_to_stream;
use std::path::{Path, PathBuf};

/// A report that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{}: cannot write the report: {source}", path.display())]
pub struct ReportError {
    /// The stream file.
    pub path: PathBuf,
    /// The cause.
    pub source: std::io::Error,
}

/// What the entry records besides the copy's arguments and measurement.
#[derive(Debug, Clone, Copy)]
pub struct EntryContext<'a> {
    /// The bench name (`BENCH_NAME`).
    pub name: &'a str,
    /// `version`: see [`version_of`].
    pub version: &'a str,
    /// `socket.gethostname()`.
    pub hostname: &'a str,
    /// The device name (`gpu`).
    pub gpu: &'a str,
    /// `RUN_ID`.
    pub run_id: u32,
}

/// `version` of a model: the first 10 hex digits of the SHA-256 of its source, as the
/// suite hashed its scripts (spec §2.2).
pub fn version_of(source: &str) -> String {
    script_version(source.as_bytes())
}

/// The fields every entry has: the arguments, `version`, the report's own fields and
/// `unique_id` (computed last, from the arguments, as `make_report` does).
fn base(ctx: &EntryContext<'_>, copy: &CopyPlan, completed: bool) -> Object {
    let mut fields = Object::new();
    for (k, v) in &copy.arguments {
        fields.insert(k.clone(), v.clone());
    }
    fields.insert("version", ctx.version);
    fields.insert("name", ctx.name);
    fields.insert("gpu", ctx.gpu);
    fields.insert("hostname", ctx.hostname);
    fields.insert("run_id", ctx.run_id.to_string());
    fields.insert("completed", completed);
    fields.insert("epoch_loss", Value::List(Vec::new()));
    fields.insert("metrics", Object::new());
    fields
}

fn with_unique_id(fields: Object) -> ReportEntry {
    let mut entry = ReportEntry::new(fields);
    // `arguments()` leaves out exactly what make_report adds after hashing (and the
    // stages), so the id is the one a reader recomputes from the file.
    let id = unique_id(entry.arguments(), EXCLUDED_FINAL);
    entry.fields.insert("unique_id", id);
    entry
}

/// The peak memory of the process that ran a copy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PeakMemory {
    /// Peak resident set size, bytes ([`crate::confine::peak_rss_bytes`]).
    pub rss_bytes: Option<u64>,
    /// Peak memory allocated on the CUDA device, bytes (`None`: not a CUDA copy, or not
    /// measured).
    pub device_bytes: Option<u64>,
}

/// The entry of a copy whose loop ran (to the end, or to a NaN loss), with its peak
/// memory as `peak_rss_bytes` and `peak_device_bytes`: added after `unique_id` is
/// computed (and never arguments, `ADDED_BY_REPORT`), so ids and the suite's tools are
/// unaffected.
pub fn build_entry(
    ctx: &EntryContext<'_>,
    copy: &CopyPlan,
    m: &Measurement,
    peak: &PeakMemory,
) -> ReportEntry {
    let mut fields = base(ctx, copy, m.completed());
    fields.insert(
        "batch_loss",
        Value::List(m.batch_loss.iter().map(|l| Value::Float(*l)).collect()),
    );
    fields.insert("train", m.train.to_stage());
    fields.insert("train_item", m.train_item());
    let mut entry = with_unique_id(fields);
    let peaks = [
        ("peak_rss_bytes", peak.rss_bytes),
        ("peak_device_bytes", peak.device_bytes),
    ];
    for (key, bytes) in peaks {
        if let Some(bytes) = bytes.and_then(|b| i64::try_from(b).ok()) {
            entry.fields.insert(key, bytes);
        }
    }
    entry
}

/// The entry of a copy that could not run (bench error or panic).
pub fn failure_entry(ctx: &EntryContext<'_>, copy: &CopyPlan) -> ReportEntry {
    with_unique_id(base(ctx, copy, false))
}

/// Appends `entry` to the stream at `path` (creating its folder), flushed at once so an
/// interrupted run loses no finished entry.
pub fn append(path: &Path, entry: &ReportEntry) -> Result<(), ReportError> {
    let err = |source| ReportError {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    append_to_stream(path, entry).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{BenchArgs, DeviceSpec};
    use crate::timing::{LoopSize, SKIP_OBS};
    use mlbench_schema::reader::parse_report;
    use mlbench_schema::timing::StatStream;
    use std::collections::{BTreeMap, VecDeque};

    fn copy(path: PathBuf) -> CopyPlan {
        let arguments: BTreeMap<String, Value> = [
            ("batch_size", Value::Int(32)),
            ("number", Value::Int(5)),
            ("repeat", Value::Int(12)),
            ("cuda", Value::Bool(false)),
            ("seed", Value::Int(100)),
            ("jr_id", Value::from("0")),
            ("vcd", Value::from("0")),
            ("cpu_cores", Value::Int(4)),
            ("lr", Value::Float(0.1)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        CopyPlan {
            device: DeviceSpec::Cpu {
                index: 0,
                threads: 4,
            },
            jr_id: "0".into(),
            vcd: "0".into(),
            cpu_cores: 4,
            seed: 100,
            report: path,
            command_line: String::new(),
            args: BenchArgs {
                batch_size: 32,
                number: 5,
                repeat: 12,
                seed: 100,
                extra: BTreeMap::new(),
            },
            arguments,
        }
    }

    /// A CUDA copy's peaks: 123 MiB resident, 2 GiB on the device.
    const PEAK: PeakMemory = PeakMemory {
        rss_bytes: Some(123 << 20),
        device_bytes: Some(2 << 30),
    };

    fn measurement(nan: bool) -> Measurement {
        let mut train = StatStream::new(SKIP_OBS);
        (0..12).for_each(|i| train.update(1.0 + f64::from(i) / 10.0));
        let mut batch_loss: VecDeque<f64> = [2.5, 1.25].into();
        if nan {
            batch_loss.push_back(f64::NAN);
        }
        Measurement {
            train,
            observations: Vec::new(),
            batch_loss,
            nan: nan.then_some(crate::timing::NanLoss {
                step: 2,
                observation: 0,
                value: f64::NAN,
            }),
            size: LoopSize {
                batch_size: 32,
                number: 5,
                repeat: 12,
            },
        }
    }

    #[test]
    fn written_entries_read_back_with_the_same_unique_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("output0").join("fast_0.json");
        let ctx = EntryContext {
            name: "vae",
            version: &version_of("model source"),
            hostname: "host",
            gpu: "cpu",
            run_id: 0,
        };
        let c = copy(path.clone());
        let ok = build_entry(&ctx, &c, &measurement(false), &PEAK);
        let nan = build_entry(&ctx, &c, &measurement(true), &PEAK);
        let failed = failure_entry(&ctx, &c);
        for e in [&ok, &nan, &failed] {
            append(&path, e).unwrap();
        }
        let text = std::fs::read(&path).unwrap();
        assert!(text.starts_with(b"[{") && text.ends_with(b"},"));
        let parsed = parse_report("fast_0.json", &text);
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        assert_eq!(parsed.entries.len(), 3);
        let read = &parsed.entries[0].1;
        assert_eq!(
            read.fields.sorted(),
            ok.fields.sorted(),
            "written keys sorted"
        );
        let recomputed = unique_id(read.arguments(), EXCLUDED_FINAL);
        assert_eq!(
            read.get("unique_id").and_then(Value::as_str),
            Some(recomputed.as_str())
        );
        assert_eq!(read.version(), Some(version_of("model source").as_str()));
        assert_eq!(read.get("run_id"), Some(&Value::from("0")));
        assert_eq!(read.failure(false), None);
        let args: Vec<&str> = read.arguments().iter().map(|(k, _)| *k).collect();
        assert_eq!(
            args,
            [
                "batch_size",
                "cpu_cores",
                "cuda",
                "jr_id",
                "lr",
                "number",
                "repeat",
                "seed",
                "vcd",
                "version"
            ]
        );
        let item = read.train_item_avg().unwrap();
        assert!((item - 160.0 / 2.05).abs() < 1e-9);
        assert_eq!(
            parsed.entries[1].1.failure(false),
            Some(mlbench_schema::FailureKind::Incomplete)
        );
        assert!(parsed.entries[1].1.first_nonfinite_loss().is_some());
        assert_eq!(parsed.entries[2].1.completed(), Some(false));
        assert_eq!(parsed.entries[2].1.name(), Some("vae"));
        // Same arguments → same id, whatever the outcome: the peaks (written, read back)
        // are not arguments, and a failure entry, which has none, has the same id.
        assert_eq!(read.get("peak_rss_bytes"), Some(&Value::Int(123 << 20)));
        assert_eq!(read.get("peak_device_bytes"), Some(&Value::Int(2 << 30)));
        assert_eq!(parsed.entries[2].1.get("peak_rss_bytes"), None);
        assert_eq!(ok.get("unique_id"), failed.get("unique_id"));
    }
}
