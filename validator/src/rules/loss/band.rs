//! The band of `loss.divergent` (defined in [`super`]): for each curve of a group, the
//! steps where it lies outside `[q10 − w − t, q90 + w + t]` of the *other* curves; and
//! the same band over all curves, for plots. The values compared are the losses' logs
//! when every loss of the group is positive, else the losses ([`Scale`]); `t` is the
//! group's tolerance.
//!
//! A large submission compares groups of 1,600 curves of 100 steps (`loss.divergent` is
//! then the costliest cross-file rule): each step's two order statistics are selected in
//! linear time, and the band around each value is looked up among nine per step.

use crate::curve::Curve;

/// Curves copied together, step by step (see [`outside_counts`]).
const TILE: usize = 8;

/// How many robust standard deviations of the group (levels, or step-to-step moves) a
/// curve must be past the others' band to count as outside.
const SCALES: f64 = 4.0;

/// The least tolerance on the logs: a factor of 2 past the others' band. Healthy runs of
/// different seeds differ by less; a run that diverged, stalled or trained something
/// else, by more.
const LOG_FACTOR: f64 = std::f64::consts::LN_2;

/// The least tolerance on losses that are not all positive: half their typical size.
const LINEAR_SHARE: f64 = 0.5;

/// What a group's curves are compared on, and the tolerance `t` past the others' band.
///
/// Healthy runs of different seeds differ by an offset of their own (seed by seed, a
/// level) that the step-by-step band of three or seven other curves knows nothing of:
/// with only the old band, such runs were called divergent. So the band is widened by
/// `t = max(4·s, floor)`, `s` the larger of the group's robust spread of levels (1.4826 ×
/// the MAD of each curve's median over its last half) and of its step-to-step moves
/// (1.4826 × the median of |x(i+1) − x(i)| ÷ √2), the floor a factor of 2 on logs or half
/// the median |loss| otherwise. Losses of several orders of magnitude (an L-BFGS run at
/// 1e-4 beside one at 1e-7, style losses from 1e4 to 1e5) compare by ratio, on logs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// Compared on the logs of the losses.
    pub log: bool,
    /// The tolerance past the others' band, in compared units.
    pub t: f64,
}

impl Scale {
    /// The scale of `curves` (their first `len` values).
    pub fn of(curves: &[Vec<f64>], len: usize) -> Scale {
        let log = curves.iter().all(|c| c[..len].iter().all(|&v| v > 0.0));
        let x = |v: f64| if log { v.ln() } else { v };
        let mut levels: Vec<f64> = curves
            .iter()
            .map(|c| {
                let mut half: Vec<f64> = c[len / 2..len].iter().map(|&v| x(v)).collect();
                median(&mut half)
            })
            .collect();
        let center = median(&mut levels.clone());
        let mut deviations: Vec<f64> = levels.iter_mut().map(|l| (*l - center).abs()).collect();
        let spread = 1.4826 * median(&mut deviations);
        let mut moves: Vec<f64> = curves
            .iter()
            .flat_map(|c| c[..len].windows(2).map(|w| (x(w[1]) - x(w[0])).abs()))
            .collect();
        let noise = 1.4826 * median(&mut moves) / std::f64::consts::SQRT_2;
        let floor = if log {
            LOG_FACTOR
        } else {
            let mut sizes: Vec<f64> = curves
                .iter()
                .flat_map(|c| c[..len].iter().map(|v| v.abs()))
                .collect();
            LINEAR_SHARE * median(&mut sizes)
        };
        let t = (SCALES * spread.max(noise)).max(floor);
        Scale {
            log,
            t: if t.is_finite() { t } else { 0.0 },
        }
    }

    /// A loss in compared units.
    pub fn x(&self, v: f64) -> f64 {
        if self.log { v.ln() } else { v }
    }

    /// A compared value back in loss units.
    pub fn loss(&self, x: f64) -> f64 {
        if self.log { x.exp() } else { x }
    }
}

/// The median of `values` (reordered; 0 for none): the mean of the sorted values at
/// `(n − 1) / 2` and `n / 2`, found by selection in linear time (a group's step-to-step
/// moves are 160,000 values; sorting them was most of `loss.divergent`'s time).
fn median(values: &mut [f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return 0.0;
    }
    let (below, &mut upper, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    // For an even count the lower middle is the largest value below the upper one.
    let lower = match n % 2 {
        0 => below
            .iter()
            .copied()
            .max_by(f64::total_cmp)
            .unwrap_or(upper),
        _ => upper,
    };
    (lower + upper) / 2.0
}

/// For each curve, the number of its first `len` steps where it lies outside the band of
/// the others. The curves are finite (only finite curves are kept) and at least two.
///
/// The others' order statistics come from the whole step without removing anything:
/// with `F` the step's values sorted and `v` the tested value, the k-th smallest of the
/// others is `F[k]` when `v > F[k]` and `F[k + 1]` otherwise (ties included). So each
/// step needs `F[k..k + 3]` at the two quantile positions only, and the band around a
/// value takes one of nine pairs of edges, by where `v` lies among `F[k]`, `F[k + 1]` of
/// each position: computed once per step, with the arithmetic the definition does per
/// value (a third faster than doing it per value).
///
/// `by_step` is scratch space, kept from group to group by the caller: a fresh copy of a
/// 1,600-curve group is 1.3 MB of fresh pages (300 page faults) each time.
pub fn outside_counts(curves: &[&Curve], len: usize, by_step: &mut Vec<f64>) -> Vec<usize> {
    let n = curves.len();
    debug_assert!(n >= 2 && curves.iter().all(|c| c.len() >= len));
    let values: Vec<Vec<f64>> = curves
        .iter()
        .map(|c| c.values().take(len).collect())
        .collect();
    let scale = Scale::of(&values, len);
    let m = n - 1; // others
    let position = |p: f64| {
        let h = p * (m - 1) as f64;
        let lo = h.floor() as usize;
        (lo, (lo + 1).min(m - 1) - lo, h - lo as f64)
    };
    let (k10, d10, f10) = position(0.1);
    let (k90, d90, f90) = position(0.9);
    // Step-major copy of the curves: each step's values lie together in memory. Copied
    // eight curves at a time, so that each step's eight values fill one cache line
    // rather than each value a line of its own (one curve after another, the scattered
    // stores were a tenth of the cross-file rules' time), and eight curves, which lie
    // apart in memory, are read side by side.
    // Every slot is written below: what the last group left is not cleared first (a
    // 1.3 MB fill per group).
    by_step.truncate(n * len);
    by_step.resize(n * len, 0.0);
    for (t, tile) in curves.chunks(TILE).enumerate() {
        // One curve after another within the tile: its eight curves' stores share the
        // tile's cache lines (one per step), which stay in L1 meanwhile.
        for (j, curve) in tile.iter().enumerate() {
            let at = TILE * t + j;
            curve.each_step(len, |step, v| by_step[step * n + at] = scale.x(v));
        }
    }
    // The j-th smallest of the others, for a value above `i` of the window's first two.
    let quantile = |w: &[f64; 3], i: usize, d: usize, f: f64| {
        let other = |j: usize| if i > j { w[j] } else { w[j + 1] };
        other(0) + f * (other(d) - other(0))
    };
    let mut counts = vec![0; n];
    let mut column = Vec::with_capacity(n);
    for values in by_step.chunks_exact(n) {
        column.clear();
        column.extend_from_slice(values);
        let low = window(&mut column, k10);
        let high = window(&mut column, k90);
        let edges: [[f64; 2]; 9] = std::array::from_fn(|ij| {
            let q10 = quantile(&low, ij / 3, d10, f10);
            let q90 = quantile(&high, ij % 3, d90, f90);
            let w = (q90 - q10) + 1e-6 * q10.abs().max(q90.abs()) + scale.t;
            [q10 - w, q90 + w]
        });
        for (&v, count) in values.iter().zip(&mut counts) {
            let i = (v > low[0]) as usize + (v > low[1]) as usize;
            let j = (v > high[0]) as usize + (v > high[1]) as usize;
            let [lo, hi] = edges[3 * i + j];
            *count += (v < lo || v > hi) as usize;
        }
    }
    counts
}

/// `[F[k], F[k + 1], F[k + 2]]` of the sorted `column` (positions past the end repeat the
/// last value), partitioning `column` around `k`.
fn window(column: &mut [f64], k: usize) -> [f64; 3] {
    let (_, kth, right) = column.select_nth_unstable_by(k, f64::total_cmp);
    let kth = *kth;
    let (mut first, mut second) = (f64::INFINITY, f64::INFINITY);
    for &x in right.iter() {
        if x < first {
            second = first;
            first = x;
        } else if x < second {
            second = x;
        }
    }
    match right.len() {
        0 => [kth, kth, kth],
        1 => [kth, first, first],
        _ => [kth, first, second],
    }
}

/// The band of a set of equal-length curves, step by step, as the rule draws it around a
/// curve but over all curves (for plots): `[q10 − w − t, q90 + w + t]`, `w = q90 − q10`,
/// on the group's [`Scale`], in loss units. `None` with fewer than [`super::MIN_CURVES`]
/// curves or unequal lengths.
pub fn display_band(curves: &[&[f64]]) -> Option<(Vec<f64>, Vec<f64>)> {
    let len = curves.first()?.len();
    if curves.len() < super::MIN_CURVES || curves.iter().any(|c| c.len() != len) {
        return None;
    }
    let n = curves.len();
    let owned: Vec<Vec<f64>> = curves.iter().map(|c| c.to_vec()).collect();
    let scale = Scale::of(&owned, len);
    let h = |p: f64| p * (n - 1) as f64;
    let (mut lo, mut hi) = (Vec::with_capacity(len), Vec::with_capacity(len));
    let mut column = Vec::with_capacity(n);
    for step in 0..len {
        column.clear();
        column.extend(curves.iter().map(|c| scale.x(c[step])));
        column.sort_unstable_by(f64::total_cmp);
        let q = |p: f64| {
            let k = h(p).floor() as usize;
            let next = (k + 1).min(n - 1);
            column[k] + (h(p) - k as f64) * (column[next] - column[k])
        };
        let (q10, q90) = (q(0.1), q(0.9));
        let w = (q90 - q10) + 1e-6 * q10.abs().max(q90.abs()) + scale.t;
        lo.push(scale.loss(q10 - w));
        hi.push(scale.loss(q90 + w));
    }
    Some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn counts(curves: &[Vec<f64>]) -> Vec<usize> {
        let curves: Vec<Curve> = curves.iter().map(|c| Curve::from(c.clone())).collect();
        let refs: Vec<&Curve> = curves.iter().collect();
        outside_counts(&refs, curves[0].len(), &mut Vec::new())
    }

    /// The median found by selection is the sorted definition's, for odd and even
    /// counts, ties and negative values.
    #[test]
    fn the_median_by_selection_is_the_sorted_median() {
        let sorted_median = |v: &[f64]| {
            let mut s = v.to_vec();
            s.sort_unstable_by(f64::total_cmp);
            (s[(s.len() - 1) / 2] + s[s.len() / 2]) / 2.0
        };
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for n in 1..60 {
            let values: Vec<f64> = (0..n)
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1);
                    ((state >> 33) % 7) as f64 - 3.0 + ((state >> 40) % 2) as f64 * 0.5
                })
                .collect();
            assert_eq!(
                median(&mut values.clone()),
                sorted_median(&values),
                "{values:?}"
            );
        }
        assert_eq!(median(&mut []), 0.0);
    }

    #[test]
    fn band_by_hand() {
        // Positive: compared on logs. Levels (the last half: step 1) 0, 0, 0, 0, ln 1.2:
        // spread 0. Moves |x1 − x0|: 0, 0.0488, 0.0953, 0.1054, 1.4271: median 0.0953,
        // noise 1.4826 × 0.0953 ÷ √2 = 0.0999, 4 × that 0.40 < ln 2: t = ln 2 = 0.6931.
        // Step 0: curve 4 (ln 5 = 1.609) against the others' logs [-0.1054, 0, 0.0488,
        // 0.0953]: q10 = -0.0738, q90 = 0.0814, w = 0.1552 + t = 0.8483, band
        // [-0.922, 0.930]: outside. Step 1: ln 1.2 = 0.182 against four 0: band ±t:
        // inside (a factor of 1.2 is no divergence); curve 0 inside everywhere.
        let curves = [
            vec![1.0, 1.0],
            vec![1.1, 1.0],
            vec![0.9, 1.0],
            vec![1.05, 1.0],
            vec![5.0, 1.2],
        ];
        assert_eq!(counts(&curves), [0, 0, 0, 0, 1]);
        let values: Vec<Vec<f64>> = curves.to_vec();
        let scale = Scale::of(&values, 2);
        assert!(scale.log);
        assert!(
            (scale.t - std::f64::consts::LN_2).abs() < 1e-12,
            "{scale:?}"
        );
    }

    #[test]
    fn scale_on_losses_that_are_not_all_positive() {
        // A GAN's losses, one negative: compared as they are. Levels (step 1): -1, -1,
        // -1, -1, -5: spread 0. Moves: 1, 1, 1, 1, 1 (each curve from 0 to -1, the
        // last from -4 to -5): noise 1.4826 ÷ √2 = 1.0483, 4 × that = 4.19; the floor,
        // half the median |loss| (0, 0, 0, 0, 4, 1, 1, 1, 1, 5: median 1), 0.5: t = 4.19.
        let curves = vec![
            vec![0.0, -1.0],
            vec![0.0, -1.0],
            vec![0.0, -1.0],
            vec![0.0, -1.0],
            vec![-4.0, -5.0],
        ];
        let scale = Scale::of(&curves, 2);
        assert!(!scale.log);
        let expected = 4.0 * 1.4826 / std::f64::consts::SQRT_2;
        assert!((scale.t - expected).abs() < 1e-12, "{scale:?}");
        // -4 against four 0 (band ±4.19): inside; -5 against four -1 (band -1 ± 4.19):
        // inside.
        assert_eq!(counts(&curves), [0, 0, 0, 0, 0]);
    }

    /// Healthy runs of different seeds, each at a level of its own with little noise
    /// (levels 1.00 … 1.12, the last run the farthest), are not divergent; a run at three
    /// times the others is, at every step.
    #[test]
    fn seed_levels_are_healthy_and_three_times_is_not() {
        let run =
            |level: f64| -> Vec<f64> { (0..20).map(|s| level * (2.0 - 0.05 * s as f64)).collect() };
        let healthy: Vec<Vec<f64>> = [1.0, 1.01, 1.02, 1.12].iter().map(|&l| run(l)).collect();
        assert_eq!(counts(&healthy), [0; 4]);
        let mut broken = healthy.clone();
        broken.push(run(3.0));
        assert_eq!(counts(&broken), [0, 0, 0, 0, 20]);
    }

    /// The band straight from its definition: remove the curve, sort the others, interpolate.
    fn naive_counts(curves: &[Vec<f64>]) -> Vec<usize> {
        let len = curves[0].len();
        let scale = Scale::of(curves, len);
        (0..curves.len())
            .map(|c| {
                (0..len)
                    .filter(|&step| {
                        let mut others: Vec<f64> = curves
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| *i != c)
                            .map(|(_, curve)| scale.x(curve[step]))
                            .collect();
                        others.sort_by(f64::total_cmp);
                        let q = |p: f64| {
                            let h = p * (others.len() - 1) as f64;
                            let lo = h.floor() as usize;
                            let hi = (lo + 1).min(others.len() - 1);
                            others[lo] + (h - lo as f64) * (others[hi] - others[lo])
                        };
                        let (q10, q90) = (q(0.1), q(0.9));
                        let w = (q90 - q10) + 1e-6 * q10.abs().max(q90.abs()) + scale.t;
                        let v = scale.x(curves[c][step]);
                        v < q10 - w || v > q90 + w
                    })
                    .count()
            })
            .collect()
    }

    /// Curves of `steps` values from a few repeated ones (ties everywhere).
    fn tied_curves(
        curves: std::ops::Range<usize>,
        steps: usize,
    ) -> impl Strategy<Value = Vec<Vec<f64>>> {
        let values = proptest::sample::select(vec![0.0, 0.5, 1.0, 1.5, 2.0, 10.0, -3.0]);
        proptest::collection::vec(proptest::collection::vec(values, steps), curves)
    }

    /// `[F[k], F[k + 1], F[k + 2]]` from the sorted column, past the end the last value.
    fn sorted_window(column: &[f64], k: usize) -> [f64; 3] {
        let mut sorted = column.to_vec();
        sorted.sort_by(f64::total_cmp);
        let at = |i: usize| sorted[i.min(sorted.len() - 1)];
        [at(k), at(k + 1), at(k + 2)]
    }

    proptest! {
        #[test]
        fn counts_equal_the_definition(curves in tied_curves(4..30, 3)) {
            prop_assert_eq!(counts(&curves), naive_counts(&curves));
        }

        #[test]
        fn counts_equal_the_definition_on_many_curves(
            // Many tiles of eight curves, the last one partial.
            curves in tied_curves(30..90, 2),
        ) {
            prop_assert_eq!(counts(&curves), naive_counts(&curves));
        }

        #[test]
        fn windows_equal_the_sorted_column(
            column in prop_oneof![
                proptest::collection::vec(proptest::sample::select(vec![-1.0, 0.0, 0.5, 2.0]), 1..40),
                proptest::collection::vec(-1e3..1e3f64, 1..40),
            ],
            at in 0.0..=1.0f64,
        ) {
            let k = ((at * column.len() as f64) as usize).min(column.len() - 1);
            let mut work = column.clone();
            prop_assert_eq!(window(&mut work, k), sorted_window(&column, k));
        }
    }

    #[test]
    fn the_step_major_copy_is_reused_from_group_to_group() {
        // A larger group, then a smaller one, then a larger one again in the same buffer:
        // each as with a buffer of its own.
        let group = |curves: usize, steps: usize, k: f64| -> Vec<Vec<f64>> {
            (0..curves)
                .map(|c| {
                    (0..steps)
                        .map(|s| k * ((c * 7 + s * 3) % 11) as f64)
                        .collect()
                })
                .collect()
        };
        let (large, small) = (group(20, 12, 1.0), group(9, 5, 3.0));
        let mut by_step = Vec::new();
        for curves in [&large, &small, &large] {
            let curves: Vec<Curve> = curves.iter().map(|c| Curve::from(c.clone())).collect();
            let refs: Vec<&Curve> = curves.iter().collect();
            let len = refs[0].len();
            assert_eq!(
                outside_counts(&refs, len, &mut by_step),
                outside_counts(&refs, len, &mut Vec::new())
            );
        }
    }

    #[test]
    fn windows_at_the_ends() {
        let column: Vec<f64> = (0..20).map(|i| ((i * 7) % 20) as f64).collect();
        for k in [0, 17, 18, 19] {
            let mut work = column.clone();
            assert_eq!(window(&mut work, k), sorted_window(&column, k), "rank {k}");
        }
        assert_eq!(window(&mut column.clone(), 19), [19.0; 3]);
        assert_eq!(window(&mut column.clone(), 18), [18.0, 19.0, 19.0]);
    }
}
