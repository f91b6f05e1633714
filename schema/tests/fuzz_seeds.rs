//! The fuzz targets' seeds (fuzz/seeds/: the hostile-input reproducers and the files they grew
//! from) replayed on every test run: what scripts/fuzz.sh asserts, asserted here too.

use mlbench_schema::jobs::JobsFile;
use mlbench_schema::pyjson::{parse, to_python_json};
use mlbench_schema::reader::{Content, Reading, parse_each_of, parse_report, parse_stream_in};
use mlbench_schema::{Scoring, TargetTable};
use std::path::{Path, PathBuf};

fn seeds(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/seeds")
        .join(target);
    let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let path = e.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    out.sort();
    assert!(out.len() >= 4, "{}: {} seeds", dir.display(), out.len());
    out
}

#[test]
fn report_seeds_read_alike_whole_and_streamed() {
    for (path, text) in seeds("report") {
        let _ = parse_report("f.json", &text);
        for chunk in [1, 7, 64, 4096] {
            for reading in [Reading::Lean, Reading::Values] {
                let mut whole = Vec::new();
                let a = parse_each_of("f", Content::Bytes(&text), reading, |i, e| {
                    whole.push(format!("{i} {e:?}"))
                });
                let mut streamed = Vec::new();
                let mut input = &text[..];
                let b = parse_stream_in("f", &mut input, reading, chunk, 1 << 30, |i, e| {
                    streamed.push(format!("{i} {e:?}"))
                });
                let name = path.display();
                assert_eq!(a.container, b.container, "{name} {chunk}");
                assert_eq!(a.errors, b.errors, "{name} {chunk}");
                assert_eq!(whole, streamed, "{name} {chunk}");
            }
        }
    }
}

#[test]
fn jobs_seeds_parse_and_round_trip() {
    let mut parsed = 0;
    for (_, bytes) in seeds("jobs") {
        let read = JobsFile::parse("fast.json", &bytes);
        // As fuzz/fuzz_targets/jobs.rs: what reads is within the limit, counted exactly.
        if let Ok(jobs) = &read {
            let counts: Vec<u64> = jobs.jobs.iter().map(|j| j.config_count()).collect();
            assert!(counts.iter().sum::<u64>() <= mlbench_schema::jobs::MAX_CONFIGS);
            for (job, count) in jobs.jobs.iter().zip(counts) {
                assert_eq!(job.configs().len() as u64, count);
            }
        }
        parsed += usize::from(read.is_ok());
        if let Ok(value) = parse(&bytes) {
            let text = to_python_json(&value);
            assert_eq!(to_python_json(&parse(text.as_bytes()).unwrap()), text);
        }
    }
    assert_eq!(parsed, 1, "fast.json alone is a jobs file among the seeds");
}

#[test]
fn targets_seeds_read_without_a_panic() {
    let mut read = 0;
    for (_, bytes) in seeds("targets") {
        let text = String::from_utf8(bytes).unwrap();
        for scoring in [Scoring::Classic, Scoring::Score] {
            read += usize::from(TargetTable::from_csv("t.csv", &text, scoring, "RTX").is_ok());
            read += usize::from(TargetTable::from_toml("t.toml", &text, scoring, "RTX").is_ok());
        }
    }
    assert!(read >= 3, "{read}");
}
