//! A targets file of any text, as TOML and as CSV, for both scorings: read without a
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlbench_schema::{Scoring, TargetTable};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for scoring in [Scoring::Classic, Scoring::Score] {
        if let Ok(t) = TargetTable::from_csv("t.csv", text, scoring, "RTX") {
            let _ = t.warnings();
        }
        let _ = TargetTable::from_toml("t.toml", text, scoring, "RTX");
    }
});
