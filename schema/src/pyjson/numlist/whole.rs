//! The first pass of [`skip_plain_floats`](super::skip_plain_floats) on x86-64: whole
//! 64-byte blocks of a loss curve checked at once, by bit operations on their byte
//! classes (SSE2, or AVX2 where the processor has it).

use super::Separator;

/// Passes over whole 64-byte blocks of elements from `pos` (an element's first byte),
/// and says how many elements it passed and where the first one it did not pass starts.
///
/// Where [`by_blocks`](super::by_blocks) checks each element against the blocks' masks,
/// this checks each block at once, with the elements' rules as bit operations on its
/// byte classes: on the suite's loss curves (an element and its separator are some 28
/// bytes) the lean parse of the large benchmark tree goes from 59 to 49 ms on one
/// thread. It takes the layout `json.dumps(indent=…)` writes, a newline and spaces
/// after each comma, and elements `(0|[1-9][0-9]*)\.[0-9]+` with a comma in each block
/// (so that an element is under 128 bytes, its integer part far from the 300 digits
/// from which a number may overflow): every element it passes is one the loop would
/// pass as a plain finite float. At the first block that breaks a rule (the list's end,
/// an exponent, damaged text), it gives back the last element that started in the
/// blocks before, whose rules that block may be needed for, to the element checks.
pub(super) fn by_whole_blocks(text: &[u8], pos: usize, sep: &Separator) -> (usize, usize) {
    let Some(indent) = sep.indent else {
        return (0, pos);
    };
    if has_avx2() {
        // SAFETY: the processor has what `whole_blocks_avx2` enables (`has_avx2`).
        return unsafe { whole_blocks_avx2(text, pos, indent) };
    }
    whole_blocks::<Sse2>(text, pos, indent)
}

/// Whether the processor has the features of [`whole_blocks_avx2`] (detected once, then
/// cached by the standard library).
fn has_avx2() -> bool {
    use std::arch::is_x86_feature_detected as has;
    has!("avx2") && has!("pclmulqdq") && has!("popcnt") && has!("lzcnt")
}

#[target_feature(enable = "avx2,pclmulqdq,popcnt,lzcnt")]
fn whole_blocks_avx2(text: &[u8], pos: usize, indent: u32) -> (usize, usize) {
    whole_blocks::<Avx2>(text, pos, indent)
}

/// [`by_whole_blocks`] with the byte classes of `C`.
#[inline(always)]
fn whole_blocks<C: Classify>(text: &[u8], pos: usize, indent: u32) -> (usize, usize) {
    // `x` shifted up by `k` bits (1 ≤ k ≤ 63), the bits of the block before coming in.
    let up = |x: u64, before: u64, k: u32| (x << k) | (before >> (64 - k));
    let mut before = Classes::default();
    let (mut before_white, mut before_zero_starts) = (0u64, 0u64);
    // Whether an odd number of dots and commas came before the block: a dot without
    // its comma yet.
    let mut open = 0u64;
    // The first element's start, which no separator announces.
    let mut first = 1u64;
    let (mut starts_passed, mut last_start) = (0usize, pos);
    let mut base = pos;
    while let Some(block) = text.get(base..).and_then(<[u8]>::first_chunk::<64>) {
        let b = C::classes(block);
        let white = b.newlines | b.spaces;
        let element = b.digits | b.dots;
        // Only digits, dots, commas and the separators' white space; a newline right
        // after each comma and nowhere else; the spaces run from it to an element's
        // start exactly `indent` bytes on, and an element starts nowhere else.
        let starts = (element & up(white, before_white, 1)) | first;
        let announced = up(b.commas, before.commas, 2 + indent) | first;
        let layout = (element | b.commas | white) == !0
            && b.newlines == up(b.commas, before.commas, 1)
            && starts == announced;
        // An element starts with a digit, a digit comes before each comma, and dots
        // and commas alternate from a dot on: one dot in each element, with digits on
        // both sides. A block without a comma ends the pass (elements under 128
        // bytes).
        let events = b.commas | b.dots;
        let odd = C::prefix_xor(events) ^ open.wrapping_neg();
        let numbers = starts & !b.digits == 0
            && b.commas & !up(b.digits, before.digits, 1) == 0
            && (b.dots & !odd) | (b.commas & odd) == 0
            && b.commas != 0;
        // No leading zero: an element's `0` is followed by the dot.
        let zero_starts = starts & b.zeros;
        let leading = up(zero_starts, before_zero_starts, 1) & b.digits == 0;
        if !(layout && numbers && leading) {
            break;
        }
        if starts != 0 {
            starts_passed += starts.count_ones() as usize;
            last_start = base + 63 - starts.leading_zeros() as usize;
        }
        open = odd >> 63;
        (before, before_white, before_zero_starts) = (b, white, zero_starts);
        first = 0;
        base += 64;
    }
    // Every element that started before the last start has been checked up to that
    // start: its separator is the bytes before it.
    (starts_passed.saturating_sub(1), last_start)
}

/// Each bit the parity of the set bits at and below it.
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    for k in [1, 2, 4, 8, 16, 32] {
        x ^= x << k;
    }
    x
}

/// The byte classes [`whole_blocks`] reads, one bit per byte of a 64-byte block.
#[derive(Clone, Copy, Default)]
struct Classes {
    digits: u64,
    dots: u64,
    commas: u64,
    newlines: u64,
    spaces: u64,
    zeros: u64,
}

/// A way to classify the bytes of a block (and to take a prefix XOR).
trait Classify {
    fn classes(block: &[u8; 64]) -> Classes;

    /// Each bit the parity of the set bits of `x` at and below it.
    #[inline(always)]
    fn prefix_xor(x: u64) -> u64 {
        prefix_xor(x)
    }
}

/// One byte at a time: the reference the tests hold the others to.
#[cfg(test)]
struct Portable;

#[cfg(test)]
impl Classify for Portable {
    #[inline(always)]
    fn classes(block: &[u8; 64]) -> Classes {
        let mut c = Classes::default();
        for (i, &b) in block.iter().enumerate() {
            let bit = 1u64 << i;
            let set = |class: &mut u64, yes: bool| *class |= if yes { bit } else { 0 };
            set(&mut c.digits, b.is_ascii_digit());
            set(&mut c.dots, b == b'.');
            set(&mut c.commas, b == b',');
            set(&mut c.newlines, b == b'\n');
            set(&mut c.spaces, b == b' ');
            set(&mut c.zeros, b == b'0');
        }
        c
    }
}

/// SSE2, part of every x86-64 processor: 16 bytes at a time.
struct Sse2;

impl Classify for Sse2 {
    #[inline(always)]
    fn classes(block: &[u8; 64]) -> Classes {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8,
            _mm_set1_epi8, _mm_sub_epi8,
        };
        let mut c = Classes::default();
        // SAFETY: SSE2 is the target's baseline; each load reads the 16 bytes at 16·k,
        // within `block`.
        unsafe {
            let is = |b: u8| _mm_set1_epi8(b as i8);
            for k in 0..4 {
                let bytes = _mm_loadu_si128(block.as_ptr().add(16 * k).cast::<__m128i>());
                // A digit is a byte b with b − '0' ≤ 9 (unsigned): max(b − '0', 9) = 9.
                let offset = _mm_sub_epi8(bytes, is(b'0'));
                let digit = _mm_cmpeq_epi8(_mm_max_epu8(offset, is(9)), is(9));
                let bits = |m| u64::from(_mm_movemask_epi8(m) as u16) << (16 * k);
                c.digits |= bits(digit);
                c.dots |= bits(_mm_cmpeq_epi8(bytes, is(b'.')));
                c.commas |= bits(_mm_cmpeq_epi8(bytes, is(b',')));
                c.newlines |= bits(_mm_cmpeq_epi8(bytes, is(b'\n')));
                c.spaces |= bits(_mm_cmpeq_epi8(bytes, is(b' ')));
                c.zeros |= bits(_mm_cmpeq_epi8(offset, is(0)));
            }
        }
        c
    }
}

/// AVX2, where the processor has it: 32 bytes at a time.
struct Avx2;

impl Classify for Avx2 {
    #[inline(always)]
    fn classes(block: &[u8; 64]) -> Classes {
        use std::arch::x86_64::{
            __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8, _mm256_movemask_epi8,
            _mm256_set1_epi8, _mm256_sub_epi8,
        };
        let mut c = Classes::default();
        // SAFETY: only inlined into `whole_blocks_avx2`, which runs where the processor
        // has AVX2; each load reads the 32 bytes at 32·k, within `block`.
        unsafe {
            let is = |b: u8| _mm256_set1_epi8(b as i8);
            for k in 0..2 {
                let bytes = _mm256_loadu_si256(block.as_ptr().add(32 * k).cast::<__m256i>());
                let offset = _mm256_sub_epi8(bytes, is(b'0'));
                let digit = _mm256_cmpeq_epi8(_mm256_max_epu8(offset, is(9)), is(9));
                let bits = |m| u64::from(_mm256_movemask_epi8(m) as u32) << (32 * k);
                c.digits |= bits(digit);
                c.dots |= bits(_mm256_cmpeq_epi8(bytes, is(b'.')));
                c.commas |= bits(_mm256_cmpeq_epi8(bytes, is(b',')));
                c.newlines |= bits(_mm256_cmpeq_epi8(bytes, is(b'\n')));
                c.spaces |= bits(_mm256_cmpeq_epi8(bytes, is(b' ')));
                c.zeros |= bits(_mm256_cmpeq_epi8(offset, is(0)));
            }
        }
        c
    }

    /// A carry-less product with all ones (PCLMULQDQ, which every processor with AVX2
    /// has; detected with it).
    #[inline(always)]
    fn prefix_xor(x: u64) -> u64 {
        use std::arch::x86_64::{_mm_clmulepi64_si128, _mm_cvtsi128_si64, _mm_set_epi64x};
        // SAFETY: only inlined into `whole_blocks_avx2`, which runs where the processor
        // has PCLMULQDQ.
        unsafe {
            let product =
                _mm_clmulepi64_si128(_mm_set_epi64x(0, x as i64), _mm_set_epi64x(0, -1), 0);
            _mm_cvtsi128_si64(product) as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The pass with each way of classifying that this processor has.
    fn every_pass(text: &[u8], pos: usize, indent: u32) -> Vec<(usize, usize)> {
        let mut passes = vec![
            whole_blocks::<Portable>(text, pos, indent),
            whole_blocks::<Sse2>(text, pos, indent),
        ];
        if has_avx2() {
            // SAFETY: just detected.
            passes.push(unsafe { whole_blocks_avx2(text, pos, indent) });
        }
        passes
    }

    proptest! {
        /// SSE2 and AVX2 classify bytes as the byte-at-a-time reference does.
        #[test]
        fn classes_agree(block in prop::array::uniform32(prop::sample::select(
            b"0123456789.,\n ]-eE\t\x80\xff\xb9".to_vec(),
        )), other in prop::array::uniform32(any::<u8>())) {
            let mut bytes = [0u8; 64];
            bytes[..32].copy_from_slice(&block);
            bytes[32..].copy_from_slice(&other);
            let reference = Portable::classes(&bytes);
            let mut found = vec![Sse2::classes(&bytes)];
            if has_avx2() {
                found.push(Avx2::classes(&bytes));
            }
            for c in found {
                prop_assert_eq!(
                    [c.digits, c.dots, c.commas, c.newlines, c.spaces, c.zeros],
                    [reference.digits, reference.dots, reference.commas, reference.newlines,
                        reference.spaces, reference.zeros]
                );
            }
            // Bits 0, 1 and 3 set: parities 1, 0, 0, 1, then 1 from there on.
            prop_assert_eq!(Sse2::prefix_xor(0b1011), 0b1001 | !0 << 4);
            if has_avx2() {
                prop_assert_eq!(Avx2::prefix_xor(reference.dots), prefix_xor(reference.dots));
            }
        }

        /// On loss curves, damaged or not, the three passes go as far as each other (the
        /// list tests in tests/skip_list.rs hold the detected one to the careful loop).
        #[test]
        fn passes_agree(
            xs in prop::collection::vec(prop_oneof![0.0f64..1.0, 1.0f64..2e7], 0..60),
            edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(
                b"0123456789.,\n ]-e\t\x80".to_vec()), 0..3u8), 0..3),
            indent in 6u32..14,
        ) {
            let sep = format!(",\n{}", " ".repeat(indent as usize));
            let items: Vec<String> = xs.iter().map(|x| format!("{x}")).collect();
            let mut text = format!("[{}]{}", items.join(&sep), " ".repeat(64)).into_bytes();
            for (at, b, kind) in edits {
                let i = 1 + at.index(text.len() - 1);
                match kind {
                    0 => text[i] = b,
                    1 => text.insert(i, b),
                    _ => { text.remove(i); }
                }
            }
            let passes = every_pass(&text, 1, indent);
            prop_assert!(passes.iter().all(|p| *p == passes[0]), "{:?}", passes);
        }
    }

    /// The validator's read of a curve takes the floats of the whole blocks, as
    /// `str::parse` reads each, and stops where the pass stops.
    #[test]
    fn a_curve_is_read_in_whole_blocks() {
        let items: Vec<String> = (1..=40).map(|i| format!("{}.{i}5", 40 - i)).collect();
        let text = format!(
            "[\n        {}\n    ]{}",
            items.join(",\n        "),
            " ".repeat(64)
        );
        let sep = Separator::after(&text.as_bytes()[1..10]).unwrap();
        let (count, end) = by_whole_blocks(text.as_bytes(), 10, &sep);
        let mut out = vec![-1.0];
        assert_eq!(
            super::super::read_plain_floats(text.as_bytes(), 10, &sep, &mut out),
            end
        );
        assert!(count >= 30);
        let want: Vec<f64> = items[..count].iter().map(|x| x.parse().unwrap()).collect();
        assert_eq!(out[0], -1.0);
        assert_eq!(out[1..], want[..]);
    }

    /// A curve of plain floats passes in whole blocks up to the start of an element in
    /// the last blocks, where the element checks take over; with a leading zero in it,
    /// not past that element. Its first two elements take 64 lengths in all, so that
    /// each byte of the others meets each place in a block (and each carry from block to
    /// block).
    #[test]
    fn a_curve_passes_up_to_its_last_blocks_or_a_leading_zero() {
        for pad in 0..64 {
            let mut items: Vec<String> = (1..=40).map(|i| format!("{}.{i}5", 40 - i)).collect();
            items[0] = format!("0.5{}", "1".repeat(pad / 2));
            items[1] = format!("1.5{}", "1".repeat(pad - pad / 2));
            let starts = |items: &[String]| -> Vec<usize> {
                (0..items.len())
                    .map(|i| 10 + items[..i].iter().map(|x| x.len() + 10).sum::<usize>())
                    .collect()
            };
            let curve = |items: &[String]| {
                format!(
                    "[\n        {}\n    ]{}",
                    items.join(",\n        "),
                    " ".repeat(64)
                )
            };
            let good = starts(&items);
            for (len, pos) in every_pass(curve(&items).as_bytes(), 10, 8) {
                // 40 elements of 14–15 bytes and their separators (9 to 15 blocks): the
                // pass stops within the last two blocks.
                assert!(
                    len + 1 >= items.len() - 128 / 24 && len < items.len(),
                    "{pad}: {len}"
                );
                assert_eq!(pos, good[len], "{pad}");
            }
            items[20] = "05.5".to_owned();
            let zero = starts(&items);
            for (len, pos) in every_pass(curve(&items).as_bytes(), 10, 8) {
                assert!(len <= 20, "{pad}: {len}");
                assert_eq!(pos, zero[len], "{pad}");
            }
        }
    }
}
