//! `--slurm`: an sbatch job-array script that runs the same jobs on a Slurm cluster,
//! one array task per node, each writing `<out>/node<task>/output<r>/<jobs>_<K>.json`
//! (the layout `mlbench report` reads, one subtree per node).
//!
//! The script is plain text built here and only written by the CLI, so it can be read
//! and edited before `sbatch` is run.

use crate::devices::{DeviceKind, DeviceSet};
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
    /// The devices of each node.
    pub devices: DeviceSet,
    /// Nodes (array tasks).
    pub nodes: u32,
    /// `--repeat-suite`.
    pub repeat_suite: u32,
    /// The output root as the nodes see it.
    pub out: PathBuf,
    /// `#SBATCH --partition`.
    pub partition: Option<String>,
    /// `#SBATCH --time` (e.g. `04:00:00`).
    pub time: Option<String>,
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

/// The sbatch script text.
pub fn sbatch_script(o: &SlurmOptions) -> String {
    let jobs_name = crate::plan::jobs_name(&o.jobs);
    let out = o.out.display().to_string();
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
    directive(format!("--cpus-per-task={}", o.devices.cores));
    if o.devices.kind == DeviceKind::Cuda {
        directive(format!("--gres=gpu:{}", o.devices.count()));
    }
    if let Some(p) = &o.partition {
        directive(format!("--partition={p}"));
    }
    if let Some(t) = &o.time {
        directive(format!("--time={t}"));
    }
    directive(format!("--output={out}/slurm-%A_%a.log"));
    s.push_str("set -euo pipefail\n\n");
    s.push_str(&format!("OUT={}\n", sh_quote(&out)));
    s.push_str("NODE_OUT=\"$OUT/node$SLURM_ARRAY_TASK_ID\"\n");
    s.push_str("mkdir -p \"$NODE_OUT\"\n");
    let devices = match o.devices.kind {
        DeviceKind::Cuda => o.devices.count().to_string(),
        DeviceKind::Cpu if o.devices.count() == 1 => "cpu".to_owned(),
        DeviceKind::Cpu => o.devices.count().to_string(),
    };
    let mut cmd = format!(
        "{} run --jobs {} --devices {devices} --repeat-suite {}",
        sh_quote(&o.mlbench),
        sh_quote(&o.jobs.display().to_string()),
        o.repeat_suite
    );
    for name in &o.names {
        cmd.push_str(&format!(" --name {}", sh_quote(name)));
    }
    cmd.push_str(" --out \"$NODE_OUT\"\n");
    s.push_str(&cmd);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(devices: DeviceSet) -> SlurmOptions {
        SlurmOptions {
            mlbench: "/opt/mlbench/bin/mlbench".into(),
            jobs: PathBuf::from("/shared/fast.json"),
            names: vec!["vae".into(), "it's".into()],
            devices,
            nodes: 4,
            repeat_suite: 10,
            out: PathBuf::from("/scratch/results"),
            partition: Some("gpu".into()),
            time: None,
        }
    }

    #[test]
    fn gpu_array_script() {
        let text = sbatch_script(&options(DeviceSet::cuda(64, 8).unwrap()));
        let expected = "#!/bin/bash
#SBATCH --job-name=mlbench-fast
#SBATCH --array=0-3
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --exclusive
#SBATCH --cpus-per-task=64
#SBATCH --gres=gpu:8
#SBATCH --partition=gpu
#SBATCH --output=/scratch/results/slurm-%A_%a.log
set -euo pipefail

OUT=/scratch/results
NODE_OUT=\"$OUT/node$SLURM_ARRAY_TASK_ID\"
mkdir -p \"$NODE_OUT\"
/opt/mlbench/bin/mlbench run --jobs /shared/fast.json --devices 8 --repeat-suite 10 --name vae --name 'it'\\''s' --out \"$NODE_OUT\"
";
        assert_eq!(text, expected);
    }

    #[test]
    fn cpu_script_has_no_gres() {
        let text = sbatch_script(&options(DeviceSet::cpu(32, 4).unwrap()));
        assert!(!text.contains("--gres"));
        assert!(text.contains("--devices 4 "));
        let one = sbatch_script(&options(DeviceSet::cpu(32, 1).unwrap()));
        assert!(one.contains("--devices cpu "));
        assert_eq!(sh_quote("a b"), "'a b'");
        assert_eq!(sh_quote(""), "''");
    }
}
