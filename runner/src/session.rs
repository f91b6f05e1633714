//! What `mlbench run` does once its flags are read. On this machine ([`Local`]): every run
//! planned before anything is written, the output folder set up (no earlier streams added
//! to by accident, the jobs file copied beside the reports, `system.json`), the runs
//! executed (a fixed count, or in batches for as long as a stopping rule asks for more)
//! and the tally. On Slurm ([`slurm_options`], [`submit`], [`submit_until`]): the runs as
//! array jobs, submitted and followed to their end.
//!
//! The stopping rule is the caller's ([`Stopping`]; `--until`'s is the analyzer's): the
//! runner never judges results. What the person running sees goes through [`Watch`].

use crate::BenchFactory;
use crate::copies::{ChildCommand, CopyError, CopySpec, Ranks, launch};
use crate::devices::DeviceSet;
use crate::execute::{ExecuteError, ExecuteOptions, Progress, RunOutcome, execute_all};
use crate::plan::{Execution, Plan, PlanError, PlanOptions, jobs_name, plan_runs};
use crate::setup::{SetupError, copy_jobs_file, hostname, refuse_earlier_reports, suite_env};
use crate::slurm::{self, SlurmError, SlurmOptions, TaskState, sbatch_script};
use crate::smoke::{Smoke, SmokeError};
use crate::system::{Stack, describe};
use crate::telemetry::TelemetryOptions;
use crate::timing::{Clock, RealClock};
use mlbench_schema::class::{Classify, ErrorClass};
use mlbench_schema::destination::{DestinationError, check_folder};
use mlbench_schema::jobs::{JobsError, JobsFile};
use mlbench_schema::stopping::StoppingRule;
use mlbench_schema::words::count;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An error of a stopping rule, whatever its type (the runner only passes it on).
pub type RuleError = Box<dyn std::error::Error + Send + Sync>;

/// Why a run could not be made or followed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A job that cannot be planned.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The smoke sizes shipped in the binary.
    #[error(transparent)]
    Smoke(#[from] SmokeError),
    /// The output folder refused or not written.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The folder of the Slurm tasks' logs cannot be made.
    #[error(transparent)]
    Destination(#[from] DestinationError),
    /// A report stream or summary not written.
    #[error(transparent)]
    Execute(#[from] ExecuteError),
    /// sbatch or scontrol missing or failing.
    #[error(transparent)]
    Slurm(#[from] SlurmError),
    /// The stopping rule cannot judge the runs so far (their reports cannot be read).
    #[error(transparent)]
    Rule(RuleError),
    /// Copies whose entry could not be written to their report stream.
    #[error(
        "{}: {lost} cop{} wrote no entry: {} report stream could not be written (see the failures above)",
        .out.display(),
        if *.lost == 1 { "y" } else { "ies" },
        if *.lost == 1 { "its" } else { "their" }
    )]
    LostEntries {
        /// The copies without an entry.
        lost: usize,
        /// The output folder.
        out: PathBuf,
    },
    /// The binary cannot find itself to start the copies.
    #[error("cannot locate the mlbench binary to start the copies: {0}")]
    CurrentExe(#[source] std::io::Error),
}

impl Classify for RunError {
    fn class(&self) -> ErrorClass {
        match self {
            RunError::Plan(e) => e.class(),
            RunError::Smoke(e) => e.class(),
            RunError::Setup(e) => e.class(),
            RunError::Destination(e) => e.class(),
            RunError::Execute(e) => e.class(),
            RunError::Slurm(e) => e.class(),
            // The rule reads the reports the batches wrote: a rule that cannot is input.
            RunError::Rule(_) => ErrorClass::Input,
            RunError::LostEntries { .. } | RunError::CurrentExe(_) => ErrorClass::Internal,
        }
    }
}

/// The jobs file of a run, read once.
#[derive(Debug, Clone)]
pub struct Jobs {
    /// Where it is: the copies and the nodes read it there again.
    pub path: PathBuf,
    /// `JOB_FILE`: its base name, the suite's name.
    pub name: String,
    /// Its bytes, copied beside the reports.
    pub bytes: Vec<u8>,
    /// Its jobs.
    pub file: JobsFile,
}

impl Jobs {
    /// Reads the jobs file at `path`.
    pub fn read(path: &Path) -> Result<Jobs, JobsError> {
        let (file, bytes) = JobsFile::read(path)?;
        let (path, name) = (path.to_owned(), jobs_name(path));
        Ok(Jobs {
            path,
            name,
            bytes,
            file,
        })
    }
}

/// What to run, as the command line asks for it.
#[derive(Debug, Clone)]
pub struct Request {
    /// The jobs file.
    pub jobs: Jobs,
    /// Only these jobs (empty: every job).
    pub names: Vec<String>,
    /// The devices as given (the copies and the nodes are given them again).
    pub devices: Option<String>,
    /// The output folder.
    pub out: PathBuf,
    /// The first run's number.
    pub first_run: u32,
    /// Runs of the suite (without a stopping rule; per node on Slurm).
    pub repeat_suite: u32,
    /// At the smallest sizes ([`Smoke`]).
    pub smoke: bool,
    /// Batches made in memory where the scripts read files ([`crate::synthetic`]).
    pub synthetic_data: bool,
    /// Each copy's timed observations recorded by the profiler ([`crate::profile`]).
    pub profile: bool,
    /// Telemetry samples per second beside every copy (0: none).
    pub sample_hz: u32,
    /// The idle sampling before each run's first job (`None`: the default).
    pub idle_baseline: Option<Duration>,
    /// Add to report streams an earlier run left.
    pub append: bool,
    /// Data-parallel worlds over the nodes of a Slurm allocation.
    pub across_nodes: bool,
}

/// What the person running sees (the CLI: lines on standard error, a progress bar).
pub trait Watch: Sync {
    /// A line to say.
    fn say(&self, line: &str);
    /// A batch of `configs` configurations starts.
    fn start(&self, configs: u64);
    /// How the batch goes (called from the copies' threads).
    fn progress(&self, progress: &Progress<'_>);
    /// The batch has ended.
    fn end(&self);
}

/// [`Watch`] on standard error, with a progress bar of configurations while a batch runs
/// (drawn only on a terminal).
#[derive(Default)]
pub struct Stderr(std::sync::Mutex<Option<indicatif::ProgressBar>>);

impl Stderr {
    fn bar(&self) -> Option<indicatif::ProgressBar> {
        self.0.lock().ok().and_then(|bar| bar.clone())
    }
}

impl Watch for Stderr {
    fn say(&self, line: &str) {
        eprintln!("{line}");
    }

    fn start(&self, configs: u64) {
        let bar = indicatif::ProgressBar::new(configs);
        let template = "{bar:30} {pos}/{len} configs · {elapsed} · ETA {eta} · {msg}";
        let style = indicatif::ProgressStyle::with_template(template);
        bar.set_style(style.unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()));
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(bar);
        }
    }

    fn progress(&self, progress: &Progress<'_>) {
        let Some(bar) = self.bar() else { return };
        match progress {
            Progress::Finished { line, .. } => {
                bar.inc(1);
                bar.set_message(line.trim().to_owned());
            }
            Progress::Telemetry(lines) => {
                bar.suspend(|| lines.iter().for_each(|l| eprintln!("{l}")))
            }
            _ => {}
        }
    }

    fn end(&self) {
        if let Some(bar) = self.0.lock().ok().and_then(|mut slot| slot.take()) {
            bar.finish_and_clear();
        }
    }
}

/// A rule that says how many runs to make next from the runs made so far.
pub trait Stopping {
    /// The rule in a line, said before the first batch.
    fn describe(&self) -> String;
    /// How many runs to make next; `None` once stopped.
    fn next_batch(&self) -> Option<u32>;
    /// The runs made so far.
    fn runs(&self) -> u32;
    /// After a batch of `runs` runs (`failed_runs` of them with a failure) written to the
    /// output folder: what the rule now says, in a line.
    fn after_batch(&mut self, runs: u32, failed_runs: u32) -> Result<String, RuleError>;
    /// What was done, for `system.json`.
    fn record(&self) -> StoppingRule;
}

/// Batches of runs as `rule` asks for them, made by `batch(first, count)` (which returns
/// the runs with a failure), the rule's line after each; the rule's record.
pub fn follow(
    rule: &mut dyn Stopping,
    watch: &dyn Watch,
    mut batch: impl FnMut(u32, u32) -> Result<u32, RunError>,
) -> Result<StoppingRule, RunError> {
    watch.say(&rule.describe());
    while let Some(count) = rule.next_batch() {
        let failed_runs = batch(rule.runs(), count)?;
        watch.say(
            &rule
                .after_batch(count, failed_runs)
                .map_err(RunError::Rule)?,
        );
    }
    Ok(rule.record())
}

/// A run on this machine.
pub struct Local<'a> {
    request: &'a Request,
    /// The plan options of the first run (a child process plans its copy with them).
    pub options: PlanOptions,
    /// The smoke sizes, with `--smoke`.
    pub smoke: Option<Smoke>,
    defaulted: Vec<(&'static str, String)>,
}

impl<'a> Local<'a> {
    /// The run of `request` on `devices`, in the environment `env` (the process's).
    pub fn new(
        request: &'a Request,
        devices: DeviceSet,
        env: BTreeMap<String, String>,
    ) -> Result<Local<'a>, RunError> {
        let (env, defaulted) = suite_env(env, &request.out);
        let options = PlanOptions {
            jobs_name: request.jobs.name.clone(),
            names: request.names.clone(),
            devices,
            out: request.out.clone(),
            run: request.first_run,
            env,
        };
        let smoke = request.smoke.then(Smoke::builtin).transpose()?;
        Ok(Local {
            request,
            options,
            smoke,
            defaulted,
        })
    }

    /// The child's side of a copy: runs copy `spec` of its run here, `factory`'s bench
    /// with `threads` setting a GPU copy's intra-op threads, and prints its result line.
    pub fn run_child(
        &self,
        spec: CopySpec,
        factory: &dyn BenchFactory,
        threads: &dyn Fn(usize),
    ) -> Result<(), CopyError> {
        let (jobs, options) = (&self.request.jobs.file, self.options.clone());
        let sizes = crate::copies::ChildSizes {
            smoke: self.smoke.as_ref(),
            synthetic_data: self.request.synthetic_data,
            sample_hz: self.request.sample_hz,
            profile: self.request.profile,
        };
        crate::copies::run_child(jobs, options, spec, sizes, factory, threads)
    }

    /// The plans of `count` runs from run `first`, at smoke sizes with `--smoke`; and the
    /// benches that run in float32 where they asked for float16 (smoke on CPU devices).
    pub fn plans(&self, first: u32, count: u32) -> Result<(Vec<Plan>, Vec<String>), RunError> {
        let options = PlanOptions {
            run: first,
            ..self.options.clone()
        };
        let mut plans = plan_runs(&self.request.jobs.file, &options, count)?;
        let in_float32 = (self.smoke.as_ref()).map_or_else(Vec::new, |s| s.apply(&mut plans));
        if self.request.synthetic_data {
            crate::synthetic::mark(&mut plans);
        }
        Ok((plans, in_float32))
    }

    /// Runs: the output folder set up for `plans` (every run this command may make),
    /// `system.json` written; then those plans, or with a `rule` batches of runs for as
    /// long as it asks for more (its record into `system.json`). Data-parallel worlds start
    /// their ranks as `ranks` says; the copies run `factory`'s benches in processes of their
    /// own. Returns the failed configurations, or with a rule the runs with a failure.
    pub fn execute(
        &self,
        plans: &[Plan],
        ranks: Ranks,
        stack: Stack,
        rule: Option<&mut dyn Stopping>,
        factory: &dyn BenchFactory,
        watch: &dyn Watch,
    ) -> Result<usize, RunError> {
        let request = self.request;
        if !request.append {
            refuse_earlier_reports(plans)?;
        }
        copy_jobs_file(&request.jobs.bytes, &request.out, &request.jobs.name)?;
        let mut system = describe(&self.options.devices, stack);
        system.synthetic_data = request.synthetic_data;
        crate::system::write(&request.out, &system)?;
        // Said only where the jobs use it.
        let text = std::str::from_utf8(&request.jobs.bytes).unwrap_or_default();
        for (var, note) in &self.defaulted {
            if text.contains(var) {
                watch.say(&format!("note: {note}"));
            }
        }
        let batch = |plans: &[Plan]| self.execute_batch(plans, ranks, factory, watch);
        let Some(rule) = rule else {
            return Ok(batch(plans)?.0);
        };
        let first = self.options.run;
        let record = follow(rule, watch, |done, count| {
            Ok(batch(&self.plans(first + done, count)?.0)?.1)
        })?;
        let failed = record.failed_runs as usize;
        system.stopping = Some(record);
        crate::system::write(&request.out, &system)?;
        Ok(failed)
    }

    /// Executes the plans, one process per copy, and says how they went: the failed
    /// configurations and the runs with a failure.
    fn execute_batch(
        &self,
        plans: &[Plan],
        ranks: Ranks,
        factory: &dyn BenchFactory,
        watch: &dyn Watch,
    ) -> Result<(usize, u32), RunError> {
        let request = self.request;
        let hostname = hostname();
        let child = ChildCommand {
            exe: std::env::current_exe().map_err(RunError::CurrentExe)?,
            jobs: request.jobs.path.clone(),
            out: request.out.clone(),
            devices: request.devices.clone(),
            names: request.names.clone(),
            smoke: request.smoke,
            synthetic_data: request.synthetic_data,
            profile: request.profile,
            sample_hz: request.sample_hz,
            ranks,
            exports: crate::setup::exports(&self.options.env),
        };
        let launcher = |plan: &Plan, execution: &Execution, index: usize| {
            launch(&child, factory, &hostname, plan, execution, index)
        };
        let clock = || -> Box<dyn Clock> { Box::new(RealClock::default()) };
        let progress = |p: &Progress<'_>| watch.progress(p);
        watch.start(plans.iter().map(|p| p.executions.len() as u64).sum());
        let (hz, idle) = (request.sample_hz, request.idle_baseline);
        let options = ExecuteOptions {
            hostname: hostname.clone(),
            clock: &clock,
            progress: &progress,
            launcher: Some(&launcher),
            telemetry: TelemetryOptions::new(hz, idle, request.smoke),
            profile: request.profile,
        };
        let outcomes = execute_all(plans, factory, &options)?;
        watch.end();
        let failed = tally(plans, &outcomes, &request.out, watch)?;
        let failed_runs = outcomes.iter().filter(|o| o.failed > 0).count();
        Ok((failed, u32::try_from(failed_runs).unwrap_or(u32::MAX)))
    }
}

/// Says what failed and how many configurations passed; the failed count, or an error
/// when a copy left no entry at all (its stream could not be written: an output failure,
/// not a failed configuration).
pub fn tally(
    plans: &[Plan],
    outcomes: &[RunOutcome],
    out: &Path,
    watch: &dyn Watch,
) -> Result<usize, RunError> {
    let failed: usize = outcomes.iter().map(|o| o.failed).sum();
    let passed: usize = outcomes.iter().map(|o| o.passed).sum();
    let entries: usize = outcomes.iter().map(|o| o.entries).sum();
    for f in outcomes.iter().flat_map(|o| &o.failures) {
        watch.say(&format!("failed: {} on {}: {}", f.name, f.vcd, f.message));
    }
    watch.say(&format!(
        "{} passed, {failed} failed; {} in {}",
        count(passed, "configuration", "configurations"),
        count(entries, "entry", "entries"),
        out.display()
    ));
    let copies: usize = plans
        .iter()
        .flat_map(|p| &p.executions)
        .map(|e| e.copies.len())
        .sum();
    if entries < copies {
        let (lost, out) = (copies - entries, out.to_owned());
        return Err(RunError::LostEntries { lost, out });
    }
    Ok(failed)
}

/// The script's options for `nodes` nodes of `devices` (`gpus` GPUs each, or the CPU:
/// the nodes', never this machine's). The jobs and names are checked here by planning
/// them once (a `$VAR` unset here may be set on the nodes, so that is not an error).
/// Submitted, the nodes get absolute paths and the logs a folder of their own.
pub fn slurm_options(
    request: &Request,
    devices: DeviceSet,
    gpus: Option<u32>,
    nodes: u32,
    submitted: bool,
) -> Result<SlurmOptions, RunError> {
    let check = PlanOptions {
        jobs_name: request.jobs.name.clone(),
        names: request.names.clone(),
        devices,
        out: request.out.clone(),
        run: 0,
        env: suite_env(std::env::vars().collect(), &request.out).0,
    };
    match plan_runs(&request.jobs.file, &check, 1) {
        Ok(_) | Err(PlanError::UnsetVariable { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
    let (mlbench, jobs, out, log_dir) = if submitted {
        let out = absolute(&request.out);
        let logs = out.join("slurm");
        check_folder(&logs)?;
        std::fs::create_dir_all(&logs).map_err(|source| SetupError::Io {
            path: logs.clone(),
            action: "create",
            source,
        })?;
        let exe = std::env::current_exe().map_err(RunError::CurrentExe)?;
        let jobs = absolute(&request.jobs.path);
        (exe.display().to_string(), jobs, out, Some(logs))
    } else {
        let argv0 = std::env::args().next().unwrap_or_else(|| "mlbench".into());
        (argv0, request.jobs.path.clone(), request.out.clone(), None)
    };
    Ok(SlurmOptions {
        mlbench,
        jobs,
        names: request.names.clone(),
        gpus,
        nodes,
        repeat_suite: request.repeat_suite,
        first_run: 0,
        out,
        partition: None,
        time: None,
        smoke: request.smoke,
        synthetic_data: request.synthetic_data,
        profile: request.profile,
        sample_hz: (request.sample_hz != 1).then_some(request.sample_hz),
        idle_baseline: request.idle_baseline,
        log_dir,
        across_nodes: request.across_nodes,
    })
}

/// Submits the script of `options` and, when `wait`, follows it to its end (the reports
/// go to `out`, as the command line names it): the array tasks that did not complete (0
/// without waiting).
pub fn submit(
    options: &SlurmOptions,
    wait: bool,
    out: &Path,
    watch: &dyn Watch,
) -> Result<u32, RunError> {
    let job = slurm::submit(&sbatch_script(options))?;
    watch.say(&format!("submitted Slurm job {job} ({})", options.tasks()));
    if !wait {
        return Ok(0);
    }
    let mut progress =
        |tasks: &[TaskState]| watch.say(&format!("job {job}: {}", slurm::state_counts(tasks)));
    let tasks = slurm::wait(&job, Duration::from_secs(2), &mut progress)?;
    Ok(said_tasks(&job, &tasks, out, watch))
}

/// Names each task that did not complete and says how many did; the count of the others.
fn said_tasks(job: &str, tasks: &[TaskState], out: &Path, watch: &dyn Watch) -> u32 {
    let failed: Vec<&TaskState> = tasks.iter().filter(|t| !t.completed()).collect();
    for t in &failed {
        watch.say(&format!("failed: job {job}, {}", t.describe()));
    }
    watch.say(&format!(
        "job {job}: {} of {} array tasks completed; reports in {}",
        tasks.len() - failed.len(),
        tasks.len(),
        out.display()
    ));
    u32::try_from(failed.len()).unwrap_or(u32::MAX)
}

/// Submitted runs as `rule` asks for them, each batch one array task per run after the
/// runs already done, each followed to its end; the rule's record into the nodes'
/// `system.json` (in `out`). Returns the runs with a failure.
pub fn submit_until(
    options: &mut SlurmOptions,
    rule: &mut dyn Stopping,
    out: &Path,
    watch: &dyn Watch,
) -> Result<u32, RunError> {
    options.repeat_suite = 1;
    let record = follow(rule, watch, |done, count| {
        (options.nodes, options.first_run) = (count, done);
        submit(options, true, out, watch)
    })?;
    let mut system = crate::system::read(out)?;
    let failed = record.failed_runs;
    system.stopping = Some(record);
    crate::system::write(out, &system)?;
    Ok(failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The lines said, in order.
    #[derive(Default)]
    struct Lines(Mutex<Vec<String>>);

    impl Watch for Lines {
        fn say(&self, line: &str) {
            self.0.lock().unwrap().push(line.to_owned());
        }
        fn start(&self, _: u64) {}
        fn progress(&self, _: &Progress<'_>) {}
        fn end(&self) {}
    }

    fn record(runs: u32, failed_runs: u32) -> StoppingRule {
        StoppingRule {
            rule: "runs".into(),
            method: "count".into(),
            level: 0.95,
            precision: 0.01,
            expected_cv: 0.02,
            mixture: 0.0,
            min_runs: 3,
            max_runs: 10,
            runs,
            stopped: "enough".into(),
            failed_runs,
        }
    }

    /// Stops once `enough` runs passed; the record counts the runs and failures seen.
    struct Count {
        enough: u32,
        runs: u32,
        failed: u32,
    }

    impl Stopping for Count {
        fn describe(&self) -> String {
            format!("until {} runs", self.enough)
        }
        fn next_batch(&self) -> Option<u32> {
            match self.runs {
                0 => Some(3),
                r if r - self.failed < self.enough => Some(1),
                _ => None,
            }
        }
        fn runs(&self) -> u32 {
            self.runs
        }
        fn after_batch(&mut self, runs: u32, failed_runs: u32) -> Result<String, RuleError> {
            (self.runs, self.failed) = (self.runs + runs, self.failed + failed_runs);
            Ok(format!("after {} runs", self.runs))
        }
        fn record(&self) -> StoppingRule {
            record(self.runs, self.failed)
        }
    }

    #[test]
    fn batches_follow_the_rule_from_the_runs_done() {
        let (lines, mut asked) = (Lines::default(), Vec::new());
        let mut rule = Count {
            enough: 4,
            runs: 0,
            failed: 0,
        };
        // The second run of the first batch fails: one run more than a clean sequence.
        let record = follow(&mut rule, &lines, |first, count| {
            asked.push((first, count));
            Ok(u32::from(first == 0))
        })
        .unwrap();
        assert_eq!(asked, [(0, 3), (3, 1), (4, 1)]);
        assert_eq!((record.runs, record.failed_runs), (5, 1));
        let said = lines.0.into_inner().unwrap();
        assert_eq!(
            said,
            [
                "until 4 runs",
                "after 3 runs",
                "after 4 runs",
                "after 5 runs"
            ]
        );
    }

    #[test]
    fn a_rule_that_cannot_judge_ends_the_run_as_input() {
        struct Blind;
        impl Stopping for Blind {
            fn describe(&self) -> String {
                String::new()
            }
            fn next_batch(&self) -> Option<u32> {
                Some(3)
            }
            fn runs(&self) -> u32 {
                0
            }
            fn after_batch(&mut self, _: u32, _: u32) -> Result<String, RuleError> {
                Err("out/output0: cannot read".into())
            }
            fn record(&self) -> StoppingRule {
                record(0, 0)
            }
        }
        let e = follow(&mut Blind, &Lines::default(), |_, _| Ok(0)).unwrap_err();
        assert_eq!(e.to_string(), "out/output0: cannot read");
        assert_eq!(e.class(), ErrorClass::Input);
    }

    fn outcome(passed: usize, failed: usize, entries: usize) -> RunOutcome {
        let failures = (0..failed)
            .map(|i| crate::execute::CopyFailure {
                name: "toy".into(),
                vcd: i.to_string(),
                message: "NaN loss".into(),
            })
            .collect();
        RunOutcome {
            passed,
            failed,
            entries,
            failures,
            ..RunOutcome::default()
        }
    }

    /// A plan of `configs` configurations of `copies` copies each (only their count matters).
    fn plan(configs: usize, copies: usize) -> Plan {
        let devices = DeviceSet::cpu(2, 2).unwrap();
        let jobs = JobsFile::builtin("fast").unwrap();
        let options = PlanOptions {
            jobs_name: "fast".into(),
            names: vec!["toy_reg".into()],
            devices: devices.clone(),
            out: "out".into(),
            run: 0,
            env: suite_env(BTreeMap::new(), Path::new("out")).0,
        };
        let mut plan = crate::plan::plan(&jobs, &options).unwrap();
        let template = plan.executions[0].clone();
        plan.executions = (0..configs)
            .map(|_| Execution {
                copies: (0..copies).map(|_| template.copies[0].clone()).collect(),
                ..template.clone()
            })
            .collect();
        plan
    }

    #[test]
    fn the_tally_names_each_failure_and_refuses_lost_entries() {
        let lines = Lines::default();
        let plans = [plan(2, 2), plan(1, 2)];
        let outcomes = [outcome(1, 1, 4), outcome(1, 0, 2)];
        assert_eq!(
            tally(&plans, &outcomes, Path::new("out"), &lines).unwrap(),
            1
        );
        let said = lines.0.into_inner().unwrap();
        assert_eq!(
            said,
            [
                "failed: toy on 0: NaN loss",
                "2 configurations passed, 1 failed; 6 entries in out"
            ]
        );
        let short = [outcome(1, 1, 3), outcome(1, 0, 2)];
        let e = tally(&plans, &short, Path::new("out"), &Lines::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "out: 1 copy wrote no entry: its report stream could not be written (see the failures above)"
        );
        assert_eq!(e.class(), ErrorClass::Internal);
    }

    #[test]
    fn tasks_that_did_not_complete_are_named_and_counted() {
        let lines = Lines::default();
        let tasks = slurm::parse_tasks(
            "JobId=13 ArrayJobId=12 ArrayTaskId=1 JobState=FAILED ExitCode=1:0 StdOut=/o/slurm/a.log\n\
             JobId=12 ArrayJobId=12 ArrayTaskId=0 JobState=COMPLETED ExitCode=0:0\n",
        );
        assert_eq!(said_tasks("12", &tasks, Path::new("/o"), &lines), 1);
        let said = lines.0.into_inner().unwrap();
        assert_eq!(said.len(), 2);
        assert!(said[0].starts_with("failed: job 12, "), "{said:?}");
        assert_eq!(
            said[1],
            "job 12: 1 of 2 array tasks completed; reports in /o"
        );
    }
}
