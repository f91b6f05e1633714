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

/// The field names the suite writes in report entries (every era, spec §1.2), the
/// stages and statistics inside them, and the arguments of its jobs files: the keys of
/// nearly every object a report holds. `None` for any other name.
pub fn known_field(raw: &[u8]) -> Option<&'static str> {
    // By length, then as words: the first eight bytes (the whole name, mostly) in one
    // comparison with each name of that length, the rest only for longer names.
    const N2: &[(u64, &str)] = &[(head("lr"), "lr"), (head("sd"), "sd")];
    const N3: &[(u64, &str)] = &[
        (head("all"), "all"),
        (head("avg"), "avg"),
        (head("gpu"), "gpu"),
        (head("max"), "max"),
        (head("min"), "min"),
        (head("vcd"), "vcd"),
    ];
    const N4: &[(u64, &str)] = &[
        (head("algo"), "algo"),
        (head("arch"), "arch"),
        (head("cuda"), "cuda"),
        (head("data"), "data"),
        (head("eval"), "eval"),
        (head("fp16"), "fp16"),
        (head("half"), "half"),
        (head("name"), "name"),
        (head("ngpu"), "ngpu"),
        (head("nhid"), "nhid"),
        (head("seed"), "seed"),
        (head("task"), "task"),
        (head("unit"), "unit"),
    ];
    const N5: &[(u64, &str)] = &[
        (head("count"), "count"),
        (head("dtype"), "dtype"),
        (head("gamma"), "gamma"),
        (head("jr_id"), "jr_id"),
        (head("model"), "model"),
        (head("range"), "range"),
        (head("smoke"), "smoke"),
        (head("suite"), "suite"),
        (head("train"), "train"),
    ];
    const N6: &[(u64, &str)] = &[
        (head("emsize"), "emsize"),
        (head("epochs"), "epochs"),
        (head("layers"), "layers"),
        (head("number"), "number"),
        (head("repeat"), "repeat"),
        (head("run_id"), "run_id"),
    ];
    const N7: &[(u64, &str)] = &[
        (head("compute"), "compute"),
        (head("dataset"), "dataset"),
        (head("devices"), "devices"),
        (head("dropout"), "dropout"),
        (head("loading"), "loading"),
        (head("metrics"), "metrics"),
        (head("network"), "network"),
        (head("no_cuda"), "no_cuda"),
        (head("no_save"), "no_save"),
        (head("use_gae"), "use_gae"),
        (head("version"), "version"),
        (head("workers"), "workers"),
    ];
    const N8: &[(u64, &str)] = &[
        (head("dataroot"), "dataroot"),
        (head("end_time"), "end_time"),
        (head("env_name"), "env_name"),
        (head("hostname"), "hostname"),
    ];
    const N9: &[(u64, &str)] = &[
        (head("completed"), "completed"),
        (head("cpu_cores"), "cpu_cores"),
        (head("imageSize"), "imageSize"),
        (head("no_checks"), "no_checks"),
        (head("num_steps"), "num_steps"),
        (head("opt_level"), "opt_level"),
        (head("processes"), "processes"),
        (head("threshold"), "threshold"),
        (head("unique_id"), "unique_id"),
    ];
    const N10: &[(u64, &str)] = &[
        (head("batch_loss"), "batch_loss"),
        (head("batch_size"), "batch_size"),
        (head("clip_param"), "clip_param"),
        (head("epoch_loss"), "epoch_loss"),
        (head("start_time"), "start_time"),
        (head("train_item"), "train_item"),
    ];
    const N11: &[(u64, &str)] = &[
        (head("dataset_dir"), "dataset_dir"),
        (head("target_bleu"), "target_bleu"),
    ];
    const N12: &[(u64, &str)] = &[
        (head("entropy_coef"), "entropy_coef"),
        (head("loading_data"), "loading_data"),
        (head("log_interval"), "log_interval"),
    ];
    const N13: &[(u64, &str)] = &[
        (head("num_processes"), "num_processes"),
        (head("testBatchSize"), "testBatchSize"),
    ];
    const N14: &[(u64, &str)] = &[
        (head("num_mini_batch"), "num_mini_batch"),
        (head("peak_rss_bytes"), "peak_rss_bytes"),
        (head("upscale_factor"), "upscale_factor"),
    ];
    const N15: &[(u64, &str)] = &[(head("value_loss_coef"), "value_loss_coef")];
    const N17: &[(u64, &str)] = &[(head("peak_device_bytes"), "peak_device_bytes")];
    const N19: &[(u64, &str)] = &[(head("use_linear_lr_decay"), "use_linear_lr_decay")];
    let names = match raw.len() {
        2 => N2,
        3 => N3,
        4 => N4,
        5 => N5,
        6 => N6,
        7 => N7,
        8 => N8,
        9 => N9,
        10 => N10,
        11 => N11,
        12 => N12,
        13 => N13,
        14 => N14,
        15 => N15,
        17 => N17,
        19 => N19,
        _ => return None,
    };
    let first = word(raw);
    names
        .iter()
        .find(|(h, name)| *h == first && name.as_bytes().get(8..) == raw.get(8..))
        .map(|(_, name)| *name)
}

/// The first eight bytes of a name, as [`word`] reads them (for the tables).
const fn head(name: &str) -> u64 {
    let bytes = name.as_bytes();
    let mut w = 0u64;
    let mut i = 0;
    while i < bytes.len() && i < 8 {
        w |= (bytes[i] as u64) << (8 * i);
        i += 1;
    }
    w
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
