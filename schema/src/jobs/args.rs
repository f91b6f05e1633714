//! A job's arguments against what a report records: argparse destinations, and the
//! comparison of a jobs-file value with the value the script stored.

use crate::pyrepr::{py_str, py_str_bytes};
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
    RecordedMatcher::new(flag, job_value).matches(recorded)
}

/// [`recorded_matches`] for one flag and jobs-file value, prepared once for the many
/// entries it is compared with: the shell words of the value, their numbers and their
/// placeholder patterns are worked out ahead (five allocations per comparison before).
#[derive(Debug, Clone)]
pub struct RecordedMatcher(Kind);

#[derive(Debug, Clone)]
enum Kind {
    /// A list (a sweep): one of its elements.
    Any(Vec<RecordedMatcher>),
    /// A bare flag (`""`): the boolean recorded.
    Bare(bool),
    /// Anything else: by value when both are numbers (`number`: the value, if it is one),
    /// else by the shell words of its Python `str()`, one by one against a list, joined
    /// against anything else.
    Words {
        number: Option<Value>,
        words: Vec<Word>,
        joined: Word,
    },
}

impl RecordedMatcher {
    /// The matcher of `job_value`, given for `flag` in a jobs file.
    pub fn new(flag: &str, job_value: &Value) -> Self {
        RecordedMatcher(match job_value {
            Value::List(items) => Kind::Any(items.iter().map(|i| Self::new(flag, i)).collect()),
            Value::Str(s) if s.is_empty() => Kind::Bare(flag != "--no-cuda"),
            other => {
                let words = shell_words(&py_str(other));
                Kind::Words {
                    number: is_number(other).then(|| other.clone()),
                    joined: Word::new(words.join(" ")),
                    words: words.into_iter().map(Word::new).collect(),
                }
            }
        })
    }

    /// Whether `recorded` agrees with the value ([`recorded_matches`]).
    pub fn matches(&self, recorded: &Value) -> bool {
        match &self.0 {
            Kind::Any(items) => items.iter().any(|m| m.matches(recorded)),
            Kind::Bare(set) => *recorded == Value::Bool(*set),
            Kind::Words {
                number: Some(number),
                ..
            } if is_number(recorded) => same_number(number, recorded),
            Kind::Words { words, joined, .. } => match recorded {
                Value::List(items) => {
                    words.len() == items.len() && words.iter().zip(items).all(|(w, r)| w.matches(r))
                }
                _ => joined.matches(recorded),
            },
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

/// One word of the command line, matched against a recorded value by number when both
/// are numbers, else by text with `$VAR` placeholders as wildcards.
#[derive(Debug, Clone)]
struct Word {
    text: String,
    number: Option<f64>,
    pattern: Vec<Piece>,
}

impl Word {
    fn new(text: String) -> Self {
        Word {
            number: text.parse().ok(),
            pattern: placeholder_pattern(&text),
            text,
        }
    }

    fn matches(&self, recorded: &Value) -> bool {
        if is_number(recorded)
            && let Some(x) = self.number
            && recorded.as_f64() == Some(x)
        {
            return true;
        }
        let mut buffer = String::new();
        glob_match(
            &self.text,
            &self.pattern,
            py_str_bytes(recorded, &mut buffer),
        )
    }
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

/// A pattern piece: literal bytes of the word (where they are in it), or a placeholder
/// that matches any text.
#[derive(Debug, Clone)]
enum Piece {
    Literal(std::ops::Range<usize>),
    Any,
}

/// Cuts `$NAME` and `${NAME}` out of `text` as wildcards.
fn placeholder_pattern(text: &str) -> Vec<Piece> {
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
                pieces.push(Piece::Literal(start..i));
                pieces.push(Piece::Any);
                start = end;
                i = end;
            }
            None => i += 1,
        }
    }
    pieces.push(Piece::Literal(start..bytes.len()));
    pieces
}

/// Whether `text` matches `pattern`, whose literals are parts of `word`.
fn glob_match(word: &str, pattern: &[Piece], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((Piece::Literal(at), rest)) => {
            let lit = &word.as_bytes()[at.clone()];
            text.starts_with(lit) && glob_match(word, rest, &text[lit.len()..])
        }
        Some((Piece::Any, rest)) => {
            (0..=text.len()).any(|skip| glob_match(word, rest, &text[skip..]))
        }
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
        // Several words against one recorded string: joined, as the shell would pass them.
        assert!(recorded_matches("--sizes", &s("256  128"), &s("256 128")));
        assert!(!recorded_matches("--sizes", &s("256 128"), &s("256")));
        // One matcher, many entries: the same answers as fresh ones.
        let matcher = RecordedMatcher::new("--sizes", &s("256 $N"));
        for (recorded, expected) in [(s("256 64"), true), (s("128 64"), false), (s("256 "), true)] {
            assert_eq!(matcher.matches(&recorded), expected, "{recorded:?}");
            assert_eq!(
                recorded_matches("--sizes", &s("256 $N"), &recorded),
                expected
            );
        }
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
