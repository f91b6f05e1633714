//! The bootstrap behind the grid's and the report's confidence intervals.
//!
//! Runs are resampled **within GPUs**: a GPU's runs are repetitions of one experiment,
//! while different GPUs of a machine are not interchangeable (one may be slower), so
//! a resample keeps every GPU with as many runs as it had and only redraws which runs.
//! The statistic is the mean over all samples of the bench, as the score scheme pools.
//!
//! The random numbers come from a generator written here, not from a crate: the
//! published intervals must be the same on every platform and with every version of
//! the dependencies, given the seed. [`SplitMix64`] expands seeds, [`Xoshiro256`]
//! (xoshiro256\*\*, Blackman and Vigna 2018) draws; both are pinned to the reference
//! implementations' outputs by tests. Every (submission, bench) gets its own stream,
//! derived from the seed and the names (see [`stream`]), so a figure does not depend on
//! the order of the inputs, on the other submissions, or on any scheduling.

use crate::samples::SampleSet;
use std::collections::BTreeMap;

/// SplitMix64 (Steele, Lea and Flood 2014): the generator used to expand one 64-bit seed
/// into the state of [`Xoshiro256`], as its authors recommend.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting at `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next output.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// xoshiro256\*\* 1.0: fast, 256 bits of state, all output bits of good quality.
#[derive(Debug, Clone)]
pub struct Xoshiro256 {
    s: [u64; 4],
}

impl Xoshiro256 {
    /// A generator with its state filled by [`SplitMix64`] from `seed` (never all zero:
    /// SplitMix64 does not output four zeros in a row).
    pub fn seed_from_u64(seed: u64) -> Xoshiro256 {
        let mut sm = SplitMix64::new(seed);
        Xoshiro256 {
            s: [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()],
        }
    }

    /// A generator with the given state (for the reference test vectors).
    pub fn from_state(s: [u64; 4]) -> Xoshiro256 {
        Xoshiro256 { s }
    }

    /// The next output.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..n` (`n ≥ 1`), without bias: Lemire's multiply-and-shift
    /// on the upper 32 bits of one output, redrawing in the rare rejected zone.
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        let n64 = u64::from(n);
        let mut m = (self.next_u64() >> 32) * n64;
        if (m as u32) < n {
            let threshold = n.wrapping_neg() % n.max(1);
            while (m as u32) < threshold {
                m = (self.next_u64() >> 32) * n64;
            }
        }
        (m >> 32) as u32
    }
}

/// 64-bit FNV-1a: a fixed, documented hash of names (std's hashers may change between
/// Rust versions, which would change every interval).
fn fnv1a(bytes: impl IntoIterator<Item = u8>, mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The generator of one named stream: FNV-1a of the names (each followed by a 0xFF
/// byte, which UTF-8 never contains, so `("ab", "c")` and `("a", "bc")` differ) XORed
/// with the first SplitMix64 output of `seed`, expanded by SplitMix64.
pub fn stream(seed: u64, names: &[&str]) -> Xoshiro256 {
    let mut h = 0xcbf2_9ce4_8422_2325;
    for name in names {
        h = fnv1a(name.bytes().chain([0xff]), h);
    }
    Xoshiro256::seed_from_u64(SplitMix64::new(seed).next_u64() ^ h)
}

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

    /// The mean, summed GPU by GPU exactly as the resamples are, so that with
    /// identical values every resample equals it bit for bit (a degenerate interval
    /// stays exactly at the point).
    pub fn mean(&self) -> f64 {
        let total: f64 = self
            .groups
            .iter()
            .map(|&(start, len)| self.values[start..start + len as usize].iter().sum::<f64>())
            .sum();
        total / self.values.len() as f64
    }

    /// Appends `resamples` bootstrap means to `out`: for each, every GPU's runs are
    /// drawn with replacement (as many as it has), in GPU order, then the mean is taken.
    pub fn resample_means(&self, rng: &mut Xoshiro256, resamples: usize, out: &mut Vec<f64>) {
        let n = self.values.len() as f64;
        out.reserve(resamples);
        for _ in 0..resamples {
            let mut total = 0.0;
            for &(start, len) in &self.groups {
                let runs = &self.values[start..start + len as usize];
                let mut sum = 0.0;
                if len == 1 {
                    // One run: every draw is that run; no random number is spent.
                    sum = runs[0];
                } else {
                    for _ in 0..len {
                        sum += runs[rng.below(len) as usize];
                    }
                }
                total += sum;
            }
            out.push(total / n);
        }
    }
}

/// The `p` quantile (0 ≤ p ≤ 1) of values sorted ascending, by linear interpolation
/// between order statistics at position p·(n − 1) (numpy's and R's default, type 7).
/// `None` for no values.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let pos = p.clamp(0.0, 1.0) * last as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(last);
    let frac = pos - lo as f64;
    Some(sorted[lo] + frac * (sorted[hi] - sorted[lo]))
}

/// The percentile interval at `level` of the values (sorted in place): the
/// (1 − level)/2 and (1 + level)/2 quantiles. `None` for no values.
pub fn percentile_interval(values: &mut [f64], level: f64) -> Option<[f64; 2]> {
    values.sort_unstable_by(f64::total_cmp);
    Some([
        quantile_sorted(values, (1.0 - level) / 2.0)?,
        quantile_sorted(values, (1.0 + level) / 2.0)?,
    ])
}

pub use mlbench_results::report::MeanCi;

/// The bootstrap interval of the pooled mean of one bench: `values_by_device` holds each
/// GPU's runs (one group per GPU; entries that ran on several devices form one group of
/// their own); `names` name the stream (see [`stream`]). `None` when there is no value.
/// The percentiles are taken of the resampled means themselves (the grid takes them of
/// log ratios; for a percentile interval the two differ only in the interpolation
/// between neighbouring order statistics).
pub fn mean_ci(
    values_by_device: &[Vec<f64>],
    names: &[&str],
    resamples: usize,
    seed: u64,
    level: f64,
) -> Option<MeanCi> {
    let strata = Strata::new(values_by_device.iter().map(|g| g.iter().copied()));
    if strata.n() == 0 || resamples == 0 {
        return None;
    }
    let mean = strata.mean();
    let mut rng = stream(seed, names);
    let mut means = Vec::with_capacity(resamples);
    strata.resample_means(&mut rng, resamples, &mut means);
    let [lo, hi] = percentile_interval(&mut means, level)?;
    Some(MeanCi {
        n: strata.n(),
        mean,
        ci: [lo, hi],
    })
}

/// Whether a sample counts for the grid and the report's intervals: a bench, a finite
/// positive throughput, not a failure, not set aside by a configuration conflict.
pub fn usable(sample: &crate::samples::Sample) -> Option<(&str, f64)> {
    let bench = sample.bench.as_deref()?;
    let value = sample.value?;
    (sample.failure.is_none() && !sample.conflict && value.is_finite() && value > 0.0)
        .then_some((bench, value))
}

/// The usable samples of a set: bench → device (`None`: ran on several) → values, in
/// file order within a device.
pub fn group_by_bench(set: &SampleSet) -> BTreeMap<String, BTreeMap<Option<u32>, Vec<f64>>> {
    let mut out: BTreeMap<String, BTreeMap<Option<u32>, Vec<f64>>> = BTreeMap::new();
    for sample in &set.samples {
        if let Some((bench, value)) = usable(sample) {
            if !out.contains_key(bench) {
                out.insert(bench.to_owned(), BTreeMap::new());
            }
            if let Some(devices) = out.get_mut(bench) {
                devices.entry(sample.device).or_default().push(value);
            }
        }
    }
    out
}

/// `mlbench report --ci`: the bootstrap interval of every bench's pooled mean (the score
/// scheme's mean: failures and conflicts removed), runs resampled within GPUs. Each
/// bench's stream is named by the suite and the bench, so a bench's interval does not
/// depend on the other benches.
pub fn bench_mean_cis(
    set: &SampleSet,
    resamples: usize,
    seed: u64,
    level: f64,
) -> BTreeMap<String, MeanCi> {
    group_by_bench(set)
        .into_iter()
        .filter_map(|(bench, devices)| {
            let groups: Vec<Vec<f64>> = devices.into_values().collect();
            let ci = mean_ci(&groups, &[&set.suite, &bench], resamples, seed, level)?;
            Some((bench, ci))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_outputs() {
        // The reference vector of SplitMix64 (Vigna's splitmix64.c, Java's
        // SplittableRandom) for seed 1234567.
        let mut g = SplitMix64::new(1_234_567);
        let got: Vec<u64> = (0..5).map(|_| g.next_u64()).collect();
        assert_eq!(
            got,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423,
                4_593_380_528_125_082_431,
                16_408_922_859_458_223_821
            ]
        );
    }

    #[test]
    fn xoshiro256starstar_matches_the_reference_outputs() {
        // xoshiro256starstar.c from state {1, 2, 3, 4}.
        let mut g = Xoshiro256::from_state([1, 2, 3, 4]);
        let got: Vec<u64> = (0..5).map(|_| g.next_u64()).collect();
        assert_eq!(
            got,
            [
                11_520,
                0,
                1_509_978_240,
                1_215_971_899_390_074_240,
                1_216_172_134_540_287_360
            ]
        );
    }

    #[test]
    fn streams_are_pinned_and_distinct() {
        // Pinned: a change here changes every published interval.
        let mut g = stream(42, &["A", "baseline", "convnet"]);
        let first: Vec<u32> = (0..8).map(|_| g.below(10)).collect();
        let mut again = stream(42, &["A", "baseline", "convnet"]);
        let second: Vec<u32> = (0..8).map(|_| again.below(10)).collect();
        assert_eq!(first, second);
        assert_eq!(first, PINNED_DRAWS);
        let mut other = stream(42, &["A", "baselineconvnet"]);
        assert_ne!(g.next_u64(), other.next_u64());
        assert_ne!(stream(1, &["x"]).next_u64(), stream(2, &["x"]).next_u64());
    }

    // Computed independently (a Python transcription of the reference C code).
    const PINNED_DRAWS: [u32; 8] = [3, 5, 7, 9, 7, 0, 5, 2];

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut g = Xoshiro256::seed_from_u64(7);
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            counts[g.below(7) as usize] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
        assert_eq!(g.below(1), 0);
    }

    #[test]
    fn quantiles_interpolate_linearly() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile_sorted(&v, 0.0), Some(1.0));
        assert_eq!(quantile_sorted(&v, 0.5), Some(3.0));
        assert_eq!(quantile_sorted(&v, 0.9), Some(4.6));
        assert_eq!(quantile_sorted(&v, 1.0), Some(5.0));
        assert_eq!(quantile_sorted(&[], 0.5), None);
        assert_eq!(quantile_sorted(&[2.5], 0.3), Some(2.5));
    }

    #[test]
    fn equal_values_give_a_point_interval() {
        let ci = mean_ci(&[vec![3.3; 4], vec![3.3; 5]], &["s", "b"], 200, 1, 0.95);
        let ci = ci.expect("values");
        assert_eq!(ci.ci, [ci.mean, ci.mean]);
        assert_eq!(ci.n, 9);
    }
}
