//! `mlbench validate` and `mlbench pack`.

use crate::cli::{CheckArgs, FindingsFormat, PackArgs, ValidateArgs};
use crate::{Failure, Outcome, output, render};
use anyhow::{Context, anyhow, bail};
use mlbench_schema::Timings;
use mlbench_schema::jobs::JobsFile;
use mlbench_validator::pack::{PackError, PackOptions, check_destination, pack_folder};
use mlbench_validator::rules::versions::VersionOracle;
use mlbench_validator::{Intake, Limits, Options, Validation, Waiver, read_submission, validate};
use std::path::Path;

fn read_jobs(path: &Path) -> anyhow::Result<(String, JobsFile)> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let name = path.display().to_string();
    let jobs = JobsFile::parse(&name, &bytes)?;
    Ok((name, jobs))
}

/// Everything a validation needs that outlives [`Options`] (the repository).
struct Prepared {
    options_base: Options<'static>,
    #[cfg(feature = "git")]
    repo: Option<(
        mlbench_validator::repo::ScriptRepo,
        mlbench_schema::scripts::ScriptMap,
    )>,
}

fn prepare(args: &CheckArgs) -> anyhow::Result<Prepared> {
    let waivers = args
        .waive
        .iter()
        .map(|w| Waiver::parse(w).map_err(|e| anyhow!("--waive {w}: {e}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    for flag in &args.allow {
        if !flag.starts_with('-') {
            bail!(
                "--allow {flag}: expected a flag as written in the jobs file, e.g. --allow=--seed"
            );
        }
    }
    if args.max_ratio == 0 {
        bail!("--max-ratio must be at least 1");
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
    let repo = match &args.repo {
        Some(path) => {
            let repo = mlbench_validator::repo::ScriptRepo::open(path, Some(&args.rev))?;
            let builtin = mlbench_schema::scripts::ScriptMap::builtin();
            let scripts = match &args.scripts {
                Some(file) => mlbench_schema::scripts::ScriptMap::load(file)?.merged_over(builtin),
                None => builtin,
            };
            Some((repo, scripts))
        }
        None => None,
    };
    #[cfg(not(feature = "git"))]
    if args.repo.is_some() {
        bail!("--repo needs mlbench built with the `git` feature");
    }
    Ok(Prepared {
        options_base,
        #[cfg(feature = "git")]
        repo,
    })
}

fn limits(args: &CheckArgs) -> Limits {
    Limits {
        max_bytes: args.max_bytes,
        max_ratio: args.max_ratio,
        ..Limits::default()
    }
}

fn validate_intake(intake: &Intake, args: &CheckArgs, prepared: Prepared) -> Validation {
    with_options(args, prepared, |options| validate(intake, &options))
}

/// Calls `f` with the validation options, the repository's version check included.
fn with_options<T>(args: &CheckArgs, prepared: Prepared, f: impl FnOnce(Options) -> T) -> T {
    let mut options = prepared.options_base;
    #[cfg(feature = "git")]
    let oracle =
        prepared.repo.as_ref().map(
            |(repo, scripts)| mlbench_validator::repo_oracle::RepoOracle {
                repo,
                scripts,
                rev: &args.rev,
            },
        );
    #[cfg(feature = "git")]
    let versions: Option<&dyn VersionOracle> = oracle.as_ref().map(|o| o as &dyn VersionOracle);
    #[cfg(not(feature = "git"))]
    let versions: Option<&dyn VersionOracle> = {
        let _ = args;
        None
    };
    options.versions = versions;
    f(options)
}

/// Runs `mlbench validate`.
pub fn run(args: &ValidateArgs) -> Result<Outcome, Failure> {
    if args.list_rules {
        let text = render::findings::rules_list(args.format)?;
        output::emit(&text, args.output.as_deref(), args.force)?;
        return Ok(Outcome::Ok);
    }
    let path = args
        .path
        .as_deref()
        .context("a submission PATH is required")?;
    let prepared = prepare(&args.check)?;
    let clock = Timings::start();
    let intake = read_submission(path, &limits(&args.check))?;
    clock.lap("read the submission");
    let validation = validate_intake(&intake, &args.check, prepared);
    clock.phases(&validation.phases);
    let shown = path.display().to_string();
    let text = match args.format {
        FindingsFormat::Human => render::findings::human(&validation),
        FindingsFormat::Json => render::findings::json(&shown, &validation)?,
        FindingsFormat::Sarif => render::findings::sarif(&shown, &validation)?,
        FindingsFormat::Csv => render::findings::csv(&validation),
        FindingsFormat::Markdown => render::findings::markdown(&validation),
    };
    output::emit(&text, args.output.as_deref(), args.force)?;
    if args.output.is_some() && args.format != FindingsFormat::Human {
        eprint!("{}", render::findings::summary_line(&validation));
    }
    Ok(if validation.errors() > 0 {
        Outcome::Failed
    } else {
        Outcome::Ok
    })
}

/// Runs `mlbench pack`: the library validates and packs, this writes the bytes and says
/// what it did.
pub fn pack(args: &PackArgs) -> Result<Outcome, Failure> {
    check_destination(&args.dir, None)?;
    output::refuse_existing(std::iter::once(&args.output), args.force)?;
    check_destination(&args.dir, Some(&args.output))?;
    let prepared = prepare(&args.check)?;
    let outcome = with_options(&args.check, prepared, |validation| {
        pack_folder(
            &args.dir,
            Some(&args.output),
            &PackOptions {
                validation,
                limits: limits(&args.check),
                force: args.force,
                tool: format!("mlbench {}", env!("CARGO_PKG_VERSION")),
            },
        )
    });
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(PackError::Refused { dir, validation }) => {
            eprint!("{}", render::findings::human(&validation));
            return Err(Failure {
                error: PackError::Refused { dir, validation }.into(),
                code: crate::exit::FAILED,
            });
        }
        Err(e) => return Err(e.into()),
    };
    if outcome.validation.errors() > 0 {
        eprint!("{}", render::findings::human(&outcome.validation));
    }
    output::emit_bytes(&outcome.zip, Some(&args.output), args.force)?;
    eprintln!("{} into {}", outcome.describe(), args.output.display());
    Ok(Outcome::Ok)
}
