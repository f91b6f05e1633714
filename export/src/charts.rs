//! The charts of a grid, a report, runs and loss curves: from the result models (the
//! grid, the analyzer's views, the validator's curve groups) to `mlbench_plots` specs,
//! drawn as PNG and SVG. `plot` writes them to files; the HTML pages inline the SVG.

use crate::ExportError;
use crate::rows::grid::{figure, row_name};
use crate::rows::plural;
use mlbench_plots::{
    Band, BenchRuns, Chart, Distributions, Estimate, GridBars, Heatmap, LossCurves, LossLine,
    OverallBars, OverallEntry, Series,
};
use mlbench_results::Scaling;
use mlbench_results::grid::{Grid, VendorRow};
use mlbench_results::report::Fleet;
use mlbench_results::views::{GpuRelative, RunMeans};
use mlbench_validator::facts::{Device, EntryFacts};
use mlbench_validator::rules::loss::{CurveGroup, SubmissionCurves, curve_groups};
use std::collections::{BTreeMap, BTreeSet};

/// A chart with the file name it is written under (without extension).
pub type Named = (String, Chart);

fn drawn(what: impl Into<String>) -> impl FnOnce(mlbench_plots::PlotError) -> ExportError {
    let what = what.into();
    move |source| ExportError::Chart { what, source }
}

/// The grid's two charts: ratios per bench, overall per submission.
pub fn grid_charts(grid: &Grid) -> Result<Vec<Named>, ExportError> {
    let name = |v: &VendorRow| row_name(v, grid);
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
    })
    .map_err(drawn("the grid's ratios"))?;
    let entries = grid
        .vendors
        .iter()
        .filter_map(|v| {
            let o = v.overall?;
            let [lo, hi] = v.ci.unwrap_or([o, o]);
            // Printed as the overall table prints it.
            let entry = OverallEntry::new(
                name(v),
                Estimate::new(o, lo.min(o), hi.max(o)),
                v.tier.unwrap_or(0) as u32,
            );
            Some(entry.with_text(figure(o, v.ci)))
        })
        .collect();
    let overall = mlbench_plots::overall_bars(&OverallBars {
        title: format!("Overall throughput relative to {}", grid.baseline),
        subtitle,
        entries,
        baseline: grid.baseline.clone(),
        ..OverallBars::default()
    })
    .map_err(drawn("the grid's overall figures"))?;
    Ok(vec![
        ("grid-ratios".into(), bars),
        ("grid-overall".into(), overall),
    ])
}

/// Per-GPU relative performance (each GPU's mean over the mean of all GPUs, per bench),
/// with a note naming the benches of `runs` it has no column for: those that ran on the
/// whole machine (no per-GPU value), so that none disappears unsaid.
pub fn gpu_heatmap_chart(
    label: &str,
    view: &GpuRelative,
    runs: &[RunMeans],
) -> Result<Chart, ExportError> {
    let left_out: Vec<&str> = runs
        .iter()
        .map(|r| r.bench.as_str())
        .filter(|b| !view.benches.iter().any(|v| v == b))
        .collect();
    let note = (!left_out.is_empty()).then(|| {
        format!(
            "not per GPU: {} (whole-machine {}, no per-GPU value)",
            left_out.join(", "),
            if left_out.len() == 1 {
                "bench"
            } else {
                "benches"
            }
        )
    });
    mlbench_plots::heatmap(&Heatmap {
        title: format!("{label}: each GPU's throughput relative to the mean of all GPUs"),
        rows: view.names.clone(),
        columns: view.benches.clone(),
        values: view.values.clone(),
        note,
        ..Heatmap::default()
    })
    .map_err(drawn("the per-GPU heatmap"))
}

/// Per-run means (over GPUs) of every bench against the GPU model's targets.
pub fn runs_chart(label: &str, gpu_model: &str, runs: &[RunMeans]) -> Result<Chart, ExportError> {
    let benches = runs
        .iter()
        .map(|r| BenchRuns::new(r.bench.clone(), r.means.clone(), r.target, "items/s"))
        .collect();
    mlbench_plots::distributions(&Distributions {
        title: format!(
            "{label}: throughput of each run (mean over GPUs) against the {gpu_model} targets"
        ),
        benches,
        ..Distributions::default()
    })
    .map_err(drawn("the runs chart"))
}

/// The loss curves of every bench configuration of a submission: exactly the curves the
/// validator's `loss.divergent` compares, with the band it draws over them (when it has
/// enough curves for one). One chart per bench, or per configuration where a bench ran
/// several.
pub fn loss_charts(label: &str, read: &SubmissionCurves) -> Result<Vec<Named>, ExportError> {
    let groups = curve_groups(&read.entries);
    let runs = Runs::new(read);
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
            1 => (format!("loss-{}-{bench}", label), String::new()),
            n => (
                format!("loss-{}-{bench}-{k}", label),
                format!(" (configuration {k} of {n})"),
            ),
        };
        let band = group.band().map(|(lo, hi)| Band {
            lo,
            hi,
            label: Some("validator's band (q10 − w − t … q90 + w + t)".into()),
        });
        let lines = group
            .curves
            .iter()
            .map(|e| {
                let (run, device) = (runs.of(e), e.device.to_string());
                let file = read.files.get(e.file).map_or("?", String::as_str);
                let label = format!("{run} {device} ({file}#{})", e.entry);
                // Colour by run, dash by device: 8 runs × 4 devices stay distinct.
                LossLine::new(label, e.losses.to_vec()).grouped(run, device)
            })
            .collect();
        let chart = mlbench_plots::loss_curves(&LossCurves {
            title: format!(
                "{}: {bench} batch loss{which}, {}",
                label,
                coverage(group, &runs)
            ),
            lines,
            band,
            ..LossCurves::default()
        })
        .map_err(drawn(format!("the loss curves of {bench}")))?;
        out.push((name, chart));
    }
    Ok(out)
}

/// The runs of a submission's curves.
struct Runs<'a> {
    read: &'a SubmissionCurves,
    /// Files whose entries carry several `run_id`s (streams of several runs).
    shared: BTreeSet<usize>,
}

impl<'a> Runs<'a> {
    fn new(read: &'a SubmissionCurves) -> Self {
        let mut ids: BTreeMap<usize, BTreeSet<Option<&str>>> = BTreeMap::new();
        for e in &read.entries {
            ids.entry(e.file).or_default().insert(e.run_id.as_deref());
        }
        let shared = ids
            .into_iter()
            .filter(|(_, ids)| ids.len() > 1)
            .map(|(file, _)| file)
            .collect();
        Self { read, shared }
    }

    /// A curve's run: its file's run, with the entry's `run_id` where a stream holds
    /// several runs.
    fn of(&self, e: &EntryFacts) -> String {
        let run = self.read.runs.get(e.file).map_or("?", String::as_str);
        match &e.run_id {
            Some(id) if self.shared.contains(&e.file) => format!("{run} {id}"),
            _ => run.to_owned(),
        }
    }
}

/// What a group's curves cover, counted: `5 runs × 4 GPUs`, `1 run on the whole
/// machine`, with the number of curves when some are missing.
fn coverage(group: &CurveGroup, runs: &Runs) -> String {
    let runs: BTreeSet<String> = group.curves.iter().map(|e| runs.of(e)).collect();
    let devices: BTreeSet<Device> = group.curves.iter().map(|e| e.device).collect();
    let gpus_only = devices.iter().all(|d| matches!(d, Device::Gpu(_)));
    let mut out = match devices.first() {
        Some(d) if !gpus_only && devices.len() == 1 => {
            format!("{} on {d}", plural(runs.len(), "run"))
        }
        _ => format!(
            "{} × {}",
            plural(runs.len(), "run"),
            plural(devices.len(), if gpus_only { "GPU" } else { "device" })
        ),
    };
    if group.curves.len() != runs.len() * devices.len() {
        out.push_str(&format!(" ({})", plural(group.curves.len(), "curve")));
    }
    out
}

/// A fleet's nodes against the median node, with their intervals; flagged nodes are
/// named `SLOW`.
pub fn fleet_chart(label: &str, fleet: &Fleet) -> Result<Chart, ExportError> {
    let entries = fleet
        .nodes
        .iter()
        .map(|n| {
            let name = if n.flagged {
                format!("{} — SLOW", n.node)
            } else {
                n.node.clone()
            };
            let estimate = Estimate::new(
                n.relative,
                n.ci_low.min(n.relative),
                n.ci_high.max(n.relative),
            );
            // Printed as the fleet table prints it.
            let text = figure(n.relative, Some([n.ci_low, n.ci_high]));
            OverallEntry::new(name, estimate, 1).with_text(text)
        })
        .collect();
    mlbench_plots::overall_bars(&OverallBars {
        title: format!("{label}: each node's throughput relative to the median node"),
        subtitle: Some(format!(
            "geometric mean over benches, 95% bootstrap intervals ({} resamples, seed {}); p10 {:.3}, {:.0}% of nodes within 5%",
            fleet.resamples,
            fleet.seed,
            fleet.p10,
            fleet.within_5pct * 100.0
        )),
        entries,
        baseline: "median node".into(),
        x_label: Some("throughput relative to the median node (log scale)".into()),
        ..OverallBars::default()
    })
    .map_err(drawn("the fleet chart"))
}

/// A scaling study: each size's efficiency against linear scaling, per bench (1 is
/// linear; the reference size is 1 by definition).
pub fn scaling_chart(scaling: &Scaling) -> Result<Chart, ExportError> {
    let series = scaling
        .rows
        .iter()
        .map(|r| {
            let values = scaling
                .benches
                .iter()
                .map(|b| {
                    let e = r.benches.get(b)?.efficiency?;
                    Some(Estimate::new(e, e, e))
                })
                .collect();
            Series::new(
                format!("{} ({})", r.label, plural(r.devices, "device")),
                values,
            )
        })
        .collect();
    mlbench_plots::grid_bars(&GridBars {
        title: format!("Scaling efficiency from {}, by bench", scaling.reference),
        subtitle: Some(
            "throughput ÷ (devices × the reference's per-device throughput): 1 is linear".into(),
        ),
        benches: scaling.benches.clone(),
        series,
        baseline: "linear scaling".into(),
        y_label: Some("efficiency against linear scaling (log scale)".into()),
        ..GridBars::default()
    })
    .map_err(drawn("the scaling chart"))
}

#[cfg(test)]
mod tests;
