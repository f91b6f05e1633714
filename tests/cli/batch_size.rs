//! `mlbench report --by batch_size` and `mlbench plot batch-size`: a submission generated
//! with three batch sizes per bench, its figures against the means computed here from the
//! values written.

use crate::fixtures::{SPREAD, close, entry, f, mlbench, names_in, read_text, write_entries};
use mlbench_schema::ReportEntry;
use std::path::Path;

/// The batch sizes of the sweep.
const SIZES: [i64; 3] = [64, 128, 256];

/// Each bench's mean at each batch size, and the factor of its spread ([`SPREAD`]).
/// convnet gains at every step; vae loses at the largest batch; loader's last gain (0.4 %)
/// is inside its interval (its samples spread twice as much, ±4 %), so it stops paying at
/// 128 although 256 has the highest mean: the case where the rule matters. loader also
/// has a built-in selection rule (`batch_size = 256`) that the sweep does not apply.
const SWEEP: [(&str, [f64; 3], f64); 3] = [
    ("convnet", [100.0, 180.0, 300.0], 1.0),
    ("vae", [7600.0, 9000.0, 8100.0], 1.0),
    ("loader", [1000.0, 1500.0, 1506.0], 2.0),
];

/// The throughput written for a bench of mean `mean` and spread `k` on `gpu` in `run`.
fn value(mean: f64, k: f64, gpu: usize, run: usize) -> f64 {
    mean * (1.0 + k * SPREAD[gpu][run])
}

/// 4 runs × 2 GPUs of legacy streams: every bench of [`SWEEP`] at every batch size (the
/// sizes in turn, as a Cartesian `--batch-size` runs them), then atari, which records
/// none it was given.
fn write_sweep(root: &Path) {
    for run in 0..4 {
        let dir = root.join(format!("output{run}"));
        std::fs::create_dir_all(&dir).unwrap();
        for gpu in 0..2 {
            let mut entries: Vec<ReportEntry> = Vec::new();
            for (i, size) in SIZES.iter().enumerate() {
                for (bench, means, k) in SWEEP {
                    let mut e = entry(bench, value(means[i], k, gpu, run), gpu as u32, run);
                    e.fields.insert("batch_size", *size);
                    entries.push(e);
                }
            }
            entries.push(entry("atari", 5.5, gpu as u32, run));
            write_entries(&dir.join(format!("fast_{gpu}.json")), &entries);
        }
    }
}

/// The values written for `bench` at batch size index `i`, every run and GPU.
fn written(bench: &str, i: usize) -> Vec<f64> {
    let (_, means, k) = SWEEP.iter().find(|s| s.0 == bench).unwrap();
    let mut out = Vec::new();
    for run in 0..4 {
        for gpu in 0..2 {
            out.push(value(means[i], *k, gpu, run));
        }
    }
    out
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The mean of `bench` at each batch size, from the values written.
fn means_of(bench: &str) -> Vec<f64> {
    (0..SIZES.len()).map(|i| mean(&written(bench, i))).collect()
}

fn sweep_dir() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    write_sweep(&sub);
    let path = sub.to_string_lossy().into_owned();
    (dir, path)
}

fn stdout_of(args: &[&str]) -> (String, String) {
    let out = mlbench().args(args).assert().success().get_output().clone();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (text(out.stdout), text(out.stderr))
}

/// The rule of docs/batch-size.md, applied to the means and the gains' lower ends.
fn stops_paying_at(gain_lows: &[f64]) -> Option<i64> {
    let at = gain_lows.iter().position(|lo| *lo <= 1.0)?;
    Some(SIZES[at])
}

#[test]
fn the_json_has_every_figure_of_the_sweep() {
    let (_dir, sub) = sweep_dir();
    let (out, err) = stdout_of(&[
        "report",
        &sub,
        "-g",
        "RTX",
        "--by",
        "batch_size",
        "-f",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["suite"], "fast");
    assert_eq!(v["batch_sizes"], serde_json::json!(SIZES));
    assert_eq!(v["resamples"], 2000);
    assert_eq!(v["level"], 0.95);
    // By GPU model, then bench: atari is left out, with a note saying why.
    let benches = v["benches"].as_array().unwrap();
    let names: Vec<&str> = benches
        .iter()
        .map(|b| b["bench"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["convnet", "loader", "vae"]);
    assert!(
        err.contains("left out: atari: 8 entries record no batch size"),
        "{err}"
    );
    assert!(!err.contains("conflict"), "{err}");
    for b in benches {
        let bench = b["bench"].as_str().unwrap();
        assert_eq!(b["gpu_model"], "TITAN RTX");
        let means = means_of(bench);
        let points = b["points"].as_array().unwrap();
        assert_eq!(points.len(), 3, "{bench}");
        let mut gain_lows = Vec::new();
        for (i, p) in points.iter().enumerate() {
            let values = written(bench, i);
            assert_eq!(p["batch_size"], SIZES[i]);
            assert_eq!((p["n"].as_u64(), p["gpus"].as_u64()), (Some(8), Some(2)));
            assert!(close(f(&p["items_per_second"]), means[i]), "{bench} {p}");
            // A percentile interval of resampled means: around the mean, inside the values.
            let (lo, hi) = (f(&p["ci"][0]), f(&p["ci"][1]));
            let (min, max) = values
                .iter()
                .fold((f64::MAX, 0.0f64), |(a, b), v| (a.min(*v), b.max(*v)));
            assert!(
                min <= lo && lo < means[i] && means[i] < hi && hi <= max,
                "{bench} {p}"
            );
            assert!(close(f(&p["ratio"]), means[i] / means[0]), "{bench} {p}");
            assert!(
                f(&p["ratio_ci"][0]) <= f(&p["ratio"]) && f(&p["ratio"]) <= f(&p["ratio_ci"][1])
            );
            if i == 0 {
                assert!(p["gain"].is_null() && p["gain_ci"].is_null());
                assert_eq!(p["ratio_ci"], serde_json::json!([1.0, 1.0]));
                continue;
            }
            assert!(close(f(&p["gain"]), means[i] / means[i - 1]), "{bench} {p}");
            let (glo, ghi) = (f(&p["gain_ci"][0]), f(&p["gain_ci"][1]));
            assert!(glo <= f(&p["gain"]) && f(&p["gain"]) <= ghi, "{bench} {p}");
            gain_lows.push(glo);
        }
        let best = (0..3)
            .max_by(|a, b| means[*a].total_cmp(&means[*b]))
            .unwrap();
        assert_eq!(b["best_batch_size"], SIZES[best], "{bench}");
        let stops = stops_paying_at(&gain_lows);
        assert_eq!(b["stops_paying_at"].as_i64(), stops, "{bench}");
    }
    // What the design says, besides the rule applied to the figures above.
    let by = |name: &str| benches.iter().find(|b| b["bench"] == name).unwrap();
    assert_eq!(
        (
            by("convnet")["best_batch_size"].as_i64(),
            by("convnet")["stops_paying_at"].as_i64()
        ),
        (Some(256), None)
    );
    assert_eq!(
        (
            by("vae")["best_batch_size"].as_i64(),
            by("vae")["stops_paying_at"].as_i64()
        ),
        (Some(128), Some(128))
    );
    assert_eq!(
        (
            by("loader")["best_batch_size"].as_i64(),
            by("loader")["stops_paying_at"].as_i64()
        ),
        (Some(256), Some(128))
    );
}

#[test]
fn the_csv_has_a_row_per_bench_and_a_column_per_batch_size() {
    let (_dir, sub) = sweep_dir();
    let (out, _) = stdout_of(&[
        "report",
        &sub,
        "-g",
        "RTX",
        "--by",
        "batch-size",
        "-f",
        "csv",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "gpu_model,bench,64,128,256,best_batch_size,stops_paying_at"
    );
    assert_eq!(lines.len(), 4, "{out}");
    let expected = [
        ("convnet", "256", ""),
        ("loader", "256", "128"),
        ("vae", "128", "128"),
    ];
    for (line, (bench, best, stops)) in lines[1..].iter().zip(expected) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells[..2], ["TITAN RTX", bench]);
        for (cell, want) in cells[2..5].iter().zip(means_of(bench)) {
            assert!(close(cell.parse().unwrap(), want), "{line}");
        }
        assert_eq!(cells[5..], [best, stops], "{line}");
    }
}

#[test]
fn the_table_and_markdown_mark_the_best_batch_and_where_it_stops_paying() {
    let (_dir, sub) = sweep_dir();
    let (table, err) = stdout_of(&["report", &sub, "-g", "RTX", "--by", "batch_size"]);
    // The notes are in the table, not on standard error.
    assert!(err.is_empty(), "{err}");
    assert!(
        table.contains("Throughput by batch size on TITAN RTX"),
        "{table}"
    );
    assert!(table.contains("left out: atari"), "{table}");
    let row = |bench: &str, size: &str| {
        table
            .lines()
            .find(|l| {
                let cells: Vec<&str> = l.split_whitespace().collect();
                cells.first() == Some(&bench) && cells.get(1) == Some(&size)
            })
            .unwrap_or_else(|| panic!("no row {bench} {size}: {table}"))
    };
    assert!(row("loader", "128").trim_end().ends_with("stops paying"));
    assert!(row("loader", "256").trim_end().ends_with("best"));
    assert!(row("vae", "128").trim_end().ends_with("best, stops paying"));
    // convnet at 128: 180 items/s (1.800× the smallest batch).
    let convnet = row("convnet", "128");
    assert!(
        convnet.contains("180.00") && convnet.contains("1.800×"),
        "{convnet}"
    );
    insta::assert_snapshot!("batch_size_table", table);
    let (md, _) = stdout_of(&[
        "report",
        &sub,
        "-g",
        "RTX",
        "--by",
        "batch_size",
        "-f",
        "markdown",
    ]);
    assert!(md.starts_with("## Batch sizes of suite `fast`\n"), "{md}");
    assert!(md.contains("### Best batch"), "{md}");
    assert!(
        md.contains("| loader | TITAN RTX | 64, 128, 256 | 256 |"),
        "{md}"
    );
}

/// The plain report still sets two thirds of the sweep aside against the targets, and
/// says where to look; loader's selection rule keeps its 256 alone.
#[test]
fn the_plain_report_points_to_the_batch_size_view() {
    let (_dir, sub) = sweep_dir();
    let (_, err) = stdout_of(&["report", &sub, "-g", "RTX", "-f", "json"]);
    // 8 entries at each size: the first seen (64) is kept, each other size set aside.
    for other in ["128", "256"] {
        let line = format!(
            "conflict: convnet: 8 entries set aside, their configuration differs from the 8 kept (batch_size: 64 here, {other} there); a batch-size sweep: `mlbench report --by batch_size` shows each;"
        );
        assert!(err.contains(&line), "{err}");
    }
    assert!(
        err.contains("not selected: 16 entries by the rule loader: only batch_size = 256"),
        "{err}"
    );
}

#[test]
fn the_plot_draws_a_line_per_bench_at_the_heights_of_the_means() {
    let (dir, sub) = sweep_dir();
    let out = dir.path().join("plots");
    let out_dir = out.to_string_lossy().into_owned();
    mlbench()
        .args([
            "plot",
            "batch-size",
            &sub,
            "-g",
            "RTX",
            "--out-dir",
            &out_dir,
        ])
        .assert()
        .success();
    let names = names_in(&out);
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names.iter().all(|n| n.starts_with("batch-size-TITAN_RTX")),
        "{names:?}"
    );
    let svg = read_text(&out.join(names.iter().find(|n| n.ends_with(".svg")).unwrap()));
    // The lines through the points (the axes, bars and legend keys are drawn opaque).
    assert_eq!(svg.matches("opacity=\"0.9\"").count(), 3, "{svg}");
    for text in ["convnet", "loader", "vae", "\n64\n", "\n128\n", "\n256\n"] {
        assert!(svg.contains(text), "{text}");
    }
    // The dots, bench by bench (convnet, loader, vae) and batch by batch: one larger dot
    // per bench (its best batch), and their heights in the order of the means.
    let dots: Vec<(f64, f64, f64)> = svg
        .split("<circle")
        .skip(1)
        .map(|c| {
            let attr = |name: &str| -> f64 {
                let at = c.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
                c[at..at + c[at..].find('"').unwrap()].parse().unwrap()
            };
            (attr("cx"), attr("cy"), attr("r"))
        })
        .collect();
    assert_eq!(dots.len(), 9, "{svg}");
    let means: Vec<f64> = ["convnet", "loader", "vae"]
        .iter()
        .flat_map(|b| means_of(b))
        .collect();
    for (i, a) in dots.iter().enumerate() {
        for (j, b) in dots.iter().enumerate() {
            if means[i] > means[j] * 1.01 {
                assert!(
                    a.1 < b.1,
                    "dot {i} ({}) is not above dot {j} ({})",
                    means[i],
                    means[j]
                );
            }
        }
    }
    let large: Vec<usize> = (0..9).filter(|i| dots[*i].2 > 3.0).collect();
    assert_eq!(large, [2, 5, 7]);
    // 128 midway between 64 and 256 on the logarithmic axis.
    let (x64, x128, x256) = (dots[0].0, dots[1].0, dots[2].0);
    assert!(
        ((x128 - x64) - (x256 - x128)).abs() <= 1.0,
        "{x64} {x128} {x256}"
    );
}

#[test]
fn the_view_refuses_what_it_does_not_compute() {
    let (dir, sub) = sweep_dir();
    let page = dir.path().join("page.html").to_string_lossy().into_owned();
    for extra in [
        &["--html", page.as_str()][..],
        &["--check"],
        &["--ci"],
        &["--price", "9"],
    ] {
        mlbench()
            .args(["report", &sub, "-g", "RTX", "--by", "batch_size"])
            .args(extra)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("cannot be used with"));
    }
    mlbench()
        .args([
            "report",
            &sub,
            "-g",
            "RTX",
            "--by",
            "batch_size",
            "--min-runs",
            "5",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("found 4 runs"));
}

/// The shipped example with vae swept over 64, 128 and 256 as a Cartesian `--batch-size`
/// runs it: the jobs file lists the three, and each stream holds, for each vae entry, one
/// at each size, whose steps take `(b / 128)^0.8` of the time (its throughput derived from
/// them, as the suite derives it) and whose losses are its own.
fn swept_example() -> tempfile::TempDir {
    use crate::fixtures::{copy_example, edit_entries, edit_object, rehash};
    use mlbench_schema::Value;
    let dir = copy_example();
    let jobs = dir.path().join("fast.json");
    let text = std::fs::read_to_string(&jobs).unwrap();
    let vae = text.find("\"name\": \"vae\"").unwrap();
    let at = vae + text[vae..].find("\"--batch-size\": 128").unwrap();
    let old = "\"--batch-size\": 128".len();
    let edited = text[..at].to_owned() + "\"--batch-size\": [64, 128, 256]" + &text[at + old..];
    std::fs::write(&jobs, edited).unwrap();
    for run in 0..5 {
        for gpu in 0..2 {
            let path = dir.path().join(format!("output{run}/fast_{gpu}.json"));
            edit_entries(&path, |entries| {
                let mut out = Vec::new();
                for e in entries.drain(..) {
                    if e.name() != Some("vae") {
                        out.push(e);
                        continue;
                    }
                    for size in SIZES {
                        let mut c = e.clone();
                        let (r, time) = (size as f64 / 128.0, (size as f64 / 128.0).powf(0.8));
                        let o = &mut c.fields;
                        o.insert("batch_size", size);
                        edit_object(o, "train", |t| {
                            for k in ["avg", "min", "max", "sd"] {
                                let v = t.get(k).and_then(Value::as_f64).unwrap();
                                t.insert(k, v * time);
                            }
                        });
                        edit_object(o, "train_item", |t| {
                            for k in ["avg", "min", "max", "range"] {
                                let v = t.get(k).and_then(Value::as_f64).unwrap();
                                t.insert(k, v * r / time);
                            }
                        });
                        let losses = o.get("batch_loss").and_then(Value::as_list).unwrap();
                        let own: Vec<f64> = (losses.iter())
                            .map(|l| l.as_f64().unwrap() * (1.0 + 0.001 * (r - 1.0)))
                            .collect();
                        o.insert("batch_loss", Value::from(own));
                        rehash(o);
                        out.push(c);
                    }
                }
                *entries = out;
            });
        }
    }
    dir
}

/// `validate` takes the sweep in the baseline track (`--batch-size` is an argument it
/// allows), and still refuses an entry at a batch size the jobs file does not list.
#[test]
fn validate_accepts_a_sweep_in_the_baseline_track() {
    use crate::fixtures::{edit_entry, validate_json};
    let dir = swept_example();
    let (code, json) = validate_json(dir.path(), &["--track", "baseline"]);
    assert_eq!(code, 0, "{json:#}");
    assert_eq!(json["errors"], 0, "{json:#}");
    assert_eq!(json["warnings"], 0, "{json:#}");
    // vae at 64, 128 and 256 in the view, each from every run and GPU.
    let (out, _) = stdout_of(&[
        "report",
        &dir.path().to_string_lossy(),
        "-g",
        "RTX",
        "--by",
        "batch_size",
        "-f",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let vae = v["benches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["bench"] == "vae")
        .unwrap();
    let sizes: Vec<i64> = vae["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["batch_size"].as_i64().unwrap())
        .collect();
    assert_eq!(sizes, SIZES);
    assert!(
        vae["points"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["n"] == 10)
    );
    // vae's first entry of a stream (entry 2: toy_reg and toy_lstm come first) at 512.
    let stream = dir.path().join("output0/fast_0.json");
    edit_entry(&stream, 2, |o| {
        o.insert("batch_size", 512i64);
        crate::fixtures::rehash(o);
    });
    let (code, json) = validate_json(dir.path(), &["--track", "baseline"]);
    assert_eq!(code, 1, "{json:#}");
    let rules: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(rules.contains(&"args.entry-mismatch"), "{json:#}");
}
