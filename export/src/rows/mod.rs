//! Cells and rows shared by the formats that draw tables (terminal, Markdown, HTML, and
//! CSV where a table has both forms): the number formats for people and each model's
//! tables. Built from the models' figures and verdicts; nothing is recomputed.

pub mod archive;
pub mod batch_sweep;
pub mod benches;
pub mod energy;
pub mod findings;
pub mod grid;
pub mod history;
pub mod report;
pub mod scaling;
pub mod system;

/// A table: a title (may be empty), a header and rows of cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Rows {
    /// Said above the table.
    pub title: String,
    /// Column names.
    pub header: Vec<String>,
    /// Cells, one vector per row.
    pub rows: Vec<Vec<String>>,
}

impl Rows {
    /// A table from its parts.
    pub fn new(title: impl Into<String>, header: &[&str], rows: Vec<Vec<String>>) -> Rows {
        Rows {
            title: title.into(),
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows,
        }
    }
}

/// The form a table's cells take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// For people: figures rounded for reading, `—` for none, PASS or FAIL (table,
    /// Markdown, HTML).
    People,
    /// Data: every figure at full precision, empty when missing, `true` or `false` (CSV).
    Data,
}

/// A figure as data: full precision, empty when missing.
pub fn raw(x: Option<f64>) -> String {
    x.map_or_else(String::new, |v| format!("{v}"))
}

/// A measured value for people: 4 significant figures at least, no exponent, `—` for none.
pub fn num(x: Option<f64>) -> String {
    match x {
        None => "—".into(),
        Some(v) if !v.is_finite() => format!("{v}"),
        Some(v) => {
            let a = v.abs();
            if a >= 100.0 || a == 0.0 {
                format!("{v:.2}")
            } else if a >= 1.0 {
                format!("{v:.3}")
            } else {
                // Enough decimals for four significant figures.
                let decimals = (3 - a.log10().floor() as i32).clamp(4, 12) as usize;
                format!("{v:.decimals$}")
            }
        }
    }
}

/// A fraction as a percentage, e.g. `0.0075` → `0.75%`.
pub fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "—".into(), |v| format!("{:.2}%", v * 100.0))
}

/// A signed fraction as a percentage, e.g. `0.37` → `+37.00%`.
pub fn signed_pct(x: Option<f64>) -> String {
    x.map_or_else(|| "—".into(), |v| format!("{:+.2}%", v * 100.0))
}

/// PASS or FAIL.
pub fn verdict(pass: bool) -> &'static str {
    if pass { "PASS" } else { "FAIL" }
}

/// `n word` or `n words`.
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_four_significant_figures_without_exponents() {
        assert_eq!(num(Some(2021.516)), "2021.52");
        assert_eq!(num(Some(5.4701)), "5.470");
        assert_eq!(num(Some(0.012346)), "0.01235");
        assert_eq!(num(Some(0.0)), "0.00");
        assert_eq!(num(None), "—");
        assert_eq!(num(Some(f64::NAN)), "NaN");
        assert_eq!(pct(Some(0.0075)), "0.75%");
        assert_eq!(signed_pct(Some(0.37)), "+37.00%");
        assert_eq!(signed_pct(Some(-0.002)), "-0.20%");
    }
}
