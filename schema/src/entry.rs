//! One report entry: the object a benchmark process writes (docs/suite.md#report-entries).
//!
//! The entry keeps every field as read (unknown ones included) so it can be written back
//! unchanged; typed accessors read the fields the tools need, accepting the types the
//! suite actually wrote (`vcd` and `jr_id` as strings, or int 0 when unset).

use crate::value::{Object, Value};

/// Keys that `make_report` adds after `unique_id` is computed (docs/suite.md#unique_id, step 2),
/// plus `unique_id` itself: they are results, not arguments of the benchmark.
pub const ADDED_BY_REPORT: &[&str] = &[
    // `mlbench run` adds the copy's peak memory after `unique_id` is computed.
    "peak_rss_bytes",
    "peak_device_bytes",
    // `mlbench run --profile` adds the copy's profile summary after it too.
    "profile",
    "unique_id",
    "gpu",
    "hostname",
    "batch_loss",
    "epoch_loss",
    "metrics",
    "run_id",
    "suite",
    "end_time",
    "completed",
    "train_item",
    "name",
];

/// Arguments that legitimately differ between the processes of one configuration: the
/// device a copy ran on, its seed, its clock, where it read and wrote.
pub const PER_PROCESS_ARGUMENTS: &[&str] = &[
    "jr_id",
    "vcd",
    "seed",
    "start_time",
    "report",
    "data",
    "dataset_dir",
];

/// Whether `key` is one of [`ADDED_BY_REPORT`] (a `match`: these run for every field of
/// every entry).
fn added_by_report(key: &str) -> bool {
    matches!(
        key,
        "peak_rss_bytes"
            | "peak_device_bytes"
            | "profile"
            | "unique_id"
            | "gpu"
            | "hostname"
            | "batch_loss"
            | "epoch_loss"
            | "metrics"
            | "run_id"
            | "suite"
            | "end_time"
            | "completed"
            | "train_item"
            | "name"
    )
}

/// Whether the entry's accessors, its type checks ([`ReportEntry::type_problems`]) or
/// its measurement checks ([`crate::measure::unreadable`], which read `train`) look
/// `key` up. A lean read drops a timing stage under any other key: what the stage is
/// matters only to [`ReportEntry::arguments`], which leaves stages out. (Selection rules
/// may name any field, but keep no entry whose field is a stage: their values are
/// scalars.)
pub(crate) fn looked_up(key: &str) -> bool {
    matches!(
        key,
        "name"
            | "version"
            | "train_item"
            | "train"
            | "batch_loss"
            | "completed"
            | "vcd"
            | "jr_id"
            | "gpu"
            | "unique_id"
            | "hostname"
            | "batch_size"
            | "number"
            | "repeat"
            | "smoke"
            | "synthetic_data"
            | "devices"
            | "run_id"
    )
}

/// Whether `key` is one of [`PER_PROCESS_ARGUMENTS`].
fn per_process(key: &str) -> bool {
    matches!(
        key,
        "jr_id" | "vcd" | "seed" | "start_time" | "report" | "data" | "dataset_dir"
    )
}

/// A field of an entry whose type is not the one the suite writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    /// The field path, e.g. `train_item.avg` or `batch_loss[17]`.
    pub field: String,
    /// What was expected.
    pub expected: String,
    /// What was found.
    pub found: String,
}

/// Why an entry counts as a failed run (docs/suite.md#the-score-tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureKind {
    /// A stub written by the runner for a failed process (`.FAIL.` file or `name: null`).
    FailStub,
    /// `completed: false`.
    Incomplete,
    /// `NaN` or ±`Infinity` in `batch_loss`.
    NanLoss,
}

impl FailureKind {
    /// The stable token used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::FailStub => "failed",
            FailureKind::Incomplete => "incomplete",
            FailureKind::NanLoss => "nan_loss",
        }
    }
}

/// What a lean read ([`crate::reader::parse_report_lean`]) kept of `batch_loss` when it
/// was a list of numbers: enough to say whether the run diverged, without the values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LossScan {
    /// Number of losses in the list.
    pub len: usize,
    /// The first loss that is `NaN`, `±Infinity` or a literal that overflows to ±inf
    /// (`1e400`), with its index: what [`ReportEntry::first_nonfinite_loss`] gives for
    /// the full list.
    pub first_nonfinite: Option<(usize, f64)>,
}

/// One report entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportEntry {
    /// Every field as read; after a lean read, without `epoch_loss` and `metrics`, and
    /// without `batch_loss` when [`Self::loss_scan`] is `Some`.
    pub fields: Object,
    /// `batch_loss` as a lean read scanned it (a list of numbers, not kept); `None` for
    /// an entry read in full, or whose `batch_loss` is missing or not a list of numbers
    /// (then the field is in `fields`, as a full read has it).
    pub loss_scan: Option<LossScan>,
    /// `batch_loss` as the validator's read keeps it: the values of a list of numbers, not
    /// in `fields` ([`crate::reader::parse_report_values`]); `None` otherwise.
    pub loss_values: Option<Vec<f64>>,
}

impl ReportEntry {
    /// Wraps an object (as a full read gives it: no loss scan).
    pub fn new(fields: Object) -> Self {
        ReportEntry {
            fields,
            loss_scan: None,
            loss_values: None,
        }
    }

    /// Whether the entry has `key`, a `batch_loss` kept apart by a lean or values read
    /// included.
    pub fn has(&self, key: &str) -> bool {
        self.fields.contains_key(key)
            || (key == "batch_loss" && (self.loss_scan.is_some() || self.loss_values.is_some()))
    }

    /// `batch_loss` as numbers (each element as [`Value::as_f64`] gives it), when it is a
    /// list of numbers: the values a values read kept, or those of the field.
    pub fn batch_loss_values(&self) -> Option<std::borrow::Cow<'_, [f64]>> {
        if let Some(values) = &self.loss_values {
            return Some(std::borrow::Cow::Borrowed(values));
        }
        let list = self.get("batch_loss")?.as_list()?;
        list.iter()
            .map(Value::as_f64)
            .collect::<Option<Vec<f64>>>()
            .map(std::borrow::Cow::Owned)
    }

    /// Whether the entry ran with `mlbench run --smoke` (reduced sizes: a set-up check,
    /// not a figure to compare).
    pub fn is_smoke(&self) -> bool {
        self.get("smoke") == Some(&Value::Bool(true))
    }

    /// Whether the entry ran with `mlbench run --synthetic-data` (its batches made in
    /// memory, not read from the data set: its throughput leaves out reading and
    /// decoding the data).
    pub fn is_synthetic_data(&self) -> bool {
        self.get("synthetic_data") == Some(&Value::Bool(true))
    }

    /// A field by key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }

    /// The bench name; `None` when absent or null (failure stubs).
    pub fn name(&self) -> Option<&str> {
        self.get("name").and_then(Value::as_str)
    }

    /// The script version (10 hex digits of its SHA-256).
    pub fn version(&self) -> Option<&str> {
        self.get("version").and_then(Value::as_str)
    }

    /// `completed`, absent before the E3 era.
    pub fn completed(&self) -> Option<bool> {
        self.get("completed").and_then(Value::as_bool)
    }

    /// `CUDA_VISIBLE_DEVICES` as written: a string, or the int default 0 when unset.
    pub fn vcd(&self) -> Option<String> {
        self.vcd_text().map(std::borrow::Cow::into_owned)
    }

    /// [`Self::vcd`] without a copy of a string `vcd` (read for every entry scored).
    pub fn vcd_text(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self.get("vcd")? {
            Value::Str(s) => Some(std::borrow::Cow::Borrowed(s)),
            Value::Int(i) => Some(std::borrow::Cow::Owned(i.to_string())),
            _ => None,
        }
    }

    /// The single device this entry ran on, when `vcd` names exactly one.
    pub fn single_device(&self) -> Option<u32> {
        let vcd = self.vcd_text()?;
        let mut parts = vcd.split(',');
        let first = parts.next()?.trim().parse().ok()?;
        parts.next().is_none().then_some(first)
    }

    /// How many devices the entry ran on together: the ids in `vcd` (empty pieces, as of
    /// `"0,"`, not counted), else `devices` (an int, or scaling's list of ids). A
    /// `scaling` entry's `vcd` names its world size.
    pub fn world_size(&self) -> Option<u32> {
        let ids = |vcd: &str| vcd.split(',').filter(|d| !d.trim().is_empty()).count();
        if let Some(n) = self.vcd_text().map(|v| ids(&v)).filter(|n| *n > 0) {
            return u32::try_from(n).ok();
        }
        match self.get("devices")? {
            Value::Int(n) => u32::try_from(*n).ok(),
            Value::List(ids) => Some(ids.len() as u32),
            _ => None,
        }
    }

    /// The `--batch-size` the script was given, from the `batch_size` the entry records,
    /// with what the scripts that overwrite it did undone (docs/suite.md#scripts-that-differ):
    /// conv_distributed (`convnet_distributed*`) multiplies it by the devices of `vcd`,
    /// dcgan by `ngpu`. atari records its `num_processes` instead, which says nothing of
    /// the batch size given: `None`, as for an entry that records none.
    pub fn given_batch_size(&self) -> Option<i64> {
        let recorded = self.get("batch_size")?.as_i64()?;
        let name = self.name()?;
        let factor = if name == "atari" {
            return None;
        } else if name.starts_with("convnet_distributed") {
            i64::from(self.world_size().unwrap_or(1))
        } else if name.starts_with("dcgan") {
            self.get("ngpu").and_then(Value::as_i64).unwrap_or(1)
        } else {
            1
        };
        Some(if factor > 1 && recorded % factor == 0 {
            recorded / factor
        } else {
            recorded
        })
    }

    /// Throughput `train_item.avg`.
    pub fn train_item_avg(&self) -> Option<f64> {
        self.get("train_item")?.as_object()?.get("avg")?.as_f64()
    }

    /// The first non-finite value of `batch_loss`, with its index: from
    /// [`Self::loss_scan`] after a lean read, else from the field.
    pub fn first_nonfinite_loss(&self) -> Option<(usize, f64)> {
        if let Some(scan) = &self.loss_scan {
            return scan.first_nonfinite;
        }
        if let Some(values) = &self.loss_values {
            return values
                .iter()
                .enumerate()
                .find(|(_, f)| !f.is_finite())
                .map(|(i, f)| (i, *f));
        }
        let losses = self.get("batch_loss")?.as_list()?;
        losses
            .iter()
            .enumerate()
            .find_map(|(i, v)| v.as_f64().filter(|f| !f.is_finite()).map(|f| (i, f)))
    }

    /// Whether this entry is a failure stub (`name` null, no `train_item`, not completed).
    pub fn is_fail_stub(&self) -> bool {
        self.completed() == Some(false) && self.name().is_none() && self.get("train_item").is_none()
    }

    /// Why this entry is a failed run, if it is one. `fail_file` says the file name
    /// carried `.FAIL.`.
    pub fn failure(&self, fail_file: bool) -> Option<FailureKind> {
        if fail_file || self.is_fail_stub() {
            Some(FailureKind::FailStub)
        } else if self.completed() == Some(false) {
            Some(FailureKind::Incomplete)
        } else if self.first_nonfinite_loss().is_some() {
            Some(FailureKind::NanLoss)
        } else {
            None
        }
    }

    /// Whether a key holds a timing stage (`{avg, min, max, sd, count, unit: "s"}`).
    fn is_stage(value: &Value) -> bool {
        value.as_object().is_some_and(|o| {
            o.get("unit").and_then(Value::as_str) == Some("s") && o.contains_key("avg")
        })
    }

    /// The benchmark's arguments: every field but those `make_report` adds and the timing
    /// stages. These are the inputs of `unique_id` for an E3 report (docs/suite.md#unique_id).
    /// Sorted by key, as `unique_id` hashes them.
    pub fn arguments(&self) -> Vec<(&str, &Value)> {
        let mut args = self.fields.sorted();
        args.retain(|(k, v)| !added_by_report(k) && !Self::is_stage(v));
        args
    }

    /// The arguments that define the configuration: [`Self::arguments`] without the
    /// per-process ones. Two entries of one bench with different configurations (or
    /// versions, which are arguments) must not be pooled.
    pub fn configuration(&self) -> Vec<(&str, &Value)> {
        let mut args = self.arguments();
        args.retain(|(k, _)| !per_process(k));
        args
    }

    /// A hash of [`Self::configuration`], for grouping.
    pub fn configuration_key(&self) -> u64 {
        self.configuration_key_without(&[])
    }

    /// [`Self::configuration_key`] with the fields `left_out` left out too (a bench's
    /// `pool_over`): the same hash as [`configuration_key_of`] of those arguments. Keys
    /// already in order (as Python writes them) are hashed where they are, without
    /// collecting the arguments first: this runs for every entry scored.
    pub fn configuration_key_without(&self, left_out: &[String]) -> u64 {
        let keep = |&(k, v): &(&str, &Value)| {
            !added_by_report(k)
                && !per_process(k)
                && !Self::is_stage(v)
                && !left_out.iter().any(|p| p == k)
        };
        match self.fields.in_order() {
            Some(pairs) => key_of(pairs.filter(keep)),
            None => key_of(self.fields.sorted().into_iter().filter(keep)),
        }
    }

    /// Fields whose types differ from what the suite writes. An empty list means the
    /// entry can be used.
    pub fn type_problems(&self) -> Vec<FieldProblem> {
        let mut problems = Vec::new();
        let mut bad = |field: &str, expected: &str, found: String| {
            problems.push(FieldProblem {
                field: field.to_owned(),
                expected: expected.to_owned(),
                found,
            })
        };
        let stub = self.completed() == Some(false);
        match self.get("name") {
            Some(Value::Str(_)) => {}
            Some(Value::Null) if stub => {}
            Some(v) => bad("name", "a string", v.type_name().to_owned()),
            None => bad("name", "a string", "nothing (missing)".to_owned()),
        }
        match self.get("version") {
            Some(Value::Str(_)) => {}
            None if stub => {}
            Some(v) => bad("version", "a string", v.type_name().to_owned()),
            None => bad("version", "a string", "nothing (missing)".to_owned()),
        }
        match self.get("train_item") {
            Some(Value::Object(item)) => match item.get("avg") {
                Some(v) if v.as_f64().is_some() => {}
                // Scaling writes `train_item: {}` for a failed world size.
                None if stub => {}
                Some(v) => bad("train_item.avg", "a number", v.type_name().to_owned()),
                None => bad("train_item.avg", "a number", "nothing (missing)".to_owned()),
            },
            None if stub => {}
            Some(v) => bad("train_item", "an object", v.type_name().to_owned()),
            None => bad("train_item", "an object", "nothing (missing)".to_owned()),
        }
        if let Some(v) = self.get("batch_loss") {
            match v.as_list() {
                Some(items) => {
                    if let Some((i, item)) =
                        items.iter().enumerate().find(|(_, x)| x.as_f64().is_none())
                    {
                        bad(
                            &format!("batch_loss[{i}]"),
                            "a number",
                            item.type_name().to_owned(),
                        );
                    }
                }
                None => bad("batch_loss", "a list of numbers", v.type_name().to_owned()),
            }
        }
        for key in ["vcd", "jr_id"] {
            if let Some(v) = self.get(key)
                && !matches!(v, Value::Str(_) | Value::Int(_))
            {
                bad(
                    key,
                    "a string (or the int default 0)",
                    v.type_name().to_owned(),
                );
            }
        }
        for key in ["gpu", "unique_id", "hostname"] {
            if let Some(v) = self.get(key)
                && !matches!(v, Value::Str(_))
            {
                bad(key, "a string", v.type_name().to_owned());
            }
        }
        if let Some(v) = self.get("completed")
            && !matches!(v, Value::Bool(_))
        {
            bad("completed", "a bool", v.type_name().to_owned());
        }
        for key in ["batch_size", "number", "repeat"] {
            if let Some(v) = self.get(key)
                && !matches!(v, Value::Int(_))
            {
                bad(key, "an int", v.type_name().to_owned());
            }
        }
        problems
    }
}

/// A structural hash in which `1` and `1.0` differ, as they do in `str()`.
/// [`ReportEntry::configuration_key`] from the entry's [`ReportEntry::arguments`], for
/// callers that already have them (the per-process ones are skipped here).
pub fn configuration_key_of(arguments: &[(&str, &Value)]) -> u64 {
    key_of(arguments.iter().copied().filter(|(k, _)| !per_process(k)))
}

/// The hash of the pairs, in their order.
pub(crate) fn key_of<'a>(pairs: impl Iterator<Item = (&'a str, &'a Value)>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = KeyHasher::default();
    for (k, v) in pairs {
        k.hash(&mut hasher);
        hash_value(v, &mut hasher);
    }
    hasher.finish()
}

/// The hasher of configuration keys: a multiply-rotate fold of 8-byte words with a
/// SplitMix64 finish. A key only groups the entries of one read (nothing stores it), so
/// it needs speed and a good spread, not SipHash's resistance to chosen inputs, which cost
/// a tenth of `report`'s reading. Public for the analyzer's maps of bench names, keyed by
/// a submission's own few dozen names, where SipHash would cost as much.
#[derive(Default)]
pub struct KeyHasher(u64);

impl KeyHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(23) ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl std::hash::Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in chunks.by_ref() {
            self.mix(u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])));
        }
        let rest = chunks.remainder();
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        // The length tells "ab" from "ab\0".
        self.mix(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 59));
    }

    fn write_u8(&mut self, i: u8) {
        self.mix(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.mix(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }

    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn hash_value<H: std::hash::Hasher>(value: &Value, hasher: &mut H) {
    use std::hash::Hash;
    std::mem::discriminant(value).hash(hasher);
    match value {
        Value::Null => {}
        Value::Bool(b) => b.hash(hasher),
        Value::Int(i) => i.hash(hasher),
        Value::BigInt(d) => d.hash(hasher),
        Value::Float(f) => f.to_bits().hash(hasher),
        Value::Str(s) => s.hash(hasher),
        Value::List(items) => {
            items.len().hash(hasher);
            for item in items {
                hash_value(item, hasher);
            }
        }
        Value::Object(object) => {
            for (k, v) in object.sorted() {
                k.hash(hasher);
                hash_value(v, hasher);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// The `match`es say what the lists say.
    #[test]
    fn the_key_tests_are_the_lists() {
        for key in super::ADDED_BY_REPORT {
            assert!(super::added_by_report(key), "{key}");
            assert!(!super::per_process(key), "{key}");
        }
        for key in super::PER_PROCESS_ARGUMENTS {
            assert!(super::per_process(key), "{key}");
            assert!(!super::added_by_report(key), "{key}");
        }
        for key in ["batch_size", "name_", "", "vcd0", "lr"] {
            assert!(
                !super::added_by_report(key) && !super::per_process(key),
                "{key}"
            );
        }
    }

    use super::*;
    use crate::pyjson::parse;

    fn entry(text: &str) -> ReportEntry {
        ReportEntry::new(parse(text.as_bytes()).unwrap().as_object().unwrap().clone())
    }

    /// The batch size given, as the example's entries record it (fast.json gives 64 to
    /// convnet and convnet_distributed, 128 to dcgan and dcgan_all).
    #[test]
    fn the_given_batch_size_undoes_the_scripts_that_scale_it() {
        let given = |text: &str| entry(text).given_batch_size();
        assert_eq!(
            given(r#"{"name": "convnet", "batch_size": 64, "vcd": "0"}"#),
            Some(64)
        );
        let distributed = r#"{"name": "convnet_distributed", "batch_size": 128, "vcd": "0,1"}"#;
        assert_eq!(given(distributed), Some(64));
        let fp16 =
            r#"{"name": "convnet_distributed_fp16", "batch_size": 1024, "vcd": "0,1,2,3,4,5,6,7"}"#;
        assert_eq!(given(fp16), Some(128));
        let all = r#"{"name": "dcgan_all", "batch_size": 256, "ngpu": 2, "vcd": "0,1"}"#;
        assert_eq!(given(all), Some(128));
        assert_eq!(
            given(r#"{"name": "dcgan", "batch_size": 128, "ngpu": 1}"#),
            Some(128)
        );
        // scaling's batch is per rank: as recorded on every world size.
        assert_eq!(
            given(r#"{"name": "scaling", "batch_size": 128, "vcd": "0,1"}"#),
            Some(128)
        );
        assert_eq!(
            given(r#"{"name": "atari", "batch_size": 16, "num_processes": 16}"#),
            None
        );
        assert_eq!(given(r#"{"name": "vae"}"#), None);
        // Not a multiple of the devices: not scaled by them, kept as recorded.
        assert_eq!(
            given(r#"{"name": "convnet_distributed", "batch_size": 63, "vcd": "0,1"}"#),
            Some(63)
        );
    }

    #[test]
    fn world_size_counts_vcds_ids_else_devices() {
        let world = |text: &str| entry(text).world_size();
        assert_eq!(world(r#"{"vcd": "0,1"}"#), Some(2));
        assert_eq!(world(r#"{"vcd": 3}"#), Some(1));
        assert_eq!(
            world(r#"{"vcd": "0, 2,"}"#),
            Some(2),
            "an empty piece is no device"
        );
        assert_eq!(world(r#"{"vcd": "", "devices": 4}"#), Some(4));
        assert_eq!(world(r#"{"devices": [0, 1, 2]}"#), Some(3));
        assert_eq!(world(r#"{"devices": "all"}"#), None);
        assert_eq!(world(r#"{"name": "vae"}"#), None);
    }

    #[test]
    fn stub_is_a_failure_without_name() {
        let e = entry(
            r#"{"completed": false, "suite": "baselines", "name": null, "run_id": 0, "vcd": "3"}"#,
        );
        assert!(e.is_fail_stub());
        assert_eq!(e.failure(false), Some(FailureKind::FailStub));
        assert!(e.type_problems().is_empty(), "{:?}", e.type_problems());
        assert_eq!(e.single_device(), Some(3));
    }

    #[test]
    fn nan_loss_and_incomplete() {
        let e = entry(
            r#"{"name": "vae", "version": "x", "train_item": {"avg": 1}, "batch_loss": [1.0, NaN, 2.0]}"#,
        );
        assert_eq!(e.failure(false), Some(FailureKind::NanLoss));
        assert_eq!(e.first_nonfinite_loss().map(|x| x.0), Some(1));
        let e = entry(
            r#"{"name": "vae", "version": "x", "train_item": {"avg": 1}, "completed": false, "batch_loss": [-Infinity]}"#,
        );
        assert_eq!(e.failure(false), Some(FailureKind::Incomplete));
    }

    #[test]
    fn type_problems_name_the_field() {
        let e = entry(
            r#"{"name": "vae", "version": 3, "train_item": {"avg": "fast"}, "batch_loss": [1.0, "x"], "vcd": 1.5}"#,
        );
        let fields: Vec<String> = e.type_problems().into_iter().map(|p| p.field).collect();
        assert_eq!(
            fields,
            ["version", "train_item.avg", "batch_loss[1]", "vcd"]
        );
    }

    #[test]
    fn configuration_ignores_per_process_fields() {
        let a = entry(
            r#"{"name": "vae", "version": "v1", "batch_size": 128, "vcd": "0", "seed": 100, "train_item": {"avg": 1}, "train": {"avg": 2.0, "unit": "s"}}"#,
        );
        let b = entry(
            r#"{"name": "vae", "version": "v1", "batch_size": 128, "vcd": "1", "seed": 200, "train_item": {"avg": 9}, "train": {"avg": 3.0, "unit": "s"}}"#,
        );
        let c = entry(
            r#"{"name": "vae", "version": "v1", "batch_size": 64, "vcd": "1", "train_item": {"avg": 9}}"#,
        );
        assert_eq!(a.configuration_key(), b.configuration_key());
        assert_ne!(a.configuration_key(), c.configuration_key());
        let names: Vec<&str> = a.configuration().into_iter().map(|(k, _)| k).collect();
        assert_eq!(names, ["batch_size", "version"]);
    }

    #[test]
    fn configuration_keys_tell_near_configurations_apart() {
        // Values that print alike but differ (int and float, a trailing NUL, where a
        // string is cut between keys, the order of a list): all different keys.
        let texts = [
            r#"{"name": "vae", "lr": 1}"#,
            r#"{"name": "vae", "lr": 1.0}"#,
            r#"{"name": "vae", "lr": "1"}"#,
            r#"{"name": "vae", "arch": "ab"}"#,
            r#"{"name": "vae", "arch": "ab\u0000"}"#,
            r#"{"name": "vae", "arch": "abcdefgh"}"#,
            r#"{"name": "vae", "arch": "abcdefgh\u0000"}"#,
            r#"{"name": "vae", "a": "bc"}"#,
            r#"{"name": "vae", "ab": "c"}"#,
            r#"{"name": "vae", "layers": [1, 2]}"#,
            r#"{"name": "vae", "layers": [2, 1]}"#,
            r#"{"name": "vae", "layers": [[1], 2]}"#,
            r#"{"name": "vae", "layers": [1, [2]]}"#,
        ];
        let keys: Vec<u64> = texts.iter().map(|t| entry(t).configuration_key()).collect();
        for i in 0..keys.len() {
            for j in i + 1..keys.len() {
                assert_ne!(keys[i], keys[j], "{} and {}", texts[i], texts[j]);
            }
        }
    }

    #[test]
    fn multi_device_vcd_has_no_single_device() {
        assert_eq!(entry(r#"{"vcd": "0,1,2"}"#).single_device(), None);
        assert_eq!(entry(r#"{"vcd": 0}"#).single_device(), Some(0));
    }
}
