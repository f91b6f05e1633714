//! `mlbench completions SHELL` and `mlbench man`: the clap command, rendered.

use crate::cli::{CompletionsArgs, ManArgs};
use crate::exit::{CommandError, Outcome};
use crate::output;

/// `mlbench completions SHELL`.
pub fn completions(
    args: &CompletionsArgs,
    mut command: clap::Command,
) -> Result<Outcome, CommandError> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "mlbench", &mut script);
    output::emit_bytes(&script, None, false)?;
    Ok(Outcome::Ok)
}

/// `mlbench man [--out-dir DIR]`: one page per command into DIR, or the top page.
pub fn man(args: &ManArgs, command: clap::Command) -> Result<Outcome, CommandError> {
    match &args.out_dir {
        Some(dir) => {
            output::create_dir(dir)?;
            clap_mangen::generate_to(command, dir).map_err(|source| output::OutputError {
                path: dir.clone(),
                action: "write the man pages into",
                source,
            })?;
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command).render(&mut page)?;
            output::emit_bytes(&page, None, false)?;
        }
    }
    Ok(Outcome::Ok)
}
