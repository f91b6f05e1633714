//! The batch sizes a submission's entries ran at, against the ones its targets were
//! measured with (`batch_size` in the targets, docs/targets.md): a bench run at another
//! batch size does other work per step, and its `diff` says so only here.

use crate::SampleSet;
use mlbench_results::report::BatchMismatch;
use mlbench_schema::TargetTable;
use std::collections::BTreeMap;

/// The entry field that records the batch size (`report --by batch_size` sweeps it).
pub const BATCH_SIZE_FIELD: &str = "batch_size";

/// For each bench, the batch sizes given to its entries that count (those set aside as
/// a conflicting configuration left out) and how many entries ran at each; an entry
/// that records none ([`mlbench_schema::ReportEntry::given_batch_size`]) is not counted.
pub fn batch_sizes(set: &SampleSet) -> BTreeMap<&str, BTreeMap<i64, usize>> {
    let mut sizes: BTreeMap<&str, BTreeMap<i64, usize>> = BTreeMap::new();
    for s in set.samples.iter().filter(|s| !s.conflict) {
        if let (Some(bench), Some(batch)) = (s.bench.as_deref(), s.batch_size) {
            *sizes.entry(bench).or_default().entry(batch).or_default() += 1;
        }
    }
    sizes
}

/// The benches of `targets` with a batch size whose entries in `set` ran at another one,
/// in the table's order.
pub fn batch_mismatches(set: &SampleSet, targets: &TargetTable) -> Vec<BatchMismatch> {
    let sizes = batch_sizes(set);
    let mut out = Vec::new();
    for t in &targets.targets {
        let (Some(target), Some(found)) = (t.batch_size, sizes.get(t.bench.as_str())) else {
            continue;
        };
        let entries: usize = (found.iter())
            .filter(|(size, _)| **size != target)
            .map(|(_, n)| n)
            .sum();
        if entries > 0 {
            out.push(BatchMismatch {
                bench: t.bench.clone(),
                target_batch_size: target,
                batch_sizes: found.keys().copied().collect(),
                entries,
            });
        }
    }
    out
}

/// One note per mismatch.
pub fn mismatch_lines(mismatches: &[BatchMismatch]) -> Vec<String> {
    mismatches
        .iter()
        .map(|m| {
            let other: Vec<String> = (m.batch_sizes.iter())
                .filter(|b| **b != m.target_batch_size)
                .map(i64::to_string)
                .collect();
            format!(
                "batch size: {}: {} at batch size {}, its target was measured at {}: the diff compares different work per step",
                m.bench,
                mlbench_schema::words::count(m.entries, "entry", "entries"),
                other.join(", "),
                m.target_batch_size
            )
        })
        .collect()
}
