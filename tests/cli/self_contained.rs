//! The repository is self-contained: no code of it (tests, scripts, CI) reads the
//! material that sits beside a developer's checkout but not beside a user's clone. CI
//! also runs every test in an isolated copy with nothing beside it (`.ci/run`); this
//! test names the offending file and line at once, on any machine.

use std::path::{Path, PathBuf};

/// Paths that exist beside a developer's checkout only. Built from pieces, so that this
/// file does not match itself.
fn outside_paths() -> Vec<String> {
    let shared = ["..", "/shared"].concat();
    vec![
        format!("{shared}/"),
        ["shared", "/reference"].concat(),
        ["..", "/.library"].concat(),
        ["/work", "/main"].concat(),
    ]
}

/// Code, scripts and test data: what runs or is read when the tests run.
fn is_code(path: &Path) -> bool {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    matches!(ext, "rs" | "py" | "sh" | "toml" | "json") || name == "run"
}

fn code_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            code_files(&path, out);
        } else if kind.is_file() && is_code(&path) {
            out.push(path);
        }
    }
}

#[test]
fn no_code_reads_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    code_files(root, &mut files);
    assert!(
        files.len() > 100,
        "the walk found the code: {}",
        files.len()
    );
    let patterns = outside_paths();
    let mut offences = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            if let Some(p) = patterns.iter().find(|p| line.contains(p.as_str())) {
                let rel = file.strip_prefix(root).unwrap().display();
                offences.push(format!("{rel}:{}: `{p}`: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "code that reads outside the repository (keep a copy under tests/data with its \
         origin instead):\n{}",
        offences.join("\n")
    );
}

/// The guard itself: it finds a path that leaves the repository.
#[test]
fn the_guard_finds_an_outside_path() {
    let line = format!(
        "let p = root.join(\"{}reference/x.csv\");",
        outside_paths()[0]
    );
    assert!(outside_paths().iter().any(|p| line.contains(p.as_str())));
    assert!(is_code(Path::new("a/b.rs")) && is_code(Path::new(".ci/run")));
    assert!(!is_code(Path::new("docs/x.md")));
}
