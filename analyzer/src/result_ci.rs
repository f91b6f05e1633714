//! `mlbench report --ci`: the bootstrap interval of each bench's **result**, the figure of
//! the report's result column, recomputed in every resample exactly as the scoring
//! computes it, so that the interval is of the figure printed beside it.
//!
//! - Classic: a run's value is the mean of the bench's entries of that run (over its
//!   GPUs; failures with a throughput kept, as the scoring keeps them); the result is the
//!   mean of the run values without one lowest and one highest. Runs are resampled whole
//!   (n draws with replacement from the n runs): the result is a function of the run
//!   values, and a run's GPUs share its conditions.
//! - Score: the result is the mean over every run × GPU value (failures removed). Runs are
//!   resampled within GPUs ([`crate::bootstrap::Strata`]), as the grid does.
//!
//! Each bench's stream is named by the suite and the bench, so a bench's interval does
//! not depend on the other benches.

use crate::bootstrap::{Strata, percentile_interval, stream};
use crate::samples::SampleSet;
use mlbench_results::Report;
use mlbench_results::report::{CLASSIC_STATISTIC, Intervals, ResultCi, SCORE_STATISTIC};
use std::collections::BTreeMap;

/// How `--ci` is drawn.
#[derive(Debug, Clone, Copy)]
pub struct Resampling {
    /// Resamples drawn.
    pub resamples: usize,
    /// The seed of every stream.
    pub seed: u64,
    /// The confidence level.
    pub level: f64,
}

/// The intervals of every bench of `report` (computed from `set`, its samples).
pub fn result_intervals(set: &SampleSet, report: &Report, how: &Resampling) -> Intervals {
    let by_bench = match report {
        Report::Classic(r) => {
            let mut runs = classic_run_values(set);
            r.benches
                .iter()
                .map(|b| {
                    let values = runs.remove(&b.bench).unwrap_or_default();
                    let names = [set.suite.as_str(), b.bench.as_str()];
                    (b.bench.clone(), classic_ci(&values, b.result, &names, how))
                })
                .collect()
        }
        Report::Score(r) => {
            let mut groups = score_groups(set);
            r.benches
                .iter()
                .map(|b| {
                    let devices = groups.remove(&b.bench).unwrap_or_default();
                    let names = [set.suite.as_str(), b.bench.as_str()];
                    (b.bench.clone(), score_ci(&devices, b.mean, &names, how))
                })
                .collect()
        }
    };
    let resampling = match report {
        Report::Classic(_) => "runs resampled whole",
        Report::Score(_) => "runs resampled within GPUs",
    };
    Intervals {
        by_bench,
        resampling: resampling.into(),
        resamples: how.resamples,
        seed: how.seed,
        level: how.level,
    }
}

/// Whether the scoring counts the sample: a bench, a throughput that is not NaN, not set
/// aside by a conflict, and (for the score scoring) not a failure; its bench and value.
fn scored(s: &crate::samples::Sample, keep_failures: bool) -> Option<(&str, f64)> {
    let bench = s.bench.as_deref()?;
    let value = s.value.filter(|v| !v.is_nan())?;
    (!s.conflict && (keep_failures || s.failure.is_none())).then_some((bench, value))
}

/// The classic scoring's run values: bench → the mean of each run's entries, by run.
pub fn classic_run_values(set: &SampleSet) -> BTreeMap<String, Vec<f64>> {
    let mut sums: BTreeMap<&str, BTreeMap<u32, (f64, u32)>> = BTreeMap::new();
    for s in &set.samples {
        if let Some((bench, value)) = scored(s, true) {
            let slot = sums.entry(bench).or_default().entry(s.run).or_default();
            (slot.0, slot.1) = (slot.0 + value, slot.1 + 1);
        }
    }
    sums.into_iter()
        .map(|(bench, runs)| {
            let values = runs.into_values().map(|(sum, n)| sum / f64::from(n));
            (bench.to_owned(), values.collect())
        })
        .collect()
}

/// The score scoring's samples: bench → device (`None`: ran on several) → values, in file
/// order within a device.
fn score_groups(set: &SampleSet) -> BTreeMap<String, BTreeMap<Option<u32>, Vec<f64>>> {
    let mut groups: BTreeMap<String, BTreeMap<Option<u32>, Vec<f64>>> = BTreeMap::new();
    for s in &set.samples {
        if let Some((bench, value)) = scored(s, false) {
            let devices = groups.entry(bench.to_owned()).or_default();
            devices.entry(s.device).or_default().push(value);
        }
    }
    groups
}

/// The classic result of run values: their mean without one lowest and one highest, held
/// between the two (as the scoring holds it); `None` below 3 runs.
pub fn trimmed_mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (mut n, mut sum, mut lo, mut hi) = (0u32, 0.0, f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        (n, sum, lo, hi) = (n + 1, sum + v, lo.min(v), hi.max(v));
    }
    (n >= 3).then(|| ((sum - hi - lo) / f64::from(n - 2)).clamp(lo, hi))
}

/// One classic bench: its run values resampled whole, the trimmed mean of each resample.
pub fn classic_ci(runs: &[f64], result: Option<f64>, names: &[&str], how: &Resampling) -> ResultCi {
    let n = runs.len();
    let mut ci = ResultCi {
        statistic: CLASSIC_STATISTIC.into(),
        n,
        result,
        ci: None,
        why: None,
    };
    if n < 3 || result.is_none() {
        ci.why = Some(match n {
            0 => "no run with a value: no result".into(),
            1 => "1 run: the result needs 3 (a lowest and a highest set aside)".into(),
            _ => format!("{n} runs: the result needs 3 (a lowest and a highest set aside)"),
        });
        return ci;
    }
    let Ok(count) = u32::try_from(n) else {
        ci.why = Some(format!("{n} runs: more than a resample can draw from"));
        return ci;
    };
    let mut rng = stream(how.seed, names);
    let mut results: Vec<f64> = (0..how.resamples)
        .filter_map(|_| trimmed_mean((0..n).map(|_| runs[rng.below(count) as usize])))
        .collect();
    ci.ci = percentile_interval(&mut results, how.level);
    if ci.ci.is_none() {
        ci.why = Some("no resamples drawn".into());
    }
    ci
}

/// One score bench: its values resampled within GPUs, the pooled mean of each resample.
fn score_ci(
    devices: &BTreeMap<Option<u32>, Vec<f64>>,
    result: Option<f64>,
    names: &[&str],
    how: &Resampling,
) -> ResultCi {
    let strata = Strata::new(devices.values().map(|g| g.iter().copied()));
    let mut ci = ResultCi {
        statistic: SCORE_STATISTIC.into(),
        n: strata.n(),
        result,
        ci: None,
        why: None,
    };
    if strata.n() == 0 || result.is_none() {
        ci.why = Some("no run × GPU value: no result".into());
        return ci;
    }
    let mut means = Vec::with_capacity(how.resamples);
    strata.resample_means(&mut stream(how.seed, names), how.resamples, &mut means);
    ci.ci = percentile_interval(&mut means, how.level);
    if ci.ci.is_none() {
        ci.why = Some("no resamples drawn".into());
    }
    ci
}

#[cfg(test)]
mod tests {
    use super::*;

    fn how(resamples: usize) -> Resampling {
        Resampling {
            resamples,
            seed: 11,
            level: 0.95,
        }
    }

    #[test]
    fn the_trimmed_mean_sets_aside_one_lowest_and_one_highest() {
        assert_eq!(trimmed_mean([1.0, 2.0]), None);
        assert_eq!(trimmed_mean([3.0, 1.0, 2.0]), Some(2.0));
        // 1 and 10 set aside: (2 + 4 + 4) / 3.
        assert_eq!(trimmed_mean([4.0, 10.0, 1.0, 2.0, 4.0]), Some(10.0 / 3.0));
        // Ties: one copy of each extreme only.
        assert_eq!(trimmed_mean([5.0, 5.0, 5.0]), Some(5.0));
        assert_eq!(trimmed_mean([1.0, 1.0, 9.0, 9.0]), Some(5.0));
    }

    #[test]
    fn three_runs_every_resample_is_one_of_the_enumerated_ones() {
        // Runs 10, 20, 40: a resample of 3 draws is a multiset of them, and its trimmed
        // mean is its median. Of the 27 ordered draws, the median is 10 for 7 (three
        // 10s: 1; two 10s and another: 3·2 = 6), 20 for 13 (the rest but the 40s), 40
        // for 7. So the 2.5 % and 97.5 % quantiles of many resamples are 10 and 40, and
        // every resampled result is one of the three.
        let runs = [10.0, 20.0, 40.0];
        let c = classic_ci(&runs, trimmed_mean(runs), &["s", "b"], &how(4000));
        assert_eq!(c.result, Some(20.0));
        assert_eq!(c.ci, Some([10.0, 40.0]));
        assert_eq!(c.n, 3);
        // At 40 % the interval is of the middle 40 % of the draws, all 20 (the 10s hold
        // 7/27 ≈ 26 % < 30 %, the 40s as many).
        let narrow = Resampling {
            level: 0.4,
            ..how(4000)
        };
        let c = classic_ci(&runs, Some(20.0), &["s", "b"], &narrow);
        assert_eq!(c.ci, Some([20.0, 20.0]));
        assert!(c.why.is_none());
    }

    #[test]
    fn equal_runs_give_the_result_and_too_few_say_why() {
        let c = classic_ci(&[7.0; 5], Some(7.0), &["s", "b"], &how(200));
        assert_eq!(c.ci, Some([7.0, 7.0]));
        let two = classic_ci(&[1.0, 2.0], None, &["s", "b"], &how(200));
        assert_eq!(two.ci, None);
        assert_eq!(
            two.why.as_deref(),
            Some("2 runs: the result needs 3 (a lowest and a highest set aside)")
        );
        let none = score_ci(&BTreeMap::new(), None, &["s", "b"], &how(200));
        assert_eq!(none.why.as_deref(), Some("no run × GPU value: no result"));
        let drawn = classic_ci(&[1.0, 2.0, 3.0], Some(2.0), &["s", "b"], &how(0));
        assert_eq!(drawn.why.as_deref(), Some("no resamples drawn"));
    }

    #[test]
    fn the_score_interval_is_the_pooled_mean_bootstrap() {
        // The same stream and strata as the pooled-mean bootstrap of `mean_ci`.
        let groups = BTreeMap::from([(Some(0), vec![1.0, 2.0, 4.0]), (Some(1), vec![8.0, 9.0])]);
        let c = score_ci(&groups, Some(24.0 / 5.0), &["s", "b"], &how(500));
        let m = crate::bootstrap::mean_ci(
            &[vec![1.0, 2.0, 4.0], vec![8.0, 9.0]],
            &["s", "b"],
            500,
            11,
            0.95,
        )
        .unwrap();
        assert_eq!(c.ci, Some(m.ci));
        assert_eq!(c.n, 5);
        let [lo, hi] = c.ci.unwrap();
        assert!(lo <= 4.8 && 4.8 <= hi);
    }
}
