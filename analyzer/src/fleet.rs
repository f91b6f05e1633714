//! The fleet view of `mlbench report`: when the entries of a submission name several
//! hosts, each node against the median node (docs/scoring.md, "The fleet").
//!
//! Per bench, a node's figure is the mean of its usable samples (every GPU × run); the
//! bench's reference is the median of the nodes' figures. A node's `relative` is the
//! geometric mean, over the benches it ran that at least two nodes ran, of its figure ÷
//! the reference. Its interval resamples runs within each GPU of each node, every node in
//! the same resample (the median moves with them), from streams named by the suite, the
//! bench and the node. A node is flagged by the GPU straggler test applied to nodes: on
//! each bench its samples against the other nodes' pooled (one-sided Welch, p < 0.01 and
//! at least 1 % below), flagged when below on more than half of the benches tested.

use crate::bootstrap::{Strata, percentile_interval, quantile_sorted, stream, usable};
use crate::fleet_resample::{NodeSamples, RunValues, node_means};
use crate::samples::{SampleSet, name_ranks};
use crate::straggler::{StragglerOptions, below_peers};
use mlbench_results::report::{Fleet, FleetNode};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// How the fleet view is computed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FleetOptions {
    /// Bootstrap resamples of each node's interval.
    pub resamples: usize,
    /// Their seed.
    pub seed: u64,
    /// The confidence level.
    pub level: f64,
    /// The test that flags a slow node.
    pub test: StragglerOptions,
}

impl Default for FleetOptions {
    /// 2000 resamples, seed 2019, 95 %, the straggler test's thresholds.
    fn default() -> FleetOptions {
        FleetOptions {
            resamples: 2000,
            seed: crate::grid::DEFAULT_SEED,
            level: crate::grid::DEFAULT_LEVEL,
            test: StragglerOptions::default(),
        }
    }
}

/// A usable sample on a host: its bench (an index into the fleet's bench names), node,
/// GPU, run and throughput.
#[derive(Debug, Clone, Copy)]
struct Row {
    bench: u32,
    node: u32,
    gpu: Option<u32>,
    run: u32,
    value: f64,
}

/// The usable samples on a host, in the samples' order, and the names of their groups of
/// peers (the benches, or on mixed hardware each bench on each GPU model: sorted;
/// `Row::bench` indexes them).
fn rows(set: &SampleSet) -> (Vec<String>, Vec<Row>) {
    // Two passes over the samples rather than a copy of the kept ones (26,200 of them on
    // a large submission: a megabyte of fresh pages); their groups are borrowed names
    // but on mixed hardware.
    let kept = || {
        set.samples.iter().filter_map(|s| {
            let (bench, value) = usable(s)?;
            Some((s.host?, s, bench, value))
        })
    };
    let groups: Vec<std::borrow::Cow<str>> = kept()
        .map(|(_, s, bench, _)| set.peer_group(s, bench))
        .collect();
    let (names, ranks) = name_ranks(groups.iter().map(|g| g.as_ref()));
    let names: Vec<String> = names.into_iter().map(str::to_owned).collect();
    let rows = kept()
        .zip(ranks)
        .map(|((node, s, _, value), bench)| Row {
            bench,
            node,
            gpu: s.device,
            run: s.run,
            value,
        })
        .collect();
    (names, rows)
}

/// The runs of `order` (indices into `rows`) over which `key` is constant, in turn.
fn runs_of<'a, K: PartialEq>(
    rows: &'a [Row],
    order: &'a [u32],
    key: impl Fn(&Row) -> K + 'a,
) -> impl Iterator<Item = &'a [u32]> + 'a {
    order.chunk_by(move |a, b| key(&rows[*a as usize]) == key(&rows[*b as usize]))
}

/// The median of `values` (reordered), as [`quantile_sorted`] gives it at 0.5, the same
/// bits, without a full sort: the one or two middle order statistics selected.
fn median(values: &mut [f64]) -> Option<f64> {
    let last = values.len().checked_sub(1)?;
    let pos = 0.5 * last as f64;
    let lo = pos.floor() as usize;
    let (_, &mut low, above) = values.select_nth_unstable_by(lo, f64::total_cmp);
    let high = above.iter().copied().min_by(f64::total_cmp).unwrap_or(low);
    let frac = pos - lo as f64;
    Some(low + frac * (high - low))
}

/// Each node's log ratio to the bench's median node, for the benches two nodes or more
/// ran (`means`: per bench in name order, node → mean): node → ln(mean ÷ median), bench
/// by bench.
fn log_ratios(means: &[BTreeMap<u32, f64>]) -> BTreeMap<u32, Vec<f64>> {
    let mut out: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for nodes in means {
        if nodes.len() < 2 {
            continue;
        }
        let mut values: Vec<f64> = nodes.values().copied().collect();
        let Some(reference) = median(&mut values) else {
            continue;
        };
        for (&node, &mean) in nodes {
            out.entry(node).or_default().push((mean / reference).ln());
        }
    }
    out
}

fn geomean(logs: &[f64]) -> f64 {
    (logs.iter().sum::<f64>() / logs.len() as f64).exp()
}

/// A fleet asked of a submission whose entries name one host.
#[derive(Debug, thiserror::Error)]
#[error(
    "{0}: its entries name one host: a fleet plot compares the nodes of a submission run on \
     several hosts"
)]
pub struct OneHost(pub String);

mlbench_schema::classify_all!(Input: OneHost);

/// The fleet view of the submission `label` (`set`), with the default options, for its plot.
///
/// # Errors
/// [`OneHost`]: its samples name fewer than two hosts.
pub fn fleet_plot(label: &str, set: &SampleSet) -> Result<Fleet, OneHost> {
    fleet(set, &FleetOptions::default()).ok_or_else(|| OneHost(label.to_owned()))
}

/// The fleet view of `set`; `None` unless its samples name at least two hosts.
pub fn fleet(set: &SampleSet, options: &FleetOptions) -> Option<Fleet> {
    let (names, rows) = rows(set);
    let strata = node_strata(&rows, names.len());
    let nodes: BTreeSet<u32> = strata.iter().flat_map(|n| n.keys().copied()).collect();
    if nodes.len() < 2 {
        return None;
    }
    let point_means: Vec<BTreeMap<u32, f64>> = strata
        .iter()
        .map(|nodes| nodes.iter().map(|(&n, s)| (n, s.mean())).collect())
        .collect();
    let point = log_ratios(&point_means);
    let mut draws = resampled_draws(set, &names, &rows, &strata, options);
    // The node test: each node's samples against the other nodes' on every bench.
    let groups = names.iter().zip(&strata).map(|(bench, nodes)| {
        let units = nodes
            .iter()
            .map(|(&node, s)| (node, s.values().to_vec()))
            .collect();
        ((*bench).to_owned(), units)
    });
    let tests = below_peers(groups, &options.test);
    let seen = gpus_and_runs(set);
    let rows: Vec<FleetNode> = nodes
        .iter()
        .filter_map(|&node| {
            let logs = point.get(&node)?;
            let [ci_low, ci_high] = percentile_interval(draws.get_mut(&node)?, options.level)?;
            let (gpus, runs) = seen.get(&node)?;
            let tested = tests.get(&node).map_or(0, Vec::len);
            let below = tests
                .get(&node)
                .map_or(0, |t| t.iter().filter(|b| b.below).count());
            Some(FleetNode {
                node: set.hosts[node as usize].clone(),
                gpus: gpus.len(),
                runs: runs.len(),
                relative: geomean(logs),
                ci_low,
                ci_high,
                flagged: tested > 0 && 2 * below > tested,
                tested,
                below,
            })
        })
        .collect();
    if rows.len() < 2 {
        return None;
    }
    let mut relatives: Vec<f64> = rows.iter().map(|n| n.relative).collect();
    relatives.sort_unstable_by(f64::total_cmp);
    let near = rows
        .iter()
        .filter(|n| (n.relative - 1.0).abs() <= 0.05)
        .count();
    Some(Fleet {
        p10: quantile_sorted(&relatives, 0.1)?,
        within_5pct: near as f64 / rows.len() as f64,
        nodes: rows,
        resamples: options.resamples,
        seed: options.seed,
    })
}

/// Per bench, each node's strata (GPU by GPU): bench, node, GPU, each GPU's values in
/// the samples' order (a stable sort).
fn node_strata(rows: &[Row], benches: usize) -> Vec<BTreeMap<u32, Strata>> {
    let mut order: Vec<u32> = (0..rows.len() as u32).collect();
    order.sort_by_key(|&i| {
        let r = &rows[i as usize];
        (r.bench, r.node, r.gpu)
    });
    let mut strata: Vec<BTreeMap<u32, Strata>> = vec![BTreeMap::new(); benches];
    for of_node in runs_of(rows, &order, |r| (r.bench, r.node)) {
        let first = rows[of_node[0] as usize];
        let gpus = runs_of(rows, of_node, |r| r.gpu)
            .map(|gpu| gpu.iter().map(|&i| rows[i as usize].value));
        strata[first.bench as usize].insert(first.node, Strata::new(gpus));
    }
    strata
}

/// Each node's bootstrap draws of its relative figure: in each resample the geometric
/// mean of its ratios to the median node over the benches two nodes or more ran.
fn resampled_draws(
    set: &SampleSet,
    names: &[String],
    rows: &[Row],
    strata: &[BTreeMap<u32, Strata>],
    options: &FleetOptions,
) -> BTreeMap<u32, Vec<f64>> {
    // The benches two nodes or more ran, in name order: fleet bench f is bench fleet[f].
    let fleet: Vec<usize> = (0..names.len()).filter(|&b| strata[b].len() >= 2).collect();
    let benches: Vec<&str> = fleet.iter().map(|&b| names[b].as_str()).collect();
    let mut in_fleet = vec![None; names.len()];
    for (f, &b) in fleet.iter().enumerate() {
        in_fleet[b] = Some(f);
    }
    let samples = node_samples(rows, &in_fleet, benches.len());
    // Each node's resampled means of every fleet bench: its runs drawn once per resample
    // for all its benches (fleet_resample), nodes in parallel; each from streams named
    // by the node, so the order of the work changes nothing.
    let per_node: BTreeMap<u32, Vec<Option<Vec<f64>>>> = samples
        .par_iter()
        .map(|(&node, node_samples)| {
            let name = set.hosts[node as usize].as_str();
            let means = node_means(
                node_samples,
                benches.len(),
                stream(options.seed, &[&set.suite, "node", name]),
                |b| stream(options.seed, &[&set.suite, benches[b], "node", name]),
                |f| strata[fleet[f]].get(&node),
                options.resamples,
            );
            (node, means)
        })
        .collect();
    let references = median_references(&per_node, benches.len(), options.resamples);
    relative_draws(&per_node, &references, options.resamples)
}

/// Node, GPU, run: each run's values of the fleet benches (`in_fleet`: a bench's place
/// among them), bench by bench in the samples' order.
fn node_samples(
    rows: &[Row],
    in_fleet: &[Option<usize>],
    benches: usize,
) -> BTreeMap<u32, NodeSamples> {
    let mut order: Vec<u32> = (0..rows.len() as u32)
        .filter(|&i| in_fleet[rows[i as usize].bench as usize].is_some())
        .collect();
    order.sort_by_key(|&i| {
        let r = &rows[i as usize];
        (r.node, r.gpu, r.run, r.bench)
    });
    let mut samples: BTreeMap<u32, NodeSamples> = BTreeMap::new();
    for run in runs_of(rows, &order, |r| (r.node, r.gpu, r.run)) {
        let first = rows[run[0] as usize];
        let values = run.iter().map(|&i| {
            let r = &rows[i as usize];
            (in_fleet[r.bench as usize].unwrap_or_default(), r.value)
        });
        samples
            .entry(first.node)
            .or_default()
            .entry(first.gpu)
            .or_default()
            .insert(first.run, RunValues::from_sorted(benches, values));
    }
    samples
}

/// Per bench, each resample's median node: the reference of every node's ratio.
fn median_references(
    per_node: &BTreeMap<u32, Vec<Option<Vec<f64>>>>,
    benches: usize,
    r_count: usize,
) -> Vec<Vec<f64>> {
    (0..benches)
        .into_par_iter()
        .map(|b| {
            let resampled: Vec<&Vec<f64>> = per_node
                .values()
                .filter_map(|means| means[b].as_ref())
                .collect();
            let mut scratch = Vec::with_capacity(resampled.len());
            (0..r_count)
                .map(|r| {
                    scratch.clear();
                    scratch.extend(resampled.iter().map(|v| v[r]));
                    // Nodes' means are finite and positive: the median exists.
                    median(&mut scratch).unwrap_or(f64::NAN)
                })
                .collect()
        })
        .collect()
}

/// Each node's draws: in each resample the geometric mean of its ratios to the median
/// node, as exp(ln(product) / n), the product taken bench by bench in name order (one
/// logarithm per node and resample; the ratios of a few dozen benches, near 1, are far
/// from overflow).
fn relative_draws(
    per_node: &BTreeMap<u32, Vec<Option<Vec<f64>>>>,
    references: &[Vec<f64>],
    r_count: usize,
) -> BTreeMap<u32, Vec<f64>> {
    per_node
        .par_iter()
        .filter_map(|(&node, means)| {
            let ran: Vec<(&Vec<f64>, &Vec<f64>)> = means
                .iter()
                .zip(references)
                .filter_map(|(m, reference)| Some((m.as_ref()?, reference)))
                .collect();
            let n = ran.len() as f64;
            (!ran.is_empty()).then(|| {
                let row = (0..r_count)
                    .map(|r| {
                        let mut product = 1.0f64;
                        for (v, reference) in &ran {
                            product *= v[r] / reference[r];
                        }
                        (product.ln() / n).exp()
                    })
                    .collect();
                (node, row)
            })
        })
        .collect()
}

/// Each node's GPUs and runs, over all its samples.
fn gpus_and_runs(set: &SampleSet) -> BTreeMap<u32, (BTreeSet<u32>, BTreeSet<u32>)> {
    let mut seen: BTreeMap<u32, (BTreeSet<u32>, BTreeSet<u32>)> = BTreeMap::new();
    let mut last: Option<(u32, Option<u32>, u32)> = None;
    for s in &set.samples {
        let Some(host) = s.host else { continue };
        if last == Some((host, s.device, s.run)) {
            continue;
        }
        last = Some((host, s.device, s.run));
        let (gpus, runs) = seen.entry(host).or_default();
        gpus.extend(s.device);
        runs.insert(s.run);
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The selected median is the sorted quantile at 0.5, bit for bit: odd and even
        /// lengths, repeated values, one value.
        #[test]
        fn the_selected_median_is_the_sorted_one(
            values in prop::collection::vec(
                prop_oneof![0.0f64..10.0, (0u8..4).prop_map(f64::from)],
                1..40,
            )
        ) {
            let mut sorted = values.clone();
            sorted.sort_unstable_by(f64::total_cmp);
            let want = quantile_sorted(&sorted, 0.5).unwrap();
            let mut shuffled = values;
            let got = median(&mut shuffled).unwrap();
            prop_assert_eq!(got.to_bits(), want.to_bits());
        }
    }

    #[test]
    fn the_median_of_nothing_is_none_and_of_two_their_middle() {
        assert_eq!(median(&mut []), None);
        assert_eq!(median(&mut [3.0, 1.0]), Some(2.0));
        assert_eq!(median(&mut [5.0, 1.0, 4.0]), Some(4.0));
    }
}
