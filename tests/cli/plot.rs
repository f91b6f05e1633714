//! `mlbench plot`: which files each kind writes, that they are real PNG and SVG images,
//! and that nothing is overwritten without `--force`.

use crate::fixtures::{example_dir, mlbench, names_in, read_text, write_vendor};
use predicates::prelude::*;
use std::path::{Path, PathBuf};

/// The 19 benches of the example submission (its jobs file, `fast.json`).
const EXAMPLE_BENCHES: [&str; 19] = [
    "atari",
    "cart",
    "convnet",
    "convnet_distributed",
    "convnet_distributed_fp16",
    "convnet_fp16",
    "dcgan",
    "dcgan_all",
    "fast_style",
    "loader",
    "recom",
    "reso",
    "ssd",
    "toy_lstm",
    "toy_reg",
    "translator",
    "vae",
    "wlm",
    "wlmfp16",
];

/// Width and height of a PNG, from its signature and IHDR chunk (bytes 16..24).
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert!(
        bytes.len() > 33 && bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{}: not a PNG",
        path.display()
    );
    assert_eq!(&bytes[12..16], b"IHDR", "{}", path.display());
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    assert!(
        bytes.ends_with(b"IEND\xaeB`\x82"),
        "{}: truncated",
        path.display()
    );
    (be(16), be(20))
}

/// The text of an SVG file, which must be one.
fn svg(path: &Path) -> String {
    let text = read_text(path);
    assert!(
        text.starts_with("<svg") || text.starts_with("<?xml"),
        "{}: {}",
        path.display(),
        &text[..text.len().min(80)]
    );
    assert!(text.trim_end().ends_with("</svg>"), "{}", path.display());
    text
}

/// Three vendors A, B, C (B and C faster than A on both benches).
fn vendors() -> (tempfile::TempDir, Vec<PathBuf>) {
    let tmp = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (name, factor) in [("Alpha", 1.0), ("Bravo", 1.2), ("Charlie", 1.5)] {
        let path = tmp.path().join(name);
        write_vendor(&path, &[("atari", 10.0 * factor), ("vae", 100.0 * factor)]);
        paths.push(path);
    }
    (tmp, paths)
}

fn plot(kind: &str, from: &[PathBuf], out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    mlbench()
        .args(["plot", kind, "--from"])
        .args(from)
        .arg("--out")
        .arg(out)
        .args(extra)
        .assert()
}

#[test]
fn plot_grid_writes_both_charts_in_png_and_svg() {
    let (tmp, subs) = vendors();
    let out = tmp.path().join("plots");
    plot("grid", &subs, &out, &[]).success();
    assert_eq!(
        names_in(&out),
        [
            "grid-overall.png",
            "grid-overall.svg",
            "grid-ratios.png",
            "grid-ratios.svg"
        ]
    );
    assert_eq!(png_size(&out.join("grid-ratios.png")), (1200, 700));
    let (w, h) = png_size(&out.join("grid-overall.png"));
    assert!(w > 0 && h > 0);
    for chart in ["grid-ratios", "grid-overall"] {
        let text = svg(&out.join(format!("{chart}.svg")));
        for vendor in ["Alpha", "Bravo", "Charlie"] {
            assert!(text.contains(vendor), "{chart}.svg lacks {vendor}");
        }
    }
    // The bench names are on the ratio chart.
    let ratios = svg(&out.join("grid-ratios.svg"));
    assert!(ratios.contains("atari") && ratios.contains("vae"));
}

#[test]
fn plot_grid_svg_only_and_no_overwriting_without_force() {
    let (tmp, subs) = vendors();
    let out = tmp.path().join("svg");
    plot(
        "grid",
        &subs,
        &out,
        &["--format", "svg", "--baseline", "Bravo"],
    )
    .success();
    assert_eq!(names_in(&out), ["grid-overall.svg", "grid-ratios.svg"]);
    assert!(svg(&out.join("grid-overall.svg")).contains("Bravo"));

    // One of the four files exists: nothing at all is written, the exit status is 2.
    let out = tmp.path().join("both");
    std::fs::create_dir_all(&out).unwrap();
    let existing = out.join("grid-ratios.svg");
    std::fs::write(&existing, "precious").unwrap();
    plot("grid", &subs, &out, &[])
        .code(2)
        .stderr(
            predicate::str::contains("grid-ratios.svg").and(predicate::str::contains(
                "already exists; not overwriting it (use --force",
            )),
        );
    assert_eq!(names_in(&out), ["grid-ratios.svg"]);
    assert_eq!(read_text(&existing), "precious");

    // With --force every file is written, the existing one replaced.
    plot("grid", &subs, &out, &["--force"]).success();
    assert_eq!(
        names_in(&out),
        [
            "grid-overall.png",
            "grid-overall.svg",
            "grid-ratios.png",
            "grid-ratios.svg"
        ]
    );
    assert!(svg(&existing).contains("Charlie"));
}

#[test]
fn plot_report_writes_the_heatmap_and_the_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("plots");
    plot("report", &[example_dir()], &out, &["-g", "RTX"]).success();
    assert_eq!(
        names_in(&out),
        [
            "report-heatmap-example.png",
            "report-heatmap-example.svg",
            "runs-example.png",
            "runs-example.svg"
        ]
    );
    for name in ["report-heatmap-example.png", "runs-example.png"] {
        let (w, h) = png_size(&out.join(name));
        assert!(w >= 100 && h >= 100, "{name}: {w}×{h}");
    }
    let heatmap = svg(&out.join("report-heatmap-example.svg"));
    assert!(heatmap.contains("GPU 0") && heatmap.contains("GPU 1"));
    let runs = svg(&out.join("runs-example.svg"));
    assert!(runs.contains("convnet"), "runs chart without bench names");
}

#[test]
fn plot_loss_writes_one_svg_per_bench() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("loss");
    plot("loss", &[example_dir()], &out, &["--format", "svg"]).success();
    let mut expected: Vec<String> = EXAMPLE_BENCHES
        .iter()
        .map(|b| format!("loss-example-{b}.svg"))
        .collect();
    expected.sort();
    assert_eq!(names_in(&out), expected);
    for name in &expected {
        let text = svg(&out.join(name));
        let bench = &name["loss-example-".len()..name.len() - 4];
        assert!(text.contains(bench), "{name} does not name its bench");
    }
}

/// `mlbench report` additions that come with the plots and the page: `--ci`, the straggler
/// check and `--html` (here rather than in `report.rs`, which other work is editing).
mod report {
    use crate::fixtures::{
        close, count, example_dir, f, folder_files, html_rows, mlbench, names_in, read_text,
        sha256_hex, write_samples, write_submission, write_targets,
    };
    use serde_json::Value;
    use std::path::{Path, PathBuf};

    /// `mlbench report -g RTX --targets T -r DIR EXTRA…`: (exit status, stdout, stderr).
    fn report(dir: &Path, targets: &Path, extra: &[&str]) -> (i32, String, String) {
        let out = mlbench()
            .args(["report", "-g", "RTX", "--targets"])
            .arg(targets)
            .arg("-r")
            .arg(dir)
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }

    fn report_json(dir: &Path, targets: &Path, extra: &[&str]) -> Value {
        let (code, stdout, stderr) = report(dir, targets, &[extra, &["-f", "json"]].concat());
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str(&stdout).unwrap()
    }

    /// The fixture submission of `report.rs` (4 runs × 2 GPUs, atari 5.5, convnet 180,
    /// vae 7600, each × 1 + 0.01·((run + gpu) mod 3 − 1)) and its targets.
    fn fixture() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let sub = tmp.path().join("sub");
        write_submission(&sub, 4, 2);
        let targets = tmp.path().join("targets.csv");
        write_targets(&targets);
        (tmp, sub, targets)
    }

    /// The samples of a fixture bench, recomputed here from the fixture's rule.
    fn fixture_samples(base: f64) -> Vec<f64> {
        let mut out = Vec::new();
        for run in 0..4 {
            for gpu in 0..2 {
                out.push(base * (1.0 + 0.01 * (((run + gpu) % 3) as f64 - 1.0)));
            }
        }
        out
    }

    #[test]
    fn ci_gives_each_bench_its_result_and_an_interval_around_it() {
        let (_tmp, sub, targets) = fixture();
        // The wiggles −1, 0, 0, +1, +1, −1, −1, 0 (%) sum to −1 %: pooled mean (score) =
        // base·(1 − 0.01/8). Run means (over the two GPUs): −0.5, +0.5, 0, −0.5 (%);
        // classic sets aside one lowest and the highest: (0 − 0.5)/2 = −0.25 %.
        for (scoring, statistic) in [
            (
                "classic",
                "mean over runs without the lowest and highest of run means over GPUs",
            ),
            ("score", "pooled mean of run × GPU values"),
        ] {
            let json = report_json(&sub, &targets, &["--ci", "--scoring", scoring]);
            let ci = &json["ci"];
            assert_eq!(
                ci.as_object().unwrap().keys().collect::<Vec<_>>(),
                ["atari", "convnet", "vae"]
            );
            for (bench, b) in [("atari", 5.5), ("convnet", 180.0), ("vae", 7600.0)] {
                let samples = fixture_samples(b);
                let run_means: Vec<f64> = samples.chunks(2).map(|r| (r[0] + r[1]) / 2.0).collect();
                let (hand, n, units) = if scoring == "classic" {
                    (b * (1.0 - 0.0025), 4, &run_means)
                } else {
                    (samples.iter().sum::<f64>() / 8.0, 8, &samples)
                };
                if scoring == "score" {
                    assert!(close(hand, b * (1.0 - 0.01 / 8.0)));
                }
                let c = &ci[bench];
                assert_eq!(c["statistic"], statistic, "{bench}");
                assert_eq!(c["n"], n, "{bench}");
                assert!(close(f(&c["result"]), hand), "{bench}: {c}");
                let (lo, hi) = (f(&c["ci"][0]), f(&c["ci"][1]));
                // A resampled result lies between the smallest and the largest unit
                // resampled (a run's mean, or a sample).
                let min = units.iter().copied().fold(f64::INFINITY, f64::min);
                let max = units.iter().copied().fold(0.0, f64::max);
                assert!(
                    min <= lo && lo <= hand && hand <= hi && hi <= max,
                    "{bench}: {c}"
                );
                assert!(
                    lo < hi,
                    "{bench}: the runs differ, the interval is not a point"
                );
            }
        }
        let json = report_json(&sub, &targets, &[]);
        assert!(json.get("ci").is_none(), "{json:#}");
        assert_eq!(json["stragglers"], Value::Array(vec![]));
    }

    #[test]
    fn ci_in_the_table_and_the_csv() {
        let (_tmp, sub, targets) = fixture();
        let (code, table, _) = report(&sub, &targets, &["--ci"]);
        assert_eq!(code, 0);
        let at = table
            .find("95% confidence intervals of the result above")
            .expect("the interval table");
        let intervals = &table[at..];
        for bench in ["atari", "convnet", "vae"] {
            assert!(
                intervals.lines().any(|l| l.trim_start().starts_with(bench)),
                "{table}"
            );
        }
        let (_, plain, _) = report(&sub, &targets, &[]);
        assert!(!plain.contains("confidence interval"), "{plain}");

        let (code, csv, _) = report(&sub, &targets, &["--ci", "-f", "csv"]);
        assert_eq!(code, 0);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "bench,n,target,result,sd,sd_pct,diff,ci_low,ci_high,fixed_half_width,fixed_runs_needed,anytime_half_width,anytime_runs_needed"
        );
        assert_eq!(lines.len(), 4, "{csv}");
        for (line, base) in lines[1..].iter().zip([5.5, 180.0, 7600.0]) {
            let cells: Vec<&str> = line.split(',').collect();
            assert_eq!(cells.len(), 13, "{line}");
            let (lo, hi): (f64, f64) = (cells[7].parse().unwrap(), cells[8].parse().unwrap());
            // The classic result (−0.25 %: see above) and its interval beside it.
            let result: f64 = cells[3].parse().unwrap();
            assert!(close(result, base * (1.0 - 0.0025)), "{line}");
            assert!(lo <= result && result <= hi && lo < hi, "{line}");
        }
        let (_, csv, _) = report(&sub, &targets, &["-f", "csv"]);
        assert!(
            csv.starts_with("bench,n,target,result,sd,sd_pct,diff,fixed_half_width,"),
            "{csv}"
        );
    }

    const STRAGGLER_BENCHES: [(&str, f64); 4] = [
        ("atari", 5.5),
        ("cart", 2000.0),
        ("convnet", 180.0),
        ("vae", 7600.0),
    ];
    /// Relative deviations of the runs: GPU g's run r is `d[(r + g) mod 4]`; every GPU
    /// has each once, so each GPU's mean is the base (× its factor).
    const D: [f64; 4] = [-0.01, 0.005, 0.01, -0.005];

    /// 4 GPUs × 4 runs × 4 benches; GPU 3's throughputs × `slow`.
    fn straggler_submission(root: &Path, slow: f64) {
        let benches: Vec<(&str, Vec<Vec<f64>>)> = STRAGGLER_BENCHES
            .iter()
            .map(|(bench, base)| {
                let gpus = (0..4)
                    .map(|g| {
                        let factor = if g == 3 { slow } else { 1.0 };
                        (0..4)
                            .map(|r| base * factor * (1.0 + D[(r + g) % 4]))
                            .collect()
                    })
                    .collect();
                (*bench, gpus)
            })
            .collect();
        write_samples(root, &benches);
        let mut targets = String::from("bench,target,perf_target,sd_target\n");
        for (b, v) in STRAGGLER_BENCHES {
            targets.push_str(&format!("{b},{v},0.5,0.05\n"));
        }
        std::fs::write(root.join("../targets.csv"), targets).unwrap();
    }

    /// Mean and sample variance (n − 1), here.
    fn mean_var(x: &[f64]) -> (f64, f64) {
        let n = x.len() as f64;
        let m = x.iter().sum::<f64>() / n;
        (
            m,
            x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0),
        )
    }

    #[test]
    fn a_gpu_ten_percent_slower_on_every_bench_is_a_straggler() {
        let tmp = tempfile::tempdir().unwrap();
        let sub = tmp.path().join("sub");
        straggler_submission(&sub, 0.9);
        let targets = tmp.path().join("targets.csv");
        let json = report_json(&sub, &targets, &[]);
        let list = json["stragglers"].as_array().unwrap();
        assert_eq!(list.len(), 1, "{json:#}");
        let s = &list[0];
        assert_eq!(s["device"], 3);
        assert_eq!(s["tested"], 4);
        assert_eq!(s["below"], 4);
        assert_eq!(s["flagged"], true);
        assert!(close(f(&s["median_deficit"]), 0.1), "{s}");
        let tests = s["benches"].as_array().unwrap();
        assert_eq!(tests.len(), 4);
        for ((bench, base), t) in STRAGGLER_BENCHES.iter().zip(tests) {
            assert_eq!(t["bench"], *bench);
            assert_eq!(
                (t["n"].as_u64(), t["peers_n"].as_u64()),
                (Some(4), Some(12))
            );
            // Welch's t and df from docs/scoring.md, on the values written.
            let own: Vec<f64> = (0..4)
                .map(|r| base * 0.9 * (1.0 + D[(r + 3) % 4]))
                .collect();
            let peers: Vec<f64> = (0..3)
                .flat_map(|g| (0..4).map(move |r| base * (1.0 + D[(r + g) % 4])))
                .collect();
            let ((md, vd), (mp, vp)) = (mean_var(&own), mean_var(&peers));
            assert!(close(f(&t["mean"]), 0.9 * base) && close(f(&t["peers_mean"]), *base));
            assert!(close(f(&t["deficit"]), 1.0 - md / mp), "{t}");
            let (a, b) = (vd / 4.0, vp / 12.0);
            let welch_t = (md - mp) / (a + b).sqrt();
            let df = (a + b).powi(2) / (a * a / 3.0 + b * b / 11.0);
            assert!(
                (f(&t["t"]) - welch_t).abs() <= 1e-9 * welch_t.abs(),
                "{t}: t {welch_t}"
            );
            assert!((f(&t["df"]) - df).abs() <= 1e-9 * df, "{t}: df {df}");
            assert!(f(&t["p"]) < 0.01, "{t}");
            assert_eq!(t["below"], true);
        }
        let (code, table, _) = report(&sub, &targets, &[]);
        assert_eq!(code, 0);
        assert!(table.contains("straggler: GPU 3 "), "{table}");
        assert!(
            table.contains("below its peers on 4 of 4 benches tested (median deficit 10.0%"),
            "{table}"
        );

        // The same submission without the slow GPU: no straggler.
        let fine = tmp.path().join("fine");
        straggler_submission(&fine, 1.0);
        let json = report_json(&fine, &targets, &[]);
        assert_eq!(json["stragglers"], Value::Array(vec![]), "{json:#}");
        let (_, table, _) = report(&fine, &targets, &[]);
        assert!(!table.contains("straggler"), "{table}");
    }

    /// The captions of the page's tables, in order.
    fn captions(html: &str) -> Vec<String> {
        html.split("<caption>")
            .skip(1)
            .map(|c| c[..c.find("</caption>").unwrap()].to_owned())
            .collect()
    }

    /// `mlbench report` on the shipped example with `--html PAGE`, run from the
    /// repository root so that the inputs are named as given.
    fn example_page(extra: &[&str]) -> (tempfile::TempDir, String) {
        let tmp = tempfile::tempdir().unwrap();
        let page = tmp.path().join("report.html");
        mlbench()
            .args(["report", "-g", "RTX", "-r"])
            .arg(example_dir())
            .arg("--html")
            .arg(&page)
            .args(extra)
            .assert()
            .success();
        assert_eq!(names_in(tmp.path()), ["report.html"]);
        let html = read_text(&page);
        (tmp, html)
    }

    #[test]
    fn the_report_page_has_tables_figures_validation_and_provenance() {
        // Classic scoring has no per-GPU tables: the benches, the statistics, the inputs.
        let (_tmp, html) = example_page(&[]);
        let found = captions(&html);
        assert_eq!(found.len(), 4, "{found:?}");
        assert_eq!(
            [&found[0], &found[1], &found[3]],
            ["Benches", "Statistics", "Input files"]
        );
        assert!(
            found[2].starts_with("How many runs for ±1% at 95%"),
            "{found:?}"
        );
        assert!(count(&html, "<svg") >= 2, "the heatmap and the runs");
        assert!(!html.to_lowercase().contains("<script"));
        assert!(html.contains("<h2>Validation</h2>"));
        assert!(
            html.contains("0 errors, 0 warnings"),
            "the example validates clean"
        );
        let benches = html_rows(&html, "Benches");
        assert_eq!(benches.len(), 19);
        // Provenance: every file of the example with its SHA-256, computed here.
        let footer = &html[html.find("<footer>").expect("a footer")..];
        let mut got: Vec<(String, String)> = html_rows(footer, "Input files")
            .into_iter()
            .map(|r| (r[0].clone(), r[1].clone()))
            .collect();
        got.sort();
        let mut expected: Vec<(String, String)> = folder_files(&example_dir())
            .into_iter()
            .map(|(rel, bytes)| {
                (
                    example_dir().join(rel).display().to_string(),
                    sha256_hex(&bytes),
                )
            })
            .collect();
        expected.sort();
        assert_eq!(got, expected);

        // Score scoring adds the three per-GPU tables, --ci the intervals: with the
        // inputs, the 8 tables CI's browser check expects (with how many runs).
        let per_gpu = ["mean", "min", "max"].map(|s| format!("Relative GPU performance ({s})"));
        let (_tmp, html) = example_page(&["--scoring", "score"]);
        let mut expected = vec!["Benches".to_owned(), "Statistics".to_owned()];
        expected.push(found[2].clone());
        expected.extend(per_gpu.iter().cloned());
        expected.push("Input files".to_owned());
        assert_eq!(captions(&html), expected);
        let (_tmp, html) = example_page(&["--scoring", "score", "--ci"]);
        expected.insert(
            2,
            "95% confidence intervals of the result above (pooled mean of run × GPU values), recomputed in each resample (bootstrap: runs resampled within GPUs, 2000 resamples, seed 2019)".to_owned(),
        );
        assert_eq!(captions(&html), expected);
        assert_eq!(count(&html, "<table"), 8);
        assert!(html.contains("<h2>Validation</h2>"));
        // An interval row for every bench of the score table (its 19 benches less the 3
        // multi-GPU ones it sets aside: 16 with samples, and `scaling`, which the example
        // lacks, with the reason in place of an interval), with the same n and result as
        // the bench table.
        let intervals = html_rows(
            &html,
            "95% confidence intervals of the result above (pooled mean of run × GPU values), recomputed in each resample (bootstrap: runs resampled within GPUs, 2000 resamples, seed 2019)",
        );
        let benches: Vec<Vec<String>> = html_rows(&html, "Benches");
        assert_eq!(benches.iter().filter(|r| r[1] != "0").count(), 16);
        assert_eq!(intervals.len(), benches.len());
        for (i, b) in intervals.iter().zip(&benches) {
            assert_eq!((&i[0], &i[1], &i[2]), (&b[0], &b[1], &b[5]), "{i:?} {b:?}");
            if b[1] == "0" {
                assert_eq!(i[3], "— (no run × GPU value: no result)", "{i:?}");
            }
        }
        assert!(count(&html, "<svg") >= 2);
    }
    #[test]
    fn the_report_page_validates_with_the_reports_min_runs() {
        // The example with 3 runs, reported with --min-runs 3: the report is computed,
        // and the page's validation must not say there are too few runs.
        let tmp = tempfile::tempdir().unwrap();
        let sub = tmp.path().join("sub");
        crate::fixtures::copy_tree(&example_dir(), &sub);
        for run in [3, 4] {
            std::fs::remove_dir_all(sub.join(format!("output{run}"))).unwrap();
        }
        let page = tmp.path().join("report.html");
        mlbench()
            .args(["report", "-g", "RTX", "--min-runs", "3", "-r"])
            .arg(&sub)
            .arg("--html")
            .arg(&page)
            .assert()
            .success();
        let html = read_text(&page);
        assert!(
            !html.contains("runs.too-few"),
            "the page applies --min-runs 4"
        );
        assert!(html.contains("0 errors, 0 warnings"));
    }
}

/// `mlbench plot power`: a run folder's telemetry, written here by hand, line by line.
mod power {
    use super::{png_size, svg};
    use crate::fixtures::{mlbench, names_in, read_text};
    use predicates::prelude::*;
    use std::path::Path;

    const S: u64 = 1_000_000_000;

    /// Copy `copy` of `vae`, sampled at 1 Hz from 0 to 10 s: `cuda:<copy>` with power
    /// (100 W, 300 W from 2 s to 8 s) and an mJ counter holding the trapezoid of it, and
    /// a RAPL package with a µJ counter only (20 W); window `train` from 2 s to 8 s.
    fn copy_file(copy: u32, origin_ms: u64) -> String {
        let mut text = format!(
            r#"{{"type":"header","schema_version":1,"tool":"mlbench 0.1.0","bench":"vae","copy":{copy},"sample_period_ns":{S},"origin_unix_ms":{origin_ms},"devices":[{{"id":"cuda:{copy}","source":"nvml","name":"NVIDIA H100","power_reading":"average","counter":{{"resolution_uj":1000.0}},"whole_board":true}},{{"id":"cpu:package-0","source":"rapl","name":"package-0","counter":{{"resolution_uj":1.0,"wrap_raw":262143328851}},"whole_board":true}}]}}"#
        );
        text.push('\n');
        let watts = |s: u64| if (2..8).contains(&s) { 300 } else { 100 };
        let mut mj = 0;
        for s in 0..=10u64 {
            if s > 0 {
                mj += (watts(s - 1) + watts(s)) * 1000 / 2;
            }
            let t = s * S;
            text.push_str(&format!(
                "{{\"type\":\"sample\",\"t_ns\":{t},\"device\":0,\"energy_raw\":{mj},\"power_mw\":{}}}\n",
                watts(s) * 1000
            ));
            text.push_str(&format!(
                "{{\"type\":\"sample\",\"t_ns\":{t},\"device\":1,\"energy_raw\":{}}}\n",
                s * 20_000_000
            ));
            if s == 2 || s == 8 {
                let edge = if s == 2 { "start" } else { "end" };
                text.push_str(&format!(
                    "{{\"type\":\"mark\",\"t_ns\":{t},\"edge\":\"{edge}\",\"window\":\"train\",\"copy\":{copy}}}\n"
                ));
            }
        }
        text
    }

    /// The idle baseline of `cuda:0`: 90 W for 10 s.
    fn idle_file() -> String {
        let mut text = format!(
            r#"{{"type":"header","schema_version":1,"tool":"mlbench 0.1.0","bench":"idle","copy":0,"sample_period_ns":{S},"devices":[{{"id":"cuda:0","source":"nvml","counter":{{"resolution_uj":1000.0}}}}]}}"#
        );
        text.push('\n');
        text.push_str(
            "{\"type\":\"mark\",\"t_ns\":0,\"edge\":\"start\",\"window\":\"idle\",\"copy\":0}\n",
        );
        for s in 0..=10u64 {
            text.push_str(&format!(
                "{{\"type\":\"sample\",\"t_ns\":{},\"device\":0,\"energy_raw\":{},\"power_mw\":90000}}\n",
                s * S,
                s * 90_000
            ));
        }
        text.push_str(&format!(
            "{{\"type\":\"mark\",\"t_ns\":{},\"edge\":\"end\",\"window\":\"idle\",\"copy\":0}}\n",
            10 * S
        ));
        text
    }

    /// A run folder `sub/output0` with two copies of `vae` and the idle baseline.
    fn run_folder(root: &Path) -> std::path::PathBuf {
        let sub = root.join("sub");
        let tel = sub.join("output0/telemetry");
        std::fs::create_dir_all(&tel).unwrap();
        std::fs::write(tel.join("vae.0.jsonl"), copy_file(0, 1_000)).unwrap();
        std::fs::write(tel.join("vae.1.jsonl"), copy_file(1, 3_500)).unwrap();
        std::fs::write(tel.join("idle.0.jsonl"), idle_file()).unwrap();
        sub
    }

    fn plot_power(from: &Path, out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
        mlbench()
            .args(["plot", "power"])
            .arg(from)
            .arg("--out-dir")
            .arg(out)
            .args(extra)
            .assert()
    }

    /// Hostile files (the hostile-input rule: a clean end, the documented code, no panic): a
    /// reading out of time order, a power past anything real and a sampling period of 0
    /// or of u64::MAX. `validate` names them; `plot power` draws what can be drawn, and
    /// the chart says what it left out.
    #[test]
    fn broken_telemetry_is_named_by_validate_and_drawn_without_it() {
        let tmp = tempfile::tempdir().unwrap();
        let good = copy_file(0, 1_000);
        let broken = good
            .replace(
                &format!("\"t_ns\":{},\"device\":0,", 5 * S),
                &format!("\"t_ns\":{},\"device\":0,", u64::MAX),
            )
            .replacen("\"power_mw\":100000}", "\"power_mw\":1e308}", 1);
        for (name, period) in [("late", S), ("zero", 0), ("max", u64::MAX)] {
            let sub = tmp.path().join(name);
            let tel = sub.join("output0/telemetry");
            std::fs::create_dir_all(&tel).unwrap();
            let text = broken.replace(
                &format!("\"sample_period_ns\":{S}"),
                &format!("\"sample_period_ns\":{period}"),
            );
            std::fs::write(tel.join("vae.0.jsonl"), text).unwrap();
            // Exit 2: a folder of telemetry alone has no reports; its findings are listed.
            let validated = mlbench().arg("validate").arg(&sub).assert().code(2);
            let said = String::from_utf8_lossy(&validated.get_output().stdout).into_owned();
            assert!(said.contains("error[telemetry.clock]"), "{name}: {said}");
            assert!(
                said.contains("output0/telemetry/vae.0.jsonl: line "),
                "{name}: {said}"
            );
            let out = tmp.path().join(format!("plots-{name}"));
            plot_power(&sub, &out, &["--format", "svg"]).success();
            let text = svg(&out.join("power-output0-vae.svg")).replace('\n', " ");
            for word in [
                "1", "reading", "not", "drawn,", "out", "of", "time", "order",
            ] {
                assert!(text.contains(word), "{name}: the chart lacks {word:?}");
            }
        }
    }

    #[test]
    fn plot_power_draws_each_bench_and_says_each_source() {
        let tmp = tempfile::tempdir().unwrap();
        let sub = run_folder(tmp.path());
        let out = tmp.path().join("plots");
        let done = plot_power(&sub, &out, &[]).success();
        let stderr = String::from_utf8_lossy(&done.get_output().stderr).into_owned();
        assert_eq!(
            names_in(&out),
            ["power-output0-vae.png", "power-output0-vae.svg"]
        );
        let (w, h) = png_size(&out.join("power-output0-vae.png"));
        assert!(w == 1200 && h >= 700, "{w}×{h}");
        let text = svg(&out.join("power-output0-vae.svg"));
        // By hand: train (2→8 s) is 5 × 300 + (300 + 100) / 2 = 1700 J; less 90 W × 6 s
        // of idle: 1160 J. Copy 1 has no idle baseline (none for cuda:1): gross only.
        for want in [
            "Power of vae in output0",
            "cuda:0 NVIDIA H100 · copy 0: train 1.70 kJ (1.16 kJ net of idle 90.0 W)",
            "cuda:1 NVIDIA H100 · copy 1: train 1.70 kJ",
            "timed window `train`",
        ] {
            let flat = text.replace('\n', " ");
            let words: Vec<&str> = want.split(' ').collect();
            assert!(
                words.iter().all(|w| flat.contains(w)),
                "the chart lacks {want:?}"
            );
        }
        // One line per device and copy, for a GPU check to copy.
        assert!(
            stderr.contains(
                "output0 vae: cuda:0 NVIDIA H100 (nvml) copy 0: 11 samples over 10.0 s, \
                 1.00 Hz of 1.000 Hz; counter moved 2200.0 J; train 6.0 s, 7 samples: \
                 counter 1700.0 J, power 1700.0 J (0.0 % apart), net of idle 1160.0 J"
            ),
            "{stderr}"
        );
        // RAPL: 20 W for 6 s by its counter, no power readings.
        assert!(
            stderr.contains(
                "output0 vae: cpu:package-0 (rapl) copy 1: 11 samples over 10.0 s, 1.00 Hz of \
                 1.000 Hz; counter moved 200.0 J; no power readings (power from the counter); \
                 train 6.0 s, 7 samples: counter 120.0 J, power none"
            ),
            "{stderr}"
        );
        assert!(stderr.contains("2 files in"), "{stderr}");
    }

    #[test]
    fn plot_power_never_overwrites_and_refuses_what_it_cannot_read() {
        let tmp = tempfile::tempdir().unwrap();
        let sub = run_folder(tmp.path());
        let out = tmp.path().join("plots");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("power-output0-vae.svg"), "precious").unwrap();
        plot_power(&sub.join("output0"), &out, &[])
            .code(2)
            .stderr(predicate::str::contains(
                "already exists; not overwriting it",
            ));
        assert_eq!(names_in(&out), ["power-output0-vae.svg"]);
        assert_eq!(read_text(&out.join("power-output0-vae.svg")), "precious");
        plot_power(
            &sub.join("output0/telemetry"),
            &out,
            &["--force", "--format", "svg"],
        )
        .success();
        assert!(read_text(&out.join("power-output0-vae.svg")).contains("Power of vae"));

        // A broken zip, a folder without telemetry, a file that is not telemetry: exit 2,
        // named.
        let zip = tmp.path().join("sub.zip");
        std::fs::write(&zip, "PK").unwrap();
        plot_power(&zip, &out, &[])
            .code(2)
            .stderr(predicate::str::contains(
                "sub.zip: (submission): invalid Zip archive",
            ));
        plot_power(&out, &tmp.path().join("o2"), &[])
            .code(2)
            .stderr(predicate::str::contains("no telemetry files"));
        let tel = sub.join("output0/telemetry");
        std::fs::write(tel.join("vae.2.jsonl"), "{\"type\":\"header\"\n").unwrap();
        plot_power(&sub, &tmp.path().join("o3"), &[])
            .code(2)
            .stderr(predicate::str::contains("vae.2.jsonl:1:"));
        assert!(!tmp.path().join("o3").exists() || names_in(&tmp.path().join("o3")).is_empty());
    }
}
