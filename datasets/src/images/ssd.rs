//! ssd's training transform (`utils.py`'s `SSDTransformer(dboxes, (300, 300), val=False)`)
//! up to the box encoding, on plain buffers: `SSDCropping`'s random IoU-constrained crop,
//! `RandomHorizontalFlip` of the image and its boxes, then `Resize((300, 300))`
//! (bilinear), `ColorJitter(0.125, 0.5, 0.5, 0.05)`, `ToTensor` and ImageNet's
//! `Normalize`; the random draws in that order from the item's [`Stream`]. The boxes are
//! float32 as the script's tensors are, its arithmetic on them in float32. The encoding
//! against the default boxes (`Encoder.encode`) is the runner's.

use super::batch::Sampling;
use super::coco::{Detection, DetectionItem};
use super::color::ColorJitter;
use super::jpeg::{self, Rgb};
use super::keyed::Stream;
use super::resample::{Filter, resize};
use super::transforms::{IMAGENET_MEAN, IMAGENET_SD, Normalisation, crop, hflip, to_tensor_into};
use crate::DataError;

/// A box: left, top, right, bottom, as fractions of the image's width and height.
pub type Ltrb = [f32; 4];

/// `SSDCropping.sample_options` past the first (`None`: the image as it is): the minimum
/// IoU every box must have with the crop (`None`: no constraint). The maximum is always
/// unbounded.
pub const MIN_IOUS: [Option<f32>; 6] =
    [Some(0.1), Some(0.3), Some(0.5), Some(0.7), Some(0.9), None];

/// A crop `SSDCropping` chose: in pixels of the image (`img.crop((left, top, right,
/// bottom))`), and in fractions, as drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SsdCrop {
    /// `int(left · width)`.
    pub left: usize,
    /// `int(top · height)`.
    pub top: usize,
    /// `int(right · width)`.
    pub right: usize,
    /// `int(bottom · height)`.
    pub bottom: usize,
    /// The drawn box, fractions (double, as Python draws them).
    pub fraction: [f64; 4],
    /// The option's minimum IoU (−∞: none).
    pub min_iou: f32,
}

/// An item after the crop: the crop (`None`: the image as it is), its boxes and labels.
#[derive(Debug, Clone, PartialEq)]
pub struct Cropped {
    /// What to cut from the image.
    pub crop: Option<SsdCrop>,
    /// The boxes left, relative to the crop.
    pub boxes: Vec<Ltrb>,
    /// Their labels.
    pub labels: Vec<i64>,
}

/// `calc_iou_tensor` of each box with `other`, in float32.
pub fn iou(boxes: &[Ltrb], other: Ltrb) -> Vec<f32> {
    let area = |b: &Ltrb| (b[2] - b[0]) * (b[3] - b[1]);
    boxes
        .iter()
        .map(|b| {
            let w = (b[2].min(other[2]) - b[0].max(other[0])).max(0.0);
            let h = (b[3].min(other[3]) - b[1].max(other[1])).max(0.0);
            let inter = w * h;
            inter / (area(b) + area(&other) - inter)
        })
        .collect()
}

/// `SSDCropping()(img, (height, width), boxes, labels)`: until an option is kept, an
/// option uniform among the seven (`random.choice`); the first keeps the image; the
/// others try once (`num_cropping_iterations = 1`): width and height uniform in [0.3, 1]
/// (an aspect outside [0.5, 2] fails), left and top uniform in what is left; the try
/// fails unless every box's IoU with it passes the option's minimum and at least one box
/// has its centre strictly inside. Then the boxes are clamped to the crop, those whose
/// centre is outside dropped, and the rest made relative to it.
pub fn ssd_crop(size: (usize, usize), boxes: &[Ltrb], labels: &[i64], rng: &mut Stream) -> Cropped {
    let (height, width) = size;
    loop {
        let option = rng.below(1 + MIN_IOUS.len() as u64) as usize;
        if option == 0 {
            return Cropped {
                crop: None,
                boxes: boxes.to_vec(),
                labels: labels.to_vec(),
            };
        }
        let min_iou = MIN_IOUS[option - 1].unwrap_or(f32::NEG_INFINITY);
        let w = rng.uniform(0.3, 1.0);
        let h = rng.uniform(0.3, 1.0);
        if w / h < 0.5 || w / h > 2.0 {
            continue;
        }
        let left = rng.uniform(0.0, 1.0 - w);
        let top = rng.uniform(0.0, 1.0 - h);
        let (right, bottom) = (left + w, top + h);
        let [l, t, r, b] = [left, top, right, bottom].map(|v| v as f32);
        // `(ious > min_iou) & (ious < inf)`: a NaN IoU (an empty box) fails both.
        if !iou(boxes, [l, t, r, b])
            .iter()
            .all(|&v| v > min_iou && v < f32::INFINITY)
        {
            continue;
        }
        let inside: Vec<bool> = boxes
            .iter()
            .map(|bx| {
                let xc = 0.5 * (bx[0] + bx[2]);
                let yc = 0.5 * (bx[1] + bx[3]);
                xc > l && xc < r && yc > t && yc < b
            })
            .collect();
        if !inside.contains(&true) {
            continue;
        }
        let (wf, hf) = (w as f32, h as f32);
        let kept = boxes
            .iter()
            .zip(labels)
            .zip(&inside)
            .filter(|(_, keep)| **keep);
        let (boxes, labels): (Vec<Ltrb>, Vec<i64>) = kept
            .map(|((bx, &label), _)| {
                let clamped = [bx[0].max(l), bx[1].max(t), bx[2].min(r), bx[3].min(b)];
                let relative = [
                    (clamped[0] - l) / wf,
                    (clamped[1] - t) / hf,
                    (clamped[2] - l) / wf,
                    (clamped[3] - t) / hf,
                ];
                (relative, label)
            })
            .unzip();
        let px = |v: f64, n: usize| (v * n as f64) as usize;
        let crop = SsdCrop {
            left: px(left, width),
            top: px(top, height),
            right: px(right, width),
            bottom: px(bottom, height),
            fraction: [left, top, right, bottom],
            min_iou,
        };
        return Cropped {
            crop: Some(crop),
            boxes,
            labels,
        };
    }
}

/// `RandomHorizontalFlip`'s boxes: left and right become `1 − right` and `1 − left`.
pub fn flip_boxes(boxes: &mut [Ltrb]) {
    for b in boxes {
        let (l, r) = (b[0], b[2]);
        b[0] = 1.0 - r;
        b[2] = 1.0 - l;
    }
}

/// `SSDTransformer(dboxes, (size, size), val=False)` without the encoding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SsdTrain {
    /// The output side (300).
    pub size: usize,
    /// The colour jitter ([`ColorJitter::SSD`]).
    pub jitter: ColorJitter,
}

impl SsdTrain {
    /// The script's, at 300.
    pub const SSD300: SsdTrain = SsdTrain {
        size: 300,
        jitter: ColorJitter::SSD,
    };

    /// Floats per image: 3 · size².
    pub fn item_len(&self) -> usize {
        3 * self.size * self.size
    }

    /// `img` (of `size`, (height, width), as the annotations say) and its boxes through
    /// the transform: the image into `out` (CHW, [`SsdTrain::item_len`] floats), its
    /// boxes and labels returned.
    pub fn apply_into(
        &self,
        img: &Rgb,
        size: (usize, usize),
        boxes: &[Ltrb],
        labels: &[i64],
        rng: &mut Stream,
        out: &mut [f32],
    ) -> (Vec<Ltrb>, Vec<i64>) {
        let cropped = ssd_crop(size, boxes, labels, rng);
        let (mut boxes, labels) = (cropped.boxes, cropped.labels);
        let mut img = match cropped.crop {
            Some(c) => crop(
                img,
                c.top as i64,
                c.left as i64,
                c.bottom - c.top,
                c.right - c.left,
            ),
            None => img.clone(),
        };
        if rng.unit() < 0.5 {
            flip_boxes(&mut boxes);
            img = hflip(&img);
        }
        let mut img = resize(&img, self.size, self.size, Filter::Bilinear);
        self.jitter.apply(&mut img, rng);
        let norm = Normalisation::MeanSd(IMAGENET_MEAN, IMAGENET_SD);
        to_tensor_into(&img, norm, out);
        (boxes, labels)
    }
}

/// One batch of ssd's training loader: the images and each image's boxes and labels
/// (before the encoding).
#[derive(Debug, Clone, PartialEq)]
pub struct DetectionBatch {
    /// The images, each CHW.
    pub images: Vec<f32>,
    /// `[n, 3, size, size]`.
    pub shape: [usize; 4],
    /// Each image's boxes.
    pub boxes: Vec<Vec<Ltrb>>,
    /// Each image's labels.
    pub labels: Vec<Vec<i64>>,
}

impl Sampling {
    /// Batch `index` of `set` through `transform` (each JPEG read and decoded: a file that
    /// cannot be is an error naming it).
    pub fn detection_batch(
        &self,
        set: &Detection,
        transform: &SsdTrain,
        index: u64,
    ) -> Result<DetectionBatch, DataError> {
        let items = self.items(set.items.len(), index);
        let per = transform.item_len();
        let mut images = vec![0.0f32; items.len() * per];
        let (mut boxes, mut labels) = (Vec::new(), Vec::new());
        for (slot, (&i, out)) in items.iter().zip(images.chunks_exact_mut(per)).enumerate() {
            let DetectionItem {
                path,
                size,
                boxes: b,
                labels: l,
            } = &set.items[i];
            let img = jpeg::read(path)?;
            let mut rng = self.item_stream(index, slot);
            let (b, l) = transform.apply_into(&img, *size, b, l, &mut rng, out);
            boxes.push(b);
            labels.push(l);
        }
        Ok(DetectionBatch {
            images,
            shape: [items.len(), 3, transform.size, transform.size],
            boxes,
            labels,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::images::keyed::Purpose;

    /// The IoU of two boxes in doubles, from the definition.
    fn iou64(a: [f64; 4], b: [f64; 4]) -> f64 {
        let w = (a[2].min(b[2]) - a[0].max(b[0])).max(0.0);
        let h = (a[3].min(b[3]) - a[1].max(b[1])).max(0.0);
        let area = |x: [f64; 4]| (x[2] - x[0]) * (x[3] - x[1]);
        w * h / (area(a) + area(b) - w * h)
    }

    #[test]
    fn iou_by_hand() {
        // [0, 0, 0.5, 0.5] and [0.25, 0.25, 0.75, 0.75]: 0.0625 / (0.25 + 0.25 − 0.0625).
        let got = iou(
            &[[0.0, 0.0, 0.5, 0.5], [0.8, 0.8, 1.0, 1.0]],
            [0.25, 0.25, 0.75, 0.75],
        );
        assert!((got[0] - 0.0625 / 0.4375).abs() < 1e-7);
        assert_eq!(got[1], 0.0);
    }

    /// Over many draws: a kept crop is 0.3–1 of each side, of aspect 0.5–2, inside the
    /// image, every box's IoU with it above the option's minimum; the boxes kept are those
    /// whose centres it holds, clamped to it and made relative to it.
    #[test]
    fn crops_keep_their_constraints() {
        let boxes: Vec<Ltrb> = vec![
            [0.1, 0.1, 0.5, 0.4],
            [0.4, 0.3, 0.9, 0.95],
            [0.0, 0.0, 1.0, 1.0],
        ];
        let labels = [3, 7, 9];
        let (mut kept, mut whole) = (0, 0);
        for i in 0..2000 {
            let mut rng = Stream::keyed(11, Purpose::Item, &[i]);
            let out = ssd_crop((300, 400), &boxes, &labels, &mut rng);
            let Some(c) = out.crop else {
                assert_eq!(
                    (out.boxes.as_slice(), out.labels.as_slice()),
                    (&boxes[..], &labels[..])
                );
                whole += 1;
                continue;
            };
            kept += 1;
            let [l, t, r, b] = c.fraction;
            let (w, h) = (r - l, b - t);
            assert!((0.3..=1.0).contains(&w) && (0.3..=1.0).contains(&h));
            assert!((0.5..=2.0).contains(&(w / h)) && l >= 0.0 && t >= 0.0 && r <= 1.0 && b <= 1.0);
            assert_eq!(
                (c.left, c.right),
                ((l * 400.0) as usize, (r * 400.0) as usize)
            );
            assert_eq!(
                (c.top, c.bottom),
                ((t * 300.0) as usize, (b * 300.0) as usize)
            );
            let mut want_labels = Vec::new();
            for (bx, &label) in boxes.iter().zip(&labels) {
                let bx64 = bx.map(f64::from);
                assert!(iou64(bx64, c.fraction) > f64::from(c.min_iou) - 1e-5);
                let (xc, yc) = ((bx64[0] + bx64[2]) / 2.0, (bx64[1] + bx64[3]) / 2.0);
                if xc > l && xc < r && yc > t && yc < b {
                    want_labels.push(label);
                }
            }
            assert_eq!(out.labels, want_labels);
            // The whole-image box, when kept, becomes the whole crop.
            if let Some(k) = out.labels.iter().position(|&x| x == 9) {
                for (got, want) in out.boxes[k].iter().zip([0.0, 0.0, 1.0, 1.0]) {
                    assert!((got - want).abs() < 1e-5, "{:?}", out.boxes[k]);
                }
            }
            assert!(
                out.boxes
                    .iter()
                    .flatten()
                    .all(|v| (-1e-6..=1.0 + 1e-5).contains(v))
            );
        }
        assert!(kept > 1000 && whole > 100, "{kept} crops, {whole} whole");
    }

    /// A box covering the image has IoU w·h with any crop: the options of minimum 0.9
    /// keep only crops of more than 0.9 of the image.
    #[test]
    fn a_whole_image_box_needs_large_crops_for_high_ious() {
        let mut high = 0;
        for i in 0..3000 {
            let mut rng = Stream::keyed(2, Purpose::Item, &[i]);
            let out = ssd_crop((100, 100), &[[0.0, 0.0, 1.0, 1.0]], &[1], &mut rng);
            if let Some(c) = out.crop.filter(|c| c.min_iou == 0.9) {
                let [l, t, r, b] = c.fraction;
                assert!((r - l) * (b - t) > 0.9 - 1e-6);
                high += 1;
            }
        }
        assert!(high > 0);
    }

    #[test]
    fn flipping_mirrors_left_and_right() {
        let mut boxes = [[0.1f32, 0.2, 0.4, 0.6], [0.0, 0.0, 1.0, 0.5]];
        flip_boxes(&mut boxes);
        assert_eq!(
            boxes,
            [[1.0 - 0.4, 0.2, 1.0 - 0.1, 0.6], [0.0, 0.0, 1.0, 0.5]]
        );
    }
}
