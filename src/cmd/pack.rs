//! `mlbench pack`: the validator validates and packs (`pack_folder`), this writes the
//! bytes and says what it did.

use super::checks::{limits, prepare, with_options};
use super::tool;
use crate::cli::PackArgs;
use crate::exit::{CommandError, Outcome};
use crate::output;
use mlbench_export::rows::findings::human;
use mlbench_validator::pack::{PackError, PackOptions, check_destination, pack_folder};
use mlbench_validator::rules::catalogue;

/// Runs `mlbench pack`: the library validates and packs, this writes the bytes and says
/// what it did.
pub fn run(args: &PackArgs) -> Result<Outcome, CommandError> {
    let dir = &args.submission;
    // Inside the folder packed says so before the file checks (which refuse any input).
    check_destination(dir, Some(&args.output))?;
    output::check_file(&args.output, args.force)?;
    let prepared = prepare(&args.check)?;
    let outcome = with_options(prepared, |validation| {
        pack_folder(
            dir,
            Some(&args.output),
            &PackOptions {
                validation,
                limits: limits(&args.check),
                allow_errors: args.allow_errors,
                tool: tool(),
            },
        )
    });
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(PackError::Refused { dir, validation }) => {
            eprint!("{}", human(&validation, &catalogue()));
            return Err(PackError::Refused { dir, validation }.into());
        }
        Err(e) => return Err(e.into()),
    };
    if outcome.validation.errors() > 0 {
        eprint!("{}", human(&outcome.validation, &catalogue()));
        eprintln!(
            "warning: packed with {} error{} (--allow-errors); SUBMISSION.json records them",
            outcome.info.errors,
            if outcome.info.errors == 1 { "" } else { "s" }
        );
    }
    output::write_file(&outcome.zip, &args.output, args.force)?;
    eprintln!("{} into {}", outcome.describe(), args.output.display());
    Ok(Outcome::Ok)
}
