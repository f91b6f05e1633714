//! `mlbench run` (feature `runner`, needs libtorch): the output a vendor submits, `--pack`,
//! and what the runner refuses to touch. The models are tiny so each run takes a second.

mod energy;
mod telemetry;

use crate::fixtures::{mlbench, read_entries, read_zip, validate_json};
use predicates::prelude::*;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// toy_reg only: 12 observations of 2 batches of 16 (10 dropped), per device.
const JOBS: &str = r#"[
 {"name": "toy_reg", "cmd": "./regression/polynome/pytorch/run.sh",
  "args": {"--repeat": 12, "--number": 2, "--batch-size": 16, "--cuda": ""}, "cgroup": "student"}
]"#;

/// A temporary folder with the jobs file `tiny.json`.
fn workspace() -> (TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let jobs = tmp.path().join("tiny.json");
    std::fs::write(&jobs, JOBS).unwrap();
    (tmp, jobs)
}

fn run(jobs: &Path, out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    mlbench()
        .arg("run")
        .arg("--jobs")
        .arg(jobs)
        .args(["--devices", "2", "--out"])
        .arg(out)
        // No idle baseline (30 s a run by default): telemetry.rs tests it.
        .args(["--idle-baseline", "0"])
        .args(extra)
        .assert()
}

/// The packed `SUBMISSION.json` among a zip's files.
fn submission_info(files: &[(String, Vec<u8>)]) -> serde_json::Value {
    let (_, bytes) = files.iter().find(|(n, _)| n == "SUBMISSION.json").unwrap();
    serde_json::from_slice(bytes).unwrap()
}

#[test]
fn run_with_pack_writes_a_submission_that_validates_clean() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    let zip = tmp.path().join("vendor.zip");
    run(
        &jobs,
        &out,
        &["--repeat-suite", "4", "--pack", zip.to_str().unwrap()],
    )
    .success()
    .stderr(predicate::str::contains(
        "4 configurations passed, 0 failed; 8 entries in",
    ))
    .stderr(predicate::str::contains(format!(
        "packed 24 files (8 report files, 8 entries) into {}",
        zip.display()
    )));

    // 4 runs × 2 devices, one entry each, plus the summaries, the jobs file, the
    // machine's description, the manifest; and each copy's telemetry (no idle baseline
    // here), which SUBMISSION.json lists.
    let mut names: Vec<String> = read_zip(&zip).into_iter().map(|(n, _)| n).collect();
    names.sort();
    let mut expected = vec![
        "MANIFEST.sha256".to_owned(),
        "SUBMISSION.json".to_owned(),
        "system.json".to_owned(),
        "tiny.json".to_owned(),
    ];
    for r in 0..4 {
        expected.push(format!("output{r}/summary.txt"));
        expected.push(format!("output{r}/tiny_0.json"));
        expected.push(format!("output{r}/tiny_1.json"));
        expected.push(format!("output{r}/telemetry/toy_reg.0.jsonl"));
        expected.push(format!("output{r}/telemetry/toy_reg.1.jsonl"));
    }
    expected.sort();
    assert_eq!(names, expected);
    let files = read_zip(&zip);
    let info = submission_info(&files);
    assert_eq!(info["track"], "baseline");
    assert_eq!(info["suite"], "tiny");
    assert_eq!(info["runs"], 4);
    assert_eq!(info["gpus"], 2);
    assert_eq!(info["entries"], 8);
    // The machine, embedded: this host, its two simulated devices.
    assert_eq!(info["systems"][0]["devices"].as_array().unwrap().len(), 2);
    assert_eq!(info["systems"][0]["devices"][1]["kind"], "cpu");
    assert_eq!(info["errors"], 0);
    let telemetry: Vec<&String> = expected
        .iter()
        .filter(|n| n.contains("/telemetry/"))
        .collect();
    assert_eq!(info["telemetry"], serde_json::json!(telemetry));
    // The copy of the jobs file is the file itself.
    let copy = &files.iter().find(|(n, _)| n == "tiny.json").unwrap().1;
    assert_eq!(copy, JOBS.as_bytes());

    let (code, json) = validate_json(&zip, &[]);
    assert_eq!(code, 0, "{json:#}");
    assert_eq!(json["errors"], 0);
    assert_eq!(json["summary"]["entries"], 8);

    // Each stream has its device's one entry: 12 observations, the first 10 dropped.
    for r in 0..4 {
        for d in 0..2 {
            let entries = read_entries(&out.join(format!("output{r}/tiny_{d}.json")));
            assert_eq!(entries.len(), 1);
            let e = &entries[0];
            assert_eq!(e.vcd(), Some(d.to_string()));
            assert_eq!(e.name(), Some("toy_reg"));
            assert_eq!(e.completed(), Some(true));
            let count = e.get("train").and_then(|t| t.as_object()?.get("count"));
            assert_eq!(count.and_then(|v| v.as_f64()), Some(2.0));
        }
    }
}

#[test]
fn run_records_the_track_it_packs() {
    let (tmp, jobs) = workspace();
    let zip = tmp.path().join("tweaked.zip");
    run(
        &jobs,
        &tmp.path().join("out"),
        &[
            "--repeat-suite",
            "4",
            "--pack",
            zip.to_str().unwrap(),
            "--track",
            "tweaked",
        ],
    )
    .success();
    assert_eq!(submission_info(&read_zip(&zip))["track"], "tweaked");
}

#[test]
fn run_does_not_pack_what_the_validator_rejects_and_keeps_the_reports() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    let zip = tmp.path().join("vendor.zip");
    // 2 suite runs: fewer than the 4 a submission needs (runs.too-few).
    run(
        &jobs,
        &out,
        &["--repeat-suite", "2", "--pack", zip.to_str().unwrap()],
    )
    .code(1)
    .stderr(predicate::str::contains("runs.too-few"))
    .stderr(predicate::str::contains("not packed"));
    assert!(!zip.exists());
    for r in 0..2 {
        for d in 0..2 {
            let stream = out.join(format!("output{r}/tiny_{d}.json"));
            assert_eq!(read_entries(&stream).len(), 1, "{}", stream.display());
        }
    }
}

#[test]
fn run_refuses_an_existing_pack_file_before_running_anything() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    let zip = tmp.path().join("vendor.zip");
    std::fs::write(&zip, b"mine").unwrap();
    run(&jobs, &out, &["--pack", zip.to_str().unwrap()])
        .code(2)
        .stderr(predicate::str::contains(
            "already exists; not overwriting it",
        ));
    assert_eq!(std::fs::read(&zip).unwrap(), b"mine");
    assert!(!out.exists());
}

#[test]
fn run_refuses_a_pack_file_inside_the_output_before_running() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    let zip = out.join("vendor.zip");
    run(&jobs, &out, &["--pack", zip.to_str().unwrap()])
        .code(2)
        .stderr(predicate::str::contains(
            "the archive would be inside the output folder",
        ));
    assert!(!out.exists());
}

#[test]
fn run_refuses_streams_of_an_earlier_run_unless_append() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    run(&jobs, &out, &[]).success();
    let stream = out.join("output0/tiny_0.json");
    let before = std::fs::read(&stream).unwrap();

    run(&jobs, &out, &[]).code(2).stderr(
        predicate::str::contains(stream.display().to_string())
            .and(predicate::str::contains("and 1 more"))
            .and(predicate::str::contains("--append")),
    );
    assert_eq!(std::fs::read(&stream).unwrap(), before);

    run(&jobs, &out, &["--append"]).success();
    for d in 0..2 {
        let entries = read_entries(&out.join(format!("output0/tiny_{d}.json")));
        assert_eq!(entries.len(), 2);
    }
    // The first run's bytes are untouched at the head of the stream.
    assert!(std::fs::read(&stream).unwrap().starts_with(&before));
}

#[test]
fn run_never_replaces_a_different_jobs_file_in_the_output() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("tiny.json"), "[]").unwrap();
    run(&jobs, &out, &[])
        .code(2)
        .stderr(predicate::str::contains("a different jobs file"));
    assert_eq!(std::fs::read(out.join("tiny.json")).unwrap(), b"[]");
    assert!(!out.join("output0").exists());
}

#[test]
fn pack_goes_with_neither_dry_run_nor_slurm() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    run(&jobs, &out, &["--dry-run", "--pack", "x.zip"])
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
    run(&jobs, &out, &["--track", "tweaked"])
        .code(2)
        .stderr(predicate::str::contains("--pack"));
    assert!(!out.exists());
}

#[test]
fn first_run_numbers_the_run_folders_and_seeds() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    run(&jobs, &out, &["--first-run", "4", "--repeat-suite", "2"]).success();
    assert!(!out.join("output0").exists());
    for (r, seed) in [(4, 104), (5, 105)] {
        // Device 0's seed is RUN_ID + 100 (run.py).
        let entries = read_entries(&out.join(format!("output{r}/tiny_0.json")));
        let recorded = entries[0].get("seed").and_then(|v| v.as_i64());
        assert_eq!(recorded, Some(seed), "output{r}");
    }
}

#[test]
fn slurm_script_takes_the_nodes_devices_and_checks_the_names() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    let script = mlbench()
        .arg("run")
        .arg("--jobs")
        .arg(&jobs)
        .args([
            "--slurm",
            "--nodes",
            "3",
            "--devices",
            "8",
            "--repeat-suite",
            "5",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(script.status.code(), Some(0));
    let text = String::from_utf8(script.stdout).unwrap();
    // 8 GPUs per node even here, where there is none; 3 tasks of 5 runs each.
    assert!(text.contains("#SBATCH --gres=gpu:8\n"), "{text}");
    assert!(text.contains("#SBATCH --array=0-2\n"), "{text}");
    assert!(
        text.contains("FIRST_RUN=$((SLURM_ARRAY_TASK_ID * 5))\n"),
        "{text}"
    );
    assert!(text.contains("--devices 8 --repeat-suite 5 --first-run \"$FIRST_RUN\""));
    assert!(!out.exists(), "printing the script writes nothing");

    let base = |extra: &[&str]| {
        let mut cmd = mlbench();
        cmd.arg("run")
            .arg("--jobs")
            .arg(&jobs)
            .arg("--slurm")
            .args(extra);
        cmd.assert()
    };
    base(&[]).code(2).stderr(predicate::str::contains(
        "--devices (with --slurm): the nodes' devices are not given",
    ));
    base(&["--devices", "8", "--name", "nope"])
        .code(2)
        .stderr(predicate::str::contains("no job named `nope`"));
    base(&["--devices", "cpu"]).success().stdout(
        predicate::str::contains(" --devices cpu ").and(predicate::str::contains("--gres").not()),
    );
}

#[test]
fn data_directory_defaults_to_base_or_a_cache_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let jobs = tmp.path().join("data.json");
    std::fs::write(
        &jobs,
        r#"[{"name": "toy_reg", "cmd": "./r.sh", "cgroup": "student",
             "args": {"--repeat": 11, "--number": 1, "--batch-size": 4,
                      "--data": "$DATA_DIRECTORY/ImageNet/train"}}]"#,
    )
    .unwrap();
    let out = tmp.path().join("out");
    let recorded_data = |out: &Path| {
        let entries = read_entries(&out.join("output0/data_0.json"));
        entries[0]
            .get("data")
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    // Without $BASE the data go to a cache folder, never into the submission.
    let cache = tmp.path().join("cache");
    mlbench()
        .env_remove("DATA_DIRECTORY")
        .env_remove("BASE")
        .env("XDG_CACHE_HOME", &cache)
        .arg("run")
        .arg("--jobs")
        .arg(&jobs)
        .arg("--out")
        .arg(&out)
        .args(["--idle-baseline", "0"])
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "note: $DATA_DIRECTORY is not set: {} (from the cache folder",
            cache.join("mlbench/data").display()
        )));
    let expected = format!("{}/ImageNet/train", cache.join("mlbench/data").display());
    assert_eq!(recorded_data(&out), Some(expected));

    let out2 = tmp.path().join("out2");
    mlbench()
        .env_remove("DATA_DIRECTORY")
        .env("BASE", "/srv/suite")
        .arg("run")
        .arg("--jobs")
        .arg(&jobs)
        .arg("--out")
        .arg(&out2)
        .args(["--idle-baseline", "0"])
        .assert()
        .success()
        .stderr(predicate::str::contains("/srv/suite/data (from $BASE"));
    assert_eq!(
        recorded_data(&out2).as_deref(),
        Some("/srv/suite/data/ImageNet/train")
    );

    let out3 = tmp.path().join("out3");
    mlbench()
        .env("DATA_DIRECTORY", "/datasets")
        .arg("run")
        .arg("--jobs")
        .arg(&jobs)
        .arg("--out")
        .arg(&out3)
        .args(["--idle-baseline", "0"])
        .assert()
        .success()
        .stderr(predicate::str::contains("DATA_DIRECTORY").not());
    assert_eq!(
        recorded_data(&out3).as_deref(),
        Some("/datasets/ImageNet/train")
    );
}

/// A report stream that cannot be written (a folder is in its place) loses that copy's
/// entry: an output failure, exit 3, said with the folder, not a failed configuration.
#[test]
fn a_stream_that_cannot_be_written_is_exit_3() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    std::fs::create_dir_all(out.join("output0/tiny_1.json")).unwrap();
    run(&jobs, &out, &["--append"])
        .code(3)
        .stderr(predicate::str::contains(format!(
            "error: {}: 1 copy wrote no entry: its report stream could not be written",
            out.display()
        )));
    // The other copy's entry is there.
    assert_eq!(read_entries(&out.join("output0/tiny_0.json")).len(), 1);
}

/// Each copy runs in a process of its own: one that dies (here aborted by the test hook,
/// as libtorch aborts on a fatal error) fails only its copy; the parent writes its entry.
#[test]
fn a_copy_whose_process_dies_fails_alone_and_still_has_its_entry() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    mlbench()
        .env("MLBENCH_TEST_ABORT_COPY", "0:0:1")
        .arg("run")
        .arg("--jobs")
        .arg(&jobs)
        .args([
            "--devices",
            "2",
            "--repeat-suite",
            "2",
            "--idle-baseline",
            "0",
            "--out",
        ])
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "failed: toy_reg on 1: toy_reg: the copy's process was killed by signal 6 (SIGABRT)",
        ))
        .stderr(predicate::str::contains(
            "1 configuration passed, 1 failed; 4 entries",
        ));
    let summary = std::fs::read_to_string(out.join("output0/summary.txt")).unwrap();
    assert!(summary.starts_with("[ 1/ 1][ 1/ 2] FAILED |"), "{summary}");
    let dead = read_entries(&out.join("output0/tiny_1.json"));
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].completed(), Some(false));
    for (path, completed) in [("output0/tiny_0.json", true), ("output1/tiny_1.json", true)] {
        let entries = read_entries(&out.join(path));
        assert_eq!(entries[0].completed(), Some(completed), "{path}");
    }
}

/// Seeds are the copy's own (one process each): the same run twice gives the same losses
/// on each device, and the two devices, seeded 100 apart, differ.
#[test]
fn copies_are_reproducible_from_their_seeds() {
    let (tmp, jobs) = workspace();
    let losses = |out: &Path, device: u32| -> Vec<f64> {
        let entries = read_entries(&out.join(format!("output0/tiny_{device}.json")));
        entries[0]
            .get("batch_loss")
            .and_then(|v| v.as_list())
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run(&jobs, &a, &[]).success();
    run(&jobs, &b, &[]).success();
    assert_eq!(losses(&a, 0).len(), 24);
    assert_eq!(losses(&a, 0), losses(&b, 0));
    assert_eq!(losses(&a, 1), losses(&b, 1));
    assert_ne!(losses(&a, 0), losses(&a, 1));
}

/// `--smoke`: the shipped sizes replace the jobs file's (toy_reg: batch 16, 12
/// observations of one step), every entry says so, `validate` says it once (and reports no
/// argument that the smoke sizes explain), `report` says it in its notes.
#[test]
fn smoke_runs_shrink_the_jobs_and_say_so_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let jobs = tmp.path().join("tiny.json");
    // batch 64 and 5 steps per observation in the jobs file: smoke makes them 16 and 1
    // (toy_reg's smoke batch).
    std::fs::write(
        &jobs,
        JOBS.replace(
            "\"--number\": 2, \"--batch-size\": 16",
            "\"--number\": 5, \"--batch-size\": 64",
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    run(&jobs, &out, &["--smoke", "--repeat-suite", "4"]).success();
    let entries = read_entries(&out.join("output0/tiny_0.json"));
    assert_eq!(entries.len(), 1);
    let e = &entries[0];
    use mlbench_schema::Value;
    assert_eq!(e.get("smoke"), Some(&Value::Bool(true)));
    assert_eq!(e.get("batch_size"), Some(&Value::Int(16)));
    assert_eq!(e.get("number"), Some(&Value::Int(1)));
    assert_eq!(e.get("repeat"), Some(&Value::Int(12)));
    // 12 observations, the first 10 dropped: the last 2 give the throughput.
    assert!(e.train_item_avg().is_some_and(|v| v > 0.0), "{e:?}");
    let (code, json) = validate_json(&out, &[]);
    let rules: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(code, 0, "{json}");
    assert_eq!(
        rules.iter().filter(|r| **r == "run.smoke").count(),
        1,
        "{rules:?}"
    );
    assert!(!rules.contains(&"args.entry-mismatch"), "{rules:?}");
    let smoke = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "run.smoke")
        .unwrap();
    assert_eq!(smoke["found"], "8 of 8 entries ran with --smoke");
    mlbench()
        .args(["report", "--gpu-model", "RTX", "--reports"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "smoke run: 8 of 8 entries ran with `mlbench run --smoke` (reduced sizes)",
        ));
}

/// `--submit` without Slurm on the PATH: a clear error naming sbatch, exit 2, and the
/// log folder is the only thing made.
#[test]
fn submit_without_slurm_names_sbatch() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    mlbench()
        .env("PATH", "")
        .arg("run")
        .arg("--jobs")
        .arg(&jobs)
        .args(["--slurm", "--submit", "--devices", "cpu", "--out-dir"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot run `sbatch`"));
    assert!(out.join("slurm").is_dir());
    assert!(!out.join("output0").exists());
}

/// `--until`: from 3 runs, one at a time, it stops by itself once the anytime-valid
/// interval is within the precision (loose here: CPU timings of a tiny model on a shared
/// machine spread by tens of percent), records the rule in system.json, and `validate`
/// accepts it; a record edited to claim another run count is a `runs.stopping` error.
#[test]
fn until_stops_by_the_rule_and_validate_checks_the_record() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    let max_runs = 40;
    run(
        &jobs,
        &out,
        &[
            "--until",
            "50%",
            "--expected-cv",
            "20%",
            "--max-runs",
            &max_runs.to_string(),
        ],
    )
    .success()
    .stderr(predicate::str::contains("after 3 runs: "));
    let system_path = out.join("system.json");
    let mut system: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&system_path).unwrap()).unwrap();
    let stopping = system["stopping"].clone();
    assert_eq!(stopping["rule"], "anytime-precision");
    assert_eq!(stopping["stopped"], "precision-reached", "{stopping}");
    let runs = stopping["runs"].as_u64().unwrap();
    assert!((3..max_runs).contains(&runs), "{stopping}");
    // One run folder per run, no more.
    let folders = (0..)
        .take_while(|i| out.join(format!("output{i}")).is_dir())
        .count();
    assert_eq!(folders as u64, runs);
    let (code, json) = validate_json(&out, &[]);
    let stopping_findings: Vec<_> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "runs.stopping")
        .collect();
    assert_eq!((code, stopping_findings.len()), (0, 0), "{json}");
    // report states the rule and judges the runs by its precision.
    let report = mlbench()
        .arg("report")
        .arg(&out)
        .args(["-g", "RTX", "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(doc["stopping"]["runs"].as_u64(), Some(runs));
    assert_eq!(doc["precision"]["precision"], 0.5);
    assert_eq!(doc["precision"]["overall"]["anytime_reached"], true);

    // A record that claims one run more than the submission has.
    system["stopping"]["runs"] = serde_json::json!(runs + 1);
    std::fs::write(&system_path, serde_json::to_vec_pretty(&system).unwrap()).unwrap();
    let (code, json) = validate_json(&out, &[]);
    assert_eq!(code, 1, "{json}");
    assert!(
        json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "runs.stopping"),
        "{json}"
    );
}

#[test]
fn until_needs_a_budget_of_three_runs() {
    let (tmp, jobs) = workspace();
    run(
        &jobs,
        &tmp.path().join("out"),
        &["--until", "1%", "--max-runs", "2"],
    )
    .code(2)
    .stderr(predicate::str::contains(
        "--until: a budget of 2 runs is below the 3",
    ));
    run(&jobs, &tmp.path().join("out"), &["--until", "1%"])
        .code(2)
        .stderr(predicate::str::contains("--max-runs"));
    assert!(!tmp.path().join("out").exists());
}

/// `scaling` at tiny sizes (ResNet-18 on 32 × 32 images, 2 a rank), the suite's command.
const SCALING: &str = r#"[
 {"name": "scaling", "cmd": "./image_classification/scaling/pytorch/run.sh",
  "args": {"--repeat": 10, "--number": 1, "--network": "resnet18", "--devices": 0,
           "--batch-size": 2, "--image-size": 32}, "cgroup": "all"}
]"#;

/// Each world size's ranks are processes of their own that meet through c10d; when rank 1
/// of world 2 dies, world 2 fails (rank 0 is ended, never left waiting) and its entry says
/// `completed: false`, while world 1's entry stands, and the run goes on to its end.
#[test]
fn a_rank_that_dies_fails_its_world_size_and_the_sweep_still_writes_every_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let jobs = tmp.path().join("baselines.json");
    std::fs::write(&jobs, SCALING).unwrap();
    let out = tmp.path().join("out");
    mlbench()
        .env("MLBENCH_TEST_ABORT_RANK", "1:2")
        .arg("run")
        .arg("--jobs")
        .arg(&jobs)
        .args(["--devices", "2", "--repeat-suite", "2", "--idle-baseline", "0", "--out"])
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "failed: scaling on 0,1: scaling: world size 2: rank 1: the rank's process was killed by signal 6 (SIGABRT)",
        ))
        .stderr(predicate::str::contains(
            "0 configurations passed, 2 failed; 4 entries",
        ));
    for run in 0..2 {
        let entries = read_entries(&out.join(format!("output{run}/baselines_0.json")));
        let completed: Vec<_> = entries.iter().map(|e| e.completed()).collect();
        assert_eq!(completed, [Some(true), Some(false)], "run {run}");
        let vcd: Vec<_> = entries.iter().map(|e| e.get("vcd").cloned()).collect();
        assert_eq!(vcd, [Some("0".into()), Some("0,1".into())]);
    }
}

/// `--across-nodes` outside a Slurm allocation is a usage error found before anything is
/// written.
#[test]
fn across_nodes_outside_an_allocation_is_refused_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let jobs = tmp.path().join("baselines.json");
    std::fs::write(&jobs, SCALING).unwrap();
    let out = tmp.path().join("out");
    mlbench()
        .env_remove("SLURM_JOB_NUM_NODES")
        .arg("run")
        .arg("--jobs")
        .arg(&jobs)
        .args(["--devices", "2", "--across-nodes", "--out-dir"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--across-nodes runs inside a Slurm allocation (SLURM_JOB_NUM_NODES is not set)",
        ));
    assert!(!out.exists());
}

/// Two jobs profiled: convnet (a small ResNet, on batches made in memory) and toy_reg.
const PROFILED_JOBS: &str = r#"[
 {"name": "convnet", "cmd": "./image_classification/convnets/pytorch/run.sh",
  "args": {"--repeat": 12, "--number": 2, "--batch-size": 4, "--arch": "resnet18",
           "--image_size": 32, "--num_classes": 10}, "cgroup": "student"},
 {"name": "toy_reg", "cmd": "./regression/polynome/pytorch/run.sh",
  "args": {"--repeat": 12, "--number": 2, "--batch-size": 16, "--cuda": ""}, "cgroup": "student"}
]"#;

/// The time inside operators of a Chrome trace, computed here from its events: per
/// thread, the durations of the operators no other operator holds.
fn top_level_operator_seconds(trace: &serde_json::Value) -> f64 {
    let mut by_thread: std::collections::BTreeMap<String, Vec<(f64, f64)>> = Default::default();
    for e in trace["traceEvents"].as_array().unwrap() {
        if e["ph"] == "X" && e["cat"] == "cpu_op" {
            let thread = format!("{}:{}", e["pid"], e["tid"]);
            let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
            by_thread.entry(thread).or_default().push((ts, dur));
        }
    }
    let mut total = 0.0;
    for spans in by_thread.values_mut() {
        spans.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut end = f64::NEG_INFINITY;
        for &(ts, dur) in spans.iter() {
            if ts >= end {
                total += dur;
                end = ts + dur;
            }
        }
    }
    total * 1e-6
}

/// `run --profile`: each copy writes a Chrome trace with `traceEvents` beside the run's
/// reports, and its entry's summary agrees with the trace (its operator time is the
/// trace's, recomputed here; convnet's operators fill 95 % of the window at least);
/// `report` shows the profiles, `validate` accepts the submission and `pack` keeps the
/// traces and lists them.
#[test]
fn profiled_runs_keep_their_traces_and_summaries() {
    let tmp = tempfile::tempdir().unwrap();
    let jobs = tmp.path().join("prof.json");
    std::fs::write(&jobs, PROFILED_JOBS).unwrap();
    let (out, zip) = (tmp.path().join("out"), tmp.path().join("p.zip"));
    let zip_arg = zip.to_str().unwrap();
    let flags = [
        "--repeat-suite",
        "4",
        "--profile",
        "--synthetic-data",
        "--pack",
        zip_arg,
    ];
    run(&jobs, &out, &flags).success();
    for r in 0..4 {
        for (file, bench) in [(0, "convnet"), (1, "convnet"), (0, "toy_reg")] {
            let path = out.join(format!("output{r}/profiles/{bench}.{file}.trace.json"));
            let trace: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            assert!(
                trace["traceEvents"]
                    .as_array()
                    .is_some_and(|e| !e.is_empty())
            );
            let entries = read_entries(&out.join(format!("output{r}/prof_{file}.json")));
            let entry = entries.iter().find(|e| e.name() == Some(bench)).unwrap();
            let value = entry.get("profile").expect("a profile");
            let s = mlbench_schema::profile::ProfileSummary::from_value(value).unwrap();
            let ops = top_level_operator_seconds(&trace);
            assert!(
                (s.operators_s - ops).abs() <= 1e-6 * ops.max(1.0),
                "{} vs {ops}",
                s.operators_s
            );
            let listed: f64 = s.top.iter().map(|o| o.self_s).sum::<f64>() + s.other_operators_s;
            assert!(
                (listed - s.operators_s).abs() < 1e-9,
                "{listed} vs {}",
                s.operators_s
            );
            assert!((s.operators_s + s.outside_s - s.window_s).abs() < 1e-6 || s.outside_s == 0.0);
            if bench == "convnet" {
                let within = s.operators_s / s.window_s;
                assert!((0.95..=1.0 + 1e-9).contains(&within), "{within}: {s:?}");
            }
        }
    }
    let (code, json) = validate_json(&zip, &[]);
    assert_eq!(code, 0, "{json:#}");
    let files = read_zip(&zip);
    let info = submission_info(&files);
    let traces: Vec<&str> = (files.iter().map(|(n, _)| n.as_str()))
        .filter(|n| n.ends_with(".trace.json"))
        .collect();
    assert_eq!(traces.len(), 16, "4 runs × 2 devices × 2 jobs");
    assert_eq!(info["profiles"].as_array().unwrap().len(), 16);
    mlbench()
        .args(["report", "--min-runs", "4", "-g", "RTX"])
        .arg(&zip)
        .assert()
        .stdout(predicate::str::contains(
            "profile: convnet (8 entries, per entry)",
        ))
        .stdout(predicate::str::contains(
            "profile: toy_reg (8 entries, per entry)",
        ));
}
