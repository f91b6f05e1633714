//! The smaller items an organizer ran into: `--out-dir` folders made, `plot loss` naming
//! what it leaves out, `--baseline` and `--explain` by path, counts of one in the singular.

use crate::fixtures::{entry, mlbench, read_entries};
use crate::vendors::four_vendors;
use mlbench_schema::Value;
use mlbench_schema::writer::stream_text;
use std::path::Path;

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `plot`'s `--out-dir` is made with its parents, as `man`'s is; never inside an input.
#[test]
fn plot_makes_its_out_dir_with_parents_but_never_inside_an_input() {
    let v = four_vendors();
    let deep = v.root.path().join("charts/a/b");
    mlbench()
        .args(["plot", "loss", "--format", "svg", "--out-dir"])
        .arg(&deep)
        .arg(v.dir('A'))
        .assert()
        .success();
    assert!(deep.join("loss-vendorA-convnet.svg").is_file());
    let inside = v.dir('A').join("charts/x");
    mlbench()
        .args(["plot", "loss", "--format", "svg", "--out-dir"])
        .arg(&inside)
        .arg(v.dir('A'))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("lies inside the input"));
    assert!(!v.dir('A').join("charts").exists());
}

/// The run and GPU of vendorB's NaN curve and its bench, found in its streams.
fn nan_curve(root: &Path) -> (String, String, String) {
    for run in std::fs::read_dir(root).unwrap() {
        let run = run.unwrap().path();
        if !run.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&run).unwrap() {
            let file = file.unwrap().path();
            for e in read_entries(&file) {
                let Some(Value::List(losses)) = e.fields.get("batch_loss") else {
                    continue;
                };
                if losses
                    .iter()
                    .any(|v| matches!(v, Value::Float(f) if f.is_nan()))
                {
                    let name = match e.fields.get("name") {
                        Some(Value::Str(s)) => s.to_string(),
                        other => panic!("name: {other:?}"),
                    };
                    let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
                    let gpu = stem.rsplit('_').next().unwrap().to_owned();
                    let run = run.file_name().unwrap().to_string_lossy().into_owned();
                    return (name, run, gpu);
                }
            }
        }
    }
    panic!("no NaN curve in {}", root.display());
}

/// vendorB's loss chart of the bench with the NaN names the curve it leaves out, in the
/// figure and on stderr, and its title counts the curves its legend lists.
#[test]
fn plot_loss_names_the_curve_it_leaves_out() {
    let v = four_vendors();
    let (bench, run, gpu) = nan_curve(&v.dir('B'));
    let out_dir = v.root.path().join("charts");
    let out = mlbench()
        .args(["plot", "loss", "--format", "svg", "--out-dir"])
        .arg(&out_dir)
        .arg(v.dir('B'))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let note = format!("left out: {run} GPU {gpu} (NaN or infinite loss)");
    let err = stderr_of(&out);
    assert!(err.contains(&format!("vendorB {bench}: {note}")), "{err}");
    let svg = std::fs::read_to_string(out_dir.join(format!("loss-vendorB-{bench}.svg"))).unwrap();
    assert!(svg.contains(&note), "{svg}");
    // 5 runs × 2 GPUs, one left out: the title says 9, the legend lists 9.
    assert!(svg.contains("5 runs × 2 GPUs (9 curves)"), "{svg}");
    let legend = svg.matches(".json#").count();
    assert_eq!(legend, 9);
    assert!(
        !svg.contains(&format!("({run}/fast_{gpu}.json#")),
        "the left-out curve drawn"
    );
    // A chart without a left-out curve has no note.
    let other = if bench == "convnet" { "vae" } else { "convnet" };
    let svg = std::fs::read_to_string(out_dir.join(format!("loss-vendorB-{other}.svg"))).unwrap();
    assert!(!svg.contains("left out"));
}

/// `--baseline` and `--explain` take a submission's path (zip or folder, relative or
/// absolute) as well as its label: the same grid either way.
#[test]
fn baseline_and_explain_take_a_path_or_a_label() {
    let v = four_vendors();
    let root = v.root.path();
    let grid = |subs: &[&str], extra: &[&str]| {
        let out = mlbench()
            .current_dir(root)
            .arg("grid")
            .args(subs)
            .args(["--format", "json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{subs:?} {extra:?}: {}",
            stderr_of(&out)
        );
        let mut json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        // Where the inputs were read from is not the grid.
        json.as_object_mut().unwrap().remove("inputs");
        json
    };
    let zips = ["vendorA.zip", "vendorB.zip"];
    let by_label = grid(
        &zips,
        &["--baseline", "vendorB", "--explain", "vendorA,vendorB"],
    );
    assert_eq!(by_label["baseline"], "vendorB", "{by_label}");
    let abs_b = root.join("vendorB.zip").display().to_string();
    for baseline in ["vendorB.zip", "./vendorB.zip", abs_b.as_str()] {
        for explain in ["vendorA,vendorB", "./vendorA.zip,vendorB.zip"] {
            let got = grid(&zips, &["--baseline", baseline, "--explain", explain]);
            assert_eq!(got, by_label, "--baseline {baseline} --explain {explain}");
        }
    }
    let dirs = ["vendorA", "vendorB"];
    let by_label = grid(&dirs, &["--baseline", "vendorB"]);
    let abs_b = root.join("vendorB").display().to_string();
    for baseline in ["./vendorB", "vendorB/", abs_b.as_str()] {
        assert_eq!(
            grid(&dirs, &["--baseline", baseline]),
            by_label,
            "{baseline}"
        );
    }
    // A path that is none of the submissions is refused, naming the labels.
    mlbench()
        .current_dir(root)
        .args([
            "grid",
            "vendorA.zip",
            "vendorB.zip",
            "--baseline",
            "./vendorC.zip",
        ])
        .assert()
        .code(2);
}

/// A submission of one report file, one GPU, one entry: every count of one in the
/// messages of validate, report and grid is in the singular.
#[test]
fn counts_of_one_are_singular() {
    let dir = tempfile::tempdir().unwrap();
    for v in ["a", "b"] {
        let run = dir.path().join(v).join("output0");
        std::fs::create_dir_all(&run).unwrap();
        let entries = vec![entry("atari", 5.5, 0, 0)];
        std::fs::write(run.join("fast_0.json"), stream_text(&entries)).unwrap();
    }
    let a = dir.path().join("a");
    let runs: Vec<Vec<&str>> = vec![
        vec!["validate"],
        vec!["report", "--gpu-model", "RTX", "--min-runs", "1"],
        vec![
            "report",
            "--gpu-model",
            "RTX",
            "--min-runs",
            "1",
            "--format",
            "markdown",
        ],
    ];
    let mut texts = Vec::new();
    for args in runs {
        let out = mlbench().args(&args).arg(&a).output().unwrap();
        texts.push(format!(
            "{args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            stderr_of(&out)
        ));
    }
    let out = mlbench()
        .arg("grid")
        .arg(&a)
        .arg(dir.path().join("b"))
        .args(["--min-runs", "1"])
        .output()
        .unwrap();
    texts.push(format!(
        "grid: {}{}",
        String::from_utf8_lossy(&out.stdout),
        stderr_of(&out)
    ));
    let all = texts.join("\n");
    // The inputs are of one file, GPU and entry, so the counts are there to check.
    assert!(all.contains("1 entry"), "{all}");
    assert!(all.contains("1 GPU"), "{all}");
    let nouns = [
        "entries",
        "files",
        "errors",
        "warnings",
        "benches",
        "runs",
        "configurations",
        "GPUs",
        "curves",
        "submissions",
    ];
    let mut found = Vec::new();
    for noun in nouns {
        let needle = format!("1 {noun}");
        for (at, _) in all.match_indices(&needle) {
            let before = all[..at].chars().last();
            if !before.is_some_and(|c| c.is_ascii_digit() || c == '.') {
                found.push(all[at.saturating_sub(40)..at + needle.len()].to_owned());
            }
        }
    }
    assert!(found.is_empty(), "{found:?} in:\n{all}");
}

/// `pack` names every file it leaves out (stderr and SUBMISSION.json's `left_out`), and
/// refuses, exit 1 and nothing written, when one is a report or the jobs file.
#[cfg(unix)]
#[test]
fn pack_names_what_it_leaves_out_and_refuses_a_needed_link() {
    let sub = crate::fixtures::copy_example();
    let dir = sub.path();
    let out = tempfile::tempdir().unwrap();
    let elsewhere = out.path().join("notes.txt");
    std::fs::write(&elsewhere, "notes").unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir.join("notes.txt")).unwrap();
    let zip = out.path().join("a.zip");
    let run = |zip: &Path| {
        mlbench()
            .arg("pack")
            .arg(dir)
            .arg("-o")
            .arg(zip)
            .output()
            .unwrap()
    };
    let packed = run(&zip);
    let err = stderr_of(&packed);
    assert_eq!(packed.status.code(), Some(0), "{err}");
    assert!(
        err.contains("left out: notes.txt (a symbolic link, not followed)"),
        "{err}"
    );
    let files = crate::fixtures::read_zip(&zip);
    let info = &files
        .iter()
        .find(|(p, _)| p == "SUBMISSION.json")
        .unwrap()
        .1;
    let info: serde_json::Value = serde_json::from_slice(info).unwrap();
    assert_eq!(
        info["left_out"],
        serde_json::json!([{"path": "notes.txt", "why": "a symbolic link, not followed"}])
    );
    assert!(!files.iter().any(|(p, _)| p == "notes.txt"));
    // The jobs file as a link, then a report file as one: refused, naming it.
    let needed = ["fast.json", "output0/fast_0.json"];
    for (k, rel) in needed.iter().enumerate() {
        let real = out.path().join(format!("real-{k}.json"));
        std::fs::rename(dir.join(rel), &real).unwrap();
        std::os::unix::fs::symlink(&real, dir.join(rel)).unwrap();
        let zip = out.path().join(format!("refused-{k}.zip"));
        let refused = run(&zip);
        let err = stderr_of(&refused);
        assert_eq!(refused.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "cannot be packed: {rel} (a symbolic link, not followed)"
            )),
            "{err}"
        );
        assert!(err.contains("copy each file in place of its link"), "{err}");
        assert!(!zip.exists());
        std::fs::remove_file(dir.join(rel)).unwrap();
        std::fs::rename(&real, dir.join(rel)).unwrap();
    }
}
