//! Fuzzing the report reader and every rule behind it: a real stream of the example
//! submission (and its jobs file) mutated with byte flips, truncations, duplicated or
//! dropped spans and JSON tokens spliced in (`NaN`, `-Infinity`, `[`, `{`, `"`, `,`,
//! `1e999`, deep nesting). `validate` must never panic, and every finding must name a
//! catalogued rule and a file of the submission.
//!
//! 64 cases per property by default (each runs the whole validator);
//! `PROPTEST_CASES=20000 cargo test -p mlbench-validator --test fuzz_reports` for a long run.

use mlbench_submission::intake::{Intake, SourceKind, SubmittedFile};
use mlbench_validator::{Options, validate};
use proptest::prelude::*;

const STREAM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../submissions/example/output1/fast_0.json"
);
const JOBS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../submissions/example/fast.json"
);

const TOKENS: &[&[u8]] = &[
    b"NaN",
    b"-Infinity",
    b"Infinity",
    b"[",
    b"]",
    b"{",
    b"}",
    b"\"",
    b",",
    b":",
    b"1e999",
    b"-0",
    b"null",
    b"true",
    b"\"\\ud800\"",
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    b"\xff\xfe",
];

#[derive(Debug, Clone)]
enum Mutation {
    Flip { at: usize, mask: u8 },
    Truncate { at: usize },
    Splice { at: usize, token: usize },
    Drop { at: usize, len: usize },
    Repeat { at: usize, len: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1u8..).prop_map(|(at, mask)| Mutation::Flip { at, mask }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(at, token)| Mutation::Splice { at, token }),
        (any::<usize>(), 1usize..400).prop_map(|(at, len)| Mutation::Drop { at, len }),
        (any::<usize>(), 1usize..400).prop_map(|(at, len)| Mutation::Repeat { at, len }),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    if bytes.is_empty() {
        return;
    }
    let at = |a: usize| a % bytes.len();
    match *m {
        Mutation::Flip { at: a, mask } => {
            let i = at(a);
            bytes[i] ^= mask;
        }
        Mutation::Truncate { at: a } => bytes.truncate(at(a)),
        Mutation::Splice { at: a, token } => {
            let i = at(a);
            bytes.splice(i..i, TOKENS[token].iter().copied());
        }
        Mutation::Drop { at: a, len } => {
            let i = at(a);
            let end = (i + len).min(bytes.len());
            bytes.drain(i..end);
        }
        Mutation::Repeat { at: a, len } => {
            let i = at(a);
            let end = (i + len).min(bytes.len());
            let span = bytes[i..end].to_vec();
            bytes.splice(end..end, span);
        }
    }
}

fn check(stream: Vec<u8>, jobs: Vec<u8>) {
    let intake = Intake {
        kind: SourceKind::Folder,
        files: vec![
            SubmittedFile {
                path: "fast.json".into(),
                bytes: jobs,
            },
            SubmittedFile {
                path: "output0/fast_0.json".into(),
                bytes: stream,
            },
        ],
        facts: Vec::new(),
    };
    let options = Options {
        min_runs: 1,
        ..Options::default()
    };
    let v = validate(&intake, &options);
    for f in &v.findings {
        assert!(mlbench_validator::rules::rule(f.rule).is_some(), "{f:?}");
        if let Some(file) = &f.file {
            assert!(file == "fast.json" || file.starts_with("output0"), "{f:?}");
        }
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_report_stream(mutations in prop::collection::vec(mutation(), 1..6)) {
        let mut stream = std::fs::read(STREAM).expect("example stream");
        for m in &mutations {
            apply(&mut stream, m);
        }
        check(stream, std::fs::read(JOBS).expect("jobs file"));
    }

    #[test]
    fn mutated_jobs_file(mutations in prop::collection::vec(mutation(), 1..4)) {
        let mut jobs = std::fs::read(JOBS).expect("jobs file");
        for m in &mutations {
            apply(&mut jobs, m);
        }
        check(std::fs::read(STREAM).expect("example stream"), jobs);
    }

    #[test]
    fn arbitrary_report_bytes(stream in prop::collection::vec(any::<u8>(), 0..2048)) {
        check(stream, std::fs::read(JOBS).expect("jobs file"));
    }
}
