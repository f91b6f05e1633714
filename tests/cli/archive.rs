//! `mlbench archive`: a store of rounds, on the four vendors (`vendors.rs`), with the
//! hostile cases: a zip changed on disk, a zip missing, two adds racing, the same zip
//! under two labels, a release date in the future.

use crate::fixtures::mlbench;
use crate::vendors::{Vendors, four_vendors};
use serde_json::Value;
use std::path::Path;
use std::sync::OnceLock;

fn vendors() -> &'static Vendors {
    static VENDORS: OnceLock<Vendors> = OnceLock::new();
    VENDORS.get_or_init(four_vendors)
}

/// `mlbench archive --store STORE ARGS…`: exit status, stdout, stderr.
fn archive(store: &Path, args: &[&str]) -> (i32, String, String) {
    let out = (mlbench().arg("archive").arg("--store").arg(store))
        .args(args)
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (
        out.status.code().unwrap(),
        text(out.stdout),
        text(out.stderr),
    )
}

/// The store's entries as `list -f json` gives them.
fn entries(store: &Path) -> Vec<Value> {
    let (code, json, err) = archive(store, &["list", "-f", "json"]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["schema_version"], 1);
    doc["entries"].as_array().unwrap().clone()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn adds_keep_each_zip_by_its_hash_with_what_it_is() {
    let v = vendors();
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let (a, b) = (v.zip('A'), v.zip('B'));
    let args = ["add", "2026", path(&a), path(&b), "--release", "2027-01-15"];
    let (code, _, err) = archive(&store, &args);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("archived vendorA as #1 (round 2026"), "{err}");
    let all = entries(&store);
    assert_eq!(all.len(), 2);
    let sha = crate::fixtures::sha256_hex(&std::fs::read(&a).unwrap());
    assert_eq!(all[0]["sha256"], sha.as_str());
    // Kept at its address, byte for byte.
    let kept = store.join(format!("zips/sha256/{}/{sha}.zip", &sha[..2]));
    assert_eq!(std::fs::read(kept).unwrap(), std::fs::read(&a).unwrap());
    // What it is: hardware, runtime, verdict, dates, the tool.
    assert_eq!(all[0]["gpus"], "2 × TITAN RTX");
    assert_eq!(all[0]["hardware"]["hosts"][0], "vendorA-node");
    assert_eq!(
        all[0]["runtime"],
        "mila-iqia/training scripts (torch version unknown)"
    );
    assert_eq!(
        (&all[0]["passed"], &all[1]["passed"]),
        (&Value::Bool(true), &Value::Bool(false))
    );
    assert_eq!(
        (&all[1]["errors"], &all[1]["allowed_errors"]),
        (&Value::from(1), &Value::Bool(true))
    );
    // A release date in the future is recorded as given.
    assert_eq!(all[1]["released"], "2027-01-15");
    assert!(all[0]["tool"].as_str().unwrap().starts_with("mlbench "));
    // The same bytes again: a no-op that says so.
    let (code, _, err) = archive(&store, &["add", "2026", path(&a)]);
    assert_eq!(code, 0);
    assert!(err.contains("already archived: vendorA as #1") && err.contains("nothing changed"));
    assert_eq!(entries(&store).len(), 2);
    // The same zip under another label: refused, naming the entry that has it.
    let other = format!("vendorZ={}", path(&a));
    let (code, _, err) = archive(&store, &["add", "2026", path(&a), "--label", &other]);
    assert_eq!(code, 2);
    assert!(
        err.contains("already archived as #1, round 2026, label vendorA"),
        "{err}"
    );
    // Other bytes under a label the round holds: refused until it is removed.
    let c = v.zip('C');
    let c_as_a = format!("vendorA={}", path(&c));
    let add_c = ["add", "2026", path(&c), "--label", &c_as_a];
    let (code, _, err) = archive(&store, &add_c);
    assert_eq!(code, 2);
    assert!(err.contains("`mlbench archive remove 1` first"), "{err}");
    assert_eq!(archive(&store, &["remove", "1"]).0, 0);
    assert_eq!(archive(&store, &add_c).0, 0);
    let all = entries(&store);
    assert_eq!(all.len(), 3);
    assert!(all[0]["removed"].is_string());
    // A folder is packed first; --store comes after the subcommand too.
    let folder = v.dir('D');
    let out = (mlbench()
        .args(["archive", "add", "2027"])
        .arg(&folder)
        .arg("--store")
        .arg(&store))
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d = &entries(&store)[3];
    assert_eq!(
        (&d["label"], &d["round"]),
        (&Value::from("vendorD"), &Value::from("2027"))
    );
    assert_eq!(d["gpus"], format!("2 × {}", crate::vendors::H100));
}

#[test]
fn show_finds_by_id_or_hash_prefix_and_bad_requests_exit_2() {
    let v = vendors();
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    assert_eq!(archive(&store, &["add", "r1", path(&v.zip('A'))]).0, 0);
    let (_, json, _) = archive(&store, &["show", "#1", "-f", "json"]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    let sha = doc["entries"][0]["sha256"].as_str().unwrap().to_owned();
    let (code, json, _) = archive(&store, &["show", &sha[..10], "-f", "json"]);
    assert_eq!(code, 0);
    assert!(json.contains(&sha));
    let (code, csv, _) = archive(&store, &["list", "-f", "csv"]);
    assert_eq!(code, 0);
    assert!(csv.lines().nth(1).unwrap().ends_with(&sha), "{csv}");
    for (args, said) in [
        (vec!["show", "7"], "no archived submission 7"),
        (vec!["remove", "7"], "no archived submission 7"),
        (
            vec!["add", "r1", path(&v.zip('B')), "--release", "2027-02-30"],
            "not a date",
        ),
    ] {
        let (code, _, err) = archive(&store, &args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(said), "{err}");
    }
    // MLBENCH_STORE names the store when --store does not.
    let out = (mlbench().args(["archive", "list", "-f", "json"]))
        .env("MLBENCH_STORE", &store)
        .output()
        .unwrap();
    assert!(String::from_utf8(out.stdout).unwrap().contains(&sha));
}

#[test]
fn check_names_a_changed_zip_and_a_missing_one() {
    let v = vendors();
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let zips = [v.zip('A'), v.zip('B'), v.zip('D')];
    let mut args = vec!["add", "2026"];
    args.extend(zips.iter().map(|z| path(z)));
    assert_eq!(archive(&store, &args).0, 0);
    let (code, out, err) = archive(&store, &["check"]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(
        err.contains("checked 3 entries") && err.contains("0 problems"),
        "{err}"
    );
    let all = entries(&store);
    let kept = |i: usize| {
        let sha = all[i]["sha256"].as_str().unwrap();
        store.join(format!("zips/sha256/{}/{sha}.zip", &sha[..2]))
    };
    // One byte changed in the first zip; the second gone.
    let mut bytes = std::fs::read(kept(0)).unwrap();
    bytes[100] ^= 1;
    std::fs::write(kept(0), &bytes).unwrap();
    std::fs::remove_file(kept(1)).unwrap();
    let (code, out, err) = archive(&store, &["check"]);
    assert_eq!(code, 1, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("#1 ") && lines[0].contains("changed on disk"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("#2 ") && lines[1].contains("missing"),
        "{out}"
    );
    assert!(err.contains("2 problems"));
    // Adding the changed zip's original again is refused: its address holds other bytes.
    let (code, _, err) = archive(&store, &["add", "2026", path(&zips[0])]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("the store was changed on disk"), "{err}");
}

#[test]
fn two_adds_racing_both_land_and_the_store_stays_whole() {
    let v = vendors();
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    // Four processes at once: A and B twice each.
    let children: Vec<std::process::Child> = ['A', 'B', 'A', 'B']
        .iter()
        .map(|&c| {
            let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("mlbench"));
            cmd.arg("archive").arg("--store").arg(&store);
            cmd.args(["add", "2026"]).arg(v.zip(c));
            cmd.stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let all = entries(&store);
    let labels: Vec<&str> = all.iter().map(|e| e["label"].as_str().unwrap()).collect();
    let mut sorted = labels.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["vendorA", "vendorB"], "{labels:?}");
    assert_eq!(archive(&store, &["check"]).0, 0);
    assert_eq!(std::fs::read_dir(store.join("tmp")).unwrap().count(), 0);
}
