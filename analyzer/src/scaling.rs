//! `mlbench grid --scaling`: submissions of one vendor at several sizes, each bench's
//! throughput against the number of devices and the efficiency against linear scaling
//! from the smallest submission (docs/scoring.md, "Scaling").
//!
//! A per-device bench runs a copy on each device, so the machine's throughput is one
//! device's mean times the devices that ran it. A whole-machine bench (one entry for all
//! the devices, `convnet_distributed`, `dcgan_all`, `scaling`) has the machine's
//! throughput itself: its entries at the largest world size, over the runs.

use crate::bootstrap::usable;
use crate::compare::Labelled;
use crate::samples::SampleSet;
use mlbench_results::scaling::{SCALING_SCHEMA_VERSION, Scaling, ScalingCell, ScalingRow};
use std::collections::{BTreeMap, BTreeSet};

/// A device: its host (index into the submission's hosts) and its index there.
type Device = (Option<u32>, u32);

/// Why a scaling table cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ScalingError {
    /// Fewer than two submissions.
    #[error(
        "a scaling table compares one vendor's submissions at several sizes: give at least two"
    )]
    TooFew,
    /// A submission with no usable entry telling its size.
    #[error("{0}: no usable entry that tells how many devices it ran on")]
    NoDevices(String),
    /// Submissions of the same size: not a series.
    #[error(
        "{} ran on {devices} device{} each: a scaling series is one vendor's submissions at different sizes",
        .labels.join(" and "),
        if *.devices == 1 { "" } else { "s" }
    )]
    SameSize {
        /// The submissions of that size.
        labels: Vec<String>,
        /// Their devices.
        devices: usize,
    },
}

mlbench_schema::classify_all!(Input: ScalingError);

/// The scaling table of `subs` (label, samples).
pub fn scaling(subs: &[Labelled]) -> Result<Scaling, ScalingError> {
    if subs.len() < 2 {
        return Err(ScalingError::TooFew);
    }
    let mut rows = subs
        .iter()
        .map(|l| row_of(&l.label, &l.sub.set))
        .collect::<Result<Vec<_>, _>>()?;
    rows.sort_by_key(|r| r.devices);
    if let Some(pair) = rows.windows(2).find(|w| w[0].devices == w[1].devices) {
        let devices = pair[0].devices;
        let labels = rows
            .iter()
            .filter(|r| r.devices == devices)
            .map(|r| r.label.clone())
            .collect();
        return Err(ScalingError::SameSize { labels, devices });
    }
    let reference = rows[0].clone();
    for row in &mut rows {
        let mut logs = Vec::new();
        for (bench, cell) in &mut row.benches {
            if let Some(base) = reference.benches.get(bench) {
                let e = cell.per_device / base.per_device;
                cell.efficiency = Some(e);
                logs.push(e.ln());
            }
        }
        row.efficiency =
            (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp());
    }
    let benches = rows
        .iter()
        .flat_map(|r| r.benches.keys().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    Ok(Scaling {
        schema_version: SCALING_SCHEMA_VERSION,
        reference: reference.label,
        benches,
        rows,
    })
}

/// One submission's row: its size and each bench's figures (efficiencies come later).
fn row_of(label: &str, set: &SampleSet) -> Result<ScalingRow, ScalingError> {
    // Per-device benches: bench → (host, device) → values.
    let mut per_device: BTreeMap<&str, BTreeMap<Device, Vec<f64>>> = BTreeMap::new();
    // Whole-machine benches: bench → world size → values.
    let mut whole: BTreeMap<&str, BTreeMap<u32, Vec<f64>>> = BTreeMap::new();
    for s in &set.samples {
        let Some((bench, value)) = usable(s) else {
            continue;
        };
        match (s.device, s.world) {
            (Some(device), _) => {
                let by_device = per_device.entry(bench).or_default();
                by_device.entry((s.host, device)).or_default().push(value);
            }
            (None, Some(world)) if world > 0 => {
                let by_world = whole.entry(bench).or_default();
                by_world.entry(world).or_default().push(value);
            }
            (None, _) => {}
        }
    }
    let devices: BTreeSet<Device> = per_device
        .values()
        .flat_map(|d| d.keys().copied())
        .collect();
    let nodes = devices
        .iter()
        .map(|(h, _)| *h)
        .collect::<BTreeSet<_>>()
        .len();
    let widest = whole
        .values()
        .filter_map(|w| w.keys().next_back())
        .max()
        .map_or(0, |w| *w as usize);
    let size = devices.len().max(widest);
    if size == 0 {
        return Err(ScalingError::NoDevices(label.to_owned()));
    }
    let mut benches: BTreeMap<String, ScalingCell> = per_device
        .into_iter()
        .map(|(bench, by_device)| {
            let values: Vec<f64> = by_device.values().flatten().copied().collect();
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            let n = by_device.len();
            (bench.to_owned(), cell(n, mean, mean * n as f64, false))
        })
        .collect();
    for (bench, by_world) in whole {
        // The machine's figure: its entries at the largest world size it ran.
        if let Some((world, values)) = by_world.into_iter().next_back() {
            let throughput = values.iter().sum::<f64>() / values.len() as f64;
            let world = world as usize;
            let per_device = throughput / world as f64;
            benches.insert(bench.to_owned(), cell(world, per_device, throughput, true));
        }
    }
    Ok(ScalingRow {
        label: label.to_owned(),
        devices: size,
        nodes: nodes.max(1),
        benches,
        efficiency: None,
    })
}

fn cell(devices: usize, per_device: f64, throughput: f64, whole_machine: bool) -> ScalingCell {
    ScalingCell {
        devices,
        per_device,
        throughput,
        whole_machine,
        efficiency: None,
    }
}
