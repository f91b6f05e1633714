//! `system.json`, the machine a run ran on: read beside the reports, packed into
//! SUBMISSION.json, shown by `report` (notes, JSON, HTML) and not a stray file to `validate`.

use crate::fixtures::{copy_example, mlbench, read_zip, validate_json, warning};

/// Two nodes' descriptions, as `mlbench run` writes them on a shared output folder.
fn write_systems(root: &std::path::Path) {
    let node = |host: &str, driver: &str| {
        serde_json::json!({
            "schema_version": 1, "hostname": host, "tool": "mlbench 0.1.0",
            "commit": "abc", "libtorch": "2.13.0", "cuda": "12.4", "cudnn": null,
            "os": "Debian", "kernel": "6.1", "cpu": "EPYC 9654", "cores": 96,
            "memory_bytes": 1u64 << 40,
            "devices": [
                {"index": 0, "kind": "cuda", "name": "H100", "memory_bytes": 80u64 << 30,
                 "driver": driver, "compute_capability": "9.0"},
                {"index": 1, "kind": "cuda", "name": "H100", "memory_bytes": 80u64 << 30,
                 "driver": driver, "compute_capability": "9.0"}
            ],
            "a_field_of_a_later_version": true
        })
    };
    let write = |name: &str, value: serde_json::Value| {
        std::fs::write(root.join(name), serde_json::to_vec_pretty(&value).unwrap()).unwrap();
    };
    write("system.json", node("n1", "550.54"));
    write("system.n2.json", node("n2", "535.10"));
}

#[test]
fn report_names_each_machine_and_the_json_carries_them() {
    let dir = copy_example();
    write_systems(dir.path());
    let out = mlbench()
        .args(["report", "--reports"])
        .arg(dir.path())
        .args(["--gpu-model", "RTX"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains(
            "  system: n1: EPYC 9654, 96 cores, 1024.0 GiB; 2× H100 (driver 550.54); libtorch 2.13.0, CUDA 12.4\n"
        ),
        "{text}"
    );
    assert!(text.contains("  system: n2: "), "{text}");
    // The descriptions are known files: not counted as passed over.
    assert!(!text.contains("passed over"), "{text}");
    let out = mlbench()
        .args(["report", "--format", "json", "--reports"])
        .arg(dir.path())
        .args(["--gpu-model", "RTX"])
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let hosts: Vec<&str> = json["systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["hostname"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["n1", "n2"]);
    assert_eq!(json["systems"][1]["devices"][0]["driver"], "535.10");
}

#[test]
fn without_a_description_the_json_has_no_systems_key() {
    let dir = copy_example();
    let out = mlbench()
        .args(["report", "--format", "json", "--reports"])
        .arg(dir.path())
        .args(["--gpu-model", "RTX"])
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert!(json.get("systems").is_none());
}

#[test]
fn validate_accepts_them_and_pack_embeds_them() {
    let dir = copy_example();
    write_systems(dir.path());
    let (code, json) = validate_json(dir.path(), &[]);
    assert_eq!(code, 0, "{json}");
    let stray = warning("file.unknown", Some("system.json"), None, None);
    assert!(!crate::fixtures::findings(&json).contains(&stray), "{json}");
    let zip = dir.path().join("../packed-with-systems.zip");
    mlbench()
        .arg("pack")
        .arg(dir.path())
        .arg("-o")
        .arg(&zip)
        .assert()
        .success();
    let files = read_zip(&zip);
    let info = files
        .iter()
        .find(|(p, _)| p == "SUBMISSION.json")
        .map(|(_, b)| serde_json::from_slice::<serde_json::Value>(b).unwrap())
        .unwrap();
    assert_eq!(info["systems"][0]["hostname"], "n1");
    assert_eq!(info["systems"][1]["hostname"], "n2");
    assert!(files.iter().any(|(p, _)| p == "system.n2.json"));
    // The report of the zip reads them in place.
    let out = mlbench()
        .args(["report", "--reports"])
        .arg(&zip)
        .args(["--gpu-model", "RTX"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("  system: n2: EPYC 9654"), "{text}");
    let _ = std::fs::remove_file(&zip);
}

#[test]
fn the_report_page_has_a_system_table() {
    let dir = copy_example();
    write_systems(dir.path());
    let page = dir.path().join("../system-page.html");
    mlbench()
        .args(["report", "--reports"])
        .arg(dir.path())
        .args(["--gpu-model", "RTX", "--html"])
        .arg(&page)
        .args(["--force"])
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    let _ = std::fs::remove_file(&page);
    assert!(
        html.contains("<section id=\"sec-system\">\n<h2>System</h2>"),
        "{html}"
    );
    // One column per machine, its own driver in each.
    assert!(html.contains(
        "<thead><tr><th scope=\"col\">property</th><th scope=\"col\">n1</th><th scope=\"col\">n2</th></tr></thead>"
    ));
    assert!(html.contains("<tr><td>driver</td><td>550.54</td><td>535.10</td></tr>"));
    assert!(html.contains("<tr><td>devices</td><td>2× H100</td><td>2× H100</td></tr>"));
}

/// Nodes that differ, and a declared node missing from a run.
#[test]
fn fleet_rules_compare_the_declared_nodes() {
    use crate::fixtures::{edit_entries, findings, warning};
    let dir = copy_example();
    write_systems(dir.path());
    // GPU 0's streams ran on n1, GPU 1's on n2; run 3 lost n2's stream.
    for run in 0..5 {
        for (gpu, host) in [(0, "n1"), (1, "n2")] {
            let path = dir.path().join(format!("output{run}/fast_{gpu}.json"));
            edit_entries(&path, |entries| {
                for e in entries {
                    e.fields.insert("hostname", host);
                }
            });
        }
    }
    std::fs::remove_file(dir.path().join("output3/fast_1.json")).unwrap();
    let (_, json) = validate_json(dir.path(), &[]);
    let found = findings(&json);
    // The two descriptions differ in the driver only.
    let driver = warning("fleet.inconsistent", None, None, Some("driver"));
    assert!(found.contains(&driver), "{json}");
    let inconsistent: Vec<_> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "fleet.inconsistent")
        .collect();
    assert_eq!(inconsistent.len(), 1, "{inconsistent:?}");
    assert_eq!(inconsistent[0]["expected"], "driver 550.54 as on n1");
    assert_eq!(inconsistent[0]["found"], "535.10 on n2");
    let missing: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "fleet.node-missing")
        .map(|f| f["found"].as_str().unwrap())
        .collect();
    assert_eq!(missing, ["none in run output3"]);
}

/// Without descriptions the entries' `gpu` tells the nodes apart; alike nodes are quiet.
#[test]
fn without_descriptions_the_gpu_names_compare_the_nodes() {
    use crate::fixtures::edit_entries;
    let dir = copy_example();
    for run in 0..5 {
        for (gpu, host, model) in [(0, "a", "NVIDIA H100"), (1, "b", "NVIDIA A100")] {
            let path = dir.path().join(format!("output{run}/fast_{gpu}.json"));
            edit_entries(&path, |entries| {
                for e in entries {
                    e.fields.insert("hostname", host);
                    e.fields.insert("gpu", model);
                }
            });
        }
    }
    let (_, json) = validate_json(dir.path(), &[]);
    let inconsistent: Vec<_> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"].as_str().unwrap().starts_with("fleet."))
        .collect();
    assert_eq!(inconsistent.len(), 1, "{inconsistent:?}");
    assert_eq!(inconsistent[0]["expected"], "GPU model NVIDIA H100 as on a");
    assert_eq!(inconsistent[0]["found"], "NVIDIA A100 on b");
    let original = copy_example();
    let (_, json) = validate_json(original.path(), &[]);
    assert!(
        !json.to_string().contains("fleet."),
        "one node: no fleet rule"
    );
}
