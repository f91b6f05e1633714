//! The fast path of [`Parser::skip_list`](super::Parser): the loss curves that Python's
//! `json.dumps(indent=4)` writes, one plain float per line: on x86-64 first checked a
//! whole 64-byte block at a time ([`whole`]), then element by element against byte
//! classes of 64-byte blocks (SSE2), then read eight bytes at a time.
//!
//! It only passes over a run of elements that the careful loop of `skip_list` would
//! take as plain finite numbers, each followed by the list's usual separator, and says
//! how many; the careful loop goes on from the element where it stopped (the last one,
//! `NaN`, an exponent, another layout, damaged text…), so the result is that loop's.

/// Bytes of text each element needs ahead of it: the longest plain float taken here
/// (23 bytes), then its separator (up to 15) read as two words.
const WINDOW: usize = 40;

/// What follows each element but the last in the list's layout: `,` and the white
/// space that came after its `[` (Python's newline and indentation), 8 to 15 bytes.
pub(super) struct Separator {
    /// Its first eight bytes.
    head: u64,
    /// Its last eight bytes (overlapping the head unless it is 16 bytes long).
    tail: u64,
    /// Where the tail starts: its length less 8.
    tail_at: usize,
    /// The number of spaces when the white space is a newline and spaces only (Python's
    /// indentation), which the whole-block pass checks (x86-64 only).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    indent: Option<u32>,
}

impl Separator {
    /// The separator of a list whose `[` is followed by the white space `ws` (as
    /// `skip_ws` passed it, so that a match is a comma and white space); `None` for
    /// layouts too short or too deep to be worth a fast path (compact lists).
    pub(super) fn after(ws: &[u8]) -> Option<Self> {
        if !(7..=14).contains(&ws.len()) {
            return None;
        }
        let mut bytes = [0u8; 15];
        bytes[0] = b',';
        bytes[1..=ws.len()].copy_from_slice(ws);
        let tail_at = ws.len() - 7;
        let indent =
            (ws[0] == b'\n' && ws[1..].iter().all(|&b| b == b' ')).then_some(ws.len() as u32 - 1);
        Some(Separator {
            head: word(&bytes, 0),
            tail: word(&bytes, tail_at),
            tail_at,
            indent,
        })
    }

    /// Its length. (`& 7` tells the compiler that it is below 16: no bounds checks.)
    #[inline(always)]
    fn len(&self) -> usize {
        8 + (self.tail_at & 7)
    }

    /// Whether the separator is at `at` in `text` (a window of an element's text, or the
    /// whole text).
    #[inline(always)]
    fn is_at(&self, text: &[u8], at: usize) -> bool {
        text.get(at..)
            .and_then(<[u8]>::first_chunk::<16>)
            .is_some_and(|bytes| {
                word(bytes, 0) == self.head && word(bytes, self.tail_at & 7) == self.tail
            })
    }
}

/// How far [`skip_plain_floats`] went.
pub(super) struct Run {
    /// Elements passed over, each a plain float.
    pub(super) len: usize,
    /// Where the first element not passed over starts, or past the list's `]`.
    pub(super) pos: usize,
    /// Whether the list's last element and `]` were passed over too.
    pub(super) closed: bool,
}

/// Passes over the plain floats from `pos` (an element's first byte) on, each with the
/// separator after it, and the list's last element and `]` when they follow. Stops
/// [`WINDOW`] bytes before the end of the text.
pub(super) fn skip_plain_floats(text: &[u8], pos: usize, sep: &Separator) -> Run {
    // As many elements as whole blocks take, then as many as the block masks take
    // element by element (the same elements: see `by_whole_blocks` and `by_blocks`),
    // then one by one from where that stopped.
    let (whole, pos) = by_whole_blocks(text, pos, sep);
    let (len, pos) = by_blocks(text, pos, sep);
    let mut len = whole + len;
    let mut rest = &text[pos..];
    while let Some(win) = rest.first_chunk::<WINDOW>() {
        let Some(end) = plain_float_len(win) else {
            break;
        };
        if !sep.is_at(win, end) {
            break;
        }
        len += 1;
        rest = &rest[end + sep.len()..];
    }
    let pos = text.len() - rest.len();
    match rest.first_chunk::<WINDOW>().and_then(last_float_len) {
        Some(last) => Run {
            len: len + 1,
            pos: pos + last,
            closed: true,
        },
        None => Run {
            len,
            pos,
            closed: false,
        },
    }
}

/// Reads the plain floats that whole blocks take from `pos` (an element's first byte;
/// see `by_whole_blocks`) onto `out`, each as [`Parser::number_list`](super::Parser)'s
/// loop reads it (the same float parse of the same bytes), and says where the first
/// element not read starts, for that loop to go on from.
pub(super) fn read_plain_floats(
    text: &[u8],
    pos: usize,
    sep: &Separator,
    out: &mut Vec<f64>,
) -> usize {
    let (count, end) = by_whole_blocks(text, pos, sep);
    let (before, mut at) = (out.len(), pos);
    out.reserve(count);
    for _ in 0..count {
        // The blocks' checks leave a plain float, then the separator: the parse stops at
        // its comma.
        match fast_float2::parse_partial::<f64, _>(&text[at..]) {
            Ok((value, len)) if text.get(at + len) == Some(&b',') => {
                out.push(value);
                at += len + sep.len();
            }
            _ => break,
        }
    }
    if at != end {
        // Not what the checks promised (never seen): the loop reads them all again.
        out.truncate(before);
        return pos;
    }
    end
}

/// Passes over the elements [`skip_plain_floats`]' loop would pass over from `pos`, as
/// many as it can, and says how many and where it stopped (an element's start).
///
/// The loop finds each element's end by reading the element, so each element waits for
/// the one before (a chain of some 25 cycles). Here the text is classified 64 bytes at a
/// time (commas, dots, non-digits) without looking at the elements, and each element,
/// from its start to the next comma, is checked against those masks: the elements'
/// checks overlap. The check is the loop's: one to seven digits (no leading zero before
/// more than one), a dot, at least one digit, 23 bytes at most, then the list's
/// separator. It stops, for the loop to go on, at anything else and where the text
/// ahead is shorter than two blocks.
#[cfg(target_arch = "x86_64")]
fn by_blocks(text: &[u8], mut pos: usize, sep: &Separator) -> (usize, usize) {
    let mut count = 0;
    // The classes of the 64 bytes from `base` and of the 64 after them.
    let mut base = pos;
    let (Some(mut low), Some(mut high)) = (Masks::of(text, base), Masks::of(text, base + 64))
    else {
        return (0, pos);
    };
    loop {
        let at = pos - base; // below 64
        // The classes of the 64 bytes from `pos`.
        let ahead = |low: u64, high: u64| (low >> at) | ((high << 1) << (63 - at));
        let len = ahead(low.commas, high.commas).trailing_zeros() as usize; // 64: none
        if len > 23 {
            return (count, pos);
        }
        let within = (1u64 << len) - 1;
        let dots = ahead(low.dots, high.dots) & within;
        let others = ahead(low.non_digits, high.non_digits) & within;
        let dot = dots.trailing_zeros() as usize;
        let plain = others == dots
            && dots & dots.wrapping_sub(1) == 0
            && (1..8).contains(&dot)
            && (dot == 1 || text[pos] != b'0')
            && len >= dot + 2;
        if !(plain && sep.is_at(text, pos + len)) {
            return (count, pos);
        }
        count += 1;
        pos += len + sep.len();
        while pos - base >= 64 {
            base += 64;
            let Some(next) = Masks::of(text, base + 64) else {
                return (count, pos);
            };
            (low, high) = (high, next);
        }
    }
}

/// Elsewhere the loop does it all.
#[cfg(not(target_arch = "x86_64"))]
fn by_blocks(_text: &[u8], pos: usize, _sep: &Separator) -> (usize, usize) {
    (0, pos)
}

#[cfg(target_arch = "x86_64")]
mod whole;
#[cfg(target_arch = "x86_64")]
use whole::by_whole_blocks;

/// Elsewhere the element checks do it all.
#[cfg(not(target_arch = "x86_64"))]
fn by_whole_blocks(_text: &[u8], pos: usize, _sep: &Separator) -> (usize, usize) {
    (0, pos)
}

/// Byte classes of 64 bytes of text, one bit per byte.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Masks {
    commas: u64,
    dots: u64,
    non_digits: u64,
}

#[cfg(target_arch = "x86_64")]
impl Masks {
    /// The classes of the 64 bytes from `base`; `None` when they pass the end of the
    /// text less [`WINDOW`] bytes (what the separator's check may read past an element).
    #[inline(always)]
    fn of(text: &[u8], base: usize) -> Option<Masks> {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8,
            _mm_set1_epi8, _mm_sub_epi8,
        };
        if base + 64 + WINDOW > text.len() {
            return None;
        }
        let block = text.get(base..)?.first_chunk::<64>()?;
        let (mut commas, mut dots, mut digits) = (0u64, 0u64, 0u64);
        // SAFETY: SSE2 is part of every x86-64 processor (the target's baseline), and each
        // load reads the 16 bytes at 16·k, within `block` (64 bytes); an unaligned load
        // reads any address.
        unsafe {
            let (comma, dot) = (_mm_set1_epi8(b',' as i8), _mm_set1_epi8(b'.' as i8));
            let (zero, nine) = (_mm_set1_epi8(b'0' as i8), _mm_set1_epi8(9));
            for k in 0..4 {
                let bytes = _mm_loadu_si128(block.as_ptr().add(16 * k).cast::<__m128i>());
                // A digit is a byte b with b − '0' ≤ 9 (unsigned): max(b − '0', 9) = 9.
                let offset = _mm_sub_epi8(bytes, zero);
                let digit = _mm_cmpeq_epi8(_mm_max_epu8(offset, nine), nine);
                let bits = |m| u64::from(_mm_movemask_epi8(m) as u16) << (16 * k);
                commas |= bits(_mm_cmpeq_epi8(bytes, comma));
                dots |= bits(_mm_cmpeq_epi8(bytes, dot));
                digits |= bits(digit);
            }
        }
        Some(Masks {
            commas,
            dots,
            non_digits: !digits,
        })
    }
}

/// The length of a plain float at the start of `win` and of the white space and `]`
/// after it: the list's last element and end. (Once a list: kept out of the loop.)
#[cold]
fn last_float_len(win: &[u8; WINDOW]) -> Option<usize> {
    let end = plain_float_len(win)?;
    let close = end + win[end..].iter().position(|b| !b" \t\n\r".contains(b))?;
    (win[close] == b']').then_some(close + 1)
}

/// The length of the float literal `(0|[1-9][0-9]{0,6})\.[0-9]+` that starts `win`,
/// when it is shorter than 24 bytes: what `scan_number` reads as a finite float and
/// `repr` writes for most floats. `None` for anything else (a sign, an int, an
/// exponent, a longer literal, no number), which the careful loop sorts out.
#[inline(always)]
fn plain_float_len(win: &[u8; WINDOW]) -> Option<usize> {
    let first = non_digits(word(win, 0));
    if first == 0 {
        return None;
    }
    // The integer part runs to the first non-digit, which must be the dot.
    let dot = (first.trailing_zeros() / 8) as usize;
    if win[dot] != b'.' || (dot != 1 && (dot == 0 || win[0] == b'0')) {
        return None; // no dot, no integer part, or a leading zero
    }
    // The fraction runs to the next non-digit, which must not follow the dot. With the
    // dot's flag cleared, the next flag is the lowest: exact, no byte below it being
    // non-ASCII. An end in the third word leaves eight fraction digits at least.
    let rest = first & (first - 1);
    if rest != 0 {
        let end = (rest.trailing_zeros() / 8) as usize;
        return (end > dot + 1).then_some(end);
    }
    let second = non_digits(word(win, 8));
    if second != 0 {
        let end = 8 + (second.trailing_zeros() / 8) as usize;
        return (end > dot + 1).then_some(end);
    }
    let third = non_digits(word(win, 16));
    (third != 0).then(|| 16 + (third.trailing_zeros() / 8) as usize)
}

/// Flags (bit 7 of a byte) the bytes of `x` that are not ASCII digits: no digit is
/// flagged below the lowest non-ASCII byte, no non-digit is ever missed, so the lowest
/// flag is the first non-digit, and no flag means eight digits.
#[inline(always)]
fn non_digits(x: u64) -> u64 {
    // `y = b ^ 0x30` is 0..=9 for a digit. For an ASCII byte, `y + 0x76` sets bit 7
    // exactly when y > 9 and cannot carry out of the byte; a non-ASCII byte has bit 7 in
    // `y` itself, but its `y + 0x76` may carry into the byte above and flag a digit
    // there. (Masking bit 7 first would make the test exact for one operation more,
    // three per element: 2 % of the skip's cost before the fast path.)
    const ONES: u64 = 0x0101_0101_0101_0101;
    let y = x ^ (ONES * 0x30);
    (y.wrapping_add(ONES * 0x76) | y) & (ONES * 0x80)
}

/// The eight bytes of `bytes` at `at`, little-endian.
#[inline(always)]
fn word<const N: usize>(bytes: &[u8; N], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(w)
}
