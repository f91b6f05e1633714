//! The charts' texts from the result models: counts and plurals, the tables' figures,
//! the benches a chart leaves out. Snapshots hold each chart's texts in document order.

use super::*;
use crate::rows::grid as grid_rows;
use crate::testdata::{self, assert_texts_fit, svg_lines};
use mlbench_validator::curve::Curve;
use mlbench_validator::facts::{Device, EntryFacts};
use mlbench_validator::rules::loss::SubmissionCurves;
use mlbench_validator::rules::loss_view::loss_view;

fn texts(chart: &Chart) -> Vec<String> {
    svg_lines(&chart.svg).lines().map(String::from).collect()
}

/// Writes the PNG to `$TMPDIR/mlbench-export-charts/` for a look.
fn look(name: &str, chart: &Chart) {
    let dir = std::env::temp_dir().join("mlbench-export-charts");
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join(format!("{name}.png")), &chart.png).expect("write png");
}

/// A curve of 20 steps of `bench` from `file`, on `device`.
fn entry(bench: &str, file: usize, device: Device) -> EntryFacts {
    let losses: Vec<f64> = (0..20)
        .map(|s| 2.0 - 0.05 * s as f64 + 0.001 * (file * 7 % 5) as f64)
        .collect();
    let mut e = EntryFacts::blank(file, 3, 0, bench);
    e.device = device;
    e.config = 7;
    e.losses = Curve::from(losses);
    e
}

/// `runs` runs × `gpus` GPUs of vae, one file per run and GPU (`output3/fast_1.json`).
fn curves(runs: usize, gpus: usize) -> SubmissionCurves {
    let mut read = SubmissionCurves::default();
    for r in 0..runs {
        for g in 0..gpus {
            read.files.push(format!("output{r}/fast_{g}.json"));
            read.runs.push(format!("output{r}"));
            let file = read.files.len() - 1;
            read.entries.push(entry("vae", file, Device::Gpu(g as u32)));
        }
    }
    read
}

fn loss_title(read: &SubmissionCurves) -> String {
    let charts = loss_charts(&Subject::named("acme"), &loss_view(read)).expect("charts");
    assert_eq!(charts.len(), 1);
    texts(&charts[0].1)[0].clone()
}

#[test]
fn loss_titles_count_runs_and_gpus() {
    assert_eq!(
        loss_title(&curves(5, 4)),
        "acme: vae batch loss, 5 runs × 4 GPUs"
    );
    assert_eq!(
        loss_title(&curves(1, 1)),
        "acme: vae batch loss, 1 run × 1 GPU"
    );
    assert_eq!(
        loss_title(&curves(3, 2)),
        "acme: vae batch loss, 3 runs × 2 GPUs"
    );
    // A missing curve is counted, not hidden in the product.
    let mut read = curves(5, 4);
    read.entries.pop();
    assert_eq!(
        loss_title(&read),
        "acme: vae batch loss, 5 runs × 4 GPUs (19 curves)"
    );
    // Whole-machine entries: no GPUs to count.
    let mut read = curves(5, 1);
    for e in &mut read.entries {
        e.device = Device::Machine(0);
    }
    assert_eq!(
        loss_title(&read),
        "acme: vae batch loss, 5 runs on the whole machine"
    );
}

#[test]
fn loss_chart_of_twenty_curves_names_each_in_full() {
    let read = curves(5, 4);
    let charts = loss_charts(&Subject::named("acme"), &loss_view(&read)).expect("charts");
    let (name, chart) = &charts[0];
    assert_eq!(name, "loss-acme-vae");
    let texts = texts(chart);
    for r in 0..5 {
        for g in 0..4 {
            let label = format!("output{r} GPU {g} (output{r}/fast_{g}.json#3)");
            assert!(texts.contains(&label), "{label}: {texts:?}");
        }
    }
    assert!(texts.contains(&"validator's band (q10 − w − t … q90 + w + t)".to_string()));
    look("loss_20", chart);
    assert_texts_fit(&chart.svg);
    insta::assert_snapshot!(svg_lines(&chart.svg));
}

#[test]
fn grid_overall_prints_the_overall_tables_figures() {
    let grid = testdata::grid();
    let charts = grid_charts(&grid).expect("charts");
    let (name, overall) = &charts[1];
    assert_eq!(name, "grid-overall");
    let texts = texts(overall);
    // Each row's overall and 95% CI cells, as the table prints them.
    let table = grid_rows::overall_rows(&grid);
    for row in &table.rows {
        let figure = format!("{}  [{}]", row[1], row[2]);
        assert!(texts.contains(&figure), "{figure}: {texts:?}");
    }
    assert!(
        texts.contains(&"1.250  [1.212–1.288]".to_string()),
        "{texts:?}"
    );
    look("grid_overall", overall);
    assert_texts_fit(&overall.svg);
    insta::assert_snapshot!(svg_lines(&overall.svg));
}

#[test]
fn a_grid_per_joule_is_charted_as_items_per_joule() {
    let mut grid = testdata::grid();
    let throughput = grid_charts(&grid).expect("charts");
    grid.per = mlbench_results::grid::Per::Joule;
    let per_joule = grid_charts(&grid).expect("charts");
    let titles =
        |charts: &[Named]| -> Vec<Vec<String>> { charts.iter().map(|(_, c)| texts(c)).collect() };
    let (before, after) = (titles(&throughput), titles(&per_joule));
    let has = |t: &[String], s: &str| t.iter().any(|x| x.contains(s));
    assert!(has(&before[0], "Throughput relative to") && !has(&before[0], "joule"));
    assert!(
        has(&after[0], "Items per joule relative to"),
        "{:?}",
        after[0]
    );
    assert!(
        has(&after[1], "Overall items per joule relative to"),
        "{:?}",
        after[1]
    );
    assert!(!has(&after[0], "Throughput") && !has(&after[1], "throughput"));
    // The figures are the grid's either way.
    assert!(after[1].contains(&"1.250  [1.212–1.288]".to_string()));
}

#[test]
fn fleet_chart_prints_the_fleet_tables_figures() {
    use mlbench_results::report::{Fleet, FleetNode};
    let node = |name: &str, relative: f64, flagged: bool| FleetNode {
        node: name.into(),
        gpus: 8,
        runs: 5,
        relative,
        ci_low: relative - 0.0123,
        ci_high: relative + 0.0087,
        below: 0,
        tested: 19,
        flagged,
    };
    let fleet = Fleet {
        nodes: vec![node("cn-a01", 1.0, false), node("cn-b02", 0.9364, true)],
        p10: 0.95,
        within_5pct: 0.5,
        resamples: 2000,
        seed: 2019,
    };
    let texts = texts(&fleet_chart(&Subject::named("acme"), &fleet).expect("chart"));
    assert!(
        texts.contains(&"0.936  [0.924–0.945]".to_string()),
        "{texts:?}"
    );
    assert!(texts.contains(&"cn-b02 — SLOW".to_string()), "{texts:?}");
}

#[test]
fn scaling_legend_counts_devices() {
    let mut scaling = testdata::scaling();
    scaling.rows[0].label = "g1".into();
    scaling.rows[0].devices = 1;
    let chart = scaling_chart(&scaling).expect("chart");
    let texts = texts(&chart);
    assert!(texts.contains(&"g1 (1 device)".to_string()), "{texts:?}");
    assert!(texts.contains(&"v4 (4 devices)".to_string()), "{texts:?}");
    look("scaling", &chart);
    assert_texts_fit(&chart.svg);
    insta::assert_snapshot!(svg_lines(&chart.svg));
}

#[test]
fn a_batch_size_chart_per_gpu_model() {
    let charts = batch_sweep_charts(&testdata::batch_sweep()).expect("charts");
    let names: Vec<&str> = charts.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["batch-size-H100", "batch-size-unnamed-gpu"]);
    let texts = texts(&charts[0].1);
    assert!(
        texts.contains(&"Throughput by batch size on H100".to_string()),
        "{texts:?}"
    );
    assert!(texts.contains(&"vae".to_string()), "{texts:?}");
    look("batch-size", &charts[0].1);
    assert_texts_fit(&charts[0].1.svg);
    insta::assert_snapshot!(svg_lines(&charts[0].1.svg));
}

fn run_means(bench: &str) -> RunMeans {
    RunMeans {
        bench: bench.into(),
        means: vec![276.0, 279.0, 281.5, 278.2, 280.1],
        target: Some(276.0),
    }
}

#[test]
fn heatmap_names_the_whole_machine_benches_it_leaves_out() {
    let view = GpuRelative {
        gpus: vec![0, 1],
        names: vec!["GPU 0".into(), "GPU 1".into()],
        benches: vec!["atari".into(), "cart".into()],
        values: vec![vec![Some(1.01), Some(0.99)], vec![Some(0.99), Some(1.01)]],
    };
    let runs: Vec<RunMeans> = ["atari", "cart", "convnet_distributed", "dcgan_all"]
        .map(run_means)
        .into();
    let chart = gpu_heatmap_chart(&Subject::named("acme"), &view, &runs).expect("chart");
    let texts = texts(&chart);
    let note =
        "not per GPU: convnet_distributed, dcgan_all (whole-machine benches, no per-GPU value)";
    assert!(texts.contains(&note.to_string()), "{texts:?}");
    look("heatmap_note", &chart);
    assert_texts_fit(&chart.svg);
    insta::assert_snapshot!(svg_lines(&chart.svg));
    // Every bench with a column: no note.
    let chart = gpu_heatmap_chart(&Subject::named("acme"), &view, &runs[..2]).expect("chart");
    assert!(!svg_lines(&chart.svg).contains("not per GPU"));
}

#[test]
fn runs_chart_keeps_convnet_distributed_fp16_whole() {
    let runs: Vec<RunMeans> = [
        "atari",
        "cart",
        "convnet",
        "convnet_distributed",
        "convnet_distributed_fp16",
        "dcgan_all",
    ]
    .map(run_means)
    .into();
    let chart = runs_chart(&Subject::named("acme"), "RTX", &runs).expect("chart");
    let texts = texts(&chart);
    assert!(
        texts.contains(&"convnet_distributed_fp16".to_string()),
        "{texts:?}"
    );
    look("runs", &chart);
    assert_texts_fit(&chart.svg);
    insta::assert_snapshot!(svg_lines(&chart.svg));
}
