//! `scaling`, the suite's data-parallel micro-benchmark (`image_classification/scaling`):
//! one whole-machine copy runs DistributedDataParallel at world sizes k = 1..N in turn, on
//! devices 0..k-1, one process per rank, and writes one entry per k whose `train_item` is
//! the efficiency (speed_k ÷ speed_1) ÷ k.
//!
//! As scaling.py writes them: `vcd` is the only field that names k ("0", "0,1", …);
//! `devices` is the list of the N devices' ids as strings and `repeat` is N on every entry;
//! `batch_size` is per rank; every entry of the sweep has the same `unique_id` (computed
//! before `vcd` is set per k); `train_item` is a fraction labelled "%" with `range` and
//! `sd` 0; a k that failed has `completed: false` and an empty `train_item`. Where
//! scaling.py's `train` stage is empty (its timer drops 10 observations of N), mlbench
//! writes the timed loop of k's rank 0: one observation of `number` steps.
use crate::bench::{BenchFactory, RankTiming};
use crate::plan::{CopyPlan, Execution, Plan};
use crate::report::{self, CopyResult, EntryContext};
use mlbench_schema::ReportEntry;
use mlbench_schema::value::{Object, Value};
use std::path::PathBuf;

/// The benches that sweep world sizes instead of running a timed loop.
pub fn is_sweep(name: &str) -> bool {
    name == "scaling"
}

/// The largest world size: the copy's devices (its `vcd`), or `--devices` where it names
/// fewer (scaling.py: `int(args.devices) or torch.cuda.device_count()`).
pub fn largest_world(copy: &CopyPlan) -> usize {
    let visible = copy
        .vcd
        .split(',')
        .filter(|d| !d.trim().is_empty())
        .count()
        .max(1);
    match copy.arguments.get("devices") {
        Some(Value::Int(n)) if *n > 0 => (*n as usize).min(visible),
        _ => visible,
    }
}

/// What one world size gave: rank 0's timing, or why the world failed.
pub type WorldOutcome = Result<RankTiming, String>;

/// One world size run: its outcome, and rank 0's telemetry file of the world's devices
/// (or why it has none; `None`: not sampled).
#[derive(Debug, Clone)]
pub struct World {
    /// Rank 0's timing, or why the world failed.
    pub outcome: WorldOutcome,
    /// The world's telemetry file, its window rank 0's timed steps.
    pub telemetry: Option<Result<PathBuf, String>>,
}

impl World {
    /// A world that was not sampled.
    pub fn unsampled(outcome: WorldOutcome) -> World {
        World {
            outcome,
            telemetry: None,
        }
    }
}

/// The efficiency of each world size k = index + 1: (speed_k ÷ speed_1) ÷ k; `None` where
/// k or k = 1 failed.
pub fn efficiencies(worlds: &[WorldOutcome]) -> Vec<Option<f64>> {
    let first = worlds
        .first()
        .and_then(|w| w.as_ref().ok())
        .map(RankTiming::speed);
    worlds
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let speed = w.as_ref().ok()?.speed();
            Some(speed / first? / (i + 1) as f64)
        })
        .collect()
}

/// The entries of a sweep, k = 1..N, for copy `copy` (recorded as its entry records it).
pub fn entries(
    ctx: &EntryContext<'_>,
    copy: &CopyPlan,
    worlds: &[WorldOutcome],
) -> Vec<ReportEntry> {
    let n = worlds.len();
    let mut recorded = copy.clone();
    let ids: Vec<Value> = (0..n).map(|d| Value::Str(d.to_string())).collect();
    recorded
        .arguments
        .insert("devices".into(), Value::List(ids));
    recorded
        .arguments
        .insert("repeat".into(), Value::Int(n as i64));
    efficiencies(worlds)
        .into_iter()
        .zip(worlds)
        .enumerate()
        .map(|(i, (efficiency, world))| {
            let vcd = (0..=i).map(|d| d.to_string()).collect::<Vec<_>>().join(",");
            let mut entry = report::sweep_entry(ctx, &recorded, efficiency.is_some());
            entry.fields.insert("vcd", vcd);
            let mut item = Object::new();
            if let (Some(e), Ok(timing)) = (efficiency, world) {
                for key in ["avg", "max", "min"] {
                    item.insert(key, e);
                }
                item.insert("range", 0i64);
                item.insert("sd", 0i64);
                item.insert("unit", "%");
                entry.fields.insert("train", timed_loop(timing));
            }
            entry.fields.insert("train_item", item);
            entry
        })
        .collect()
}

/// The `train` stage of rank 0's timed loop: one observation.
fn timed_loop(timing: &RankTiming) -> Object {
    let mut stage = Object::new();
    stage.insert("avg", timing.seconds);
    stage.insert("count", 1i64);
    stage.insert("max", timing.seconds);
    stage.insert("min", timing.seconds);
    stage.insert("sd", 0.0);
    stage.insert("unit", "s");
    stage
}

/// Runs the sweep of copy `index` over world sizes 1..=`largest` with `world(k)` running a
/// world of k ranks, and appends its entries to the copy's stream. The copy fails if any k
/// failed. The worlds' telemetry files are the copy's, one per world size in order (the
/// k-th file of the bench and copy pairs with its k-th entry).
pub fn run_sweep(
    plan: &Plan,
    execution: &Execution,
    index: usize,
    factory: &dyn BenchFactory,
    hostname: &str,
    largest: usize,
    world: &dyn Fn(usize) -> World,
) -> CopyResult {
    let Some(copy) = execution.copies.get(index) else {
        return CopyResult {
            written: None,
            failure: Some(format!("no copy {index}")),
            entries: 0,
            telemetry: Vec::new(),
        };
    };
    let start_time = report::ctime_now();
    let (worlds, telemetry): (Vec<WorldOutcome>, Vec<_>) = (1..=largest.max(1))
        .map(world)
        .map(|w| (w.outcome, w.telemetry))
        .unzip();
    let end_time = report::ctime_now();
    let (version, gpu) = report::version_and_gpu(&execution.name, copy, factory);
    let ctx = EntryContext {
        name: &execution.name,
        version: &version,
        hostname,
        gpu: gpu.as_deref(),
        run_id: plan.run,
        suite: &plan.jobs_name,
        start_time: &start_time,
        end_time: &end_time,
    };
    let mut failures: Vec<String> = worlds
        .iter()
        .enumerate()
        .filter_map(|(i, w)| {
            w.as_ref()
                .err()
                .map(|e| format!("world size {}: {e}", i + 1))
        })
        .collect();
    if worlds.first().is_some_and(|w| w.is_err()) && worlds.len() > 1 {
        failures.push("no efficiency without world size 1's speed".into());
    }
    let (mut written, mut count) = (None, 0);
    for entry in entries(&ctx, copy, &worlds) {
        match report::append(&copy.report, &entry) {
            Ok(()) => {
                written = Some(copy.report.clone());
                count += 1;
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    let failure =
        (!failures.is_empty()).then(|| format!("{}: {}", execution.name, failures.join("; ")));
    CopyResult {
        written,
        failure,
        entries: count,
        telemetry: in_world_order(telemetry),
    }
}

/// The worlds' telemetry, one per world size when any was sampled (a world that did not
/// start says so), so that the k-th names world size k; none when none was.
fn in_world_order(telemetry: Vec<Option<Result<PathBuf, String>>>) -> Vec<Result<PathBuf, String>> {
    if telemetry.iter().all(Option::is_none) {
        return Vec::new();
    }
    let unsampled = || Err("not sampled: the world did not start".to_owned());
    telemetry
        .into_iter()
        .map(|t| t.unwrap_or_else(unsampled))
        .collect()
}

/// How long a rank waits for the others, to meet or in a collective, before it fails: a
/// rank that died makes the others fail well within it (Gloo and NCCL see the closed
/// connection at once; the timeout catches a rank that hangs).
pub const RANK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Runs a world of `k` ranks of copy `index` of `execution` in threads of this process
/// (devices 0..k-1), sampled at `hz` (0: not) with rank 0's timed steps as its window:
/// rank 0's timing, or the first rank's failure.
pub fn world_in_threads(
    plan: &Plan,
    execution: &Execution,
    index: usize,
    factory: &dyn BenchFactory,
    k: usize,
    hz: u32,
) -> World {
    let Some(copy) = execution.copies.get(index) else {
        return World::unsampled(Err(format!("no copy {index}")));
    };
    let port = match crate::rendezvous::free_port() {
        Ok(port) => port,
        Err(e) => return World::unsampled(Err(format!("no free port: {e}"))),
    };
    let name = execution.name.as_str();
    let copy_number = u32::try_from(index).unwrap_or(u32::MAX);
    let sampler = crate::telemetry::CopySampler::for_world(plan, name, copy_number, k, hz);
    let one_rank = |rank: usize, window: &mut dyn crate::timing::TimedWindow| -> WorldOutcome {
        let rendezvous = crate::rendezvous::Rendezvous::on_this_host(port, rank, k, RANK_TIMEOUT);
        let device = plan
            .devices
            .student(u32::try_from(rank).unwrap_or(u32::MAX));
        (factory.rank(name, &copy.args, device, &rendezvous, window)).map_err(|e| e.to_string())
    };
    let panicked = |_| Err("the rank's thread panicked".to_owned());
    let (results, telemetry) = crate::telemetry::run_sampled(sampler, |window| {
        std::thread::scope(|s| {
            let others: Vec<_> = (1..k)
                .map(|rank| s.spawn(move || one_rank(rank, &mut ())))
                .collect();
            // Rank 0 runs on this thread, which holds the sampler: it marks the window.
            let first =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| one_rank(0, window)))
                    .unwrap_or_else(panicked);
            std::iter::once(first)
                .chain(
                    others
                        .into_iter()
                        .map(|r| r.join().unwrap_or_else(panicked)),
                )
                .collect::<Vec<WorldOutcome>>()
        })
    });
    World {
        outcome: gather(results),
        telemetry,
    }
}

/// Rank 0's timing when every rank succeeded, else the first failure (with its rank).
pub fn gather(ranks: Vec<WorldOutcome>) -> WorldOutcome {
    let mut first = None;
    for (rank, result) in ranks.into_iter().enumerate() {
        match result {
            Err(e) => return Err(format!("rank {rank}: {e}")),
            Ok(t) if rank == 0 => first = Some(t),
            Ok(_) => {}
        }
    }
    first.ok_or_else(|| "no rank ran".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(speed: f64) -> WorldOutcome {
        // 10 steps of 128 items in 1280 ÷ speed seconds.
        Ok(RankTiming {
            steps: 10,
            items: 128,
            seconds: 1280.0 / speed,
        })
    }

    #[test]
    fn a_world_that_did_not_start_keeps_its_place_among_the_files() {
        let file = |k: u32| Some(Ok(PathBuf::from(format!("scaling.0.{k}.jsonl"))));
        let order = in_world_order(vec![file(1), None, file(3)]);
        assert_eq!(order.len(), 3);
        assert_eq!(order[2], Ok(PathBuf::from("scaling.0.3.jsonl")));
        assert!(
            order[1]
                .as_ref()
                .is_err_and(|e| e.contains("did not start"))
        );
        assert!(in_world_order(vec![None, None]).is_empty());
    }

    #[test]
    fn efficiency_is_the_speed_up_over_the_world_size() {
        // The README's RTX row: 100 %, 97.66 %, 92.35 % for 1, 2, 3 GPUs.
        let worlds = [timing(300.0), timing(585.96), timing(831.15)];
        let e = efficiencies(&worlds);
        assert_eq!(e[0], Some(1.0));
        assert!((e[1].unwrap() - 0.9766).abs() < 1e-12, "{:?}", e[1]);
        assert!((e[2].unwrap() - 0.9235).abs() < 1e-12, "{:?}", e[2]);
        // A failed k has none; without k = 1 no k has one.
        let e = efficiencies(&[timing(300.0), Err("died".into()), timing(600.0)]);
        assert_eq!(e, [Some(1.0), None, Some(600.0 / 300.0 / 3.0)]);
        let e = efficiencies(&[Err("died".into()), timing(600.0)]);
        assert_eq!(e, [None, None]);
    }
}
