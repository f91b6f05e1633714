//! `mlbench plot`: the grid, a report, runs and loss curves as PNG and SVG files.

use crate::cli::{ImageFormat, PlotArgs, PlotKind};
use crate::exit::{CommandError, Outcome};
use crate::output;
use mlbench_analyzer::compare::{self, CompareOptions};
use mlbench_analyzer::fleet::{FleetOptions, fleet};
use mlbench_analyzer::views::{gpu_relative, run_means};
use mlbench_export::charts::{
    Named, fleet_chart, grid_charts, heatmap_chart, loss_charts, runs_chart, scaling_chart,
};
use mlbench_schema::{Scoring, TargetTable};
use mlbench_validator::rules::loss::submission_curves;
use std::path::{Path, PathBuf};

/// Runs `mlbench plot`.
pub fn run(args: &PlotArgs) -> Result<Outcome, CommandError> {
    let options = CompareOptions::from(&args.compare);
    let loaded = compare::load_all(&args.from, &options, compare::Keep::Reports)?;
    let mut charts: Vec<Named> = Vec::new();
    match args.kind {
        PlotKind::Grid => charts = grid_charts(&compare::compute(loaded, &options, None)?)?,
        PlotKind::Report | PlotKind::Runs => {
            let targets = TargetTable::builtin(Scoring::Classic, &args.gpu_model)?;
            for l in &loaded {
                if args.kind == PlotKind::Report {
                    let view = gpu_relative(&l.sub.set);
                    let name = format!("report-heatmap-{}", l.label);
                    charts.push((name, heatmap_chart(&l.label, &view)?));
                }
                let runs = run_means(&l.sub.set, &targets);
                let chart = runs_chart(&l.label, &targets.gpu_model, &runs)?;
                charts.push((format!("runs-{}", l.label), chart));
            }
        }
        PlotKind::Fleet => {
            for l in &loaded {
                match fleet(&l.sub.set, &FleetOptions::default()) {
                    Some(f) => {
                        charts.push((format!("fleet-{}", l.label), fleet_chart(&l.label, &f)?))
                    }
                    None => eprintln!("{}: its entries name one host: no fleet to plot", l.label),
                }
            }
        }
        PlotKind::Scaling => {
            let table = mlbench_analyzer::scaling::scaling(&loaded)?;
            charts.push(("scaling".into(), scaling_chart(&table)?));
        }
        PlotKind::Loss => {
            for l in &loaded {
                // Exactly the curves the validator's `loss.divergent` compares.
                let curves = submission_curves(&l.sub.intake.files, &l.sub.set.suite);
                charts.extend(loss_charts(&l.label, &curves)?);
            }
        }
    }
    for path in write_charts(&args.out, &charts, args.format, args.force)? {
        eprintln!("wrote {}", path.display());
    }
    Ok(Outcome::Ok)
}

/// Writes charts as `<dir>/<name>.<ext>`, refusing to replace files without `force`.
fn write_charts(
    dir: &Path,
    charts: &[Named],
    format: ImageFormat,
    force: bool,
) -> anyhow::Result<Vec<PathBuf>> {
    output::create_dir(dir)?;
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
    output::refuse_existing(planned.iter().map(|(p, _)| p), force)?;
    for (path, bytes) in &planned {
        output::emit_bytes(bytes, Some(path), true)?;
    }
    Ok(planned.into_iter().map(|(p, _)| p).collect())
}
