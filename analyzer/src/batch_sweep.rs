//! `mlbench report --by batch_size`: throughput against batch size (docs/batch-size.md).
//!
//! The submission is read with `batch_size` swept ([`TargetTable::sweeping`]): entries
//! that differ only in their batch size are one bench at several batch sizes, not a
//! configuration conflict. Each (GPU model, bench, batch size) pools its usable entries
//! (as the grid does: a value, no failure, no remaining conflict) into the mean items/s of
//! one GPU, with the bootstrap of [`crate::bootstrap`]: runs resampled within GPUs, each
//! point from its own stream named by suite, model, bench and batch size.
//!
//! The ratio to the smallest batch and the gain over the next smaller one are ratios of
//! two independent resampled means, taken resample by resample (resample k of the one
//! over resample k of the other, as the grid pairs a vendor's resamples with the
//! baseline's), and their intervals are the percentiles of those ratios.

use crate::AnalyzeError;
use crate::bootstrap::{Strata, percentile_interval, stream, usable};
use crate::result_ci::Resampling;
use crate::samples::SampleSet;
use mlbench_results::batch_sweep::{
    BATCH_SWEEP_SCHEMA_VERSION, BatchSweep, STOP_RULE, SWEEP_STATISTIC, SweepBench, SweepPoint,
};
use mlbench_schema::TargetTable;
use mlbench_schema::words::count;
use std::collections::{BTreeMap, BTreeSet};

/// The entry field a batch-size sweep varies.
pub const BATCH_SIZE_FIELD: &str = "batch_size";

/// `targets` with `batch_size` swept: what `report --by batch_size` reads a submission with.
pub fn sweep_targets(targets: TargetTable) -> TargetTable {
    targets.sweeping(BATCH_SIZE_FIELD)
}

/// The view of `set` (read with [`sweep_targets`]) as `report --by batch_size` shows it:
/// `--ci`'s resampling (2000 resamples, the fixed seed, 95 %), after the check that
/// there are samples and `min_runs` runs.
///
/// # Errors
/// [`AnalyzeError::NoEntries`], [`AnalyzeError::TooFewRuns`].
pub fn sweep_of(set: &SampleSet, min_runs: u32) -> Result<BatchSweep, AnalyzeError> {
    crate::enough_runs(set, min_runs)?;
    let how = Resampling {
        resamples: crate::document::CI_RESAMPLES,
        seed: crate::grid::DEFAULT_SEED,
        level: crate::grid::DEFAULT_LEVEL,
    };
    Ok(batch_sweep(set, &how))
}

/// A bench on a GPU model: (model, bench).
type Key = (Option<String>, String);
/// Batch size → device (`None`: ran on several) → values.
type ByBatch = BTreeMap<i64, BTreeMap<Option<u32>, Vec<f64>>>;

/// The usable samples of `set` by bench and GPU model, then batch size and device; and
/// the usable entries of each bench that record no batch size.
fn group(set: &SampleSet) -> (BTreeMap<Key, ByBatch>, BTreeMap<String, usize>) {
    let mut groups: BTreeMap<Key, ByBatch> = BTreeMap::new();
    let mut no_size: BTreeMap<String, usize> = BTreeMap::new();
    for s in &set.samples {
        let Some((bench, value)) = usable(s) else {
            continue;
        };
        let Some(batch) = s.batch_size else {
            *no_size.entry(bench.to_owned()).or_default() += 1;
            continue;
        };
        let model = s.model.and_then(|m| set.models.get(m as usize)).cloned();
        let by_batch = groups.entry((model, bench.to_owned())).or_default();
        let by_device = by_batch.entry(batch).or_default();
        by_device.entry(s.device).or_default().push(value);
    }
    (groups, no_size)
}

/// The batch-size view of `set` (read with [`sweep_targets`]), every interval drawn as
/// `how` says.
pub fn batch_sweep(set: &SampleSet, how: &Resampling) -> BatchSweep {
    let (groups, no_size) = group(set);
    let benches: Vec<SweepBench> = groups
        .into_iter()
        .map(|((model, bench), by_batch)| {
            let names = [set.suite.as_str(), model.as_deref().unwrap_or(""), &bench];
            let points = points(&by_batch, &names, how);
            sweep_bench(bench, model, points)
        })
        .collect();
    let batch_sizes: BTreeSet<i64> = benches
        .iter()
        .flat_map(|b| b.points.iter().map(|p| p.batch_size))
        .collect();
    let notes = notes(set, &benches, &no_size);
    BatchSweep {
        schema_version: BATCH_SWEEP_SCHEMA_VERSION,
        suite: set.suite.clone(),
        statistic: SWEEP_STATISTIC.into(),
        stop_rule: STOP_RULE.into(),
        resampling: "runs resampled within GPUs".into(),
        resamples: how.resamples,
        seed: how.seed,
        level: how.level,
        batch_sizes: batch_sizes.into_iter().collect(),
        benches,
        notes,
    }
}

/// The best batch and where the sweep stops paying, from the points.
fn sweep_bench(bench: String, gpu_model: Option<String>, points: Vec<SweepPoint>) -> SweepBench {
    // The highest mean; on a tie the smaller batch (it does the same for less memory).
    let best = points
        .iter()
        .fold(None::<&SweepPoint>, |best, p| match best {
            Some(b) if b.items_per_second >= p.items_per_second => Some(b),
            _ => Some(p),
        })
        .map_or(0, |p| p.batch_size);
    let stops_paying_at = points
        .windows(2)
        .find(|w| w[1].gain_ci.is_none_or(|ci| ci[0] <= 1.0))
        .map(|w| w[0].batch_size);
    SweepBench {
        bench,
        gpu_model,
        points,
        best_batch_size: best,
        stops_paying_at,
    }
}

/// Each batch size's mean, interval, ratio to the smallest and gain over the previous.
fn points(by_batch: &ByBatch, names: &[&str; 3], how: &Resampling) -> Vec<SweepPoint> {
    let mut out: Vec<SweepPoint> = Vec::with_capacity(by_batch.len());
    // The resampled means of the smallest batch and of the previous one.
    let mut smallest: Vec<f64> = Vec::new();
    let mut previous: Vec<f64> = Vec::new();
    for (&batch, devices) in by_batch {
        let strata = Strata::new(devices.values().map(|g| g.iter().copied()));
        let mean = strata.mean();
        let label = batch.to_string();
        let mut rng = stream(how.seed, &[names[0], names[1], names[2], &label]);
        let mut means = Vec::with_capacity(how.resamples);
        strata.resample_means(&mut rng, how.resamples, &mut means);
        let interval = |mut v: Vec<f64>, point: f64| {
            percentile_interval(&mut v, how.level).unwrap_or([point, point])
        };
        let ratios = |base: &[f64]| means.iter().zip(base).map(|(a, b)| a / b).collect();
        let (ratio, ratio_ci) = match out.first() {
            None => (1.0, [1.0, 1.0]),
            Some(first) => {
                let r = mean / first.items_per_second;
                (r, interval(ratios(&smallest), r))
            }
        };
        let (gain, gain_ci) = match out.last() {
            None => (None, None),
            Some(last) => {
                let g = mean / last.items_per_second;
                (Some(g), Some(interval(ratios(&previous), g)))
            }
        };
        out.push(SweepPoint {
            batch_size: batch,
            n: strata.n(),
            gpus: strata.gpus(),
            items_per_second: mean,
            ci: interval(means.clone(), mean),
            ratio,
            ratio_ci,
            gain,
            gain_ci,
        });
        if smallest.is_empty() {
            smallest.clone_from(&means);
        }
        previous = means;
    }
    out
}

/// What was read, and what the view leaves out: benches with no batch size, benches at a
/// single one, and the conflicts that remain (entries that differ in more than it).
fn notes(set: &SampleSet, benches: &[SweepBench], no_size: &BTreeMap<String, usize>) -> Vec<String> {
    let s = &set.summary;
    let mut lines = vec![format!(
        "read {} of suite `{}`: {}, {}, {}",
        count(s.files, "file", "files"),
        set.suite,
        s.runs_told_apart,
        count(s.gpus, "GPU", "GPUs"),
        count(s.entries, "entry", "entries")
    )];
    for (bench, n) in no_size {
        lines.push(format!(
            "left out: {bench}: {} record no batch size",
            count(*n, "entry", "entries")
        ));
    }
    for b in benches.iter().filter(|b| b.points.len() == 1) {
        lines.push(format!(
            "one batch size: {} ran at {} only",
            b.label(),
            b.points[0].batch_size
        ));
    }
    for c in &set.conflicts {
        let fields: Vec<&str> = c.differences.iter().map(|d| d.field.as_str()).collect();
        lines.push(format!(
            "conflict: {}: {} set aside, their configuration differs in more than the batch size ({}); e.g. {}",
            c.bench,
            count(c.set_aside, "entry", "entries"),
            fields.join(", "),
            c.examples.join(", ")
        ));
    }
    lines
}
