//! `--slurm`: an sbatch job-array script that runs the same jobs on a Slurm cluster, one
//! array task per node. Task `t` runs the suite runs `t·K … t·K+K−1` (`--first-run`), so
//! every node writes its own `<out>/output<r>/` folders and the nodes together leave the
//! layout of one machine: `output0` … `output{N·K−1}`, each run with its own `RUN_ID` and
//! seeds (no two nodes repeat a run's random streams).
//!
//! The script is plain text built here and only written by the CLI, so it can be read and
//! edited before `sbatch` is run. Devices are the nodes', not the machine printing it: a
//! number of GPUs per node (`--gres`), or the whole node's CPU.

use std::path::PathBuf;

/// What the script runs.
#[derive(Debug, Clone)]
pub struct SlurmOptions {
    /// The `mlbench` binary as the nodes see it.
    pub mlbench: String,
    /// The jobs file as the nodes see it.
    pub jobs: PathBuf,
    /// `--name` filters.
    pub names: Vec<String>,
    /// GPUs per node, or `None` for the node's CPU as one device.
    pub gpus: Option<u32>,
    /// Nodes (array tasks).
    pub nodes: u32,
    /// `--repeat-suite` per node.
    pub repeat_suite: u32,
    /// The first run's number: task i runs from `first_run + i · repeat_suite` (`--until`
    /// adds runs as new array tasks after the earlier ones).
    pub first_run: u32,
    /// The output root as the nodes see it (a shared file system).
    pub out: PathBuf,
    /// `#SBATCH --partition`.
    pub partition: Option<String>,
    /// `#SBATCH --time` (e.g. `04:00:00`).
    pub time: Option<String>,
    /// `--smoke` on every node.
    pub smoke: bool,
    /// `--synthetic-data` on every node.
    pub synthetic_data: bool,
    /// `--profile` on every node.
    pub profile: bool,
    /// `--sample-hz` on every node, when not the default (1).
    pub sample_hz: Option<u32>,
    /// `--idle-baseline` on every node, when given.
    pub idle_baseline: Option<std::time::Duration>,
    /// Where the tasks' logs go (`--submit`: `<out>/slurm`); `None`: the folder sbatch is
    /// run from.
    pub log_dir: Option<PathBuf>,
    /// `--across-nodes`: one task holding all `nodes` nodes, whose data-parallel jobs sweep
    /// world sizes over them (srun) and whose other jobs run on its first node.
    pub across_nodes: bool,
}

/// Quotes a word for `/bin/sh` (single quotes; a quote inside becomes `'\''`).
pub fn sh_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,+@%".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// `--devices` as the nodes' devices: `Some(n)` GPUs per node, or `None` for the
/// node's CPU.
pub fn node_gpus(flag: Option<&str>) -> Result<Option<u32>, NodeDevicesError> {
    match flag.map(str::trim) {
        Some(d) if d.eq_ignore_ascii_case("cpu") => Ok(None),
        Some(d) => match d.parse::<u32>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(NodeDevicesError::Invalid(d.to_owned())),
        },
        None => Err(NodeDevicesError::Missing),
    }
}

/// `--devices` does not say the nodes' devices.
#[derive(Debug, thiserror::Error)]
pub enum NodeDevicesError {
    /// Neither a number of GPUs nor `cpu`.
    #[error("`{0}`: expected a number of GPUs per node or `cpu`")]
    Invalid(String),
    /// Not given.
    #[error("the nodes' devices are not given: the GPUs of each node (e.g. 8), or cpu")]
    Missing,
}

mlbench_schema::classify_all!(Input: NodeDevicesError);

impl SlurmOptions {
    /// What the script asks Slurm for, in words: `4 array tasks`, `one task on 2 nodes`.
    pub fn tasks(&self) -> String {
        if self.across_nodes {
            format!("one task on {} nodes", self.nodes)
        } else {
            format!("{} array tasks", self.nodes)
        }
    }
}

/// The sbatch script text.
pub fn sbatch_script(o: &SlurmOptions) -> String {
    let jobs_name = crate::plan::jobs_name(&o.jobs);
    let mut s = String::from("#!/bin/bash\n");
    let mut directive = |line: String| {
        s.push_str("#SBATCH ");
        s.push_str(&line);
        s.push('\n');
    };
    directive(format!("--job-name=mlbench-{jobs_name}"));
    if o.across_nodes {
        // One array task (so that following it is as for the others) holding every node,
        // a task slot per device for the ranks srun starts.
        directive("--array=0-0".into());
        directive(format!("--nodes={}", o.nodes.max(1)));
        directive(format!("--ntasks-per-node={}", o.gpus.unwrap_or(1)));
    } else {
        directive(format!("--array=0-{}", o.nodes.saturating_sub(1)));
        directive("--nodes=1".into());
        directive("--ntasks=1".into());
    }
    // The whole node: per-device copies split its cores, as the suite's cgroups did.
    directive("--exclusive".into());
    if let Some(gpus) = o.gpus {
        directive(format!("--gres=gpu:{gpus}"));
    }
    if let Some(p) = &o.partition {
        directive(format!("--partition={p}"));
    }
    if let Some(t) = &o.time {
        directive(format!("--time={t}"));
    }
    // Slurm opens the log before the script runs: the folder must exist already
    // (`--submit` creates it), else the log goes where sbatch is run.
    match &o.log_dir {
        Some(dir) => directive(format!(
            "--output={}",
            sh_quote(&dir.join("mlbench-%A_%a.log").display().to_string())
        )),
        None => directive("--output=mlbench-%A_%a.log".into()),
    }
    s.push_str("set -euo pipefail\n\n");
    s.push_str(&format!("OUT={}\n", sh_quote(&o.out.display().to_string())));
    let offset = if o.first_run > 0 {
        format!("{} + ", o.first_run)
    } else {
        String::new()
    };
    s.push_str(&format!(
        "FIRST_RUN=$(({offset}SLURM_ARRAY_TASK_ID * {}))\n",
        o.repeat_suite
    ));
    let devices = o.gpus.map_or_else(|| "cpu".to_owned(), |n| n.to_string());
    let mut cmd = format!(
        "{} run --jobs {} --devices {devices} --repeat-suite {} --first-run \"$FIRST_RUN\"",
        sh_quote(&o.mlbench),
        sh_quote(&o.jobs.display().to_string()),
        o.repeat_suite
    );
    for name in &o.names {
        cmd.push_str(&format!(" --name {}", sh_quote(name)));
    }
    if o.smoke {
        cmd.push_str(" --smoke");
    }
    if o.profile {
        cmd.push_str(" --profile");
    }
    if o.synthetic_data {
        cmd.push_str(" --synthetic-data");
    }
    if let Some(hz) = o.sample_hz {
        cmd.push_str(&format!(" --sample-hz {hz}"));
    }
    if let Some(idle) = o.idle_baseline {
        cmd.push_str(&format!(" --idle-baseline {}s", idle.as_secs_f64()));
    }
    if o.across_nodes {
        cmd.push_str(" --across-nodes");
    }
    cmd.push_str(" --out-dir \"$OUT\"\n");
    s.push_str(&cmd);
    s
}

/// Why a job could not be submitted or followed.
#[derive(Debug, thiserror::Error)]
pub enum SlurmError {
    /// A Slurm command could not be started (not installed?).
    #[error("cannot run `{program}` (is Slurm installed and on PATH?)")]
    Spawn {
        /// The command.
        program: &'static str,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A Slurm command failed.
    #[error("`{program}` failed: {message}")]
    Failed {
        /// The command.
        program: &'static str,
        /// Its standard error.
        message: String,
    },
}

// Slurm missing or refusing the job is the set-up the user gave.
mlbench_schema::classify_all!(Input: SlurmError);

fn slurm_command(
    program: &'static str,
    args: &[&str],
    stdin: Option<&str>,
) -> Result<String, SlurmError> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| SlurmError::Spawn { program, source })?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes())
            .map_err(|source| SlurmError::Spawn { program, source })?;
    }
    let out = child
        .wait_with_output()
        .map_err(|source| SlurmError::Spawn { program, source })?;
    if !out.status.success() {
        return Err(SlurmError::Failed {
            program,
            message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Submits `script` with `sbatch --parsable` (the script on standard input); returns the
/// job id.
pub fn submit(script: &str) -> Result<String, SlurmError> {
    let out = slurm_command("sbatch", &["--parsable"], Some(script))?;
    // `--parsable` prints `id` or `id;cluster`.
    let id = out.trim().split(';').next().unwrap_or_default().to_owned();
    if id.is_empty() {
        return Err(SlurmError::Failed {
            program: "sbatch",
            message: "no job id in its output".into(),
        });
    }
    Ok(id)
}

/// One array task of a job, as `scontrol -o show job` says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskState {
    /// `ArrayTaskId` (`0`, or a range `2-3` of tasks still pending together).
    pub task: String,
    /// `JobState`: `PENDING`, `RUNNING`, `COMPLETED`, `FAILED`, …
    pub state: String,
    /// `ExitCode` (`0:0`: status, signal).
    pub exit_code: String,
    /// `StdOut`: the task's log.
    pub log: Option<PathBuf>,
}

impl TaskState {
    /// Whether it has ended (any state but pending, running and their kin).
    pub fn ended(&self) -> bool {
        !matches!(
            self.state.as_str(),
            "PENDING"
                | "RUNNING"
                | "CONFIGURING"
                | "COMPLETING"
                | "SUSPENDED"
                | "REQUEUED"
                | "RESIZING"
                | "SIGNALING"
                | "STAGE_OUT"
                | "REQUEUE_HOLD"
                | "REQUEUE_FED"
        )
    }

    /// Whether it ended well.
    pub fn completed(&self) -> bool {
        self.state == "COMPLETED" && self.exit_code == "0:0"
    }

    /// `array task 1: FAILED (exit 1:0); log /out/slurm/mlbench-12_1.log`.
    pub fn describe(&self) -> String {
        let log = self
            .log
            .as_ref()
            .map_or_else(String::new, |l| format!("; log {}", l.display()));
        format!(
            "array task {}: {} (exit {}){log}",
            self.task, self.state, self.exit_code
        )
    }
}

/// How many tasks are in each state: `1 COMPLETED, 1 RUNNING`.
pub fn state_counts(tasks: &[TaskState]) -> String {
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for t in tasks {
        *counts.entry(t.state.as_str()).or_default() += 1;
    }
    let said: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    said.join(", ")
}

/// The tasks in `scontrol -o show job` output: one line per record, `Key=Value` words.
pub fn parse_tasks(text: &str) -> Vec<TaskState> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let field = |key: &str| {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
                    .map(str::to_owned)
            };
            TaskState {
                task: field("ArrayTaskId").unwrap_or_else(|| "0".into()),
                state: field("JobState").unwrap_or_else(|| "UNKNOWN".into()),
                exit_code: field("ExitCode").unwrap_or_default(),
                log: field("StdOut").map(PathBuf::from),
            }
        })
        .collect()
}

/// The tasks of job `id` now.
pub fn tasks(id: &str) -> Result<Vec<TaskState>, SlurmError> {
    Ok(parse_tasks(&slurm_command(
        "scontrol",
        &["-o", "show", "job", id],
        None,
    )?))
}

/// Follows job `id` until every task has ended, calling `progress` whenever the states
/// change; returns the last states.
pub fn wait(
    id: &str,
    poll: std::time::Duration,
    progress: &mut dyn FnMut(&[TaskState]),
) -> Result<Vec<TaskState>, SlurmError> {
    let mut last: Vec<TaskState> = Vec::new();
    loop {
        let now = tasks(id)?;
        if now != last {
            progress(&now);
        }
        if !now.is_empty() && now.iter().all(TaskState::ended) {
            return Ok(now);
        }
        last = now;
        std::thread::sleep(poll);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scontrol_lines_and_task_states() {
        let text = "JobId=13 ArrayJobId=12 ArrayTaskId=1 JobName=mlbench-fast JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0 StdOut=/out/slurm/mlbench-12_1.log\n\
                    JobId=12 ArrayJobId=12 ArrayTaskId=0 JobName=mlbench-fast JobState=COMPLETED Reason=None ExitCode=0:0 StdOut=/out/slurm/mlbench-12_0.log\n\
                    JobId=14 ArrayJobId=12 ArrayTaskId=2-3 JobState=PENDING ExitCode=0:0\n";
        let tasks = parse_tasks(text);
        assert_eq!(tasks.len(), 3);
        assert_eq!(tasks[0].task, "1");
        assert_eq!(tasks[0].state, "FAILED");
        assert_eq!(tasks[0].exit_code, "1:0");
        assert_eq!(
            tasks[0].log.as_deref(),
            Some(std::path::Path::new("/out/slurm/mlbench-12_1.log"))
        );
        assert!(tasks[0].ended() && !tasks[0].completed());
        assert!(tasks[1].ended() && tasks[1].completed());
        assert_eq!(tasks[2].task, "2-3");
        assert!(!tasks[2].ended());
        assert_eq!(
            tasks[0].describe(),
            "array task 1: FAILED (exit 1:0); log /out/slurm/mlbench-12_1.log"
        );
        assert_eq!(state_counts(&tasks), "1 COMPLETED, 1 FAILED, 1 PENDING");
    }

    fn options(gpus: Option<u32>) -> SlurmOptions {
        SlurmOptions {
            first_run: 0,
            mlbench: "/opt/mlbench/bin/mlbench".into(),
            jobs: PathBuf::from("/shared/fast.json"),
            names: vec!["vae".into(), "it's".into()],
            gpus,
            nodes: 4,
            repeat_suite: 10,
            out: PathBuf::from("/scratch/results"),
            partition: Some("gpu".into()),
            time: None,
            smoke: false,
            synthetic_data: false,
            profile: false,
            sample_hz: None,
            idle_baseline: None,
            log_dir: None,
            across_nodes: false,
        }
    }

    #[test]
    fn telemetry_flags_reach_the_nodes_only_when_given() {
        let plain = sbatch_script(&options(Some(8)));
        assert!(!plain.contains("--sample-hz") && !plain.contains("--idle-baseline"));
        let mut o = options(Some(8));
        o.sample_hz = Some(0);
        o.idle_baseline = Some(std::time::Duration::from_millis(1500));
        let text = sbatch_script(&o);
        assert!(
            text.contains(" --sample-hz 0 --idle-baseline 1.5s --out-dir"),
            "{text}"
        );
    }

    #[test]
    fn across_nodes_one_task_holds_every_node_with_a_task_slot_per_device() {
        let mut o = options(Some(8));
        o.across_nodes = true;
        let text = sbatch_script(&o);
        for line in [
            "#SBATCH --array=0-0\n",
            "#SBATCH --nodes=4\n",
            "#SBATCH --ntasks-per-node=8\n",
            "#SBATCH --exclusive\n",
        ] {
            assert!(text.contains(line), "{line}{text}");
        }
        assert!(!text.contains("--ntasks=1"), "{text}");
        assert!(
            text.contains(" --across-nodes --out-dir \"$OUT\"\n"),
            "{text}"
        );
        // The CPU of each node is one device: one task slot a node.
        o.gpus = None;
        assert!(sbatch_script(&o).contains("#SBATCH --ntasks-per-node=1\n"));
    }

    #[test]
    fn gpu_array_script() {
        let text = sbatch_script(&options(Some(8)));
        let expected = "#!/bin/bash
#SBATCH --job-name=mlbench-fast
#SBATCH --array=0-3
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --exclusive
#SBATCH --gres=gpu:8
#SBATCH --partition=gpu
#SBATCH --output=mlbench-%A_%a.log
set -euo pipefail

OUT=/scratch/results
FIRST_RUN=$((SLURM_ARRAY_TASK_ID * 10))
/opt/mlbench/bin/mlbench run --jobs /shared/fast.json --devices 8 --repeat-suite 10 --first-run \"$FIRST_RUN\" --name vae --name 'it'\\''s' --out-dir \"$OUT\"
";
        assert_eq!(text, expected);
    }

    #[test]
    fn cpu_script_has_no_gres() {
        let text = sbatch_script(&options(None));
        assert!(!text.contains("--gres"));
        assert!(text.contains(" --devices cpu "));
        assert_eq!(sh_quote("a b"), "'a b'");
        assert_eq!(sh_quote(""), "''");
    }

    #[test]
    fn later_tasks_start_after_the_runs_already_done() {
        let mut o = options(None);
        (o.first_run, o.repeat_suite, o.nodes) = (3, 1, 1);
        let text = sbatch_script(&o);
        assert!(
            text.contains("FIRST_RUN=$((3 + SLURM_ARRAY_TASK_ID * 1))\n"),
            "{text}"
        );
        assert!(text.contains("#SBATCH --array=0-0\n"), "{text}");
    }
}
