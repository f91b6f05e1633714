//! The straggler check of `mlbench report`: a GPU whose throughput is significantly below
//! its peers' on most benches (method and its reasons: `docs/scoring.md`, "Stragglers").
//!
//! Per bench, each GPU's runs are compared with the pooled runs of the other GPUs of the
//! submission by a one-sided Welch t-test (H₁: the GPU's mean is below the peers').
//! The GPU is *below* on the bench when p < `alpha` and its mean is at least
//! `min_deficit` under the peers'; it is flagged when it is below on more than half of
//! the benches where it could be tested.

use crate::bootstrap::{group_by_peers, quantile_sorted};
use crate::samples::SampleSet;
use rayon::prelude::*;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The thresholds of the check.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StragglerOptions {
    /// One-sided significance level of each bench's test.
    pub alpha: f64,
    /// Runs needed on the GPU, and on its peers together, to test a bench.
    pub min_runs: usize,
    /// Smallest relative deficit, 1 − mean ÷ peers' mean, that counts as below.
    pub min_deficit: f64,
}

impl Default for StragglerOptions {
    /// p < 0.01, at least 3 runs on each side, at least 1 % below.
    fn default() -> StragglerOptions {
        StragglerOptions {
            alpha: 0.01,
            min_runs: 3,
            min_deficit: 0.01,
        }
    }
}

pub use mlbench_results::report::{Straggler, StragglerBench};

/// Mean and sample variance (n − 1) of the `n` values.
fn mean_var(n: usize, values: impl Iterator<Item = f64> + Clone) -> (usize, f64, f64) {
    let mean = values.clone().sum::<f64>() / n as f64;
    let ss: f64 = values.map(|v| (v - mean) * (v - mean)).sum();
    (n, mean, ss / (n as f64 - 1.0))
}

/// A group's count, mean and sum of squared deviations from it.
#[derive(Debug, Clone, Copy, Default)]
struct Moments {
    n: usize,
    mean: f64,
    ss: f64,
}

impl Moments {
    fn of(values: &[f64]) -> Moments {
        let (n, mean, var) = mean_var(values.len(), values.iter().copied());
        Moments {
            n,
            mean,
            ss: if n > 1 { var * (n as f64 - 1.0) } else { 0.0 },
        }
    }

    /// The two groups pooled: n = nₐ + n_b, δ = mean_b − meanₐ, mean = meanₐ + δ·n_b/n,
    /// ss = ssₐ + ss_b + δ²·nₐ·n_b/n.
    fn merge(self, other: &Moments) -> Moments {
        if self.n == 0 {
            return *other;
        }
        if other.n == 0 {
            return self;
        }
        let n = self.n + other.n;
        let (na, nb) = (self.n as f64, other.n as f64);
        let delta = other.mean - self.mean;
        Moments {
            n,
            mean: self.mean + delta * nb / n as f64,
            ss: self.ss + other.ss + delta * delta * na * nb / n as f64,
        }
    }

    /// Count, mean and sample variance.
    fn mean_var(&self) -> (usize, f64, f64) {
        (self.n, self.mean, self.ss / (self.n as f64 - 1.0))
    }
}

/// The one-sided Welch test of `x` below `y` (each with at least 2 values): t, df, p.
pub fn welch_below(x: &[f64], y: &[f64]) -> (Option<f64>, Option<f64>, f64) {
    welch_below_of(
        mean_var(x.len(), x.iter().copied()),
        mean_var(y.len(), y.iter().copied()),
    )
}

/// [`welch_below`] from each side's count, mean and sample variance.
fn welch_below_of(
    (nx, mx, vx): (usize, f64, f64),
    (ny, my, vy): (usize, f64, f64),
) -> (Option<f64>, Option<f64>, f64) {
    let a = vx / nx as f64;
    let b = vy / ny as f64;
    let se2 = a + b;
    if se2 <= 0.0 || !se2.is_finite() {
        // No spread on either side: the difference is certain, whatever its size.
        return (None, None, if mx < my { 0.0 } else { 1.0 });
    }
    let t = (mx - my) / se2.sqrt();
    let df = se2 * se2 / (a * a / (nx as f64 - 1.0) + b * b / (ny as f64 - 1.0));
    let p = StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |dist| dist.cdf(t));
    (Some(t), Some(df), p)
}

/// Every GPU (single-device entries only) with at least one bench tested, by device.
pub fn stragglers(set: &SampleSet, options: &StragglerOptions) -> Vec<Straggler> {
    // Peers are GPUs of one model: on mixed hardware, each bench on each model apart.
    let by_bench = group_by_peers(set).into_iter().map(|(bench, devices)| {
        let gpus = devices
            .into_iter()
            .filter_map(|(d, v)| d.map(|d| (d, v)))
            .collect();
        (bench, gpus)
    });
    below_peers(by_bench, options)
        .into_iter()
        .map(|(device, benches)| Straggler {
            gpu: set.gpu_label(device),
            ..straggler(device, benches)
        })
        .collect()
}

/// The test of every unit (a GPU, a node) against its peers on each bench: `groups` gives,
/// per bench, each unit's values. A unit appears once it has a bench tested.
pub fn below_peers<K: Ord + Copy + Send + Sync>(
    groups: impl IntoIterator<Item = (String, Vec<(K, Vec<f64>)>)>,
    options: &StragglerOptions,
) -> std::collections::BTreeMap<K, Vec<StragglerBench>> {
    // Benches are tested in parallel (each test reads only its own bench), then gathered
    // in the benches' order, so the result does not depend on the scheduling.
    let groups: Vec<BenchUnits<K>> = groups.into_iter().collect();
    let tested: Vec<Vec<(K, StragglerBench)>> = groups
        .par_iter()
        .map(|(bench, units)| test_bench(bench, units, options))
        .collect();
    let mut per_unit: std::collections::BTreeMap<K, Vec<StragglerBench>> =
        std::collections::BTreeMap::new();
    for (unit, result) in tested.into_iter().flatten() {
        per_unit.entry(unit).or_default().push(result);
    }
    per_unit
}

/// One bench and each unit's values on it.
type BenchUnits<K> = (String, Vec<(K, Vec<f64>)>);

/// Every unit of one bench against its peers (the other units' values, pooled).
fn test_bench<K: Ord + Copy>(
    bench: &str,
    units: &[(K, Vec<f64>)],
    options: &StragglerOptions,
) -> Vec<(K, StragglerBench)> {
    let mut out = Vec::new();
    let all: usize = units.iter().map(|(_, v)| v.len()).sum();
    // Each unit's count, mean and sum of squared deviations; a unit's peers are the others
    // pooled, their statistics combined from these (Chan et al.'s pairwise update: no
    // pass over the pooled values for each unit): the units before it pooled, merged with
    // the units after it pooled, so that a bench of n units takes 3n merges, not n².
    let stats: Vec<Moments> = units.iter().map(|(_, v)| Moments::of(v)).collect();
    let mut before = Vec::with_capacity(stats.len() + 1);
    before.push(Moments::default());
    for m in &stats {
        before.push(before[before.len() - 1].merge(m));
    }
    let mut after = vec![Moments::default(); stats.len() + 1];
    for (j, m) in stats.iter().enumerate().rev() {
        after[j] = m.merge(&after[j + 1]);
    }
    for (i, (unit, runs)) in units.iter().enumerate() {
        // Two values are the least a variance needs, whatever min_runs says.
        let min = options.min_runs.max(2);
        if runs.len() < min || all - runs.len() < min {
            continue;
        }
        let own = stats[i].mean_var();
        let others = before[i].merge(&after[i + 1]).mean_var();
        let (t, df, p) = welch_below_of(own, others);
        let (n, mean, _) = own;
        let (peers_n, peers_mean, _) = others;
        let deficit = 1.0 - mean / peers_mean;
        out.push((
            *unit,
            StragglerBench {
                bench: bench.to_owned(),
                n,
                mean,
                peers_n,
                peers_mean,
                deficit,
                t,
                df,
                p,
                below: p < options.alpha && deficit >= options.min_deficit,
            },
        ));
    }
    out
}

/// A unit's verdict over its benches: flagged when below on more than half of those
/// tested.
pub fn straggler(device: u32, benches: Vec<StragglerBench>) -> Straggler {
    let tested = benches.len();
    let below = benches.iter().filter(|b| b.below).count();
    let mut deficits: Vec<f64> = benches.iter().map(|b| b.deficit).collect();
    deficits.sort_unstable_by(f64::total_cmp);
    // Every unit listed has a bench tested, so the median exists.
    let median_deficit = quantile_sorted(&deficits, 0.5).unwrap_or_default();
    Straggler {
        device,
        gpu: device.to_string(),
        tested,
        below,
        median_deficit,
        flagged: 2 * below > tested,
        benches,
    }
}
