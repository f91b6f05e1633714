//! `mlbench report --by batch_size`: each bench's throughput at each batch size it ran, per
//! GPU model, with bootstrap intervals, its ratio to the smallest batch, the best batch
//! and where a larger batch stops paying (computed by `mlbench_analyzer::batch_sweep`;
//! docs/batch-size.md).

use serde::Serialize;

/// The version of the batch-size JSON (docs/batch-size.md).
pub const BATCH_SWEEP_SCHEMA_VERSION: u32 = 1;

/// What each point's figure is, as the JSON's `statistic` says it.
pub const SWEEP_STATISTIC: &str =
    "mean items/s of one GPU: every usable run × GPU entry at the batch size pooled";

/// How a step's gain is judged, as the JSON's `stop_rule` says it.
pub const STOP_RULE: &str = "a step to the next larger batch pays when the lower end of its gain's interval is above 1; the sweep stops paying at the smallest batch whose next step does not pay";

/// The batch-size view of one submission.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchSweep {
    /// [`BATCH_SWEEP_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The suite whose reports were read.
    pub suite: String,
    /// [`SWEEP_STATISTIC`].
    pub statistic: String,
    /// [`STOP_RULE`].
    pub stop_rule: String,
    /// How the intervals were drawn: `runs resampled within GPUs`.
    pub resampling: String,
    /// Resamples of every interval.
    pub resamples: usize,
    /// The seed of every stream.
    pub seed: u64,
    /// The confidence level of every interval.
    pub level: f64,
    /// Every batch size some bench ran at, ascending (the CSV's columns).
    pub batch_sizes: Vec<i64>,
    /// One per bench and GPU model, by GPU model then bench.
    pub benches: Vec<SweepBench>,
    /// What was read and what was left out, one line each.
    pub notes: Vec<String>,
}

/// One bench on one GPU model at every batch size it ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepBench {
    /// The bench.
    pub bench: String,
    /// The GPU model its entries name (`gpu`); `None`: they name none.
    pub gpu_model: Option<String>,
    /// One per batch size, ascending.
    pub points: Vec<SweepPoint>,
    /// The batch size of the highest mean throughput.
    pub best_batch_size: i64,
    /// The smallest batch size whose step to the next larger one does not pay
    /// ([`STOP_RULE`]); `None`: every step pays (or there is one batch size).
    pub stops_paying_at: Option<i64>,
}

/// One batch size of a bench.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepPoint {
    /// The `--batch-size` given (per process, as the jobs file gives it).
    pub batch_size: i64,
    /// Entries pooled.
    pub n: usize,
    /// GPUs they ran on (entries that ran on several devices count as one group).
    pub gpus: usize,
    /// Mean items/s ([`SWEEP_STATISTIC`]).
    pub items_per_second: f64,
    /// Its percentile bootstrap interval.
    pub ci: [f64; 2],
    /// `items_per_second ÷` the smallest batch's (1 for the smallest).
    pub ratio: f64,
    /// The ratio's interval: the percentiles of the ratio of the two resampled means,
    /// resample by resample.
    pub ratio_ci: [f64; 2],
    /// `items_per_second ÷` the next smaller batch's; `None` for the smallest.
    pub gain: Option<f64>,
    /// The gain's interval, as `ratio_ci`.
    pub gain_ci: Option<[f64; 2]>,
}

impl SweepBench {
    /// The bench and its GPU model in words: `convnet on TITAN RTX`.
    pub fn label(&self) -> String {
        match &self.gpu_model {
            Some(model) => format!("{} on {model}", self.bench),
            None => format!("{} on an unnamed GPU", self.bench),
        }
    }

    /// The point at `batch_size`, if the bench ran it.
    pub fn at(&self, batch_size: i64) -> Option<&SweepPoint> {
        self.points.iter().find(|p| p.batch_size == batch_size)
    }
}

impl BatchSweep {
    /// The GPU models of the benches, in order, once each.
    pub fn gpu_models(&self) -> Vec<Option<&str>> {
        let mut models: Vec<Option<&str>> = Vec::new();
        for b in &self.benches {
            let model = b.gpu_model.as_deref();
            if !models.contains(&model) {
                models.push(model);
            }
        }
        models
    }
}
