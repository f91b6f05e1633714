//! The image data sets: the makers' layouts, the listing's order, the codec and resize
//! against Pillow's own numbers (tests/data/pillow_fixtures.json, made by
//! tests/data/pillow_fixtures.py), the transforms' draws and the batches' keying.

use mlbench_datasets::Scale;
use mlbench_datasets::images::coco::{self, Detection, Split};
use mlbench_datasets::images::transforms::{
    self, CropBox, IMAGENET_MEAN, IMAGENET_SD, Normalisation, Pipeline,
};
use mlbench_datasets::images::{Filter, ImageFolder, Rgb, Sampling, fake_imagenet, jpeg, resize};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// The fixtures' input images: channel c of (x, y) is (37x + 91y + 53c + 7xy) mod 256.
fn formula(w: usize, h: usize) -> Rgb {
    let mut pixels = Vec::with_capacity(3 * w * h);
    for y in 0..h {
        for x in 0..w {
            pixels.extend((0..3).map(|c| ((x * 37 + y * 91 + c * 53 + x * y * 7) % 256) as u8));
        }
    }
    Rgb::new(w, h, pixels)
}

fn fixtures() -> serde_json::Value {
    serde_json::from_str(include_str!("data/pillow_fixtures.json")).unwrap()
}

fn bytes_of(v: &serde_json::Value) -> Vec<u8> {
    v.as_array().unwrap().iter().map(|b| b.as_u64().unwrap() as u8).collect()
}

/// Every resize of the fixture file equals Pillow's, byte for byte — but one: Pillow 13,
/// which made the file, runs the vertical pass first when the width grows and the height
/// shrinks (13 × 11 → 20 × 6), where the suite's Pillow 6.2 and this crate always run the
/// horizontal one first; the two orders round differently, by a level or two.
#[test]
fn resize_matches_pillow_byte_for_byte() {
    let f = fixtures();
    let cases = f["resizes"].as_array().unwrap();
    assert_eq!(cases.len(), 6);
    for case in cases {
        let side = |k: &str, i: usize| case[k][i].as_u64().unwrap() as usize;
        let filter = match case["filter"].as_str().unwrap() {
            "bilinear" => Filter::Bilinear,
            "bicubic" => Filter::Bicubic,
            "lanczos" => Filter::Lanczos,
            other => panic!("{other}"),
        };
        let src = formula(side("source", 0), side("source", 1));
        let (w, h) = (side("output", 0), side("output", 1));
        let out = resize(&src, w, h, filter);
        let want = bytes_of(&case["pixels"]);
        if (w, h) == (20, 6) {
            assert_ne!(out.pixels, want);
            let max = out.pixels.iter().zip(&want).map(|(a, b)| a.abs_diff(*b)).max();
            assert!(max <= Some(4), "{max:?}");
        } else {
            assert_eq!(out.pixels, want, "{w}×{h}");
        }
    }
}

/// The offsets of the marker `code`'s segments in a JPEG.
fn segments(bytes: &[u8], code: u8) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut i = 2;
    while i + 4 <= bytes.len() && bytes[i] == 0xff {
        let marker = bytes[i + 1];
        let len = usize::from(bytes[i + 2]) << 8 | usize::from(bytes[i + 3]);
        if marker == code {
            out.push(bytes[i + 4..i + 2 + len].to_vec());
        }
        if marker == 0xda {
            break;
        }
        i += 2 + len;
    }
    out
}

/// The JPEGs written have PIL's default quantisation tables (quality 75), Huffman tables
/// and 4:2:0 sampling: the segments of a file Pillow saved, compared one by one.
#[test]
fn jpegs_are_written_with_pils_defaults() {
    let f = fixtures();
    let pillow = bytes_of(&f["jpeg"]["bytes"]);
    let ours = jpeg::encode(&formula(40, 24), Path::new("x.jpeg")).unwrap();
    // DQT (0xdb) may hold both tables in one segment or two: compare their contents.
    let tables = |b: &[u8]| segments(b, 0xdb).concat();
    assert_eq!(tables(&ours), tables(&pillow));
    // Quality 75 scales Annex K's tables by 50%: the first luma entry 16 → 8.
    assert_eq!(tables(&ours)[1], 8);
    let huffman = |b: &[u8]| segments(b, 0xc4).concat();
    assert_eq!(huffman(&ours), huffman(&pillow));
    // SOF0: precision, height, width, 3 components: Y 2×2, Cb and Cr 1×1.
    // The components' ids differ (0–2 here, 1–3 in PIL's), which no decoder minds.
    let sof = |b: &[u8]| {
        let s = segments(b, 0xc0).concat();
        [&s[..6], &s[7..9], &s[10..12], &s[13..15]].concat()
    };
    assert_eq!(sof(&ours), sof(&pillow));
    assert_eq!(sof(&ours), [8, 0, 24, 0, 40, 3, 0x22, 0, 0x11, 1, 0x11, 1]);
}

/// For sides that are multiples of 16 the entropy-coded scan equals Pillow's byte for
/// byte: libjpeg's colour conversion and 2 × 2 chroma averaging, the same DCT,
/// quantisation and Huffman codes. (Other sides differ only in the blocks wholly outside
/// the image, which no decoder shows.)
#[test]
fn jpeg_scans_equal_pillows_for_sides_of_sixteens() {
    let f = fixtures();
    let pillow = bytes_of(&f["jpeg16"]["bytes"]);
    let ours = jpeg::encode(&formula(48, 32), Path::new("x.jpeg")).unwrap();
    // The scan: after the SOS header (2 + 12 bytes for three components).
    let scan = |b: &[u8]| {
        let sos = b.windows(2).position(|w| w == [0xff, 0xda]).unwrap();
        b[sos + 14..].to_vec()
    };
    assert!(scan(&pillow).len() > 500);
    assert_eq!(scan(&ours), scan(&pillow));
}

/// zune-jpeg's decoding of a JPEG Pillow saved, against Pillow's own (libjpeg-turbo's), on
/// an image of steep colour changes: most bytes equal, none more than 6 levels off, but
/// in the last column of an image whose width is not a multiple of 16 (zune's chroma
/// upsampling reads the padding there), where they differ by up to 21.
#[test]
fn jpeg_decoding_is_close_to_pillows() {
    let f = fixtures();
    let pillow = bytes_of(&f["jpeg"]["pillow_rgb"]);
    let img = jpeg::decode(&bytes_of(&f["jpeg"]["bytes"]), Path::new("x.jpeg")).unwrap();
    assert_eq!((img.width, img.height), (40, 24));
    let diffs: Vec<(usize, u8)> = (img.pixels.iter().zip(&pillow).enumerate())
        .map(|(i, (a, b))| ((i / 3) % 40, a.abs_diff(*b)))
        .collect();
    let inner = diffs.iter().filter(|(x, _)| *x < 39).map(|&(_, d)| d);
    assert!(inner.clone().max() <= Some(6));
    let equal = inner.clone().filter(|&d| d == 0).count() as f64 / inner.count() as f64;
    assert!(equal > 0.6, "{equal} equal");
    let last = diffs.iter().filter(|(x, _)| *x == 39).map(|&(_, d)| d).max();
    assert!(last <= Some(21), "{last:?}");
}
