//! Loss curves across runs and GPUs: a curve far outside the others (`loss.divergent`),
//! and copies (`loss.duplicated`).
//!
//! Divergence, per bench configuration: take the finite curves of the usable entries that
//! have the most common length (at least [`MIN_STEPS`] steps; the ring buffer keeps the
//! last 100). With at least [`MIN_CURVES`] curves, each curve is compared with the
//! *others* (leave one out) step by step: at step i the band is
//! `[q10 − w − t, q90 + w + t]` with `q10`, `q90` the linear-interpolated 10% and 90%
//! quantiles of the other curves' values at step i, `w = q90 − q10` (plus a relative 1e-6
//! for flat curves) and `t` the group's tolerance, on the losses' logs when all are
//! positive ([`Scale`]). A curve with more than half of its steps outside its band
//! is divergent.

use crate::curve::Curve;
use crate::facts::{EntryFacts, file_facts};
use crate::finding::catalogued;
use crate::layout::{Role, classify};
use crate::rules::EntryMap;
use mlbench_results::validation::Finding;
use mlbench_schema::reader::Content;
use mlbench_schema::reader::FileName;
use mlbench_submission::SubmittedFile;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};

mod band;
pub use band::{Scale, display_band};

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
        let curves: Vec<Vec<f64>> = self.curves.iter().map(|e| e.losses.to_vec()).collect();
        display_band(&curves.iter().map(Vec::as_slice).collect::<Vec<_>>())
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
        // One step-major copy per thread, reused from group to group.
        .map_init(Vec::new, |by_step, group| {
            divergent_in(group, files, by_step)
        })
        .collect();
    out.extend(found.into_iter().flatten());
}

fn divergent_in(group: CurveGroup, files: &[String], by_step: &mut Vec<f64>) -> Vec<Finding> {
    let CurveGroup {
        bench: name,
        len,
        curves,
        ..
    } = group;
    let mut out = Vec::new();
    let losses: Vec<&Curve> = curves.iter().map(|e| &e.losses).collect();
    for (c, outside) in band::outside_counts(&losses, len, by_step)
        .into_iter()
        .enumerate()
    {
        if outside as f64 > OUTSIDE_SHARE * len as f64 {
            let e = curves[c];
            out.push(
                catalogued(
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
            file_facts(i, &file.path, name, Content::Bytes(&file.bytes), None).entries
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

/// `loss.duplicated`: bit-identical loss curves (with at least two distinct values, so a
/// constant reward curve is not a copy) or bit-identical `train` timings within a bench.
/// Curves are compared by their hash first, then bit for bit.
pub fn duplicated(entries: &[EntryFacts], files: &[String], out: &mut Vec<Finding>) {
    // Keyed by the curve's hash and the timings' bits alone; the bench is compared in the
    // (almost always single-entry) bucket rather than hashed for every entry.
    let mut curves: EntryMap<u64, Seen> = EntryMap::default();
    let mut timings: EntryMap<[u64; 4], Seen> = EntryMap::default();
    curves.reserve(entries.len());
    timings.reserve(entries.len());
    let mut ordered: Vec<&EntryFacts> = entries.iter().collect();
    ordered.sort_by_key(|e| (e.file, e.entry));
    for e in ordered {
        let Some(name) = e.name.as_deref() else {
            continue;
        };
        let of_bench = |o: &EntryFacts| o.name.as_deref() == Some(name);
        if let Some(hash) = e.losses_hash {
            let same = |o: &EntryFacts| of_bench(o) && o.losses.identical(&e.losses);
            if let Some(first) = Seen::first_or_add(curves.entry(hash), e, same) {
                out.push(copy(e, first, files, "batch_loss", "loss curve"));
            }
        }
        if let Some(t) = e.timing
            && let Some(first) = Seen::first_or_add(timings.entry(t), e, of_bench)
        {
            out.push(copy(e, first, files, "train", "timings"));
        }
    }
}

/// The entries met under one key of [`duplicated`]'s maps, in the order met: the first
/// (no allocation for the usual single entry), then any others.
struct Seen<'a> {
    first: &'a EntryFacts,
    more: Vec<&'a EntryFacts>,
}

impl<'a> Seen<'a> {
    /// The first entry under the key that `same` takes for `e`'s original; else `e` is
    /// added under the key.
    fn first_or_add<K>(
        slot: std::collections::hash_map::Entry<'_, K, Seen<'a>>,
        e: &'a EntryFacts,
        same: impl Fn(&EntryFacts) -> bool,
    ) -> Option<&'a EntryFacts> {
        match slot {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(Seen {
                    first: e,
                    more: Vec::new(),
                });
                None
            }
            std::collections::hash_map::Entry::Occupied(mut o) => {
                let seen = o.get_mut();
                let found = std::iter::once(seen.first)
                    .chain(seen.more.iter().copied())
                    .find(|o| same(o));
                if found.is_none() {
                    seen.more.push(e);
                }
                found
            }
        }
    }
}

fn copy(e: &EntryFacts, first: &EntryFacts, files: &[String], field: &str, what: &str) -> Finding {
    catalogued(
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
        let mut e = EntryFacts::blank(file, 0, file as u32, "toy");
        e.config = 1;
        e.losses_hash = crate::curve::curve_hash(&losses);
        e.losses = losses.into();
        e.timing = Some([file as u64; 4]);
        e
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
            let own: Vec<Vec<f64>> = group.curves.iter().map(|e| e.losses.to_vec()).collect();
            let own: Vec<&[f64]> = own.iter().map(Vec::as_slice).collect();
            assert_eq!(Some((lo.clone(), hi.clone())), display_band(&own));
            let first = group.curves[0].losses.to_vec()[0];
            // Its own curves only: within a factor of about 2 of them (past their spread),
            // never reaching the other configuration's (1 and 5 are 5 times apart).
            assert!(lo[0] < first && first < hi[0], "{lo:?} {hi:?}");
            assert!(hi[0] / first < 2.5 && first / lo[0] < 2.5, "{lo:?} {hi:?}");
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
            .map(|e| (e.file, e.entry, e.losses.to_vec()[0]))
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

    #[test]
    fn copies_are_within_a_bench() {
        // f0 and f1 (bench `toy`) and f2 (bench `other`) share a curve and timings; f3
        // (`other`) copies f2's. Only f1 and f3 are copies, each of its own bench's first.
        let files: Vec<String> = (0..4).map(|i| format!("f{i}")).collect();
        let entries: Vec<EntryFacts> = (0..4)
            .map(|i| {
                let mut e = curve(i, vec![1.0, 0.5]);
                e.timing = Some([7; 4]);
                if i >= 2 {
                    e.name = Some("other".into());
                }
                e
            })
            .collect();
        let mut out = Vec::new();
        duplicated(&entries, &files, &mut out);
        let found: Vec<(Option<&str>, Option<&str>, &str)> = out
            .iter()
            .map(|f| (f.file.as_deref(), f.field.as_deref(), f.found.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    Some("f1"),
                    Some("batch_loss"),
                    "bit-identical to f0 entry 0"
                ),
                (Some("f1"), Some("train"), "bit-identical to f0 entry 0"),
                (
                    Some("f3"),
                    Some("batch_loss"),
                    "bit-identical to f2 entry 0"
                ),
                (Some("f3"), Some("train"), "bit-identical to f2 entry 0"),
            ]
        );
    }
}
