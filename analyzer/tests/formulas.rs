//! Every formula against numbers computed by hand (the arithmetic is in the comments).

mod common;

use common::load_legacy;
use mlbench_analyzer::{AnalyzeError, Report, ReportOptions, report_of};
use mlbench_results::report::{ClassicReport, ScoreReport};
use mlbench_schema::{Object, ReportEntry, Scoring, Target, TargetTable, Value};

fn entry(name: &str, value: f64, vcd: &str) -> ReportEntry {
    let mut item = Object::new();
    item.insert("avg", value);
    let mut o = Object::new();
    o.insert("name", name);
    o.insert("version", "v1");
    o.insert("batch_size", 64i64);
    o.insert("vcd", vcd);
    o.insert("train_item", Value::Object(item));
    o.insert("batch_loss", Value::from(vec![1.0, 0.5]));
    ReportEntry::new(o)
}

fn targets(rows: &[(&str, f64)]) -> TargetTable {
    TargetTable {
        scoring: Scoring::Score,
        gpu_model: "TEST".into(),
        source: "test".into(),
        targets: rows
            .iter()
            .map(|(b, t)| Target {
                bench: (*b).into(),
                target: *t,
                perf_target: Some(0.5),
                sd_target: Some(0.05),
                pool_over: vec![],
                batch_size: None,
                args: Default::default(),
            })
            .collect(),
        exclude: vec![],
        select: vec![],
        runtime: None,
        provenance: None,
        swept: None,
    }
}

/// Bench `a` on 2 GPUs × 5 runs; bench `b` always 100.
///   run:    0   1   2   3   4
///   GPU 0: 10   9  13  12  14
///   GPU 1: 12  11  13  12  10
fn two_bench_submission() -> Vec<(usize, u32, Vec<ReportEntry>)> {
    let a = [
        [10.0, 12.0],
        [9.0, 11.0],
        [13.0, 13.0],
        [12.0, 12.0],
        [14.0, 10.0],
    ];
    let mut files = Vec::new();
    for (run, pair) in a.iter().enumerate() {
        for gpu in 0..2u32 {
            let vcd = gpu.to_string();
            files.push((
                run,
                gpu,
                vec![
                    entry("a", pair[gpu as usize], &vcd),
                    entry("b", 100.0, &vcd),
                ],
            ));
        }
    }
    files
}

fn close(actual: Option<f64>, expected: f64) {
    let a = actual.unwrap_or_else(|| panic!("expected {expected}, got none"));
    assert!(
        (a - expected).abs() <= 1e-9 * expected.abs().max(1.0),
        "{a} != {expected}"
    );
}

fn classic(
    files: Vec<(usize, u32, Vec<ReportEntry>)>,
    t: &TargetTable,
    min_runs: u32,
) -> ClassicReport {
    let options = ReportOptions {
        scoring: Scoring::Classic,
        min_runs,
        price: None,
        expected: None,
    };
    match report_of(&load_legacy(&files, t), t, &options).unwrap() {
        Report::Classic(r) => r,
        Report::Score(_) => unreachable!(),
    }
}

fn score(
    files: Vec<(usize, u32, Vec<ReportEntry>)>,
    t: &TargetTable,
    price: Option<f64>,
) -> ScoreReport {
    let options = ReportOptions {
        scoring: Scoring::Score,
        min_runs: 1,
        price,
        expected: None,
    };
    match report_of(&load_legacy(&files, t), t, &options).unwrap() {
        Report::Score(r) => r,
        Report::Classic(_) => unreachable!(),
    }
}

#[test]
fn classic_trimmed_mean_sd_quantile_and_performance() {
    let r = classic(
        two_bench_submission(),
        &targets(&[("a", 10.0), ("b", 125.0)]),
        4,
    );
    assert_eq!((r.runs, r.gpus), (5, 2));
    let a = &r.benches[0];
    assert_eq!((a.bench.as_str(), a.n), ("a", 5));
    // Per-run means over GPUs: 11, 10, 13, 12, 12. Trimmed: (58 − 10 − 13) / 3.
    close(a.result, 35.0 / 3.0);
    // Sample sd of 11,10,13,12,12: mean 11.6, squared deviations sum 5.2, /4 = 1.3.
    close(a.sd, 1.3f64.sqrt());
    close(a.sd_pct, 1.3f64.sqrt() / (35.0 / 3.0));
    close(a.diff, (35.0 / 3.0 - 10.0) / 10.0);
    let b = &r.benches[1];
    close(b.result, 100.0);
    close(b.sd, 0.0);
    close(b.diff, -0.2);
    // q80 of sd% {0, 0.09773}: position 0.8·(2−1) → 0.8 of the way from 0 to 0.09773.
    close(
        r.statistics.deviation_quantile_80,
        0.8 * 1.3f64.sqrt() / (35.0 / 3.0),
    );
    // Performance: mean of diff = (1/6 − 0.2) / 2.
    close(r.statistics.performance, (1.0 / 6.0 - 0.2) / 2.0);
    assert!(r.statistics.bench_passes);
    assert!(!r.statistics.passed, "q80 ≥ 5% and performance < 0");
}

#[test]
fn classic_with_three_runs_is_the_median_and_two_runs_have_no_result() {
    let files = |values: &[f64]| {
        values
            .iter()
            .enumerate()
            .map(|(run, v)| (run, 0, vec![entry("a", *v, "0")]))
            .collect::<Vec<_>>()
    };
    let r = classic(files(&[1.0, 5.0, 3.0]), &targets(&[("a", 3.0)]), 3);
    close(r.benches[0].result, 3.0);
    close(r.statistics.performance, 0.0);
    close(r.statistics.deviation_quantile_80, 2.0 / 3.0);
    let r = classic(files(&[1.0, 5.0]), &targets(&[("a", 3.0)]), 1);
    assert_eq!(r.benches[0].result, None);
    assert_eq!(r.statistics.deviation_quantile_80, None);
    assert!(!r.statistics.bench_passes);
}

/// A run of 10¹² (the largest measurement) beside runs of 10⁻⁶: summed, the small ones
/// are lost (10¹² + 10⁻⁶ rounds to 10¹²), and the sum less the extremes went negative.
/// The mean of the middle runs is 10⁻⁶, between the extremes, where it is held.
#[test]
fn classic_trimmed_mean_stays_between_the_extremes() {
    let files: Vec<_> = [1e12, 1e-6, 1e-6, 1e-6]
        .iter()
        .enumerate()
        .map(|(run, v)| (run, 0, vec![entry("a", *v, "0")]))
        .collect();
    let r = classic(files, &targets(&[("a", 1.0)]), 4);
    let result = r.benches[0].result.unwrap();
    assert!((1e-6..=1e12).contains(&result), "{result}");
    close(Some(result), 1e-6);
}

#[test]
fn classic_passes_only_with_every_target_bench() {
    // Bench `c` is in the table but absent: shown with n = 0, bench passes fails.
    let r = classic(
        two_bench_submission(),
        &targets(&[("a", 10.0), ("b", 80.0), ("c", 1.0)]),
        4,
    );
    let c = r.benches.iter().find(|b| b.bench == "c").unwrap();
    assert_eq!((c.n, c.result), (0, None));
    assert!(!r.statistics.bench_passes);
    // A bench with fewer runs than --min-runs fails it too: `b` only in runs 0–2.
    let mut files = two_bench_submission();
    for file in files.iter_mut().skip(6) {
        file.2.retain(|e| e.name() == Some("a"));
    }
    let r = classic(files, &targets(&[("a", 10.0), ("b", 80.0)]), 4);
    let b = r.benches.iter().find(|b| b.bench == "b").unwrap();
    assert_eq!(b.n, 3);
    close(b.result, 100.0);
    assert!(!r.statistics.bench_passes);
}

#[test]
fn too_few_runs_is_an_error_naming_the_count() {
    let options = ReportOptions {
        scoring: Scoring::Classic,
        min_runs: 6,
        price: None,
        expected: None,
    };
    let t = targets(&[("a", 1.0)]);
    let err = report_of(&load_legacy(&two_bench_submission(), &t), &t, &options).unwrap_err();
    assert!(matches!(
        err,
        AnalyzeError::TooFewRuns {
            found: 5,
            required: 6,
            ..
        }
    ));
    assert!(
        err.to_string().starts_with(
            "found 5 runs (output0, output1, output2, output3, output4), fewer than the 6 required"
        ),
        "{err}"
    );
}

#[test]
fn score_pools_samples_and_computes_bf_pm_st_pg() {
    let t = targets(&[("a", 10.0), ("b", 125.0)]);
    let r = score(two_bench_submission(), &t, Some(1000.0));
    let a = &r.benches[0];
    // All 10 samples of a: mean 11.6; squared deviations sum 22.4, /9.
    assert_eq!(a.n, 10);
    close(a.mean, 11.6);
    close(a.sd, (22.4f64 / 9.0).sqrt());
    close(a.perf, 1.16);
    assert!(a.perf_pass && !a.sd_pass);
    let b = &r.benches[1];
    close(b.perf, 0.8);
    assert!(b.perf_pass && b.sd_pass);
    let s = &r.statistics;
    assert_eq!((s.failures, s.total, s.bf), (0, 20, 1));
    close(Some(s.pm), 1.0);
    close(Some(s.st), 0.5);
    close(s.pg, (1.16f64 * 0.8).sqrt());
    let expected = 2.0 + 0.5 + 5.0 * (1.16f64 * 0.8).sqrt();
    close(s.score, expected);
    close(s.rpp, 1000.0 / expected);
    assert!(!s.passed);
}

#[test]
fn score_removes_every_failure_even_consecutive_ones() {
    let mut files = two_bench_submission();
    // Two NaN-loss entries in a row (the original skipped the second) and an
    // incomplete one, all with absurd throughputs that must not reach the mean.
    let mut nan = entry("b", 1e6, "0");
    nan.fields
        .insert("batch_loss", Value::from(vec![1.0, f64::NAN]));
    let mut inf = entry("b", 1e6, "0");
    inf.fields
        .insert("batch_loss", Value::from(vec![f64::INFINITY]));
    let mut incomplete = entry("b", 1e6, "0");
    incomplete.fields.insert("completed", false);
    files[0].2.extend([nan, inf, incomplete]);
    let r = score(files, &targets(&[("a", 10.0), ("b", 125.0)]), None);
    let reasons: Vec<(usize, &str)> = r.failures.iter().map(|f| (f.entry, f.reason)).collect();
    assert_eq!(
        reasons,
        [(2, "nan_loss"), (3, "nan_loss"), (4, "incomplete")]
    );
    close(r.benches[1].mean, 100.0);
    let s = &r.statistics;
    assert_eq!((s.failures, s.total), (3, 23));
    close(Some(s.failure_ratio), 3.0 / 23.0);
    assert_eq!(s.bf, 0);
    close(s.score, 0.0);
    assert_eq!(s.rpp, None);
}

#[test]
fn bf_gate_is_inclusive_at_one_percent() {
    // 100 entries, 1 failure: 1% ≤ 1% → BF = 1. 2 failures → 0.
    let build = |failures: usize| {
        let mut files = Vec::new();
        for run in 0..10 {
            let mut entries: Vec<ReportEntry> = (0..10).map(|_| entry("a", 10.0, "0")).collect();
            for e in entries.iter_mut().take(if run == 0 { failures } else { 0 }) {
                e.fields.insert("completed", false);
            }
            files.push((run, 0, entries));
        }
        files
    };
    assert_eq!(
        score(build(1), &targets(&[("a", 10.0)]), None)
            .statistics
            .bf,
        1
    );
    assert_eq!(
        score(build(2), &targets(&[("a", 10.0)]), None)
            .statistics
            .bf,
        0
    );
}

#[test]
fn geomean_leaves_out_scaling_and_missing_benches_count_as_fails() {
    let mut files = two_bench_submission();
    files[0].2.push(entry("scaling", 0.5, "0"));
    let t = targets(&[
        ("a", 10.0),
        ("b", 125.0),
        ("scaling", 1.0),
        ("missing", 1.0),
    ]);
    let r = score(files, &t, None);
    assert_eq!(r.benches.len(), 4);
    let s = &r.statistics;
    // PG over a (1.16) and b (0.8) only; PM: a, b and scaling (0.5 ≥ 0.5) pass of 4;
    // ST: b passes of 4 (scaling has one sample: no sd).
    close(s.pg, (1.16f64 * 0.8).sqrt());
    close(Some(s.pm), 0.75);
    close(Some(s.st), 0.25);
}

#[test]
fn per_gpu_tables_are_relative_to_the_best_device() {
    let r = score(
        two_bench_submission(),
        &targets(&[("a", 10.0), ("b", 125.0)]),
        None,
    );
    // a: GPU 0 = 10,9,13,12,14; GPU 1 = 12,11,13,12,10.
    let mean = &r.per_gpu.mean["a"];
    close(mean.get("0").copied(), 1.0);
    close(mean.get("1").copied(), 1.0);
    let min = &r.per_gpu.min["a"];
    close(min.get("0").copied(), 0.9);
    close(min.get("1").copied(), 1.0);
    let max = &r.per_gpu.max["a"];
    close(max.get("0").copied(), 1.0);
    close(max.get("1").copied(), 13.0 / 14.0);
}

#[test]
fn entries_with_another_configuration_are_set_aside_and_reported() {
    let mut files = two_bench_submission();
    let mut odd = entry("a", 1000.0, "1");
    odd.fields.insert("batch_size", 128i64);
    files[9].2.push(odd);
    let r = score(files, &targets(&[("a", 10.0), ("b", 125.0)]), None);
    close(r.benches[0].mean, 11.6);
    assert_eq!(r.conflicts.len(), 1);
    let c = &r.conflicts[0];
    assert_eq!((c.bench.as_str(), c.kept, c.set_aside), ("a", 10, 1));
    assert_eq!(c.differences[0].field, "batch_size");
    assert_eq!(c.differences[0].kept.as_deref(), Some("64"));
    assert_eq!(c.differences[0].found.as_deref(), Some("128"));
    assert_eq!(c.examples, ["output4/fast_1.json#2"]);
}

#[test]
fn selection_rules_and_exclusions_drop_entries_before_counting() {
    let mut files = two_bench_submission();
    let mut lstm = entry("a", 1e6, "0");
    lstm.fields.insert("model", "LSTM");
    files[0].2.push(lstm);
    files[0].2.push(entry("dcgan_all", 1e6, "0,1"));
    let mut t = targets(&[("a", 10.0), ("b", 125.0)]);
    t.exclude.push("dcgan_all".into());
    t.select.push(mlbench_schema::SelectionRule::Equals {
        bench: "a".into(),
        field: "model".into(),
        value: Value::from("LSTM"),
    });
    // The rule keeps only model = LSTM: the 10 plain entries of `a` go, the odd one stays.
    let r = score(files, &t, None);
    assert_eq!(r.statistics.total, 11);
    assert_eq!(r.benches[0].n, 1);
}

/// The classic sd adds up the per-run means in one order, whatever the threads: on a
/// submission with many runs the grouping's parallel output once gave them in any order
/// and the last digits of sd moved from one run of the program to the next.
#[test]
fn classic_figures_are_the_same_bits_on_every_computation() {
    let mut files = Vec::new();
    for run in 0..200usize {
        for gpu in 0..8u32 {
            let vcd = gpu.to_string();
            let entries = (0..19)
                .map(|b| {
                    // Values whose sums round differently in another order.
                    let v = 1000.0 + (run * 37 + gpu as usize * 11 + b * 5) as f64 * 0.1371;
                    entry(&format!("bench{b:02}"), v, &vcd)
                })
                .collect();
            files.push((run, gpu, entries));
        }
    }
    let rows: Vec<(String, f64)> = (0..19).map(|b| (format!("bench{b:02}"), 1000.0)).collect();
    let rows: Vec<(&str, f64)> = rows.iter().map(|(b, t)| (b.as_str(), *t)).collect();
    let t = targets(&rows);
    let bits = |r: &ClassicReport| -> Vec<(Option<u64>, Option<u64>)> {
        r.benches
            .iter()
            .map(|b| (b.result.map(f64::to_bits), b.sd.map(f64::to_bits)))
            .collect()
    };
    let first = bits(&classic(files.clone(), &t, 4));
    for _ in 0..4 {
        assert_eq!(bits(&classic(files.clone(), &t, 4)), first);
    }
}
