//! `mlbench run` (feature `runner`): execute a jobs file with the tch models and write the
//! suite's report streams, `summary.txt`, and optionally the packed zip.

use super::tool;
use crate::cli::RunArgs;
use crate::exit::{CommandError, Outcome, RunError};
use crate::output;
use mlbench_analyzer::anytime::MIN_RUNS;
use mlbench_analyzer::until::Until;
use mlbench_export::rows::report::until_line;
use mlbench_runner::copies::{ChildCommand, CopySpec, Ranks, launch, run_child};
use mlbench_runner::devices::DeviceSet;
use mlbench_runner::execute::{ExecuteOptions, Progress, RunOutcome, execute_all};
use mlbench_runner::models::Models;
use mlbench_runner::plan::{Execution, Plan, PlanError, PlanOptions, jobs_name, plan_runs};
use mlbench_runner::setup::{copy_jobs_file, cores, hostname, refuse_earlier_reports, suite_env};
use mlbench_runner::slurm::{self, SlurmOptions, node_gpus, sbatch_script};
use mlbench_runner::smoke::Smoke;
use mlbench_runner::system::{Stack, describe};
use mlbench_runner::telemetry::TelemetryOptions;
use mlbench_runner::timing::{Clock, RealClock};
use mlbench_schema::jobs::JobsFile;
use mlbench_schema::stopping::StoppingRule;
use mlbench_schema::{Scoring, TargetTable, discover};
use mlbench_validator::pack::{PackError, PackOptions, pack_folder, would_be_inside};
use std::path::Path;

fn visible_gpus() -> u32 {
    u32::try_from(tch::Cuda::device_count().max(0)).unwrap_or(0)
}

/// Runs `mlbench run`.
pub fn run(args: &RunArgs) -> Result<Outcome, CommandError> {
    let jobs = JobsFile::load(&args.jobs)?;
    if args.slurm {
        return slurm(args, &jobs);
    }
    let devices = DeviceSet::from_flag(args.devices.as_deref(), visible_gpus(), cores())?;
    let (env, defaulted) = suite_env(std::env::vars().collect(), &args.out);
    let options = PlanOptions {
        jobs_name: jobs_name(&args.jobs),
        names: args.name.clone(),
        devices,
        out: args.out.clone(),
        run: args.first_run,
        env,
    };
    if let Some(spec) = &args.copy {
        let threads = |n: usize| tch::set_num_threads(i32::try_from(n).unwrap_or(1));
        let smoke = args.smoke.then(Smoke::builtin).transpose()?;
        let spec = CopySpec::parse(spec)?;
        let hz = args.sample_hz;
        run_child(&jobs, options, spec, smoke.as_ref(), &Models, &threads, hz)?;
        return Ok(Outcome::Ok);
    }
    let smoke = args.smoke.then(Smoke::builtin).transpose()?;
    // Every run this command may make, planned before anything is written: --until's
    // budget is checked against earlier reports as a fixed count is.
    let total = match (args.until, args.max_runs) {
        (Some(p), Some(max)) => {
            Until::new(p, args.expected_cv, max)
                .map_err(|e| CommandError::Usage(format!("--until: {e}")))?;
            max
        }
        _ => args.repeat_suite,
    };
    let plans = batch_plans(&jobs, &options, total, smoke.as_ref(), true)?;
    if args.dry_run {
        let text: String = plans.iter().map(|p| format!("{p}\n")).collect();
        output::to_stdout(text.as_bytes())?;
        return Ok(Outcome::Ok);
    }
    ranks(args, &plans)?;
    output::check_folder(&args.out)?;
    check_pack_destination(args)?;
    if !args.append {
        refuse_earlier_reports(&plans)?;
    }
    copy_jobs_file(&args.jobs, &args.out, &options.jobs_name)?;
    let mut system = describe(&options.devices, Stack::detect(tool()));
    mlbench_runner::system::write(&args.out, &system)?;
    // Said only where the jobs use it.
    let jobs_text = std::fs::read_to_string(&args.jobs).unwrap_or_default();
    for (var, note) in defaulted {
        if jobs_text.contains(var) {
            eprintln!("note: {note}");
        }
    }
    let failed = match args.until {
        None => execute_batch(args, &plans)?.0,
        Some(precision) => {
            let (first, mut options) = (options.run, options);
            let rule = follow_until(args, precision, |done, count| {
                options.run = first + done;
                let plans = batch_plans(&jobs, &options, count, smoke.as_ref(), false)?;
                Ok(execute_batch(args, &plans)?.1)
            })?;
            let failed = rule.failed_runs as usize;
            system.stopping = Some(rule);
            mlbench_runner::system::write(&args.out, &system)?;
            failed
        }
    };
    if let Some(zip) = &args.pack {
        let packed = pack_output(args, zip, &jobs_name(&args.jobs))?;
        if matches!(packed, Outcome::Failed) {
            return Ok(Outcome::Failed);
        }
    }
    Ok(if failed > 0 {
        Outcome::Failed
    } else {
        Outcome::Ok
    })
}

/// The plans of `count` runs, at smoke sizes with `--smoke` (what that changes said once,
/// when `say`).
fn batch_plans(
    jobs: &JobsFile,
    options: &PlanOptions,
    count: u32,
    smoke: Option<&Smoke>,
    say: bool,
) -> Result<Vec<Plan>, CommandError> {
    let mut plans = plan_runs(jobs, options, count)?;
    if let Some(smoke) = smoke {
        for bench in smoke.apply(&mut plans) {
            if say {
                eprintln!(
                    "note: --smoke on CPU devices: {bench} runs in float32 (float16 needs CUDA)"
                );
            }
        }
    }
    Ok(plans)
}

/// Executes the plans and says how they went: the failed configurations and the runs
/// with a failure.
fn execute_batch(args: &RunArgs, plans: &[Plan]) -> Result<(usize, u32), CommandError> {
    let outcomes = execute_with_progress(args, plans)?;
    let failed = tally(args, plans, &outcomes)?;
    let failed_runs = outcomes.iter().filter(|o| o.failed > 0).count();
    Ok((failed, u32::try_from(failed_runs).unwrap_or(u32::MAX)))
}

/// `--until`: batches of runs as [`Until`] asks for them, run by `batch(first, count)`
/// (which returns the runs with a failure), a line after each; the record.
fn follow_until(
    args: &RunArgs,
    precision: f64,
    mut batch: impl FnMut(u32, u32) -> Result<u32, CommandError>,
) -> Result<StoppingRule, CommandError> {
    let max_runs = args.max_runs.unwrap_or(MIN_RUNS);
    let mut until = Until::new(precision, args.expected_cv, max_runs)
        .map_err(|e| CommandError::Usage(format!("--until: {e}")))?;
    let d = until.design();
    eprintln!(
        "until ±{}%: Lai t-mixture, c = {:.4} (expected CV {}%), {MIN_RUNS} to {max_runs} runs",
        d.precision * 100.0,
        d.mixture,
        d.expected_cv * 100.0
    );
    let targets = TargetTable::builtin(Scoring::Classic, "RTX")?;
    while let Some(count) = until.next_batch() {
        let failed_runs = batch(until.runs(), count)?;
        let discovery = discover(
            std::slice::from_ref(&args.out),
            Some(&jobs_name(&args.jobs)),
        )?;
        let set = mlbench_analyzer::load_samples(discovery, &targets).set;
        let p = until.after_batch(count, failed_runs, &set);
        eprintln!("{}", until_line(&p, until.runs()));
    }
    Ok(until.record())
}

/// `--pack`'s zip: not inside the output folder, no file there at all (run never
/// replaces a zip), and a folder for it that is one or can be made: caught now rather
/// than by pack after the whole run.
fn check_pack_destination(args: &RunArgs) -> Result<(), CommandError> {
    let Some(zip) = &args.pack else {
        return Ok(());
    };
    if would_be_inside(zip, &args.out) {
        return Err(CommandError::Usage(format!(
            "{}: the archive would be inside the output folder {} it packs",
            zip.display(),
            args.out.display()
        )));
    }
    if let Some(parent) = zip.parent() {
        output::check_folder(parent)?;
    }
    if std::fs::symlink_metadata(zip).is_ok() {
        return Err(CommandError::Usage(format!(
            "{}: already exists; not overwriting it (choose another --pack file)",
            zip.display()
        )));
    }
    Ok(())
}

/// Where data-parallel worlds start their ranks: this machine, or (`--across-nodes`) the
/// nodes of the Slurm allocation this runs in.
fn ranks(args: &RunArgs, plans: &[Plan]) -> Result<Ranks, CommandError> {
    let per_node = plans.first().map_or(1, |p| p.devices.count());
    let outside = "--across-nodes runs inside a Slurm allocation (SLURM_JOB_NUM_NODES is not \
                   set); --slurm --across-nodes writes the script that makes one";
    match args.across_nodes {
        false => Ok(Ranks::Local),
        true => Ranks::of_allocation(per_node).ok_or_else(|| CommandError::Usage(outside.into())),
    }
}

/// Executes the plans, one process per copy, with a progress bar of configurations.
fn execute_with_progress(args: &RunArgs, plans: &[Plan]) -> Result<Vec<RunOutcome>, CommandError> {
    let total: u64 = plans.iter().map(|p| p.executions.len() as u64).sum();
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} configs · {elapsed} · ETA {eta} · {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let clock = || -> Box<dyn Clock> { Box::new(RealClock::default()) };
    let progress = |p: &Progress<'_>| match p {
        Progress::Finished { line, .. } => {
            bar.inc(1);
            bar.set_message(line.trim().to_owned());
        }
        Progress::Telemetry(lines) => bar.suspend(|| lines.iter().for_each(|l| eprintln!("{l}"))),
        _ => {}
    };
    let hostname = hostname();
    let child = ChildCommand {
        exe: std::env::current_exe().map_err(RunError::CurrentExe)?,
        jobs: args.jobs.clone(),
        out: args.out.clone(),
        devices: args.devices.clone(),
        names: args.name.clone(),
        smoke: args.smoke,
        sample_hz: args.sample_hz,
        ranks: ranks(args, plans)?,
    };
    let launcher = |plan: &Plan, execution: &Execution, index: usize| {
        launch(&child, &Models, &hostname, plan, execution, index)
    };
    let outcomes = execute_all(
        plans,
        &Models,
        &ExecuteOptions {
            hostname: hostname.clone(),
            clock: &clock,
            progress: &progress,
            launcher: Some(&launcher),
            telemetry: TelemetryOptions::new(args.sample_hz, args.idle_baseline, args.smoke),
        },
    )?;
    bar.finish_and_clear();
    Ok(outcomes)
}

/// Says what failed and how many configurations passed; the failed count, or an error
/// when a copy left no entry at all (its stream could not be written: an output failure,
/// exit 3, not a failed configuration).
fn tally(args: &RunArgs, plans: &[Plan], outcomes: &[RunOutcome]) -> Result<usize, CommandError> {
    let failed: usize = outcomes.iter().map(|o| o.failed).sum();
    let passed: usize = outcomes.iter().map(|o| o.passed).sum();
    let entries: usize = outcomes.iter().map(|o| o.entries).sum();
    for o in outcomes {
        for f in &o.failures {
            eprintln!("failed: {} on {}: {}", f.name, f.vcd, f.message);
        }
    }
    eprintln!(
        "{passed} configurations passed, {failed} failed; {entries} entries in {}",
        args.out.display()
    );
    let copies: usize = plans
        .iter()
        .flat_map(|p| &p.executions)
        .map(|e| e.copies.len())
        .sum();
    if entries < copies {
        let out = args.out.clone();
        return Err(RunError::LostEntries {
            lost: copies - entries,
            out,
        }
        .into());
    }
    Ok(failed)
}

/// `--slurm`: the script for the nodes. Devices are the nodes' (`--devices N` GPUs each, or
/// `cpu`), never this machine's; the jobs and names are checked here by planning them once
/// (a `$VAR` unset here may be set on the nodes, so that is not an error).
fn slurm(args: &RunArgs, jobs: &JobsFile) -> Result<Outcome, CommandError> {
    let gpus = node_gpus(args.devices.as_deref())?;
    let devices = match gpus {
        Some(n) => DeviceSet::cuda(cores(), n)?,
        None => DeviceSet::cpu(cores(), 1)?,
    };
    let check = PlanOptions {
        jobs_name: jobs_name(&args.jobs),
        names: args.name.clone(),
        devices,
        out: args.out.clone(),
        run: 0,
        env: suite_env(std::env::vars().collect(), &args.out).0,
    };
    match plan_runs(jobs, &check, 1) {
        Ok(_) | Err(PlanError::UnsetVariable { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    // Submitted, the nodes get absolute paths and the logs a folder of their own.
    let absolute = |p: &std::path::Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
    let (mlbench, jobs_path, out, log_dir) = if args.submit {
        let out = absolute(&args.out);
        let logs = out.join("slurm");
        output::check_folder(&logs)?;
        output::create_dir(&logs)?;
        let exe = std::env::current_exe().map_err(RunError::CurrentExe)?;
        (
            exe.display().to_string(),
            absolute(&args.jobs),
            out,
            Some(logs),
        )
    } else {
        let argv0 = std::env::args().next().unwrap_or_else(|| "mlbench".into());
        (argv0, args.jobs.clone(), args.out.clone(), None)
    };
    let mut options = SlurmOptions {
        mlbench,
        jobs: jobs_path,
        names: args.name.clone(),
        gpus,
        nodes: args.nodes,
        repeat_suite: args.repeat_suite,
        first_run: 0,
        out,
        partition: None,
        time: None,
        smoke: args.smoke,
        sample_hz: (args.sample_hz != 1).then_some(args.sample_hz),
        idle_baseline: args.idle_baseline,
        log_dir,
        across_nodes: args.across_nodes,
    };
    if !args.submit {
        output::to_stdout(sbatch_script(&options).as_bytes())?;
        return Ok(Outcome::Ok);
    }
    if let Some(precision) = args.until {
        return slurm_until(args, &mut options, precision);
    }
    let failed = submit_and_wait(args, &options)?;
    Ok(if failed == 0 {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}

/// Submits the script of `options` and, with `--wait`, follows it to its end: the array
/// tasks that did not complete (0 without `--wait`).
fn submit_and_wait(args: &RunArgs, options: &SlurmOptions) -> Result<u32, CommandError> {
    let job = slurm::submit(&sbatch_script(options))?;
    eprintln!("submitted Slurm job {job} ({})", options.tasks());
    if !args.wait {
        return Ok(0);
    }
    let mut progress =
        |tasks: &[slurm::TaskState]| eprintln!("job {job}: {}", slurm::state_counts(tasks));
    let tasks = slurm::wait(&job, std::time::Duration::from_secs(2), &mut progress)?;
    let failed: Vec<&slurm::TaskState> = tasks.iter().filter(|t| !t.completed()).collect();
    for t in &failed {
        eprintln!("failed: job {job}, {}", t.describe());
    }
    eprintln!(
        "job {job}: {} of {} array tasks completed; reports in {}",
        tasks.len() - failed.len(),
        tasks.len(),
        args.out.display()
    );
    Ok(u32::try_from(failed.len()).unwrap_or(u32::MAX))
}

/// `--slurm --submit --wait --until`: each batch of runs one array task per run, after
/// the runs already done; the rule's record into the nodes' `system.json`.
fn slurm_until(
    args: &RunArgs,
    options: &mut SlurmOptions,
    precision: f64,
) -> Result<Outcome, CommandError> {
    if !args.wait {
        return Err(CommandError::Usage(
            "--until with --slurm needs --wait".into(),
        ));
    }
    options.repeat_suite = 1;
    let record = follow_until(args, precision, |done, count| {
        (options.nodes, options.first_run) = (count, done);
        submit_and_wait(args, options)
    })?;
    let mut system = mlbench_runner::system::read(&args.out)?;
    let failed = record.failed_runs;
    system.stopping = Some(record);
    mlbench_runner::system::write(&args.out, &system)?;
    Ok(if failed == 0 {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}

/// `--pack`: what `mlbench pack OUT -o ZIP --name <jobs> --track ...` does, with its
/// defaults: the validator packs, a refusal (errors found) keeps the reports and fails.
fn pack_output(args: &RunArgs, zip: &Path, jobs_name: &str) -> Result<Outcome, CommandError> {
    let options = PackOptions {
        validation: mlbench_validator::Options {
            suite: Some(jobs_name.to_owned()),
            min_runs: mlbench_validator::DEFAULT_MIN_RUNS,
            track: args.track.into(),
            ..Default::default()
        },
        limits: mlbench_validator::Limits::default(),
        allow_errors: false,
        tool: tool(),
    };
    match pack_folder(&args.out, Some(zip), &options) {
        Ok(outcome) => {
            if let Some(parent) = zip.parent().filter(|p| !p.as_os_str().is_empty()) {
                output::create_dir(parent)?;
            }
            output::write_file(&outcome.zip, zip, false)?;
            eprintln!("{} into {}", outcome.describe(), zip.display());
            Ok(Outcome::Ok)
        }
        // The validator found errors: the reports stay, the zip is not written.
        Err(refused @ PackError::Refused { .. }) => {
            if let PackError::Refused { validation, .. } = &refused {
                let rules = mlbench_validator::rules::catalogue();
                eprint!(
                    "{}",
                    mlbench_export::rows::findings::human(validation, &rules)
                );
            }
            eprintln!("error: {refused}");
            Ok(Outcome::Failed)
        }
        Err(e) => Err(e.into()),
    }
}
