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
        &["data"],
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

const COMMANDS: [&str; 11] = [
    "report", "validate", "pack", "grid", "plot", "targets", "run", "docs", "archive", "data",
    "site",
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

/// The runner never reaches the analyzer: a stopping rule is handed to it
/// (`mlbench_runner::session::Stopping`), whose `--until` the binary takes from the analyzer.
#[test]
fn the_runner_depends_on_no_analyzer() {
    let text = source("runner/Cargo.toml");
    let deps = text.split("[dependencies]").nth(1).unwrap_or_default();
    for banned in ["polars", "mlbench-analyzer", "mlbench-validator"] {
        assert!(
            !deps.contains(banned),
            "runner/Cargo.toml depends on {banned}"
        );
    }
}

/// The commands added since the budget was set at 1,500 lines for the eight before them.
const ADDED: [&str; 4] = ["archive", "history", "publish", "verify"];

/// `data prepare`'s lines, counted: its arguments in src/cli.rs, src/cmd/data.rs, and a
/// line each in main.rs, cmd/mod.rs and exit.rs (its summary and its logic are in
/// mlbench-datasets).
const DATA_PREPARE: usize = 47;

/// `report --by batch_size`'s and `plot batch-size`'s lines, counted: the argument and
/// the plot kind in src/cli.rs, the view's glue in src/cmd/report.rs (its exporter choice
/// made generic, the notes said in one place) and the plot's in src/cmd/plot.rs (the
/// figures are mlbench-analyzer's, their tables, CSV, JSON and chart mlbench-export's).
const BY_BATCH_SIZE: usize = 30;

/// `run --synthetic-data`'s and `run --profile`'s lines, counted: two arguments in
/// src/cli.rs and a line each passing them on in src/cmd/run.rs (what they do is
/// mlbench-runner's).
const RUN_DATA_AND_PROFILE: usize = 6;

/// What the binary's code may count: the budget of [`the_binary_stays_glue`], 1,500
/// lines, 165 for each command added since (its arguments and its glue),
/// [`DATA_PREPARE`], [`BY_BATCH_SIZE`] and [`RUN_DATA_AND_PROFILE`].
const BUDGET: usize =
    1500 + 165 * ADDED.len() + DATA_PREPARE + BY_BATCH_SIZE + RUN_DATA_AND_PROFILE;

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
    // The binary is glue: arguments → options → library calls → exporter → output, the
    // exit policy (each library classes its own errors: mlbench_schema::class) and the
    // hints in the command line's words. What is not glue lives in the library that owns
    // it: the run itself in mlbench_runner::session, where files go in
    // mlbench_schema::destination, every rule, model and figure in its crate
    // (docs/architecture.md); the help's prose is text in src/help/. The budget is 1,500
    // lines, 165 for each command added since, the 47 `data prepare` needs and the 30 of
    // `report --by batch_size`; it only goes down otherwise.
    assert!(
        code <= BUDGET,
        "the binary has {code} lines of code (at most {BUDGET}: the budget above)"
    );
}
