//! A telemetry file of any bytes: read whole and in one pass (the validator's telemetry
//! rules) without a panic; a file the reader refuses is `telemetry.unreadable` at the
//! rules, a file it reads is never that for the same reason, and every finding names the
//! file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlbench_schema::telemetry::parse;
use mlbench_validator::rules::telemetry::check_file;
use std::path::Path;

const PATH: &str = "output0/telemetry/convnet.0.jsonl";

fuzz_target!(|data: &[u8]| {
    let whole = parse(Path::new(PATH), data);
    let check = check_file(PATH, data);
    assert!(check.findings.iter().all(|f| f.file.as_deref() == Some(PATH)));
    let unreadable = check.findings.iter().any(|f| f.rule == "telemetry.unreadable");
    if whole.is_err() {
        assert!(unreadable, "{whole:?}");
    }
});
