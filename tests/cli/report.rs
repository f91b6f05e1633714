//! `mlbench report`.

use crate::fixtures::{write_submission, write_targets};
use assert_cmd::Command;
use predicates::prelude::*;

fn mlbench() -> Command {
    let mut cmd = Command::cargo_bin("mlbench").unwrap();
    cmd.env_remove("RUST_BACKTRACE").env("NO_COLOR", "1");
    cmd
}

/// The JSON document a successful run printed.
fn json_of(assert: assert_cmd::assert::Assert) -> serde_json::Value {
    serde_json::from_slice(&assert.get_output().stdout).unwrap()
}

fn submission(runs: usize, gpus: u32) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path().join("sub");
    write_submission(&reports, runs, gpus);
    let targets = dir.path().join("targets.csv");
    write_targets(&targets);
    let r = reports.to_string_lossy().into_owned();
    let t = targets.to_string_lossy().into_owned();
    (dir, r, t)
}

#[test]
fn no_arguments_is_a_usage_error() {
    mlbench()
        .assert()
        .code(2)
        .stderr(predicate::str::contains("Usage: mlbench"));
    mlbench()
        .arg("report")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("<SUB>..."));
}

/// The submission is positional in `report` as in every command; `-r/--reports` stays
/// as a hidden alias; `--name` with a typo suggests the suite that is there.
#[test]
fn positional_submission_and_the_old_flag() {
    let (_dir, reports, _) = submission(4, 1);
    let json = |args: &[&str]| {
        let out = mlbench().args(args).assert().success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let positional = json(&["report", &reports, "-g", "RTX", "-f", "json"]);
    let flagged = json(&["report", "-g", "RTX", "-f", "json", "--reports", &reports]);
    assert_eq!(positional, flagged);
    let short = json(&["report", "-g", "RTX", "-f", "json", "-r", &reports]);
    assert_eq!(positional, short);
    mlbench()
        .args(["report", &reports, "-g", "RTX", "--name", "fsat"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no report files of suite `fsat` found (suites present: fast); did you mean `fast`?",
        ));
}

/// Reports of two suites and no `--name`: exit 2, the suites named, the flag hinted.
#[test]
fn several_suites_ask_for_the_name() {
    let (dir, reports, _) = submission(2, 1);
    let fast = dir.path().join("sub/output0/fast_0.json");
    std::fs::copy(&fast, dir.path().join("sub/output0/slow_0.json")).unwrap();
    mlbench()
        .args(["report", &reports, "-g", "RTX"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("reports of several suites found"))
        .stderr(predicate::str::contains(
            "hint: choose the suite with --name NAME",
        ));
    mlbench()
        .args([
            "report",
            &reports,
            "-g",
            "RTX",
            "--name",
            "slow",
            "--min-runs",
            "1",
        ])
        .assert()
        .success();
}

#[test]
fn help_explains_every_flag_with_examples() {
    let out = mlbench()
        .args(["report", "--help"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let help = String::from_utf8(out).unwrap();
    for flag in [
        "<SUB>...",
        "--name",
        "--gpu-model",
        "--scoring",
        "--targets",
        "--price",
        "--min-runs",
        "--format",
        "--output",
        "--force",
        "--check",
        "--skip-unreadable",
        "Examples:",
        "Exit status",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }
    mlbench()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Examples:"));
}

#[test]
fn missing_and_empty_folders_are_exit_2() {
    mlbench()
        .args(["report", "-r", "/no/such/place", "-g", "RTX"])
        .assert()
        .code(2)
        .stderr("error: /no/such/place: no such file or folder\n");
    let dir = tempfile::tempdir().unwrap();
    mlbench()
        .args(["report", "-g", "RTX", "-r"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no report files found"));
}

#[test]
fn no_matching_suite_is_exit_2() {
    let (_dir, reports, _) = submission(4, 1);
    mlbench()
        .args(["report", "-g", "RTX", "--name", "baselines", "-r", &reports])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no report files of suite `baselines` found (suites present: fast)",
        ));
}

#[test]
fn truncated_and_non_json_files_are_named_and_all_reported() {
    let (dir, reports, targets) = submission(4, 2);
    let broken = dir.path().join("sub/output1/fast_1.json");
    let text = std::fs::read_to_string(&broken).unwrap();
    std::fs::write(&broken, &text[..text.len() / 2]).unwrap();
    std::fs::write(
        dir.path().join("sub/output2/fast_0.json"),
        "not json at all",
    )
    .unwrap();
    let assert = mlbench()
        .args([
            "report",
            "-g",
            "RTX",
            "--scoring",
            "score",
            "--targets",
            &targets,
            "-r",
            &reports,
        ])
        .assert()
        .code(2);
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("error: output1/fast_1.json: entry 1: byte "),
        "{stderr}"
    );
    assert!(
        stderr.contains("error: output2/fast_0.json: byte 0 (line 1, column 1): not a report: expected `[` or `{`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("2 problems in 2 files: no report computed"),
        "{stderr}"
    );
    // With --skip-unreadable the entries that parsed are used.
    mlbench()
        .args([
            "report",
            "-g",
            "RTX",
            "--scoring",
            "score",
            "--skip-unreadable",
            "--targets",
            &targets,
            "-r",
            &reports,
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "warning: output1/fast_1.json: entry 1",
        ));
}

#[test]
fn fewer_runs_than_required_is_exit_2_naming_the_count() {
    let (_dir, reports, targets) = submission(3, 2);
    mlbench()
        .args(["report", "-g", "RTX", "--targets", &targets, "-r", &reports])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: found 3 runs (output0, output1, output2), fewer than the 4 required",
        ));
    mlbench()
        .args([
            "report",
            "-g",
            "RTX",
            "--targets",
            &targets,
            "--min-runs",
            "3",
            "-r",
            &reports,
        ])
        .assert()
        .success();
}

#[test]
fn check_turns_failed_criteria_into_exit_1() {
    // The built-in RTX classic table has 19 benches; the fixture has 3, so bench passes fails.
    let (_dir, reports, targets) = submission(4, 2);
    mlbench()
        .args(["report", "-g", "RTX", "-r", &reports])
        .assert()
        .success();
    mlbench()
        .args(["report", "-g", "RTX", "--check", "-r", &reports])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("Result: FAIL"));
    // Against targets it meets, its scoring passes, but not its validation (the
    // fixture's ids are zeros): one status, saying what failed.
    mlbench()
        .args(["report", "-g", "RTX", "--check", "--scoring", "score"])
        .args(["--targets", &targets, "-r", &reports])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("Result: FAIL: validation of "))
        .stdout(predicate::str::contains("criteria").not());
    // A submission that passes both passes.
    mlbench()
        .args(["report", "-g", "RTX", "--check"])
        .arg(crate::fixtures::example_dir())
        .assert()
        .success()
        .stdout(predicate::str::contains("Result: PASS"));
}

#[test]
fn json_has_the_documented_shape() {
    let (_dir, reports, targets) = submission(4, 2);
    let v = json_of(
        mlbench()
            .args([
                "report",
                "-g",
                "RTX",
                "--format",
                "json",
                "--targets",
                &targets,
                "-r",
                &reports,
            ])
            .assert()
            .success(),
    );
    assert_eq!(v["scoring"], "classic");
    assert_eq!(v["name"], "fast");
    assert_eq!(v["gpu_model"], "RTX");
    assert_eq!((v["runs"].as_u64(), v["gpus"].as_u64()), (Some(4), Some(2)));
    let atari = &v["benches"][0];
    assert_eq!(atari["bench"], "atari");
    assert_eq!(atari["n"], 4);
    for key in ["target", "result", "sd", "sd_pct", "diff"] {
        assert!(atari[key].is_number(), "{key}: {atari}");
    }
    for key in [
        "bench_passes",
        "deviation_quantile_80",
        "performance",
        "passed",
    ] {
        assert!(v["statistics"].get(key).is_some(), "{key}");
    }
    let v = json_of(
        mlbench()
            .args([
                "report",
                "-g",
                "RTX",
                "-f",
                "json",
                "--scoring",
                "score",
                "--price",
                "5000",
                "--targets",
                &targets,
                "-r",
                &reports,
            ])
            .assert()
            .success(),
    );
    assert_eq!(v["scoring"], "score");
    assert_eq!(v["benches"][0]["n"], 8);
    for key in [
        "failures",
        "total",
        "failure_ratio",
        "bf",
        "pm",
        "st",
        "pg",
        "score",
        "price",
        "rpp",
    ] {
        assert!(v["statistics"].get(key).is_some(), "{key}");
    }
    assert_eq!(v["statistics"]["price"], 5000.0);
    assert!(v["per_gpu"]["mean"]["atari"]["0"].is_number());
    assert!(v["failures"].as_array().unwrap().is_empty());
}

#[test]
fn output_never_overwrites_without_force() {
    let (dir, reports, targets) = submission(4, 2);
    let out = dir.path().join("report.csv");
    std::fs::write(&out, "precious").unwrap();
    mlbench()
        .args([
            "report",
            "-g",
            "RTX",
            "-f",
            "csv",
            "--targets",
            &targets,
            "-r",
            &reports,
            "-o",
        ])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "already exists; not overwriting it",
        ));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious");
    mlbench()
        .args([
            "report",
            "-g",
            "RTX",
            "-f",
            "csv",
            "--force",
            "--targets",
            &targets,
            "-r",
            &reports,
            "-o",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout("");
    let csv = std::fs::read_to_string(&out).unwrap();
    assert!(
        csv.starts_with("bench,n,target,result,sd,sd_pct,diff,fixed_half_width,fixed_runs_needed,anytime_half_width,anytime_runs_needed\natari,4,5.5,"),
        "{csv}"
    );
}

#[test]
fn unknown_gpu_model_without_targets_is_exit_2() {
    let (_dir, reports, _) = submission(4, 1);
    mlbench()
        .args(["report", "-g", "H100", "-r", &reports])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no built-in classic targets for GPU model `H100`",
        ));
}

/// The table printed for the fixture submission, run from its folder so the
/// snapshot holds no temporary paths.
fn fixture_table(extra: &[&str]) -> String {
    let (dir, _, _) = submission(4, 2);
    let out = mlbench()
        .current_dir(dir.path())
        .args([
            "report",
            "-g",
            "RTX",
            "--targets",
            "targets.csv",
            "-r",
            "sub",
        ])
        .args(extra)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn table_output_snapshot() {
    insta::assert_snapshot!("classic_table", fixture_table(&[]));
}

#[test]
fn score_table_snapshot() {
    insta::assert_snapshot!("score_table", fixture_table(&["--scoring", "score"]));
}

#[test]
fn a_bench_run_with_another_configuration_is_set_aside_and_named() {
    let (dir, reports, targets) = submission(4, 2);
    // Run 2, GPU 1: convnet with another batch size and an absurd throughput.
    let mut entries: Vec<_> = crate::fixtures::BENCHES
        .iter()
        .map(|(b, v)| crate::fixtures::entry(b, *v, 1, 2))
        .collect();
    entries[1].fields.insert("batch_size", 128i64);
    entries[1].fields.insert("train_item", {
        let mut item = mlbench_schema::Object::new();
        item.insert("avg", 1e6);
        mlbench_schema::Value::Object(item)
    });
    std::fs::write(
        dir.path().join("sub/output2/fast_1.json"),
        mlbench_schema::writer::stream_text(&entries),
    )
    .unwrap();
    let v = json_of(mlbench()
        .args(["report", "-g", "RTX", "-f", "json", "--scoring", "score", "--targets", &targets, "-r", &reports])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "conflict: convnet: 1 entry set aside, their configuration differs from the 7 kept (batch_size: 64 here, 128 there); a batch-size sweep: `mlbench report --by batch_size` shows each; e.g. output2/fast_1.json#1",
        )));
    assert_eq!(v["benches"][1]["bench"], "convnet");
    assert_eq!(v["benches"][1]["n"], 7);
    assert!(v["benches"][1]["mean"].as_f64().unwrap() < 200.0);
    assert_eq!(v["conflicts"][0]["differences"][0]["field"], "batch_size");
}

#[test]
fn per_test_files_with_failure_stubs() {
    // E3 layout: one object per file, runs from R<run>, a FAIL stub with name null.
    let dir = tempfile::tempdir().unwrap();
    for run in 0..4 {
        for gpu in 0..2u32 {
            let mut e =
                crate::fixtures::entry("vae", 7600.0 + f64::from(gpu) + run as f64, gpu, run);
            e.fields.insert("completed", true);
            let name = format!("fast.vae.R{run}.D{gpu}.20200106-16000{run}-00000{gpu}.json");
            std::fs::write(
                dir.path().join(name),
                mlbench_schema::writer::per_test_text(&e),
            )
            .unwrap();
        }
    }
    std::fs::write(
        dir.path().join("fast.None.R3.D1.FAIL.20200106-170000-000000.json"),
        "{\n    \"completed\": false,\n    \"name\": null,\n    \"run_id\": 3,\n    \"suite\": \"fast\",\n    \"vcd\": \"1\"\n}\n",
    )
    .unwrap();
    let v = json_of(
        mlbench()
            .args([
                "report",
                "-g",
                "X",
                "-f",
                "json",
                "--scoring",
                "score",
                "--targets",
            ])
            .arg({
                let t = dir.path().join("t.csv");
                std::fs::write(
                    &t,
                    "bench,target,perf_target,sd_target\nvae,7600,0.5,0.05\n",
                )
                .unwrap();
                t
            })
            .arg("-r")
            .arg(dir.path())
            .assert()
            .success()
            .stderr(predicate::str::contains(
                "read 9 files of suite `fast` (per-test files): 4 runs, 2 GPUs, 9 entries",
            )),
    );
    assert_eq!(v["benches"][0]["n"], 8);
    assert_eq!(v["statistics"]["failures"], 1);
    assert_eq!(v["statistics"]["total"], 9);
    assert_eq!(v["statistics"]["bf"], 0);
    assert_eq!(v["failures"][0]["reason"], "failed");
    assert!(v["failures"][0]["bench"].is_null());
}

/// `mlbench report --scoring score` equals an independent restatement of the suite's
/// last tool (tests/oracle/head_report.py) on the shipped example, with two NaN losses
/// in a row added (the original tool would have missed the second).
#[test]
fn score_equals_the_head_tool_oracle() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("python3 not found: oracle comparison skipped");
        return;
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    for run in 0..5 {
        let from = root.join(format!("submissions/example/output{run}"));
        std::fs::create_dir_all(sub.join(format!("output{run}"))).unwrap();
        for gpu in 0..2 {
            let name = format!("fast_{gpu}.json");
            let mut text = std::fs::read_to_string(from.join(&name)).unwrap();
            if run == 3 && gpu == 1 {
                // Two consecutive entries (vae, loader) get a NaN loss.
                for bench in ["\"name\": \"vae\"", "\"name\": \"loader\""] {
                    let at = text.find(bench).unwrap();
                    let start = text[..at].rfind("\"batch_loss\": [").unwrap() + 15;
                    text.insert_str(start, "\n        NaN,");
                }
            }
            std::fs::write(sub.join(format!("output{run}")).join(name), text).unwrap();
        }
    }
    // The RTX targets without `scaling`, which the example lacks (the HEAD tool would
    // not count a bench it has no result for; mlbench counts it as failed).
    let reference = root.join("tests/data/mila-training/report/target_rtx.csv");
    let csv: String = std::fs::read_to_string(reference)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("scaling"))
        .map(|l| format!("{l}\n"))
        .collect();
    let targets = dir.path().join("t.csv");
    std::fs::write(&targets, csv).unwrap();

    let oracle = std::process::Command::new("python3")
        .arg(root.join("tests/oracle/head_report.py"))
        .args([&sub, std::path::Path::new("fast"), &targets])
        .output()
        .unwrap();
    assert!(
        oracle.status.success(),
        "{}",
        String::from_utf8_lossy(&oracle.stderr)
    );
    let expected: serde_json::Value = serde_json::from_slice(&oracle.stdout).unwrap();
    let actual = json_of(
        mlbench()
            .args([
                "report",
                "-g",
                "RTX",
                "-f",
                "json",
                "--scoring",
                "score",
                "--targets",
            ])
            .arg(&targets)
            .arg("-r")
            .arg(&sub)
            .assert()
            .success(),
    );
    assert_eq!(actual["statistics"]["failures"], 2);
    crate::fixtures::assert_score_equals_oracle(&actual, &expected);
}

/// A packed submission is read in place: the same report as its folder, to the byte.
#[test]
fn a_zip_gives_the_report_of_its_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let example = crate::fixtures::example_dir();
    let zip = tmp.path().join("example.zip");
    mlbench()
        .arg("pack")
        .arg(&example)
        .arg("-o")
        .arg(&zip)
        .assert()
        .success();
    for format in ["json", "csv", "table"] {
        let report = |path: &std::path::Path| {
            let out = mlbench()
                .arg("report")
                .arg("--reports")
                .arg(path)
                .args(["--name", "fast", "--gpu-model", "RTX", "--scoring", "score"])
                .args(["--format", format])
                .output()
                .unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        };
        // The same report, but for the name each submission was given as (its
        // validation's `submission`).
        let from_zip = report(&zip).replace(&zip.display().to_string(), "SUB");
        assert!(!from_zip.is_empty());
        let from_folder = report(&example).replace(&example.display().to_string(), "SUB");
        assert_eq!(from_zip, from_folder, "{format}");
    }
}

#[test]
fn a_zip_is_read_alone_and_a_broken_one_is_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("sub.zip");
    mlbench()
        .arg("pack")
        .arg(crate::fixtures::example_dir())
        .arg("-o")
        .arg(&zip)
        .assert()
        .success();
    mlbench()
        .arg("report")
        .arg("--reports")
        .arg(&zip)
        .arg(crate::fixtures::example_dir())
        .args(["--gpu-model", "RTX"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "a zipped submission is read alone",
        ));
    let broken = tmp.path().join("broken.zip");
    std::fs::write(&broken, b"PK\x03\x04 not really a zip").unwrap();
    mlbench()
        .arg("report")
        .arg("--reports")
        .arg(&broken)
        .args(["--gpu-model", "RTX"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("broken.zip"));
}

/// The fixture submission (4 runs × 2 GPUs) with telemetry beside it
/// ([`crate::energy_fixture`]), and the report's JSON of it.
fn energy_report(extra: &[&str]) -> (tempfile::TempDir, serde_json::Value) {
    let (dir, reports, targets) = submission(4, 2);
    crate::energy_fixture::write_telemetry(&dir.path().join("sub"), 4, 2, 1.0);
    let out = mlbench()
        .args([
            "report",
            &reports,
            "-g",
            "RTX",
            "--targets",
            &targets,
            "-f",
            "json",
        ])
        .args(extra)
        .assert()
        .success();
    (dir, json_of(out))
}

fn bench_energy<'a>(json: &'a serde_json::Value, bench: &str) -> &'a serde_json::Value {
    json["energy"]["benches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["bench"] == bench)
        .unwrap()
}

fn near(v: &serde_json::Value, want: f64, tolerance: f64) {
    let got = v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"));
    assert!(
        (got - want).abs() <= tolerance * want.abs(),
        "{got} != {want}"
    );
}

/// The GPU powers of the fixture's 8 copies (run r, GPU g: 200 + 10r + 10g W).
fn fixture_watts() -> Vec<f64> {
    (0..4)
        .flat_map(|r| (0..2).map(move |g| crate::energy_fixture::gpu_watts(r, g)))
        .collect()
}

#[test]
fn energy_per_bench_equals_the_hand_computation() {
    let (_dir, json) = energy_report(&[]);
    let watts = fixture_watts();
    let mean = |f: &dyn Fn(f64) -> f64| watts.iter().map(|&w| f(w)).sum::<f64>() / 8.0;
    // convnet: 10 s at W on the GPU, 1600 items: W/160 J per item; 50 W idle.
    let convnet = bench_energy(&json, "convnet");
    assert_eq!(
        (convnet["n"].as_u64(), convnet["runs"].as_u64()),
        (Some(8), Some(4))
    );
    assert_eq!(convnet["method"], "power");
    near(&convnet["joules_per_item"]["mean"], 220.0 / 160.0, 1e-9);
    near(&convnet["net_joules_per_item"]["mean"], 170.0 / 160.0, 1e-9);
    near(
        &convnet["items_per_joule"]["mean"],
        mean(&|w| 160.0 / w),
        1e-9,
    );
    near(&convnet["mean_power_w"], 220.0, 1e-9);
    // 101 samples of each copy pooled: the 0.95 quantile falls among the 240 W ones.
    near(&convnet["p95_power_w"], 240.0, 1e-9);
    near(&convnet["utilisation"], 0.9, 1e-9);
    let [lo, hi] = [0, 1].map(|i| convnet["joules_per_item"]["ci"][i].as_f64().unwrap());
    assert!(lo < 220.0 / 160.0 && 220.0 / 160.0 < hi && lo >= 200.0 / 160.0 && hi <= 240.0 / 160.0);
    // vae: 1 s at W, plus half of a 40 W package both copies read.
    let vae = bench_energy(&json, "vae");
    assert_eq!(vae["method"], "mixed");
    near(&vae["joules_per_item"]["mean"], 240.0 / 1600.0, 1e-6);
    near(
        &vae["items_per_joule"]["mean"],
        mean(&|w| 1600.0 / (w + 20.0)),
        1e-6,
    );
    near(&vae["p95_power_w"], 260.0, 1e-6);
    // The package has no idle baseline: no net figure for the bench.
    assert!(vae["net_joules_per_item"].is_null());
    let flags: Vec<(&str, u64)> = vae["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["flag"].as_str().unwrap(), f["copies"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        flags,
        [
            ("whole_board", 8),
            ("too_few_samples", 8),
            ("counter_wrapped", 8),
            ("no_idle_baseline", 8),
            ("shared_device", 8)
        ]
    );
    // atari has no telemetry: no energy row.
    let benches = json["energy"]["benches"].as_array().unwrap();
    assert_eq!(benches.len(), 2);
    let copies = json["energy"]["copies"].as_array().unwrap();
    assert_eq!(copies.len(), 16);
    assert_eq!(copies[0]["telemetry"], "output0/telemetry/convnet.0.jsonl");
    assert_eq!(copies[0]["report"], "output0/fast_0.json");
    near(&copies[0]["joules"], 2000.0, 1e-9);
    near(&copies[0]["items"], 1600.0, 1e-12);
}

/// The report's JSON of `sub` (a folder or a zip), with `targets`.
fn report_json(sub: &std::path::Path, targets: &str) -> serde_json::Value {
    let out = mlbench()
        .arg("report")
        .arg(sub)
        .args(["-g", "RTX", "--targets", targets, "-f", "json"])
        .assert()
        .success();
    json_of(out)
}

#[test]
fn a_zipped_submission_has_its_folders_energy_field_for_field() {
    let (dir, reports, targets) = submission(4, 2);
    crate::energy_fixture::write_telemetry(&dir.path().join("sub"), 4, 2, 1.0);
    let zip = crate::energy_fixture::pack(&dir.path().join("sub"));
    let folder = report_json(std::path::Path::new(&reports), &targets);
    let zipped = report_json(&zip, &targets);
    assert_eq!(zipped["energy"]["benches"].as_array().unwrap().len(), 2);
    assert_eq!(zipped["energy"]["copies"].as_array().unwrap().len(), 16);
    assert_eq!(zipped["energy"], folder["energy"]);
    // And the zip's figures are the hand-worked ones (convnet: 220 W mean over 10 s for
    // 1600 items), not merely the folder's.
    near(
        &bench_energy(&zipped, "convnet")["joules_per_item"]["mean"],
        220.0 / 160.0,
        1e-9,
    );
    let copies = zipped["energy"]["copies"].as_array().unwrap();
    assert_eq!(copies[0]["telemetry"], "output0/telemetry/convnet.0.jsonl");
    assert_eq!(copies[0]["report"], "output0/fast_0.json");
    // Its HTML page has the energy section and the power traces, as the folder's has.
    let page_of = |sub: &std::path::Path, name: &str| {
        let page = dir.path().join(name);
        let out = (mlbench().arg("report").arg(sub))
            .args(["-g", "RTX", "--targets", &targets, "--html"])
            .arg(&page)
            .assert()
            .success();
        let said = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(!said.contains("power traces"), "{said}");
        std::fs::read_to_string(&page).unwrap()
    };
    let html = page_of(&zip, "zip.html");
    assert!(html.contains(">Energy<") && html.contains("1.375"));
    let captions = |html: &str| -> Vec<String> {
        (html.split("<figcaption>Power of ").skip(1))
            .map(|c| c.split('<').next().unwrap().to_owned())
            .collect()
    };
    let folder_captions = captions(&page_of(std::path::Path::new(&reports), "folder.html"));
    assert_eq!(captions(&html), ["convnet in output0", "vae in output0"]);
    assert_eq!(captions(&html), folder_captions);
    // `plot power` draws the zip's traces as the folder's, byte for byte.
    let plot = |sub: &std::path::Path, out: &str| {
        (mlbench().args(["plot", "power"]).arg(sub))
            .args(["--format", "svg", "--out-dir"])
            .arg(dir.path().join(out))
            .assert()
            .success();
        let mut charts: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.path().join(out))
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| {
                (
                    e.file_name().into_string().unwrap(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        charts.sort();
        charts
    };
    let zipped_charts = plot(&zip, "zip-plots");
    assert_eq!(zipped_charts.len(), 8, "convnet and vae in 4 runs");
    assert!(zipped_charts == plot(std::path::Path::new(&reports), "folder-plots"));
}

#[test]
fn without_telemetry_the_report_has_no_energy_key() {
    let (_dir, reports, targets) = submission(4, 2);
    let out = mlbench()
        .args([
            "report",
            &reports,
            "-g",
            "RTX",
            "--targets",
            &targets,
            "-f",
            "json",
        ])
        .assert()
        .success();
    assert!(json_of(out).get("energy").is_none());
}

/// The report's table of the fixture with telemetry, run from its folder.
fn energy_output(format: &str) -> String {
    let (dir, _, _) = submission(4, 2);
    crate::energy_fixture::write_telemetry(&dir.path().join("sub"), 4, 2, 1.0);
    let out = mlbench()
        .current_dir(dir.path())
        .args([
            "report",
            "-g",
            "RTX",
            "--targets",
            "targets.csv",
            "sub",
            "-f",
            format,
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn energy_table_snapshot() {
    insta::assert_snapshot!("energy_table", energy_output("table"));
}

#[test]
fn energy_markdown_snapshot() {
    insta::assert_snapshot!("energy_markdown", energy_output("markdown"));
}

#[test]
fn energy_columns_follow_each_bench_in_the_csv() {
    let csv = energy_output("csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let row = |bench: &str| rows.iter().find(|r| r[0] == bench).unwrap();
    let jpi: f64 = row("convnet")[at("joules_per_item")].parse().unwrap();
    assert!((jpi - 220.0 / 160.0).abs() < 1e-9);
    assert_eq!(row("convnet")[at("energy_method")], "power");
    assert_eq!(row("convnet")[at("energy_copies")], "8");
    // atari has no telemetry: its energy cells are empty.
    assert_eq!(row("atari")[at("joules_per_item")], "");
    assert_eq!(row("atari")[at("energy_flags")], "");
}

#[test]
fn the_html_page_has_an_energy_section() {
    let (dir, reports, targets) = submission(4, 2);
    crate::energy_fixture::write_telemetry(&dir.path().join("sub"), 4, 2, 1.0);
    let page = dir.path().join("report.html");
    mlbench()
        .args([
            "report",
            &reports,
            "-g",
            "RTX",
            "--targets",
            &targets,
            "--html",
        ])
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(">Energy<"), "no Energy section");
    assert!(html.contains("J/item") && html.contains("items/J") && html.contains("p95 W"));
    assert!(html.contains("1.375"), "convnet's J/item is on the page");
    // One power trace per bench with telemetry, its first run folder's (vae's file of
    // copy 1 is drawn on the same chart as copy 0's).
    assert!(html.contains(">Power<"), "no Power section");
    let caption = |s: &str| html.matches(&format!("<figcaption>Power of {s}<")).count();
    assert_eq!(caption("convnet in output0"), 1);
    assert_eq!(caption("vae in output0"), 1);
    assert!(!html.contains("Power of convnet in output1"));
    assert!(!html.contains("Power of atari"), "atari has no telemetry");
}

#[test]
fn the_html_page_has_no_power_section_without_telemetry() {
    let (dir, reports, targets) = submission(4, 2);
    let page = dir.path().join("report.html");
    let args = [
        "report",
        &reports,
        "-g",
        "RTX",
        "--targets",
        &targets,
        "--html",
    ];
    mlbench().args(args).arg(&page).assert().success();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains(">Power<") && !html.contains(">Energy<"));
}
