//! `--slurm`: an sbatch job-array script that runs the same jobs on a Slurm cluster, one
//! array task per node. Task `t` runs the suite runs `t·K … t·K+K−1` (`--first-run`), so
//! every node writes its own `<out>/output<r>/` folders and the nodes together leave the
//! layout of one machine: `output0` … `output{N·K−1}`, each run with its own `RUN_ID` and
//! seeds (no two nodes repeat a run's random streams).
//!
//! The script is plain text built here and only written by the CLI, so it can be read and
//! edited before `sbatch` is run. Devices are the nodes', not the machine printing it: a
//! number of GPUs per node (`--gres`), or the whole node's CPU.

use std::path::PathBuf;

/// What the script runs.
#[derive(Debug, Clone)]
pub struct SlurmOptions {
    /// The `mlbench` binary as the nodes see it.
    pub mlbench: String,
    /// The jobs file as the nodes see it.
    pub jobs: PathBuf,
    /// `--name` filters.
    pub names: Vec<String>,
    /// GPUs per node, or `None` for the node's CPU as one device.
    pub gpus: Option<u32>,
    /// Nodes (array tasks).
    pub nodes: u32,
    /// `--repeat-suite` per node.
    pub repeat_suite: u32,
    /// The output root as the nodes see it (a shared file system).
    pub out: PathBuf,
    /// `#SBATCH --partition`.
    pub partition: Option<String>,
    /// `#SBATCH --time` (e.g. `04:00:00`).
    pub time: Option<String>,
    /// `--smoke` on every node.
    pub smoke: bool,
}

/// Quotes a word for `/bin/sh` (single quotes; a quote inside becomes `'\''`).
pub fn sh_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,+@%".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// `--devices` as the nodes' devices: `Some(n)` GPUs per node, or `None` for the
/// node's CPU.
pub fn node_gpus(flag: Option<&str>) -> Result<Option<u32>, NodeDevicesError> {
    match flag.map(str::trim) {
        Some(d) if d.eq_ignore_ascii_case("cpu") => Ok(None),
        Some(d) => match d.parse::<u32>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(NodeDevicesError::Invalid(d.to_owned())),
        },
        None => Err(NodeDevicesError::Missing),
    }
}

/// `--devices` does not say the nodes' devices.
#[derive(Debug, thiserror::Error)]
pub enum NodeDevicesError {
    /// Neither a number of GPUs nor `cpu`.
    #[error("--devices {0}: with --slurm, a number of GPUs per node or `cpu`")]
    Invalid(String),
    /// Not given.
    #[error("--slurm needs --devices: the GPUs of each node (e.g. --devices 8), or cpu")]
    Missing,
}

/// The sbatch script text.
pub fn sbatch_script(o: &SlurmOptions) -> String {
    let jobs_name = crate::plan::jobs_name(&o.jobs);
    let mut s = String::from("#!/bin/bash\n");
    let mut directive = |line: String| {
        s.push_str("#SBATCH ");
        s.push_str(&line);
        s.push('\n');
    };
    directive(format!("--job-name=mlbench-{jobs_name}"));
    directive(format!("--array=0-{}", o.nodes.saturating_sub(1)));
    directive("--nodes=1".into());
    directive("--ntasks=1".into());
    // The whole node: per-device copies split its cores, as the suite's cgroups did.
    directive("--exclusive".into());
    if let Some(gpus) = o.gpus {
        directive(format!("--gres=gpu:{gpus}"));
    }
    if let Some(p) = &o.partition {
        directive(format!("--partition={p}"));
    }
    if let Some(t) = &o.time {
        directive(format!("--time={t}"));
    }
    // In the submission folder: Slurm opens the log before the script can create OUT.
    directive("--output=mlbench-%A_%a.log".into());
    s.push_str("set -euo pipefail\n\n");
    s.push_str(&format!("OUT={}\n", sh_quote(&o.out.display().to_string())));
    s.push_str(&format!(
        "FIRST_RUN=$((SLURM_ARRAY_TASK_ID * {}))\n",
        o.repeat_suite
    ));
    let devices = o.gpus.map_or_else(|| "cpu".to_owned(), |n| n.to_string());
    let mut cmd = format!(
        "{} run --jobs {} --devices {devices} --repeat-suite {} --first-run \"$FIRST_RUN\"",
        sh_quote(&o.mlbench),
        sh_quote(&o.jobs.display().to_string()),
        o.repeat_suite
    );
    for name in &o.names {
        cmd.push_str(&format!(" --name {}", sh_quote(name)));
    }
    if o.smoke {
        cmd.push_str(" --smoke");
    }
    cmd.push_str(" --out-dir \"$OUT\"\n");
    s.push_str(&cmd);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(gpus: Option<u32>) -> SlurmOptions {
        SlurmOptions {
            mlbench: "/opt/mlbench/bin/mlbench".into(),
            jobs: PathBuf::from("/shared/fast.json"),
            names: vec!["vae".into(), "it's".into()],
            gpus,
            nodes: 4,
            repeat_suite: 10,
            out: PathBuf::from("/scratch/results"),
            partition: Some("gpu".into()),
            time: None,
            smoke: false,
        }
    }

    #[test]
    fn gpu_array_script() {
        let text = sbatch_script(&options(Some(8)));
        let expected = "#!/bin/bash
#SBATCH --job-name=mlbench-fast
#SBATCH --array=0-3
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --exclusive
#SBATCH --gres=gpu:8
#SBATCH --partition=gpu
#SBATCH --output=mlbench-%A_%a.log
set -euo pipefail

OUT=/scratch/results
FIRST_RUN=$((SLURM_ARRAY_TASK_ID * 10))
/opt/mlbench/bin/mlbench run --jobs /shared/fast.json --devices 8 --repeat-suite 10 --first-run \"$FIRST_RUN\" --name vae --name 'it'\\''s' --out-dir \"$OUT\"
";
        assert_eq!(text, expected);
    }

    #[test]
    fn cpu_script_has_no_gres() {
        let text = sbatch_script(&options(None));
        assert!(!text.contains("--gres"));
        assert!(text.contains(" --devices cpu "));
        assert_eq!(sh_quote("a b"), "'a b'");
        assert_eq!(sh_quote(""), "''");
    }
}
