//! The results of `mlbench report`: the stable JSON contract (`docs/report-json.md`).
//!
//! Numbers are fractions, never percent. A figure that cannot be computed (too few runs,
//! no target) is `null`, never a made-up zero.

pub use mlbench_schema::runtime::{Runtime, RuntimeKind, SubmissionRuntime};
pub use mlbench_schema::stopping::{RUNS_NEEDED_CAP, StoppingRule};
pub use mlbench_schema::system::{DeviceInfo, SystemInfo};
use serde::Serialize;
use std::collections::BTreeMap;

/// The version of the report JSON (`docs/report-json.md`); raised when a field changes
/// meaning or disappears, not when one is added.
pub const REPORT_SCHEMA_VERSION: u32 = 2;

/// Everything `mlbench report` found: the report, the intervals of `--ci`, the
/// stragglers and the notes for people. Serialized as the report JSON.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReportDoc {
    /// [`REPORT_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The scoring's report.
    #[serde(flatten)]
    pub report: Report,
    /// The 95% intervals of `--ci`, by bench.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci: Option<Intervals>,
    /// GPUs significantly below their peers (flagged ones only).
    pub stragglers: Vec<Straggler>,
    /// The nodes side by side, when the entries name several hosts (absent with one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<Fleet>,
    /// The machines the runs ran on (`system.json`), by host; absent when none was found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub systems: Vec<SystemInfo>,
    /// What produced the submission and what measured the targets (`mlbench report`
    /// always says; absent only from a document made without them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<Runtimes>,
    /// Present when the submission and the targets are of different runtimes: each
    /// `diff` then compares software as well as hardware.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime_mismatch: Option<RuntimeMismatch>,
    /// How well the runs pin each bench's mean, and how many runs a stated precision
    /// needs (absent only from a document made without it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
    /// The stopping rule the submission says it followed (`run --until`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopping: Option<StoppingRule>,
    /// Energy per bench, from the runs' telemetry (absent without any).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy: Option<crate::energy::Energy>,
    /// What the submission ran on: its GPUs as the entries name them, hosts, CPU, driver
    /// (absent only from a document made without it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hardware: Option<crate::Hardware>,
    /// Whether the entries' GPUs are the targets' model (absent when no entry names one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_match: Option<GpuMatch>,
    /// The validation verdict of each whole submission (a folder, a zip) among the
    /// inputs, computed once; empty when the report was made of report files alone.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub validity: Vec<crate::SubmissionValidity>,
    /// What was read and set aside, one line each (tables and Markdown show them; other
    /// formats leave them to standard error).
    #[serde(skip)]
    pub notes: Vec<String>,
    /// The benches whose entries ran at another batch size than their target was
    /// measured with (absent when none does, or the targets give no batch size).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub batch_mismatches: Vec<BatchMismatch>,
}

/// A bench whose entries ran at another `--batch-size` than its target's: the `diff`
/// then compares different work per step.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BatchMismatch {
    /// The bench.
    pub bench: String,
    /// The batch size the target was measured with (the table's `batch_size`).
    pub target_batch_size: i64,
    /// Every batch size the bench's entries ran at, sorted.
    pub batch_sizes: Vec<i64>,
    /// The entries at a batch size other than the target's.
    pub entries: usize,
}

/// The entries' GPUs against the targets' model (docs/gpu-models.md).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GpuMatch {
    /// The targets' GPU model (`RTX`).
    pub targets: String,
    /// Each GPU the entries name, with the targets' model it is.
    pub entries: Vec<GpuName>,
    /// Every GPU the entries name is the targets' model: the diffs compare like with like.
    pub matches: bool,
}

/// One GPU name of the entries.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GpuName {
    /// As the entries write it (`TITAN RTX`).
    pub name: String,
    /// The targets' model it is (`RTX`; `null`: not a model the table knows).
    pub model: Option<String>,
}

impl ReportDoc {
    /// The one status of the document: the scoring's criteria passed and every
    /// submission among the inputs passed its validation.
    pub fn passed(&self) -> bool {
        self.report.passed() && self.validity.iter().all(|v| v.validity.passed)
    }

    /// A document without intervals, stragglers or notes.
    pub fn new(report: Report) -> ReportDoc {
        ReportDoc {
            schema_version: REPORT_SCHEMA_VERSION,
            report,
            ci: None,
            stragglers: Vec::new(),
            fleet: None,
            systems: Vec::new(),
            runtime: None,
            runtime_mismatch: None,
            precision: None,
            stopping: None,
            energy: None,
            hardware: None,
            gpu_match: None,
            validity: Vec::new(),
            notes: Vec::new(),
            batch_mismatches: Vec::new(),
        }
    }
}

/// How many runs (docs/scoring.md, "How many runs"): per bench, the fixed-n and the
/// anytime-valid interval of its mean throughput over runs, and the runs each needs for
/// `precision`. Figures are on the runs' own values (a run's value: the mean over its
/// GPUs); intervals are around their geometric mean, half-widths relative to it. That
/// centre is not the report's result (nor `--ci`'s): the anytime-valid sequence works on
/// log throughput, whose mean is the log of the geometric mean; `statistic` says so.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Precision {
    /// What the intervals are of: [`PRECISION_STATISTIC`].
    pub statistic: String,
    /// The confidence level of both intervals.
    pub level: f64,
    /// The target half-width, relative (0.01: ±1 %).
    pub precision: f64,
    /// The anytime-valid sequence: `lai-t-mixture` (Lai 1976; Wang & Ramdas 2023).
    pub method: String,
    /// The between-run CV the sequence was tuned for, stated in advance.
    pub expected_cv: f64,
    /// The mixture's constant c, fixed from `expected_cv`, `precision` and `level`.
    pub mixture: f64,
    /// The runs at which `expected_cv` would reach `precision` (what c is tuned for).
    pub planned_runs: u32,
    /// Resamples of the fixed-n (bootstrap) interval.
    pub resamples: usize,
    /// Their seed.
    pub seed: u64,
    /// Per bench, in the report's order.
    pub benches: Vec<BenchPrecision>,
    /// Over every bench.
    pub overall: PrecisionOverall,
}

/// The precision section's centre, as its JSON `statistic` says it.
pub const PRECISION_STATISTIC: &str =
    "geometric mean of run means (each run's mean over its GPUs; intervals on log throughput)";

/// One bench's precision.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BenchPrecision {
    /// The bench.
    pub bench: String,
    /// Runs with a value.
    pub runs: u32,
    /// Runs of the submission without a usable value for this bench (failed, or set
    /// aside by the scoring): counted here, not in `runs`.
    pub runs_without_value: u32,
    /// The geometric mean of the runs' values (`null`: no run).
    pub mean: Option<f64>,
    /// The standard deviation of the runs' log values, about their CV (`null`: < 2 runs).
    pub sd_log: Option<f64>,
    /// The fixed-n interval: a percentile bootstrap of the runs (valid only at a run
    /// count fixed in advance); its runs needed from Student's t at the observed spread.
    pub fixed: PrecisionInterval,
    /// The anytime-valid interval: valid at every run count, however the runs stopped.
    pub anytime: PrecisionInterval,
}

/// One kind of interval of one bench.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PrecisionInterval {
    /// `[low, high]` (`null`: unbounded yet, or too few runs).
    pub ci: Option<[f64; 2]>,
    /// The larger relative distance from the mean to an end (`null` with `ci`).
    pub half_width: Option<f64>,
    /// `half_width` ≤ the precision, with at least 3 runs.
    pub reached: bool,
    /// Runs needed for the precision at the observed spread, in all (`null`: more than
    /// 100,000, or fewer than 2 runs to measure a spread).
    pub runs_needed: Option<u32>,
    /// Why `ci` is `null` (absent when it is not): `5 runs; bounded from 8 at 95%`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Why `runs_needed` is `null` (absent when it is not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs_needed_why: Option<String>,
}

/// Over every bench with a run: the worst of each.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct PrecisionOverall {
    /// The most runs any bench has.
    pub runs: u32,
    /// Every bench's fixed-n interval is within the precision.
    pub fixed_reached: bool,
    /// Every bench's anytime-valid interval is within the precision.
    pub anytime_reached: bool,
    /// The most runs a bench needs for the fixed-n interval (`null`: some bench's is
    /// unknown).
    pub fixed_runs_needed: Option<u32>,
    /// Likewise for the anytime-valid interval.
    pub anytime_runs_needed: Option<u32>,
}

/// The runtimes of a report: the submission's and the targets'.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Runtimes {
    /// What produced the submission, and how mlbench knows.
    pub submission: SubmissionRuntime,
    /// What measured the targets (`null`: the table does not say).
    pub targets: Option<LabelledRuntime>,
}

/// A runtime with its line for people.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LabelledRuntime {
    /// The runtime: `kind` and `version`.
    #[serde(flatten)]
    pub runtime: Runtime,
    /// `mila-iqia/training scripts (torch version unknown)`.
    pub label: String,
}

impl From<Runtime> for LabelledRuntime {
    fn from(runtime: Runtime) -> Self {
        LabelledRuntime {
            label: runtime.to_string(),
            runtime,
        }
    }
}

/// A submission scored against targets of another runtime.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RuntimeMismatch {
    /// The submission's runtime, for people.
    pub submission: String,
    /// The targets' runtime, for people.
    pub targets: String,
    /// Where the parity figures come from (`baselines/parity.toml`).
    pub parity_source: String,
    /// Every bench of the report with its parity: `mlbench run`'s items/s ÷ the suite's
    /// scripts' items/s on the same machine, `null` where unknown.
    pub benches: Vec<BenchParity>,
}

/// One bench's parity.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BenchParity {
    /// The bench.
    pub bench: String,
    /// `mlbench run` ÷ the suite's scripts, items/s (`null`: unknown). A measurement on
    /// one machine, never a correction of the diff.
    pub parity: Option<f64>,
    /// The machine the ratio was measured on (`null` with it).
    pub measured_on: Option<String>,
    /// The day it was measured, `YYYY-MM-DD` (`null` with it).
    pub date: Option<String>,
}

/// `--ci`: bootstrap intervals of each bench's result, the figure of the report's result
/// column, recomputed per resample as the scoring computes it; serialized as the map
/// alone. Every bench of the report has an entry (with the reason where it has no
/// interval).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(transparent)]
pub struct Intervals {
    /// Bench → result and interval.
    pub by_bench: BTreeMap<String, ResultCi>,
    /// What is resampled, for people: `runs resampled whole`.
    #[serde(skip)]
    pub resampling: String,
    /// Resamples drawn.
    #[serde(skip)]
    pub resamples: usize,
    /// The seed.
    #[serde(skip)]
    pub seed: u64,
    /// The confidence level.
    #[serde(skip)]
    pub level: f64,
}

pub use crate::interval::MeanCi;

/// The classic scoring's result, as `--ci`'s `statistic` says it.
pub const CLASSIC_STATISTIC: &str =
    "mean over runs without the lowest and highest of run means over GPUs";

/// The score scoring's result, as `--ci`'s `statistic` says it.
pub const SCORE_STATISTIC: &str = "pooled mean of run × GPU values";

/// One bench's result with its bootstrap interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultCi {
    /// What the result and the interval are of: [`CLASSIC_STATISTIC`] or
    /// [`SCORE_STATISTIC`].
    pub statistic: String,
    /// The result's n, as the bench table shows it: runs (classic) or run × GPU values
    /// (score).
    pub n: usize,
    /// The result, the bench table's figure (`null`: none, `why` says why).
    pub result: Option<f64>,
    /// The percentile interval of the resampled results, `[low, high]` (`null`: `why`).
    pub ci: Option<[f64; 2]>,
    /// Why `ci` is `null` (absent when it is not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// One GPU on one bench, against its peers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StragglerBench {
    /// The bench.
    pub bench: String,
    /// The GPU's runs.
    pub n: usize,
    /// Its mean throughput.
    pub mean: f64,
    /// The other GPUs' runs, pooled.
    pub peers_n: usize,
    /// Their mean throughput.
    pub peers_mean: f64,
    /// 1 − mean ÷ peers_mean (positive: slower).
    pub deficit: f64,
    /// Welch's t (`None` when both sides have no spread at all).
    pub t: Option<f64>,
    /// Welch–Satterthwaite degrees of freedom (`None` likewise).
    pub df: Option<f64>,
    /// One-sided p-value: P(T ≤ t). Without spread: 0 when the mean is below, else 1.
    pub p: f64,
    /// p < alpha and deficit ≥ min_deficit.
    pub below: bool,
}

/// One GPU over the benches where it could be tested.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Straggler {
    /// The device.
    pub device: u32,
    /// Its name: the index on one host, `host/index` on several.
    pub gpu: String,
    /// Benches tested (enough runs on both sides).
    pub tested: usize,
    /// Benches where it is below its peers.
    pub below: usize,
    /// Median of `deficit` over the benches tested.
    pub median_deficit: f64,
    /// Below on more than half of the benches tested.
    pub flagged: bool,
    /// The tests, by bench name.
    pub benches: Vec<StragglerBench>,
}

/// What was read, for the summary line.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct InputSummary {
    /// `legacy` (per-GPU streams), `per-test` (E3 files) or `mixed`.
    pub layout: String,
    /// Files read.
    pub files: usize,
    /// Entries read (all of them, before any selection).
    pub entries: usize,
    /// Runs found (folders of legacy streams, split by `run_id` where one folder holds
    /// several; `R<run>` of per-test files).
    pub runs: usize,
    /// The same, said for the summary line: `5 runs, told apart by run_id in 8 streams`.
    #[serde(skip)]
    pub runs_told_apart: String,
    /// Distinct single devices found.
    pub gpus: usize,
    /// Entries of benches the target table sets aside.
    pub excluded: usize,
    /// Entries that ran with `mlbench run --smoke` (reduced sizes: a set-up check).
    pub smoke: usize,
    /// Entries that ran with `mlbench run --synthetic-data` (batches made in memory).
    pub synthetic_data: usize,
    /// Entries dropped by a selection rule, with the rule.
    pub not_selected: Vec<(String, usize)>,
    /// The profiles of the benches whose entries carry one (`mlbench run --profile`), by
    /// bench, each over its copies ([`mlbench_schema::profile::combine`]). Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<BenchProfile>,
}

/// A bench's profile over its entries.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BenchProfile {
    /// The bench.
    pub bench: String,
    /// Its entries with a profile.
    pub entries: usize,
    /// The mean per entry.
    pub profile: mlbench_schema::profile::ProfileSummary,
}

/// An entry counted as a failed run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Failure {
    /// The file, relative to the folder searched.
    pub file: String,
    /// The entry index in the file.
    pub entry: usize,
    /// The bench (`null` for failure stubs, which do not name it).
    pub bench: Option<String>,
    /// `nan_loss`, `incomplete` or `failed`.
    pub reason: &'static str,
}

/// Entries of one bench whose configuration or version differs from the bench's main
/// group: set aside, never pooled.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Conflict {
    /// The bench.
    pub bench: String,
    /// Entries in the group that was kept (the largest).
    pub kept: usize,
    /// Entries set aside.
    pub set_aside: usize,
    /// Fields that differ: name, value in the kept group, value in the set-aside one.
    pub differences: Vec<FieldDifference>,
    /// Up to five places of set-aside entries, as `file#entry`.
    pub examples: Vec<String>,
    /// The runtime that wrote the kept entries, when they show one (`null`: none of them
    /// says, or they show both).
    pub kept_runtime: Option<RuntimeKind>,
    /// The runtime that wrote the entries set aside, likewise.
    pub set_aside_runtime: Option<RuntimeKind>,
}

/// One field that differs between two configurations.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FieldDifference {
    /// The field.
    pub field: String,
    /// Its value in the kept group (Python `repr`; `null` when absent).
    pub kept: Option<String>,
    /// Its value in the set-aside group.
    pub found: Option<String>,
}

/// One bench under classic scoring.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClassicBench {
    /// Bench name.
    pub bench: String,
    /// Runs with a value.
    pub n: u32,
    /// Target throughput (null: bench not in the table).
    pub target: Option<f64>,
    /// Trimmed mean over runs of the per-run mean over GPUs (null with fewer than 3 runs).
    pub result: Option<f64>,
    /// Sample standard deviation (n−1) over runs.
    pub sd: Option<f64>,
    /// sd ÷ result.
    pub sd_pct: Option<f64>,
    /// (result − target) ÷ target.
    pub diff: Option<f64>,
}

/// The classic statistics block: each criterion with its figure and its own verdict,
/// computed once (by `mlbench_analyzer::classic`); presentations only show them.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClassicStatistics {
    /// Every expected bench has a result, sd and sd% over at least `--min-runs` runs.
    pub bench_passes: bool,
    /// Expected benches that have them (the count `bench_passes` judges).
    pub benches_usable: usize,
    /// Benches expected.
    pub benches_expected: usize,
    /// 80% quantile (linear interpolation) of sd_pct.
    pub deviation_quantile_80: Option<f64>,
    /// The largest quantile that passes, exclusive (0.05).
    pub deviation_limit: f64,
    /// `deviation_quantile_80 < deviation_limit`.
    pub deviation_pass: bool,
    /// Mean of diff.
    pub performance: Option<f64>,
    /// `performance ≥ 0`.
    pub performance_pass: bool,
    /// All three criteria pass.
    pub passed: bool,
}

/// One bench under score scoring.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ScoreBench {
    /// Bench name.
    pub bench: String,
    /// Samples pooled (GPU × run entries, failures removed).
    pub n: u32,
    /// Mean throughput.
    pub mean: Option<f64>,
    /// Sample standard deviation (n−1).
    pub sd: Option<f64>,
    /// sd ÷ mean.
    pub sd_pct: Option<f64>,
    /// Target throughput.
    pub target: Option<f64>,
    /// mean ÷ target.
    pub perf: Option<f64>,
    /// Minimum perf to pass.
    pub perf_target: Option<f64>,
    /// Maximum sd_pct to pass.
    pub sd_target: Option<f64>,
    /// perf ≥ perf_target.
    pub perf_pass: bool,
    /// sd_pct ≤ sd_target.
    pub sd_pass: bool,
}

/// The score statistics block.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ScoreStatistics {
    /// Failed entries.
    pub failures: usize,
    /// All entries counted.
    pub total: usize,
    /// failures ÷ total.
    pub failure_ratio: f64,
    /// 1 when failure_ratio ≤ 0.01, else 0.
    pub bf: u8,
    /// `bf == 1`: few enough failures.
    pub failures_pass: bool,
    /// Share of benches passing perf.
    pub pm: f64,
    /// Share of benches passing sd.
    pub st: f64,
    /// Geometric mean of perf, `scaling` excluded.
    pub pg: Option<f64>,
    /// BF · (2·PM + ST + 5·PG).
    pub score: Option<f64>,
    /// The price given.
    pub price: Option<f64>,
    /// price ÷ score.
    pub rpp: Option<f64>,
    /// BF is 1 and every bench passes perf and sd.
    pub passed: bool,
}

/// One world size of a bench whose entries are pooled over world sizes (`scaling`):
/// the efficiency against the number of devices, the table multi-device results are
/// read from.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WorldSize {
    /// The bench.
    pub bench: String,
    /// Devices used together.
    pub devices: u32,
    /// Entries at this world size (failures and conflicts removed).
    pub n: u32,
    /// Their mean `train_item.avg`.
    pub mean: Option<f64>,
    /// Their sample sd (n − 1).
    pub sd: Option<f64>,
}

/// What every report says beyond its scoring's table: the runs, the benches expected and
/// the breakdown of pooled benches. Serialized flat, after the scoring's own fields.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReportContext {
    /// The runs, by name, in natural order (`output2`, `output10`; `vendor/run 3` where
    /// a folder's streams held several runs told apart by `run_id`).
    pub run_names: Vec<String>,
    /// `"folders"`, or `"run_id"` when some folder held several runs.
    pub runs_from: &'static str,
    /// `"jobs"` (the submission's jobs file) or `"targets"`.
    pub expected_from: &'static str,
    /// The jobs file the expected benches come from.
    pub jobs_file: Option<String>,
    /// The benches expected, sorted.
    pub expected: Vec<String>,
    /// Per world size, the benches pooled over world sizes (`pool_over` in the targets).
    pub scaling: Vec<WorldSize>,
}

/// Per-GPU relative performance: bench → device → value ÷ the bench's best device.
pub type PerGpuTable = BTreeMap<String, BTreeMap<String, f64>>;

/// The three per-GPU tables.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct PerGpu {
    /// Of each device's mean.
    pub mean: PerGpuTable,
    /// Of each device's minimum.
    pub min: PerGpuTable,
    /// Of each device's maximum.
    pub max: PerGpuTable,
}

/// A classic report.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClassicReport {
    /// Always `classic`.
    pub scoring: &'static str,
    /// The suite (jobs file) name.
    pub name: String,
    /// The GPU model of the targets.
    pub gpu_model: String,
    /// Runs found.
    pub runs: usize,
    /// Devices found.
    pub gpus: usize,
    /// One row per bench, sorted by name.
    pub benches: Vec<ClassicBench>,
    /// The pass criteria.
    pub statistics: ClassicStatistics,
    /// Entries the score scheme counts as failures. Classic scoring keeps those that
    /// carry a throughput, as the original tool did.
    pub failures: Vec<Failure>,
    /// Configuration or version disagreements within a bench.
    pub conflicts: Vec<Conflict>,
    /// Runs, expected benches, world sizes.
    #[serde(flatten)]
    pub context: ReportContext,
}

/// A score report.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ScoreReport {
    /// Always `score`.
    pub scoring: &'static str,
    /// The suite (jobs file) name.
    pub name: String,
    /// The GPU model of the targets.
    pub gpu_model: String,
    /// Runs found.
    pub runs: usize,
    /// Devices found.
    pub gpus: usize,
    /// One row per bench, sorted by name.
    pub benches: Vec<ScoreBench>,
    /// Every failed entry, none skipped.
    pub failures: Vec<Failure>,
    /// The score.
    pub statistics: ScoreStatistics,
    /// Per-GPU relative performance.
    pub per_gpu: PerGpu,
    /// Configuration or version disagreements within a bench.
    pub conflicts: Vec<Conflict>,
    /// Runs, expected benches, world sizes.
    #[serde(flatten)]
    pub context: ReportContext,
}

/// A report under either scoring.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(untagged)]
pub enum Report {
    /// Classic.
    Classic(ClassicReport),
    /// Score.
    Score(ScoreReport),
}

impl Report {
    /// Whether the pass criteria hold.
    pub fn passed(&self) -> bool {
        match self {
            Report::Classic(r) => r.statistics.passed,
            Report::Score(r) => r.statistics.passed,
        }
    }

    /// The conflicts found.
    pub fn conflicts(&self) -> &[Conflict] {
        match self {
            Report::Classic(r) => &r.conflicts,
            Report::Score(r) => &r.conflicts,
        }
    }

    /// Runs, expected benches and world sizes.
    pub fn context(&self) -> &ReportContext {
        match self {
            Report::Classic(r) => &r.context,
            Report::Score(r) => &r.context,
        }
    }

    /// The benches of the report's rows, in their order.
    pub fn bench_names(&self) -> Vec<&str> {
        match self {
            Report::Classic(r) => r.benches.iter().map(|b| b.bench.as_str()).collect(),
            Report::Score(r) => r.benches.iter().map(|b| b.bench.as_str()).collect(),
        }
    }

    /// The failures found.
    pub fn failures(&self) -> &[Failure] {
        match self {
            Report::Classic(r) => &r.failures,
            Report::Score(r) => &r.failures,
        }
    }
}

/// The nodes of a submission that ran on several (`hostname` of the entries): what an
/// organizer buying N nodes looks at, the worst node rather than the best
/// (docs/scoring.md, "The fleet").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fleet {
    /// One row per node, by name.
    pub nodes: Vec<FleetNode>,
    /// The 10th percentile of the nodes' `relative` (linear interpolation).
    pub p10: f64,
    /// The share of nodes whose `relative` is within 5 % of 1 (the median node).
    pub within_5pct: f64,
    /// The bootstrap resamples of the intervals.
    #[serde(skip)]
    pub resamples: usize,
    /// Their seed.
    #[serde(skip)]
    pub seed: u64,
}

/// One node of a fleet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetNode {
    /// The host name.
    pub node: String,
    /// Single devices seen on it.
    pub gpus: usize,
    /// Runs seen on it.
    pub runs: usize,
    /// Geometric mean over the benches it ran of (its mean throughput ÷ the median
    /// node's): 1 is the median node, 0.94 a node 6 % slower.
    pub relative: f64,
    /// The 95 % bootstrap interval of `relative` (runs resampled within GPUs within
    /// nodes, every node together).
    pub ci_low: f64,
    /// Its upper end.
    pub ci_high: f64,
    /// Significantly slower than the other nodes on more than half of the benches tested
    /// (the GPU straggler test, node against node).
    pub flagged: bool,
    /// Benches tested, and those where it is below the others.
    pub tested: usize,
    /// Benches where it is below the other nodes.
    pub below: usize,
}
