//! `mlbench validate`: the validator checks, the exporters present the findings.

use super::checks::{limits, prepare, validate_intake};
use super::write;
use crate::cli::{FindingsFormat, ValidateArgs};
use crate::exit::{CommandError, Outcome};
use crate::output;
use mlbench_export::rows::findings::summary_line;
use mlbench_export::{Csv, Exporter, Json, Markdown, Sarif, Table};
use mlbench_results::ValidationDoc;
use mlbench_schema::Timings;
use mlbench_validator::list_submission;

fn exporter<M>(format: FindingsFormat) -> &'static dyn Exporter<M>
where
    Table: Exporter<M>,
    Json: Exporter<M>,
    Sarif: Exporter<M>,
    Csv: Exporter<M>,
    Markdown: Exporter<M>,
{
    match format {
        FindingsFormat::Human => &Table,
        FindingsFormat::Json => &Json,
        FindingsFormat::Sarif => &Sarif,
        FindingsFormat::Csv => &Csv,
        FindingsFormat::Markdown => &Markdown,
    }
}

/// Runs `mlbench validate`.
pub fn run(args: &ValidateArgs) -> Result<Outcome, CommandError> {
    output::check_files(args.output.iter(), args.force)?;
    let (out, force) = (args.output.as_deref(), args.force);
    if args.list_rules {
        let list = mlbench_validator::rules::catalogue();
        write(exporter(args.format), &list, out, force)?;
        return Ok(Outcome::Ok);
    }
    let Some(path) = args.submission.as_deref() else {
        return Err(CommandError::Usage("a submission is required".into()));
    };
    let prepared = prepare(&args.check)?;
    let clock = Timings::start();
    // Listed, then read file by file as it is validated: never held whole.
    let intake = list_submission(path, &limits(&args.check))?;
    clock.lap("list the submission");
    let (validation, phases) = validate_intake(&intake, prepared);
    clock.phases(&phases.0);
    let doc = ValidationDoc {
        submission: path.display().to_string(),
        validation,
        rules: mlbench_validator::rules::catalogue(),
    };
    write(exporter(args.format), &doc, out, force)?;
    if args.output.is_some() && args.format != FindingsFormat::Human {
        eprint!("{}", summary_line(&doc.validation));
    }
    Ok(if let Some(why) = doc.validation.unreadable_because() {
        eprintln!("error: {}: {why}", path.display());
        Outcome::Unreadable
    } else {
        Outcome::failed_if(doc.validation.errors() > 0)
    })
}
