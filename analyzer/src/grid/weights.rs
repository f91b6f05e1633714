//! Bench weights for the grid's overall figure (`--weights FILE`).
//!
//! Two formats, chosen by the file's extension:
//!
//! - `.toml`: a `[weights]` table of `bench = number` lines (keys bare or in double
//!   quotes; `#` comments). Only this subset of TOML is read, by hand, so that the
//!   analyzer needs no TOML parser; anything else is an error naming the line.
//! - `.csv`: `bench,weight` lines, with an optional `bench,weight` header; blank lines
//!   and lines starting with `#` are skipped.
//!
//! Every weight must be a finite number above zero: a zero weight would hide a bench
//! the suite requires, which is what leaving it out of the jobs file is for. Benches
//! the file does not name weigh 1.

use std::collections::BTreeMap;
use std::path::Path;

/// Why a weights file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum WeightsError {
    /// The file could not be read.
    #[error("{file}: cannot read the weights file: {source}")]
    Io {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// The extension is neither `.toml` nor `.csv`.
    #[error(
        "{file}: a weights file must be .toml (`[weights]` then `bench = 2.0`) or .csv (`bench,weight`)"
    )]
    Format {
        /// The file.
        file: String,
    },
    /// A line could not be read.
    #[error("{file}: line {line}: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A weight is zero, negative or not a number.
    #[error(
        "{file}: line {line}: bench `{bench}`: the weight must be a finite number above 0, found {value}"
    )]
    Invalid {
        /// The file.
        file: String,
        /// 1-based line (0 for weights given in code).
        line: usize,
        /// The bench.
        bench: String,
        /// The value found.
        value: f64,
    },
    /// A bench is named twice.
    #[error("{file}: line {line}: bench `{bench}` already has a weight (line {first})")]
    Duplicate {
        /// The file.
        file: String,
        /// 1-based line of the second one.
        line: usize,
        /// Line of the first one.
        first: usize,
        /// The bench.
        bench: String,
    },
}

mlbench_schema::classify_all!(Input: WeightsError);

/// Weights of benches in the overall figure; a bench not named weighs 1.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Weights {
    weights: BTreeMap<String, f64>,
    source: String,
}

impl Weights {
    /// Weights given in code (`source` names them in messages).
    pub fn new(
        source: &str,
        weights: impl IntoIterator<Item = (String, f64)>,
    ) -> Result<Weights, WeightsError> {
        let mut out = Weights {
            weights: BTreeMap::new(),
            source: source.to_owned(),
        };
        for (bench, value) in weights {
            out.insert(0, bench, value, &mut BTreeMap::new())?;
        }
        Ok(out)
    }

    /// Reads a `.toml` or `.csv` weights file.
    pub fn load(path: &Path) -> Result<Weights, WeightsError> {
        let file = path.display().to_string();
        let text = mlbench_schema::read_buffer::read_regular_text(
            path,
            mlbench_schema::read_buffer::Links::Follow,
        )
        .map_err(|source| WeightsError::Io {
            file: file.clone(),
            source,
        })?;
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("toml") => Weights::from_toml(&file, &text),
            Some(e) if e.eq_ignore_ascii_case("csv") => Weights::from_csv(&file, &text),
            _ => Err(WeightsError::Format { file }),
        }
    }

    /// Parses the TOML form; `file` names it in messages.
    pub fn from_toml(file: &str, text: &str) -> Result<Weights, WeightsError> {
        let mut out = Weights {
            weights: BTreeMap::new(),
            source: file.to_owned(),
        };
        let mut lines_of = BTreeMap::new();
        let mut in_weights = false;
        let mut seen_table = false;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let syntax = |message: String| WeightsError::Syntax {
                file: file.to_owned(),
                line,
                message,
            };
            let content = strip_comment(raw).trim();
            if content.is_empty() {
                continue;
            }
            if let Some(header) = content.strip_prefix('[') {
                let name = header
                    .strip_suffix(']')
                    .ok_or_else(|| syntax(format!("unclosed table header `{content}`")))?
                    .trim();
                if name != "weights" {
                    return Err(syntax(format!(
                        "unknown table `[{name}]`: the file holds one `[weights]` table"
                    )));
                }
                if seen_table {
                    return Err(syntax("`[weights]` appears twice".to_owned()));
                }
                in_weights = true;
                seen_table = true;
                continue;
            }
            if !in_weights {
                return Err(syntax(format!(
                    "`{content}` before the `[weights]` table header"
                )));
            }
            let (key, value) = content
                .split_once('=')
                .ok_or_else(|| syntax(format!("expected `bench = weight`, found `{content}`")))?;
            let bench = toml_key(key.trim()).ok_or_else(|| {
                syntax(format!(
                    "`{}` is not a bench name (bare, or in double quotes)",
                    key.trim()
                ))
            })?;
            let value = toml_number(value.trim()).ok_or_else(|| {
                syntax(format!(
                    "bench `{bench}`: `{}` is not a number",
                    value.trim()
                ))
            })?;
            out.insert(line, bench, value, &mut lines_of)?;
        }
        if !seen_table {
            return Err(WeightsError::Syntax {
                file: file.to_owned(),
                line: 1,
                message: "no `[weights]` table".to_owned(),
            });
        }
        Ok(out)
    }

    /// Parses the CSV form; `file` names it in messages.
    pub fn from_csv(file: &str, text: &str) -> Result<Weights, WeightsError> {
        let mut out = Weights {
            weights: BTreeMap::new(),
            source: file.to_owned(),
        };
        let mut lines_of = BTreeMap::new();
        let header_line = first_content_line(text);
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let content = raw.trim();
            if content.is_empty() || content.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = content.split(',').map(|f| unquote(f.trim())).collect();
            let syntax = |message: String| WeightsError::Syntax {
                file: file.to_owned(),
                line,
                message,
            };
            let [bench, value] = fields[..] else {
                return Err(syntax(format!(
                    "expected two fields `bench,weight`, found {}",
                    fields.len()
                )));
            };
            if line == header_line
                && bench.eq_ignore_ascii_case("bench")
                && value.eq_ignore_ascii_case("weight")
            {
                continue;
            }
            if bench.is_empty() {
                return Err(syntax("empty bench name".to_owned()));
            }
            let value: f64 = value
                .parse()
                .map_err(|_| syntax(format!("bench `{bench}`: `{value}` is not a number")))?;
            out.insert(line, bench.to_owned(), value, &mut lines_of)?;
        }
        Ok(out)
    }

    fn insert(
        &mut self,
        line: usize,
        bench: String,
        value: f64,
        lines_of: &mut BTreeMap<String, usize>,
    ) -> Result<(), WeightsError> {
        if !(value.is_finite() && value > 0.0) {
            return Err(WeightsError::Invalid {
                file: self.source.clone(),
                line,
                bench,
                value,
            });
        }
        if self.weights.contains_key(&bench) {
            return Err(WeightsError::Duplicate {
                file: self.source.clone(),
                line,
                first: lines_of.get(&bench).copied().unwrap_or(0),
                bench,
            });
        }
        lines_of.insert(bench.clone(), line);
        self.weights.insert(bench, value);
        Ok(())
    }

    /// The weight of a bench: the file's, else 1.
    pub fn get(&self, bench: &str) -> f64 {
        self.weights.get(bench).copied().unwrap_or(1.0)
    }

    /// The benches the file names, with their weights.
    pub fn named(&self) -> &BTreeMap<String, f64> {
        &self.weights
    }

    /// Where the weights come from (the file name).
    pub fn source(&self) -> &str {
        &self.source
    }
}

fn first_content_line(text: &str) -> usize {
    text.lines()
        .position(|l| !l.trim().is_empty() && !l.trim().starts_with('#'))
        .map_or(0, |i| i + 1)
}

fn unquote(field: &str) -> &str {
    field
        .strip_prefix('"')
        .and_then(|f| f.strip_suffix('"'))
        .unwrap_or(field)
}

/// The line without its `#` comment (a `#` inside a quoted key is kept).
fn strip_comment(line: &str) -> &str {
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted => return &line[..i],
            _ => {}
        }
    }
    line
}

/// A bare key (`A-Za-z0-9_-`) or a basic string without escapes.
fn toml_key(key: &str) -> Option<String> {
    if let Some(inner) = key.strip_prefix('"').and_then(|k| k.strip_suffix('"')) {
        return (!inner.is_empty() && !inner.contains(['"', '\\'])).then(|| inner.to_owned());
    }
    (!key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
    .then(|| key.to_owned())
}

/// A TOML integer or float (underscores between digits allowed); `nan` and `inf` parse
/// so that they are refused as weights with the value named, not as a syntax error.
fn toml_number(value: &str) -> Option<f64> {
    let bytes = value.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            let digit =
                |j: Option<usize>| j.and_then(|j| bytes.get(j)).is_some_and(u8::is_ascii_digit);
            if !(digit(i.checked_sub(1)) && digit(Some(i + 1))) {
                return None;
            }
        }
    }
    let cleaned: String = value.chars().filter(|&c| c != '_').collect();
    match cleaned.trim_start_matches(['+', '-']) {
        "nan" | "inf" => cleaned.parse().ok(),
        s if s.starts_with(|c: char| c.is_ascii_digit()) => cleaned.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_weights() {
        let w = Weights::from_toml(
            "w.toml",
            "# comment\n[weights]\nconvnet = 2.0 # twice\n\"wlm\" = 3\ncart = 1_000\n",
        )
        .expect("valid");
        assert_eq!(w.get("convnet"), 2.0);
        assert_eq!(w.get("wlm"), 3.0);
        assert_eq!(w.get("cart"), 1000.0);
        assert_eq!(w.get("other"), 1.0);
    }

    #[test]
    fn toml_errors_name_the_line() {
        let err = |text: &str| {
            Weights::from_toml("w.toml", text)
                .expect_err("invalid")
                .to_string()
        };
        assert_eq!(
            err("[weights]\na = 0\n"),
            "w.toml: line 2: bench `a`: the weight must be a finite number above 0, found 0"
        );
        assert_eq!(
            err("[weights]\na = -1.5\n"),
            "w.toml: line 2: bench `a`: the weight must be a finite number above 0, found -1.5"
        );
        assert!(err("[weights]\na = nan\n").contains("found NaN"));
        assert!(err("[weights]\na = inf\n").contains("found inf"));
        assert_eq!(
            err("[weights]\na = x\n"),
            "w.toml: line 2: bench `a`: `x` is not a number"
        );
        assert_eq!(
            err("[weights]\na = 1\n\na = 2\n"),
            "w.toml: line 4: bench `a` already has a weight (line 2)"
        );
        assert!(err("a = 1\n").starts_with("w.toml: line 1: "));
        assert!(err("[other]\n").contains("unknown table `[other]`"));
        assert!(err("\n").contains("no `[weights]` table"));
        assert!(err("[weights]\na b = 1\n").contains("line 2"));
        assert!(err("[weights]\na = 1__0\n").contains("is not a number"));
    }

    #[test]
    fn csv_weights() {
        let w = Weights::from_csv("w.csv", "bench,weight\nconvnet, 2\n# c\n\"wlm\",0.5\n")
            .expect("valid");
        assert_eq!(w.get("convnet"), 2.0);
        assert_eq!(w.get("wlm"), 0.5);
        let w = Weights::from_csv("w.csv", "convnet,2\n").expect("no header");
        assert_eq!(w.get("convnet"), 2.0);
        let err = Weights::from_csv("w.csv", "bench,weight\nconvnet,2,3\n")
            .expect_err("three fields")
            .to_string();
        assert_eq!(
            err,
            "w.csv: line 2: expected two fields `bench,weight`, found 3"
        );
        let err = Weights::from_csv("w.csv", "a,1\nb,-2\n")
            .expect_err("negative")
            .to_string();
        assert!(err.starts_with("w.csv: line 2: bench `b`"), "{err}");
        let err = Weights::from_csv("w.csv", "a,1\nbench,weight\n")
            .expect_err("header only first")
            .to_string();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn weights_in_code_are_checked() {
        assert!(Weights::new("code", [("a".to_owned(), 0.0)]).is_err());
        assert!(Weights::new("code", [("a".to_owned(), 2.0)]).is_ok());
    }
}
