//! What every report says beside its scoring: how the runs were told apart, which benches
//! were expected, and the world-size breakdown of benches pooled over world sizes.

use crate::expected::Expected;
use crate::samples::SampleSet;
use mlbench_results::report::{ReportContext, WorldSize};
use mlbench_schema::TargetTable;
use std::collections::BTreeMap;

/// The context of a report over `set`.
pub fn report_context(
    set: &SampleSet,
    targets: &TargetTable,
    expected: &Expected,
) -> ReportContext {
    ReportContext {
        run_names: set.runs.clone(),
        runs_from: if set.run_split.is_some() {
            "run_id"
        } else {
            "folders"
        },
        expected_from: expected.from.as_str(),
        jobs_file: expected.jobs_file.clone(),
        expected: expected.benches.clone(),
        scaling: world_sizes(set, targets),
    }
}

/// Per bench pooled over world sizes and per world size: n, mean and sample sd of the
/// usable entries (failures and conflicts removed, as the score table pools them).
pub fn world_sizes(set: &SampleSet, targets: &TargetTable) -> Vec<WorldSize> {
    let mut groups: BTreeMap<(&str, u32), Vec<f64>> = BTreeMap::new();
    for s in &set.samples {
        let (Some(bench), Some(world), Some(value)) = (s.bench.as_deref(), s.world, s.value) else {
            continue;
        };
        if s.conflict || s.failure.is_some() || value.is_nan() {
            continue;
        }
        if targets.pool_over(bench).is_empty() {
            continue;
        }
        groups.entry((bench, world)).or_default().push(value);
    }
    groups
        .into_iter()
        .map(|((bench, devices), values)| {
            let n = values.len();
            let mean = values.iter().sum::<f64>() / n as f64;
            let sd = (n > 1).then(|| {
                let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
                (ss / (n - 1) as f64).sqrt()
            });
            WorldSize {
                bench: bench.to_owned(),
                devices,
                n: n as u32,
                mean: Some(mean),
                sd,
            }
        })
        .collect()
}
