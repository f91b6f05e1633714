//! Finding report files in folder trees and lists of files, and reading them in parallel.
//!
//! Each file belongs to a *run* (one repetition of the suite):
//! - a legacy stream `<suite>_<K>.json` belongs to the folder it is in (`output3`,
//!   `vendorA/output3`), as `run_10.sh` moved each run's output to its own folder;
//! - a per-test file belongs to its `R<run>` in the folder it is in.

use crate::layout::{Role, classify};
use mlbench_schema::reader::{FileName, ReadError};
use mlbench_schema::suite::{SuiteChoice, SuiteError, choose_suite};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Why no set of report files could be found.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// A path given does not exist.
    #[error("{0}: no such file or folder")]
    NotFound(PathBuf),
    /// Folders nested deeper than [`crate::tree::MAX_DEPTH`] (the search stops there).
    #[error("{}: folders nested deeper than {} levels: not searched", .0.display(), crate::tree::MAX_DEPTH)]
    TooDeep(PathBuf),
    /// A folder could not be listed.
    #[error("{path}: cannot list folder: {source}")]
    Io {
        /// The folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// No suite could be chosen ([`choose_suite`]): no reports, none of the suite asked
    /// for, or several suites.
    #[error("{searched}: {error}")]
    Suite {
        /// What was searched, for the message.
        searched: String,
        /// Why.
        error: SuiteError,
    },
}

// Report files that cannot be found or listed are input the user gave.
mlbench_schema::classify_all!(Input: DiscoverError);

/// A report file found, not yet read.
#[derive(Debug, Clone)]
pub struct FoundFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its path for messages: relative to the folder searched, `/`-separated.
    pub display: String,
    /// What its name says.
    pub name: FileName,
    /// The run it belongs to.
    pub run: String,
}

/// The report files of one suite found under the paths searched.
#[derive(Debug, Clone)]
pub struct Discovery {
    /// The suite chosen (given, or the only one found).
    pub suite: String,
    /// The files of that suite, sorted by run then display path.
    pub files: Vec<FoundFile>,
    /// Report files of other suites that were passed over.
    pub other_suites: Vec<String>,
    /// Files not named like reports (summary.txt, logs…), passed over.
    pub ignored: usize,
    /// Jobs files met (a `*.json` whose content is a jobs list), passed over too.
    pub jobs_files: Vec<String>,
    /// Where those jobs files are, in the same order.
    pub jobs_paths: Vec<PathBuf>,
    /// Machine descriptions met (`system.json`, `system.<host>.json`).
    pub system_paths: Vec<PathBuf>,
}

/// Whether `path` is a jobs file (by content; files over 4 MiB are not read).
fn is_jobs_file(path: &Path) -> bool {
    use mlbench_schema::read_buffer::{Links, read_regular};
    path.extension().is_some_and(|e| e == "json")
        && std::fs::metadata(path).is_ok_and(|m| m.len() <= 4 << 20)
        && read_regular(path, Links::Refuse).is_ok_and(|bytes| {
            mlbench_schema::pyjson::parse(&bytes)
                .is_ok_and(|v| mlbench_schema::jobs::looks_like_jobs(&v))
        })
}

/// Finds the report files under `paths` (folders searched recursively, files taken as
/// given). `suite` picks the jobs-file name; without it the only suite found is used
/// ([`choose_suite`], as every loader chooses).
pub fn discover(paths: &[PathBuf], suite: Option<&str>) -> Result<Discovery, DiscoverError> {
    let mut tree = Tree::default();
    for root in paths {
        let meta = std::fs::metadata(root).map_err(|_| DiscoverError::NotFound(root.clone()))?;
        if meta.is_dir() {
            let entries = list_tree(root).map_err(|e| DiscoverError::Io {
                path: e.path,
                source: e.source,
            })?;
            sort_tree(&entries, &mut tree)?;
        } else {
            let display = root.to_string_lossy().replace('\\', "/");
            // A file given alone belongs to the run of its folder's name.
            let parent = root
                .parent()
                .and_then(Path::file_name)
                .map_or_else(|| ".".to_owned(), |p| p.to_string_lossy().into_owned());
            let name = root.file_name().map(|n| n.to_string_lossy().into_owned());
            let as_in_tree = format!("{parent}/{}", name.unwrap_or_default());
            // Named on the command line, a link is followed to its file.
            let real = std::fs::canonicalize(root).unwrap_or_else(|_| root.clone());
            tree.sort_file(real, display, &as_in_tree);
        }
    }
    finish(tree, paths, suite)
}

/// [`discover`] of the one folder `root`, from its walk's `entries`
/// ([`crate::tree::list_tree`]): for a caller that has walked it already.
pub fn discover_entries(
    root: &Path,
    entries: &[TreeEntry],
    suite: Option<&str>,
) -> Result<Discovery, DiscoverError> {
    discover_walked(&[(root, entries)], suite)
}

/// [`discover`] of the folders `walked` (each root with its walk's entries), as one
/// search: for a caller that has walked them already.
pub fn discover_walked(
    walked: &[(&Path, &[TreeEntry])],
    suite: Option<&str>,
) -> Result<Discovery, DiscoverError> {
    let mut tree = Tree::default();
    for (_, entries) in walked {
        sort_tree(entries, &mut tree)?;
    }
    let roots: Vec<PathBuf> = walked.iter().map(|(root, _)| root.to_path_buf()).collect();
    finish(tree, &roots, suite)
}

/// The discovery of what a search met under `paths`: the suite chosen, its files sorted.
fn finish(tree: Tree, paths: &[PathBuf], suite: Option<&str>) -> Result<Discovery, DiscoverError> {
    let searched = paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let Tree {
        found,
        ignored,
        jobs_files,
        system_paths,
    } = tree;
    let SuiteChoice {
        suite: chosen,
        others: other_suites,
    } = choose_suite(found.iter().map(|f| f.name.suite()), suite)
        .map_err(|error| DiscoverError::Suite { searched, error })?;
    let mut files: Vec<FoundFile> = found
        .into_iter()
        .filter(|f| f.name.suite() == chosen)
        .collect();
    files.sort_by(|a, b| (&a.run, &a.display).cmp(&(&b.run, &b.display)));
    let (jobs_files, jobs_paths) = jobs_files.into_iter().unzip();
    Ok(Discovery {
        suite: chosen,
        files,
        other_suites,
        ignored,
        jobs_files,
        jobs_paths,
        system_paths,
    })
}

pub use crate::tree::{ListError, TreeEntry, TreeKind, list_tree};

/// Puts each entry of a folder's walk where its role says.
fn sort_tree(entries: &[TreeEntry], tree: &mut Tree) -> Result<(), DiscoverError> {
    // A folder not searched could hold reports: the search is refused, never partial.
    for entry in entries {
        match &entry.kind {
            TreeKind::TooDeep => return Err(DiscoverError::TooDeep(entry.path.clone())),
            TreeKind::Unlisted(reason) => {
                return Err(DiscoverError::Io {
                    path: entry.path.clone(),
                    source: std::io::Error::other(reason.clone()),
                });
            }
            _ => {}
        }
    }
    // Classified in parallel (a jobs file is told by its content), put in order. What is
    // not a regular file (a link, a FIFO) is classified by its name alone and never
    // opened here: named like a report, it is kept, and reading it says why it cannot be.
    let roles: Vec<Role> = entries
        .par_iter()
        .map(|entry| {
            let regular = entry.kind == TreeKind::File;
            classify(&entry.display, || regular && is_jobs_file(&entry.path))
        })
        .collect();
    for (entry, role) in entries.iter().zip(roles) {
        let regular = entry.kind == TreeKind::File;
        let (path, display) = (entry.path.clone(), entry.display.clone());
        match role {
            Role::Report { .. } => tree.put(path, display, &entry.display, role),
            _ if !regular => tree.ignored += 1,
            _ => tree.put(path, display, &entry.display, role),
        }
    }
    Ok(())
}

/// What a search met, file by file.
#[derive(Default)]
struct Tree {
    found: Vec<FoundFile>,
    ignored: usize,
    jobs_files: Vec<(String, PathBuf)>,
    system_paths: Vec<PathBuf>,
}

impl Tree {
    /// Puts the file at `path` (`tree_path` relative to the folder searched,
    /// `/`-separated) where the one classifier ([`crate::layout::classify`]) says: a
    /// report of some run, a jobs file, a machine description, another file of the pack
    /// (not worth a word), or passed over.
    fn sort_file(&mut self, path: PathBuf, display: String, tree_path: &str) {
        let role = classify(tree_path, || is_jobs_file(&path));
        self.put(path, display, tree_path, role);
    }

    /// Puts a file where its role, already found, says.
    fn put(&mut self, path: PathBuf, display: String, tree_path: &str, role: Role) {
        match role {
            Role::Report { name, run } => self.found.push(FoundFile {
                path,
                display,
                name,
                run,
            }),
            Role::Jobs => self.jobs_files.push((display, path)),
            Role::Pack if mlbench_schema::system::is_system_file(tree_path) => {
                self.system_paths.push(path);
            }
            Role::Pack | Role::Telemetry | Role::Profile => {}
            Role::Unknown => self.ignored += 1,
        }
    }
}

impl Discovery {
    /// Sets aside the report files that do not fit in `max_bytes` in all (in their order:
    /// runs, then paths; the ones after still taken while they fit), as the validator's
    /// intake sets them aside: each one set aside is an error that names it, never opened.
    pub fn set_aside_over(&mut self, max_bytes: u64) -> Vec<ReadError> {
        let mut total: u64 = 0;
        let mut set_aside = Vec::new();
        self.files.retain(|f| {
            let size = std::fs::symlink_metadata(&f.path).map_or(0, |m| m.len());
            if total.saturating_add(size) <= max_bytes {
                total += size;
                return true;
            }
            set_aside.push(ReadError {
                file: f.display.clone(),
                entry: None,
                location: mlbench_schema::reader::Location::File,
                message: format!(
                    "not read: {size} bytes with {total} read before it, over the {max_bytes} bytes read at most"
                ),
            });
            false
        });
        set_aside
    }
}

/// Reads every file found, in parallel, handing each one's content to `f` as it is read:
/// its bytes, or for a large file a stream of it (`read_buffer::with_content`), so that
/// `f` can reduce each entry as it is parsed and no report is ever held whole. A file
/// that cannot be read at all is `f`'s error.
pub fn map_contents<T, F>(discovery: Discovery, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(&FoundFile, Result<mlbench_schema::reader::Content<'_>, ReadError>) -> T + Sync + Send,
{
    use mlbench_schema::read_buffer::{Links, with_content};
    discovery
        .files
        .par_iter()
        .map(|found| {
            match with_content(&found.path, Links::Refuse, |content| f(found, Ok(content))) {
                Ok(read) => read.out,
                Err(e) => f(found, Err(cannot_read(&found.display, &e))),
            }
        })
        .collect()
}

/// The error of a file that cannot be opened or read.
fn cannot_read(display: &str, e: &dyn std::fmt::Display) -> ReadError {
    ReadError {
        file: display.to_owned(),
        entry: None,
        location: mlbench_schema::reader::Location::File,
        message: format!("cannot read: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn runs_from_folders_and_run_ids() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "output0/fast_0.json", "[");
        touch(dir.path(), "output0/fast_1.json", "[");
        touch(dir.path(), "output1/fast_0.json", "[");
        touch(dir.path(), "output1/summary.txt", "");
        touch(
            dir.path(),
            "e3/fast.vae.R2.D0.20200106-160000-123456.json",
            "{}",
        );
        touch(dir.path(), "output1/other_0.json", "[");
        touch(
            dir.path(),
            "fast.json",
            r#"[{"name": "vae", "cmd": "./vae/run.sh", "args": {}}]"#,
        );
        touch(dir.path(), "notes.json", r#"{"a": 1}"#);
        let d = discover(&[dir.path().to_path_buf()], Some("fast")).unwrap();
        let runs: Vec<(&str, &str)> = d
            .files
            .iter()
            .map(|f| (f.run.as_str(), f.display.as_str()))
            .collect();
        assert_eq!(
            runs,
            [
                ("e3/R2", "e3/fast.vae.R2.D0.20200106-160000-123456.json"),
                ("output0", "output0/fast_0.json"),
                ("output0", "output0/fast_1.json"),
                ("output1", "output1/fast_0.json"),
            ]
        );
        assert_eq!(d.other_suites, ["other"]);
        // notes.json; the jobs file is named apart, summary.txt (the runner's log) expected.
        assert_eq!(d.ignored, 1);
        assert_eq!(d.jobs_files, ["fast.json"]);
    }

    #[test]
    fn suite_is_inferred_or_must_be_chosen() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "output0/fast_0.json", "[");
        assert_eq!(
            discover(&[dir.path().to_path_buf()], None).unwrap().suite,
            "fast"
        );
        touch(dir.path(), "output0/baselines_0.json", "[");
        let err = discover(&[dir.path().to_path_buf()], None).unwrap_err();
        assert!(
            err.to_string()
                .contains("several suites found (baselines, fast)"),
            "{err}"
        );
        let err = discover(&[dir.path().to_path_buf()], Some("nope")).unwrap_err();
        assert!(matches!(
            err,
            DiscoverError::Suite {
                error: SuiteError::NoneOfSuite { .. },
                ..
            }
        ));
    }

    #[test]
    fn missing_path() {
        let err = discover(&[PathBuf::from("/no/such/dir")], None).unwrap_err();
        assert_eq!(err.to_string(), "/no/such/dir: no such file or folder");
    }
}
