//! `mlbench targets`: a targets file made from a baseline submission (the analyzer's
//! `targets` module), written as TOML.

use crate::cli::TargetsArgs;
use crate::exit::{CommandError, Outcome};
use crate::output;
use mlbench_analyzer::load::load_submission;
use mlbench_analyzer::targets::{TargetsOptions, describe, rules, targets_from};
use mlbench_validator::Limits;

/// Runs `mlbench targets`.
pub fn run(args: &TargetsArgs) -> Result<Outcome, CommandError> {
    output::check_files(args.output.iter(), args.force)?;
    let options = TargetsOptions {
        gpu_model: args.gpu_model.clone(),
        tool: super::tool(),
        date: args.date.clone(),
        allow_failing: args.allow_failing,
    }
    .checked()?; // Before the submission is read.
    let rules = rules()?;
    let limits = Limits::within(args.size.max_bytes);
    let sub = load_submission(&args.submission, args.name.as_deref(), &rules, &limits)?;
    let made = targets_from(&sub, &args.submission, &rules, &options)?;
    for warning in &made.warnings {
        eprintln!("warning: {warning}");
    }
    let text = made.table.to_toml(&made.comments());
    super::emit_bytes(text.as_bytes(), args.output.as_deref(), args.force)?;
    if let Some(path) = &args.output {
        eprintln!("{}: {}", path.display(), describe(&made.table));
    }
    Ok(Outcome::Ok)
}
