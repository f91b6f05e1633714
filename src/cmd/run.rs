//! `mlbench run` (feature `runner`): execute a jobs file with the tch models and write the
//! suite's report streams, `summary.txt`, and optionally the packed zip. The runner plans,
//! runs and follows the runs (`mlbench_runner::session`); `--until`'s rule is the
//! analyzer's, handed to it here.

use super::tool;
use crate::cli::RunArgs;
use crate::exit::{CommandError, Outcome};
use crate::output;
use mlbench_analyzer::anytime::MIN_RUNS;
use mlbench_analyzer::until::Until;
use mlbench_export::rows::report::until_line;
use mlbench_runner::copies::{CopySpec, Ranks};
use mlbench_runner::devices::DeviceSet;
use mlbench_runner::models::Models;
use mlbench_runner::session::{self, Jobs, Local, Request, RuleError, Stderr, Stopping};
use mlbench_runner::setup::cores;
use mlbench_runner::slurm::{node_gpus, sbatch_script};
use mlbench_runner::system::Stack;
use mlbench_schema::stopping::StoppingRule;
use mlbench_validator::pack::{PackError, PackOptions, pack_folder, would_be_inside};
use std::path::Path;

/// `--across-nodes` where there are no nodes to run across.
const OUTSIDE: &str = "--across-nodes runs inside a Slurm allocation (SLURM_JOB_NUM_NODES is \
                       not set); --slurm --across-nodes writes the script that makes one";

/// `--until` on Slurm, which needs the runs' reports after each batch.
const NO_WAIT: &str = "--until with --slurm needs --wait";

/// Runs `mlbench run`.
pub fn run(args: &RunArgs) -> Result<Outcome, CommandError> {
    let request = Request {
        jobs: Jobs::read(&args.jobs)?,
        names: args.name.clone(),
        devices: args.devices.clone(),
        out: args.out.clone(),
        first_run: args.first_run,
        repeat_suite: args.repeat_suite,
        smoke: args.smoke,
        synthetic_data: args.synthetic_data,
        profile: args.profile,
        sample_hz: args.sample_hz,
        idle_baseline: args.idle_baseline,
        append: args.append,
        across_nodes: args.across_nodes,
    };
    if args.slurm {
        return slurm(args, &request);
    }
    let gpus = u32::try_from(tch::Cuda::device_count().max(0)).unwrap_or(0);
    let devices = DeviceSet::from_flag(args.devices.as_deref(), gpus, cores())?;
    let local = Local::new(&request, devices, std::env::vars().collect())?;
    if let Some(spec) = &args.copy {
        let threads = |n: usize| tch::set_num_threads(i32::try_from(n).unwrap_or(1));
        local.run_child(CopySpec::parse(spec)?, &Models, &threads)?;
        return Ok(Outcome::Ok);
    }
    // Every run this command may make, planned before anything is written: --until's
    // budget is checked against earlier reports as a fixed count is.
    let mut rule = args.until.map(|p| until(args, p, &request)).transpose()?;
    let total = args.max_runs.filter(|_| rule.is_some());
    let (plans, in_float32) = local.plans(args.first_run, total.unwrap_or(args.repeat_suite))?;
    for bench in in_float32 {
        eprintln!("note: --smoke on CPU devices: {bench} runs in float32 (float16 needs CUDA)");
    }
    if args.dry_run {
        let text: String = plans.iter().map(|p| format!("{p}\n")).collect();
        output::to_stdout(text.as_bytes())?;
        return Ok(Outcome::Ok);
    }
    // Where data-parallel worlds start their ranks: here, or the allocation's nodes.
    let per_node = plans.first().map_or(1, |p| p.devices.count());
    let ranks = match args.across_nodes {
        false => Ranks::Local,
        true => Ranks::of_allocation(per_node).ok_or(CommandError::Usage(OUTSIDE.into()))?,
    };
    output::check_folder(&args.out)?;
    check_pack_destination(args)?;
    let rule = rule.as_mut().map(|r| r as &mut dyn Stopping);
    let stack = Stack::detect(tool());
    let failed = local.execute(&plans, ranks, stack, rule, &Models, &Stderr::default())?;
    if let Some(zip) = &args.pack
        && matches!(pack_output(args, zip, &request.jobs.name)?, Outcome::Failed)
    {
        return Ok(Outcome::Failed);
    }
    Ok(Outcome::failed_if(failed > 0))
}

/// `--until`: the analyzer's rule, judging the reports the batches write.
struct UntilRule<'a>(Until, &'a Request);

fn until<'a>(
    args: &RunArgs,
    precision: f64,
    request: &'a Request,
) -> Result<UntilRule<'a>, CommandError> {
    let max_runs = args.max_runs.unwrap_or(MIN_RUNS);
    Until::new(precision, args.expected_cv, max_runs)
        .map(|until| UntilRule(until, request))
        .map_err(|e| CommandError::Usage(format!("--until: {e}")))
}

impl Stopping for UntilRule<'_> {
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn next_batch(&self) -> Option<u32> {
        self.0.next_batch()
    }
    fn runs(&self) -> u32 {
        self.0.runs()
    }
    fn after_batch(&mut self, runs: u32, failed_runs: u32) -> Result<String, RuleError> {
        let (out, suite) = (&self.1.out, &self.1.jobs.name);
        let precision = self.0.after_batch_in(runs, failed_runs, out, suite)?;
        Ok(until_line(&precision, self.0.runs()))
    }
    fn record(&self) -> StoppingRule {
        self.0.record()
    }
}

/// `--slurm`: the script for the nodes (`--devices N` GPUs each, or `cpu`), printed, or
/// submitted and followed.
fn slurm(args: &RunArgs, request: &Request) -> Result<Outcome, CommandError> {
    let gpus = node_gpus(args.devices.as_deref())?;
    let devices = DeviceSet::of_node(gpus, cores())?;
    let mut options = session::slurm_options(request, devices, gpus, args.nodes, args.submit)?;
    if !args.submit {
        output::to_stdout(sbatch_script(&options).as_bytes())?;
        return Ok(Outcome::Ok);
    }
    let (out, watch) = (&args.out, &Stderr::default());
    let failed = match args.until {
        None => session::submit(&options, args.wait, out, watch)?,
        Some(_) if !args.wait => return Err(CommandError::Usage(NO_WAIT.into())),
        Some(p) => session::submit_until(&mut options, &mut until(args, p, request)?, out, watch)?,
    };
    Ok(Outcome::failed_if(failed > 0))
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

/// `--pack`: what `mlbench pack OUT -o ZIP --name <jobs> --track ...` does, with its
/// defaults: the validator packs, a refusal (errors found) keeps the reports and fails.
fn pack_output(args: &RunArgs, zip: &Path, jobs_name: &str) -> Result<Outcome, CommandError> {
    let options = PackOptions::of_suite(jobs_name, args.track.into(), tool());
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
        Err(PackError::Refused { dir, validation }) => {
            let rules = mlbench_validator::rules::catalogue();
            eprint!(
                "{}",
                mlbench_export::rows::findings::human(&validation, &rules)
            );
            eprintln!("error: {}", PackError::Refused { dir, validation });
            Ok(Outcome::Failed)
        }
        Err(e) => Err(e.into()),
    }
}
