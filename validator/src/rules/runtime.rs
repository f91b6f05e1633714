//! `runtime.mixed`: entries of one submission written by two runtimes, the suite's
//! scripts and `mlbench run` ([`mlbench_schema::runtime::entry_runtime`] tells each
//! entry's). The two do not measure the same throughput for the same job (measured:
//! up to twice as much on small models), so a submission's means must come from one.
//! The runtime with fewer entries (on a tie, `mlbench run`) is the stray one: each file
//! holding entries of it is a finding, at its first such entry, so that a file can be
//! waived on its own.
//!
//! `runtime.declared`: a machine description (`system.json`) that declares a runtime
//! ([`SystemInfo::runtime_of`]) while entries of the submission were written by the
//! other one. The entries decide what `report` and `grid` show (the submission is then
//! `mixed`); the finding is at the description, one per description.

use crate::facts::EntryFacts;
use crate::finding::catalogued;
use mlbench_results::validation::Finding;
use mlbench_schema::runtime::RuntimeTally;
use mlbench_schema::{RuntimeKind, SystemInfo};
use std::collections::BTreeMap;

/// `runtime.declared`: each description of `systems` (path, description) whose declared
/// runtime entries of the other runtime contradict.
pub fn declared(entries: &[EntryFacts], systems: &[(String, SystemInfo)], out: &mut Vec<Finding>) {
    let mut tally = RuntimeTally::default();
    for e in entries {
        tally.add(e.runtime);
    }
    for (path, system) in systems {
        let Some(runtime) = system.runtime_of() else {
            continue;
        };
        let other = runtime.kind.other();
        let n = tally.of(other);
        if n == 0 {
            continue;
        }
        out.push(
            catalogued(
                "runtime.declared",
                format!(
                    "entries written by {}, as {path} declares ({runtime})",
                    runtime.kind.writer()
                ),
                format!(
                    "{n} of {} written by {}",
                    mlbench_schema::words::count(tally.total(), "entry", "entries"),
                    other.writer()
                ),
            )
            .file(path.clone()),
        );
    }
}

/// `runtime.mixed`.
pub fn mixed(entries: &[EntryFacts], files: &[String], out: &mut Vec<Finding>) {
    let mut tally = RuntimeTally::default();
    for e in entries.iter().filter(|e| e.runtime.is_some()) {
        tally.add(e.runtime);
    }
    let [main, stray] = RuntimeKind::ALL;
    let (main, stray) = if tally.of(stray) > tally.of(main) {
        (stray, main)
    } else {
        (main, stray)
    };
    if tally.of(stray) == 0 {
        return;
    }
    // The files of the main runtime, for the message; the stray entries by file.
    let mut main_files: Vec<usize> = Vec::new();
    let mut stray_by_file: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    for e in entries {
        if e.runtime == Some(main) && main_files.last() != Some(&e.file) {
            main_files.push(e.file);
        } else if e.runtime == Some(stray) {
            stray_by_file
                .entry(e.file)
                .and_modify(|(_, n)| *n += 1)
                .or_insert((e.entry, 1));
        }
    }
    main_files.dedup();
    let example = main_files
        .first()
        .map_or_else(String::new, |&f| format!(", e.g. {}", files[f]));
    for (file, (first, count)) in stray_by_file {
        let s = if count == 1 { "y" } else { "ies" };
        out.push(
            catalogued(
                "runtime.mixed",
                format!(
                    "entries written by {}, as the submission's other {}{example}",
                    main.writer(),
                    mlbench_schema::words::count(tally.of(main), "entry", "entries")
                ),
                format!("{count} entr{s} written by {}", stray.writer()),
            )
            .file(files[file].clone())
            .entry(first),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(file: usize, entry: usize, runtime: Option<RuntimeKind>) -> EntryFacts {
        let mut e = EntryFacts::blank(file, entry, 0, "vae");
        e.runtime = runtime;
        e
    }

    #[test]
    fn the_fewer_runtime_is_named_file_by_file() {
        use RuntimeKind::{MlbenchRun, SuiteScripts};
        let files: Vec<String> = (0..3).map(|i| format!("output{i}/fast_0.json")).collect();
        let entries = vec![
            entry(0, 0, Some(SuiteScripts)),
            entry(0, 1, Some(SuiteScripts)),
            entry(1, 0, None),
            entry(1, 1, Some(SuiteScripts)),
            entry(2, 0, Some(SuiteScripts)),
            entry(2, 1, Some(MlbenchRun)),
            entry(2, 2, Some(MlbenchRun)),
        ];
        let mut out = Vec::new();
        mixed(&entries, &files, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        let f = &out[0];
        assert_eq!(f.severity, mlbench_results::validation::Severity::Error);
        assert_eq!(
            (f.file.as_deref(), f.entry),
            (Some("output2/fast_0.json"), Some(1))
        );
        assert_eq!(
            f.expected,
            "entries written by the mila-iqia/training scripts, as the submission's other 4 entries, e.g. output0/fast_0.json"
        );
        assert_eq!(f.found, "2 entries written by mlbench run");
        // One runtime, or entries that do not say: nothing.
        let mut out = Vec::new();
        mixed(&entries[..5], &files, &mut out);
        mixed(
            &[entry(0, 0, None), entry(1, 0, Some(MlbenchRun))],
            &files,
            &mut out,
        );
        assert!(out.is_empty(), "{out:?}");
        // Mostly mlbench run: the suite's entries are the stray ones.
        let entries = vec![
            entry(0, 0, Some(MlbenchRun)),
            entry(0, 1, Some(MlbenchRun)),
            entry(1, 0, Some(SuiteScripts)),
        ];
        mixed(&entries, &files, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(
            out[0].found,
            "1 entry written by the mila-iqia/training scripts"
        );
    }

    #[test]
    fn a_declaration_the_entries_contradict_is_named_at_its_file() {
        use RuntimeKind::{MlbenchRun, SuiteScripts};
        let system = |tool: &str| SystemInfo {
            tool: tool.into(),
            libtorch: Some("2.13.0".into()),
            ..SystemInfo::default()
        };
        let systems = vec![
            ("system.json".to_owned(), system("mlbench 0.2.0")),
            ("system.n2.json".to_owned(), system("something else")),
        ];
        let entries = vec![
            entry(0, 0, Some(SuiteScripts)),
            entry(0, 1, Some(SuiteScripts)),
            entry(1, 0, Some(MlbenchRun)),
            entry(1, 1, None),
        ];
        let mut out = Vec::new();
        declared(&entries, &systems, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        let f = &out[0];
        assert_eq!(f.rule, "runtime.declared");
        assert_eq!(f.severity, mlbench_results::validation::Severity::Warning);
        assert_eq!(f.file.as_deref(), Some("system.json"));
        assert_eq!(
            f.expected,
            "entries written by mlbench run, as system.json declares (mlbench run, libtorch 2.13.0)"
        );
        assert_eq!(
            f.found,
            "2 of 4 entries written by the mila-iqia/training scripts"
        );
        // One entry of the other runtime: singular; none: nothing.
        let mut out = Vec::new();
        declared(&entries[1..], &systems, &mut out);
        assert_eq!(
            out[0].found,
            "1 of 3 entries written by the mila-iqia/training scripts"
        );
        let mut out = Vec::new();
        declared(&entries[2..], &systems, &mut out);
        assert!(out.is_empty(), "{out:?}");
    }
}
