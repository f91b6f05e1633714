//! Listing a submission's folder tree: the one walk of every command (discovery for
//! `report`, the folder intake for `validate`, `grid`, `pack` and `plot`, the digests of
//! a page's provenance).
//!
//! The walk is iterative, level by level (folders of one level listed in parallel), so no
//! tree can overflow a stack; it stops at [`MAX_DEPTH`] and says where. Symbolic links
//! are listed, never followed, so a link loop cannot hang it and no link leads out of the
//! submission. What is not a regular file (a FIFO, a socket, a device) is listed as such
//! and never opened. A folder below the root that cannot be listed is an entry of its
//! own, not an error of the whole walk.

use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Folders deeper than this below the root are not listed (a submission is 2 or 3
/// levels deep; 64 leaves room for any real layout, and stays far from any stack).
pub const MAX_DEPTH: usize = 64;

/// What a tree listing found at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeKind {
    /// A regular file.
    File,
    /// A symbolic link (to a file or a folder: links are never followed).
    Symlink,
    /// A FIFO, a socket or a device: never opened.
    Special(&'static str),
    /// Something whose type could not be read.
    Unknown,
    /// A folder that could not be listed (the reason).
    Unlisted(String),
    /// A folder at [`MAX_DEPTH`]: not listed.
    TooDeep,
}

/// One entry of a tree listing (every kind but a folder that was listed).
#[derive(Debug, Clone)]
pub struct TreeEntry {
    /// Where it is.
    pub path: PathBuf,
    /// Its path relative to the root, `/`-separated, for messages (a name that is not
    /// UTF-8 is shown with replacement characters; `path` is the real one).
    pub display: String,
    /// Whether its relative path is valid UTF-8 (`display` is then exact).
    pub utf8: bool,
    /// What it is.
    pub kind: TreeKind,
}

/// The root of a tree could not be listed.
#[derive(Debug, thiserror::Error)]
#[error("{path}: cannot list folder: {source}")]
pub struct ListError {
    /// The folder.
    pub path: PathBuf,
    /// The cause.
    pub source: std::io::Error,
}

/// Every entry under `root` but the folders listed, sorted by path (folder by folder, in
/// name order: the order of a depth-first walk).
pub fn list_tree(root: &Path) -> Result<Vec<TreeEntry>, ListError> {
    let (mut out, mut level) = list_dir(root, root).map_err(|source| ListError {
        path: root.to_path_buf(),
        source,
    })?;
    let mut depth = 1;
    while !level.is_empty() {
        if depth >= MAX_DEPTH {
            out.extend(
                level
                    .into_iter()
                    .map(|dir| entry(root, dir, TreeKind::TooDeep)),
            );
            break;
        }
        let listed: Vec<(Vec<TreeEntry>, Vec<PathBuf>)> = level
            .into_par_iter()
            .map(|dir| match list_dir(root, &dir) {
                Ok(found) => found,
                Err(e) => (
                    vec![entry(root, dir, TreeKind::Unlisted(e.to_string()))],
                    vec![],
                ),
            })
            .collect();
        level = Vec::new();
        for (entries, folders) in listed {
            out.extend(entries);
            level.extend(folders);
        }
        depth += 1;
    }
    // Path order is component by component: a depth-first walk's order.
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// The entries of one folder, and its subfolders to list next.
fn list_dir(root: &Path, dir: &Path) -> std::io::Result<(Vec<TreeEntry>, Vec<PathBuf>)> {
    let mut entries = Vec::new();
    let mut folders = Vec::new();
    for child in std::fs::read_dir(dir)? {
        let child = child?;
        let path = child.path();
        let kind = match child.file_type() {
            Ok(t) if t.is_dir() => {
                folders.push(path);
                continue;
            }
            Ok(t) if t.is_symlink() => TreeKind::Symlink,
            Ok(t) if t.is_file() => TreeKind::File,
            Ok(t) => TreeKind::Special(special_kind(&t)),
            Err(_) => TreeKind::Unknown,
        };
        entries.push(entry(root, path, kind));
    }
    Ok((entries, folders))
}

fn entry(root: &Path, path: PathBuf, kind: TreeKind) -> TreeEntry {
    let rel = path.strip_prefix(root).unwrap_or(&path);
    let utf8 = rel.to_str().is_some();
    let display = rel.to_string_lossy().replace('\\', "/");
    TreeEntry {
        path,
        display,
        utf8,
        kind,
    }
}

pub use mlbench_schema::read_buffer::{has_zip_extension, special_kind};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zip_is_named_dot_zip_in_any_case() {
        for (name, zip) in [
            ("sub.zip", true),
            ("dir/SUB.ZIP", true),
            ("sub.Zip", true),
            ("sub.zip.part", false),
            ("zip", false),
            ("sub", false),
        ] {
            assert_eq!(has_zip_extension(Path::new(name)), zip, "{name}");
        }
    }

    fn touch(root: &Path, rel: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }

    #[test]
    fn depth_first_order_and_kinds() {
        let dir = tempfile::tempdir().unwrap();
        for rel in ["b/2.json", "a/z.json", "a/b/c.json", "a.json", "a/a.json"] {
            touch(dir.path(), rel);
        }
        std::os::unix::fs::symlink("/etc", dir.path().join("a/link")).unwrap();
        let listed = list_tree(dir.path()).unwrap();
        let names: Vec<(&str, &TreeKind)> = listed
            .iter()
            .map(|e| (e.display.as_str(), &e.kind))
            .collect();
        assert_eq!(
            names,
            [
                ("a/a.json", &TreeKind::File),
                ("a/b/c.json", &TreeKind::File),
                ("a/link", &TreeKind::Symlink),
                ("a/z.json", &TreeKind::File),
                ("a.json", &TreeKind::File),
                ("b/2.json", &TreeKind::File),
            ]
        );
    }

    #[test]
    fn a_deep_tree_stops_at_the_limit_without_recursion() {
        let dir = tempfile::tempdir().unwrap();
        // 2,000 levels: the reproducer that overflowed the recursive walk's stack.
        let deep: PathBuf = (0..2000).map(|_| "d").collect();
        let mut at = dir.path().to_path_buf();
        for part in deep.components() {
            at.push(part);
            std::fs::create_dir(&at).unwrap();
        }
        std::fs::write(at.join("notes.txt"), "x").unwrap();
        touch(dir.path(), "output0/fast_0.json");
        let listed = list_tree(dir.path()).unwrap();
        assert_eq!(listed.len(), 2, "{listed:?}");
        let too_deep = &listed[0];
        assert_eq!(too_deep.kind, TreeKind::TooDeep);
        assert_eq!(too_deep.display.split('/').count(), MAX_DEPTH);
        assert_eq!(listed[1].display, "output0/fast_0.json");
    }

    #[test]
    fn a_fifo_is_listed_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fast_0.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("no mkfifo here: skipped");
            return;
        }
        let listed = list_tree(dir.path()).unwrap();
        assert_eq!(listed[0].kind, TreeKind::Special("a FIFO"));
    }

    #[test]
    fn names_that_are_not_utf8_keep_their_real_path() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let odd = std::ffi::OsStr::from_bytes(b"run\xff");
        std::fs::create_dir(dir.path().join(odd)).unwrap();
        std::fs::write(dir.path().join(odd).join("fast_0.json"), "[").unwrap();
        let listed = list_tree(dir.path()).unwrap();
        assert_eq!(listed[0].display, "run\u{fffd}/fast_0.json");
        assert!(!listed[0].utf8);
        assert_eq!(std::fs::read(&listed[0].path).unwrap(), b"[");
    }

    #[test]
    fn the_root_must_list() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let err = list_tree(&missing).unwrap_err();
        assert_eq!(err.path, missing);
    }
}
