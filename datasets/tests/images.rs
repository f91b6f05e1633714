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
use std::ffi::OsStr;
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
    v.as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap() as u8)
        .collect()
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
            let max = out
                .pixels
                .iter()
                .zip(&want)
                .map(|(a, b)| a.abs_diff(*b))
                .max();
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
    let last = diffs
        .iter()
        .filter(|(x, _)| *x == 39)
        .map(|&(_, d)| d)
        .max();
    assert!(last <= Some(21), "{last:?}");
}

/// RandomResizedCrop's boxes fit the image, cover 8–100% of it (up to the rounding of
/// the sides) with a ratio within 3/4–4/3, and spread their corners over the image.
#[test]
fn random_resized_crop_draws_within_bounds() {
    let sampling = Sampling {
        seed: 5,
        batch_size: 1,
        shuffle: true,
    };
    let (w, h) = (500usize, 375usize);
    let mut lefts = HashSet::new();
    let (mut areas, mut ratios) = (Vec::new(), Vec::new());
    for i in 0..2000 {
        let b = transforms::random_resized_crop_box(w, h, &mut sampling.item_stream(i, 0));
        assert!(b.width > 0 && b.height > 0);
        assert!(b.left + b.width <= w && b.top + b.height <= h, "{b:?}");
        let area = (b.width * b.height) as f64 / (w * h) as f64;
        let ratio = b.width as f64 / b.height as f64;
        assert!((0.079..=1.0).contains(&area), "{b:?} {area}");
        assert!((0.74..=1.36).contains(&ratio), "{b:?} {ratio}");
        lefts.insert(b.left);
        areas.push(area);
        ratios.push(ratio);
    }
    assert!(lefts.len() > 200, "{} distinct lefts", lefts.len());
    // The draws span both ranges: areas near 8% and near 100%, ratios near both limits.
    let span = |v: &[f64]| {
        v.iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)))
    };
    let (small, large) = span(&areas);
    assert!(small < 0.1 && large > 0.9, "areas {small}–{large}");
    let (narrow, wide) = span(&ratios);
    assert!(narrow < 0.78 && wide > 1.28, "ratios {narrow}–{wide}");
}

/// When no try fits (an image far wider or taller than 4/3), the box is the centred
/// crop at the ratio's limit: 1000 × 10 → 13 × 10 (10 · 4/3 = 13.33 → 13) at left
/// (1000 − 13) // 2 = 493; 10 × 1000 → 10 × 13 (10 ÷ 3/4) at top 493.
#[test]
fn random_resized_crop_falls_back_to_the_centre() {
    let sampling = Sampling {
        seed: 1,
        batch_size: 1,
        shuffle: false,
    };
    for i in 0..20 {
        let mut rng = sampling.item_stream(i, 0);
        let wide = transforms::random_resized_crop_box(1000, 10, &mut rng);
        assert_eq!(
            wide,
            CropBox {
                top: 0,
                left: 493,
                height: 10,
                width: 13
            }
        );
        let tall = transforms::random_resized_crop_box(10, 1000, &mut rng);
        assert_eq!(
            tall,
            CropBox {
                top: 493,
                left: 0,
                height: 13,
                width: 10
            }
        );
    }
}

/// CenterCrop rounds half to even, as Python's round: 7 columns → 2 start at
/// round(2.5) = 2 and 8 rows → 3 at round(2.5) = 2 (half away from zero would give 3); a
/// crop larger than the image is padded with black. Resize(int) scales the shorter side: 100 × 40 → 160 × 64.
#[test]
fn center_crop_resize_and_flip() {
    let img = formula(7, 8);
    let c = transforms::center_crop(&img, 3, 2);
    assert_eq!(c.at(0, 0), img.at(2, 2));
    assert_eq!(c.at(1, 2), img.at(3, 4));
    let big = transforms::center_crop(&formula(2, 2), 4, 4);
    assert_eq!(big.at(0, 0), [0, 0, 0]);
    assert_eq!(big.at(1, 1), formula(2, 2).at(0, 0));
    let r = transforms::resize_shorter(&formula(100, 40), 64, Filter::Bilinear);
    assert_eq!((r.width, r.height), (160, 64));
    let r = transforms::resize_shorter(&formula(30, 45), 64, Filter::Bilinear);
    assert_eq!((r.width, r.height), (64, 96));
    let same = formula(64, 90);
    assert_eq!(
        transforms::resize_shorter(&same, 64, Filter::Bilinear),
        same
    );
    let flipped = transforms::hflip(&img);
    assert_eq!(flipped.at(0, 3), img.at(6, 3));
    assert_eq!(transforms::hflip(&flipped), img);
}

/// ToTensor and Normalize: CHW, v / 255, then (v − mean) / sd, computed here in f64.
#[test]
fn to_tensor_and_normalize() {
    let img = Rgb::new(2, 1, vec![0, 128, 255, 10, 20, 30]);
    let mut out = vec![0.0f32; 6];
    let norm = Normalisation::MeanSd(IMAGENET_MEAN, IMAGENET_SD);
    transforms::to_tensor_into(&img, norm, &mut out);
    let mean = [0.485, 0.456, 0.406];
    let sd = [0.229, 0.224, 0.225];
    for c in 0..3 {
        for x in 0..2 {
            let v = f64::from(img.pixels[3 * x + c]) / 255.0;
            let want = (v - mean[c]) / sd[c];
            assert!((f64::from(out[2 * c + x]) - want).abs() < 1e-6, "{c} {x}");
        }
    }
    // Channel 0 of pixel 0 is 0: −0.485 / 0.229 = −2.1179; channel 2 of pixel 0 is 255:
    // (1 − 0.406) / 0.225 = 2.64.
    assert!((out[0] + 2.117_903).abs() < 1e-5);
    assert!((out[4] - 2.64).abs() < 1e-5);
    transforms::to_tensor_into(&img, Normalisation::Times255, &mut out);
    assert_eq!(out, [0.0, 10.0, 128.0, 20.0, 255.0, 30.0]);
}

fn touch(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, b"").unwrap();
}

/// ImageFolder's order on awkward names: classes by code point ("10" before "2", upper
/// case before lower, hidden folders are classes, a link to a folder is one, files at
/// the top are not), files by code point within each folder, folders walked in sorted
/// order of their paths ("sub b" before "sub/deeper", as ' ' < '/'), extensions matched
/// lower-cased (and `webp` without its dot), a name that is not UTF-8 after every
/// character below U+DC80.
#[test]
fn image_folder_orders_as_torchvision() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for f in [
        "2/b.jpg",
        "2/a.JPG",
        "2/10.jpg",
        "2/9.jpg",
        "2/note.txt",
        "2/zwebp",
        "2/c.Jpeg",
        "10/x.png",
        "B/y.jpeg",
        "a/sub/deeper/k.jpg",
        "a/sub b/j.jpg",
        "a/sub/i.jpg",
        "a/h.jpg",
        ".hidden/g.bmp",
        "top.jpg",
    ] {
        touch(&root.join(f));
    }
    touch(&root.join("é/e.jpg"));
    touch(&root.join("é").join(OsStr::from_bytes(b"\xff.jpg")));
    touch(&root.join("é/z.jpg"));
    std::os::unix::fs::symlink(root.join("B"), root.join("link")).unwrap();
    std::fs::create_dir_all(root.join("empty")).unwrap();
    let folder = ImageFolder::open(root).unwrap();
    assert_eq!(
        folder.classes,
        [".hidden", "10", "2", "B", "a", "empty", "link", "é"]
    );
    let got: Vec<(String, usize)> = (folder.samples.iter())
        .map(|(p, c)| {
            (
                p.strip_prefix(root).unwrap().to_string_lossy().into_owned(),
                *c,
            )
        })
        .collect();
    let want = [
        (".hidden/g.bmp", 0),
        ("10/x.png", 1),
        ("2/10.jpg", 2),
        ("2/9.jpg", 2),
        ("2/a.JPG", 2),
        ("2/b.jpg", 2),
        ("2/c.Jpeg", 2),
        ("2/zwebp", 2),
        ("B/y.jpeg", 3),
        ("a/h.jpg", 4),
        ("a/sub/i.jpg", 4),
        ("a/sub b/j.jpg", 4),
        ("a/sub/deeper/k.jpg", 4),
        ("link/y.jpeg", 6),
        ("é/e.jpg", 7),
        ("é/z.jpg", 7),
        ("é/\u{fffd}.jpg", 7),
    ];
    let want: Vec<(String, usize)> = want.iter().map(|(p, c)| (p.to_string(), *c)).collect();
    assert_eq!(got, want);
    assert!(matches!(
        ImageFolder::open(&root.join("empty")),
        Err(mlbench_datasets::DataError::Missing { .. })
    ));
}

/// Every file under `root`, relative, with its bytes.
fn tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.insert(path.strip_prefix(root).unwrap().to_path_buf(), bytes);
            }
        }
    }
    out
}

/// The smoke fake ImageNet: `ImageNet/train/<class>/<i>.jpeg`, classes 0–3, numbers 0–3
/// (four workers of four draws, each numbering from 0), each number in one to four
/// classes; 64 × 64 RGB JPEGs of noise that wraps (every byte value occurs).
#[test]
fn fake_imagenet_smoke_layout() {
    let dir = tempfile::tempdir().unwrap();
    let written = fake_imagenet::prepare(dir.path(), 11, Scale::Smoke, false).unwrap();
    let files = tree(dir.path());
    assert_eq!(written, files.keys().cloned().collect::<Vec<_>>());
    assert!((4..=16).contains(&files.len()), "{}", files.len());
    let mut per_number = BTreeMap::new();
    for path in files.keys() {
        let parts: Vec<String> = path
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        assert_eq!(parts[..2], ["ImageNet", "train"], "{path:?}");
        assert!(
            ["0", "1", "2", "3"].contains(&parts[2].as_str()),
            "{path:?}"
        );
        let number = parts[3].strip_suffix(".jpeg").unwrap();
        *per_number.entry(number.to_string()).or_insert(0) += 1;
    }
    assert_eq!(per_number.keys().collect::<Vec<_>>(), ["0", "1", "2", "3"]);
    assert!(per_number.values().all(|&n| (1..=4).contains(&n)));
    let mut seen = [false; 256];
    for bytes in files.values() {
        let img = jpeg::decode(bytes, Path::new("x")).unwrap();
        assert_eq!((img.width, img.height), (64, 64));
        img.pixels.iter().for_each(|&b| seen[usize::from(b)] = true);
    }
    assert!(seen.iter().all(|&s| s));
    let folder = ImageFolder::open(&dir.path().join(fake_imagenet::TRAIN)).unwrap();
    assert_eq!(folder.len(), files.len());
}

/// At full size the plan has 25 600 numbers × the classes of their four draws: a draw
/// lost to another of the same number and class with probability ≈ 6/1000, so
/// 102 400 − 25 600 · (4 − 1000 · (1 − 0.999⁴)) ≈ 102 246.6 files (sd ≈ 12); the classes'
/// counts pass a chi-square test with 999 degrees of freedom (mean 999, sd 44.7).
#[test]
fn fake_imagenet_full_plan_counts() {
    let plan = fake_imagenet::plan(3, Scale::Full);
    let expected = 25_600.0 * 1000.0 * (1.0 - 0.999f64.powi(4));
    assert!(
        (plan.len() as f64 - expected).abs() < 60.0,
        "{} files",
        plan.len()
    );
    assert_eq!(plan.keys().map(|k| k.1).max(), Some(25_599));
    let mut counts = vec![0u32; 1000];
    plan.keys()
        .for_each(|&(class, _)| counts[class as usize] += 1);
    let mean = plan.len() as f64 / 1000.0;
    let chi2: f64 = counts
        .iter()
        .map(|&c| (f64::from(c) - mean).powi(2) / mean)
        .sum();
    assert!(
        (999.0 - 5.0 * 44.7..999.0 + 5.0 * 44.7).contains(&chi2),
        "chi2 {chi2}"
    );
    assert_eq!(fake_imagenet::Spec::at(Scale::Full).size, 512);
}

/// The same seed writes the same bytes; another seed other bytes; an existing file is
/// refused (nothing written) unless forced.
#[test]
fn makers_are_seeded_and_refuse_to_overwrite() {
    let (a, b, c) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    fake_imagenet::prepare(a.path(), 7, Scale::Smoke, false).unwrap();
    fake_imagenet::prepare(b.path(), 7, Scale::Smoke, false).unwrap();
    fake_imagenet::prepare(c.path(), 8, Scale::Smoke, false).unwrap();
    assert_eq!(tree(a.path()), tree(b.path()));
    let (ta, tc) = (tree(a.path()), tree(c.path()));
    let common: Vec<_> = ta.keys().filter(|k| tc.contains_key(*k)).collect();
    assert!(common.iter().all(|k| ta[*k] != tc[*k]));
    coco::prepare(a.path(), 7, Scale::Smoke, false).unwrap();
    coco::prepare(b.path(), 7, Scale::Smoke, false).unwrap();
    coco::prepare(c.path(), 8, Scale::Smoke, false).unwrap();
    assert_eq!(tree(a.path()), tree(b.path()));
    let ann = Split::Train.annotations();
    assert_ne!(tree(a.path())[&ann], tree(c.path())[&ann]);

    let victim = a.path().join(fake_imagenet::file_path(0, 0));
    let victim = if victim.exists() {
        victim
    } else {
        a.path().join(tree(a.path()).keys().next().unwrap())
    };
    std::fs::write(&victim, b"mine").unwrap();
    let before = tree(a.path());
    let err = fake_imagenet::prepare(a.path(), 9, Scale::Smoke, false).unwrap_err();
    assert!(err.to_string().contains("not overwritten"), "{err}");
    assert!(coco::prepare(a.path(), 9, Scale::Smoke, false).is_err());
    assert_eq!(tree(a.path()), before);
    fake_imagenet::prepare(a.path(), 7, Scale::Smoke, true).unwrap();
    coco::prepare(a.path(), 7, Scale::Smoke, true).unwrap();
    assert_eq!(tree(a.path()), tree(b.path()));
}

/// The smoke COCO: both splits' annotation files and JPEGs named by 12-digit ids, the
/// sizes the files say, COCO's 80 categories; ssd's reader drops the images without a
/// box and maps category ids to 1..=80 in the file's order.
#[test]
fn coco_smoke_layout_and_reader() {
    let dir = tempfile::tempdir().unwrap();
    let written = coco::prepare(dir.path(), 2, Scale::Smoke, false).unwrap();
    let files = tree(dir.path());
    assert_eq!(written.len(), 2 + 8 + 4);
    assert_eq!(
        written.iter().cloned().collect::<HashSet<_>>(),
        files.keys().cloned().collect()
    );
    assert!(files.contains_key(Path::new("coco/annotations/instances_train2017.json")));
    assert!(files.contains_key(Path::new("coco/annotations/instances_val2017.json")));
    assert!(files.contains_key(Path::new("coco/train2017/000000000001.jpg")));
    assert!(files.contains_key(Path::new("coco/val2017/000000600000.jpg")));
    for split in [Split::Train, Split::Val] {
        let file: coco::Instances = serde_json::from_slice(&files[&split.annotations()]).unwrap();
        assert_eq!(file.images.len(), split.count(Scale::Smoke));
        assert_eq!(file.categories.len(), 80);
        assert_eq!(file.categories.iter().map(|c| c.id).max(), Some(90));
        for img in &file.images {
            let bytes = &files[&split.images().join(&img.file_name)];
            let decoded = jpeg::decode(bytes, Path::new("x")).unwrap();
            assert_eq!((decoded.width, decoded.height), (img.width, img.height));
            assert_eq!(img.width.max(img.height), Split::long_side(Scale::Smoke));
        }
        for a in &file.annotations {
            let img = file.images.iter().find(|i| i.id == a.image_id).unwrap();
            let [x, y, w, h] = a.bbox;
            assert!(x >= 0.0 && y >= 0.0 && x + w <= img.width as f64 + 0.01);
            assert!(y + h <= img.height as f64 + 0.01 && (a.area - w * h).abs() < 1e-6);
        }
        let with_boxes: HashSet<u64> = file.annotations.iter().map(|a| a.image_id).collect();
        let det = Detection::open(dir.path(), split).unwrap();
        assert_eq!(det.label_count, 81);
        assert_eq!(det.items.len(), with_boxes.len());
        let labels: HashSet<i64> = det.items.iter().flat_map(|i| i.labels.clone()).collect();
        assert!(labels.iter().all(|l| (1..=80).contains(l)));
        for item in &det.items {
            assert!(
                item.boxes
                    .iter()
                    .flatten()
                    .all(|v| (0.0..=1.0001).contains(v))
            );
        }
    }
    // The category of id 90 (toothbrush, the last) is label 80.
    let mut file: coco::Instances =
        serde_json::from_slice(&files[&Split::Val.annotations()]).unwrap();
    file.annotations.truncate(1);
    file.annotations[0].category_id = 90;
    let only = file.annotations[0].image_id;
    file.images.retain(|i| i.id == only);
    std::fs::write(
        dir.path().join(Split::Val.annotations()),
        serde_json::to_vec(&file).unwrap(),
    )
    .unwrap();
    let det = Detection::open(dir.path(), Split::Val).unwrap();
    assert_eq!(det.items.len(), 1);
    assert_eq!(det.items[0].labels, [80]);
}

/// An epoch's batches are a permutation of the data set (the last batch short), another
/// order the next epoch; without shuffling, the files' order.
#[test]
fn batches_cover_each_epoch_once() {
    let s = Sampling {
        seed: 4,
        batch_size: 32,
        shuffle: true,
    };
    assert_eq!(s.batches_per_epoch(100), 4);
    let epoch = |e: u64| {
        (4 * e..4 * e + 4)
            .flat_map(|i| s.items(100, i))
            .collect::<Vec<_>>()
    };
    let (first, second) = (epoch(0), epoch(1));
    assert_eq!(s.items(100, 3).len(), 4);
    let mut sorted = first.clone();
    sorted.sort();
    assert_eq!(sorted, (0..100).collect::<Vec<_>>());
    assert_ne!(first, second);
    assert_eq!(first, epoch(0), "a batch is made again the same");
    let plain = Sampling {
        shuffle: false,
        ..s
    };
    assert_eq!(plain.items(100, 5), (32..64).collect::<Vec<_>>());
}

/// Batches of 100 from 1000 images sorted by class (10 classes of 100, as an
/// ImageFolder lists them) hold every class about equally: the chi-square statistic of a
/// batch's labels (9 degrees of freedom, mean 9) averages under 12 over 50 batches. An
/// unshuffled loader's batch is one class (statistic 900); one order for every epoch
/// would repeat the batches, which the second check rules out.
#[test]
fn shuffled_batches_mix_the_classes() {
    let s = Sampling {
        seed: 21,
        batch_size: 100,
        shuffle: true,
    };
    let mut total = 0.0;
    for index in 0..50 {
        let mut counts = [0u32; 10];
        s.items(1000, index)
            .iter()
            .for_each(|&i| counts[i / 100] += 1);
        total += counts
            .iter()
            .map(|&c| (f64::from(c) - 10.0).powi(2) / 10.0)
            .sum::<f64>();
    }
    assert!(total / 50.0 < 12.0, "mean chi-square {}", total / 50.0);
    let batches: HashSet<Vec<usize>> = (0..50).map(|i| s.items(1000, i)).collect();
    assert_eq!(batches.len(), 50);
}

/// Real batches from the smoke fake ImageNet through convnet's pipeline (at 32 pixels):
/// the shape, labels from the listing, the same batch for the same (seed, index), and
/// two consecutive batches — even of a data set of one image, where only the random
/// crops and flips differ — sharing no run of 16 values.
#[test]
fn image_batches_are_keyed_by_seed_and_index() {
    let dir = tempfile::tempdir().unwrap();
    fake_imagenet::prepare(dir.path(), 3, Scale::Smoke, false).unwrap();
    let folder = ImageFolder::open(&dir.path().join(fake_imagenet::TRAIN)).unwrap();
    let pipeline = Pipeline::RandomCrop { size: 32 };
    let s = Sampling {
        seed: 9,
        batch_size: 4,
        shuffle: true,
    };
    let b0 = s.batch(&folder, &pipeline, 0).unwrap();
    assert_eq!(b0.shape, [4, 3, 32, 32]);
    assert_eq!(b0.data.len(), 4 * 3 * 32 * 32);
    let items = s.items(folder.len(), 0);
    let labels: Vec<i64> = items.iter().map(|&i| folder.samples[i].1 as i64).collect();
    assert_eq!(b0.labels, labels);
    assert_eq!(s.batch(&folder, &pipeline, 0).unwrap(), b0);
    assert_ne!(
        Sampling { seed: 10, ..s }
            .batch(&folder, &pipeline, 0)
            .unwrap(),
        b0
    );
    let runs = |b: &[f32]| -> HashSet<Vec<u32>> {
        b.windows(16)
            .map(|w| w.iter().map(|v| v.to_bits()).collect())
            .collect()
    };
    let b1 = s.batch(&folder, &pipeline, 1).unwrap();
    assert!(runs(&b0.data).is_disjoint(&runs(&b1.data)));

    let mut one = folder.clone();
    one.samples.truncate(1);
    let s1 = Sampling { batch_size: 1, ..s };
    for index in 0..6 {
        let a = s1.batch(&one, &pipeline, index).unwrap();
        let b = s1.batch(&one, &pipeline, index + 1).unwrap();
        assert!(
            runs(&a.data).is_disjoint(&runs(&b.data)),
            "batches {index} and {}",
            index + 1
        );
    }
    // dcgan's and fast_style's pipelines: Resize(64) and CenterCrop(64) of a 64 × 64
    // image change nothing, so the values are the pixels, scaled.
    let img = jpeg::read(&one.samples[0].0).unwrap();
    let plain = Sampling {
        shuffle: false,
        ..s1
    };
    let style = plain.batch(&one, &Pipeline::FAST_STYLE, 0).unwrap();
    assert_eq!(style.shape, [1, 3, 64, 64]);
    assert_eq!(style.data[0], f32::from(img.pixels[0]));
    assert_eq!(style.data[64 * 64], f32::from(img.pixels[1]));
    let gan = plain.batch(&one, &Pipeline::DCGAN, 0).unwrap();
    assert_eq!(gan.data[1], (f32::from(img.pixels[3]) / 255.0 - 0.5) / 0.5);
    // ssd's validation transform squashes to 48 × 48: the resize, then normalised.
    let squashed = plain
        .batch(&one, &Pipeline::Squash { size: 48 }, 0)
        .unwrap();
    let small = resize(&img, 48, 48, Filter::Bilinear);
    let red = (f32::from(small.pixels[0]) / 255.0 - IMAGENET_MEAN[0]) / IMAGENET_SD[0];
    assert_eq!((squashed.shape, squashed.data[0]), ([1, 3, 48, 48], red));
}

/// The SHA-256 of every file `root` holds, in path order (path, NUL, bytes).
fn digest(root: &Path) -> String {
    use sha2::Digest;
    let mut hash = sha2::Sha256::new();
    for (path, bytes) in tree(root) {
        hash.update(path.to_string_lossy().as_bytes());
        hash.update([0]);
        hash.update(&bytes);
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The smoke data sets of seed 0, pinned: a change of the streams, the pixels, the
/// encoder or the layout changes these digests (and must be a deliberate one: data sets
/// made before it would no longer match a manifest made after).
#[test]
fn smoke_bytes_are_pinned() {
    let dir = tempfile::tempdir().unwrap();
    fake_imagenet::prepare(dir.path(), 0, Scale::Smoke, false).unwrap();
    let fake = digest(dir.path());
    coco::prepare(dir.path(), 0, Scale::Smoke, false).unwrap();
    let both = digest(dir.path());
    assert_eq!(
        fake,
        "94645b4c2206d1f88a4b034ccf19a626eeca310253522e1b7f58352102da5666"
    );
    assert_eq!(
        both,
        "86032d93a02629fbc0eafb11350ee567702dfd1936668b2f0af46afa343e137e"
    );
}
