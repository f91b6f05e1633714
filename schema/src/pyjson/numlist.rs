//! The fast path of [`Parser::skip_list`](super::Parser): the loss curves that Python's
//! `json.dumps(indent=4)` writes, one plain float per line, read eight bytes at a time.
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
        Some(Separator {
            head: word(&bytes, 0),
            tail: word(&bytes, tail_at),
            tail_at,
        })
    }

    /// Its length. (`& 7` tells the compiler that it is below 16: no bounds checks.)
    #[inline(always)]
    fn len(&self) -> usize {
        8 + (self.tail_at & 7)
    }

    /// Whether the separator is at `at` in `win` (`at + 16 <= WINDOW`).
    #[inline(always)]
    fn is_at(&self, win: &[u8; WINDOW], at: usize) -> bool {
        word(win, at) == self.head && word(win, at + (self.tail_at & 7)) == self.tail
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
    let mut rest = &text[pos..];
    let mut len = 0;
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
