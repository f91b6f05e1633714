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
use crate::batch::BATCH_SIZE_FIELD;
use crate::bootstrap::{Strata, percentile_interval, stream, usable};
use crate::load::LoadError;
use crate::result_ci::Resampling;
use crate::samples::SampleSet;
use mlbench_results::batch_sweep::{
    BATCH_SWEEP_SCHEMA_VERSION, BatchSweep, STOP_RULE, SWEEP_STATISTIC, SweepBench, SweepPoint,
};
use mlbench_schema::TargetTable;
use mlbench_schema::words::count;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// What `report --by` lays the figures out by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// The `--batch-size` each entry was given.
    BatchSize,
}

impl By {
    /// `batch_size` (or `batch-size`).
    ///
    /// # Errors
    /// Any other name, with the one accepted.
    pub fn parse(name: &str) -> Result<By, String> {
        match name {
            "batch_size" | "batch-size" => Ok(By::BatchSize),
            other => Err(format!(
                "`{other}`: the report is laid out by `batch_size` only"
            )),
        }
    }
}

/// `targets` with `batch_size` swept: what `report --by batch_size` reads a submission with.
pub fn sweep_targets(targets: TargetTable) -> TargetTable {
    targets.sweeping(BATCH_SIZE_FIELD)
}

/// The samples of the submission at `paths` (of `suite`, or the only one) read with
/// `batch_size` swept ([`sweep_targets`]) within `max_bytes`, as `report --by batch_size`
/// and `plot batch-size` read them; each problem met is a line given to `say`, and
/// unless `skip` they refuse the computation.
///
/// # Errors
/// As [`crate::inputs::read_samples`]; [`LoadError::Refused`] for unreadable entries
/// without `skip`.
pub fn read_sweep(
    (paths, suite, max_bytes): (&[PathBuf], Option<&str>, u64),
    (targets, skip): (TargetTable, bool),
    say: impl Fn(&str),
) -> Result<SampleSet, LoadError> {
    let targets = sweep_targets(targets);
    let loaded = crate::inputs::read_samples(paths, suite, max_bytes, &targets)?;
    let (lines, refused) = loaded.unreadable_lines(skip);
    lines.iter().for_each(|line| say(line));
    refused.map_or(Ok(loaded.set), |why| Err(LoadError::Refused(why)))
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
fn notes(
    set: &SampleSet,
    benches: &[SweepBench],
    no_size: &BTreeMap<String, usize>,
) -> Vec<String> {
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
    // One line for them all: a sweep of one bench leaves every other at one size.
    let several_models = set.models.len() > 1;
    let single: Vec<String> = (benches.iter())
        .filter(|b| b.points.len() == 1)
        .map(|b| {
            let name = if several_models {
                b.label()
            } else {
                b.bench.clone()
            };
            format!("{name} ({})", b.points[0].batch_size)
        })
        .collect();
    if !single.is_empty() {
        lines.push(format!("one batch size only: {}", single.join(", ")));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::Sample;
    use mlbench_schema::{FailureKind, Scoring};

    fn sample(bench: &str, run: u32, device: u32, batch: Option<i64>, value: f64) -> Sample {
        Sample {
            bench: Some(bench.into()),
            run,
            device: Some(device),
            host: None,
            model: Some(0),
            world: None,
            value: Some(value),
            failure: None,
            conflict: false,
            file: 0,
            entry: 0,
            batch_size: batch,
        }
    }

    fn set(samples: Vec<Sample>) -> SampleSet {
        let targets = TargetTable::builtin(Scoring::Classic, "RTX").unwrap();
        let mut set = SampleSet::assemble("fast", &targets, Vec::new(), |_, _| None);
        set.models = vec!["H100".into()];
        set.samples = samples;
        set
    }

    fn how() -> Resampling {
        Resampling {
            resamples: 500,
            seed: 7,
            level: 0.95,
        }
    }

    /// Two GPUs × 3 runs at each batch size: `values[batch][gpu][run]`.
    fn grid(bench: &str, values: &[(i64, [[f64; 3]; 2])]) -> Vec<Sample> {
        let mut out = Vec::new();
        for (batch, gpus) in values {
            for (gpu, runs) in gpus.iter().enumerate() {
                for (run, v) in runs.iter().enumerate() {
                    out.push(sample(bench, run as u32, gpu as u32, Some(*batch), *v));
                }
            }
        }
        out
    }

    #[test]
    fn each_interval_is_the_pooled_mean_bootstrap_of_its_batch_size() {
        let at_64 = [[10.0, 11.0, 12.0], [9.0, 10.0, 14.0]];
        let at_128 = [[18.0, 19.0, 23.0], [17.0, 20.0, 20.0]];
        let s = set(grid("vae", &[(64, at_64), (128, at_128)]));
        let sweep = batch_sweep(&s, &how());
        let vae = &sweep.benches[0];
        assert_eq!(vae.gpu_model.as_deref(), Some("H100"));
        for (p, values) in vae.points.iter().zip([at_64, at_128]) {
            // The same strata and stream as `mean_ci` of the report's `--ci`.
            let groups: Vec<Vec<f64>> = values.iter().map(|g| g.to_vec()).collect();
            let label = p.batch_size.to_string();
            let names = ["fast", "H100", "vae", label.as_str()];
            let m = crate::bootstrap::mean_ci(&groups, &names, 500, 7, 0.95).unwrap();
            assert_eq!(
                (p.items_per_second, p.ci, p.n, p.gpus),
                (m.mean, m.ci, 6, 2)
            );
        }
        // Means 66 / 6 = 11 and 117 / 6 = 19.5.
        assert_eq!(vae.points[1].ratio, 19.5 / 11.0);
        assert_eq!(vae.points[1].gain, Some(19.5 / 11.0));
        let [lo, hi] = vae.points[1].ratio_ci;
        assert!(lo < 19.5 / 11.0 && 19.5 / 11.0 < hi, "{lo} {hi}");
        assert_eq!(vae.points[1].gain_ci, Some(vae.points[1].ratio_ci));
    }

    #[test]
    fn equal_values_give_exact_ratios_and_point_intervals() {
        let s = set(grid(
            "convnet",
            &[
                (32, [[4.0; 3]; 2]),
                (64, [[6.0; 3]; 2]),
                (128, [[6.0; 3]; 2]),
            ],
        ));
        let b = &batch_sweep(&s, &how()).benches[0];
        let ratios: Vec<(f64, [f64; 2])> = b.points.iter().map(|p| (p.ratio, p.ratio_ci)).collect();
        assert_eq!(
            ratios,
            [(1.0, [1.0, 1.0]), (1.5, [1.5, 1.5]), (1.5, [1.5, 1.5])]
        );
        assert_eq!(b.points[2].gain_ci, Some([1.0, 1.0]));
        // 64 and 128 tie: the smaller is best; the step from 64 gains exactly 1, which
        // does not pay.
        assert_eq!((b.best_batch_size, b.stops_paying_at), (64, Some(64)));
    }

    fn point(batch_size: i64, mean: f64, gain_low: Option<f64>) -> SweepPoint {
        SweepPoint {
            batch_size,
            n: 1,
            gpus: 1,
            items_per_second: mean,
            ci: [mean, mean],
            ratio: 1.0,
            ratio_ci: [1.0, 1.0],
            gain: gain_low.map(|_| 1.0),
            gain_ci: gain_low.map(|lo| [lo, lo + 0.1]),
        }
    }

    #[test]
    fn a_sweep_stops_paying_at_the_first_step_whose_gain_interval_reaches_1() {
        let bench = |points| sweep_bench("b".into(), None, points);
        // Pays, then a gain whose interval holds 1 (its mean higher), then pays again.
        let b = bench(vec![
            point(8, 1.0, None),
            point(16, 2.0, Some(1.5)),
            point(32, 2.1, Some(0.99)),
            point(64, 3.0, Some(1.2)),
        ]);
        assert_eq!((b.best_batch_size, b.stops_paying_at), (64, Some(16)));
        let b = bench(vec![point(8, 1.0, None), point(16, 2.0, Some(1.01))]);
        assert_eq!((b.best_batch_size, b.stops_paying_at), (16, None));
        let b = bench(vec![point(8, 1.0, None)]);
        assert_eq!((b.best_batch_size, b.stops_paying_at), (8, None));
    }

    #[test]
    fn failures_conflicts_and_entries_without_a_batch_size_are_left_out() {
        let mut samples = grid("vae", &[(64, [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])]);
        samples[0].failure = Some(FailureKind::NanLoss);
        samples[1].conflict = true;
        samples.push(sample("atari", 0, 0, None, 5.0));
        samples.push(sample("atari", 1, 0, None, 5.0));
        let sweep = batch_sweep(&set(samples), &how());
        assert_eq!(sweep.benches.len(), 1);
        let p = &sweep.benches[0].points[0];
        assert_eq!((p.n, p.items_per_second), (4, 9.0 / 4.0));
        assert!(
            sweep
                .notes
                .contains(&"left out: atari: 2 entries record no batch size".into())
        );
        assert!(
            sweep
                .notes
                .contains(&"one batch size only: vae (64)".into())
        );
        assert_eq!(sweep.batch_sizes, [64]);
    }
}
