//! The grid against hand computations (the arithmetic is in the comments).

use mlbench_analyzer::bootstrap::{Strata, Xoshiro256, percentile_interval, stream};
use mlbench_analyzer::grid::{Cell, GridError, Weights, assign_tiers};
use mlbench_analyzer::samples::Sample;
use mlbench_analyzer::{Grid, GridInput, GridOptions, SampleSet, grid};
use mlbench_results::report::InputSummary;
use mlbench_schema::FailureKind;
use mlbench_schema::Track;

/// A submission from (bench, device, values of its runs).
fn set(rows: &[(&str, u32, &[f64])]) -> SampleSet {
    let mut samples = Vec::new();
    let mut runs = 0;
    for (bench, device, values) in rows {
        for (run, v) in values.iter().enumerate() {
            samples.push(Sample {
                bench: Some((*bench).to_owned()),
                run: run as u32,
                device: Some(*device),
                host: None,
                model: None,
                world: Some(1),
                value: Some(*v),
                failure: None,
                conflict: false,
                file: 0,
                entry: samples.len() as u32,
                batch_size: None,
            });
        }
        runs = runs.max(values.len());
    }
    let mut devices: Vec<u32> = rows.iter().map(|r| r.1).collect();
    devices.sort_unstable();
    devices.dedup();
    SampleSet {
        suite: "fast".into(),
        runs: (0..runs).map(|r| format!("output{r}")).collect(),
        summary: InputSummary {
            layout: "legacy".into(),
            files: 1,
            entries: samples.len(),
            runs,
            gpus: devices.len(),
            excluded: 0,
            smoke: 0,
            synthetic_data: 0,
            not_selected: vec![],
            profiles: vec![],
            runs_told_apart: String::new(),
        },
        run_split: None,
        devices,
        hosts: vec![],
        models: vec![],
        gpu_labels: vec![],
        samples,
        files: vec!["f.json".into()],
        conflicts: vec![],
        runtimes: Default::default(),
    }
}

fn input(label: &str, rows: &[(&str, u32, &[f64])]) -> GridInput {
    GridInput {
        label: label.into(),
        track: Track::Baseline,
        set: set(rows),
    }
}

/// A: convnet 100, wlm 50. B: convnet 120, wlm 45. C: convnet 80, wlm 75.
fn three_vendors() -> Vec<GridInput> {
    vec![
        input(
            "A",
            &[
                ("convnet", 0, &[99.0, 101.0]),
                ("convnet", 1, &[100.0, 100.0]),
                ("wlm", 0, &[49.0, 51.0]),
                ("wlm", 1, &[50.0, 50.0]),
            ],
        ),
        input(
            "B",
            &[
                ("convnet", 0, &[110.0, 130.0]),
                ("convnet", 1, &[120.0, 120.0]),
                ("wlm", 0, &[40.0, 50.0]),
                ("wlm", 1, &[45.0, 45.0]),
            ],
        ),
        input(
            "C",
            &[
                ("convnet", 0, &[79.0, 81.0]),
                ("convnet", 1, &[80.0, 80.0]),
                ("wlm", 0, &[74.0, 76.0]),
                ("wlm", 1, &[75.0]),
            ],
        ),
    ]
}

fn row<'a>(g: &'a Grid, id: &str) -> &'a mlbench_analyzer::grid::VendorRow {
    g.vendors
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("no row {id}"))
}

fn cell<'a>(g: &'a Grid, id: &str, bench: &str) -> &'a Cell {
    &row(g, id).cells[bench]
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-12, "{a} != {b}");
}

#[test]
fn ratios_and_geomean_by_hand() {
    let g = grid(&three_vendors(), &GridOptions::new("A")).expect("grid");
    assert_eq!(g.baseline, "A");
    assert_eq!(g.benches, ["convnet", "wlm"]);
    // B: 120/100 = 1.2, 45/50 = 0.9; overall √(1.2·0.9) = √1.08 = 1.0392304845.
    close(cell(&g, "B", "convnet").ratio.expect("ratio"), 1.2);
    close(cell(&g, "B", "wlm").ratio.expect("ratio"), 0.9);
    close(
        row(&g, "B").overall.expect("overall"),
        1.039_230_484_541_326_5,
    );
    // C: 0.8 and 1.5 (wlm: (74 + 76 + 75)/3 = 75); √1.2 = 1.0954451150.
    close(cell(&g, "C", "wlm").ratio.expect("ratio"), 1.5);
    close(
        row(&g, "C").overall.expect("overall"),
        1.095_445_115_010_332_4,
    );
    assert_eq!(cell(&g, "C", "wlm").n, 3);
    assert_eq!(cell(&g, "C", "wlm").gpus, 2);
    close(cell(&g, "C", "wlm").mean.expect("mean"), 75.0);
    // The baseline is 1 everywhere.
    assert_eq!(cell(&g, "A", "convnet").ratio, Some(1.0));
    assert_eq!(row(&g, "A").overall, Some(1.0));
    // Rows by overall descending.
    let ids: Vec<&str> = g.vendors.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["C", "B", "A"]);
    for r in &g.vendors {
        assert_eq!(r.weight_share, 1.0);
        assert_eq!(r.geomean, r.overall);
        let (o, [lo, hi]) = (r.overall.expect("o"), r.ci.expect("ci"));
        assert!(lo <= o && o <= hi, "{}: {o} outside [{lo}, {hi}]", r.id);
        for (bench, c) in &r.cells {
            let (x, [lo, hi]) = (c.ratio.expect("ratio"), c.ci.expect("ci"));
            assert!(
                lo <= x && x <= hi,
                "{} {bench}: {x} outside [{lo}, {hi}]",
                r.id
            );
        }
    }
}

#[test]
fn weights_change_the_overall_as_by_hand() {
    let mut options = GridOptions::new("A");
    options.weights =
        Some(Weights::from_toml("w.toml", "[weights]\nconvnet = 3\n").expect("weights"));
    let g = grid(&three_vendors(), &options).expect("grid");
    // B: (1.2³ · 0.9)^(1/4) = 1.5552^(1/4) = 1.1167258309; C: (0.8³ · 1.5)^(1/4) = 0.768^(1/4).
    close(row(&g, "B").overall.expect("o"), 1.116_725_830_922_519_4);
    close(row(&g, "C").overall.expect("o"), 0.936_138_927_728_286_4);
    assert_eq!(g.weights["convnet"], 3.0);
    assert_eq!(g.weights["wlm"], 1.0);
    // CSV gives the same.
    options.weights = Some(Weights::from_csv("w.csv", "bench,weight\nconvnet,3\n").expect("csv"));
    let h = grid(&three_vendors(), &options).expect("grid");
    assert_eq!(g.vendors, h.vendors);
}

#[test]
fn a_missing_bench_counts_against_the_vendor() {
    let mut inputs = three_vendors();
    // D has convnet only, at 150: ratio 1.5 over half the weight: overall 1.5 · 1/2 = 0.75.
    inputs.push(input("D", &[("convnet", 0, &[150.0, 150.0, 150.0])]));
    let g = grid(&inputs, &GridOptions::new("A")).expect("grid");
    let d = row(&g, "D");
    close(d.overall.expect("o"), 0.75);
    close(d.geomean.expect("g"), 1.5);
    assert_eq!(d.weight_share, 0.5);
    assert_eq!(d.present, 1);
    assert_eq!(d.missing, ["wlm"]);
    let wlm = &d.cells["wlm"];
    assert_eq!(
        (wlm.ratio, wlm.ci, wlm.n, wlm.mean, wlm.missing),
        (None, None, 0, None, true)
    );
    assert!(
        g.notes
            .iter()
            .any(|n| n.starts_with("D: 1 of 2 benches missing (wlm)"))
    );
    // With convnet weighing 3: 1.5 · 3/4 = 1.125.
    let mut options = GridOptions::new("A");
    options.weights = Some(Weights::new("code", [("convnet".into(), 3.0)]).expect("w"));
    let g = grid(&inputs, &options).expect("grid");
    close(row(&g, "D").overall.expect("o"), 1.125);
    // Every resample carries the same penalty: the interval is the one of the present
    // benches times 3/4, and contains the figure.
    let [lo, hi] = row(&g, "D").ci.expect("ci");
    assert!(lo <= 1.125 && 1.125 <= hi);
}

#[test]
fn a_bench_the_baseline_lacks_is_not_normalized() {
    let mut inputs = three_vendors();
    inputs[1] = input(
        "B",
        &[
            ("convnet", 0, &[120.0, 120.0]),
            ("wlm", 0, &[45.0, 45.0]),
            ("ssd", 0, &[7.0, 9.0]),
        ],
    );
    let g = grid(&inputs, &GridOptions::new("A")).expect("grid");
    assert_eq!(g.benches, ["convnet", "ssd", "wlm"]);
    assert_eq!(g.unnormalized, ["ssd"]);
    let ssd = cell(&g, "B", "ssd");
    assert_eq!(
        (ssd.ratio, ssd.unnormalized, ssd.missing),
        (None, true, false)
    );
    assert_eq!(ssd.mean, Some(8.0));
    let c = cell(&g, "C", "ssd");
    assert_eq!((c.unnormalized, c.missing, c.n), (true, true, 0));
    // Left out of the overall, not counted as missing: B is still √(1.2·0.9).
    close(row(&g, "B").overall.expect("o"), 1.039_230_484_541_326_5);
    assert_eq!(row(&g, "B").weight_share, 1.0);
    assert!(row(&g, "C").missing.is_empty());
    assert!(
        g.notes
            .iter()
            .any(|n| n.starts_with("bench `ssd` has no usable sample in the baseline `A`"))
    );
}

#[test]
fn expected_benches_show_what_nobody_ran() {
    let mut options = GridOptions::new("A");
    options.benches = Some(vec!["convnet".into(), "wlm".into(), "dcgan".into()]);
    let g = grid(&three_vendors(), &options).expect("grid");
    assert_eq!(g.benches, ["convnet", "dcgan", "wlm"]);
    assert_eq!(g.unnormalized, ["dcgan"]);
    // A bench outside the expected list is left out, and said.
    options.benches = Some(vec!["convnet".into()]);
    let g = grid(&three_vendors(), &options).expect("grid");
    assert_eq!(g.benches, ["convnet"]);
    close(row(&g, "B").overall.expect("o"), 1.2);
    assert!(
        g.notes
            .iter()
            .any(|n| n.starts_with("B: bench `wlm` is not among the expected benches"))
    );
}

#[test]
fn tiers_of_hand_made_intervals() {
    // By overall: p 2.0 [1.9, 2.1] opens tier 1; q 1.8 [1.7, 1.9] touches p (1.9 = 1.9):
    // tier 1; r 1.5 [1.4, 1.6] overlaps neither: tier 2; s 1.45 [1.0, 1.95] overlaps p
    // and q of tier 1, but tier 1 is closed: it overlaps r, tier 2; t 0.5 [0.4, 0.6]:
    // tier 3.
    let rows = [
        Some((1.5, [1.4, 1.6])),
        Some((2.0, [1.9, 2.1])),
        Some((0.5, [0.4, 0.6])),
        Some((1.8, [1.7, 1.9])),
        Some((1.45, [1.0, 1.95])),
    ];
    assert_eq!(
        assign_tiers(&rows),
        [Some(2), Some(1), Some(3), Some(1), Some(2)]
    );
    // Chain, not all pairs: x [1.0, 1.2] and z [0.7, 0.9] do not overlap, but y
    // [0.85, 1.05] overlaps both, so all three are one tier.
    let chain = [
        Some((1.1, [1.0, 1.2])),
        Some((0.95, [0.85, 1.05])),
        Some((0.8, [0.7, 0.9])),
    ];
    assert_eq!(assign_tiers(&chain), [Some(1), Some(1), Some(1)]);
}

#[test]
fn grid_tiers_follow_the_intervals() {
    let g = grid(&three_vendors(), &GridOptions::new("A")).expect("grid");
    let mut seen = Vec::new();
    for (t, ids) in g.tiers.iter().enumerate() {
        for id in ids {
            assert_eq!(row(&g, id).tier, Some(t + 1));
            seen.push(id.clone());
        }
    }
    assert_eq!(seen.len(), 3);
    // Adjacent rows: a new tier exactly where the paired ratio's interval excludes 1,
    // the ratio being the quotient of the two overall figures.
    for pair in g.vendors.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let ratio = a.ratio_to_next.expect("ratio to next");
        assert!((ratio - a.overall.unwrap() / b.overall.unwrap()).abs() < 1e-12);
        let [lo, hi] = a.ratio_to_next_ci.expect("ci");
        assert!(lo <= ratio && ratio <= hi, "{} {lo} {ratio} {hi}", a.id);
        assert_eq!(
            a.tier != b.tier,
            lo > 1.0 || hi < 1.0,
            "{} / {}",
            a.id,
            b.id
        );
        let p = a.p_above_next.expect("p");
        assert!((0.0..=1.0).contains(&p));
    }
    assert_eq!(g.vendors.last().unwrap().ratio_to_next, None);
}

/// Noisy runs from a fixed generator: `gpus` GPUs × `runs` runs around `mean`.
fn noisy(
    bench: &'static str,
    mean: f64,
    gpus: u32,
    runs: usize,
    seed: u64,
) -> Vec<(&'static str, u32, Vec<f64>)> {
    let mut g = Xoshiro256::seed_from_u64(seed);
    (0..gpus)
        .map(|d| {
            let values = (0..runs)
                .map(|_| {
                    mean * (1.0 + 0.05 * ((g.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 0.5))
                })
                .collect();
            (bench, d, values)
        })
        .collect()
}

fn noisy_input(label: &str, scale: f64, runs: usize, seed: u64) -> GridInput {
    let mut rows = noisy("convnet", 100.0 * scale, 4, runs, seed);
    rows.extend(noisy("wlm", 50.0 * scale, 4, runs, seed + 1));
    let borrowed: Vec<(&str, u32, &[f64])> = rows
        .iter()
        .map(|(b, d, v)| (*b, *d, v.as_slice()))
        .collect();
    input(label, &borrowed)
}

#[test]
fn the_bootstrap_is_reproducible_with_its_seed() {
    let inputs = vec![noisy_input("A", 1.0, 5, 1), noisy_input("B", 1.1, 5, 3)];
    let options = GridOptions::new("A");
    let first = grid(&inputs, &options).expect("grid");
    assert_eq!(first, grid(&inputs, &options).expect("grid"));
    let mut other = options.clone();
    other.seed = 7;
    let second = grid(&inputs, &other).expect("grid");
    assert_eq!(row(&first, "B").overall, row(&second, "B").overall);
    assert_ne!(row(&first, "B").ci, row(&second, "B").ci);
    // A row's figures do not depend on the other rows, nor on the input order.
    let mut more = vec![noisy_input("C", 0.9, 5, 5)];
    more.extend(inputs.iter().rev().cloned());
    let third = grid(&more, &options).expect("grid");
    assert_eq!(row(&first, "B"), row(&third, "B"));
}

#[test]
fn intervals_contain_the_figure_and_shrink_with_more_runs() {
    let width = |runs: usize| {
        let inputs = vec![
            noisy_input("A", 1.0, runs, 1),
            noisy_input("B", 1.1, runs, 3),
        ];
        let g = grid(&inputs, &GridOptions::new("A")).expect("grid");
        let b = row(&g, "B");
        let (o, [lo, hi]) = (b.overall.expect("o"), b.ci.expect("ci"));
        assert!(lo < o && o < hi, "{o} outside [{lo}, {hi}]");
        let c = &b.cells["convnet"];
        let (r, [clo, chi]) = (c.ratio.expect("r"), c.ci.expect("ci"));
        assert!(clo < r && r < chi);
        hi / lo
    };
    let (few, many) = (width(4), width(40));
    // The width of a mean's interval goes as 1/√runs: 10× the runs, about √10 narrower.
    assert!(
        many - 1.0 < (few - 1.0) / 2.0,
        "4 runs: {few}, 40 runs: {many}"
    );
}

#[test]
fn equal_samples_give_a_degenerate_interval() {
    let inputs = vec![
        input(
            "A",
            &[
                ("convnet", 0, &[100.0; 4]),
                ("convnet", 1, &[100.0; 4]),
                ("wlm", 0, &[3.0; 5]),
            ],
        ),
        input(
            "B",
            &[
                ("convnet", 0, &[130.0; 3]),
                ("convnet", 1, &[130.0; 6]),
                ("wlm", 0, &[2.7; 5]),
            ],
        ),
    ];
    let g = grid(&inputs, &GridOptions::new("A")).expect("grid");
    for r in &g.vendors {
        let o = r.overall.expect("o");
        assert_eq!(r.ci, Some([o, o]), "{}", r.id);
        for c in r.cells.values() {
            let x = c.ratio.expect("r");
            assert_eq!(c.ci, Some([x, x]));
        }
    }
    close(cell(&g, "B", "convnet").ratio.expect("r"), 1.3);
}

#[test]
fn the_baseline_interval_is_its_mean_interval_over_its_mean() {
    let inputs = vec![noisy_input("A", 1.0, 6, 1), noisy_input("B", 1.1, 6, 3)];
    let options = GridOptions::new("A");
    let g = grid(&inputs, &options).expect("grid");
    // Recomputed by hand from the documented stream: label, track, bench.
    let a = &inputs[0].set;
    let groups: Vec<Vec<f64>> = (0..4)
        .map(|d| {
            a.samples
                .iter()
                .filter(|s| s.bench.as_deref() == Some("convnet") && s.device == Some(d))
                .filter_map(|s| s.value)
                .collect()
        })
        .collect();
    let strata = Strata::new(groups.iter().map(|g| g.iter().copied()));
    let mut means = Vec::new();
    strata.resample_means(
        &mut stream(options.seed, &["A", "baseline", "convnet"]),
        options.resamples,
        &mut means,
    );
    let mut logs: Vec<f64> = means.iter().map(|m| m.ln() - strata.mean().ln()).collect();
    let ci = percentile_interval(&mut logs, 0.95)
        .expect("ci")
        .map(f64::exp);
    assert_eq!(cell(&g, "A", "convnet").ci, Some(ci));
    assert_eq!(cell(&g, "A", "convnet").ratio, Some(1.0));
    assert!(ci[0] < 1.0 && 1.0 < ci[1]);
}

#[test]
fn attribution_terms_sum_to_the_gap() {
    let mut inputs = three_vendors();
    inputs.push(input("D", &[("convnet", 0, &[150.0, 151.0, 149.0])]));
    let mut options = GridOptions::new("A");
    options.explain = Some(("B".into(), "C".into()));
    let g = grid(&inputs, &options).expect("grid");
    let e = g.explain.as_ref().expect("explain");
    // gap = ln √1.08 − ln √1.2 = ½ ln(0.9); terms ½ ln(1.2/0.8) and ½ ln(0.9/1.5).
    close(e.gap, 0.5 * 0.9f64.ln());
    close(e.ratio, 0.9f64.sqrt());
    assert_eq!(e.penalty, 0.0);
    assert_eq!(e.terms[0].bench, "wlm");
    close(e.terms[0].term, 0.5 * (0.9f64 / 1.5).ln());
    close(e.terms[1].term, 0.5 * 1.5f64.ln());
    let sum: f64 = e.terms.iter().map(|t| t.term).sum::<f64>() + e.penalty;
    close(sum, e.gap);
    let [lo, hi] = e.ratio_ci;
    assert!(lo <= e.ratio && e.ratio <= hi);
    // With a missing bench: D against B. ln overall_D = ln 1.5 + ln ½; the penalty is
    // ln(½ ÷ 1); the convnet term ln 1.5 − ½ ln 1.2; the wlm term −½ ln 0.9.
    options.explain = Some(("D".into(), "B".into()));
    let g = grid(&inputs, &options).expect("grid");
    let e = g.explain.as_ref().expect("explain");
    close(e.penalty, 0.5f64.ln());
    let sum: f64 = e.terms.iter().map(|t| t.term).sum::<f64>() + e.penalty;
    close(sum, e.gap);
    close(
        e.gap,
        (row(&g, "D").overall.expect("o") / row(&g, "B").overall.expect("o")).ln(),
    );
    let wlm = e.terms.iter().find(|t| t.bench == "wlm").expect("wlm");
    assert_eq!(wlm.log_ratio_a, None);
    close(wlm.term, -0.5 * 0.9f64.ln());
}

#[test]
fn both_tracks_of_a_vendor_are_rows() {
    let mut inputs = three_vendors();
    let mut tweaked = input(
        "B",
        &[("convnet", 0, &[140.0, 140.0]), ("wlm", 0, &[60.0, 60.0])],
    );
    tweaked.track = Track::Tweaked;
    inputs.push(tweaked);
    let mut options = GridOptions::new("A");
    options.explain = Some(("B/tweaked".into(), "B".into()));
    let g = grid(&inputs, &options).expect("grid");
    let t = row(&g, "B/tweaked");
    assert_eq!((t.name.as_str(), t.track), ("B", Track::Tweaked));
    // √(1.4 · 1.2) = √1.68.
    close(t.overall.expect("o"), 1.68f64.sqrt());
    assert_eq!(row(&g, "B").track, Track::Baseline);
    assert_eq!(g.explain.as_ref().expect("e").b, "B");
    // A label with both tracks resolves to its baseline-track row.
    options.baseline = "B".into();
    assert_eq!(grid(&inputs, &options).expect("grid").baseline, "B");
}

#[test]
fn failures_and_conflicts_are_left_out() {
    let mut inputs = three_vendors();
    let samples = &mut inputs[1].set.samples;
    // B's convnet gets a failed run at 1000 and a conflicting one at 0.001: neither counts.
    let mut failed = samples[0].clone();
    failed.value = Some(1000.0);
    failed.failure = Some(FailureKind::NanLoss);
    let mut conflicting = samples[0].clone();
    conflicting.value = Some(0.001);
    conflicting.conflict = true;
    samples.extend([failed, conflicting]);
    let g = grid(&inputs, &GridOptions::new("A")).expect("grid");
    close(cell(&g, "B", "convnet").ratio.expect("r"), 1.2);
    assert_eq!(cell(&g, "B", "convnet").n, 4);
    assert!(g.notes.iter().any(|n| n == "B: 1 failed entry removed"));
}

#[test]
fn errors_name_the_problem() {
    let inputs = three_vendors();
    let err = grid(&inputs, &GridOptions::new("Z")).expect_err("unknown");
    assert_eq!(
        err.to_string(),
        "baseline `Z` is none of the submissions (`A`, `B`, `C`)"
    );
    let mut options = GridOptions::new("A");
    options.resamples = 0;
    assert!(matches!(grid(&inputs, &options), Err(GridError::Resamples)));
    options.resamples = 10;
    options.level = 1.0;
    assert!(matches!(grid(&inputs, &options), Err(GridError::Level(_))));
    let mut twice = inputs.clone();
    twice.push(inputs[0].clone());
    assert!(matches!(
        grid(&twice, &GridOptions::new("A")),
        Err(GridError::Duplicate { .. })
    ));
    let empty = vec![input("A", &[]), inputs[1].clone()];
    assert!(matches!(
        grid(&empty, &GridOptions::new("A")),
        Err(GridError::EmptyBaseline(_))
    ));
}

/// Timing (not run by default): 20 vendors × 19 benches × 8 GPUs × 10 runs, 2000
/// resamples. `cargo test --release -p mlbench-analyzer --test grid -- --ignored --nocapture`
#[test]
#[ignore]
fn timing_twenty_vendors() {
    const BENCHES: [&str; 19] = [
        "atari",
        "cart",
        "convnet",
        "convnet_fp16",
        "dcgan",
        "fast_style",
        "loader",
        "recom",
        "reso",
        "scaling",
        "ssd",
        "toy_lstm",
        "toy_reg",
        "translator",
        "vae",
        "wlm",
        "wlmfp16",
        "bert",
        "resnet",
    ];
    let inputs: Vec<GridInput> = (0..20)
        .map(|v| {
            let mut rows = Vec::new();
            for (i, bench) in BENCHES.iter().enumerate() {
                rows.extend(noisy(bench, 100.0 + v as f64, 8, 10, (v * 100 + i) as u64));
            }
            let borrowed: Vec<(&str, u32, &[f64])> = rows
                .iter()
                .map(|(b, d, v)| (*b, *d, v.as_slice()))
                .collect();
            input(&format!("vendor{v:02}"), &borrowed)
        })
        .collect();
    let mut options = GridOptions::new("vendor00");
    options.explain = Some(("vendor19".into(), "vendor00".into()));
    let start = std::time::Instant::now();
    let g = grid(&inputs, &options).expect("grid");
    let elapsed = start.elapsed();
    println!(
        "grid: {} rows × {} benches, {} resamples: {:.3} s ({} tiers)",
        g.vendors.len(),
        g.benches.len(),
        g.resamples,
        elapsed.as_secs_f64(),
        g.tiers.len()
    );
}

#[test]
fn report_ci_of_every_bench_mean() {
    use mlbench_analyzer::bench_mean_cis;
    let a = noisy_input("A", 1.0, 5, 1).set;
    let cis = bench_mean_cis(&a, 2000, 3, 0.95);
    assert_eq!(cis.keys().collect::<Vec<_>>(), ["convnet", "wlm"]);
    let c = cis["convnet"];
    assert_eq!(c.n, 20);
    assert!(c.ci[0] < c.mean && c.mean < c.ci[1]);
    // ±2.5 % noise: the interval of a mean of 20 runs is well under ±2.5 %.
    assert!(c.ci[1] / c.ci[0] < 1.025);
    assert_eq!(cis, bench_mean_cis(&a, 2000, 3, 0.95));
    assert_ne!(
        cis["convnet"].ci,
        bench_mean_cis(&a, 2000, 4, 0.95)["convnet"].ci
    );
}

/// The long table (CSV's and Parquet's rows): a row per vendor and bench, an `(overall)`
/// row per vendor, and `per` on every row saying what `mean` counts (the Parquet file is
/// this frame written).
#[test]
fn the_long_table_names_its_unit_on_every_row() {
    use mlbench_results::grid::Per;
    let mut g = grid(&three_vendors(), &GridOptions::new("A")).expect("grid");
    for (per, word) in [(Per::Second, "second"), (Per::Joule, "joule")] {
        g.per = per;
        let df = mlbench_analyzer::grid_frame::grid_frame(&g).expect("frame");
        let rows: usize = g.vendors.iter().map(|v| v.cells.len() + 1).sum();
        assert_eq!(df.height(), rows);
        let column = df.column("per").expect("per").str().expect("strings");
        assert!((0..rows).all(|i| column.get(i) == Some(word)), "{word}");
    }
}

/// Each line of a row carries its validity and system, as the CSV does; a row made
/// without them has nulls, and the Parquet file keeps both.
#[test]
fn the_long_table_carries_validity_and_hardware() {
    use mlbench_results::{GpuModel, Hardware, Validity};
    use polars::prelude::AnyValue;
    use polars_io::SerReader;
    let mut g = grid(&three_vendors(), &GridOptions::new("A")).expect("grid");
    g.vendors[0].validity = Some(Validity {
        passed: false,
        errors: 12,
        warnings: 0,
        waived: 0,
        allowed_errors: true,
        failed: Vec::new(),
    });
    g.vendors[0].hardware = Some(Hardware {
        gpus: vec![GpuModel {
            name: "NVIDIA H100 80GB HBM3".into(),
            count: 8,
        }],
        gpu_count: 8,
        hosts: vec!["n1".into(), "n2".into()],
        ..Hardware::default()
    });
    let first = g.vendors[0].name.clone();
    let bytes = mlbench_analyzer::grid_frame::grid_parquet(&g).expect("parquet");
    let df = polars_io::parquet::read::ParquetReader::new(std::io::Cursor::new(bytes))
        .finish()
        .expect("read back");
    let vendor = df.column("vendor").unwrap().str().unwrap().clone();
    let cell = |name: &str, i: usize| df.column(name).unwrap().get(i).unwrap().into_static();
    for i in 0..df.height() {
        if vendor.get(i) == Some(first.as_str()) {
            assert_eq!(cell("valid", i), AnyValue::StringOwned("fail".into()));
            assert_eq!(cell("errors", i), AnyValue::UInt32(12));
            let models = AnyValue::StringOwned("NVIDIA H100 80GB HBM3".into());
            assert_eq!(cell("gpu_models", i), models);
            assert_eq!(cell("gpu_count", i), AnyValue::UInt32(8));
            assert_eq!(cell("hosts", i), AnyValue::StringOwned("n1;n2".into()));
        } else {
            for name in [
                "valid",
                "errors",
                "gpu_models",
                "gpu_count",
                "hosts",
                "runtime",
            ] {
                assert_eq!(cell(name, i), AnyValue::Null, "{name} of row {i}");
            }
        }
    }
}
