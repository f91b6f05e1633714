//! Comparing a vendor's jobs file with the baselines.

use super::args::{is_number, same_number};
use super::{Job, JobsFile};
use crate::value::Value;

/// The differences between a vendor's jobs file and the baselines.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobsDiff {
    /// Baseline jobs the vendor's file lacks (a name once per missing occurrence).
    pub missing_jobs: Vec<String>,
    /// Vendor jobs the baselines lack.
    pub extra_jobs: Vec<String>,
    /// Differences inside jobs present in both, in the vendor file's order.
    pub changes: Vec<ArgChange>,
}

/// One difference inside a job.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgChange {
    /// The job's name.
    pub job: String,
    /// The job's index in the vendor's file.
    pub job_index: usize,
    /// The flag, or `"cmd"` / `"cgroup"` for those keys.
    pub flag: String,
    /// The baseline's value; `None` when the baseline lacks it.
    pub baseline: Option<Value>,
    /// The vendor's value; `None` when the vendor removed it.
    pub vendor: Option<Value>,
}

/// Compares a vendor's jobs file with the baselines. Jobs match by name, and jobs that
/// share a name (the two `ssd` of 6ce5994) by order of occurrence. Values compare as
/// JSON values, ints and floats by value; a missing `cgroup` equals `"all"`
/// (docs/suite.md#jobs-files).
pub fn diff(baseline: &JobsFile, vendor: &JobsFile) -> JobsDiff {
    let occurrence =
        |jobs: &[Job], i: usize| jobs[..i].iter().filter(|j| j.name == jobs[i].name).count();
    let find = |jobs: &[Job], name: &str, nth: usize| {
        jobs.iter()
            .enumerate()
            .filter(|(_, j)| j.name == name)
            .nth(nth)
            .map(|(i, _)| i)
    };
    let mut out = JobsDiff::default();
    for (i, job) in baseline.jobs.iter().enumerate() {
        if find(&vendor.jobs, &job.name, occurrence(&baseline.jobs, i)).is_none() {
            out.missing_jobs.push(job.name.clone());
        }
    }
    for (i, theirs) in vendor.jobs.iter().enumerate() {
        let Some(b) = find(&baseline.jobs, &theirs.name, occurrence(&vendor.jobs, i)) else {
            out.extra_jobs.push(theirs.name.clone());
            continue;
        };
        let ours = &baseline.jobs[b];
        let mut change = |flag: &str, baseline: Option<Value>, vendor: Option<Value>| {
            out.changes.push(ArgChange {
                job: theirs.name.clone(),
                job_index: i,
                flag: flag.to_owned(),
                baseline,
                vendor,
            })
        };
        if ours.cmd != theirs.cmd {
            change(
                "cmd",
                Some(ours.cmd.as_str().into()),
                Some(theirs.cmd.as_str().into()),
            );
        }
        if ours.whole_machine() != theirs.whole_machine() {
            let value = |c: &Option<String>| c.as_deref().map(Value::from);
            change("cgroup", value(&ours.cgroup), value(&theirs.cgroup));
        }
        for (flag, value) in &ours.args {
            match theirs.arg(flag) {
                Some(v) if same_value(value, v) => {}
                v => change(flag, Some(value.clone()), v.cloned()),
            }
        }
        for (flag, value) in &theirs.args {
            if ours.arg(flag).is_none() {
                change(flag, None, Some(value.clone()));
            }
        }
    }
    out
}

/// JSON equality, with ints and floats compared by value.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        _ if is_number(a) && is_number(b) => same_number(a, b),
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b))
        }
        _ => a == b,
    }
}
