//! `mlbench grid`: vendors' submissions whose every throughput is chosen here, so that
//! each mean, ratio, overall figure, penalty and attribution term is worked out by hand
//! from the formulas of docs/scoring.md ("The grid"), and the JSON is held to
//! docs/grid-json.md.
//!
//! The vendors (2 GPUs × 4 runs, samples `mean·(1 + d)` with `d` summing to zero, so the
//! pooled mean is the mean written):
//!
//! | vendor | atari | vae | ratios to A     | overall                        |
//! |--------|-------|-----|-----------------|--------------------------------|
//! | A      | 10    | 100 | 1, 1            | 1                              |
//! | B      | 12    | 90  | 1.2, 0.9        | √(1.2·0.9) = √1.08 = 1.03923   |
//! | C      | 8     | 150 | 0.8, 1.5        | √(0.8·1.5) = √1.2 = 1.09545    |
//! | D      | 15    | —   | 1.5, missing    | 1.5 · ½ = 0.75                 |

use crate::fixtures::{
    Ordered, SPREAD, close, count, f, folder_files, html_rows, mlbench, names_in, read_text,
    sha256_hex, spread, write_samples, write_vendor, write_zip,
};
use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

const A: &[(&str, f64)] = &[("atari", 10.0), ("vae", 100.0)];
const B: &[(&str, f64)] = &[("atari", 12.0), ("vae", 90.0)];
const C: &[(&str, f64)] = &[("atari", 8.0), ("vae", 150.0)];
const D: &[(&str, f64)] = &[("atari", 15.0)];

/// Vendors' folders in a temporary folder, each named after its vendor.
struct Vendors(TempDir);

impl Vendors {
    fn new(vendors: &[(&str, &[(&str, f64)])]) -> Vendors {
        let tmp = tempfile::tempdir().unwrap();
        for (name, means) in vendors {
            write_vendor(&tmp.path().join(name), means);
        }
        Vendors(tmp)
    }

    /// The usual three: A, B, C.
    fn abc() -> Vendors {
        Vendors::new(&[("A", A), ("B", B), ("C", C)])
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }

    fn paths(&self, names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(|n| self.path(n)).collect()
    }
}

/// `mlbench grid SUBS… --include-failing EXTRA…`. The submissions here are made by code
/// and fail validation (their ids are zeros); these tests are about the figures and the
/// tiers, so every row is tiered (the organizer's tests check that failing rows are not,
/// by default).
fn grid(subs: &[PathBuf], extra: &[&str]) -> assert_cmd::assert::Assert {
    (mlbench().arg("grid").args(subs))
        .arg("--include-failing")
        .args(extra)
        .assert()
}

/// The text a successful `mlbench grid … --format json` printed.
fn json_text(subs: &[PathBuf], extra: &[&str]) -> String {
    let out = grid(subs, &[extra, &["--format", "json"]].concat())
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

fn grid_json(subs: &[PathBuf], extra: &[&str]) -> Value {
    serde_json::from_str(&json_text(subs, extra)).unwrap()
}

/// The row of `id` in `vendors`.
fn row<'a>(json: &'a Value, id: &str) -> &'a Value {
    json["vendors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["id"] == id)
        .unwrap_or_else(|| panic!("no row {id}: {json:#}"))
}

fn ids(json: &Value) -> Vec<&str> {
    json["vendors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_str().unwrap())
        .collect()
}

#[track_caller]
fn assert_close(got: &Value, want: f64, what: &str) {
    assert!(close(f(got), want), "{what}: got {got}, expected {want}");
}

/// `[lo, hi]` of an interval, asserting lo ≤ hi.
fn interval(v: &Value) -> (f64, f64) {
    let (lo, hi) = (f(&v[0]), f(&v[1]));
    assert!(lo <= hi, "{v}");
    (lo, hi)
}

/// Every sample of a vendor of `write_vendor` lies within ±2 % of its mean, so every
/// resampled mean does too, and a resampled ratio of two vendors lies within
/// [0.98/1.02, 1.02/0.98] times the ratio of the means; the baseline's own interval
/// within [0.98, 1.02]. The intervals must lie inside those bounds, around the point.
#[track_caller]
fn assert_plausible_interval(ci: &Value, ratio: f64, baseline_row: bool) {
    let (lo, hi) = interval(ci);
    let (min, max) = if baseline_row {
        (0.98, 1.02)
    } else {
        (0.98 / 1.02, 1.02 / 0.98)
    };
    assert!(
        lo >= ratio * min - 1e-12 && hi <= ratio * max + 1e-12,
        "{ci} outside the bounds of {ratio}"
    );
    assert!(lo <= ratio && ratio <= hi, "{ci} does not hold {ratio}");
}

#[test]
fn ratios_and_overall_figures_equal_the_hand_computation() {
    let v = Vendors::abc();
    let json = grid_json(&v.paths(&["A", "B", "C"]), &[]);
    assert_eq!(json["baseline"], "A");
    assert_eq!(json["benches"], serde_json::json!(["atari", "vae"]));
    assert_eq!(
        json["weights"],
        serde_json::json!({"atari": 1.0, "vae": 1.0})
    );
    assert_eq!(json["unnormalized"], serde_json::json!([]));
    assert_eq!(json["explain"], Value::Null);
    assert_eq!(json["resamples"], 2000);
    assert_eq!(json["seed"], 2019);
    assert_eq!(json["level"], 0.95);
    // By overall descending: C (1.0954), B (1.0392), A (1).
    assert_eq!(ids(&json), ["C", "B", "A"]);

    // (row, its means, its ratios to A by hand).
    type Expected<'a> = (&'a str, &'a [(&'a str, f64)], [f64; 2]);
    let expected: [Expected; 3] = [
        ("A", A, [1.0, 1.0]),
        ("B", B, [1.2, 0.9]),
        ("C", C, [0.8, 1.5]),
    ];
    for (id, means, ratios) in expected {
        let r = row(&json, id);
        assert_eq!(r["name"], id);
        assert_eq!(r["track"], "baseline");
        // Overall = weighted geometric mean (equal weights) × share present (1).
        let overall = (ratios[0] * ratios[1]).sqrt();
        assert_close(&r["overall"], overall, id);
        assert_close(&r["geomean"], overall, id);
        assert_eq!(r["weight_share"], 1.0);
        assert_eq!(r["present"], 2);
        assert_eq!(r["missing"], serde_json::json!([]));
        assert_eq!(r["tier"].as_u64().map(|t| t >= 1), Some(true), "{r}");
        let (lo, hi) = interval(&r["ci"]);
        assert!(lo <= overall && overall <= hi, "{id}: {lo}–{hi}");
        for ((bench, mean), ratio) in means.iter().zip(ratios) {
            let c = &r["cells"][bench];
            assert_eq!(c["n"], 8, "{id} {bench}");
            assert_eq!(c["gpus"], 2, "{id} {bench}");
            assert_eq!(c["missing"], false);
            assert_eq!(c["unnormalized"], false);
            // The mean of the 8 samples written, computed here from them.
            let samples: Vec<f64> = spread(*mean).into_iter().flatten().collect();
            let hand = samples.iter().sum::<f64>() / samples.len() as f64;
            assert_close(&c["mean"], hand, &format!("{id} {bench} mean"));
            assert_close(&c["mean"], *mean, &format!("{id} {bench} mean"));
            assert_close(&c["ratio"], ratio, &format!("{id} {bench} ratio"));
            assert_plausible_interval(&c["ci"], ratio, id == "A");
        }
    }
    // The baseline's ratio is exactly 1, not merely close.
    assert_eq!(row(&json, "A")["cells"]["atari"]["ratio"], 1.0);
    assert_eq!(row(&json, "A")["overall"], 1.0);
}

#[test]
fn json_fields_appear_in_the_documented_order() {
    let v = Vendors::new(&[("A", A), ("B", B), ("D", D)]);
    let text = json_text(&v.paths(&["A", "B", "D"]), &["--explain", "B,D"]);
    let doc = Ordered::parse(&text);
    assert_eq!(
        doc.keys(),
        [
            "schema_version",
            "baseline",
            "benches",
            "weights",
            "unnormalized",
            "vendors",
            "tiers",
            "explain",
            "resamples",
            "seed",
            "level",
            "notes"
        ]
    );
    let vendor = doc.get("vendors").at(0);
    assert_eq!(
        vendor.keys(),
        [
            "name",
            "track",
            "id",
            "overall",
            "ci",
            "tier",
            "ratio_to_next",
            "ratio_to_next_ci",
            "p_above_next",
            "geomean",
            "weight_share",
            "present",
            "missing",
            "cells",
            "runtime",
            "mixed_runtime",
            "hardware",
            "validity"
        ]
    );
    // Cells in bench order, each with its fields in order (a missing one too).
    let cell_keys = [
        "ratio",
        "ci",
        "n",
        "gpus",
        "mean",
        "missing",
        "unnormalized",
        "mixed_runtime",
    ];
    for i in 0..3 {
        let cells = doc.get("vendors").at(i).get("cells");
        assert_eq!(cells.keys(), ["atari", "vae"]);
        for bench in ["atari", "vae"] {
            assert_eq!(cells.get(bench).keys(), cell_keys);
        }
    }
    let explain = doc.get("explain");
    assert_eq!(
        explain.keys(),
        [
            "a",
            "b",
            "overall_a",
            "overall_b",
            "ratio",
            "ratio_ci",
            "gap",
            "terms",
            "penalty"
        ]
    );
    assert_eq!(
        explain.get("terms").at(0).keys(),
        ["bench", "weight", "log_ratio_a", "log_ratio_b", "term"]
    );
    // `tiers` lists every row id once, tier by tier, in the order of `vendors`.
    let json: Value = serde_json::from_str(&text).unwrap();
    let tiered: Vec<&str> = json["tiers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t.as_array().unwrap().iter().map(|id| id.as_str().unwrap()))
        .collect();
    assert_eq!(tiered, ids(&json));
    for (i, tier) in json["tiers"].as_array().unwrap().iter().enumerate() {
        for id in tier.as_array().unwrap() {
            assert_eq!(row(&json, id.as_str().unwrap())["tier"], i + 1);
        }
    }
}

#[test]
fn baseline_is_the_first_submission_unless_chosen() {
    let v = Vendors::abc();
    // No --baseline: the first given, here B.
    let json = grid_json(&v.paths(&["B", "A", "C"]), &[]);
    assert_eq!(json["baseline"], "B");
    // Relative to B: A is 10/12 and 100/90, C is 8/12 and 150/90.
    let a = row(&json, "A");
    assert_close(&a["cells"]["atari"]["ratio"], 10.0 / 12.0, "A atari");
    assert_close(&a["cells"]["vae"]["ratio"], 100.0 / 90.0, "A vae");
    assert_close(&a["overall"], (1.0 / 1.08f64).sqrt(), "A overall");
    let c = row(&json, "C");
    assert_close(&c["cells"]["atari"]["ratio"], 8.0 / 12.0, "C atari");
    assert_close(&c["cells"]["vae"]["ratio"], 150.0 / 90.0, "C vae");
    assert_close(&c["overall"], (1.2f64 / 1.08).sqrt(), "C overall");
    assert_eq!(row(&json, "B")["overall"], 1.0);
    assert_eq!(ids(&json), ["C", "B", "A"]);

    // --baseline C, the submissions in another order.
    let json = grid_json(&v.paths(&["A", "B", "C"]), &["--baseline", "C"]);
    assert_eq!(json["baseline"], "C");
    assert_close(&row(&json, "A")["overall"], (1.0 / 1.2f64).sqrt(), "A / C");
    assert_close(&row(&json, "B")["overall"], (1.08f64 / 1.2).sqrt(), "B / C");
    assert_close(
        &row(&json, "B")["cells"]["atari"]["ratio"],
        12.0 / 8.0,
        "B atari / C",
    );

    // The baseline named by its path, as given on the command line: the same grid as by
    // its label.
    let paths = v.paths(&["A", "B", "C"]);
    let by_path = grid_json(&paths, &["--baseline", paths[2].to_str().unwrap()]);
    assert_eq!(by_path, json);

    // A baseline that is none of them is a usage error naming the ones there are.
    grid(&v.paths(&["A", "B"]), &["--baseline", "Z"])
        .code(2)
        .stderr(
            predicate::str::contains("baseline `Z` is none of the submissions")
                .and(predicate::str::contains("`A`").and(predicate::str::contains("`B`"))),
        );
}

#[test]
fn weights_from_toml_and_csv_give_the_hand_computed_overall() {
    let v = Vendors::new(&[("A", A), ("B", B), ("D", D)]);
    let subs = v.paths(&["A", "B", "D"]);
    let toml = v.path("weights.toml");
    std::fs::write(&toml, "# atari counts three times\n[weights]\natari = 3\n").unwrap();
    let json = grid_json(&subs, &["--weights", toml.to_str().unwrap()]);
    assert_eq!(
        json["weights"],
        serde_json::json!({"atari": 3.0, "vae": 1.0})
    );
    // B: exp((3·ln 1.2 + 1·ln 0.9) / 4).
    let b = (1.2f64.powi(3) * 0.9).powf(0.25);
    assert_close(&row(&json, "B")["overall"], b, "B, atari ×3");
    assert_close(&row(&json, "B")["geomean"], b, "B geomean");
    // D has atari only: geomean 1.5, share 3/4, overall 1.125 (the example of scoring.md).
    let d = row(&json, "D");
    assert_close(&d["geomean"], 1.5, "D geomean");
    assert_close(&d["weight_share"], 0.75, "D share");
    assert_close(&d["overall"], 1.125, "D overall");

    let csv = v.path("weights.csv");
    std::fs::write(&csv, "bench,weight\nvae,2\n").unwrap();
    let json = grid_json(&subs, &["--weights", csv.to_str().unwrap()]);
    assert_eq!(
        json["weights"],
        serde_json::json!({"atari": 1.0, "vae": 2.0})
    );
    // B: exp((ln 1.2 + 2·ln 0.9) / 3); D: 1.5 × 1/3.
    assert_close(
        &row(&json, "B")["overall"],
        (1.2f64 * 0.81).powf(1.0 / 3.0),
        "B, vae ×2",
    );
    assert_close(&row(&json, "D")["overall"], 0.5, "D, vae ×2");

    // A bench weighed that is not in the grid is said in the notes.
    std::fs::write(&csv, "atari,1\nnot_a_bench,4\n").unwrap();
    let json = grid_json(&subs, &["--weights", csv.to_str().unwrap()]);
    let notes = json["notes"].to_string();
    assert!(notes.contains("not_a_bench"), "{notes}");
}

#[test]
fn a_bad_weights_file_is_exit_2_naming_the_file_and_line() {
    let v = Vendors::abc();
    let subs = v.paths(&["A", "B"]);
    let cases = [
        ("zero.toml", "[weights]\n\natari = 0\n", 3, "atari"),
        ("negative.csv", "bench,weight\natari,1\nvae,-2\n", 3, "vae"),
        ("nan.csv", "vae,nan\n", 1, "vae"),
        ("text.toml", "[weights]\natari = 1\nvae = heavy\n", 3, "vae"),
        ("twice.csv", "atari,1\natari,2\n", 2, "atari"),
    ];
    for (name, text, line, bench) in cases {
        let path = v.path(name);
        std::fs::write(&path, text).unwrap();
        let out = grid(&subs, &["--weights", path.to_str().unwrap()])
            .code(2)
            .stdout("")
            .get_output()
            .stderr
            .clone();
        let stderr = String::from_utf8(out).unwrap();
        let place = format!("{}: line {line}: ", path.display());
        assert!(stderr.contains(&place), "{name}: {stderr}");
        assert!(stderr.contains(&format!("`{bench}`")), "{name}: {stderr}");
    }
    // Neither TOML nor CSV.
    let path = v.path("weights.json");
    std::fs::write(&path, "{}").unwrap();
    grid(&subs, &["--weights", path.to_str().unwrap()])
        .code(2)
        .stderr(predicate::str::contains(path.display().to_string()));
}

#[test]
fn a_missing_bench_is_a_missing_cell_and_costs_its_weight() {
    let v = Vendors::new(&[("A", A), ("B", B), ("D", D)]);
    let json = grid_json(&v.paths(&["A", "B", "D"]), &[]);
    let d = row(&json, "D");
    let vae = &d["cells"]["vae"];
    assert_eq!(vae["missing"], true);
    assert_eq!(vae["ratio"], Value::Null);
    assert_eq!(vae["ci"], Value::Null);
    assert_eq!(vae["mean"], Value::Null);
    assert_eq!(vae["n"], 0);
    assert_eq!(vae["gpus"], 0);
    assert_eq!(vae["unnormalized"], false);
    assert_close(&d["cells"]["atari"]["ratio"], 1.5, "D atari");
    // Overall = geomean of the benches present (1.5) × weight share present (1/2).
    assert_close(&d["geomean"], 1.5, "D geomean");
    assert_eq!(d["weight_share"], 0.5);
    assert_close(&d["overall"], 0.75, "D overall");
    assert_eq!(d["present"], 1);
    assert_eq!(d["missing"], serde_json::json!(["vae"]));
    // The interval is that of the geomean times ½: around 0.75, not 1.5.
    assert_plausible_interval(&d["ci"], 0.75, false);
    // Below A (1) and B (1.039): last.
    assert_eq!(ids(&json), ["B", "A", "D"]);
    let notes = json["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| {
            let n = n.as_str().unwrap();
            n.starts_with("D: 1 of 2 benches missing (vae)") && n.contains("0.5000")
        }),
        "{notes:?}"
    );
    // The table says so too.
    let out = grid(&v.paths(&["A", "B", "D"]), &[])
        .success()
        .get_output()
        .stdout
        .clone();
    let table = String::from_utf8(out).unwrap();
    let line = table.lines().find(|l| l.contains(" D ")).unwrap();
    assert!(
        line.contains("0.750") && line.contains("1/2") && line.contains("vae"),
        "{table}"
    );
    assert!(table.contains("missing"), "{table}");
}

#[test]
fn a_bench_the_baseline_lacks_is_unnormalized_everywhere() {
    // D as the baseline has no vae: vae has no ratio anywhere and weighs nothing.
    let v = Vendors::new(&[("A", A), ("B", B), ("D", D)]);
    let json = grid_json(&v.paths(&["D", "A", "B"]), &[]);
    assert_eq!(json["unnormalized"], serde_json::json!(["vae"]));
    for id in ["A", "B", "D"] {
        let c = &row(&json, id)["cells"]["vae"];
        assert_eq!(c["unnormalized"], true, "{id}");
        assert_eq!(c["ratio"], Value::Null, "{id}");
    }
    // Only atari counts, fully: A = 10/15, B = 12/15, no penalty.
    assert_close(&row(&json, "A")["overall"], 10.0 / 15.0, "A");
    assert_close(&row(&json, "B")["overall"], 12.0 / 15.0, "B");
    assert_eq!(row(&json, "B")["weight_share"], 1.0);
    // The unnormalized bench's mean is still given.
    assert_close(&row(&json, "B")["cells"]["vae"]["mean"], 90.0, "B vae mean");
}

/// Writes `vendor` with entry `entry` of `output<run>/fast_<gpu>.json` failed (a NaN in
/// its batch_loss) and its throughput replaced by `value`.
fn fail_entry(root: &Path, run: usize, gpu: usize, entry: usize, value: f64) {
    use mlbench_schema::Value as V;
    let path = root.join(format!("output{run}/fast_{gpu}.json"));
    crate::fixtures::edit_entry(&path, entry, |o| {
        o.insert("batch_loss", V::from(vec![2.5, f64::NAN, 2.0]));
        crate::fixtures::edit_object(o, "train_item", |item| item.insert("avg", value));
    });
}

#[test]
fn failed_entries_are_not_in_the_means() {
    let v = Vendors::abc();
    // B, run 1, GPU 0: both entries (atari then vae, one after the other) diverged, with
    // absurd throughputs that would show in any mean they entered.
    fail_entry(&v.path("B"), 1, 0, 0, 1000.0);
    fail_entry(&v.path("B"), 1, 0, 1, 1.0e6);
    let text = read_text(&v.path("B/output1/fast_0.json"));
    assert_eq!(count(&text, "NaN"), 2, "{text}");

    let json = grid_json(&v.paths(&["A", "B", "C"]), &[]);
    let b = row(&json, "B");
    // The 7 remaining samples: 12·(1 + d) for every (gpu, run) but (0, 1).
    let mean_without = |mean: f64| {
        let mut kept = Vec::new();
        for (gpu, runs) in SPREAD.iter().enumerate() {
            for (run, d) in runs.iter().enumerate() {
                if (gpu, run) != (0, 1) {
                    kept.push(mean * (1.0 + d));
                }
            }
        }
        kept.iter().sum::<f64>() / kept.len() as f64
    };
    // SPREAD[0][1] is 0, so the 7 others sum to 7·mean: the mean stays 12 and 90.
    let atari = mean_without(12.0);
    let vae = mean_without(90.0);
    assert!(close(atari, 12.0) && close(vae, 90.0));
    for (bench, mean) in [("atari", atari), ("vae", vae)] {
        let c = &b["cells"][bench];
        assert_eq!(c["n"], 7, "{bench}");
        assert_eq!(c["gpus"], 2, "{bench}");
        assert_close(&c["mean"], mean, bench);
        assert_close(
            &c["ratio"],
            mean / if bench == "atari" { 10.0 } else { 100.0 },
            bench,
        );
    }
    assert_close(&b["overall"], 1.08f64.sqrt(), "B overall");
    let notes = json["notes"].to_string();
    assert!(notes.contains("B: 2 failed entries removed"), "{notes}");

    // A failed entry whose removal moves the mean: B run 0, GPU 0 (12·0.98 = 11.76).
    fail_entry(&v.path("B"), 0, 0, 0, 11.76);
    let json = grid_json(&v.paths(&["A", "B", "C"]), &[]);
    // Left: GPU 0 runs 2, 3 (12.24, 12) and GPU 1's four (12.12, 11.88, 12.12, 11.88).
    let left = [12.24, 12.0, 12.12, 11.88, 12.12, 11.88];
    let mean = left.iter().sum::<f64>() / 6.0;
    let c = &row(&json, "B")["cells"]["atari"];
    assert_eq!(c["n"], 6);
    assert_close(&c["mean"], mean, "B atari, 2 failures");
    assert_close(&c["ratio"], mean / 10.0, "B atari ratio");
}

#[test]
fn identical_submissions_share_a_tier_and_a_clearly_faster_one_has_its_own() {
    let twin: Vec<(&str, f64)> = A.iter().map(|(b, m)| (*b, m * 1.000_001)).collect();
    let fast: Vec<(&str, f64)> = A.iter().map(|(b, m)| (*b, m * 2.0)).collect();
    let v = Vendors::new(&[("A", A), ("Twin", &twin), ("Fast", &fast)]);
    let json = grid_json(&v.paths(&["A", "Twin", "Fast"]), &[]);
    assert_close(&row(&json, "Fast")["overall"], 2.0, "Fast");
    assert_close(&row(&json, "Twin")["overall"], 1.000_001, "Twin");
    assert_eq!(ids(&json), ["Fast", "Twin", "A"]);
    assert_eq!(json["tiers"], serde_json::json!([["Fast"], ["Twin", "A"]]));
    assert_eq!(row(&json, "Fast")["tier"], 1);
    assert_eq!(row(&json, "Twin")["tier"], 2);
    assert_eq!(row(&json, "A")["tier"], 2);
    // Why: the twins' intervals overlap, Fast's lies above both.
    let (f_lo, _) = interval(&row(&json, "Fast")["ci"]);
    let (t_lo, t_hi) = interval(&row(&json, "Twin")["ci"]);
    let (a_lo, a_hi) = interval(&row(&json, "A")["ci"]);
    assert!(f_lo > t_hi.max(a_hi));
    assert!(t_lo <= a_hi && a_lo <= t_hi);
}

#[test]
fn explain_splits_the_gap_into_terms_and_penalty() {
    let v = Vendors::new(&[("A", A), ("B", B), ("C", C), ("D", D)]);
    let subs = v.paths(&["A", "B", "C", "D"]);
    let json = grid_json(&subs, &["--explain", "B,C"]);
    let e = &json["explain"];
    assert_eq!((e["a"].as_str(), e["b"].as_str()), (Some("B"), Some("C")));
    assert_close(&e["overall_a"], 1.08f64.sqrt(), "overall_a");
    assert_close(&e["overall_b"], 1.2f64.sqrt(), "overall_b");
    assert_close(&e["ratio"], (1.08f64 / 1.2).sqrt(), "ratio");
    // gap = ln √(1.08/1.2) = ½ ln 0.9 = −0.05268.
    let gap = 0.5 * 0.9f64.ln();
    assert_close(&e["gap"], gap, "gap");
    let (lo, hi) = interval(&e["ratio_ci"]);
    assert!(lo <= (0.9f64).sqrt() && (0.9f64).sqrt() <= hi, "{lo}–{hi}");
    // Both have every bench: term = (ln r_B − ln r_C) / 2, by |term| descending:
    // vae ½ ln(0.9/1.5) = −0.25541, then atari ½ ln(1.2/0.8) = +0.20273.
    let terms = e["terms"].as_array().unwrap();
    assert_eq!(terms.len(), 2);
    assert_eq!(terms[0]["bench"], "vae");
    assert_eq!(terms[0]["weight"], 1.0);
    assert_close(&terms[0]["log_ratio_a"], 0.9f64.ln(), "vae a");
    assert_close(&terms[0]["log_ratio_b"], 1.5f64.ln(), "vae b");
    assert_close(&terms[0]["term"], 0.5 * (0.9f64 / 1.5).ln(), "vae term");
    assert_eq!(terms[1]["bench"], "atari");
    assert_close(&terms[1]["term"], 0.5 * 1.5f64.ln(), "atari term");
    assert_eq!(e["penalty"], 0.0);
    let sum: f64 = terms.iter().map(|t| f(&t["term"])).sum::<f64>() + f(&e["penalty"]);
    assert!(close(sum, gap), "{sum} vs {gap}");

    // D misses vae: W_D = 1, W_B = 2. Terms: atari ln 1.5 − ½ ln 1.2, vae 0 − ½ ln 0.9;
    // penalty ln(½ ÷ 1); gap ln(0.75 ÷ √1.08).
    let json = grid_json(&subs, &["--explain", "D,B"]);
    let e = &json["explain"];
    let gap = (0.75 / 1.08f64.sqrt()).ln();
    assert_close(&e["gap"], gap, "gap D,B");
    assert_close(&e["penalty"], 0.5f64.ln(), "penalty");
    let term = |bench: &str| {
        let t = e["terms"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["bench"] == bench)
            .unwrap();
        t.clone()
    };
    assert_close(
        &term("atari")["term"],
        1.5f64.ln() - 0.5 * 1.2f64.ln(),
        "atari",
    );
    assert_close(&term("vae")["term"], -0.5 * 0.9f64.ln(), "vae");
    assert_eq!(term("vae")["log_ratio_a"], Value::Null);
    let sum = f(&term("atari")["term"]) + f(&term("vae")["term"]) + f(&e["penalty"]);
    assert!(close(sum, gap), "{sum} vs {gap}");

    // The table shows the attribution: the title with the ratio and gap, one row per
    // bench, and the penalty row.
    let out = grid(&subs, &["--explain", "B,C"])
        .success()
        .get_output()
        .stdout
        .clone();
    let table = String::from_utf8(out).unwrap();
    let title = format!("B ÷ C = {:.3} (95% CI ", (0.9f64).sqrt());
    assert!(table.contains(&title), "{table}");
    assert!(
        table.contains(&format!(
            "log gap {gap:+.4} by bench",
            gap = 0.5 * 0.9f64.ln()
        )),
        "{table}"
    );
    let line = |name: &str| {
        table
            .lines()
            .rev()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no row {name}: {table}"))
            .to_owned()
    };
    assert!(
        line("vae").contains(&format!("{:+.4}", 0.5 * (0.9f64 / 1.5).ln())),
        "{table}"
    );
    assert!(
        line("atari").contains(&format!("{:+.4}", 0.5 * 1.5f64.ln())),
        "{table}"
    );
    assert!(line("(missing benches)").contains("+0.0000"), "{table}");

    // Names that are not rows, and a malformed pair, are usage errors.
    grid(&subs, &["--explain", "B,Z"])
        .code(2)
        .stderr(predicate::str::contains("`Z`"));
    grid(&subs, &["--explain", "B"])
        .code(2)
        .stderr(predicate::str::contains(
            "invalid value 'B' for '--explain <A,B>': explain `B`: expected two rows, A,B",
        ));
}

#[test]
fn the_same_seed_gives_the_same_json_and_another_seed_other_intervals() {
    let v = Vendors::abc();
    let subs = v.paths(&["A", "B", "C"]);
    let first = json_text(&subs, &[]);
    assert_eq!(first, json_text(&subs, &[]));
    assert_eq!(first, json_text(&subs, &["--seed", "2019"]));
    // The order of the inputs changes no figure (the baseline named).
    let reordered: Value =
        serde_json::from_str(&json_text(&v.paths(&["C", "B", "A"]), &["--baseline", "A"])).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&first).unwrap(), reordered);

    let other: Value = serde_json::from_str(&json_text(&subs, &["--seed", "7"])).unwrap();
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(other["seed"], 7);
    for id in ["B", "C"] {
        // The same figures, other intervals.
        assert_eq!(
            row(&first, id)["overall"],
            row(&other, id)["overall"],
            "{id}"
        );
        assert_ne!(row(&first, id)["ci"], row(&other, id)["ci"], "{id}");
        assert_ne!(
            row(&first, id)["cells"]["atari"]["ci"],
            row(&other, id)["cells"]["atari"]["ci"],
            "{id}"
        );
    }
    let fewer: Value = serde_json::from_str(&json_text(&subs, &["--resamples", "50"])).unwrap();
    assert_eq!(fewer["resamples"], 50);

    grid(&subs, &["--resamples", "0"])
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(
            "invalid value '0' for '--resamples <N>': 0 is not in 1..=100000",
        ));
}

#[test]
fn a_zipped_submission_gives_the_grid_of_its_folder() {
    let v = Vendors::abc();
    let zip = v.path("zips/B.zip");
    std::fs::create_dir_all(zip.parent().unwrap()).unwrap();
    write_zip(
        &zip,
        &folder_files(&v.path("B")),
        zip::CompressionMethod::Deflated,
    );
    let folder = json_text(&v.paths(&["A", "B", "C"]), &[]);
    let zipped = json_text(&[v.path("A"), zip.clone(), v.path("C")], &[]);
    assert_eq!(folder, zipped);
    // A zip baseline too.
    let zipped = json_text(&[zip, v.path("A"), v.path("C")], &["--baseline", "A"]);
    assert_eq!(folder, zipped);
}

/// `mlbench pack DIR -o ZIP --track tweaked --allow-errors` (a made-up submission has no
/// jobs file and fails validation).
fn pack_tweaked(dir: &Path, zip: &Path) {
    mlbench()
        .arg("pack")
        .arg(dir)
        .arg("-o")
        .arg(zip)
        .args(["--track", "tweaked", "--allow-errors"])
        .assert()
        .success();
}

#[test]
fn a_vendor_with_both_tracks_gets_two_rows() {
    let faster: Vec<(&str, f64)> = B.iter().map(|(b, m)| (*b, m * 1.25)).collect();
    let v = Vendors::new(&[("A", A), ("B", B), ("Bt", &faster)]);
    let zip = v.path("b-tweaked.zip");
    pack_tweaked(&v.path("Bt"), &zip);
    let label = format!("B={}", zip.display());
    let subs = [v.path("A"), v.path("B"), zip.clone()];
    let json = grid_json(&subs, &["--label", &label]);
    let base = row(&json, "B");
    let tweaked = row(&json, "B/tweaked");
    assert_eq!(
        (base["name"].as_str(), base["track"].as_str()),
        (Some("B"), Some("baseline"))
    );
    assert_eq!(
        (tweaked["name"].as_str(), tweaked["track"].as_str()),
        (Some("B"), Some("tweaked"))
    );
    // Tweaked: 15 and 112.5, ratios 1.5 and 1.125.
    assert_close(&tweaked["cells"]["atari"]["ratio"], 1.5, "tweaked atari");
    assert_close(&tweaked["cells"]["vae"]["ratio"], 1.125, "tweaked vae");
    assert_close(
        &tweaked["overall"],
        1.25 * 1.08f64.sqrt(),
        "tweaked overall",
    );
    assert_close(&base["overall"], 1.08f64.sqrt(), "baseline overall");
    assert_eq!(ids(&json), ["B/tweaked", "B", "A"]);
    // The table names both rows by track.
    let out = grid(&subs, &["--label", &label])
        .success()
        .get_output()
        .stdout
        .clone();
    let table = String::from_utf8(out).unwrap();
    assert!(
        table.contains("B (baseline)") && table.contains("B (tweaked)"),
        "{table}"
    );
    // --explain and --baseline take the ids.
    let json = grid_json(&subs, &["--label", &label, "--explain", "B/tweaked,B"]);
    assert_close(&json["explain"]["ratio"], 1.25, "tweaked ÷ baseline");

    // The same data on both tracks: equal figures, baseline track first.
    let same = v.path("b-same.zip");
    pack_tweaked(&v.path("B"), &same);
    let label = format!("B={}", same.display());
    let json = grid_json(&[v.path("A"), v.path("B"), same], &["--label", &label]);
    assert_eq!(
        row(&json, "B")["overall"],
        row(&json, "B/tweaked")["overall"]
    );
    assert_eq!(ids(&json), ["B", "B/tweaked", "A"]);
}

#[test]
fn labels_name_submissions_and_a_label_twice_on_a_track_is_exit_2() {
    let v = Vendors::abc();
    let subs = v.paths(&["A", "B", "C"]);
    let label = format!("Vendor-X={}", v.path("C").display());
    let json = grid_json(&subs, &["--label", &label]);
    assert_close(
        &row(&json, "Vendor-X")["overall"],
        1.2f64.sqrt(),
        "C as Vendor-X",
    );
    assert!(
        json["vendors"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["name"] != "C")
    );

    // Two submissions labelled B on the baseline track.
    let label = format!("B={}", v.path("C").display());
    grid(&subs, &["--label", &label])
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(
            "two submissions are labelled `B` in the baseline track",
        ));
    // The same folder given twice.
    grid(&v.paths(&["A", "B", "B"]), &[])
        .code(2)
        .stderr(predicate::str::contains("labelled `B`"));
    // Two tweaked packs with one label.
    let (t1, t2) = (v.path("t1.zip"), v.path("t2.zip"));
    pack_tweaked(&v.path("B"), &t1);
    pack_tweaked(&v.path("C"), &t2);
    let l1 = format!("T={}", t1.display());
    let l2 = format!("T={}", t2.display());
    grid(&[v.path("A"), t1, t2], &["--label", &l1, "--label", &l2])
        .code(2)
        .stderr(predicate::str::contains(
            "two submissions are labelled `T` in the tweaked track",
        ));
    // A label of a path that is not among the submissions, and one without `=`.
    let stray = format!("X={}", v.path("elsewhere").display());
    grid(&subs, &["--label", &stray])
        .code(2)
        .stderr(predicate::str::contains("not one of the submissions given"));
    grid(&subs, &["--label", "X"])
        .code(2)
        .stderr(predicate::str::contains(
            "invalid value 'X' for '--label <NAME=SUB>': label `X`: expected NAME=SUB",
        ));
}

#[test]
fn one_submission_labelled_twice_is_exit_2() {
    let v = Vendors::abc();
    let l1 = format!("X={}", v.path("B").display());
    let l2 = format!("Y={}", v.path("B").display());
    grid(&v.paths(&["A", "B"]), &["--label", &l1, "--label", &l2])
        .code(2)
        .stderr(predicate::str::contains("--label"));
}

#[test]
fn csv_markdown_and_parquet_outputs() {
    let v = Vendors::new(&[("A", A), ("B", B), ("C", C), ("D", D)]);
    let subs = v.paths(&["A", "B", "C", "D"]);

    let out = grid(&subs, &["--format", "csv"])
        .success()
        .get_output()
        .stdout
        .clone();
    let csv = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "vendor,track,bench,ratio,ci_low,ci_high,n,gpus,mean,missing,tier,per,valid,errors,gpu_models,gpu_count,hosts,runtime"
    );
    assert!(
        lines[1..]
            .iter()
            .all(|l| l.split(',').nth(11) == Some("second")),
        "{csv}"
    );
    // 4 vendors × (2 benches + the overall row).
    assert_eq!(lines.len() - 1, 4 * (2 + 1), "{csv}");
    let cells = |vendor: &str, bench: &str| -> Vec<String> {
        lines
            .iter()
            .map(|l| l.split(',').map(str::to_owned).collect::<Vec<_>>())
            .find(|c| c[0] == vendor && c[2] == bench)
            .unwrap_or_else(|| panic!("no row {vendor} {bench}: {csv}"))
    };
    let b = cells("B", "atari");
    assert!(close(b[3].parse().unwrap(), 1.2), "{b:?}");
    assert_eq!(
        (b[6].as_str(), b[7].as_str(), b[9].as_str()),
        ("8", "2", "false")
    );
    let d = cells("D", "vae");
    assert_eq!(
        (d[3].as_str(), d[6].as_str(), d[9].as_str()),
        ("", "0", "true")
    );
    let d = cells("D", "(overall)");
    assert!(close(d[3].parse().unwrap(), 0.75), "{d:?}");

    let out = grid(&subs, &["--format", "markdown", "--explain", "B,C"])
        .success()
        .get_output()
        .stdout
        .clone();
    let md = String::from_utf8(out).unwrap();
    for heading in [
        "# mlbench grid",
        "## Overall",
        "## Ratio to the baseline, by bench",
        "## Explained",
    ] {
        assert!(md.contains(&format!("{heading}\n")), "{heading}: {md}");
    }
    assert!(md.contains("| vendor | overall |"), "{md}");
    assert!(
        md.lines()
            .any(|l| l.starts_with("| atari |") && l.contains("1.200")),
        "{md}"
    );
    assert!(
        md.lines()
            .any(|l| l.starts_with("| D ") && l.contains("0.750")),
        "{md}"
    );

    // Parquet needs --output.
    grid(&subs, &["--format", "parquet"])
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("--output"));
    let parquet = v.path("grid.parquet");
    grid(
        &subs,
        &["--format", "parquet", "-o", parquet.to_str().unwrap()],
    )
    .success()
    .stdout("");
    let bytes = std::fs::read(&parquet).unwrap();
    assert!(bytes.len() > 8 && bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));

    // --output never overwrites without --force, whatever the format.
    for format in ["parquet", "json", "csv"] {
        std::fs::write(&parquet, "precious").unwrap();
        grid(
            &subs,
            &["--format", format, "-o", parquet.to_str().unwrap()],
        )
        .code(2)
        .stderr(predicate::str::contains(
            "already exists; not overwriting it",
        ));
        assert_eq!(read_text(&parquet), "precious", "{format}");
    }
    grid(
        &subs,
        &[
            "--format",
            "json",
            "--force",
            "-o",
            parquet.to_str().unwrap(),
        ],
    )
    .success()
    .stdout("");
    let json: Value = serde_json::from_str(&read_text(&parquet)).unwrap();
    assert_eq!(json["baseline"], "A");
}

#[test]
fn the_html_page_is_one_offline_file_with_tables_figures_and_provenance() {
    let v = Vendors::new(&[("A", A), ("B", B), ("C", C)]);
    let zip = v.path("C.zip");
    write_zip(
        &zip,
        &folder_files(&v.path("C")),
        zip::CompressionMethod::Deflated,
    );
    let pages = v.path("pages");
    std::fs::create_dir_all(&pages).unwrap();
    let page = pages.join("grid.html");
    let subs = [v.path("A"), v.path("B"), zip.clone()];
    let args = [
        "--explain",
        "B,C",
        "--html",
        page.to_str().unwrap(),
        "--force",
    ];
    grid(&subs, &args).success();
    // One file, nothing beside it.
    assert_eq!(names_in(&pages), ["grid.html"]);
    let html = read_text(&page);
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..100]);
    assert!(
        count(&html, "<table") >= 3,
        "{} tables",
        count(&html, "<table")
    );
    assert!(count(&html, "<svg") >= 2);
    assert!(!html.to_lowercase().contains("<script"));
    // No reference out of the page but the SVG namespaces.
    let mut rest = html.as_str();
    while let Some(at) = rest.find("http") {
        let before = &rest[..at];
        let attr = before.rsplit(' ').next().unwrap_or_default();
        if rest[at..].starts_with("http://") || rest[at..].starts_with("https://") {
            assert!(
                attr.starts_with("xmlns=\"") || attr.starts_with("xmlns:xlink=\""),
                "a reference out of the page: {}",
                &rest[at.saturating_sub(40)..(at + 60).min(rest.len())]
            );
        }
        rest = &rest[at + 4..];
    }
    // The tables: overall (B's figure), ratios (1.200 for B on atari), explained.
    let overall = html_rows(&html, "Overall, relative to the baseline");
    let b = overall.iter().find(|r| r[0] == "B").unwrap();
    assert_eq!(b[1], format!("{:.3}", 1.08f64.sqrt()));
    assert!(html.contains("Validation"), "no validation section");
    assert!(html.contains("Explained"));

    // Provenance: every input file (folders expanded, the zip itself) with its SHA-256.
    let footer = &html[html.find("<footer>").expect("a footer")..];
    let listed = html_rows(footer, "Input files");
    let mut expected: Vec<(String, String)> = Vec::new();
    for sub in &subs[..2] {
        for (rel, bytes) in folder_files(sub) {
            expected.push((sub.join(rel).display().to_string(), sha256_hex(&bytes)));
        }
    }
    expected.push((
        zip.display().to_string(),
        sha256_hex(&std::fs::read(&zip).unwrap()),
    ));
    let mut got: Vec<(String, String)> = listed
        .iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    got.sort();
    expected.sort();
    assert_eq!(got, expected);
    for (_, digest) in &got {
        assert!(digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()));
    }
    // Reproducible (the same command gives the same bytes; the command line is in the
    // provenance), and never overwritten without --force.
    grid(&subs, &args).success();
    assert_eq!(read_text(&page), html);
    grid(&subs, &args[..4])
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    assert_eq!(read_text(&page), html);
    std::fs::write(&page, "precious").unwrap();
    grid(&subs, &["--html", page.to_str().unwrap()])
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    assert_eq!(read_text(&page), "precious");
}

#[test]
fn unequal_runs_pool_every_sample() {
    // GPU 0 has 4 runs of atari, GPU 1 only 2: the pooled mean weighs samples, not GPUs.
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("A");
    write_vendor(&base, A);
    let odd = tmp.path().join("E");
    write_samples(
        &odd,
        &[
            (
                "atari",
                vec![vec![10.0, 11.0, 12.0, 13.0], vec![20.0, 22.0]],
            ),
            ("vae", spread(100.0)),
        ],
    );
    let json = grid_json(&[base, odd], &[]);
    let c = &row(&json, "E")["cells"]["atari"];
    // (10 + 11 + 12 + 13 + 20 + 22) / 6 = 88 / 6; the mean of GPU means would be 16.5.
    assert_eq!(c["n"], 6);
    assert_close(&c["mean"], 88.0 / 6.0, "pooled mean");
    assert_close(&c["ratio"], 88.0 / 60.0, "ratio");
    assert_close(
        &row(&json, "E")["overall"],
        (88.0f64 / 60.0).sqrt(),
        "overall",
    );
}

#[test]
fn intervals_without_spread_are_points_and_said() {
    // Every sample equal to its mean: every resample equals the data, bit for bit.
    let tmp = tempfile::tempdir().unwrap();
    let flat = |root: &Path, means: &[(&str, f64)]| {
        let benches: Vec<(&str, Vec<Vec<f64>>)> = means
            .iter()
            .map(|(b, m)| (*b, vec![vec![*m; 4]; 2]))
            .collect();
        write_samples(root, &benches);
    };
    flat(&tmp.path().join("A"), A);
    flat(&tmp.path().join("B"), B);
    // One run per GPU, the GPUs apart (GPUs are never resampled): a point as well.
    write_samples(
        &tmp.path().join("S"),
        &[
            ("atari", vec![vec![14.0], vec![16.0]]),
            ("vae", vec![vec![100.0], vec![100.0]]),
        ],
    );
    let subs = [
        tmp.path().join("A"),
        tmp.path().join("B"),
        tmp.path().join("S"),
    ];
    let json = grid_json(&subs, &[]);
    for (id, bench, ratio) in [
        ("A", "atari", 1.0),
        ("B", "atari", 1.2),
        ("B", "vae", 0.9),
        ("S", "atari", 1.5),
        ("S", "vae", 1.0),
    ] {
        let c = &row(&json, id)["cells"][bench];
        assert_close(&c["ratio"], ratio, id);
        assert_eq!(c["ci"][0], c["ratio"], "{id} {bench}: {c}");
        assert_eq!(c["ci"][1], c["ratio"], "{id} {bench}: {c}");
    }
    let s = row(&json, "S");
    assert_eq!(s["cells"]["atari"]["gpus"], 2);
    assert_eq!(s["ci"][0], s["overall"]);
    assert_eq!(s["ci"][1], s["overall"]);
    let notes = json["notes"].to_string();
    assert!(
        notes.contains("S: every GPU has a single run on atari, vae"),
        "{notes}"
    );
}

#[test]
fn entries_without_a_positive_throughput_are_left_out_and_counted() {
    let v = Vendors::abc();
    // C, run 2, GPU 1: atari reports a throughput of 0.
    let path = v.path("C/output2/fast_1.json");
    crate::fixtures::edit_entry(&path, 0, |o| {
        crate::fixtures::edit_object(o, "train_item", |item| item.insert("avg", 0.0));
    });
    let json = grid_json(&v.paths(&["A", "B", "C"]), &[]);
    let c = &row(&json, "C")["cells"]["atari"];
    // The 7 others: 8·(1 + d) without SPREAD[1][2] = +0.01: (64 − 8.08) / 7.
    assert_eq!(c["n"], 7);
    assert_close(&c["mean"], (64.0 - 8.08) / 7.0, "C atari");
    let notes = json["notes"].to_string();
    assert!(
        notes.contains("C: 1 entry without a finite positive throughput left out"),
        "{notes}"
    );
}

#[test]
fn the_baselines_jobs_file_sets_the_benches() {
    let v = Vendors::new(&[
        ("A", A),
        ("B", &[("atari", 12.0), ("convnet", 50.0), ("vae", 90.0)]),
    ]);
    let job = |name: &str| {
        format!("{{\"name\": \"{name}\", \"cmd\": \"./{name}/run.sh\", \"args\": {{}}}}")
    };
    std::fs::write(
        v.path("A/fast.json"),
        format!("[{}, {}, {}]\n", job("atari"), job("cart"), job("vae")),
    )
    .unwrap();
    let json = grid_json(&v.paths(&["A", "B"]), &[]);
    // The expected benches: cart, which the baseline lacks, cannot be normalized and
    // costs no one anything; convnet, which is not expected, is left out.
    assert_eq!(json["benches"], serde_json::json!(["atari", "cart", "vae"]));
    assert_eq!(json["unnormalized"], serde_json::json!(["cart"]));
    let b = row(&json, "B");
    assert!(b["cells"].get("convnet").is_none(), "{b}");
    assert_eq!(b["cells"]["cart"]["unnormalized"], true);
    assert_eq!(b["weight_share"], 1.0);
    assert_eq!(b["present"], 2);
    assert_close(&b["overall"], 1.08f64.sqrt(), "B");
    let notes = json["notes"].to_string();
    assert!(
        notes.contains("B: bench `convnet` is not among the expected benches"),
        "{notes}"
    );
    assert!(
        notes.contains("bench `cart` has no usable sample in the baseline `A`"),
        "{notes}"
    );
}

#[test]
fn table_snapshot() {
    // Run from the vendors' folder, so that the table holds no temporary paths. The
    // figures are checked by hand above; this pins the layout (and, the generator being
    // the project's own, the intervals on every platform).
    let v = Vendors::new(&[("A", A), ("B", B), ("C", C), ("D", D)]);
    let out = mlbench()
        .current_dir(v.0.path())
        .args(["grid", "A", "B", "C", "D", "--explain", "B,C"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    insta::assert_snapshot!("grid_table", String::from_utf8(out).unwrap());
}

#[test]
fn a_refused_output_writes_no_page_either() {
    let v = Vendors::abc();
    let out = v.path("grid.json");
    std::fs::write(&out, "precious").unwrap();
    let page = v.path("grid.html");
    grid(
        &v.paths(&["A", "B"]),
        &[
            "--format",
            "json",
            "-o",
            out.to_str().unwrap(),
            "--html",
            page.to_str().unwrap(),
        ],
    )
    .code(2)
    .stderr(predicate::str::contains("already exists"));
    assert_eq!(read_text(&out), "precious");
    // As `plot` does: nothing is written when one output would be refused.
    assert!(!page.exists(), "the page was written by a run that failed");
}

/// `--interval anytime`: each cell's interval is the difference of the two submissions'
/// anytime-valid sequences (each at α/2), the baseline's its own sequence around its mean,
/// a row's overall the same sums over its benches (each side at α/(2k)); the tiers follow
/// them. Computed here from the sequences' log bounds (analyzer::anytime, checked against
/// the martingale in its own tests).
#[test]
fn anytime_intervals_compose_the_runs_sequences() {
    use mlbench_analyzer::anytime::{Design, LogSummary};
    let tmp = tempfile::tempdir().unwrap();
    // One GPU, 12 runs: A around 100, B around 150 (±0.5 %).
    let wiggle = [
        0.004, -0.003, 0.001, -0.005, 0.002, 0.0, -0.001, 0.003, -0.002, 0.005, -0.004, 0.0,
    ];
    let runs = |mean: f64| {
        vec![
            wiggle
                .iter()
                .map(|d| mean * (1.0 + d))
                .collect::<Vec<f64>>(),
        ]
    };
    write_samples(&tmp.path().join("A"), &[("vae", runs(100.0))]);
    write_samples(&tmp.path().join("B"), &[("vae", runs(150.0))]);
    let subs = [tmp.path().join("A"), tmp.path().join("B")];
    let json = grid_json(&subs, &["--interval", "anytime"]);
    assert_eq!(json["interval"], "anytime");
    let bounds = |mean: f64, level: f64| {
        let d = Design::plan(level, 0.01, 0.02).unwrap();
        let s = LogSummary::of(&runs(mean)[0]).unwrap();
        let h = s.anytime_half_width(&d).unwrap();
        (s.mean - h, s.mean + h)
    };
    let (alo, ahi) = bounds(100.0, 0.975);
    let (blo, bhi) = bounds(150.0, 0.975);
    let ci = |v: &Value| [f(&v[0]), f(&v[1])];
    let b_cell = ci(&row(&json, "B")["cells"]["vae"]["ci"]);
    assert!(
        close(b_cell[0], (blo - ahi).exp()) && close(b_cell[1], (bhi - alo).exp()),
        "{b_cell:?}"
    );
    // One bench: the overall's sides are at α/2 as well, so it is the cell's interval.
    let b_row = ci(&row(&json, "B")["ci"]);
    assert!(
        close(b_row[0], b_cell[0]) && close(b_row[1], b_cell[1]),
        "{b_row:?}"
    );
    let mid = (alo + ahi) / 2.0;
    let a_cell = ci(&row(&json, "A")["cells"]["vae"]["ci"]);
    assert!(close(a_cell[0], (alo - mid).exp()) && close(a_cell[1], (ahi - mid).exp()));
    // 1.5 apart with ±a few % intervals: two tiers.
    assert_eq!(json["tiers"], serde_json::json!([["B"], ["A"]]));
    // The bootstrap's grid says nothing of intervals and has other ones.
    let boot = grid_json(&subs, &[]);
    assert!(boot.get("interval").is_none());
    assert_ne!(boot["vendors"][0]["ci"], json["vendors"][0]["ci"]);

    // Four runs each: the sequences are unbounded yet, and so is every interval: one tier.
    let four = tempfile::tempdir().unwrap();
    for (name, mean) in [("A", 100.0), ("B", 150.0)] {
        write_samples(
            &four.path().join(name),
            &[("vae", vec![runs(mean)[0][..4].to_vec()])],
        );
    }
    let json = grid_json(
        &[four.path().join("A"), four.path().join("B")],
        &["--interval", "anytime"],
    );
    assert_eq!(row(&json, "B")["cells"]["vae"]["ci"], Value::Null);
    assert_eq!(json["tiers"], serde_json::json!([["B", "A"]]));
}

/// Two vendors with telemetry ([`crate::energy_fixture`]): A at the fixture's powers, B
/// at 0.8 × them and another throughput (which a grid per joule must not see).
fn energy_vendors() -> Vendors {
    let tmp = tempfile::tempdir().unwrap();
    for (name, means, scale) in [
        ("A", &[("convnet", 180.0), ("vae", 7600.0)], 1.0),
        ("B", &[("convnet", 200.0), ("vae", 7000.0)], 0.8),
    ] {
        let root = tmp.path().join(name);
        write_vendor(&root, means);
        crate::energy_fixture::write_telemetry(&root, 4, 2, scale);
    }
    Vendors(tmp)
}

#[test]
fn plot_grid_per_joule_draws_items_per_joule() {
    let v = energy_vendors();
    let out = v.0.path().join("plots");
    mlbench()
        .args(["plot", "grid"])
        .args(v.paths(&["A", "B"]))
        .args(["--per", "joule", "--format", "svg", "--out-dir"])
        .arg(&out)
        .assert()
        .success();
    let svg = std::fs::read_to_string(out.join("grid-overall.svg")).unwrap();
    assert!(
        svg.contains("Overall items per joule relative to A"),
        "{svg}"
    );
    // B's overall figure per joule is 1.25 (0.8 × the power for the same items).
    assert!(svg.contains("1.250"), "{svg}");
    let bars = std::fs::read_to_string(out.join("grid-ratios.svg")).unwrap();
    assert!(bars.contains("Items per joule relative to A, by bench"));
    assert!(!bars.contains("Throughput"));
}

/// Board sensors of two kinds (A's GPUs through NVML, B's through amdsmi; both read the
/// CPU package through RAPL): the grid per joule gives its ratios but no tiers, and says
/// why in the JSON and the table; one kind for both is tiered as usual.
#[test]
fn per_joule_across_sensor_kinds_is_informative_and_untiered() {
    use mlbench_schema::telemetry::SourceKind;
    let tmp = tempfile::tempdir().unwrap();
    for (name, source) in [("A", SourceKind::Nvml), ("B", SourceKind::Amdsmi)] {
        let root = tmp.path().join(name);
        write_vendor(&root, &[("convnet", 180.0), ("vae", 7600.0)]);
        let scale = if name == "A" { 1.0 } else { 0.5 };
        crate::energy_fixture::write_telemetry_from(&root, 4, 2, scale, source);
    }
    let subs = [tmp.path().join("A"), tmp.path().join("B")];
    let json = grid_json(&subs, &["--per", "joule"]);
    assert_eq!(
        json["informative"],
        "board sensors differ by vendor: B amdsmi+rapl, A nvml+rapl"
    );
    assert_eq!(json["tiers"], serde_json::json!([]));
    for v in json["vendors"].as_array().unwrap() {
        assert_eq!(v["tier"], Value::Null, "{v}");
    }
    // Half the power for the same items: B's figure is still 2 × A's, only unranked.
    assert!(close(f(&row(&json, "B")["overall"]), 2.0));
    let table = grid(&subs, &["--per", "joule"]).success();
    let text = String::from_utf8(table.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("informative: board sensors differ by vendor"),
        "{text}"
    );
    // The same kind for both: tiered.
    let same = energy_vendors();
    let json = grid_json(&same.paths(&["A", "B"]), &["--per", "joule"]);
    assert!(json.get("informative").is_none_or(Value::is_null), "{json}");
    assert_eq!(json["tiers"], serde_json::json!([["B"], ["A"]]));
}

#[test]
fn per_joule_ratios_equal_the_hand_computation() {
    let v = energy_vendors();
    let json = grid_json(&v.paths(&["A", "B"]), &["--per", "joule"]);
    assert_eq!(json["per"], "joule");
    // A copy's items per joule: convnet 1600 ÷ (10 s × W), vae 1600 ÷ (1 s × W + 20 J of
    // the shared package), W = 200 + 10r + 10g over 4 runs × 2 GPUs; B draws 0.8 × as
    // much for the same items, so every one of its samples is 1.25 × A's.
    let watts: Vec<f64> = (0..4)
        .flat_map(|r| (0..2).map(move |g| crate::energy_fixture::gpu_watts(r, g)))
        .collect();
    let mean = |f: &dyn Fn(f64) -> f64| watts.iter().map(|&w| f(w)).sum::<f64>() / 8.0;
    let a = row(&json, "A");
    let near = |v: &Value, want: f64| assert!((f(v) - want).abs() <= 1e-6 * want, "{v} != {want}");
    near(&a["cells"]["convnet"]["mean"], mean(&|w| 160.0 / w));
    near(&a["cells"]["vae"]["mean"], mean(&|w| 1600.0 / (w + 20.0)));
    assert_eq!(a["overall"], 1.0);
    let b = row(&json, "B");
    near(&b["cells"]["convnet"]["ratio"], 1.25);
    near(&b["cells"]["vae"]["ratio"], 1.25);
    near(&b["overall"], 1.25);
    assert_eq!(b["cells"]["convnet"]["n"], 8);
    // Each resampled mean of A lies between its lowest and highest sample (160/240 and
    // 160/200), and B's resample is 1.25 × the same draw of A's copies' figures.
    let (lo, hi) = interval(&b["cells"]["convnet"]["ci"]);
    assert!(lo < 1.25 && 1.25 < hi, "{lo}–{hi}");
    assert!(
        lo >= 1.25 * 200.0 / 240.0 && hi <= 1.25 * 240.0 / 200.0,
        "{lo}–{hi}"
    );
    assert!(
        json["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("per joule: ")
    );
    // The CSV says what its means count; its B convnet mean is the JSON's.
    let csv = grid(
        &v.paths(&["A", "B"]),
        &["--per", "joule", "--format", "csv"],
    )
    .success()
    .get_output()
    .stdout
    .clone();
    let csv = String::from_utf8(csv).unwrap();
    let b_convnet: Vec<&str> = (csv.lines())
        .find(|l| l.starts_with("B,") && l.contains(",convnet,"))
        .unwrap()
        .split(',')
        .collect();
    assert_eq!(b_convnet[11], "joule", "{csv}");
    let mean: f64 = b_convnet[8].parse().unwrap();
    assert!((mean - f(&b["cells"]["convnet"]["mean"])).abs() <= 1e-12 * mean);
    // Per second (the default) the same folders give the throughputs' ratios, and the
    // JSON has no `per`.
    let per_second = grid_json(&v.paths(&["A", "B"]), &[]);
    assert!(per_second.get("per").is_none());
    near(
        &row(&per_second, "B")["cells"]["convnet"]["ratio"],
        200.0 / 180.0,
    );
}

#[test]
fn per_joule_over_zips_gives_the_folders_numbers() {
    let v = energy_vendors();
    let zips: Vec<PathBuf> = (v.paths(&["A", "B"]).iter())
        .map(|folder| crate::energy_fixture::pack(folder))
        .collect();
    let folders = grid_json(&v.paths(&["A", "B"]), &["--per", "joule"]);
    let zipped = grid_json(&zips, &["--per", "joule"]);
    assert_eq!(zipped["per"], "joule");
    // The same rows, but for what the zips' SUBMISSION.json adds: packed with errors.
    let mut rows = zipped["vendors"].clone();
    for row in rows.as_array_mut().unwrap() {
        assert_eq!(row["validity"]["allowed_errors"], true);
        row["validity"]["allowed_errors"] = false.into();
    }
    assert_eq!(rows, folders["vendors"]);
    assert_eq!(zipped["tiers"], folders["tiers"]);
    assert_eq!(zipped["notes"], folders["notes"]);
    // The hand-worked ratio (B draws 0.8 × A's power for the same items).
    let b = row(&zipped, "B");
    assert!(
        (f(&b["cells"]["convnet"]["ratio"]) - 1.25).abs() <= 1e-9,
        "{b}"
    );
    assert!((f(&b["overall"]) - 1.25).abs() <= 1e-9, "{b}");
}

#[test]
fn per_joule_without_telemetry_in_the_baseline_is_exit_2_and_elsewhere_missing() {
    let v = energy_vendors();
    write_vendor(&v.path("C"), &[("convnet", 180.0), ("vae", 7600.0)]);
    grid(&v.paths(&["C", "A"]), &["--per", "joule"])
        .code(2)
        .stderr(predicate::str::contains(
            "the baseline `C` has no telemetry paired with its entries: no grid per joule",
        ));
    let json = grid_json(&v.paths(&["A", "C"]), &["--per", "joule"]);
    let c = row(&json, "C");
    assert!(c["overall"].is_null());
    assert_eq!(c["cells"]["convnet"]["missing"], true);
    let notes: Vec<&str> = json["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.contains(&"C: no telemetry paired with its entries: no figure per joule"),
        "{notes:?}"
    );
}

#[test]
fn per_joule_table_snapshot() {
    let v = energy_vendors();
    let out = mlbench()
        .current_dir(v.0.path())
        .args(["grid", "A", "B", "--per", "joule"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    insta::assert_snapshot!("grid_per_joule_table", String::from_utf8(out).unwrap());
}

#[test]
fn per_joule_html_page_says_what_its_figures_are() {
    let v = energy_vendors();
    let page = v.path("grid.html");
    mlbench()
        .arg("grid")
        .args(v.paths(&["A", "B"]))
        .args(["--per", "joule", "--html"])
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("mlbench grid per joule"));
    assert!(html.contains("per joule: each figure is items per joule"));
    let text = |format: &str| {
        let out = grid(
            &v.paths(&["A", "B"]),
            &["--per", "joule", "--format", format],
        )
        .success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let markdown = text("markdown");
    assert!(
        markdown.starts_with("# mlbench grid per joule\n"),
        "{markdown}"
    );
    // CSV: the same rows as per second, `mean` in items per joule.
    let csv = text("csv");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let mean = header.iter().position(|h| *h == "mean").unwrap();
    let convnet_a = csv
        .lines()
        .find(|l| l.starts_with("A,") && l.contains(",convnet,"))
        .unwrap();
    let value: f64 = convnet_a.split(',').nth(mean).unwrap().parse().unwrap();
    let watts: Vec<f64> = (0..4)
        .flat_map(|r| (0..2).map(move |g| crate::energy_fixture::gpu_watts(r, g)))
        .collect();
    let want = watts.iter().map(|w| 160.0 / w).sum::<f64>() / 8.0;
    assert!((value - want).abs() < 1e-9 * want, "{value} != {want}");
}
