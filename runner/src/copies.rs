//! One process per copy, as the suite ran them: `mlbench run` starts itself with the hidden
//! `--copy RUN:CONFIG:COPY` for every copy of every configuration. The child plans the same
//! run, confines itself to the copy's share of the machine (CPUs, memory), seeds libtorch
//! with the copy's seed in a process of its own, runs the copy, appends its entry and prints
//! one JSON line (`{"written": PATH|null, "failure": TEXT|null}`). A child that dies (a
//! libtorch abort, a segfault, the OOM killer) takes only its copy down: the parent writes
//! that copy's `completed: false` entry and the suite goes on.

use crate::bench::{BenchFactory, DeviceSpec};
use crate::confine::{
    allowed_cpus, keep_freed_memory, limit_memory, machine_memory, pin_current_thread, share_of,
};
use crate::execute::{CopyResult, ExecuteOptions, Progress, run_copy, write_failure};
use crate::plan::{Execution, Plan, PlanError, PlanOptions, plan};
use crate::report::PeakMemory;
use crate::smoke::Smoke;
use crate::timing::{Clock, RealClock};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Why a child could not run its copy.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// `--copy` is not three numbers.
    #[error("--copy {0}: expected RUN:CONFIG:COPY (three numbers)")]
    Spec(String),
    /// The run has fewer configurations.
    #[error("--copy: run {run} has no configuration {execution}")]
    NoConfiguration {
        /// The run.
        run: u32,
        /// The configuration asked for.
        execution: usize,
    },
    /// The configuration has fewer copies.
    #[error("--copy: {name} has no copy {copy}")]
    NoCopy {
        /// The configuration.
        name: String,
        /// The copy asked for.
        copy: usize,
    },
    /// The plan failed.
    #[error(transparent)]
    Plan(#[from] PlanError),
}

/// The copy a child runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopySpec {
    run: u32,
    execution: usize,
    copy: usize,
}

impl CopySpec {
    /// `RUN:CONFIG:COPY`.
    pub fn parse(text: &str) -> Result<CopySpec, CopyError> {
        let bad = || CopyError::Spec(text.to_owned());
        let parts: Vec<&str> = text.split(':').collect();
        let [run, execution, copy] = parts.as_slice() else {
            return Err(bad());
        };
        Ok(CopySpec {
            run: run.parse().map_err(|_| bad())?,
            execution: execution.parse().map_err(|_| bad())?,
            copy: copy.parse().map_err(|_| bad())?,
        })
    }
}

/// The result line a child prints.
#[derive(serde::Serialize, serde::Deserialize)]
struct ResultLine {
    written: Option<PathBuf>,
    failure: Option<String>,
}

/// The child: runs copy `spec` of the plan `options` gives for its run, with `threads`
/// setting the intra-op threads of a GPU copy (libtorch's), and prints its result line.
pub fn run_child(
    jobs: &mlbench_schema::jobs::JobsFile,
    options: PlanOptions,
    spec: CopySpec,
    smoke: Option<&Smoke>,
    factory: &dyn BenchFactory,
    threads: &dyn Fn(usize),
) -> Result<(), CopyError> {
    let mut plans = [plan(
        jobs,
        &PlanOptions {
            run: spec.run,
            ..options
        },
    )?];
    if let Some(smoke) = smoke {
        smoke.apply(&mut plans);
    }
    let [plan] = plans;
    let execution = plan
        .executions
        .get(spec.execution)
        .ok_or(CopyError::NoConfiguration {
            run: spec.run,
            execution: spec.execution,
        })?;
    let copy = execution
        .copies
        .get(spec.copy)
        .ok_or_else(|| CopyError::NoCopy {
            name: execution.name.clone(),
            copy: spec.copy,
        })?;
    let is_cpu = matches!(copy.device, DeviceSpec::Cpu { .. });
    // The host memory limit only for CPU devices: a CUDA process maps address space far
    // beyond its data, and a GPU copy's memory is the GPU's own.
    let memory = if is_cpu { machine_memory() } else { None };
    let share = share_of(
        &plan.devices,
        copy.device,
        execution.whole_machine,
        &allowed_cpus(),
        memory,
    );
    // Before libtorch starts a thread, so all of them inherit it.
    if let Err(e) = pin_current_thread(&share.cpus) {
        eprintln!("warning: cannot pin copy to CPUs {:?}: {e}", share.cpus);
    }
    if let Some(bytes) = share.memory
        && let Err(e) = limit_memory(bytes)
    {
        eprintln!("warning: cannot limit copy's memory to {bytes} bytes: {e}");
    }
    // libtorch's freed activations stay in the heap for the next step.
    keep_freed_memory();
    if !is_cpu {
        threads(share.cpus.len().max(1));
    }
    // Fault injection for the tests of a dying copy (tests/cli/run.rs): the process aborts
    // as libtorch does on a fatal error, before writing anything.
    if std::env::var("MLBENCH_TEST_ABORT_COPY")
        .is_ok_and(|v| CopySpec::parse(&v).ok() == Some(spec))
    {
        std::process::abort();
    }
    let clock = || -> Box<dyn Clock> { Box::new(RealClock::default()) };
    let quiet = |_: &Progress<'_>| {};
    let result = run_copy(
        &plan,
        execution,
        spec.copy,
        factory,
        &ExecuteOptions {
            hostname: crate::setup::hostname(),
            clock: &clock,
            progress: &quiet,
            launcher: None,
        },
    );
    let line = ResultLine {
        written: result.written,
        failure: result.failure,
    };
    // Cannot fail (a path and a string); an empty line reads as "ended without a result".
    println!("{}", serde_json::to_string(&line).unwrap_or_default());
    Ok(())
}

/// How the parent starts a child: the arguments it repeats.
#[derive(Debug, Clone)]
pub struct ChildCommand {
    /// The mlbench binary.
    pub exe: PathBuf,
    /// `--jobs`.
    pub jobs: PathBuf,
    /// `--out-dir`.
    pub out: PathBuf,
    /// `--devices`.
    pub devices: Option<String>,
    /// `--name`s.
    pub names: Vec<String>,
    /// `--smoke`.
    pub smoke: bool,
}

/// The parent's side: starts the child of copy `index` and reads its result; writes the
/// copy's failure entry when the child gave none.
pub fn launch(
    child: &ChildCommand,
    factory: &dyn BenchFactory,
    hostname: &str,
    plan: &Plan,
    execution: &Execution,
    index: usize,
) -> CopyResult {
    let none = PeakMemory::default();
    let fail_with = |message: String, peak: &PeakMemory| {
        write_failure(plan, execution, index, factory, hostname, message, peak)
    };
    let fail = |message: String| fail_with(message, &none);
    let Some(position) = plan
        .executions
        .iter()
        .position(|e| std::ptr::eq(e, execution))
    else {
        return fail("the configuration is not in its plan".into());
    };
    let mut cmd = Command::new(&child.exe);
    cmd.arg("run")
        .arg("--jobs")
        .arg(&child.jobs)
        .arg("--out-dir")
        .arg(&child.out)
        .arg("--copy")
        .arg(format!("{}:{position}:{index}", plan.run));
    if let Some(d) = &child.devices {
        cmd.arg("--devices").arg(d);
    }
    for name in &child.names {
        cmd.arg("--name").arg(name);
    }
    if child.smoke {
        cmd.arg("--smoke");
    }
    cmd.stdin(Stdio::null());
    let (out, rss_bytes) = match output_and_peak(&mut cmd) {
        Ok(out) => out,
        Err(e) => return fail(format!("cannot start {}: {e}", child.exe.display())),
    };
    // The dead child's own peak, as its entry would have had it.
    let peak = PeakMemory {
        rss_bytes,
        device_bytes: None,
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail = stderr_tail(&stderr);
    let parsed = String::from_utf8_lossy(&out.stdout)
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<ResultLine>(l).ok());
    match (out.status.success(), parsed) {
        (true, Some(r)) => CopyResult {
            written: r.written,
            failure: r.failure,
        },
        (success, _) => {
            let how = if success {
                "ended without a result".to_owned()
            } else {
                describe(out.status)
            };
            let name = &execution.name;
            let message = match tail {
                Some(t) => format!("{name}: the copy's process {how}: {t}"),
                None => format!("{name}: the copy's process {how}"),
            };
            fail_with(message, &peak)
        }
    }
}

/// `cmd.output()`, and the child's peak resident set size in bytes (`wait4`'s
/// `ru_maxrss`, KiB on Linux; `None` elsewhere), which the kernel keeps for a child killed
/// by a signal too.
fn output_and_peak(cmd: &mut Command) -> std::io::Result<(Output, Option<u64>)> {
    #[cfg(target_os = "linux")]
    {
        use std::io::Read;
        use std::os::unix::process::ExitStatusExt;
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
        let mut stderr_pipe = child.stderr.take().expect("a piped stderr");
        let stderr = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stderr_pipe.read_to_end(&mut bytes);
            bytes
        });
        // Read to the end (a read error leaves what came), so the child is always reaped.
        let mut stdout = Vec::new();
        if let Some(mut pipe) = child.stdout.take() {
            let _ = pipe.read_to_end(&mut stdout);
        }
        let stderr = stderr.join().unwrap_or_default();
        let pid = child.id() as libc::pid_t;
        let mut status: libc::c_int = 0;
        // SAFETY: `rusage` is plain integers, for which all zeros is a value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: wait4 reaps `pid`, our child (std's `Child` is never waited on after
            // this), and writes the two values it is given, nothing else.
            if unsafe { libc::wait4(pid, &mut status, 0, &mut usage) } == pid {
                break;
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        let peak = u64::try_from(usage.ru_maxrss).ok().map(|kib| kib * 1024);
        let status = std::process::ExitStatus::from_raw(status);
        Ok((
            Output {
                status,
                stdout,
                stderr,
            },
            peak.filter(|&b| b > 0),
        ))
    }
    #[cfg(not(target_os = "linux"))]
    {
        cmd.output().map(|out| (out, None))
    }
}

/// The last non-empty stderr line (the child's error, or libtorch's last words).
fn stderr_tail(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_owned)
}

/// How a child ended, in words.
fn describe(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                6 => " (SIGABRT)",
                9 => " (SIGKILL, the OOM killer?)",
                11 => " (SIGSEGV)",
                _ => "",
            };
            return format!("was killed by signal {signal}{name}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => "ended abnormally".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_specs() {
        assert_eq!(
            CopySpec::parse("3:12:1").unwrap(),
            CopySpec {
                run: 3,
                execution: 12,
                copy: 1
            }
        );
        for bad in ["", "1:2", "1:2:3:4", "a:1:1", "-1:0:0"] {
            assert!(CopySpec::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            stderr_tail("x\nterminate called after throwing\n\n").as_deref(),
            Some("terminate called after throwing")
        );
        assert_eq!(stderr_tail("\n \n"), None);
    }
}
