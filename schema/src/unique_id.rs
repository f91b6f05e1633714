//! The suite's `unique_id` (docs/suite.md#unique_id): SHA-256 over `str(key) + str(value)` of the
//! benchmark's arguments, sorted by key, skipping the keys in `not_parameter`.

use crate::entry::{KeyHasher, key_of};
use crate::pyrepr::py_str_bytes;
use crate::value::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

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
/// hash is taken, so every argument is hashed. The seed README's reports use it.
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
/// (docs/suite.md#version; not a git hash).
pub fn script_version(bytes: &[u8]) -> String {
    let mut digest = hex(&Sha256::digest(bytes));
    digest.truncate(10);
    digest
}

/// [`unique_id`] with [`EXCLUDED_FINAL`], remembered by argument set: one configuration
/// recurs on every GPU in every run, and writing its Python `repr` and hashing it again
/// for each entry was a tenth of `validate`'s per-file pass. A set is found by a hash of
/// its pairs and confirmed pair by pair, floats by their bits (`repr` tells `-0.0` from
/// `0.0`), so no entry is ever given another's id by a collision.
#[derive(Debug, Default)]
pub struct FinalIds {
    /// By hash of the pairs: each set met with that hash, and its id.
    seen: HashMap<u64, Vec<(ArgumentSet, String)>, BuildHasherDefault<KeyHasher>>,
    sets: usize,
}

/// The pairs `unique_id` hashes, owned.
type ArgumentSet = Vec<(String, Value)>;

/// Sets remembered before [`FinalIds`] starts over (a bound on its memory).
const REMEMBERED: usize = 4096;

impl FinalIds {
    /// `unique_id(args, EXCLUDED_FINAL)`.
    pub fn of(&mut self, args: &[(&str, &Value)]) -> &str {
        let key = key_of(args.iter().copied().filter(|(k, _)| !excluded_final(k)));
        self.of_filed(key, args)
    }

    /// [`Self::of`], the set filed under `key`: any hash the caller already has of the
    /// arguments (say their configuration key), the same for the same arguments. Sets
    /// under one key are told apart pair by pair, as under [`Self::of`]'s own hash.
    pub fn of_filed(&mut self, key: u64, args: &[(&str, &Value)]) -> &str {
        let hashed = || args.iter().copied().filter(|(k, _)| !excluded_final(k));
        if self.sets >= REMEMBERED {
            self.seen.clear();
            self.sets = 0;
        }
        let same = |set: &[(String, Value)]| {
            set.len() == hashed().count()
                && set
                    .iter()
                    .zip(hashed())
                    .all(|((k, v), (key, value))| k == key && identical(v, value))
        };
        let sets = self.seen.entry(key).or_default();
        let at = match sets.iter().position(|(set, _)| same(set)) {
            Some(at) => at,
            None => {
                let id = unique_id(hashed(), &[]);
                let set = hashed().map(|(k, v)| (k.to_owned(), v.clone())).collect();
                sets.push((set, id));
                self.sets += 1;
                sets.len() - 1
            }
        };
        &sets[at].1
    }
}

/// Whether `key` is one of [`EXCLUDED_FINAL`] (a `match`: this runs for every argument of
/// every entry validated).
fn excluded_final(key: &str) -> bool {
    matches!(
        key,
        "gpu"
            | "batch_size"
            | "num-processes"
            | "workers"
            | "cuda"
            | "report"
            | "ngpu"
            | "data"
            | "no_cuda"
            | "dataset_dir"
            | "backend"
            | "jr_id"
            | "vcd"
            | "num-steps"
            | "seed"
    )
}

/// The same value, floats compared by their bits and objects in their order: what makes
/// two values' Python `repr` the same.
fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| identical(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((ka, va), (kb, vb))| ka == kb && identical(va, vb))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excluded_final_is_the_list() {
        for key in EXCLUDED_FINAL {
            assert!(excluded_final(key), "{key}");
        }
        for key in ["num_processes", "num_steps", "lr", "gpus", "", "seeds"] {
            assert!(!excluded_final(key), "{key}");
        }
    }

    #[test]
    fn remembered_ids_are_the_computed_ones() {
        let (lr, neg, zero, one, data) = (
            Value::Float(0.1),
            Value::Float(-0.0),
            Value::Float(0.0),
            Value::Int(1),
            Value::Str("/a".into()),
        );
        let nested = |v: &Value| Value::List(vec![Value::Int(1), v.clone()]);
        let (nested_neg, nested_zero) = (nested(&neg), nested(&zero));
        let sets: Vec<Vec<(&str, &Value)>> = vec![
            vec![("lr", &lr), ("repeat", &one)],
            // Excluded arguments change nothing; -0.0 is not 0.0, nor 1 1.0, nested too.
            vec![("data", &data), ("lr", &lr), ("repeat", &one)],
            vec![("lr", &neg), ("repeat", &one)],
            vec![("lr", &zero), ("repeat", &one)],
            vec![("lr", &lr), ("repeat", &lr)],
            vec![("lr", &nested_neg)],
            vec![("lr", &nested_zero)],
            vec![("lr", &lr)],
            vec![],
        ];
        let mut ids = FinalIds::default();
        for _ in 0..2 {
            for set in &sets {
                let expected = unique_id(set.iter().copied(), EXCLUDED_FINAL);
                assert_eq!(ids.of(set), expected, "{set:?}");
            }
        }
        assert_eq!(
            ids.sets,
            sets.len() - 1,
            "the set with `data` is the first one"
        );
        let id = |ids: &mut FinalIds, set: &[(&str, &Value)]| ids.of(set).to_owned();
        assert_ne!(id(&mut ids, &sets[2]), id(&mut ids, &sets[3]));
        assert_ne!(id(&mut ids, &sets[5]), id(&mut ids, &sets[6]));
    }

    #[test]
    fn sets_filed_under_one_key_are_told_apart() {
        let (a, b, c) = (Value::Int(1), Value::Int(2), Value::Str("/x".into()));
        let mut ids = FinalIds::default();
        // The same key for different sets (a caller's coarser hash), and the same set,
        // excluded arguments aside, under another.
        let sets: [&[(&str, &Value)]; 3] = [&[("x", &a)], &[("x", &b)], &[("data", &c), ("x", &a)]];
        for (key, set) in [(7, sets[0]), (7, sets[1]), (8, sets[2]), (7, sets[0])] {
            let expected = unique_id(set.iter().copied(), EXCLUDED_FINAL);
            assert_eq!(ids.of_filed(key, set), expected, "{set:?} under {key}");
        }
        assert_eq!(ids.sets, 3);
    }

    #[test]
    fn a_hash_collision_is_not_taken_for_the_same_set() {
        let (a, b) = (Value::Int(1), Value::Int(2));
        let mut ids = FinalIds::default();
        // Both sets filed under one hash, as a collision would file them.
        ids.seen.insert(
            key_of([("x", &b)].into_iter()),
            vec![(vec![("x".to_owned(), a.clone())], "not this".to_owned())],
        );
        assert_eq!(ids.of(&[("x", &b)]), unique_id([("x", &b)], &[]));
    }
}
