//! `mlbench targets`: a targets file made from a baseline submission, each bench's target
//! its classic trimmed mean worked out here by hand; and the runtimes that `grid` and
//! `validate` keep apart.

use crate::fixtures::{
    copy_example, edit_entry, f, mlbench, read_entries, spread, validate_json, write_samples,
    write_vendor,
};
use mlbench_schema::{Scoring, TargetTable};
use predicates::prelude::*;
use tempfile::TempDir;

/// atari: 2 GPUs × 5 runs. Run means (over the GPUs) 10, 11, 12.5, 9, 14: without the
/// lowest (9) and the highest (14), (10 + 11 + 12.5) / 3 = 11.1666…
const ATARI: [[f64; 5]; 2] = [[9.0, 10.0, 12.0, 8.0, 13.0], [11.0, 12.0, 13.0, 10.0, 15.0]];

/// A submission with atari (5 runs), vae (4 runs) and convnet (2 runs only).
fn submission() -> TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let atari: Vec<Vec<f64>> = ATARI.iter().map(|g| g.to_vec()).collect();
    write_samples(
        tmp.path(),
        &[
            ("atari", atari),
            ("vae", spread(100.0)),
            ("convnet", vec![vec![50.0, 52.0], vec![51.0, 53.0]]),
        ],
    );
    tmp
}

#[test]
fn each_target_is_the_trimmed_mean_and_the_report_against_it_has_no_diff() {
    let sub = submission();
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("h100.toml");
    // Made-up entries: the submission fails its validation (convnet has 2 runs of the 4
    // required), so the targets need --allow-failing, and say so.
    mlbench()
        .args(["targets", "--from"])
        .arg(sub.path())
        .args(["--gpu-model", "H100", "--date", "2026-11-27", "-o"])
        .arg(&file)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--allow-failing"));
    assert!(!file.exists());
    mlbench()
        .args(["targets", "--allow-failing", "--from"])
        .arg(sub.path())
        .args(["--gpu-model", "H100", "--date", "2026-11-27", "-o"])
        .arg(&file)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "warning: `convnet` left out: a throughput in 2 runs (a trimmed mean needs 3)",
        ))
        .stderr(predicate::str::contains(
            "2 targets for GPU model H100 (mila-iqia/training scripts",
        ));
    let text = std::fs::read_to_string(&file).unwrap();
    let table = TargetTable::from_toml("h100.toml", &text, Scoring::Classic, "H100").unwrap();
    let target = |bench: &str| {
        table
            .targets
            .iter()
            .find(|t| t.bench == bench)
            .map(|t| t.target)
    };
    let atari = (10.0 + 11.0 + 12.5) / 3.0;
    assert!(
        (target("atari").unwrap() - atari).abs() < 1e-12 * atari,
        "{text}"
    );
    // vae: each run's GPU mean is 100·(1 + (d₀ + d₁)/2) = 99.5, 99.5, 101.5, 99.5; the
    // trimmed mean drops one 99.5 and the 101.5.
    assert!((target("vae").unwrap() - 99.5).abs() < 1e-9, "{text}");
    assert_eq!(target("convnet"), None);
    assert!(text.contains("date = \"2026-11-27\""), "{text}");
    assert!(
        text.contains("runtime = \"mila-iqia/training scripts"),
        "{text}"
    );

    // The same submission against the file: every diff is 0.
    let report = mlbench()
        .arg("report")
        .arg(sub.path())
        .args(["--gpu-model", "H100", "--format", "json", "--targets"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(report.status.success(), "{report:?}");
    let json: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let benches = json["benches"].as_array().unwrap();
    let scored: Vec<&serde_json::Value> = benches.iter().filter(|b| !b["diff"].is_null()).collect();
    assert_eq!(scored.len(), 2, "{json:#}");
    for b in scored {
        assert!(f(&b["diff"]).abs() < 1e-12, "{b}");
    }
}

#[test]
fn arguments_and_outputs_are_refused_before_the_submission_is_read() {
    let sub = submission();
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("t.toml");
    mlbench()
        .arg("targets")
        .arg(sub.path())
        .args(["-g", "H100", "--date", "27/11/2026", "-o"])
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "date `27/11/2026`: expected YYYY-MM-DD",
        ));
    assert!(!file.exists());
    std::fs::write(&file, "mine").unwrap();
    mlbench()
        .arg("targets")
        .arg(sub.path())
        .args(["-g", "H100", "-o"])
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    mlbench()
        .arg("targets")
        .arg(out.path().join("nothing"))
        .args(["-g", "H100"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nothing"));
    // A model named like a column of the bench rows would not read back.
    mlbench()
        .arg("targets")
        .arg(sub.path())
        .args(["-g", "target"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("GPU model `target`"));
}

/// Marks every entry of a submission as `mlbench run` writes it (`peak_rss_bytes`).
fn as_mlbench_run(root: &std::path::Path) {
    for run in std::fs::read_dir(root).unwrap() {
        for file in std::fs::read_dir(run.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            for i in 0..read_entries(&path).len() {
                edit_entry(&path, i, |o| o.insert("peak_rss_bytes", 1_000_000i64));
            }
        }
    }
}

#[test]
fn grid_refuses_mixed_runtimes_unless_allowed_and_then_marks_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("A"), tmp.path().join("B"));
    write_vendor(&a, &[("atari", 10.0), ("vae", 100.0)]);
    write_vendor(&b, &[("atari", 12.0), ("vae", 90.0)]);
    as_mlbench_run(&b);
    mlbench()
        .arg("grid")
        .args([&a, &b])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "submissions of different runtimes",
        ))
        .stderr(predicate::str::contains("--allow-mixed-runtimes"));
    let out = mlbench()
        .arg("grid")
        .args([&a, &b])
        .args([
            "--allow-mixed-runtimes",
            "--resamples",
            "50",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = |name: &str| {
        json["vendors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(row("A")["mixed_runtime"], false);
    assert_eq!(row("B")["mixed_runtime"], true);
    assert_eq!(row("B")["cells"]["atari"]["mixed_runtime"], true);
    assert_eq!(row("A")["cells"]["atari"]["mixed_runtime"], false);
    assert_eq!(row("B")["runtime"]["kind"], "mlbench-run", "{json:#}");
    // The same runtime on both sides: no refusal, nothing marked.
    as_mlbench_run(&a);
    mlbench()
        .arg("grid")
        .args([&a, &b])
        .args(["--resamples", "50"])
        .assert()
        .success()
        .stdout(predicate::str::contains("†").not());
}

#[test]
fn validate_names_the_file_of_the_other_runtime() {
    let tmp = copy_example();
    let path = tmp.path().join("output0/fast_0.json");
    edit_entry(&path, 3, |o| o.insert("peak_rss_bytes", 1_000_000i64));
    let (code, json) = validate_json(tmp.path(), &[]);
    assert_eq!(code, 1);
    let found =
        crate::fixtures::finding(&json, "runtime.mixed", Some("output0/fast_0.json"), Some(3));
    assert_eq!(found["severity"], "error");
    // The example untouched has no such finding.
    let (_, clean) = validate_json(crate::fixtures::example_dir(), &[]);
    let rules: Vec<&str> = clean["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["rule"].as_str())
        .collect();
    assert!(!rules.contains(&"runtime.mixed"), "{rules:?}");
}

/// The targets TOML of `sub` (`extra` arguments added), with the exit status.
fn targets_of(sub: &std::path::Path, extra: &[&str]) -> (i32, String, String) {
    let out = mlbench()
        .arg("targets")
        .arg(sub)
        .args(["-g", "H100"])
        .args(extra)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        out.status.code().unwrap(),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// vendorB (a NaN loss, packed with --allow-errors) is refused, naming the rule, the
/// file, the pack's record and the flag; with --allow-failing its targets say so.
#[test]
fn a_failing_baseline_is_refused_unless_allowed_and_then_recorded() {
    let vendors = crate::vendors::four_vendors();
    let (code, stdout, stderr) = targets_of(&vendors.zip('B'), &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    for part in [
        "the baseline fails its validation (1 error: loss.nan (output0/fast_0.json); packed with errors",
        "allowed_errors",
        "--allow-failing",
    ] {
        assert!(stderr.contains(part), "{part}: {stderr}");
    }
    let (code, text, stderr) = targets_of(&vendors.zip('B'), &["--allow-failing"]);
    assert_eq!(code, 0, "{stderr}");
    let table = TargetTable::from_toml("b.toml", &text, Scoring::Classic, "H100").unwrap();
    let recorded = table.provenance.unwrap().baseline_validation.unwrap();
    assert_eq!(
        recorded,
        "failed: 1 error: loss.nan (output0/fast_0.json); packed with errors: its SUBMISSION.json records allowed_errors (--allow-failing)"
    );
    assert!(
        text.contains(
            "\n# Note: the baseline fails its validation; targets made anyway: failed: 1 error"
        ),
        "{text}"
    );
    // vendorB's folder has the error but no pack record: refused for the error alone.
    let (code, _, stderr) = targets_of(&vendors.dir('B'), &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("packed with errors"), "{stderr}");
    // A clean baseline records that it passed.
    let (code, text, _) = targets_of(&vendors.zip('A'), &[]);
    assert_eq!(code, 0);
    assert!(
        text.contains("\nbaseline_validation = \"passed: 0 errors, 0 warnings\"\n"),
        "{text}"
    );
}

/// vendorD ran convnet at batch 128 (the example, and vendorA, at fast.json's 64): its
/// targets record 128, and the example scored against them is flagged; so is vendorD
/// against the built-in targets, which assume 64.
#[test]
fn targets_record_the_batch_size_and_report_flags_another() {
    use crate::vendors::D_CONVNET_BATCH;
    let vendors = crate::vendors::four_vendors();
    let table_of = |v: char| {
        let (code, text, stderr) = targets_of(&vendors.zip(v), &[]);
        assert_eq!(code, 0, "{stderr}");
        (
            TargetTable::from_toml("t.toml", &text, Scoring::Classic, "H100").unwrap(),
            text,
        )
    };
    let (d, d_text) = table_of('D');
    let (a, _) = table_of('A');
    let convnet = |t: &TargetTable| t.get("convnet").unwrap().clone();
    assert_eq!(convnet(&d).batch_size, Some(D_CONVNET_BATCH));
    assert_eq!(convnet(&a).batch_size, Some(64));
    // Every other bench as fast.json gives it, to both.
    assert_eq!(d.get("vae").unwrap().batch_size, Some(128));
    assert_eq!(a.get("recom").unwrap().batch_size, Some(2048));
    let workers = mlbench_schema::Value::Int(8);
    assert_eq!(convnet(&d).args.get("--workers"), Some(&workers));

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("d.toml");
    std::fs::write(&file, d_text).unwrap();
    let report = |sub: &std::path::Path, targets: Option<&std::path::Path>, model: &str| {
        let mut cmd = mlbench();
        cmd.arg("report")
            .arg(sub)
            .args(["-g", model, "--format", "json"]);
        if let Some(t) = targets {
            cmd.arg("--targets").arg(t);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (json, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    // The example: 5 runs × 2 GPUs of convnet at 64.
    let (json, stderr) = report(&crate::fixtures::example_dir(), Some(&file), "H100");
    assert_eq!(
        json["batch_mismatches"],
        serde_json::json!([{"bench": "convnet", "target_batch_size": 128, "batch_sizes": [64], "entries": 10}])
    );
    assert!(
        stderr.contains(
            "batch size: convnet: 10 entries at batch size 64, its target was measured at 128"
        ),
        "{stderr}"
    );
    let (json, stderr) = report(&vendors.zip('D'), None, "RTX");
    assert_eq!(
        json["batch_mismatches"],
        serde_json::json!([{"bench": "convnet", "target_batch_size": 64, "batch_sizes": [128], "entries": 10}])
    );
    assert!(
        stderr.contains("batch size: convnet: 10 entries at batch size 128"),
        "{stderr}"
    );
    // The table shows the note among the others.
    mlbench()
        .arg("report")
        .arg(vendors.zip('D'))
        .args(["-g", "RTX"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "batch size: convnet: 10 entries at batch size 128, its target was measured at 64",
        ));
    // vendorA against the built-in targets: every batch size as they assume, no field.
    let (json, stderr) = report(&vendors.zip('A'), None, "RTX");
    assert!(json.get("batch_mismatches").is_none(), "{json:#}");
    assert!(!stderr.contains("batch size:"), "{stderr}");
}
