//! The charts of a grid, a report, runs and loss curves, from the libraries' plain data
//! (analyzer views, the validator's curve groups) to `mlbench_plots` specs; shared by
//! `plot` and the HTML pages, and written to files for `plot`.

use crate::cli::ImageFormat;
use anyhow::Context;
use mlbench_analyzer::SampleSet;
use mlbench_analyzer::compare::Labelled;
use mlbench_analyzer::grid::Grid;
use mlbench_plots::{
    Band, BenchRuns, Chart, Distributions, Estimate, GridBars, Heatmap, LossCurves, LossLine,
    OverallBars, OverallEntry, Series,
};
use mlbench_schema::TargetTable;
use mlbench_validator::rules::loss::{curve_groups, submission_curves};
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

/// Per-GPU relative performance: each GPU's mean over the mean of all GPUs, per bench
/// (the analyzer's view, drawn).
pub fn heatmap_chart(label: &str, set: &SampleSet) -> anyhow::Result<Chart> {
    let view = mlbench_analyzer::views::gpu_relative(set);
    Ok(mlbench_plots::heatmap(&Heatmap {
        title: format!("{label}: each GPU's throughput relative to the mean of all GPUs"),
        rows: view.gpus.iter().map(|g| format!("GPU {g}")).collect(),
        columns: view.benches,
        values: view.values,
        ..Heatmap::default()
    })?)
}

/// Per-run means (over GPUs) of every bench against the GPU model's targets (the
/// analyzer's view, drawn).
pub fn runs_chart(label: &str, set: &SampleSet, targets: &TargetTable) -> anyhow::Result<Chart> {
    let benches = mlbench_analyzer::views::run_means(set, targets)
        .into_iter()
        .map(|r| BenchRuns::new(r.bench, r.means, r.target, "items/s"))
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

/// The loss curves of every bench configuration of a submission: exactly the curves the
/// validator's `loss.divergent` compares, with the band it draws over them (when it has
/// enough curves for one). One chart per bench, or per configuration where a bench ran
/// several.
pub fn loss_charts(sub: &Labelled) -> anyhow::Result<Vec<(String, Chart)>> {
    let read = submission_curves(&sub.sub.intake.files, &sub.sub.set.suite);
    let groups = curve_groups(&read.entries);
    let mut per_bench: BTreeMap<&str, usize> = BTreeMap::new();
    for g in &groups {
        *per_bench.entry(g.bench).or_default() += 1;
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for group in &groups {
        let bench = group.bench;
        let k = seen.entry(bench).or_default();
        *k += 1;
        let (name, which) = match per_bench[bench] {
            1 => (format!("loss-{}-{bench}", sub.label), String::new()),
            n => (
                format!("loss-{}-{bench}-{k}", sub.label),
                format!(" (configuration {k} of {n})"),
            ),
        };
        let band = group.band().map(|(lo, hi)| Band {
            lo,
            hi,
            label: Some("validator's band (q10 − w … q90 + w)".into()),
        });
        let lines = group
            .curves
            .iter()
            .map(|e| {
                let label = format!(
                    "{} {} ({}#{})",
                    read.runs[e.file], e.device, read.files[e.file], e.entry
                );
                LossLine::new(label, e.losses.clone())
            })
            .collect();
        let chart = mlbench_plots::loss_curves(&LossCurves {
            title: format!(
                "{}: {bench} batch loss{which}, {} runs × GPUs",
                sub.label,
                group.curves.len()
            ),
            lines,
            band,
            ..LossCurves::default()
        })
        .with_context(|| format!("loss curves of {bench}"))?;
        out.push((name, chart));
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
    crate::output::create_dir(dir)?;
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
        return Err(crate::output::refusal(path));
    }
    for (path, bytes) in &planned {
        crate::output::emit_bytes(bytes, Some(path), true)?;
    }
    Ok(planned.into_iter().map(|(p, _)| p).collect())
}
