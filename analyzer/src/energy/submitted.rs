//! Where the telemetry's bytes come from: a submission as the validator's intake gives
//! it, listed ([`Listing`]: a folder or a zip, each file read when asked) or held in
//! memory ([`Intake`]: what a command read whole already). Either way only the regular
//! files within the submission are there (the listing never follows a link and never
//! opens a FIFO or a device; it sets aside what is over its limits), and what was left
//! out is one of its findings. Energy ([`super::energy_of`]) and the power traces
//! ([`super::traces`]) see a submission only through [`Submitted`]: the same submission
//! gives the same figures whichever way it arrives.

use mlbench_results::validation::Finding;
use mlbench_schema::read_buffer::Content;
use mlbench_schema::telemetry::{TELEMETRY_FOLDER, TelemetryReadError};
use mlbench_submission::Fact;
use mlbench_submission::intake::{Intake, IntakeError, Limits, Listing, list_submission};
use mlbench_submission::layout::{Role, classify};
use mlbench_telemetry::fold::{Reduced, reduce};
use mlbench_validator::finding::of_fact;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;

/// A submission's files, listed or held.
pub enum Submitted<'a> {
    /// Listed by the validator's intake: each file read when asked, as a stream where it
    /// is large.
    Listed(Listing),
    /// Listed by a submission opened once for a whole command (the report's own walk).
    Opened(&'a Listing),
    /// Held whole by the validator's intake.
    Held(&'a Intake),
}

impl Submitted<'_> {
    /// The submission at `path` (a folder, or a file ending in `.zip`), listed within
    /// `limits`.
    ///
    /// # Errors
    /// [`IntakeError`]: a path that is not there, not a folder or a zip, or cannot be
    /// listed.
    pub fn list(path: &Path, limits: &Limits) -> Result<Submitted<'static>, IntakeError> {
        list_submission(path, limits).map(Submitted::Listed)
    }

    /// Its listing (owned or borrowed alike), or the intake that holds it.
    fn view(&self) -> Result<&Listing, &Intake> {
        match self {
            Submitted::Listed(listing) => Ok(listing),
            Submitted::Opened(listing) => Ok(listing),
            Submitted::Held(intake) => Err(intake),
        }
    }

    /// The paths of its files (relative, `/`-separated), sorted.
    pub fn paths(&self) -> Vec<&str> {
        match self.view() {
            Ok(listing) => listing.paths().iter().map(String::as_str).collect(),
            Err(intake) => intake.files.iter().map(|f| f.path.as_str()).collect(),
        }
    }

    /// What its intake found (links, special files, files over the limits…), as the
    /// validator's findings.
    pub fn findings(&self) -> Vec<Finding> {
        let facts: Vec<&Fact> = match self.view() {
            Ok(listing) => listing.facts().collect(),
            Err(intake) => intake.facts.iter().collect(),
        };
        facts.into_iter().map(of_fact).collect()
    }

    /// Each file `wanted` picks by path handed to `f` (its path and content) as soon as it
    /// is read, in parallel, the others never opened; in path order, each with `f`'s
    /// result or, for a file that could not be read, why not in words.
    pub fn read_each<T: Send>(
        &self,
        wanted: impl Fn(&str) -> bool + Sync,
        f: impl Fn(&str, Content<'_>) -> T + Sync,
    ) -> Vec<(String, Result<T, String>)> {
        match self.view() {
            Err(intake) => (intake.files.par_iter())
                .filter(|file| wanted(&file.path))
                .map(|file| {
                    (
                        file.path.clone(),
                        Ok(f(&file.path, Content::Bytes(&file.bytes))),
                    )
                })
                .collect(),
            Ok(listing) => {
                let part = listing.only(wanted);
                let (failed, read) = part.read_apart(|_| true, &f);
                let mut read: HashMap<String, T> = read.into_iter().collect();
                let why = |path: &str| {
                    (failed.facts.iter())
                        .find(|finding| finding.file.as_deref() == Some(path))
                        .map_or_else(|| "not read".to_owned(), |finding| finding.found.clone())
                };
                (part.paths().iter())
                    .map(|path| match read.remove(path) {
                        Some(out) => (path.clone(), Ok(out)),
                        None => (path.clone(), Err(format!("cannot read: {}", why(path)))),
                    })
                    .collect()
            }
        }
    }
}

/// Whether `path` (relative to its submission) is a file of a run's `telemetry` folder
/// by the one classifier: a telemetry file, or a sampler's unfinished one (`.part`).
pub fn in_telemetry(path: &str) -> bool {
    let whole = path.strip_suffix(".part").unwrap_or(path);
    classify(whole, || false) == Role::Telemetry
}

/// The telemetry file `content` read in one pass, line by line (its samples folded as
/// they go by: memory bounded by its windows, not its samples); `display` names it.
///
/// # Errors
/// [`TelemetryReadError`], naming `display` and the line.
pub fn reduce_content(display: &str, content: Content<'_>) -> Result<Reduced, TelemetryReadError> {
    let path = Path::new(display);
    match content {
        Content::Bytes(bytes) => reduce(path, bytes, |_, _| {}),
        Content::Stream(stream) => reduce(
            path,
            std::io::BufReader::with_capacity(1 << 16, stream),
            |_, _| {},
        ),
    }
}

/// What the intake left out of the telemetry folders (`prefix`: what its paths are below,
/// for the classifier), each file with why in words: `not read: a FIFO (expected a
/// regular file)`.
pub fn left_out(sub: &Submitted, prefix: &str) -> Vec<(String, String)> {
    (sub.findings().into_iter())
        .filter_map(|f| {
            let file = f.file.as_deref()?;
            in_telemetry(&format!("{prefix}{file}")).then(|| {
                let why = format!("not read: {} (expected {})", f.found, f.expected);
                (file.to_owned(), why)
            })
        })
        .collect()
}

/// The folder of a display path (`output0/fast_0.json` → `output0`; empty at the top).
pub fn display_parent(display: &str) -> &str {
    display.rsplit_once('/').map_or("", |(parent, _)| parent)
}

/// `parent/telemetry/name`, as the report names files (`name` empty: the folder).
pub fn telemetry_display(parent: &str, name: &str) -> String {
    let dir = match parent {
        "" => TELEMETRY_FOLDER.to_owned(),
        parent => format!("{parent}/{TELEMETRY_FOLDER}"),
    };
    match name {
        "" => dir,
        name => format!("{dir}/{name}"),
    }
}
