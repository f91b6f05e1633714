//! loader (image_loading/loader loaders.py): no model, only the input pipeline of an
//! ImageNet training: per image, decode the JPEG, RandomResizedCrop 224 (scale 0.08–1,
//! ratio 3/4–4/3, ten tries then the centre-crop fallback, as torchvision draws it),
//! a horizontal flip half of the time, to a float tensor ÷ 255, normalised with ImageNet's
//! mean and sd; `--workers` threads fill each batch of `--batch-size`, in a shuffled order.
//! An item is an image (the script counts `batch_size × number` a observation). The step's
//! "loss" is the batch's mean, which proves the batch was made.
//!
//! The images are read from `--data` in the ImageFolder layout (a folder per class of
//! `.jpg`/`.jpeg`). When it holds none, a synthetic dataset is made there once (`images`
//! JPEGs, default 256, in 8 class folders, sizes spread around ImageNet's mean of about
//! 400×350, smooth colour fields with noise, seeded) and a marker file is written last, so
//! later runs reuse it; it says so on standard error. Differences: the resize is plain
//! bilinear (torchvision's PIL resize also antialiases when it shrinks); the workers are
//! threads of the copy, not processes, and start once, not with every observation's
//! iterator. `crop_size` (224, not a flag of the script) lets tests and `--smoke` shrink it.

use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use tch::{Kind, Tensor};

pub(super) const SOURCE: &str = include_str!("loader.rs");

const MEAN: [f32; 3] = [0.485, 0.456, 0.406];
const SD: [f32; 3] = [0.229, 0.224, 0.225];
/// Written last in a synthetic dataset: its presence means the dataset is complete.
const MARKER: &str = ".mlbench-synthetic";
const CLASSES: usize = 8;

/// SplitMix64: the stream of one image's draws, from the seed, the step and the image.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn new(parts: &[u64]) -> Rng {
        let mut r = Rng(0x243f_6a88_85a3_08d3);
        for p in parts {
            r.0 ^= *p;
            r.next();
        }
        r
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [lo, hi).
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// An RGB image, 8 bits per channel, row-major.
#[derive(Debug, Clone, PartialEq)]
struct Rgb {
    width: usize,
    height: usize,
    pixels: Vec<u8>,
}

/// torchvision's `RandomResizedCrop.get_params`: (top, left, height, width) of the crop.
fn crop_box(width: usize, height: usize, rng: &mut Rng) -> (usize, usize, usize, usize) {
    let area = (width * height) as f64;
    let (lo, hi) = ((3.0f64 / 4.0).ln(), (4.0f64 / 3.0).ln());
    for _ in 0..10 {
        let target = area * rng.uniform(0.08, 1.0);
        let ratio = rng.uniform(lo, hi).exp();
        let w = (target * ratio).sqrt().round() as usize;
        let h = (target / ratio).sqrt().round() as usize;
        if 0 < w && w <= width && 0 < h && h <= height {
            let top = rng.below(height - h + 1);
            let left = rng.below(width - w + 1);
            return (top, left, h, w);
        }
    }
    // Fallback: the whole image, cut to the ratio range, centred.
    let in_ratio = width as f64 / height as f64;
    let (w, h) = if in_ratio < 3.0 / 4.0 {
        (width, ((width as f64) / (3.0 / 4.0)).round() as usize)
    } else if in_ratio > 4.0 / 3.0 {
        (((height as f64) * (4.0 / 3.0)).round() as usize, height)
    } else {
        (width, height)
    };
    let (w, h) = (w.min(width), h.min(height));
    ((height - h) / 2, (width - w) / 2, h, w)
}

/// The crop of `img` at (top, left, h, w), resized bilinearly to size × size, flipped
/// when asked, as CHW floats normalised with ImageNet's mean and sd.
fn transform(img: &Rgb, crop: (usize, usize, usize, usize), size: usize, flip: bool) -> Vec<f32> {
    let (top, left, h, w) = crop;
    let mut out = vec![0.0f32; 3 * size * size];
    let sy = h as f64 / size as f64;
    let sx = w as f64 / size as f64;
    for oy in 0..size {
        // Pixel centres, as align_corners=False.
        let fy = ((oy as f64 + 0.5) * sy - 0.5).clamp(0.0, (h - 1) as f64);
        let (y0, wy) = (fy.floor() as usize, (fy - fy.floor()) as f32);
        let y1 = (y0 + 1).min(h - 1);
        for ox in 0..size {
            let fx = ((ox as f64 + 0.5) * sx - 0.5).clamp(0.0, (w - 1) as f64);
            let (x0, wx) = (fx.floor() as usize, (fx - fx.floor()) as f32);
            let x1 = (x0 + 1).min(w - 1);
            let at = |y: usize, x: usize, c: usize| {
                f32::from(img.pixels[((top + y) * img.width + left + x) * 3 + c])
            };
            let dx = if flip { size - 1 - ox } else { ox };
            for c in 0..3 {
                let v = (at(y0, x0, c) * (1.0 - wx) + at(y0, x1, c) * wx) * (1.0 - wy)
                    + (at(y1, x0, c) * (1.0 - wx) + at(y1, x1, c) * wx) * wy;
                out[c * size * size + oy * size + dx] = (v / 255.0 - MEAN[c]) / SD[c];
            }
        }
    }
    out
}

fn decode(path: &Path) -> Result<Rgb, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut decoder = zune_jpeg::JpegDecoder::new(&bytes[..]);
    let pixels = decoder
        .decode()
        .map_err(|e| format!("{}: {e:?}", path.display()))?;
    let info = decoder
        .info()
        .ok_or_else(|| format!("{}: no image information", path.display()))?;
    let (width, height) = (usize::from(info.width), usize::from(info.height));
    if pixels.len() != width * height * 3 {
        return Err(format!("{}: not an RGB JPEG", path.display()));
    }
    Ok(Rgb {
        width,
        height,
        pixels,
    })
}

/// The ImageFolder's images: (path, class), sorted.
fn image_folder(root: &Path) -> Vec<(PathBuf, i64)> {
    let mut classes: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.is_dir())
        .collect();
    classes.sort();
    let mut out = Vec::new();
    for (class, dir) in classes.iter().enumerate() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| {
                p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "jpg" | "jpeg"))
            })
            .collect();
        files.sort();
        out.extend(files.into_iter().map(|f| (f, class as i64)));
    }
    out
}

/// Makes `count` synthetic JPEGs under `root` unless a complete set is there (its marker
/// names the count); returns whether it made them.
fn synthesize(root: &Path, count: usize, seed: u64) -> Result<bool, String> {
    let marker = root.join(MARKER);
    if std::fs::read_to_string(&marker).is_ok_and(|m| m.trim() == count.to_string()) {
        return Ok(false);
    }
    let io = |e: std::io::Error| format!("{}: {e}", root.display());
    (0..count)
        .into_par_iter()
        .map(|i| {
            let mut rng = Rng::new(&[seed, i as u64]);
            let width = rng.uniform(300.0, 500.0) as usize;
            let height = rng.uniform(250.0, 450.0) as usize;
            let base = [rng.below(256), rng.below(256), rng.below(256)];
            let mut pixels = Vec::with_capacity(width * height * 3);
            for y in 0..height {
                for x in 0..width {
                    for (c, b) in base.iter().enumerate() {
                        let field = (b + x * (c + 1) / 3 + y * (3 - c) / 4) % 256;
                        let noise = rng.below(32);
                        pixels.push(((field + noise) % 256) as u8);
                    }
                }
            }
            let dir = root.join(format!("class{:02}", i % CLASSES));
            std::fs::create_dir_all(&dir).map_err(io)?;
            let path = dir.join(format!("img{i:05}.jpg"));
            let encoder = jpeg_encoder::Encoder::new_file(&path, 90)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            encoder
                .encode(
                    &pixels,
                    width as u16,
                    height as u16,
                    jpeg_encoder::ColorType::Rgb,
                )
                .map_err(|e| format!("{}: {e}", path.display()))
        })
        .collect::<Result<Vec<()>, String>>()?;
    std::fs::write(&marker, count.to_string()).map_err(io)?;
    Ok(true)
}

struct Loader {
    files: Vec<(PathBuf, i64)>,
    batch: usize,
    crop: usize,
    pool: rayon::ThreadPool,
    order: Vec<usize>,
    next: usize,
    step: u64,
    seed: u64,
    device: tch::Device,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    let batch = ctx.size(args, &["batch_size"], args.batch_size.max(1))? as usize;
    let workers = ctx.int(args, &["workers", "j"], 0)?.max(1) as usize;
    let crop = ctx.size(args, &["crop_size"], 224)? as usize;
    let images = ctx.size(args, &["images"], 256)? as usize;
    let root = match ctx.string(args, &["data"])? {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => std::env::temp_dir().join("mlbench-loader"),
    };
    let seed = args.seed as u64;
    let mut files = image_folder(&root);
    let synthetic = root.join(MARKER).exists();
    if files.is_empty() || synthetic {
        let made = synthesize(&root, images, 2019).map_err(|e| ctx.failed(e))?;
        if made {
            eprintln!(
                "loader: made {images} synthetic JPEGs in {} (reused by later runs)",
                root.display()
            );
        }
        files = image_folder(&root);
    }
    if files.is_empty() {
        return Err(ctx.failed(format!("{}: no JPEG images", root.display())));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .build()
        .map_err(|e| ctx.failed(e.to_string()))?;
    Ok(Box::new(Loader {
        order: Vec::new(),
        next: 0,
        files,
        batch,
        crop,
        pool,
        step: 0,
        seed,
        device: ctx.device,
    }))
}

impl Loader {
    /// The next `batch` images of the shuffled order (a new shuffle when it runs out).
    fn indices(&mut self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.batch);
        while out.len() < self.batch {
            if self.next >= self.order.len() {
                self.order = (0..self.files.len()).collect();
                let mut rng = Rng::new(&[self.seed, self.step, 0x5eed]);
                for i in (1..self.order.len()).rev() {
                    self.order.swap(i, rng.below(i + 1));
                }
                self.next = 0;
            }
            out.push(self.order[self.next]);
            self.next += 1;
        }
        out
    }
}

impl Train for Loader {
    fn train_step(&mut self) -> Tensor {
        let picks = self.indices();
        let (seed, step, crop) = (self.seed, self.step, self.crop);
        let files = &self.files;
        let images: Vec<Result<Vec<f32>, String>> = self.pool.install(|| {
            picks
                .par_iter()
                .enumerate()
                .map(|(slot, &i)| {
                    let img = decode(&files[i].0)?;
                    let mut rng = Rng::new(&[seed, step, slot as u64]);
                    let bbox = crop_box(img.width, img.height, &mut rng);
                    let flip = rng.below(2) == 1;
                    Ok(transform(&img, bbox, crop, flip))
                })
                .collect()
        });
        self.step += 1;
        let mut batch = Vec::with_capacity(picks.len() * 3 * crop * crop);
        for image in images {
            match image {
                Ok(pixels) => batch.extend(pixels),
                // A step fails the way a model's does: through libtorch's error path.
                Err(e) => panic!("{e}"),
            }
        }
        let n = picks.len() as i64;
        let c = crop as i64;
        let labels: Vec<i64> = picks.iter().map(|&i| files[i].1).collect();
        let x = Tensor::from_slice(&batch)
            .view([n, 3, c, c])
            .to_device(self.device);
        let _labels = Tensor::from_slice(&labels).to_device(self.device);
        x.mean(Kind::Float)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grey(width: usize, height: usize, v: u8) -> Rgb {
        Rgb {
            width,
            height,
            pixels: vec![v; width * height * 3],
        }
    }

    #[test]
    fn a_grey_image_normalises_to_the_hand_computed_values() {
        let out = transform(&grey(40, 30, 128), (0, 0, 30, 40), 8, false);
        assert_eq!(out.len(), 3 * 8 * 8);
        for c in 0..3 {
            let want = (128.0 / 255.0 - MEAN[c]) / SD[c];
            assert!(
                out[c * 64..(c + 1) * 64]
                    .iter()
                    .all(|v| (v - want).abs() < 1e-5)
            );
        }
        // Channel 0: (0.501961 − 0.485) ÷ 0.229 = 0.074065.
        assert!((out[0] - 0.074_065).abs() < 1e-5, "{}", out[0]);
    }

    #[test]
    fn a_flip_mirrors_the_columns() {
        let mut img = grey(4, 4, 0);
        for y in 0..4 {
            for c in 0..3 {
                img.pixels[(y * 4) * 3 + c] = 255; // the left column white
            }
        }
        let plain = transform(&img, (0, 0, 4, 4), 4, false);
        let flipped = transform(&img, (0, 0, 4, 4), 4, true);
        for y in 0..4 {
            for x in 0..4 {
                assert_eq!(plain[y * 4 + x], flipped[y * 4 + 3 - x]);
            }
        }
        assert!(plain[0] > plain[3] && flipped[3] > flipped[0]);
    }

    #[test]
    fn crops_fit_the_image_and_extreme_ratios_fall_back_to_the_centre() {
        let mut rng = Rng::new(&[1]);
        for _ in 0..200 {
            let (top, left, h, w) = crop_box(400, 350, &mut rng);
            assert!(top + h <= 350 && left + w <= 400 && h > 0 && w > 0);
            let ratio = w as f64 / h as f64;
            assert!((0.7..=1.4).contains(&ratio), "{ratio}");
        }
        // 1000 × 10: no crop of area ≥ 8 % fits with a ratio ≤ 4/3, so every try fails and
        // the fallback takes the centre 13 × 10 (10 · 4/3 rounded).
        assert_eq!(crop_box(1000, 10, &mut rng), (0, 493, 10, 13));
        // 10 × 1000: the centre 10 × 13.
        assert_eq!(crop_box(10, 1000, &mut rng), (493, 0, 13, 10));
        // Same seed, same crops.
        assert_eq!(
            crop_box(400, 350, &mut Rng::new(&[9])),
            crop_box(400, 350, &mut Rng::new(&[9]))
        );
    }

    #[test]
    fn the_dataset_is_made_once_decodes_and_is_reused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(synthesize(dir.path(), 5, 1).unwrap());
        let files = image_folder(dir.path());
        assert_eq!(files.len(), 5);
        assert_eq!(
            files.iter().map(|f| f.1).max(),
            Some(4),
            "one class folder each"
        );
        let img = decode(&files[0].0).unwrap();
        assert!((300..500).contains(&img.width) && (250..450).contains(&img.height));
        let when = std::fs::metadata(&files[0].0).unwrap().modified().unwrap();
        assert!(!synthesize(dir.path(), 5, 1).unwrap(), "reused");
        assert_eq!(
            std::fs::metadata(&files[0].0).unwrap().modified().unwrap(),
            when
        );
        // Another count is another dataset.
        assert!(synthesize(dir.path(), 6, 1).unwrap());
    }
}
