//! Helpers of the chart tests: PNG decoding and pixel checks, SVG parsing, stability.
#![allow(dead_code)]

use std::io::Cursor;
use std::path::PathBuf;

use mlbench_plots::{Chart, PlotError, Size};

pub struct Image {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<[u8; 3]>,
}

impl Image {
    pub fn at(&self, x: u32, y: u32) -> [u8; 3] {
        self.pixels[(y * self.width + x) as usize]
    }
    /// Pixels that are not (near) white.
    pub fn inked(&self) -> usize {
        self.pixels
            .iter()
            .filter(|p| p.iter().any(|c| *c < 235))
            .count()
    }
    /// How many distinct colours the image has (a 2^24-bit set: fast even unoptimised).
    pub fn color_count(&self) -> usize {
        let mut seen = vec![0u64; (1 << 24) / 64];
        let mut n = 0;
        for [r, g, b] in &self.pixels {
            let i = (usize::from(*r) << 16) | (usize::from(*g) << 8) | usize::from(*b);
            let (word, bit) = (i / 64, 1u64 << (i % 64));
            if seen[word] & bit == 0 {
                seen[word] |= bit;
                n += 1;
            }
        }
        n
    }
    /// Whether some pixel matches `pred`.
    pub fn any(&self, pred: impl Fn(&[u8; 3]) -> bool) -> bool {
        self.pixels.iter().any(pred)
    }
    pub fn has(&self, c: [u8; 3]) -> bool {
        self.pixels.contains(&c)
    }
    /// Dark (text, axis) pixels in the rows `y0..y1`.
    pub fn dark_in_rows(&self, y0: u32, y1: u32) -> usize {
        (y0..y1)
            .flat_map(|y| (0..self.width).map(move |x| (x, y)))
            .filter(|&(x, y)| self.at(x, y).iter().all(|c| *c < 100))
            .count()
    }
}

pub fn decode(png_bytes: &[u8]) -> Image {
    let decoder = png::Decoder::new(Cursor::new(png_bytes));
    let mut reader = decoder.read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("buffer size")];
    let info = reader.next_frame(&mut buf).expect("PNG data");
    assert_eq!(info.color_type, png::ColorType::Rgb);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let pixels = buf[..info.buffer_size()]
        .chunks_exact(3)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    Image {
        width: info.width,
        height: info.height,
        pixels,
    }
}

pub fn out_dir() -> PathBuf {
    let dir = std::env::temp_dir().join("mlbench-plots-tests");
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Writes the chart for a look, checks the PNG (size, not blank, varied colours) and the
/// SVG (well-formed, texts inside the image and apart, the expected ones present), and
/// returns the decoded image.
pub fn check(name: &str, chart: &Chart, size: Size, texts: &[&str]) -> Image {
    let dir = out_dir();
    std::fs::write(dir.join(format!("{name}.png")), &chart.png).expect("write png");
    std::fs::write(dir.join(format!("{name}.svg")), &chart.svg).expect("write svg");

    let img = decode(&chart.png);
    assert_eq!(
        (img.width, img.height),
        (size.width, size.height),
        "{name}: PNG size"
    );
    let total = (img.width * img.height) as usize;
    let inked = img.inked();
    assert!(
        inked > total / 200,
        "{name}: nearly blank PNG ({inked} of {total} pixels inked)"
    );
    let colors = img.color_count();
    assert!(colors >= 8, "{name}: only {colors} colours");
    // The title area has text.
    assert!(img.dark_in_rows(0, 50) > 200, "{name}: no title pixels");

    assert_texts_fit(name, &chart.svg);
    let found = svg_texts(&chart.svg);
    for t in texts {
        assert!(
            found.iter().any(|f| f == t),
            "{name}: SVG has no text {t:?}; it has {found:?}"
        );
    }
    img
}

/// The contents of every `<text>` of the SVG, trimmed; panics if the SVG is not XML.
pub fn svg_texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    let root = doc.root_element();
    assert!(root.has_tag_name("svg"));
    root.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect()
}

/// `<text>` contents with their y position, for order checks.
pub fn svg_texts_with_y(svg: &str) -> Vec<(String, f64)> {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| {
            let y = n
                .attribute("y")
                .and_then(|v| v.parse().ok())
                .unwrap_or(-1.0);
            (n.text().unwrap_or("").trim().to_string(), y)
        })
        .collect()
}

/// Renders again and compares with `first`, byte for byte.
pub fn assert_stable(name: &str, first: &Chart, again: Result<Chart, PlotError>) {
    let again = again.expect("second render");
    assert!(
        first.png == again.png,
        "{name}: PNG bytes differ between two renders"
    );
    assert_eq!(
        first.svg, again.svg,
        "{name}: SVG differs between two renders"
    );
}

pub const BENCHES: [&str; 19] = [
    "atari",
    "bert",
    "cart",
    "convnet",
    "convnet_fp16",
    "dcgan",
    "deepspeech",
    "fast_style",
    "loader",
    "ppo",
    "recom",
    "reso",
    "ssd",
    "toy_lstm",
    "toy_reg",
    "translator",
    "vae",
    "wlm",
    "wlmfp16",
];

pub fn benches() -> Vec<String> {
    BENCHES.iter().map(|s| s.to_string()).collect()
}

/// Deterministic noise in -1..1 (a hash of `i` and `k`).
pub fn wiggle(i: usize, k: usize) -> f64 {
    let mut x = (i as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add((k as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F));
    x ^= x >> 31;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 29;
    (x % 2001) as f64 / 1000.0 - 1.0
}

/// A `<text>`'s estimated extent in image pixels, from its position, anchor, size and
/// rotation, measured with the charts' own font metrics.
#[derive(Debug, Clone)]
pub struct TextBox {
    pub text: String,
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
}

impl TextBox {
    pub fn overlaps(&self, o: &TextBox) -> bool {
        // One pixel of slack: boxes that touch do not overlap.
        self.x0 + 1.0 < o.x1 && o.x0 + 1.0 < self.x1 && self.y0 + 1.0 < o.y1 && o.y0 + 1.0 < self.y1
    }
}

/// The image size and the extent of every `<text>` of `svg`, in document order.
pub fn text_boxes(svg: &str) -> ((f64, f64), Vec<TextBox>) {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    let root = doc.root_element();
    let num = |n: roxmltree::Node, a: &str| -> f64 {
        n.attribute(a)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("<{}> without a numeric {a}", n.tag_name().name()))
    };
    let size = (num(root, "width"), num(root, "height"));
    let boxes = root
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| {
            let text = n.text().unwrap_or("").trim().to_string();
            let (x, y, font) = (num(n, "x"), num(n, "y"), num(n, "font-size"));
            let bold = n.attribute("font-weight") == Some("bold");
            let w = f64::from(mlbench_plots::text_width(&text, font, bold).expect("font"));
            // Along the text: where the anchor puts its start.
            let start = match n.attribute("text-anchor") {
                Some("middle") => -w / 2.0,
                Some("end") => -w,
                _ => 0.0,
            };
            // Across it: `dy` 0.76em is the top at the point, 0.5ex the middle, else the bottom.
            let across = match n.attribute("dy") {
                Some("0.76em") => 0.0,
                Some("0.5ex") => -font / 2.0,
                _ => -font,
            };
            let rotated = n
                .attribute("transform")
                .is_some_and(|t| t.starts_with("rotate(270"));
            let (x0, x1, y0, y1) = if rotated {
                // Reads bottom to top: along runs up, across runs right.
                (x + across, x + across + font, y - start - w, y - start)
            } else {
                (x + start, x + start + w, y + across, y + across + font)
            };
            TextBox {
                text,
                x0,
                x1,
                y0,
                y1,
            }
        })
        .collect();
    (size, boxes)
}

/// Every text lies within the image and no two overlap.
pub fn assert_texts_fit(name: &str, svg: &str) {
    let ((w, h), boxes) = text_boxes(svg);
    for b in &boxes {
        assert!(
            b.x0 >= 0.0 && b.x1 <= w && b.y0 >= 0.0 && b.y1 <= h,
            "{name}: {:?} lies outside the {w}×{h} image: {b:?}",
            b.text
        );
    }
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            assert!(!a.overlaps(b), "{name}: {a:?} overlaps {b:?}");
        }
    }
}

/// The texts of `svg` in document order, one per line, for a snapshot.
pub fn text_lines(svg: &str) -> String {
    svg_texts(svg).join("\n")
}
