//! Percentile intervals of resampled means, per bench and over a sample set.

use super::resample::Strata;
use super::rng::stream;
use crate::samples::SampleSet;
use std::collections::BTreeMap;

/// The `p` quantile (0 ≤ p ≤ 1) of values sorted ascending, by linear interpolation
/// between order statistics at position p·(n − 1) (numpy's and R's default, type 7).
/// `None` for no values.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let pos = p.clamp(0.0, 1.0) * last as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(last);
    let frac = pos - lo as f64;
    Some(sorted[lo] + frac * (sorted[hi] - sorted[lo]))
}

/// The percentile interval at `level` of the values (reordered in place): the
/// (1 − level)/2 and (1 + level)/2 quantiles, as [`quantile_sorted`] gives them of the
/// sorted values, the same bits. `None` for no values.
///
/// Only the four order statistics the two quantiles interpolate between are needed: they
/// are selected (linear time) instead of sorting the resamples, which was most of the
/// cost of an interval.
pub fn percentile_interval(values: &mut [f64], level: f64) -> Option<[f64; 2]> {
    let last = values.len().checked_sub(1)?;
    let at = |p: f64| {
        let pos = p.clamp(0.0, 1.0) * last as f64;
        let lo = pos.floor() as usize;
        (lo, pos - lo as f64)
    };
    let (low, high) = (at((1.0 - level) / 2.0), at((1.0 + level) / 2.0));
    if high.0 < low.0 {
        // A negative level: no interval anyone asks for, taken the plain way.
        values.sort_unstable_by(f64::total_cmp);
        return Some([
            quantile_sorted(values, (1.0 - level) / 2.0)?,
            quantile_sorted(values, (1.0 + level) / 2.0)?,
        ]);
    }
    // The order statistics k and k + 1 of `values`, whose first `from` elements are the
    // `from` smallest (so that `k ≥ from` is selected among the rest).
    let pair = |values: &mut [f64], from: usize, k: usize| {
        let (_, &mut kth, above) = values[from..].select_nth_unstable_by(k - from, f64::total_cmp);
        let next = above.iter().copied().min_by(f64::total_cmp).unwrap_or(kth);
        (kth, next)
    };
    let interpolate = |(a, b): (f64, f64), frac: f64| a + frac * (b - a);
    let low_pair = pair(values, 0, low.0);
    // The upper pair among the values above the lower statistic (all of them when the
    // two quantiles share it).
    let high_pair = if high.0 == low.0 {
        low_pair
    } else {
        pair(values, low.0 + 1, high.0)
    };
    Some([interpolate(low_pair, low.1), interpolate(high_pair, high.1)])
}

pub use mlbench_results::report::MeanCi;

/// The bootstrap interval of the pooled mean of one bench: `values_by_device` holds each
/// GPU's runs (one group per GPU; entries that ran on several devices form one group of
/// their own); `names` name the stream (see [`stream`]). `None` when there is no value.
/// The percentiles are taken of the resampled means themselves (the grid takes them of
/// log ratios; for a percentile interval the two differ only in the interpolation
/// between neighbouring order statistics).
pub fn mean_ci(
    values_by_device: &[Vec<f64>],
    names: &[&str],
    resamples: usize,
    seed: u64,
    level: f64,
) -> Option<MeanCi> {
    let strata = Strata::new(values_by_device.iter().map(|g| g.iter().copied()));
    if strata.n() == 0 || resamples == 0 {
        return None;
    }
    let mean = strata.mean();
    let mut rng = stream(seed, names);
    let mut means = Vec::with_capacity(resamples);
    strata.resample_means(&mut rng, resamples, &mut means);
    let [lo, hi] = percentile_interval(&mut means, level)?;
    Some(MeanCi {
        n: strata.n(),
        mean,
        ci: [lo, hi],
    })
}

/// Whether a sample counts for the grid and the report's intervals: a bench, a finite
/// positive throughput, not a failure, not set aside by a configuration conflict.
pub fn usable(sample: &crate::samples::Sample) -> Option<(&str, f64)> {
    let bench = sample.bench.as_deref()?;
    let value = sample.value?;
    (sample.failure.is_none() && !sample.conflict && value.is_finite() && value > 0.0)
        .then_some((bench, value))
}

/// As [`group_by_bench`], grouped by peers ([`SampleSet::peer_group`]): on hardware of
/// several GPU models, a bench on each model is a group of its own.
pub fn group_by_peers(set: &SampleSet) -> BTreeMap<String, BTreeMap<Option<u32>, Vec<f64>>> {
    if set.models.len() < 2 {
        return group_by_bench(set);
    }
    let mut groups: BTreeMap<String, BTreeMap<Option<u32>, Vec<f64>>> = BTreeMap::new();
    for s in &set.samples {
        if let Some((bench, value)) = usable(s) {
            let group = groups
                .entry(set.peer_group(s, bench).into_owned())
                .or_default();
            group.entry(s.device).or_default().push(value);
        }
    }
    groups
}

/// The usable samples of a set: bench → device (`None`: ran on several) → values, in
/// file order within a device.
pub fn group_by_bench(set: &SampleSet) -> BTreeMap<String, BTreeMap<Option<u32>, Vec<f64>>> {
    // Two passes over the samples rather than a copy of the usable ones.
    let kept = || {
        set.samples
            .iter()
            .filter_map(|s| usable(s).map(|(bench, value)| (s.device, bench, value)))
    };
    let (names, ranks) = crate::samples::name_ranks(kept().map(|k| k.1));
    let mut groups: Vec<BTreeMap<Option<u32>, Vec<f64>>> = vec![BTreeMap::new(); names.len()];
    for ((device, _, value), rank) in kept().zip(ranks) {
        groups[rank as usize].entry(device).or_default().push(value);
    }
    names.into_iter().map(str::to_owned).zip(groups).collect()
}

/// `mlbench report --ci`: the bootstrap interval of every bench's pooled mean (the score
/// scheme's mean: failures and conflicts removed), runs resampled within GPUs. Each
/// bench's stream is named by the suite and the bench, so a bench's interval does not
/// depend on the other benches.
pub fn bench_mean_cis(
    set: &SampleSet,
    resamples: usize,
    seed: u64,
    level: f64,
) -> BTreeMap<String, MeanCi> {
    group_by_bench(set)
        .into_iter()
        .filter_map(|(bench, devices)| {
            let groups: Vec<Vec<f64>> = devices.into_values().collect();
            let ci = mean_ci(&groups, &[&set.suite, &bench], resamples, seed, level)?;
            Some((bench, ci))
        })
        .collect()
}
