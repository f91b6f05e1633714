//! Which script of the benchmark repository each bench runs.
//!
//! A report's `version` is the first 10 hex digits of the SHA-256 of the bench's *entry
//! script* (docs/suite.md#version), which the jobs file does not name: its `cmd` is a `run*.sh` in
//! the same folder. The project's map is `baselines/scripts.toml`, compiled in; a user's
//! file in the same layout overrides and extends it.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

const BUILTIN: &str = include_str!("../../baselines/scripts.toml");
const BUILTIN_NAME: &str = "baselines/scripts.toml";

/// Bench name → entry script path, relative to the repository root.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScriptMap {
    scripts: BTreeMap<String, String>,
}

/// A scripts file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScriptsError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The file's content is wrong.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong, with the line.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    scripts: BTreeMap<String, toml::Spanned<String>>,
}

impl ScriptMap {
    /// The project's map (`baselines/scripts.toml`): every bench of the shipped jobs files.
    pub fn builtin() -> ScriptMap {
        // The shipped file is valid (a test reads it); the default keeps this panic-free.
        Self::from_toml(BUILTIN_NAME, BUILTIN).unwrap_or_default()
    }

    /// Reads a scripts file: a `[scripts]` table of `bench = "path"` lines.
    pub fn load(path: &Path) -> Result<ScriptMap, ScriptsError> {
        let name = path.display().to_string();
        let text = crate::read_buffer::read_regular_text(path, crate::read_buffer::Links::Follow)
            .map_err(|source| ScriptsError::Io {
            path: name.clone(),
            source,
        })?;
        Self::from_toml(&name, &text)
    }

    /// Parses the TOML layout; `name` names the file in errors.
    pub fn from_toml(name: &str, text: &str) -> Result<ScriptMap, ScriptsError> {
        let invalid = |message: String| ScriptsError::Invalid {
            path: name.to_owned(),
            message,
        };
        // toml's messages carry the line and column already.
        let raw: RawFile =
            toml::from_str(text).map_err(|e| invalid(e.to_string().trim_end().to_owned()))?;
        let mut scripts = BTreeMap::new();
        for (bench, path) in raw.scripts {
            let before = text.get(..path.span().start).unwrap_or(text);
            let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
            let value = path.into_inner();
            if let Some(problem) = path_problem(&value) {
                return Err(invalid(format!(
                    "line {line}: bench `{bench}`: {problem}, found \"{value}\""
                )));
            }
            scripts.insert(bench, value);
        }
        Ok(ScriptMap { scripts })
    }

    /// The entry script of `bench`, relative to the repository root.
    pub fn script_for(&self, bench: &str) -> Option<&str> {
        self.scripts.get(bench).map(String::as_str)
    }

    /// This map laid over `base`: this map's benches replace or extend `base`'s.
    pub fn merged_over(self, base: ScriptMap) -> ScriptMap {
        let mut scripts = base.scripts;
        scripts.extend(self.scripts);
        ScriptMap { scripts }
    }

    /// Bench → script pairs, by bench name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.scripts.iter().map(|(b, s)| (b.as_str(), s.as_str()))
    }

    /// Number of benches mapped.
    pub fn len(&self) -> usize {
        self.scripts.len()
    }

    /// Whether no bench is mapped.
    pub fn is_empty(&self) -> bool {
        self.scripts.is_empty()
    }
}

/// Why a script path cannot name a file of the repository, if it cannot.
fn path_problem(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        Some("the script path is empty")
    } else if path.starts_with('/') || path.contains('\\') {
        Some("the script path must be relative to the repository root, with `/`")
    } else if path.split('/').any(|part| part == ".." || part.is_empty()) {
        Some("the script path must not hold `..` or empty parts")
    } else {
        None
    }
}

/// The folder of a job's `cmd`, without the leading `./`:
/// `./regression/polynome/pytorch/run.sh` → `regression/polynome/pytorch`. `None` when
/// the command has no folder.
pub fn script_dir(cmd: &str) -> Option<&str> {
    let path = cmd.trim();
    let path = path.strip_prefix("./").unwrap_or(path);
    path.rsplit_once('/').map(|(dir, _)| dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_map() {
        let map = ScriptMap::builtin();
        assert_eq!(map.len(), 20);
        assert_eq!(
            map.script_for("wlmfp16"),
            Some("natural_language_processing/word_language_model/pytorch/main_fp16_optimizer.py")
        );
        assert_eq!(map.script_for("nope"), None);
    }

    #[test]
    fn user_file_overrides_and_extends() {
        let user = ScriptMap::from_toml(
            "mine.toml",
            "[scripts]\ntoy_reg = \"regression/polynome/pytorch/main2.py\"\nnew = \"a/b.py\"\n",
        )
        .unwrap();
        let map = user.merged_over(ScriptMap::builtin());
        assert_eq!(
            map.script_for("toy_reg"),
            Some("regression/polynome/pytorch/main2.py")
        );
        assert_eq!(map.script_for("new"), Some("a/b.py"));
        assert_eq!(map.len(), 21);
    }

    #[test]
    fn errors_name_file_and_line() {
        let err = ScriptMap::from_toml("s.toml", "[scripts]\na = \"x.py\"\nb = \"/abs/y.py\"\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "s.toml: line 3: bench `b`: the script path must be relative to the repository root, with `/`, found \"/abs/y.py\""
        );
        let err = ScriptMap::from_toml("s.toml", "[scripts]\na = 3\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("s.toml: ") && err.contains("line 2"),
            "{err}"
        );
        let err = ScriptMap::from_toml("s.toml", "[script]\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn folders_of_commands() {
        assert_eq!(
            script_dir("./regression/polynome/pytorch/run.sh"),
            Some("regression/polynome/pytorch")
        );
        assert_eq!(script_dir("a/run.sh"), Some("a"));
        assert_eq!(script_dir("./run.sh"), None);
    }
}
