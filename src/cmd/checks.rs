//! `--jobs`, `--baselines`, `--repo`, `--waive`… of `validate` and `pack`, turned into the
//! validator's options (shared by the two commands, importing neither).

use crate::cli::CheckArgs;
use crate::exit::CommandError;
use mlbench_results::Validation;
use mlbench_schema::jobs::JobsFile;
#[cfg(feature = "git")]
use mlbench_validator::rules::versions::VersionOracle;
use mlbench_validator::{Limits, Listing, Options, Phases, Waiver, validate_listing_timed};
use std::path::Path;

fn read_jobs(path: &Path) -> Result<(String, JobsFile), CommandError> {
    Ok((path.display().to_string(), JobsFile::load(path)?))
}

/// Everything a validation needs that outlives [`Options`] (the repository).
pub struct Prepared {
    options_base: Options<'static>,
    #[cfg(feature = "git")]
    repo: Option<mlbench_validator::repo_oracle::RepoOracle>,
}

pub fn prepare(args: &CheckArgs) -> Result<Prepared, CommandError> {
    let waivers = args
        .waive
        .iter()
        .map(|w| Waiver::parse(w).map_err(|e| CommandError::Usage(format!("--waive {w}: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    for flag in &args.allow {
        if !flag.starts_with('-') {
            return Err(CommandError::Usage(format!(
                "--allow {flag}: expected a flag as written in the jobs file, e.g. --allow=--seed"
            )));
        }
    }
    let options_base = Options {
        suite: args.name.clone(),
        min_runs: args.min_runs,
        jobs: args.jobs.as_deref().map(read_jobs).transpose()?,
        baselines: args.baselines.as_deref().map(read_jobs).transpose()?,
        track: args.track.into(),
        allow: args.allow.clone(),
        waivers,
        versions: None,
    };
    #[cfg(feature = "git")]
    let repo = (args.repo.as_deref())
        .map(|path| {
            let scripts = args.scripts.as_deref();
            mlbench_validator::repo_oracle::RepoOracle::open(path, &args.rev, scripts)
        })
        .transpose()?;
    #[cfg(not(feature = "git"))]
    if args.repo.is_some() {
        let message = "--repo needs mlbench built with the `git` feature";
        return Err(CommandError::Usage(message.into()));
    }
    Ok(Prepared {
        options_base,
        #[cfg(feature = "git")]
        repo,
    })
}

pub fn limits(args: &CheckArgs) -> Limits {
    Limits {
        max_bytes: args.size.max_bytes,
        max_ratio: args.max_ratio,
        ..Limits::default()
    }
}

pub fn validate_intake(intake: &Listing, prepared: Prepared) -> (Validation, Phases) {
    with_options(prepared, |options| validate_listing_timed(intake, &options))
}

/// Calls `f` with the validation options, the repository's version check included.
pub fn with_options<T>(prepared: Prepared, f: impl FnOnce(Options) -> T) -> T {
    #[cfg(feature = "git")]
    let versions = prepared.repo.as_ref().map(|r| r as &dyn VersionOracle);
    #[cfg(not(feature = "git"))]
    let versions = None;
    f(Options {
        versions,
        ..prepared.options_base
    })
}
