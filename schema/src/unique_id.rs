//! The suite's `unique_id` (spec §2.1): SHA-256 over `str(key) + str(value)` of the
//! benchmark's arguments, sorted by key, skipping the keys in `not_parameter`.

use crate::pyrepr::py_str_bytes;
use crate::value::Value;
use sha2::{Digest, Sha256};

/// `not_parameter` from abfcbe6 (2019-05-25) to the end of the suite. The hyphenated
/// `num-processes` and `num-steps` never match an argparse destination, so
/// `num_processes` and `num_steps` are hashed: that is the suite's behaviour, kept.
pub const EXCLUDED_FINAL: &[&str] = &[
    "gpu",
    "batch_size",
    "num-processes",
    "workers",
    "cuda",
    "report",
    "ngpu",
    "data",
    "no_cuda",
    "dataset_dir",
    "backend",
    "jr_id",
    "vcd",
    "num-steps",
    "seed",
];

/// `not_parameter` at fd9ee95 (2019-04-07): only `gpu`, which is not yet set when the
/// hash is taken, so every argument is hashed. Seed 000's reports use it.
pub const EXCLUDED_FIRST: &[&str] = &["gpu"];

/// `unique_id` of `args` (key, value pairs; order does not matter) with the keys in
/// `excluded` skipped.
pub fn unique_id<'a>(
    args: impl IntoIterator<Item = (&'a str, &'a Value)>,
    excluded: &[&str],
) -> String {
    let mut pairs: Vec<(&str, &Value)> = args
        .into_iter()
        .filter(|(k, _)| !excluded.contains(k))
        .collect();
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    let mut hasher = Sha256::new();
    let mut buffer = String::new();
    for (key, value) in pairs {
        hasher.update(key.as_bytes());
        hasher.update(py_str_bytes(value, &mut buffer));
    }
    hex(&hasher.finalize())
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

/// The suite's `version` of a script: the first 10 hex digits of the SHA-256 of its bytes
/// (spec §2.2; not a git hash).
pub fn script_version(bytes: &[u8]) -> String {
    let mut digest = hex(&Sha256::digest(bytes));
    digest.truncate(10);
    digest
}
