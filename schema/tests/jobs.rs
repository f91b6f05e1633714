//! Jobs files and the bench → script map, checked against the suite's own files in
//! `tests/data/mila-training/` (verbatim copies of mila-iqia/training blobs, PROVENANCE.md).

use mlbench_schema::jobs::{BUILTIN_JOBS, Job, JobsError, JobsFile, diff, looks_like_jobs};
use mlbench_schema::scripts::{ScriptMap, script_dir};
use mlbench_schema::{Value, pyjson};
use std::path::PathBuf;

fn reference(rel: &str) -> (String, Vec<u8>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data/mila-training")
        .join(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (rel.to_owned(), bytes)
}

fn parse_reference(rel: &str) -> JobsFile {
    let (name, bytes) = reference(rel);
    JobsFile::parse(&name, &bytes).unwrap()
}

const FAST: &str = "historic/profiles_fast.json@92b03cb_2019-10-28.json";
const APPENDIX_B: &str = "historic/baselines.json@6ce5994_2019-05-17_appendixB.json";
const FIRST: &str = "historic/baselines.json@fd9ee95_2019-04-07.json";

#[test]
fn builtin_files_are_the_suites_own() {
    for (name, rel, jobs) in [
        ("fast", FAST, 19),
        ("baselines", "profiles/baselines.json", 17),
        ("old_baselines", "profiles/old_baselines.json", 19),
    ] {
        assert!(BUILTIN_JOBS.contains(&name));
        let (_, bytes) = reference(rel);
        assert_eq!(JobsFile::builtin_bytes(name), Some(&bytes[..]), "{name}");
        let builtin = JobsFile::builtin(name).unwrap();
        assert_eq!(builtin, parse_reference(rel), "{name}");
        assert_eq!(builtin.jobs.len(), jobs, "{name}");
        assert_eq!(JobsFile::builtin(&format!("{name}.json")), Some(builtin));
    }
    assert_eq!(BUILTIN_JOBS.len(), 4);
    assert!(JobsFile::builtin("16go").is_none());
}

/// `runner` is `fast` cut to the benches mlbench's runner has models for: the same jobs,
/// in the same order, with the same arguments and cgroups.
#[test]
fn runner_jobs_are_fasts_own() {
    let fast = JobsFile::builtin("fast").unwrap();
    let runner = JobsFile::builtin("runner").unwrap();
    let names: Vec<&str> = runner.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "toy_reg",
            "toy_lstm",
            "vae",
            "reso",
            "wlm",
            "wlmfp16",
            "dcgan",
            "convnet",
            "convnet_fp16",
            "recom"
        ]
    );
    let in_fast: Vec<&Job> = fast
        .jobs
        .iter()
        .filter(|j| names.contains(&j.name.as_str()))
        .collect();
    assert_eq!(runner.jobs.iter().collect::<Vec<_>>(), in_fast);
}

#[test]
fn every_valid_reference_file_parses_and_looks_like_jobs() {
    for rel in [
        FAST,
        APPENDIX_B,
        FIRST,
        "historic/baselines.json@11795cc_2019-06-03_last-root.json",
        "historic/p9baselines.json@9fdb62d_2019-05-25.json",
        "historic/profiles_32go.json@d2d4ee5_2019-06-06.json",
        "historic/profiles_fast.json@5cd7dbb_2019-12-03.json",
        "profiles/baselines.json",
        "profiles/old_baselines.json",
    ] {
        let (_, bytes) = reference(rel);
        assert!(looks_like_jobs(&pyjson::parse(&bytes).unwrap()), "{rel}");
        let file = parse_reference(rel);
        // Every job of every era names its cgroup.
        assert!(file.jobs.iter().all(|j| j.cgroup.is_some()), "{rel}");
    }
}

#[test]
fn broken_head_profiles_are_rejected_with_their_place() {
    let (name, bytes) = reference("profiles/16go.json");
    match JobsFile::parse(&name, &bytes) {
        // Python: "Expecting property name enclosed in double quotes: line 209 column 5
        // (char 5076)": the `}` after the trailing comma in convnet's args.
        Err(JobsError::Syntax { file, error }) => {
            assert_eq!(file, "profiles/16go.json");
            assert_eq!((error.offset, error.line, error.column), (5076, 209, 5));
            assert!(error.message.contains("property name"), "{}", error.message);
        }
        other => panic!("{other:?}"),
    }
    let message = JobsFile::parse(&name, &bytes).unwrap_err().to_string();
    assert!(
        message.starts_with("profiles/16go.json: ")
            && message.ends_with("at byte 5076 (line 209, column 5)"),
        "{message}"
    );
    for empty in [
        "profiles/24go.json",
        "profiles/32go.json",
        "profiles/48go.json",
    ] {
        let (name, bytes) = reference(empty);
        let err = JobsFile::parse(&name, &bytes).unwrap_err();
        assert!(matches!(err, JobsError::Empty { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!("{empty}: empty file (a jobs file is a JSON array of jobs)")
        );
    }
}

#[test]
fn config_counts_of_the_sweep_eras() {
    // 6ce5994 (AppendixB): 20 jobs. Lists: toy_lstm --dtype (3 values), loader
    // --batch-size (4), wlm and wlmfp16 --model (4 each); every other job, both ssd
    // entries included, has scalars only: 16 jobs × 1 + 3 + 4 + 4 + 4 = 31 configs.
    let appendix = parse_reference(APPENDIX_B);
    let counts: Vec<usize> = appendix.jobs.iter().map(|j| j.configs().len()).collect();
    assert_eq!(
        counts,
        [1, 3, 1, 4, 1, 1, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    );
    assert_eq!(counts.iter().sum::<usize>(), 31);
    assert_eq!(appendix.jobs[10].name, "ssd");
    assert_eq!(appendix.jobs[11].name, "ssd");
    assert!(appendix.jobs[10].whole_machine() && !appendix.jobs[11].whole_machine());

    // fd9ee95: products of every list of a job. toy_reg 1, toy_lstm 3, vae 4, loader 4,
    // reso 2, translator 2, wlm 4×4, wlmfp16 4×4, cart 1, atari 3×3×2, ssd(all) 3,
    // ssd(student) 2, fast_style 4, dcgan 4, convnet 2×5, convnet_fp16 3×5, recom 1,
    // convnet_distributed 2×3×2, dcgan_all 2: 120 configs.
    let first = parse_reference(FIRST);
    let counts: Vec<usize> = first.jobs.iter().map(|j| j.configs().len()).collect();
    assert_eq!(
        counts,
        [
            1, 3, 4, 4, 2, 2, 16, 16, 1, 18, 3, 2, 4, 4, 10, 15, 1, 12, 2
        ]
    );
    assert_eq!(counts.iter().sum::<usize>(), 120);

    // The HEAD and fast files have no lists: one config per job.
    for name in BUILTIN_JOBS {
        let file = JobsFile::builtin(name).unwrap();
        assert!(file.jobs.iter().all(|j| j.configs().len() == 1), "{name}");
    }
}

#[test]
fn command_lines_as_run_py_builds_them() {
    // The example of docs/suite.md#configurations, without the `--seed` run.py appends.
    let head = JobsFile::builtin("baselines").unwrap();
    let toy = head.get("toy_reg").unwrap();
    let configs = toy.configs();
    assert_eq!(
        configs[0].command_line,
        "./regression/polynome/pytorch/run.sh --cuda  --report $OUTPUT_DIRECTORY --batch-size 256 --number 100 --repeat 20"
    );
    assert_eq!(configs[0].args, toy.args);
    // Quotes kept for the shell; the positional first in JSON comes last, its trailing
    // space stripped.
    assert_eq!(
        head.get("recom").unwrap().configs()[0].command_line,
        "./recommendation/neural_collaborative_filtering/pytorch/run.sh --cuda  --report $OUTPUT_DIRECTORY --batch-size 2048 --number 100 --repeat 25 --workers 8 --processes 4 --threshold 0.635 -f 64 --layers 256 256 128 64 -l 0.0005 $DATA_DIRECTORY/ml-20m"
    );

    // Two lists (fd9ee95 wlm: --batch-size then --model in JSON): --model, later in
    // JSON, is popped first and varies slowest. Expected lines from a Python
    // restatement of make_configs.
    let first = parse_reference(FIRST);
    let wlm = first.get("wlm").unwrap().configs();
    let line = |model: &str, batch: i64| {
        format!(
            "./natural_language_processing/word_language_model/pytorch/run.sh --cuda  --report $OUTPUT_DIRECTORY/bench_result --model {model} --epochs 5 --dropout 0.5 --nhid 656 --emsize 656 --batch-size {batch} --number 5 --repeat 30"
        )
    };
    assert_eq!(wlm[0].command_line, line("LSTM", 32));
    assert_eq!(wlm[1].command_line, line("LSTM", 64));
    assert_eq!(wlm[4].command_line, line("RNN_TANH", 32));
    assert_eq!(wlm[15].command_line, line("GRU", 256));
    let arg = |c: &mlbench_schema::Config, flag: &str| {
        c.args
            .iter()
            .find(|(k, _)| k == flag)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(arg(&wlm[4], "--model"), Some(Value::from("RNN_TANH")));
    assert_eq!(arg(&wlm[4], "--batch-size"), Some(Value::Int(32)));
    assert_eq!(wlm[4].args.len(), 10);
    assert_eq!(wlm[4].args[0], ("--repeat".to_owned(), Value::Int(30)));

    // Three lists (fd9ee95 atari): --algo slowest, --num-steps fastest.
    let atari = first.get("atari").unwrap().configs();
    assert_eq!(
        atari[1].command_line,
        "./reinforcement/atari/pytorch/run.sh --cuda  --report $OUTPUT_DIRECTORY/bench_result --algo ppo --num-processes 32 --num-steps 64 --env-name \"PongNoFrameskip-v4\" --number 10 --repeat 30"
    );
    assert!(
        atari[17]
            .command_line
            .contains("--algo acktr --num-processes 128 --num-steps 128 ")
    );
}

#[test]
fn head_baselines_against_old_baselines() {
    let new = JobsFile::builtin("baselines").unwrap();
    let old = JobsFile::builtin("old_baselines").unwrap();
    let d = diff(&new, &old);
    assert_eq!(d.missing_jobs, ["scaling"]);
    assert_eq!(
        d.extra_jobs,
        [
            "convnet_distributed",
            "convnet_distributed_fp16",
            "dcgan_all"
        ]
    );
    // Every one of the 16 shared jobs writes to `$OUTPUT_DIRECTORY/$JOB_FILE` in the old
    // file (E2 streams) and to `$OUTPUT_DIRECTORY` at HEAD (E3 folders).
    let reports: Vec<_> = d.changes.iter().filter(|c| c.flag == "--report").collect();
    assert_eq!(reports.len(), 16);
    assert!(reports.iter().all(|c| {
        c.baseline == Some("$OUTPUT_DIRECTORY".into())
            && c.vendor == Some("$OUTPUT_DIRECTORY/$JOB_FILE".into())
    }));
    // The rest, read off the two files: (job, flag, HEAD, old).
    let expected: &[(&str, &str, i64, i64)] = &[
        ("toy_reg", "--number", 100, 1000),
        ("toy_lstm", "--repeat", 10, 20),
        ("vae", "--repeat", 50, 100),
        ("loader", "--repeat", 15, 30),
        ("reso", "--repeat", 25, 50),
        ("reso", "--number", 5, 20),
        ("translator", "--repeat", 15, 20),
        ("wlm", "--repeat", 15, 30),
        ("wlmfp16", "--repeat", 15, 30),
        ("cart", "--number", 500, 1000),
        ("atari", "--repeat", 15, 30),
        ("atari", "--number", 5, 10),
        ("atari", "--num-processes", 16, 8),
        ("ssd", "--repeat", 15, 30),
        ("ssd", "--number", 5, 10),
        ("fast_style", "--repeat", 25, 50),
        ("fast_style", "--number", 5, 10),
        ("dcgan", "--repeat", 25, 50),
        ("dcgan", "--number", 5, 10),
        ("convnet", "--repeat", 15, 30),
        ("convnet_fp16", "--repeat", 15, 20),
        ("recom", "--processes", 4, 1),
    ];
    let others: Vec<(&str, &str, i64, i64)> = d
        .changes
        .iter()
        .filter(|c| c.flag != "--report")
        .map(|c| {
            let int = |v: &Option<Value>| v.as_ref().and_then(Value::as_i64).unwrap();
            (
                c.job.as_str(),
                c.flag.as_str(),
                int(&c.baseline),
                int(&c.vendor),
            )
        })
        .collect();
    assert_eq!(others, expected);
    // job_index is the index in the second ("vendor") file.
    let toy = d.changes.iter().find(|c| c.job == "toy_reg").unwrap();
    assert_eq!(toy.job_index, 0);
    let recom = d.changes.iter().find(|c| c.job == "recom").unwrap();
    assert_eq!(recom.job_index, 15);
    assert_eq!(d.changes.len(), 38);

    // fast (92b03cb) → old_baselines: same 19 jobs, longer runs.
    let fast = JobsFile::builtin("fast").unwrap();
    let d = diff(&fast, &old);
    assert!(d.missing_jobs.is_empty() && d.extra_jobs.is_empty());
    assert!(
        d.changes
            .iter()
            .all(|c| c.baseline.is_some() && c.vendor.is_some())
    );
}

#[test]
fn diff_of_edits() {
    let (name, bytes) = reference(APPENDIX_B);
    let base = JobsFile::parse(&name, &bytes).unwrap();
    assert_eq!(diff(&base, &base), Default::default());

    let mut vendor = base.clone();
    // The second `ssd` (student) gets another batch size; the first keeps its own.
    let ssd = &mut vendor.jobs[11];
    for (flag, value) in &mut ssd.args {
        if flag == "--batch-size" {
            *value = Value::Int(96);
        }
    }
    ssd.args.retain(|(flag, _)| flag != "--seed");
    ssd.args.push(("--workers2".into(), Value::Int(4)));
    vendor.jobs[0].cmd = "./regression/polynome/pytorch/run_mine.sh".into();
    // A missing cgroup means "all": no change for the whole-machine ssd.
    vendor.jobs[10].cgroup = None;
    vendor.jobs[12].cgroup = Some("all".into());
    // Ints and floats compare by value.
    for (flag, value) in &mut vendor.jobs[1].args {
        if flag == "--number" {
            *value = Value::Float(5.0);
        }
    }
    vendor.jobs.remove(2); // vae
    let d = diff(&base, &vendor);
    assert_eq!(d.missing_jobs, ["vae"]);
    assert!(d.extra_jobs.is_empty());
    // (vendor index, job, flag, baseline value, vendor value)
    type Row<'a> = (
        usize,
        &'a str,
        &'a str,
        Option<&'a Value>,
        Option<&'a Value>,
    );
    let changes: Vec<Row> = d
        .changes
        .iter()
        .map(|c| {
            (
                c.job_index,
                c.job.as_str(),
                c.flag.as_str(),
                c.baseline.as_ref(),
                c.vendor.as_ref(),
            )
        })
        .collect();
    assert_eq!(
        changes,
        [
            (
                0,
                "toy_reg",
                "cmd",
                Some(&"./regression/polynome/pytorch/run.sh".into()),
                Some(&"./regression/polynome/pytorch/run_mine.sh".into())
            ),
            (
                10,
                "ssd",
                "--batch-size",
                Some(&Value::Int(64)),
                Some(&Value::Int(96))
            ),
            (10, "ssd", "--seed", Some(&Value::Int(0)), None),
            (10, "ssd", "--workers2", None, Some(&Value::Int(4))),
            (
                11,
                "fast_style",
                "cgroup",
                Some(&"student".into()),
                Some(&"all".into())
            ),
        ]
    );
}

#[test]
fn every_bench_has_a_script_beside_its_run_sh() {
    let scripts = ScriptMap::builtin();
    let mut benches = 0;
    for name in BUILTIN_JOBS {
        for job in JobsFile::builtin(name).unwrap().jobs {
            let script = scripts
                .script_for(&job.name)
                .unwrap_or_else(|| panic!("{name}: no script for {}", job.name));
            // No exception: every entry script, scaling.py included (it launches
            // micro_bench.py), sits in the folder of its bench's run*.sh.
            let folder = script.rsplit_once('/').map(|(d, _)| d);
            assert_eq!(folder, script_dir(&job.cmd), "{name}: {}", job.name);
            assert!(script.ends_with(".py"), "{script}");
            benches += 1;
        }
    }
    assert_eq!(benches, 19 + 17 + 19 + 10);
    // Every mapped bench is a bench of a shipped jobs file.
    for (bench, _) in scripts.iter() {
        assert!(
            BUILTIN_JOBS
                .iter()
                .any(|n| JobsFile::builtin(n).unwrap().get(bench).is_some()),
            "{bench}"
        );
    }
}

#[test]
fn recorded_arguments_of_the_fast_jobs() {
    use mlbench_schema::jobs::{flag_dest, recorded_matches};
    let fast = JobsFile::builtin("fast").unwrap();
    let atari = fast.get("atari").unwrap();
    let env = atari.arg("--env-name").unwrap();
    assert_eq!(flag_dest("--env-name").as_deref(), Some("env_name"));
    assert!(recorded_matches(
        "--env-name",
        env,
        &"PongNoFrameskip-v4".into()
    ));
    let recom = fast.get("recom").unwrap();
    let layers = recom.arg("--layers").unwrap();
    assert!(recorded_matches(
        "--layers",
        layers,
        &Value::from(vec![256i64, 256, 128, 64])
    ));
    let translator = fast.get("translator").unwrap();
    let bleu = translator.arg("--target-bleu").unwrap();
    assert_eq!(bleu, &Value::Float(21.8));
    assert!(recorded_matches("--target-bleu", bleu, &Value::Float(21.8)));
    let cart = fast.get("cart").unwrap();
    assert!(recorded_matches(
        "--no-cuda",
        cart.arg("--no-cuda").unwrap(),
        &Value::Bool(false)
    ));
    let dcgan_all = fast.get("dcgan_all").unwrap();
    assert!(recorded_matches(
        "--ngpu",
        dcgan_all.arg("--ngpu").unwrap(),
        &Value::Int(8)
    ));
    assert!(dcgan_all.whole_machine() && !cart.whole_machine());
}
