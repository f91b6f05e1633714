//! Versions: one per bench across the submission (`version.inconsistent`), and, with a
//! repository, the one the benchmark repository says (`version.*`).

use crate::facts::EntryFacts;
use crate::finding::catalogued;
use mlbench_results::validation::{Finding, VersionNote};
use std::collections::BTreeMap;

/// `version.inconsistent`: every entry whose version differs from its bench's most common
/// one (ties: the version met first).
pub fn inconsistent(entries: &[EntryFacts], files: &[String], out: &mut Vec<Finding>) {
    for (name, versions) in by_bench(entries) {
        if versions.len() < 2 {
            continue;
        }
        let (majority, _) = versions
            .iter()
            .max_by(|a, b| a.1.len().cmp(&b.1.len()).then_with(|| b.1[0].cmp(&a.1[0])))
            .map(|(v, list)| (*v, list.len()))
            .unwrap_or(("", 0));
        for (version, list) in &versions {
            if *version == majority {
                continue;
            }
            for &(file, entry) in list {
                out.push(
                    catalogued(
                        "version.inconsistent",
                        format!("`{name}` at version {majority} like its other entries"),
                        (*version).to_owned(),
                    )
                    .file(files[file].clone())
                    .entry(entry)
                    .field("version"),
                );
            }
        }
    }
}

/// version → (file, entry) in file order.
type Versions<'a> = BTreeMap<&'a str, Vec<(usize, usize)>>;

/// bench → version → (file, entry) in file order.
fn by_bench(entries: &[EntryFacts]) -> BTreeMap<&str, Versions<'_>> {
    let mut map: BTreeMap<&str, Versions> = BTreeMap::new();
    for e in entries {
        if let (Some(name), Some(version)) = (&e.name, &e.version) {
            map.entry(name)
                .or_default()
                .entry(version)
                .or_default()
                .push((e.file, e.entry));
        }
    }
    for versions in map.values_mut() {
        for list in versions.values_mut() {
            list.sort_unstable();
        }
    }
    map
}

/// What a repository says about one bench's version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionCheck {
    /// Accepted; how it matched, in words.
    Matched(String),
    /// A finding: rule, expected, found.
    Problem(&'static str, String, String),
}

/// Something that can check a bench's version (the git repository, or a test double).
pub trait VersionOracle {
    /// Checks `version` of `bench`.
    fn check(&self, bench: &str, version: &str) -> VersionCheck;
}

/// Checks each distinct (bench, version) once; the finding names the first entry.
pub fn against_repo(
    entries: &[EntryFacts],
    files: &[String],
    oracle: &dyn VersionOracle,
    out: &mut Vec<Finding>,
) -> Vec<VersionNote> {
    let mut notes = Vec::new();
    for (name, versions) in by_bench(entries) {
        for (version, list) in versions {
            let (file, entry) = list[0];
            let result = match oracle.check(name, version) {
                VersionCheck::Matched(how) => how,
                VersionCheck::Problem(rule, expected, found) => {
                    let found = if list.len() > 1 {
                        format!("{found} (in {} entries)", list.len())
                    } else {
                        found
                    };
                    out.push(
                        catalogued(rule, expected, found)
                            .file(files[file].clone())
                            .entry(entry)
                            .field("version"),
                    );
                    rule.to_owned()
                }
            };
            notes.push(VersionNote {
                bench: name.to_owned(),
                version: version.to_owned(),
                entries: list.len(),
                result,
            });
        }
    }
    notes
}
