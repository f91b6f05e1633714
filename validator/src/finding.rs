//! Findings of the catalogue's rules: a [`Finding`] (plain data, `mlbench_results`)
//! made with its rule's catalogued severity and hint.

use mlbench_results::validation::{Finding, Severity};

/// A finding of `rule` with its catalogued severity and hint; refine with the setters.
///
/// # Panics
/// Never for the ids in [`crate::rules::RULES`]; an unknown id is a programming error
/// caught by the unit test that walks every rule.
pub fn catalogued(
    rule: &'static str,
    expected: impl Into<String>,
    found: impl Into<String>,
) -> Finding {
    let info = crate::rules::rule(rule);
    Finding {
        rule,
        severity: info.map_or(Severity::Error, |r| r.severity),
        file: None,
        entry: None,
        field: None,
        expected: expected.into(),
        found: found.into(),
        hint: info.map_or_else(String::new, |r| r.hint.to_owned()),
    }
}

/// The finding a container fact of the submission stands for (its rule's severity and
/// hint from the catalogue), naming its file where it has one.
pub fn of_fact(fact: &mlbench_submission::Fact) -> Finding {
    let finding = catalogued(fact.rule, fact.expected.clone(), fact.found.clone());
    match &fact.file {
        Some(file) => finding.file(file.clone()),
        None => finding,
    }
}
