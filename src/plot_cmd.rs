//! `mlbench plot`: the grid, a report, runs and loss curves as PNG and SVG files.

use crate::cli::{ImageFormat, PlotArgs, PlotKind};
use crate::grid_cmd::{self, Labelled};
use crate::{Failure, Outcome};
use anyhow::{Context, bail};
use mlbench_analyzer::SampleSet;
use mlbench_analyzer::grid::Grid;
use mlbench_plots::{
    Band, BenchRuns, Chart, Distributions, Estimate, GridBars, Heatmap, LossCurves, LossLine,
    OverallBars, OverallEntry, Series,
};
use mlbench_schema::reader::parse_report;
use mlbench_schema::{Scoring, TargetTable};
use mlbench_validator::layout::{Role, classify};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The grid's two charts: ratios per bench, overall per submission.
pub fn grid_charts(grid: &Grid) -> anyhow::Result<Vec<(String, Chart)>> {
    let name = |v: &mlbench_analyzer::grid::VendorRow| {
        let both = grid
            .vendors
            .iter()
            .any(|o| o.name == v.name && o.track != v.track);
        if both {
            format!("{} ({})", v.name, v.track.as_str())
        } else {
            v.name.clone()
        }
    };
    let benches: Vec<String> = grid
        .benches
        .iter()
        .filter(|b| !grid.unnormalized.contains(b))
        .cloned()
        .collect();
    let series = grid
        .vendors
        .iter()
        .map(|v| {
            let values = benches
                .iter()
                .map(|b| {
                    let c = v.cells.get(b)?;
                    let r = c.ratio?;
                    let [lo, hi] = c.ci.unwrap_or([r, r]);
                    Some(Estimate::new(r, lo.min(r), hi.max(r)))
                })
                .collect();
            Series::new(name(v), values)
        })
        .collect();
    let subtitle = Some(format!(
        "{:.0}% bootstrap intervals ({} resamples, seed {})",
        grid.level * 100.0,
        grid.resamples,
        grid.seed
    ));
    let bars = mlbench_plots::grid_bars(&GridBars {
        title: format!("Throughput relative to {}, by bench", grid.baseline),
        subtitle: subtitle.clone(),
        benches,
        series,
        baseline: grid.baseline.clone(),
        ..GridBars::default()
    })?;
    let entries = grid
        .vendors
        .iter()
        .filter_map(|v| {
            let o = v.overall?;
            let [lo, hi] = v.ci.unwrap_or([o, o]);
            Some(OverallEntry::new(
                name(v),
                Estimate::new(o, lo.min(o), hi.max(o)),
                v.tier.unwrap_or(0) as u32,
            ))
        })
        .collect();
    let overall = mlbench_plots::overall_bars(&OverallBars {
        title: format!("Overall throughput relative to {}", grid.baseline),
        subtitle,
        entries,
        baseline: grid.baseline.clone(),
        ..OverallBars::default()
    })?;
    Ok(vec![
        ("grid-ratios".into(), bars),
        ("grid-overall".into(), overall),
    ])
}

/// Usable values of a sample set by bench and device.
/// (run, value) pairs by device.
type ByDevice = BTreeMap<Option<u32>, Vec<(u32, f64)>>;

fn by_bench_device(set: &SampleSet) -> BTreeMap<&str, ByDevice> {
    let mut out: BTreeMap<&str, ByDevice> = BTreeMap::new();
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

/// Per-GPU relative performance: each GPU's mean over the mean of all GPUs, per bench.
pub fn heatmap_chart(label: &str, set: &SampleSet) -> anyhow::Result<Chart> {
    let data = by_bench_device(set);
    let benches: Vec<&str> = data
        .iter()
        .filter(|(_, d)| d.keys().any(Option::is_some))
        .map(|(b, _)| *b)
        .collect();
    let gpus: Vec<u32> = set.devices.clone();
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
    Ok(mlbench_plots::heatmap(&Heatmap {
        title: format!("{label}: each GPU's throughput relative to the mean of all GPUs"),
        rows: gpus.iter().map(|g| format!("GPU {g}")).collect(),
        columns: benches.iter().map(|b| (*b).to_owned()).collect(),
        values,
        ..Heatmap::default()
    })?)
}

/// Per-run means (over GPUs) of every bench against the GPU model's targets.
pub fn runs_chart(label: &str, set: &SampleSet, targets: &TargetTable) -> anyhow::Result<Chart> {
    let data = by_bench_device(set);
    let benches = data
        .iter()
        .map(|(bench, devices)| {
            let mut per_run: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
            for (run, v) in devices.values().flatten() {
                per_run.entry(*run).or_default().push(*v);
            }
            let values = per_run
                .values()
                .filter_map(|v| mean(v.iter().copied()))
                .collect();
            let target = targets.get(bench).map(|t| t.target);
            BenchRuns::new(*bench, values, target, "items/s")
        })
        .collect();
    Ok(mlbench_plots::distributions(&Distributions {
        title: format!(
            "{label}: throughput of each run (mean over GPUs) against the {} targets",
            targets.gpu_model
        ),
        benches,
        ..Distributions::default()
    })?)
}

/// The loss curves of every bench of a submission, with the validator's band.
pub fn loss_charts(sub: &Labelled) -> anyhow::Result<Vec<(String, Chart)>> {
    let mut curves: BTreeMap<String, Vec<(String, Vec<f64>)>> = BTreeMap::new();
    for file in &sub.sub.intake.files {
        let Role::Report { name, run } = classify(file) else {
            continue;
        };
        if name.suite() != sub.sub.set.suite {
            continue;
        }
        for (i, entry) in parse_report(&file.path, &file.bytes).entries {
            let (Some(bench), None) = (entry.name(), entry.failure(false)) else {
                continue;
            };
            let Some(losses) = entry.get("batch_loss").and_then(|v| v.as_list()) else {
                continue;
            };
            let values: Option<Vec<f64>> = losses.iter().map(|v| v.as_f64()).collect();
            if let Some(values) = values.filter(|v| v.len() >= 2) {
                let gpu = entry.vcd().unwrap_or_default();
                curves
                    .entry(bench.to_owned())
                    .or_default()
                    .push((format!("{run} GPU {gpu} ({}#{i})", file.path), values));
            }
        }
    }
    let mut out = Vec::new();
    for (bench, lines) in curves {
        // The modal length, as the validator compares.
        let mut lengths: BTreeMap<usize, usize> = BTreeMap::new();
        for (_, l) in &lines {
            *lengths.entry(l.len()).or_default() += 1;
        }
        let Some((&len, _)) = lengths.iter().max_by_key(|(l, n)| (**n, **l)) else {
            continue;
        };
        let lines: Vec<(String, Vec<f64>)> =
            lines.into_iter().filter(|(_, l)| l.len() == len).collect();
        let refs: Vec<&[f64]> = lines.iter().map(|(_, l)| l.as_slice()).collect();
        let band = mlbench_validator::rules::loss::display_band(&refs).map(|(lo, hi)| Band {
            lo,
            hi,
            label: Some("validator's band (q10 − w … q90 + w)".into()),
        });
        let chart = mlbench_plots::loss_curves(&LossCurves {
            title: format!(
                "{}: {bench} batch loss, {} runs × GPUs",
                sub.label,
                lines.len()
            ),
            lines: lines
                .into_iter()
                .map(|(label, values)| LossLine::new(label, values))
                .collect(),
            band,
            ..LossCurves::default()
        })
        .with_context(|| format!("loss curves of {bench}"))?;
        out.push((format!("loss-{}-{bench}", sub.label), chart));
    }
    Ok(out)
}

/// Writes charts as `<dir>/<name>.<ext>`, refusing to replace files without `force`.
pub fn write_charts(
    dir: &Path,
    charts: &[(String, Chart)],
    format: ImageFormat,
    force: bool,
) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let mut planned = Vec::new();
    for (name, chart) in charts {
        if matches!(format, ImageFormat::Png | ImageFormat::Both) {
            planned.push((dir.join(format!("{name}.png")), chart.png.as_slice()));
        }
        if matches!(format, ImageFormat::Svg | ImageFormat::Both) {
            planned.push((dir.join(format!("{name}.svg")), chart.svg.as_bytes()));
        }
    }
    // Check every destination first: nothing is written when one would be overwritten.
    if !force && let Some((path, _)) = planned.iter().find(|(p, _)| p.exists()) {
        bail!(
            "{}: already exists; not overwriting it (use --force to replace it)",
            path.display()
        );
    }
    for (path, bytes) in &planned {
        crate::output::emit_bytes(bytes, Some(path), true)?;
    }
    Ok(planned.into_iter().map(|(p, _)| p).collect())
}

/// Runs `mlbench plot`.
pub fn run(args: &PlotArgs) -> Result<Outcome, Failure> {
    let loaded = grid_cmd::load_all(&args.from, &args.compare)?;
    let charts: Vec<(String, Chart)> = match args.kind {
        PlotKind::Grid => {
            let grid = grid_cmd::compute(loaded, &args.compare, None)?;
            grid_charts(&grid)?
        }
        PlotKind::Report | PlotKind::Runs => {
            let targets = TargetTable::builtin(Scoring::Classic, &args.gpu_model)?;
            let mut out = Vec::new();
            for l in &loaded {
                if args.kind == PlotKind::Report {
                    out.push((
                        format!("report-heatmap-{}", l.label),
                        heatmap_chart(&l.label, &l.sub.set)?,
                    ));
                }
                out.push((
                    format!("runs-{}", l.label),
                    runs_chart(&l.label, &l.sub.set, &targets)?,
                ));
            }
            out
        }
        PlotKind::Loss => {
            let mut out = Vec::new();
            for l in &loaded {
                out.extend(loss_charts(l)?);
            }
            out
        }
    };
    let written = write_charts(&args.out, &charts, args.format, args.force)?;
    for path in written {
        eprintln!("wrote {}", path.display());
    }
    Ok(Outcome::Ok)
}
