//! Reading and writing JSON the way Python's `json` module does.
//!
//! The reader accepts what `json.loads` accepts, including the non-standard tokens
//! `NaN`, `Infinity` and `-Infinity` that Python writes by default (`allow_nan=True`).
//! The writer reproduces `json.dumps(v, sort_keys=True, indent=4, separators=(',', ': '))`
//! byte for byte (with the default `ensure_ascii=True`).

use crate::value::{Object, Value};
use std::borrow::Cow;

mod fields;
mod numlist;
mod write;

pub use fields::{FieldName, known_field};
pub use write::to_python_json;

/// Where and why a JSON text could not be read: a [`SyntaxErrorDetail`] behind a box, so
/// that the parser's results stay small (a `Result<Value, SyntaxError>` is moved through
/// every value of every report). Reads as its detail: `e.offset`, `e.message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SyntaxError(Box<SyntaxErrorDetail>);

impl SyntaxError {
    /// The detail, unboxed.
    pub fn into_detail(self) -> SyntaxErrorDetail {
        *self.0
    }
}

impl std::ops::Deref for SyntaxError {
    type Target = SyntaxErrorDetail;
    fn deref(&self) -> &SyntaxErrorDetail {
        &self.0
    }
}

/// What a [`SyntaxError`] says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at byte {offset} (line {line}, column {column})")]
pub struct SyntaxErrorDetail {
    /// What was wrong.
    pub message: String,
    /// Byte offset into the text.
    pub offset: usize,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in bytes.
    pub column: usize,
}

impl SyntaxError {
    /// The same error in a text that `text` is a part of, starting at byte `offset`
    /// there, on line `line`, `column0` bytes after its line's start (a stream read a
    /// window at a time gives its errors the whole file's positions).
    pub fn shifted(self, offset: usize, line: usize, column0: usize) -> SyntaxError {
        let mut d = self.into_detail();
        if d.line == 1 {
            d.column += column0;
        }
        d.offset += offset;
        d.line += line - 1;
        SyntaxError(Box::new(d))
    }

    fn at(text: &[u8], offset: usize, message: impl Into<String>) -> Self {
        let offset = offset.min(text.len());
        let before = &text[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = offset
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        SyntaxError(Box::new(SyntaxErrorDetail {
            message: message.into(),
            offset,
            line,
            column,
        }))
    }
}

/// Parses one complete JSON text (surrounding white space allowed).
pub fn parse(text: &[u8]) -> Result<Value, SyntaxError> {
    let mut parser = Parser::new(text);
    parser.skip_ws();
    let value = parser.value()?;
    parser.skip_ws();
    if parser.pos < text.len() {
        return Err(parser.error("extra data after the JSON value"));
    }
    Ok(value)
}

/// A cursor over a JSON text; public so that the report reader can walk a stream of
/// values whose enclosing array is never closed.
pub struct Parser<'a> {
    text: &'a [u8],
    /// Current byte offset.
    pub pos: usize,
    depth: usize,
}

/// Nesting deeper than this is refused (Python raises RecursionError near 1000).
const MAX_DEPTH: usize = 512;

/// What [`Parser::skip_value`] passed over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Skipped {
    /// A list whose elements are all numbers (ints, floats, `NaN`, `Infinity`,
    /// `-Infinity`): its length and its first non-finite element, with its index, as
    /// [`Value::as_f64`] of the parsed element would give it (`NaN`, `±Infinity`, or a
    /// literal such as `1e400` that rounds to infinity).
    Numbers {
        /// Number of elements.
        len: usize,
        /// The first element that is not finite, with its index.
        first_nonfinite: Option<(usize, f64)>,
    },
    /// Any other value.
    Other,
}

/// The extent and kind of a number token, as [`Parser::scan_number`] walked it.
struct NumberToken {
    start: usize,
    /// The token is `-Infinity`.
    neg_infinity: bool,
    /// A fraction or an exponent: Python reads a float.
    float: bool,
    /// The literal might not be finite as an `f64` (an exponent, or a very long
    /// integer part); any other literal certainly is.
    may_overflow: bool,
}

impl<'a> Parser<'a> {
    /// A parser at the start of `text`.
    pub fn new(text: &'a [u8]) -> Self {
        Parser {
            text,
            pos: 0,
            depth: 0,
        }
    }

    /// An error at the current position.
    pub fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError::at(self.text, self.pos, message)
    }

    /// Skips JSON white space (space, tab, newline, carriage return).
    #[inline]
    pub fn skip_ws(&mut self) {
        let text = self.text;
        let mut i = self.pos;
        while let Some(&b) = text.get(i) {
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            i += 1;
            // Python's `indent=4` puts runs of spaces between tokens: 8 at a time.
            while let Some(chunk) = text.get(i..i + 8) {
                if u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])) != 0x2020_2020_2020_2020 {
                    break;
                }
                i += 8;
            }
        }
        self.pos = i;
    }

    /// The next byte, if any, without consuming it.
    pub fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    /// Whether the whole text has been consumed.
    pub fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    /// Consumes `b` if it is next.
    pub fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Reads one value starting at the current position (no leading white space).
    pub fn value(&mut self) -> Result<Value, SyntaxError> {
        match self.peek() {
            None => Err(self.error("unexpected end of data, expected a value")),
            Some(b'{') => self.object(),
            Some(b'[') => self.list(),
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'N') => self.keyword(b"NaN", Value::Float(f64::NAN)),
            Some(b'I') => self.keyword(b"Infinity", Value::Float(f64::INFINITY)),
            Some(b't') => self.keyword(b"true", Value::Bool(true)),
            Some(b'f') => self.keyword(b"false", Value::Bool(false)),
            Some(b'n') => self.keyword(b"null", Value::Null),
            Some(b) => Err(self.error(format!("unexpected {}, expected a value", show_byte(b)))),
        }
    }

    /// Passes over one value starting at the current position (no leading white space)
    /// without building it: the text accepted, the position reached and the errors are
    /// exactly those of [`Parser::value`]. A list of numbers also gives its length and
    /// first non-finite element ([`Skipped::Numbers`]).
    ///
    /// The skip walks numbers, strings and literals with the lexer [`Parser::value`] uses
    /// and only decides whether the text is valid; when it is not, `value()` reads it
    /// again from the same start, so an error's message and position are the full
    /// parser's by construction. Nothing is allocated for valid text.
    pub fn skip_value(&mut self) -> Result<Skipped, SyntaxError> {
        let (start, depth) = (self.pos, self.depth);
        if let Some(skipped) = self.try_skip() {
            return Ok(skipped);
        }
        self.pos = start;
        self.depth = depth;
        self.value().map(|_| Skipped::Other)
    }

    /// [`Parser::skip_value`]'s walk; `None` where [`Parser::value`] would fail.
    fn try_skip(&mut self) -> Option<Skipped> {
        if self.peek() == Some(b'[') {
            return self.skip_list();
        }
        self.skip_any().then_some(Skipped::Other)
    }

    /// Skips any value; `false` where [`Parser::value`] would fail.
    fn skip_any(&mut self) -> bool {
        match self.peek() {
            Some(b'{') => self.skip_object(),
            Some(b'[') => self.skip_list().is_some(),
            Some(b'"') => self.skip_string(),
            Some(b'-' | b'0'..=b'9') => self.scan_number().is_ok(),
            Some(b'N') => self.eat_word(b"NaN"),
            Some(b'I') => self.eat_word(b"Infinity"),
            Some(b't') => self.eat_word(b"true"),
            Some(b'f') => self.eat_word(b"false"),
            Some(b'n') => self.eat_word(b"null"),
            _ => false,
        }
    }

    /// A string as [`Parser::string`] reads it, without decoding it. The raw text is
    /// valid UTF-8 exactly when the decoded one is: escapes are ASCII and decode to
    /// whole characters.
    fn skip_string(&mut self) -> bool {
        let open = self.pos;
        if self.walk_string(None).is_err() {
            return false;
        }
        let raw = &self.text[open + 1..self.pos - 1];
        raw.is_ascii() || std::str::from_utf8(raw).is_ok()
    }

    fn skip_object(&mut self) -> bool {
        if !self.deeper() {
            return false;
        }
        self.pos += 1; // '{'
        self.skip_ws();
        if self.eat(b'}') {
            self.depth -= 1;
            return true;
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') || !self.skip_string() {
                return false;
            }
            self.skip_ws();
            if !self.eat(b':') {
                return false;
            }
            self.skip_ws();
            if !self.skip_any() {
                return false;
            }
            self.skip_ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b'}') {
                break;
            }
            return false;
        }
        self.depth -= 1;
        true
    }

    /// Skips a list, noting whether its elements are all numbers, how many there are
    /// and which is the first non-finite one.
    fn skip_list(&mut self) -> Option<Skipped> {
        let open = self.pos;
        if let Err(done) = self.open_list() {
            return done;
        }
        // A loss curve as Python indents it, one plain float a line, goes eight bytes at a
        // time; the careful loop takes over at the first element that is not so plain.
        let mut len = 0;
        if let Some(sep) = numlist::Separator::after(&self.text[open + 1..self.pos]) {
            let run = numlist::skip_plain_floats(self.text, self.pos, &sep);
            self.pos = run.pos;
            if run.closed {
                self.depth -= 1;
                return Some(Skipped::Numbers {
                    len: run.len,
                    first_nonfinite: None,
                });
            }
            len = run.len;
        }
        self.skip_elements(len)
    }

    /// For the tests: [`Parser::skip_list`] at the current position (a `[`), or with
    /// `reference` its careful loop alone (the algorithm before the fast path), with the
    /// position and nesting depth it left.
    #[doc(hidden)]
    pub fn skip_list_outcome(&mut self, reference: bool) -> (Option<Skipped>, usize, usize) {
        let skipped = if !reference {
            self.skip_list()
        } else {
            match self.open_list() {
                Err(done) => done,
                Ok(()) => self.skip_elements(0),
            }
        };
        (skipped, self.pos, self.depth)
    }

    /// Past a list's `[` and the white space after it, one level deeper; `Err` with
    /// [`Parser::skip_list`]'s result when that is all: too deep, or an empty list.
    fn open_list(&mut self) -> Result<(), Option<Skipped>> {
        if !self.deeper() {
            return Err(None);
        }
        self.pos += 1; // '['
        self.skip_ws();
        if self.eat(b']') {
            self.depth -= 1;
            return Err(Some(Skipped::Numbers {
                len: 0,
                first_nonfinite: None,
            }));
        }
        Ok(())
    }

    /// [`Parser::skip_list`]'s careful loop, at an element's start with `len` plain
    /// finite numbers (and their commas) passed: the rest of the list, and its `]`.
    fn skip_elements(&mut self, mut len: usize) -> Option<Skipped> {
        let mut numbers = true;
        let mut first_nonfinite = None;
        loop {
            self.skip_ws();
            // The common element, a plain finite number, takes the short way.
            if matches!(self.peek(), Some(b'-' | b'0'..=b'9')) {
                let token = self.scan_number().ok()?;
                if token.neg_infinity || token.may_overflow {
                    self.odd_number(&token, len, &mut first_nonfinite, &mut numbers)?;
                }
            } else {
                self.odd_element(len, &mut first_nonfinite, &mut numbers)?;
            }
            len += 1;
            if !self.eat(b',') {
                self.skip_ws();
                if self.eat(b']') {
                    break;
                }
                if !self.eat(b',') {
                    return None;
                }
            }
        }
        self.depth -= 1;
        Some(if numbers {
            Skipped::Numbers {
                len,
                first_nonfinite,
            }
        } else {
            Skipped::Other
        })
    }

    /// [`Parser::skip_list`]: a number token that may not be finite (`-Infinity`, an
    /// exponent, a long integer part), as `Value::as_f64` of the parsed element sees it.
    #[cold]
    fn odd_number(
        &self,
        token: &NumberToken,
        index: usize,
        first_nonfinite: &mut Option<(usize, f64)>,
        numbers: &mut bool,
    ) -> Option<()> {
        let value = if token.neg_infinity {
            f64::NEG_INFINITY
        } else {
            match self.float_of(token) {
                Some(f) => f,
                // `value()` refuses such a float; an int becomes a BigInt that is no
                // number to `as_f64`. (Neither can happen.)
                None if token.float => return None,
                None => {
                    *numbers = false;
                    return Some(());
                }
            }
        };
        if !value.is_finite() && first_nonfinite.is_none() {
            *first_nonfinite = Some((index, value));
        }
        Some(())
    }

    /// [`Parser::skip_list`]: an element that is not a number token: `NaN`, `Infinity`,
    /// or any other value (then the list is not one of numbers).
    #[cold]
    fn odd_element(
        &mut self,
        index: usize,
        first_nonfinite: &mut Option<(usize, f64)>,
        numbers: &mut bool,
    ) -> Option<()> {
        let value = match self.peek() {
            Some(b'N') => self.eat_word(b"NaN").then_some(f64::NAN)?,
            Some(b'I') => self.eat_word(b"Infinity").then_some(f64::INFINITY)?,
            _ => {
                *numbers = false;
                return self.skip_any().then_some(());
            }
        };
        if first_nonfinite.is_none() {
            *first_nonfinite = Some((index, value));
        }
        Some(())
    }

    fn keyword(&mut self, word: &[u8], value: Value) -> Result<Value, SyntaxError> {
        if self.eat_word(word) {
            Ok(value)
        } else {
            Err(self.error("invalid literal, expected a value"))
        }
    }

    /// Reads the list at the current position into the `f64`s [`Value::as_f64`] gives its
    /// elements, when every element is a number (int, float, `NaN`, `±Infinity`); `None`
    /// otherwise, with the position and depth restored, so that the caller reads it with
    /// [`Parser::value`] (which then reports any error where the full parse does). The
    /// validator's loss rules need every value; this spares a `Value` per element.
    pub fn number_list(&mut self) -> Option<Vec<f64>> {
        let (start, depth) = (self.pos, self.depth);
        let out = self.try_number_list();
        if out.is_none() {
            self.pos = start;
            self.depth = depth;
        }
        out
    }

    fn try_number_list(&mut self) -> Option<Vec<f64>> {
        if self.peek() != Some(b'[') || !self.deeper() {
            return None;
        }
        let open = self.pos;
        self.pos += 1; // '['
        self.skip_ws();
        let mut out = Vec::with_capacity(100);
        if self.eat(b']') {
            self.depth -= 1;
            return Some(out);
        }
        // A loss curve as Python indents it: the plain floats of whole blocks read
        // straight from their checked text; the loop goes on at the first one not read.
        if let Some(sep) = numlist::Separator::after(&self.text[open + 1..self.pos]) {
            self.pos = numlist::read_plain_floats(self.text, self.pos, &sep, &mut out);
        }
        loop {
            self.skip_ws();
            let value = match self.peek() {
                Some(b'-' | b'0'..=b'9') => {
                    let token = self.scan_number().ok()?;
                    if token.neg_infinity {
                        f64::NEG_INFINITY
                    } else if token.float {
                        self.float_of(&token)?
                    } else {
                        // As `Value::Int(i).as_f64()`, or a BigInt's digits parsed.
                        match self.int_of(&token) {
                            Some(i) => i as f64,
                            None => self.float_of(&token)?,
                        }
                    }
                }
                Some(b'N') => self.eat_word(b"NaN").then_some(f64::NAN)?,
                Some(b'I') => self.eat_word(b"Infinity").then_some(f64::INFINITY)?,
                _ => return None,
            };
            out.push(value);
            self.skip_ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b']') {
                break;
            }
            return None;
        }
        self.depth -= 1;
        Some(out)
    }

    /// Consumes `word` if it is next (the literals `NaN`, `true`, …).
    fn eat_word(&mut self, word: &[u8]) -> bool {
        if self.text[self.pos..].starts_with(word) {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    /// One level deeper, at an opening bracket; `false` past [`MAX_DEPTH`].
    fn deeper(&mut self) -> bool {
        self.depth += 1;
        self.depth <= MAX_DEPTH
    }

    fn enter(&mut self) -> Result<(), SyntaxError> {
        if !self.deeper() {
            return Err(self.error(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn object(&mut self) -> Result<Value, SyntaxError> {
        let mut object = Object::with_capacity(8);
        self.object_with(|parser, key| {
            let value = parser.value()?;
            object.push_raw(key.into_key(), value);
            Ok(())
        })?;
        Ok(Value::Object(object))
    }

    /// Reads the object at the current position (its `{`) exactly as [`Parser::value`]
    /// does, but hands each key (decoded: one of the suite's field names, or borrowed
    /// from the text when it has no escapes), with the parser at the start of its value,
    /// to `field`, which must consume that value (with [`Parser::value`] or
    /// [`Parser::skip_value`]). Errors, depth limit and positions are those of
    /// [`Parser::value`]: it is the same code.
    pub fn object_with(
        &mut self,
        mut field: impl FnMut(&mut Self, FieldName<'a>) -> Result<(), SyntaxError>,
    ) -> Result<(), SyntaxError> {
        self.enter()?;
        self.pos += 1; // '{'
        self.skip_ws();
        if self.eat(b'}') {
            self.depth -= 1;
            return Ok(());
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.expected("a property name in double quotes"));
            }
            let key = self.field_name()?;
            self.skip_ws();
            if !self.eat(b':') {
                return Err(self.expected("':' after a property name"));
            }
            self.skip_ws();
            field(self, key)?;
            self.skip_ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b'}') {
                break;
            }
            return Err(self.expected("',' or '}' in an object"));
        }
        self.depth -= 1;
        Ok(())
    }

    fn list(&mut self) -> Result<Value, SyntaxError> {
        self.enter()?;
        self.pos += 1; // '['
        let mut items = Vec::new();
        self.skip_ws();
        if self.eat(b']') {
            self.depth -= 1;
            return Ok(Value::List(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value()?);
            self.skip_ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b']') {
                break;
            }
            return Err(self.expected("',' or ']' in a list"));
        }
        self.depth -= 1;
        Ok(Value::List(items))
    }

    fn expected(&self, what: &str) -> SyntaxError {
        match self.peek() {
            None => self.error(format!("unexpected end of data, expected {what}")),
            Some(b) => self.error(format!("unexpected {}, expected {what}", show_byte(b))),
        }
    }

    /// Walks the number token at the current position (`-` or a digit): the one lexer
    /// of numbers, shared by [`Parser::value`] and [`Parser::skip_value`]. `Err(())`
    /// leaves the position where `value()` reports "expected a digit after '-'".
    #[inline(always)]
    fn scan_number(&mut self) -> Result<NumberToken, ()> {
        let text = self.text;
        let start = self.pos;
        let mut i = start;
        if text.get(i) == Some(&b'-') {
            i += 1;
            if text[i..].starts_with(b"Infinity") {
                self.pos = i + b"Infinity".len();
                return Ok(NumberToken {
                    start,
                    neg_infinity: true,
                    float: true,
                    may_overflow: false,
                });
            }
        }
        let int_start = i;
        match text.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits_end(text, i + 1),
            _ => {
                self.pos = i;
                return Err(());
            }
        }
        let int_digits = i - int_start;
        let mut float = false;
        // A bound on the decimal exponent of the value: it is below 10^magnitude.
        let mut magnitude = int_digits as i64;
        if text.get(i) == Some(&b'.') && matches!(text.get(i + 1), Some(b'0'..=b'9')) {
            float = true;
            i = digits_end(text, i + 2);
        }
        if matches!(text.get(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            let negative = text.get(j) == Some(&b'-');
            if matches!(text.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            // Python's scanner stops before a bare 'e'; what follows is then an error.
            if matches!(text.get(j), Some(b'0'..=b'9')) {
                float = true;
                let end = digits_end(text, j + 1);
                // Saturated: only whether it passes a few hundred matters.
                let exp = text[j..end]
                    .iter()
                    .fold(0i64, |e, d| (e * 10 + i64::from(d - b'0')).min(1 << 40));
                magnitude += if negative { -exp } else { exp };
                i = end;
            }
        }
        self.pos = i;
        Ok(NumberToken {
            start,
            neg_infinity: false,
            float,
            // The value is below 10^magnitude: up to 10^308 it is finite as an f64
            // (whose largest is 1.8e308), whatever its digits; past that it may round
            // to infinity, which only the exact conversion tells. Repr'd losses
            // (`3.2247762793424783e-10`) so never need converting to be skipped.
            // A very long integer part goes the exact way too, as it always did (an
            // integer past i64 is no f64 to `Value::as_f64`).
            may_overflow: magnitude > 308 || int_digits > 300,
        })
    }

    /// The literal of a token [`Parser::scan_number`] just walked (ASCII by construction).
    fn literal(&self, token: &NumberToken) -> &'a str {
        std::str::from_utf8(&self.text[token.start..self.pos]).unwrap_or("0")
    }

    /// The float of a token [`Parser::scan_number`] just walked: correctly rounded, as
    /// Python's `float()` and Rust's `str::parse` give it (literals beyond the range
    /// become ±inf), read from the bytes.
    fn float_of(&self, token: &NumberToken) -> Option<f64> {
        fast_float2::parse::<f64, _>(&self.text[token.start..self.pos]).ok()
    }

    /// The int of an integer token [`Parser::scan_number`] just walked, when it fits
    /// `i64` (as `str::parse::<i64>` gives it).
    fn int_of(&self, token: &NumberToken) -> Option<i64> {
        let bytes = &self.text[token.start..self.pos];
        let (negative, digits) = match bytes.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, bytes),
        };
        // Accumulated below zero: i64's range reaches one further there.
        let mut value: i64 = 0;
        for &d in digits {
            value = value.checked_mul(10)?.checked_sub(i64::from(d - b'0'))?;
        }
        if negative {
            Some(value)
        } else {
            value.checked_neg()
        }
    }

    fn number(&mut self) -> Result<Value, SyntaxError> {
        let Ok(token) = self.scan_number() else {
            return Err(self.error("invalid number: expected a digit after '-'"));
        };
        if token.neg_infinity {
            return Ok(Value::Float(f64::NEG_INFINITY));
        }
        let start = token.start;
        if token.float {
            self.float_of(&token)
                .map(Value::Float)
                .ok_or_else(|| SyntaxError::at(self.text, start, "invalid number"))
        } else {
            Ok(match self.int_of(&token) {
                Some(i) => Value::Int(i),
                None => Value::BigInt(self.literal(&token).into()),
            })
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        self.str_cow().map(Cow::into_owned)
    }

    /// The property name at the current position (its opening quote): one of the suite's
    /// field names ([`known_field`]), found without decoding or checking the text again
    /// (the names are ASCII without escapes), else as [`Parser::str_cow`] reads it.
    fn field_name(&mut self) -> Result<FieldName<'a>, SyntaxError> {
        let open = self.pos;
        if !self.walk_string(None)?
            && let Some(name) = known_field(&self.text[open + 1..self.pos - 1])
        {
            return Ok(FieldName::Known(name));
        }
        self.pos = open;
        self.str_cow().map(FieldName::Text)
    }

    /// The string at the current position (its opening quote): borrowed from the text
    /// when it has no escapes, which is the common case. Its errors are those of
    /// [`Parser::value`] on a string, which reads it with this.
    pub fn str_cow(&mut self) -> Result<Cow<'a, str>, SyntaxError> {
        let open = self.pos;
        let not_utf8 = |text| SyntaxError::at(text, open, "string is not valid UTF-8");
        if !self.walk_string(None)? {
            let raw = &self.text[open + 1..self.pos - 1];
            return std::str::from_utf8(raw)
                .map(Cow::Borrowed)
                .map_err(|_| not_utf8(self.text));
        }
        // Escapes: walk it again, decoding (the same checks pass again).
        self.pos = open;
        let mut out = Vec::new();
        self.walk_string(Some(&mut out))?;
        String::from_utf8(out)
            .map(Cow::Owned)
            .map_err(|_| not_utf8(self.text))
    }

    /// Walks the string whose opening quote is at the current position to just past its
    /// closing quote, with the checks of Python's scanner (control characters, escapes),
    /// appending its decoded bytes to `out` when given; says whether it met an escape.
    /// The one lexer of strings, shared by [`Parser::value`] and [`Parser::skip_value`];
    /// UTF-8 validity is the caller's.
    fn walk_string(&mut self, mut out: Option<&mut Vec<u8>>) -> Result<bool, SyntaxError> {
        let mut escaped = false;
        let open = self.pos;
        self.pos += 1; // '"'
        let mut run_start = self.pos;
        loop {
            let Some(stop) = string_stop(self.text, self.pos) else {
                return Err(SyntaxError::at(
                    self.text,
                    open,
                    "unterminated string starting here",
                ));
            };
            self.pos = stop;
            if let Some(out) = out.as_deref_mut() {
                out.extend_from_slice(&self.text[run_start..self.pos]);
            }
            match self.text[self.pos] {
                b'"' => {
                    self.pos += 1;
                    return Ok(escaped);
                }
                b'\\' => {
                    self.pos += 1;
                    escaped = true;
                    let ch = self.escape()?;
                    if let Some(out) = out.as_deref_mut() {
                        let mut tmp = [0u8; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
                    }
                    run_start = self.pos;
                }
                b => {
                    return Err(self.error(format!(
                        "invalid control character {} in a string",
                        show_byte(b)
                    )));
                }
            }
        }
    }

    /// Reads one escape (after its backslash) and returns the character it stands for.
    fn escape(&mut self) -> Result<char, SyntaxError> {
        let Some(&b) = self.text.get(self.pos) else {
            return Err(self.error("unterminated escape sequence"));
        };
        self.pos += 1;
        let simple = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let first = self.hex4()?;
                let code = if (0xd800..0xdc00).contains(&first)
                    && self.text[self.pos..].starts_with(b"\\u")
                {
                    let save = self.pos;
                    self.pos += 2;
                    let second = self.hex4()?;
                    if (0xdc00..0xe000).contains(&second) {
                        0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00)
                    } else {
                        self.pos = save;
                        first
                    }
                } else {
                    first
                };
                // A lone surrogate (legal in Python's str) has no UTF-8 form: U+FFFD stands in.
                return Ok(char::from_u32(code).unwrap_or('\u{fffd}'));
            }
            _ => {
                self.pos -= 2;
                return Err(self.error("invalid \\escape"));
            }
        };
        Ok(char::from(simple))
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let digits = self.text.get(self.pos..self.pos + 4);
        let parsed = digits
            .filter(|d| d.iter().all(u8::is_ascii_hexdigit))
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|s| u32::from_str_radix(s, 16).ok());
        match parsed {
            Some(v) => {
                self.pos += 4;
                Ok(v)
            }
            None => Err(self.error("invalid \\uXXXX escape")),
        }
    }
}

/// The first byte at or after `i` that ends a run of plain string characters: `"`, `\`
/// or a control character.
#[inline(always)]
fn string_stop(text: &[u8], mut i: usize) -> Option<usize> {
    // Eight bytes at a time. `v - 0x01…01 & !v & 0x80…80` flags the bytes of `v` that are
    // zero (or, with `0x20…20`, below 0x20); a borrow can only flag bytes above a flagged
    // one, and only the lowest flagged byte is used.
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    while let Some(chunk) = text.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let stop = zero(x ^ (ONES * u64::from(b'"')))
            | zero(x ^ (ONES * u64::from(b'\\')))
            | (x.wrapping_sub(ONES * 0x20) & !x & HIGHS);
        if stop != 0 {
            return Some(i + stop.trailing_zeros() as usize / 8);
        }
        i += 8;
    }
    let tail = text.get(i..)?;
    tail.iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|p| i + p)
}

/// The end of the run of ASCII digits starting at `i`.
#[inline(always)]
fn digits_end(text: &[u8], mut i: usize) -> usize {
    // Eight bytes at a time: a byte is a digit when its high nibble is 3 and stays 3
    // after adding 6. A carry out of a non-digit byte only disturbs the bytes above it,
    // and only the lowest non-digit byte is used.
    const HIGH: u64 = 0xf0f0_f0f0_f0f0_f0f0;
    const THREES: u64 = 0x3030_3030_3030_3030;
    const SIXES: u64 = 0x0606_0606_0606_0606;
    while let Some(chunk) = text.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let not_digit = ((x & HIGH) ^ THREES) | ((x.wrapping_add(SIXES) & HIGH) ^ THREES);
        if not_digit != 0 {
            return i + not_digit.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    while matches!(text.get(i), Some(b'0'..=b'9')) {
        i += 1;
    }
    i
}

fn show_byte(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_tokens_are_floats() {
        let v = parse(b"[NaN, Infinity, -Infinity, 1, 1.0, 1e5, -0]").unwrap();
        let items = v.as_list().unwrap();
        assert!(items[0].as_f64().unwrap().is_nan());
        assert_eq!(items[1], Value::Float(f64::INFINITY));
        assert_eq!(items[2], Value::Float(f64::NEG_INFINITY));
        assert_eq!(items[3], Value::Int(1));
        assert_eq!(items[4], Value::Float(1.0));
        assert_eq!(items[5], Value::Float(100000.0));
        assert_eq!(items[6], Value::Int(0));
    }

    #[test]
    fn rejects_what_python_rejects() {
        for bad in [
            &b"01"[..],
            b"+1",
            b".5",
            b"-NaN",
            b"nan",
            b"[1,]",
            b"{\"a\":1,}",
            b"{'a': 1}",
            b"\"a\tb\"",
            b"1.",
            b"[1 2]",
            b"",
        ] {
            assert!(
                parse(bad).is_err(),
                "accepted {:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn error_names_line_column_and_offset() {
        let err = parse(b"{\n    \"min\": 284.194.0893002195\n}").unwrap_err();
        assert_eq!(err.offset, 20);
        assert_eq!((err.line, err.column), (2, 19));
        assert!(err.message.contains("','"), "{}", err.message);
    }

    #[test]
    fn escapes_and_surrogates() {
        let v = parse(br#""a\"\\\/\n\u00e9\ud83d\ude00""#).unwrap();
        assert_eq!(v.as_str().unwrap(), "a\"\\/\n\u{e9}\u{1f600}");
        assert_eq!(to_python_json(&v), r#""a\"\\/\n\u00e9\ud83d\ude00""#);
    }

    #[test]
    fn word_at_a_time_scans_find_the_first_stop() {
        let naive_stop = |t: &[u8]| t.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
        let naive_digits = |t: &[u8]| {
            t.iter()
                .position(|b| !b.is_ascii_digit())
                .unwrap_or(t.len())
        };
        for len in 0..20 {
            for at in 0..len {
                for b in 0..=255u8 {
                    for fill in [b'a', b'7', 0xc3, b'~'] {
                        let mut text = vec![fill; len];
                        text[at] = b;
                        // A second odd byte above, to catch borrows carried upwards.
                        if at + 1 < len {
                            text[at + 1] = b.wrapping_sub(1);
                        }
                        assert_eq!(string_stop(&text, 0), naive_stop(&text), "{text:?}");
                        assert_eq!(digits_end(&text, 0), naive_digits(&text), "{text:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn known_field_names_are_found_and_others_are_not() {
        for name in [
            "avg",
            "batch_loss",
            "train_item",
            "use_linear_lr_decay",
            "lr",
            "vcd",
        ] {
            assert_eq!(known_field(name.as_bytes()), Some(name));
        }
        for other in [
            "",
            "av",
            "avgs",
            "Avg",
            "batch_losS",
            "x",
            "peak_device_byte",
        ] {
            assert_eq!(known_field(other.as_bytes()), None, "{other}");
        }
        // A known name written with an escape is the same key.
        let plain = parse(br#"{"avg": 1, "zzz": 2}"#).unwrap();
        let escaped = parse(br#"{"\u0061vg": 1, "zzz": 2}"#).unwrap();
        assert_eq!(plain, escaped);
        let mut names = Vec::new();
        let mut p = Parser::new(br#"{"avg": 1, "zzz": 2, "\u0061vg": 3}"#);
        p.object_with(|p, key| {
            names.push(key);
            p.value().map(|_| ())
        })
        .unwrap();
        assert_eq!(
            names,
            [
                FieldName::Known("avg"),
                FieldName::Text(Cow::Borrowed("zzz")),
                FieldName::Text(Cow::Owned("avg".to_owned()))
            ]
        );
    }

    #[test]
    fn big_ints_keep_their_digits() {
        let v = parse(b"123456789012345678901234567890").unwrap();
        assert_eq!(to_python_json(&v), "123456789012345678901234567890");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = "[".repeat(100_000);
        assert!(
            parse(text.as_bytes())
                .unwrap_err()
                .message
                .contains("nesting")
        );
    }

    #[test]
    fn dumps_like_python() {
        // Expected text produced by CPython 3.11:
        // json.dumps({"b": [1, 2.5, {}], "a": {"y": [], "x": float("nan")}, "c": 1e-05,
        //             "d": 1e16, "e": 123.0, "f": None, "g": True, "h": "é"},
        //            sort_keys=True, indent=4, separators=(',', ': '))
        let v = parse(
            br#"{"b": [1, 2.5, {}], "a": {"y": [], "x": NaN}, "c": 1e-05, "d": 1e16, "e": 123.0, "f": null, "g": true, "h": "\u00e9"}"#,
        )
        .unwrap();
        let expected = "{\n    \"a\": {\n        \"x\": NaN,\n        \"y\": []\n    },\n    \"b\": [\n        1,\n        2.5,\n        {}\n    ],\n    \"c\": 1e-05,\n    \"d\": 1e+16,\n    \"e\": 123.0,\n    \"f\": null,\n    \"g\": true,\n    \"h\": \"\\u00e9\"\n}";
        assert_eq!(to_python_json(&v), expected);
    }
}
