//! The charts of a grid, a report, runs and loss curves: from the result models (the
//! grid, the analyzer's views, the validator's loss view) to `mlbench_plots` specs,
//! drawn as PNG and SVG. `plot` writes them to files; the HTML pages inline the SVG.

use crate::ExportError;
use crate::rows::grid::{figure, row_name};
use crate::rows::plural;
use mlbench_plots::{
    Band, BenchRuns, Chart, Distributions, Estimate, GridBars, Heatmap, LossCurves, LossLine,
    Measure, OverallBars, OverallEntry, Series, shortened,
};
use mlbench_results::grid::SubmissionRuntime;
use mlbench_results::grid::{Grid, Per, VendorRow};
use mlbench_results::report::Fleet;
use mlbench_results::views::{GpuRelative, LossGroup, RunMeans};
use mlbench_results::{Hardware, Scaling};

mod files;
mod power;
pub use files::{ImageFiles, write_charts};
pub use power::{power_chart, power_charts};

/// A chart with the name of the file it is written under (without extension; made a
/// file name by `mlbench_schema::destination::safe_file_name`). Every name drawn
/// (benches, submissions, GPUs, nodes) is [`shortened`]; the data keeps it whole.
pub type Named = (String, Chart);

/// Whose chart it is: a submission's label, and what it ran on and with, which the
/// chart's subtitle says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    /// The submission's label (the title names it).
    pub label: String,
    /// Its hardware and runtime in a few words (`None`: not known, nothing said).
    pub about: Option<String>,
}

impl Subject {
    /// A subject known by its label alone.
    pub fn named(label: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            about: None,
        }
    }

    /// A subject that ran on `hardware` with `runtime`: `2 × TITAN RTX on vendorA-node ·
    /// mila-iqia/training scripts (torch 2.1)`.
    pub fn ran_on(
        label: impl Into<String>,
        hardware: Option<&Hardware>,
        runtime: Option<&SubmissionRuntime>,
    ) -> Self {
        let parts: Vec<String> = [
            hardware.map(|hw| format!("{} on {}", hw.gpus_label(), hw.hosts_label())),
            runtime.map(SubmissionRuntime::short_label),
        ]
        .into_iter()
        .flatten()
        .collect();
        Self {
            label: label.into(),
            about: (!parts.is_empty()).then(|| parts.join(" · ")),
        }
    }

    /// The subtitle: what it ran on, then `more` (what the chart itself says there).
    fn subtitle(&self, more: Option<String>) -> Option<String> {
        match (&self.about, more) {
            (Some(about), Some(more)) => Some(format!("{about}; {more}")),
            (about, more) => more.or_else(|| about.clone()),
        }
    }
}

/// [`shortened`] as an owned string.
fn short(name: &str) -> String {
    shortened(name).into_owned()
}

fn drawn(what: impl Into<String>) -> impl FnOnce(mlbench_plots::PlotError) -> ExportError {
    let what = what.into();
    move |source| ExportError::Chart { what, source }
}

/// The grid's two charts: ratios per bench, overall per submission.
pub fn grid_charts(grid: &Grid) -> Result<Vec<Named>, ExportError> {
    let runtimes = grid_runtimes(grid);
    let name = |v: &VendorRow| short(&legend_name(v, grid, runtimes.is_none()));
    let benches: Vec<&String> = grid
        .benches
        .iter()
        .filter(|b| !grid.unnormalized.contains(b))
        .collect();
    let series = grid
        .vendors
        .iter()
        .map(|v| {
            let values = benches
                .iter()
                .map(|b| {
                    let c = v.cells.get(b.as_str())?;
                    let r = c.ratio?;
                    let [lo, hi] = c.ci.unwrap_or([r, r]);
                    Some(Estimate::new(r, lo.min(r), hi.max(r)))
                })
                .collect();
            Series::new(name(v), values)
        })
        .collect();
    let mut subtitle = format!(
        "{:.0}% bootstrap intervals ({} resamples, seed {})",
        grid.level * 100.0,
        grid.resamples,
        grid.seed
    );
    if let Some(runtime) = &runtimes {
        subtitle.push_str(&format!("; every submission on {runtime}"));
    }
    let subtitle = Some(subtitle);
    // The per-joule grid is the same chart of another measure: its axes and titles say so.
    let measure = match grid.per {
        Per::Second => Measure::Throughput,
        Per::Joule => Measure::ItemsPerJoule,
    };
    let words = measure.words();
    let what = words[..1].to_uppercase() + &words[1..];
    let baseline = short(&grid.baseline);
    let bars = mlbench_plots::grid_bars(&GridBars {
        title: format!("{what} relative to {baseline}, by bench"),
        subtitle: subtitle.clone(),
        benches: benches.iter().map(|b| short(b)).collect(),
        series,
        baseline: baseline.clone(),
        measure,
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
            let estimate = Estimate::new(o, lo.min(o), hi.max(o));
            let entry = match v.tier {
                Some(t) => OverallEntry::new(name(v), estimate, t as u32),
                None => OverallEntry::untiered(name(v), estimate),
            };
            Some(entry.with_text(figure(o, v.ci)))
        })
        .collect();
    let overall = mlbench_plots::overall_bars(&OverallBars {
        title: format!("Overall {} relative to {baseline}", measure.words()),
        subtitle,
        entries,
        baseline,
        untiered: Some(untiered_heading(grid)),
        measure,
        ..OverallBars::default()
    })
    .map_err(drawn("the grid's overall figures"))?;
    Ok(vec![
        ("grid-ratios".into(), bars),
        ("grid-overall".into(), overall),
    ])
}

/// The runtime every row of `grid` ran on, in a few words; `None` when they differ (or
/// the grid was made without runtimes): then each legend names its own.
fn grid_runtimes(grid: &Grid) -> Option<String> {
    let mut labels = grid.vendors.iter().map(|v| v.runtime.as_ref());
    let first = labels.next()??.short_label();
    labels
        .all(|r| r.is_some_and(|r| r.short_label() == first))
        .then_some(first)
}

/// A row as the charts' legends and labels name it: its name, whether it failed
/// validation, the GPUs it ran on (`2 × TITAN RTX`), and its runtime's program when
/// `each_runtime` (the rows' runtimes differ).
fn legend_name(v: &VendorRow, grid: &Grid, each_runtime: bool) -> String {
    let mut name = row_name(v, grid);
    if v.validity.as_ref().is_some_and(|validity| !validity.passed) {
        name.push_str(" · failed validation");
    }
    if let Some(hw) = v.hardware.as_ref().filter(|hw| !hw.gpus.is_empty()) {
        name.push_str(&format!(" · {}", hw.gpus_label()));
    }
    if let Some(runtime) = v.runtime.as_ref().filter(|_| each_runtime) {
        let program = runtime.runtime.as_ref().map(|r| r.kind.name());
        name.push_str(&format!(
            " · {}",
            program.unwrap_or("mixed or unknown runtime")
        ));
    }
    name
}

/// The heading of the overall chart's untiered rows: why they have no tier.
fn untiered_heading(grid: &Grid) -> String {
    let failed = grid
        .vendors
        .iter()
        .any(|v| v.tier.is_none() && v.validity.as_ref().is_some_and(|validity| !validity.passed));
    match failed {
        true => "not tiered: failed validation".into(),
        false => "not tiered".into(),
    }
}

/// Per-GPU relative performance (each GPU's mean over the mean of all GPUs, per bench),
/// with a note naming the benches of `runs` it has no column for: those that ran on the
/// whole machine (no per-GPU value), so that none disappears unsaid.
pub fn gpu_heatmap_chart(
    subject: &Subject,
    view: &GpuRelative,
    runs: &[RunMeans],
) -> Result<Chart, ExportError> {
    let left_out: Vec<String> = runs
        .iter()
        .map(|r| r.bench.as_str())
        .filter(|b| !view.benches.iter().any(|v| v == b))
        .map(short)
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
        title: format!(
            "{}: each GPU's throughput relative to the mean of all GPUs",
            shortened(&subject.label)
        ),
        subtitle: subject.subtitle(None),
        rows: view.names.iter().map(|n| short(n)).collect(),
        columns: view.benches.iter().map(|b| short(b)).collect(),
        values: view.values.clone(),
        note,
        ..Heatmap::default()
    })
    .map_err(drawn("the per-GPU heatmap"))
}

/// Per-run means (over GPUs) of every bench against the GPU model's targets.
pub fn runs_chart(
    subject: &Subject,
    gpu_model: &str,
    runs: &[RunMeans],
) -> Result<Chart, ExportError> {
    let benches = runs
        .iter()
        .map(|r| BenchRuns::new(short(&r.bench), r.means.clone(), r.target, "items/s"))
        .collect();
    mlbench_plots::distributions(&Distributions {
        title: format!(
            "{}: throughput of each run (mean over GPUs) against the {} targets",
            shortened(&subject.label),
            shortened(gpu_model)
        ),
        subtitle: subject.subtitle(None),
        benches,
        ..Distributions::default()
    })
    .map_err(drawn("the runs chart"))
}

/// The loss curves of every bench configuration of a submission: exactly the curves the
/// validator's `loss.divergent` compares, with the band it draws over them (when it has
/// enough curves for one). One chart per bench, or per configuration where a bench ran
/// several.
pub fn loss_charts(subject: &Subject, groups: &[LossGroup]) -> Result<Vec<Named>, ExportError> {
    let label = subject.label.as_str();
    let mut out = Vec::new();
    for group in groups {
        let bench = &group.bench;
        let (name, which) = match group.configuration {
            None => (format!("loss-{}-{bench}", label), String::new()),
            Some((k, n)) => (
                format!("loss-{}-{bench}-{k}", label),
                format!(" (configuration {k} of {n})"),
            ),
        };
        let band = group.band.clone().map(|(lo, hi)| Band {
            lo,
            hi,
            label: Some("validator's band (q10 − w − t … q90 + w + t)".into()),
        });
        let lines = group
            .curves
            .iter()
            .map(|c| {
                let label = short(&format!("{} {} ({}#{})", c.run, c.device, c.file, c.entry));
                // Colour by run, dash by device: 8 runs × 4 devices stay distinct.
                LossLine::new(label, c.losses.clone()).grouped(c.run.clone(), c.device.clone())
            })
            .collect();
        let chart = mlbench_plots::loss_curves(&LossCurves {
            title: format!(
                "{}: {} batch loss{which}, {}",
                shortened(label),
                shortened(bench),
                coverage(group)
            ),
            subtitle: subject.subtitle(
                (!group.left_out.is_empty())
                    .then(|| format!("left out: {}", group.left_out.join("; "))),
            ),
            lines,
            band,
            ..LossCurves::default()
        })
        .map_err(drawn(format!("the loss curves of {}", shortened(bench))))?;
        out.push((name, chart));
    }
    Ok(out)
}

/// The curves `loss_charts` leaves out of `groups`, a line each
/// (`note: LABEL BENCH: left out: output0 GPU 0 (NaN or infinite loss)`).
pub fn loss_notes(label: &str, groups: &[LossGroup]) -> String {
    let notes = groups
        .iter()
        .flat_map(|g| g.left_out.iter().map(move |w| (g, w)));
    notes
        .map(|(g, why)| format!("note: {label} {}: left out: {why}\n", g.bench))
        .collect()
}

/// What a group's curves cover, counted: `5 runs × 4 GPUs`, `1 run on the whole
/// machine`, with the number of curves when some are missing.
fn coverage(group: &LossGroup) -> String {
    let (runs, devices) = (group.runs, &group.devices);
    let mut out = match devices.first() {
        Some(d) if !group.gpus_only && devices.len() == 1 => {
            format!("{} on {d}", plural(runs, "run"))
        }
        _ => format!(
            "{} × {}",
            plural(runs, "run"),
            plural(
                devices.len(),
                if group.gpus_only { "GPU" } else { "device" }
            )
        ),
    };
    if group.curves.len() != runs * devices.len() {
        out.push_str(&format!(" ({})", plural(group.curves.len(), "curve")));
    }
    out
}

/// A fleet's nodes against the median node, with their intervals; flagged nodes are
/// named `SLOW`.
pub fn fleet_chart(subject: &Subject, fleet: &Fleet) -> Result<Chart, ExportError> {
    let label = subject.label.as_str();
    let entries = fleet
        .nodes
        .iter()
        .map(|n| {
            let name = if n.flagged {
                format!("{} — SLOW", shortened(&n.node))
            } else {
                short(&n.node)
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
        title: format!(
            "{}: each node's throughput relative to the median node",
            shortened(label)
        ),
        subtitle: subject.subtitle(Some(format!(
            "geometric mean over benches, 95% bootstrap intervals ({} resamples, seed {}); p10 {:.3}, {:.0}% of nodes within 5%",
            fleet.resamples,
            fleet.seed,
            fleet.p10,
            fleet.within_5pct * 100.0
        ))),
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
                format!("{} ({})", shortened(&r.label), plural(r.devices, "device")),
                values,
            )
        })
        .collect();
    mlbench_plots::grid_bars(&GridBars {
        title: format!(
            "Scaling efficiency from {}, by bench",
            shortened(&scaling.reference)
        ),
        subtitle: Some(
            "throughput ÷ (devices × the reference's per-device throughput): 1 is linear".into(),
        ),
        benches: scaling.benches.iter().map(|b| short(b)).collect(),
        series,
        baseline: "linear scaling".into(),
        y_label: Some("efficiency against linear scaling (log scale)".into()),
        ..GridBars::default()
    })
    .map_err(drawn("the scaling chart"))
}

/// The batch-size view: one chart per GPU model, a line per bench of its items/s against
/// batch size with each point's interval, its best batch drawn larger. Named
/// `batch-size-<model>`.
pub fn batch_sweep_charts(s: &mlbench_results::BatchSweep) -> Result<Vec<Named>, ExportError> {
    let level = format!("{}%", (s.level * 100.0).round());
    s.gpu_models()
        .into_iter()
        .map(|model| {
            let lines = (s.benches.iter())
                .filter(|b| b.gpu_model.as_deref() == model)
                .map(|b| mlbench_plots::SweepLine {
                    label: short(&b.bench),
                    points: (b.points.iter())
                        .map(|p| {
                            let [lo, hi] = p.ci;
                            (p.batch_size as f64, Estimate::new(p.items_per_second, lo, hi))
                        })
                        .collect(),
                    marked: Some(b.best_batch_size as f64),
                })
                .collect();
            let name = crate::rows::batch_sweep::model_name(model);
            let chart = mlbench_plots::sweep_lines(&mlbench_plots::SweepLines {
                title: format!("Throughput by batch size on {}", shortened(&name)),
                subtitle: Some(format!(
                    "suite `{}`: mean items/s of one GPU with its {level} bootstrap interval; the larger dot is each bench's best batch",
                    shortened(&s.suite)
                )),
                lines,
                ..mlbench_plots::SweepLines::default()
            })
            .map_err(drawn("the batch-size chart"))?;
            let file = model.map_or_else(|| "unnamed-gpu".into(), str::to_owned);
            Ok((format!("batch-size-{file}"), chart))
        })
        .collect()
}

#[cfg(test)]
mod tests;

/// A store's history, one chart (panel) per bench: the rounds along the x axis, one
/// series per label × track × hardware, each point its mean with its interval, divided
/// by the series' first mean (so series of different magnitudes share a panel, and a
/// bar's height is the change since that series' first round).
pub fn history_charts(
    history: &mlbench_results::history::History,
) -> Result<Vec<Named>, ExportError> {
    let mut benches: Vec<&str> = history.series.iter().map(|s| s.bench.as_str()).collect();
    benches.sort_unstable();
    benches.dedup();
    let subtitle = format!(
        "{:.0}% bootstrap intervals ({} resamples, seed {}); each series divided by its first round's mean",
        history.level * 100.0,
        history.resamples,
        history.seed
    );
    let mut charts = Vec::with_capacity(benches.len());
    for bench in benches {
        let series = (history.series.iter().filter(|s| s.bench == bench))
            .map(|s| {
                let first = s.points.first().map_or(1.0, |p| p.mean);
                let values = (history.rounds.iter())
                    .map(|round| {
                        let p = s.points.iter().find(|p| &p.round == round)?;
                        let r = p.mean / first;
                        let (lo, hi) = (p.ci[0] / first, p.ci[1] / first);
                        Some(Estimate::new(r, lo.min(r), hi.max(r)))
                    })
                    .collect();
                let name = match s.track.as_str() {
                    "baseline" => format!("{} · {}", s.label, s.hardware),
                    track => format!("{}/{track} · {}", s.label, s.hardware),
                };
                Series::new(short(&name), values)
            })
            .collect();
        let bars = mlbench_plots::grid_bars(&GridBars {
            title: format!("{}: throughput by round", short(bench)),
            subtitle: Some(subtitle.clone()),
            benches: history.rounds.iter().map(|r| short(r)).collect(),
            series,
            baseline: "each series' first round".into(),
            y_label: Some("throughput relative to the series' first round (log scale)".into()),
            ..GridBars::default()
        })
        .map_err(drawn(format!("the history of {bench}")))?;
        charts.push((format!("history-{bench}"), bars));
    }
    Ok(charts)
}
