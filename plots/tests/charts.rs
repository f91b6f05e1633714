//! Every chart: the PNG decodes at the requested size, is not blank and has the expected
//! colours; the SVG is well-formed XML with the expected texts; two renders give the same
//! bytes; edge cases render and bad input is refused with an error, not a panic.
//!
//! The PNGs are written to `$TMPDIR/mlbench-plots-tests/` for a look.

mod common;

use common::{BENCHES, assert_stable, benches, check, svg_texts, svg_texts_with_y, wiggle};
use mlbench_plots::{
    Band, BenchRuns, Distributions, Estimate, GridBars, Heatmap, LossCurves, LossLine, Measure,
    OKABE_ITO, OverallBars, OverallEntry, PlotError, PowerLine, PowerTrace, PowerWindow, Series,
    Size, WindowEnergy, distributions, grid_bars, heatmap, loss_curves, overall_bars, power_trace,
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

/// Entries in no tier (failed validation, say) come after every tier, whatever their
/// ratio, under the heading the caller gives; tier 1 stays first.
#[test]
fn overall_bars_untiered_entries_last_under_their_heading() {
    let mut spec = overall_spec();
    spec.entries.truncate(3);
    let e = Estimate::new(3.0, 2.9, 3.1);
    spec.entries
        .push(OverallEntry::untiered("Failed Vendor", e));
    spec.untiered = Some("not tiered: failed validation".into());
    let chart = overall_bars(&spec).expect("chart");
    let texts = svg_texts_with_y(&chart.svg);
    let y = |o: &str| {
        let found = texts.iter().find(|(t, _)| t == o);
        found.map(|(_, y)| *y).unwrap_or_else(|| panic!("no {o}"))
    };
    let order = ["tier 1", "Intel Gaudi", "tier 2", "AMD MI50"];
    let rest = ["not tiered: failed validation", "Failed Vendor"];
    let ys: Vec<f64> = order.iter().chain(&rest).map(|o| y(o)).collect();
    assert!(ys.windows(2).all(|w| w[0] < w[1]), "{ys:?}");
    assert!(!texts.iter().any(|(t, _)| t == "tier 0"), "{texts:?}");
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

// ---------------------------------------------------------------- power_trace

/// `n` readings a second apart from `t0`: `base` W, `busy` W inside `busy_from..busy_to`.
fn readings(t0: f64, n: usize, base: f64, busy: f64, busy_span: (f64, f64)) -> Vec<(f64, f64)> {
    (0..n)
        .map(|i| {
            let t = t0 + i as f64;
            let w = if t >= busy_span.0 && t < busy_span.1 {
                busy
            } else {
                base
            };
            (t, w + 3.0 * wiggle(i, 0))
        })
        .collect()
}

fn power_spec() -> PowerTrace {
    let mut gpu = PowerLine::new(
        "cuda:0 · copy 0",
        readings(0.0, 121, 62.0, 310.0, (10.0, 110.0)),
    );
    gpu.period_s = Some(1.0);
    gpu.idle_w = Some(61.5);
    gpu.energy = vec![WindowEnergy {
        window: "train".into(),
        gross_j: 31_012.0,
        net_j: Some(24_862.0),
    }];
    // A CPU package with a counter only, and no readings from 50 s to 60 s.
    let mut cpu = PowerLine::new(
        "cpu:package-0 · copy 0",
        readings(0.5, 121, 40.0, 95.0, (10.0, 110.0)),
    );
    cpu.points.retain(|p| !(50.0..60.0).contains(&p.0));
    cpu.period_s = Some(1.0);
    cpu.from_counter = true;
    PowerTrace {
        title: "vae: power".into(),
        subtitle: Some("output0 · 1 Hz".into()),
        lines: vec![gpu, cpu],
        windows: vec![PowerWindow {
            name: "train".into(),
            start_s: 10.0,
            end_s: 110.0,
        }],
        notes: vec!["Copies aligned on their files' wall-clock origins.".into()],
        ..PowerTrace::default()
    }
}

/// The `points` of every `<polyline>` stroked in `color` (and `width` px wide), parsed.
fn polylines(svg: &str, color: [u8; 3], width: Option<&str>) -> Vec<Vec<(f64, f64)>> {
    let hex = format!("#{:02X}{:02X}{:02X}", color[0], color[1], color[2]);
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .filter(|n| {
            n.attribute("stroke")
                .is_some_and(|s| s.eq_ignore_ascii_case(&hex))
        })
        .filter(|n| width.is_none_or(|w| n.attribute("stroke-width") == Some(w)))
        .map(|n| {
            n.attribute("points")
                .unwrap_or("")
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').expect("x,y");
                    (x.parse().expect("x"), y.parse().expect("y"))
                })
                .collect()
        })
        .collect()
}

/// The attribute `name` of the first `<text>` reading `text` set with `anchor` (a tick
/// label's position: x ticks are centred, y ticks end at the axis).
fn text_attr(svg: &str, text: &str, anchor: &str, name: &str) -> f64 {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    doc.descendants()
        .find(|n| {
            n.has_tag_name("text")
                && n.text().map(str::trim) == Some(text)
                && n.attribute("text-anchor") == Some(anchor)
        })
        .and_then(|n| n.attribute(name)?.parse().ok())
        .unwrap_or_else(|| panic!("no text {text:?}"))
}

/// Every `<polyline>` stroked `width` px wide in `color`, as its points, but the legend's
/// swatches (two points, level, 22 px long).
fn strokes(svg: &str, color: [u8; 3], width: &str) -> Vec<Vec<(f64, f64)>> {
    let swatch = |l: &Vec<(f64, f64)>| {
        l.len() == 2 && l[0].1 == l[1].1 && (l[1].0 - l[0].0 - 22.0).abs() < 0.5
    };
    let mut lines = polylines(svg, color, Some(width));
    lines.retain(|l| !swatch(l));
    lines
}

#[test]
fn power_trace_two_devices_a_window_an_idle_level_and_a_gap() {
    let spec = power_spec();
    let chart = power_trace(&spec).expect("chart");
    let img = check(
        "power_trace",
        &chart,
        spec.size,
        &["vae: power", "output0 · 1 Hz", "time (s)", "power (W)"],
    );
    assert!(img.has(OKABE_ITO[0]) && img.has(OKABE_ITO[1]));
    assert!(!chart.svg.contains("NaN") && !chart.svg.contains("inf"));
    let svg = &chart.svg;
    // The x axis, from two tick labels: pixels per second and the pixel of 0 s.
    let (x20, x100) = (
        text_attr(svg, "20", "middle", "x"),
        text_attr(svg, "100", "middle", "x"),
    );
    let px = |t: f64| x20 + (t - 20.0) * (x100 - x20) / 80.0;
    // The window: one shaded rectangle from 10 s to 110 s.
    let doc = roxmltree::Document::parse(svg).unwrap();
    let band = doc
        .descendants()
        .find(|n| {
            n.has_tag_name("rect")
                && n.attribute("fill") == Some("#888888")
                && n.attribute("opacity") == Some("0.18")
        })
        .expect("the window's shade");
    let num = |a: &str| band.attribute(a).unwrap().parse::<f64>().unwrap();
    assert!(
        (num("x") - px(10.0)).abs() <= 1.0,
        "{} vs {}",
        num("x"),
        px(10.0)
    );
    assert!((num("x") + num("width") - px(110.0)).abs() <= 1.0);
    // The GPU is one unbroken line of its 121 readings; the CPU breaks at its gap, from
    // its reading at 49.5 s to the one at 60.5 s.
    let gpu = strokes(svg, OKABE_ITO[0], "2");
    assert_eq!(gpu.len(), 1, "{gpu:?}");
    assert!(
        (gpu[0][0].0 - px(0.0)).abs() <= 1.0 && (gpu[0].last().unwrap().0 - px(120.0)).abs() <= 1.0
    );
    let cpu = strokes(svg, OKABE_ITO[1], "2");
    assert_eq!(cpu.len(), 2, "{cpu:?}");
    assert!((cpu[0].last().unwrap().0 - px(49.5)).abs() <= 1.0);
    assert!((cpu[1][0].0 - px(60.5)).abs() <= 1.0);
    // The idle level: dashes of the GPU's colour, 1 px, all on the line of 61.5 W.
    let (y0, y100) = (
        text_attr(svg, "0", "end", "y"),
        text_attr(svg, "100", "end", "y"),
    );
    let idle_y = y0 + 61.5 * (y100 - y0) / 100.0;
    let dashes = strokes(svg, OKABE_ITO[0], "1");
    assert!(dashes.len() > 20, "{}", dashes.len());
    assert!(
        dashes.iter().flatten().all(|p| (p.1 - idle_y).abs() <= 1.0),
        "{dashes:?}"
    );
    // Energy (31 012 J → 31.0 kJ, net 24 862 J → 24.9 kJ) and the counter's note in the
    // legend; the caller's note and the gap's under the plot.
    let all = svg_texts(svg).join(" ");
    assert!(
        all.contains("train 31.0 kJ (24.9 kJ") && all.contains("net of idle 61.5 W"),
        "{all}"
    );
    assert!(all.contains("energy counter's differences"), "{all}");
    assert!(all.contains("Copies aligned on their files' wall-clock origins."));
    assert!(all.contains("more than two sampling periods apart"));
    assert!(all.contains("timed window `train`") && all.contains("idle baseline"));
    assert_stable("power_trace", &chart, power_trace(&spec));
}

#[test]
fn power_trace_one_reading_a_zero_length_window_and_a_device_without_power() {
    let spec = PowerTrace {
        title: "cart".into(),
        lines: vec![
            PowerLine::new("cuda:0", vec![(3.0, 120.0)]),
            PowerLine::new("cpu:proc", vec![]),
        ],
        windows: vec![PowerWindow {
            name: "train".into(),
            start_s: 3.0,
            end_s: 3.0,
        }],
        size: Size::new(800, 500),
        ..PowerTrace::default()
    };
    let chart = power_trace(&spec).expect("chart");
    check("power_trace_one", &chart, spec.size, &["cart"]);
    let svg = &chart.svg;
    assert!(!svg.contains("NaN"));
    // The reading is a dot, no line; the window a line of 2 px, no shade.
    assert!(strokes(svg, OKABE_ITO[0], "2").is_empty());
    assert!(svg.contains("<circle"), "the reading's dot");
    assert_eq!(polylines(svg, [0x88, 0x88, 0x88], Some("2")).len(), 2);
    assert!(!svg.contains("opacity=\"0.18\""), "a shade of zero width");
    let all = svg_texts(svg).join(" ");
    assert!(all.contains("cpu:proc: no power readings"), "{all}");
    assert!(
        all.contains("zero length is drawn as a line: train"),
        "{all}"
    );
}

#[test]
fn power_trace_draws_a_long_trace_as_its_envelope() {
    // 10 Hz for an hour: 36 000 readings, a spike of 500 W at 1800 s.
    let points: Vec<(f64, f64)> = (0..36_000)
        .map(|i| {
            (
                i as f64 / 10.0,
                if i == 18_000 {
                    500.0
                } else {
                    100.0 + (i % 7) as f64
                },
            )
        })
        .collect();
    let mut line = PowerLine::new("cuda:0", points);
    line.period_s = Some(0.1);
    let spec = PowerTrace {
        title: "long".into(),
        lines: vec![line],
        ..PowerTrace::default()
    };
    let chart = power_trace(&spec).expect("chart");
    let lines = strokes(&chart.svg, OKABE_ITO[0], "2");
    assert_eq!(lines.len(), 1);
    let n = lines[0].len();
    assert!(n <= 4 * spec.size.width as usize, "{n} points drawn");
    // The spike survives: its y is above every other point's.
    let y500 = text_attr(&chart.svg, "500", "end", "y");
    let top = lines[0].iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    assert!((top - y500).abs() <= 1.0, "{top} vs {y500}");
    assert!(chart.svg.len() < 200_000, "{} bytes", chart.svg.len());
}

/// Thousands of windows (a broken or hostile file: `mlbench run` marks one) are all
/// shaded, but the legend names eight and each line's energy over those eight, and a note
/// says so: the chart is drawn at its size, in moments.
#[test]
fn power_trace_of_ten_thousand_windows_names_eight() {
    let mut spec = power_spec();
    spec.windows = (0..10_000)
        .map(|i| PowerWindow {
            name: format!("w{i}"),
            start_s: 10.0 + f64::from(i) * 0.01,
            end_s: 10.0 + f64::from(i) * 0.01 + 0.005,
        })
        .collect();
    spec.lines[0].energy = (0..10_000)
        .map(|i| WindowEnergy {
            window: format!("w{i}"),
            gross_j: 1.0,
            net_j: None,
        })
        .collect();
    let chart = power_trace(&spec).expect("chart");
    let text = chart.svg.replace('\n', " ");
    assert!(text.contains("timed window `w7`") && !text.contains("timed window `w8`"));
    assert!(
        text.contains("9992"),
        "the legend says how many windows it leaves out"
    );
    for word in [
        "10000", "windows", "are", "shaded;", "legend", "names", "first", "8.",
    ] {
        assert!(text.contains(word), "the note lacks {word:?}");
    }
    // The PNG's height (IHDR, bytes 20..24): no legend of 10 000 rows made it grow.
    let height = u32::from_be_bytes(chart.png[20..24].try_into().unwrap());
    assert!(height < 2 * spec.size.height, "{height} px");
}

#[test]
fn power_trace_refuses_bad_input() {
    let ok = power_spec();
    let refuse = |f: &dyn Fn(&mut PowerTrace), want: &str| {
        let mut spec = ok.clone();
        f(&mut spec);
        let err = power_trace(&spec).expect_err(want).to_string();
        assert!(err.contains(want), "{err:?} lacks {want:?}");
    };
    refuse(
        &|s| s.lines.clear(),
        "nothing to plot: the list of power lines is empty",
    );
    refuse(
        &|s| s.lines.iter_mut().for_each(|l| l.points.clear()),
        "the power readings of every line is empty",
    );
    refuse(
        &|s| s.lines[0].points[3].1 = f64::NAN,
        "power line `cuda:0 · copy 0`, point 3: power is NaN",
    );
    refuse(
        &|s| s.lines[1].points[2].0 = f64::INFINITY,
        "point 2: time is inf",
    );
    refuse(
        &|s| s.lines[0].points.swap(4, 5),
        "point 5: its time 4 s is before the previous point's 5 s",
    );
    refuse(
        &|s| s.lines[0].period_s = Some(0.0),
        "sampling period: 0 s: must be more than 0",
    );
    refuse(&|s| s.lines[0].idle_w = Some(f64::NAN), "idle power is NaN");
    refuse(
        &|s| s.lines[0].energy[0].gross_j = f64::NAN,
        "window `train`: energy is NaN",
    );
    refuse(
        &|s| s.windows[0].end_s = 5.0,
        "window `train`: it ends (5 s) before it starts (10 s)",
    );
    refuse(
        &|s| s.windows[0].start_s = f64::NAN,
        "window `train`: start is NaN",
    );
    refuse(&|s| s.size = Size::new(100, 100), "image size 100×100 px");
}

#[test]
fn grid_and_overall_bars_word_their_axis_by_the_measure() {
    let mut spec = grid_spec(2, 3);
    spec.measure = Measure::ItemsPerJoule;
    let chart = grid_bars(&spec).expect("chart");
    check(
        "grid_bars_per_joule",
        &chart,
        spec.size,
        &["items per joule relative to NVIDIA V100 (log scale)"],
    );
    let mut overall = overall_spec();
    overall.measure = Measure::ItemsPerJoule;
    let chart = overall_bars(&overall).expect("chart");
    let all = svg_texts(&chart.svg).join(" ");
    assert!(all.contains("overall items per joule relative to"), "{all}");
    assert!(!all.contains("throughput relative"), "{all}");
    // The default is throughput, as before.
    let chart = overall_bars(&overall_spec()).expect("chart");
    assert!(
        svg_texts(&chart.svg)
            .join(" ")
            .contains("overall throughput relative to")
    );
}
