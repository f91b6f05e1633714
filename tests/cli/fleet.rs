//! The fleet view of `report`: a submission whose entries name two hosts gets a fleet
//! section (table, JSON); one host gets none.

use crate::fixtures::{copy_example, edit_entries, mlbench};

fn report_json(dir: &std::path::Path) -> serde_json::Value {
    let out = mlbench()
        .args([
            "report",
            "--format",
            "json",
            "--gpu-model",
            "RTX",
            "--reports",
        ])
        .arg(dir)
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

#[test]
fn two_hosts_are_a_fleet_of_two_and_one_is_none() {
    let dir = copy_example();
    assert!(
        report_json(dir.path()).get("fleet").is_none(),
        "one host: no section"
    );
    // GPU 1's streams ran on a second node.
    for run in 0..5 {
        let path = dir.path().join(format!("output{run}/fast_1.json"));
        edit_entries(&path, |entries| {
            for e in entries {
                e.fields.insert("hostname", "vendor00-node-b");
            }
        });
    }
    let json = report_json(dir.path());
    let fleet = &json["fleet"];
    let nodes = fleet["nodes"].as_array().unwrap();
    let names: Vec<&str> = nodes.iter().map(|n| n["node"].as_str().unwrap()).collect();
    assert_eq!(names, ["vendor00-node", "vendor00-node-b"]);
    for n in nodes {
        assert_eq!(n["gpus"], 1);
        assert_eq!(n["runs"], 5);
        let (lo, hi, rel) = (
            n["ci_low"].as_f64().unwrap(),
            n["ci_high"].as_f64().unwrap(),
            n["relative"].as_f64().unwrap(),
        );
        assert!(lo <= rel && rel <= hi, "{n}");
    }
    // Two nodes: each bench's median is their midpoint m = (a + b) / 2, so the two ratios
    // multiply to ab / m² ≤ 1 (AM–GM), bench by bench and so in the geometric mean.
    let product = nodes[0]["relative"].as_f64().unwrap() * nodes[1]["relative"].as_f64().unwrap();
    assert!(product <= 1.0 + 1e-12, "{product}");
    let keys: Vec<&str> = fleet
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["nodes", "p10", "within_5pct"]);
    let out = mlbench()
        .args(["report", "--gpu-model", "RTX", "--reports"])
        .arg(dir.path())
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("  fleet: 2 nodes; the 10th-percentile node at "),
        "{text}"
    );
    assert!(
        text.contains("Fleet: each node against the median node"),
        "{text}"
    );
}

#[test]
fn plot_fleet_draws_the_nodes_and_refuses_a_single_host() {
    let dir = copy_example();
    for run in 0..5 {
        let path = dir.path().join(format!("output{run}/fast_1.json"));
        edit_entries(&path, |entries| {
            for e in entries {
                e.fields.insert("hostname", "vendor00-node-b");
            }
        });
    }
    let out = tempfile::tempdir().unwrap();
    mlbench()
        .args(["plot", "fleet", "--format", "svg", "--from"])
        .arg(dir.path())
        .arg("--out-dir")
        .arg(out.path().join("p"))
        .assert()
        .success();
    let files: Vec<String> = std::fs::read_dir(out.path().join("p"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].starts_with("fleet-") && files[0].ends_with(".svg"));
    let svg = std::fs::read_to_string(out.path().join("p").join(&files[0])).unwrap();
    assert!(
        svg.contains("vendor00-node-b") && svg.contains("median node"),
        "{svg}"
    );
    // One host: no fleet to compare, an error that says why (exit 2), nothing written.
    let single = copy_example();
    mlbench()
        .args(["plot", "fleet", "--format", "svg"])
        .arg(single.path())
        .arg("--out-dir")
        .arg(out.path().join("q"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "its entries name one host: a fleet plot compares the nodes of a submission run on several hosts",
        ));
    assert!(!out.path().join("q").exists());
}

/// `grid --scaling`: one GPU at 10 and 20 items/s per run (mean 15), then four GPUs at
/// 13.5 each: throughput 15 and 54, efficiency 13.5 ÷ 15 = 90 %.
#[test]
fn grid_scaling_by_hand() {
    use crate::fixtures::write_samples;
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("one");
    let four = tmp.path().join("four");
    write_samples(&one, &[("cart", vec![vec![10.0, 20.0]])]);
    write_samples(&four, &[("cart", vec![vec![13.5, 13.5]; 4])]);
    let out = mlbench()
        .args(["grid", "--scaling", "--format", "json"])
        .arg(&four)
        .arg(&one)
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["reference"], "one");
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows[0]["label"], "one");
    assert_eq!(rows[0]["devices"], 1);
    assert_eq!(rows[1]["devices"], 4);
    let cart = &rows[1]["benches"]["cart"];
    assert_eq!(cart["per_device"], 13.5);
    assert_eq!(cart["throughput"], 54.0);
    assert!((cart["efficiency"].as_f64().unwrap() - 0.9).abs() < 1e-12);
    assert!((rows[1]["efficiency"].as_f64().unwrap() - 0.9).abs() < 1e-12);
    assert_eq!(rows[0]["benches"]["cart"]["throughput"], 15.0);
    // The plot: one chart, a bar per size and bench.
    let plots = tmp.path().join("plots");
    mlbench()
        .args(["plot", "scaling", "--format", "svg", "--from"])
        .arg(&four)
        .arg(&one)
        .arg("--out-dir")
        .arg(&plots)
        .assert()
        .success();
    let svg = std::fs::read_to_string(plots.join("scaling.svg")).unwrap();
    assert!(
        svg.contains("four (4 devices)") && svg.contains("linear scaling"),
        "{svg}"
    );
    // One submission is no scaling study.
    mlbench()
        .args(["grid", "--scaling"])
        .arg(&one)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "a scaling table compares one vendor's submissions at several sizes: give at least two",
        ));
}

/// A real series has whole-machine benches too: `convnet_distributed` on one device at
/// 100 items/s, on four at 360 (one entry per run for all of them, `vcd` 0,1,2,3):
/// throughput 100 and 360, per device 100 and 90, efficiency 90 %. Submissions of one
/// size are not a series: refused, with their names.
#[test]
fn grid_scaling_counts_whole_machine_benches_and_refuses_one_size() {
    use crate::fixtures::{entry, write_samples};
    let tmp = tempfile::tempdir().unwrap();
    let (one, four) = (tmp.path().join("one"), tmp.path().join("four"));
    write_samples(&one, &[("cart", vec![vec![10.0, 20.0]])]);
    write_samples(&four, &[("cart", vec![vec![13.5, 13.5]; 4])]);
    for (root, devices, value) in [(&one, 1u32, 100.0), (&four, 4, 360.0)] {
        for run in 0..2 {
            let path = root.join(format!("output{run}/fast_0.json"));
            let mut whole = entry("convnet_distributed", value, 0, run);
            let ids: Vec<String> = (0..devices).map(|d| d.to_string()).collect();
            whole.fields.insert("vcd", ids.join(","));
            whole.fields.insert("devices", i64::from(devices));
            edit_entries(&path, |entries| entries.push(whole));
        }
    }
    let out = mlbench()
        .args(["grid", "--scaling", "--format", "json"])
        .arg(&one)
        .arg(&four)
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(
        (rows[0]["devices"].as_u64(), rows[1]["devices"].as_u64()),
        (Some(1), Some(4))
    );
    let whole = &rows[1]["benches"]["convnet_distributed"];
    assert_eq!(whole["throughput"], 360.0);
    assert_eq!(whole["per_device"], 90.0);
    assert_eq!(whole["devices"], 4);
    assert_eq!(whole["whole_machine"], true);
    assert!((whole["efficiency"].as_f64().unwrap() - 0.9).abs() < 1e-12);
    assert_eq!(
        rows[0]["benches"]["convnet_distributed"]["throughput"],
        100.0
    );
    assert!(rows[0]["benches"]["cart"].get("whole_machine").is_none());
    // Overall: the geometric mean of cart's 0.9 and convnet_distributed's 0.9.
    assert!((rows[1]["efficiency"].as_f64().unwrap() - 0.9).abs() < 1e-12);
    let table = mlbench()
        .args(["grid", "--scaling"])
        .arg(&one)
        .arg(&four)
        .assert()
        .success();
    let text = String::from_utf8(table.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("convnet_distributed (whole machine)"),
        "{text}"
    );
    // Three submissions, two of them at four devices: not a series.
    let other = tmp.path().join("other");
    write_samples(&other, &[("cart", vec![vec![13.0, 13.0]; 4])]);
    let plots = tmp.path().join("p").display().to_string();
    for command in [
        &["grid", "--scaling"][..],
        &["plot", "scaling", "--out-dir", &plots],
    ] {
        mlbench()
            .args(command)
            .arg(&one)
            .arg(&four)
            .arg(&other)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(
                "four and other ran on 4 devices each: a scaling series is one vendor's submissions at different sizes",
            ));
    }
}

/// Runs numbered across array tasks (the Slurm layout): node a ran runs 0–1, node b runs
/// 2–3, each on its GPUs 0 and 1. Those are four GPUs, named `host/index`, not two.
#[test]
fn gpus_of_different_nodes_are_different_gpus() {
    use crate::fixtures::{spread, write_samples};
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sub");
    write_samples(&root, &[("cart", spread(2000.0)), ("atari", spread(5.4))]);
    for run in 0..4 {
        for gpu in 0..2 {
            let path = root.join(format!("output{run}/fast_{gpu}.json"));
            edit_entries(&path, |entries| {
                for e in entries {
                    e.fields.insert("hostname", if run < 2 { "a" } else { "b" });
                }
            });
        }
    }
    let out = mlbench()
        .args([
            "report",
            "--format",
            "json",
            "--scoring",
            "score",
            "--min-runs",
            "2",
        ])
        .args(["--gpu-model", "RTX", "--reports"])
        .arg(&root)
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(json["gpus"], 4);
    let gpus: Vec<&String> = json["per_gpu"]["mean"]["cart"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(gpus, ["a/0", "a/1", "b/0", "b/1"]);
    let nodes = json["fleet"]["nodes"].as_array().unwrap();
    assert_eq!(
        (nodes[0]["gpus"].as_u64(), nodes[0]["runs"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(
        (nodes[1]["gpus"].as_u64(), nodes[1]["runs"].as_u64()),
        (Some(2), Some(2))
    );
}

/// The example's 5 runs twice (10 runs), their streams spread over six nodes,
/// `node-<gpu>-<run mod 3>` (3 or 4 runs each, enough to be tested); GPU 1's streams on
/// H100s at twice the throughput (`slow`: node-0-1's values × that factor).
fn mixed_fleet(slow: f64) -> tempfile::TempDir {
    use crate::fixtures::{copy_tree, edit_object};
    use mlbench_schema::Value;
    let dir = copy_example();
    for run in 0..5 {
        let from = dir.path().join(format!("output{run}"));
        copy_tree(&from, &dir.path().join(format!("output{}", run + 5)));
    }
    for run in 0..10 {
        for gpu in 0..2 {
            let path = dir.path().join(format!("output{run}/fast_{gpu}.json"));
            let node = format!("node-{gpu}-{}", run % 3);
            let factor = match (gpu, run % 3) {
                (1, _) => 2.0,
                (0, 1) => slow,
                _ => 1.0,
            };
            edit_entries(&path, |entries| {
                for e in entries {
                    e.fields.insert("hostname", node.as_str());
                    if gpu == 1 {
                        e.fields.insert("gpu", "NVIDIA H100 80GB HBM3");
                    }
                    edit_object(&mut e.fields, "train_item", |item| {
                        let avg = item.get("avg").and_then(Value::as_f64).unwrap();
                        item.insert("avg", avg * factor);
                    });
                }
            });
        }
    }
    dir
}

fn flagged(json: &serde_json::Value) -> Vec<String> {
    let nodes = json["fleet"]["nodes"].as_array().unwrap();
    nodes
        .iter()
        .filter(|n| n["flagged"] == true)
        .map(|n| n["node"].as_str().unwrap().to_owned())
        .collect()
}

/// A fleet of TITAN RTX and H100 nodes, the H100s twice as fast and nothing wrong: no
/// slow node, no straggler (peers are nodes and GPUs of one model), and a note says so.
#[test]
fn a_mixed_fleet_with_no_slow_node_flags_nothing() {
    let dir = mixed_fleet(1.0);
    let json = report_json(dir.path());
    assert_eq!(json["fleet"]["nodes"].as_array().unwrap().len(), 6);
    assert_eq!(flagged(&json), Vec::<String>::new(), "{:#}", json["fleet"]);
    assert_eq!(json["stragglers"], serde_json::json!([]));
    let out = mlbench()
        .args(["report", "--gpu-model", "RTX"])
        .arg(dir.path())
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("mixed hardware: 2 GPU models (NVIDIA H100 80GB HBM3, TITAN RTX); stragglers and slow nodes are looked for among peers of one model"),
        "{text}"
    );
}

/// The same fleet with one TITAN RTX node 20 % slow: it is flagged among its model's
/// nodes, and no H100 node is.
#[test]
fn a_slow_node_among_its_models_peers_is_still_flagged() {
    let dir = mixed_fleet(0.8);
    let json = report_json(dir.path());
    assert_eq!(flagged(&json), ["node-0-1"], "{:#}", json["fleet"]);
    let stragglers: Vec<&str> = json["stragglers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["gpu"].as_str().unwrap())
        .collect();
    assert_eq!(stragglers, ["node-0-1/0"]);
}
