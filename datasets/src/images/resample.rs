//! PIL's `Image.resize((w, h), filter)` on an 8-bit RGB image, as Pillow's `Resample.c`
//! computes it (unchanged in its arithmetic from Pillow 6.2, the suite's, to today): a
//! separable convolution, the horizontal pass first (only over the rows the vertical pass
//! reads), then the vertical one. When an axis shrinks, the filter's support widens by the
//! factor (antialiasing). Each output's weights are normalised to sum to one, turned into
//! fixed point with 22 fractional bits, summed from a half, and the result shifted and
//! clamped to 0–255 — so each pass rounds to 8 bits. An axis whose size does not change is
//! not filtered.

use super::jpeg::Rgb;

/// A resampling filter of PIL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// `Image.BILINEAR`: the triangle, support 1 (torchvision's default interpolation).
    Bilinear,
    /// `Image.BICUBIC`: Keys' cubic with a = −0.5, support 2.
    Bicubic,
    /// `Image.LANCZOS` (`Image.ANTIALIAS`): sinc windowed by sinc(x/3), support 3.
    Lanczos,
}

impl Filter {
    fn support(self) -> f64 {
        match self {
            Filter::Bilinear => 1.0,
            Filter::Bicubic => 2.0,
            Filter::Lanczos => 3.0,
        }
    }

    fn weight(self, x: f64) -> f64 {
        match self {
            Filter::Bilinear => {
                let x = x.abs();
                if x < 1.0 { 1.0 - x } else { 0.0 }
            }
            Filter::Bicubic => {
                let (a, x) = (-0.5, x.abs());
                if x < 1.0 {
                    ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
                } else if x < 2.0 {
                    (((x - 5.0) * x + 8.0) * x - 4.0) * a
                } else {
                    0.0
                }
            }
            Filter::Lanczos => {
                if (-3.0..3.0).contains(&x) {
                    sinc(x) * sinc(x / 3.0)
                } else {
                    0.0
                }
            }
        }
    }
}

fn sinc(x: f64) -> f64 {
    if x == 0.0 {
        1.0
    } else {
        let x = x * std::f64::consts::PI;
        x.sin() / x
    }
}

/// Fractional bits of the fixed-point weights: 32 − 8 − 2.
const PRECISION_BITS: u32 = 22;

/// One output's taps: the first source index and the fixed-point weights from there.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Taps {
    pub(crate) first: usize,
    pub(crate) weights: Vec<i32>,
}

/// The weights (before fixed point) of the `out` outputs along an axis of `n` sources.
pub(crate) fn coefficients(n: usize, out: usize, filter: Filter) -> Vec<(usize, Vec<f64>)> {
    let scale = n as f64 / out as f64;
    let filterscale = scale.max(1.0);
    let support = filter.support() * filterscale;
    (0..out)
        .map(|xx| {
            let center = (xx as f64 + 0.5) * scale;
            // C's (int) cast truncates toward zero; a negative start is clamped to 0 anyway.
            let xmin = ((center - support + 0.5) as i64).max(0) as usize;
            let xmax = ((center + support + 0.5) as i64).min(n as i64) as usize;
            let mut k: Vec<f64> = (xmin..xmax)
                .map(|x| filter.weight((x as f64 - center + 0.5) / filterscale))
                .collect();
            let total: f64 = k.iter().sum();
            if total != 0.0 {
                k.iter_mut().for_each(|w| *w /= total);
            }
            (xmin, k)
        })
        .collect()
}

/// [`coefficients`] in fixed point, rounded half away from zero.
pub(crate) fn taps(n: usize, out: usize, filter: Filter) -> Vec<Taps> {
    let one = f64::from(1u32 << PRECISION_BITS);
    coefficients(n, out, filter)
        .into_iter()
        .map(|(first, k)| Taps {
            first,
            weights: k
                .iter()
                .map(|&w| {
                    if w < 0.0 {
                        (w * one - 0.5) as i32
                    } else {
                        (w * one + 0.5) as i32
                    }
                })
                .collect(),
        })
        .collect()
}

/// A fixed-point sum back to 8 bits: shifted (arithmetically) and clamped.
fn clip8(sum: i32) -> u8 {
    (sum >> PRECISION_BITS).clamp(0, 255) as u8
}

/// One output value from `values[base + (first − shift + i) · stride]` weighted by the
/// taps (`shift`: the first source row or column `values` holds).
fn convolve(values: &[u8], base: usize, stride: usize, taps: &Taps, shift: usize) -> u8 {
    let mut sum = 1i32 << (PRECISION_BITS - 1);
    let start = base + (taps.first - shift) * stride;
    for (i, &w) in taps.weights.iter().enumerate() {
        sum = sum.wrapping_add(i32::from(values[start + i * stride]) * w);
    }
    clip8(sum)
}

/// `img` resized to `width × height` with `filter`, as PIL's `img.resize((width, height),
/// filter)`. Sizes must be positive.
pub fn resize(img: &Rgb, width: usize, height: usize, filter: Filter) -> Rgb {
    assert!(width > 0 && height > 0, "a resize to an empty image");
    if (width, height) == (img.width, img.height) {
        return img.clone();
    }
    let vertical = (height != img.height).then(|| taps(img.height, height, filter));
    // The rows the vertical pass reads: only those are resized horizontally.
    let (first_row, rows) = match &vertical {
        Some(v) => {
            let last = v.last().map_or(0, |t| t.first + t.weights.len());
            (v[0].first, last - v[0].first)
        }
        None => (0, img.height),
    };
    let across = if width != img.width {
        let horizontal = taps(img.width, width, filter);
        let mut pixels = Vec::with_capacity(3 * width * rows);
        for y in first_row..first_row + rows {
            let row = &img.pixels[3 * y * img.width..3 * (y + 1) * img.width];
            for t in &horizontal {
                pixels.extend((0..3).map(|c| convolve(row, c, 3, t, 0)));
            }
        }
        Rgb::new(width, rows, pixels)
    } else {
        let start = 3 * first_row * img.width;
        Rgb::new(
            width,
            rows,
            img.pixels[start..start + 3 * width * rows].to_vec(),
        )
    };
    let Some(vertical) = vertical else {
        return across;
    };
    let stride = 3 * width;
    let mut pixels = Vec::with_capacity(3 * width * height);
    for t in &vertical {
        pixels.extend((0..stride).map(|i| convolve(&across.pixels, i, stride, t, first_row)));
    }
    Rgb::new(width, height, pixels)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Halving four pixels a, b, c, d with the bilinear filter, by hand from its
    /// definition: the support doubles to 2; output 0 centres on 1.0 and reads sources
    /// 0..3 at distances 0.5, 0.5, 1.5 (÷ 2 → 0.25, 0.25, 0.75): weights 0.75, 0.75, 0.25,
    /// i.e. 3/7, 3/7, 1/7; output 1 centres on 3.0 and reads 1..4: 1/7, 3/7, 3/7.
    #[test]
    fn halving_by_hand() {
        let k = coefficients(4, 2, Filter::Bilinear);
        assert_eq!(k[0].0, 0);
        assert_eq!(k[1].0, 1);
        for (got, want) in k[0].1.iter().zip([3.0 / 7.0, 3.0 / 7.0, 1.0 / 7.0]) {
            assert!((got - want).abs() < 1e-15);
        }
        for (got, want) in k[1].1.iter().zip([1.0 / 7.0, 3.0 / 7.0, 3.0 / 7.0]) {
            assert!((got - want).abs() < 1e-15);
        }
        // Row 10, 20, 40, 200: (30 + 60 + 40) / 7 = 18.57 → 19; (20 + 120 + 600) / 7 =
        // 105.71 → 106. A grey row, so all three channels agree.
        let row: Vec<u8> = [10u8, 20, 40, 200]
            .iter()
            .flat_map(|&v| [v, v, v])
            .collect();
        let out = resize(&Rgb::new(4, 1, row), 2, 1, Filter::Bilinear);
        assert_eq!(out.pixels, vec![19, 19, 19, 106, 106, 106]);
    }

    /// Each pass rounds to 8 bits: a 2×2 image halved to one pixel is the rounded mean
    /// of the rounded means of its rows, not the rounded mean of all four.
    #[test]
    fn each_pass_rounds_to_eight_bits() {
        // Rows (0, 1) and (1, 2): row means 0.5 → 1 and 1.5 → 2, then (1 + 2) / 2 = 1.5
        // → 2; the plain mean of the four, 1.0, would give 1.
        let px = |v: &[u8]| v.iter().flat_map(|&v| [v, v, v]).collect::<Vec<u8>>();
        let out = resize(&Rgb::new(2, 2, px(&[0, 1, 1, 2])), 1, 1, Filter::Bilinear);
        assert_eq!(out.pixels, vec![2, 2, 2]);
    }

    /// Enlarging uses the filter unwidened; the weights of every output sum to one and an
    /// unchanged axis is copied.
    #[test]
    fn enlarging_and_unchanged_axes() {
        for (n, out) in [(3, 7), (7, 3), (224, 224), (500, 224), (64, 300)] {
            for f in [Filter::Bilinear, Filter::Bicubic, Filter::Lanczos] {
                for (_, k) in coefficients(n, out, f) {
                    assert!((k.iter().sum::<f64>() - 1.0).abs() < 1e-12);
                }
            }
        }
        // 2 → 4, bilinear: output 0 centres on 0.25, xmin = int(0.25 − 1 + 0.5) = 0 and
        // xmax = int(0.25 + 1 + 0.5) = 1: source 0 only, weight 1. Output 1 centres on
        // 0.75 and reads sources 0 and 1 at filter(−0.25) = 0.75 and filter(0.75) = 0.25.
        let k = coefficients(2, 4, Filter::Bilinear);
        assert_eq!(k[0], (0, vec![1.0]));
        assert_eq!(k[1].0, 0);
        assert!((k[1].1[0] - 0.75).abs() < 1e-15 && (k[1].1[1] - 0.25).abs() < 1e-15);
        let img = Rgb::new(2, 1, vec![1, 2, 3, 4, 5, 6]);
        let tall = resize(&img, 2, 3, Filter::Bilinear);
        assert_eq!(
            tall.pixels,
            [img.pixels.clone(), img.pixels.clone(), img.pixels].concat()
        );
    }
}
