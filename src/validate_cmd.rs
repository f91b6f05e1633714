//! `mlbench validate` and `mlbench pack`.

use crate::cli::{CheckArgs, FindingsFormat, PackArgs, TrackArg, ValidateArgs};
use crate::{Failure, Outcome, output, render};
use anyhow::{Context, anyhow, bail};
use mlbench_schema::jobs::JobsFile;
use mlbench_validator::layout::{MANIFEST_NAME, SUBMISSION_NAME};
use mlbench_validator::rules::versions::VersionOracle;
use mlbench_validator::{
    Intake, Limits, Options, Track, Validation, Waiver, read_submission, validate,
};
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
        track: match args.track {
            TrackArg::Baseline => Track::Baseline,
            TrackArg::Tweaked => Track::Tweaked,
        },
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
    validate(intake, &options)
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
    let started = std::time::Instant::now();
    let intake = read_submission(path, &limits(&args.check))?;
    let read = started.elapsed();
    let validation = validate_intake(&intake, &args.check, prepared);
    if std::env::var_os("MLBENCH_TIMINGS").is_some() {
        eprintln!(
            "timing: read the submission: {:.1} ms",
            read.as_secs_f64() * 1e3
        );
        for (phase, took) in &validation.phases {
            eprintln!("timing: {phase}: {:.1} ms", took.as_secs_f64() * 1e3);
        }
    }
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

/// `SUBMISSION.json`: what was packed. No timestamps, so packing is deterministic.
#[derive(serde::Serialize)]
struct SubmissionInfo<'a> {
    tool: String,
    track: &'a str,
    suite: Option<&'a str>,
    jobs_file: Option<&'a str>,
    files: usize,
    report_files: usize,
    entries: usize,
    runs: usize,
    gpus: usize,
    benches: usize,
    errors: usize,
    warnings: usize,
}

/// Runs `mlbench pack`.
pub fn pack(args: &PackArgs) -> Result<Outcome, Failure> {
    if !args.dir.is_dir() {
        return Err(anyhow!(
            "{}: not a folder (pack takes the submission folder)",
            args.dir.display()
        )
        .into());
    }
    if args.output.exists() && !args.force {
        return Err(anyhow!(
            "{}: already exists; not overwriting it (use --force to replace it)",
            args.output.display()
        )
        .into());
    }
    // The output does not exist yet: resolve its folder, then put the name back.
    let out_dir = match args.output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    if let (Ok(out_dir), Ok(dir), Some(name)) = (
        out_dir.canonicalize(),
        args.dir.canonicalize(),
        args.output.file_name(),
    ) && out_dir.join(name).starts_with(&dir)
    {
        return Err(anyhow!(
            "{}: the archive would be inside the folder it packs",
            args.output.display()
        )
        .into());
    }
    let prepared = prepare(&args.check)?;
    let mut intake = read_submission(&args.dir, &limits(&args.check))?;
    // A manifest left by an earlier pack is replaced, so it is not checked either.
    intake
        .files
        .retain(|f| f.path != MANIFEST_NAME && f.path != SUBMISSION_NAME);
    let validation = validate_intake(&intake, &args.check, prepared);
    if validation.errors() > 0 {
        eprint!("{}", render::findings::human(&validation));
        if !args.force {
            return Err(Failure {
                error: anyhow!(
                    "{}: not packed: the folder has errors (fix them, waive them with --waive, or pack anyway with --force)",
                    args.dir.display()
                ),
                code: 1,
            });
        }
    }
    let s = &validation.summary;
    let info = SubmissionInfo {
        tool: format!("mlbench {}", env!("CARGO_PKG_VERSION")),
        track: match args.check.track {
            TrackArg::Baseline => "baseline",
            TrackArg::Tweaked => "tweaked",
        },
        suite: s.suite.as_deref(),
        jobs_file: s.jobs_file.as_deref(),
        files: s.files,
        report_files: s.report_files,
        entries: s.entries,
        runs: s.runs,
        gpus: s.gpus,
        benches: s.benches,
        errors: validation.errors(),
        warnings: validation.warnings(),
    };
    let mut json = serde_json::to_vec_pretty(&info)?;
    json.push(b'\n');
    let files = mlbench_validator::pack::with_manifest(intake.files, json);
    let mut zip = std::io::Cursor::new(Vec::new());
    mlbench_validator::pack::write_zip(&files, &mut zip)?;
    output::emit_bytes(zip.get_ref(), Some(&args.output), args.force)?;
    eprintln!(
        "packed {} files ({} report files, {} entries) into {}",
        files.len(),
        s.report_files,
        s.entries,
        args.output.display()
    );
    Ok(Outcome::Ok)
}
