//! How many runs: the fixed-n interval and the runs each kind of interval needs for a
//! stated precision, beside the anytime-valid sequence of [`mlbench_schema::stopping`]
//! (docs/scoring.md, "How many runs").

pub use mlbench_schema::stopping::{
    Design, LogSummary, MIN_RUNS, RUNS_NEEDED_CAP, first_reaching, lai_factor, lai_k, reached,
};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The fixed-n t-interval's half-width ÷ s at `runs`: t_{1−α/2, n−1} / √n. `None` below
/// two runs.
pub fn t_factor(runs: u32, alpha: f64) -> Option<f64> {
    if runs < 2 {
        return None;
    }
    let n = f64::from(runs);
    let t = StudentsT::new(0.0, 1.0, n - 1.0).ok()?;
    Some(t.inverse_cdf(1.0 - alpha / 2.0) / n.sqrt())
}

/// The fewest runs (at least 2, at most [`RUNS_NEEDED_CAP`]) at which `sd · factor(n)`
/// is within `goal`; `None` beyond the cap. With no spread (sd 0) it is the first count
/// whose interval is bounded.
pub fn runs_needed(sd: f64, goal: f64, factor: impl Fn(u32) -> Option<f64>) -> Option<u32> {
    first_reaching(2, |n| factor(n).is_some_and(|f| sd * f <= goal))
}

/// The fixed-n t half-width in logs of `summary` (`None` below two runs).
pub fn fixed_half_width(summary: &LogSummary, alpha: f64) -> Option<f64> {
    Some(summary.sd()? * t_factor(summary.runs, alpha)?)
}

/// A fraction given as `1%` or `0.01`, above 0 and below 1 (precisions and CVs).
pub fn parse_fraction(text: &str) -> Result<f64, String> {
    let (number, scale) = match text.trim().strip_suffix('%') {
        Some(pct) => (pct.trim(), 0.01),
        None => (text.trim(), 1.0),
    };
    let value = number
        .parse::<f64>()
        .map_err(|_| format!("`{text}` is not a number or a percentage such as 1%"))?
        * scale;
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        Err(format!(
            "`{text}` must be above 0 and below 100% (1% or 0.01)"
        ))
    }
}

#[cfg(test)]
mod tests;
