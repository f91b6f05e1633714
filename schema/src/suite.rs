//! Which suite of report files a command reads: one choice, with one error, for every
//! loader (folders through `mlbench_submission::discover`, zips through the analyzer's loader) and
//! for the validator (which reports a mixed submission as a finding instead).

use std::collections::BTreeMap;

/// The file names a report may have, for messages.
const EXPECTED_NAMES: &str = "<suite>_<K>.json or <suite>.<bench>.R<run>.D<device>.<time>.json";

/// Why no suite could be chosen among the report files found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SuiteError {
    /// Nothing named like a report.
    #[error("no report files found (expected {EXPECTED_NAMES})")]
    NoReports,
    /// The suite asked for has no report file.
    #[error("no report files of suite `{wanted}` found {}", present(.wanted, .found))]
    NoneOfSuite {
        /// The suite asked for.
        wanted: String,
        /// The suites present, sorted.
        found: Vec<String>,
    },
    /// Reports of several suites and none asked for.
    #[error("reports of several suites found ({}); choose one", names(.suites))]
    Several {
        /// Each suite present with its number of report files, sorted by name.
        suites: Vec<(String, usize)>,
    },
}

/// What is there instead of `wanted`: the suites present, and the nearest one by edit
/// distance when it is a likely typo.
fn present(wanted: &str, found: &[String]) -> String {
    if found.is_empty() {
        return format!("(expected {EXPECTED_NAMES})");
    }
    let list = format!("(suites present: {})", found.join(", "));
    match nearest(wanted, found) {
        Some(near) => format!("{list}; did you mean `{near}`?"),
        None => list,
    }
}

/// The name of `candidates` nearest to `wanted`, if it is within a third of its length
/// (at least 1) in edits.
pub fn nearest<'a>(wanted: &str, candidates: &'a [String]) -> Option<&'a str> {
    let most = (wanted.chars().count() / 3).max(1);
    candidates
        .iter()
        .map(|c| (edits(wanted, c), c.as_str()))
        .filter(|(d, _)| *d <= most)
        .min()
        .map(|(_, c)| c)
}

/// Edits from `a` to `b`: insertions, deletions and substitutions of one character, and
/// transpositions of two adjacent ones (optimal string alignment: `fsat` is one edit
/// from `fast`).
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

fn names(suites: &[(String, usize)]) -> String {
    suites
        .iter()
        .map(|(s, _)| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

impl SuiteError {
    /// With several suites, the one with the most report files (ties: the first by name),
    /// which the validator validates while it reports the mix.
    pub fn most_common(&self) -> Option<&str> {
        match self {
            SuiteError::Several { suites } => suites
                .iter()
                .max_by_key(|(s, n)| (*n, std::cmp::Reverse(s)))
                .map(|(s, _)| s.as_str()),
            _ => None,
        }
    }
}

/// The suite chosen and the ones passed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteChoice {
    /// The suite read.
    pub suite: String,
    /// Suites of other report files present, sorted.
    pub others: Vec<String>,
}

/// Chooses the suite among the suites of the report files found (one item per file):
/// `wanted` when given (an error when no file has it), else the only one present.
pub fn choose_suite<'a>(
    found: impl IntoIterator<Item = &'a str>,
    wanted: Option<&str>,
) -> Result<SuiteChoice, SuiteError> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for suite in found {
        *counts.entry(suite).or_default() += 1;
    }
    let chosen = match wanted {
        Some(w) if counts.contains_key(w) => w.to_owned(),
        Some(w) => {
            return Err(SuiteError::NoneOfSuite {
                wanted: w.to_owned(),
                found: counts.keys().map(|s| (*s).to_owned()).collect(),
            });
        }
        None => match counts.len() {
            0 => return Err(SuiteError::NoReports),
            1 => counts
                .keys()
                .next()
                .map(|s| (*s).to_owned())
                .unwrap_or_default(),
            _ => {
                return Err(SuiteError::Several {
                    suites: counts.iter().map(|(s, n)| ((*s).to_owned(), *n)).collect(),
                });
            }
        },
    };
    let others = counts
        .keys()
        .filter(|s| **s != chosen)
        .map(|s| (*s).to_owned())
        .collect();
    Ok(SuiteChoice {
        suite: chosen,
        others,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_only_suite_or_the_one_asked_for() {
        let one = choose_suite(["fast", "fast"], None).unwrap();
        assert_eq!(one.suite, "fast");
        assert!(one.others.is_empty());
        let asked = choose_suite(["fast", "baselines", "fast"], Some("baselines")).unwrap();
        assert_eq!(asked.suite, "baselines");
        assert_eq!(asked.others, ["fast"]);
    }

    #[test]
    fn edit_distance_at_hand_worked_values() {
        assert_eq!(edits("fsat", "fast"), 1);
        assert_eq!(edits("", "abc"), 3);
        assert_eq!(edits("kitten", "sitting"), 3);
        assert_eq!(edits("fast", "fast"), 0);
        assert_eq!(edits("ca", "abc"), 3);
        let names = ["baselines".to_owned(), "fast".to_owned()];
        assert_eq!(nearest("fsat", &names), Some("fast"));
        assert_eq!(nearest("baseline", &names), Some("baselines"));
        assert_eq!(nearest("zzzz", &names), None);
    }

    #[test]
    fn one_error_for_each_way_to_fail() {
        assert_eq!(choose_suite([], None), Err(SuiteError::NoReports));
        assert_eq!(
            SuiteError::NoReports.to_string(),
            "no report files found (expected <suite>_<K>.json or <suite>.<bench>.R<run>.D<device>.<time>.json)"
        );
        let none = choose_suite(["fast"], Some("nope")).unwrap_err();
        assert_eq!(
            none,
            SuiteError::NoneOfSuite {
                wanted: "nope".into(),
                found: vec!["fast".into()]
            }
        );
        assert_eq!(
            none.to_string(),
            "no report files of suite `nope` found (suites present: fast)"
        );
        let typo = choose_suite(["fast", "baselines"], Some("fsat")).unwrap_err();
        assert_eq!(
            typo.to_string(),
            "no report files of suite `fsat` found (suites present: baselines, fast); did you mean `fast`?"
        );
        let several = choose_suite(["fast", "baselines", "fast", "x", "x"], None).unwrap_err();
        assert_eq!(
            several.to_string(),
            "reports of several suites found (baselines, fast, x); choose one"
        );
        // The validator's fallback: most files, ties to the first name.
        assert_eq!(several.most_common(), Some("fast"));
        assert_eq!(SuiteError::NoReports.most_common(), None);
    }
}
