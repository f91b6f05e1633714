//! Reading and writing JSON the way Python's `json` module does.
//!
//! The reader accepts what `json.loads` accepts, including the non-standard tokens
//! `NaN`, `Infinity` and `-Infinity` that Python writes by default (`allow_nan=True`).
//! The writer reproduces `json.dumps(v, sort_keys=True, indent=4, separators=(',', ': '))`
//! byte for byte (with the default `ensure_ascii=True`).

use crate::pyrepr::py_float_repr;
use crate::value::{Object, Value};
use std::fmt::Write as _;

/// Where and why a JSON text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at byte {offset} (line {line}, column {column})")]
pub struct SyntaxError {
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
        SyntaxError {
            message: message.into(),
            offset,
            line,
            column,
        }
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
    pub fn skip_ws(&mut self) {
        while let Some(&b) = self.text.get(self.pos) {
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                self.pos += 1;
            } else {
                break;
            }
        }
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

    fn keyword(&mut self, word: &[u8], value: Value) -> Result<Value, SyntaxError> {
        if self.text[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("invalid literal, expected a value"))
        }
    }

    fn enter(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn object(&mut self) -> Result<Value, SyntaxError> {
        self.enter()?;
        self.pos += 1; // '{'
        let mut object = Object::with_capacity(8);
        self.skip_ws();
        if self.eat(b'}') {
            self.depth -= 1;
            return Ok(Value::Object(object));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.expected("a property name in double quotes"));
            }
            let key = self.string()?;
            self.skip_ws();
            if !self.eat(b':') {
                return Err(self.expected("':' after a property name"));
            }
            self.skip_ws();
            let value = self.value()?;
            object.push_raw(key, value);
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
        Ok(Value::Object(object))
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

    fn number(&mut self) -> Result<Value, SyntaxError> {
        let start = self.pos;
        if self.eat(b'-') && self.text[self.pos..].starts_with(b"Infinity") {
            self.pos += b"Infinity".len();
            return Ok(Value::Float(f64::NEG_INFINITY));
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("invalid number: expected a digit after '-'")),
        }
        let mut float = false;
        if self.peek() == Some(b'.') && matches!(self.text.get(self.pos + 1), Some(b'0'..=b'9')) {
            float = true;
            self.pos += 1;
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            let save = self.pos;
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if matches!(self.peek(), Some(b'0'..=b'9')) {
                float = true;
                self.digits();
            } else {
                // Python's scanner stops before a bare 'e'; what follows is then an error.
                self.pos = save;
            }
        }
        // The slice is ASCII by construction.
        let literal = std::str::from_utf8(&self.text[start..self.pos]).unwrap_or("0");
        if float {
            // Rust's parser is correctly rounded like Python's float(); out-of-range
            // literals become ±inf in both.
            literal
                .parse::<f64>()
                .map(Value::Float)
                .map_err(|_| SyntaxError::at(self.text, start, "invalid number"))
        } else {
            Ok(match literal.parse::<i64>() {
                Ok(i) => Value::Int(i),
                Err(_) => Value::BigInt(literal.into()),
            })
        }
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let open = self.pos;
        self.pos += 1; // '"'
        let mut out: Option<Vec<u8>> = None;
        let mut run_start = self.pos;
        loop {
            let Some(&b) = self.text.get(self.pos) else {
                return Err(SyntaxError::at(
                    self.text,
                    open,
                    "unterminated string starting here",
                ));
            };
            match b {
                b'"' => {
                    let run = &self.text[run_start..self.pos];
                    self.pos += 1;
                    let bytes = match out {
                        Some(mut buf) => {
                            buf.extend_from_slice(run);
                            buf
                        }
                        None => run.to_vec(),
                    };
                    return String::from_utf8(bytes).map_err(|_| {
                        SyntaxError::at(self.text, open, "string is not valid UTF-8")
                    });
                }
                b'\\' => {
                    let buf = out.get_or_insert_with(Vec::new);
                    buf.extend_from_slice(&self.text[run_start..self.pos]);
                    self.pos += 1;
                    self.escape(buf)?;
                    run_start = self.pos;
                }
                0x00..=0x1f => {
                    return Err(self.error(format!(
                        "invalid control character {} in a string",
                        show_byte(b)
                    )));
                }
                _ => self.pos += 1,
            }
        }
    }

    fn escape(&mut self, buf: &mut Vec<u8>) -> Result<(), SyntaxError> {
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
                let ch = char::from_u32(code).unwrap_or('\u{fffd}');
                let mut tmp = [0u8; 4];
                buf.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
                return Ok(());
            }
            _ => {
                self.pos -= 2;
                return Err(self.error("invalid \\escape"));
            }
        };
        buf.push(simple);
        Ok(())
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

fn show_byte(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

/// `json.dumps(value, sort_keys=True, indent=4, separators=(',', ': '))`.
pub fn to_python_json(value: &Value) -> String {
    let mut out = String::with_capacity(4096);
    write_value(&mut out, value, 0);
    out
}

fn write_indent(out: &mut String, level: usize) {
    out.push('\n');
    for _ in 0..level {
        out.push_str("    ");
    }
}

fn write_value(out: &mut String, value: &Value, level: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::BigInt(digits) => out.push_str(digits),
        Value::Float(f) => write_float(out, *f),
        Value::Str(s) => write_string(out, s),
        Value::List(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_indent(out, level + 1);
                write_value(out, item, level + 1);
            }
            write_indent(out, level);
            out.push(']');
        }
        Value::Object(object) => {
            if object.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, (key, item)) in object.sorted().into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_indent(out, level + 1);
                write_string(out, key);
                out.push_str(": ");
                write_value(out, item, level + 1);
            }
            write_indent(out, level);
            out.push('}');
        }
    }
}

/// Python's JSON float: `repr` for finite values, `NaN`/`Infinity`/`-Infinity` otherwise.
fn write_float(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f == f64::INFINITY {
        out.push_str("Infinity");
    } else if f == f64::NEG_INFINITY {
        out.push_str("-Infinity");
    } else {
        out.push_str(&py_float_repr(f));
    }
}

/// A JSON string with `ensure_ascii=True`: every byte outside space..'~' is escaped.
fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            ' '..='~' => out.push(ch),
            _ => {
                let mut units = [0u16; 2];
                for unit in ch.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
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
