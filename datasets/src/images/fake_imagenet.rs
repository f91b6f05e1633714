//! The suite's fake ImageNet (`dataset/fake_imagenet.py`, as `download_imagenet.sh` runs
//! it with `FAKE_DATASET=1`: `--size 512 --class-num 1000 --batch-size 256 --number 100
//! --repeat 4`): 256 · 100 · 4 = 102 400 draws of torchvision's `FakeData`, split over
//! `min(cpus, 4)` = 4 worker processes of 25 600 draws each. Draw `offset + i` of a worker
//! has a class uniform over 0..1000 and a 512 × 512 RGB image of noise (torch's
//! `randn · 255` cast to bytes, which wraps), saved by PIL as
//! `ImageNet/train/<class>/<i>.jpeg` — `i` counts from 0 in every worker, so two workers'
//! draws `i` of one class write the same file and one of them is lost: about 102 250 files,
//! names 0–25 599, some 102 per class.
//!
//! Here the class and the pixels of draw `d` come from streams keyed by (seed, d), so the
//! same seed gives the same bytes (torch's generator itself cannot be reproduced); the
//! noise is a sum of four uniforms scaled to sd 1 (the same bytes on every platform, no
//! transcendental function), and of two draws that land on one file the later worker's
//! is written. [`Scale::Smoke`] is 4 workers × 4 draws over 4 classes, 64 × 64.

use super::jpeg::{self, Rgb};
use super::keyed::{Purpose, Stream};
use crate::{DataError, Scale};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The ImageFolder the scripts read, under the data directory.
pub const TRAIN: &str = "ImageNet/train";

/// The sizes of a fake ImageNet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// Worker processes of the suite's maker.
    pub workers: u64,
    /// Draws per worker.
    pub per_worker: u64,
    /// Classes.
    pub classes: u64,
    /// Image side, pixels.
    pub size: usize,
}

impl Spec {
    /// The sizes at `scale`.
    pub fn at(scale: Scale) -> Spec {
        match scale {
            Scale::Full => {
                let (all, workers) = (256 * 100 * 4, 4);
                Spec {
                    workers,
                    // The script's (all_count + all_count % p_count) // p_count.
                    per_worker: (all + all % workers) / workers,
                    classes: 1000,
                    size: 512,
                }
            }
            Scale::Smoke => Spec {
                workers: 4,
                per_worker: 4,
                classes: 4,
                size: 64,
            },
        }
    }
}

/// The class of draw `draw`.
fn class_of(seed: u64, draw: u64, spec: &Spec) -> u64 {
    Stream::keyed(seed, Purpose::FakeClass, &[draw]).below(spec.classes)
}

/// The files a fake ImageNet has: (class, file number) → the draw written there.
pub fn plan(seed: u64, scale: Scale) -> BTreeMap<(u64, u64), u64> {
    let spec = Spec::at(scale);
    let mut files = BTreeMap::new();
    for worker in 0..spec.workers {
        for i in 0..spec.per_worker {
            let draw = worker * spec.per_worker + i;
            files.insert((class_of(seed, draw, &spec), i), draw);
        }
    }
    files
}

/// Draw `draw`'s image: each byte `trunc(255 · z)` wrapped to 0–255, z a sum of four
/// 16-bit uniforms centred and scaled to sd 1.
pub fn image(seed: u64, draw: u64, size: usize) -> Rgb {
    let mut rng = Stream::keyed(seed, Purpose::FakePixels, &[draw]);
    let scale = 255.0 * 3f64.sqrt();
    let pixels = (0..3 * size * size)
        .map(|_| {
            let bits = rng.next_u64();
            let sum: u64 = (0..4).map(|k| (bits >> (16 * k)) & 0xffff).sum();
            let z = sum as f64 / 65_536.0 - 2.0;
            // Truncation toward zero, then the low byte: torch's float → uint8 cast.
            ((z * scale) as i64) as u8
        })
        .collect();
    Rgb::new(size, size, pixels)
}

/// The path of file `i` of `class`, relative to the data directory.
pub fn file_path(class: u64, i: u64) -> PathBuf {
    Path::new(TRAIN)
        .join(class.to_string())
        .join(format!("{i}.jpeg"))
}

/// Writes the fake ImageNet under the data directory `root` (`root/ImageNet/train/…`),
/// four writers at once; returns the files written, relative to `root`, sorted by class
/// and number. A file already there is an error, before anything is written, unless
/// `force` (then it is replaced).
pub fn prepare(
    root: &Path,
    seed: u64,
    scale: Scale,
    force: bool,
) -> Result<Vec<PathBuf>, DataError> {
    let spec = Spec::at(scale);
    let files: Vec<((u64, u64), u64)> = plan(seed, scale).into_iter().collect();
    if !force {
        super::refuse_existing(root, files.iter().map(|&((c, i), _)| file_path(c, i)))?;
    }
    // Only the classes drawn have a folder, as the script makes one with its first file.
    let classes: std::collections::BTreeSet<u64> = files.iter().map(|f| f.0.0).collect();
    for class in classes {
        let dir = root.join(TRAIN).join(class.to_string());
        std::fs::create_dir_all(&dir).map_err(DataError::io(&dir))?;
    }
    super::write_parallel(&files, |&((class, i), draw)| {
        let path = root.join(file_path(class, i));
        let bytes = jpeg::encode(&image(seed, draw, spec.size), &path)?;
        jpeg::write_new(&path, &bytes, force)
    })?;
    Ok(files
        .into_iter()
        .map(|((c, i), _)| file_path(c, i))
        .collect())
}
