//! `mlbench pack`: the validator validates and packs (`pack_folder`), this writes the
//! bytes and says what it did.

use super::checks::{limits, prepare, with_options};
use crate::cli::PackArgs;
use crate::exit::{self, CommandError, Outcome};
use crate::output;
use mlbench_export::rows::findings::human;
use mlbench_validator::pack::{PackError, PackOptions, check_destination, pack_folder};

/// Runs `mlbench pack`: the library validates and packs, this writes the bytes and says
/// what it did.
pub fn run(args: &PackArgs) -> Result<Outcome, CommandError> {
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
            eprint!("{}", human(&validation));
            return Err(CommandError {
                error: PackError::Refused { dir, validation }.into(),
                code: exit::FAILED,
            });
        }
        Err(e) => return Err(e.into()),
    };
    if outcome.validation.errors() > 0 {
        eprint!("{}", human(&outcome.validation));
    }
    output::emit_bytes(&outcome.zip, Some(&args.output), args.force)?;
    eprintln!("{} into {}", outcome.describe(), args.output.display());
    Ok(Outcome::Ok)
}
