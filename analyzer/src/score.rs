//! Score scoring: the HEAD report tool (docs/suite.md#the-score-tool), with its failure pass fixed.
//!
//! Every GPU × run sample of a bench is pooled. Failures (NaN or infinite loss,
//! `completed: false`, failure stubs) are all removed and listed; the original skipped
//! the entry after each one it removed. Then per bench: n, mean, sd, sd ÷ mean,
//! perf = mean ÷ target and the two pass flags; overall: BF = (failures ÷ total ≤ 1%),
//! PM and ST (pass shares), PG (geometric mean of perf without `scaling`) and
//! score = BF · (2·PM + ST + 5·PG).

use crate::AnalyzeError;
use crate::expected::Expected;
use crate::frame::{Usable, counts, f64s, samples_frame, strs, targets_frame};
use crate::samples::SampleSet;
use mlbench_results::report::{PerGpu, PerGpuTable, ScoreBench, ScoreReport, ScoreStatistics};
use mlbench_schema::TargetTable;
use polars::prelude::*;
use statrs::statistics::Statistics;

/// The largest failure ratio for BF = 1.
pub const FAILURE_LIMIT: f64 = 0.01;

/// The bench left out of PG: its "throughput" is an efficiency.
pub const NOT_IN_GEOMEAN: &str = "scaling";

/// Computes the score report; `price` gives RPP = price ÷ score.
pub fn score_report(
    set: &SampleSet,
    targets: &TargetTable,
    expected: &Expected,
    price: Option<f64>,
) -> Result<ScoreReport, AnalyzeError> {
    let total = set.samples.len();
    if total == 0 {
        return Err(AnalyzeError::NoEntries);
    }
    let failures = set.failures();
    let failure_count = failures.len();
    let df = samples_frame(set, Usable::NotFailed)?;
    let benches = bench_rows(&df, targets, expected)?;
    let count = benches.len() as f64;
    let failure_ratio = failure_count as f64 / total as f64;
    let bf = u8::from(failure_ratio <= FAILURE_LIMIT);
    let pm = benches.iter().filter(|b| b.perf_pass).count() as f64 / count;
    let st = benches.iter().filter(|b| b.sd_pass).count() as f64 / count;
    let perfs: Vec<f64> = benches
        .iter()
        .filter(|b| b.bench != NOT_IN_GEOMEAN)
        .filter_map(|b| b.perf)
        .collect();
    let pg = (!perfs.is_empty()).then(|| perfs.iter().geometric_mean());
    let score = pg.map(|pg| f64::from(bf) * (2.0 * pm + st + 5.0 * pg));
    let rpp = match (price, score) {
        (Some(p), Some(s)) if s > 0.0 => Some(p / s),
        _ => None,
    };
    let passed = bf == 1 && benches.iter().all(|b| b.perf_pass && b.sd_pass);
    Ok(ScoreReport {
        scoring: "score",
        name: set.suite.clone(),
        gpu_model: targets.gpu_model.clone(),
        runs: set.runs.len(),
        gpus: set.devices.len(),
        benches,
        failures,
        statistics: ScoreStatistics {
            failures: failure_count,
            total,
            failure_ratio,
            bf,
            failures_pass: bf == 1,
            pm,
            st,
            pg,
            score,
            price,
            rpp,
            passed,
        },
        per_gpu: per_gpu(df, set)?,
        conflicts: set.conflicts.clone(),
        context: crate::context::report_context(set, targets, expected),
    })
}

/// Per bench: samples, mean, sd, sd ÷ mean, the targets, perf = mean ÷ target and the
/// two criteria; every expected bench with no result shown (failing both); by bench.
fn bench_rows(
    df: &DataFrame,
    targets: &TargetTable,
    expected: &Expected,
) -> Result<Vec<ScoreBench>, AnalyzeError> {
    let table = df
        .clone()
        .lazy()
        .group_by([col("bench")])
        .agg([
            col("value").count().alias("n"),
            col("value").mean().alias("mean"),
            col("value").std(1).alias("sd"),
        ])
        .left_join(targets_frame(targets)?.lazy(), col("bench"), col("bench"))
        .with_columns([
            (col("mean") / col("target")).alias("perf"),
            (col("sd") / col("mean")).alias("sd_pct"),
        ])
        .sort(["bench"], SortMultipleOptions::default())
        .collect()?;
    let names = strs(&table, "bench")?;
    let ns = counts(&table, "n")?;
    let [mean, sd, sd_pct, target, perf, perf_target, sd_target] = [
        "mean",
        "sd",
        "sd_pct",
        "target",
        "perf",
        "perf_target",
        "sd_target",
    ]
    .map(|c| f64s(&table, c));
    let (mean, sd, sd_pct, target, perf, perf_target, sd_target) = (
        mean?,
        sd?,
        sd_pct?,
        target?,
        perf?,
        perf_target?,
        sd_target?,
    );
    let mut benches: Vec<ScoreBench> = (0..names.len())
        .map(|i| ScoreBench {
            bench: names[i].clone(),
            n: ns[i],
            mean: mean[i],
            sd: sd[i],
            sd_pct: sd_pct[i],
            target: target[i],
            perf: perf[i],
            perf_target: perf_target[i],
            sd_target: sd_target[i],
            perf_pass: matches!((perf[i], perf_target[i]), (Some(p), Some(t)) if p >= t),
            sd_pass: matches!((sd_pct[i], sd_target[i]), (Some(s), Some(t)) if s <= t),
        })
        .collect();
    for bench in &expected.benches {
        if !benches.iter().any(|b| b.bench == *bench) {
            let t = targets.get(bench);
            benches.push(ScoreBench {
                bench: bench.clone(),
                n: 0,
                mean: None,
                sd: None,
                sd_pct: None,
                target: t.map(|t| t.target),
                perf: None,
                perf_target: t.and_then(|t| t.perf_target),
                sd_target: t.and_then(|t| t.sd_target),
                perf_pass: false,
                sd_pass: false,
            });
        }
    }
    benches.sort_by(|a, b| a.bench.cmp(&b.bench));
    Ok(benches)
}

/// Per bench and device, the mean, min and max throughput, each divided by the best
/// device's (docs/suite.md#the-score-tool, step 5): 1.0 is the best GPU of that bench.
pub fn per_gpu(df: DataFrame, set: &SampleSet) -> Result<PerGpu, AnalyzeError> {
    let relative = ["mean", "min", "max"]
        .map(|m| Ok::<_, PolarsError>((col(m) / col(m).max().over([col("bench")])?).alias(m)));
    let [a, b, c] = relative;
    let table = df
        .lazy()
        .filter(col("device").is_not_null())
        .group_by([col("bench_device")])
        .agg([
            col("bench").first(),
            col("device").first(),
            col("value").mean().alias("mean"),
            col("value").min().alias("min"),
            col("value").max().alias("max"),
        ])
        .with_columns([a?, b?, c?])
        .sort(["bench_device"], SortMultipleOptions::default())
        .collect()?;
    let names = strs(&table, "bench")?;
    let devices = counts(&table, "device")?;
    let mut out = PerGpu::default();
    for (m, dest) in [
        ("mean", &mut out.mean),
        ("min", &mut out.min),
        ("max", &mut out.max),
    ] {
        let values = f64s(&table, m)?;
        let dest: &mut PerGpuTable = dest;
        for i in 0..names.len() {
            if let Some(v) = values[i] {
                dest.entry(names[i].clone())
                    .or_default()
                    .insert(set.gpu_label(devices[i]), v);
            }
        }
    }
    Ok(out)
}
