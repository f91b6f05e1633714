//! The report's "how many runs" section ([`Precision`]): each bench's runs reduced to one
//! value per run (the mean over the run's GPUs, the figure both scorings average), then
//! the fixed-n and the anytime-valid interval of their mean and the runs each needs
//! (docs/scoring.md, "How many runs").

use crate::anytime::{
    Design, LogSummary, fixed_half_width, lai_factor, reached, runs_needed, t_factor,
};
use crate::bootstrap::{percentile_interval, stream, usable};
use crate::samples::SampleSet;
use mlbench_results::report::{
    BenchPrecision, PRECISION_STATISTIC, Precision, PrecisionInterval, PrecisionOverall,
};
use mlbench_schema::stopping::LAI_T_MIXTURE;
use std::collections::BTreeMap;

/// Each bench's values per run: the mean of its usable samples in each run that has one,
/// in run order. Failed samples and those the scoring sets aside are not values; the
/// runs left without one are counted in [`BenchPrecision::runs_without_value`].
pub fn run_values(set: &SampleSet) -> BTreeMap<String, Vec<f64>> {
    let usable = set
        .samples
        .iter()
        .filter_map(|s| usable(s).map(|(bench, value)| (bench, s.run, value)));
    mlbench_schema::stopping::run_means(usable)
        .into_iter()
        .map(|(bench, runs)| (bench, runs.into_values().collect()))
        .collect()
}

/// The precision section of `set` for `benches` (the report's order; a bench without
/// values is listed with none), the fixed-n interval from `resamples` bootstrap draws.
pub fn precision(
    set: &SampleSet,
    benches: &[String],
    design: &Design,
    resamples: usize,
    seed: u64,
) -> Precision {
    let mut values = run_values(set);
    let rows: Vec<BenchPrecision> = benches
        .iter()
        .map(|bench| {
            let runs = values.remove(bench).unwrap_or_default();
            let mut row =
                bench_precision(bench, &runs, design, resamples, &[&set.suite, bench], seed);
            // Every run of the submission without a usable value of the bench: failed,
            // set aside by the scoring, or missing.
            row.runs_without_value = u32::try_from(set.runs.len())
                .unwrap_or(u32::MAX)
                .saturating_sub(row.runs);
            row
        })
        .collect();
    Precision {
        statistic: PRECISION_STATISTIC.into(),
        level: design.level,
        precision: design.precision,
        method: LAI_T_MIXTURE.into(),
        expected_cv: design.expected_cv,
        mixture: design.mixture,
        planned_runs: design.planned_runs,
        resamples,
        seed,
        overall: overall(&rows),
        benches: rows,
    }
}

/// The precision section over the benches that have values, by name (`run --until`,
/// which has no target table to order them).
pub fn precision_of_runs(
    set: &SampleSet,
    design: &Design,
    resamples: usize,
    seed: u64,
) -> Precision {
    let benches: Vec<String> = run_values(set).into_keys().collect();
    precision(set, &benches, design, resamples, seed)
}

/// One bench's figures from its run values.
pub fn bench_precision(
    bench: &str,
    runs: &[f64],
    design: &Design,
    resamples: usize,
    names: &[&str],
    seed: u64,
) -> BenchPrecision {
    let alpha = design.alpha();
    let summary = LogSummary::of(runs);
    let count = summary.map_or(0, |s| s.runs);
    let sd = summary.and_then(|s| s.sd());
    let interval = |half: Option<f64>, factor: &dyn Fn(u32) -> Option<f64>| {
        let ci = summary
            .zip(half)
            .map(|(s, h)| [s.geometric_mean * (-h).exp(), s.geometric_mean * h.exp()]);
        let needed = sd.and_then(|sd| runs_needed(sd, design.goal(), factor));
        PrecisionInterval {
            ci,
            half_width: half.map(f64::exp_m1),
            reached: reached(half, count, design),
            runs_needed: needed,
            why: None,
            runs_needed_why: needed.is_none().then(|| runs_needed_why(count)),
        }
    };
    let mut anytime = interval(summary.and_then(|s| s.anytime_half_width(design)), &|n| {
        lai_factor(n, design.mixture, alpha)
    });
    if anytime.ci.is_none() {
        anytime.why = Some(anytime_why(count, design));
    }
    let mut fixed = interval(summary.and_then(|s| fixed_half_width(&s, alpha)), &|n| {
        t_factor(n, alpha)
    });
    // The fixed-n interval shown is the bootstrap's; its runs needed stay Student's t's.
    let boot = summary.and_then(|s| bootstrap(runs, &s, design, resamples, names, seed));
    (fixed.ci, fixed.half_width) = match boot {
        Some((ci, half)) => (Some(ci), Some(half)),
        None => (None, None),
    };
    fixed.reached = count >= crate::anytime::MIN_RUNS
        && fixed.half_width.is_some_and(|h| h <= design.precision);
    if fixed.ci.is_none() {
        fixed.why = Some(match count {
            0 | 1 => too_few(count),
            _ => "no resamples drawn".into(),
        });
    }
    BenchPrecision {
        bench: bench.to_owned(),
        runs: count,
        runs_without_value: 0,
        mean: summary.map(|s| s.geometric_mean),
        sd_log: sd,
        fixed,
        anytime,
    }
}

/// Why an interval of `runs` runs has no ends below two runs.
fn too_few(runs: u32) -> String {
    match runs {
        0 => "no run with a value".into(),
        _ => "1 run: an interval needs 2 to measure a spread".into(),
    }
}

/// Why the anytime-valid interval of `runs` runs is unbounded: too few runs to measure a
/// spread, or fewer than the design's sequence needs to be bounded at all (a count that
/// depends on the level and the mixture only, never on the runs' values).
pub fn anytime_why(runs: u32, design: &Design) -> String {
    if runs < 2 {
        return too_few(runs);
    }
    let alpha = design.alpha();
    let from =
        crate::anytime::first_reaching(2, |n| lai_factor(n, design.mixture, alpha).is_some());
    let level = design.level * 100.0;
    let runs = mlbench_schema::words::count(runs as usize, "run", "runs");
    match from {
        Some(from) => format!("{runs}; bounded from {from} at {level:.0}%"),
        None => format!("{runs}; unbounded at {level:.0}% at any count"),
    }
}

/// Why a runs-needed figure is unknown at `runs` runs: no spread measured yet, or beyond
/// the cap.
fn runs_needed_why(runs: u32) -> String {
    match runs {
        0 | 1 => format!("{}: needs 2 runs to measure a spread", too_few(runs)),
        _ => format!(
            "more than {} runs at the observed spread",
            mlbench_results::report::RUNS_NEEDED_CAP
        ),
    }
}

/// The percentile bootstrap of the geometric mean of `runs` (runs drawn with
/// replacement), and its larger relative distance from the geometric mean `summary`
/// states. The logs are taken relative to the first run's, as [`LogSummary`] does, so
/// that equal runs give an interval of exactly their value. `None` below 2 runs.
fn bootstrap(
    runs: &[f64],
    summary: &LogSummary,
    design: &Design,
    resamples: usize,
    names: &[&str],
    seed: u64,
) -> Option<([f64; 2], f64)> {
    let n = u32::try_from(runs.len()).ok().filter(|&n| n >= 2)?;
    let base = runs[0];
    let offsets: Vec<f64> = runs.iter().map(|v| (v / base).ln()).collect();
    let mut rng = stream(seed, &[names, &["runs"]].concat());
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| (0..n).map(|_| offsets[rng.below(n) as usize]).sum::<f64>() / f64::from(n))
        .collect();
    let [lo, hi] = percentile_interval(&mut means, design.level)?;
    let [lo, hi] = [base * lo.exp(), base * hi.exp()];
    let mean = summary.geometric_mean;
    let half = (mean / lo).max(hi / mean) - 1.0;
    Some(([lo, hi], half.max(0.0)))
}

/// The worst of every bench with a run (a bench the submission lacks altogether is the
/// report's to say, not a precision to reach).
fn overall(rows: &[BenchPrecision]) -> PrecisionOverall {
    let measured: Vec<&BenchPrecision> = rows.iter().filter(|r| r.runs > 0).collect();
    let needed = |pick: fn(&BenchPrecision) -> Option<u32>| {
        measured
            .iter()
            .map(|r| pick(r))
            .try_fold(0u32, |most, n| Some(most.max(n?)))
    };
    PrecisionOverall {
        runs: measured.iter().map(|r| r.runs).max().unwrap_or(0),
        fixed_reached: !measured.is_empty() && measured.iter().all(|r| r.fixed.reached),
        anytime_reached: !measured.is_empty() && measured.iter().all(|r| r.anytime.reached),
        fixed_runs_needed: needed(|r| r.fixed.runs_needed),
        anytime_runs_needed: needed(|r| r.anytime.runs_needed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn design() -> Design {
        Design::plan(0.95, 0.01, 0.02).unwrap()
    }

    #[test]
    fn a_bench_of_runs_by_hand() {
        // Runs 100, 102, 98, 101, 99: the logs' sd by hand (Python's statistics.stdev of
        // the logs) is 0.0158135. Fixed-n runs needed at ±1 %: the smallest n with
        // t(.975, n−1)·0.0158135/√n ≤ ln 1.01 = 0.0099503, with t from the tables: n = 12
        // gives 2.200985·0.0158135/√12 = 0.0100474 (no), n = 13 gives 2.178813·…/√13 =
        // 0.0095560 (yes).
        let runs = [100.0, 102.0, 98.0, 101.0, 99.0];
        let b = bench_precision("x", &runs, &design(), 2000, &["s", "x"], 7);
        assert_eq!(b.runs, 5);
        assert!(
            (b.sd_log.unwrap() - 0.015_813_457).abs() < 1e-8,
            "{:?}",
            b.sd_log
        );
        let geo = runs.iter().map(|v: &f64| v.ln()).sum::<f64>() / 5.0;
        assert!((b.mean.unwrap() - geo.exp()).abs() < 1e-9);
        assert_eq!(b.fixed.runs_needed, Some(13));
        // The bootstrap interval lies within the runs' range and holds the mean.
        let [lo, hi] = b.fixed.ci.unwrap();
        assert!(98.0 <= lo && lo < b.mean.unwrap() && b.mean.unwrap() < hi && hi <= 102.0);
        assert!(!b.fixed.reached && !b.anytime.reached);
        // The anytime interval is wider than the fixed one, when bounded.
        if let Some([alo, ahi]) = b.anytime.ci {
            assert!(alo < lo && ahi > hi);
        }
        assert!(b.anytime.runs_needed.unwrap() > b.fixed.runs_needed.unwrap());
    }

    #[test]
    fn no_runs_one_run_and_equal_runs() {
        let none = bench_precision("x", &[], &design(), 100, &["x"], 1);
        assert_eq!((none.runs, none.mean, none.sd_log), (0, None, None));
        assert_eq!(none.fixed.runs_needed, None);
        let one = bench_precision("x", &[5.0], &design(), 100, &["x"], 1);
        assert_eq!((one.runs, one.mean), (1, Some(5.0)));
        assert_eq!((one.fixed.ci, one.anytime.ci), (None, None));
        let same = bench_precision("x", &[5.0; 6], &design(), 100, &["x"], 1);
        assert_eq!(same.fixed.ci, Some([5.0, 5.0]));
        assert_eq!(same.fixed.half_width, Some(0.0));
        assert!(same.fixed.reached);
        assert_eq!(same.fixed.runs_needed, Some(2));
        // Overall: a bench without runs does not count; one with a single run makes the
        // count unknown.
        let overall_of = |rows: &[BenchPrecision]| overall(rows);
        let both = overall_of(&[none.clone(), same.clone()]);
        assert_eq!(both.fixed_runs_needed, Some(2));
        assert!(both.fixed_reached);
        let with_one = overall_of(&[none, same, one]);
        assert_eq!(with_one.fixed_runs_needed, None);
        assert!(!with_one.fixed_reached);
    }
}
