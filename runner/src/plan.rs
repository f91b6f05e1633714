//! From a jobs file to the list of executions a suite run performs (docs/suite.md#configurations,
//! #execution-modes and #launching).
//!
//! Each job expands to its configurations (schema's `Job::configs`, `make_configs`'s
//! order); each configuration runs once per device (`cgroup: student`) or once on the
//! whole machine (`all`, or no cgroup). Where the suite let `/bin/sh` expand `$VAR`
//! placeholders from run.py's environment, the plan expands them from the environment
//! given plus the variables run.py and compute_resource.sh export; an unset variable
//! is an error here, where `/bin/sh` would silently substitute nothing.

use crate::bench::{BenchArgs, DeviceSpec};
use crate::devices::{DeviceKind, DeviceSet};
use crate::scripts::Py;
use crate::timing::SKIP_OBS;
use mlbench_schema::jobs::{JobsFile, flag_dest, shell_words};
use mlbench_schema::pyrepr::py_str;
use mlbench_schema::value::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// What a plan is built from, besides the jobs file.
#[derive(Debug, Clone)]
pub struct PlanOptions {
    /// `JOB_FILE`: the jobs file's base name without extension (`fast`); it names the
    /// report streams `<jobs>_<K>.json`.
    pub jobs_name: String,
    /// `--name` filters (empty: every job).
    pub names: Vec<String>,
    /// The devices.
    pub devices: DeviceSet,
    /// `--out`: runs go to `<out>/output<run>`.
    pub out: PathBuf,
    /// The run index (`--uid`, `RUN_ID`); for [`plan_runs`] the first one (`--first-run`).
    pub run: u32,
    /// The environment placeholders are expanded from (the process environment, with
    /// `DATA_DIRECTORY` and the like); the runner's own variables override it.
    pub env: BTreeMap<String, String>,
}

/// Why a plan cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// A `--name` that no job has.
    #[error("no job named `{name}` in {jobs_name}; the jobs are: {available}")]
    UnknownName {
        /// The name asked for.
        name: String,
        /// The jobs file.
        jobs_name: String,
        /// Every job name, comma-separated.
        available: String,
    },
    /// A `$VAR` with no value.
    #[error("job `{job}`, argument `{flag}`: ${var} is not set (set it in the environment)")]
    UnsetVariable {
        /// The job.
        job: String,
        /// The flag whose value holds it.
        flag: String,
        /// The variable.
        var: String,
    },
    /// A common argument of the wrong type.
    #[error("job `{job}`, argument `{flag}`: {message}")]
    Argument {
        /// The job.
        job: String,
        /// The flag.
        flag: String,
        /// What is wrong.
        message: String,
    },
}

mlbench_schema::classify_all!(Input: PlanError);

/// One copy of a configuration: one process of the suite.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyPlan {
    /// Where it runs.
    pub device: DeviceSpec,
    /// `JOB_ID` (`"0"` for whole-machine jobs).
    pub jr_id: String,
    /// `CUDA_VISIBLE_DEVICES` (`"0,1,…"` for whole-machine jobs).
    pub vcd: String,
    /// `CPU_COUNT`, recorded as `cpu_cores`.
    pub cpu_cores: i64,
    /// `--seed` as run.py appends it.
    pub seed: i64,
    /// The stream this copy appends its entry to.
    pub report: PathBuf,
    /// The command line the suite would run, placeholders expanded, seed appended.
    pub command_line: String,
    /// The bench's arguments.
    pub args: BenchArgs,
    /// Every argument by argparse destination, as the report records them (sorted).
    pub arguments: BTreeMap<String, Value>,
}

/// One configuration of one job.
#[derive(Debug, Clone, PartialEq)]
pub struct Execution {
    /// 1-based job index among the jobs run (`jid` of summary.txt).
    pub jid: usize,
    /// The bench name.
    pub name: String,
    /// The job's `cmd` (summary.txt names it).
    pub cmd: String,
    /// Index of this configuration among the job's (from 0).
    pub config: usize,
    /// Configurations of the job.
    pub configs: usize,
    /// Whole machine (`all`) rather than one copy per device.
    pub whole_machine: bool,
    /// The copies, run together.
    pub copies: Vec<CopyPlan>,
}

/// Everything one suite run executes, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// `JOB_FILE`.
    pub jobs_name: String,
    /// The run index (`RUN_ID`).
    pub run: u32,
    /// `<out>/output<run>` (`OUTPUT_DIRECTORY`).
    pub out_dir: PathBuf,
    /// Jobs run (`njobs` of summary.txt).
    pub njobs: usize,
    /// The devices.
    pub devices: DeviceSet,
    /// The executions, in the suite's order.
    pub executions: Vec<Execution>,
}

impl Plan {
    /// `<out_dir>/summary.txt`.
    pub fn summary_path(&self) -> PathBuf {
        self.out_dir.join("summary.txt")
    }

    /// The plan as `--dry-run` prints it.
    pub fn describe(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.devices.kind {
            DeviceKind::Cuda => "GPU",
            DeviceKind::Cpu => "simulated CPU",
        };
        writeln!(
            f,
            "run {} → {} ({} {kind} device(s), {} cores, cpu_cores {})",
            self.run,
            self.out_dir.display(),
            self.devices.count(),
            self.devices.cores,
            self.devices.cpu_count()
        )?;
        for e in &self.executions {
            let mode = if e.whole_machine {
                "whole machine"
            } else {
                "per device"
            };
            writeln!(
                f,
                "[{:2}/{:2}] {} config {}/{} ({mode})",
                e.jid,
                self.njobs,
                e.name,
                e.config + 1,
                e.configs
            )?;
            for c in &e.copies {
                writeln!(
                    f,
                    "    JOB_ID={} CUDA_VISIBLE_DEVICES={} CPU_COUNT={} {} → {}",
                    c.jr_id,
                    c.vcd,
                    c.cpu_cores,
                    c.command_line,
                    c.report.display()
                )?;
            }
        }
        Ok(())
    }
}

/// Builds the plan of run `options.run`.
pub fn plan(jobs: &JobsFile, options: &PlanOptions) -> Result<Plan, PlanError> {
    for name in &options.names {
        if jobs.get(name).is_none() {
            return Err(PlanError::UnknownName {
                name: name.clone(),
                jobs_name: options.jobs_name.clone(),
                available: jobs
                    .jobs
                    .iter()
                    .map(|j| j.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    let selected: Vec<_> = jobs
        .jobs
        .iter()
        .filter(|j| options.names.is_empty() || options.names.contains(&j.name))
        .collect();
    let out_dir = options.out.join(format!("output{}", options.run));
    let devices = &options.devices;
    let uid = i64::from(options.run);
    let mut base_env = options.env.clone();
    for (k, v) in [
        ("OUTPUT_DIRECTORY", out_dir.display().to_string()),
        ("JOB_FILE", options.jobs_name.clone()),
        ("DEVICE_TOTAL", devices.count().to_string()),
        ("CPU_TOTAL", devices.cores.to_string()),
        ("CPU_COUNT", devices.cpu_count().to_string()),
        ("RUN_ID", options.run.to_string()),
    ] {
        base_env.insert(k.to_owned(), v);
    }
    let mut executions = Vec::new();
    for (i, job) in selected.iter().enumerate() {
        let configs = job.configs();
        for (c, config) in configs.iter().enumerate() {
            let slots: Vec<(DeviceSpec, String, String, i64, u32)> = if job.whole_machine() {
                vec![(
                    devices.whole(),
                    "0".to_owned(),
                    devices.all_visible(),
                    uid + i64::from(devices.count()),
                    0,
                )]
            } else {
                (0..devices.count())
                    .map(|d| {
                        let seed = uid + (i64::from(d) + 1) * 100;
                        (devices.student(d), d.to_string(), d.to_string(), seed, d)
                    })
                    .collect()
            };
            let mut copies = Vec::with_capacity(slots.len());
            for (device, jr_id, vcd, seed, k) in slots {
                let mut env = base_env.clone();
                env.insert("BENCH_NAME".into(), job.name.clone());
                env.insert("JOB_ID".into(), jr_id.clone());
                env.insert("CUDA_VISIBLE_DEVICES".into(), vcd.clone());
                let copy = Copy {
                    job: &job.name,
                    env: &env,
                    device,
                    jr_id,
                    vcd,
                    seed,
                    cpu_cores: devices.cpu_count() as i64,
                    report: out_dir.join(format!("{}_{k}.json", options.jobs_name)),
                };
                copies.push(copy_plan(copy, &config.args, &config.command_line)?);
            }
            executions.push(Execution {
                jid: i + 1,
                name: job.name.clone(),
                cmd: job.cmd.clone(),
                config: c,
                configs: configs.len(),
                whole_machine: job.whole_machine(),
                copies,
            });
        }
    }
    Ok(Plan {
        jobs_name: options.jobs_name.clone(),
        run: options.run,
        out_dir,
        njobs: selected.len(),
        devices: devices.clone(),
        executions,
    })
}

/// The plans of `--repeat-suite K`: runs `F..F+K` from `options.run = F` (`--first-run`,
/// 0 by default: `output0` … `output{K-1}`), each with its own `RUN_ID` and so its own seeds.
pub fn plan_runs(
    jobs: &JobsFile,
    options: &PlanOptions,
    runs: u32,
) -> Result<Vec<Plan>, PlanError> {
    (0..runs)
        .map(|r| {
            plan(
                jobs,
                &PlanOptions {
                    run: options.run + r,
                    ..options.clone()
                },
            )
        })
        .collect()
}

/// The per-copy facts a [`CopyPlan`] is built from.
struct Copy<'a> {
    job: &'a str,
    env: &'a BTreeMap<String, String>,
    device: DeviceSpec,
    jr_id: String,
    vcd: String,
    seed: i64,
    cpu_cores: i64,
    report: PathBuf,
}

fn copy_plan(
    copy: Copy<'_>,
    args: &[(String, Value)],
    command_line: &str,
) -> Result<CopyPlan, PlanError> {
    let unset = |flag: &str, var: String| PlanError::UnsetVariable {
        job: copy.job.to_owned(),
        flag: flag.to_owned(),
        var,
    };
    let is_cuda = matches!(copy.device, DeviceSpec::Cuda(_));
    let script = crate::scripts::script_of(copy.job);
    let (mut arguments, short) = recorded_arguments(&copy, args, script)?;
    // After the arguments, so an unset variable is reported with its flag.
    let line = expand(command_line, copy.env).map_err(|var| unset("(command line)", var))?;
    // The runner, not the jobs file, decides the device, so `cuda` says where it ran;
    // a script that keeps its model on the CPU (cart) records `false` everywhere.
    let cpu_only = script.is_some_and(|s| s.cpu_only);
    arguments.insert("cuda".into(), Value::Bool(is_cuda && !cpu_only));
    arguments.insert("seed".into(), Value::Int(copy.seed));
    arguments.insert("jr_id".into(), Value::Str(copy.jr_id.clone()));
    arguments.insert("vcd".into(), Value::Str(copy.vcd.clone()));
    arguments.insert("cpu_cores".into(), Value::Int(copy.cpu_cores));
    // atari's main.py sets `batch_size = num_processes` before the report records it
    // (docs/suite.md#scripts-that-differ): one item is one environment's rollout and update.
    if copy.job == "atari"
        && let Some(processes) = arguments.get("num_processes").cloned()
    {
        arguments.insert("batch_size".into(), processes);
    }
    let int = |dest: &str, flag: &str| match arguments.get(dest) {
        Some(Value::Int(i)) if *i >= 0 => Ok(*i),
        Some(v) => Err(PlanError::Argument {
            job: copy.job.to_owned(),
            flag: flag.to_owned(),
            message: format!("expected a non-negative int, found {}", py_str(v)),
        }),
        None => Ok(0),
    };
    let batch_size = int("batch_size", "--batch-size")?;
    let number = int("number", "--number")?;
    let repeat = int("repeat", "--repeat")?;
    check_observations(copy.job, number, repeat)?;
    let mut extra: BTreeMap<String, Value> = short;
    extra.extend(
        arguments
            .iter()
            .filter(|(k, _)| !["batch_size", "number", "repeat", "seed"].contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone())),
    );
    Ok(CopyPlan {
        device: copy.device,
        jr_id: copy.jr_id,
        vcd: copy.vcd,
        cpu_cores: copy.cpu_cores,
        seed: copy.seed,
        report: copy.report,
        command_line: format!("{line} --seed {}", copy.seed),
        args: BenchArgs {
            batch_size,
            number,
            repeat,
            seed: copy.seed,
            extra,
        },
        arguments,
    })
}

/// The arguments the job's script records (its common defaults, the jobs file's flags by
/// destination, positional and short-flag destinations, the script's own defaults), and
/// the short flags by letter, which the models look up beside the long name.
#[allow(clippy::type_complexity)]
fn recorded_arguments(
    copy: &Copy<'_>,
    args: &[(String, Value)],
    script: Option<&crate::scripts::Script>,
) -> Result<(BTreeMap<String, Value>, BTreeMap<String, Value>), PlanError> {
    let unset = |flag: &str, var: String| PlanError::UnsetVariable {
        job: copy.job.to_owned(),
        flag: flag.to_owned(),
        var,
    };
    let mut arguments: BTreeMap<String, Value> = BTreeMap::new();
    // The common arguments' defaults (docs/suite.md#common-arguments): argparse records them all.
    let workers = copy
        .env
        .get("PROC_COUNT")
        .and_then(|p| p.parse::<i64>().ok())
        .unwrap_or(0);
    for (k, v) in [
        ("batch_size", Value::Int(1)),
        ("devices", Value::Int(1)),
        ("number", Value::Int(10)),
        ("repeat", Value::Int(100)),
        ("workers", Value::Int(workers)),
    ] {
        arguments.insert(k.to_owned(), v);
    }
    // Short flags (`-l 0.0005`) are recorded under the destination the script gives them
    // (`learning_rate`), where the table knows it.
    let mut short: BTreeMap<String, Value> = BTreeMap::new();
    for (flag, value) in args {
        let parsed = || -> Result<Value, PlanError> {
            Ok(match value {
                Value::Str(s) if s.is_empty() => Value::Bool(flag != "--no-cuda"),
                Value::Str(s) => {
                    let text = expand(s, copy.env).map_err(|var| unset(flag, var))?;
                    argparse_value(&text)
                }
                other => other.clone(),
            })
        };
        let Some(dest) = flag_dest(flag) else {
            if let Some(letter) = short_flag(flag) {
                let value = parsed()?;
                let long = script.and_then(|s| s.short.iter().find(|(f, _)| *f == flag));
                if let Some((_, dest)) = long {
                    arguments.insert((*dest).to_owned(), value.clone());
                }
                short.insert(letter.to_owned(), value);
            } else if let Some(dest) = script.and_then(|s| s.positional)
                && !flag.starts_with('-')
            {
                // A positional argument: the key is its value (`"$DATA_DIRECTORY/x": ""`).
                let text = expand(flag, copy.env).map_err(|var| unset(flag, var))?;
                arguments.insert(dest.to_owned(), Value::Str(text));
            }
            continue;
        };
        // `report` is popped by make_report; `seed` is overridden by run.py.
        if dest == "report" || dest == "seed" {
            continue;
        }
        arguments.insert(dest, parsed()?);
    }
    if let Some(script) = script {
        for (dest, default) in script.defaults {
            if !arguments.contains_key(*dest) {
                let value = match default {
                    Py::Str(text) => Value::Str(expand_as_sh(text, copy.env)),
                    other => other.value(),
                };
                arguments.insert((*dest).to_owned(), value);
            }
        }
        // Not recorded, but the bench still runs with it (scaling.py's workers get
        // --network): it stays among the bench's arguments.
        for dest in script.not_recorded {
            if let Some(value) = arguments.remove(*dest) {
                short.insert((*dest).to_owned(), value);
            }
        }
    }
    Ok((arguments, short))
}

/// A run whose `train` stage would hold no observation is refused before anything runs:
/// the suite's StatStream averages the observations after the first [`SKIP_OBS`] (the
/// 10th included when there are exactly 10, docs/suite.md#statstream), so fewer than 10 timed
/// observations (wlm times `repeat − 1`) would write `train_item.avg: Infinity`, and no
/// step per observation a throughput of 0.
pub fn check_observations(job: &str, number: i64, repeat: i64) -> Result<(), PlanError> {
    let observations = crate::scripts::observations(job, repeat);
    let short = |flag: &str, message: String| PlanError::Argument {
        job: job.to_owned(),
        flag: flag.to_owned(),
        message,
    };
    if observations < SKIP_OBS as i64 {
        let timed = if observations == repeat {
            String::new()
        } else {
            format!(" (its script times {observations} of them)")
        };
        return Err(short(
            "--repeat",
            format!(
                "{repeat} observations{timed} leave none to average: the suite drops the first \
                 {SKIP_OBS}, so at least {} are needed",
                repeat - observations + SKIP_OBS as i64
            ),
        ));
    }
    if number < 1 {
        return Err(short(
            "--number",
            format!("{number} steps per observation time no work; at least 1 is needed"),
        ));
    }
    Ok(())
}

/// `text` with its `$VAR`s expanded as `/bin/sh` expands a `run.sh` line: an unset
/// variable is empty.
fn expand_as_sh(text: &str, env: &BTreeMap<String, String>) -> String {
    let mut env = env.clone();
    loop {
        match expand(text, &env) {
            Ok(done) => return done,
            Err(unset) => env.insert(unset, String::new()),
        };
    }
}

/// `-l` → `l`: a single dash and one or more letters (not a negative number).
fn short_flag(flag: &str) -> Option<&str> {
    let rest = flag.strip_prefix('-')?;
    (!rest.is_empty() && !rest.starts_with('-') && rest.chars().all(|c| c.is_ascii_alphabetic()))
        .then_some(rest)
}

/// What argparse would store for an expanded string value: split into words as the shell
/// does (quotes and escapes removed: the schema's one splitter), several words as a list
/// (`nargs`), numbers as numbers (the scripts declare `type=int` or `float` for their
/// numeric flags; `"0.10"` is recorded as `0.1`).
pub fn argparse_value(text: &str) -> Value {
    let words = shell_words(text);
    let word = |w: &str| {
        if let Ok(i) = w.parse::<i64>() {
            Value::Int(i)
        } else if let Some(f) = w.parse::<f64>().ok().filter(|f| f.is_finite()) {
            Value::Float(f)
        } else {
            Value::Str(w.to_owned())
        }
    };
    match words.as_slice() {
        [] => Value::Str(String::new()),
        [one] => word(one),
        many => Value::List(many.iter().map(|w| word(w)).collect()),
    }
}

/// Expands `$NAME` and `${NAME}` from `env`; `Err(name)` for an unset one. A `$` not
/// followed by a name stays as is, as in `/bin/sh`.
pub fn expand(text: &str, env: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) => (&braced[..end], &braced[end + 1..]),
                None => ("", after),
            }
        } else {
            let end = after
                .char_indices()
                .find(|(i, c)| {
                    !(c.is_ascii_alphanumeric() || *c == '_') || (*i == 0 && c.is_ascii_digit())
                })
                .map_or(after.len(), |(i, _)| i);
            (&after[..end], &after[end..])
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        out.push_str(env.get(name).ok_or_else(|| name.to_owned())?);
        rest = tail;
    }
    out.push_str(rest);
    Ok(out)
}

/// `JOB_FILE` of a jobs file path: its base name without extension (run.py from
/// 7c6daee).
pub fn jobs_name(path: &Path) -> String {
    path.file_stem()
        .map_or_else(|| "jobs".to_owned(), |s| s.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(names: &[&str], devices: DeviceSet) -> PlanOptions {
        PlanOptions {
            jobs_name: "fast".into(),
            names: names.iter().map(|s| s.to_string()).collect(),
            devices,
            out: PathBuf::from("/o"),
            run: 3,
            env: [("DATA_DIRECTORY".to_owned(), "/data".to_owned())]
                .into_iter()
                .collect(),
        }
    }

    #[test]
    fn expands_placeholders() {
        let env: BTreeMap<String, String> = [("A".to_owned(), "x".to_owned())].into();
        assert_eq!(expand("$A/${A}b-$A_", &env), Err("A_".to_owned()));
        assert_eq!(expand("$A/${A}b $ $1", &env).as_deref(), Ok("x/xb $ $1"));
    }

    #[test]
    fn fast_json_per_device_and_whole_machine() {
        let jobs = JobsFile::builtin("fast").unwrap();
        let p = plan(&jobs, &options(&[], DeviceSet::cpu(8, 2).unwrap())).unwrap();
        assert_eq!(p.njobs, jobs.jobs.len());
        assert_eq!(p.out_dir, PathBuf::from("/o/output3"));
        let toy = &p.executions[0];
        assert_eq!((toy.name.as_str(), toy.copies.len()), ("toy_reg", 2));
        let c1 = &toy.copies[1];
        assert_eq!((c1.seed, c1.jr_id.as_str(), c1.cpu_cores), (203, "1", 4));
        assert_eq!(c1.report, PathBuf::from("/o/output3/fast_1.json"));
        assert_eq!(
            (c1.args.batch_size, c1.args.number, c1.args.repeat),
            (256, 100, 20)
        );
        assert!(c1.command_line.contains("--report /o/output3/fast"));
        assert!(c1.command_line.ends_with("--seed 203"));
        assert!(!c1.arguments.contains_key("report"));
        let loader = p.executions.iter().find(|e| e.name == "loader").unwrap();
        assert_eq!(
            loader.copies[0].arguments.get("data"),
            Some(&Value::from("/data/ImageNet/train"))
        );
        let whole = p.executions.iter().find(|e| e.whole_machine).unwrap();
        assert_eq!(whole.copies.len(), 1);
        let w = &whole.copies[0];
        assert_eq!((w.seed, w.vcd.as_str(), w.jr_id.as_str()), (5, "0,1", "0"));
        assert_eq!(w.report, PathBuf::from("/o/output3/fast_0.json"));
        assert!(p.describe().contains("toy_reg config 1/1 (per device)"));
    }

    #[test]
    fn names_filter_and_unknown_names() {
        let jobs = JobsFile::builtin("fast").unwrap();
        let devices = DeviceSet::cpu(4, 1).unwrap();
        let p = plan(&jobs, &options(&["vae"], devices.clone())).unwrap();
        assert_eq!(p.njobs, 1);
        assert!(p.executions.iter().all(|e| e.name == "vae" && e.jid == 1));
        let err = plan(&jobs, &options(&["nope"], devices)).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("no job named `nope` in fast; the jobs are: toy_reg, toy_lstm"));
    }

    #[test]
    fn unset_variable_is_an_error() {
        let jobs = JobsFile::parse(
            "j.json",
            br#"[{"name": "a", "cmd": "./a.sh", "args": {"--data": "$NOPE/x"}, "cgroup": "student"}]"#,
        )
        .unwrap();
        let err = plan(&jobs, &options(&[], DeviceSet::cpu(2, 1).unwrap())).unwrap_err();
        assert_eq!(
            err.to_string(),
            "job `a`, argument `--data`: $NOPE is not set (set it in the environment)"
        );
    }

    #[test]
    fn short_flags_reach_the_model_but_are_not_recorded() {
        // fast.json's recom: `-l 0.0005`, `-f 64`, `--layers "256 256 128 64"`.
        let jobs = JobsFile::builtin("fast").unwrap();
        let p = plan(&jobs, &options(&["recom"], DeviceSet::cpu(2, 1).unwrap())).unwrap();
        let copy = &p.executions[0].copies[0];
        assert_eq!(copy.args.extra.get("l"), Some(&Value::Float(0.0005)));
        assert_eq!(copy.args.extra.get("f"), Some(&Value::Int(64)));
        assert_eq!(
            copy.args.extra.get("layers"),
            Some(&Value::from(vec![256i64, 256, 128, 64]))
        );
        assert!(!copy.arguments.contains_key("l") && !copy.arguments.contains_key("f"));
        assert_eq!(copy.args.batch_size, 2048);
        assert_eq!(short_flag("-l"), Some("l"));
        assert_eq!(short_flag("--lr"), None);
        assert_eq!(short_flag("-1"), None);
        assert_eq!(short_flag("-"), None);
    }

    #[test]
    fn runs_start_at_the_first_run() {
        // A Slurm array task's share: runs 20..23 (RUN_ID, folder, seeds from RUN_ID).
        let jobs = JobsFile::builtin("fast").unwrap();
        let mut o = options(&["vae"], DeviceSet::cpu(2, 2).unwrap());
        o.run = 20;
        let plans = plan_runs(&jobs, &o, 3).unwrap();
        let runs: Vec<u32> = plans.iter().map(|p| p.run).collect();
        assert_eq!(runs, [20, 21, 22]);
        assert_eq!(plans[2].out_dir, PathBuf::from("/o/output22"));
        let seeds: Vec<i64> = plans[1].executions[0]
            .copies
            .iter()
            .map(|c| c.seed)
            .collect();
        assert_eq!(seeds, [121, 221]);
    }

    #[test]
    fn argparse_values() {
        assert_eq!(argparse_value("0.10"), Value::Float(0.1));
        assert_eq!(
            argparse_value("\"PongNoFrameskip-v4\""),
            Value::from("PongNoFrameskip-v4")
        );
        assert_eq!(
            argparse_value("256 256 128 64"),
            Value::from(vec![256i64, 256, 128, 64])
        );
        assert_eq!(argparse_value("8"), Value::Int(8));
        assert_eq!(argparse_value("float32"), Value::from("float32"));
        // As the shell splits: a quoted phrase is one word, an empty value no word.
        assert_eq!(argparse_value("'a b' c"), Value::from(vec!["a b", "c"]));
        assert_eq!(argparse_value("'0.5'"), Value::Float(0.5));
        assert_eq!(argparse_value("  "), Value::from(""));
    }

    #[test]
    fn list_args_expand_to_configs() {
        let jobs = JobsFile::parse(
            "j.json",
            br#"[{"name": "a", "cmd": "./a.sh", "args": {"--batch-size": [1, 2], "--lr": [0.1, 0.2]}}]"#,
        )
        .unwrap();
        let p = plan(&jobs, &options(&[], DeviceSet::cpu(2, 2).unwrap())).unwrap();
        assert_eq!(p.executions.len(), 4);
        let sizes: Vec<i64> = p
            .executions
            .iter()
            .map(|e| e.copies[0].args.batch_size)
            .collect();
        assert_eq!(sizes, [1, 2, 1, 2], "earlier JSON keys vary fastest");
        assert!(
            p.executions
                .iter()
                .all(|e| e.whole_machine && e.configs == 4)
        );
    }

    #[test]
    fn atari_counts_its_processes_as_its_batch() {
        let jobs = JobsFile::builtin("fast").unwrap();
        let mut o = options(&["atari"], DeviceSet::cpu(2, 1).unwrap());
        o.env.insert("DATA_DIRECTORY".into(), "/d".into());
        let p = plan(&jobs, &o).unwrap();
        let copy = &p.executions[0].copies[0];
        // fast.json: --num-processes 16 and no --batch-size.
        assert_eq!(copy.args.batch_size, 16);
        assert_eq!(copy.arguments.get("batch_size"), Some(&Value::Int(16)));
    }

    /// The recorded argument names of `job`'s first copy in fast.json, with `env`.
    fn recorded(job: &str, devices: DeviceSet) -> BTreeMap<String, Value> {
        let jobs = JobsFile::builtin("fast").unwrap();
        let mut o = options(&[job], devices);
        o.env.insert("DATA_DIRECTORY".into(), "/BASE/data".into());
        o.env.insert("TEMP_DIRECTORY".into(), "/BASE/tmp".into());
        let p = plan(&jobs, &o).unwrap();
        p.executions[0].copies[0].arguments.clone()
    }

    fn keys(args: &BTreeMap<String, Value>) -> Vec<&str> {
        args.keys().map(String::as_str).collect()
    }

    #[test]
    fn entries_record_what_the_scripts_record() {
        // The names the suite's scripts record for fast.json's jobs (each script run up to
        // get_arguments at mila-iqia/training 0591444), less `report` (popped) and
        // `start_time` (added when the copy starts).
        let cpu = || DeviceSet::cpu(2, 1).unwrap();
        let wlm = recorded("wlm", cpu());
        assert_eq!(
            keys(&wlm),
            [
                "batch_size",
                "bptt",
                "clip",
                "cpu_cores",
                "cuda",
                "data",
                "devices",
                "dropout",
                "emsize",
                "epochs",
                "jr_id",
                "log_interval",
                "lr",
                "model",
                "nhid",
                "nlayers",
                "number",
                "onnx_export",
                "repeat",
                "save",
                "seed",
                "tied",
                "vcd",
                "workers"
            ]
        );
        // As Python typed them: lr is the int 20, clip a float, save None.
        assert_eq!(wlm["lr"], Value::Int(20));
        assert_eq!(wlm["clip"], Value::Float(0.25));
        assert_eq!(wlm["save"], Value::Null);
        assert_eq!(wlm["onnx_export"], Value::from(""));
        assert_eq!(
            wlm["data"],
            Value::from(
                "./natural_language_processing/word_language_model/pytorch/../data/wikitext-2"
            )
        );
        let dcgan = recorded("dcgan", cpu());
        assert_eq!(
            keys(&dcgan),
            [
                "batch_size",
                "beta1",
                "cpu_cores",
                "cuda",
                "dataroot",
                "dataset",
                "devices",
                "imageSize",
                "jr_id",
                "lr",
                "ndf",
                "netD",
                "netG",
                "ngf",
                "ngpu",
                "no_checks",
                "number",
                "nz",
                "outf",
                "repeat",
                "seed",
                "vcd",
                "workers"
            ]
        );
        assert_eq!(dcgan["ngpu"], Value::Int(1), "set before the report");
        assert_eq!(dcgan["outf"], Value::Null);
        let convnet = recorded("convnet", cpu());
        assert_eq!(
            keys(&convnet),
            [
                "arch",
                "batch_size",
                "cpu_cores",
                "cuda",
                "data",
                "devices",
                "half",
                "jr_id",
                "lr",
                "number",
                "repeat",
                "seed",
                "vcd",
                "workers"
            ]
        );
        assert_eq!(convnet["data"], Value::from("/BASE/data/ImageNet/train"));
        assert_eq!(convnet["half"], Value::Bool(false));
        let fp16 = recorded("convnet_fp16", cpu());
        assert_eq!(fp16["half"], Value::Bool(true), "the job's --half wins");
        let recom = recorded("recom", cpu());
        assert_eq!(
            keys(&recom),
            [
                "batch_size",
                "cpu_cores",
                "cuda",
                "data",
                "devices",
                "factors",
                "jr_id",
                "layers",
                "learning_rate",
                "negative_samples",
                "number",
                "processes",
                "repeat",
                "seed",
                "threshold",
                "topk",
                "vcd",
                "workers"
            ]
        );
        assert_eq!(
            (&recom["factors"], &recom["learning_rate"], &recom["data"]),
            (
                &Value::Int(64),
                &Value::Float(0.0005),
                &Value::from("/BASE/data/ml-20m")
            )
        );
        let style = recorded("fast_style", cpu());
        assert_eq!(style["dataset"], Value::from("/BASE/data/ImageNet/train"));
        assert_eq!(style["save_model_dir"], Value::from("/BASE/tmp"));
        assert_eq!(style["style_weight"], Value::Float(1e10));
        assert_eq!(style["image_size"], Value::Int(64));
    }

    #[test]
    fn cart_records_cuda_false_even_on_a_gpu() {
        let gpus = DeviceSet::cuda(8, 2).unwrap();
        let cart = recorded("cart", gpus.clone());
        assert_eq!(
            keys(&cart),
            [
                "batch_size",
                "cpu_cores",
                "cuda",
                "devices",
                "gamma",
                "jr_id",
                "log_interval",
                "number",
                "render",
                "repeat",
                "seed",
                "vcd",
                "workers"
            ]
        );
        assert_eq!(cart["cuda"], Value::Bool(false));
        assert_eq!(recorded("vae", gpus)["cuda"], Value::Bool(true));
    }

    #[test]
    fn run_sh_variables_left_unset_expand_to_nothing() {
        let env: BTreeMap<String, String> = [("A".to_owned(), "x".to_owned())].into();
        assert_eq!(expand_as_sh("$A/$B/${C}c", &env), "x//c");
    }

    #[test]
    fn scaling_records_no_network() {
        let jobs = JobsFile::builtin("baselines").unwrap();
        let mut o = options(&["scaling"], DeviceSet::cpu(2, 1).unwrap());
        o.env.insert("DATA_DIRECTORY".into(), "/d".into());
        let p = plan(&jobs, &o).unwrap();
        let copy = &p.executions[0].copies[0];
        assert!(!copy.arguments.contains_key("network"));
        // The bench still gets it, as micro_bench.py does.
        assert_eq!(
            copy.args.extra.get("network"),
            Some(&Value::from("resnet101"))
        );
    }

    #[test]
    fn short_runs_are_argument_errors() {
        let job = |args: &str| {
            let text = format!(r#"[{{"name": "NAME", "cmd": "./a.sh", "args": {{{args}}}}}]"#);
            let run = |name: &str| {
                let jobs =
                    JobsFile::parse("j.json", text.replace("NAME", name).as_bytes()).unwrap();
                plan(&jobs, &options(&[], DeviceSet::cpu(2, 1).unwrap())).map(|_| ())
            };
            (run("vae"), run("wlm"))
        };
        // 10 observations: StatStream averages the 10th (count 1), as toy_lstm's repeat 10.
        assert_eq!(job(r#""--repeat": 10"#).0, Ok(()));
        let (vae, wlm) = job(r#""--repeat": 9"#);
        assert_eq!(
            vae.unwrap_err().to_string(),
            "job `vae`, argument `--repeat`: 9 observations leave none to average: the suite \
             drops the first 10, so at least 10 are needed"
        );
        assert!(wlm.is_err());
        // wlm times repeat − 1.
        let (_, wlm) = job(r#""--repeat": 10"#);
        assert_eq!(
            wlm.unwrap_err().to_string(),
            "job `wlm`, argument `--repeat`: 10 observations (its script times 9 of them) leave \
             none to average: the suite drops the first 10, so at least 11 are needed"
        );
        assert_eq!(job(r#""--repeat": 11"#).1, Ok(()));
        let (vae, _) = job(r#""--repeat": 12, "--number": 0"#);
        assert_eq!(
            vae.unwrap_err().to_string(),
            "job `vae`, argument `--number`: 0 steps per observation time no work; at least 1 \
             is needed"
        );
        // The suite's own jobs files all time enough.
        for name in ["fast", "baselines"] {
            let jobs = JobsFile::builtin(name).unwrap();
            let mut o = options(&[], DeviceSet::cpu(2, 2).unwrap());
            o.env.insert("TEMP_DIRECTORY".into(), "/t".into());
            plan(&jobs, &o).unwrap();
        }
    }
}
