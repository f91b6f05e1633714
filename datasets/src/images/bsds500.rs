//! BSDS500 as reso reads it (super_resolution `data.py`: `$DATA_DIRECTORY/bsds500/BSR/
//! BSDS500/data/images/{train,test}`, through `dataset.py`'s `DatasetFromFolder`), its maker
//! and reso's transforms.
//!
//! The maker writes the archive's image layout: `train/` (200), `val/` (100) and `test/`
//! (200) JPEGs named by numeric ids as BSDS's are (`100075.jpg`), 481 × 321 or 321 × 481
//! (three in four landscape); each a soft gradient between two colours with a few flat
//! discs and bars of other colours and ±4 of noise, so that a super-resolution model
//! has edges to learn. [`Scale::Smoke`] is 4, 2 and 4 images of 120 × 80 or 80 × 120. The
//! real set is a download (its photographs cannot be made); reso reads train and test.
//!
//! The reader lists a folder as `DatasetFromFolder` does (names ending `.png`, `.jpg` or
//! `.jpeg`, case-sensitive), sorted (`os.listdir` has no order; sorted is one order that
//! is the same everywhere). Each image is read as `Image.open(path).convert('YCbCr')`'s Y
//! channel; the target is `CenterCrop(crop)` of it, the input `CenterCrop(crop)` then
//! `Resize(crop // upscale)` (torchvision's default, bilinear, as Pillow resizes), both
//! `ToTensor` (÷ 255).

use super::batch::Sampling;
use super::color::y_channel;
use super::folder::python_order_key;
use super::jpeg::{self, Rgb};
use super::keyed::{Purpose, Stream};
use super::resample::{Filter, resize};
use super::transforms::center_crop;
use crate::{DataError, Scale};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The image folders' parent, under the data directory (data.py's `data_folder`).
pub const IMAGES: &str = "bsds500/BSR/BSDS500/data/images";

/// A split of the archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// `train/`: what reso trains on.
    Train,
    /// `val/`: in the archive, not read by reso.
    Val,
    /// `test/`: reso's test pass.
    Test,
}

impl Split {
    /// All three, in the order made.
    pub const ALL: [Split; 3] = [Split::Train, Split::Val, Split::Test];

    /// `train`, `val` or `test`.
    pub fn name(self) -> &'static str {
        match self {
            Split::Train => "train",
            Split::Val => "val",
            Split::Test => "test",
        }
    }

    /// The folder, relative to the data directory.
    pub fn folder(self) -> PathBuf {
        Path::new(IMAGES).join(self.name())
    }

    /// Images made at `scale`: BSDS500's 200, 100 and 200; 4, 2 and 4 for smoke.
    pub fn count(self, scale: Scale) -> usize {
        match (self, scale) {
            (Split::Val, Scale::Full) => 100,
            (_, Scale::Full) => 200,
            (Split::Val, Scale::Smoke) => 2,
            (_, Scale::Smoke) => 4,
        }
    }
}

/// The long and short sides at `scale`.
pub fn sides(scale: Scale) -> (usize, usize) {
    match scale {
        Scale::Full => (481, 321),
        Scale::Smoke => (120, 80),
    }
}

/// The ids of every image, split by split (distinct over the three splits, 2–6 digits).
fn ids(seed: u64, scale: Scale) -> Vec<(Split, u64)> {
    let mut rng = Stream::keyed(seed, Purpose::Bsds, &[u64::MAX]);
    let mut taken = BTreeSet::new();
    let mut out = Vec::new();
    for split in Split::ALL {
        for _ in 0..split.count(scale) {
            let id = loop {
                let id = 10 + rng.below(400_000);
                if taken.insert(id) {
                    break id;
                }
            };
            out.push((split, id));
        }
    }
    out
}

/// The image of `id`: its size, a gradient, flat shapes and noise, all from its stream.
pub fn image(seed: u64, id: u64, scale: Scale) -> Rgb {
    let mut rng = Stream::keyed(seed, Purpose::Bsds, &[id]);
    let (long, short) = sides(scale);
    let (w, h) = if rng.below(4) < 3 {
        (long, short)
    } else {
        (short, long)
    };
    let colour = |rng: &mut Stream| [0; 3].map(|_| rng.below(256) as f64);
    let (from, to) = (colour(&mut rng), colour(&mut rng));
    let mut pixels = Vec::with_capacity(3 * w * h);
    for y in 0..h {
        for x in 0..w {
            let t = (x + y) as f64 / (w + h) as f64;
            let noise = rng.next_u64();
            for c in 0..3 {
                let n = ((noise >> (8 * c)) & 7) as f64 - 4.0;
                pixels.push((from[c] + (to[c] - from[c]) * t + n).clamp(0.0, 255.0) as u8);
            }
        }
    }
    let mut img = Rgb::new(w, h, pixels);
    for _ in 0..3 + rng.below(5) {
        let fill = colour(&mut rng).map(|v| v as u8);
        let (cx, cy) = (rng.below(w as u64) as f64, rng.below(h as u64) as f64);
        let r = rng.uniform(0.05, 0.25) * short as f64;
        let disc = rng.below(2) == 0;
        for y in 0..h {
            for x in 0..w {
                let (dx, dy) = (x as f64 - cx, y as f64 - cy);
                let inside = if disc {
                    dx * dx + dy * dy <= r * r
                } else {
                    dx.abs() <= r && dy.abs() <= r / 3.0
                };
                if inside {
                    let i = 3 * (y * w + x);
                    img.pixels[i..i + 3].copy_from_slice(&fill);
                }
            }
        }
    }
    img
}

/// The path of image `id` of `split`, relative to the data directory.
pub fn file_path(split: Split, id: u64) -> PathBuf {
    split.folder().join(format!("{id}.jpg"))
}

/// Writes the archive's three image folders under the data directory `root`; returns
/// the files written, relative to `root`, split by split. A file already there is an
/// error, before anything is written, unless `force`.
pub fn prepare(
    root: &Path,
    seed: u64,
    scale: Scale,
    force: bool,
) -> Result<Vec<PathBuf>, DataError> {
    let images = ids(seed, scale);
    let files: Vec<PathBuf> = images.iter().map(|&(s, id)| file_path(s, id)).collect();
    if !force {
        super::refuse_existing(root, files.iter().cloned())?;
    }
    for split in Split::ALL {
        let dir = root.join(split.folder());
        std::fs::create_dir_all(&dir).map_err(DataError::io(&dir))?;
    }
    super::write_parallel(&images, |&(split, id)| {
        let path = root.join(file_path(split, id));
        let bytes = jpeg::encode(&image(seed, id, scale), &path)?;
        jpeg::write_new(&path, &bytes, force)
    })?;
    Ok(files)
}

/// `DatasetFromFolder(dir)`'s files: the names ending `.png`, `.jpg` or `.jpeg`, sorted.
/// A folder that is not there, or has no image, is [`DataError::Missing`].
pub fn list(dir: &Path) -> Result<Vec<PathBuf>, DataError> {
    let missing = |what: &str| DataError::Missing {
        path: dir.to_path_buf(),
        what: what.into(),
        command: "mlbench data prepare".into(),
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(missing("BSDS500's images are not there"));
        }
        Err(e) => return Err(DataError::io(dir)(e)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let name = entry.map_err(DataError::io(dir))?.file_name();
        let text = name.to_string_lossy();
        if [".png", ".jpg", ".jpeg"].iter().any(|e| text.ends_with(e)) {
            names.push(name);
        }
    }
    if names.is_empty() {
        return Err(missing("no .png, .jpg or .jpeg image in the folder"));
    }
    names.sort_by_key(|n| python_order_key(n));
    Ok(names.into_iter().map(|n| dir.join(n)).collect())
}

/// reso's `input_transform` and `target_transform` of one image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuperResolution {
    /// The crop side (`calculate_valid_crop_size(256, upscale)`).
    pub crop: usize,
    /// The upscale factor.
    pub upscale: usize,
}

impl SuperResolution {
    /// `crop` cut to a multiple of `upscale` (`calculate_valid_crop_size`).
    pub fn new(crop: usize, upscale: usize) -> SuperResolution {
        SuperResolution {
            crop: crop - crop % upscale,
            upscale,
        }
    }

    /// The input's side, `crop // upscale`.
    pub fn low(&self) -> usize {
        self.crop / self.upscale
    }

    /// The Y channel of `img` through both transforms, appended to `input` (low² floats)
    /// and `target` (crop² floats). The Y plane is cropped and resized as three equal
    /// channels (PIL's `L` mode filters its one band as it filters each of RGB's), then
    /// one is kept.
    pub fn pair_into(&self, img: &Rgb, input: &mut Vec<f32>, target: &mut Vec<f32>) {
        let y = y_channel(img);
        let grey = Rgb::new(
            img.width,
            img.height,
            y.iter().flat_map(|&v| [v; 3]).collect(),
        );
        let cut = center_crop(&grey, self.crop, self.crop);
        let small = resize(&cut, self.low(), self.low(), Filter::Bilinear);
        let first_channel = |px: Vec<u8>| px.into_iter().step_by(3).map(|v| f32::from(v) / 255.0);
        target.extend(first_channel(cut.pixels));
        input.extend(first_channel(small.pixels));
    }
}

/// One batch of reso's loader: inputs `[n, 1, low, low]` and targets `[n, 1, crop, crop]`.
#[derive(Debug, Clone, PartialEq)]
pub struct PairBatch {
    /// The inputs, one after another.
    pub input: Vec<f32>,
    /// The targets.
    pub target: Vec<f32>,
    /// Images in the batch.
    pub count: usize,
}

impl Sampling {
    /// Batch `index` of the images `files` through `transform` (a file that cannot be
    /// read or decoded is an error naming it).
    pub fn pair_batch(
        &self,
        files: &[PathBuf],
        transform: &SuperResolution,
        index: u64,
    ) -> Result<PairBatch, DataError> {
        let items = self.items(files.len(), index);
        let (mut input, mut target) = (Vec::new(), Vec::new());
        for &i in &items {
            transform.pair_into(&jpeg::read(&files[i])?, &mut input, &mut target);
        }
        Ok(PairBatch {
            input,
            target,
            count: items.len(),
        })
    }
}
