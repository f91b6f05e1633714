//! `mlbench grid --scaling`: submissions of one vendor at several sizes, each bench's
//! throughput against the number of devices and the efficiency against linear scaling
//! from the smallest submission (docs/scoring.md, "Scaling"). Per-device entries only:
//! each device runs its copy, so the machine's throughput is one device's mean times the
//! devices that ran the bench.

use crate::bootstrap::usable;
use crate::compare::Labelled;
use mlbench_results::scaling::{SCALING_SCHEMA_VERSION, Scaling, ScalingCell, ScalingRow};
use std::collections::{BTreeMap, BTreeSet};

/// A device: its host (index into the submission's hosts) and its index there.
type Device = (Option<u32>, u32);

/// Why a scaling table cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ScalingError {
    /// Fewer than two submissions.
    #[error("--scaling compares one vendor's submissions at several sizes: give at least two")]
    TooFew,
    /// A submission without a single-device sample.
    #[error("{0}: no usable single-device entry, so no device count")]
    NoDevices(String),
}

/// The scaling table of `subs` (label, samples).
pub fn scaling(subs: &[Labelled]) -> Result<Scaling, ScalingError> {
    if subs.len() < 2 {
        return Err(ScalingError::TooFew);
    }
    let mut rows = Vec::new();
    for l in subs {
        let set = &l.sub.set;
        // bench → (host, device) → values.
        let mut per_bench: BTreeMap<&str, BTreeMap<Device, Vec<f64>>> = BTreeMap::new();
        for s in &set.samples {
            if let (Some((bench, value)), Some(device)) = (usable(s), s.device) {
                per_bench
                    .entry(bench)
                    .or_default()
                    .entry((s.host, device))
                    .or_default()
                    .push(value);
            }
        }
        let devices: BTreeSet<Device> =
            per_bench.values().flat_map(|d| d.keys().copied()).collect();
        if devices.is_empty() {
            return Err(ScalingError::NoDevices(l.label.clone()));
        }
        let nodes = devices
            .iter()
            .map(|(h, _)| *h)
            .collect::<BTreeSet<_>>()
            .len();
        let benches = per_bench
            .into_iter()
            .map(|(bench, by_device)| {
                let values: Vec<f64> = by_device.values().flatten().copied().collect();
                let per_device = values.iter().sum::<f64>() / values.len() as f64;
                let cell = ScalingCell {
                    devices: by_device.len(),
                    per_device,
                    throughput: per_device * by_device.len() as f64,
                    efficiency: None,
                };
                (bench.to_owned(), cell)
            })
            .collect();
        rows.push(ScalingRow {
            label: l.label.clone(),
            devices: devices.len(),
            nodes,
            benches,
            efficiency: None,
        });
    }
    rows.sort_by_key(|r| r.devices);
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
