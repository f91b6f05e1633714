//! The scripts' torchvision transforms (the suite's torchvision, 0.4) on [`Rgb`] images:
//! `Resize`, `CenterCrop`, `RandomResizedCrop`, `RandomHorizontalFlip`, `ToTensor` and
//! `Normalize`, with Python's rounding (`round` is half to even) and float32 arithmetic
//! where torch uses it. The random draws come from a [`Stream`] in the order torchvision
//! makes them; the stream is not Python's Mersenne Twister, so the draws are not the
//! scripts' own, only drawn the same way.

use super::jpeg::Rgb;
use super::keyed::Stream;
use super::resample::{Filter, resize};

/// ImageNet's channel means, as the scripts normalise with them.
pub const IMAGENET_MEAN: [f32; 3] = [0.485, 0.456, 0.406];
/// ImageNet's channel standard deviations.
pub const IMAGENET_SD: [f32; 3] = [0.229, 0.224, 0.225];

/// A crop box: top row, left column, height, width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CropBox {
    /// First row.
    pub top: usize,
    /// First column.
    pub left: usize,
    /// Rows.
    pub height: usize,
    /// Columns.
    pub width: usize,
}

/// PIL's `img.crop((left, top, left + w, top + h))`: the box's pixels, those outside the
/// image black. `top` and `left` may be negative (a centre crop larger than the image).
pub fn crop(img: &Rgb, top: i64, left: i64, height: usize, width: usize) -> Rgb {
    let mut pixels = vec![0u8; 3 * width * height];
    for y in 0..height {
        let sy = top + y as i64;
        if sy < 0 || sy >= img.height as i64 {
            continue;
        }
        for x in 0..width {
            let sx = left + x as i64;
            if sx < 0 || sx >= img.width as i64 {
                continue;
            }
            let from = 3 * (sy as usize * img.width + sx as usize);
            let to = 3 * (y * width + x);
            pixels[to..to + 3].copy_from_slice(&img.pixels[from..from + 3]);
        }
    }
    Rgb::new(width, height, pixels)
}

/// PIL's `transpose(FLIP_LEFT_RIGHT)`.
pub fn hflip(img: &Rgb) -> Rgb {
    let mut pixels = Vec::with_capacity(img.pixels.len());
    for row in img.pixels.chunks_exact(3 * img.width) {
        pixels.extend(row.chunks_exact(3).rev().flatten());
    }
    Rgb::new(img.width, img.height, pixels)
}

/// `Resize(size)` with an int: the shorter side becomes `size`, the longer
/// `int(size · long / short)`; an image whose shorter side is already `size` is unchanged.
pub fn resize_shorter(img: &Rgb, size: usize, filter: Filter) -> Rgb {
    let (w, h) = (img.width, img.height);
    if (w <= h && w == size) || (h <= w && h == size) {
        return img.clone();
    }
    // Python's int(size * h / w): true division, then truncation.
    if w < h {
        resize(
            img,
            size,
            (size as f64 * h as f64 / w as f64) as usize,
            filter,
        )
    } else {
        resize(
            img,
            (size as f64 * w as f64 / h as f64) as usize,
            size,
            filter,
        )
    }
}

/// `CenterCrop(size)`: top `round((h − size) / 2)`, left likewise (half to even).
pub fn center_crop(img: &Rgb, height: usize, width: usize) -> Rgb {
    let offset = |n: usize, m: usize| ((n as f64 - m as f64) / 2.0).round_ties_even() as i64;
    crop(
        img,
        offset(img.height, height),
        offset(img.width, width),
        height,
        width,
    )
}

/// `RandomResizedCrop.get_params(img, scale=(0.08, 1), ratio=(3/4, 4/3))`: ten tries of a
/// target area uniform in `scale` × the image's and an aspect ratio log-uniform in
/// `ratio`, kept when the rounded box fits (then its top and left uniform, inclusive);
/// else the whole image cut to the ratio range, centred.
pub fn random_resized_crop_box(width: usize, height: usize, rng: &mut Stream) -> CropBox {
    const SCALE: (f64, f64) = (0.08, 1.0);
    const RATIO: (f64, f64) = (3.0 / 4.0, 4.0 / 3.0);
    let area = (width * height) as f64;
    for _ in 0..10 {
        let target = rng.uniform(SCALE.0, SCALE.1) * area;
        let aspect = rng.uniform(RATIO.0.ln(), RATIO.1.ln()).exp();
        let w = (target * aspect).sqrt().round_ties_even() as usize;
        let h = (target / aspect).sqrt().round_ties_even() as usize;
        if 0 < w && w <= width && 0 < h && h <= height {
            let top = rng.randint(0, height - h);
            let left = rng.randint(0, width - w);
            return CropBox {
                top,
                left,
                height: h,
                width: w,
            };
        }
    }
    fallback_box(width, height, RATIO)
}

/// The centre fallback of `RandomResizedCrop.get_params`.
fn fallback_box(width: usize, height: usize, ratio: (f64, f64)) -> CropBox {
    let in_ratio = width as f64 / height as f64;
    let (w, h) = if in_ratio < ratio.0 {
        (width, (width as f64 / ratio.0).round_ties_even() as usize)
    } else if in_ratio > ratio.1 {
        ((height as f64 * ratio.1).round_ties_even() as usize, height)
    } else {
        (width, height)
    };
    CropBox {
        top: (height - h) / 2,
        left: (width - w) / 2,
        height: h,
        width: w,
    }
}

/// `ToTensor()` then `Normalize(mean, sd)` (or none), written as CHW float32 into `out`
/// (3 · w · h values), each value `v / 255` in float32 and then, as `norm` says,
/// `(v − mean) / sd` (torch's `sub_` then `div_`, in float32) or `× 255`.
pub fn to_tensor_into(img: &Rgb, norm: Normalisation, out: &mut [f32]) {
    let plane = img.width * img.height;
    assert_eq!(out.len(), 3 * plane, "the output holds one image");
    for (i, px) in img.pixels.chunks_exact(3).enumerate() {
        for c in 0..3 {
            let v = f32::from(px[c]) / 255.0;
            out[c * plane + i] = match norm {
                Normalisation::None => v,
                Normalisation::Times255 => v * 255.0,
                Normalisation::MeanSd(mean, sd) => (v - mean[c]) / sd[c],
            };
        }
    }
}

/// What follows `ToTensor` in a script's pipeline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Normalisation {
    /// Nothing.
    None,
    /// `Lambda(lambda x: x.mul(255))` (fast_style).
    Times255,
    /// `Normalize(mean, sd)`.
    MeanSd([f32; 3], [f32; 3]),
}

/// A script's image pipeline, from the decoded image to its tensor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pipeline {
    /// convnet and loader: `RandomResizedCrop(size)`, `RandomHorizontalFlip()`,
    /// `ToTensor()`, `Normalize(ImageNet's mean, sd)`.
    RandomCrop {
        /// The output side (224).
        size: usize,
    },
    /// dcgan (`Normalize((0.5,)·3, (0.5,)·3)`) and fast_style (`× 255`): `Resize(size)`,
    /// `CenterCrop(size)`, `ToTensor()`, then `norm`.
    CenterCrop {
        /// The output side (64 in both jobs).
        size: usize,
        /// What follows `ToTensor`.
        norm: Normalisation,
    },
    /// ssd's validation transform: `Resize((size, size))` (both sides), `ToTensor()`,
    /// `Normalize(ImageNet's mean, sd)`. (Its training transform — SSD's random crops,
    /// ColorJitter and the box encoding — is not here.)
    Squash {
        /// The output side (300).
        size: usize,
    },
}

impl Pipeline {
    /// convnet's and loader's pipeline at 224.
    pub const CONVNET: Pipeline = Pipeline::RandomCrop { size: 224 };
    /// dcgan's at `--imageSize 64`.
    pub const DCGAN: Pipeline = Pipeline::CenterCrop {
        size: 64,
        norm: Normalisation::MeanSd([0.5; 3], [0.5; 3]),
    };
    /// ssd's validation transform at 300.
    pub const SSD_VAL: Pipeline = Pipeline::Squash { size: 300 };
    /// fast_style's at `--image-size 64`.
    pub const FAST_STYLE: Pipeline = Pipeline::CenterCrop {
        size: 64,
        norm: Normalisation::Times255,
    };

    /// The output side.
    pub fn size(&self) -> usize {
        match *self {
            Pipeline::RandomCrop { size }
            | Pipeline::CenterCrop { size, .. }
            | Pipeline::Squash { size } => size,
        }
    }

    /// Floats per image: 3 · size².
    pub fn item_len(&self) -> usize {
        3 * self.size() * self.size()
    }

    /// `img` through the pipeline into `out` (CHW, [`Pipeline::item_len`] values), its
    /// random draws from `rng` in torchvision's order (crop, then flip).
    pub fn apply_into(&self, img: &Rgb, rng: &mut Stream, out: &mut [f32]) {
        match *self {
            Pipeline::RandomCrop { size } => {
                let b = random_resized_crop_box(img.width, img.height, rng);
                let cut = crop(img, b.top as i64, b.left as i64, b.height, b.width);
                let mut resized = resize(&cut, size, size, Filter::Bilinear);
                if rng.unit() < 0.5 {
                    resized = hflip(&resized);
                }
                let norm = Normalisation::MeanSd(IMAGENET_MEAN, IMAGENET_SD);
                to_tensor_into(&resized, norm, out);
            }
            Pipeline::Squash { size } => {
                let norm = Normalisation::MeanSd(IMAGENET_MEAN, IMAGENET_SD);
                to_tensor_into(&resize(img, size, size, Filter::Bilinear), norm, out);
            }
            Pipeline::CenterCrop { size, norm } => {
                let resized = resize_shorter(img, size, Filter::Bilinear);
                to_tensor_into(&center_crop(&resized, size, size), norm, out);
            }
        }
    }
}
