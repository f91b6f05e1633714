//! Running a plan (docs/suite.md#execution-modes, #launching): configurations strictly in order;
//! the copies of a per-device configuration together, one thread each; whole-machine ones alone.
//!
//! A failing copy (bench error, NaN loss, panic) never stops the suite: its entry is
//! written with `completed: false` (see [`crate::report`]), the configuration's
//! summary.txt line says FAILED, and the next configuration starts.

use crate::bench::{BenchFactory, DataSource, DeviceSpec, SYNTHETIC_DATA};
use crate::plan::{CopyPlan, Execution, Plan};
pub use crate::report::CopyResult;
use crate::report::{self, EntryContext};
use crate::telemetry::{CopySampler, IdleBaseline, SaidOnce, TelemetryNote, TelemetryOptions};
use crate::timing::{Clock, LoopSize, Measurement, TimedWindow, measure_within};
use mlbench_schema::ReportEntry;
use mlbench_schema::value::Value;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::time::Instant;

/// What the caller sees while a plan runs (the CLI draws a progress bar from it).
#[derive(Debug, Clone, Copy)]
pub enum Progress<'a> {
    /// A configuration starts; `index` of `total` in the plan.
    Started {
        /// The configuration.
        execution: &'a Execution,
        /// Its index in the plan (from 0).
        index: usize,
        /// Configurations in the plan.
        total: usize,
    },
    /// One copy finished one observation.
    Observation {
        /// The configuration.
        execution: &'a Execution,
        /// The copy (index into `execution.copies`).
        copy: usize,
        /// The observation (from 0) of `repeat`.
        observation: u64,
        /// Its duration in seconds.
        duration: f64,
        /// The last loss of it.
        loss: f64,
    },
    /// Lines to say about telemetry: a copy's energy, the idle baseline, the samplers'
    /// facts (each fact once in an [`execute`] or [`execute_all`]).
    Telemetry(&'a [String]),
    /// A configuration finished; `line` is its summary.txt line.
    Finished {
        /// The configuration.
        execution: &'a Execution,
        /// The summary line.
        line: &'a str,
        /// Whether every copy passed.
        passed: bool,
    },
}

/// Runs copy `index` of a configuration elsewhere and says how it went: the CLI starts
/// one process per copy, as the suite did, so that seeds, thread pools, core pinning and
/// memory limits are the copy's own and a crash in libtorch takes only that copy down.
pub type Launcher<'a> = &'a (dyn Fn(&Plan, &Execution, usize) -> CopyResult + Sync);

/// How to run.
pub struct ExecuteOptions<'a> {
    /// `hostname` of the entries.
    pub hostname: String,
    /// Makes the clock of each copy ([`crate::timing::RealClock`] outside tests).
    pub clock: &'a (dyn Fn() -> Box<dyn Clock> + Sync),
    /// Called from the copies' threads as the run goes.
    pub progress: &'a (dyn Fn(&Progress<'_>) + Sync),
    /// Where copies run: `None` in threads of this process ([`run_copy`]), or by the
    /// launcher (which writes the entry itself, or has [`write_failure`] write it).
    pub launcher: Option<Launcher<'a>>,
    /// Telemetry beside every copy ([`run_copy`]'s sampler) and the idle baseline before
    /// each plan's first job ([`execute`]); off by default.
    pub telemetry: TelemetryOptions,
    /// Each copy's timed observations recorded by the factory's profiler
    /// ([`BenchFactory::profiler`]), its trace beside the reports and its summary in
    /// the entry ([`crate::profile`]).
    pub profile: bool,
}

/// One copy that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyFailure {
    /// The bench.
    pub name: String,
    /// Its `vcd`.
    pub vcd: String,
    /// What happened.
    pub message: String,
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOutcome {
    /// Configurations whose copies all passed.
    pub passed: usize,
    /// Configurations with at least one failed copy.
    pub failed: usize,
    /// Entries written (failure entries included).
    pub entries: usize,
    /// The report streams written, sorted.
    pub files: Vec<PathBuf>,
    /// Every failed copy.
    pub failures: Vec<CopyFailure>,
    /// The summary.txt lines, the `Total Time` line last.
    pub summary: Vec<String>,
}

/// A run that could not go on.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct ExecuteError {
    /// The file or folder.
    pub path: PathBuf,
    /// The cause.
    pub source: std::io::Error,
}

// A report stream or summary that could not be written.
mlbench_schema::classify_all!(Internal: ExecuteError);

/// Runs the copies of one configuration, together (one thread each), and says how each
/// went.
fn run_configuration(
    plan: &Plan,
    execution: &Execution,
    factory: &dyn BenchFactory,
    options: &ExecuteOptions<'_>,
) -> Vec<CopyResult> {
    let one = |c: usize| match options.launcher {
        Some(launch) => launch(plan, execution, c),
        None if crate::scaling::is_sweep(&execution.name) => {
            sweep_in_threads(plan, execution, c, factory, options)
        }
        None => run_copy(plan, execution, c, factory, options),
    };
    if execution.copies.len() == 1 {
        return vec![one(0)];
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..execution.copies.len())
            .map(|c| s.spawn(move || one(c)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                // run_copy catches the bench's panics; one here is the runner's.
                h.join().unwrap_or_else(|_| CopyResult {
                    written: None,
                    failure: Some("the runner thread panicked".into()),
                    entries: 0,
                    telemetry: Vec::new(),
                })
            })
            .collect()
    })
}

/// A sweep over world sizes with its ranks in threads of this process (no launcher).
fn sweep_in_threads(
    plan: &Plan,
    execution: &Execution,
    index: usize,
    factory: &dyn BenchFactory,
    options: &ExecuteOptions<'_>,
) -> CopyResult {
    let Some(copy) = execution.copies.get(index) else {
        return CopyResult {
            written: None,
            failure: Some(format!("no copy {index}")),
            entries: 0,
            telemetry: Vec::new(),
        };
    };
    let hz = options.telemetry.hz;
    let world = |k| crate::scaling::world_in_threads(plan, execution, index, factory, k, hz);
    let largest = crate::scaling::largest_world(copy);
    let hostname = &options.hostname;
    crate::scaling::run_sweep(plan, execution, index, factory, hostname, largest, &world)
}

/// Runs `plan` with benches from `factory`.
pub fn execute(
    plan: &Plan,
    factory: &dyn BenchFactory,
    options: &ExecuteOptions<'_>,
) -> Result<RunOutcome, ExecuteError> {
    execute_saying(plan, factory, options, &SaidOnce::default())
}

/// [`execute`], the telemetry facts in `said` said already.
fn execute_saying(
    plan: &Plan,
    factory: &dyn BenchFactory,
    options: &ExecuteOptions<'_>,
    said: &SaidOnce,
) -> Result<RunOutcome, ExecuteError> {
    let summary_path = plan.summary_path();
    let io = |path: &PathBuf| {
        let path = path.clone();
        move |source| ExecuteError { path, source }
    };
    std::fs::create_dir_all(&plan.out_dir).map_err(io(&plan.out_dir))?;
    let mut summary = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&summary_path)
        .map_err(io(&summary_path))?;
    let mut outcome = RunOutcome::default();
    let started = Instant::now();
    let idle = idle_baseline(plan, options, said);
    let total = plan.executions.len();
    for (index, execution) in plan.executions.iter().enumerate() {
        (options.progress)(&Progress::Started {
            execution,
            index,
            total,
        });
        let t0 = Instant::now();
        let results = run_configuration(plan, execution, factory, options);
        say_telemetry(execution, &results, &idle, options, said);
        let minutes = t0.elapsed().as_secs_f64() / 60.0;
        let mut failed = 0;
        for (copy, result) in execution.copies.iter().zip(&results) {
            outcome.entries += result.entries;
            if let Some(path) = &result.written {
                outcome.files.push(path.clone());
            }
            if let Some(message) = &result.failure {
                failed += 1;
                outcome.failures.push(CopyFailure {
                    name: execution.name.clone(),
                    vcd: copy.vcd.clone(),
                    message: message.clone(),
                });
            }
        }
        let line = summary_line(
            execution,
            plan.njobs,
            failed,
            execution.copies.len(),
            minutes,
        );
        if failed == 0 {
            outcome.passed += 1;
        } else {
            outcome.failed += 1;
        }
        writeln!(summary, "{line}")
            .and_then(|()| summary.flush())
            .map_err(io(&summary_path))?;
        (options.progress)(&Progress::Finished {
            execution,
            line: &line,
            passed: failed == 0,
        });
        outcome.summary.push(line);
    }
    let last = format!("Total Time {:8.2} s", started.elapsed().as_secs_f64());
    writeln!(summary, "{last}")
        .and_then(|()| summary.flush())
        .map_err(io(&summary_path))?;
    outcome.summary.push(last);
    outcome.files.sort();
    outcome.files.dedup();
    Ok(outcome)
}

/// The idle baseline of `plan` (none unless its telemetry asks for one), said as it goes.
fn idle_baseline(plan: &Plan, options: &ExecuteOptions<'_>, said: &SaidOnce) -> IdleBaseline {
    let t = &options.telemetry;
    if t.hz == 0 || t.idle.is_zero() {
        return IdleBaseline::default();
    }
    let starting = TelemetryNote {
        line: Some(format!(
            "idle baseline of {}: sampling the idle devices for {} s before the first job",
            crate::telemetry::run_label(plan),
            t.idle.as_secs_f64()
        )),
        facts: Vec::new(),
    };
    say(&starting, options, said);
    let idle = crate::telemetry::measure_idle(plan, t);
    say(&idle.note, options, said);
    idle
}

/// Says each copy's energy (from its telemetry file, net of the idle baseline) and the
/// samplers' facts, or why a copy has no telemetry.
fn say_telemetry(
    execution: &Execution,
    results: &[CopyResult],
    idle: &IdleBaseline,
    options: &ExecuteOptions<'_>,
    said: &SaidOnce,
) {
    let sweep = crate::scaling::is_sweep(&execution.name);
    for (copy, result) in execution.copies.iter().zip(results) {
        for (i, telemetry) in result.telemetry.iter().enumerate() {
            // A sweep's files are its world sizes', in order.
            let label = match sweep {
                true => format!("{} on {}, world size {}", execution.name, copy.vcd, i + 1),
                false => format!("{} on {}", execution.name, copy.vcd),
            };
            let note = match telemetry {
                Ok(path) => crate::telemetry::copy_note(path, &label, &idle.windows),
                Err(e) => Err(e.clone()),
            };
            let note = note.unwrap_or_else(|e| TelemetryNote {
                line: Some(format!("telemetry of {label}: {e}")),
                facts: Vec::new(),
            });
            say(&note, options, said);
        }
    }
}

/// Says `note`'s lines not said before, if any.
fn say(note: &TelemetryNote, options: &ExecuteOptions<'_>, said: &SaidOnce) {
    let lines = said.lines(note);
    if !lines.is_empty() {
        (options.progress)(&Progress::Telemetry(&lines));
    }
}

/// run.py's summary line (0255282 → HEAD, docs/suite.md#launching). Per-device configurations name
/// how many of their copies failed; whole-machine ones have only PASSED/FAILED.
pub fn summary_line(
    execution: &Execution,
    njobs: usize,
    failed: usize,
    copies: usize,
    minutes: f64,
) -> String {
    let head = format!("[{:2}/{:2}]", execution.jid, njobs);
    let tail = format!("{minutes:8.2} MIN | {}", execution.cmd);
    match failed {
        0 => format!("{head}[  /  ] PASSED | {tail}"),
        _ if execution.whole_machine => format!("{head}[  /  ] FAILED | {tail}"),
        k => format!("{head}[{k:2}/{copies:2}] FAILED | {tail}"),
    }
}

/// [`report::version_and_gpu`] of copy `index`, for [`run_copy`] and [`write_failure`].
fn entry_parts(
    execution: &Execution,
    index: usize,
    factory: &dyn BenchFactory,
) -> Option<(String, Option<String>)> {
    let copy = execution.copies.get(index)?;
    Some(report::version_and_gpu(&execution.name, copy, factory))
}

/// The copy as its entry records it: `batch_size` as the bench's script overwrites it
/// ([`BenchFactory::batch_size`]), and `synthetic_data` when its batches are made in
/// memory ([`BenchFactory::data_source`]).
fn recorded(copy: &CopyPlan, name: &str, factory: &dyn BenchFactory) -> CopyPlan {
    let mut copy = copy.clone();
    let batch_size = factory.batch_size(name, &copy.args);
    if batch_size != copy.args.batch_size {
        copy.arguments
            .insert("batch_size".to_owned(), Value::Int(batch_size));
    }
    // Among the arguments, as `smoke`: batches made in memory are another configuration
    // than the data set's files, and the id says so.
    if factory.data_source(name, &copy.args) == DataSource::Synthetic {
        (copy.arguments).insert(SYNTHETIC_DATA.to_owned(), Value::Bool(true));
    }
    copy
}

/// Appends the `completed: false` entry of copy `index` for a failure that happened outside
/// [`run_copy`] (its process died before writing one), with the peak memory of that
/// process where the launcher measured it (`PeakMemory::default()` where none ran).
pub fn write_failure(
    plan: &Plan,
    execution: &Execution,
    index: usize,
    factory: &dyn BenchFactory,
    hostname: &str,
    message: String,
    peak: &report::PeakMemory,
) -> CopyResult {
    let (Some(copy), Some((version, gpu))) = (
        execution.copies.get(index),
        entry_parts(execution, index, factory),
    ) else {
        return CopyResult {
            written: None,
            failure: Some(format!("no copy {index}; {message}")),
            entries: 0,
            telemetry: Vec::new(),
        };
    };
    // The copy's process died before writing its entry: its start is not known here,
    // so the entry says when it was written.
    let now = report::ctime_now();
    let ctx = EntryContext {
        name: &execution.name,
        version: &version,
        hostname,
        gpu: gpu.as_deref(),
        run_id: plan.run,
        suite: &plan.jobs_name,
        start_time: &now,
        end_time: &now,
    };
    let copy = &recorded(copy, &execution.name, factory);
    match report::append(&copy.report, &report::failure_entry(&ctx, copy, peak)) {
        Ok(()) => CopyResult {
            written: Some(copy.report.clone()),
            failure: Some(message),
            entries: 1,
            telemetry: Vec::new(),
        },
        Err(e) => CopyResult {
            written: None,
            failure: Some(format!("{message}; {e}")),
            entries: 0,
            telemetry: Vec::new(),
        },
    }
}

/// Runs copy `index` here and writes its entry; never panics out (the bench runs under
/// `catch_unwind`). With telemetry on, a sampler in this process reads the copy's devices
/// and the loop's timed part is marked on its clock.
pub fn run_copy(
    plan: &Plan,
    execution: &Execution,
    index: usize,
    factory: &dyn BenchFactory,
    options: &ExecuteOptions<'_>,
) -> CopyResult {
    let Some(copy) = execution.copies.get(index) else {
        return CopyResult {
            written: None,
            failure: Some(format!("no copy {index}")),
            entries: 0,
            telemetry: Vec::new(),
        };
    };
    let name = execution.name.as_str();
    let record = recorded(copy, name, factory);
    let (version, gpu) = entry_parts(execution, index, factory).unwrap_or_default();
    let sampler = CopySampler::start(plan, execution, index, options.telemetry.hz);
    // `get_arguments` sets start_time before the script builds its model.
    let start_time = report::ctime_now();
    let trace = crate::profile::trace_file(&copy.report, name, &copy.vcd);
    let (measured, telemetry) = crate::telemetry::run_sampled(sampler, |window| {
        profiled(options.profile, factory, copy.device, &trace, window, |w| {
            measure_copy(execution, index, factory, options, w)
        })
    });
    let (measured, profiled_s) = measured;
    let end_time = report::ctime_now();
    let ctx = EntryContext {
        name,
        version: &version,
        hostname: &options.hostname,
        gpu: gpu.as_deref(),
        run_id: plan.run,
        suite: &plan.jobs_name,
        start_time: &start_time,
        end_time: &end_time,
    };
    // Measured in this process, failures included: the peaks are also what tells an
    // entry of `mlbench run` from the suite's (schema's `entry_runtime`).
    let peak = report::PeakMemory {
        rss_bytes: crate::confine::peak_rss_bytes(),
        device_bytes: match copy.device {
            DeviceSpec::Cuda(_) => crate::confine::device_memory_of(std::process::id()),
            DeviceSpec::Cpu { .. } => None,
        },
    };
    let (mut entry, mut failure) = entry_of(&ctx, &record, &peak, measured);
    match profiled_s {
        Some(Ok(window_s)) if failure.is_none() => {
            let added = crate::profile::add_profile(&mut entry, &trace, name, &copy.vcd, window_s);
            if let Err(e) = added {
                failure = Some(format!("{name}: --profile: {e}"));
            }
        }
        Some(Err(e)) if failure.is_none() => failure = Some(format!("{name}: --profile: {e}")),
        _ => {}
    }
    let written = match report::append(&copy.report, &entry) {
        Ok(()) => Some(copy.report.clone()),
        Err(e) => {
            let message = match failure.take() {
                Some(f) => format!("{f}; {e}"),
                None => e.to_string(),
            };
            failure = Some(message);
            None
        }
    };
    let entries = usize::from(written.is_some());
    CopyResult {
        written,
        failure,
        entries,
        telemetry: telemetry.into_iter().collect(),
    }
}

/// Builds copy `index`'s bench and runs its loop under `catch_unwind`, its timed part
/// marked on `window`.
/// `measure` inside `window`, which with `profile` also runs `factory`'s profiler for
/// `device` (its trace to `trace`); returns the measurement and the profiled seconds, or
/// why there is no profile.
fn profiled<T>(
    profile: bool,
    factory: &dyn BenchFactory,
    device: DeviceSpec,
    trace: &std::path::Path,
    window: &mut dyn TimedWindow,
    measure: impl FnOnce(&mut dyn TimedWindow) -> T,
) -> (T, Option<Result<f64, String>>) {
    if !profile {
        return (measure(window), None);
    }
    let Some(profiler) = factory.profiler(device) else {
        let why = "this runner has no profiler for the device".to_owned();
        return (measure(window), Some(Err(why)));
    };
    let mut profiled = crate::profile::ProfiledWindow::new(window, profiler, trace.to_owned());
    let measured = measure(&mut profiled);
    (measured, profiled.outcome())
}

fn measure_copy(
    execution: &Execution,
    index: usize,
    factory: &dyn BenchFactory,
    options: &ExecuteOptions<'_>,
    window: &mut dyn TimedWindow,
) -> std::thread::Result<Result<Measurement, String>> {
    let name = execution.name.as_str();
    catch_unwind(AssertUnwindSafe(|| -> Result<_, String> {
        let copy = execution
            .copies
            .get(index)
            .ok_or_else(|| format!("no copy {index}"))?;
        if factory.source(name).is_none() {
            return Err(format!(
                "no model source for `{name}` (its version is unknown)"
            ));
        }
        let mut bench = factory
            .create(name, &copy.args, copy.device)
            .map_err(|e| e.to_string())?;
        let mut clock = (options.clock)();
        let size = LoopSize {
            // The items the script counts per batch: its recorded batch size.
            batch_size: factory.batch_size(name, &copy.args),
            number: copy.args.number,
            repeat: factory.observations(name, copy.args.repeat),
        };
        let mut on_observation = |observation, duration, loss| {
            (options.progress)(&Progress::Observation {
                execution,
                copy: index,
                observation,
                duration,
                loss,
            })
        };
        measure_within(
            bench.as_mut(),
            clock.as_mut(),
            size,
            &mut on_observation,
            window,
        )
        .map_err(|e| e.to_string())
    }))
}

/// The entry of a copy and its failure, if any: the measurement's entry (a non-finite
/// value logged is its failure), or a failure entry for an error or a panic.
fn entry_of(
    ctx: &EntryContext<'_>,
    record: &CopyPlan,
    peak: &report::PeakMemory,
    measured: std::thread::Result<Result<Measurement, String>>,
) -> (ReportEntry, Option<String>) {
    let name = ctx.name;
    match measured {
        Ok(Ok(m)) => {
            let failure = m.nan.map(|nan| {
                let what = match nan.what {
                    "batch_loss" => "loss".to_owned(),
                    other => other.to_owned(),
                };
                format!(
                    "{name}: {what} {} at step {} (observation {})",
                    nan.value, nan.step, nan.observation
                )
            });
            (report::build_entry(ctx, record, &m, peak), failure)
        }
        Ok(Err(message)) => (report::failure_entry(ctx, record, peak), Some(message)),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_owned());
            (
                report::failure_entry(ctx, record, peak),
                Some(format!("{name}: panicked: {what}")),
            )
        }
    }
}

/// Every run of `--repeat-suite`: the plan of each run, run in order. Stops only on an
/// error writing summary.txt.
pub fn execute_all(
    plans: &[Plan],
    factory: &dyn BenchFactory,
    options: &ExecuteOptions<'_>,
) -> Result<Vec<RunOutcome>, ExecuteError> {
    let said = SaidOnce::default();
    plans
        .iter()
        .map(|p| execute_saying(p, factory, options, &said))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn execution(whole: bool) -> Execution {
        Execution {
            jid: 3,
            name: "vae".into(),
            cmd: "./vae/run.sh".into(),
            config: 0,
            configs: 1,
            whole_machine: whole,
            copies: Vec::new(),
        }
    }

    #[test]
    fn summary_lines_as_run_py() {
        assert_eq!(
            summary_line(&execution(false), 19, 0, 8, 0.2666),
            "[ 3/19][  /  ] PASSED |     0.27 MIN | ./vae/run.sh"
        );
        assert_eq!(
            summary_line(&execution(false), 19, 2, 8, 1.0),
            "[ 3/19][ 2/ 8] FAILED |     1.00 MIN | ./vae/run.sh"
        );
        assert_eq!(
            summary_line(&execution(true), 19, 1, 1, 12.5),
            "[ 3/19][  /  ] FAILED |    12.50 MIN | ./vae/run.sh"
        );
    }
}
