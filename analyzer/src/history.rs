//! `mlbench history`: every label × track × hardware × bench of a store across its
//! rounds. Per round the figure is the grid's (the mean of every usable sample, GPUs ×
//! runs) with its bootstrap interval (runs resampled within GPUs, [`Strata`]); between
//! two consecutive points of a series, the ratio of the later mean to the earlier one
//! with the interval of the paired resamples: resample k of the later round divided by
//! resample k of the earlier, each side from its own stream, as the grid divides each
//! row's resample k by the baseline's resample k. The two rounds' runs are different
//! runs, so nothing is paired run to run: the interval is that of a ratio of two
//! independently resampled means. A change is flagged only where that interval excludes
//! 1. The JSON is in docs/archive.md ("History").

use crate::bootstrap::{Strata, group_by_bench, percentile_interval, stream};
use crate::compare::selection_only;
use crate::grid::{DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED};
use crate::load::{LoadError, load_submission_lean};
use mlbench_results::history::{
    Change, HISTORY_SCHEMA_VERSION, History, HistoryPoint, HistorySeries,
};
use mlbench_schema::runs::natural_key;
use mlbench_submission::Limits;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each bench's usable samples of one submission, one list per GPU (entries that ran
/// on several devices form one list of their own), in file order within a GPU: all
/// that a history needs of a zip.
pub type BenchValues = BTreeMap<String, Vec<Vec<f64>>>;

/// One archived submission, with its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryInput {
    /// Its round.
    pub round: String,
    /// The vendor's label.
    pub label: String,
    /// Its track.
    pub track: String,
    /// What it ran on, in a few words (`2 × TITAN RTX`).
    pub hardware: String,
    /// The SHA-256 of its zip.
    pub sha256: String,
    /// Its samples, by bench.
    pub benches: BenchValues,
}

/// The bootstrap of a history.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistoryOptions {
    /// Resamples of every interval (at least 1).
    pub resamples: usize,
    /// The seed of every stream.
    pub seed: u64,
    /// The confidence level, strictly between 0 and 1.
    pub level: f64,
}

impl Default for HistoryOptions {
    /// The grid's: 2000 resamples, seed 2019, 95 %.
    fn default() -> Self {
        HistoryOptions {
            resamples: DEFAULT_RESAMPLES,
            seed: DEFAULT_SEED,
            level: DEFAULT_LEVEL,
        }
    }
}

/// Why a history could not be made.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// Zero resamples.
    #[error("the bootstrap needs at least 1 resample")]
    Resamples,
    /// A level outside (0, 1).
    #[error("the confidence level must be strictly between 0 and 1, found {0}")]
    Level(f64),
    /// Two submissions for one series in one round.
    #[error(
        "round {round}: two submissions of {label} ({track}) on {hardware}: a round holds one per label and track"
    )]
    Duplicate {
        /// The round.
        round: String,
        /// The label.
        label: String,
        /// The track.
        track: String,
        /// The hardware.
        hardware: String,
    },
    /// A zip could not be read.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The suite's selection rules could not be read (a bug in the shipped tables).
    #[error(transparent)]
    Targets(#[from] mlbench_schema::targets::TargetsError),
}

impl mlbench_schema::class::Classify for HistoryError {
    fn class(&self) -> mlbench_schema::class::ErrorClass {
        match self {
            HistoryError::Load(e) => e.class(),
            HistoryError::Targets(e) => e.class(),
            _ => mlbench_schema::class::ErrorClass::Input,
        }
    }
}

/// The usable samples of the zip (or folder) at `path`, read as the grid reads them.
pub fn bench_values(path: &Path) -> Result<BenchValues, HistoryError> {
    let sub = load_submission_lean(path, None, &selection_only()?, &Limits::default())?;
    Ok(group_by_bench(&sub.set)
        .into_iter()
        .map(|(bench, devices)| (bench, devices.into_values().collect()))
        .collect())
}

/// What [`load_inputs`] reads of one entry: where it stands and where its zip is.
#[derive(Debug, Clone)]
pub struct Located {
    /// Round, label, track, hardware and hash (its `benches` left empty).
    pub entry: HistoryInput,
    /// Its zip.
    pub path: PathBuf,
}

/// Reads every entry's zip, in parallel ([`bench_values`]). With a `cache` folder, a
/// zip's values are taken from `<cache>/<aa>/<sha256>.json` when that file is there and
/// of this layout ([`CachedValues`]), and written there otherwise: a zip never changes
/// under its hash, so neither do its values. A cache that cannot be written is only
/// slower.
pub fn load_inputs(
    located: Vec<Located>,
    cache: Option<&Path>,
) -> Result<Vec<HistoryInput>, HistoryError> {
    located
        .into_par_iter()
        .map(|l| {
            let sha = &l.entry.sha256;
            let file = cache.map(|dir| {
                dir.join(sha.get(..2).unwrap_or("00"))
                    .join(format!("{sha}.json"))
            });
            if let Some(benches) = file.as_deref().and_then(|f| read_cached(f, sha)) {
                return Ok(HistoryInput { benches, ..l.entry });
            }
            let benches = bench_values(&l.path)?;
            if let Some(f) = &file {
                write_cached(f, sha, &benches);
            }
            Ok(HistoryInput { benches, ..l.entry })
        })
        .collect()
}

fn read_cached(file: &Path, sha256: &str) -> Option<BenchValues> {
    let bytes = std::fs::read(file).ok()?;
    let cached: CachedValues = serde_json::from_slice(&bytes).ok()?;
    (cached.schema_version == CACHE_SCHEMA_VERSION && cached.sha256 == sha256)
        .then_some(cached.benches)
}

/// Written under a temporary name, then renamed: a reader never sees half a file.
fn write_cached(file: &Path, sha256: &str, benches: &BenchValues) {
    let cached = CachedValues {
        schema_version: CACHE_SCHEMA_VERSION,
        sha256: sha256.to_owned(),
        benches: benches.clone(),
    };
    let (Some(dir), Ok(bytes)) = (file.parent(), serde_json::to_vec(&cached)) else {
        return;
    };
    let tmp = file.with_extension(format!("{}.part", std::process::id()));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&tmp, &bytes))
        .and_then(|()| std::fs::rename(&tmp, file));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// A series' key: label, track, hardware, bench.
type Key<'a> = (&'a str, &'a str, &'a str, &'a str);

/// The history of `inputs`: one series per label × track × hardware × bench, its points
/// in round order (rounds sorted as text, digits compared as numbers).
pub fn history(inputs: &[HistoryInput], options: &HistoryOptions) -> Result<History, HistoryError> {
    if options.resamples == 0 {
        return Err(HistoryError::Resamples);
    }
    if !(options.level > 0.0 && options.level < 1.0) {
        return Err(HistoryError::Level(options.level));
    }
    let mut rounds: Vec<String> = inputs.iter().map(|i| i.round.clone()).collect();
    rounds.sort_by_cached_key(|r| (natural_key(r), r.clone()));
    rounds.dedup();
    let rank = |round: &str| rounds.iter().position(|r| r == round).unwrap_or(0);
    let mut keyed: BTreeMap<Key, Vec<(usize, &HistoryInput)>> = BTreeMap::new();
    for input in inputs {
        for bench in input.benches.keys() {
            let key = (&*input.label, &*input.track, &*input.hardware, &**bench);
            keyed
                .entry(key)
                .or_default()
                .push((rank(&input.round), input));
        }
    }
    for points in keyed.values_mut() {
        points.sort_by_key(|p| p.0);
        if let Some(w) = points.windows(2).find(|w| w[0].0 == w[1].0) {
            let i = w[0].1;
            return Err(HistoryError::Duplicate {
                round: i.round.clone(),
                label: i.label.clone(),
                track: i.track.clone(),
                hardware: i.hardware.clone(),
            });
        }
    }
    let keyed: Vec<(Key, Vec<(usize, &HistoryInput)>)> = keyed.into_iter().collect();
    let series: Vec<HistorySeries> = keyed
        .par_iter()
        .map(|(key, points)| series(*key, points, options))
        .collect();
    let flagged = (series.iter().flat_map(|s| &s.points))
        .filter(|p| p.change.as_ref().is_some_and(|c| c.flagged))
        .count();
    Ok(History {
        schema_version: HISTORY_SCHEMA_VERSION,
        rounds,
        resamples: options.resamples,
        seed: options.seed,
        level: options.level,
        series,
        flagged,
        notes: Vec::new(),
    })
}

/// One series: each point's figure and interval, each change from the point before.
fn series(
    (label, track, hardware, bench): Key,
    points: &[(usize, &HistoryInput)],
    options: &HistoryOptions,
) -> HistorySeries {
    let mut out = Vec::with_capacity(points.len());
    let mut previous: Option<(&str, f64, Vec<f64>)> = None;
    for (_, input) in points {
        let strata = Strata::new(input.benches[bench].iter().map(|g| g.iter().copied()));
        let mut rng = stream(
            options.seed,
            &["history", &input.round, label, track, bench],
        );
        let mut means = Vec::with_capacity(options.resamples);
        strata.resample_means(&mut rng, options.resamples, &mut means);
        let mean = strata.mean();
        let logs: Vec<f64> = means.iter().map(|m| m.ln()).collect();
        let ci = percentile_interval(&mut means, options.level).unwrap_or([mean, mean]);
        let change = previous.as_ref().map(|(from, before, before_logs)| {
            change(
                from,
                (mean / before).ln(),
                &logs,
                before_logs,
                options.level,
            )
        });
        out.push(HistoryPoint {
            round: input.round.clone(),
            sha256: input.sha256.clone(),
            mean,
            ci,
            n: strata.n(),
            gpus: strata.gpus(),
            change,
        });
        previous = Some((&input.round, mean, logs));
    }
    HistorySeries {
        label: label.to_owned(),
        track: track.to_owned(),
        hardware: hardware.to_owned(),
        bench: bench.to_owned(),
        points: out,
    }
}

/// The change from round `from` (its ln resampled means `before`) to this one (`after`),
/// `gap` the difference of their ln means.
fn change(from: &str, gap: f64, after: &[f64], before: &[f64], level: f64) -> Change {
    let mut paired: Vec<f64> = after.iter().zip(before).map(|(a, b)| a - b).collect();
    let ci = percentile_interval(&mut paired, level)
        .unwrap_or([gap, gap])
        .map(f64::exp);
    let ratio = gap.exp();
    let flagged = ci[0] > 1.0 || ci[1] < 1.0;
    let direction = flagged.then(|| if ratio > 1.0 { "up" } else { "down" }.to_owned());
    Change {
        from: from.to_owned(),
        ratio,
        ci,
        flagged,
        direction,
        percent: (ratio - 1.0) * 100.0,
    }
}

/// A zip's [`BenchValues`] as kept beside a store (its layout version first): the
/// figures of a zip never change, so they are read once per zip, not once per history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedValues {
    /// [`CACHE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The zip's SHA-256.
    pub sha256: String,
    /// Its samples, by bench.
    pub benches: BenchValues,
}

/// The layout version of [`CachedValues`]; a cache of another is read again from the zip.
pub const CACHE_SCHEMA_VERSION: u32 = 1;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::quantile_sorted;

    fn input(round: &str, bench: &str, groups: Vec<Vec<f64>>) -> HistoryInput {
        HistoryInput {
            round: round.into(),
            label: "v".into(),
            track: "baseline".into(),
            hardware: "2 × X".into(),
            sha256: format!("sha-{round}"),
            benches: [(bench.to_owned(), groups)].into(),
        }
    }

    #[test]
    fn rounds_sort_as_numbers_and_a_change_is_from_the_series_previous_point() {
        let inputs = [
            input("r10", "a", vec![vec![6.0, 6.0], vec![6.0]]),
            input("r9", "b", vec![vec![1.0]]),
            input("r2", "a", vec![vec![5.0, 5.0], vec![5.0, 5.0]]),
        ];
        let h = history(&inputs, &HistoryOptions::default()).unwrap();
        assert_eq!(h.rounds, ["r2", "r9", "r10"]);
        let a = h.series.iter().find(|s| s.bench == "a").unwrap();
        assert_eq!(a.points.len(), 2);
        // Equal values: every resample is the mean, every interval a point.
        assert_eq!(a.points[0].ci, [5.0, 5.0]);
        let c = a.points[1].change.as_ref().unwrap();
        assert_eq!(c.from, "r2");
        assert!((c.ratio - 1.2).abs() < 1e-12 && (c.percent - 20.0).abs() < 1e-9);
        assert!((c.ci[0] - 1.2).abs() < 1e-12 && (c.ci[1] - 1.2).abs() < 1e-12);
        assert_eq!((c.flagged, c.direction.as_deref()), (true, Some("up")));
        assert_eq!(h.flagged, 1);
    }

    #[test]
    fn the_change_interval_is_that_of_resample_k_over_resample_k() {
        let (before, after) = (
            vec![vec![1.0, 2.0, 3.0, 4.0]],
            vec![vec![2.0, 3.0, 4.0, 9.0]],
        );
        let inputs = [
            input("1", "a", before.clone()),
            input("2", "a", after.clone()),
        ];
        let options = HistoryOptions {
            resamples: 999,
            ..HistoryOptions::default()
        };
        let h = history(&inputs, &options).unwrap();
        let c = h.series[0].points[1].change.clone().unwrap();
        // The same streams, written out: each round's resampled means, divided pairwise,
        // sorted, and the 2.5 % and 97.5 % quantiles taken (of their logs).
        let means = |round: &str, groups: &[Vec<f64>]| {
            let strata = Strata::new(groups.iter().map(|g| g.iter().copied()));
            let mut rng = stream(options.seed, &["history", round, "v", "baseline", "a"]);
            let mut out = Vec::new();
            strata.resample_means(&mut rng, options.resamples, &mut out);
            out
        };
        let (m1, m2) = (means("1", &before), means("2", &after));
        // The quantiles of the log ratios, as the grid takes them.
        let mut logs: Vec<f64> = m2.iter().zip(&m1).map(|(b, a)| (b / a).ln()).collect();
        logs.sort_by(f64::total_cmp);
        let lo = quantile_sorted(&logs, 0.025).unwrap().exp();
        let hi = quantile_sorted(&logs, 0.975).unwrap().exp();
        assert!(
            (c.ci[0] - lo).abs() < 1e-9 * lo && (c.ci[1] - hi).abs() < 1e-9 * hi,
            "{c:?} {lo} {hi}"
        );
        assert!((c.ratio - 4.5 / 2.5).abs() < 1e-12);
        assert_eq!(c.flagged, lo > 1.0 || hi < 1.0);
    }

    #[test]
    fn two_submissions_of_one_series_in_one_round_and_bad_options_are_refused() {
        let one = input("1", "a", vec![vec![1.0]]);
        let err = history(&[one.clone(), one.clone()], &HistoryOptions::default());
        assert!(matches!(err, Err(HistoryError::Duplicate { .. })));
        let zero = HistoryOptions {
            resamples: 0,
            ..HistoryOptions::default()
        };
        assert!(matches!(
            history(&[one], &zero),
            Err(HistoryError::Resamples)
        ));
    }
}
