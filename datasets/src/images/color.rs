//! PIL's colour operations as the suite's Pillow 6.2 computes them, on [`Rgb`] images: the
//! conversions to `L` (luma), `HSV` and back, and `YCbCr`'s Y; `Image.blend` and the
//! `ImageEnhance` classes on it; and torchvision 0.4's `ColorJitter`, which is those
//! enhancers and a hue rotation in a random order. Float widths follow Pillow's C: where
//! it computes in `float` this does in `f32`, where a `double` constant widens the
//! expression, in `f64`.

use super::jpeg::Rgb;
use super::keyed::Stream;

/// `convert("L")` of one pixel in Pillow 6.2: `(19595 R + 38470 G + 7471 B) >> 16`,
/// truncated (Pillow 9 and later add a half before the shift, so they round).
pub fn luma(px: [u8; 3]) -> u8 {
    let [r, g, b] = px.map(u32::from);
    ((r * 19595 + g * 38470 + b * 7471) >> 16) as u8
}

/// `convert("YCbCr")`'s Y of one pixel: Pillow's tables of `round(v · c · 64)` for the
/// coefficients 0.299, 0.587, 0.114, summed and shifted by 6 bits (truncated).
pub fn ycbcr_y(px: [u8; 3]) -> u8 {
    let term = |v: u8, c: f64| (f64::from(v) * c * 64.0).round() as i32;
    let sum = term(px[0], 0.299) + term(px[1], 0.587) + term(px[2], 0.114);
    (sum >> 6) as u8
}

/// The image's Y channel (`convert("YCbCr").split()[0]`), row by row.
pub fn y_channel(img: &Rgb) -> Vec<u8> {
    img.pixels
        .chunks_exact(3)
        .map(|p| ycbcr_y([p[0], p[1], p[2]]))
        .collect()
}

/// `Image.blend(a, b, alpha)` of one byte (`ImagingBlend`, alpha a C `float`): `a + alpha ·
/// (b − a)` in float32, truncated; outside [0, 1] (extrapolation) clipped to 0–255 first.
pub fn blend(a: u8, b: u8, alpha: f32) -> u8 {
    let v = f32::from(a) + alpha * (i32::from(b) - i32::from(a)) as f32;
    if (0.0..=1.0).contains(&alpha) {
        v as u8
    } else if v <= 0.0 {
        0
    } else if v >= 255.0 {
        255
    } else {
        v as u8
    }
}

/// `_Enhance.enhance(factor)`: `Image.blend(degenerate, image, factor)`, the degenerate
/// pixel of each pixel given by `degenerate` (Python passes the factor as a double, C
/// takes it as a float).
fn enhance(img: &mut Rgb, factor: f64, degenerate: impl Fn([u8; 3]) -> [u8; 3]) {
    let alpha = factor as f32;
    for px in img.pixels.chunks_exact_mut(3) {
        let d = degenerate([px[0], px[1], px[2]]);
        for c in 0..3 {
            px[c] = blend(d[c], px[c], alpha);
        }
    }
}

/// `ImageEnhance.Brightness(img).enhance(factor)`: blended with black.
pub fn adjust_brightness(img: &mut Rgb, factor: f64) {
    enhance(img, factor, |_| [0; 3]);
}

/// `ImageEnhance.Contrast(img).enhance(factor)`: blended with the grey of the image's
/// mean luma, `int(mean + 0.5)` (`ImageStat`'s mean: the sum over the histogram ÷ the
/// count, in doubles).
pub fn adjust_contrast(img: &mut Rgb, factor: f64) {
    let sum: u64 = img
        .pixels
        .chunks_exact(3)
        .map(|p| u64::from(luma([p[0], p[1], p[2]])))
        .sum();
    let count = (img.pixels.len() / 3).max(1) as f64;
    let mean = (sum as f64 / count + 0.5) as u8;
    enhance(img, factor, |_| [mean; 3]);
}

/// `ImageEnhance.Color(img).enhance(factor)` (torchvision's `adjust_saturation`):
/// blended with the pixel's own luma.
pub fn adjust_saturation(img: &mut Rgb, factor: f64) {
    enhance(img, factor, |p| [luma(p); 3]);
}

/// `convert("HSV")` of one pixel (`rgb2hsv_row`, after colorsys): hue and saturation
/// scaled to 0–255 and truncated, value the largest channel.
pub fn rgb_to_hsv(px: [u8; 3]) -> [u8; 3] {
    let [r, g, b] = px;
    let (max, min) = (r.max(g).max(b), r.min(g).min(b));
    if max == min {
        return [0, 0, max];
    }
    let cr = f32::from(max - min);
    let s = cr / f32::from(max);
    let [rc, gc, bc] = px.map(|v| f32::from(max - v) / cr);
    // `2.0 + rc - bc` is a double expression stored in a float.
    let h: f32 = if r == max {
        bc - gc
    } else if g == max {
        (2.0 + f64::from(rc) - f64::from(bc)) as f32
    } else {
        (4.0 + f64::from(gc) - f64::from(rc)) as f32
    };
    let h = ((f64::from(h) / 6.0 + 1.0) % 1.0) as f32;
    let byte = |v: f32| ((f64::from(v) * 255.0) as i32).clamp(0, 255) as u8;
    [byte(h), byte(s), max]
}

/// `convert("RGB")` of one HSV pixel (`hsv2rgb`): the colorsys sector formulas, each
/// channel C's `round` (half away from zero).
pub fn hsv_to_rgb(hsv: [u8; 3]) -> [u8; 3] {
    let [h, s, v] = hsv;
    if s == 0 {
        return [v; 3];
    }
    let sector = f64::from(h) * 6.0 / 255.0;
    let i = sector.floor() as i32;
    let f = (sector - f64::from(i)) as f32;
    let fs = (f64::from(s) / 255.0) as f32;
    let v64 = f64::from(v);
    let byte = |x: f64| (x.round() as i32).clamp(0, 255) as u8;
    let p = byte(v64 * (1.0 - f64::from(fs)));
    // `fs * f` is a float product; the rest widens to double.
    let q = byte(v64 * (1.0 - f64::from(fs * f)));
    let t = byte(v64 * (1.0 - f64::from(fs) * (1.0 - f64::from(f))));
    match i % 6 {
        0 => [v, t, p],
        1 => [q, v, p],
        2 => [p, v, t],
        3 => [p, q, v],
        4 => [t, p, v],
        _ => [v, p, q],
    }
}

/// torchvision 0.4's `adjust_hue(img, hue_factor)`: to HSV, the hue byte plus
/// `np.uint8(hue_factor · 255)` with wrap-around, back to RGB. The shift is NumPy 1.17's
/// cast of the double to uint8 on x86-64: truncated toward zero, then its low byte (−12.75
/// gives 244).
pub fn adjust_hue(img: &mut Rgb, hue_factor: f64) {
    let shift = ((hue_factor * 255.0) as i64).rem_euclid(256) as u8;
    for px in img.pixels.chunks_exact_mut(3) {
        let [h, s, v] = rgb_to_hsv([px[0], px[1], px[2]]);
        px.copy_from_slice(&hsv_to_rgb([h.wrapping_add(shift), s, v]));
    }
}

/// One of ColorJitter's four adjustments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Adjustment {
    /// `adjust_brightness` by the factor.
    Brightness(f64),
    /// `adjust_contrast` by the factor.
    Contrast(f64),
    /// `adjust_saturation` by the factor.
    Saturation(f64),
    /// `adjust_hue` by the factor.
    Hue(f64),
}

impl Adjustment {
    /// Applies it to `img`.
    pub fn apply(self, img: &mut Rgb) {
        match self {
            Adjustment::Brightness(f) => adjust_brightness(img, f),
            Adjustment::Contrast(f) => adjust_contrast(img, f),
            Adjustment::Saturation(f) => adjust_saturation(img, f),
            Adjustment::Hue(f) => adjust_hue(img, f),
        }
    }
}

/// `ColorJitter(brightness, contrast, saturation, hue)` with numbers, as torchvision 0.4
/// takes them: factors uniform in `[max(0, 1 − x), 1 + x]` (hue in `[−x, x]`), an
/// amount of 0 leaving that adjustment out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColorJitter {
    /// Brightness amount.
    pub brightness: f64,
    /// Contrast amount.
    pub contrast: f64,
    /// Saturation amount.
    pub saturation: f64,
    /// Hue amount (at most 0.5).
    pub hue: f64,
}

impl ColorJitter {
    /// ssd's `ColorJitter(brightness=0.125, contrast=0.5, saturation=0.5, hue=0.05)`.
    pub const SSD: ColorJitter = ColorJitter {
        brightness: 0.125,
        contrast: 0.5,
        saturation: 0.5,
        hue: 0.05,
    };

    /// `get_params`: a factor for each adjustment in the order brightness, contrast,
    /// saturation, hue (`random.uniform` each), then the list shuffled as Python's
    /// `random.shuffle` does (from the last position down, each swapped with a position
    /// drawn below its own + 1).
    pub fn draw(&self, rng: &mut Stream) -> Vec<Adjustment> {
        let around_one = |x: f64, rng: &mut Stream| rng.uniform((1.0 - x).max(0.0), 1.0 + x);
        let mut out = Vec::with_capacity(4);
        if self.brightness > 0.0 {
            out.push(Adjustment::Brightness(around_one(self.brightness, rng)));
        }
        if self.contrast > 0.0 {
            out.push(Adjustment::Contrast(around_one(self.contrast, rng)));
        }
        if self.saturation > 0.0 {
            out.push(Adjustment::Saturation(around_one(self.saturation, rng)));
        }
        if self.hue > 0.0 {
            out.push(Adjustment::Hue(rng.uniform(-self.hue, self.hue)));
        }
        for i in (1..out.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            out.swap(i, j);
        }
        out
    }

    /// The drawn adjustments applied to `img` in their order.
    pub fn apply(&self, img: &mut Rgb, rng: &mut Stream) {
        for adjustment in self.draw(rng) {
            adjustment.apply(img);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::images::keyed::Purpose;

    fn one(px: [u8; 3]) -> Rgb {
        Rgb::new(1, 1, px.to_vec())
    }

    fn row(pixels: &[[u8; 3]]) -> Rgb {
        Rgb::new(pixels.len(), 1, pixels.concat())
    }

    /// Pillow 6.2's luma truncates: pure green is 255 · 38470 / 65536 = 149.69 → 149
    /// (Pillow 9's rounding would give 150); the weights sum to 65536, so a grey is itself.
    #[test]
    fn luma_truncates_as_pillow_6_2() {
        assert_eq!(luma([0, 255, 0]), 149);
        assert_eq!(luma([255, 0, 0]), 76);
        assert_eq!(luma([0, 0, 255]), 29);
        assert!((0..=255).all(|v| luma([v, v, v]) == v));
        // (200, 100, 0): (3 919 000 + 3 847 000) / 65536 = 118.499 → 118.
        assert_eq!(luma([200, 100, 0]), 118);
    }

    /// Y = (round(64·0.299·R) + round(64·0.587·G) + round(64·0.114·B)) >> 6.
    #[test]
    fn y_of_ycbcr_by_hand() {
        // 255: 4879.68 → 4880, 9579.84 → 9580, 1860.48 → 1860; 16320 >> 6 = 255.
        assert_eq!(ycbcr_y([255, 255, 255]), 255);
        assert_eq!(ycbcr_y([0, 0, 0]), 0);
        // Red 100: 1913.6 → 1914 >> 6 = 29; green 100: 3756.8 → 3757 >> 6 = 58.
        assert_eq!(ycbcr_y([100, 0, 0]), 29);
        assert_eq!(ycbcr_y([0, 100, 0]), 58);
        assert_eq!(y_channel(&row(&[[100, 0, 0], [0, 100, 0]])), [29, 58]);
    }

    /// Brightness blends with black: inside [0, 1] truncated, beyond it clipped.
    #[test]
    fn brightness_by_hand() {
        let mut img = one([100, 200, 50]);
        adjust_brightness(&mut img, 0.875);
        // 87.5, 175, 43.75.
        assert_eq!(img.pixels, [87, 175, 43]);
        let mut img = one([100, 240, 50]);
        adjust_brightness(&mut img, 1.125);
        // 112.5, 270 → 255, 56.25.
        assert_eq!(img.pixels, [112, 255, 56]);
    }

    /// Contrast blends with the grey of the mean luma, rounded from a half.
    #[test]
    fn contrast_by_hand() {
        let greys = row(&[[100; 3], [200; 3]]);
        // Mean 150: 150 ± 0.5 · 50 and 150 ± 1.5 · 50.
        let mut img = greys.clone();
        adjust_contrast(&mut img, 0.5);
        assert_eq!(img.pixels, [125, 125, 125, 175, 175, 175]);
        let mut img = greys;
        adjust_contrast(&mut img, 1.5);
        assert_eq!(img.pixels, [75, 75, 75, 225, 225, 225]);
        // Mean 100.5 → int(101.0) = 101: 101 + 0.5·(100 − 101) = 100.5 → 100, and
        // 101 + 0.5·(101 − 101) = 101.
        let mut img = row(&[[100; 3], [101; 3]]);
        adjust_contrast(&mut img, 0.5);
        assert_eq!(img.pixels, [100, 100, 100, 101, 101, 101]);
    }

    /// Saturation blends each pixel with its own luma (118 for (200, 100, 0)).
    #[test]
    fn saturation_by_hand() {
        let mut img = one([200, 100, 0]);
        adjust_saturation(&mut img, 0.5);
        // 118 + 0.5·82 = 159, 118 − 0.5·18 = 109, 118 − 0.5·118 = 59.
        assert_eq!(img.pixels, [159, 109, 59]);
        let mut img = one([200, 100, 0]);
        adjust_saturation(&mut img, 1.5);
        // 118 + 123 = 241, 118 − 27 = 91, 118 − 177 → 0.
        assert_eq!(img.pixels, [241, 91, 0]);
    }

    /// HSV as Pillow's bytes: (200, 100, 0) has hue (0.5 / 6) · 255 = 21.25 → 21, full
    /// saturation, value 200; back, the sector-0 formula gives green round(200 · 21 · 6
    /// / 255) = round(98.82) = 99.
    #[test]
    fn hsv_round_trip_by_hand() {
        assert_eq!(rgb_to_hsv([200, 100, 0]), [21, 255, 200]);
        assert_eq!(hsv_to_rgb([21, 255, 200]), [200, 99, 0]);
        assert_eq!(rgb_to_hsv([7, 7, 7]), [0, 0, 7]);
        assert_eq!(hsv_to_rgb([99, 0, 7]), [7, 7, 7]);
        // Blue's hue: 4 + gc − rc = 4 → 4 / 6 · 255 = 170.
        assert_eq!(rgb_to_hsv([0, 0, 255]), [170, 255, 255]);
    }

    /// Hue rotations of pure red: +0.05 shifts by int(12.75) = 12 (sector 0, green
    /// 255 · 72 / 255 = 72); −0.05 by −12, i.e. 244 (sector 5, f = 189 / 255, blue
    /// 255 · (1 − f) = 66); +1/3 by 85, pure green.
    #[test]
    fn hue_shifts_of_pure_red() {
        let shifted = |factor: f64| {
            let mut img = one([255, 0, 0]);
            adjust_hue(&mut img, factor);
            img.pixels
        };
        assert_eq!(shifted(0.05), [255, 72, 0]);
        assert_eq!(shifted(-0.05), [255, 0, 66]);
        assert_eq!(shifted(1.0 / 3.0), [0, 255, 0]);
        // A grey has no hue to turn.
        let mut grey = one([90, 90, 90]);
        adjust_hue(&mut grey, 0.05);
        assert_eq!(grey.pixels, [90, 90, 90]);
    }

    /// The factors are drawn brightness, contrast, saturation, hue (the stream's first
    /// four draws, in their ranges), then shuffled: all 24 orders come up, about equally.
    #[test]
    fn jitter_draws_in_order_then_shuffles() {
        let mut rng = Stream::keyed(5, Purpose::Item, &[0]);
        let mut copy = rng.clone();
        let drawn = ColorJitter::SSD.draw(&mut rng);
        let want = [
            copy.uniform(0.875, 1.125),
            copy.uniform(0.5, 1.5),
            copy.uniform(0.5, 1.5),
            copy.uniform(-0.05, 0.05),
        ];
        let mut got = [0.0; 4];
        for a in &drawn {
            match *a {
                Adjustment::Brightness(f) => got[0] = f,
                Adjustment::Contrast(f) => got[1] = f,
                Adjustment::Saturation(f) => got[2] = f,
                Adjustment::Hue(f) => got[3] = f,
            }
        }
        assert_eq!(got, want);
        let mut counts = std::collections::HashMap::new();
        for i in 0..2400 {
            let mut rng = Stream::keyed(1, Purpose::Item, &[i]);
            let order: Vec<u8> = (ColorJitter::SSD.draw(&mut rng).iter())
                .map(|a| match a {
                    Adjustment::Brightness(_) => 0,
                    Adjustment::Contrast(_) => 1,
                    Adjustment::Saturation(_) => 2,
                    Adjustment::Hue(_) => 3,
                })
                .collect();
            *counts.entry(order).or_insert(0u32) += 1;
        }
        assert_eq!(counts.len(), 24);
        // Chi-square with 23 degrees of freedom under 49.7 (its 0.999 quantile).
        let chi2: f64 = counts
            .values()
            .map(|&c| (f64::from(c) - 100.0).powi(2) / 100.0)
            .sum();
        assert!(chi2 < 49.7, "{counts:?}");
    }
}
