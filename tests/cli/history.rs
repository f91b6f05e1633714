//! `mlbench history`: series across rounds with intervals; a change flagged only where
//! the interval of its ratio excludes 1; the hostile stores.

use crate::fixtures::{SPREAD, close, f};
use crate::rounds::{Sub, kept_zip, rounds, run};
use serde_json::Value;

/// Round 2025 and 2026 of vendorX: convnet 100 → 130 (a change far outside the ±2 %
/// spread of its samples), vae 50 → 50 (none); round 2027 released in 2099.
fn three_rounds() -> crate::rounds::Rounds {
    let sub = |means, release| Sub {
        label: "vendorX",
        means,
        release,
    };
    rounds(&[
        ("2025", &[sub(&[("convnet", 100.0), ("vae", 50.0)], None)]),
        ("2026", &[sub(&[("convnet", 130.0), ("vae", 50.0)], None)]),
        (
            "2027",
            &[sub(&[("convnet", 10.0), ("vae", 50.0)], Some("2099-01-01"))],
        ),
    ])
}

fn series<'a>(doc: &'a Value, bench: &str) -> &'a Value {
    (doc["series"].as_array().unwrap().iter())
        .find(|s| s["bench"] == bench)
        .unwrap_or_else(|| panic!("no series of {bench}: {doc}"))
}

#[test]
fn each_series_has_its_figure_per_round_and_changes_flagged_only_outside_1() {
    let r = three_rounds();
    let (code, json, err) = run(
        &r.store(),
        "history",
        &["-f", "json", "--now", "2030-01-01"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("left out: 1 submission released after 2030-01-01"),
        "{err}"
    );
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["rounds"], serde_json::json!(["2025", "2026"]));
    assert_eq!(doc["series"].as_array().unwrap().len(), 2);
    let convnet = series(&doc, "convnet");
    assert_eq!(
        (&convnet["label"], &convnet["track"]),
        (&Value::from("vendorX"), &Value::from("baseline"))
    );
    let points = convnet["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    // The means are the ones written (each GPU's deviations sum to zero).
    assert!(close(f(&points[0]["mean"]), 100.0) && close(f(&points[1]["mean"]), 130.0));
    for (p, mean) in points.iter().zip([100.0, 130.0]) {
        let [lo, hi] = [f(&p["ci"][0]), f(&p["ci"][1])];
        // A resampled mean lies between the smallest and the largest sample.
        let lowest = mean * (1.0 + SPREAD.iter().flatten().cloned().fold(0.0, f64::min));
        let highest = mean * (1.0 + SPREAD.iter().flatten().cloned().fold(0.0, f64::max));
        assert!(
            lowest <= lo && lo < mean && mean < hi && hi <= highest,
            "{p}"
        );
        assert_eq!((f(&p["n"]), f(&p["gpus"])), (8.0, 2.0));
    }
    assert!(points[0]["change"].is_null());
    let change = &points[1]["change"];
    assert!(close(f(&change["ratio"]), 1.3), "{change}");
    assert!(close(f(&change["percent"]), 30.0));
    // Its interval: within the most the samples allow (highest ÷ lowest either way).
    let (lo, hi) = (f(&change["ci"][0]), f(&change["ci"][1]));
    let (least, most) = (1.3 * 0.98 / 1.02, 1.3 * 1.02 / 0.98);
    assert!(
        (least..1.3).contains(&lo) && hi > 1.3 && hi <= most,
        "{change}"
    );
    assert_eq!(
        (&change["flagged"], &change["direction"]),
        (&Value::Bool(true), &Value::from("up"))
    );
    assert_eq!(change["from"], "2025");
    // vae did not move: the interval holds 1, nothing is flagged.
    let vae = &series(&doc, "vae")["points"][1]["change"];
    let (lo, hi) = (f(&vae["ci"][0]), f(&vae["ci"][1]));
    assert!(
        close(f(&vae["ratio"]), 1.0) && lo < 1.0 && 1.0 < hi,
        "{vae}"
    );
    assert_eq!(
        (&vae["flagged"], &vae["direction"]),
        (&Value::Bool(false), &Value::Null)
    );
    assert_eq!(doc["flagged"], 1);
}

#[test]
fn the_table_csv_and_plot_say_the_same() {
    let r = three_rounds();
    let store = r.store();
    let (code, table, err) = run(&store, "history", &["--now", "2030-01-01"]);
    assert_eq!(code, 0, "{err}");
    assert!(table.contains("↑ +30.0 %"), "{table}");
    assert!(table.contains("1 change flagged"), "{table}");
    let (code, csv, _) = run(&store, "history", &["-f", "csv", "--now", "2030-01-01"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("label,track,hardware,bench,round,n,mean,ci_low,ci_high,change"));
    assert_eq!(lines.len(), 1 + 4, "{csv}");
    let up: Vec<&&str> = lines.iter().filter(|l| l.ends_with(",up")).collect();
    assert_eq!(up.len(), 1);
    assert!(up[0].contains(",convnet,2026,8,130"), "{csv}");
    // The release date has come by 2099-06-01: three rounds, convnet 130 → 10 flagged down.
    let (code, json, _) = run(&store, "history", &["-f", "json", "--now", "2099-06-01"]);
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["rounds"].as_array().unwrap().len(), 3);
    let last = &series(&doc, "convnet")["points"][2]["change"];
    assert_eq!(last["direction"], "down");
    assert!(close(f(&last["ratio"]), 10.0 / 130.0));
    // One panel per bench, PNG and SVG, the rounds along the x axis.
    let plots = r.root.path().join("plots");
    let (code, _, err) = run(
        &store,
        "history",
        &["--now", "2030-01-01", "--plot", plots.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    let svg = std::fs::read_to_string(plots.join("history-convnet.svg")).unwrap();
    assert!(svg.contains("2025") && svg.contains("2026") && svg.contains("vendorX"));
    assert!(plots.join("history-vae.png").is_file());
}

#[test]
fn a_zip_changed_on_disk_or_missing_is_refused_by_name() {
    let r = three_rounds();
    let store = r.store();
    let zip = kept_zip(&store, 2);
    let mut bytes = std::fs::read(&zip).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&zip, &bytes).unwrap();
    let (code, _, err) = run(&store, "history", &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!("#2 {}: changed on disk", zip.display())),
        "{err}"
    );
    std::fs::remove_file(&zip).unwrap();
    let (code, _, err) = run(&store, "history", &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("#2") && err.contains("missing"), "{err}");
    // No store at all: input, exit 2.
    let (code, _, err) = run(&r.root.path().join("nothing"), "history", &[]);
    assert_eq!(code, 2, "{err}");
}
