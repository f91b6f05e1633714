//! Runtimes in the analyses ([`mlbench_schema::runtime`] decides what produced a
//! submission): a loaded submission's ([`submission_runtime`]), a report's runtimes and
//! their mismatch with the targets' ([`report_runtimes`]), and the lines that say them.

use crate::samples::SampleSet;
use mlbench_results::report::{BenchParity, Report, RuntimeMismatch, Runtimes};
use mlbench_schema::runtime::{ParityTable, RuntimeKind, SubmissionRuntime, resolve};
use mlbench_schema::{Runtime, SystemInfo, TargetTable};

/// What produced the submission whose machine descriptions are `systems` and whose
/// entries are `set`'s: the runtime the descriptions declare, else the one the entries
/// show ([`resolve`]).
pub fn submission_runtime(systems: &[SystemInfo], set: &SampleSet) -> SubmissionRuntime {
    let declared: Vec<Runtime> = systems.iter().filter_map(SystemInfo::runtime_of).collect();
    resolve(&declared, set.runtimes)
}

/// The runtimes of a report of a submission of runtime `submission` against `targets`,
/// and, when the two are known and differ in kind, the mismatch: every bench of `report`
/// with its parity from `parity` (`None` where unknown).
pub fn report_runtimes(
    submission: SubmissionRuntime,
    targets: &TargetTable,
    report: &Report,
    parity: &ParityTable,
) -> (Runtimes, Option<RuntimeMismatch>) {
    let mismatch = match (&submission.runtime, &targets.runtime) {
        (Some(sub), Some(tgt)) if sub.kind != tgt.kind => Some(RuntimeMismatch {
            submission: sub.to_string(),
            targets: tgt.to_string(),
            parity_source: parity.source.clone(),
            benches: report
                .bench_names()
                .into_iter()
                .map(|bench| {
                    let row = parity.get(bench);
                    BenchParity {
                        bench: bench.to_owned(),
                        parity: row.map(|r| r.ratio),
                        measured_on: row.map(|r| r.measured_on.clone()),
                        date: row.map(|r| r.date.clone()),
                    }
                })
                .collect(),
        }),
        _ => None,
    };
    let runtimes = Runtimes {
        submission,
        targets: targets.runtime.clone().map(Into::into),
    };
    (runtimes, mismatch)
}

/// The header lines of a report's runtimes: the submission's, and the mismatch with the
/// targets' when there is one (the targets' own runtime is said on their line, by
/// [`targets_measured_by`]).
pub fn runtime_notes(runtimes: &Runtimes, mismatch: Option<&RuntimeMismatch>) -> Vec<String> {
    let mut lines = vec![format!("runtime: {}", runtimes.submission.label())];
    if let Some(m) = mismatch {
        let known: Vec<String> = m
            .benches
            .iter()
            .filter_map(|b| {
                let (on, date) = (b.measured_on.as_deref()?, b.date.as_deref()?);
                Some(format!("{} {:.2} ({on}, {date})", b.bench, b.parity?))
            })
            .collect();
        let unknown = m.benches.iter().filter(|b| b.parity.is_none()).count();
        let parity = match (known.is_empty(), unknown) {
            (true, _) => "unknown for every bench".to_owned(),
            (false, 0) => known.join(", "),
            (false, n) => format!(
                "{}; unknown for {n} other bench{}",
                known.join(", "),
                if n == 1 { "" } else { "es" }
            ),
        };
        lines.push(format!(
            "runtime mismatch: the submission ran on {}, the targets were measured by {}: each diff compares the runtimes as well as the machines; parity as measured ({} ÷ {}, items/s on the machine and day named, {}; a measurement, not a correction): {parity}",
            m.submission,
            m.targets,
            RuntimeKind::MlbenchRun.name(),
            RuntimeKind::SuiteScripts.name(),
            m.parity_source,
        ));
    }
    lines
}

/// The warnings of a submission's runtime: entries of both runtimes (a bench's mean
/// pools them unless a configuration conflict sets one runtime's entries aside), and a
/// declaration (`system.json`) that the entries contradict.
pub fn runtime_warnings(submission: &SubmissionRuntime) -> Vec<String> {
    let t = &submission.entries;
    let mut lines = Vec::new();
    if t.kinds().len() > 1 {
        lines.push(format!(
            "warning: mixed runtimes: {} written by {}, {} by {}: a bench's figures pool both runtimes' throughputs (which differ by up to twice for one job) unless a configuration conflict sets one side aside (said below, with each side's runtime); report each runtime's entries on their own",
            mlbench_schema::words::count(t.suite_scripts, "entry", "entries"),
            RuntimeKind::SuiteScripts.writer(),
            t.mlbench_run,
            RuntimeKind::MlbenchRun.writer(),
        ));
    }
    if let Some(c) = submission.contradiction() {
        lines.push(format!(
            "warning: {c}: the entries, not the declaration, say what ran"
        ));
    }
    lines
}

/// `measured by …` of the targets' line.
pub fn targets_measured_by(targets: &TargetTable) -> String {
    match &targets.runtime {
        Some(r) => format!("measured by {r}"),
        None => "runtime not stated".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlbench_schema::Scoring;
    use mlbench_schema::runtime::{RuntimeBasis, RuntimeTally};

    /// A classic report with a row for each of `benches` (expected, none present).
    fn report(benches: &[&str]) -> Report {
        let targets = TargetTable::builtin(Scoring::Classic, "RTX").unwrap();
        let set = SampleSet::assemble("fast", &targets, Vec::new(), |_, _| None);
        let expected = crate::Expected {
            from: crate::ExpectedFrom::Targets,
            jobs_file: None,
            benches: benches.iter().map(|b| (*b).to_owned()).collect(),
        };
        Report::Classic(crate::classic_report(&set, &targets, &expected, 1).unwrap())
    }

    fn mlbench_run() -> SubmissionRuntime {
        resolve(
            &[],
            RuntimeTally {
                mlbench_run: 3,
                ..RuntimeTally::default()
            },
        )
    }

    #[test]
    fn mixed_entries_and_a_contradicted_declaration_are_warned_of() {
        let tally = |suite_scripts, mlbench_run| RuntimeTally {
            suite_scripts,
            mlbench_run,
            unknown: 0,
        };
        let declared = [Runtime::mlbench_run(Some("2.13.0".into()))];
        let lines = runtime_warnings(&resolve(&declared, tally(175, 175)));
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].starts_with("warning: mixed runtimes: 175 entries written by the mila-iqia/training scripts, 175 by mlbench run: "),
            "{}",
            lines[0]
        );
        assert_eq!(
            lines[1],
            "warning: system.json declares mlbench run, libtorch 2.13.0, contradicted by 175 entries written by the mila-iqia/training scripts: the entries, not the declaration, say what ran"
        );
        // One runtime, declared or not: nothing to warn of.
        assert!(runtime_warnings(&resolve(&declared, tally(0, 3))).is_empty());
        assert!(runtime_warnings(&resolve(&[], tally(1, 0))).is_empty());
        let one = runtime_warnings(&resolve(&declared, tally(1, 0)));
        assert_eq!(one.len(), 1);
        assert!(
            one[0].contains("contradicted by 1 entry written by the mila-iqia/training scripts"),
            "{}",
            one[0]
        );
    }

    #[test]
    fn a_mismatch_lists_every_bench_with_its_parity() {
        let targets = TargetTable::builtin(Scoring::Classic, "RTX").unwrap();
        let parity =
            ParityTable::from_toml("parity.toml", "[[bench]]\nname = \"vae\"\nratio = 2.25\nmeasured_on = \"CPU, 1 core\"\ndate = \"2026-12-03\"\n")
                .unwrap();
        let (runtimes, mismatch) =
            report_runtimes(mlbench_run(), &targets, &report(&["atari", "vae"]), &parity);
        let m = mismatch.expect("a mismatch");
        assert_eq!(m.submission, "mlbench run (libtorch version unknown)");
        assert_eq!(
            m.targets,
            "mila-iqia/training scripts (torch version unknown)"
        );
        let parities: Vec<(&str, Option<f64>)> = m
            .benches
            .iter()
            .map(|b| (b.bench.as_str(), b.parity))
            .collect();
        assert_eq!(parities, [("atari", None), ("vae", Some(2.25))]);
        let lines = runtime_notes(&runtimes, Some(&m));
        assert_eq!(
            lines[0],
            "runtime: mlbench run (libtorch version unknown) (inferred from the entries: 3 of 3)"
        );
        assert!(
            lines[1].ends_with("(mlbench run ÷ mila-iqia/training scripts, items/s on the machine and day named, parity.toml; a measurement, not a correction): vae 2.25 (CPU, 1 core, 2026-12-03); unknown for 1 other bench"),
            "{}",
            lines[1]
        );
        // The same runtime, or an unknown one on either side: no mismatch.
        let scripts = resolve(
            &[],
            RuntimeTally {
                suite_scripts: 1,
                ..RuntimeTally::default()
            },
        );
        assert!(
            report_runtimes(scripts, &targets, &report(&["vae"]), &parity)
                .1
                .is_none()
        );
        let unknown = resolve(&[], RuntimeTally::default());
        assert_eq!(unknown.basis, RuntimeBasis::Unknown);
        assert!(
            report_runtimes(unknown, &targets, &report(&["vae"]), &parity)
                .1
                .is_none()
        );
        let mut csv = targets.clone();
        csv.runtime = None;
        let (runtimes, none) = report_runtimes(mlbench_run(), &csv, &report(&["vae"]), &parity);
        assert!(none.is_none() && runtimes.targets.is_none());
        assert_eq!(targets_measured_by(&csv), "runtime not stated");
        assert_eq!(
            targets_measured_by(&targets),
            "measured by mila-iqia/training scripts (torch version unknown)"
        );
        let (_, m) = report_runtimes(
            mlbench_run(),
            &targets,
            &report(&["atari"]),
            &ParityTable::default(),
        );
        let lines = runtime_notes(&runtimes, m.as_ref());
        assert!(
            lines[1].ends_with(": unknown for every bench"),
            "{}",
            lines[1]
        );
    }
}
