//! The property names of report entries: the suite's field names are recognised from the
//! text and kept as `&'static str` (a report holds a million keys, nearly all of them
//! from this short list).

use std::borrow::Cow;

/// A property name as [`Parser::object_with`] hands it over: one of the suite's field
/// names, or the decoded text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldName<'a> {
    /// A name of [`known_field`]'s table.
    Known(&'static str),
    /// Any other name, borrowed from the text when it has no escapes.
    Text(Cow<'a, str>),
}

impl FieldName<'_> {
    /// The name as an object key: a known name costs no allocation.
    pub fn into_key(self) -> Cow<'static, str> {
        match self {
            FieldName::Known(name) => Cow::Borrowed(name),
            FieldName::Text(text) => Cow::Owned(text.into_owned()),
        }
    }
}

impl std::ops::Deref for FieldName<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            FieldName::Known(name) => name,
            FieldName::Text(text) => text,
        }
    }
}

/// The field names the suite writes in report entries (every era, docs/suite.md#report-entries),
/// the stages and statistics inside them, and the arguments of its jobs files: the keys of
/// nearly every object a report holds.
const NAMES: [&str; 82] = [
    "algo",
    "all",
    "arch",
    "avg",
    "batch_loss",
    "batch_size",
    "clip_param",
    "completed",
    "compute",
    "count",
    "cpu_cores",
    "cuda",
    "data",
    "dataroot",
    "dataset",
    "dataset_dir",
    "devices",
    "dropout",
    "dtype",
    "emsize",
    "end_time",
    "entropy_coef",
    "env_name",
    "epoch_loss",
    "epochs",
    "eval",
    "fp16",
    "gamma",
    "gpu",
    "half",
    "hostname",
    "imageSize",
    "jr_id",
    "layers",
    "loading",
    "loading_data",
    "log_interval",
    "lr",
    "max",
    "metrics",
    "min",
    "model",
    "name",
    "network",
    "ngpu",
    "nhid",
    "no_checks",
    "no_cuda",
    "no_save",
    "num_mini_batch",
    "num_processes",
    "num_steps",
    "number",
    "opt_level",
    "peak_device_bytes",
    "peak_rss_bytes",
    "processes",
    "profile",
    "range",
    "repeat",
    "run_id",
    "sd",
    "seed",
    "smoke",
    "start_time",
    "suite",
    "synthetic_data",
    "target_bleu",
    "task",
    "testBatchSize",
    "threshold",
    "train",
    "train_item",
    "unique_id",
    "unit",
    "upscale_factor",
    "use_gae",
    "use_linear_lr_decay",
    "value_loss_coef",
    "vcd",
    "version",
    "workers",
];

/// The multiplier of the table's hash, found by a search so that the names fall in 256
/// distinct slots (`build` stops the compilation if a name added here collides: search
/// another odd multiplier).
const K: u64 = 0xea4c_0439_6262_60a9;

/// One name of the table, with its bytes as words: the first eight, the last eight and
/// the eight after the first eight (the names are at most 24 bytes long).
#[derive(Clone, Copy)]
struct Slot {
    name: &'static str,
    head: u64,
    mid: u64,
    tail: u64,
}

const EMPTY: Slot = Slot {
    name: "",
    head: 0,
    mid: 0,
    tail: 0,
};

/// The names by the hash of their length and first eight bytes.
const TABLE: [Slot; 256] = build();

/// A name's slot: a multiplicative hash of its first eight bytes and its length.
const fn slot_of(head: u64, len: usize) -> usize {
    ((head ^ ((len as u64) << 56)).wrapping_mul(K) >> 56) as usize
}

const fn build() -> [Slot; 256] {
    let mut table = [EMPTY; 256];
    let mut i = 0;
    while i < NAMES.len() {
        let name = NAMES[i];
        let bytes = name.as_bytes();
        assert!(
            !bytes.is_empty() && bytes.len() <= 24,
            "a field name of 1 to 24 bytes"
        );
        let slot = slot_of(word_at(bytes, 0), bytes.len());
        assert!(
            table[slot].name.is_empty(),
            "two field names in one slot: change K"
        );
        table[slot] = Slot {
            name,
            head: word_at(bytes, 0),
            mid: word_at(bytes, 8),
            tail: tail_of(bytes),
        };
        i += 1;
    }
    table
}

/// The eight bytes of `bytes` from `at` as a little-endian word (zeros past the end).
const fn word_at(bytes: &[u8], at: usize) -> u64 {
    let mut w = 0u64;
    let mut i = 0;
    while i < 8 && at + i < bytes.len() {
        w |= (bytes[at + i] as u64) << (8 * i);
        i += 1;
    }
    w
}

/// The last eight bytes of a name over eight bytes long (else 0).
const fn tail_of(bytes: &[u8]) -> u64 {
    if bytes.len() > 8 {
        word_at(bytes, bytes.len() - 8)
    } else {
        0
    }
}

/// The suite's field name spelled by `raw` (see [`NAMES`]), or `None`: one slot looked up
/// and compared word by word.
pub fn known_field(raw: &[u8]) -> Option<&'static str> {
    if raw.is_empty() || raw.len() > 24 {
        return None;
    }
    let head = word(raw);
    let slot = &TABLE[slot_of(head, raw.len())];
    let long = raw.len() > 8;
    let matches = slot.name.len() == raw.len()
        && slot.head == head
        && (!long || slot.tail == word(&raw[raw.len() - 8..]))
        && (raw.len() <= 16 || slot.mid == word(&raw[8..]));
    matches.then_some(slot.name)
}

/// The first eight bytes of `bytes` as a little-endian word (zeros past the end).
#[inline(always)]
fn word(bytes: &[u8]) -> u64 {
    if let Some(first) = bytes.first_chunk::<8>() {
        return u64::from_le_bytes(*first);
    }
    let mut w = 0u64;
    for (i, &b) in bytes.iter().enumerate() {
        w |= u64::from(b) << (8 * i);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_found_and_every_one_byte_change_is_not_taken_for_it() {
        for name in NAMES {
            assert_eq!(known_field(name.as_bytes()), Some(name));
            let bytes = name.as_bytes();
            for i in 0..bytes.len() {
                for b in [b'a', b'_', b'0', b'Z', 0, 0xff] {
                    let mut changed = bytes.to_vec();
                    changed[i] = b;
                    let want = NAMES.iter().copied().find(|n| n.as_bytes() == changed);
                    assert_eq!(known_field(&changed), want, "{name} with byte {i} = {b}");
                }
            }
            // One byte more or less.
            let mut longer = bytes.to_vec();
            longer.push(b's');
            let want = NAMES.iter().copied().find(|n| n.as_bytes() == longer);
            assert_eq!(known_field(&longer), want);
            let shorter = &bytes[..bytes.len() - 1];
            let want = NAMES.iter().copied().find(|n| n.as_bytes() == shorter);
            assert_eq!(known_field(shorter), want);
        }
        assert_eq!(known_field(b""), None);
        assert_eq!(known_field(&[b'a'; 30]), None);
    }
}
