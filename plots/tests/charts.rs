//! Every chart: the PNG decodes at the requested size, is not blank and has the expected
//! colours; the SVG is well-formed XML with the expected texts; two renders give the same
//! bytes; edge cases render and bad input is refused with an error, not a panic.
//!
//! The PNGs are written to `$TMPDIR/mlbench-plots-tests/` for a look.

mod common;

use common::{BENCHES, assert_stable, benches, check, svg_texts, svg_texts_with_y, wiggle};
use mlbench_plots::{
    Band, BenchRuns, Distributions, Estimate, GridBars, Heatmap, LossCurves, LossLine, OKABE_ITO,
    OverallBars, OverallEntry, PlotError, Series, Size, distributions, grid_bars, heatmap,
    loss_curves, overall_bars,
};

// ---------------------------------------------------------------- grid_bars

fn grid_spec(vendors: usize, n: usize) -> GridBars {
    let names = [
        "AMD MI50",
        "NVIDIA RTX 8000",
        "Intel Gaudi",
        "Graphcore",
        "Cerebras",
    ];
    let benches: Vec<String> = (0..n).map(|i| BENCHES[i % 19].to_string()).collect();
    GridBars {
        title: "Throughput relative to NVIDIA V100".into(),
        subtitle: Some("bars: median ratio · whiskers: 95 % CI".into()),
        series: (0..vendors)
            .map(|v| {
                let values = (0..n)
                    .map(|i| {
                        let r = (0.35 * wiggle(i, v)).exp() * (1.0 + 0.1 * v as f64);
                        Some(Estimate::new(r, r * 0.94, r * 1.05))
                    })
                    .collect();
                Series::new(names[v % names.len()], values)
            })
            .collect(),
        benches,
        baseline: "NVIDIA V100".into(),
        ..GridBars::default()
    }
}

#[test]
fn grid_bars_three_vendors_with_a_missing_value() {
    let mut spec = grid_spec(3, 19);
    spec.series[1].values[4] = None;
    let chart = grid_bars(&spec).expect("chart");
    let mut texts = vec![
        "Throughput relative to NVIDIA V100",
        "AMD MI50",
        "NVIDIA RTX 8000",
        "Intel Gaudi",
        "NVIDIA V100 = 1",
        "no result",
        "throughput relative to NVIDIA V100 (log scale)",
    ];
    texts.extend(BENCHES);
    let img = check("grid_bars", &chart, spec.size, &texts);
    for c in &OKABE_ITO[..3] {
        assert!(img.has(*c), "bar colour {c:?} missing");
    }
    assert_stable("grid_bars", &chart, grid_bars(&spec));
}

#[test]
fn grid_bars_one_vendor_exact_values_other_size() {
    let mut spec = grid_spec(1, 5);
    spec.series[0].values[2] = Some(Estimate::exact(1.3));
    spec.series[0].values[3] = Some(Estimate::exact(1.0));
    spec.size = Size::new(800, 500);
    let chart = grid_bars(&spec).expect("chart");
    let img = check(
        "grid_bars_one_vendor",
        &chart,
        spec.size,
        &["AMD MI50", "atari"],
    );
    assert!(img.has(OKABE_ITO[0]));
    assert!(
        !chart.svg.contains(">\nno result"),
        "no missing value, no legend entry"
    );
}

#[test]
fn grid_bars_thirty_long_bench_names() {
    let mut spec = grid_spec(4, 30);
    spec.benches = (0..30)
        .map(|i| format!("{}_distributed_{i:02}", BENCHES[i % 19]))
        .collect();
    let chart = grid_bars(&spec).expect("chart");
    let names: Vec<&str> = spec.benches.iter().map(String::as_str).collect();
    let img = check("grid_bars_30_long", &chart, spec.size, &names);
    // The names are set vertically under the plot: plenty of dark pixels down there.
    assert!(img.dark_in_rows(img.height - 150, img.height - 10) > 2000);

    // Names too long for 40 % of the height are shortened in the middle, never clipped.
    spec.benches[0] =
        "a_bench_name_that_is_far_too_long_to_fit_under_the_plot_even_vertically_0".into();
    let chart = grid_bars(&spec).expect("chart");
    let texts = svg_texts(&chart.svg);
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("a_bench_name") && t.contains('…') && t.ends_with("_0"))
    );
}

#[test]
fn grid_bars_long_vendor_names_put_the_legend_below() {
    let mut spec = grid_spec(3, 8);
    for (i, s) in spec.series.iter_mut().enumerate() {
        s.label = format!("Vendor {i} with an accelerator model name that goes on and on");
    }
    let chart = grid_bars(&spec).expect("chart");
    let label = spec.series[2].label.as_str();
    check("grid_bars_legend_below", &chart, spec.size, &[label]);
    let texts = svg_texts_with_y(&chart.svg);
    let y_of = |t: &str| {
        texts
            .iter()
            .find(|(s, _)| s == t)
            .map(|(_, y)| *y)
            .expect(t)
    };
    assert!(y_of(label) > y_of("atari"), "legend below the bench names");
}

#[test]
fn grid_bars_all_missing_still_draws() {
    let mut spec = grid_spec(2, 3);
    for s in &mut spec.series {
        s.values = vec![None; 3];
    }
    let chart = grid_bars(&spec).expect("chart");
    check("grid_bars_all_missing", &chart, spec.size, &["no result"]);
}

#[test]
fn grid_bars_refuses_bad_input() {
    let mut spec = grid_spec(2, 3);
    spec.series[0].values[1] = Some(Estimate::new(f64::NAN, 1.0, 1.0));
    let err = grid_bars(&spec).unwrap_err();
    assert!(matches!(err, PlotError::NonFinite { .. }), "{err}");
    assert!(err.to_string().contains("bench `bert`"), "{err}");

    let mut spec = grid_spec(2, 3);
    spec.series[1].values[0] = Some(Estimate::new(1.0, 0.9, f64::INFINITY));
    assert!(matches!(grid_bars(&spec), Err(PlotError::NonFinite { .. })));

    let mut spec = grid_spec(2, 3);
    spec.series[1].values[0] = Some(Estimate::new(0.0, 0.0, 0.0));
    assert!(matches!(
        grid_bars(&spec),
        Err(PlotError::NotPositive { .. })
    ));

    let mut spec = grid_spec(2, 3);
    spec.series[1].values[0] = Some(Estimate::new(1.0, 1.1, 1.2));
    assert!(matches!(grid_bars(&spec), Err(PlotError::Invalid { .. })));

    let mut spec = grid_spec(2, 3);
    spec.series[1].values.pop();
    assert!(matches!(
        grid_bars(&spec),
        Err(PlotError::LengthMismatch { .. })
    ));

    let mut spec = grid_spec(2, 3);
    spec.benches.clear();
    assert!(matches!(grid_bars(&spec), Err(PlotError::Empty { .. })));

    let mut spec = grid_spec(2, 3);
    spec.series.clear();
    assert!(matches!(grid_bars(&spec), Err(PlotError::Empty { .. })));

    let mut spec = grid_spec(2, 3);
    spec.size = Size::new(100, 100);
    assert!(matches!(grid_bars(&spec), Err(PlotError::Size { .. })));
}

// ---------------------------------------------------------------- overall_bars

fn overall_spec() -> OverallBars {
    let e = |v: f64| Estimate::new(v, v * 0.95, v * 1.04);
    OverallBars {
        title: "Overall throughput".into(),
        entries: vec![
            OverallEntry::new("AMD MI50", e(0.82), 2),
            OverallEntry::new("NVIDIA RTX 8000", e(1.21), 1),
            OverallEntry::new("Intel Gaudi", e(1.05), 1),
            OverallEntry::new("Graphcore IPU", e(0.64), 3),
            OverallEntry::new("NVIDIA A100", e(2.4), 1),
            OverallEntry::new("AMD MI100", e(1.12), 2),
        ],
        baseline: "NVIDIA V100".into(),
        ..OverallBars::default()
    }
}

#[test]
fn overall_bars_sorted_by_tier_then_value() {
    let spec = overall_spec();
    let chart = overall_bars(&spec).expect("chart");
    let img = check(
        "overall_bars",
        &chart,
        spec.size,
        &[
            "Overall throughput",
            "tier 1",
            "tier 2",
            "tier 3",
            "NVIDIA A100",
            "2.40  [2.28, 2.50]",
            "overall throughput relative to NVIDIA V100 (log scale)",
        ],
    );
    for c in &OKABE_ITO[..6] {
        assert!(img.has(*c), "bar colour {c:?} missing");
    }
    let order = [
        "tier 1",
        "NVIDIA A100",
        "NVIDIA RTX 8000",
        "Intel Gaudi",
        "tier 2",
        "AMD MI100",
        "AMD MI50",
        "tier 3",
        "Graphcore IPU",
    ];
    let texts = svg_texts_with_y(&chart.svg);
    let ys: Vec<f64> = order
        .iter()
        .map(|o| {
            texts
                .iter()
                .find(|(t, _)| t == o)
                .map(|(_, y)| *y)
                .expect("row")
        })
        .collect();
    assert!(
        ys.windows(2).all(|w| w[0] < w[1]),
        "rows out of order: {ys:?}"
    );
    assert_stable("overall_bars", &chart, overall_bars(&spec));
}

#[test]
fn overall_bars_one_entry_no_interval() {
    let spec = OverallBars {
        title: "One vendor".into(),
        entries: vec![OverallEntry::new("Only", Estimate::exact(1.0), 1)],
        baseline: "itself".into(),
        ..OverallBars::default()
    };
    let chart = overall_bars(&spec).expect("chart");
    let img = check("overall_bars_one", &chart, spec.size, &["Only", "1.00"]);
    assert!(img.has(OKABE_ITO[0]), "the point at 1 is drawn");
    assert!(!svg_texts(&chart.svg).iter().any(|t| t.starts_with("tier")));
}

#[test]
fn overall_bars_refuses_bad_input() {
    let mut spec = overall_spec();
    spec.entries[2].estimate.hi = f64::NAN;
    assert!(matches!(
        overall_bars(&spec),
        Err(PlotError::NonFinite { .. })
    ));
    let mut spec = overall_spec();
    spec.entries[0].estimate = Estimate::new(-1.0, -2.0, 0.5);
    assert!(matches!(
        overall_bars(&spec),
        Err(PlotError::NotPositive { .. })
    ));
    spec.entries.clear();
    assert!(matches!(overall_bars(&spec), Err(PlotError::Empty { .. })));
}

// ---------------------------------------------------------------- heatmap

fn heatmap_spec() -> Heatmap {
    let rows: Vec<String> = (0..8).map(|g| format!("GPU {g}")).collect();
    let values = (0..8)
        .map(|g| {
            (0..19)
                .map(|b| {
                    if (g, b) == (3, 7) {
                        None
                    } else {
                        Some(1.0 + 0.12 * wiggle(b, g))
                    }
                })
                .collect()
        })
        .collect();
    Heatmap {
        title: "Per-GPU throughput relative to the node mean".into(),
        rows,
        columns: benches(),
        values,
        ..Heatmap::default()
    }
}

#[test]
fn heatmap_gpus_by_benches() {
    let spec = heatmap_spec();
    let chart = heatmap(&spec).expect("chart");
    let first = format!("{:.2}", spec.values[0][0].expect("a value"));
    let mut texts = vec![
        "GPU 0",
        "GPU 7",
        "n/a",
        "no result",
        "≤0.90",
        "1.00",
        "≥1.10",
        "relative performance",
    ];
    texts.extend(BENCHES);
    texts.push(&first);
    let img = check("heatmap", &chart, spec.size, &texts);
    // Cells of both arms of the diverging scale and the grey of the missing cell.
    let orange = img.any(|c| c[0] > 170 && c[2] < 40);
    let blue = img.any(|c| c[2] > 150 && c[0] < 60);
    assert!(orange && blue, "both arms of the scale");
    assert!(img.has([0xD9, 0xD9, 0xD9]), "missing cell colour");
    assert_stable("heatmap", &chart, heatmap(&spec));
}

#[test]
fn heatmap_extreme_and_single_cell() {
    let spec = Heatmap {
        title: "One cell".into(),
        rows: vec!["GPU 0".into()],
        columns: vec!["vae".into()],
        values: vec![vec![Some(1.5)]],
        ..Heatmap::default()
    };
    let chart = heatmap(&spec).expect("chart");
    check("heatmap_one", &chart, spec.size, &["1.50", "GPU 0", "vae"]);
}

#[test]
fn heatmap_refuses_bad_input() {
    let mut spec = heatmap_spec();
    spec.values[0][0] = Some(f64::NEG_INFINITY);
    assert!(matches!(heatmap(&spec), Err(PlotError::NonFinite { .. })));
    let mut spec = heatmap_spec();
    spec.values[2].push(Some(1.0));
    assert!(matches!(
        heatmap(&spec),
        Err(PlotError::LengthMismatch { .. })
    ));
    let mut spec = heatmap_spec();
    spec.range = (1.1, 0.9);
    assert!(matches!(heatmap(&spec), Err(PlotError::Invalid { .. })));
    let mut spec = heatmap_spec();
    spec.rows.clear();
    spec.values.clear();
    assert!(matches!(heatmap(&spec), Err(PlotError::Empty { .. })));
}

// ---------------------------------------------------------------- distributions

fn distributions_spec() -> Distributions {
    let targets = [
        5.41, 19.8, 2000.0, 1090.0, 1500.0, 280.0, 5.5, 11.0, 3100.0, 1.2, 3.9e4, 82.0, 18.0,
        2.9e4, 1.1e5, 9.2e3, 2.7e4, 3.5e4, 5.2e4,
    ];
    Distributions {
        title: "Run values against the targets".into(),
        benches: BENCHES
            .iter()
            .zip(targets)
            .enumerate()
            .map(|(i, (b, t))| {
                let values = if i == 17 {
                    Vec::new()
                } else {
                    (0..5)
                        .map(|k| t * (1.0 + 0.004 * wiggle(i, k) + 0.01))
                        .collect()
                };
                let target = if i == 6 { None } else { Some(t) };
                BenchRuns::new(*b, values, target, "items/s")
            })
            .collect(),
        ..Distributions::default()
    }
}

#[test]
fn distributions_nineteen_panels() {
    let spec = distributions_spec();
    let chart = distributions(&spec).expect("chart");
    let mut texts = vec![
        "Run values against the targets",
        "run",
        "target",
        "no runs",
        "n = 5 · no target",
    ];
    texts.extend(BENCHES);
    let img = check("distributions", &chart, spec.size, &texts);
    assert!(img.has(OKABE_ITO[3]), "target line colour");
    assert!(chart.svg.contains("vs target"));
    assert_stable("distributions", &chart, distributions(&spec));
}

#[test]
fn distributions_one_bench_one_run() {
    let spec = Distributions {
        title: "One".into(),
        benches: vec![BenchRuns::new("vae", vec![1.0], Some(1.0), "")],
        size: Size::new(600, 400),
        ..Distributions::default()
    };
    let chart = distributions(&spec).expect("chart");
    check(
        "distributions_one",
        &chart,
        spec.size,
        &["vae", "n = 1 · median +0.00 % vs target"],
    );
}

#[test]
fn distributions_refuses_bad_input() {
    let mut spec = distributions_spec();
    spec.benches[3].values[2] = f64::NAN;
    let err = distributions(&spec).unwrap_err();
    assert!(matches!(err, PlotError::NonFinite { .. }));
    assert!(err.to_string().contains("convnet"), "{err}");
    let mut spec = distributions_spec();
    spec.benches[0].target = Some(f64::INFINITY);
    assert!(matches!(
        distributions(&spec),
        Err(PlotError::NonFinite { .. })
    ));
    let mut spec = distributions_spec();
    spec.columns = 0;
    assert!(matches!(
        distributions(&spec),
        Err(PlotError::Invalid { .. })
    ));
    spec.benches.clear();
    assert!(matches!(distributions(&spec), Err(PlotError::Empty { .. })));
}

// ---------------------------------------------------------------- loss_curves

fn loss_spec() -> LossCurves {
    let curve = |g: usize, r: usize| -> Vec<f64> {
        (0..100)
            .map(|s| 2.0 * (-(s as f64) / 40.0).exp() + 0.3 + 0.05 * wiggle(s, g * 5 + r))
            .collect()
    };
    let mid: Vec<f64> = (0..100)
        .map(|s| 2.0 * (-(s as f64) / 40.0).exp() + 0.3)
        .collect();
    LossCurves {
        title: "vae".into(),
        lines: (0..8)
            .flat_map(|g| (0..5).map(move |r| (g, r)))
            .map(|(g, r)| LossLine::new(format!("GPU {g}"), curve(g, r)))
            .collect(),
        band: Some(Band {
            lo: mid.iter().map(|m| m - 0.12).collect(),
            hi: mid.iter().map(|m| m + 0.12).collect(),
            label: None,
        }),
        ..LossCurves::default()
    }
}

#[test]
fn loss_curves_forty_lines_over_a_band() {
    let spec = loss_spec();
    let chart = loss_curves(&spec).expect("chart");
    let img = check(
        "loss_curves",
        &chart,
        spec.size,
        &[
            "vae",
            "GPU 0",
            "GPU 7",
            "validator band",
            "step (last 100 logged)",
            "batch loss",
        ],
    );
    // Semi-transparent lines blend: far more colours than the palette.
    assert!(img.color_count() > 50);
    assert_eq!(
        chart.svg.matches(">\nGPU 3\n<").count(),
        1,
        "one legend entry per label"
    );
    assert_stable("loss_curves", &chart, loss_curves(&spec));
}

#[test]
fn loss_curves_one_line_no_band() {
    let spec = LossCurves {
        title: "ppo".into(),
        lines: vec![LossLine::new("run 0", vec![0.5, 0.4, 0.45, 0.3])],
        x_label: Some("step".into()),
        y_label: Some("loss (nats)".into()),
        ..LossCurves::default()
    };
    let chart = loss_curves(&spec).expect("chart");
    check(
        "loss_curves_one",
        &chart,
        spec.size,
        &["ppo", "run 0", "step", "loss (nats)"],
    );
}

#[test]
fn loss_curves_refuses_bad_input() {
    let mut spec = loss_spec();
    spec.lines[5].values[10] = f64::NAN;
    let err = loss_curves(&spec).unwrap_err();
    assert!(matches!(err, PlotError::NonFinite { .. }));
    assert!(err.to_string().contains("step 10"), "{err}");
    let mut spec = loss_spec();
    if let Some(b) = &mut spec.band {
        b.hi.pop();
    }
    assert!(matches!(
        loss_curves(&spec),
        Err(PlotError::LengthMismatch { .. })
    ));
    let mut spec = loss_spec();
    if let Some(b) = &mut spec.band {
        b.lo[3] = b.hi[3] + 1.0;
    }
    assert!(matches!(loss_curves(&spec), Err(PlotError::Invalid { .. })));
    let spec = LossCurves {
        lines: vec![LossLine::new("empty", Vec::new())],
        ..LossCurves::default()
    };
    assert!(matches!(loss_curves(&spec), Err(PlotError::Empty { .. })));
    assert!(matches!(
        loss_curves(&LossCurves::default()),
        Err(PlotError::Empty { .. })
    ));
}

// ---------------------------------------------------------------- text safety

#[test]
fn labels_with_markup_and_control_characters_keep_the_svg_well_formed() {
    let mut spec = grid_spec(2, 2);
    spec.title = "<b>R&D</b> \"quoted\" 'x'\u{7}".into();
    spec.series[0].label = "A & B <vendor>".into();
    let chart = grid_bars(&spec).expect("chart");
    let texts = svg_texts(&chart.svg);
    assert!(
        texts.iter().any(|t| t == "<b>R&D</b> \"quoted\" 'x'"),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t == "A & B <vendor>"));
}
