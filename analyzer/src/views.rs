//! Plain-data views of one submission's samples, for the charts of `plot` and the HTML
//! pages: the per-GPU relative means (heatmap) and the per-run means (runs chart). Only
//! usable samples count (a value, no failure, no configuration conflict). The plots crate
//! draws them; nothing here knows of charts.

use crate::samples::SampleSet;
pub use mlbench_results::views::{GpuRelative, RunMeans};
use mlbench_schema::TargetTable;
use std::collections::BTreeMap;

/// (run, value) pairs by device, by bench.
type ByDevice<'a> = BTreeMap<&'a str, BTreeMap<Option<u32>, Vec<(u32, f64)>>>;

fn by_bench_device(set: &SampleSet) -> ByDevice<'_> {
    let mut out: ByDevice = BTreeMap::new();
    for s in &set.samples {
        if let (Some(bench), Some(value), None, false) = (&s.bench, s.value, s.failure, s.conflict)
        {
            out.entry(bench)
                .or_default()
                .entry(s.device)
                .or_default()
                .push((s.run, value));
        }
    }
    out
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// The per-GPU relative means of `set`.
pub fn gpu_relative(set: &SampleSet) -> GpuRelative {
    let data = by_bench_device(set);
    let benches: Vec<&str> = data
        .iter()
        .filter(|(_, d)| d.keys().any(Option::is_some))
        .map(|(b, _)| *b)
        .collect();
    let gpus = set.devices.clone();
    let values = gpus
        .iter()
        .map(|g| {
            benches
                .iter()
                .map(|b| {
                    let d = &data[b];
                    let all = mean(d.values().flatten().map(|(_, v)| *v))?;
                    let gpu = mean(d.get(&Some(*g))?.iter().map(|(_, v)| *v))?;
                    Some(gpu / all)
                })
                .collect()
        })
        .collect();
    GpuRelative {
        names: gpus
            .iter()
            .map(|g| format!("GPU {}", set.gpu_label(*g)))
            .collect(),
        gpus,
        benches: benches.into_iter().map(str::to_owned).collect(),
        values,
    }
}

/// The per-run means (over GPUs) of every bench of `set`, sorted by bench, with the
/// targets of `targets`.
pub fn run_means(set: &SampleSet, targets: &TargetTable) -> Vec<RunMeans> {
    by_bench_device(set)
        .into_iter()
        .map(|(bench, devices)| {
            let mut per_run: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
            for (run, v) in devices.values().flatten() {
                per_run.entry(*run).or_default().push(*v);
            }
            RunMeans {
                bench: bench.to_owned(),
                means: per_run
                    .values()
                    .filter_map(|v| mean(v.iter().copied()))
                    .collect(),
                target: targets.get(bench).map(|t| t.target),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::Sample;
    use mlbench_schema::{FailureKind, Scoring};

    fn sample(bench: &str, run: u32, device: Option<u32>, value: f64) -> Sample {
        Sample {
            bench: Some(bench.into()),
            run,
            device,
            host: None,
            model: None,
            world: None,
            value: Some(value),
            failure: None,
            conflict: false,
            file: 0,
            entry: 0,
            batch_size: None,
        }
    }

    fn set(samples: Vec<Sample>) -> SampleSet {
        let targets = TargetTable::builtin(Scoring::Classic, "RTX").unwrap();
        let mut set = SampleSet::assemble("fast", &targets, Vec::new(), |_, _| None);
        set.devices = vec![0, 1];
        set.samples = samples;
        set
    }

    #[test]
    fn relative_means_per_gpu() {
        let mut failed = sample("vae", 0, Some(1), 1000.0);
        failed.failure = Some(FailureKind::NanLoss);
        let mut conflict = sample("vae", 1, Some(1), 1000.0);
        conflict.conflict = true;
        let s = set(vec![
            sample("vae", 0, Some(0), 10.0),
            sample("vae", 1, Some(0), 14.0),
            sample("vae", 0, Some(1), 6.0),
            failed,
            conflict,
            sample("atari", 0, Some(0), 2.0),
            // A whole-machine entry counts in the mean of all, on no GPU's row.
            sample("scaling", 0, None, 5.0),
        ]);
        let view = gpu_relative(&s);
        assert_eq!(view.gpus, [0, 1]);
        assert_eq!(view.benches, ["atari", "vae"]);
        // vae: all = 10, GPU 0 = 12, GPU 1 = 6; atari: GPU 0 only.
        assert_eq!(
            view.values,
            [vec![Some(1.0), Some(1.2)], vec![None, Some(0.6)]]
        );
    }

    #[test]
    fn per_run_means_over_gpus_with_targets() {
        let targets = TargetTable::builtin(Scoring::Classic, "RTX").unwrap();
        let s = set(vec![
            sample("vae", 1, Some(0), 10.0),
            sample("vae", 0, Some(1), 6.0),
            sample("vae", 1, Some(1), 14.0),
            sample("nope", 0, Some(0), 1.0),
        ]);
        let runs = run_means(&s, &targets);
        assert_eq!(runs.len(), 2);
        assert_eq!((runs[0].bench.as_str(), runs[0].target), ("nope", None));
        assert_eq!(runs[1].bench, "vae");
        assert_eq!(runs[1].means, [6.0, 12.0]);
        assert_eq!(runs[1].target, targets.get("vae").map(|t| t.target));
        assert!(runs[1].target.is_some());
    }
}
