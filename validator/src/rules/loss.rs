//! Loss curves across runs and GPUs: a curve far outside the others (`loss.divergent`),
//! and copies (`loss.duplicated`).
//!
//! Divergence, per bench configuration: take the finite curves of the usable entries that
//! have the most common length (at least [`MIN_STEPS`] steps; the ring buffer keeps the
//! last 100). With at least [`MIN_CURVES`] curves, each curve is compared with the
//! *others* (leave one out) step by step: at step i the band is
//! `[q10 − w, q90 + w]` with `q10`, `q90` the linear-interpolated 10% and 90% quantiles
//! of the other curves' values at step i and `w = q90 − q10` (plus a relative 1e-6 for
//! flat curves). A curve with more than half of its steps outside its band is divergent.

use crate::facts::EntryFacts;
use crate::finding::Finding;
use std::collections::{BTreeMap, HashMap};

/// Fewest curves (the one tested and at least three others) for a band.
pub const MIN_CURVES: usize = 4;
/// Fewest steps for a curve to be compared.
pub const MIN_STEPS: usize = 10;
/// Share of steps outside the band that makes a curve divergent.
pub const OUTSIDE_SHARE: f64 = 0.5;

/// `loss.divergent` over every bench configuration.
pub fn divergent(entries: &[EntryFacts], files: &[String], out: &mut Vec<Finding>) {
    let mut groups: BTreeMap<(&str, u64), Vec<&EntryFacts>> = BTreeMap::new();
    for e in entries {
        if let (Some(name), None) = (&e.name, e.failure)
            && e.losses.len() >= MIN_STEPS
        {
            groups.entry((name, e.config)).or_default().push(e);
        }
    }
    for ((name, _), group) in groups {
        let mut lengths: HashMap<usize, usize> = HashMap::new();
        for e in &group {
            *lengths.entry(e.losses.len()).or_default() += 1;
        }
        let Some((&len, _)) = lengths.iter().max_by_key(|(len, n)| (**n, **len)) else {
            continue;
        };
        let curves: Vec<&EntryFacts> = group
            .into_iter()
            .filter(|e| e.losses.len() == len)
            .collect();
        if curves.len() < MIN_CURVES {
            continue;
        }
        for (c, outside) in outside_counts(&curves, len).into_iter().enumerate() {
            if outside as f64 > OUTSIDE_SHARE * len as f64 {
                let e = curves[c];
                out.push(
                    Finding::new(
                        "loss.divergent",
                        format!(
                            "`{name}`'s loss within the band of its {} other runs and GPUs at most steps",
                            curves.len() - 1
                        ),
                        format!("{outside} of {len} steps outside"),
                    )
                    .file(files[e.file].clone())
                    .entry(e.entry)
                    .field("batch_loss"),
                );
            }
        }
    }
}

/// For each curve, the number of steps where it lies outside the band of the others.
pub fn outside_counts(curves: &[&EntryFacts], len: usize) -> Vec<usize> {
    let n = curves.len();
    let mut counts = vec![0; n];
    let mut column: Vec<(f64, usize)> = Vec::with_capacity(n);
    let mut rank = vec![0; n];
    for step in 0..len {
        column.clear();
        column.extend(curves.iter().enumerate().map(|(c, e)| (e.losses[step], c)));
        column.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (r, &(_, c)) in column.iter().enumerate() {
            rank[c] = r;
        }
        for c in 0..n {
            // The others, sorted: the column without position rank[c].
            let skip = rank[c];
            let other = |k: usize| column[if k < skip { k } else { k + 1 }].0;
            let q = |p: f64| {
                let h = p * (n - 2) as f64;
                let lo = h.floor() as usize;
                let hi = (lo + 1).min(n - 2);
                other(lo) + (h - lo as f64) * (other(hi) - other(lo))
            };
            let (q10, q90) = (q(0.1), q(0.9));
            let w = (q90 - q10) + 1e-6 * q10.abs().max(q90.abs());
            let v = column[skip].0;
            if v < q10 - w || v > q90 + w {
                counts[c] += 1;
            }
        }
    }
    counts
}

/// `loss.duplicated`: bit-identical loss curves (with at least two distinct values, so a
/// constant reward curve is not a copy) or bit-identical `train` timings within a bench.
pub fn duplicated(entries: &[EntryFacts], files: &[String], out: &mut Vec<Finding>) {
    let mut curves: HashMap<(&str, Vec<u64>), &EntryFacts> = HashMap::new();
    let mut timings: HashMap<(&str, [u64; 4]), &EntryFacts> = HashMap::new();
    let mut ordered: Vec<&EntryFacts> = entries.iter().collect();
    ordered.sort_by_key(|e| (e.file, e.entry));
    for e in ordered {
        let Some(name) = e.name.as_deref() else {
            continue;
        };
        let distinct = e
            .losses
            .iter()
            .any(|&v| v.to_bits() != e.losses[0].to_bits());
        if e.losses.len() >= 2 && distinct {
            let key = (name, e.losses.iter().map(|v| v.to_bits()).collect());
            if let Some(first) = curves.get(&key) {
                out.push(copy(e, first, files, "batch_loss", "loss curve"));
            } else {
                curves.insert(key, e);
            }
        }
        if let Some(t) = e.timing {
            if let Some(first) = timings.get(&(name, t)) {
                out.push(copy(e, first, files, "train", "timings"));
            } else {
                timings.insert((name, t), e);
            }
        }
    }
}

fn copy(e: &EntryFacts, first: &EntryFacts, files: &[String], field: &str, what: &str) -> Finding {
    Finding::new(
        "loss.duplicated",
        format!("a {what} of its own"),
        format!(
            "bit-identical to {} entry {}",
            files[first.file], first.entry
        ),
    )
    .file(files[e.file].clone())
    .entry(e.entry)
    .field(field)
}
