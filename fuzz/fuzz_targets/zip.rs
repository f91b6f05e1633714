//! A submission zip of any bytes: listed, read and validated without a panic, within
//! the limits (the intake's caps hold whatever the headers say).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlbench_validator::{Limits, Options, list_submission, validate_listing};

fuzz_target!(|data: &[u8]| {
    // The intake reads a path: a file of this process in memory-backed /dev/shm when
    // there is one (no disk per execution).
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let path = dir.join(format!("mlbench-fuzz-{}.zip", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let limits = Limits {
        max_bytes: 64 << 20,
        ..Limits::default()
    };
    if let Ok(listing) = list_submission(&path, &limits) {
        let options = Options {
            min_runs: 4,
            ..Options::default()
        };
        let _ = validate_listing(&listing, &options);
    }
});
