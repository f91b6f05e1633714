//! Tiers of indistinguishable submissions, and the attribution of a gap to the benches.

use super::{Attribution, AttributionTerm, VendorRow};
use crate::bootstrap::percentile_interval;
use std::collections::BTreeMap;

/// Tiers of rows from their overall figure and interval (`None`: no figure, no tier).
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
