//! The rule of `mlbench run --until` (docs/scoring.md, "How many runs"): start from
//! [`MIN_RUNS`] runs, add one at a time, and stop once every bench's anytime-valid
//! half-width is within the precision or the budget is spent; then the record of what
//! was done, for `system.json`. The caller runs the batches; this decides.

use crate::anytime::{Design, MIN_RUNS, RUNS_NEEDED_CAP};
use crate::precision::precision_of_runs;
use crate::samples::SampleSet;
use mlbench_results::report::Precision;
use mlbench_schema::stopping::{
    ANYTIME_PRECISION, LAI_T_MIXTURE, STOPPED_MAX_RUNS, STOPPED_PRECISION, StoppingRule,
};
use mlbench_schema::targets::TargetsError;
use mlbench_schema::{Scoring, TargetTable};
use mlbench_submission::discover::{DiscoverError, discover};
use std::path::Path;

/// Why the rule cannot be followed as asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UntilError {
    /// A budget below the runs the rule starts from.
    #[error("a budget of {0} runs is below the {MIN_RUNS} the rule starts from")]
    BudgetTooSmall(u32),
    /// No run count up to the cap reaches the precision at the expected spread.
    #[error("±{}% with an expected CV of {}% needs more than {RUNS_NEEDED_CAP} runs: ask for less precision", .precision * 100.0, .expected_cv * 100.0)]
    Unreachable {
        /// The precision asked for.
        precision: f64,
        /// The CV expected.
        expected_cv: f64,
    },
}

/// Why the runs so far cannot be judged: their reports cannot be found or listed.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    /// The report files could not be found or listed.
    #[error(transparent)]
    Discover(#[from] DiscoverError),
    /// The built-in targets do not read (a bug).
    #[error(transparent)]
    Targets(#[from] TargetsError),
}

mlbench_schema::classify_all!(Input: JudgeError);

/// The design a report judges run counts by when `precision` or `expected_cv` is asked
/// for (the other one the default: ±1 %, CV 2 %); `None` when neither is (the
/// submission's recorded rule then, or the defaults: [`crate::document::default_design`]).
pub fn asked_design(
    precision: Option<f64>,
    expected_cv: Option<f64>,
) -> Result<Option<Design>, UntilError> {
    if precision.is_none() && expected_cv.is_none() {
        return Ok(None);
    }
    let (precision, cv) = (precision.unwrap_or(0.01), expected_cv.unwrap_or(0.02));
    Ok(Some(Until::new(precision, cv, u32::MAX)?.design))
}

/// The state of a `--until` run.
#[derive(Debug, Clone)]
pub struct Until {
    design: Design,
    max_runs: u32,
    runs: u32,
    failed_runs: u32,
    reached: bool,
}

impl Until {
    /// The rule for ±`precision` at 95 %, tuned for `expected_cv`, within `max_runs`.
    pub fn new(precision: f64, expected_cv: f64, max_runs: u32) -> Result<Until, UntilError> {
        if max_runs < MIN_RUNS {
            return Err(UntilError::BudgetTooSmall(max_runs));
        }
        let design = Design::plan(0.95, precision, expected_cv).ok_or(UntilError::Unreachable {
            precision,
            expected_cv,
        })?;
        Ok(Until {
            design,
            max_runs,
            runs: 0,
            failed_runs: 0,
            reached: false,
        })
    }

    /// The sequence's constants.
    pub fn design(&self) -> &Design {
        &self.design
    }

    /// The runs done so far.
    pub fn runs(&self) -> u32 {
        self.runs
    }

    /// How many runs to add next: [`MIN_RUNS`] first, then one; `None` once stopped.
    pub fn next_batch(&self) -> Option<u32> {
        if self.reached || self.runs >= self.max_runs {
            None
        } else if self.runs == 0 {
            Some(MIN_RUNS)
        } else {
            Some(1)
        }
    }

    /// After a batch of `runs` runs (`failed_runs` of them with a failure), with every
    /// sample so far: the precision the rule judges, which decides [`Self::next_batch`].
    pub fn after_batch(&mut self, runs: u32, failed_runs: u32, set: &SampleSet) -> Precision {
        self.runs += runs;
        self.failed_runs += failed_runs;
        let p = precision_of_runs(
            set,
            &self.design,
            crate::document::CI_RESAMPLES,
            crate::grid::DEFAULT_SEED,
        );
        self.reached = p.overall.anytime_reached;
        p
    }

    /// [`Self::after_batch`] judging the reports of `suite` in the folder `out` (every run
    /// so far: `mlbench run --until` writes its batches there).
    pub fn after_batch_in(
        &mut self,
        runs: u32,
        failed_runs: u32,
        out: &Path,
        suite: &str,
    ) -> Result<Precision, JudgeError> {
        // Any table serves: the rule judges the runs' spread, never a target.
        let targets = TargetTable::builtin(Scoring::Classic, "RTX")?;
        let discovery = discover(std::slice::from_ref(&out.to_path_buf()), Some(suite))?;
        let set = crate::load_samples(discovery, &targets).set;
        Ok(self.after_batch(runs, failed_runs, &set))
    }

    /// The rule in a line, as a run says it before its first batch.
    pub fn describe(&self) -> String {
        let d = &self.design;
        format!(
            "until ±{}%: Lai t-mixture, c = {:.4} (expected CV {}%), {MIN_RUNS} to {} runs",
            d.precision * 100.0,
            d.mixture,
            d.expected_cv * 100.0,
            self.max_runs
        )
    }

    /// What was done, for `system.json`.
    pub fn record(&self) -> StoppingRule {
        StoppingRule {
            rule: ANYTIME_PRECISION.into(),
            method: LAI_T_MIXTURE.into(),
            level: self.design.level,
            precision: self.design.precision,
            expected_cv: self.design.expected_cv,
            mixture: self.design.mixture,
            min_runs: MIN_RUNS,
            max_runs: self.max_runs,
            runs: self.runs,
            stopped: if self.reached {
                STOPPED_PRECISION
            } else {
                STOPPED_MAX_RUNS
            }
            .into(),
            failed_runs: self.failed_runs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_start_at_three_then_one_until_the_budget() {
        let mut until = Until::new(0.01, 0.02, 5).unwrap();
        assert_eq!(until.next_batch(), Some(3));
        let targets =
            mlbench_schema::TargetTable::builtin(mlbench_schema::Scoring::Classic, "RTX").unwrap();
        let empty = SampleSet::assemble("fast", &targets, Vec::new(), |_, _| None);
        until.after_batch(3, 1, &empty);
        assert_eq!(until.next_batch(), Some(1));
        until.after_batch(1, 0, &empty);
        until.after_batch(1, 0, &empty);
        assert_eq!(until.next_batch(), None);
        let r = until.record();
        assert_eq!(
            (r.runs, r.failed_runs, r.max_runs, r.min_runs),
            (5, 1, 5, 3)
        );
        assert_eq!(r.stopped, STOPPED_MAX_RUNS);
        assert_eq!(r.mixture, until.design().mixture);
        assert_eq!(
            Until::new(0.01, 0.02, 2).unwrap_err(),
            UntilError::BudgetTooSmall(2)
        );
        assert!(matches!(
            Until::new(1e-9, 0.5, 10),
            Err(UntilError::Unreachable { .. })
        ));
    }

    #[test]
    fn a_design_asked_for_takes_the_default_of_what_is_not() {
        assert_eq!(asked_design(None, None), Ok(None));
        let d = asked_design(Some(0.05), None).unwrap().unwrap();
        assert_eq!((d.level, d.precision, d.expected_cv), (0.95, 0.05, 0.02));
        let d = asked_design(None, Some(0.1)).unwrap().unwrap();
        assert_eq!((d.precision, d.expected_cv), (0.01, 0.1));
        assert!(matches!(
            asked_design(Some(1e-9), Some(0.5)),
            Err(UntilError::Unreachable { .. })
        ));
    }

    #[test]
    fn the_rule_is_said_in_a_line_and_judges_a_folder_of_reports() {
        let mut until = Until::new(0.01, 0.02, 7).unwrap();
        let c = until.design().mixture;
        assert_eq!(
            until.describe(),
            format!("until ±1%: Lai t-mixture, c = {c:.4} (expected CV 2%), 3 to 7 runs")
        );
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none");
        assert!(matches!(
            until.after_batch_in(3, 0, &missing, "fast"),
            Err(JudgeError::Discover(_))
        ));
    }
}
