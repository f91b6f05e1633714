//! The nodes of a submission that ran on several (`fleet.*`): they should be alike
//! (`fleet.inconsistent`), and a node the submission declares should be in every run
//! (`fleet.node-missing`). Nodes are the entries' `hostname`; a submission declares its
//! nodes with the machine descriptions `mlbench run` leaves (`system.json`,
//! `system.<host>.json`), which also say their GPUs, drivers and libraries.

use crate::facts::EntryFacts;
use crate::finding::catalogued;
use mlbench_results::validation::Finding;
use mlbench_schema::SystemInfo;
use std::collections::{BTreeMap, BTreeSet};

/// What makes two nodes alike, as a description says it.
fn profile(s: &SystemInfo) -> Vec<(&'static str, String)> {
    let mut gpus: Vec<&str> = s
        .devices
        .iter()
        .filter(|d| d.kind == "cuda")
        .map(|d| d.name.as_str())
        .collect();
    gpus.sort_unstable();
    gpus.dedup();
    let drivers: BTreeSet<&str> = s
        .devices
        .iter()
        .filter_map(|d| d.driver.as_deref())
        .collect();
    let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    vec![
        ("GPU model", gpus.join(", ")),
        ("driver", drivers.into_iter().collect::<Vec<_>>().join(", ")),
        ("libtorch", text(&s.libtorch)),
        ("CUDA", text(&s.cuda)),
        ("cuDNN", text(&s.cudnn)),
    ]
}

/// `fleet.inconsistent` and `fleet.node-missing`.
pub fn check(
    entries: &[EntryFacts],
    runs: &[String],
    systems: &[SystemInfo],
    out: &mut Vec<Finding>,
) {
    // Nodes by the descriptions, where there are some; else by the entries' `gpu`.
    if systems.len() >= 2 {
        let profiles: Vec<(&str, Vec<(&str, String)>)> = systems
            .iter()
            .map(|s| (s.hostname.as_str(), profile(s)))
            .collect();
        let (first_host, first) = &profiles[0];
        for (host, p) in &profiles[1..] {
            for ((what, a), (_, b)) in first.iter().zip(p) {
                if a != b {
                    out.push(
                        catalogued(
                            "fleet.inconsistent",
                            format!("{what} {a} as on {first_host}"),
                            format!("{b} on {host}"),
                        )
                        .field(*what),
                    );
                }
            }
        }
    } else {
        let mut gpu_of: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for e in entries {
            if let (Some(host), Some(gpu)) = (e.host.as_deref(), e.gpu.as_deref()) {
                gpu_of.entry(host).or_default().insert(gpu);
            }
        }
        let mut nodes = gpu_of.iter();
        if let Some((first_host, first)) = nodes.next() {
            for (host, gpus) in nodes {
                if gpus != first {
                    let list =
                        |s: &BTreeSet<&str>| s.iter().copied().collect::<Vec<_>>().join(", ");
                    out.push(
                        catalogued(
                            "fleet.inconsistent",
                            format!("GPU model {} as on {first_host}", list(first)),
                            format!("{} on {host}", list(gpus)),
                        )
                        .field("gpu"),
                    );
                }
            }
        }
    }
    // Declared nodes in every run.
    if systems.len() < 2 {
        return;
    }
    let mut in_run: BTreeMap<u32, BTreeSet<&str>> = BTreeMap::new();
    for e in entries {
        if let Some(host) = e.host.as_deref() {
            in_run.entry(e.run).or_default().insert(host);
        }
    }
    for (run, name) in runs.iter().enumerate() {
        let present = in_run.get(&(run as u32));
        for s in systems {
            if !present.is_some_and(|p| p.contains(s.hostname.as_str())) {
                out.push(catalogued(
                    "fleet.node-missing",
                    format!(
                        "entries of node {} (it has a system description)",
                        s.hostname
                    ),
                    format!("none in run {name}"),
                ));
            }
        }
    }
}
