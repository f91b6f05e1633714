//! The report entry of one copy (docs/suite.md#report-entries) and its appending to the legacy
//! stream `<jobs>_<K>.json` (docs/suite.md#the-stream-format).
//!
//! Failure semantics: the legacy stream layout is kept (`[{…},{…},`), with the E3 field
//! `completed` added to every entry so failures are visible to every reader:
//! - a NaN loss writes a full entry with `completed: false`; its `batch_loss` ends with
//!   the NaN (so the c48adfc+ NaN rule flags it too) and `train` covers the
//!   observations finished before it;
//! - a bench error or panic writes a short entry (the arguments, `name`, `version`,
//!   `hostname`, `gpu`, `run_id`, `unique_id`, `completed: false`) with no `train`,
//!   like the E3 failure stubs but with the bench's real `name` (the stubs' `null` was a
//!   bug of run.py, docs/suite.md#failure-stubs).

use crate::bench::BenchFactory;
use crate::plan::CopyPlan;
use crate::timing::Measurement;
use mlbench_schema::calendar::civil_from_days;
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
    /// The device name (`gpu`); `None` writes no `gpu` (the suite writes it only when
    /// `cuda` is true: cart's `--no-cuda`).
    pub gpu: Option<&'a str>,
    /// `RUN_ID`.
    pub run_id: u32,
    /// `suite`: `SUITE_NAME`, the jobs file's base name without extension.
    pub suite: &'a str,
    /// `start_time`: [`ctime`] of when the copy started (recorded among the arguments,
    /// so hashed into `unique_id` as the suite's `get_arguments` does).
    pub start_time: &'a str,
    /// `end_time`: [`ctime`] of when the entry was made.
    pub end_time: &'a str,
}

/// Python's `datetime.utcnow().ctime()` of `unix_seconds` (UTC): `Fri Nov 27 01:53:58
/// 2026`, the day of the month padded with a space (`Sun Dec  1 00:00:00 2019`).
pub fn ctime(unix_seconds: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = unix_seconds.div_euclid(86_400);
    let secs = unix_seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{} {} {day:>2} {:02}:{:02}:{:02} {year}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// [`ctime`] of the system clock now.
pub fn ctime_now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    ctime(now)
}

/// `version` of a model: the first 10 hex digits of the SHA-256 of its source, as the
/// suite hashed its scripts (docs/suite.md#version).
pub fn version_of(source: &str) -> String {
    script_version(source.as_bytes())
}

/// The fields every entry has: the arguments (with `start_time`), `version`, the
/// report's own fields and `unique_id` (computed last, from the arguments, as
/// `make_report` does).
fn base(ctx: &EntryContext<'_>, copy: &CopyPlan, completed: bool) -> Object {
    let mut fields = Object::new();
    for (k, v) in &copy.arguments {
        fields.insert(k.clone(), v.clone());
    }
    fields.insert("start_time", ctx.start_time);
    fields.insert("version", ctx.version);
    fields.insert("name", ctx.name);
    if let Some(gpu) = ctx.gpu {
        fields.insert("gpu", gpu);
    }
    fields.insert("hostname", ctx.hostname);
    fields.insert("run_id", ctx.run_id.to_string());
    fields.insert("suite", ctx.suite);
    fields.insert("end_time", ctx.end_time);
    fields.insert("completed", completed);
    fields.insert("batch_loss", Value::List(Vec::new()));
    fields.insert("epoch_loss", Value::List(Vec::new()));
    fields.insert("metrics", Object::new());
    fields
}

fn floats<'a>(values: impl IntoIterator<Item = &'a f64>) -> Value {
    Value::List(values.into_iter().map(|v| Value::Float(*v)).collect())
}

fn with_unique_id(fields: Object) -> ReportEntry {
    let mut entry = ReportEntry::new(fields);
    // `arguments()` leaves out exactly what make_report adds after hashing (and the
    // stages), so the id is the one a reader recomputes from the file.
    let id = unique_id(entry.arguments(), EXCLUDED_FINAL);
    entry.fields.insert("unique_id", id);
    entry
}

/// The outcome of one copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyResult {
    /// The stream its entry was appended to; `None` when no entry could be written.
    pub written: Option<PathBuf>,
    /// Why it failed (its entry then says `completed: false`).
    pub failure: Option<String>,
    /// Entries written: 1 or 0 for a copy; one per world size for a sweep.
    pub entries: usize,
    /// The copy's telemetry file, or why it has none (a sweep's: one per world size);
    /// empty when not sampled.
    pub telemetry: Vec<Result<PathBuf, String>>,
}

/// An entry's `version` and `gpu` for a copy of bench `name`. As the suite's `make_report`
/// (`if args.cuda: gpu = torch.cuda.get_device_name()`), `gpu` is written only where the
/// copy records `cuda: true`: the CUDA device's name ([`BenchFactory::device_name`]); none
/// on a (simulated) CPU device, nor for a script that keeps its model on the CPU whatever
/// the device (cart's job passes `--no-cuda`).
pub fn version_and_gpu(
    name: &str,
    copy: &CopyPlan,
    factory: &dyn BenchFactory,
) -> (String, Option<String>) {
    let version = factory.source(name).map(version_of).unwrap_or_default();
    let cuda = copy.arguments.get("cuda") == Some(&Value::Bool(true));
    let gpu = cuda.then(|| factory.device_name(copy.device));
    (version, gpu)
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
    fields.insert("batch_loss", floats(&m.batch_loss));
    fields.insert("epoch_loss", floats(m.epoch_loss.values()));
    let mut metrics = Object::new();
    for (name, ring) in &m.metrics {
        metrics.insert(*name, floats(ring.values()));
    }
    fields.insert("metrics", metrics);
    fields.insert("train", m.train.to_stage());
    for (name, stage) in &m.stages {
        fields.insert(*name, stage.to_stage());
    }
    fields.insert("train_item", m.train_item());
    with_peaks(with_unique_id(fields), peak)
}

/// `peak_rss_bytes` and `peak_device_bytes`, where measured.
fn with_peaks(mut entry: ReportEntry, peak: &PeakMemory) -> ReportEntry {
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

/// The entry of a copy that could not run (bench error or panic), with the peaks of its
/// process where it was measured in it (`PeakMemory::default()` from another process).
pub fn failure_entry(ctx: &EntryContext<'_>, copy: &CopyPlan, peak: &PeakMemory) -> ReportEntry {
    with_peaks(with_unique_id(base(ctx, copy, false)), peak)
}

/// An entry of a sweep over world sizes ([`crate::scaling`]) before its own fields (`vcd`,
/// `train_item`, `train`): the copy's fields and a `unique_id` from them, shared by the
/// sweep's entries as scaling.py's are.
pub fn sweep_entry(ctx: &EntryContext<'_>, copy: &CopyPlan, completed: bool) -> ReportEntry {
    with_unique_id(base(ctx, copy, completed))
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
    use crate::timing::{LoopSize, Ring, SKIP_OBS};
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
        let mut epoch_loss = Ring::new(10);
        epoch_loss.push(0.1);
        let mut psnr = Ring::new(10);
        [20.0, 21.5].into_iter().for_each(|v| psnr.push(v));
        let mut eval = StatStream::new(SKIP_OBS);
        (0..12).for_each(|i| eval.update(0.5 + f64::from(i)));
        Measurement {
            train,
            stages: [("eval", eval)].into(),
            observations: Vec::new(),
            batch_loss,
            epoch_loss,
            metrics: [("psnr", psnr)].into(),
            nan: nan.then_some(crate::timing::NanLoss {
                step: 2,
                observation: 0,
                what: "batch_loss",
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
            gpu: Some("cpu"),
            run_id: 0,
            suite: "fast",
            start_time: "Sun Dec  1 00:00:00 2019",
            end_time: "Sun Dec  1 00:03:20 2019",
        };
        let c = copy(path.clone());
        let ok = build_entry(&ctx, &c, &measurement(false), &PEAK);
        let nan = build_entry(&ctx, &c, &measurement(true), &PEAK);
        let failed = failure_entry(&ctx, &c, &PeakMemory::default());
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
                "start_time",
                "vcd",
                "version"
            ]
        );
        // The report's own fields, as make_report adds them.
        assert_eq!(read.get("suite"), Some(&Value::from("fast")));
        assert_eq!(
            read.get("end_time"),
            Some(&Value::from("Sun Dec  1 00:03:20 2019"))
        );
        assert_eq!(
            read.get("epoch_loss"),
            Some(&Value::List(vec![Value::Float(0.1f32 as f64)]))
        );
        let metrics = read.get("metrics").and_then(Value::as_object).unwrap();
        assert_eq!(
            metrics.get("psnr"),
            Some(&Value::List(vec![Value::Float(20.0), Value::Float(21.5)]))
        );
        let mut eval = StatStream::new(SKIP_OBS);
        (0..12).for_each(|i| eval.update(0.5 + f64::from(i)));
        assert_eq!(
            read.get("eval").and_then(Value::as_object),
            Some(&eval.to_stage())
        );
        assert_eq!(
            parsed.entries[2].1.get("batch_loss"),
            Some(&Value::List(vec![]))
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
        // start_time is hashed (the suite's E3 ids are per process): another start, another id.
        let later = EntryContext {
            start_time: "Sun Dec  1 00:00:01 2019",
            ..ctx
        };
        assert_ne!(
            failure_entry(&later, &c, &PeakMemory::default()).get("unique_id"),
            failed.get("unique_id")
        );
        // No `gpu` where the copy records none (cart).
        let no_gpu = EntryContext { gpu: None, ..ctx };
        assert_eq!(failure_entry(&no_gpu, &c, &PEAK).get("gpu"), None);
        assert_eq!(
            failure_entry(&no_gpu, &c, &PEAK).get("peak_rss_bytes"),
            Some(&Value::Int(123 << 20))
        );
    }

    #[test]
    fn ctime_as_python_writes_it() {
        // Dates checked with Python: datetime.utcfromtimestamp(t).ctime().
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        // 2019-12-12 21:04:05 UTC (the spec's example), 1576184645.
        assert_eq!(ctime(1_576_184_645), "Thu Dec 12 21:04:05 2019");
        // A single-digit day is padded with a space: 2019-12-01 00:00:00 UTC.
        assert_eq!(ctime(1_575_158_400), "Sun Dec  1 00:00:00 2019");
        // A leap day, and the last second of a year.
        assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000");
        assert_eq!(ctime(1_609_459_199), "Thu Dec 31 23:59:59 2020");
        // 2026-11-27 01:53:58 UTC, the facts' example.
        assert_eq!(ctime(1_795_744_438), "Fri Nov 27 01:53:58 2026");
        // Before the epoch: 1969-12-31 23:59:59.
        assert_eq!(ctime(-1), "Wed Dec 31 23:59:59 1969");
    }
}
