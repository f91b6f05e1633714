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
    output::to_stdout(&script)?;
    Ok(Outcome::Ok)
}

/// `mlbench man [--out-dir DIR]`: one page per command into DIR (`mlbench.1`,
/// `mlbench-<command>.1`, as clap_mangen names them), or the top page.
pub fn man(args: &ManArgs, command: clap::Command) -> Result<Outcome, CommandError> {
    let Some(dir) = &args.out_dir else {
        return Ok(
            output::to_stdout(&render(clap_mangen::Man::new(command))?).map(|()| Outcome::Ok)?
        );
    };
    output::check_folder(dir)?;
    let mut command = command;
    command.build();
    let mut pages = Vec::new();
    collect_pages(command, &mut pages)?;
    let planned: Vec<_> = pages
        .into_iter()
        .map(|(name, page)| (dir.join(name), page))
        .collect();
    // Every page checked before one is written: existing pages need --force.
    output::write_files(dir, &planned, args.force)?;
    Ok(Outcome::Ok)
}

/// (file name, roff) of `command` and of each visible subcommand under it.
fn collect_pages(
    command: clap::Command,
    out: &mut Vec<(String, Vec<u8>)>,
) -> Result<(), CommandError> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect_pages(sub.clone(), out)?;
    }
    let man = clap_mangen::Man::new(command);
    out.push((man.get_filename(), render(man)?));
    Ok(())
}

fn render(man: clap_mangen::Man) -> Result<Vec<u8>, output::OutputError> {
    let mut page = Vec::new();
    man.render(&mut page)
        .map_err(|source| output::OutputError {
            path: "-".into(),
            action: "render the man page for",
            source,
        })?;
    Ok(page)
}
