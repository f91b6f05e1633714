//! Writing JSON as Python's `json.dumps(v, sort_keys=True, indent=4,
//! separators=(',', ': '))` does, byte for byte.

use crate::pyrepr::py_float_repr;
use crate::value::Value;
use std::fmt::Write as _;

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
