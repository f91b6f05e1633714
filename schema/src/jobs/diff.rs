//! Comparing a vendor's jobs file with the baselines.

use super::args::{is_number, same_number};
use super::{Job, JobsFile};
use crate::value::Value;
use std::collections::HashMap;

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
    let (in_baseline, in_vendor) = (keyed(&baseline.jobs), keyed(&vendor.jobs));
    let mut out = JobsDiff::default();
    for (job, nth) in baseline.jobs.iter().zip(occurrences(&baseline.jobs)) {
        if !in_vendor.contains_key(&(job.name.as_str(), nth)) {
            out.missing_jobs.push(job.name.clone());
        }
    }
    let vendor_nth = occurrences(&vendor.jobs);
    for (i, theirs) in vendor.jobs.iter().enumerate() {
        let Some(&b) = in_baseline.get(&(theirs.name.as_str(), vendor_nth[i])) else {
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
        // The first value of each flag, as `Job::arg` finds it, without a scan per flag.
        let (our_args, their_args) = (first_args(ours), first_args(theirs));
        for (flag, value) in &ours.args {
            match their_args.get(flag.as_str()) {
                Some(v) if same_value(value, v) => {}
                v => change(flag, Some(value.clone()), v.map(|v| (*v).clone())),
            }
        }
        for (flag, value) in &theirs.args {
            if !our_args.contains_key(flag.as_str()) {
                change(flag, None, Some(value.clone()));
            }
        }
    }
    out
}

/// Each job's place in `jobs` by its key: its name and how many jobs of that name come
/// before it. Looked up in a map, so that a file of many jobs of one name compares in
/// linear time.
fn keyed(jobs: &[Job]) -> HashMap<(&str, usize), usize> {
    (jobs.iter().map(|j| j.name.as_str()))
        .zip(occurrences(jobs))
        .zip(0..)
        .collect()
}

/// How many jobs of the same name come before each job.
fn occurrences(jobs: &[Job]) -> Vec<usize> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    (jobs.iter())
        .map(|job| {
            let nth = seen.entry(job.name.as_str()).or_default();
            *nth += 1;
            *nth - 1
        })
        .collect()
}

/// Each flag of `job` with its first value.
fn first_args(job: &Job) -> HashMap<&str, &Value> {
    let mut out = HashMap::with_capacity(job.args.len());
    for (flag, value) in &job.args {
        out.entry(flag.as_str()).or_insert(value);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The comparison as it was first written: each job's occurrence counted and its match
    /// found by scanning (quadratic), kept as the reference the map-based one must equal.
    fn diff_by_scan(baseline: &JobsFile, vendor: &JobsFile) -> (Vec<String>, Vec<String>) {
        let occurrence =
            |jobs: &[Job], i: usize| jobs[..i].iter().filter(|j| j.name == jobs[i].name).count();
        let find = |jobs: &[Job], name: &str, nth: usize| {
            (jobs.iter().enumerate())
                .filter(|(_, j)| j.name == name)
                .nth(nth)
                .map(|(i, _)| i)
        };
        let missing = (0..baseline.jobs.len())
            .filter(|&i| {
                let nth = occurrence(&baseline.jobs, i);
                find(&vendor.jobs, &baseline.jobs[i].name, nth).is_none()
            })
            .map(|i| baseline.jobs[i].name.clone())
            .collect();
        let extra = (0..vendor.jobs.len())
            .filter(|&i| {
                let nth = occurrence(&vendor.jobs, i);
                find(&baseline.jobs, &vendor.jobs[i].name, nth).is_none()
            })
            .map(|i| vendor.jobs[i].name.clone())
            .collect();
        (missing, extra)
    }

    fn file(jobs: &[(&str, u32)]) -> JobsFile {
        let items: Vec<String> = jobs
            .iter()
            .map(|(name, batch)| {
                format!(r#"{{"name": "{name}", "cmd": "./{name}.sh", "args": {{"--batch-size": {batch}, "--x": 1, "--x": 2}}}}"#)
            })
            .collect();
        JobsFile::parse("j.json", format!("[{}]", items.join(", ")).as_bytes()).unwrap()
    }

    #[test]
    fn duplicate_jobs_match_by_occurrence_as_the_scan_did() {
        let base = file(&[("a", 1), ("b", 2), ("a", 3), ("c", 4), ("a", 5)]);
        let vendor = file(&[
            ("a", 1),
            ("a", 9),
            ("b", 2),
            ("b", 2),
            ("a", 5),
            ("a", 6),
            ("d", 1),
        ]);
        for (x, y) in [(&base, &vendor), (&vendor, &base), (&base, &base)] {
            let d = diff(x, y);
            assert_eq!(
                (d.missing_jobs.clone(), d.extra_jobs.clone()),
                diff_by_scan(x, y)
            );
        }
        let d = diff(&base, &vendor);
        // Base: a(1) a(3) a(5), b, c; vendor: a(1) a(9) a(5) a(6), b b, d.
        assert_eq!(d.missing_jobs, vec!["c"]);
        assert_eq!(d.extra_jobs, vec!["b", "a", "d"]);
        // The second `a` of each (3 against 9) and the third (5 against 5): one change.
        let batch: Vec<(usize, Option<Value>, Option<Value>)> = (d.changes.iter())
            .filter(|c| c.flag == "--batch-size")
            .map(|c| (c.job_index, c.baseline.clone(), c.vendor.clone()))
            .collect();
        assert_eq!(batch, vec![(1, Some(Value::Int(3)), Some(Value::Int(9)))]);
        // A duplicated key compares by its first value, as `Job::arg` reads it.
        assert!(d.changes.iter().all(|c| c.flag != "--x"));
    }
}
