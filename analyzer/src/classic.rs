//! Classic scoring: the trimmed-mean tool behind the seed README's table
//! (docs/suite.md#the-classic-tool).
//!
//! Per run and bench, the mean over GPUs; across runs, the mean without one minimum and
//! one maximum, the sample sd, sd ÷ result and the difference to the target. The verdict:
//! every bench of the table present with enough runs, the 80% quantile of sd ÷ result
//! below 5%, and the mean difference to target at least 0.

use crate::AnalyzeError;
use crate::expected::Expected;
use crate::frame::{Usable, counts, f64s, samples_frame, scalar, strs, targets_frame};
use crate::samples::SampleSet;
use mlbench_results::report::{ClassicBench, ClassicReport, ClassicStatistics};
use mlbench_schema::TargetTable;
use polars::prelude::*;

/// The largest 80% quantile of sd ÷ result that passes.
pub const DEVIATION_LIMIT: f64 = 0.05;

/// Computes the classic report.
pub fn classic_report(
    set: &SampleSet,
    targets: &TargetTable,
    expected: &Expected,
    min_runs: u32,
) -> Result<ClassicReport, AnalyzeError> {
    let table = bench_table(set, targets)?;
    let valid = table_statistics(&table)?;
    let benches = bench_rows(&table, targets, expected)?;
    let usable = |b: &ClassicBench| b.result.is_some() && b.sd.is_some() && b.sd_pct.is_some();
    let passes = |bench: &String| {
        benches
            .iter()
            .any(|b| b.bench == *bench && usable(b) && b.n >= min_runs)
    };
    let bench_passes = expected.benches.iter().all(passes);
    let benches_usable = expected.benches.iter().filter(|b| passes(b)).count();
    let deviation_quantile_80 = scalar(&valid, "q80")?;
    let performance = scalar(&valid, "performance")?;
    let deviation_pass = deviation_quantile_80.is_some_and(|q| q < DEVIATION_LIMIT);
    let performance_pass = performance.is_some_and(|p| p >= 0.0);
    let passed = bench_passes && deviation_pass && performance_pass;
    Ok(ClassicReport {
        scoring: "classic",
        name: set.suite.clone(),
        gpu_model: targets.gpu_model.clone(),
        runs: set.runs.len(),
        gpus: set.devices.len(),
        benches,
        statistics: ClassicStatistics {
            bench_passes,
            benches_usable,
            benches_expected: expected.benches.len(),
            deviation_quantile_80,
            deviation_limit: DEVIATION_LIMIT,
            deviation_pass,
            performance,
            performance_pass,
            passed,
        },
        failures: set.failures(),
        conflicts: set.conflicts.clone(),
        context: crate::context::report_context(set, targets, expected),
    })
}

/// Per bench: runs, the trimmed mean (`result`), sd, sd ÷ result, target and diff.
fn bench_table(set: &SampleSet, targets: &TargetTable) -> Result<DataFrame, AnalyzeError> {
    let df = samples_frame(set, Usable::WithValue)?;
    let targets_df = targets_frame(targets)?.select(["bench", "target"])?;
    // The per-run means, sorted and in one chunk, so that each bench's sum and sd add
    // them up in the same order on every run of the program (grouped straight from the
    // first aggregation's parallel output, the last digits of sd moved between runs).
    let mut run_means = df
        .lazy()
        .group_by([col("bench_run")])
        .agg([col("bench").first(), col("value").mean().alias("run_value")])
        .sort(["bench_run"], SortMultipleOptions::default())
        .collect()?;
    run_means.rechunk_mut();
    Ok(run_means
        .lazy()
        .group_by_stable([col("bench")])
        .agg([
            col("run_value").count().alias("n"),
            col("run_value").sum().alias("sum"),
            col("run_value").min().alias("min"),
            col("run_value").max().alias("max"),
            col("run_value").std(1).alias("sd"),
        ])
        .with_column(
            when(col("n").gt_eq(lit(3)))
                .then(
                    (col("sum") - col("max") - col("min"))
                        / (col("n").cast(DataType::Float64) - lit(2.0)),
                )
                .otherwise(lit(NULL))
                .alias("result"),
        )
        // The mean of the middle runs lies between the extremes; a sum of figures far
        // apart in size can lose the small ones (cancellation), so it is held there.
        .with_column(
            when(col("result").gt(col("max")))
                .then(col("max"))
                .when(col("result").lt(col("min")))
                .then(col("min"))
                .otherwise(col("result"))
                .alias("result"),
        )
        .with_column((col("sd") / col("result")).alias("sd_pct"))
        .left_join(targets_df.lazy(), col("bench"), col("bench"))
        .with_column(((col("result") - col("target")) / col("target")).alias("diff"))
        .sort(["bench"], SortMultipleOptions::default())
        .collect()?)
}

/// Over the rows with a result and an sd%: the 80% quantile of sd% (`q80`), the mean
/// diff (`performance`) and their count.
fn table_statistics(table: &DataFrame) -> Result<DataFrame, AnalyzeError> {
    Ok(table
        .clone()
        .lazy()
        .filter(
            col("result")
                .is_not_null()
                .and(col("sd").is_not_null())
                .and(col("sd_pct").is_not_null())
                .and(col("sd_pct").is_not_nan()),
        )
        .select([
            col("sd_pct")
                .quantile(lit(0.8), QuantileMethod::Linear)
                .alias("q80"),
            col("diff").mean().alias("performance"),
            col("bench").count().alias("rows"),
        ])
        .collect()?)
}

/// The table's rows, with every expected bench that has none shown (and failing), sorted
/// by bench.
fn bench_rows(
    table: &DataFrame,
    targets: &TargetTable,
    expected: &Expected,
) -> Result<Vec<ClassicBench>, AnalyzeError> {
    let names = strs(table, "bench")?;
    let ns = counts(table, "n")?;
    let (result, sd, sd_pct, target, diff) = (
        f64s(table, "result")?,
        f64s(table, "sd")?,
        f64s(table, "sd_pct")?,
        f64s(table, "target")?,
        f64s(table, "diff")?,
    );
    let mut benches: Vec<ClassicBench> = (0..names.len())
        .map(|i| ClassicBench {
            bench: names[i].clone(),
            n: ns[i],
            target: target[i],
            result: result[i],
            sd: sd[i],
            sd_pct: sd_pct[i],
            diff: diff[i],
        })
        .collect();
    for bench in &expected.benches {
        if !benches.iter().any(|b| b.bench == *bench) {
            benches.push(ClassicBench {
                bench: bench.clone(),
                n: 0,
                target: targets.get(bench).map(|t| t.target),
                result: None,
                sd: None,
                sd_pct: None,
                diff: None,
            });
        }
    }
    benches.sort_by(|a, b| a.bench.cmp(&b.bench));
    Ok(benches)
}
