//! What the charts of a submission draw: per-GPU relative means and per-run means
//! (computed by `mlbench_analyzer::views`).

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
