//! The bootstrap's index draws: uniform integers below small bounds, several from each
//! 64-bit output (Lemire's method on narrow bit fields), and each GPU's pair draws.

use super::rng::Xoshiro256;

/// GPUs with at most this many runs draw pairs from a table of pair sums.
const PAIR_TABLE_MAX: u32 = 64;

/// The pair sums of a GPU's runs, `table[i·n + j] = runs[i] + runs[j]`.
pub fn pair_table(runs: &[f64], table: &mut Vec<f64>) {
    table.clear();
    table.extend(runs.iter().flat_map(|a| runs.iter().map(move |b| a + b)));
}

/// One GPU's draws for every resample, taken as [`Strata::resample_means`](super::Strata::resample_means) documents:
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
