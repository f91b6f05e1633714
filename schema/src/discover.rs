//! Finding report files in folder trees and lists of files, and reading them in parallel.
//!
//! Each file belongs to a *run* (one repetition of the suite):
//! - a legacy stream `<suite>_<K>.json` belongs to the folder it is in (`output3`,
//!   `vendorA/output3`), as `run_10.sh` moved each run's output to its own folder;
//! - a per-test file belongs to its `R<run>` in the folder it is in.

use crate::layout::{Role, classify};
use crate::reader::{FileName, ParsedFile, ReadError, ReportFile, read_file, read_file_lean};
use crate::suite::{SuiteChoice, SuiteError, choose_suite};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Why no set of report files could be found.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// A path given does not exist.
    #[error("{0}: no such file or folder")]
    NotFound(PathBuf),
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
    path.extension().is_some_and(|e| e == "json")
        && std::fs::metadata(path).is_ok_and(|m| m.len() <= 4 << 20)
        && std::fs::read(path).is_ok_and(|bytes| {
            crate::pyjson::parse(&bytes).is_ok_and(|v| crate::jobs::looks_like_jobs(&v))
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
            walk(root, &mut tree)?;
        } else {
            let display = root.to_string_lossy().replace('\\', "/");
            // A file given alone belongs to the run of its folder's name.
            let parent = root
                .parent()
                .and_then(Path::file_name)
                .map_or_else(|| ".".to_owned(), |p| p.to_string_lossy().into_owned());
            let name = root.file_name().map(|n| n.to_string_lossy().into_owned());
            let as_in_tree = format!("{parent}/{}", name.unwrap_or_default());
            tree.sort_file(root.clone(), display, &as_in_tree);
        }
    }
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

/// What a tree listing found at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeKind {
    /// A regular file.
    File,
    /// A symbolic link (to a file or a folder: links are never followed into).
    Symlink,
    /// Something whose type could not be read.
    Unknown,
}

/// One non-folder entry of a tree listing.
#[derive(Debug, Clone)]
pub struct TreeEntry {
    /// Where it is.
    pub path: PathBuf,
    /// Its path relative to the root, `/`-separated.
    pub display: String,
    /// What it is.
    pub kind: TreeKind,
}

/// A folder of a tree that could not be listed.
#[derive(Debug, thiserror::Error)]
#[error("{path}: cannot list folder: {source}")]
pub struct ListError {
    /// The folder.
    pub path: PathBuf,
    /// The cause.
    pub source: std::io::Error,
}

/// Every file and symlink under `root`, sorted by name folder by folder. Symlinked folders
/// are not followed, so a link loop cannot hang the walk. Shared by discovery and the
/// validator's folder intake.
pub fn list_tree(root: &Path) -> Result<Vec<TreeEntry>, ListError> {
    let mut out = Vec::new();
    list_into(root, root, &mut out)?;
    Ok(out)
}

fn list_into(root: &Path, dir: &Path, out: &mut Vec<TreeEntry>) -> Result<(), ListError> {
    let io = |source| ListError {
        path: dir.to_path_buf(),
        source,
    };
    let mut children: Vec<_> = std::fs::read_dir(dir)
        .map_err(io)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(io)?;
    children.sort_by_key(|c| c.file_name());
    // Subfolders are listed in parallel (a submission is a few hundred folders); their
    // listings are put together in name order, and the first folder that cannot be
    // listed, in that order, is the error.
    let listed: Vec<Result<Listed, ListError>> = children
        .par_iter()
        .map(|child| {
            let path = child.path();
            let kind = match child.file_type() {
                Ok(k) if k.is_dir() => {
                    let mut below = Vec::new();
                    list_into(root, &path, &mut below)?;
                    return Ok(Listed::Folder(below));
                }
                Ok(k) if k.is_symlink() => TreeKind::Symlink,
                Ok(k) if k.is_file() => TreeKind::File,
                Ok(_) => return Ok(Listed::Nothing), // sockets, fifos: not files of a submission
                Err(_) => TreeKind::Unknown,
            };
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let display = rel.to_string_lossy().replace('\\', "/");
            Ok(Listed::Entry(TreeEntry {
                path,
                display,
                kind,
            }))
        })
        .collect();
    for listed in listed {
        match listed? {
            Listed::Entry(entry) => out.push(entry),
            Listed::Folder(below) => out.extend(below),
            Listed::Nothing => {}
        }
    }
    Ok(())
}

/// What one child of a folder adds to a listing.
enum Listed {
    Entry(TreeEntry),
    Folder(Vec<TreeEntry>),
    Nothing,
}

fn walk(root: &Path, tree: &mut Tree) -> Result<(), DiscoverError> {
    let entries = list_tree(root).map_err(|e| DiscoverError::Io {
        path: e.path,
        source: e.source,
    })?;
    // Classified in parallel (a jobs file is told by its content), put in order.
    let roles: Vec<Option<(TreeEntry, Role)>> = entries
        .into_par_iter()
        .map(|entry| {
            // A symlink counts when it leads to a file (symlinked folders are not walked).
            let is_file = match entry.kind {
                TreeKind::File => true,
                TreeKind::Symlink => entry.path.is_file(),
                TreeKind::Unknown => false,
            };
            is_file.then(|| {
                let role = classify(&entry.display, || is_jobs_file(&entry.path));
                (entry, role)
            })
        })
        .collect();
    for (entry, role) in roles.into_iter().flatten() {
        let tree_path = entry.display.clone();
        tree.put(entry.path, entry.display, &tree_path, role);
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
            Role::Pack if crate::system::is_system_file(tree_path) => {
                self.system_paths.push(path);
            }
            Role::Pack => {}
            Role::Unknown => self.ignored += 1,
        }
    }
}

/// The files of a discovery, read; problems of every file are collected.
#[derive(Debug, Clone)]
pub struct LoadedReports {
    /// The suite.
    pub suite: String,
    /// Every file, in discovery order, with the entries that parsed.
    pub files: Vec<ReportFile>,
    /// Every problem met, in file order.
    pub errors: Vec<ReadError>,
    /// Report files of other suites passed over.
    pub other_suites: Vec<String>,
    /// Files not named like reports, passed over.
    pub ignored: usize,
}

/// Reads every file found, in parallel, keeping every entry with every field (a full
/// read, loss curves included; [`load_map`] is the lean one).
pub fn load(discovery: Discovery) -> LoadedReports {
    let suite = discovery.suite.clone();
    let other_suites = discovery.other_suites.clone();
    let ignored = discovery.ignored;
    let files = map_files(discovery, read_file, |file| file);
    let errors = files
        .iter()
        .flat_map(|f| f.parsed.errors.iter().cloned())
        .collect();
    LoadedReports {
        suite,
        files,
        errors,
        other_suites,
        ignored,
    }
}

/// Reads every file found, in parallel, and hands each to `reduce` as soon as it is
/// parsed: what `reduce` returns is kept, the parsed entries are dropped. A large
/// submission then never sits in memory whole.
///
/// This is the scoring path: files are read lean ([`read_file_lean`]), so entries have
/// no `epoch_loss` and `metrics`, and `batch_loss` only as [`ReportEntry::loss_scan`]
/// when it is a list of numbers. [`load`] keeps every field.
///
/// [`ReportEntry::loss_scan`]: crate::entry::ReportEntry::loss_scan
pub fn load_map<T, F>(discovery: Discovery, reduce: F) -> Vec<T>
where
    T: Send,
    F: Fn(ReportFile) -> T + Sync + Send,
{
    map_files(discovery, read_file_lean, reduce)
}

fn map_files<T, F>(discovery: Discovery, read: fn(&Path, &str) -> ParsedFile, reduce: F) -> Vec<T>
where
    T: Send,
    F: Fn(ReportFile) -> T + Sync + Send,
{
    discovery
        .files
        .into_par_iter()
        .map(|f| {
            let parsed = read(&f.path, &f.display);
            reduce(ReportFile {
                path: f.path,
                display: f.display,
                name: f.name,
                run: f.run,
                parsed,
            })
        })
        .collect()
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
