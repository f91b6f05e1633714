//! The results of `mlbench report`: the stable JSON contract (`docs/report-json.md`).
//!
//! Numbers are fractions, never percent. A figure that cannot be computed (too few runs,
//! no target) is `null`, never a made-up zero.

use serde::Serialize;
use std::collections::BTreeMap;

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
    /// Entries dropped by a selection rule, with the rule.
    pub not_selected: Vec<(String, usize)>,
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

/// The classic statistics block.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClassicStatistics {
    /// Every bench of the target table has a result over at least `--min-runs` runs.
    pub bench_passes: bool,
    /// 80% quantile (linear interpolation) of sd_pct; passes below 0.05.
    pub deviation_quantile_80: Option<f64>,
    /// Mean of diff; passes at 0 or more.
    pub performance: Option<f64>,
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

    /// The failures found.
    pub fn failures(&self) -> &[Failure] {
        match self {
            Report::Classic(r) => &r.failures,
            Report::Score(r) => &r.failures,
        }
    }
}
