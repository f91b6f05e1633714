//! The bootstrap behind the grid's and the report's confidence intervals.
//!
//! Runs are resampled **within GPUs**: a GPU's runs are repetitions of one experiment,
//! while different GPUs of a machine are not interchangeable (one may be slower), so
//! a resample keeps every GPU with as many runs as it had and only redraws which runs.
//! The statistic is the mean over all samples of the bench, as the score scheme pools.
//!
//! The random numbers come from generators written in this workspace, not from a crate:
//! the published intervals must be the same on every platform and with every version of
//! the dependencies, given the seed. [`SplitMix64`] (`mlbench_schema::rng`) expands seeds, [`Xoshiro256`]
//! (xoshiro256\*\*, Blackman and Vigna 2018) draws; both are pinned to the reference
//! implementations' outputs by tests. Every (submission, bench) gets its own stream,
//! derived from the seed and the names (see [`stream`]), so a figure does not depend on
//! the order of the inputs, on the other submissions, or on any scheduling.

use crate::samples::SampleSet;
use std::collections::BTreeMap;

/// SplitMix64 (`mlbench_schema::rng`): expands one 64-bit seed into the state of
/// [`Xoshiro256`], as its authors recommend.
pub use mlbench_schema::rng::SplitMix64;

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

/// GPUs with at most this many runs draw pairs from a table of pair sums.
const PAIR_TABLE_MAX: u32 = 64;

/// The pair sums of a GPU's runs, `table[i·n + j] = runs[i] + runs[j]`.
pub fn pair_table(runs: &[f64], table: &mut Vec<f64>) {
    table.clear();
    table.extend(runs.iter().flat_map(|a| runs.iter().map(move |b| a + b)));
}

/// One GPU's draws for every resample, taken as [`Strata::resample_means`] documents:
/// pairs (one draw below n² each while n ≤ 64, else two below n), then the odd runs. The
/// same draws can sum several sets of values of that GPU's runs (the fleet view draws a
/// node's runs once for all its benches).
#[derive(Debug, Clone, Default)]
pub struct GpuDraws {
    len: u32,
    resamples: usize,
    pairs: usize,
    odd: bool,
    /// Pairs drawn as one index into a [`pair_table`].
    pub table: bool,
    picks: Vec<u32>,
    singles: Vec<u32>,
}

impl GpuDraws {
    /// Draws a GPU of `len` runs for `resamples` resamples (nothing for a single run),
    /// reusing this value's buffers.
    pub fn draw(&mut self, draws: &mut Draws, len: u32, resamples: usize) {
        let l = len as usize;
        self.len = len;
        self.resamples = resamples;
        self.pairs = l / 2;
        self.odd = l % 2 == 1;
        self.table = len <= PAIR_TABLE_MAX;
        if len <= 1 {
            self.picks.clear();
            self.singles.clear();
            return;
        }
        let per = if self.table { 1 } else { 2 };
        self.picks.resize(resamples * self.pairs * per, 0);
        let pair_bound = if self.table {
            Bound::new(len * len)
        } else {
            Bound::new(len)
        };
        draws.fill_slice(&pair_bound, &mut self.picks);
        self.singles.resize(if self.odd { resamples } else { 0 }, 0);
        draws.fill_slice(&Bound::new(len), &mut self.singles);
    }

    /// Adds each resample's sum of `runs` (this GPU's values, one per run) to `totals`:
    /// its pairs' sums one after the other (from `table`, the [`pair_table`] of `runs`,
    /// when [`GpuDraws::table`]), then the odd run.
    #[inline]
    pub fn add_sums(&self, runs: &[f64], table: &[f64], totals: &mut [f64]) {
        if self.len == 1 {
            // One run: every draw is that run; no random number is spent.
            for total in totals.iter_mut() {
                *total += runs[0];
            }
            return;
        }
        let pairs = self.pairs;
        // Each resample's sum is its own chain of additions: the processor overlaps the
        // chains of successive resamples.
        match (self.table, self.odd) {
            (true, false) => {
                for (total, drawn) in totals.iter_mut().zip(self.picks.chunks_exact(pairs)) {
                    let mut sum = 0.0;
                    for &i in drawn {
                        sum += table[i as usize];
                    }
                    *total += sum;
                }
            }
            (true, true) => {
                let drawn = self.picks.chunks_exact(pairs).zip(&self.singles);
                for (total, (pair, &last)) in totals.iter_mut().zip(drawn) {
                    let mut sum = 0.0;
                    for &i in pair {
                        sum += table[i as usize];
                    }
                    *total += sum + runs[last as usize];
                }
            }
            (false, _) => {
                for (r, total) in totals.iter_mut().enumerate() {
                    let drawn = &self.picks[2 * r * pairs..2 * (r + 1) * pairs];
                    let mut sum = 0.0;
                    for p in drawn.chunks_exact(2) {
                        sum += runs[p[0] as usize] + runs[p[1] as usize];
                    }
                    if self.odd {
                        sum += runs[self.singles[r] as usize];
                    }
                    *total += sum;
                }
            }
        }
    }

    /// [`Self::add_sums`] for [`LANES`] sets of values of this GPU's runs at once (one
    /// bench per lane; `runs[k][l]` is run k's value in lane l, `table` their
    /// [`pair_table_lanes`]): each lane's sums are exactly `add_sums`'s, in the same
    /// order, and the draws are read once for all lanes. A lane of zeros adds zeros.
    #[inline]
    pub fn add_sums_lanes(
        &self,
        runs: &[[f64; LANES]],
        table: &[[f64; LANES]],
        totals: &mut [[f64; LANES]],
    ) {
        let add = |a: &mut [f64; LANES], b: &[f64; LANES]| {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        };
        if self.len == 1 {
            for total in totals.iter_mut() {
                add(total, &runs[0]);
            }
            return;
        }
        let pairs = self.pairs;
        match (self.table, self.odd) {
            (true, false) => {
                for (total, drawn) in totals.iter_mut().zip(self.picks.chunks_exact(pairs)) {
                    let mut sum = [0.0; LANES];
                    for &i in drawn {
                        add(&mut sum, &table[i as usize]);
                    }
                    add(total, &sum);
                }
            }
            (true, true) => {
                let drawn = self.picks.chunks_exact(pairs).zip(&self.singles);
                for (total, (pair, &last)) in totals.iter_mut().zip(drawn) {
                    let mut sum = [0.0; LANES];
                    for &i in pair {
                        add(&mut sum, &table[i as usize]);
                    }
                    // `sum + runs[last]`, then onto the total, as `add_sums`.
                    add(&mut sum, &runs[last as usize]);
                    add(total, &sum);
                }
            }
            (false, _) => {
                for (r, total) in totals.iter_mut().enumerate() {
                    let drawn = &self.picks[2 * r * pairs..2 * (r + 1) * pairs];
                    let mut sum = [0.0; LANES];
                    for p in drawn.chunks_exact(2) {
                        let (a, b) = (&runs[p[0] as usize], &runs[p[1] as usize]);
                        for l in 0..LANES {
                            sum[l] += a[l] + b[l];
                        }
                    }
                    if self.odd {
                        add(&mut sum, &runs[self.singles[r] as usize]);
                    }
                    add(total, &sum);
                }
            }
        }
    }
}

/// How many sets of values [`GpuDraws::add_sums_lanes`] sums at once: the fleet's benches
/// go through a node's draws this many at a time, so fast.json's 19 benches take two
/// passes (with 4 lanes, five: 7 % more of the fleet's CPU time on the large tree).
pub const LANES: usize = 10;

/// [`pair_table`] lane by lane: `table[i·n + j][l] = runs[i][l] + runs[j][l]`.
pub fn pair_table_lanes(runs: &[[f64; LANES]], table: &mut Vec<[f64; LANES]>) {
    table.clear();
    table.extend(runs.iter().flat_map(|a| {
        runs.iter()
            .map(move |b| std::array::from_fn(|l| a[l] + b[l]))
    }));
}

/// A bound of [`Draws`]: `n` and the width of the bit field drawn for it: 8 bits up to
/// `n = 32` (at most a field in 8 is dropped; for 10 runs 6 in 256), 16 bits up to 4096
/// (at most 1 in 16; for a pair of 10 runs, `n = 100`, 36 in 65,536), else 32 bits.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    n: u64,
    width: u32,
    /// `2^width mod n`: products whose low `width` bits fall below it are redrawn.
    threshold: u64,
}

impl Bound {
    /// The bound `n` (≥ 1).
    pub fn new(n: u32) -> Bound {
        let n = u64::from(n.max(1));
        let width = if n <= 32 {
            8
        } else if n <= 4096 {
            16
        } else {
            32
        };
        Bound {
            n,
            width,
            threshold: (1u64 << width) % n,
        }
    }
}

/// The bootstrap's index draws: uniform integers below small bounds, several from each
/// 64-bit output of a stream.
///
/// Each output is cut into `64 / width` bit fields, lowest first, as the [`Bound`] says;
/// a field `x` gives `⌊x·n / 2^width⌋` unless the low `width` bits of `x·n` are below
/// `2^width mod n`, when it gives nothing (Lemire's method on a narrow field: exactly
/// uniform). [`Draws::fill`] cuts every output it takes whole; so drawing a GPU's 10 runs
/// for 2000 resamples takes about 2,560 outputs instead of 20,000.
#[derive(Debug, Clone)]
pub struct Draws {
    rng: Xoshiro256,
}

impl Draws {
    /// Draws from `rng`, starting at its next output.
    pub fn new(rng: Xoshiro256) -> Draws {
        Draws { rng }
    }

    /// Appends `count` draws below `bound` to `out`, from as many whole outputs as they
    /// take (the fields of the last output past the `count`th draw are not used).
    pub fn fill(&mut self, bound: &Bound, count: usize, out: &mut Vec<u32>) {
        let start = out.len();
        out.resize(start + count, 0);
        self.fill_slice(bound, &mut out[start..]);
    }

    /// [`Draws::fill`] into `out`, every element of it.
    pub fn fill_slice(&mut self, bound: &Bound, out: &mut [u32]) {
        match bound.width {
            8 => self.fill_with(out, |rng, out| cut8(rng.next_u64(), bound, out)),
            16 => self.fill_with(out, |rng, out| cut16(rng.next_u64(), bound, out)),
            _ => self.fill_with(out, |rng, out| cut32(rng.next_u64(), bound, out)),
        }
    }

    /// Fills `out` with what `cut` makes of one output after another (it writes at most
    /// 8 draws and says how many): whole outputs while their fields fit, the last one
    /// through a buffer.
    #[inline(always)]
    fn fill_with(
        &mut self,
        out: &mut [u32],
        mut cut: impl FnMut(&mut Xoshiro256, &mut [u32; 8]) -> usize,
    ) {
        let mut k = 0;
        while let Some(room) = out.get_mut(k..).and_then(<[u32]>::first_chunk_mut::<8>) {
            k += cut(&mut self.rng, room);
        }
        let mut last = [0u32; 8];
        while k < out.len() {
            let got = cut(&mut self.rng, &mut last).min(out.len() - k);
            out[k..k + got].copy_from_slice(&last[..got]);
            k += got;
        }
    }

    /// The generator, after the last output drawn from.
    pub fn into_inner(self) -> Xoshiro256 {
        self.rng
    }
}

/// 8-bit fields: the eight products in two words of 16-bit lanes (even and odd bytes),
/// x·n < 256·32 within its lane. Adding 256 − threshold to a lane's low byte carries into
/// bit 8 exactly when the byte is at least the threshold: the field is kept.
#[inline(always)]
fn cut8(word: u64, bound: &Bound, out: &mut [u32; 8]) -> usize {
    const LANES: u64 = 0x00ff_00ff_00ff_00ff;
    const CARRY: u64 = 0x0100_0100_0100_0100;
    let lift = (256 - bound.threshold) * 0x0001_0001_0001_0001;
    let even = (word & LANES) * bound.n;
    let odd = ((word >> 8) & LANES) * bound.n;
    let keep_even = ((even & LANES) + lift) & CARRY;
    let keep_odd = ((odd & LANES) + lift) & CARRY;
    // The indices in byte order, one byte each.
    let idx = (((even >> 8) & LANES) | (((odd >> 8) & LANES) << 8)).to_le_bytes();
    if keep_even & keep_odd == CARRY {
        // All eight kept (for 10 runs, 5 outputs in 6).
        *out = idx.map(u32::from);
        return 8;
    }
    // Bit 8 of lane j of the even (odd) word says byte 2j (2j + 1) is kept: shifted
    // together, byte b's flag is bit 8b.
    let kept = (keep_even >> 8) | keep_odd;
    let mut k = 0;
    for (j, &i) in idx.iter().enumerate() {
        out[k] = u32::from(i);
        k += ((kept >> (8 * j)) & 1) as usize;
    }
    k
}

/// 16-bit fields, as [`cut8`] with 32-bit lanes: x·n < 2¹⁶·4096 within its lane.
#[inline(always)]
fn cut16(word: u64, bound: &Bound, out: &mut [u32; 8]) -> usize {
    const LANES: u64 = 0x0000_ffff_0000_ffff;
    const CARRY: u64 = 0x0001_0000_0001_0000;
    let lift = (65_536 - bound.threshold) * 0x0000_0001_0000_0001;
    let even = (word & LANES) * bound.n;
    let odd = ((word >> 16) & LANES) * bound.n;
    let keep_even = ((even & LANES) + lift) & CARRY;
    let keep_odd = ((odd & LANES) + lift) & CARRY;
    let (e, o) = ((even >> 16) & LANES, (odd >> 16) & LANES);
    // Fields in order: even lane 0, odd lane 0, even lane 1, odd lane 1.
    let idx = [e as u32, o as u32, (e >> 32) as u32, (o >> 32) as u32];
    if keep_even & keep_odd == CARRY {
        out[..4].copy_from_slice(&idx);
        return 4;
    }
    let kept = [keep_even, keep_odd, keep_even >> 32, keep_odd >> 32];
    let mut k = 0;
    for (i, flag) in idx.into_iter().zip(kept) {
        out[k] = i;
        k += ((flag >> 16) & 1) as usize;
    }
    k
}

/// 32-bit fields, one at a time.
#[inline(always)]
fn cut32(word: u64, bound: &Bound, out: &mut [u32; 8]) -> usize {
    let mut k = 0;
    for x in [word & 0xffff_ffff, word >> 32] {
        let m = x * bound.n;
        out[k] = (m >> 32) as u32;
        k += usize::from(m & 0xffff_ffff >= bound.threshold);
    }
    k
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

/// The percentile interval at `level` of the values (reordered in place): the
/// (1 − level)/2 and (1 + level)/2 quantiles, as [`quantile_sorted`] gives them of the
/// sorted values, the same bits. `None` for no values.
///
/// Only the four order statistics the two quantiles interpolate between are needed: they
/// are selected (linear time) instead of sorting the resamples, which was most of the
/// cost of an interval.
pub fn percentile_interval(values: &mut [f64], level: f64) -> Option<[f64; 2]> {
    let last = values.len().checked_sub(1)?;
    let at = |p: f64| {
        let pos = p.clamp(0.0, 1.0) * last as f64;
        let lo = pos.floor() as usize;
        (lo, pos - lo as f64)
    };
    let (low, high) = (at((1.0 - level) / 2.0), at((1.0 + level) / 2.0));
    if high.0 < low.0 {
        // A negative level: no interval anyone asks for, taken the plain way.
        values.sort_unstable_by(f64::total_cmp);
        return Some([
            quantile_sorted(values, (1.0 - level) / 2.0)?,
            quantile_sorted(values, (1.0 + level) / 2.0)?,
        ]);
    }
    // The order statistics k and k + 1 of `values`, whose first `from` elements are the
    // `from` smallest (so that `k ≥ from` is selected among the rest).
    let pair = |values: &mut [f64], from: usize, k: usize| {
        let (_, &mut kth, above) = values[from..].select_nth_unstable_by(k - from, f64::total_cmp);
        let next = above.iter().copied().min_by(f64::total_cmp).unwrap_or(kth);
        (kth, next)
    };
    let interpolate = |(a, b): (f64, f64), frac: f64| a + frac * (b - a);
    let low_pair = pair(values, 0, low.0);
    // The upper pair among the values above the lower statistic (all of them when the
    // two quantiles share it).
    let high_pair = if high.0 == low.0 {
        low_pair
    } else {
        pair(values, low.0 + 1, high.0)
    };
    Some([interpolate(low_pair, low.1), interpolate(high_pair, high.1)])
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

/// As [`group_by_bench`], grouped by peers ([`SampleSet::peer_group`]): on hardware of
/// several GPU models, a bench on each model is a group of its own.
pub fn group_by_peers(set: &SampleSet) -> BTreeMap<String, BTreeMap<Option<u32>, Vec<f64>>> {
    if set.models.len() < 2 {
        return group_by_bench(set);
    }
    let mut groups: BTreeMap<String, BTreeMap<Option<u32>, Vec<f64>>> = BTreeMap::new();
    for s in &set.samples {
        if let Some((bench, value)) = usable(s) {
            let group = groups
                .entry(set.peer_group(s, bench).into_owned())
                .or_default();
            group.entry(s.device).or_default().push(value);
        }
    }
    groups
}

/// The usable samples of a set: bench → device (`None`: ran on several) → values, in
/// file order within a device.
pub fn group_by_bench(set: &SampleSet) -> BTreeMap<String, BTreeMap<Option<u32>, Vec<f64>>> {
    // Two passes over the samples rather than a copy of the usable ones.
    let kept = || {
        set.samples
            .iter()
            .filter_map(|s| usable(s).map(|(bench, value)| (s.device, bench, value)))
    };
    let (names, ranks) = crate::samples::name_ranks(kept().map(|k| k.1));
    let mut groups: Vec<BTreeMap<Option<u32>, Vec<f64>>> = vec![BTreeMap::new(); names.len()];
    for ((device, _, value), rank) in kept().zip(ranks) {
        groups[rank as usize].entry(device).or_default().push(value);
    }
    names.into_iter().map(str::to_owned).zip(groups).collect()
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
    fn draws_are_pinned_for_each_field_width() {
        // Computed independently: a Python transcription of xoshiro256**, the stream
        // naming and the field cutting documented on `Draws` (the same transcription
        // gives PINNED_DRAWS for `below`).
        let cases: [(u32, [u32; 12]); 3] = [
            (10, [7, 1, 7, 6, 4, 6, 5, 3, 3, 9, 1, 3]),
            (100, [13, 62, 61, 30, 91, 33, 48, 57, 92, 24, 42, 79]),
            (
                5000,
                [
                    3101, 1535, 1683, 2851, 1212, 3965, 4318, 4624, 4615, 3606, 4358, 244,
                ],
            ),
        ];
        for (n, want) in cases {
            let mut d = Draws::new(stream(42, &["A", "baseline", "convnet"]));
            let mut got = Vec::new();
            d.fill(&Bound::new(n), 12, &mut got);
            assert_eq!(got, want, "n = {n}");
        }
    }

    /// The definition on `Draws`, one field at a time.
    fn fields(rng: &mut Xoshiro256, n: u32, count: usize) -> Vec<u32> {
        let n = u64::from(n);
        let width = if n <= 32 {
            8
        } else if n <= 4096 {
            16
        } else {
            32
        };
        let mask = (1u64 << width) - 1;
        let mut out = Vec::new();
        while out.len() < count {
            let word = rng.next_u64();
            for k in 0..64 / width {
                let m = ((word >> (width * k)) & mask) * n;
                if m & mask >= (1u64 << width) % n {
                    out.push((m >> width) as u32);
                }
            }
        }
        out.truncate(count);
        out
    }

    #[test]
    fn eight_fields_at_once_are_the_fields_one_at_a_time() {
        // Every 8-bit bound (the lane arithmetic), and wider ones, in pieces of several
        // lengths (a piece ends inside an output and the next starts a new one).
        for n in (1..=130).chain([4096, 5000, u32::MAX]) {
            let mut plain = Xoshiro256::seed_from_u64(n.into());
            let mut fast = Draws::new(Xoshiro256::seed_from_u64(n.into()));
            for count in [1, 7, 8, 9, 1000] {
                let mut got = Vec::new();
                fast.fill(&Bound::new(n), count, &mut got);
                assert_eq!(got, fields(&mut plain, n, count), "n = {n}, {count} draws");
            }
            let mut rest = fast.into_inner();
            assert_eq!(
                rest.next_u64(),
                plain.next_u64(),
                "n = {n}: the stream in step"
            );
        }
    }

    #[test]
    fn draws_are_uniform_for_every_width() {
        // (bound, draws, buckets, tolerance of each bucket's share, relative). 7 on 8-bit
        // fields: without the redraw of the 4 products of 256 mod 7, the values would
        // take 37 or 36 of 256 fields, 1.2–1.6 % off 1/7, outside the 0.5 % allowed (the
        // count's own sd at 1.4 M draws is 0.2 %). 100 (a pair of 10 runs) and 1000 on
        // 16-bit and 5000 on 32-bit fields: in range, within 5 % per bucket.
        let cases: [(u32, usize, u32, f64); 4] = [
            (7, 1_400_000, 7, 0.005),
            (100, 1_000_000, 100, 0.05),
            (1000, 1_000_000, 100, 0.05),
            (5000, 1_000_000, 100, 0.05),
        ];
        for (n, draws, buckets, tolerance) in cases {
            let mut d = Draws::new(Xoshiro256::seed_from_u64(3));
            let mut values = Vec::new();
            d.fill(&Bound::new(n), draws, &mut values);
            let mut counts = vec![0u32; buckets as usize];
            for v in values {
                assert!(v < n, "{v} ≥ {n}");
                counts[(u64::from(v) * u64::from(buckets) / u64::from(n)) as usize] += 1;
            }
            let expected = draws as f64 / f64::from(buckets);
            for c in &counts {
                let off = (f64::from(*c) - expected).abs() / expected;
                assert!(off < tolerance, "n = {n}: {counts:?}");
            }
        }
    }

    /// The documented resampling, written plainly from `fields`: GPU by GPU, its pairs
    /// (one draw below n² up to 64 runs, else two below n), then its odd runs.
    fn reference_means(groups: &[Vec<f64>], rng: &mut Xoshiro256, resamples: usize) -> Vec<f64> {
        let n: usize = groups.iter().map(Vec::len).sum();
        let mut totals = vec![0.0f64; resamples];
        for runs in groups {
            let l = runs.len();
            if l == 1 {
                totals.iter_mut().for_each(|t| *t += runs[0]);
                continue;
            }
            let (pairs, odd) = (l / 2, l % 2 == 1);
            let table = l <= 64;
            let picks = if table {
                fields(rng, (l * l) as u32, resamples * pairs)
            } else {
                fields(rng, l as u32, 2 * resamples * pairs)
            };
            let singles = if odd {
                fields(rng, l as u32, resamples)
            } else {
                vec![]
            };
            for (r, total) in totals.iter_mut().enumerate() {
                let mut sum = 0.0;
                for k in 0..pairs {
                    let (a, b) = if table {
                        let i = picks[r * pairs + k] as usize;
                        (i / l, i % l)
                    } else {
                        let d = &picks[2 * (r * pairs + k)..];
                        (d[0] as usize, d[1] as usize)
                    };
                    sum += runs[a] + runs[b];
                }
                if odd {
                    sum += runs[singles[r] as usize];
                }
                *total += sum;
            }
        }
        totals.iter().map(|t| t / n as f64).collect()
    }

    #[test]
    fn resampling_follows_its_definition_for_every_shape() {
        // Single runs, even and odd counts, the largest table (64) and beyond it (65, 70).
        let shapes: [&[usize]; 5] = [&[2], &[3, 1, 4], &[1, 10, 10, 7], &[64, 65], &[70, 1, 2]];
        let mut g = Xoshiro256::seed_from_u64(5);
        for (k, shape) in shapes.iter().enumerate() {
            let groups: Vec<Vec<f64>> = shape
                .iter()
                .map(|&l| (0..l).map(|_| (g.next_u64() >> 11) as f64 / 1e12).collect())
                .collect();
            let strata = Strata::new(groups.iter().map(|v| v.iter().copied()));
            for resamples in [1, 3, 500] {
                let (mut a, mut b) = (stream(k as u64, &["x"]), stream(k as u64, &["x"]));
                let mut got = Vec::new();
                strata.resample_means(&mut a, resamples, &mut got);
                let want = reference_means(&groups, &mut b, resamples);
                let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<u64>>();
                assert_eq!(
                    bits(&got),
                    bits(&want),
                    "shape {shape:?}, {resamples} resamples"
                );
            }
        }
    }

    #[test]
    fn resampled_means_are_pinned() {
        // A Python transcription of the documented order (GPU by GPU; each GPU's pairs of
        // every resample, then its odd runs, from one stream of fields; a single run
        // spends none) gives these sums for GPUs [1, 2, 4], [8], [16, 32] from stream
        // (7, "s", "b"), over 6 samples.
        let strata = Strata::new([vec![1.0, 2.0, 4.0], vec![8.0], vec![16.0, 32.0]]);
        let mut out = Vec::new();
        strata.resample_means(&mut stream(7, &["s", "b"]), 5, &mut out);
        let want = [65.0 / 6.0, 75.0 / 6.0, 46.0 / 6.0, 43.0 / 6.0, 60.0 / 6.0];
        assert_eq!(out.len(), 5);
        for (got, want) in out.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{out:?}");
        }
    }

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
