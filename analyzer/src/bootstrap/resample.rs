//! Resampling one bench's runs within GPUs: [`Strata`] holds them, and its resampled
//! means use the draws of `draws`.

use super::draws::*;
use super::rng::Xoshiro256;

/// The samples of one bench, grouped by GPU: the unit the bootstrap resamples within.
#[derive(Debug, Clone, Default)]
pub struct Strata {
    values: Vec<f64>,
    /// (start, length) of each GPU's runs in `values`.
    groups: Vec<(usize, u32)>,
}

impl Strata {
    /// Strata from each GPU's values (empty groups are left out).
    pub fn new<G, V>(groups: G) -> Strata
    where
        G: IntoIterator<Item = V>,
        V: IntoIterator<Item = f64>,
    {
        let mut out = Strata::default();
        for group in groups {
            let start = out.values.len();
            out.values.extend(group);
            let len = out.values.len() - start;
            if len > 0 {
                out.groups.push((start, len as u32));
            }
        }
        out
    }

    /// Every GPU's values, GPU after GPU.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Samples in all.
    pub fn n(&self) -> usize {
        self.values.len()
    }

    /// GPUs (groups) with at least one sample.
    pub fn gpus(&self) -> usize {
        self.groups.len()
    }

    /// Whether every GPU has a single run: then no resample differs from the data and
    /// the interval is a point.
    pub fn single_runs(&self) -> bool {
        self.groups.iter().all(|&(_, len)| len == 1)
    }

    /// The mean, summed GPU by GPU exactly as the resamples are (see
    /// [`GpuDraws::add_sums`]: the runs taken in pairs, then the odd one), so that
    /// with identical values every resample equals it bit for bit (a degenerate interval
    /// stays exactly at the point).
    pub fn mean(&self) -> f64 {
        let mut total = 0.0;
        for &(start, len) in &self.groups {
            let runs = &self.values[start..start + len as usize];
            let mut sum = 0.0;
            for pair in runs.chunks_exact(2) {
                sum += pair[0] + pair[1];
            }
            if let [.., last] = runs
                && runs.len() % 2 == 1
            {
                sum += last;
            }
            total += sum;
        }
        total / self.values.len() as f64
    }

    /// Appends `resamples` bootstrap means to `out`: in each, every GPU's runs are drawn
    /// with replacement (as many as it has) and the mean is taken: each GPU's draws added
    /// up as [`GpuDraws::add_sums`] adds, the GPUs' sums in GPU order, as
    /// [`Strata::mean`] adds.
    ///
    /// The draws come from `rng` GPU by GPU ([`Draws`]). A GPU's draws are taken two at
    /// a time: a pair of its `n` runs is one draw below `n²` (run `i / n`, run `i mod n`),
    /// looked up in a table of the `n²` pair sums; with an odd `n` one run is left, drawn
    /// below `n`. All of a GPU's pairs (resample 1's, then 2's, …) come first, then its
    /// odd runs. Above 64 runs a pair is two draws below `n`. A GPU with a single run
    /// spends no random number.
    pub fn resample_means(&self, rng: &mut Xoshiro256, resamples: usize, out: &mut Vec<f64>) {
        let n = self.values.len() as f64;
        let mut totals = vec![0.0f64; resamples];
        let mut gpu = GpuDraws::default();
        let mut table: Vec<f64> = Vec::new();
        let mut draws = Draws::new(rng.clone());
        for &(start, len) in &self.groups {
            let runs = &self.values[start..start + len as usize];
            gpu.draw(&mut draws, len, resamples);
            if gpu.table {
                pair_table(runs, &mut table);
            }
            gpu.add_sums(runs, &table, &mut totals);
        }
        out.extend(totals.iter().map(|t| t / n));
        *rng = draws.into_inner();
    }
}
