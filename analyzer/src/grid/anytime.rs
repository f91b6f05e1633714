//! `grid --interval anytime`: every cell's and row's interval from the anytime-valid
//! sequences of the runs (docs/scoring.md, "How many runs"), and the tiers decided on
//! them. Valid however many runs each vendor chose to make, which a bootstrap interval
//! is not when runs were added until the figures looked settled.
//!
//! Each submission's bench is its runs' values (the mean over a run's GPUs); its
//! sequence bounds the log of their geometric mean. A cell's ratio to the baseline is
//! bounded by the difference of two sequences, each at α/2 (a union bound), so the pair
//! holds at 1 − α. A row's overall figure, `Σ w_b · ln r_b ÷ W_row + ln(W_row ÷ W)`, is
//! bounded by the same sums over the bounds of its k normalized benches, each side's
//! sequences at α/(2k). The baseline's own ratios are 1 by definition: its intervals are
//! its own sequences around their means. The constants are the report's default design
//! (±1 %, expected CV 2 %) at those levels, fixed before any data. The intervals are
//! around the ratio of geometric means of runs, the points stay the grid's (means of
//! samples): the two differ by about the runs' variance.

use super::{Grid, GridInput, row_id};
use crate::anytime::{Design, LogSummary};
use crate::precision::run_values;
use mlbench_schema::words::count;
use std::collections::BTreeMap;

/// Each bench's sequence, as log bounds around the log geometric mean: `None` while
/// unbounded (too few runs).
type Bounds = BTreeMap<String, Option<(f64, f64)>>;

/// The log bounds of every bench of `input` at `level`.
fn bounds(input: &GridInput, level: f64) -> Bounds {
    let design = Design::plan(level, 0.01, 0.02);
    run_values(&input.set)
        .into_iter()
        .map(|(bench, runs)| {
            let b = design.and_then(|d| {
                let s = LogSummary::of(&runs)?;
                let h = s.anytime_half_width(&d)?;
                Some((s.mean - h, s.mean + h))
            });
            (bench, b)
        })
        .collect()
}

/// Replaces every interval of `grid` by the anytime-valid one and the tiers by those
/// they decide. `inputs` are the grid's, `level` its confidence level.
pub(super) fn apply(grid: &mut Grid, inputs: &[GridInput], (level, untiered): (f64, &[String])) {
    let alpha = 1.0 - level;
    let by_id: BTreeMap<String, &GridInput> = inputs
        .iter()
        .map(|i| (row_id(&i.label, i.track), i))
        .collect();
    let Some(base) = by_id.get(&grid.baseline) else {
        return;
    };
    let total_weight: f64 = grid
        .weights
        .iter()
        .filter(|(b, _)| !grid.unnormalized.contains(b))
        .map(|(_, w)| w)
        .sum();
    let base_cells = bounds(base, 1.0 - alpha / 2.0);
    let mut notes = Vec::new();
    for row in &mut grid.vendors {
        // The paired comparison with the next row is the bootstrap's: the sequences
        // have no paired resamples, so the anytime grid carries none.
        row.ratio_to_next = None;
        row.ratio_to_next_ci = None;
        row.p_above_next = None;
        let Some(input) = by_id.get(&row.id) else {
            continue;
        };
        let is_base = row.id == grid.baseline;
        let own_cells = bounds(input, 1.0 - alpha / 2.0);
        for (bench, cell) in &mut row.cells {
            if cell.ratio.is_some() {
                cell.ci = ratio_bounds(own_cells.get(bench), base_cells.get(bench), is_base)
                    .map(|(lo, hi)| [lo.exp(), hi.exp()]);
            }
        }
        let present: Vec<(&String, f64)> = row
            .cells
            .iter()
            .filter(|(_, c)| c.ratio.is_some() && !c.unnormalized)
            .filter_map(|(b, _)| Some((b, *grid.weights.get(b)?)))
            .collect();
        if row.overall.is_none() || present.is_empty() {
            row.ci = None;
            continue;
        }
        let k = present.len() as f64;
        let per_side = 1.0 - alpha / (2.0 * k);
        let (own, base_k) = (bounds(input, per_side), bounds(base, per_side));
        let w_row: f64 = present.iter().map(|(_, w)| w).sum();
        let mut sum = Some((0.0, 0.0));
        let mut unbounded = Vec::new();
        for (bench, w) in &present {
            let b = ratio_bounds(own.get(*bench), base_k.get(*bench), is_base);
            if b.is_none() {
                unbounded.push(*bench);
            }
            sum = sum
                .zip(b)
                .map(|((lo, hi), (l, h))| (lo + w * l, hi + w * h));
        }
        let penalty = (w_row / total_weight).ln();
        row.ci = sum.map(|(lo, hi)| [(lo / w_row + penalty).exp(), (hi / w_row + penalty).exp()]);
        if row.ci.is_none() {
            notes.push(unbounded_note(
                &row.id, &unbounded, input, base, is_base, level,
            ));
        }
    }
    grid.notes.append(&mut notes);
    // A row whose interval is unbounded yet (`ci` null) overlaps every other.
    let unbounded = [0.0, f64::INFINITY];
    let tiers = super::assign_tiers(
        &grid
            .vendors
            .iter()
            .map(|r| (r.overall).filter(|_| !untiered.contains(&r.id)))
            .zip(&grid.vendors)
            .map(|(overall, r)| overall.map(|o| (o, r.ci.unwrap_or(unbounded))))
            .collect::<Vec<_>>(),
    );
    for (row, tier) in grid.vendors.iter_mut().zip(tiers) {
        row.tier = tier;
    }
    grid.tiers = super::tiers::rank(&mut grid.vendors);
}

/// Why a row's anytime interval is unbounded: the benches whose runs (its own, or the
/// baseline's) are too few for the sequence at `level`.
fn unbounded_note(
    id: &str,
    benches: &[&String],
    input: &GridInput,
    base: &GridInput,
    is_base: bool,
    level: f64,
) -> String {
    let (own, theirs) = (run_values(&input.set), run_values(&base.set));
    let runs = |m: &BTreeMap<String, Vec<f64>>, b: &str| m.get(b).map_or(0, Vec::len);
    // Benches grouped by what is short: `5 runs (19 benches)`, `1 run (convnet)`.
    let mut groups: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for b in benches {
        let (n, nb) = (runs(&own, b), runs(&theirs, b));
        let what = if is_base || n <= nb {
            count(n, "run", "runs")
        } else {
            format!("{} of the baseline", count(nb, "run", "runs"))
        };
        groups.entry(what).or_default().push(b.as_str());
    }
    let short: Vec<String> = groups
        .into_iter()
        .map(|(what, list)| match list.len() {
            1..=3 => format!("{what} ({})", list.join(", ")),
            n => format!("{what} ({n} benches)"),
        })
        .collect();
    format!(
        "{id}: anytime interval unbounded: {}, too few for the sequence at {}%",
        short.join(", "),
        (level * 1000.0).round() / 10.0
    )
}

/// The log bounds of a row's ratio to the baseline on one bench: own − baseline's, or,
/// for the baseline itself, its own bounds around its mean. `None`: either unbounded.
fn ratio_bounds(
    own: Option<&Option<(f64, f64)>>,
    base: Option<&Option<(f64, f64)>>,
    is_base: bool,
) -> Option<(f64, f64)> {
    let (lo, hi) = (*own?)?;
    if is_base {
        let mid = (lo + hi) / 2.0;
        return Some((lo - mid, hi - mid));
    }
    let (blo, bhi) = (*base?)?;
    Some((lo - bhi, hi - blo))
}
