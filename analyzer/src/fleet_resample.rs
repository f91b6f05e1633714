//! The fleet view's bootstrap: a node's runs drawn once per resample for all its benches.
//!
//! A run is one execution of the suite: it ran every bench on a GPU one after the other,
//! so whatever made a run slow (a thermal state, a neighbour on the machine) touches all
//! its benches. The fleet's figure combines benches (a geometric mean), so its resamples
//! draw runs, not bench samples: in each resample every GPU of a node draws as many of its
//! runs as it has, with replacement, and every bench of the node takes the drawn runs'
//! values. This keeps the runs' common part in the interval, and costs one set of draws per
//! node instead of one per bench (docs/scoring.md, "The fleet").
//!
//! A bench joins a node's common draws when, on every GPU where it has values, it has
//! exactly one value for each of that GPU's runs (the usual case). Otherwise (a failed run,
//! an extra entry) its samples are resampled on their own within GPUs, as `--ci` does, so
//! no resample is ever empty.

use crate::bootstrap::{Draws, GpuDraws, LANES, Strata, Xoshiro256, pair_table_lanes};
use std::collections::BTreeMap;

/// One node's usable samples of the fleet's benches: GPU (`None`: entries that ran on
/// several devices) → run → bench index → values.
pub type NodeSamples = BTreeMap<Option<u32>, BTreeMap<u32, RunValues>>;

/// One run's values on one GPU, bench by bench (`run[b]`: bench b's values, usually one),
/// held in one vector.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunValues {
    /// Where each bench's values start in `values`, and the end: benches + 1 offsets.
    starts: Vec<u32>,
    values: Vec<f64>,
}

impl RunValues {
    /// From `(bench, value)` pairs sorted by bench (benches below `benches`).
    pub fn from_sorted(
        benches: usize,
        pairs: impl ExactSizeIterator<Item = (usize, f64)>,
    ) -> RunValues {
        let mut out = RunValues {
            starts: Vec::with_capacity(benches + 1),
            values: Vec::with_capacity(pairs.len()),
        };
        for (b, v) in pairs {
            while out.starts.len() <= b {
                out.starts.push(out.values.len() as u32);
            }
            out.values.push(v);
        }
        while out.starts.len() <= benches {
            out.starts.push(out.values.len() as u32);
        }
        out
    }
}

impl std::ops::Index<usize> for RunValues {
    type Output = [f64];

    fn index(&self, bench: usize) -> &[f64] {
        &self.values[self.starts[bench] as usize..self.starts[bench + 1] as usize]
    }
}

impl FromIterator<Vec<f64>> for RunValues {
    /// Bench 0's values, bench 1's, …
    fn from_iter<I: IntoIterator<Item = Vec<f64>>>(benches: I) -> RunValues {
        let mut out = RunValues::default();
        for values in benches {
            out.starts.push(out.values.len() as u32);
            out.values.extend(values);
        }
        out.starts.push(out.values.len() as u32);
        out
    }
}

/// Each bench's resampled means of one node (`None` for a bench it did not run):
/// benches that join the common draws from `joint` (see the module), the others from
/// `own(bench)` through `strata(bench)`.
pub fn node_means<'s>(
    node: &NodeSamples,
    benches: usize,
    joint: Xoshiro256,
    own: impl Fn(usize) -> Xoshiro256,
    strata: impl Fn(usize) -> Option<&'s Strata>,
    resamples: usize,
) -> Vec<Option<Vec<f64>>> {
    // Per GPU: its runs, then per bench the values in run order when it joins.
    let gpus: Vec<&BTreeMap<u32, RunValues>> = node.values().collect();
    let joins: Vec<Option<bool>> = (0..benches)
        .map(|b| {
            let mut ran = false;
            let mut every_run_once = true;
            for runs in &gpus {
                let counts: Vec<usize> = runs.values().map(|by| by[b].len()).collect();
                if counts.iter().any(|&c| c > 0) {
                    ran = true;
                    every_run_once &= counts.iter().all(|&c| c == 1);
                }
            }
            ran.then_some(every_run_once)
        })
        .collect();
    let mut out: Vec<Option<Vec<f64>>> = vec![None; benches];
    if joins.contains(&Some(true)) {
        let drawn = draw_gpus(&gpus, joint, resamples);
        // The joining benches LANES at a time: each GPU's draws read once for all of them
        // (a bench a GPU did not run is a lane of zeros there, which adds nothing).
        let joint: Vec<usize> = (0..benches).filter(|&b| joins[b] == Some(true)).collect();
        let mut values: Vec<[f64; LANES]> = Vec::new();
        let mut table: Vec<[f64; LANES]> = Vec::new();
        for lanes in joint.chunks(LANES) {
            let mut totals = vec![[0.0f64; LANES]; resamples];
            let mut n = [0usize; LANES];
            for (runs, gpu) in gpus.iter().zip(&drawn) {
                let ran: [bool; LANES] = std::array::from_fn(|l| {
                    lanes
                        .get(l)
                        .is_some_and(|&b| runs.values().any(|by| !by[b].is_empty()))
                });
                if !ran.contains(&true) {
                    continue;
                }
                values.clear();
                values.extend(
                    runs.values().map(|by| {
                        std::array::from_fn(|l| if ran[l] { by[lanes[l]][0] } else { 0.0 })
                    }),
                );
                if gpu.table {
                    pair_table_lanes(&values, &mut table);
                }
                gpu.add_sums_lanes(&values, &table, &mut totals);
                for l in (0..LANES).filter(|&l| ran[l]) {
                    n[l] += values.len();
                }
            }
            for (l, &b) in lanes.iter().enumerate() {
                out[b] = Some(totals.iter().map(|t| t[l] / n[l] as f64).collect());
            }
        }
    }
    for b in (0..benches).filter(|&b| joins[b] == Some(false)) {
        if let Some(s) = strata(b) {
            let mut means = Vec::with_capacity(resamples);
            s.resample_means(&mut own(b), resamples, &mut means);
            out[b] = Some(means);
        }
    }
    out
}

/// The common draws of a node's GPUs (each a map of its runs), from `joint`: GPU by GPU,
/// each as `Strata::resample_means` draws a GPU.
fn draw_gpus<T>(gpus: &[&BTreeMap<u32, T>], joint: Xoshiro256, resamples: usize) -> Vec<GpuDraws> {
    let mut draws = Draws::new(joint);
    gpus.iter()
        .map(|runs| {
            let mut gpu = GpuDraws::default();
            gpu.draw(&mut draws, runs.len() as u32, resamples);
            gpu
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::stream;

    /// A GPU, a run and the values of benches 0 and 1 in it.
    type Row<'a> = (Option<u32>, u32, [&'a [f64]; 2]);

    fn node(rows: &[Row]) -> NodeSamples {
        let mut n = NodeSamples::new();
        for (gpu, run, values) in rows {
            n.entry(*gpu)
                .or_default()
                .insert(*run, values.iter().map(|v| v.to_vec()).collect());
        }
        n
    }

    #[test]
    fn benches_of_one_node_share_their_runs_draws() {
        // Bench 1 is bench 0 times 10, run by run: with the same draws every resample of
        // bench 1 is exactly 10 × bench 0's (10 × a sum of values = the sum of 10 × each,
        // here exactly: the values are small integers).
        let n = node(&[
            (Some(0), 0, [&[1.0], &[10.0]]),
            (Some(0), 1, [&[2.0], &[20.0]]),
            (Some(0), 2, [&[4.0], &[40.0]]),
            (Some(1), 0, [&[8.0], &[80.0]]),
            (Some(1), 1, [&[16.0], &[160.0]]),
        ]);
        let means = node_means(&n, 2, stream(1, &["j"]), |_| unreachable!(), |_| None, 50);
        let (a, b) = (means[0].as_ref().unwrap(), means[1].as_ref().unwrap());
        assert_eq!(a.len(), 50);
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x * 10.0, *y);
        }
        // And they do vary: the draws are not all the data.
        assert!(a.iter().any(|x| *x != a[0]));
    }

    /// The joint means as they were computed bench by bench (`GpuDraws::add_sums` on
    /// each GPU that ran the bench): what the lanes must give, bit for bit.
    fn joint_means_bench_by_bench(
        node: &NodeSamples,
        benches: &[usize],
        joint: Xoshiro256,
        resamples: usize,
    ) -> Vec<Vec<f64>> {
        let gpus: Vec<_> = node.values().collect();
        let drawn = draw_gpus(&gpus, joint, resamples);
        let mut table = Vec::new();
        benches
            .iter()
            .map(|&b| {
                let mut totals = vec![0.0f64; resamples];
                let mut n = 0;
                for (runs, gpu) in gpus.iter().zip(&drawn) {
                    if runs.values().all(|by| by[b].is_empty()) {
                        continue;
                    }
                    let values: Vec<f64> = runs.values().map(|by| by[b][0]).collect();
                    if gpu.table {
                        crate::bootstrap::pair_table(&values, &mut table);
                    }
                    gpu.add_sums(&values, &table, &mut totals);
                    n += values.len();
                }
                totals.iter().map(|t| t / n as f64).collect()
            })
            .collect()
    }

    /// LANES + 3 joining benches (two sets of lanes, the second part-filled), GPUs of 1, 2, 3,
    /// 10 and 70 runs (past the pair table), some benches absent from some GPUs, values
    /// with every bit of the mantissa in use: the lanes give each bench's means bit for
    /// bit as summed bench by bench.
    #[test]
    fn benches_summed_in_lanes_are_summed_as_one_by_one() {
        let benches = LANES + 3;
        let mut rng = stream(5, &["values"]);
        let mut n = NodeSamples::new();
        for (gpu, runs) in [
            (Some(0), 1u32),
            (Some(1), 2),
            (Some(2), 3),
            (Some(3), 10),
            (None, 70),
        ] {
            for run in 0..runs {
                let by: RunValues = (0..benches)
                    .map(|b| {
                        // Bench 2 never on GPU 1, bench 6 only on GPUs 3 and None.
                        let absent =
                            (b == 2 && gpu == Some(1)) || (b == 6 && matches!(gpu, Some(0..=2)));
                        if absent {
                            Vec::new()
                        } else {
                            vec![100.0 + (rng.next_u64() >> 11) as f64 / (1u64 << 45) as f64]
                        }
                    })
                    .collect();
                n.entry(gpu).or_default().insert(run, by);
            }
        }
        let resamples = 300;
        let means = node_means(
            &n,
            benches,
            stream(3, &["j"]),
            |_| unreachable!(),
            |_| None,
            resamples,
        );
        let want = joint_means_bench_by_bench(
            &n,
            &(0..benches).collect::<Vec<_>>(),
            stream(3, &["j"]),
            resamples,
        );
        for b in 0..benches {
            let got: Vec<u64> = means[b]
                .as_ref()
                .unwrap()
                .iter()
                .map(|m| m.to_bits())
                .collect();
            let want: Vec<u64> = want[b].iter().map(|m| m.to_bits()).collect();
            assert_eq!(got, want, "bench {b}");
        }
    }

    #[test]
    fn a_bench_with_a_missing_run_is_resampled_on_its_own() {
        // Bench 1 lacks run 1 on GPU 0: it does not join; its own strata are used.
        let n = node(&[
            (Some(0), 0, [&[1.0], &[5.0]]),
            (Some(0), 1, [&[2.0], &[]]),
            (Some(0), 2, [&[4.0], &[7.0]]),
        ]);
        let own_strata = Strata::new([vec![5.0, 7.0]]);
        let means = node_means(
            &n,
            2,
            stream(1, &["j"]),
            |b| stream(2, &["own", &b.to_string()]),
            |b| (b == 1).then_some(&own_strata),
            20,
        );
        let mut want = Vec::new();
        own_strata.resample_means(&mut stream(2, &["own", "1"]), 20, &mut want);
        assert_eq!(means[1].as_ref().unwrap(), &want);
        assert!(means[0].is_some());
    }

    #[test]
    fn identical_runs_give_the_point_every_time() {
        let n = node(&[
            (Some(0), 0, [&[3.3], &[]]),
            (Some(0), 1, [&[3.3], &[]]),
            (Some(0), 2, [&[3.3], &[]]),
            (None, 0, [&[3.3], &[]]),
        ]);
        let means = node_means(&n, 2, stream(9, &["j"]), |_| unreachable!(), |_| None, 30);
        // The point as the fleet takes it: GPUs in the same order (None first).
        let point = Strata::new([vec![3.3], vec![3.3, 3.3, 3.3]]).mean();
        assert!(means[0].as_ref().unwrap().iter().all(|m| *m == point));
        assert!(means[1].is_none(), "bench 1 never ran on this node");
    }
}
