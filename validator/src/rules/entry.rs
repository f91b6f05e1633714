//! Rules that look at one entry at a time: required fields, NaN losses, failures, the
//! throughput arithmetic, timings that measured nothing, `unique_id`, and the arguments
//! against the jobs file.

use crate::finding::catalogued;
use mlbench_results::validation::Finding;
use mlbench_schema::entry::ReportEntry;
use mlbench_schema::jobs::{JobsFile, RecordedMatcher, flag_dest};
use mlbench_schema::pyrepr::py_str;
use mlbench_schema::unique_id::{EXCLUDED_FINAL, EXCLUDED_FIRST, FinalIds, unique_id};
use mlbench_schema::value::{Object, Value};
use std::cell::RefCell;
use std::collections::HashMap;

/// Relative tolerance of the throughput arithmetic (the suite writes full `repr` floats,
/// so anything above rounding is an edit).
pub const WORK_TOLERANCE: f64 = 1e-6;

/// Fields every completed entry has (docs/suite.md#report-entries); `name`, `version` and
/// `train_item` are checked by the reader.
const REQUIRED: &[&str] = &[
    "unique_id",
    "batch_size",
    "number",
    "repeat",
    "train",
    "batch_loss",
];

/// Where an entry is, for the findings.
pub struct At<'a> {
    /// The file inside the submission.
    pub file: &'a str,
    /// The entry index.
    pub entry: usize,
}

impl At<'_> {
    fn finding(
        &self,
        rule: &'static str,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Finding {
        catalogued(rule, expected, found)
            .file(self.file)
            .entry(self.entry)
    }
}

/// The expanded configurations of every job, by bench name, computed once per validation
/// (expanding per entry would cost more than parsing it).
#[derive(Debug, Clone, Default)]
pub struct JobConfigs {
    by_name: HashMap<String, Vec<Vec<JobArg>>>,
}

/// One flag of an expanded configuration, with the entry field it is recorded in
/// ([`flag_dest`], worked out once rather than for every entry). Flags whose recorded
/// value may differ ([`NOT_RECORDED_AS_GIVEN`]) and flags with no field are left out.
#[derive(Debug, Clone)]
struct JobArg {
    flag: String,
    value: Value,
    dest: String,
    /// The value prepared for comparison with each entry's.
    matcher: RecordedMatcher,
}

impl JobConfigs {
    /// Expands every job of `jobs`.
    pub fn new(jobs: &JobsFile) -> Self {
        let mut by_name: HashMap<String, Vec<Vec<JobArg>>> = HashMap::new();
        for job in &jobs.jobs {
            let configs = by_name.entry(job.name.clone()).or_default();
            configs.extend(job.configs().into_iter().map(|c| {
                c.args
                    .into_iter()
                    .filter(|(flag, _)| !NOT_RECORDED_AS_GIVEN.contains(&flag.as_str()))
                    .filter_map(|(flag, value)| {
                        let dest = flag_dest(&flag)?;
                        let matcher = RecordedMatcher::new(&flag, &value);
                        Some(JobArg {
                            flag,
                            value,
                            dest,
                            matcher,
                        })
                    })
                    .collect()
            }));
        }
        JobConfigs { by_name }
    }
}

/// Every per-entry rule; `stub` says the entry is a failure stub (file name or content);
/// `args` are the entry's [`ReportEntry::arguments`] and `config` their
/// [`configuration_key_of`](mlbench_schema::entry::configuration_key_of).
pub fn check(
    entry: &ReportEntry,
    args: &[(&str, &Value)],
    config: u64,
    at: &At,
    stub: bool,
    jobs: Option<&JobConfigs>,
    out: &mut Vec<Finding>,
) {
    if stub {
        let name = entry.name().map_or_else(
            || "unknown bench (name: null)".to_owned(),
            |n| format!("bench `{n}`"),
        );
        out.push(at.finding(
            "run.failed",
            "a completed run",
            format!("a failure stub for {name}"),
        ));
        return;
    }
    if entry.completed() == Some(false) {
        out.push(
            at.finding("run.incomplete", "completed: true", "completed: false")
                .field("completed"),
        );
    }
    for key in REQUIRED {
        if !entry.has(key) {
            out.push(
                at.finding("parse.missing-field", format!("a `{key}` field"), "nothing")
                    .field(*key),
            );
        }
    }
    nan_losses(entry, at, out);
    work(entry, at, out);
    for n in mlbench_schema::measure::not_measured(entry) {
        out.push(
            at.finding(
                "work.not-a-measurement",
                "a timing above zero",
                n.message(entry.name()),
            )
            .field(n.field),
        );
    }
    id(entry, args, config, at, out);
    if let Some(jobs) = jobs {
        arguments(entry, at, jobs, out);
    }
}

fn nan_losses(entry: &ReportEntry, at: &At, out: &mut Vec<Finding>) {
    let Some(losses) = entry.batch_loss_values() else {
        return;
    };
    let bad: Vec<(usize, f64)> = losses
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.is_finite())
        .map(|(i, f)| (i, *f))
        .collect();
    if let Some(&(first, value)) = bad.first() {
        let mut found = py_float_token(value);
        if bad.len() > 1 {
            found.push_str(&format!(
                " (and {} more non-finite of {} values)",
                bad.len() - 1,
                losses.len()
            ));
        }
        out.push(
            at.finding("loss.nan", "a finite loss", found)
                .field(format!("batch_loss[{first}]")),
        );
    }
}

fn py_float_token(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f > 0.0 {
        "Infinity".into()
    } else {
        "-Infinity".into()
    }
}

/// A number of a stage object (`train`, `train_item`).
fn stage_number(stage: Option<&Object>, key: &str) -> Option<f64> {
    stage?.get(key)?.as_f64()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= WORK_TOLERANCE * a.abs().max(b.abs())
}

fn work(entry: &ReportEntry, at: &At, out: &mut Vec<Finding>) {
    // Each stage looked up once: this runs for every entry.
    let stage = |name: &str| entry.get(name).and_then(Value::as_object);
    let (train, train_item) = (stage("train"), stage("train_item"));
    // min <= avg <= max in both stages (min/max cover a superset of the averaged
    // observations, docs/suite.md#statstream, so this holds for every genuine report).
    for (name, stage) in [("train", train), ("train_item", train_item)] {
        let (Some(min), Some(avg), Some(max)) = (
            stage_number(stage, "min"),
            stage_number(stage, "avg"),
            stage_number(stage, "max"),
        ) else {
            continue;
        };
        if min.is_finite()
            && max.is_finite()
            && !(min <= avg * (1.0 + WORK_TOLERANCE) && avg <= max * (1.0 + WORK_TOLERANCE))
        {
            out.push(
                at.finding(
                    "work.inconsistent",
                    "min ≤ avg ≤ max",
                    format!("min {min}, avg {avg}, max {max}"),
                )
                .field(format!("{name}.avg")),
            );
        }
    }
    if let (Some(count), Some(repeat)) = (
        train.and_then(|t| t.get("count")).and_then(Value::as_i64),
        entry.get("repeat").and_then(Value::as_i64),
    ) {
        // StatStream drops the first 10 observations; at most `repeat` are made.
        let most = (repeat - 10).max(1);
        if count < 1 || count > most {
            out.push(
                at.finding(
                    "work.inconsistent",
                    format!("1 ≤ train.count ≤ {most} for repeat {repeat}"),
                    count.to_string(),
                )
                .field("train.count"),
            );
        }
    }
    // Scaling writes its own efficiencies in % (docs/suite.md#scripts-that-differ): no arithmetic
    // to check.
    if is_efficiency(train_item) {
        return;
    }
    let (Some(batch), Some(number)) = (
        entry.get("batch_size").and_then(Value::as_f64),
        entry.get("number").and_then(Value::as_f64),
    ) else {
        return;
    };
    let items = batch * number;
    let checks = [
        ("train_item.avg", "avg", "avg"),
        ("train_item.min", "min", "max"),
        ("train_item.max", "max", "min"),
    ];
    for (field, item_key, train_key) in checks {
        let (Some(found), Some(time)) = (
            stage_number(train_item, item_key),
            stage_number(train, train_key),
        ) else {
            continue;
        };
        if !time.is_finite() || time == 0.0 {
            continue;
        }
        let expected = items / time;
        if !close(expected, found) {
            out.push(
                at.finding(
                    "work.inconsistent",
                    format!("{expected} = batch_size {batch} × number {number} ÷ train.{train_key} {time}"),
                    found.to_string(),
                )
                .field(field),
            );
            // One wrong figure usually means the others are derived from it: say it once.
            return;
        }
    }
}

/// Whether `train_item` holds scaling efficiencies (`unit: "%"`), not a throughput.
fn efficiency_unit(entry: &ReportEntry) -> bool {
    is_efficiency(entry.get("train_item").and_then(Value::as_object))
}

/// [`efficiency_unit`] of the `train_item` object.
fn is_efficiency(train_item: Option<&Object>) -> bool {
    train_item
        .and_then(|t| t.get("unit"))
        .and_then(Value::as_str)
        == Some("%")
}

thread_local! {
    /// The `unique_id`s of the argument sets this thread has checked: most entries share
    /// theirs with the same bench on every other GPU and run.
    static FINAL_IDS: RefCell<FinalIds> = RefCell::default();
}

fn id(entry: &ReportEntry, args: &[(&str, &Value)], config: u64, at: &At, out: &mut Vec<Finding>) {
    let Some(recorded) = entry.get("unique_id").and_then(Value::as_str) else {
        return;
    };
    // Filed under the configuration key the entry's facts carry anyway.
    if FINAL_IDS.with_borrow_mut(|ids| ids.of_filed(config, args) == recorded) {
        return;
    }
    // Reports from before 2019-05-17 hash every argument, with `report` and `seed` (popped
    // from the report) at their defaults (docs/suite.md#unique_id): the seed README's reports.
    let none = Value::Null;
    let zero = Value::Int(0);
    let mut first = args.to_vec();
    if !first.iter().any(|(k, _)| *k == "report") {
        first.push(("report", &none));
    }
    if !first.iter().any(|(k, _)| *k == "seed") {
        first.push(("seed", &zero));
    }
    if unique_id(first.iter().copied(), EXCLUDED_FIRST) == recorded
        || unique_id(args.iter().copied(), EXCLUDED_FIRST) == recorded
    {
        return;
    }
    let expected = unique_id(args.iter().copied(), EXCLUDED_FINAL);
    out.push(at.finding("id.mismatch", expected, recorded).field("unique_id").hint(
        "recomputed from the entry's arguments with the suite's algorithm (the final exclusion set, \
         and the 2019-04 one with report=None, seed=0); an argument was edited after the run, \
         or the entry was not written by the suite",
    ));
}

/// Flags whose recorded value legitimately differs from the jobs file: the output path,
/// the seed run.py appends last on the command line (docs/suite.md#launching), and `cuda`, which
/// records where the copy ran (`mlbench run` on simulated CPU devices writes `false`).
const NOT_RECORDED_AS_GIVEN: &[&str] = &["--report", "--seed", "-s", "--cuda", "--no-cuda"];

/// The differences between an entry and one config of its job: (field, expected, found).
fn config_differences(entry: &ReportEntry, args: &[JobArg]) -> Vec<(String, String, String)> {
    let mut diffs = Vec::new();
    // Scaling (efficiencies in %) forces `repeat` to the GPU count and records in
    // `devices` the ids of each world size's devices (docs/suite.md#scripts-that-differ).
    let scaling = efficiency_unit(entry);
    for JobArg {
        flag,
        value,
        dest,
        matcher,
    } in args
    {
        if scaling && matches!(flag.as_str(), "--repeat" | "--devices") {
            continue;
        }
        let Some(recorded) = entry.get(dest) else {
            continue;
        };
        if matcher.matches(recorded) {
            continue;
        }
        if dest == "batch_size" && batch_scaled(entry, value, recorded) {
            continue;
        }
        diffs.push((
            dest.clone(),
            format!("{} (jobs file {flag})", py_str(value)),
            py_str(recorded),
        ));
    }
    diffs
}

/// Scripts that overwrite `batch_size` (docs/suite.md#scripts-that-differ): conv_distributed and
/// dcgan multiply it by the GPU count, atari sets it to `num_processes`.
fn batch_scaled(entry: &ReportEntry, given: &Value, recorded: &Value) -> bool {
    let (Some(given), Some(recorded)) = (
        given
            .as_i64()
            .or_else(|| given.as_str()?.trim().parse().ok()),
        recorded.as_i64(),
    ) else {
        return false;
    };
    let devices = entry.vcd().map_or(1, |v| v.split(',').count() as i64);
    let ngpu = entry.get("ngpu").and_then(Value::as_i64);
    let processes = entry.get("num_processes").and_then(Value::as_i64);
    recorded == given * devices
        || ngpu.is_some_and(|n| recorded == given * n)
        || processes == Some(recorded)
}

fn arguments(entry: &ReportEntry, at: &At, jobs: &JobConfigs, out: &mut Vec<Finding>) {
    let Some(name) = entry.name() else {
        return;
    };
    // `mlbench run --smoke` shrinks the sizes on purpose: `run.smoke` says so, once.
    if entry.is_smoke() {
        return;
    }
    // An unknown bench is reported by the coverage rules.
    let Some(configs) = jobs.by_name.get(name) else {
        return;
    };
    let mut best: Option<Vec<(String, String, String)>> = None;
    for config in configs {
        let diffs = config_differences(entry, config);
        if diffs.is_empty() {
            return;
        }
        if best.as_ref().is_none_or(|b| diffs.len() < b.len()) {
            best = Some(diffs);
        }
    }
    for (field, expected, found) in best.unwrap_or_default() {
        out.push(
            at.finding("args.entry-mismatch", expected, found)
                .field(field),
        );
    }
}
