//! Jobs files (`profiles/*.json`, docs/suite.md#jobs-files): the list of benches a suite run
//! executes, with the arguments of each.
//!
//! A jobs file is what a vendor copies and edits, so it is read as the suite's `run.py`
//! reads it (Python's `json`, dict order kept) and checked for the shape `run.py`
//! assumes. [`Job::configs`] expands list-valued arguments and builds the command line
//! exactly as `make_configs` does; [`recorded_matches`] says whether a report entry's
//! recorded argument agrees with the jobs file; [`diff`] compares a vendor's file with
//! the baselines.

mod args;
mod diff;

pub use args::{RecordedMatcher, flag_dest, recorded_matches, shell_words};
pub use diff::{ArgChange, JobsDiff, diff};

use crate::pyjson::{self, SyntaxError};
use crate::pyrepr::py_str;
use crate::value::Value;
use std::path::Path;

/// A jobs file: the jobs in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct JobsFile {
    /// The jobs, in the order `run.py` runs them.
    pub jobs: Vec<Job>,
}

/// One job of a jobs file.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The bench name (`BENCH_NAME`, the reports' `name`).
    pub name: String,
    /// The `run*.sh` to run, relative to the repository root (`./regression/…/run.sh`).
    pub cmd: String,
    /// Flag → value, in JSON order (the command line lists them in reverse).
    pub args: Vec<(String, Value)>,
    /// `"student"` (one process per GPU) or `"all"` (whole machine); `None` when absent.
    pub cgroup: Option<String>,
}

/// One configuration of a job: list-valued arguments fixed to one element.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Flag → scalar value, in JSON order.
    pub args: Vec<(String, Value)>,
    /// `cmd` and the arguments as `run.py` builds them, `.strip()`ped (no `--seed`).
    pub command_line: String,
}

/// A jobs file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JobsError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The file holds nothing but white space.
    #[error("{file}: empty file (a jobs file is a JSON array of jobs)")]
    Empty {
        /// The file.
        file: String,
    },
    /// The file is not JSON as Python reads it.
    #[error("{file}: {error}")]
    Syntax {
        /// The file.
        file: String,
        /// What and where (byte offset, line, column).
        error: SyntaxError,
    },
    /// The JSON is not a list of `{name, cmd, args[, cgroup]}` objects.
    #[error("{file}: {}{message}", place(*.job, .field.as_deref(), .key.as_deref()))]
    Shape {
        /// The file.
        file: String,
        /// The index of the job in the file (0-based), when the fault is inside one.
        job: Option<usize>,
        /// The field of the job (`name`, `cmd`, `args`, `cgroup`).
        field: Option<String>,
        /// The key inside `args`.
        key: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// The jobs' list-valued arguments make more configurations than [`MAX_CONFIGS`].
    #[error("{file}: {}", too_many(.job, *.count, *.in_all))]
    TooManyConfigs {
        /// The file.
        file: String,
        /// The job that makes too many, or at which the file's total goes over.
        job: String,
        /// That job's configurations, or the file's up to and with it (saturated at
        /// `u64::MAX`).
        count: u64,
        /// Whether `count` is the file's total rather than the job's own.
        in_all: bool,
    },
}

/// The most configurations a jobs file may make, all its jobs together: far beyond any
/// suite's (`baselines.json` makes a few dozen), and small enough that expanding them
/// (the validator and the runner do) stays within memory. Counted before anything is
/// expanded.
pub const MAX_CONFIGS: u64 = 100_000;

fn too_many(job: &str, count: u64, in_all: bool) -> String {
    let count = match count {
        u64::MAX => format!("more than {}", thousands(u64::MAX)),
        n => thousands(n),
    };
    let limit = thousands(MAX_CONFIGS);
    if in_all {
        format!(
            "the jobs up to `{job}` make {count} configurations in all, over the {limit} allowed"
        )
    } else {
        format!("job `{job}` makes {count} configurations, over the {limit} allowed")
    }
}

/// `1,048,576`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Refuses a file whose jobs make more than [`MAX_CONFIGS`] configurations, counted
/// with saturating products (a file of 64 two-element lists would overflow `u64`).
fn check_config_count(file: &str, jobs: &[Job]) -> Result<(), JobsError> {
    let mut total: u64 = 0;
    for job in jobs {
        let count = job.config_count();
        total = total.saturating_add(count);
        if total > MAX_CONFIGS {
            let in_all = count <= MAX_CONFIGS;
            return Err(JobsError::TooManyConfigs {
                file: file.to_owned(),
                job: job.name.clone(),
                count: if in_all { total } else { count },
                in_all,
            });
        }
    }
    Ok(())
}

fn place(job: Option<usize>, field: Option<&str>, key: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(job) = job {
        out.push_str(&format!("job {job}: "));
    }
    if let Some(field) = field {
        out.push_str(&format!("field \"{field}\": "));
    }
    if let Some(key) = key {
        out.push_str(&format!("key \"{key}\": "));
    }
    out
}

/// A shape error of `file`: at job `job`, its field `field`, an argument `key`.
fn shape_error(
    file: &str,
    job: Option<usize>,
    field: Option<&str>,
    key: Option<&str>,
    message: String,
) -> JobsError {
    JobsError::Shape {
        file: file.to_owned(),
        job,
        field: field.map(str::to_owned),
        key: key.map(str::to_owned),
        message,
    }
}

/// Job `i` of `file`: an object with strings `name` and `cmd`, an object `args` of
/// scalars or lists of them, and an optional `cgroup`.
fn job_of(file: &str, i: usize, item: &Value) -> Result<Job, JobsError> {
    let shape = |field: Option<&str>, message| shape_error(file, Some(i), field, None, message);
    let Value::Object(object) = item else {
        return Err(shape(
            None,
            format!("expected an object, found {}", a_type(item)),
        ));
    };
    let string = |field: &str| match object.get(field) {
        Some(Value::Str(s)) => Ok(s.clone()),
        Some(v) => Err(shape(
            Some(field),
            format!("expected a string, found {}", a_type(v)),
        )),
        None => Err(shape(Some(field), "missing".into())),
    };
    let name = string("name")?;
    let cmd = string("cmd")?;
    let args = match object.get("args") {
        Some(Value::Object(args)) => args,
        Some(v) => {
            let message = format!("expected an object, found {}", a_type(v));
            return Err(shape(Some("args"), message));
        }
        None => return Err(shape(Some("args"), "missing".into())),
    };
    for (key, v) in args.iter() {
        if let Some(message) = arg_problem(v) {
            return Err(shape_error(file, Some(i), Some("args"), Some(key), message));
        }
    }
    let cgroup = match object.get("cgroup") {
        None => None,
        Some(Value::Str(s)) if s == "student" || s == "all" => Some(s.clone()),
        Some(v) => {
            let found = crate::pyrepr::py_repr(v);
            let message = format!("expected \"student\" or \"all\", found {found}");
            return Err(shape(Some("cgroup"), message));
        }
    };
    Ok(Job {
        name,
        cmd,
        args: args
            .iter()
            .map(|(k, v)| (k.to_owned(), v.clone()))
            .collect(),
        cgroup,
    })
}

/// What is wrong with an argument's value, if anything: an object, an empty list, or a
/// list holding lists or objects.
fn arg_problem(v: &Value) -> Option<String> {
    match v {
        Value::Object(_) => Some(format!(
            "expected a string, number, bool or null, or a list of them; found {}",
            a_type(v)
        )),
        Value::List(l) if l.is_empty() => Some("an empty list expands to no runs at all".into()),
        Value::List(l) => l
            .iter()
            .find(|x| matches!(x, Value::List(_) | Value::Object(_)))
            .map(|x| {
                format!(
                    "list items must be strings, numbers, bools or null; found {}",
                    a_type(x)
                )
            }),
        _ => None,
    }
}

/// `a string`, `an object`…: a value's type for messages.
fn a_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Int(_) | Value::BigInt(_) => "an int",
        Value::Float(_) => "a float",
        Value::Str(_) => "a string",
        Value::List(_) => "a list",
        Value::Object(_) => "an object",
    }
}

const BUILTIN_FAST: &[u8] = include_bytes!("../../baselines/jobs/fast.json");
const BUILTIN_BASELINES: &[u8] = include_bytes!("../../baselines/jobs/baselines.json");
const BUILTIN_OLD_BASELINES: &[u8] = include_bytes!("../../baselines/jobs/old_baselines.json");
const BUILTIN_RUNNER: &[u8] = include_bytes!("../../baselines/jobs/runner.json");

/// The shipped jobs files (`baselines/jobs/<name>.json`): `fast` (92b03cb, 19 jobs),
/// `baselines` and `old_baselines` (HEAD `profiles/`), and this project's `runner`: the 10
/// jobs of `fast` that `mlbench run` has models for, with `fast`'s arguments (the suite a
/// vendor can run and submit with mlbench alone).
pub const BUILTIN_JOBS: &[&str] = &["fast", "baselines", "old_baselines", "runner"];

impl JobsFile {
    /// Reads a jobs file from its bytes; `file` names it in errors.
    pub fn parse(file: &str, bytes: &[u8]) -> Result<JobsFile, JobsError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(JobsError::Empty {
                file: file.to_owned(),
            });
        }
        let value = pyjson::parse(bytes).map_err(|error| JobsError::Syntax {
            file: file.to_owned(),
            error,
        })?;
        Self::from_value(file, &value)
    }

    /// Reads a jobs file from disk.
    pub fn load(path: &Path) -> Result<JobsFile, JobsError> {
        Self::read(path).map(|(jobs, _)| jobs)
    }

    /// Reads a jobs file from disk, with its bytes (for a caller that also copies it).
    pub fn read(path: &Path) -> Result<(JobsFile, Vec<u8>), JobsError> {
        let name = path.display().to_string();
        let bytes = crate::read_buffer::read_regular(path, crate::read_buffer::Links::Follow)
            .map_err(|source| JobsError::Io {
                path: name.clone(),
                source,
            })?;
        Ok((Self::parse(&name, &bytes)?, bytes))
    }

    /// Checks the shape of an already parsed jobs file.
    pub fn from_value(file: &str, value: &Value) -> Result<JobsFile, JobsError> {
        let Value::List(items) = value else {
            return Err(shape_error(
                file,
                None,
                None,
                None,
                format!("expected a JSON array of jobs, found {}", a_type(value)),
            ));
        };
        if items.is_empty() {
            let message = "the array holds no jobs".into();
            return Err(shape_error(file, None, None, None, message));
        }
        let jobs = items
            .iter()
            .enumerate()
            .map(|(i, item)| job_of(file, i, item))
            .collect::<Result<Vec<Job>, JobsError>>()?;
        check_config_count(file, &jobs)?;
        Ok(JobsFile { jobs })
    }

    /// The bytes of a shipped jobs file (`fast`, `baselines`, `old_baselines`, `runner`; a
    /// `.json` suffix is accepted), as the suite wrote them (`runner`: cut from `fast`).
    pub fn builtin_bytes(suite: &str) -> Option<&'static [u8]> {
        match suite.strip_suffix(".json").unwrap_or(suite) {
            "fast" => Some(BUILTIN_FAST),
            "baselines" => Some(BUILTIN_BASELINES),
            "old_baselines" => Some(BUILTIN_OLD_BASELINES),
            "runner" => Some(BUILTIN_RUNNER),
            _ => None,
        }
    }

    /// A shipped jobs file, parsed (see [`BUILTIN_JOBS`]).
    pub fn builtin(suite: &str) -> Option<JobsFile> {
        // The shipped files are valid (a test reads each); `ok()` keeps this panic-free.
        Self::parse(suite, Self::builtin_bytes(suite)?).ok()
    }

    /// The first job called `name`.
    pub fn get(&self, name: &str) -> Option<&Job> {
        self.jobs.iter().find(|j| j.name == name)
    }
}

/// Whether `value` has the jobs-file shape: a non-empty array of objects, each with a
/// string `name`, a string `cmd` and an object `args`. It tells the jobs file apart from
/// the other `*.json` files of a submission.
pub fn looks_like_jobs(value: &Value) -> bool {
    value.as_list().is_some_and(|items| {
        !items.is_empty()
            && items.iter().all(|item| {
                item.as_object().is_some_and(|o| {
                    matches!(o.get("name"), Some(Value::Str(_)))
                        && matches!(o.get("cmd"), Some(Value::Str(_)))
                        && matches!(o.get("args"), Some(Value::Object(_)))
                })
            })
    })
}

impl Job {
    /// Whether the job runs once on the whole machine (`cgroup` `"all"` or absent,
    /// docs/suite.md#execution-modes) rather than once per GPU (`"student"`).
    pub fn whole_machine(&self) -> bool {
        self.cgroup.as_deref() != Some("student")
    }

    /// The value of `flag` in this job.
    pub fn arg(&self, flag: &str) -> Option<&Value> {
        self.args.iter().find(|(k, _)| k == flag).map(|(_, v)| v)
    }

    /// How many configurations [`Job::configs`] makes: the product of its lists'
    /// lengths, saturated at `u64::MAX` (nothing is expanded).
    pub fn config_count(&self) -> u64 {
        self.args
            .iter()
            .filter_map(|(_, v)| v.as_list())
            .fold(1u64, |n, list| n.saturating_mul(list.len() as u64))
    }

    /// The configurations `run.py`'s `make_configs` runs, in its order
    /// (docs/suite.md#configurations).
    ///
    /// Arguments are popped from the end, each pop appending ` {flag} {str(value)}`, and a
    /// list makes one branch per element; so the command line lists flags in reverse
    /// JSON order and the last list-valued key varies slowest.
    pub fn configs(&self) -> Vec<Config> {
        // Each partial configuration: the values chosen so far (in pop order) and the tail
        // of the command line.
        let mut partial: Vec<(Vec<&Value>, String)> = vec![(Vec::new(), String::new())];
        for (flag, value) in self.args.iter().rev() {
            let choices: &[Value] = match value {
                Value::List(items) => items,
                scalar => std::slice::from_ref(scalar),
            };
            let mut next = Vec::with_capacity(partial.len() * choices.len());
            for (chosen, line) in &partial {
                for choice in choices {
                    let mut chosen = chosen.clone();
                    chosen.push(choice);
                    next.push((chosen, format!("{line} {flag} {}", py_str(choice))));
                }
            }
            partial = next;
        }
        partial
            .into_iter()
            .map(|(chosen, line)| Config {
                args: self
                    .args
                    .iter()
                    .zip(chosen.into_iter().rev())
                    .map(|((flag, _), v)| (flag.clone(), v.clone()))
                    .collect(),
                command_line: format!("{}{line}", self.cmd).trim().to_owned(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_errors_name_job_and_field() {
        let err = |text: &str| {
            JobsFile::parse("j.json", text.as_bytes())
                .unwrap_err()
                .to_string()
        };
        let ok = r#"{"name": "a", "cmd": "./a/run.sh", "args": {}}"#;
        assert_eq!(
            err(&format!(
                r#"[{ok}, {ok}, {ok}, {{"name": "b", "cmd": "c", "args": []}}]"#
            )),
            "j.json: job 3: field \"args\": expected an object, found a list"
        );
        assert_eq!(
            err(r#"{"a": 1}"#),
            "j.json: expected a JSON array of jobs, found an object"
        );
        assert_eq!(err("[]"), "j.json: the array holds no jobs");
        assert_eq!(
            err(r#"[{"name": "a", "args": {}}]"#),
            "j.json: job 0: field \"cmd\": missing"
        );
        assert_eq!(
            err(r#"[{"name": "a", "cmd": "c", "args": {"--b": []}}]"#),
            "j.json: job 0: field \"args\": key \"--b\": an empty list expands to no runs at all"
        );
        assert_eq!(
            err(r#"[{"name": "a", "cmd": "c", "args": {}, "cgroup": "studnet"}]"#),
            "j.json: job 0: field \"cgroup\": expected \"student\" or \"all\", found 'studnet'"
        );
        assert_eq!(
            err(" \n"),
            "j.json: empty file (a jobs file is a JSON array of jobs)"
        );
    }

    /// A job of `lists` arguments, each a list of `len` numbers.
    fn job_of_lists(name: &str, lists: usize, len: usize) -> String {
        let list: Vec<String> = (0..len).map(|i| i.to_string()).collect();
        let args: Vec<String> = (0..lists)
            .map(|k| format!(r#""--a{k}": [{}]"#, list.join(", ")))
            .collect();
        format!(
            r#"{{"name": "{name}", "cmd": "./{name}.sh", "args": {{"--s": 1, {}}}}}"#,
            args.join(", ")
        )
    }

    #[test]
    fn configurations_are_counted_before_they_are_expanded() {
        let parse = |jobs: &[String]| {
            JobsFile::parse("jobs.json", format!("[{}]", jobs.join(", ")).as_bytes())
        };
        // 3 × 4 = 12, as the expansion makes.
        let small = parse(&[job_of_lists("a", 1, 3), job_of_lists("b", 2, 4)]).unwrap();
        let counts: Vec<u64> = small.jobs.iter().map(Job::config_count).collect();
        assert_eq!(counts, vec![3, 16]);
        assert_eq!(small.jobs[1].configs().len(), 16);
        // 2⁴⁰ from 40 lists of two: refused, named, counted exactly.
        let err = parse(&[job_of_lists("convnet", 40, 2)]).unwrap_err();
        assert!(
            matches!(err, JobsError::TooManyConfigs { count, in_all: false, .. } if count == 1 << 40)
        );
        assert_eq!(
            err.to_string(),
            "jobs.json: job `convnet` makes 1,099,511,627,776 configurations, over the 100,000 allowed"
        );
        // 2²⁰: the example of the message.
        let err = parse(&[job_of_lists("convnet", 20, 2)])
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("job `convnet` makes 1,048,576 configurations, over the 100,000 allowed"),
            "{err}"
        );
        // 70 lists of two overflow u64: saturated, said as such, never wrapped to a small number.
        let err = parse(&[job_of_lists("wide", 70, 2)]).unwrap_err();
        assert!(
            matches!(
                err,
                JobsError::TooManyConfigs {
                    count: u64::MAX,
                    ..
                }
            ),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("more than 18,446,744,073,709,551,615"),
            "{err}"
        );
        // 100,000 exactly is allowed (10⁵ = 10 × 10⁴); one job more goes over in all.
        let at_limit = vec![job_of_lists("a", 5, 10)];
        assert_eq!(
            parse(&at_limit).unwrap().jobs[0].config_count(),
            MAX_CONFIGS
        );
        let over = [at_limit[0].clone(), job_of_lists("b", 1, 1)];
        let err = parse(&over).unwrap_err();
        assert!(
            matches!(&err, JobsError::TooManyConfigs { job, count: 100_001, in_all: true, .. } if job == "b")
        );
        assert_eq!(
            err.to_string(),
            "jobs.json: the jobs up to `b` make 100,001 configurations in all, over the 100,000 allowed"
        );
    }

    #[test]
    fn recognises_jobs_files() {
        let parse = |t: &str| pyjson::parse(t.as_bytes()).unwrap();
        assert!(looks_like_jobs(&parse(
            r#"[{"name": "a", "cmd": "c", "args": {}}]"#
        )));
        assert!(!looks_like_jobs(&parse("[]")));
        assert!(!looks_like_jobs(&parse(
            r#"[{"name": "a", "cmd": "c", "args": []}]"#
        )));
        assert!(!looks_like_jobs(&parse(
            r#"[{"name": "a", "batch_size": 1}]"#
        )));
        assert!(!looks_like_jobs(&parse(
            r#"{"name": "a", "cmd": "c", "args": {}}"#
        )));
    }
}
