//! Python's `str()` and `repr()` of JSON values.
//!
//! The suite's `unique_id` hashes `str(value)` of every argument, so an exact
//! reimplementation needs Python's spelling: `True`, `None`, `21.8`, `1e-05`,
//! `[256, 256, 128, 64]`, `['a', "b'c"]`.

use crate::value::Value;
use std::fmt::Write as _;

/// `repr(float)` for a finite or non-finite float (`nan`, `inf`, `-inf` for the latter).
///
/// Python prints the shortest digits that round-trip, in positional notation when the
/// decimal exponent `e` satisfies -4 <= e < 16, else in exponent notation with a signed,
/// at-least-two-digit exponent.
pub fn py_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // Rust's `{:e}` gives the same shortest round-trip digits: "-1.2345e-7".
    let sci = format!("{f:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let ndigits = digits.len() as i32;
    let decpt = exponent + 1; // value = 0.DIGITS × 10^decpt
    let mut out = String::with_capacity(24);
    if negative {
        out.push('-');
    }
    if decpt <= -4 || decpt > 16 {
        out.push_str(&digits[..1]);
        if ndigits > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let sign = if exponent < 0 { '-' } else { '+' };
        let _ = write!(out, "e{sign}{:02}", exponent.abs());
    } else if decpt <= 0 {
        out.push_str("0.");
        for _ in 0..-decpt {
            out.push('0');
        }
        out.push_str(&digits);
    } else if decpt >= ndigits {
        out.push_str(&digits);
        for _ in 0..decpt - ndigits {
            out.push('0');
        }
        out.push_str(".0");
    } else {
        out.push_str(&digits[..decpt as usize]);
        out.push('.');
        out.push_str(&digits[decpt as usize..]);
    }
    out
}

/// Python's `str(value)` of the value `json.loads` would have produced.
pub fn py_str(value: &Value) -> String {
    match value {
        Value::Str(s) => s.clone(),
        other => py_repr(other),
    }
}

/// [`py_str`] of `value` as bytes, borrowed when it is a string and written into `buffer`
/// (cleared first) otherwise: for hashing many values without a string each.
pub fn py_str_bytes<'a>(value: &'a Value, buffer: &'a mut String) -> &'a [u8] {
    match value {
        Value::Str(s) => s.as_bytes(),
        other => {
            buffer.clear();
            write_repr(buffer, other);
            buffer.as_bytes()
        }
    }
}

/// Python's `repr(value)`.
pub fn py_repr(value: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, value);
    out
}

fn write_repr(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::BigInt(digits) => out.push_str(digits),
        Value::Float(f) => out.push_str(&py_float_repr(*f)),
        Value::Str(s) => write_str_repr(out, s),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
            }
            out.push(']');
        }
        Value::Object(object) => {
            out.push('{');
            for (i, (key, item)) in object.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str_repr(out, key);
                out.push_str(": ");
                write_repr(out, item);
            }
            out.push('}');
        }
    }
}

/// `repr(str)`: single quotes unless the text holds `'` and no `"`.
fn write_str_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            // Python also escapes non-printable non-ASCII (e.g. U+00A0 as \xa0); the C1
            // controls and the no-break space are the ones that occur in practice.
            c if (0x80..=0xa0).contains(&(c as u32)) || c == '\u{ad}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python's `str()` of the value: where a value is written for people.
impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&py_str(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyjson::parse;

    #[test]
    fn float_repr_matches_cpython() {
        // Left: value; right: CPython 3.11 repr().
        let cases = [
            (0.1, "0.1"),
            (21.8, "21.8"),
            (1.0, "1.0"),
            (-0.0, "-0.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (123456789.123, "123456789.123"),
            (6.9410552978515625, "6.9410552978515625"),
            (15.947496843418666, "15.947496843418666"),
            (100.0, "100.0"),
            (2e-4, "0.0002"),
        ];
        for (value, expected) in cases {
            assert_eq!(py_float_repr(value), expected, "{value:e}");
        }
        assert_eq!(py_float_repr(f64::NAN), "nan");
        assert_eq!(py_float_repr(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn str_of_values_matches_cpython() {
        // CPython: str([1, 'a', "b'c", 2.0, None, True, {'x': [1.5]}, 'é\n'])
        let v =
            parse(r#"[1, "a", "b'c", 2.0, null, true, {"x": [1.5]}, "é\n"]"#.as_bytes()).unwrap();
        assert_eq!(
            py_str(&v),
            r#"[1, 'a', "b'c", 2.0, None, True, {'x': [1.5]}, 'é\n']"#
        );
        assert_eq!(py_str(&Value::from("plain")), "plain");
        assert_eq!(py_str(&Value::Bool(false)), "False");
    }
}
