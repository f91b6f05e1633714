//! Tiers of indistinguishable submissions, and the attribution of a gap to the benches.

use super::{Attribution, AttributionTerm, VendorRow};
use crate::bootstrap::percentile_interval;
use std::collections::BTreeMap;

/// A row compared with the next row down, on paired resamples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// overall ÷ the next row's overall.
    pub ratio: f64,
    /// Its percentile interval over the paired resamples (both rows of resample k are
    /// divided by the baseline's resample k, so the baseline's noise cancels).
    pub ci: [f64; 2],
    /// The share of resamples in which this row's overall is above the next row's.
    pub p_above: f64,
}

/// Tiers of rows from paired comparisons of adjacent rows (`None`: no figure, no tier).
/// Each row is its ln overall and its ln overall in every resample, resample k of every
/// row sharing the baseline's resample k.
///
/// The rule: rows are taken by overall figure descending (ties: in the order given); the
/// first opens tier 1; for each adjacent pair, A above B, the ratio overall_A ÷ overall_B
/// gets its percentile interval at `level` over the paired resamples; B opens a new tier
/// exactly when that interval excludes 1, else B joins A's tier. Returns each row's tier,
/// 1-based, and each row's link to the next row down (`None` for the last row and rows
/// without a figure).
pub fn assign_tiers_paired(
    rows: &[Option<(f64, &[f64])>],
    level: f64,
) -> (Vec<Option<usize>>, Vec<Option<Link>>) {
    let mut order: Vec<(usize, f64, &[f64])> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.map(|(overall, res)| (i, overall, res)))
        .collect();
    // Stable: equal figures keep the order given.
    order.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut tiers = vec![None; rows.len()];
    let mut links = vec![None; rows.len()];
    let mut tier = 1;
    for (k, &(i, overall, res)) in order.iter().enumerate() {
        tiers[i] = Some(tier);
        let Some(&(_, next, next_res)) = order.get(k + 1) else {
            break;
        };
        let link = link(overall - next, res, next_res, level);
        if link.ci[0] > 1.0 || link.ci[1] < 1.0 {
            tier += 1;
        }
        links[i] = Some(link);
    }
    (tiers, links)
}

/// The paired comparison of a row (resamples `a`) with the next (`b`), `gap` the
/// difference of their ln overall figures.
fn link(gap: f64, a: &[f64], b: &[f64], level: f64) -> Link {
    let mut paired: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let above = paired.iter().filter(|d| **d > 0.0).count();
    let p_above = if paired.is_empty() {
        f64::NAN
    } else {
        above as f64 / paired.len() as f64
    };
    let ci = percentile_interval(&mut paired, level).unwrap_or([gap, gap]);
    Link {
        ratio: gap.exp(),
        ci: ci.map(f64::exp),
        p_above,
    }
}

/// Tiers of rows from their overall figure and interval (`None`: no figure, no tier):
/// the rule of `--interval anytime`, whose sequences have no paired resamples.
///
/// The rule (chain, or single linkage): rows are taken by overall figure descending
/// (ties: in the order given); the first opens tier 1; each next row joins the current
/// tier when its interval overlaps the interval of **any** row already in it (closed
/// intervals: touching counts), else it opens the next tier. So two rows in different
/// tiers never have overlapping intervals, while two rows of one tier may not overlap
/// each other when a row between them overlaps both: a tier boundary is only drawn
/// where the intervals separate. Returns each row's tier, 1-based.
pub fn assign_tiers(rows: &[Option<(f64, [f64; 2])>]) -> Vec<Option<usize>> {
    let mut order: Vec<(usize, f64, [f64; 2])> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.map(|(overall, ci)| (i, overall, ci)))
        .collect();
    // Stable: equal figures keep the order given.
    order.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut tiers = vec![None; rows.len()];
    let mut tier = 0;
    let mut members: Vec<[f64; 2]> = Vec::new();
    for (i, _, ci) in order {
        let overlaps = |m: &[f64; 2]| ci[0] <= m[1] && m[0] <= ci[1];
        if tier == 0 || !members.iter().any(overlaps) {
            tier += 1;
            members.clear();
        }
        members.push(ci);
        tiers[i] = Some(tier);
    }
    tiers
}

/// What the attribution needs of one row.
pub(super) struct Fit<'a> {
    /// Row id.
    pub id: &'a str,
    /// ln ratio of each normalized bench present.
    pub log_ratios: &'a BTreeMap<String, f64>,
    /// Weight of the normalized benches present.
    pub weight_present: f64,
    /// ln overall.
    pub log_overall: f64,
    /// ln overall in every resample.
    pub resamples: &'a [f64],
}

/// The gap ln(overall_A) − ln(overall_B), split exactly into one term per normalized
/// bench and the missing-weight penalty:
///
/// ln overall_X = Σ_{b present in X} w_b·ln r_X,b ÷ W_X + ln(W_X ÷ W), so
/// term_b = w_b·ln r_A,b ÷ W_A − w_b·ln r_B,b ÷ W_B (a side missing b contributes 0)
/// and penalty = ln(W_A ÷ W_B). When both have every bench, W_A = W_B = W and
/// term_b = w_b·(ln r_A,b − ln r_B,b) ÷ W.
pub(super) fn attribute(a: &Fit, b: &Fit, weights: &[(String, f64)], level: f64) -> Attribution {
    let mut terms: Vec<AttributionTerm> = weights
        .iter()
        .map(|(bench, w)| {
            let la = a.log_ratios.get(bench).copied();
            let lb = b.log_ratios.get(bench).copied();
            let side = |l: Option<f64>, total: f64| l.map_or(0.0, |l| w * l / total);
            AttributionTerm {
                bench: bench.clone(),
                weight: *w,
                log_ratio_a: la,
                log_ratio_b: lb,
                term: side(la, a.weight_present) - side(lb, b.weight_present),
            }
        })
        .collect();
    terms.sort_by(|x, y| {
        y.term
            .abs()
            .total_cmp(&x.term.abs())
            .then_with(|| x.bench.cmp(&y.bench))
    });
    let gap = a.log_overall - b.log_overall;
    // Row k of both comes from the same baseline resample k, so the difference is a
    // paired bootstrap of the gap.
    let mut paired: Vec<f64> = a
        .resamples
        .iter()
        .zip(b.resamples)
        .map(|(x, y)| x - y)
        .collect();
    let ci = percentile_interval(&mut paired, level).unwrap_or([gap, gap]);
    Attribution {
        a: a.id.to_owned(),
        b: b.id.to_owned(),
        overall_a: a.log_overall.exp(),
        overall_b: b.log_overall.exp(),
        ratio: gap.exp(),
        ratio_ci: ci.map(f64::exp),
        gap,
        terms,
        penalty: (a.weight_present / b.weight_present).ln(),
    }
}

/// Sorts the rows best first (rows without a figure last; ties by name, then track) and
/// gives the row ids by tier.
pub(super) fn rank(rows: &mut [VendorRow]) -> Vec<Vec<String>> {
    rows.sort_by(|x, y| {
        let key = |r: &VendorRow| r.overall.map_or(f64::NEG_INFINITY, |o| o);
        let none_last = x.overall.is_none().cmp(&y.overall.is_none());
        none_last
            .then_with(|| key(y).total_cmp(&key(x)))
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.track.cmp(&y.track))
    });
    let mut tiers: Vec<Vec<String>> = Vec::new();
    for row in rows.iter() {
        if let Some(t) = row.tier {
            if tiers.len() < t {
                tiers.resize(t, Vec::new());
            }
            tiers[t - 1].push(row.id.clone());
        }
    }
    tiers
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ln of a row's overall in four resamples: a shared baseline noise `base` plus
    /// the row's own small noise.
    fn resamples(level: f64, base: &[f64; 4], own: &[f64; 4]) -> Vec<f64> {
        base.iter().zip(own).map(|(b, o)| level - b + o).collect()
    }

    #[test]
    fn paired_tiers_split_what_overlap_joins() {
        // The baseline's resampled ln mean swings by ±0.2, shared by both rows; their
        // own noise is ±0.01. Individually each row's interval spans ~0.4 in ln and the
        // two overlap; the paired difference is 0.1 ± 0.02, never near 0.
        let base = [-0.2, -0.1, 0.1, 0.2];
        let a = resamples(0.3, &base, &[0.01, -0.01, 0.0, 0.0]);
        let b = resamples(0.2, &base, &[-0.01, 0.01, 0.0, 0.0]);
        let ci = |r: &[f64]| {
            let mut v = r.to_vec();
            percentile_interval(&mut v, 0.95).unwrap().map(f64::exp)
        };
        let overlap = [Some((0.3f64.exp(), ci(&a))), Some((0.2f64.exp(), ci(&b)))];
        assert_eq!(assign_tiers(&overlap), [Some(1), Some(1)]);
        let (tiers, links) = assign_tiers_paired(&[Some((0.3, &a)), Some((0.2, &b))], 0.95);
        assert_eq!(tiers, [Some(1), Some(2)]);
        let link = links[0].unwrap();
        // Paired differences: 0.12, 0.08, 0.10, 0.10 → sorted 0.08, 0.10, 0.10, 0.12;
        // the 2.5 % quantile at position 0.075 → 0.08 + 0.075·0.02 = 0.0815; the
        // 97.5 % at 2.925 → 0.10 + 0.925·0.02 = 0.1185.
        assert!((link.ratio - 0.1f64.exp()).abs() < 1e-12);
        assert!((link.ci[0] - 0.0815f64.exp()).abs() < 1e-9, "{link:?}");
        assert!((link.ci[1] - 0.1185f64.exp()).abs() < 1e-9, "{link:?}");
        assert_eq!(link.p_above, 1.0);
        assert_eq!(links[1], None);
    }

    #[test]
    fn paired_tiers_join_what_overlap_splits() {
        // Five resamples at level 0.5 (the quartiles, positions 1 and 3 exactly). A's
        // ln overall 0.3, sorted resamples [0, 0.28, 0.30, 0.32, 0.6] → [0.28, 0.32];
        // B's 0.2, sorted [−0.1, 0.18, 0.20, 0.22, 0.5] → [0.18, 0.22]: apart. But B's
        // high resamples fall where A's are low: paired differences −0.18, −0.22, 0.10,
        // 0.10, 0.70, sorted [−0.22, −0.18, 0.10, 0.10, 0.70] → [−0.18, 0.10]: holds 0.
        let a = [0.0, 0.28, 0.30, 0.32, 0.6];
        let b = [0.18, 0.5, 0.20, 0.22, -0.1];
        let ci = |r: &[f64]| {
            let mut v = r.to_vec();
            percentile_interval(&mut v, 0.5).unwrap().map(f64::exp)
        };
        let overlap = [Some((0.3f64.exp(), ci(&a))), Some((0.2f64.exp(), ci(&b)))];
        assert_eq!(assign_tiers(&overlap), [Some(1), Some(2)]);
        let (tiers, links) = assign_tiers_paired(&[Some((0.3, &a)), Some((0.2, &b))], 0.5);
        assert_eq!(tiers, [Some(1), Some(1)]);
        let link = links[0].unwrap();
        assert_eq!(link.p_above, 0.6);
        assert!((link.ci[0] - (-0.18f64).exp()).abs() < 1e-12, "{link:?}");
        assert!((link.ci[1] - 0.10f64.exp()).abs() < 1e-12, "{link:?}");
    }

    #[test]
    fn paired_tiers_skip_rows_without_figure() {
        let (a, b) = ([1.0, 1.0], [0.0, 0.0]);
        let rows = [Some((0.0, &b[..])), None, Some((1.0, &a[..]))];
        let (tiers, links) = assign_tiers_paired(&rows, 0.95);
        assert_eq!(tiers, [Some(2), None, Some(1)]);
        assert_eq!(links[2].map(|l| l.p_above), Some(1.0));
        assert_eq!(links[0], None);
    }

    #[test]
    fn tiers_chain_through_overlaps() {
        // By overall: a 1.30 [1.25,1.35], b 1.20 [1.14,1.26] overlaps a → tier 1;
        // c 1.10 [1.05,1.15] overlaps b only → tier 1 (chain); d 0.90 [0.85,0.95]
        // overlaps none of a, b, c → tier 2; e has no figure.
        let rows = [
            Some((1.10, [1.05, 1.15])),
            Some((1.30, [1.25, 1.35])),
            None,
            Some((0.90, [0.85, 0.95])),
            Some((1.20, [1.14, 1.26])),
        ];
        assert_eq!(
            assign_tiers(&rows),
            [Some(1), Some(1), None, Some(2), Some(1)]
        );
    }
}
