//! Every command on each exit case docs/exit-codes.md documents for it: one table of
//! invocations, each with the code it must end with. The test also reads the page's
//! table, so a code documented for a command without a case here fails it.

use crate::fixtures::{copy_tree, example_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where standard output goes.
#[derive(Clone, Copy, PartialEq)]
enum Stdout {
    /// Kept (and discarded).
    Piped,
    /// A full disk: `/dev/full` (writes fail with ENOSPC).
    Full,
}

struct Case {
    command: &'static str,
    code: i32,
    what: &'static str,
    args: Vec<String>,
    stdout: Stdout,
    env: Option<(&'static str, &'static str)>,
}

/// The folder every case works in: the example, a copy of it as a second vendor, an
/// empty folder, a file that is not a zip, a jobs-free targets file that fails.
struct Place {
    dir: tempfile::TempDir,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(&example_dir(), &dir.path().join("vendorb"));
        // Three runs of the four validation asks for: a baseline that fails.
        let failing = dir.path().join("failing");
        copy_tree(&example_dir(), &failing);
        for run in ["output3", "output4"] {
            std::fs::remove_dir_all(failing.join(run)).unwrap();
        }
        std::fs::create_dir(dir.path().join("empty")).unwrap();
        std::fs::write(dir.path().join("notzip.zip"), "not a zip\n").unwrap();
        std::fs::write(dir.path().join("existing.json"), "keep\n").unwrap();
        // A store holding a zip its index does not know (`archive check` names it).
        let stray = dir.path().join("store-stray/zips/sha256/00");
        std::fs::create_dir_all(&stray).unwrap();
        std::fs::write(stray.join("00.zip"), "x").unwrap();
        // A store of one round and its site; a copy of each with one byte changed.
        let (store, site) = (dir.path().join("hstore"), dir.path().join("hsite"));
        let ok = |cmd: &mut assert_cmd::Command| assert!(cmd.output().unwrap().status.success());
        ok(crate::fixtures::mlbench()
            .arg("archive")
            .arg("--store")
            .arg(&store)
            .args(["add", "2026"])
            .arg(example_dir()));
        ok(crate::fixtures::mlbench()
            .arg("publish")
            .arg("--store")
            .arg(&store)
            .arg("--out")
            .arg(&site)
            .args(["--resamples", "20"]));
        copy_tree(&store, &dir.path().join("hstore-bad"));
        copy_tree(&site, &dir.path().join("hsite-bad"));
        for root in ["hstore-bad/zips", "hsite-bad/zips"] {
            let mut stack = vec![dir.path().join(root)];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(d).unwrap() {
                    let p = e.unwrap().path();
                    if p.is_dir() {
                        stack.push(p);
                    } else {
                        let mut bytes = std::fs::read(&p).unwrap();
                        bytes[20] ^= 1;
                        std::fs::write(&p, bytes).unwrap();
                    }
                }
            }
        }
        // One tiny job for `run` (toy_reg: 12 observations of 2 batches of 16).
        std::fs::write(
            dir.path().join("tiny.json"),
            r#"[{"name": "toy_reg", "cmd": "./regression/polynome/pytorch/run.sh",
  "args": {"--repeat": 12, "--number": 2, "--batch-size": 16, "--cuda": ""}, "cgroup": "student"}]"#,
        )
        .unwrap();
        // The suite's classic targets with RTX doubled: every bench is far below them.
        let data = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mila-training/report/data.csv"),
        )
        .unwrap();
        let doubled: String = data
            .lines()
            .enumerate()
            .map(|(i, line)| {
                if i == 0 {
                    return format!("{line}\n");
                }
                let mut cells: Vec<String> = line.split(',').map(str::to_owned).collect();
                let rtx: f64 = cells[3].parse().unwrap();
                cells[3] = format!("{}", rtx * 2.0);
                format!("{}\n", cells.join(","))
            })
            .collect();
        std::fs::write(dir.path().join("high.csv"), doubled).unwrap();
        Place { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    /// A file name too long for the file system: checks pass, the write fails.
    fn too_long(&self, ext: &str) -> String {
        self.path(&format!("{}.{ext}", "n".repeat(300)))
    }
}

fn example() -> String {
    example_dir().display().to_string()
}

fn case(command: &'static str, code: i32, what: &'static str, args: &[&str]) -> Case {
    Case {
        command,
        code,
        what,
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        stdout: Stdout::Piped,
        env: None,
    }
}

fn full(mut c: Case) -> Case {
    c.stdout = Stdout::Full;
    c
}

fn cases(p: &Place) -> Vec<Case> {
    let ex = example();
    let (b, empty, notzip) = (p.path("vendorb"), p.path("empty"), p.path("notzip.zip"));
    let existing = p.path("existing.json");
    let out = |name: &str| p.path(name);
    vec![
        case("report", 0, "report", &["report", &ex, "-g", "RTX"]),
        case(
            "report",
            1,
            "--check fails",
            &[
                "report",
                &ex,
                "-g",
                "RTX",
                "--check",
                "--targets",
                &p.path("high.csv"),
            ],
        ),
        case("report", 2, "no --gpu-model", &["report", &ex]),
        case(
            "validate",
            2,
            "--max-ratio 0 (clap's bound)",
            &["validate", &ex, "--max-ratio", "0"],
        ),
        case(
            "run",
            2,
            "--repeat-suite 0 (clap's bound)",
            &["run", "--jobs", "j.json", "--repeat-suite", "0"],
        ),
        case("report", 2, "not a zip", &["report", &notzip, "-g", "RTX"]),
        case(
            "report",
            2,
            "no report file",
            &["report", &empty, "-g", "RTX"],
        ),
        case(
            "report",
            2,
            "output exists",
            &["report", &ex, "-g", "RTX", "-o", &existing],
        ),
        full(case(
            "report",
            3,
            "stdout full",
            &["report", &ex, "-g", "RTX"],
        )),
        case(
            "report",
            3,
            "file not written",
            &["report", &ex, "-g", "RTX", "-o", &p.too_long("json")],
        ),
        case("validate", 0, "clean", &["validate", &ex]),
        case(
            "validate",
            1,
            "errors",
            &["validate", &ex, "--min-runs", "10"],
        ),
        case("validate", 2, "not a zip", &["validate", &notzip]),
        case("validate", 2, "no report file", &["validate", &empty]),
        case(
            "validate",
            2,
            "output a folder",
            &["validate", &ex, "-o", &empty, "--force"],
        ),
        full(case(
            "validate",
            3,
            "stdout full",
            &["validate", &ex, "-f", "json"],
        )),
        case("pack", 0, "packed", &["pack", &ex, "-o", &out("a.zip")]),
        case(
            "pack",
            1,
            "errors",
            &["pack", &ex, "--min-runs", "10", "-o", &out("b.zip")],
        ),
        case(
            "pack",
            2,
            "not a folder",
            &["pack", &notzip, "-o", &out("c.zip")],
        ),
        case(
            "pack",
            2,
            "no report file",
            &["pack", &empty, "-o", &out("d.zip"), "--allow-errors"],
        ),
        case("pack", 2, "zip exists", &["pack", &ex, "-o", &existing]),
        case(
            "pack",
            3,
            "zip not written",
            &["pack", &ex, "-o", &p.too_long("zip")],
        ),
        case("grid", 0, "grid", &["grid", &ex, &b, "--resamples", "10"]),
        case("grid", 2, "not a zip", &["grid", &ex, &notzip]),
        case("grid", 2, "no report file", &["grid", &ex, &empty]),
        full(case(
            "grid",
            3,
            "stdout full",
            &["grid", &ex, &b, "--resamples", "10"],
        )),
        case(
            "plot",
            0,
            "charts",
            &[
                "plot",
                "runs",
                &ex,
                "-g",
                "RTX",
                "-f",
                "svg",
                "--out-dir",
                &out("p0"),
            ],
        ),
        case(
            "plot",
            2,
            "no --gpu-model",
            &["plot", "runs", &ex, "--out-dir", &out("p1")],
        ),
        case(
            "plot",
            2,
            "not a zip",
            &["plot", "loss", &notzip, "--out-dir", &out("p2")],
        ),
        case(
            "plot",
            2,
            "one host",
            &["plot", "fleet", &ex, "--out-dir", &out("p3")],
        ),
        case(
            "plot",
            2,
            "out-dir a file",
            &["plot", "loss", &ex, "--out-dir", &existing],
        ),
        case(
            "plot",
            3,
            "chart not written",
            &[
                "plot",
                "runs",
                &ex,
                "-g",
                "RTX",
                "-f",
                "svg",
                // The folder's name is too long (a label no longer makes a chart's
                // file name too long: names are made safe and bounded).
                "--out-dir",
                &p.too_long("plots"),
            ],
        ),
        case("targets", 0, "targets", &["targets", &ex, "-g", "H100"]),
        case(
            "targets",
            1,
            "failing baseline",
            &["targets", &p.path("failing"), "-g", "H100"],
        ),
        case(
            "targets",
            2,
            "bad date",
            &["targets", &ex, "-g", "H100", "--date", "soon"],
        ),
        case(
            "targets",
            2,
            "not a zip",
            &["targets", &notzip, "-g", "H100"],
        ),
        case(
            "targets",
            2,
            "output exists",
            &["targets", &ex, "-g", "H100", "-o", &existing],
        ),
        full(case(
            "targets",
            3,
            "stdout full",
            &["targets", &ex, "-g", "H100"],
        )),
        case("completions", 0, "bash", &["completions", "bash"]),
        case("completions", 2, "unknown shell", &["completions", "tcsh"]),
        full(case(
            "completions",
            3,
            "stdout full",
            &["completions", "bash"],
        )),
        case(
            "data",
            0,
            "prepare",
            &[
                "data",
                "prepare",
                &out("data"),
                "--bench",
                "toy_lstm",
                "--smoke",
            ],
        ),
        case(
            "data",
            2,
            "unknown bench",
            &["data", "prepare", &out("data2"), "--bench", "scaling"],
        ),
        case(
            "data",
            3,
            "DIR under a file",
            &[
                "data",
                "prepare",
                &format!("{notzip}/d"),
                "--bench",
                "vae",
                "--smoke",
            ],
        ),
        full(case(
            "data",
            3,
            "stdout full",
            &[
                "data",
                "prepare",
                &out("data3"),
                "--bench",
                "toy_lstm",
                "--smoke",
            ],
        )),
        case(
            "archive",
            0,
            "list",
            &["archive", "--store", &out("store"), "list"],
        ),
        case(
            "archive",
            1,
            "check: a zip not indexed",
            &["archive", "--store", &out("store-stray"), "check"],
        ),
        case(
            "archive",
            2,
            "no such entry",
            &["archive", "--store", &out("store"), "show", "99"],
        ),
        case(
            "archive",
            3,
            "store under a file",
            &["archive", "--store", &format!("{existing}/store"), "list"],
        ),
        case(
            "history",
            0,
            "a history",
            &["history", "--store", &out("hstore")],
        ),
        case(
            "history",
            1,
            "a zip changed",
            &["history", "--store", &out("hstore-bad")],
        ),
        case("history", 2, "no store", &["history", "--store", &empty]),
        case(
            "history",
            3,
            "output not made",
            &[
                "history",
                "--store",
                &out("hstore"),
                "-o",
                &p.too_long("json"),
            ],
        ),
        case(
            "publish",
            0,
            "a site",
            &[
                "publish",
                "--store",
                &out("hstore"),
                "--out",
                &out("site-new"),
                "--resamples",
                "20",
            ],
        ),
        case(
            "publish",
            1,
            "a zip changed",
            &[
                "publish",
                "--store",
                &out("hstore-bad"),
                "--out",
                &out("site-bad"),
            ],
        ),
        case(
            "publish",
            2,
            "out not empty",
            &["publish", "--store", &out("hstore"), "--out", &b],
        ),
        case(
            "publish",
            3,
            "out under a file",
            &[
                "publish",
                "--store",
                &out("hstore"),
                "--out",
                &format!("{existing}/site"),
            ],
        ),
        case("verify", 0, "as its zips say", &["verify", &out("hsite")]),
        case("verify", 1, "a zip changed", &["verify", &out("hsite-bad")]),
        case("verify", 2, "no site", &["verify", &empty]),
        case("man", 0, "page", &["man"]),
        case("man", 2, "out-dir a file", &["man", "--out-dir", &existing]),
        full(case("man", 3, "stdout full", &["man"])),
        #[cfg(not(feature = "runner"))]
        case(
            "run",
            2,
            "no runner in this build",
            &["run", "--jobs", "x.json"],
        ),
    ]
    .into_iter()
    .chain(run_cases(p))
    .collect()
}

#[cfg(not(feature = "runner"))]
fn run_cases(_: &Place) -> Vec<Case> {
    Vec::new()
}

/// `run`'s codes (feature `runner`): a run, a copy that dies, bad arguments, an output
/// folder that cannot be made.
#[cfg(feature = "runner")]
fn run_cases(p: &Place) -> Vec<Case> {
    let jobs = p.path("tiny.json");
    let run = |out: &str| -> Vec<String> {
        [
            "run",
            "--jobs",
            &jobs,
            "--devices",
            "2",
            "--idle-baseline",
            "0",
            "--out-dir",
            out,
        ]
        .iter()
        .map(|a| (*a).to_owned())
        .collect()
    };
    let with = |mut c: Case, args: Vec<String>| {
        c.args = args;
        c
    };
    let mut died = with(case("run", 1, "a copy dies", &[]), run(&p.path("r1")));
    died.env = Some(("MLBENCH_TEST_ABORT_COPY", "0:0:1"));
    let mut zero = run(&p.path("r2"));
    zero.extend(["--repeat-suite".into(), "0".into()]);
    vec![
        with(case("run", 0, "ran", &[]), run(&p.path("r0"))),
        died,
        with(case("run", 2, "no run", &[]), zero),
        with(
            case("run", 2, "out-dir a file", &[]),
            run(&p.path("existing.json")),
        ),
        with(
            case("run", 3, "output not made", &[]),
            run(&p.too_long("d")),
        ),
    ]
}

fn run(case: &Case) -> (i32, String) {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("mlbench"));
    command
        .args(&case.args)
        .env_remove("RUST_BACKTRACE")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    if let Some((key, value)) = case.env {
        command.env(key, value);
    }
    match case.stdout {
        Stdout::Piped => command.stdout(Stdio::null()),
        Stdout::Full => command.stdout(std::fs::File::create("/dev/full").unwrap()),
    };
    let out = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), stderr)
}

#[test]
fn every_command_ends_with_its_documented_code() {
    let place = Place::new();
    let cases = cases(&place);
    let mut wrong = Vec::new();
    for case in &cases {
        let (code, stderr) = run(case);
        if code != case.code {
            wrong.push(format!(
                "{} ({}): exit {code}, expected {}\n  {:?}\n  {}",
                case.command,
                case.what,
                case.code,
                case.args,
                stderr.trim()
            ));
        }
        if code >= 2 && case.code >= 2 {
            assert!(stderr.contains("error"), "{}: {stderr}", case.what);
            assert!(!stderr.contains("panicked"), "{}: {stderr}", case.what);
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Nothing was written by the refused or failed cases.
    for name in ["b.zip", "c.zip", "d.zip", "p1", "p2", "p3"] {
        assert!(!place.dir.path().join(name).exists(), "{name} was written");
    }
    assert_eq!(
        std::fs::read_to_string(place.dir.path().join("existing.json")).unwrap(),
        "keep\n"
    );
    // The files that could not be written (a name too long) left no temporary file
    // beside them.
    let leftovers: Vec<PathBuf> = std::fs::read_dir(place.dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".mlbench-"))
        .collect();
    assert!(leftovers.is_empty(), "half-written files: {leftovers:?}");
}

/// Each code docs/exit-codes.md gives a command (a cell that is not `—`) has a case.
#[test]
fn every_documented_code_has_a_case() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/exit-codes.md"))
            .unwrap();
    let place = Place::new();
    let cases = cases(&place);
    let mut rows = 0;
    for line in docs.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let command = cells[0].trim_start_matches("| ").trim_matches('`');
        rows += 1;
        for (code, cell) in cells[1..].iter().enumerate() {
            if cell.trim_end_matches(" |").trim() == "—" {
                continue;
            }
            #[cfg(not(feature = "runner"))]
            if command == "run" && code != 2 {
                continue; // run's other codes: tests/cli/run.rs, with the runner built.
            }
            assert!(
                cases
                    .iter()
                    .any(|c| c.command == command && c.code == code as i32),
                "docs/exit-codes.md gives `{command}` exit {code}: no case here"
            );
        }
    }
    assert_eq!(rows, 14, "a row per command");
}
