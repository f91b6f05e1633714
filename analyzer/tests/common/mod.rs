//! Submissions built in memory and loaded the way `report` loads a zip.

use mlbench_analyzer::{SampleSet, samples_of_intake};
use mlbench_schema::writer::stream_text;
use mlbench_schema::{ReportEntry, TargetTable};
use mlbench_validator::{Intake, SourceKind, SubmittedFile};

/// The samples of legacy streams `output{run}/fast_{gpu}.json` holding the given entries
/// (run, GPU, entries), written as the suite writes them and read through the loader.
pub fn load_legacy(files: &[(usize, u32, Vec<ReportEntry>)], targets: &TargetTable) -> SampleSet {
    let mut files: Vec<SubmittedFile> = files
        .iter()
        .map(|(run, gpu, entries)| SubmittedFile {
            path: format!("output{run}/fast_{gpu}.json"),
            bytes: stream_text(entries).into_bytes(),
        })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let intake = Intake {
        kind: SourceKind::Folder,
        files,
        facts: Vec::new(),
    };
    let loaded = samples_of_intake(&intake, "memory".as_ref(), None, targets).unwrap();
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    loaded.set
}
