//! PIL's colour operations against Pillow's own numbers (tests/data/pillow_fixtures.json's
//! `colour`), and the two transforms built on them: ssd's training transform over the
//! smoke COCO, reso's crops over the smoke BSDS500.

use mlbench_datasets::Scale;
use mlbench_datasets::images::bsds500::{self, SuperResolution};
use mlbench_datasets::images::coco::{self, Detection, Split};
use mlbench_datasets::images::color::{self, ColorJitter};
use mlbench_datasets::images::ssd::{self, SsdTrain};
use mlbench_datasets::images::transforms::{
    IMAGENET_MEAN, IMAGENET_SD, Normalisation, crop, hflip, to_tensor_into,
};
use mlbench_datasets::images::{Filter, Rgb, Sampling, jpeg, resize};
use std::collections::HashSet;

/// The fixtures' input image: channel c of (x, y) is (37x + 91y + 53c + 7xy) mod 256.
fn formula(w: usize, h: usize) -> Rgb {
    let mut pixels = Vec::with_capacity(3 * w * h);
    for y in 0..h {
        for x in 0..w {
            pixels.extend((0..3).map(|c| ((x * 37 + y * 91 + c * 53 + x * y * 7) % 256) as u8));
        }
    }
    Rgb::new(w, h, pixels)
}

fn colour_fixtures() -> serde_json::Value {
    let all: serde_json::Value =
        serde_json::from_str(include_str!("data/pillow_fixtures.json")).unwrap();
    all["colour"].clone()
}

fn bytes_of(v: &serde_json::Value) -> Vec<u8> {
    let items = v.as_array().unwrap().iter();
    items.map(|b| b.as_u64().unwrap() as u8).collect()
}

fn map_pixels(img: &Rgb, f: impl Fn([u8; 3]) -> [u8; 3]) -> Vec<u8> {
    let pixels = img.pixels.chunks_exact(3);
    pixels.flat_map(|p| f([p[0], p[1], p[2]])).collect()
}

/// YCbCr's Y, HSV both ways, Brightness and torchvision's hue rotation equal Pillow's
/// bytes for all 143 pixels of the formula image.
#[test]
fn colour_operations_match_pillow_byte_for_byte() {
    let f = colour_fixtures();
    let src = formula(13, 11);
    assert_eq!(color::y_channel(&src), bytes_of(&f["y"]));
    let hsv = map_pixels(&src, color::rgb_to_hsv);
    assert_eq!(hsv, bytes_of(&f["hsv"]));
    let back = map_pixels(&Rgb::new(13, 11, hsv), color::hsv_to_rgb);
    assert_eq!(back, bytes_of(&f["hsv_to_rgb"]));
    for factor in [0.875, 1.125] {
        let mut img = src.clone();
        color::adjust_brightness(&mut img, factor);
        assert_eq!(img.pixels, bytes_of(&f["brightness"][factor.to_string()]));
    }
    for factor in [0.05, -0.05] {
        let mut img = src.clone();
        color::adjust_hue(&mut img, factor);
        assert_eq!(
            img.pixels,
            bytes_of(&f["hue"][factor.to_string()]),
            "{factor}"
        );
    }
}

/// A training item through [`SsdTrain`] is its pieces in the script's order, each drawing
/// from the item's stream in turn: the crop, the flip (image and boxes), the bilinear
/// resize, the jitter, ToTensor and Normalize.
#[test]
fn the_ssd_transform_is_crop_flip_resize_jitter_normalise() {
    let dir = tempfile::tempdir().unwrap();
    coco::prepare(dir.path(), 6, Scale::Smoke, false).unwrap();
    let set = Detection::open_folder(&dir.path().join(coco::COCO), Split::Train).unwrap();
    let transform = SsdTrain {
        size: 40,
        ..SsdTrain::SSD300
    };
    let s = Sampling {
        seed: 3,
        batch_size: 1,
        shuffle: false,
    };
    let (mut flips, mut crops) = (0, 0);
    for index in 0..12u64 {
        let item = &set.items[index as usize % set.items.len()];
        let img = jpeg::read(&item.path).unwrap();
        let mut got = vec![0.0; transform.item_len()];
        let mut rng = s.item_stream(index, 0);
        let (boxes, labels) = transform.apply_into(
            &img,
            item.size,
            &item.boxes,
            &item.labels,
            &mut rng,
            &mut got,
        );

        let mut rng = s.item_stream(index, 0);
        let cut = ssd::ssd_crop(item.size, &item.boxes, &item.labels, &mut rng);
        let (mut want_boxes, mut piece) = (cut.boxes.clone(), img.clone());
        if let Some(c) = cut.crop {
            let (t, l) = (c.top as i64, c.left as i64);
            piece = crop(&img, t, l, c.bottom - c.top, c.right - c.left);
            crops += 1;
        }
        if rng.unit() < 0.5 {
            piece = hflip(&piece);
            ssd::flip_boxes(&mut want_boxes);
            flips += 1;
        }
        let mut piece = resize(&piece, 40, 40, Filter::Bilinear);
        for adjustment in ColorJitter::SSD.draw(&mut rng) {
            adjustment.apply(&mut piece);
        }
        let mut want = vec![0.0; transform.item_len()];
        to_tensor_into(
            &piece,
            Normalisation::MeanSd(IMAGENET_MEAN, IMAGENET_SD),
            &mut want,
        );
        assert_eq!(got, want, "item {index}");
        assert_eq!((boxes, labels), (want_boxes, cut.labels));
    }
    assert!(
        flips > 0 && flips < 12 && crops > 0,
        "{flips} flips, {crops} crops"
    );
}

/// ssd's loader batches over the smoke COCO: the shape, an epoch's short last batch,
/// every image keeping at least one box inside it with a label of its own, the same batch
/// for the same (seed, index) and another for the next.
#[test]
fn detection_batches_are_keyed_and_keep_a_box_per_image() {
    let dir = tempfile::tempdir().unwrap();
    coco::prepare(dir.path(), 2, Scale::Smoke, false).unwrap();
    let set = Detection::open(dir.path(), Split::Train).unwrap();
    let transform = SsdTrain {
        size: 32,
        ..SsdTrain::SSD300
    };
    let s = Sampling {
        seed: 5,
        batch_size: 3,
        shuffle: true,
    };
    let n = set.items.len();
    let last = s.batches_per_epoch(n) as u64 - 1;
    for index in 0..=last {
        let b = s.detection_batch(&set, &transform, index).unwrap();
        let items = s.items(n, index);
        assert_eq!(b.shape, [items.len(), 3, 32, 32]);
        assert_eq!(b.images.len(), items.len() * 3 * 32 * 32);
        for ((boxes, labels), &i) in b.boxes.iter().zip(&b.labels).zip(&items) {
            assert!(!boxes.is_empty() && boxes.len() == labels.len());
            let own: HashSet<i64> = set.items[i].labels.iter().copied().collect();
            assert!(labels.iter().all(|l| own.contains(l)));
            assert!(
                boxes
                    .iter()
                    .flatten()
                    .all(|v| (-1e-5..=1.0 + 1e-5).contains(v))
            );
            assert!(boxes.iter().all(|b| b[0] <= b[2] && b[1] <= b[3]));
        }
        assert_eq!(s.detection_batch(&set, &transform, index).unwrap(), b);
    }
    assert_eq!(s.items(n, last).len(), n - 3 * last as usize);
    let a = s.detection_batch(&set, &transform, 0).unwrap();
    let b = s.detection_batch(&set, &transform, 1).unwrap();
    assert_ne!(a.images, b.images);
}

/// The smoke BSDS500: train, val and test folders of numbered JPEGs of 120 × 80 or 80 ×
/// 120, ids distinct across the folders, the same bytes for the same seed; the reader
/// lists a folder's images sorted and says what is missing.
#[test]
fn bsds500_smoke_layout_and_listing() {
    let dir = tempfile::tempdir().unwrap();
    let files = bsds500::prepare(dir.path(), 4, Scale::Smoke, false).unwrap();
    assert_eq!(files.len(), 4 + 2 + 4);
    let names: HashSet<_> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_owned())
        .collect();
    assert_eq!(names.len(), files.len(), "ids are distinct");
    for split in bsds500::Split::ALL {
        let listed = bsds500::list(&dir.path().join(split.folder())).unwrap();
        assert_eq!(listed.len(), split.count(Scale::Smoke));
        let mut sorted = listed.clone();
        sorted.sort();
        assert_eq!(listed, sorted);
        for path in &listed {
            let img = jpeg::read(path).unwrap();
            let (w, h) = (img.width, img.height);
            assert!((w, h) == (120, 80) || (w, h) == (80, 120), "{w}×{h}");
            let stem = path.file_stem().unwrap().to_str().unwrap();
            assert!(stem.parse::<u64>().is_ok(), "{stem}");
        }
    }
    assert!(
        dir.path()
            .join("bsds500/BSR/BSDS500/data/images/train")
            .is_dir()
    );
    let again = tempfile::tempdir().unwrap();
    bsds500::prepare(again.path(), 4, Scale::Smoke, false).unwrap();
    for f in &files {
        let read = |root: &std::path::Path| std::fs::read(root.join(f)).unwrap();
        assert_eq!(read(dir.path()), read(again.path()));
    }
    // Refused over itself without force; a folder without images, or none, is missing.
    assert!(bsds500::prepare(dir.path(), 4, Scale::Smoke, false).is_err());
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "x").unwrap();
    std::fs::write(empty.join("upper.JPG"), "x").unwrap();
    for folder in [empty, dir.path().join("nowhere")] {
        let e = bsds500::list(&folder).unwrap_err().to_string();
        assert!(
            e.contains(&folder.display().to_string()) && e.contains("mlbench data prepare"),
            "{e}"
        );
    }
}

/// reso's pair: the target the centre crop of the Y channel (top round(1.5) = 2, left
/// round(2.5) = 2 for 8 of 13 × 11), the input that crop shrunk by Pillow's bilinear
/// resize, both ÷ 255; the crop cut to a multiple of the factor.
#[test]
fn reso_pairs_are_y_crops_and_their_shrink() {
    let f = colour_fixtures();
    let y = bytes_of(&f["y"]);
    let sr = SuperResolution::new(9, 2);
    assert_eq!((sr.crop, sr.low()), (8, 4));
    let (mut input, mut target) = (Vec::new(), Vec::new());
    sr.pair_into(&formula(13, 11), &mut input, &mut target);
    let crop_bytes: Vec<u8> = (0..8)
        .flat_map(|r| (0..8).map(move |c| (r, c)))
        .map(|(r, c)| y[(r + 2) * 13 + c + 2])
        .collect();
    let want: Vec<f32> = crop_bytes.iter().map(|&v| f32::from(v) / 255.0).collect();
    assert_eq!(target, want);
    let grey = Rgb::new(8, 8, crop_bytes.iter().flat_map(|&v| [v; 3]).collect());
    let small = resize(&grey, 4, 4, Filter::Bilinear);
    let want: Vec<f32> = small
        .pixels
        .iter()
        .step_by(3)
        .map(|&v| f32::from(v) / 255.0)
        .collect();
    assert_eq!(input, want);
    // Batches of the smoke set: 4 training images in batches of 3, the last short.
    let dir = tempfile::tempdir().unwrap();
    bsds500::prepare(dir.path(), 1, Scale::Smoke, false).unwrap();
    let files = bsds500::list(&dir.path().join(bsds500::Split::Train.folder())).unwrap();
    let s = Sampling {
        seed: 2,
        batch_size: 3,
        shuffle: true,
    };
    let sr = SuperResolution::new(16, 2);
    let b = s.pair_batch(&files, &sr, 1).unwrap();
    assert_eq!((b.count, b.input.len(), b.target.len()), (1, 64, 256));
    let b0 = s.pair_batch(&files, &sr, 0).unwrap();
    assert_eq!((b0.count, b0.target.len()), (3, 3 * 256));
    assert_eq!(s.pair_batch(&files, &sr, 0).unwrap(), b0);
}
