//! JPEG files: written as PIL's `Image.save(path)` writes a `.jpeg` by default with its
//! libjpeg (baseline, quality 75, chroma 4:2:0 averaged over 2 × 2 pixels, libjpeg's
//! colour conversion, the standard's example tables and Huffman codes: for sides that are
//! multiples of 16 the scan is Pillow's byte for byte), and read into 8-bit RGB as
//! `Image.open(path).convert("RGB")` reads them (zune-jpeg, which rounds its IDCT and
//! chroma upsampling a little differently from libjpeg: a few levels on sharp colour
//! edges; grey images are spread over the three channels).

use crate::DataError;
use std::io::Write;
use std::path::Path;

/// PIL's default JPEG quality.
pub const QUALITY: u8 = 75;

/// An RGB image, 8 bits per channel, rows top to bottom, pixels R, G, B.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rgb {
    /// Pixels per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// `3 · width · height` bytes.
    pub pixels: Vec<u8>,
}

impl Rgb {
    /// An image of `width × height` from its pixels; panics when their number is not
    /// `3 · width · height`.
    pub fn new(width: usize, height: usize, pixels: Vec<u8>) -> Rgb {
        assert_eq!(pixels.len(), 3 * width * height, "an RGB image's pixels");
        Rgb {
            width,
            height,
            pixels,
        }
    }

    /// The three channels of the pixel at (x, y).
    pub fn at(&self, x: usize, y: usize) -> [u8; 3] {
        let i = 3 * (y * self.width + x);
        [self.pixels[i], self.pixels[i + 1], self.pixels[i + 2]]
    }
}

/// The JPEG bytes of `img` at PIL's defaults.
pub fn encode(img: &Rgb, path: &Path) -> Result<Vec<u8>, DataError> {
    let format = |what: String| DataError::Format {
        path: path.to_path_buf(),
        place: "image".into(),
        what,
    };
    let side = |n: usize| u16::try_from(n).map_err(|_| format(format!("a side of {n} pixels")));
    let (w, h) = (side(img.width)?, side(img.height)?);
    let mut out = Vec::new();
    let mut encoder = jpeg_encoder::Encoder::new(&mut out, QUALITY);
    encoder.set_sampling_factor(jpeg_encoder::SamplingFactor::R_4_2_0);
    encoder
        .encode(&libjpeg_ycbcr(img), w, h, jpeg_encoder::ColorType::Ycbcr)
        .map_err(|e| format(e.to_string()))?;
    Ok(out)
}

/// libjpeg's RGB → YCbCr (`jccolor.c`: 16-bit fixed point, Y rounded from a half, Cb and
/// Cr from a half less one).
fn ycc(px: &[u8]) -> [i32; 3] {
    let [r, g, b] = [0, 1, 2].map(|c| i32::from(px[c]));
    let (half, offset) = (1 << 15, 128 << 16);
    [
        (19595 * r + 38470 * g + 7471 * b + half) >> 16,
        (-11059 * r - 21709 * g + 32768 * b + offset + half - 1) >> 16,
        (32768 * r - 27439 * g - 5329 * b + offset + half - 1) >> 16,
    ]
}

/// The image as YCbCr for jpeg-encoder, whose 4:2:0 chroma is the top-left sample of each
/// 2 × 2 block: there each block's chroma is put as libjpeg makes it (`jcsample.c`'s
/// `h2v2_downsample`: the four samples' sum plus a bias of 1 or 2, alternating along the
/// row, ÷ 4; an odd last column or row repeated), and in an even image's last column and
/// row (which no block samples, and which the encoder repeats into the padding) the value
/// libjpeg gives the first padding block, made from the repeated edge.
fn libjpeg_ycbcr(img: &Rgb) -> Vec<u8> {
    let (w, h) = (img.width, img.height);
    let full: Vec<[i32; 3]> = img.pixels.chunks_exact(3).map(ycc).collect();
    let at = |x: usize, y: usize| full[y.min(h - 1) * w + x.min(w - 1)];
    // Block (bx, by)'s chroma over the columns x0, x1 and rows y0, y1.
    let block = |bx: usize, x0: usize, x1: usize, y0: usize, y1: usize| {
        let bias = if bx % 2 == 0 { 1 } else { 2 };
        [1, 2].map(|c| (at(x0, y0)[c] + at(x1, y0)[c] + at(x0, y1)[c] + at(x1, y1)[c] + bias) >> 2)
    };
    let mut out: Vec<u8> = full.iter().flat_map(|p| p.map(|v| v as u8)).collect();
    let mut put = |x: usize, y: usize, cbcr: [i32; 2]| {
        out[3 * (y * w + x) + 1] = cbcr[0] as u8;
        out[3 * (y * w + x) + 2] = cbcr[1] as u8;
    };
    for by in 0..h.div_ceil(2) {
        let (y0, y1) = (2 * by, 2 * by + 1);
        for bx in 0..w.div_ceil(2) {
            put(2 * bx, y0, block(bx, 2 * bx, 2 * bx + 1, y0, y1));
        }
        if w % 2 == 0 {
            put(w - 1, y0, block(w / 2, w - 1, w - 1, y0, y1));
        }
    }
    if h % 2 == 0 {
        for bx in 0..w.div_ceil(2) {
            put(2 * bx, h - 1, block(bx, 2 * bx, 2 * bx + 1, h - 1, h - 1));
        }
        if w % 2 == 0 {
            put(w - 1, h - 1, block(w / 2, w - 1, w - 1, h - 1, h - 1));
        }
    }
    out
}

/// Writes `bytes` to `path`, a new file: an existing one is an error unless `force`.
pub(crate) fn write_new(path: &Path, bytes: &[u8], force: bool) -> Result<(), DataError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let mut file = options.open(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::AlreadyExists {
            DataError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    source.kind(),
                    "exists; not overwritten (pass force to replace it)",
                ),
            }
        } else {
            DataError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    })?;
    file.write_all(bytes).map_err(DataError::io(path))
}

/// Decodes the JPEG `bytes` (read from `path`) into RGB.
pub fn decode(bytes: &[u8], path: &Path) -> Result<Rgb, DataError> {
    use zune_jpeg::zune_core::{colorspace::ColorSpace, options::DecoderOptions};
    let format = |what: String| DataError::Format {
        path: path.to_path_buf(),
        place: "JPEG".into(),
        what,
    };
    let options = DecoderOptions::default().jpeg_set_out_colorspace(ColorSpace::RGB);
    let mut decoder = zune_jpeg::JpegDecoder::new_with_options(bytes, options);
    let pixels = decoder.decode().map_err(|e| format(format!("{e:?}")))?;
    let (width, height) = decoder
        .dimensions()
        .ok_or_else(|| format("no image information".into()))?;
    if pixels.len() != 3 * width * height {
        return Err(format(format!(
            "{} bytes for {width}×{height} RGB pixels",
            pixels.len()
        )));
    }
    Ok(Rgb::new(width, height, pixels))
}

/// Reads and decodes the JPEG at `path`.
pub fn read(path: &Path) -> Result<Rgb, DataError> {
    let bytes = std::fs::read(path).map_err(DataError::io(path))?;
    decode(&bytes, path)
}
