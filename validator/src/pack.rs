//! Deterministic packing: a submission zip whose bytes depend only on the files' paths and
//! contents, with a `sha256sum`-format manifest, so that organizers can re-pack and compare.

use crate::submission::{
    LeftOut, MANIFEST_NAME, SUBMISSION_NAME, SUBMISSION_SCHEMA_VERSION, SubmissionInfo,
    with_manifest,
};
use crate::validate::{Options, validate};
use mlbench_results::validation::Validation;
use mlbench_schema::Track;
use mlbench_schema::class::ErrorClass;
use mlbench_schema::words::count;
use mlbench_submission::archive::normalize_entry_name;
use mlbench_submission::{IntakeError, Limits, SubmittedFile, read_submission};
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, System, ZipWriter};

/// The deflate level of every entry: fixed, so that output bytes are reproducible.
const DEFLATE_LEVEL: i64 = 6;

/// Why a folder was not packed, or a zip could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// The path to pack is not a folder.
    #[error("{}: not a folder (pack takes the submission folder)", .0.display())]
    NotAFolder(PathBuf),
    /// The archive would be written inside the folder it packs.
    #[error("{}: the archive would be inside the folder it packs", .0.display())]
    InsideFolder(PathBuf),
    /// The folder could not be read.
    #[error(transparent)]
    Intake(#[from] IntakeError),
    /// The validation found errors and packing was not forced.
    #[error(
        "{}: not packed: the folder has errors",
        .dir.display()
    )]
    Refused {
        /// The folder.
        dir: PathBuf,
        /// The validation, with its errors, to show.
        validation: Box<Validation>,
    },
    /// `SUBMISSION.json` could not be written.
    #[error("writing {SUBMISSION_NAME}: {0}")]
    Json(#[from] serde_json::Error),
    /// Writing the archive failed.
    #[error("writing the zip: {0}")]
    Zip(#[from] zip::result::ZipError),
    /// Writing an entry's bytes failed.
    #[error("writing the zip: {0}")]
    Io(#[from] std::io::Error),
    /// A path that the intake would refuse (absolute, `..`, backslash…).
    #[error("{path}: {problem}")]
    UnsafePath {
        /// The path.
        path: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// Two files with the same path.
    #[error("{0}: given twice")]
    Duplicate(String),
    /// Files the submission's figures come from (report or jobs files) that pack cannot
    /// pack faithfully (a link, a FIFO…): nothing packed, `--allow-errors` or not.
    #[error(
        "{}: not packed: {} the submission needs cannot be packed: {}; copy each file in place of its link (or FIFO), then pack again",
        .dir.display(),
        if .files.len() == 1 { "a file" } else { "files" },
        .files.iter().map(|f| format!("{} ({})", f.path, f.why)).collect::<Vec<_>>().join(", ")
    )]
    NeededLeftOut {
        /// The folder.
        dir: PathBuf,
        /// The report and jobs files left out.
        files: Vec<LeftOut>,
    },
}

impl mlbench_schema::class::Classify for PackError {
    fn class(&self) -> ErrorClass {
        match self {
            // Nothing to pack: the submission cannot be read at all.
            PackError::Refused { validation, .. } if validation.unreadable() => ErrorClass::Input,
            PackError::Refused { .. } | PackError::NeededLeftOut { .. } => ErrorClass::Failed,
            PackError::NotAFolder(_)
            | PackError::InsideFolder(_)
            | PackError::Intake(_)
            | PackError::UnsafePath { .. }
            | PackError::Duplicate(_) => ErrorClass::Input,
            PackError::Json(_) | PackError::Zip(_) | PackError::Io(_) => ErrorClass::Internal,
        }
    }
}

impl SubmissionInfo {
    /// What a validation says about the folder packed under `track` by `tool`.
    pub fn of_validation(tool: &str, track: Track, validation: &Validation) -> SubmissionInfo {
        let s = &validation.summary;
        SubmissionInfo {
            tool: tool.to_owned(),
            track,
            suite: s.suite.clone(),
            jobs_file: s.jobs_file.clone(),
            files: s.files,
            report_files: s.report_files,
            entries: s.entries,
            runs: s.runs,
            gpus: s.gpus,
            benches: s.benches,
            errors: validation.errors(),
            warnings: validation.warnings(),
            schema_version: SUBMISSION_SCHEMA_VERSION,
            systems: Vec::new(),
            runtime: None,
            allowed_errors: false,
            telemetry: Vec::new(),
            profiles: Vec::new(),
            left_out: Vec::new(),
        }
    }
}

/// How a folder is packed.
pub struct PackOptions<'a> {
    /// What it is validated against (the track written in `SUBMISSION.json` is this
    /// one's).
    pub validation: Options<'a>,
    /// Limits of the folder read.
    pub limits: Limits,
    /// Pack even when the validation finds errors (`SUBMISSION.json` says so). Never
    /// when the folder cannot be read as a submission at all (no report file).
    pub allow_errors: bool,
    /// `tool` of `SUBMISSION.json`, e.g. `mlbench 0.1.0`.
    pub tool: String,
}

impl PackOptions<'_> {
    /// `pack`'s defaults (the default rules and limits, the track `SUBMISSION.json` or
    /// the default says, the folder's one suite, no errors allowed).
    pub fn defaults(tool: String) -> PackOptions<'static> {
        PackOptions {
            validation: Options {
                min_runs: crate::DEFAULT_MIN_RUNS,
                ..Options::default()
            },
            limits: Limits::default(),
            allow_errors: false,
            tool,
        }
    }

    /// `pack`'s defaults for the suite `suite` on `track` (the default rules and limits,
    /// no errors allowed), as `mlbench run --pack` packs what it ran.
    pub fn of_suite(suite: &str, track: Track, tool: String) -> PackOptions<'static> {
        PackOptions {
            validation: Options {
                suite: Some(suite.to_owned()),
                min_runs: crate::DEFAULT_MIN_RUNS,
                track,
                ..Options::default()
            },
            limits: Limits::default(),
            allow_errors: false,
            tool,
        }
    }
}

/// A folder packed.
#[derive(Debug, Clone)]
pub struct PackOutcome {
    /// The zip's bytes (deterministic: the same folder gives the same bytes).
    pub zip: Vec<u8>,
    /// Entries in the zip (the folder's files, `SUBMISSION.json` and the manifest).
    pub files: usize,
    /// What `SUBMISSION.json` says.
    pub info: SubmissionInfo,
    /// The validation (errors only when packing was forced).
    pub validation: Validation,
}

impl PackOutcome {
    /// `packed N files (R report files, E entries)`, what the commands say once the zip
    /// is written (they add where).
    pub fn describe(&self) -> String {
        let left_out = self.info.left_out.iter();
        let lines = left_out.map(|f| format!("left out: {} ({})\n", f.path, f.why));
        format!(
            "{}packed {} ({}, {})",
            lines.collect::<String>(),
            count(self.files, "file", "files"),
            count(self.info.report_files, "report file", "report files"),
            count(self.info.entries, "entry", "entries")
        )
    }
}

/// Checks where a pack goes before any work: `dir` must be a folder, and `output` (the
/// zip to be written, when known) must not be inside it.
pub fn check_destination(dir: &Path, output: Option<&Path>) -> Result<(), PackError> {
    if !dir.is_dir() {
        return Err(PackError::NotAFolder(dir.to_path_buf()));
    }
    match output {
        Some(output) if would_be_inside(output, dir) => {
            Err(PackError::InsideFolder(output.to_path_buf()))
        }
        _ => Ok(()),
    }
}

/// Whether the file `file` would be inside the folder `dir`, neither of which need exist
/// yet: each is resolved through its longest existing ancestor (links followed there) and
/// the rest of its path put back. The one test of `pack -o` and `run --pack`.
pub fn would_be_inside(file: &Path, dir: &Path) -> bool {
    use mlbench_schema::destination::resolved;
    match (resolved(file), resolved(dir)) {
        (Some(file), Some(dir)) => file.starts_with(&dir),
        _ => false,
    }
}

/// Packs the submission folder `dir`: reads it, validates it (a manifest and
/// `SUBMISSION.json` left by an earlier pack are replaced, so they are not checked),
/// refuses it when the validation finds errors unless `options.allow_errors`, and returns the
/// deterministic zip with `SUBMISSION.json` and `MANIFEST.sha256`. `output` is where the
/// caller will write the zip, checked not to be inside `dir`; nothing is written here.
pub fn pack_folder(
    dir: &Path,
    output: Option<&Path>,
    options: &PackOptions,
) -> Result<PackOutcome, PackError> {
    check_destination(dir, output)?;
    let mut intake = read_submission(dir, &options.limits)?;
    intake
        .files
        .retain(|f| f.path != MANIFEST_NAME && f.path != SUBMISSION_NAME);
    let validation = validate(&intake, &options.validation);
    let left_out = left_out(&intake.facts);
    let suite_jobs = validation
        .summary
        .suite
        .as_ref()
        .map(|s| format!("{s}.json"));
    let needed: Vec<LeftOut> = (left_out.iter())
        .filter(|f| needed(&f.path, suite_jobs.as_deref()))
        .cloned()
        .collect();
    if !needed.is_empty() {
        return Err(PackError::NeededLeftOut {
            dir: dir.to_path_buf(),
            files: needed,
        });
    }
    if validation.errors() > 0 && (!options.allow_errors || validation.unreadable()) {
        return Err(PackError::Refused {
            dir: dir.to_path_buf(),
            validation: Box::new(validation),
        });
    }
    let mut info =
        SubmissionInfo::of_validation(&options.tool, options.validation.track, &validation);
    info.systems = SubmissionInfo::systems_of(&intake.files);
    info.runtime = SubmissionInfo::declared_runtime(&info.systems);
    info.allowed_errors = validation.errors() > 0;
    info.telemetry = SubmissionInfo::telemetry_of(&intake.files);
    info.profiles = SubmissionInfo::profiles_of(&intake.files);
    info.left_out = left_out;
    let files = with_manifest(intake.files, info.to_json()?);
    let mut zip = std::io::Cursor::new(Vec::new());
    write_zip(&files, &mut zip)?;
    Ok(PackOutcome {
        zip: zip.into_inner(),
        files: files.len(),
        info,
        validation,
    })
}

/// The folder entries the read set aside, from its facts: links, FIFOs, devices, folders
/// it could not list, files over `--max-bytes`, each with why, sorted by path.
pub fn left_out(facts: &[mlbench_submission::Fact]) -> Vec<LeftOut> {
    let mut out: Vec<LeftOut> = (facts.iter())
        .filter_map(|f| {
            let why = match f.rule {
                "file.symlink" => "a symbolic link, not followed".to_owned(),
                "file.unreadable" => f.found.clone(),
                "archive.too-large" => format!("over {}", f.expected),
                _ => return None,
            };
            Some(LeftOut {
                path: f.file.clone()?,
                why,
            })
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// Whether the submission's figures come from the file at `path`: a report file by its
/// name, or the suite's jobs file (`<suite>.json` at the root).
fn needed(path: &str, suite_jobs: Option<&str>) -> bool {
    use mlbench_submission::layout::{Role, classify};
    let role = classify(path, || Some(path) == suite_jobs);
    matches!(role, Role::Report { .. } | Role::Jobs)
}

/// Writes `files` as a zip, reproducibly: entries sorted by path, deflated at a fixed
/// level, dated 1980-01-01 00:00:00, mode 0644, made on "Unix", no extra fields. Paths must
/// be ones the intake accepts (relative, no `..`, no `\`) and unique.
pub fn write_zip<W: Write + Seek>(files: &[SubmittedFile], out: W) -> Result<(), PackError> {
    let mut sorted: Vec<&SubmittedFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    for pair in sorted.windows(2) {
        if pair[0].path == pair[1].path {
            return Err(PackError::Duplicate(pair[0].path.clone()));
        }
    }
    for file in &sorted {
        // Only names that read back unchanged: a packed zip must pass the intake.
        match normalize_entry_name(&file.path) {
            Ok(normal) if normal == file.path => {}
            Ok(_) => {
                return Err(PackError::UnsafePath {
                    path: file.path.clone(),
                    problem: "not in normal form (`./`, `//` or a trailing `/`)",
                });
            }
            Err(problem) => {
                return Err(PackError::UnsafePath {
                    path: file.path.clone(),
                    problem: problem.describe(),
                });
            }
        }
    }
    let mut zip = ZipWriter::new(out);
    for file in sorted {
        // Without the `time` feature the zip crate adds no timestamp extra field; every
        // field that could vary with the machine or the clock is pinned here.
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Deflated)
            .compression_level(Some(DEFLATE_LEVEL))
            .last_modified_time(DateTime::default())
            .unix_permissions(0o644)
            .system(System::Unix)
            .large_file(file.bytes.len() as u64 >= u64::from(u32::MAX));
        zip.start_file(file.path.as_str(), options)?;
        zip.write_all(&file.bytes)?;
    }
    zip.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, bytes: &[u8]) -> SubmittedFile {
        SubmittedFile::new(path, bytes)
    }

    /// Inside or not, whether the folder and the file exist yet, through `..` and links.
    #[test]
    fn a_file_is_inside_a_folder_whether_or_not_they_exist() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        assert!(would_be_inside(&root.join("sub/a.zip"), &root.join("sub")));
        assert!(would_be_inside(
            &root.join("sub/new/deeper/a.zip"),
            &root.join("sub")
        ));
        assert!(would_be_inside(
            &root.join("out/x/a.zip"),
            &root.join("out")
        ));
        assert!(!would_be_inside(&root.join("a.zip"), &root.join("sub")));
        assert!(!would_be_inside(
            &root.join("subway/a.zip"),
            &root.join("sub")
        ));
        assert!(!would_be_inside(
            &root.join("sub/../a.zip"),
            &root.join("sub")
        ));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.join("sub"), root.join("link")).unwrap();
            assert!(would_be_inside(&root.join("link/a.zip"), &root.join("sub")));
            assert!(would_be_inside(&root.join("sub/a.zip"), &root.join("link")));
        }
    }

    #[test]
    fn write_zip_refuses_what_intake_would() {
        let mut out = std::io::Cursor::new(Vec::new());
        for bad in ["../x", "/x", "a\\b", "./a", "a//b", "a/"] {
            let err = write_zip(&[file(bad, b"")], &mut out).unwrap_err();
            assert!(matches!(err, PackError::UnsafePath { .. }), "{bad}: {err}");
        }
        let err = write_zip(&[file("a", b""), file("a", b"")], &mut out).unwrap_err();
        assert!(matches!(err, PackError::Duplicate(_)));
    }
}
