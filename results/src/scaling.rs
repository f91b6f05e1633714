//! `mlbench grid --scaling`: one vendor's submissions at 1, 2, 4… devices (or nodes) side
//! by side: the throughput at each size and the efficiency against linear scaling
//! (computed by `mlbench_analyzer::scaling`; docs/scoring.md, "Scaling").

use serde::Serialize;
use std::collections::BTreeMap;

/// The version of the scaling JSON.
pub const SCALING_SCHEMA_VERSION: u32 = 1;

/// The scaling table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scaling {
    /// [`SCALING_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The submission every efficiency is measured from: the one with the fewest devices.
    pub reference: String,
    /// Every bench some submission has, sorted.
    pub benches: Vec<String>,
    /// One row per submission, by devices ascending.
    pub rows: Vec<ScalingRow>,
}

/// One submission.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalingRow {
    /// Its label.
    pub label: String,
    /// Devices it ran on: its single-device entries' devices (a GPU is a host and an
    /// index), or the world size of its whole-machine entries when that is more.
    pub devices: usize,
    /// Hosts.
    pub nodes: usize,
    /// Bench → its figures.
    pub benches: BTreeMap<String, ScalingCell>,
    /// Geometric mean of the benches' efficiencies (the benches both it and the
    /// reference have); `None` without any.
    pub efficiency: Option<f64>,
}

/// One bench of one submission.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalingCell {
    /// Devices that ran the bench.
    pub devices: usize,
    /// Mean throughput of one device (its usable samples, every device × run); for a
    /// whole-machine bench, the machine's throughput ÷ its devices.
    pub per_device: f64,
    /// The machine's throughput: `per_device × devices` (the devices run side by side),
    /// or a whole-machine bench's own figure (the mean over runs of its entries at the
    /// largest world size).
    pub throughput: f64,
    /// A bench that ran on the whole machine at once (one entry for all its devices):
    /// `convnet_distributed`, `dcgan_all`, `scaling`. Absent when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub whole_machine: bool,
    /// `throughput ÷ (devices × the reference's per_device)`: 1 is linear scaling.
    pub efficiency: Option<f64>,
}
