//! loader (image_loading/loader loaders.py): no model, only the input pipeline of an
//! ImageNet training: per image, decode the JPEG, RandomResizedCrop 224 (scale 0.08–1,
//! ratio 3/4–4/3, ten tries then the centre-crop fallback, as torchvision draws it),
//! a horizontal flip half of the time, to a float tensor ÷ 255, normalised with ImageNet's
//! mean and sd; `--workers` threads fill each batch of `--batch-size`, in a shuffled order,
//! each decoding and transforming its images straight into their slots of the batch tensor
//! (one, allocated once and refilled every step; on a GPU the batch is then copied there)
//! and summing them. An item is an image (the script counts `batch_size × number` a
//! observation). As the script, a step logs no loss (`batch_loss` stays empty) and ends
//! with a wait for the device; `train_step`'s value, the batch's mean from the workers' sums
//! (no libtorch work on the CPU, so no libtorch threads), is only the tests' proof that the
//! batch was made.
//!
//! The images are read from `--data` in the ImageFolder layout (a folder per class of
//! `.jpg`/`.jpeg`). When it holds none, a synthetic dataset is made there once (`images`
//! JPEGs, default 256, in 8 class folders, sizes spread around ImageNet's mean of about
//! 400×350, smooth colour fields with noise, seeded) and a marker file is written last, so
//! later runs reuse it; it says so on standard error. The resize is separable: per output
//! row the crop's two source rows are blended, then each output pixel from a per-image table
//! of columns (source offsets and weights, the flip folded in), ÷ 255 and normalisation one
//! multiply-add (within 1e-5 of a pixel-by-pixel bilinear reference: see the tests).
//! Differences: the resize is plain bilinear (torchvision's PIL resize also antialiases when
//! it shrinks); the workers are
//! threads of the copy, not processes, and start once, not with every observation's
//! iterator. `crop_size` (224, not a flag of the script) lets tests and `--smoke` shrink it.

use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
use mlbench_schema::rng::SplitMix64;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use tch::{Kind, Tensor};

pub(super) const SOURCE: &str = include_str!("loader.rs");

const MEAN: [f32; 3] = [0.485, 0.456, 0.406];
const SD: [f32; 3] = [0.229, 0.224, 0.225];
/// Written last in a synthetic dataset: its presence means the dataset is complete.
const MARKER: &str = ".mlbench-synthetic";
const CLASSES: usize = 8;

/// SplitMix64: the stream of one image's draws, from the seed, the step and the image
/// (also the host loader's, `host_loader`).
#[derive(Debug, Clone)]
pub(super) struct Rng(SplitMix64);

impl Rng {
    fn new(parts: &[u64]) -> Rng {
        let mut r = SplitMix64::new(0x243f_6a88_85a3_08d3);
        for p in parts {
            r.xor_state(*p);
            r.next_u64();
        }
        Rng(r)
    }

    /// The stream of `generator`.
    pub(super) fn of(generator: SplitMix64) -> Rng {
        Rng(generator)
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in [lo, hi).
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.0.unit_f64()
    }

    /// Uniform integer in [0, n).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// An RGB image, 8 bits per channel, row-major.
#[derive(Debug, Clone, Default, PartialEq)]
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

/// ÷ 255 and ImageNet's normalisation as one multiply-add per channel: v·SCALE + BIAS.
fn normalisation() -> ([f32; 3], [f32; 3]) {
    let scale = [0, 1, 2].map(|c| 1.0 / (255.0 * SD[c]));
    let bias = [0, 1, 2].map(|c| -MEAN[c] / SD[c]);
    (scale, bias)
}

/// The bilinear taps of the `size` outputs along an axis of `n` source pixels: for each, the
/// two source indices and the second one's weight. Pixel centres are aligned
/// (align_corners=False) and the source coordinate is clamped to the axis.
fn taps(n: usize, size: usize) -> impl Iterator<Item = (usize, usize, f32)> {
    let scale = n as f64 / size as f64;
    (0..size).map(move |o| {
        let f = ((o as f64 + 0.5) * scale - 0.5).clamp(0.0, (n - 1) as f64);
        // f ≥ 0, so the cast (truncation) is its floor.
        let i = f as usize;
        (i, (i + 1).min(n - 1), (f - i as f64) as f32)
    })
}

/// [`transform_into`]'s buffers: a row of the crop blended vertically, the column taps.
#[derive(Debug, Default)]
struct ResizeBuffers {
    row: Vec<f32>,
    columns: Vec<(usize, usize, f32)>,
}

/// A worker's buffers, reused from image to image: the JPEG's bytes, the decoded image and
/// the resize's.
#[derive(Debug, Default)]
struct Scratch {
    file: Vec<u8>,
    img: Rgb,
    resize: ResizeBuffers,
}

/// The crop of `img` at (top, left, h, w), resized bilinearly to size × size, flipped
/// when asked, as CHW floats normalised with ImageNet's mean and sd, written into `out`
/// (3 · size² floats); returns their sum. Separable: for each output row the crop's two
/// source rows are blended into a row of floats, then each output pixel blends two of its
/// pixels by a per-image table of columns (the flip folded into it).
fn transform_into(
    img: &Rgb,
    crop: (usize, usize, usize, usize),
    size: usize,
    flip: bool,
    out: &mut [f32],
    buffers: &mut ResizeBuffers,
) -> f64 {
    let (top, left, h, w) = crop;
    let (scale, bias) = normalisation();
    let plane = size * size;
    assert_eq!(out.len(), 3 * plane, "the output holds one image");
    let columns = &mut buffers.columns;
    columns.clear();
    columns.extend(taps(w, size).map(|(x0, x1, wx)| (3 * x0, 3 * x1, wx)));
    if flip {
        columns.reverse();
    }
    let row = &mut buffers.row;
    row.resize(3 * w, 0.0);
    let (red, rest) = out.split_at_mut(plane);
    let (green, blue) = rest.split_at_mut(plane);
    let source_row = |y: usize| {
        let start = ((top + y) * img.width + left) * 3;
        &img.pixels[start..start + 3 * w]
    };
    let mut sum = 0.0f64;
    for (oy, (y0, y1, wy)) in taps(h, size).enumerate() {
        for ((v, &a), &b) in row.iter_mut().zip(source_row(y0)).zip(source_row(y1)) {
            let a = f32::from(a);
            *v = a + (f32::from(b) - a) * wy;
        }
        let line = oy * size..(oy + 1) * size;
        let (r, g, b) = (
            &mut red[line.clone()],
            &mut green[line.clone()],
            &mut blue[line],
        );
        let mut line_sum = 0.0f32;
        for (ox, &(x0, x1, wx)) in columns.iter().enumerate() {
            let at = |c: usize| {
                let a = row[x0 + c];
                (a + (row[x1 + c] - a) * wx) * scale[c] + bias[c]
            };
            let (vr, vg, vb) = (at(0), at(1), at(2));
            r[ox] = vr;
            g[ox] = vg;
            b[ox] = vb;
            line_sum += vr + vg + vb;
        }
        sum += f64::from(line_sum);
    }
    sum
}

/// Decodes the JPEG at `path` into `scratch.img`, reusing its buffers.
fn decode_into(path: &Path, scratch: &mut Scratch) -> Result<(), String> {
    use std::io::Read;
    let at = |e: String| format!("{}: {e}", path.display());
    scratch.file.clear();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut scratch.file))
        .map_err(|e| at(e.to_string()))?;
    let mut decoder = zune_jpeg::JpegDecoder::new(&scratch.file[..]);
    decoder.decode_headers().map_err(|e| at(format!("{e:?}")))?;
    let (width, height) = decoder
        .dimensions()
        .ok_or_else(|| at("no image information".into()))?;
    if decoder.output_buffer_size() != Some(width * height * 3) {
        return Err(at("not an RGB JPEG".into()));
    }
    let img = &mut scratch.img;
    img.pixels.resize(width * height * 3, 0);
    decoder
        .decode_into(&mut img.pixels)
        .map_err(|e| at(format!("{e:?}")))?;
    (img.width, img.height) = (width, height);
    Ok(())
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
            // Written aside and renamed into place: the copies of a job on several devices
            // may make the set at once, and one must never read an image that another is
            // still writing (the rename replaces a finished file with an identical one).
            let part = dir.join(format!(".img{i:05}.jpg.{}.part", unique_suffix()));
            let encoder = jpeg_encoder::Encoder::new_file(&part, 90)
                .map_err(|e| format!("{}: {e}", part.display()))?;
            encoder
                .encode(
                    &pixels,
                    width as u16,
                    height as u16,
                    jpeg_encoder::ColorType::Rgb,
                )
                .map_err(|e| format!("{}: {e}", part.display()))?;
            std::fs::rename(&part, &path).map_err(|e| format!("{}: {e}", path.display()))
        })
        .collect::<Result<Vec<()>, String>>()?;
    std::fs::write(&marker, count.to_string()).map_err(io)?;
    Ok(true)
}

/// A name part no other writer uses at the same time: the process and a counter.
fn unique_suffix() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
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
    /// The batch, batch × 3 × crop × crop floats on the CPU, which the workers fill in place
    /// each step (allocated once).
    images: Tensor,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    Ok(Box::new(loader(ctx, args)?))
}

fn loader(ctx: &Ctx, args: &BenchArgs) -> Result<Loader, BenchError> {
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
    let images = Tensor::empty(
        [batch as i64, 3, crop as i64, crop as i64],
        (Kind::Float, tch::Device::Cpu),
    );
    Ok(Loader {
        images,
        order: Vec::new(),
        next: 0,
        files,
        batch,
        crop,
        pool,
        step: 0,
        seed,
        device: ctx.device,
    })
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

/// The elements of `t`, a contiguous CPU float tensor, to write in place.
fn floats_mut(t: &mut Tensor) -> &mut [f32] {
    assert!(
        t.kind() == Kind::Float && t.device() == tch::Device::Cpu && t.is_contiguous(),
        "a contiguous CPU float tensor"
    );
    let n = t.numel();
    if n == 0 {
        return &mut [];
    }
    // SAFETY: a contiguous CPU tensor of kind Float holds `n` f32s from `data_ptr`, which
    // stay allocated while `t` lives; the exclusive borrow of `t` stands for the storage's,
    // as no other handle on it (view, shallow clone) is kept beyond a step.
    unsafe { std::slice::from_raw_parts_mut(t.data_ptr().cast::<f32>(), n) }
}

impl Train for Loader {
    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        let picks = self.indices();
        let (seed, step, crop) = (self.seed, self.step, self.crop);
        let files = &self.files;
        let plane = 3 * crop * crop;
        let batch = floats_mut(&mut self.images);
        // Each worker decodes and transforms its images straight into their slots of the
        // batch and sums them (for the mean); no libtorch work, so no libtorch threads.
        let sums: Vec<Result<f64, String>> = self.pool.install(|| {
            batch
                .par_chunks_mut(plane)
                .zip(picks.par_iter())
                .enumerate()
                .map_init(Scratch::default, |scratch, (slot, (out, &i))| {
                    decode_into(&files[i].0, scratch)?;
                    let img = &scratch.img;
                    let mut rng = Rng::new(&[seed, step, slot as u64]);
                    let bbox = crop_box(img.width, img.height, &mut rng);
                    let flip = rng.below(2) == 1;
                    Ok(transform_into(
                        img,
                        bbox,
                        crop,
                        flip,
                        out,
                        &mut scratch.resize,
                    ))
                })
                .collect()
        });
        self.step += 1;
        let mut total = 0.0;
        for sum in sums {
            match sum {
                Ok(s) => total += s,
                Err(message) => {
                    return Err(BenchError::Failed {
                        bench: "loader".to_owned(),
                        message,
                    });
                }
            }
        }
        // The batch on the model's device (on the CPU: itself, no copy), as a DataLoader's
        // consumer would take it.
        let labels: Vec<i64> = picks.iter().map(|&i| files[i].1).collect();
        let _images = self.images.to_device(self.device);
        let _labels = Tensor::from_slice(&labels).to_device(self.device);
        Ok(Tensor::from((total / (picks.len() * plane) as f64) as f32))
    }

    fn step(&mut self) -> Result<Logs, BenchError> {
        // loaders.py:45-51: next batch, `.to(device)`, `torch.cuda.synchronize()`; no loss
        // is logged (the batch's mean above is only the tests' proof of the batch).
        let _mean = self.train_step()?;
        super::sync(self.device);
        Ok(Logs::none())
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

    /// [`transform_into`] into a new vector, checking the sum it returns.
    fn transform(
        img: &Rgb,
        crop: (usize, usize, usize, usize),
        size: usize,
        flip: bool,
    ) -> Vec<f32> {
        let mut out = vec![f32::NAN; 3 * size * size];
        let sum = transform_into(
            img,
            crop,
            size,
            flip,
            &mut out,
            &mut ResizeBuffers::default(),
        );
        let want: f64 = out.iter().map(|&v| f64::from(v)).sum();
        assert!(
            (sum - want).abs() <= 1e-4 * want.abs().max(1.0),
            "{sum} vs {want}"
        );
        out
    }

    /// The straightforward bilinear resize, pixel by pixel in f64 (`F.interpolate`'s
    /// arithmetic with align_corners=False), then ÷ 255 and normalised: what
    /// [`transform_into`] computes faster.
    fn reference(
        img: &Rgb,
        crop: (usize, usize, usize, usize),
        size: usize,
        flip: bool,
    ) -> Vec<f32> {
        let (top, left, h, w) = crop;
        let mut out = vec![0.0f32; 3 * size * size];
        let source = |o: usize, n: usize| {
            let f = ((o as f64 + 0.5) * n as f64 / size as f64 - 0.5).clamp(0.0, (n - 1) as f64);
            let i = f.floor();
            (i as usize, (i as usize + 1).min(n - 1), f - i)
        };
        for oy in 0..size {
            let (y0, y1, wy) = source(oy, h);
            for ox in 0..size {
                let (x0, x1, wx) = source(ox, w);
                let at = |y: usize, x: usize, c: usize| {
                    f64::from(img.pixels[((top + y) * img.width + left + x) * 3 + c])
                };
                let dx = if flip { size - 1 - ox } else { ox };
                for c in 0..3 {
                    let v = (at(y0, x0, c) * (1.0 - wx) + at(y0, x1, c) * wx) * (1.0 - wy)
                        + (at(y1, x0, c) * (1.0 - wx) + at(y1, x1, c) * wx) * wy;
                    let v = (v / 255.0 - f64::from(MEAN[c])) / f64::from(SD[c]);
                    out[c * size * size + oy * size + dx] = v as f32;
                }
            }
        }
        out
    }

    fn decode(path: &Path) -> Result<Rgb, String> {
        let mut scratch = Scratch::default();
        decode_into(path, &mut scratch)?;
        Ok(scratch.img)
    }

    /// Within 1e-5 (normalised units, where one level of 255 is about 0.017) of the
    /// reference, on a small noisy image: crops shrunk and enlarged, thin, at the edges,
    /// flipped or not.
    #[test]
    fn the_fast_resize_matches_a_reference_bilinear_resize() {
        let (width, height) = (23, 17);
        let mut rng = Rng::new(&[42]);
        let img = Rgb {
            width,
            height,
            pixels: (0..width * height * 3)
                .map(|_| rng.below(256) as u8)
                .collect(),
        };
        let crops = [
            (0, 0, 17, 23),
            (3, 5, 9, 11),
            (16, 22, 1, 1),
            (0, 20, 17, 3),
            (12, 0, 5, 23),
            (1, 2, 14, 13),
        ];
        let mut worst = 0.0f32;
        let mut buffers = ResizeBuffers::default();
        for crop in crops {
            for size in [1, 4, 7, 16, 40] {
                for flip in [false, true] {
                    let want = reference(&img, crop, size, flip);
                    // One set of buffers for every case, as a worker reuses them.
                    let mut out = vec![f32::NAN; 3 * size * size];
                    transform_into(&img, crop, size, flip, &mut out, &mut buffers);
                    assert_eq!(out, transform(&img, crop, size, flip));
                    for (a, b) in out.iter().zip(&want) {
                        worst = worst.max((a - b).abs());
                    }
                }
            }
        }
        assert!(worst < 1e-5, "{worst}");
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

    /// A loader's context and arguments on one CPU thread: its images in `data`, `batch`
    /// a step, `seed`, and the integer arguments `extra`.
    fn on_cpu(data: &Path, batch: i64, seed: i64, extra: &[(&str, i64)]) -> (Ctx, BenchArgs) {
        use crate::bench::DeviceSpec;
        use mlbench_schema::value::Value;
        let mut args = BenchArgs {
            batch_size: batch,
            number: 1,
            repeat: 1,
            seed,
            extra: extra
                .iter()
                .map(|&(k, v)| (k.to_owned(), Value::Int(v)))
                .collect(),
        };
        let data = Value::from(data.to_str().unwrap());
        args.extra.insert("data".to_owned(), data);
        let spec = DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        (Ctx::new("loader", &args, spec).unwrap(), args)
    }

    /// A step's batch holds, slot by slot, the transform of its image with the slot's draws,
    /// and its "loss" is the batch's mean.
    #[test]
    fn a_step_fills_the_batch_in_place_and_returns_its_mean() {
        let dir = tempfile::tempdir().unwrap();
        let extra = [("workers", 2), ("crop_size", 16), ("images", 5)];
        let (ctx, args) = on_cpu(dir.path(), 3, 4, &extra);
        let mut loader = loader(&ctx, &args).unwrap();
        // The same seed, the same shuffle: a twin's first picks are the step's.
        let picks = super::loader(&ctx, &args).unwrap().indices();
        let loss = loader.train_step().unwrap().double_value(&[]);
        let batch = Vec::<f32>::try_from(loader.images.flatten(0, -1)).unwrap();
        assert_eq!(batch.len(), 3 * 3 * 16 * 16);
        for (slot, &i) in picks.iter().enumerate() {
            let img = decode(&loader.files[i].0).unwrap();
            let mut rng = Rng::new(&[4, 0, slot as u64]);
            let bbox = crop_box(img.width, img.height, &mut rng);
            let flip = rng.below(2) == 1;
            let want = transform(&img, bbox, 16, flip);
            assert_eq!(
                &batch[slot * want.len()..(slot + 1) * want.len()],
                want,
                "slot {slot}"
            );
        }
        let mean = batch.iter().map(|&v| f64::from(v)).sum::<f64>() / batch.len() as f64;
        assert!((loss - mean).abs() < 1e-6, "{loss} vs {mean}");
        // The next step refills the same tensor with other images.
        let loss2 = loader.train_step().unwrap().double_value(&[]);
        let again = Vec::<f32>::try_from(loader.images.flatten(0, -1)).unwrap();
        assert_ne!(again, batch);
        let mean = again.iter().map(|&v| f64::from(v)).sum::<f64>() / again.len() as f64;
        assert!((loss2 - mean).abs() < 1e-6, "{loss2} vs {mean}");
    }

    /// A JPEG that cannot be decoded fails the step with an error naming the file, not a
    /// panic (the bench's entry then says why).
    #[test]
    fn an_unreadable_image_is_the_steps_error() {
        let dir = tempfile::tempdir().unwrap();
        let class = dir.path().join("class00");
        std::fs::create_dir_all(&class).unwrap();
        std::fs::write(class.join("broken.jpg"), b"\xff\xd8 not a JPEG").unwrap();
        let (ctx, args) = on_cpu(dir.path(), 1, 1, &[("crop_size", 8)]);
        let mut loader = loader(&ctx, &args).unwrap();
        match loader.train_step() {
            Err(BenchError::Failed { bench, message }) => {
                assert_eq!(bench, "loader");
                assert!(message.contains("broken.jpg"), "{message}");
            }
            other => panic!("expected the step's error, got {:?}", other.map(|_| ())),
        }
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
        assert_eq!(img.pixels.len(), img.width * img.height * 3);
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

    /// Copies on two devices make the set at once (CI's loader failed so, reading an image
    /// the other copy was rewriting): whoever finishes first finds every image whole, while
    /// the other is still writing, and no part file is left.
    #[test]
    fn two_copies_making_the_set_at_once_never_see_a_partial_image() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::thread::scope(|s| {
            let writers: Vec<_> = (0..2)
                .map(|_| s.spawn(|| synthesize(&root, 24, 3).unwrap()))
                .collect();
            // Read while they write: every image listed decodes whole.
            let mut reads = 0;
            while writers.iter().any(|w| !w.is_finished()) {
                for (path, _) in image_folder(&root) {
                    if let Err(e) = decode(&path) {
                        panic!("{}: {e}", path.display());
                    }
                    reads += 1;
                }
            }
            for w in writers {
                w.join().unwrap();
            }
            eprintln!("{reads} images decoded while the set was being made");
        });
        let files = image_folder(&root);
        assert_eq!(files.len(), 24);
        for (path, _) in &files {
            decode(path).unwrap();
        }
        let leftovers = walk_names(&root)
            .into_iter()
            .filter(|n| n.ends_with(".part"))
            .count();
        assert_eq!(leftovers, 0);
    }

    fn walk_names(root: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(root).unwrap().flatten() {
            if e.path().is_dir() {
                out.extend(walk_names(&e.path()));
            } else {
                out.push(e.file_name().to_string_lossy().into_owned());
            }
        }
        out
    }
}
