//! The jobs file: `args.disallowed-change` and `jobs.*`.

use super::{at, check, streams};
use crate::fixtures::{
    Key, copy_example, edit_entries, edit_object, error, example_dir, finding, number,
    read_entries, rehash, warning,
};
use mlbench_schema::value::Value;
use std::path::Path;
use tempfile::TempDir;

// ───────────────────────────── 14. args.disallowed-change ─────────────────────────────

/// Replaces the value of `flag` in job `job` of a jobs file written one key per line.
fn edit_job_arg(path: &Path, job: &str, flag: &str, value: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    let job_at = text.find(&format!("\"name\": \"{job}\"")).unwrap();
    let key = format!("\"{flag}\": ");
    let start = job_at + text[job_at..].find(&key).unwrap() + key.len();
    let end = start + text[start..].find([',', '\n']).unwrap();
    let edited = format!("{}{value}{}", &text[..start], &text[end..]);
    std::fs::write(path, edited).unwrap();
}

/// Sets `field` of every entry of `bench` (and recomputes `unique_id`).
fn set_field(dir: &TempDir, bench: &str, field: &str, value: Value) {
    for (_, _, rel) in streams() {
        edit_entries(&at(dir, &rel), |entries| {
            for e in entries.iter_mut().filter(|e| e.name() == Some(bench)) {
                e.fields.insert(field, value.clone());
                rehash(&mut e.fields);
            }
        });
    }
}

/// Every (file, entry) of `bench` in the example.
fn entries_of(bench: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for (_, _, rel) in streams() {
        for (i, e) in read_entries(&example_dir().join(&rel)).iter().enumerate() {
            if e.name() == Some(bench) {
                out.push((rel.clone(), i as u64));
            }
        }
    }
    out
}

#[test]
fn args_repeat_changed_in_the_jobs_file_only() {
    let dir = copy_example();
    edit_job_arg(&at(&dir, "fast.json"), "vae", "--repeat", "60");
    let mut expected = vec![error(
        "args.disallowed-change",
        Some("fast.json"),
        Some(2),
        Some("vae.--repeat"),
    )];
    let vae = entries_of("vae");
    assert_eq!(vae.len(), 10);
    for (file, entry) in &vae {
        expected.push(error(
            "args.entry-mismatch",
            Some(file),
            Some(*entry),
            Some("repeat"),
        ));
    }
    let json = check(dir.path(), &[], 1, expected);
    let f = finding(&json, "args.disallowed-change", Some("fast.json"), Some(2));
    assert_eq!(f["expected"], "50 as in baselines/jobs/fast.json");
    assert_eq!(f["found"], "60");
    let (file, entry) = &vae[0];
    let f = finding(&json, "args.entry-mismatch", Some(file), Some(*entry));
    assert_eq!(f["expected"], "60 (jobs file --repeat)");
    assert_eq!(f["found"], "50");
}

#[test]
fn args_repeat_changed_consistently_by_track_and_allow() {
    let dir = copy_example();
    edit_job_arg(&at(&dir, "fast.json"), "vae", "--repeat", "60");
    set_field(&dir, "vae", "repeat", Value::Int(60));
    let change = |severity: fn(&str, Option<&str>, Option<u64>, Option<&str>) -> Key| {
        severity(
            "args.disallowed-change",
            Some("fast.json"),
            Some(2),
            Some("vae.--repeat"),
        )
    };
    check(dir.path(), &[], 1, vec![change(error)]);
    let json = check(
        dir.path(),
        &["--track", "tweaked"],
        0,
        vec![change(warning)],
    );
    assert_eq!(
        finding(&json, "args.disallowed-change", Some("fast.json"), Some(2))["hint"],
        "allowed in the tweaked track; listed so the change is disclosed"
    );
    check(dir.path(), &["--allow=--repeat"], 0, vec![]);
}

#[test]
fn args_batch_size_changed_consistently_is_allowed() {
    let dir = copy_example();
    edit_job_arg(&at(&dir, "fast.json"), "vae", "--batch-size", "64");
    for (_, _, rel) in streams() {
        edit_entries(&at(&dir, &rel), |entries| {
            for e in entries.iter_mut().filter(|e| e.name() == Some("vae")) {
                let o = &mut e.fields;
                o.insert("batch_size", 64i64);
                let items = 64.0 * o.get("number").unwrap().as_f64().unwrap();
                let (avg, min, max) = (
                    number(o, "train", "avg"),
                    number(o, "train", "min"),
                    number(o, "train", "max"),
                );
                edit_object(o, "train_item", |item| {
                    item.insert("avg", items / avg);
                    item.insert("min", items / max);
                    item.insert("max", items / min);
                    item.insert("range", items / min - items / max);
                });
                rehash(o);
            }
        });
    }
    check(dir.path(), &[], 0, vec![]);
    // The tweaked track lists every change, allowed ones included, as warnings.
    check(
        dir.path(),
        &["--track", "tweaked"],
        0,
        vec![warning(
            "args.disallowed-change",
            Some("fast.json"),
            Some(2),
            Some("vae.--batch-size"),
        )],
    );
}

// ───────────────────────────── 15. jobs ─────────────────────────────

/// The span of job `job` in a jobs file written two spaces per level: from the `\n  {`
/// before its name to the `\n  }` after it.
fn job_span(text: &str, job: &str) -> (usize, usize) {
    let name = text.find(&format!("\"name\": \"{job}\"")).unwrap();
    let start = text[..name].rfind("\n  {").unwrap();
    let end = name + text[name..].find("\n  }").unwrap() + "\n  }".len();
    (start, end)
}

#[test]
fn jobs_missing_when_the_jobs_file_is_absent() {
    let dir = copy_example();
    std::fs::remove_file(at(&dir, "fast.json")).unwrap();
    let json = check(
        dir.path(),
        &[],
        0,
        vec![warning("jobs.missing", None, None, None)],
    );
    assert_eq!(json["summary"]["jobs_file"], serde_json::Value::Null);
    assert_eq!(json["summary"]["baselines"], "baselines/jobs/fast.json");
}

#[test]
fn jobs_missing_job() {
    let dir = copy_example();
    let path = at(&dir, "fast.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let (start, end) = job_span(&text, "wlm");
    assert_eq!(&text[end..end + 1], ",");
    std::fs::write(&path, format!("{}{}", &text[..start], &text[end + 1..])).unwrap();
    // The baselines' job is missing; the reports still hold `wlm`, which the vendor's
    // jobs file (what the entries are checked against) does not list.
    let wlm = entries_of("wlm");
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error("jobs.missing-job", Some("fast.json"), None, None),
            warning("bench.unknown", Some(&wlm[0].0), Some(wlm[0].1), None),
        ],
    );
    assert_eq!(
        finding(&json, "jobs.missing-job", Some("fast.json"), None)["expected"],
        "job `wlm` as in baselines/jobs/fast.json"
    );
    assert_eq!(
        finding(&json, "bench.unknown", Some(&wlm[0].0), Some(wlm[0].1))["found"],
        "`wlm` (10 entries)"
    );
}

/// The jobs file with a copy of the `vae` job named `vae_big` after it.
fn add_vae_big(dir: &TempDir) {
    let path = at(dir, "fast.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let (start, end) = job_span(&text, "vae");
    let copy = text[start..end].replace("\"name\": \"vae\"", "\"name\": \"vae_big\"");
    std::fs::write(&path, format!("{},{copy}{}", &text[..end], &text[end..])).unwrap();
}

#[test]
fn jobs_extra_job_without_reports() {
    let dir = copy_example();
    add_vae_big(&dir);
    // The vendor's jobs file says vae_big ran once per GPU in every run: none did.
    let mut expected = vec![error("jobs.extra-job", Some("fast.json"), None, None)];
    for (_, _, rel) in streams() {
        expected.push(error("bench.missing", Some(&rel), None, None));
    }
    expected.extend(vec![error("runs.too-few", None, None, Some("vae_big")); 2]);
    let json = check(dir.path(), &[], 1, expected);
    assert_eq!(
        finding(&json, "jobs.extra-job", Some("fast.json"), None)["found"],
        "job `vae_big`"
    );
}

#[test]
fn jobs_extra_job_with_its_reports() {
    let dir = copy_example();
    add_vae_big(&dir);
    for (_, _, rel) in streams() {
        edit_entries(&at(&dir, &rel), |entries| {
            let mut extra = entries[2].clone();
            assert_eq!(extra.name(), Some("vae"));
            extra.fields.insert("name", "vae_big");
            entries.push(extra);
        });
    }
    check(
        dir.path(),
        &[],
        1,
        vec![error("jobs.extra-job", Some("fast.json"), None, None)],
    );
}
