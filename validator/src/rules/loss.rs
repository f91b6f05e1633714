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

use crate::facts::{EntryFacts, file_facts};
use crate::finding::Finding;
use crate::intake::SubmittedFile;
use crate::layout::{Role, classify};
use crate::rules::EntryMap;
use mlbench_schema::reader::FileName;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};

/// Fewest curves (the one tested and at least three others) for a band.
pub const MIN_CURVES: usize = 4;
/// Fewest steps for a curve to be compared.
pub const MIN_STEPS: usize = 10;
/// Share of steps outside the band that makes a curve divergent.
pub const OUTSIDE_SHARE: f64 = 0.5;

/// The curves of one bench configuration that `loss.divergent` compares: the finite
/// curves of the usable entries with at least [`MIN_STEPS`] steps, those of the most
/// common length. The rule compares them when there are at least [`MIN_CURVES`]; plots
/// draw them with [`CurveGroup::band`].
#[derive(Debug, Clone)]
pub struct CurveGroup<'a> {
    /// The bench.
    pub bench: &'a str,
    /// The configuration (a hash of the entries' arguments, [`EntryFacts::config`]).
    pub config: u64,
    /// The curves' length (steps).
    pub len: usize,
    /// The curves, in the order of the entries given.
    pub curves: Vec<&'a EntryFacts>,
}

impl CurveGroup<'_> {
    /// Whether the rule compares these curves (at least [`MIN_CURVES`] of them).
    pub fn compared(&self) -> bool {
        self.curves.len() >= MIN_CURVES
    }

    /// The band over all the group's curves, step by step ([`display_band`]): `None` when
    /// the rule does not compare them.
    pub fn band(&self) -> Option<(Vec<f64>, Vec<f64>)> {
        let curves: Vec<&[f64]> = self.curves.iter().map(|e| e.losses.as_slice()).collect();
        display_band(&curves)
    }
}

/// The curves of `entries` grouped as `loss.divergent` groups them: by bench and
/// configuration, sorted by both, each group kept to its most common length.
pub fn curve_groups(entries: &[EntryFacts]) -> Vec<CurveGroup<'_>> {
    let mut groups: BTreeMap<(&str, u64), Vec<&EntryFacts>> = BTreeMap::new();
    for e in entries {
        if let (Some(name), None) = (&e.name, e.failure)
            && e.losses.len() >= MIN_STEPS
        {
            groups.entry((name, e.config)).or_default().push(e);
        }
    }
    groups
        .into_iter()
        .filter_map(|((bench, config), group)| {
            let mut lengths: HashMap<usize, usize> = HashMap::new();
            for e in &group {
                *lengths.entry(e.losses.len()).or_default() += 1;
            }
            let (&len, _) = lengths.iter().max_by_key(|(len, n)| (**n, **len))?;
            let curves = group
                .into_iter()
                .filter(|e| e.losses.len() == len)
                .collect();
            Some(CurveGroup {
                bench,
                config,
                len,
                curves,
            })
        })
        .collect()
}

/// `loss.divergent` over every bench configuration ([`curve_groups`]; groups in parallel).
pub fn divergent(entries: &[EntryFacts], files: &[String], out: &mut Vec<Finding>) {
    let groups: Vec<CurveGroup> = curve_groups(entries)
        .into_iter()
        .filter(CurveGroup::compared)
        .collect();
    let found: Vec<Vec<Finding>> = groups
        .into_par_iter()
        .map(|group| divergent_in(group, files))
        .collect();
    out.extend(found.into_iter().flatten());
}

fn divergent_in(group: CurveGroup, files: &[String]) -> Vec<Finding> {
    let CurveGroup {
        bench: name,
        len,
        curves,
        ..
    } = group;
    let mut out = Vec::new();
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
    out
}

/// The report files of `suite` among a submission's `files`, parsed into the facts the
/// loss rules read (for plots of the curves and band the rule uses: [`curve_groups`]).
pub fn submission_curves(files: &[SubmittedFile], suite: &str) -> SubmissionCurves {
    let reports: Vec<(&SubmittedFile, FileName, String)> = files
        .iter()
        .filter_map(|file| match classify(file) {
            Role::Report { name, run } if name.suite() == suite => Some((file, name, run)),
            _ => None,
        })
        .collect();
    let entries: Vec<EntryFacts> = reports
        .par_iter()
        .enumerate()
        .flat_map_iter(|(i, (file, name, _))| {
            file_facts(i, &file.path, name, &file.bytes, None).entries
        })
        .collect();
    SubmissionCurves {
        files: reports.iter().map(|(f, _, _)| f.path.clone()).collect(),
        runs: reports.into_iter().map(|(_, _, run)| run).collect(),
        entries,
    }
}

/// The report files of a submission read for their loss curves ([`submission_curves`]).
#[derive(Debug, Clone, Default)]
pub struct SubmissionCurves {
    /// The report files' paths ([`EntryFacts::file`] indexes them).
    pub files: Vec<String>,
    /// Each file's run, as its folder or name says (`output3`, `e3/R1`).
    pub runs: Vec<String>,
    /// Every entry read.
    pub entries: Vec<EntryFacts>,
}

/// For each curve, the number of steps where it lies outside the band of the others.
///
/// The others' order statistics come from the sorted column without removing anything:
/// with `F` the sorted column and `v` the tested value, the k-th smallest of the others
/// is `F[k]` when `v > F[k]` and `F[k + 1]` otherwise (ties included).
pub fn outside_counts(curves: &[&EntryFacts], len: usize) -> Vec<usize> {
    let n = curves.len();
    let mut counts = vec![0; n];
    let mut column: Vec<f64> = Vec::with_capacity(n);
    let m = n - 1; // others
    let position = |p: f64| {
        let h = p * (m - 1) as f64;
        let lo = h.floor() as usize;
        (lo, (lo + 1).min(m - 1), h - lo as f64)
    };
    let (lo10, hi10, f10) = position(0.1);
    let (lo90, hi90, f90) = position(0.9);
    // The band needs only F[k], F[k + 1], F[k + 2] at the two quantile positions:
    // select them (linear time) instead of sorting each column.
    // Step-major copy of the curves: each step's values lie together in memory. Copied
    // eight curves at a time, so that each step's eight values fill one cache line
    // rather than each value a line of its own (one curve after another, the scattered
    // stores were a tenth of the cross-file rules' time).
    let mut by_step = vec![0.0; n * len];
    for (t, tile) in curves.chunks(8).enumerate() {
        for step in 0..len {
            let at = step * n + 8 * t;
            for (slot, e) in by_step[at..at + tile.len()].iter_mut().zip(tile) {
                *slot = e.losses[step];
            }
        }
    }
    for values in by_step.chunks_exact(n) {
        column.clear();
        column.extend_from_slice(values);
        let low = window(&mut column, lo10);
        let high = window(&mut column, lo90);
        for (c, &v) in values.iter().enumerate() {
            // The j-th smallest of the others around position base + j.
            let other = |w: &[f64; 3], j: usize| if v > w[j] { w[j] } else { w[j + 1] };
            let q10 = other(&low, 0) + f10 * (other(&low, hi10 - lo10) - other(&low, 0));
            let q90 = other(&high, 0) + f90 * (other(&high, hi90 - lo90) - other(&high, 0));
            let w = (q90 - q10) + 1e-6 * q10.abs().max(q90.abs());
            if v < q10 - w || v > q90 + w {
                counts[c] += 1;
            }
        }
    }
    counts
}

/// The band of a set of equal-length curves, step by step, as the rule draws it around a
/// curve but over all curves (for plots): `[q10 − w, q90 + w]`, `w = q90 − q10`.
/// `None` with fewer than [`MIN_CURVES`] curves or unequal lengths.
pub fn display_band(curves: &[&[f64]]) -> Option<(Vec<f64>, Vec<f64>)> {
    let len = curves.first()?.len();
    if curves.len() < MIN_CURVES || curves.iter().any(|c| c.len() != len) {
        return None;
    }
    let n = curves.len();
    let h = |p: f64| p * (n - 1) as f64;
    let (mut lo, mut hi) = (Vec::with_capacity(len), Vec::with_capacity(len));
    let mut column = Vec::with_capacity(n);
    for step in 0..len {
        column.clear();
        column.extend(curves.iter().map(|c| c[step]));
        column.sort_unstable_by(f64::total_cmp);
        let q = |p: f64| {
            let k = h(p).floor() as usize;
            let next = (k + 1).min(n - 1);
            column[k] + (h(p) - k as f64) * (column[next] - column[k])
        };
        let (q10, q90) = (q(0.1), q(0.9));
        let w = (q90 - q10) + 1e-6 * q10.abs().max(q90.abs());
        lo.push(q10 - w);
        hi.push(q90 + w);
    }
    Some((lo, hi))
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

/// `loss.duplicated`: bit-identical loss curves (with at least two distinct values, so a
/// constant reward curve is not a copy) or bit-identical `train` timings within a bench.
/// Curves are compared by their hash first, then bit for bit.
pub fn duplicated(entries: &[EntryFacts], files: &[String], out: &mut Vec<Finding>) {
    let mut curves: EntryMap<(&str, u64), Vec<&EntryFacts>> = EntryMap::default();
    let mut timings: EntryMap<(&str, [u64; 4]), &EntryFacts> = EntryMap::default();
    curves.reserve(entries.len());
    timings.reserve(entries.len());
    let mut ordered: Vec<&EntryFacts> = entries.iter().collect();
    ordered.sort_by_key(|e| (e.file, e.entry));
    for e in ordered {
        let Some(name) = e.name.as_deref() else {
            continue;
        };
        if let Some(hash) = e.losses_hash {
            let seen = curves.entry((name, hash)).or_default();
            let same = |o: &&&EntryFacts| {
                o.losses.len() == e.losses.len()
                    && o.losses
                        .iter()
                        .zip(&e.losses)
                        .all(|(a, b)| a.to_bits() == b.to_bits())
            };
            match seen.iter().find(same) {
                Some(first) => out.push(copy(e, first, files, "batch_loss", "loss curve")),
                None => seen.push(e),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Device;

    fn curve(file: usize, losses: Vec<f64>) -> EntryFacts {
        EntryFacts {
            file,
            entry: 0,
            run: file as u32,
            run_id: None,
            device: Device::Gpu(0),
            name: Some("toy".into()),
            version: None,
            failure: None,
            config: 1,
            losses_hash: crate::facts::curve_hash(&losses),
            losses,
            timing: Some([file as u64; 4]),
            smoke: false,
            host: None,
            gpu: None,
        }
    }

    #[test]
    fn band_by_hand() {
        // Step 0: curve 4 (5.0) against the others [0.9, 1.0, 1.05, 1.1]: q10 = 0.93,
        // q90 = 1.085, w = 0.155, band [0.775, 1.24]: outside. Curve 0 (1.0) against
        // [0.9, 1.05, 1.1, 5.0]: q10 = 0.945, q90 = 3.83, band [-1.94, 6.715]: inside.
        // Step 1: all equal but curve 4 at 1.2 against four 1.0: w = 1e-6: outside.
        let curves: Vec<EntryFacts> = [
            vec![1.0, 1.0],
            vec![1.1, 1.0],
            vec![0.9, 1.0],
            vec![1.05, 1.0],
            vec![5.0, 1.2],
        ]
        .into_iter()
        .enumerate()
        .map(|(i, l)| curve(i, l))
        .collect();
        let refs: Vec<&EntryFacts> = curves.iter().collect();
        assert_eq!(outside_counts(&refs, 2), [0, 0, 0, 0, 2]);
    }

    /// The band straight from its definition: remove the curve, sort the others, interpolate.
    fn naive_counts(curves: &[&EntryFacts], len: usize) -> Vec<usize> {
        (0..curves.len())
            .map(|c| {
                (0..len)
                    .filter(|&step| {
                        let mut others: Vec<f64> = curves
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| *i != c)
                            .map(|(_, e)| e.losses[step])
                            .collect();
                        others.sort_by(f64::total_cmp);
                        let q = |p: f64| {
                            let h = p * (others.len() - 1) as f64;
                            let lo = h.floor() as usize;
                            let hi = (lo + 1).min(others.len() - 1);
                            others[lo] + (h - lo as f64) * (others[hi] - others[lo])
                        };
                        let (q10, q90) = (q(0.1), q(0.9));
                        let w = (q90 - q10) + 1e-6 * q10.abs().max(q90.abs());
                        let v = curves[c].losses[step];
                        v < q10 - w || v > q90 + w
                    })
                    .count()
            })
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn selection_equals_the_definition(
            columns in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(vec![0.0, 0.5, 1.0, 1.5, 2.0, 10.0, -3.0]), 3),
                4..30,
            )
        ) {
            let curves: Vec<EntryFacts> =
                columns.into_iter().enumerate().map(|(i, l)| curve(i, l)).collect();
            let refs: Vec<&EntryFacts> = curves.iter().collect();
            proptest::prop_assert_eq!(outside_counts(&refs, 3), naive_counts(&refs, 3));
        }
    }

    #[test]
    fn divergent_needs_most_steps_outside_and_enough_curves() {
        let files: Vec<String> = (0..6).map(|i| format!("f{i}")).collect();
        let base = |k: f64| {
            (0..20)
                .map(|s| 2.0 - 0.05 * s as f64 + 0.01 * k)
                .collect::<Vec<_>>()
        };
        let mut curves: Vec<EntryFacts> = (0..5).map(|i| curve(i, base(i as f64))).collect();
        // Three times the others at every step: divergent.
        curves.push(curve(5, base(0.0).iter().map(|v| v * 3.0).collect()));
        let mut out = Vec::new();
        divergent(&curves, &files, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].file.as_deref(), Some("f5"));
        assert_eq!(out[0].found, "20 of 20 steps outside");
        // Outside at 10 of 20 steps (exactly half): not divergent.
        let mut half = base(0.0);
        for v in half.iter_mut().take(10) {
            *v *= 3.0;
        }
        curves[5] = curve(5, half);
        out.clear();
        divergent(&curves, &files, &mut out);
        assert!(out.is_empty(), "{out:?}");
        // Three curves only: no band, nothing said.
        out.clear();
        divergent(&curves[3..], &files, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn groups_and_bands_are_per_configuration() {
        let steps = |k: f64| (0..12).map(|s| k - 0.01 * s as f64).collect::<Vec<_>>();
        // Bench `toy` in two configurations: four curves near 1 (config 1), four near 5
        // (config 2); a short curve (under MIN_STEPS), one of another length and a failed
        // entry are left out.
        let mut entries: Vec<EntryFacts> = (0..4)
            .map(|i| curve(i, steps(1.0 + 0.01 * i as f64)))
            .collect();
        for i in 4..8 {
            let mut e = curve(i, steps(5.0 + 0.01 * i as f64));
            e.config = 2;
            entries.push(e);
        }
        entries.push(curve(8, vec![1.0; MIN_STEPS - 1]));
        entries.push(curve(9, vec![1.0; 20]));
        let mut failed = curve(10, steps(1.0));
        failed.failure = Some(mlbench_schema::FailureKind::NanLoss);
        entries.push(failed);
        let groups = curve_groups(&entries);
        let shape: Vec<(&str, u64, usize, Vec<usize>)> = groups
            .iter()
            .map(|g| {
                let files = g.curves.iter().map(|e| e.file).collect();
                (g.bench, g.config, g.len, files)
            })
            .collect();
        assert_eq!(
            shape,
            [
                ("toy", 1, 12, vec![0, 1, 2, 3]),
                ("toy", 2, 12, vec![4, 5, 6, 7])
            ]
        );
        // Each band is over its own configuration's curves only.
        for group in &groups {
            assert!(group.compared());
            let (lo, hi) = group.band().unwrap();
            let own: Vec<&[f64]> = group.curves.iter().map(|e| e.losses.as_slice()).collect();
            assert_eq!(Some((lo.clone(), hi.clone())), display_band(&own));
            let first = group.curves[0].losses[0];
            assert!(lo[0] < first && first < hi[0] && hi[0] - lo[0] < 1.0);
        }
        // Grouped by bench only, the two configurations would share one wide band and the
        // rule would see eight curves; per configuration nothing diverges.
        let mut out = Vec::new();
        divergent(
            &entries,
            &(0..11).map(|i| format!("f{i}")).collect::<Vec<_>>(),
            &mut out,
        );
        assert!(out.is_empty(), "{out:?}");
        // Three curves: drawn, but no band (the rule does not compare them).
        let few = curve_groups(&entries[..3]);
        assert_eq!(few.len(), 1);
        assert!(!few[0].compared() && few[0].band().is_none());
    }

    #[test]
    fn submission_curves_read_the_suites_reports() {
        let entry = |loss: f64| {
            let losses: Vec<String> = (0..MIN_STEPS)
                .map(|s| format!("{}", loss - 0.01 * s as f64))
                .collect();
            format!(
                r#"{{"name": "toy", "version": "v", "vcd": "0", "batch_loss": [{}], "train_item": {{"avg": 1.0}}}}"#,
                losses.join(", ")
            )
        };
        let files = vec![
            SubmittedFile::new("output0/fast_0.json", format!("[{}]", entry(2.0))),
            SubmittedFile::new(
                "output1/fast_0.json",
                format!("[{}, {}]", entry(2.1), entry(2.2)),
            ),
            SubmittedFile::new("output1/other_0.json", format!("[{}]", entry(9.0))),
            SubmittedFile::new("notes.txt", "x"),
        ];
        let read = submission_curves(&files, "fast");
        assert_eq!(read.files, ["output0/fast_0.json", "output1/fast_0.json"]);
        assert_eq!(read.runs, ["output0", "output1"]);
        let at: Vec<(usize, usize, f64)> = read
            .entries
            .iter()
            .map(|e| (e.file, e.entry, e.losses[0]))
            .collect();
        assert_eq!(at, [(0, 0, 2.0), (1, 0, 2.1), (1, 1, 2.2)]);
        assert_eq!(read.entries[0].device, Device::Gpu(0));
    }

    #[test]
    fn copies_are_found_constant_curves_are_not() {
        let files: Vec<String> = (0..4).map(|i| format!("f{i}")).collect();
        let mut a = curve(0, vec![1.0, 0.5]);
        let mut b = curve(2, vec![1.0, 0.5]);
        b.timing = Some([9; 4]);
        let mut c = curve(1, vec![1.0, 1.0]);
        let mut d = curve(3, vec![1.0, 1.0]);
        c.timing = None;
        d.timing = None;
        a.entry = 4;
        let mut out = Vec::new();
        duplicated(&[b, d, a, c], &files, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].file.as_deref(), Some("f2"));
        assert_eq!(out[0].found, "bit-identical to f0 entry 4");
    }
}
