//! Text that must not be cut or counted wrong: legends of many long labels, long bench
//! and vendor names, interval figures, notes. Each chart's texts are snapshotted in
//! document order, every text is checked to lie inside the image without overlapping
//! another, and the PNGs go to `$TMPDIR/mlbench-plots-tests/` for a look.

mod common;

use common::{assert_texts_fit, check, decode, svg_texts, text_lines, wiggle};
use mlbench_plots::{
    Band, BenchRuns, Distributions, Estimate, GridBars, Heatmap, LINE_STYLES, LossCurves, LossLine,
    OverallBars, OverallEntry, PlotError, PowerLine, PowerTrace, PowerWindow, Series, Size,
    WindowEnergy, distributions, grid_bars, heatmap, loss_curves, loss_styles, overall_bars,
    power_trace,
};
use std::collections::BTreeSet;

/// Whether `label` appears among `texts`, whole or wrapped over consecutive texts.
fn has_label(texts: &[String], label: &str) -> bool {
    let squash = |s: &str| s.split_whitespace().collect::<String>();
    let want = squash(label);
    (0..texts.len()).any(|i| {
        let mut joined = String::new();
        texts[i..].iter().any(|t| {
            joined.push_str(&squash(t));
            joined == want
        })
    })
}

// ---------------------------------------------------------------- loss curves

/// 5 runs × 4 GPUs, labelled as `mlbench plot loss` labels them, with long paths.
fn twenty_curves() -> LossCurves {
    let mid = |s: usize| 110.0 * (-(s as f64) / 80.0).exp() + 5.0;
    let lines = (0..5)
        .flat_map(|r| (0..4).map(move |g| (r, g)))
        .map(|(r, g)| {
            let label =
                format!("output{r} GPU {g} (submissions/acme-corp/output{r}/fast_{g}.json#9)");
            let values = (0..100)
                .map(|s| mid(s) * (1.0 + 0.03 * wiggle(s, r * 4 + g)))
                .collect();
            LossLine::new(label, values).grouped(format!("output{r}"), format!("GPU {g}"))
        })
        .collect();
    LossCurves {
        title: "acme: vae batch loss, 5 runs × 4 GPUs".into(),
        lines,
        band: Some(Band {
            lo: (0..100).map(|s| mid(s) * 0.93).collect(),
            hi: (0..100).map(|s| mid(s) * 1.07).collect(),
            label: Some("validator's band (q10 − w … q90 + w)".into()),
        }),
        ..LossCurves::default()
    }
}

#[test]
fn loss_legend_lists_twenty_long_labels_in_full_below_the_plot() {
    let spec = twenty_curves();
    let chart = loss_curves(&spec).expect("chart");
    let img = decode(&chart.png);
    assert_eq!(img.width, 1200);
    assert!(
        img.height > 700,
        "the image grows for the legend: {}",
        img.height
    );
    let texts = svg_texts(&chart.svg);
    for l in &spec.lines {
        assert!(
            texts.contains(&l.label),
            "{} is not whole: {texts:?}",
            l.label
        );
    }
    assert!(
        texts
            .iter()
            .any(|t| t == "validator's band (q10 − w … q90 + w)")
    );
    check("layout_loss_20", &chart, Size::new(1200, img.height), &[]);
    assert_texts_fit("layout_loss_20", &chart.svg);
    insta::assert_snapshot!(text_lines(&chart.svg));
}

#[test]
fn loss_label_wider_than_the_image_wraps() {
    let mut spec = twenty_curves();
    spec.lines.truncate(2);
    spec.lines[1].label = format!(
        "output0 GPU 1 ({}/fast_1.json#9)",
        "very/deep/folder".repeat(8)
    );
    let chart = loss_curves(&spec).expect("chart");
    let texts = svg_texts(&chart.svg);
    assert!(has_label(&texts, &spec.lines[1].label), "{texts:?}");
    assert_texts_fit("layout_loss_wrapped", &chart.svg);
}

#[test]
fn twenty_curves_get_twenty_distinct_styles() {
    let distinct = |lines: &[LossLine]| {
        let styles = loss_styles(lines);
        assert_eq!(styles.len(), lines.len());
        styles.into_iter().collect::<BTreeSet<_>>().len()
    };
    // Grouped 5 runs × 4 GPUs: colour by run, dash by GPU.
    let spec = twenty_curves();
    assert_eq!(distinct(&spec.lines), 20);
    let styles = loss_styles(&spec.lines);
    assert_eq!(styles[0].color, styles[3].color, "one colour per run");
    assert_eq!(styles[0].dash, styles[4].dash, "one dash pattern per GPU");
    let line = |label: String, run: usize, gpu: usize| {
        LossLine::new(label, vec![1.0, 0.5]).grouped(format!("r{run}"), format!("g{gpu}"))
    };
    // 10 runs × 2 GPUs and 20 runs × 1 GPU: runs past the eighth colour change pattern.
    for (runs, gpus) in [(10, 2), (20, 1), (2, 10), (1, 20)] {
        let lines: Vec<LossLine> = (0..runs)
            .flat_map(|r| (0..gpus).map(move |g| line(format!("{r}/{g}"), r, g)))
            .collect();
        assert_eq!(distinct(&lines), 20, "{runs} runs × {gpus} GPUs");
    }
    // Ungrouped labels: the 32 distinct styles in turn.
    let lines: Vec<LossLine> = (0..LINE_STYLES)
        .map(|i| LossLine::new(format!("curve {i}"), vec![1.0]))
        .collect();
    assert_eq!(distinct(&lines), LINE_STYLES);
    // Lines of one label share a style; the answer depends on the input alone.
    let mut lines = spec.lines.clone();
    lines.push(spec.lines[0].clone());
    let styles = loss_styles(&lines);
    assert_eq!(styles[20], styles[0]);
    assert_eq!(styles, loss_styles(&lines));
}

// ---------------------------------------------------------------- runs chart

#[test]
fn runs_chart_keeps_long_bench_names_whole() {
    let names = [
        "atari",
        "convnet_distributed",
        "convnet_distributed_fp16",
        "dcgan_all",
        "a_bench_with_a_name_far_too_long_for_its_panel_fp16",
    ];
    let spec = Distributions {
        title: "acme: throughput of each run (mean over GPUs) against the RTX targets".into(),
        benches: names
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let t = 100.0 * (i + 1) as f64;
                let values = (0..5).map(|k| t * (1.01 + 0.004 * wiggle(i, k))).collect();
                BenchRuns::new(*b, values, Some(t), "items/s")
            })
            .collect(),
        ..Distributions::default()
    };
    let chart = distributions(&spec).expect("chart");
    let texts = svg_texts(&chart.svg);
    for b in names {
        assert!(has_label(&texts, b), "{b} is not whole: {texts:?}");
    }
    assert!(texts.contains(&"convnet_distributed_fp16".to_string()));
    check(
        "layout_runs",
        &chart,
        spec.size,
        &["convnet_distributed_fp16"],
    );
    assert_texts_fit("layout_runs", &chart.svg);
    insta::assert_snapshot!(text_lines(&chart.svg));
}

// ---------------------------------------------------------------- overall and grid bars

const LONG_A: &str = "Advanced Micro Devices Instinct MI250X Corporation";
const LONG_B: &str = "NVIDIA Corporation Tesla V100 SXM2 32GB Datacenter";

#[test]
fn overall_bars_print_the_callers_figures_and_whole_long_labels() {
    let spec = OverallBars {
        title: format!("Overall throughput relative to {LONG_A}"),
        entries: vec![
            OverallEntry::new("vendor02", Estimate::new(1.009, 1.008, 1.010), 1)
                .with_text("1.009  [1.008–1.010]"),
            OverallEntry::new(LONG_A, Estimate::exact(1.0), 2).with_text("1.000  [1.000–1.000]"),
            OverallEntry::new(LONG_B, Estimate::new(0.908, 0.907, 0.909), 3)
                .with_text("0.908  [0.907–0.909]"),
        ],
        baseline: LONG_A.into(),
        ..OverallBars::default()
    };
    let chart = overall_bars(&spec).expect("chart");
    let texts = svg_texts(&chart.svg);
    for t in ["1.009  [1.008–1.010]", "0.908  [0.907–0.909]"] {
        assert!(texts.iter().any(|x| x == t), "{t}: {texts:?}");
    }
    let axis = format!("overall throughput relative to {LONG_A} (log scale)");
    for label in [LONG_A, LONG_B, axis.as_str(), spec.title.as_str()] {
        assert!(has_label(&texts, label), "{label} is not whole: {texts:?}");
    }
    check("layout_overall", &chart, spec.size, &["vendor02"]);
    assert_texts_fit("layout_overall", &chart.svg);
    insta::assert_snapshot!(text_lines(&chart.svg));
}

#[test]
fn grid_bars_make_room_for_a_long_baseline_in_the_y_title() {
    let benches: Vec<String> = common::BENCHES.iter().map(|b| b.to_string()).collect();
    let series = [LONG_A, "vendor02", LONG_B]
        .iter()
        .enumerate()
        .map(|(v, name)| {
            let values = (0..benches.len())
                .map(|i| {
                    let r = 1.0 - 0.05 * v as f64 + 0.01 * wiggle(i, v);
                    Some(Estimate::new(r, r * 0.99, r * 1.01))
                })
                .collect();
            Series::new(*name, values)
        })
        .collect();
    let spec = GridBars {
        title: format!("Throughput relative to {LONG_A}, by bench"),
        benches,
        series,
        baseline: LONG_A.into(),
        ..GridBars::default()
    };
    let chart = grid_bars(&spec).expect("chart");
    let texts = svg_texts(&chart.svg);
    let axis = format!("throughput relative to {LONG_A} (log scale)");
    assert!(has_label(&texts, &axis), "{axis}: {texts:?}");
    assert!(has_label(&texts, &format!("{LONG_A} = 1")));
    check("layout_grid", &chart, spec.size, &[LONG_B]);
    assert_texts_fit("layout_grid", &chart.svg);
    insta::assert_snapshot!(text_lines(&chart.svg));
}

// ---------------------------------------------------------------- heatmap

#[test]
fn heatmap_says_what_it_leaves_out() {
    // The benches with a per-GPU value, their names set vertically under the cells.
    let columns: Vec<String> = common::benches();
    let note = "not per GPU: convnet_distributed, convnet_distributed_fp16, dcgan_all \
                (whole-machine benches, no per-GPU value)";
    let spec = Heatmap {
        title: "acme: each GPU's throughput relative to the mean of all GPUs".into(),
        rows: (0..4).map(|g| format!("GPU {g}")).collect(),
        values: (0..4)
            .map(|g| (0..19).map(|b| Some(1.0 + 0.02 * wiggle(b, g))).collect())
            .collect(),
        columns,
        note: Some(note.into()),
        ..Heatmap::default()
    };
    let chart = heatmap(&spec).expect("chart");
    let texts = svg_texts(&chart.svg);
    assert!(has_label(&texts, note), "{texts:?}");
    check("layout_heatmap_note", &chart, spec.size, &["GPU 3"]);
    assert_texts_fit("layout_heatmap_note", &chart.svg);
    insta::assert_snapshot!(text_lines(&chart.svg));
}

// ---------------------------------------------------------------- the checks themselves

#[test]
fn the_fit_check_catches_text_outside_the_image_and_overlaps() {
    let svg = |texts: &str| {
        format!(
            "<svg width=\"200\" height=\"100\" xmlns=\"http://www.w3.org/2000/svg\">{texts}</svg>"
        )
    };
    let text = |x: i32, y: i32, anchor: &str, s: &str| {
        format!(
            "<text x=\"{x}\" y=\"{y}\" dy=\"0.76em\" text-anchor=\"{anchor}\" font-size=\"16\">{s}</text>"
        )
    };
    let fails =
        |svg: String| std::panic::catch_unwind(|| assert_texts_fit("synthetic", &svg)).is_err();
    assert!(!fails(svg(&text(10, 10, "start", "fits"))));
    // Runs past the right edge, starts before the left one, sits below the bottom.
    assert!(fails(svg(&text(150, 10, "start", "far too long to fit"))));
    assert!(fails(svg(&text(20, 10, "end", "before the start"))));
    assert!(fails(svg(&text(10, 90, "start", "low"))));
    // Two texts on top of each other; set apart, they pass.
    let two = |y2| {
        format!(
            "{}{}",
            text(10, 10, "start", "one"),
            text(20, y2, "start", "two")
        )
    };
    assert!(fails(svg(&two(15))));
    assert!(!fails(svg(&two(40))));
}

#[test]
fn loss_refuses_sizes_before_laying_out_and_a_legend_past_the_limit() {
    let mut spec = twenty_curves();
    spec.size = Size::new(100, 100);
    assert!(matches!(loss_curves(&spec), Err(PlotError::Size { .. })));
    // A legend that would make the image taller than the limit: an error, not a panic.
    let mut spec = twenty_curves();
    for (i, l) in spec.lines.iter_mut().enumerate() {
        l.label = format!("{i} {}", "a long label ".repeat(20));
    }
    spec.lines
        .extend(spec.lines.clone().into_iter().map(|mut l| {
            l.label.push('!');
            l
        }));
    spec.size = Size::new(400, 5990);
    let err = loss_curves(&spec).unwrap_err();
    assert!(
        matches!(&err, PlotError::Invalid { what, .. } if what == "legend"),
        "{err}"
    );
}

// ---------------------------------------------------------------- power trace

/// Eight copies of a whole-machine-sized run: each its GPU and the CPU package (power from
/// its counter), every label with its energy, the windows a little apart, three notes.
#[test]
fn power_legend_of_sixteen_lines_with_energies_goes_below_and_keeps_every_label() {
    let mut lines = Vec::new();
    let mut windows = Vec::new();
    for copy in 0..8u32 {
        let start = 10.0 + f64::from(copy) * 0.3;
        let points = (0..120)
            .map(|i| {
                let t = f64::from(copy) * 0.3 + f64::from(i);
                let busy = (start..start + 100.0).contains(&t);
                (
                    t,
                    if busy { 650.0 } else { 70.0 } + 5.0 * wiggle(i as usize, copy as usize),
                )
            })
            .collect();
        let mut gpu = PowerLine::new(
            format!("cuda:{copy} NVIDIA H100 80GB HBM3 · copy {copy}"),
            points,
        );
        gpu.period_s = Some(1.0);
        gpu.idle_w = Some(68.0 + f64::from(copy));
        gpu.energy = vec![WindowEnergy {
            window: "train".into(),
            gross_j: 64_800.0 + f64::from(copy) * 100.0,
            net_j: Some(58_000.0 + f64::from(copy) * 100.0),
        }];
        let mut cpu = PowerLine::new(
            format!("cpu:package-0 · copy {copy}"),
            (0..119).map(|i| (f64::from(i) + 0.5, 180.0)).collect(),
        );
        cpu.from_counter = true;
        cpu.energy = vec![WindowEnergy {
            window: "train".into(),
            gross_j: 18_000.0,
            net_j: None,
        }];
        lines.extend([gpu, cpu]);
        windows.push(PowerWindow {
            name: "train".into(),
            start_s: start,
            end_s: start + 100.0,
        });
    }
    let spec = PowerTrace {
        title: "Power of convnet_distributed in output0".into(),
        subtitle: Some(
            "16 device lines of 8 copies, sampled at 1 Hz; shaded: the timed windows".into(),
        ),
        lines,
        windows,
        notes: vec![
            "The copies' files are put on one time axis by their wall-clock origins (to the \
             millisecond); each energy is on its file's own monotonic clock."
                .into(),
            "cpu:proc has no power or energy readings: not drawn.".into(),
        ],
        x_label: Some("time since sampling began (s)".into()),
        ..PowerTrace::default()
    };
    let chart = power_trace(&spec).expect("chart");
    let img = decode(&chart.png);
    assert!(
        img.height > 700,
        "the image grows for the legend: {}",
        img.height
    );
    let texts = svg_texts(&chart.svg);
    assert!(
        has_label(
            &texts,
            "cuda:7 NVIDIA H100 80GB HBM3 · copy 7: train 65.5 kJ (58.7 kJ net of idle 75.0 W)"
        ),
        "{texts:?}"
    );
    assert!(
        has_label(
            &texts,
            "cpu:package-0 · copy 3 (power from its energy counter's differences): train 18.0 kJ"
        ),
        "{texts:?}"
    );
    check("layout_power_16", &chart, Size::new(1200, img.height), &[]);
    insta::assert_snapshot!(text_lines(&chart.svg));
}
