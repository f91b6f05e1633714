//! `mlbench run` (feature `runner`): execute a jobs file with the tch models and write the
//! suite's report streams, `summary.txt`, and optionally the packed zip.

use crate::cli::RunArgs;
use crate::{Failure, Outcome};
use anyhow::{Context, anyhow};
use mlbench_runner::devices::DeviceSet;
use mlbench_runner::execute::{ExecuteOptions, Progress, execute_all};
use mlbench_runner::models::Models;
use mlbench_runner::plan::{Execution, Plan, PlanError, PlanOptions, jobs_name, plan_runs};
use mlbench_runner::slurm::{SlurmOptions, sbatch_script};
use mlbench_runner::timing::{Clock, RealClock};
use mlbench_schema::jobs::JobsFile;
use mlbench_validator::pack::{PackError, PackOptions, pack_folder};
use std::collections::BTreeMap;
use std::path::Path;

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn visible_gpus() -> u32 {
    u32::try_from(tch::Cuda::device_count().max(0)).unwrap_or(0)
}

/// The environment the jobs' `$VAR`s expand from: the process's, with the folders the
/// suite's config.env exports (`DATA_DIRECTORY=$BASE/data`, `TEMP_DIRECTORY=$BASE/tmp`,
/// `FAKE_DATASET=1`) filled in where unset, from `$BASE` or else from OUT, since the
/// built-in models read no dataset. Returns the notes saying what was filled in.
fn suite_env(
    mut env: BTreeMap<String, String>,
    out: &Path,
) -> (BTreeMap<String, String>, Vec<(&'static str, String)>) {
    let mut notes = Vec::new();
    let base = env.get("BASE").filter(|b| !b.is_empty()).cloned();
    for (var, sub) in [("DATA_DIRECTORY", "data"), ("TEMP_DIRECTORY", "tmp")] {
        if env.get(var).is_some_and(|v| !v.is_empty()) {
            continue;
        }
        let (value, from) = match &base {
            Some(b) => (format!("{b}/{sub}"), "$BASE"),
            None => (out.join(sub).display().to_string(), "--out-dir"),
        };
        notes.push((
            var,
            format!(
                "${var} is not set: {value} (from {from}; the built-in models use synthetic data)"
            ),
        ));
        env.insert(var.to_owned(), value);
    }
    env.entry("FAKE_DATASET".to_owned())
        .or_insert_with(|| "1".to_owned());
    (env, notes)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "localhost".into())
}

/// Runs `mlbench run`.
pub fn run(args: &RunArgs) -> Result<Outcome, Failure> {
    let jobs = JobsFile::load(&args.jobs)?;
    if args.repeat_suite == 0 {
        return Err(anyhow!("--repeat-suite must be at least 1").into());
    }
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
        let spec = super::run_copy::CopySpec::parse(spec)?;
        super::run_copy::run_child(&jobs, options, spec, hostname())?;
        return Ok(Outcome::Ok);
    }
    let plans = plan_runs(&jobs, &options, args.repeat_suite)?;
    if args.dry_run {
        let text: String = plans.iter().map(|p| format!("{p}\n")).collect();
        crate::output::emit_bytes(text.as_bytes(), None, false)?;
        return Ok(Outcome::Ok);
    }
    if let Some(zip) = &args.pack {
        if zip.exists() {
            return Err(anyhow!(
                "{}: already exists; not overwriting it (choose another --pack file)",
                zip.display()
            )
            .into());
        }
        // Caught now rather than by pack after the whole run.
        if let (Ok(zip_abs), Ok(out_abs)) =
            (std::path::absolute(zip), std::path::absolute(&args.out))
            && zip_abs.starts_with(&out_abs)
        {
            return Err(anyhow!(
                "{}: the archive would be inside the output folder {} it packs",
                zip.display(),
                args.out.display()
            )
            .into());
        }
    }
    if !args.append {
        refuse_earlier_reports(&plans)?;
    }
    copy_jobs_file(&args.jobs, &args.out, &options.jobs_name)?;
    // Said only where the jobs use it.
    let jobs_text = std::fs::read_to_string(&args.jobs).unwrap_or_default();
    for (var, note) in defaulted {
        if jobs_text.contains(var) {
            eprintln!("note: {note}");
        }
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
    let hostname = hostname();
    let launcher = |plan: &Plan, execution: &Execution, index: usize| {
        super::run_copy::launch(args, &hostname, plan, execution, index)
    };
    let outcomes = execute_all(
        &plans,
        &Models,
        &ExecuteOptions {
            hostname: hostname.clone(),
            clock: &clock,
            progress: &progress,
            launcher: Some(&launcher),
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
    if let Some(zip) = &args.pack {
        let packed = pack_output(args, zip, &options.jobs_name)?;
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

/// `--slurm`: the script for the nodes. Devices are the nodes' (`--devices N` GPUs each, or
/// `cpu`), never this machine's; the jobs and names are checked here by planning them once
/// (a `$VAR` unset here may be set on the nodes, so that is not an error).
fn slurm(args: &RunArgs, jobs: &JobsFile) -> Result<Outcome, Failure> {
    let gpus = match args.devices.as_deref().map(str::trim) {
        Some(d) if d.eq_ignore_ascii_case("cpu") => None,
        Some(d) => match d.parse::<u32>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                return Err(anyhow!(
                    "--devices {d}: with --slurm, a number of GPUs per node or `cpu`"
                )
                .into());
            }
        },
        None => {
            return Err(anyhow!(
                "--slurm needs --devices: the GPUs of each node (e.g. --devices 8), or cpu"
            )
            .into());
        }
    };
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
    let script = sbatch_script(&SlurmOptions {
        mlbench: std::env::args().next().unwrap_or_else(|| "mlbench".into()),
        jobs: args.jobs.clone(),
        names: args.name.clone(),
        gpus,
        nodes: args.nodes,
        repeat_suite: args.repeat_suite,
        out: args.out.clone(),
        partition: None,
        time: None,
    });
    crate::output::emit_bytes(script.as_bytes(), None, false)?;
    Ok(Outcome::Ok)
}

/// Refuses to append to report streams an earlier run left: two runs in one stream read
/// as duplicated entries (`--append` when that is meant).
fn refuse_earlier_reports(plans: &[Plan]) -> Result<(), Failure> {
    let mut earlier: Vec<&Path> = plans
        .iter()
        .flat_map(|p| &p.executions)
        .flat_map(|e| &e.copies)
        .map(|c| c.report.as_path())
        .filter(|p| p.exists())
        .collect();
    earlier.sort();
    earlier.dedup();
    match earlier.as_slice() {
        [] => Ok(()),
        [first, rest @ ..] => Err(anyhow!(
            "{}{}: report streams of an earlier run; not adding to them (choose another --out, or pass --append)",
            first.display(),
            if rest.is_empty() {
                String::new()
            } else {
                format!(" and {} more", rest.len())
            }
        )
        .into()),
    }
}

/// Puts a copy of the jobs file in `out` as `<jobs>.json`, so the output says what it ran
/// (the validator reads it there). An identical file is left as is; a different one is
/// never replaced.
fn copy_jobs_file(jobs: &Path, out: &Path, jobs_name: &str) -> Result<(), Failure> {
    let dest = out.join(format!("{jobs_name}.json"));
    let text = std::fs::read(jobs).with_context(|| format!("{}: cannot read", jobs.display()))?;
    match std::fs::read(&dest) {
        Ok(existing) if existing == text => return Ok(()),
        Ok(_) => {
            return Err(anyhow!(
                "{}: a different jobs file of that name is already there; not replacing it (choose another --out)",
                dest.display()
            )
            .into());
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(anyhow!("{}: {e}", dest.display()).into()),
    }
    std::fs::create_dir_all(out).with_context(|| format!("{}: cannot create", out.display()))?;
    // Written beside and renamed: nodes sharing OUT (--first-run, Slurm) never read half a
    // file, and an identical copy renamed over another changes nothing.
    let temp = out.join(format!(
        ".{jobs_name}.json.{}.{}",
        hostname(),
        std::process::id()
    ));
    std::fs::write(&temp, &text).with_context(|| format!("{}: cannot write", temp.display()))?;
    std::fs::rename(&temp, &dest).with_context(|| format!("{}: cannot write", dest.display()))?;
    Ok(())
}

/// `--pack`: what `mlbench pack OUT -o ZIP --name <jobs> --track ...` does, with its
/// defaults: the validator packs, a refusal (errors found) keeps the reports and fails.
fn pack_output(args: &RunArgs, zip: &Path, jobs_name: &str) -> Result<Outcome, Failure> {
    let options = PackOptions {
        validation: mlbench_validator::Options {
            suite: Some(jobs_name.to_owned()),
            min_runs: mlbench_validator::DEFAULT_MIN_RUNS,
            track: args.track.into(),
            ..Default::default()
        },
        limits: mlbench_validator::Limits::default(),
        force: false,
        tool: format!("mlbench {}", env!("CARGO_PKG_VERSION")),
    };
    match pack_folder(&args.out, Some(zip), &options) {
        Ok(outcome) => {
            crate::output::emit_bytes(&outcome.zip, Some(zip), false)?;
            eprintln!("{} into {}", outcome.describe(), zip.display());
            Ok(Outcome::Ok)
        }
        // The validator found errors: the reports stay, the zip is not written.
        Err(refused @ PackError::Refused { .. }) => {
            if let PackError::Refused { validation, .. } = &refused {
                eprint!("{}", mlbench_export::rows::findings::human(validation));
            }
            eprintln!("error: {refused}");
            Ok(Outcome::Failed)
        }
        Err(e) => Err(e.into()),
    }
}
