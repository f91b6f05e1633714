//! `report`'s "how many runs" section (docs/scoring.md) against figures worked by hand.

use crate::fixtures::{f, mlbench, write_samples};

/// convnet: two GPUs ±1 around the run means 100, 102, 98, 101, 99; vae: 50 everywhere,
/// with no entry in the fifth run.
fn submission() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let convnet = vec![
        vec![99.0, 101.0, 97.0, 100.0, 98.0],
        vec![101.0, 103.0, 99.0, 102.0, 100.0],
    ];
    let vae = vec![vec![50.0; 4], vec![50.0; 4]];
    write_samples(tmp.path(), &[("convnet", convnet), ("vae", vae)]);
    tmp
}

fn precision_json(dir: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    let out = mlbench()
        .arg("report")
        .arg(dir)
        .args(["-g", "RTX", "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["precision"].clone()
}

fn bench<'a>(p: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    p["benches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["bench"] == name)
        .unwrap_or_else(|| panic!("no {name} in {p}"))
}

#[test]
fn both_intervals_and_runs_needed_per_bench() {
    let tmp = submission();
    let p = precision_json(tmp.path(), &[]);
    assert_eq!((f(&p["precision"]), f(&p["level"])), (0.01, 0.95));
    assert_eq!(
        (p["method"].as_str(), f(&p["expected_cv"])),
        (Some("lai-t-mixture"), 0.02)
    );
    assert!(f(&p["mixture"]) > 0.0 && p["planned_runs"].as_u64().unwrap() >= 3);

    let convnet = bench(&p, "convnet");
    assert_eq!(
        (
            convnet["runs"].as_u64(),
            convnet["runs_without_value"].as_u64()
        ),
        (Some(5), Some(0))
    );
    // The geometric mean of the run means, and their logs' sd (Python's
    // statistics.stdev of the logs: 0.0158135).
    let geo = [100.0f64, 102.0, 98.0, 101.0, 99.0]
        .iter()
        .map(|v| v.ln())
        .sum::<f64>()
        / 5.0;
    assert!((f(&convnet["mean"]) - geo.exp()).abs() < 1e-9);
    assert!((f(&convnet["sd_log"]) - 0.015_813_457).abs() < 1e-8);
    // Runs needed for ±1 % with a fixed n: t(.975, n−1)·0.0158135/√n ≤ ln 1.01 first at
    // n = 13 (t tables: 0.0100474 at 12, 0.0095560 at 13).
    assert_eq!(convnet["fixed"]["runs_needed"].as_u64(), Some(13));
    let anytime_needed = convnet["anytime"]["runs_needed"].as_u64().unwrap();
    assert!(
        anytime_needed > 13,
        "the anytime interval needs more runs: {anytime_needed}"
    );
    let [lo, hi] = [0, 1].map(|i| f(&convnet["fixed"]["ci"][i]));
    assert!(98.0 <= lo && lo < geo.exp() && geo.exp() < hi && hi <= 102.0);
    assert_eq!(convnet["fixed"]["reached"], false);

    // Equal runs: an interval of exactly their value, no NaN; the fifth run counted.
    let vae = bench(&p, "vae");
    assert_eq!(
        (vae["runs"].as_u64(), vae["runs_without_value"].as_u64()),
        (Some(4), Some(1))
    );
    assert_eq!(f(&vae["mean"]), 50.0);
    assert_eq!(
        (f(&vae["fixed"]["ci"][0]), f(&vae["fixed"]["ci"][1])),
        (50.0, 50.0)
    );
    assert_eq!(
        (
            f(&vae["fixed"]["half_width"]),
            vae["fixed"]["reached"].as_bool()
        ),
        (0.0, Some(true))
    );
    assert_eq!(vae["fixed"]["runs_needed"].as_u64(), Some(2));

    // Overall: the worst bench.
    assert_eq!(p["overall"]["fixed_runs_needed"].as_u64(), Some(13));
    assert_eq!(
        p["overall"]["anytime_runs_needed"].as_u64(),
        Some(anytime_needed)
    );
    assert_eq!(p["overall"]["fixed_reached"], false);
    assert_eq!(p["overall"]["runs"].as_u64(), Some(5));
}

#[test]
fn precision_and_expected_cv_are_flags() {
    let tmp = submission();
    // ±2 %: t(.975, 3)·0.0158135/2 = 0.025163 > ln 1.02 = 0.0198026 at 4 runs;
    // t(.975, 4)·0.0158135/√5 = 0.019635 at 5.
    let p = precision_json(tmp.path(), &["--precision", "2%"]);
    assert_eq!(f(&p["precision"]), 0.02);
    assert_eq!(
        bench(&p, "convnet")["fixed"]["runs_needed"].as_u64(),
        Some(5)
    );
    // A design for more spread plans more runs; the constant is stated, not fitted.
    let wide = precision_json(tmp.path(), &["--expected-cv", "0.05"]);
    let base = precision_json(tmp.path(), &[]);
    assert!(wide["planned_runs"].as_u64() > base["planned_runs"].as_u64());
    assert_ne!(wide["mixture"], base["mixture"]);
    for bad in ["0", "150%", "x"] {
        mlbench()
            .arg("report")
            .arg(tmp.path())
            .args(["-g", "RTX", "--precision", bad])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("--precision"));
    }
}

/// `report SUB -g RTX EXTRA… -f json`, exit 0 or 1 (a failing verdict is still a report).
fn report_doc(sub: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    let out = mlbench()
        .arg("report")
        .arg(sub)
        .args(["-g", "RTX", "-f", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn ci_brackets_the_result_of_every_bench_of_the_example_and_the_four_vendors() {
    let vendors = crate::vendors::four_vendors();
    let mut subs = vec![crate::fixtures::example_dir()];
    subs.extend(vendors.zips());
    for sub in &subs {
        for (scoring, statistic, result_of) in [
            (
                "classic",
                "mean over runs without the lowest and highest of run means over GPUs",
                "result",
            ),
            ("score", "pooled mean of run × GPU values", "mean"),
        ] {
            let doc = report_doc(sub, &["--ci", "--scoring", scoring]);
            let ci = doc["ci"].as_object().unwrap();
            let benches = doc["benches"].as_array().unwrap();
            assert_eq!(ci.len(), benches.len(), "{}: every bench", sub.display());
            for b in benches {
                let name = b["bench"].as_str().unwrap();
                let c = &ci[name];
                let at = format!("{} {scoring} {name}: {c}", sub.display());
                assert_eq!(c["statistic"], statistic, "{at}");
                // The interval's result is the bench table's figure, and its n.
                assert_eq!(c["result"], b[result_of], "{at}");
                assert_eq!(c["n"], b["n"], "{at}");
                if b[result_of].is_null() {
                    assert!(c["ci"].is_null() && c["why"].is_string(), "{at}");
                    continue;
                }
                let r = f(&c["result"]);
                let (lo, hi) = (f(&c["ci"][0]), f(&c["ci"][1]));
                assert!(lo <= r && r <= hi && lo < hi, "{at}");
                assert!(c.get("why").is_none(), "{at}");
            }
        }
        // Score's intervals keep the pooled mean's bootstrap: the precision section is
        // labelled as the other centre.
        let doc = report_doc(sub, &[]);
        assert_eq!(
            doc["precision"]["statistic"],
            "geometric mean of run means (each run's mean over its GPUs; intervals on log throughput)"
        );
    }
    // Vendor C has no ssd: no result, and the reason in place.
    let c = report_doc(&vendors.zip('C'), &["--ci"]);
    assert_eq!(c["ci"]["ssd"]["ci"], serde_json::Value::Null);
    assert_eq!(c["ci"]["ssd"]["why"], "no run with a value: no result");
}

#[test]
fn every_unbounded_interval_says_why_in_the_table_and_the_json() {
    // Five runs: at ±1 %, 95 % and c = 4.5687 the sequence's K = (t + c)(1 − (α²c/(t +
    // c))^(1/t)) is 7.0785 ≥ 5 at t = 5 and first below t at t = 8 (7.3315; 7.2642 at
    // t = 7): unbounded, bounded from 8 runs whatever the values.
    let tmp = submission();
    let p = precision_json(tmp.path(), &[]);
    for b in p["benches"].as_array().unwrap() {
        // The benches of the targets the submission lacks have no run at all.
        let runs = b["runs"].as_u64().unwrap();
        let why = match runs {
            0 => "no run with a value".to_string(),
            _ => format!("{runs} runs; bounded from 8 at 95%"),
        };
        assert!(b["anytime"]["ci"].is_null(), "{b}");
        assert_eq!(b["anytime"]["why"], why.as_str(), "{b}");
        if runs == 0 {
            assert_eq!(b["fixed"]["why"], "no run with a value", "{b}");
            assert_eq!(
                b["fixed"]["runs_needed_why"],
                "no run with a value: needs 2 runs to measure a spread",
                "{b}"
            );
        } else {
            assert!(b["fixed"].get("why").is_none(), "{b}");
        }
    }
    assert_eq!(
        bench(&p, "convnet")["anytime"]["why"],
        "5 runs; bounded from 8 at 95%"
    );
    let out = mlbench()
        .arg("report")
        .arg(tmp.path())
        .args(["-g", "RTX"])
        .output()
        .unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = table.lines().filter(|l| l.contains("unbounded")).collect();
    assert!(!rows.is_empty(), "{table}");
    for row in rows {
        assert!(
            row.contains("unbounded (5 runs; bounded from 8 at 95%)")
                || row.contains("unbounded (4 runs; bounded from 8 at 95%)")
                || row.contains("unbounded (no run with a value)"),
            "{row}"
        );
    }
    assert!(table.contains("geometric mean of run means"), "{table}");
}
