//! `mlbench plot`: the grid, a report, runs, loss curves and power traces as PNG and SVG
//! files.

use crate::cli::{ImageFormat, PlotArgs, PlotKind};
use crate::exit::{CommandError, Outcome};
use crate::output;
use mlbench_analyzer::batch_sweep::{read_sweep, sweep_of};
use mlbench_analyzer::compare::{self, CompareOptions};
use mlbench_analyzer::energy::{self, grid_per};
use mlbench_analyzer::fleet::fleet_plot;
use mlbench_analyzer::views::{gpu_relative, run_means};
use mlbench_export::charts::{ImageFiles, Named, write_charts};
use mlbench_export::charts::{Subject, batch_sweep_charts, runs_chart, scaling_chart};
use mlbench_export::charts::{fleet_chart, gpu_heatmap_chart, grid_charts, loss_charts};
use mlbench_schema::{Scoring, TargetTable};
use mlbench_validator::rules::loss::submission_curves;
use mlbench_validator::rules::loss_view::loss_view;

/// Runs `mlbench plot`.
pub fn run(args: &PlotArgs) -> Result<Outcome, CommandError> {
    if let Some(file) = &args.output {
        return Err(CommandError::Usage(format!(
            "-o/--output {}: plot writes several files; give the folder with --out-dir DIR",
            file.display()
        )));
    }
    output::check_folder(&args.out)?;
    let submissions = &args.submissions;
    if args.kind == PlotKind::Power {
        let loaded = energy::power_traces(submissions, args.compare.size.max_bytes)?;
        loaded.lines().iter().for_each(|line| eprintln!("{line}"));
        return write_and_say(args, &mlbench_export::charts::power_charts(&loaded.traces)?);
    }
    let table =
        |model| TargetTable::load_or_builtin(args.targets.as_deref(), Scoring::Classic, model);
    let targets = args.gpu_model.as_deref().map(table).transpose()?;
    for warning in targets.iter().flat_map(TargetTable::warnings) {
        eprintln!("warning: {warning}");
    }
    if let (PlotKind::BatchSize, Some(t)) = (args.kind, targets.clone()) {
        let (name, max_bytes) = (args.compare.name.as_deref(), args.compare.size.max_bytes);
        let input = (&submissions[..], name, max_bytes);
        let set = read_sweep(input, (t, true), |l| eprintln!("{l}"))?;
        let sweep = sweep_of(&set, 1)?;
        return write_and_say(args, &batch_sweep_charts(&sweep)?);
    }
    let options = CompareOptions::from(&args.compare);
    let loaded = compare::load_all(submissions, &options, compare::Keep::Reports)?;
    let mut charts: Vec<Named> = Vec::new();
    match args.kind {
        PlotKind::Grid => {
            charts = grid_charts(&grid_per(loaded, submissions, &options, None, args.per)?)?
        }
        PlotKind::Report | PlotKind::Runs => {
            let Some(targets) = &targets else {
                let message = "the report and runs plots need --gpu-model MODEL";
                return Err(CommandError::Usage(message.into()));
            };
            for l in &loaded {
                let runs = run_means(&l.sub.set, targets);
                let subject = subject(l);
                if args.kind == PlotKind::Report {
                    // With the whole-machine benches named under it: none left out silently.
                    let view = gpu_relative(&l.sub.set);
                    let name = format!("report-heatmap-{}", l.label);
                    charts.push((name, gpu_heatmap_chart(&subject, &view, &runs)?));
                }
                let chart = runs_chart(&subject, &targets.gpu_model, &runs)?;
                charts.push((format!("runs-{}", l.label), chart));
            }
        }
        PlotKind::Fleet => {
            for l in &loaded {
                let f = fleet_plot(&l.label, &l.sub.set)?;
                let chart = fleet_chart(&subject(l), &f)?;
                charts.push((format!("fleet-{}", l.label), chart));
            }
        }
        PlotKind::Scaling => {
            let table = mlbench_analyzer::scaling::scaling(&loaded)?;
            charts.push(("scaling".into(), scaling_chart(&table)?));
        }
        // `--gpu-model` is required for batch-size (clap).
        PlotKind::Power | PlotKind::BatchSize => unreachable!("drawn above"),
        PlotKind::Loss => {
            for l in &loaded {
                // Exactly the curves the validator's `loss.divergent` compares.
                let groups = loss_view(&submission_curves(&l.sub.intake.files, &l.sub.set.suite));
                eprint!("{}", mlbench_export::charts::loss_notes(&l.label, &groups));
                charts.extend(loss_charts(&subject(l), &groups)?);
            }
        }
    }
    write_and_say(args, &charts)
}

/// A submission as its charts name it: its label, what it ran on and with.
fn subject(l: &compare::Labelled) -> Subject {
    Subject::ran_on(&l.label, Some(&l.hardware()), Some(&l.runtime))
}

/// Writes `charts` into `--out-dir` and says what was written.
fn write_and_say(args: &PlotArgs, charts: &[Named]) -> Result<Outcome, CommandError> {
    if charts.is_empty() {
        return Err(CommandError::Input(
            "nothing to draw: no chart was made".into(),
        ));
    }
    let (png, svg) = (
        args.format != ImageFormat::Svg,
        args.format != ImageFormat::Png,
    );
    let written = write_charts(&args.out, charts, ImageFiles { png, svg }, args.force)?;
    for path in &written {
        eprintln!("wrote {}", path.display());
    }
    let files = mlbench_schema::words::count(written.len(), "file", "files");
    eprintln!("{files} in {}", args.out.display());
    Ok(Outcome::Ok)
}
