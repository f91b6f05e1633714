//! The command-line surface: exit codes (docs/exit-codes.md) and help.

use crate::fixtures::{example_dir, mlbench};

/// An output that cannot be written is exit 3, and names the file; nothing is left behind.
/// A destination that is wrong before the work (no such folder, a folder, a device, a
/// file in the way of a folder) is exit 2, found before anything is read.
#[test]
fn unwritable_output_is_exit_3_and_a_wrong_destination_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let report = |output: &std::path::Path, force: bool| {
        let mut cmd = mlbench();
        cmd.arg("report")
            .arg(example_dir())
            .args(["--gpu-model", "RTX", "--format", "json", "--output"])
            .arg(output);
        if force {
            cmd.arg("--force");
        }
        cmd.assert()
    };
    let too_long = dir.path().join(format!("{}.json", "n".repeat(300)));
    let err = report(&too_long, false).code(3).get_output().stderr.clone();
    let err = String::from_utf8(err).unwrap();
    assert!(
        err.contains(&format!("error: {}: cannot write", too_long.display())),
        "{err}"
    );
    let missing = dir.path().join("no/such/folder/report.json");
    report(&missing, false)
        .code(2)
        .stderr(predicates::str::contains(format!(
            "error: {}: no such folder (create it first)",
            dir.path().join("no/such/folder").display()
        )));
    // A folder, even with --force: refused before the work, not "Is a directory" after.
    report(dir.path(), true)
        .code(2)
        .stderr(predicates::str::contains("is a folder; give a file name"));
    report(std::path::Path::new("/dev/null"), true)
        .code(2)
        .stderr(predicates::str::contains(
            "/dev/null: is a device, not a regular file; mlbench writes only regular files and never replaces anything else",
        ));
    // A plot folder under a file: refused before the work.
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "x").unwrap();
    mlbench()
        .args(["plot", "runs", "--gpu-model", "RTX"])
        .arg(example_dir())
        .arg("--out-dir")
        .arg(blocker.join("charts"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "{}: is not a folder",
            blocker.display()
        )));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// Standard output that cannot be written (a full disk) is exit 3 too; a closed pipe is 0.
#[test]
fn unwritable_standard_output_is_exit_3() {
    let Ok(full) = std::fs::File::create("/dev/full") else {
        eprintln!("no /dev/full here: skipped");
        return;
    };
    let status = std::process::Command::new(assert_cmd::cargo::cargo_bin("mlbench"))
        .args(["report", "--gpu-model", "RTX", "--reports"])
        .arg(example_dir())
        .stdout(full)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(3));
}

/// Refusing to replace a file stays a usage error (2), with the one message.
#[test]
fn refusal_is_exit_2_with_one_message() {
    let dir = tempfile::tempdir().unwrap();
    let existing = dir.path().join("r.json");
    std::fs::write(&existing, "keep").unwrap();
    mlbench()
        .args(["report", "--gpu-model", "RTX", "--reports"])
        .arg(example_dir())
        .arg("--output")
        .arg(&existing)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "{}: already exists; not overwriting it (use --force to replace it)",
            existing.display()
        )));
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep");
}

/// Every command's help has one exit paragraph, with codes 2 and 3, and says where the
/// exit codes are.
#[test]
fn every_help_points_to_the_exit_codes() {
    for command in [
        &[][..],
        &["report"],
        &["validate"],
        &["pack"],
        &["grid"],
        &["plot"],
        &["completions"],
        &["man"],
    ] {
        let out = mlbench()
            .args(command)
            .arg("--help")
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let help = String::from_utf8(out).unwrap();
        assert!(help.contains("docs/exit-codes.md"), "{command:?}: {help}");
        assert_eq!(
            help.matches("Exit status").count(),
            1,
            "{command:?}: {help}"
        );
        if command.is_empty() {
            assert!(help.contains("3 an output that could not be written"));
        } else {
            assert!(
                help.contains("\n  2  ") && help.contains("\n  3  "),
                "{help}"
            );
        }
    }
}

/// Folders are `--out-dir` on every command; `--out`, the old spelling, still works.
#[test]
fn out_dir_and_its_old_spelling() {
    let dir = tempfile::tempdir().unwrap();
    for (flag, sub) in [("--out-dir", "new"), ("--out", "old")] {
        let out = dir.path().join(sub);
        mlbench()
            .args([
                "plot",
                "runs",
                "--gpu-model",
                "RTX",
                "--format",
                "svg",
                "--from",
            ])
            .arg(example_dir())
            .arg(flag)
            .arg(&out)
            .assert()
            .success();
        assert_eq!(
            std::fs::read_dir(&out).unwrap().count(),
            1,
            "{flag}: one chart, runs-example.svg"
        );
    }
    let help = mlbench().args(["plot", "--help"]).assert().success();
    let text = String::from_utf8(help.get_output().stdout.clone()).unwrap();
    assert!(text.contains("--out-dir <DIR>"), "{text}");
    assert!(
        !text.contains("--out <DIR>"),
        "the old spelling is hidden: {text}"
    );
}

/// Completion scripts and man pages know every command.
#[test]
fn completions_and_man_pages() {
    let commands = ["report", "validate", "pack", "grid", "plot"];
    for shell in ["bash", "zsh", "fish"] {
        let out = mlbench().args(["completions", shell]).assert().success();
        let script = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        for c in commands {
            assert!(script.contains(c), "{shell}: no {c}");
        }
        assert!(script.contains("out-dir"), "{shell}: no --out-dir");
    }
    let out = mlbench().arg("man").assert().success();
    let page = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(page.starts_with(".ie"), "roff: {}", &page[..40]);
    for c in commands {
        assert!(
            page.contains(&format!("mlbench\\-{c}(1)")),
            "no {c} in the page"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    mlbench()
        .args(["man", "--out-dir"])
        .arg(dir.path())
        .assert()
        .success();
    for c in commands {
        assert!(dir.path().join(format!("mlbench-{c}.1")).is_file(), "{c}");
    }
    mlbench().args(["completions", "tcsh"]).assert().code(2);
}

/// The repository's source, for the structural checks below.
fn source(path: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const COMMANDS: [&str; 8] = [
    "report", "validate", "pack", "grid", "plot", "targets", "run", "docs",
];

#[test]
fn no_command_module_imports_another() {
    for cmd in COMMANDS {
        let text = source(&format!("src/cmd/{cmd}.rs"));
        for other in COMMANDS.iter().filter(|o| **o != cmd) {
            for path in [format!("super::{other}"), format!("cmd::{other}")] {
                assert!(
                    !text.contains(&path),
                    "src/cmd/{cmd}.rs refers to {path}: commands share through cmd/mod.rs or a library"
                );
            }
        }
    }
}

#[test]
fn the_models_and_exporters_compile_neither_polars_nor_clap() {
    for manifest in ["results/Cargo.toml", "export/Cargo.toml"] {
        let text = source(manifest);
        let deps = text.split("[dependencies]").nth(1).unwrap_or_default();
        for banned in ["polars", "clap", "mlbench-analyzer"] {
            assert!(!deps.contains(banned), "{manifest} depends on {banned}");
        }
    }
}

#[test]
fn the_binary_stays_glue() {
    // Lines of code (not blank, not comments), tests aside, of every module of src/.
    let mut files = vec![
        "src/main.rs",
        "src/cli.rs",
        "src/exit.rs",
        "src/output.rs",
        "src/cmd/mod.rs",
        "src/cmd/checks.rs",
    ];
    let cmds: Vec<String> = COMMANDS.iter().map(|c| format!("src/cmd/{c}.rs")).collect();
    files.extend(cmds.iter().map(String::as_str));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut on_disk: Vec<String> = Vec::new();
    for sub in ["src", "src/cmd"] {
        for entry in std::fs::read_dir(dir.join(sub)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs") {
                on_disk.push(format!(
                    "{sub}/{}",
                    path.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    on_disk.sort();
    let mut listed: Vec<String> = files.iter().map(|f| (*f).to_owned()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "a module was added to src/: count it here");
    let code: usize = files
        .iter()
        .map(|f| {
            source(f)
                .split("\n#[cfg(test)]")
                .next()
                .unwrap_or_default()
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("//"))
                .count()
        })
        .sum();
    // The first budget was 1,500; one contract for every command added the typed exit policy
    // (every error a command can end with as a variant with its code, about 250 lines in
    // src/exit.rs) and the one input convention. What is not glue goes to a library (where
    // files are written: mlbench_schema::destination). `mlbench run` doing the scripts' work
    // added a command, `targets`, and the runtime flags and errors (about 90 lines); one
    // home per concept moved the flags' words out of the libraries into the binary's hints. How many runs added `run --until`, locally and
    // as Slurm batches, and `report --precision` (about 105 lines of glue: the rule, its
    // record and its line live in analyzer::until and the exporters). Data parallelism added
    // `run --across-nodes` (the flag, where ranks start, about 15 lines; the launching is
    // mlbench_runner::copies) and one home per concept moved the runner's flag words into the
    // binary's messages and hints (about 15). Telemetry added `run --sample-hz` and
    // `--idle-baseline` (the two flags, passed on to the copies and to Slurm's nodes, and
    // the telemetry lines printed above the progress bar: about 13 lines; the sampling,
    // the idle baseline and the lines are mlbench_runner::telemetry). One home per concept's last
    // moves (findings as plain data in `results`: the binary hands the validator's rule catalogue
    // to the exporters; one page check for report and grid) cost about 8 more. Telemetry's
    // `plot power` (the kind, its help, its error and exit code, the branch that reads the
    // traces and says a line per device: about 15 lines; the reading and the lines are
    // mlbench_analyzer::energy::traces, the chart mlbench_export::charts::power_chart); energy in
    // `report` and `grid --per joule` (the flag, the two calls, the exit code of a
    // baseline without telemetry) cost 6; the pairing and scoring are
    // mlbench_analyzer::energy; the report page's power traces (one field, a warning
    // when they cannot be read: mlbench_analyzer::energy::page_traces) and `plot grid --per`
    // (the argument; the chart follows the grid's `per`) cost 9. A zipped submission's
    // energy in `report` (the loader hands back the energy of the files it read, the zip's
    // from the intake it holds: mlbench_analyzer::energy::submitted) cost 3. The page checks
    // moved to mlbench_validator::page and the page's inputs (a zip read once) to
    // mlbench_analyzer::page: 24 fewer. `run --help` listing run's options in a build
    // without the runner (its help text shared by both builds, the note of how to build one
    // after a usage error) and `man --out-dir` making its folder cost 15. Outputs that are
    // never an input (each path argument but the outputs handed once to
    // mlbench_schema::destination::guard_inputs) and chart files under safe names
    // (mlbench_schema::destination::safe_file_name) cost 9.
    assert!(
        code <= 2198,
        "the binary has {code} lines of code (at most 2,198: the budget and each addition above)"
    );
}
