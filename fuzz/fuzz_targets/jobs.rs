//! A jobs file of any bytes: parsed without a panic; Python's JSON of what parses reads
//! back to the same text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlbench_schema::jobs::JobsFile;
use mlbench_schema::pyjson::{parse, to_python_json};

fuzz_target!(|data: &[u8]| {
    let _ = JobsFile::parse("fast.json", data);
    if let Ok(value) = parse(data) {
        let text = to_python_json(&value);
        let back = parse(text.as_bytes()).expect("what mlbench writes, it reads");
        assert_eq!(to_python_json(&back), text);
    }
});
