//! What counts as a measurement: the throughput (`train_item.avg`) and the timings of the
//! `train` stage are finite, not negative, and at most [`MEASUREMENT_LIMIT`].
//!
//! An entry whose figure is none of these ([`unreadable`]) cannot be scored: the reader
//! sets it aside as it does an entry of the wrong types, naming the file, the entry, the
//! field and the bench. A timing of zero or less in any timing stage is a measurement of
//! nothing ([`not_measured`]): the validator's `work.not-a-measurement`. The suite's own
//! empty stage (fewer observations than its `StatStream` drops: avg 0, min `Infinity`,
//! max `-Infinity`, docs/suite.md#statstream) is no figure at all, so never unreadable;
//! it is what scaling's entries hold (their `train_item` is an efficiency in `%`), so
//! theirs is no finding either.

use crate::entry::ReportEntry;
use crate::value::{Object, Value};

/// The largest figure taken as a measurement: 10¹² items a second, or seconds. A million
/// times the fastest throughput of the suite's benches, and 30,000 years: a larger figure
/// is an edit or a corruption, and summed over runs it would swamp every other one.
pub const MEASUREMENT_LIMIT: f64 = 1e12;

/// A figure of an entry that is not a measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct NotAMeasurement {
    /// The field: `train_item.avg`, `train.min`…
    pub field: String,
    /// The value read.
    pub value: f64,
    /// Why it is not one: `not a finite number`, `negative`, `over the limit of 1e12`,
    /// `zero: the stage measured nothing`.
    pub why: &'static str,
}

impl NotAMeasurement {
    /// What is wrong, with the bench when the entry names one: ``bench `vae`:
    /// train_item.avg 1e308 is not a measurement: over the limit of 1e12``.
    pub fn message(&self, bench: Option<&str>) -> String {
        let bench = bench.map_or_else(String::new, |b| format!("bench `{b}`: "));
        format!(
            "{bench}{} {} is not a measurement: {}",
            self.field,
            number_text(self.value),
            self.why
        )
    }
}

/// A figure as Python's JSON writes the non-finite ones (`NaN`, `Infinity`,
/// `-Infinity`); a finite one as written when short (`-1.5`), else in exponent form
/// (`1e308`).
fn number_text(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.is_infinite() {
        if value > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        let plain = value.to_string();
        if plain.len() <= 16 {
            plain
        } else {
            format!("{value:e}")
        }
    }
}

/// Why `value` is no measurement at all, if it is none.
fn unreadable_why(value: f64) -> Option<&'static str> {
    if !value.is_finite() {
        Some("not a finite number")
    } else if value < 0.0 {
        Some("negative")
    } else if value > MEASUREMENT_LIMIT {
        Some("over the limit of 1e12")
    } else {
        None
    }
}

/// A number of a stage object.
fn number(stage: &Object, key: &str) -> Option<f64> {
    stage.get(key)?.as_f64()
}

/// Whether a timing stage is the suite's empty one: avg 0, min `Infinity`, max
/// `-Infinity` (no observation kept).
fn is_empty_stage(stage: &Object) -> bool {
    number(stage, "avg") == Some(0.0)
        && number(stage, "min") == Some(f64::INFINITY)
        && number(stage, "max") == Some(f64::NEG_INFINITY)
}

/// The figures of `entry` that are no measurement: `train_item.avg`, and `train`'s
/// `avg`, `min` and `max` (but in the suite's empty stage). Empty for every entry the
/// suite writes; such an entry is unreadable.
pub fn unreadable(entry: &ReportEntry) -> Vec<NotAMeasurement> {
    let mut out = Vec::new();
    let mut check = |field: &str, value: Option<f64>| {
        if let Some(value) = value
            && let Some(why) = unreadable_why(value)
        {
            out.push(NotAMeasurement {
                field: field.to_owned(),
                value,
                why,
            });
        }
    };
    // With the suite's empty `train` stage, `train_item` divides by zero: an entry
    // without a figure (as a bench that failed early writes), not an absurd one.
    let train = entry.get("train").and_then(Value::as_object);
    let empty = train.is_some_and(is_empty_stage);
    let throughput = entry.train_item_avg();
    check(
        "train_item.avg",
        throughput.filter(|v| !(empty && v.is_infinite())),
    );
    if let Some(train) = train
        && !empty
    {
        for key in ["avg", "min", "max"] {
            check(&format!("train.{key}"), number(train, key));
        }
    }
    out
}

/// The timings of zero (or less) in `entry`'s timing stages (objects with `unit: "s"`
/// and an `avg`), each stage's first: a stage that measured nothing. The suite's empty
/// stage is one, except in an entry of efficiencies (scaling's, `train_item.unit` `%`),
/// whose `train` stream is empty by design.
pub fn not_measured(entry: &ReportEntry) -> Vec<NotAMeasurement> {
    let efficiency = entry
        .get("train_item")
        .and_then(Value::as_object)
        .and_then(|t| t.get("unit"))
        .and_then(Value::as_str)
        == Some("%");
    let mut out = Vec::new();
    for (name, value) in entry.fields.sorted() {
        let Some(stage) = value.as_object() else {
            continue;
        };
        let timing = stage.get("unit").and_then(Value::as_str) == Some("s");
        if !timing || !stage.contains_key("avg") || (efficiency && is_empty_stage(stage)) {
            continue;
        }
        let zero = ["avg", "min", "max"]
            .into_iter()
            .find_map(|key| Some((key, number(stage, key)?)).filter(|(_, v)| *v <= 0.0));
        if let Some((key, value)) = zero {
            out.push(NotAMeasurement {
                field: format!("{name}.{key}"),
                value,
                why: "zero or less: the stage measured nothing",
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyjson::parse;

    fn entry(text: &str) -> ReportEntry {
        ReportEntry::new(parse(text.as_bytes()).unwrap().as_object().unwrap().clone())
    }

    fn fields(found: &[NotAMeasurement]) -> Vec<&str> {
        found.iter().map(|n| n.field.as_str()).collect()
    }

    #[test]
    fn absurd_figures_are_unreadable_and_ordinary_ones_not() {
        let ok = entry(
            r#"{"train_item": {"avg": 141.2, "unit": "items/sec"}, "train": {"avg": 9.06, "min": 9.02, "max": 9.12, "unit": "s"}}"#,
        );
        assert!(unreadable(&ok).is_empty());
        assert!(not_measured(&ok).is_empty());
        let huge = entry(r#"{"name": "toy_reg", "train_item": {"avg": 1e308}}"#);
        let found = unreadable(&huge);
        assert_eq!(fields(&found), ["train_item.avg"]);
        assert_eq!(
            found[0].message(huge.name()),
            "bench `toy_reg`: train_item.avg 1e308 is not a measurement: over the limit of 1e12"
        );
        // 1e309 overflows to Infinity as Python reads it.
        let inf = entry(
            r#"{"train_item": {"avg": 1e309}, "train": {"avg": -1.5, "min": NaN, "max": 2, "unit": "s"}}"#,
        );
        let found = unreadable(&inf);
        assert_eq!(fields(&found), ["train_item.avg", "train.avg", "train.min"]);
        assert_eq!(
            found[0].message(None),
            "train_item.avg Infinity is not a measurement: not a finite number"
        );
        assert_eq!(found[1].why, "negative");
        // The limit itself is a measurement; the next float above it is not.
        let at = entry(r#"{"train_item": {"avg": 1e12}}"#);
        assert!(unreadable(&at).is_empty());
        let above = entry(r#"{"train_item": {"avg": 1000000000000.0002}}"#);
        assert_eq!(fields(&unreadable(&above)), ["train_item.avg"]);
    }

    #[test]
    fn the_suites_empty_stage_is_no_figure_and_only_scaling_may_have_one() {
        let empty = r#"{"avg": 0.0, "count": 1, "min": Infinity, "max": -Infinity, "sd": 0.0, "unit": "s"}"#;
        let scaling = entry(&format!(
            r#"{{"train_item": {{"avg": 0.98, "unit": "%"}}, "train": {empty}}}"#
        ));
        assert!(unreadable(&scaling).is_empty());
        assert!(not_measured(&scaling).is_empty());
        let other = entry(&format!(
            r#"{{"train_item": {{"avg": 98.0, "unit": "items/sec"}}, "train": {empty}}}"#
        ));
        assert!(unreadable(&other).is_empty());
        assert_eq!(fields(&not_measured(&other)), ["train.avg"]);
        // The throughput derived from the empty stage divides by zero, as the suite
        // writes it for a bench that kept no observation: no figure, not an absurd one;
        // beside a stage that measured something it is one.
        let divided = entry(&format!(
            r#"{{"train_item": {{"avg": Infinity, "unit": "items/sec"}}, "train": {empty}}}"#
        ));
        assert!(unreadable(&divided).is_empty());
        let measured = r#"{"avg": 2.0, "min": 1.0, "max": 3.0, "unit": "s"}"#;
        let absurd = entry(&format!(
            r#"{{"train_item": {{"avg": Infinity, "unit": "items/sec"}}, "train": {measured}}}"#
        ));
        assert_eq!(fields(&unreadable(&absurd)), ["train_item.avg"]);
    }

    #[test]
    fn zero_timings_in_any_stage_are_not_measured() {
        let zero = entry(
            r#"{"train_item": {"avg": 5.0, "unit": "items/sec"}, "loading": {"avg": 1.0, "min": 0.0, "max": 2.0, "unit": "s"}, "train": {"avg": 0.0, "min": 0.0, "max": 0.0, "unit": "s"}}"#,
        );
        assert!(unreadable(&zero).is_empty());
        let found = not_measured(&zero);
        assert_eq!(fields(&found), ["loading.min", "train.avg"]);
        assert_eq!(
            found[1].message(Some("vae")),
            "bench `vae`: train.avg 0 is not a measurement: zero or less: the stage measured nothing"
        );
        // An object that is no timing stage is not looked at.
        let other = entry(r#"{"metrics": {"avg": 0.0, "unit": "loss"}}"#);
        assert!(not_measured(&other).is_empty());
    }
}
