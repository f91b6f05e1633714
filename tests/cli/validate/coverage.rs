//! Which runs and benches are there: `runs.too-few` and `bench.*`.

use super::{at, check, missing_in, name_of, names_from, per_test_submission, set_loss, texts};
use crate::fixtures::{
    copy_example, edit_entries, edit_entry, error, example_dir, finding, warning,
};
use std::path::PathBuf;

// ───────────────────────────── 8. runs.too-few ─────────────────────────────

#[test]
fn runs_too_few_with_three_run_folders() {
    let dir = copy_example();
    std::fs::remove_dir_all(at(&dir, "output3")).unwrap();
    std::fs::remove_dir_all(at(&dir, "output4")).unwrap();
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error("runs.too-few", None, None, None)],
    );
    let f = finding(&json, "runs.too-few", None, None);
    assert_eq!(f["expected"], "at least 4 runs (--min-runs)");
    assert_eq!(f["found"], "3 runs (output0, output1, output2)");
    assert_eq!(json["summary"]["runs"], 3);
}

#[test]
fn runs_too_few_with_min_runs_6() {
    let json = check(
        example_dir(),
        &["--min-runs", "6"],
        1,
        vec![error("runs.too-few", None, None, None)],
    );
    let f = finding(&json, "runs.too-few", None, None);
    assert_eq!(f["expected"], "at least 6 runs (--min-runs)");
    assert_eq!(
        f["found"],
        "5 runs (output0, output1, output2, output3, output4)"
    );
}

#[test]
fn runs_too_few_of_one_bench_when_a_run_failed() {
    // A NaN run is not a usable result: with --min-runs 5 that bench has 4 on GPU 0.
    let dir = copy_example();
    let file = "output1/fast_0.json";
    let bench = name_of(&at(&dir, file), 3);
    set_loss(&at(&dir, file), 3, 17, f64::NAN);
    let json = check(
        dir.path(),
        &["--min-runs", "5"],
        1,
        vec![
            error("loss.nan", Some(file), Some(3), Some("batch_loss[17]")),
            error("runs.too-few", None, None, Some(&bench)),
        ],
    );
    let f = finding(&json, "runs.too-few", None, None);
    assert_eq!(
        f["expected"],
        format!("at least 5 runs of `{bench}` on GPU 0 with a usable result")
    );
    assert_eq!(f["found"], "4 (output0, output2, output3, output4)");
}

// ───────────────────────────── 9. bench.missing ─────────────────────────────

#[test]
fn bench_missing_one_entry() {
    let dir = copy_example();
    let file = "output2/fast_1.json";
    let lost = name_of(&at(&dir, file), 6);
    edit_entries(&at(&dir, file), |e| {
        e.remove(6);
    });
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error("bench.missing", Some(file), None, None)],
    );
    let f = finding(&json, "bench.missing", Some(file), None);
    assert_eq!(f["expected"], format!("`{lost}` on GPU 1 in run output2"));
    assert_eq!(f["found"], "absent");
}

#[test]
fn bench_missing_whole_gpu_stream() {
    let dir = copy_example();
    let lost = names_from(&at(&dir, "output3/fast_1.json"), 0);
    std::fs::remove_file(at(&dir, "output3/fast_1.json")).unwrap();
    // No stream of GPU 1 in that run: the finding names the run's folder, and lists
    // every bench of the stream (more than 4 in one place: one finding).
    assert!(lost.len() > 4);
    let json = check(dir.path(), &[], 1, missing_in("output3", lost.len()));
    let expected = format!("the {} benches on GPU 1 in run output3", lost.len());
    assert_eq!(texts(&json, "bench.missing", "expected"), [expected]);
    let listed: Vec<String> = lost.iter().map(|b| format!("`{b}`")).collect();
    let found = format!("every one absent: {}", listed.join(", "));
    assert_eq!(texts(&json, "bench.missing", "found"), [found]);
    assert_eq!(json["summary"]["gpus"], 2);
}

/// A per-test submission with one bench's file removed has no file to name: its runs
/// are `R<run>` labels, not paths. The finding is about the submission (or, for per-test
/// files in a folder, that folder), as `findings[].file` is documented to be a path
/// inside the submission or null.
#[test]
fn bench_missing_in_the_per_test_layout_names_no_pseudo_file() {
    let dir = per_test_submission();
    let gone: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with("fast.vae.R0.D1.")
        })
        .collect();
    assert_eq!(gone.len(), 1);
    std::fs::remove_file(&gone[0]).unwrap();
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error("bench.missing", None, None, None)],
    );
    assert_eq!(
        texts(&json, "bench.missing", "expected"),
        ["`vae` on GPU 1 in run R0"]
    );
}

// ───────────────────────────── 10. bench.duplicate ─────────────────────────────

#[test]
fn bench_duplicate_entry_appended_twice() {
    let dir = copy_example();
    let file = "output1/fast_0.json";
    edit_entries(&at(&dir, file), |e| {
        let again = e[4].clone();
        e.push(again);
    });
    // The copy is also a bit-identical loss curve and timing of another entry.
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error("bench.duplicate", Some(file), Some(19), None),
            error("loss.duplicated", Some(file), Some(19), Some("batch_loss")),
            error("loss.duplicated", Some(file), Some(19), Some("train")),
        ],
    );
    assert_eq!(
        finding(&json, "bench.duplicate", Some(file), Some(19))["found"],
        "again after output1/fast_0.json entry 4"
    );
}

// ───────────────────────────── 11. bench.unknown ─────────────────────────────

#[test]
fn bench_unknown_renamed_entry_also_leaves_its_bench_missing() {
    let dir = copy_example();
    let file = "output0/fast_1.json";
    edit_entry(&at(&dir, file), 5, |o| o.insert("name", "reso_v2"));
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            warning("bench.unknown", Some(file), Some(5), None),
            error("bench.missing", Some(file), None, None),
        ],
    );
    assert_eq!(
        finding(&json, "bench.unknown", Some(file), Some(5))["found"],
        "`reso_v2` (1 entry)"
    );
}

#[test]
fn bench_unknown_extra_entry_is_only_a_warning() {
    let dir = copy_example();
    let file = "output2/fast_0.json";
    edit_entries(&at(&dir, file), |e| {
        let mut extra = e[0].clone();
        extra.fields.insert("name", "toy_reg_extra");
        e.push(extra);
    });
    check(
        dir.path(),
        &[],
        0,
        vec![warning("bench.unknown", Some(file), Some(19), None)],
    );
}
