//! MNIST (vae): the four raw IDX files that torchvision's `datasets.MNIST(root)` reads
//! from `root/MNIST/raw/` (the vae script's root is `$DATA_DIRECTORY/mnist`), a maker of
//! seeded digit-like images in that layout, and their reader.
//!
//! IDX: a big-endian header, `0x00 0x00 TYPE NDIM` (TYPE 0x08: unsigned bytes) then NDIM
//! big-endian u32 sizes, then the items, row-major. Images are `N × 28 × 28`
//! (`0x00000803`), labels `N` (`0x00000801`).

use crate::make::{self, Rng};
use crate::{DataError, Scale};
use std::path::{Path, PathBuf};

/// The folder of the raw files under the data root.
pub const RAW: &str = "mnist/MNIST/raw";
/// The training images.
pub const TRAIN_IMAGES: &str = "train-images-idx3-ubyte";
/// The training labels.
pub const TRAIN_LABELS: &str = "train-labels-idx1-ubyte";
/// The test images.
pub const TEST_IMAGES: &str = "t10k-images-idx3-ubyte";
/// The test labels.
pub const TEST_LABELS: &str = "t10k-labels-idx1-ubyte";
/// Image side in pixels.
pub const SIDE: usize = 28;

/// Images in the training and test files: MNIST's 60,000 and 10,000, or the smoke size.
pub fn sizes(scale: Scale) -> (usize, usize) {
    match scale {
        Scale::Full => (60_000, 10_000),
        Scale::Smoke => (256, 64),
    }
}

/// One split: `count` images of `rows × cols` bytes (0 black … 255 white) and a label
/// (0–9) each.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// How many images.
    pub count: usize,
    /// Rows of an image.
    pub rows: usize,
    /// Columns of an image.
    pub cols: usize,
    /// The pixels, image after image, row-major.
    pub pixels: Vec<u8>,
    /// One label per image.
    pub labels: Vec<u8>,
}

impl Split {
    /// The pixels as `ToTensor` gives them: each byte ÷ 255, shape `count × 1 × rows × cols`.
    pub fn to_f32(&self) -> Vec<f32> {
        self.pixels.iter().map(|&p| f32::from(p) / 255.0).collect()
    }
}

/// Reads the training split (`train`) or the test split from `root` (the data root).
pub fn read(root: &Path, train: bool) -> Result<Split, DataError> {
    let (images, label_file) = if train {
        (TRAIN_IMAGES, TRAIN_LABELS)
    } else {
        (TEST_IMAGES, TEST_LABELS)
    };
    let raw = root.join(RAW);
    let (dims, pixels) = read_idx(&raw.join(images), 3)?;
    let (counts, labels) = read_idx(&raw.join(label_file), 1)?;
    if counts[0] != dims[0] {
        return Err(DataError::Format {
            path: raw.join(label_file),
            place: "byte 4".into(),
            what: format!("{} labels for {} images", counts[0], dims[0]),
        });
    }
    Ok(Split {
        count: dims[0],
        rows: dims[1],
        cols: dims[2],
        pixels,
        labels,
    })
}

/// Reads an IDX file of unsigned bytes with `ndim` dimensions: its sizes and its items.
pub fn read_idx(path: &Path, ndim: usize) -> Result<(Vec<usize>, Vec<u8>), DataError> {
    let bytes = make::read(path)?;
    let bad = |place: usize, what: String| DataError::Format {
        path: path.to_path_buf(),
        place: format!("byte {place}"),
        what,
    };
    let Some(magic) = bytes.get(..4) else {
        return Err(bad(0, format!("{} bytes: no IDX header", bytes.len())));
    };
    let expected = [0, 0, 0x08, ndim as u8];
    if magic != expected {
        return Err(bad(
            0,
            format!(
                "magic {magic:02x?}, expected {expected:02x?} (IDX, unsigned bytes, {ndim} dimensions)"
            ),
        ));
    }
    let header = 4 + 4 * ndim;
    if bytes.len() < header {
        return Err(bad(
            bytes.len(),
            format!("the header ends early: {header} bytes expected"),
        ));
    }
    let dims: Vec<usize> = bytes[4..header]
        .chunks_exact(4)
        .map(|d| u32::from_be_bytes([d[0], d[1], d[2], d[3]]) as usize)
        .collect();
    let items = dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    let end = items.and_then(|n| n.checked_add(header));
    if end != Some(bytes.len()) {
        let said = end.map_or("more than can be addressed".to_string(), |e| format!("{e}"));
        return Err(bad(
            bytes.len().min(end.unwrap_or(usize::MAX)),
            format!(
                "sizes {dims:?} make {said} bytes; the file has {}",
                bytes.len()
            ),
        ));
    }
    Ok((dims, bytes[header..].to_vec()))
}

/// The bytes of an IDX file of unsigned bytes with sizes `dims`.
pub fn idx_bytes(dims: &[usize], items: &[u8]) -> Vec<u8> {
    let mut out = vec![0, 0, 0x08, dims.len() as u8];
    for &d in dims {
        out.extend_from_slice(&(d as u32).to_be_bytes());
    }
    out.extend_from_slice(items);
    out
}

/// Writes the four files under `root` (`mnist/MNIST/raw/…`): digit-like strokes, one
/// random label 0–9 per image, the same bytes for the same seed.
pub fn prepare(root: &Path, seed: u64, scale: Scale) -> Result<Vec<PathBuf>, DataError> {
    let (train, test) = sizes(scale);
    let mut written = Vec::new();
    for (n, images, labels, stream) in [
        (train, TRAIN_IMAGES, TRAIN_LABELS, 1),
        (test, TEST_IMAGES, TEST_LABELS, 2),
    ] {
        let mut rng = Rng::new(seed, 0x4D4E_4953_5400 + stream);
        let labels_of: Vec<u8> = (0..n).map(|_| rng.below(10) as u8).collect();
        let mut pixels = vec![0u8; n * SIDE * SIDE];
        for (image, &label) in pixels.chunks_exact_mut(SIDE * SIDE).zip(&labels_of) {
            draw_digit(image, label, &mut rng);
        }
        let dir = format!("{RAW}/");
        let image_bytes = idx_bytes(&[n, SIDE, SIDE], &pixels);
        written.push(make::write(root, &(dir.clone() + images), &image_bytes)?);
        written.push(make::write(
            root,
            &(dir + labels),
            &idx_bytes(&[n], &labels_of),
        )?);
    }
    Ok(written)
}

/// The seven segments of a digit, as ends in a unit box (x right, y down).
const SEGMENTS: [[(f32, f32); 2]; 7] = [
    [(0.0, 0.0), (1.0, 0.0)], // top
    [(1.0, 0.0), (1.0, 0.5)], // top right
    [(1.0, 0.5), (1.0, 1.0)], // bottom right
    [(0.0, 1.0), (1.0, 1.0)], // bottom
    [(0.0, 0.5), (0.0, 1.0)], // bottom left
    [(0.0, 0.0), (0.0, 0.5)], // top left
    [(0.0, 0.5), (1.0, 0.5)], // middle
];

/// Which segments each digit lights (bit i: `SEGMENTS[i]`).
const DIGITS: [u8; 10] = [
    0b011_1111, 0b000_0110, 0b101_1011, 0b100_1111, 0b110_0110, 0b110_1101, 0b111_1101, 0b000_0111,
    0b111_1111, 0b110_1111,
];

/// Draws `digit` into a 28 × 28 image: its segments in a box of random size, place and
/// slant, strokes of random width with soft edges.
fn draw_digit(image: &mut [u8], digit: u8, rng: &mut Rng) {
    let mut jitter = |lo: f32, hi: f32| lo + (hi - lo) * rng.unit() as f32;
    let (w, h) = (jitter(8.0, 13.0), jitter(14.0, 19.0));
    let (x0, y0) = (jitter(4.0, 24.0 - w), jitter(3.0, 25.0 - h));
    let (slant, width) = (jitter(-0.3, 0.3), jitter(1.0, 2.2));
    let place = |(u, v): (f32, f32)| (x0 + u * w + slant * (0.5 - v) * h, y0 + v * h);
    let strokes: Vec<_> = (0..7)
        .filter(|i| DIGITS[usize::from(digit)] >> i & 1 == 1)
        .map(|i| (place(SEGMENTS[i][0]), place(SEGMENTS[i][1])))
        .collect();
    for (at, pixel) in image.iter_mut().enumerate() {
        let p = ((at % SIDE) as f32 + 0.5, (at / SIDE) as f32 + 0.5);
        let d = strokes
            .iter()
            .map(|&(a, b)| distance(p, a, b))
            .fold(f32::INFINITY, f32::min);
        let ink = (width + 0.5 - d).clamp(0.0, 1.0);
        *pixel = (ink * 255.0).round() as u8;
    }
}

/// The distance from `p` to the segment `a`–`b`.
fn distance(p: (f32, f32), a: (f32, f32), b: (f32, f32)) -> f32 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let length = dx * dx + dy * dy;
    let t = if length > 0.0 {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / length).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (ex, ey) = (a.0 + t * dx - p.0, a.1 + t * dy - p.1);
    (ex * ex + ey * ey).sqrt()
}
