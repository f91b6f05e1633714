//! What a loss chart draws: the curves `loss.divergent` compares, grouped as it groups
//! them, each labelled with its run and device, with the band the rule draws.

use crate::facts::{Device, EntryFacts};
use crate::rules::loss::{CurveGroup, MIN_STEPS, SubmissionCurves, curve_groups};
use mlbench_results::views::{LossCurve, LossGroup};
use mlbench_schema::FailureKind;
use std::collections::{BTreeMap, BTreeSet};

/// The loss curves of every bench configuration of a submission, one group per chart.
pub fn loss_view(read: &SubmissionCurves) -> Vec<LossGroup> {
    let groups = curve_groups(&read.entries);
    let runs = Runs::new(read);
    let mut per_bench: BTreeMap<&str, usize> = BTreeMap::new();
    for g in &groups {
        *per_bench.entry(g.bench).or_default() += 1;
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    groups
        .iter()
        .map(|group| {
            let k = seen.entry(group.bench).or_default();
            *k += 1;
            let n = per_bench[group.bench];
            let curves = (group.curves.iter())
                .map(|e| LossCurve {
                    run: runs.of(e),
                    device: e.device.to_string(),
                    file: read
                        .files
                        .get(e.file)
                        .map_or("?", String::as_str)
                        .to_owned(),
                    entry: e.entry,
                    losses: e.losses.to_vec(),
                })
                .collect();
            let (runs_counted, devices) = coverage(group, &runs);
            LossGroup {
                bench: group.bench.to_owned(),
                configuration: (n > 1).then_some((*k, n)),
                band: group.band(),
                curves,
                runs: runs_counted,
                gpus_only: devices.iter().all(|d| matches!(d, Device::Gpu(_))),
                devices: devices.iter().map(Device::to_string).collect(),
                left_out: left_out(group, read, &runs),
            }
        })
        .collect()
}

/// The entries of a group's bench configuration that it does not draw, each named by
/// run and device with why.
fn left_out(group: &CurveGroup, read: &SubmissionCurves, runs: &Runs) -> Vec<String> {
    let drawn: BTreeSet<(usize, usize)> = group.curves.iter().map(|e| (e.file, e.entry)).collect();
    (read.entries.iter())
        .filter(|e| e.name.as_deref() == Some(group.bench) && e.config == group.config)
        .filter(|e| !drawn.contains(&(e.file, e.entry)))
        .map(|e| {
            let steps = e.losses.len();
            let why = match e.failure {
                Some(FailureKind::NanLoss) => "NaN or infinite loss".to_owned(),
                Some(FailureKind::Incomplete) => "not completed".to_owned(),
                Some(FailureKind::FailStub) => "a failed run".to_owned(),
                None if steps == 0 => "no loss curve".to_owned(),
                None if steps < MIN_STEPS => {
                    format!("{steps} logged steps, fewer than {MIN_STEPS}")
                }
                None => format!("{steps} logged steps, not {}", group.len),
            };
            format!("{} {} ({why})", runs.of(e), e.device)
        })
        .collect()
}

/// The runs a group's curves come from, counted, and their distinct devices.
fn coverage(group: &CurveGroup, runs: &Runs) -> (usize, BTreeSet<Device>) {
    let named: BTreeSet<String> = group.curves.iter().map(|e| runs.of(e)).collect();
    let devices = group.curves.iter().map(|e| e.device).collect();
    (named.len(), devices)
}

/// The runs of a submission's curves.
struct Runs<'a> {
    read: &'a SubmissionCurves,
    /// Files whose entries carry several `run_id`s (streams of several runs).
    shared: BTreeSet<usize>,
}

impl<'a> Runs<'a> {
    fn new(read: &'a SubmissionCurves) -> Self {
        let mut ids: BTreeMap<usize, BTreeSet<Option<&str>>> = BTreeMap::new();
        for e in &read.entries {
            ids.entry(e.file).or_default().insert(e.run_id.as_deref());
        }
        let shared = ids
            .into_iter()
            .filter(|(_, ids)| ids.len() > 1)
            .map(|(file, _)| file)
            .collect();
        Self { read, shared }
    }

    /// A curve's run: its file's run, with the entry's `run_id` where a stream holds
    /// several runs.
    fn of(&self, e: &EntryFacts) -> String {
        let run = self.read.runs.get(e.file).map_or("?", String::as_str);
        match &e.run_id {
            Some(id) if self.shared.contains(&e.file) => format!("{run} {id}"),
            _ => run.to_owned(),
        }
    }
}
