//! From copies to benches: devices shared by copies that ran side by side, then each
//! bench's means over its copies with bootstrap intervals (resampled within copies, as
//! the throughput's intervals are within GPUs: [`crate::bootstrap::mean_ci`]).

use super::copy::total;
use crate::bootstrap::{mean_ci, quantile_sorted};
use mlbench_results::energy::{BenchEnergy, CopyEnergy, EnergyFlag, FlagCount, MeanCi, Method};
use std::collections::BTreeMap;

/// Divides the energy of each device that several copies of one run, bench and
/// configuration sampled (a CPU package every copy reads) equally between them, so that
/// their energies add up to what was drawn; flags them `shared_device`. `side_by_side`
/// gives each copy's group (copies of a group ran at the same time).
pub fn share_devices<K: Ord>(copies: &mut [CopyEnergy], side_by_side: impl Fn(usize) -> K) {
    let mut readers: BTreeMap<(K, String), usize> = BTreeMap::new();
    for (i, c) in copies.iter().enumerate() {
        for d in &c.devices {
            *readers
                .entry((side_by_side(i), d.device.clone()))
                .or_default() += 1;
        }
    }
    for (i, c) in copies.iter_mut().enumerate() {
        let mut shared = false;
        for d in &mut c.devices {
            let n = readers
                .get(&(side_by_side(i), d.device.clone()))
                .copied()
                .unwrap_or(1);
            if n > 1 {
                shared = true;
                d.shared_by = n;
                d.joules /= n as f64;
                d.net_joules = d.net_joules.map(|j| j / n as f64);
                d.watts.iter_mut().for_each(|w| *w /= n as f64);
            }
        }
        if shared {
            c.flags.push(EnergyFlag::SharedDevice);
            total(c);
        }
    }
}

/// How the bootstrap is drawn.
#[derive(Debug, Clone, Copy)]
pub struct Draw {
    /// Resamples.
    pub resamples: usize,
    /// Seed.
    pub seed: u64,
    /// Confidence level.
    pub level: f64,
}

/// The interval of a figure's mean over copies, grouped by copy index (its runs are the
/// repetitions); `None` unless every copy has the figure.
fn interval(
    copies: &[&CopyEnergy],
    figure: fn(&CopyEnergy) -> Option<f64>,
    names: &[&str],
    draw: Draw,
) -> Option<MeanCi> {
    let mut by_copy: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for c in copies {
        by_copy.entry(c.copy).or_default().push(figure(c)?);
    }
    let groups: Vec<Vec<f64>> = by_copy.into_values().collect();
    mean_ci(&groups, names, draw.resamples, draw.seed, draw.level)
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// One bench over its copies with energy (`copies` non-empty, all of `bench`).
pub fn bench(bench: &str, copies: &[&CopyEnergy], draw: Draw) -> BenchEnergy {
    let names = |figure: &'static str| [bench.to_owned(), "energy".to_owned(), figure.to_owned()];
    let ci = |figure, which: &'static str| {
        let n = names(which);
        let refs: Vec<&str> = n.iter().map(String::as_str).collect();
        interval(copies, figure, &refs, draw)
    };
    let mut watts: Vec<f64> = copies
        .iter()
        .flat_map(|c| c.trace.iter().map(|p| p.1))
        .collect();
    watts.sort_unstable_by(f64::total_cmp);
    let mut counts: BTreeMap<EnergyFlag, usize> = BTreeMap::new();
    for flag in copies.iter().flat_map(|c| &c.flags) {
        *counts.entry(*flag).or_default() += 1;
    }
    let mut runs: Vec<&str> = copies.iter().map(|c| c.run.as_str()).collect();
    runs.sort_unstable();
    runs.dedup();
    BenchEnergy {
        bench: bench.to_owned(),
        n: copies.len(),
        runs: runs.len(),
        method: copies
            .iter()
            .filter_map(|c| c.method)
            .reduce(Method::and)
            .unwrap_or(Method::Counter),
        joules_per_item: ci(|c| c.joules_per_item, "joules_per_item"),
        net_joules_per_item: ci(|c| c.net_joules_per_item, "net_joules_per_item"),
        items_per_joule: ci(|c| c.items_per_joule, "items_per_joule"),
        mean_power_w: mean(copies.iter().filter_map(|c| c.mean_power_w)),
        p95_power_w: quantile_sorted(&watts, 0.95),
        utilisation: mean(copies.iter().filter_map(|c| c.utilisation)),
        flags: counts
            .into_iter()
            .map(|(flag, copies)| FlagCount { flag, copies })
            .collect(),
    }
}

/// Every bench of `copies` that has an energy, sorted by name.
pub fn benches(copies: &[CopyEnergy], draw: Draw) -> Vec<BenchEnergy> {
    let mut by_bench: BTreeMap<&str, Vec<&CopyEnergy>> = BTreeMap::new();
    for c in copies.iter().filter(|c| c.joules.is_some()) {
        by_bench.entry(c.bench.as_str()).or_default().push(c);
    }
    by_bench
        .into_iter()
        .map(|(name, cs)| bench(name, &cs, draw))
        .collect()
}
