//! `system.json`: the machine a run ran on, written by `mlbench run` at the root of its
//! output folder (`system.<hostname>.json` when another node already wrote one there),
//! embedded by `mlbench pack` in SUBMISSION.json and shown by `report` and `grid`.
//! Every field but `hostname` may be unknown (`null`): a reader takes what is there.

use crate::runtime::Runtime;
use serde::{Deserialize, Serialize};

/// The version of this document.
pub const SYSTEM_SCHEMA_VERSION: u32 = 1;

/// The file name at the root of a run's output folder.
pub const SYSTEM_NAME: &str = "system.json";

/// Whether `path` (relative to a submission's root) is a machine description:
/// `system.json` or `system.<hostname>.json` at the root.
pub fn is_system_file(path: &str) -> bool {
    path == SYSTEM_NAME
        || (!path.contains('/')
            && path
                .strip_prefix("system.")
                .and_then(|rest| rest.strip_suffix(".json"))
                .is_some_and(|host| !host.is_empty()))
}

/// One machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SystemInfo {
    /// [`SYSTEM_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The host's name, as the entries' `hostname`.
    pub hostname: String,
    /// The tool that ran, e.g. `mlbench 0.1.0`.
    pub tool: String,
    /// What produced the entries: `{"kind": "mlbench-run", "version": "2.13.0"}` (the
    /// runner and its libtorch; [`crate::runtime`]). Absent from the descriptions of
    /// mlbench before 0.2 (read them with [`SystemInfo::runtime_of`]), and not written
    /// when unknown, so a description without it keeps its bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<Runtime>,
    /// Its commit, when built from a git checkout.
    pub commit: Option<String>,
    /// libtorch's version, e.g. `2.13.0`.
    pub libtorch: Option<String>,
    /// The CUDA runtime's version (`12.4`), when libtorch has CUDA.
    pub cuda: Option<String>,
    /// cuDNN's version (`9.1.0`), when present.
    pub cudnn: Option<String>,
    /// The operating system (`/etc/os-release`'s `PRETTY_NAME`).
    pub os: Option<String>,
    /// The kernel release.
    pub kernel: Option<String>,
    /// The CPU model.
    pub cpu: Option<String>,
    /// CPU cores this run could use.
    pub cores: usize,
    /// The machine's memory, bytes.
    pub memory_bytes: Option<u64>,
    /// The devices the run used.
    pub devices: Vec<DeviceInfo>,
    /// The stopping rule `run --until` followed, written when it stopped (absent
    /// otherwise, so a description without one keeps its bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopping: Option<crate::stopping::StoppingRule>,
    /// Whether the run made its batches in memory (`mlbench run --synthetic-data`)
    /// instead of reading them from the data files: its throughputs leave out reading
    /// and decoding the data set. Written only when true, so a description without it
    /// keeps its bytes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub synthetic_data: bool,
}

/// One device a run used.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceInfo {
    /// Its index (`vcd` of the entries).
    pub index: u32,
    /// `cuda` or `cpu`.
    pub kind: String,
    /// Its name (`NVIDIA H100 80GB HBM3`; the CPU model for a CPU share).
    pub name: String,
    /// Its memory, bytes.
    pub memory_bytes: Option<u64>,
    /// The driver's version.
    pub driver: Option<String>,
    /// The compute capability (`9.0`).
    pub compute_capability: Option<String>,
}

/// What `report`, `targets` and `validate` say of a run on synthetic data: `flagged`
/// of the `entries` carry `synthetic_data: true`; `declared`: a machine description
/// records it ([`SystemInfo::synthetic_data`]). `None` when neither.
pub fn synthetic_data_summary(flagged: usize, entries: usize, declared: bool) -> Option<String> {
    let how =
        "`mlbench run --synthetic-data`: batches made in memory, not read from the data files";
    if flagged > 0 {
        let their = if flagged == 1 { "its" } else { "their" };
        return Some(format!(
            "{flagged} of {} ran on synthetic data ({how}): {their} throughput does not include reading and decoding the data set",
            crate::words::count(entries, "entry", "entries")
        ));
    }
    declared.then(|| {
        format!(
            "system.json records a run on synthetic data ({how}), though none of the {} carries `synthetic_data`: if they ran so, their throughput does not include reading and decoding the data set",
            crate::words::count(entries, "entry", "entries")
        )
    })
}

impl SystemInfo {
    /// Reads a `system.json`; `None` when it is not one.
    pub fn from_json(bytes: &[u8]) -> Option<SystemInfo> {
        serde_json::from_slice(bytes).ok()
    }

    /// The runtime this description declares: its `runtime`, or for a description
    /// written by an mlbench without the field (`tool` `mlbench …`), `mlbench run` on its
    /// `libtorch`; `None` for any other tool.
    pub fn runtime_of(&self) -> Option<Runtime> {
        if let Some(runtime) = &self.runtime {
            return Some(runtime.clone());
        }
        let tool = self.tool.split_whitespace().next()?;
        (tool == "mlbench").then(|| Runtime::mlbench_run(self.libtorch.clone()))
    }

    /// One line for people: `host: CPU model, 16 cores, 128.0 GiB; 8× NVIDIA H100 (driver
    /// 550.54); libtorch 2.13.0, CUDA 12.4`.
    pub fn summary(&self) -> String {
        let gib = |b: u64| format!("{:.1} GiB", b as f64 / f64::from(1u32 << 30));
        let mut parts = vec![format!(
            "{}, {} cores{}",
            self.cpu.as_deref().unwrap_or("unknown CPU"),
            self.cores,
            self.memory_bytes
                .map_or_else(String::new, |b| format!(", {}", gib(b)))
        )];
        let gpus: Vec<&DeviceInfo> = self.devices.iter().filter(|d| d.kind == "cuda").collect();
        if let Some(first) = gpus.first() {
            let same = gpus.iter().all(|d| d.name == first.name);
            let name = if same {
                first.name.as_str()
            } else {
                "GPUs of several models"
            };
            let driver = first
                .driver
                .as_deref()
                .map_or_else(String::new, |d| format!(" (driver {d})"));
            parts.push(format!("{}× {name}{driver}", gpus.len()));
        }
        let mut stack = Vec::new();
        if let Some(v) = &self.libtorch {
            stack.push(format!("libtorch {v}"));
        }
        if let Some(v) = &self.cuda {
            stack.push(format!("CUDA {v}"));
        }
        if let Some(v) = &self.cudnn {
            stack.push(format!("cuDNN {v}"));
        }
        if !stack.is_empty() {
            parts.push(stack.join(", "));
        }
        format!("{}: {}", self.hostname, parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_files_are_at_the_root() {
        assert!(is_system_file("system.json"));
        assert!(is_system_file("system.node-2.json"));
        assert!(!is_system_file("system..json"));
        assert!(!is_system_file("output0/system.json"));
        assert!(!is_system_file("systems.json"));
    }

    #[test]
    fn summary_names_cpu_memory_gpus_and_stack() {
        let gpu = |i| DeviceInfo {
            index: i,
            kind: "cuda".into(),
            name: "NVIDIA H100".into(),
            memory_bytes: Some(80 << 30),
            driver: Some("550.54".into()),
            compute_capability: Some("9.0".into()),
        };
        let info = SystemInfo {
            schema_version: 1,
            hostname: "n1".into(),
            tool: "mlbench 0.1.0".into(),
            cpu: Some("EPYC".into()),
            cores: 16,
            memory_bytes: Some(128 << 30),
            libtorch: Some("2.13.0".into()),
            cuda: Some("12.4".into()),
            devices: vec![gpu(0), gpu(1)],
            ..SystemInfo::default()
        };
        assert_eq!(
            info.summary(),
            "n1: EPYC, 16 cores, 128.0 GiB; 2× NVIDIA H100 (driver 550.54); libtorch 2.13.0, CUDA 12.4"
        );
        let bare = SystemInfo {
            hostname: "h".into(),
            ..SystemInfo::default()
        };
        assert_eq!(bare.summary(), "h: unknown CPU, 0 cores");
    }

    #[test]
    fn the_runtime_is_declared_or_follows_from_the_tool() {
        let mut info = SystemInfo {
            tool: "mlbench 0.1.0".into(),
            libtorch: Some("2.13.0".into()),
            ..SystemInfo::default()
        };
        assert_eq!(
            info.runtime_of(),
            Some(Runtime::mlbench_run(Some("2.13.0".into())))
        );
        // Not written when unknown: an older description keeps its bytes.
        let json = serde_json::to_value(&info).unwrap();
        assert!(json.get("runtime").is_none(), "{json}");
        info.runtime = Some(Runtime::mlbench_run(Some("2.12.0".into())));
        assert_eq!(info.runtime_of(), info.runtime);
        let json = serde_json::to_value(&info).unwrap();
        assert_eq!(
            json["runtime"],
            serde_json::json!({"kind": "mlbench-run", "version": "2.12.0"})
        );
        let back: SystemInfo = serde_json::from_value(json).unwrap();
        assert_eq!(back, info);
        let other = SystemInfo {
            tool: "something 1".into(),
            ..SystemInfo::default()
        };
        assert_eq!(other.runtime_of(), None);
    }

    #[test]
    fn synthetic_data_is_written_only_when_true() {
        let mut info = SystemInfo {
            hostname: "n1".into(),
            ..SystemInfo::default()
        };
        let json = serde_json::to_value(&info).unwrap();
        assert!(json.get("synthetic_data").is_none(), "{json}");
        info.synthetic_data = true;
        let json = serde_json::to_value(&info).unwrap();
        assert_eq!(json["synthetic_data"], true);
        let back = SystemInfo::from_json(json.to_string().as_bytes()).unwrap();
        assert!(back.synthetic_data);
        let old = SystemInfo::from_json(br#"{"hostname": "n1"}"#).unwrap();
        assert!(!old.synthetic_data);
    }

    #[test]
    fn the_synthetic_data_summary_counts_the_entries() {
        assert_eq!(synthetic_data_summary(0, 5, false), None);
        assert_eq!(
            synthetic_data_summary(1, 1, false).unwrap(),
            "1 of 1 entry ran on synthetic data (`mlbench run --synthetic-data`: batches made in memory, not read from the data files): its throughput does not include reading and decoding the data set"
        );
        let some = synthetic_data_summary(3, 175, true).unwrap();
        assert!(
            some.starts_with("3 of 175 entries ran on synthetic data ("),
            "{some}"
        );
        assert!(
            some.ends_with(
                "): their throughput does not include reading and decoding the data set"
            ),
            "{some}"
        );
        let declared = synthetic_data_summary(0, 2, true).unwrap();
        assert!(
            declared.starts_with("system.json records a run on synthetic data ("),
            "{declared}"
        );
        assert!(
            declared.contains("though none of the 2 entries carries `synthetic_data`"),
            "{declared}"
        );
    }

    #[test]
    fn unknown_fields_and_missing_ones_read() {
        let info: SystemInfo =
            toml::from_str("hostname = \"x\"\nfuture = 1\n").expect("tolerant reader");
        assert_eq!(info.hostname, "x");
        assert_eq!(info.cores, 0);
    }
}
