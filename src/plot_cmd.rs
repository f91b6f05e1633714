//! `mlbench plot`: the grid, a report, runs and loss curves as PNG and SVG files.

use crate::charts::{grid_charts, heatmap_chart, loss_charts, runs_chart, write_charts};
use crate::cli::{PlotArgs, PlotKind};
use crate::{Failure, Outcome};
use mlbench_analyzer::compare::{self, CompareOptions};
use mlbench_plots::Chart;
use mlbench_schema::{Scoring, TargetTable};

/// Runs `mlbench plot`.
pub fn run(args: &PlotArgs) -> Result<Outcome, Failure> {
    let options = CompareOptions::from(&args.compare);
    let loaded = compare::load_all(&args.from, &options)?;
    let charts: Vec<(String, Chart)> = match args.kind {
        PlotKind::Grid => {
            let grid = compare::compute(loaded, &options, None)?;
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
