//! One contract for every command: the submission is positional (the older flags are
//! hidden aliases), flags mean the same everywhere, nothing lands in the current folder
//! by default, suggestions come from what is there, colour only on a terminal.

use crate::fixtures::{copy_tree, example_dir, mlbench};
use predicates::str::contains;

fn stdout_of(args: &[&str]) -> String {
    let out = mlbench().args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

/// `grid` and `plot` read positionals, and the flags other commands once used.
#[test]
fn every_reader_takes_the_submission_first_and_the_old_flags_too() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    copy_tree(&example_dir(), &a);
    copy_tree(&example_dir(), &b);
    let (a, b) = (a.display().to_string(), b.display().to_string());
    let grid = |args: &[&str]| {
        let mut all = vec!["grid", "-f", "json", "--resamples", "20"];
        all.extend(args);
        stdout_of(&all)
    };
    let positional = grid(&[&a, &b]);
    assert_eq!(positional, grid(&["--from", &a, &b]));
    assert_eq!(positional, grid(&["-r", &a, &b]));
    let validate = stdout_of(&["validate", &a, "-f", "json"]);
    assert_eq!(
        validate,
        stdout_of(&["validate", "--reports", &a, "-f", "json"])
    );
}

/// `plot` writes into a named folder, never the current one; `-o` is not for it.
#[test]
fn plot_writes_into_a_named_folder_by_default() {
    let cwd = tempfile::tempdir().unwrap();
    mlbench()
        .current_dir(cwd.path())
        .args(["plot", "runs", "-g", "RTX", "-f", "svg"])
        .arg(example_dir())
        .assert()
        .success()
        .stderr(contains("1 file in mlbench-plots"));
    let top: Vec<String> = std::fs::read_dir(cwd.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(top, ["mlbench-plots"]);
    assert!(cwd.path().join("mlbench-plots/runs-example.svg").is_file());
    mlbench()
        .current_dir(cwd.path())
        .args(["plot", "loss", "-o", "x.png"])
        .arg(example_dir())
        .assert()
        .code(2)
        .stderr(contains(
            "-o/--output x.png: plot writes several files; give the folder with --out-dir DIR",
        ));
}

/// `--gpu-model` is alike in `report` and `plot`: required where targets are drawn,
/// never defaulted; `plot --targets` reads a file as `report --targets` does.
#[test]
fn gpu_model_and_targets_alike_in_report_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    mlbench()
        .args(["plot", "runs"])
        .arg(example_dir())
        .arg("--out-dir")
        .arg(dir.path().join("p"))
        .assert()
        .code(2)
        .stderr(contains("--gpu-model <MODEL>"));
    let targets = dir.path().join("t.csv");
    std::fs::write(&targets, "bench,V100,MI50,RTX\natari,6.61,1.24,5.41\n").unwrap();
    mlbench()
        .args(["plot", "runs", "-f", "svg", "-g", "H100", "--targets"])
        .arg(&targets)
        .arg(example_dir())
        .arg("--out-dir")
        .arg(dir.path().join("p"))
        .assert()
        .code(2)
        .stderr(contains("H100"));
    mlbench()
        .args(["plot", "runs", "-f", "svg", "-g", "MI50", "--targets"])
        .arg(&targets)
        .arg(example_dir())
        .arg("--out-dir")
        .arg(dir.path().join("q"))
        .assert()
        .success();
    // An unknown model: the hint names the flag each command has.
    let out_dir = dir.path().join("r").display().to_string();
    for command in [&["report"][..], &["plot", "runs", "--out-dir", &out_dir]] {
        mlbench()
            .args(command)
            .arg(example_dir())
            .args(["-g", "H100"])
            .assert()
            .code(2)
            .stderr(contains(
                "hint: give your own targets with --targets FILE (TOML or the suite's CSV)",
            ));
    }
}

/// Shell completion offers the built-in GPU models for `--gpu-model`, not file names;
/// the man page names no page that is not written; `run` is there in every build.
#[test]
fn completion_man_and_run_in_every_build() {
    let bash = stdout_of(&["completions", "bash"]);
    let at = bash
        .find("--gpu-model)")
        .expect("--gpu-model in the bash script");
    let case = &bash[at..at + 200];
    assert!(case.contains("compgen -W \"V100 MI50 RTX\""), "{case}");
    assert!(!case.contains("compgen -f"), "{case}");
    let man = stdout_of(&["man"]);
    assert!(!man.contains("help(1)"), "no mlbench-help page is written");
    assert!(man.contains("mlbench\\-run(1)"));
    let dir = tempfile::tempdir().unwrap();
    mlbench()
        .args(["man", "--out-dir"])
        .arg(dir.path())
        .assert()
        .success();
    // The pages are there: a second run refuses to replace them without --force.
    mlbench()
        .args(["man", "--out-dir"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(contains(
            ".1: already exists; not overwriting it (use --force to replace it)",
        ));
    mlbench()
        .args(["man", "--force", "--out-dir"])
        .arg(dir.path())
        .assert()
        .success();
    // An --out-dir that does not exist yet is made, parents included, as the README's
    // `mlbench man --out-dir ~/.local/share/man/man1` needs.
    let deep = dir.path().join("out/man");
    mlbench()
        .args(["man", "--out-dir"])
        .arg(&deep)
        .assert()
        .success();
    assert!(deep.join("mlbench.1").is_file() && deep.join("mlbench-report.1").is_file());
    // `run --help` lists run's options in every build; a build without the runner says so
    // there, and any run it is asked for is exit 2 with how to build one.
    let help = stdout_of(&["run", "--help"]);
    for option in [
        "--jobs <FILE>",
        "--repeat-suite <K>",
        "--idle-baseline <DURATION>",
        "--pack",
    ] {
        assert!(help.contains(option), "{option} in:\n{help}");
    }
    #[cfg(not(feature = "runner"))]
    {
        assert!(help.contains("Not in this build") && help.contains("--features runner"));
        for args in [
            &["run", "--jobs", "baselines/jobs/fast.json"][..],
            &["run"][..],
        ] {
            mlbench()
                .args(args)
                .assert()
                .code(2)
                .stderr(contains("built without the runner"))
                .stderr(contains("--features runner"));
        }
    }
    #[cfg(feature = "runner")]
    assert!(!help.contains("Not in this build"), "{help}");
}

/// An `sd_target` written as a percentage (5 for 5 %) is used as given, with a warning.
#[test]
fn a_percentage_sd_target_is_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let targets = dir.path().join("t.csv");
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/mila-training/report/target_rtx.csv"),
    )
    .unwrap()
    .replace("atari,5.00,0.5,0.05", "atari,5.00,0.5,5");
    assert!(text.contains("atari,5.00,0.5,5\n"), "{text}");
    std::fs::write(&targets, text).unwrap();
    mlbench()
        .arg("report")
        .arg(example_dir())
        .args(["-g", "RTX", "--scoring", "score", "-f", "json", "--targets"])
        .arg(&targets)
        .assert()
        .success()
        .stderr(contains(
            "bench `atari`: sd_target 5 allows an sd of 500% of the mean; the suite writes it as a fraction (0.05 for 5%)",
        ));
}

/// Verdicts are coloured on a terminal only, and never with `NO_COLOR`.
#[test]
fn verdicts_coloured_on_a_terminal_only() {
    let exe = assert_cmd::cargo::cargo_bin("mlbench");
    let line = format!(
        "{} report {} -g RTX",
        exe.display(),
        example_dir().display()
    );
    let on_terminal = |no_color: Option<&str>| {
        // `script` gives the command a pseudo-terminal and copies what it printed.
        let mut cmd = std::process::Command::new("script");
        cmd.args(["-qec", &line, "/dev/null"])
            .env_remove("NO_COLOR");
        if let Some(v) = no_color {
            cmd.env("NO_COLOR", v);
        }
        cmd.output().ok().filter(|o| o.status.success())
    };
    let Some(coloured) = on_terminal(None) else {
        eprintln!("no `script` (util-linux) here: skipped");
        return;
    };
    let text = String::from_utf8_lossy(&coloured.stdout);
    assert!(text.contains("\x1b[1;32mPASS\x1b[0m"), "{text}");
    let plain = on_terminal(Some("1")).unwrap();
    assert!(!String::from_utf8_lossy(&plain.stdout).contains('\x1b'));
    let piped = stdout_of(&["report", &example_dir().display().to_string(), "-g", "RTX"]);
    assert!(piped.contains("PASS") && !piped.contains('\x1b'));
}

/// A suite name with a typo: every command that reads a submission says which suites are
/// there and the likely one, and exits 2 (`validate` after writing its findings).
#[test]
fn a_mistyped_suite_is_named_with_the_likely_one() {
    let message =
        "no report files of suite `fsat` found (suites present: fast); did you mean `fast`?";
    let ex = example_dir().display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let plots = dir.path().join("p").display().to_string();
    for args in [
        &["validate", &ex, "--name", "fsat"][..],
        &["report", &ex, "-g", "RTX", "--name", "fsat"],
        &["grid", &ex, &ex, "--name", "fsat"],
        &["plot", "loss", &ex, "--name", "fsat", "--out-dir", &plots],
    ] {
        mlbench()
            .args(args)
            .assert()
            .code(2)
            .stderr(contains(message));
    }
}
