//! What the charts of a submission draw: per-GPU relative means and per-run means
//! (computed by `mlbench_analyzer::views`), and the loss curves the validator compares.

/// Each GPU's mean throughput relative to the mean of all samples, per bench.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuRelative {
    /// The GPUs (rows), sorted.
    pub gpus: Vec<u32>,
    /// Their names (`GPU 0`; `GPU host/0` on several hosts), one per row.
    pub names: Vec<String>,
    /// The benches (columns) with a sample on a single GPU, sorted.
    pub benches: Vec<String>,
    /// `values[gpu][bench]`: the GPU's mean over the mean of every sample of the bench;
    /// `None` where the GPU has no usable sample of it.
    pub values: Vec<Vec<Option<f64>>>,
}

/// One bench's per-run means.
#[derive(Debug, Clone, PartialEq)]
pub struct RunMeans {
    /// The bench.
    pub bench: String,
    /// Each run's mean over its usable samples (every GPU), in run order.
    pub means: Vec<f64>,
    /// The bench's target in the table, when it has one.
    pub target: Option<f64>,
}

/// The loss curves of one bench configuration, exactly those the validator's
/// `loss.divergent` compares, with the band it draws over them: one loss chart
/// (computed by `mlbench_validator::rules::loss_view`).
#[derive(Debug, Clone, PartialEq)]
pub struct LossGroup {
    /// The bench.
    pub bench: String,
    /// Which of the bench's configurations it is, `(k, n)` (1-based), when the bench ran
    /// several.
    pub configuration: Option<(usize, usize)>,
    /// The band over the curves (low, high per step), when there are enough curves for
    /// one.
    pub band: Option<(Vec<f64>, Vec<f64>)>,
    /// The curves, in the order of the entries read.
    pub curves: Vec<LossCurve>,
    /// The runs the curves come from, counted.
    pub runs: usize,
    /// The devices they ran on, distinct, as named (`GPU 0`, `the whole machine`).
    pub devices: Vec<String>,
    /// Whether every one of those devices is a single GPU.
    pub gpus_only: bool,
    /// The bench configuration's entries not drawn, each named with why:
    /// `output0 GPU 0 (NaN or infinite loss)`.
    pub left_out: Vec<String>,
}

/// One loss curve of a [`LossGroup`].
#[derive(Debug, Clone, PartialEq)]
pub struct LossCurve {
    /// Its run: the file's run, with the entry's `run_id` where a stream holds several
    /// runs (`output0 2`).
    pub run: String,
    /// Its device, as named (`GPU 1`).
    pub device: String,
    /// The report file (`?` when unknown).
    pub file: String,
    /// The entry's index in the file.
    pub entry: usize,
    /// The batch losses, step by step.
    pub losses: Vec<f64>,
}
