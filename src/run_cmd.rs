//! `mlbench run` (feature `runner`): execute a jobs file with the tch models and write the
//! suite's report streams, `summary.txt`, and optionally the packed zip.

use crate::cli::RunArgs;
use crate::{Failure, Outcome};
use anyhow::{Context, anyhow};
use mlbench_runner::devices::DeviceSet;
use mlbench_runner::execute::{ExecuteOptions, Progress, execute_all};
use mlbench_runner::models::Models;
use mlbench_runner::plan::{PlanOptions, jobs_name, plan_runs};
use mlbench_runner::slurm::{SlurmOptions, sbatch_script};
use mlbench_runner::timing::{Clock, RealClock};
use mlbench_schema::jobs::JobsFile;

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn visible_gpus() -> u32 {
    u32::try_from(tch::Cuda::device_count().max(0)).unwrap_or(0)
}

/// Runs `mlbench run`.
pub fn run(args: &RunArgs) -> Result<Outcome, Failure> {
    let jobs = JobsFile::load(&args.jobs)?;
    let devices = DeviceSet::from_flag(args.devices.as_deref(), visible_gpus(), cores())?;
    if args.repeat_suite == 0 {
        return Err(anyhow!("--repeat-suite must be at least 1").into());
    }
    if args.slurm {
        let script = sbatch_script(&SlurmOptions {
            mlbench: std::env::args().next().unwrap_or_else(|| "mlbench".into()),
            jobs: args.jobs.clone(),
            names: args.name.clone(),
            devices,
            nodes: args.nodes,
            repeat_suite: args.repeat_suite,
            out: args.out.clone(),
            partition: None,
            time: None,
        });
        crate::output::emit(&script, None, false)?;
        return Ok(Outcome::Ok);
    }
    let options = PlanOptions {
        jobs_name: jobs_name(&args.jobs),
        names: args.name.clone(),
        devices,
        out: args.out.clone(),
        run: 0,
        env: std::env::vars().collect(),
    };
    let plans = plan_runs(&jobs, &options, args.repeat_suite)?;
    if args.dry_run {
        let text: String = plans.iter().map(|p| format!("{p}\n")).collect();
        crate::output::emit(&text, None, false)?;
        return Ok(Outcome::Ok);
    }
    let total: u64 = plans.iter().map(|p| p.executions.len() as u64).sum();
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} configs · {elapsed} · ETA {eta} · {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let clock = || -> Box<dyn Clock> { Box::new(RealClock::default()) };
    let progress = |p: &Progress<'_>| {
        if let Progress::Finished { line, .. } = p {
            bar.inc(1);
            bar.set_message(line.trim().to_owned());
        }
    };
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "localhost".into());
    let outcomes = execute_all(
        &plans,
        &Models,
        &ExecuteOptions {
            hostname,
            clock: &clock,
            progress: &progress,
        },
    )
    .context("writing the run's output")?;
    bar.finish_and_clear();
    let failed: usize = outcomes.iter().map(|o| o.failed).sum();
    let passed: usize = outcomes.iter().map(|o| o.passed).sum();
    let entries: usize = outcomes.iter().map(|o| o.entries).sum();
    for o in &outcomes {
        for f in &o.failures {
            eprintln!("failed: {} on {}: {}", f.name, f.vcd, f.message);
        }
    }
    eprintln!(
        "{passed} configurations passed, {failed} failed; {entries} entries in {}",
        args.out.display()
    );
    Ok(if failed > 0 {
        Outcome::Failed
    } else {
        Outcome::Ok
    })
}
