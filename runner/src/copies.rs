//! One process per copy, as the suite ran them: `mlbench run` starts itself with the hidden
//! `--copy RUN:CONFIG:COPY` for every copy of every configuration. The child plans the same
//! run, confines itself to the copy's share of the machine (CPUs, memory), seeds libtorch
//! with the copy's seed in a process of its own, runs the copy, appends its entry and prints
//! one JSON line (`{"written": PATH|null, "failure": TEXT|null}`). A child that dies (a
//! libtorch abort, a segfault, the OOM killer) takes only its copy down: the parent writes
//! that copy's `completed: false` entry and the suite goes on.

use crate::bench::{BenchFactory, DeviceSpec, RankTiming};
use crate::confine::{
    allowed_cpus, keep_freed_memory, limit_memory, machine_memory, pin_current_thread, share_of,
};
use crate::devices::DeviceSet;
use crate::execute::{CopyResult, ExecuteOptions, Progress, run_copy, write_failure};
use crate::plan::{Execution, Plan, PlanError, PlanOptions, plan};
use crate::rendezvous::Rendezvous;
use crate::report::PeakMemory;
use crate::scaling::{RANK_TIMEOUT, World, WorldOutcome};
use crate::smoke::Smoke;
use crate::telemetry::{CopySampler, TelemetryOptions};
use crate::timing::{Clock, RealClock};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Why a child could not run its copy.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// `--copy` is not three numbers.
    #[error("`{0}`: expected RUN:CONFIG:COPY (three numbers)")]
    Spec(String),
    /// The run has fewer configurations.
    #[error("run {run} has no configuration {execution}")]
    NoConfiguration {
        /// The run.
        run: u32,
        /// The configuration asked for.
        execution: usize,
    },
    /// The configuration has fewer copies.
    #[error("{name} has no copy {copy}")]
    NoCopy {
        /// The configuration.
        name: String,
        /// The copy asked for.
        copy: usize,
    },
    /// The plan failed.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The rendezvous variables of a rank are malformed.
    #[error(transparent)]
    Rank(crate::rendezvous::RendezvousError),
}

// What the parent passed its child does not make a copy: its command line.
mlbench_schema::classify_all!(Input: CopyError);

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

/// The result line a child prints; a rank of a data-parallel world prints its timing.
#[derive(serde::Serialize, serde::Deserialize)]
struct ResultLine {
    written: Option<PathBuf>,
    failure: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timing: Option<RankTiming>,
    /// The copy's telemetry file, or why it has none; a rank 0's, its world's (none
    /// sampled: absent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    telemetry: Vec<Result<PathBuf, String>>,
}

/// What a child changes in its copy's plan as the parent did (its sizes, its data), and
/// how often its sampler samples.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChildSizes<'a> {
    /// `--smoke`'s sizes.
    pub smoke: Option<&'a Smoke>,
    /// `--synthetic-data`.
    pub synthetic_data: bool,
    /// `--sample-hz` (0: no sampler).
    pub sample_hz: u32,
    /// `--profile`.
    pub profile: bool,
}

/// The child: runs copy `spec` of the plan `options` gives for its run, changed as
/// `sizes` say, with `threads` setting the intra-op threads of a GPU copy (libtorch's), a
/// sampler beside it, and prints its result line.
pub fn run_child(
    jobs: &mlbench_schema::jobs::JobsFile,
    options: PlanOptions,
    spec: CopySpec,
    sizes: ChildSizes<'_>,
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
    if let Some(smoke) = sizes.smoke {
        smoke.apply(&mut plans);
    }
    if sizes.synthetic_data {
        crate::synthetic::mark(&mut plans);
    }
    let sample_hz = sizes.sample_hz;
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
    // A rank of a data-parallel world (`scaling`): the launcher set torchrun's variables.
    let rendezvous = Rendezvous::from_env(RANK_TIMEOUT).map_err(CopyError::Rank)?;
    let (device, whole_machine) = match &rendezvous {
        Some(r) => (plan.devices.student(r.local as u32), false),
        None => (copy.device, execution.whole_machine),
    };
    confine(&plan.devices, device, whole_machine, threads);
    // Fault injection for the tests of a dying copy (tests/cli/run.rs): the process aborts
    // as libtorch does on a fatal error, before writing anything.
    if std::env::var("MLBENCH_TEST_ABORT_COPY")
        .is_ok_and(|v| CopySpec::parse(&v).ok() == Some(spec))
    {
        std::process::abort();
    }
    if let Some(rendezvous) = rendezvous {
        let sampler = world_sampler(&plan, &execution.name, spec.copy, &rendezvous, sample_hz);
        run_rank(&execution.name, copy, device, &rendezvous, factory, sampler);
        return Ok(());
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
            telemetry: TelemetryOptions {
                hz: sample_hz,
                idle: std::time::Duration::ZERO,
            },
            profile: sizes.profile,
        },
    );
    let line = ResultLine {
        written: result.written,
        failure: result.failure,
        timing: None,
        telemetry: result.telemetry,
    };
    // Cannot fail (a path and a string); an empty line reads as "ended without a result".
    println!("{}", serde_json::to_string(&line).unwrap_or_default());
    Ok(())
}

/// Confines this process to its device's share of the machine (CPUs, memory), before
/// libtorch starts a thread so that all of them inherit it; `threads` sets a GPU copy's
/// intra-op threads to its CPUs.
fn confine(devices: &DeviceSet, device: DeviceSpec, whole_machine: bool, threads: &dyn Fn(usize)) {
    let is_cpu = matches!(device, DeviceSpec::Cpu { .. });
    // The host memory limit only for CPU devices: a CUDA process maps address space far
    // beyond its data, and a GPU copy's memory is the GPU's own.
    let memory = if is_cpu { machine_memory() } else { None };
    let share = share_of(devices, device, whole_machine, &allowed_cpus(), memory);
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
}

/// The variable telling a world's ranks over how many nodes it runs (set by the
/// launcher): rank 0 samples its world only when it is on one node, where every rank's
/// device is its own node's.
pub const WORLD_NODES_VAR: &str = "MLBENCH_WORLD_NODES";

/// Rank 0's sampler of its world's devices, when it samples (`hz` above 0) and its world
/// is on its node ([`WORLD_NODES_VAR`] is 1); why not, when the world spans nodes.
fn world_sampler(
    plan: &Plan,
    name: &str,
    copy: usize,
    rendezvous: &Rendezvous,
    hz: u32,
) -> Result<Option<CopySampler>, String> {
    if rendezvous.rank != 0 || hz == 0 {
        return Ok(None);
    }
    match std::env::var(WORLD_NODES_VAR).ok().as_deref() {
        Some("1") => {
            let copy = u32::try_from(copy).unwrap_or(u32::MAX);
            CopySampler::for_world(plan, name, copy, rendezvous.world, hz)
        }
        Some(nodes) => Err(format!(
            "not sampled: the world's {} ranks span {nodes} nodes, and rank 0 reads only its own node's devices",
            rendezvous.world
        )),
        None => Ok(None),
    }
}

/// One rank of a data-parallel world: runs it, its timed steps marked on `sampler`'s
/// window, and prints its result line (its timing, its telemetry).
fn run_rank(
    name: &str,
    copy: &crate::plan::CopyPlan,
    device: DeviceSpec,
    rendezvous: &Rendezvous,
    factory: &dyn BenchFactory,
    sampler: Result<Option<CopySampler>, String>,
) {
    // Fault injection for the tests of a dying rank: `RANK:WORLD` aborts that rank.
    if std::env::var("MLBENCH_TEST_ABORT_RANK")
        .is_ok_and(|v| v == format!("{}:{}", rendezvous.rank, rendezvous.world))
    {
        std::process::abort();
    }
    let (result, telemetry) = crate::telemetry::run_sampled(sampler, |window| {
        factory.rank(name, &copy.args, device, rendezvous, window)
    });
    let line = ResultLine {
        written: None,
        failure: result.as_ref().err().map(ToString::to_string),
        timing: result.ok(),
        telemetry: telemetry.into_iter().collect(),
    };
    println!("{}", serde_json::to_string(&line).unwrap_or_default());
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
    /// `--synthetic-data`.
    pub synthetic_data: bool,
    /// `--profile`.
    pub profile: bool,
    /// `--sample-hz`: the copies' telemetry samples per second (0: none).
    pub sample_hz: u32,
    /// Where the ranks of a data-parallel world run.
    pub ranks: Ranks,
    /// What the suite's config.env exports to every script (`DATA_DIRECTORY`,
    /// `TEMP_DIRECTORY`, `FAKE_DATASET`), set in each copy's environment: the models find
    /// their data sets where the jobs' arguments do.
    pub exports: Vec<(String, String)>,
}

impl Ranks {
    /// The nodes of the Slurm allocation this process runs in (`SLURM_JOB_NUM_NODES`),
    /// `per_node` devices each; `None` outside one.
    pub fn of_allocation(per_node: u32) -> Option<Ranks> {
        let nodes = std::env::var("SLURM_JOB_NUM_NODES").ok()?;
        let nodes = nodes.trim().parse::<u32>().ok().filter(|&n| n > 0)?;
        Some(Ranks::Slurm { nodes, per_node })
    }
}

/// Where the ranks of a data-parallel world (`scaling`) run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranks {
    /// Processes on this machine, rank r on device r.
    Local,
    /// Tasks of `srun` across the nodes of the Slurm allocation this runs in
    /// (`--across-nodes`): `nodes` nodes of `per_node` devices, rank r on device
    /// r mod `per_node` of node r ÷ `per_node`.
    Slurm {
        /// The allocation's nodes.
        nodes: u32,
        /// Devices per node.
        per_node: u32,
    },
}

impl ChildCommand {
    /// The command that runs copy `index` of configuration `position` of run `run`.
    fn command(&self, run: u32, position: usize, index: usize) -> Command {
        let mut cmd = Command::new(&self.exe);
        cmd.args(self.args(run, position, index));
        cmd.envs(self.exports.iter().map(|(k, v)| (k, v)));
        cmd.stdin(Stdio::null());
        cmd
    }

    /// The child's arguments after the binary.
    fn args(&self, run: u32, position: usize, index: usize) -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = vec![
            "run".into(),
            "--jobs".into(),
            self.jobs.clone().into(),
            "--out-dir".into(),
            self.out.clone().into(),
            "--copy".into(),
            format!("{run}:{position}:{index}").into(),
        ];
        if let Some(d) = &self.devices {
            args.extend(["--devices".into(), d.into()]);
        }
        for name in &self.names {
            args.extend(["--name".into(), name.into()]);
        }
        if self.synthetic_data {
            args.push("--synthetic-data".into());
        }
        if self.profile {
            args.push("--profile".into());
        }
        if self.smoke {
            args.push("--smoke".into());
        }
        args.extend(["--sample-hz".into(), self.sample_hz.to_string().into()]);
        args
    }

    /// The telemetry of a world rank 0 `said`, or, where it was to sample and named no
    /// file (it died), why there is none.
    fn rank_zero_telemetry(
        &self,
        said: Option<Result<PathBuf, String>>,
    ) -> Option<Result<PathBuf, String>> {
        match said {
            None if self.sample_hz > 0 => Some(Err(
                "rank 0 ended without naming its telemetry file (a `.part` may be left)".into(),
            )),
            said => said,
        }
    }

    /// `srun` starting a world of `world` ranks of the copy over the allocation's nodes,
    /// `per_node` a node, each task told by `MLBENCH_RANKS=slurm` to take its rank from
    /// Slurm; the master is this host, where rank 0 runs.
    fn srun(&self, run: u32, position: usize, index: usize, world: u32, per_node: u32) -> Command {
        let nodes = world.div_ceil(per_node.max(1));
        let mut cmd = Command::new("srun");
        cmd.args([
            "--label".to_owned(),
            "--kill-on-bad-exit=1".to_owned(),
            // The batch script holds the first node's CPUs; its steps share them.
            "--overlap".to_owned(),
            format!("--nodes={nodes}"),
            format!("--ntasks={world}"),
            format!("--ntasks-per-node={}", per_node.min(world).max(1)),
        ]);
        cmd.arg(&self.exe).args(self.args(run, position, index));
        cmd.env("MLBENCH_RANKS", crate::rendezvous::SLURM_RANKS)
            .env(WORLD_NODES_VAR, nodes.to_string());
        cmd.stdin(Stdio::null());
        cmd
    }
}

/// How long the other ranks of a world may run on once one rank's process has ended
/// before they are killed: a healthy world's ranks end within moments of each other, and
/// one whose peer died fails its collective at once, so only a rank stuck outside c10d
/// (or still waiting to meet a peer that died first) is left to kill.
const RANK_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Runs a world of `k` ranks of the copy as `k` processes on this node, with torchrun's
/// variables: rank 0's timing, or the first failure.
fn launch_world(child: &ChildCommand, run: u32, position: usize, index: usize, k: usize) -> World {
    let port = match crate::rendezvous::free_port() {
        Ok(port) => port,
        Err(e) => return World::unsampled(Err(format!("no free port: {e}"))),
    };
    let mut ranks = Vec::with_capacity(k);
    for rank in 0..k {
        let rendezvous = Rendezvous::on_this_host(port, rank, k, RANK_TIMEOUT);
        let mut cmd = child.command(run, position, index);
        cmd.envs(rendezvous.vars()).env(WORLD_NODES_VAR, "1");
        match RankProcess::spawn(&mut cmd) {
            Ok(p) => ranks.push(p),
            Err(e) => {
                for mut p in ranks {
                    p.kill();
                }
                return World::unsampled(Err(format!("cannot start rank {rank}: {e}")));
            }
        }
    }
    let (worlds, killed): (Vec<World>, Vec<bool>) = wait_world(ranks).into_iter().unzip();
    let telemetry = child.rank_zero_telemetry(worlds.first().and_then(|w| w.telemetry.clone()));
    // The cause, not its echo: a rank killed for outliving a dead peer names no cause.
    let cause = (worlds.iter().zip(&killed).enumerate()).find_map(|(rank, (w, killed))| {
        w.outcome
            .as_ref()
            .err()
            .filter(|_| !killed)
            .map(|e| (rank, e))
    });
    let outcome = match cause {
        Some((rank, e)) => Err(format!("rank {rank}: {e}")),
        None => crate::scaling::gather(worlds.into_iter().map(|w| w.outcome).collect()),
    };
    World { outcome, telemetry }
}

/// Runs a world of `k` ranks of the copy as tasks of `srun` over the allocation's nodes:
/// rank 0's timing, or the first failure a rank reported, or srun's.
fn srun_world(
    child: &ChildCommand,
    run: u32,
    position: usize,
    index: usize,
    k: usize,
    per_node: u32,
) -> World {
    let (out, lines) = match srun_output(child, run, position, index, k, per_node) {
        Ok(said) => said,
        Err(e) => return World::unsampled(Err(e)),
    };
    let said = (lines.iter().find(|(r, _)| *r == 0)).and_then(|(_, l)| l.telemetry.first());
    World {
        outcome: srun_outcome(&out, &lines, k),
        telemetry: child.rank_zero_telemetry(said.cloned()),
    }
}

/// Runs srun for a world of `k` ranks: its output, and its ranks' result lines.
fn srun_output(
    child: &ChildCommand,
    run: u32,
    position: usize,
    index: usize,
    k: usize,
    per_node: u32,
) -> Result<(Output, Vec<(usize, ResultLine)>), String> {
    let port = crate::rendezvous::free_port().map_err(|e| format!("no free port: {e}"))?;
    let mut cmd = child.srun(run, position, index, k as u32, per_node);
    cmd.env("MASTER_ADDR", crate::setup::hostname())
        .env("MASTER_PORT", port.to_string());
    let out = cmd
        .output()
        .map_err(|e| format!("cannot start srun (is this a Slurm allocation?): {e}"))?;
    let lines = labelled_results(&String::from_utf8_lossy(&out.stdout));
    Ok((out, lines))
}

/// A srun world's outcome: rank 0's timing, or the first failure a rank reported, or
/// srun's.
fn srun_outcome(out: &Output, lines: &[(usize, ResultLine)], k: usize) -> WorldOutcome {
    if let Some((rank, failure)) = lines
        .iter()
        .find_map(|(r, l)| l.failure.as_ref().map(|f| (*r, f)))
    {
        return Err(format!("rank {rank}: {failure}"));
    }
    let first = lines
        .iter()
        .find(|(r, _)| *r == 0)
        .and_then(|(_, l)| l.timing);
    match (out.status.success(), first) {
        (true, Some(t)) if lines.len() == k => Ok(t),
        (success, _) => {
            let how = if success {
                format!("reported {} of {k} ranks", lines.len())
            } else {
                describe(out.status)
            };
            let stderr = String::from_utf8_lossy(&out.stderr);
            Err(match stderr_tail(&stderr) {
                Some(t) => format!("srun {how}: {t}"),
                None => format!("srun {how}"),
            })
        }
    }
}

/// The result lines of `srun --label`'s output (`3: {…}`), by task.
fn labelled_results(stdout: &str) -> Vec<(usize, ResultLine)> {
    stdout
        .lines()
        .filter_map(|line| {
            let (label, rest) = line.split_once(": ")?;
            let rank = label.trim().parse().ok()?;
            Some((rank, serde_json::from_str::<ResultLine>(rest).ok()?))
        })
        .collect()
}

/// One rank's process, its output read as it comes.
struct RankProcess {
    child: std::process::Child,
    stdout: Option<std::thread::JoinHandle<Vec<u8>>>,
    stderr: Option<std::thread::JoinHandle<Vec<u8>>>,
    status: Option<std::process::ExitStatus>,
    killed: bool,
}

impl RankProcess {
    fn spawn(cmd: &mut Command) -> std::io::Result<Self> {
        use std::io::Read;
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
        let reader = |pipe: Option<Box<dyn Read + Send>>| {
            pipe.map(|mut p| {
                std::thread::spawn(move || {
                    let mut bytes = Vec::new();
                    let _ = p.read_to_end(&mut bytes);
                    bytes
                })
            })
        };
        let stdout = reader(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let stderr = reader(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        Ok(Self {
            child,
            stdout,
            stderr,
            status: None,
            killed: false,
        })
    }

    fn kill(&mut self) {
        if self.status.is_none() {
            let _ = self.child.kill();
            self.status = self.child.wait().ok();
            self.killed = true;
        }
    }

    /// What the rank said: its timing, or why it has none, and its telemetry (rank 0's);
    /// and whether it was killed.
    fn outcome(mut self) -> (World, bool) {
        let killed = self.killed;
        (self.said(), killed)
    }

    fn said(&mut self) -> World {
        let text = |h: Option<std::thread::JoinHandle<Vec<u8>>>| {
            String::from_utf8_lossy(&h.and_then(|h| h.join().ok()).unwrap_or_default()).into_owned()
        };
        let (stdout, stderr) = (text(self.stdout.take()), text(self.stderr.take()));
        if self.killed {
            return World::unsampled(Err(format!(
                "killed {} s after another rank ended",
                RANK_GRACE.as_secs()
            )));
        }
        let line = stdout
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str::<ResultLine>(l).ok());
        match (self.status, line) {
            (Some(s), Some(line)) if s.success() => World {
                outcome: match (line.timing, line.failure) {
                    (Some(t), None) => Ok(t),
                    (_, Some(f)) => Err(f),
                    (None, None) => Err("the rank printed no timing".into()),
                },
                telemetry: line.telemetry.into_iter().next(),
            },
            (status, _) => {
                let how = status.map_or_else(|| "could not be waited for".into(), describe);
                World::unsampled(Err(match stderr_tail(&stderr) {
                    Some(t) => format!("the rank's process {how}: {t}"),
                    None => format!("the rank's process {how}"),
                }))
            }
        }
    }
}

/// Waits for every rank; once one has ended, gives the others [`RANK_GRACE`] to end, then
/// kills them. Never waits for ever on a world with a dead rank.
fn wait_world(mut ranks: Vec<RankProcess>) -> Vec<(World, bool)> {
    let mut deadline: Option<std::time::Instant> = None;
    loop {
        for r in ranks.iter_mut().filter(|r| r.status.is_none()) {
            if let Ok(Some(status)) = r.child.try_wait() {
                r.status = Some(status);
            }
        }
        let running = ranks.iter().filter(|r| r.status.is_none()).count();
        if running == 0 {
            break;
        }
        if running < ranks.len() {
            let due = *deadline.get_or_insert_with(|| std::time::Instant::now() + RANK_GRACE);
            if std::time::Instant::now() >= due {
                for r in &mut ranks {
                    r.kill();
                }
                break;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    ranks.into_iter().map(RankProcess::outcome).collect()
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
    if crate::scaling::is_sweep(&execution.name) {
        let Some(copy) = execution.copies.get(index) else {
            return fail(format!("no copy {index}"));
        };
        let (largest, world): (usize, Box<dyn Fn(usize) -> World + '_>) = match child.ranks {
            Ranks::Local => (
                crate::scaling::largest_world(copy),
                Box::new(|k| launch_world(child, plan.run, position, index, k)),
            ),
            Ranks::Slurm { nodes, per_node } => (
                (nodes * per_node) as usize,
                Box::new(move |k| srun_world(child, plan.run, position, index, k, per_node)),
            ),
        };
        return crate::scaling::run_sweep(
            plan, execution, index, factory, hostname, largest, &world,
        );
    }
    let mut cmd = child.command(plan.run, position, index);
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
            entries: usize::from(r.written.is_some()),
            written: r.written,
            failure: r.failure,
            telemetry: r.telemetry,
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
    use std::ffi::OsStr;

    fn child() -> ChildCommand {
        ChildCommand {
            exe: "/bin/mlbench".into(),
            jobs: "/j/baselines.json".into(),
            out: "/o".into(),
            devices: Some("cpu".into()),
            names: vec!["scaling".into()],
            smoke: true,
            synthetic_data: true,
            profile: false,
            sample_hz: 1,
            ranks: Ranks::Slurm {
                nodes: 2,
                per_node: 1,
            },
            exports: vec![("DATA_DIRECTORY".into(), "/d".into())],
        }
    }

    /// A copy's process gets what config.env exports, so that a model finds its data
    /// sets where the jobs' `$DATA_DIRECTORY` does.
    #[test]
    fn a_copy_gets_the_suite_exports_in_its_environment() {
        let cmd = child().command(0, 1, 2);
        let env: Vec<_> = cmd.get_envs().collect();
        assert!(
            env.contains(&(OsStr::new("DATA_DIRECTORY"), Some(OsStr::new("/d")))),
            "{env:?}"
        );
    }

    #[test]
    fn a_world_over_nodes_is_one_srun_of_a_task_per_rank() {
        let cmd = child().srun(3, 0, 0, 3, 2);
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(cmd.get_program(), "srun");
        assert_eq!(
            args,
            [
                "--label",
                "--kill-on-bad-exit=1",
                "--overlap",
                "--nodes=2",
                "--ntasks=3",
                "--ntasks-per-node=2",
                "/bin/mlbench",
                "run",
                "--jobs",
                "/j/baselines.json",
                "--out-dir",
                "/o",
                "--copy",
                "3:0:0",
                "--devices",
                "cpu",
                "--name",
                "scaling",
                "--synthetic-data",
                "--smoke",
                "--sample-hz",
                "1",
            ]
        );
        let env: Vec<_> = cmd.get_envs().collect();
        assert!(env.contains(&(
            std::ffi::OsStr::new("MLBENCH_RANKS"),
            Some(std::ffi::OsStr::new("slurm"))
        )));
        // Its ranks are told the world spans 2 nodes: rank 0 does not sample it.
        assert!(env.contains(&(
            std::ffi::OsStr::new(WORLD_NODES_VAR),
            Some(std::ffi::OsStr::new("2"))
        )));
        // One rank: one node, one task.
        let one = child().srun(0, 0, 0, 1, 8);
        let args: Vec<_> = one
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(
            args.contains(&"--nodes=1".to_owned())
                && args.contains(&"--ntasks-per-node=1".to_owned())
        );
    }

    #[test]
    fn labelled_lines_give_each_ranks_result() {
        let out = "1: {\"written\":null,\"failure\":null,\"timing\":{\"steps\":2,\"items\":4,\"seconds\":0.5}}\n\
                   0: noise from libtorch\n\
                   0: {\"written\":null,\"failure\":\"scaling: boom\"}\n\
                   not labelled\n";
        let lines = labelled_results(out);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].0, 1);
        assert_eq!(lines[0].1.timing.unwrap().speed(), 16.0);
        assert_eq!(
            (lines[1].0, lines[1].1.failure.as_deref()),
            (0, Some("scaling: boom"))
        );
    }

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
