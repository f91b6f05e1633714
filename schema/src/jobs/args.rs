//! A job's arguments against what a report records: argparse destinations, and the
//! comparison of a jobs-file value with the value the script stored.

use crate::pyrepr::py_str;
use crate::value::Value;

/// The argparse destination of a long flag: `--batch-size` → `batch_size`,
/// `--upscale_factor` → `upscale_factor`, and `--no-cuda` → `cuda` (which it sets false).
/// Short flags (`-l`) and positionals (`$DATA_DIRECTORY/ImageNet/train`) give `None`:
/// their destinations are the scripts' own choice.
pub fn flag_dest(flag: &str) -> Option<String> {
    if flag == "--no-cuda" {
        return Some("cuda".into());
    }
    let name = flag.strip_prefix("--")?;
    if name.is_empty() || name.starts_with('-') {
        return None;
    }
    Some(name.replace('-', "_"))
}

/// Whether a report entry's recorded argument agrees with the jobs file's value of
/// `flag` (`recorded` is the entry's field named [`flag_dest`]`(flag)`).
///
/// - `""` is a bare flag: recorded `true` (`--no-cuda`: `false`);
/// - numbers compare by value (`21.80` = `21.8`, `5` = `5.0`);
/// - the shell's quoting is undone (`"\"PongNoFrameskip-v4\""` = `PongNoFrameskip-v4`)
///   and its words compare one by one with a recorded list (`"256 256 128 64"` =
///   `[256, 256, 128, 64]`);
/// - `$VAR` and `${VAR}`, which `/bin/sh` expands, match any text
///   (`"$DEVICE_TOTAL"` = `8`);
/// - otherwise the Python `str()` forms compare;
/// - a list (a sweep) agrees when one of its elements does.
pub fn recorded_matches(flag: &str, job_value: &Value, recorded: &Value) -> bool {
    match job_value {
        Value::List(items) => items
            .iter()
            .any(|item| recorded_matches(flag, item, recorded)),
        Value::Str(s) if s.is_empty() => *recorded == Value::Bool(flag != "--no-cuda"),
        Value::Int(_) | Value::BigInt(_) | Value::Float(_) if is_number(recorded) => {
            same_number(job_value, recorded)
        }
        _ => {
            let words = shell_words(&py_str(job_value));
            match recorded {
                Value::List(items) => {
                    words.len() == items.len()
                        && words.iter().zip(items).all(|(w, r)| word_matches(w, r))
                }
                _ => word_matches(&words.join(" "), recorded),
            }
        }
    }
}

pub(super) fn is_number(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::BigInt(_) | Value::Float(_))
}

pub(super) fn same_number(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::BigInt(x), Value::BigInt(y)) => x == y,
        _ => a.as_f64().is_some_and(|x| b.as_f64() == Some(x)),
    }
}

/// One word of the command line against a recorded value: by number when both are
/// numbers, else by text with `$VAR` placeholders as wildcards.
fn word_matches(word: &str, recorded: &Value) -> bool {
    if is_number(recorded)
        && let Ok(x) = word.parse::<f64>()
        && recorded.as_f64() == Some(x)
    {
        return true;
    }
    glob_match(&placeholder_pattern(word), py_str(recorded).as_bytes())
}

/// Splits a value as `/bin/sh` would: on unquoted white space, removing quotes and
/// backslash escapes. The one splitter of the workspace (jobs comparison, the runner's
/// argparse values).
pub fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"') | None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
                in_word = true;
            }
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// A pattern piece: literal bytes, or a placeholder that matches any text.
enum Piece<'a> {
    Literal(&'a [u8]),
    Any,
}

/// Cuts `$NAME` and `${NAME}` out of `text` as wildcards.
fn placeholder_pattern(text: &str) -> Vec<Piece<'_>> {
    let bytes = text.as_bytes();
    let mut pieces = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        let end = if bytes[i] != b'$' {
            None
        } else if bytes.get(i + 1) == Some(&b'{') {
            bytes[i..]
                .iter()
                .position(|&b| b == b'}')
                .map(|p| i + p + 1)
        } else {
            let name = bytes[i + 1..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .count();
            let starts_well = bytes
                .get(i + 1)
                .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_');
            starts_well.then_some(i + 1 + name)
        };
        match end {
            Some(end) => {
                pieces.push(Piece::Literal(&bytes[start..i]));
                pieces.push(Piece::Any);
                start = end;
                i = end;
            }
            None => i += 1,
        }
    }
    pieces.push(Piece::Literal(&bytes[start..]));
    pieces
}

fn glob_match(pattern: &[Piece<'_>], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((Piece::Literal(lit), rest)) => {
            text.starts_with(lit) && glob_match(rest, &text[lit.len()..])
        }
        Some((Piece::Any, rest)) => (0..=text.len()).any(|skip| glob_match(rest, &text[skip..])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_destinations() {
        assert_eq!(flag_dest("--batch-size").as_deref(), Some("batch_size"));
        assert_eq!(
            flag_dest("--upscale_factor").as_deref(),
            Some("upscale_factor")
        );
        assert_eq!(flag_dest("--no-cuda").as_deref(), Some("cuda"));
        assert_eq!(flag_dest("--no-save").as_deref(), Some("no_save"));
        assert_eq!(flag_dest("-l"), None);
        assert_eq!(flag_dest("--"), None);
        assert_eq!(flag_dest("$DATA_DIRECTORY/ImageNet/train"), None);
    }

    #[test]
    fn recorded_values() {
        let s = |t: &str| Value::from(t);
        assert!(recorded_matches("--cuda", &s(""), &Value::Bool(true)));
        assert!(!recorded_matches("--cuda", &s(""), &Value::Bool(false)));
        assert!(recorded_matches("--no-cuda", &s(""), &Value::Bool(false)));
        assert!(recorded_matches(
            "--target-bleu",
            &Value::Float(21.8),
            &Value::Float(21.8)
        ));
        assert!(recorded_matches(
            "--number",
            &Value::Int(5),
            &Value::Float(5.0)
        ));
        assert!(!recorded_matches(
            "--number",
            &Value::Int(5),
            &Value::Int(6)
        ));
        assert!(recorded_matches("--lr", &s("0.10"), &Value::Float(0.1)));
        let pong = s("\"PongNoFrameskip-v4\"");
        assert!(recorded_matches(
            "--env-name",
            &pong,
            &s("PongNoFrameskip-v4")
        ));
        let layers = Value::from(vec![256i64, 256, 128, 64]);
        assert!(recorded_matches("--layers", &s("256 256 128 64"), &layers));
        assert!(!recorded_matches("--layers", &s("256 256 128"), &layers));
        assert!(!recorded_matches(
            "--layers",
            &s("256 256 128 64"),
            &s("256")
        ));
        assert!(recorded_matches(
            "--ngpu",
            &s("$DEVICE_TOTAL"),
            &Value::Int(8)
        ));
        let data = s("/data/ImageNet/train");
        assert!(recorded_matches(
            "--data",
            &s("${DATA_DIRECTORY}/ImageNet/train"),
            &data
        ));
        assert!(recorded_matches(
            "--data",
            &s("$DATA_DIRECTORY/ImageNet/train"),
            &data
        ));
        assert!(!recorded_matches(
            "--data",
            &s("$DATA_DIRECTORY/coco"),
            &data
        ));
        assert!(recorded_matches("--model", &s("GRU"), &s("GRU")));
        assert!(!recorded_matches("--model", &s("GRU"), &s("LSTM")));
        let sweep = Value::from(vec!["LSTM", "GRU"]);
        assert!(recorded_matches("--model", &sweep, &s("GRU")));
        assert!(recorded_matches("--x", &Value::Bool(true), &s("True")));
    }

    #[test]
    fn shell_words_undo_quoting() {
        assert_eq!(shell_words(r#""a b" c\ d 'e"f'"#), ["a b", "c d", "e\"f"]);
        assert_eq!(shell_words("  x  "), ["x"]);
        assert_eq!(shell_words("\"\""), [""]);
    }
}
