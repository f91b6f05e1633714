//! `OUT/system.json` ([`mlbench_schema::system`]): this machine and the devices a run uses,
//! from /proc, /etc/os-release and, for GPUs, `nvidia-smi` when it is installed.
//! libtorch's own versions are passed in by the caller (they need tch).

use crate::devices::{DeviceKind, DeviceSet};
use crate::setup::{SetupError, hostname};
use mlbench_schema::Runtime;
use mlbench_schema::system::{DeviceInfo, SYSTEM_NAME, SYSTEM_SCHEMA_VERSION, SystemInfo};
use std::path::{Path, PathBuf};

/// What only the caller knows: the tool, its commit, libtorch's versions.
#[derive(Debug, Clone, Default)]
pub struct Stack {
    /// `mlbench 0.1.0`.
    pub tool: String,
    /// The commit it was built from.
    pub commit: Option<String>,
    /// libtorch's version.
    pub libtorch: Option<String>,
    /// The CUDA runtime's version.
    pub cuda: Option<String>,
    /// cuDNN's version.
    pub cudnn: Option<String>,
}

impl Stack {
    /// This build and the libtorch it linked: the commit and libtorch's version from the
    /// build (build.rs), CUDA's and cuDNN's versions from libtorch when it has CUDA.
    #[cfg(feature = "tch")]
    pub fn detect(tool: String) -> Stack {
        // cuDNN 9.1.0 reads 90100 (major·10000 + minor·100 + patch); CUDA 12.4 reads 12040.
        let cuda = tch::utils::has_cuda();
        let cudnn = (cuda && tch::Cuda::cudnn_is_available()).then(|| {
            let v = tch::utils::version_cudnn();
            format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100)
        });
        let cuda = cuda.then(|| {
            let v = tch::utils::version_cudart();
            format!("{}.{}", v / 1000, v % 1000 / 10)
        });
        Stack {
            tool,
            commit: option_env!("MLBENCH_COMMIT").map(str::to_owned),
            libtorch: option_env!("MLBENCH_LIBTORCH_VERSION").map(str::to_owned),
            cuda,
            cudnn,
        }
    }
}

/// Describes this machine and the devices of `devices`.
pub fn describe(devices: &DeviceSet, stack: Stack) -> SystemInfo {
    let cpu = cpu_model();
    let gpus = match devices.kind {
        DeviceKind::Cuda => nvidia_smi(),
        DeviceKind::Cpu => Vec::new(),
    };
    let list = (0..devices.count())
        .map(|index| match devices.kind {
            DeviceKind::Cuda => {
                let mut gpu = gpus
                    .iter()
                    .find(|g| g.index == index)
                    .cloned()
                    .unwrap_or_default();
                gpu.index = index;
                gpu.kind = "cuda".into();
                if gpu.name.is_empty() {
                    gpu.name = format!("cuda:{index}");
                }
                gpu
            }
            DeviceKind::Cpu => DeviceInfo {
                index,
                kind: "cpu".into(),
                name: cpu.clone().unwrap_or_else(|| "cpu".into()),
                ..DeviceInfo::default()
            },
        })
        .collect();
    SystemInfo {
        schema_version: SYSTEM_SCHEMA_VERSION,
        hostname: hostname(),
        tool: stack.tool,
        // What produced the entries, for `report`, `grid` and SUBMISSION.json.
        runtime: Some(Runtime::mlbench_run(stack.libtorch.clone())),
        commit: stack.commit,
        libtorch: stack.libtorch,
        cuda: stack.cuda,
        cudnn: stack.cudnn,
        os: os_release(),
        kernel: read_trimmed("/proc/sys/kernel/osrelease"),
        cpu,
        cores: devices.cores,
        memory_bytes: crate::confine::machine_memory(),
        devices: list,
        stopping: None,
        synthetic_data: false,
    }
}

/// Reads the description at the root of `out` (`system.json`), as a node wrote it.
pub fn read(out: &Path) -> Result<SystemInfo, SetupError> {
    let path = out.join(SYSTEM_NAME);
    let bytes = std::fs::read(&path).map_err(|source| SetupError::Io {
        path: path.clone(),
        action: "read",
        source,
    })?;
    SystemInfo::from_json(&bytes).ok_or_else(|| SetupError::Io {
        path,
        action: "read",
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, "not a machine description"),
    })
}

/// Writes `info` at the root of `out`: `system.json`, or `system.<hostname>.json` when a
/// `system.json` of another host is already there (nodes sharing OUT). Written beside and
/// linked or renamed into place, so a node never reads half a file; returns the path.
pub fn write(out: &Path, info: &SystemInfo) -> Result<PathBuf, SetupError> {
    let io = |path: &Path, action| {
        let path = path.to_path_buf();
        move |source| SetupError::Io {
            path,
            action,
            source,
        }
    };
    std::fs::create_dir_all(out).map_err(io(out, "create"))?;
    let mut text = serde_json::to_vec_pretty(info).unwrap_or_default();
    text.push(b'\n');
    let temp = out.join(format!(
        ".system.json.{}.{}",
        info.hostname,
        std::process::id()
    ));
    std::fs::write(&temp, &text).map_err(io(&temp, "write"))?;
    // Nodes sharing OUT (Slurm array tasks) may write at the same moment: a hard link
    // creates system.json only if it is not there, atomically, so the first node gets it
    // and no description is lost; a later one replaces it only when it is its own.
    let shared = out.join(SYSTEM_NAME);
    let dest = match std::fs::hard_link(&temp, &shared) {
        Ok(()) => {
            let _ = std::fs::remove_file(&temp);
            return Ok(shared);
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let existing = std::fs::read(&shared)
                .ok()
                .and_then(|bytes| SystemInfo::from_json(&bytes));
            match existing {
                Some(other) if other.hostname != info.hostname => {
                    out.join(format!("system.{}.json", info.hostname))
                }
                _ => shared,
            }
        }
        // A file system without hard links: rename, as for the jobs file.
        Err(_) => shared,
    };
    std::fs::rename(&temp, &dest).map_err(io(&dest, "write"))?;
    Ok(dest)
}

fn read_trimmed(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// `PRETTY_NAME` of /etc/os-release.
fn os_release() -> Option<String> {
    let text = std::fs::read_to_string("/etc/os-release").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim().trim_matches('"').to_owned())
}

/// The CPU model from /proc/cpuinfo (`model name`, or `Model`/`cpu` on other architectures).
pub fn cpu_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    ["model name", "Model", "cpu model", "cpu"]
        .iter()
        .find_map(|key| {
            text.lines().find_map(|line| {
                let (k, v) = line.split_once(':')?;
                (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_owned())
            })
        })
}

/// The name of CUDA device `ordinal` of this process (`torch.cuda.get_device_name(i)`, which
/// tch lacks), from `nvidia-smi`'s list (read once a process): every GPU's name when they
/// all have one; otherwise the one of the GPU that `ordinal` is, where that is known: CUDA
/// numbers the visible GPUs (`CUDA_VISIBLE_DEVICES`, by index) in nvidia-smi's order only
/// with `CUDA_DEVICE_ORDER=PCI_BUS_ID` (its default puts the fastest first). `None` when it
/// cannot tell (no nvidia-smi, GPUs named by UUID, mixed GPUs in CUDA's own order).
pub fn cuda_device_name(ordinal: u32) -> Option<String> {
    static GPUS: std::sync::OnceLock<Vec<DeviceInfo>> = std::sync::OnceLock::new();
    let gpus = GPUS.get_or_init(nvidia_smi);
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
    let order = std::env::var("CUDA_DEVICE_ORDER").ok();
    name_of_ordinal(gpus, ordinal, visible.as_deref(), order.as_deref())
}

/// [`cuda_device_name`] from nvidia-smi's `gpus` and the two variables.
fn name_of_ordinal(
    gpus: &[DeviceInfo],
    ordinal: u32,
    visible: Option<&str>,
    order: Option<&str>,
) -> Option<String> {
    let first = gpus.first().filter(|g| !g.name.is_empty())?;
    if gpus.iter().all(|g| g.name == first.name) {
        return Some(first.name.clone());
    }
    if order != Some("PCI_BUS_ID") {
        return None;
    }
    let index: u32 = match visible {
        None => ordinal,
        Some(list) => list.split(',').nth(ordinal as usize)?.trim().parse().ok()?,
    };
    gpus.iter()
        .find(|g| g.index == index && !g.name.is_empty())
        .map(|g| g.name.clone())
}

/// The GPUs `nvidia-smi` lists (empty when it is not installed or fails).
fn nvidia_smi() -> Vec<DeviceInfo> {
    let out = std::process::Command::new("nvidia-smi")
        .args([
            "--query-gpu=index,name,memory.total,driver_version,compute_cap",
            "--format=csv,noheader,nounits",
        ])
        .stdin(std::process::Stdio::null())
        .output();
    match out {
        Ok(out) if out.status.success() => parse_nvidia_smi(&String::from_utf8_lossy(&out.stdout)),
        _ => Vec::new(),
    }
}

/// `index, name, memory.total [MiB], driver_version, compute_cap` lines.
fn parse_nvidia_smi(text: &str) -> Vec<DeviceInfo> {
    text.lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split(',').map(str::trim).collect();
            let [index, name, memory, driver, cap] = cells.as_slice() else {
                return None;
            };
            let known = |s: &str| (!s.is_empty() && !s.starts_with('[')).then(|| s.to_owned());
            Some(DeviceInfo {
                index: index.parse().ok()?,
                kind: "cuda".into(),
                name: (*name).to_owned(),
                memory_bytes: memory.parse::<u64>().ok().map(|mib| mib << 20),
                driver: known(driver),
                compute_capability: known(cap),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvidia_smi_lines() {
        let text = "0, NVIDIA H100 80GB HBM3, 81559, 550.54.15, 9.0\n\
                    1, NVIDIA H100 80GB HBM3, 81559, 550.54.15, [N/A]\nnot a gpu\n";
        let gpus = parse_nvidia_smi(text);
        assert_eq!(gpus.len(), 2);
        assert_eq!(gpus[0].name, "NVIDIA H100 80GB HBM3");
        assert_eq!(gpus[0].memory_bytes, Some(81559 << 20));
        assert_eq!(gpus[0].driver.as_deref(), Some("550.54.15"));
        assert_eq!(gpus[0].compute_capability.as_deref(), Some("9.0"));
        assert_eq!(gpus[1].compute_capability, None);
    }

    /// One model: its name whatever the ordinal; mixed models: the ordinal's GPU only in
    /// nvidia-smi's (PCI) order, through CUDA_VISIBLE_DEVICES' indices.
    #[test]
    fn cuda_device_names_by_ordinal() {
        let gpu = |index, name: &str| DeviceInfo {
            index,
            name: name.into(),
            ..DeviceInfo::default()
        };
        let same = [
            gpu(0, "NVIDIA H100 80GB HBM3"),
            gpu(1, "NVIDIA H100 80GB HBM3"),
        ];
        let name = name_of_ordinal(&same, 1, Some("GPU-1a2b"), None);
        assert_eq!(name.as_deref(), Some("NVIDIA H100 80GB HBM3"));
        let mixed = [gpu(0, "Tesla V100"), gpu(1, "TITAN RTX"), gpu(2, "A100")];
        assert_eq!(name_of_ordinal(&mixed, 1, None, None), None);
        let pci = Some("PCI_BUS_ID");
        assert_eq!(
            name_of_ordinal(&mixed, 1, None, pci).as_deref(),
            Some("TITAN RTX")
        );
        let name = name_of_ordinal(&mixed, 0, Some("2,0"), pci);
        assert_eq!(name.as_deref(), Some("A100"));
        assert_eq!(name_of_ordinal(&mixed, 2, Some("2,0"), pci), None);
        assert_eq!(name_of_ordinal(&mixed, 0, Some("GPU-1a2b"), pci), None);
        assert_eq!(name_of_ordinal(&[], 0, None, pci), None);
    }

    #[test]
    fn cpu_devices_and_the_machine() {
        let devices = DeviceSet::cpu(4, 2).unwrap();
        let info = describe(
            &devices,
            Stack {
                tool: "mlbench 0.0.0".into(),
                ..Stack::default()
            },
        );
        assert_eq!(info.devices.len(), 2);
        // The runtime is a field of its own: the runner and its libtorch (unknown here).
        assert_eq!(info.runtime, Some(Runtime::mlbench_run(None)));
        assert_eq!(info.devices[1].index, 1);
        assert_eq!(info.devices[1].kind, "cpu");
        assert_eq!(info.cores, devices.cores);
        assert_eq!(info.hostname, hostname());
        #[cfg(target_os = "linux")]
        assert!(info.memory_bytes.is_some_and(|b| b > 1 << 20));
    }

    #[test]
    fn a_second_host_writes_beside_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut info = SystemInfo {
            hostname: "a".into(),
            ..SystemInfo::default()
        };
        assert_eq!(
            write(dir.path(), &info).unwrap(),
            dir.path().join("system.json")
        );
        // The same host again replaces its own description.
        assert_eq!(
            write(dir.path(), &info).unwrap(),
            dir.path().join("system.json")
        );
        info.hostname = "b".into();
        assert_eq!(
            write(dir.path(), &info).unwrap(),
            dir.path().join("system.b.json")
        );
        let first: SystemInfo =
            serde_json::from_slice(&std::fs::read(dir.path().join("system.json")).unwrap())
                .unwrap();
        assert_eq!(first.hostname, "a");
    }
}
