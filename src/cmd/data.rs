//! `mlbench data prepare`: the registry of `mlbench_datasets::sets` makes the benches'
//! data sets and records them in the data root's MANIFEST.json.

use crate::cli::{DataArgs, DataCommand};
use crate::exit::{CommandError, Outcome};
use crate::output::DestinationError;
use mlbench_datasets::{Scale, manifest, sets};

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
    let made = sets::prepare(&args.dir, &chosen, args.seed, scale)?;
    for set in &chosen {
        let entry = &made.sets[set.name()];
        let bytes: u64 = entry.files.iter().map(|f| f.bytes).sum();
        let files = entry.files.len();
        let at = args.dir.join(set.folder());
        println!(
            "{}: {files} files, {bytes} bytes in {}",
            set.name(),
            at.display()
        );
    }
    println!("{}", args.dir.join(manifest::MANIFEST).display());
    Ok(Outcome::Ok)
}
