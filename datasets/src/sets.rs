//! The registry: which data sets each bench of the suite reads, how each is made, and the
//! check a job runs before reading one.

use crate::images::{bsds500, coco, fake_imagenet};
use crate::manifest::{self, Manifest};
use crate::{DataError, Scale, mnist, movielens, sine, wikitext, wmt};
use std::path::{Path, PathBuf};

/// A data set this crate makes and reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DataSet {
    /// MNIST's raw IDX files (vae).
    Mnist,
    /// wikitext-2's three text files (wlm, wlmfp16).
    Wikitext2,
    /// MovieLens 20M and its conversion (recom).
    MovieLens20m,
    /// toy_lstm's sine waves.
    SineWaves,
    /// WMT16's BPE vocabulary and training pairs (translator).
    Wmt16,
    /// The fake ImageNet's JPEG class folders (convnet, loader, dcgan, fast_style, …).
    FakeImagenet,
    /// COCO 2017's annotations and images (ssd).
    Coco,
    /// BSDS500's image folders (reso).
    Bsds500,
}

impl DataSet {
    /// Every registered set, in the order `data prepare` makes them.
    pub const ALL: [DataSet; 8] = [
        DataSet::Mnist,
        DataSet::Wikitext2,
        DataSet::MovieLens20m,
        DataSet::SineWaves,
        DataSet::Wmt16,
        DataSet::FakeImagenet,
        DataSet::Coco,
        DataSet::Bsds500,
    ];

    /// The set's name in the manifest and in messages.
    pub fn name(self) -> &'static str {
        match self {
            DataSet::FakeImagenet => "fake-imagenet",
            DataSet::Coco => "coco",
            DataSet::Bsds500 => "bsds500",
            DataSet::Mnist => "mnist",
            DataSet::Wikitext2 => "wikitext-2",
            DataSet::MovieLens20m => "ml-20m",
            DataSet::SineWaves => "sine-waves",
            DataSet::Wmt16 => "wmt16",
        }
    }

    /// The folder under the data root that holds its files.
    pub fn folder(self) -> &'static str {
        match self {
            DataSet::FakeImagenet => "ImageNet",
            DataSet::Coco => coco::COCO,
            DataSet::Bsds500 => "bsds500",
            DataSet::Mnist => "mnist",
            DataSet::Wikitext2 => wikitext::FOLDER,
            DataSet::MovieLens20m => movielens::FOLDER,
            DataSet::SineWaves => sine::FOLDER,
            DataSet::Wmt16 => wmt::FOLDER,
        }
    }

    /// Writes the set's files under `root`; returns them, relative to `root`. `force`: the
    /// image sets replace files already there (else they refuse them); the others always
    /// replace theirs ([`existing`] is the registry's check).
    pub fn prepare(
        self,
        root: &Path,
        seed: u64,
        scale: Scale,
        force: bool,
    ) -> Result<Vec<PathBuf>, DataError> {
        match self {
            DataSet::FakeImagenet => fake_imagenet::prepare(root, seed, scale, force),
            DataSet::Coco => coco::prepare(root, seed, scale, force),
            DataSet::Bsds500 => bsds500::prepare(root, seed, scale, force),
            DataSet::Mnist => mnist::prepare(root, seed, scale),
            DataSet::Wikitext2 => wikitext::prepare(root, seed, scale),
            DataSet::MovieLens20m => movielens::prepare(root, seed, scale),
            DataSet::SineWaves => sine::prepare(root, seed, scale),
            DataSet::Wmt16 => wmt::prepare(root, seed, scale),
        }
    }

    /// The first bench that reads the set (the one its `prepare` command names).
    pub fn bench(self) -> &'static str {
        BENCHES
            .iter()
            .find(|(_, sets)| sets.contains(&self))
            .map(|(bench, _)| *bench)
            .expect("every set is read by a bench")
    }
}

/// The benches whose data sets are registered, with them (none: the bench makes its data
/// in memory or runs a simulator).
pub const BENCHES: &[(&str, &[DataSet])] = &[
    ("convnet", &[DataSet::FakeImagenet]),
    ("convnet_fp16", &[DataSet::FakeImagenet]),
    ("convnet_distributed", &[DataSet::FakeImagenet]),
    ("convnet_distributed_fp16", &[DataSet::FakeImagenet]),
    ("loader", &[DataSet::FakeImagenet]),
    ("dcgan", &[DataSet::FakeImagenet]),
    ("dcgan_all", &[DataSet::FakeImagenet]),
    ("fast_style", &[DataSet::FakeImagenet]),
    ("reso", &[DataSet::Bsds500]),
    ("ssd", &[DataSet::Coco]),
    ("toy_reg", &[]),
    ("toy_lstm", &[DataSet::SineWaves]),
    ("vae", &[DataSet::Mnist]),
    ("translator", &[DataSet::Wmt16]),
    ("wlm", &[DataSet::Wikitext2]),
    ("wlmfp16", &[DataSet::Wikitext2]),
    ("recom", &[DataSet::MovieLens20m]),
    ("cart", &[]),
    ("atari", &[]),
];

/// Whether the script of `bench` reads a data set from files (a registered bench with a
/// set); the others make their data in memory or run a simulator.
pub fn reads_files(bench: &str) -> bool {
    BENCHES
        .iter()
        .any(|(b, sets)| *b == bench && !sets.is_empty())
}

/// A `--bench` that names no registered bench.
#[derive(Debug, thiserror::Error)]
#[error(
    "--bench {name}: no data set of this bench is known (known: {})",
    known()
)]
pub struct UnknownBench {
    /// The name given.
    pub name: String,
}

fn known() -> String {
    BENCHES
        .iter()
        .map(|(b, _)| *b)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sets the benches `names` read, each once, in [`DataSet::ALL`]'s order; every
/// registered set when `names` is empty.
pub fn for_benches(names: &[String]) -> Result<Vec<DataSet>, UnknownBench> {
    if names.is_empty() {
        return Ok(DataSet::ALL.to_vec());
    }
    let mut sets = Vec::new();
    for name in names {
        let (_, of) = BENCHES
            .iter()
            .find(|(bench, _)| bench == name)
            .ok_or_else(|| UnknownBench { name: name.clone() })?;
        sets.extend_from_slice(of);
    }
    sets.sort();
    sets.dedup();
    Ok(sets)
}

/// The first of `sets` whose folder is already in `root` (what `--force` would replace).
pub fn existing(root: &Path, sets: &[DataSet]) -> Option<PathBuf> {
    sets.iter()
        .map(|set| root.join(set.folder()))
        .find(|path| std::fs::symlink_metadata(path).is_ok())
}

/// Makes `sets` under `root` and records them in `root/MANIFEST.json`; returns the
/// manifest written. `force`: replace files already there (see [`existing`]).
pub fn prepare(
    root: &Path,
    sets: &[DataSet],
    seed: u64,
    scale: Scale,
    force: bool,
) -> Result<Manifest, DataError> {
    std::fs::create_dir_all(root).map_err(DataError::io(root))?;
    let mut entries = Vec::new();
    for &set in sets {
        let files = set.prepare(root, seed, scale, force)?;
        entries.push((
            set.name().to_owned(),
            manifest::entry(root, &files, seed, scale)?,
        ));
    }
    manifest::record(root, entries)
}

/// What `data prepare` says of `sets` made in `root`: a line per set (`wikitext-2: 3
/// files, N bytes in ROOT/wikitext-2`), then the manifest's path.
pub fn summary(root: &Path, made: &Manifest, sets: &[DataSet]) -> String {
    let mut text = String::new();
    for set in sets {
        let Some(entry) = made.sets.get(set.name()) else {
            continue;
        };
        let bytes: u64 = entry.files.iter().map(|f| f.bytes).sum();
        let at = root.join(set.folder());
        let (name, files) = (set.name(), entry.files.len());
        text += &format!("{name}: {files} files, {bytes} bytes in {}\n", at.display());
    }
    text + &format!("{}\n", root.join(manifest::MANIFEST).display())
}

/// The command that makes `set` in `root`.
pub fn command(root: &Path, set: DataSet) -> String {
    format!(
        "mlbench data prepare {} --bench {}",
        root.display(),
        set.bench()
    )
}

/// Checks, before a job reads it, that `set` was prepared in `root` and that its files
/// are all there at their recorded sizes; the error names what is missing or partial and
/// the command that makes it.
pub fn check(root: &Path, set: DataSet) -> Result<(), DataError> {
    manifest::check(root, set.name(), &command(root, set), false)
}

/// [`check`], and each file's SHA-256 against the manifest's (reads every byte).
pub fn verify(root: &Path, set: DataSet) -> Result<(), DataError> {
    manifest::check(root, set.name(), &command(root, set), true)
}
