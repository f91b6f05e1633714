//! The stopping rule of `mlbench run --until` (docs/scoring.md, "How many runs"): its
//! record in `system.json` and `SUBMISSION.json`, and the anytime-valid confidence
//! sequence it stops on. The arithmetic lives here, beside the record, so that `validate`
//! checks a submission's claim without the analyzer.
//!
//! The sequence is Lai's t-confidence sequence (Lai 1976, "On confidence sequences",
//! Ann. Statist. 4(2):265–280), as Wang & Ramdas (2023, "Anytime-valid t-tests and
//! confidence sequences for Gaussian means with unknown variance", arXiv:2310.03722)
//! present it: for normal data of unknown mean μ and variance, the likelihood ratio of
//! the scale-invariant observations, mixed over the standardised effect θ = (μ' − μ)/σ
//! with θ ~ N(0, 1/c), is
//!
//! ```text
//! M_t(μ) = sqrt(c / (t + c)) · (1 − B² / ((t + c) · A))^(−t/2),
//!     B = Σ (x_i − μ),  A = Σ (x_i − μ)²,
//! ```
//!
//! a non-negative martingale with M_1 = 1 under μ; by Ville's inequality the sets
//! {μ : M_t(μ) < 1/α} cover μ at every t at once with probability ≥ 1 − α, so they stay
//! valid however the runs are stopped. Solved for μ they are the intervals
//! `x̄_t ± sqrt(K · S / (t · (t − K)))` with `S = Σ (x_i − x̄_t)²` and
//! `K = (t + c) · (1 − (α² c / (t + c))^(1/t))`, unbounded while K ≥ t.
//!
//! Everything here works on the logarithm of throughput, so a half-width reads as a
//! relative error: ±h in logs is the interval [m·e^−h, m·e^h] around the geometric mean m.

use serde::{Deserialize, Serialize};

/// The most runs a "runs needed" figure counts to; beyond it the answer is "more".
pub const RUNS_NEEDED_CAP: u32 = 100_000;

/// The fewest runs `run --until` starts from, and the fewest at which a rule may stop.
pub const MIN_RUNS: u32 = 3;

/// The sequence's constants, fixed before any data from the stated level, precision and
/// expected spread, never tuned on the runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Design {
    /// Confidence level, e.g. 0.95 (α = 1 − level).
    pub level: f64,
    /// The target half-width, relative to the mean (0.01 for ±1 %).
    pub precision: f64,
    /// The spread expected between runs (coefficient of variation, 0.02 for 2 %).
    pub expected_cv: f64,
    /// The mixture's precision c (θ ~ N(0, 1/c)), chosen to make the interval narrowest
    /// at `planned_runs`.
    pub mixture: f64,
    /// The runs at which the expected spread reaches the precision, the best c chosen.
    pub planned_runs: u32,
}

impl Design {
    /// The design for a level, a precision and an expected CV: the smallest run count n at
    /// which `expected_cv · factor_c(n) ≤ ln(1 + precision)` for the best c at n, and that c.
    /// `None` when no count up to [`RUNS_NEEDED_CAP`] reaches it or an input is out of range.
    pub fn plan(level: f64, precision: f64, expected_cv: f64) -> Option<Design> {
        let valid = level > 0.0 && level < 1.0 && precision > 0.0 && expected_cv > 0.0;
        if !(valid && precision.is_finite() && expected_cv.is_finite()) {
            return None;
        }
        let alpha = 1.0 - level;
        let goal = (1.0 + precision).ln() / expected_cv;
        // The best factor falls with n, so the first n that reaches the goal is found by
        // doubling, then bisection.
        let planned = first_reaching(MIN_RUNS, |n| best_mixture(n, alpha).1 <= goal)?;
        Some(Design {
            level,
            precision,
            expected_cv,
            mixture: best_mixture(planned, alpha).0,
            planned_runs: planned,
        })
    }

    /// α = 1 − level.
    pub fn alpha(&self) -> f64 {
        1.0 - self.level
    }

    /// The half-width in logs that meets the precision: ln(1 + precision).
    pub fn goal(&self) -> f64 {
        (1.0 + self.precision).ln()
    }
}

/// The first count from `start` (at most [`RUNS_NEEDED_CAP`]) for which `reaches` holds,
/// `reaches` being false below some count and true from it on: doubling to a count that
/// reaches, then bisection. `None` when even the cap does not reach.
pub fn first_reaching(start: u32, reaches: impl Fn(u32) -> bool) -> Option<u32> {
    let mut high = start;
    while !reaches(high) {
        if high >= RUNS_NEEDED_CAP {
            return None;
        }
        high = (high * 2).min(RUNS_NEEDED_CAP);
    }
    let mut low = start - 1; // the answer is above it (or is `start`)
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if reaches(mid) {
            high = mid;
        } else {
            low = mid;
        }
    }
    Some(high)
}

/// The c that makes [`lai_factor`] smallest at `runs`, and that factor (golden-section
/// search on ln c; the factor is unimodal in c).
fn best_mixture(runs: u32, alpha: f64) -> (f64, f64) {
    let f = |ln_c: f64| lai_factor(runs, ln_c.exp(), alpha).unwrap_or(f64::INFINITY);
    let (mut a, mut b) = ((1e-6f64).ln(), (1e6f64).ln());
    let phi = (5f64.sqrt() - 1.0) / 2.0;
    let (mut x1, mut x2) = (b - phi * (b - a), a + phi * (b - a));
    let (mut f1, mut f2) = (f(x1), f(x2));
    for _ in 0..80 {
        if f1 <= f2 {
            (b, x2, f2) = (x2, x1, f1);
            x1 = b - phi * (b - a);
            f1 = f(x1);
        } else {
            (a, x1, f1) = (x1, x2, f2);
            x2 = a + phi * (b - a);
            f2 = f(x2);
        }
    }
    let ln_c = (a + b) / 2.0;
    (ln_c.exp(), f(ln_c))
}

/// K of the sequence at `runs` (see the module's text); computed as −expm1 so that
/// 1 − q keeps its digits when q is close to 1.
pub fn lai_k(runs: u32, mixture: f64, alpha: f64) -> f64 {
    let t = f64::from(runs);
    let log_q = (alpha * alpha * mixture / (t + mixture)).ln() / t;
    (t + mixture) * -log_q.exp_m1()
}

/// The sequence's half-width ÷ the sample standard deviation s at `runs`:
/// `sqrt((t − 1) · K / (t · (t − K)))`, so that half-width = s · factor. `None` while
/// the interval is unbounded (K ≥ t, always at t = 1).
pub fn lai_factor(runs: u32, mixture: f64, alpha: f64) -> Option<f64> {
    if runs < 2 {
        return None;
    }
    let t = f64::from(runs);
    let k = lai_k(runs, mixture, alpha);
    (k < t).then(|| ((t - 1.0) * k / (t * (t - k))).sqrt())
}

/// A run's value of each bench: the mean of its usable throughputs over the run's devices,
/// by bench and run index. `usable` are (bench, run, throughput) of the entries that count
/// (failures and values set aside left out by the caller); non-finite or non-positive
/// throughputs are not values. The one definition of `report`'s precision, `run --until`
/// and `validate`'s `runs.stopping`.
pub fn run_means<'a>(
    usable: impl IntoIterator<Item = (&'a str, u32, f64)>,
) -> std::collections::BTreeMap<String, std::collections::BTreeMap<u32, f64>> {
    let mut sums: std::collections::BTreeMap<&str, std::collections::BTreeMap<u32, (f64, u32)>> =
        Default::default();
    for (bench, run, value) in usable {
        if value.is_finite() && value > 0.0 {
            let slot = sums.entry(bench).or_default().entry(run).or_default();
            (slot.0, slot.1) = (slot.0 + value, slot.1 + 1);
        }
    }
    sums.into_iter()
        .map(|(bench, runs)| {
            let means = runs
                .into_iter()
                .map(|(r, (sum, n))| (r, sum / f64::from(n)))
                .collect();
            (bench.to_owned(), means)
        })
        .collect()
}

/// Mean and spread of a run's log throughputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogSummary {
    /// Runs.
    pub runs: u32,
    /// Mean of the logs (the log of the geometric mean).
    pub mean: f64,
    /// Σ (x − x̄)² of the logs.
    pub sum_sq: f64,
    /// The geometric mean, exp(`mean`) computed so that equal values give that value.
    pub geometric_mean: f64,
}

impl LogSummary {
    /// The summary of positive, finite values (others are the caller's to remove); `None`
    /// when there is none.
    pub fn of(values: &[f64]) -> Option<LogSummary> {
        if values.is_empty() {
            return None;
        }
        // Shifted by the first log: equal values give exactly zero spread, and the sums
        // keep their digits when the logs are large next to their differences.
        let shift = values[0].ln();
        let n = values.len() as f64;
        let offset = values.iter().map(|v| v.ln() - shift).sum::<f64>() / n;
        let sum_sq = values
            .iter()
            .map(|v| (v.ln() - shift - offset).powi(2))
            .sum();
        Some(LogSummary {
            runs: u32::try_from(values.len()).unwrap_or(u32::MAX),
            mean: shift + offset,
            sum_sq,
            geometric_mean: values[0] * offset.exp(),
        })
    }

    /// The sample standard deviation of the logs (`None` below two runs).
    pub fn sd(&self) -> Option<f64> {
        (self.runs >= 2).then(|| (self.sum_sq / f64::from(self.runs - 1)).sqrt())
    }

    /// The anytime-valid half-width in logs (`None`: unbounded yet).
    pub fn anytime_half_width(&self, design: &Design) -> Option<f64> {
        Some(self.sd()? * lai_factor(self.runs, design.mixture, design.alpha())?)
    }
}

/// Whether a sequence may stop at `runs` with this half-width (in logs): at least
/// [`MIN_RUNS`] runs and a half-width within the design's goal.
pub fn reached(half_width: Option<f64>, runs: u32, design: &Design) -> bool {
    runs >= MIN_RUNS && half_width.is_some_and(|h| h <= design.goal())
}

/// What `mlbench run --until` did, as `system.json` records it (and `SUBMISSION.json`
/// through the systems it carries): enough to check the claim against the data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoppingRule {
    /// `anytime-precision`: stop once every scored bench's anytime-valid half-width is
    /// within `precision`, or after `max_runs`.
    pub rule: String,
    /// The sequence: `lai-t-mixture`.
    pub method: String,
    /// The confidence level.
    pub level: f64,
    /// The target half-width, relative (0.01: ±1 %).
    pub precision: f64,
    /// The CV the sequence was tuned for.
    pub expected_cv: f64,
    /// The mixture's constant c.
    pub mixture: f64,
    /// The runs it started from.
    pub min_runs: u32,
    /// The budget.
    pub max_runs: u32,
    /// The runs it took.
    pub runs: u32,
    /// `precision-reached` or `max-runs`.
    pub stopped: String,
    /// Runs that failed some bench (counted in `runs`).
    #[serde(default)]
    pub failed_runs: u32,
}

/// [`StoppingRule::rule`] of `run --until`.
pub const ANYTIME_PRECISION: &str = "anytime-precision";
/// [`StoppingRule::method`]: Lai's t-confidence sequence.
pub const LAI_T_MIXTURE: &str = "lai-t-mixture";
/// [`StoppingRule::stopped`] when the precision was reached.
pub const STOPPED_PRECISION: &str = "precision-reached";
/// [`StoppingRule::stopped`] when the budget ran out.
pub const STOPPED_MAX_RUNS: &str = "max-runs";

impl StoppingRule {
    /// The design the record states.
    pub fn design(&self) -> Design {
        Design {
            level: self.level,
            precision: self.precision,
            expected_cv: self.expected_cv,
            mixture: self.mixture,
            planned_runs: 0,
        }
    }
}
