//! `mlbench data prepare`: the registry of `mlbench_datasets::sets` makes the benches'
//! data sets and records them in the data root's MANIFEST.json.

use crate::cli::{DataArgs, DataCommand};
use crate::exit::{CommandError, Outcome};
use crate::output::DestinationError;
use mlbench_datasets::{Scale, sets};

/// Runs `mlbench data prepare`.
pub fn run(args: &DataArgs) -> Result<Outcome, CommandError> {
    let DataCommand::Prepare(args) = &args.command;
    let chosen = sets::for_benches(&args.bench).map_err(|e| CommandError::Usage(e.to_string()))?;
    if let Some(path) = sets::existing(&args.dir, &chosen).filter(|_| !args.force) {
        return Err(DestinationError::Exists(path).into());
    }
    let scale = if args.smoke {
        Scale::Smoke
    } else {
        Scale::Full
    };
    let made = sets::prepare(&args.dir, &chosen, args.seed, scale, args.force)?;
    let text = sets::summary(&args.dir, &made, &chosen);
    super::emit_bytes(text.as_bytes(), None, false)?;
    Ok(Outcome::Ok)
}
