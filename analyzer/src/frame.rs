//! Moving samples into Polars and results out of it.

use crate::samples::{SampleSet, name_ranks};
use mlbench_schema::{Target, TargetTable};
use polars::prelude::*;

/// Which samples a scoring uses.
#[derive(Debug, Clone, Copy)]
pub enum Usable {
    /// Every entry with a throughput (the classic tool did not remove failures).
    WithValue,
    /// Entries with a throughput that are not failures.
    NotFailed,
}

/// The usable samples as a frame: `bench` (str), `run` (u32), `device` (u32, null when
/// the entry ran on several), `value` (f64), and two single-column keys that sort as the
/// pairs they stand for: `bench_run` (the bench's rank among the frame's bench names
/// × 2³² + run) and `bench_device` (the rank × 2³² + device, null with the device).
/// Grouping and sorting by one integer column spares Polars the row encoding of a
/// two-column key (a third of `report`'s page faults on a large submission).
pub fn samples_frame(set: &SampleSet, usable: Usable) -> PolarsResult<DataFrame> {
    let rows = set.samples.iter().filter(|s| {
        !s.conflict
            && s.bench.is_some()
            // pandas skips NaN in its means and sds; so does this.
            && s.value.is_some_and(|v| !v.is_nan())
            && match usable {
                Usable::WithValue => true,
                Usable::NotFailed => s.failure.is_none(),
            }
    });
    let mut bench = Vec::new();
    let mut run = Vec::new();
    let mut device = Vec::new();
    let mut value = Vec::new();
    for s in rows {
        bench.push(s.bench.as_deref().unwrap_or_default());
        run.push(s.run);
        device.push(s.device);
        value.push(s.value.unwrap_or(f64::NAN));
    }
    let (_, ranks) = name_ranks(bench.iter().copied());
    let bench_run: Vec<u64> = ranks
        .iter()
        .zip(&run)
        .map(|(&b, r)| u64::from(b) << 32 | u64::from(*r))
        .collect();
    let bench_device: Vec<Option<u64>> = ranks
        .iter()
        .zip(&device)
        .map(|(&b, d)| d.map(|d| u64::from(b) << 32 | u64::from(d)))
        .collect();
    DataFrame::new_infer_height(vec![
        Column::new("bench".into(), bench),
        Column::new("run".into(), run),
        Column::new("device".into(), device),
        Column::new("value".into(), value),
        Column::new("bench_run".into(), bench_run),
        Column::new("bench_device".into(), bench_device),
    ])
}

/// The target table as a frame: `bench`, `target`, `perf_target`, `sd_target`.
pub fn targets_frame(targets: &TargetTable) -> PolarsResult<DataFrame> {
    let column = |f: fn(&Target) -> Option<f64>| targets.targets.iter().map(f).collect::<Vec<_>>();
    let benches: Vec<&str> = targets.targets.iter().map(|t| t.bench.as_str()).collect();
    DataFrame::new_infer_height(vec![
        Column::new("bench".into(), benches),
        Column::new("target".into(), column(|t| Some(t.target))),
        Column::new("perf_target".into(), column(|t| t.perf_target)),
        Column::new("sd_target".into(), column(|t| t.sd_target)),
    ])
}

/// A f64 column as options (null and NaN both become `None`).
pub fn f64s(df: &DataFrame, name: &str) -> PolarsResult<Vec<Option<f64>>> {
    let col = df.column(name)?.cast(&DataType::Float64)?;
    Ok(col
        .f64()?
        .iter()
        .map(|v| v.filter(|x| !x.is_nan()))
        .collect())
}

/// A string column.
pub fn strs(df: &DataFrame, name: &str) -> PolarsResult<Vec<String>> {
    Ok(df
        .column(name)?
        .str()?
        .iter()
        .map(|v| v.unwrap_or_default().to_owned())
        .collect())
}

/// A count column as u32.
pub fn counts(df: &DataFrame, name: &str) -> PolarsResult<Vec<u32>> {
    let col = df.column(name)?.cast(&DataType::UInt32)?;
    Ok(col.u32()?.iter().map(|v| v.unwrap_or(0)).collect())
}

/// A one-row, one-column result as a float.
pub fn scalar(df: &DataFrame, name: &str) -> PolarsResult<Option<f64>> {
    Ok(f64s(df, name)?.into_iter().next().flatten())
}
