//! `mlbench run --synthetic-data`: every copy of a bench whose script reads a data set
//! makes its batches in memory instead. The copies record `synthetic_data: true` among
//! their arguments (so their `unique_id` is never a run on the files'), which `validate`
//! and `report` read to say that the throughputs leave out reading and decoding the data.

use crate::bench::SYNTHETIC_DATA;
use crate::plan::Plan;
use mlbench_schema::value::Value;

/// Marks the copies of `plans` whose bench's script reads files; returns those benches,
/// each once, in the plans' order.
pub fn mark(plans: &mut [Plan]) -> Vec<String> {
    let mut marked: Vec<String> = Vec::new();
    for plan in plans.iter_mut() {
        for execution in &mut plan.executions {
            if !mlbench_datasets::sets::reads_files(&execution.name) {
                continue;
            }
            for copy in &mut execution.copies {
                let yes = Value::Bool(true);
                copy.arguments
                    .insert(SYNTHETIC_DATA.to_owned(), yes.clone());
                copy.args.extra.insert(SYNTHETIC_DATA.to_owned(), yes);
            }
            if !marked.contains(&execution.name) {
                marked.push(execution.name.clone());
            }
        }
    }
    marked
}
