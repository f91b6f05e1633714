//! A jobs file of any bytes: parsed without a panic; what parses makes at most
//! `MAX_CONFIGS` configurations, each job as many as it counts; Python's JSON of what
//! parses reads back to the same text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlbench_schema::jobs::{JobsFile, MAX_CONFIGS};
use mlbench_schema::pyjson::{parse, to_python_json};

fuzz_target!(|data: &[u8]| {
    if let Ok(jobs) = JobsFile::parse("fast.json", data) {
        let counts: Vec<u64> = jobs.jobs.iter().map(|j| j.config_count()).collect();
        assert!(counts.iter().sum::<u64>() <= MAX_CONFIGS);
        for (job, count) in jobs.jobs.iter().zip(counts) {
            assert_eq!(job.configs().len() as u64, count);
        }
    }
    if let Ok(value) = parse(data) {
        let text = to_python_json(&value);
        let back = parse(text.as_bytes()).expect("what mlbench writes, it reads");
        assert_eq!(to_python_json(&back), text);
    }
});
