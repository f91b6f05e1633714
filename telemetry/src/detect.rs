//! Which sources sample a run's devices.
//!
//! A CUDA device is NVIDIA's through NVML where NVML loads, else AMD's (ROCm's PyTorch
//! calls its GPUs `cuda` too) through amdsmi or hwmon; an XPU device is an Intel GPU's
//! hwmon device. The CPU's sources (RAPL packages,
//! `/proc`) are added once for every run, whatever its devices: the CPU draws power in
//! every bench. What could not be opened is a fact for the file's header.

use crate::amdsmi;
use crate::cpu::{self, ProcSource};
use crate::hwmon::{self, HwmonSource};
use crate::nvml::{self, NvmlSource};
use crate::source::{Source, Unavailable};
use nvml_wrapper::Nvml;
use std::path::PathBuf;
use std::sync::Arc;

/// One device a copy runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceSpec {
    /// CUDA device index, as the copy sees it (after `CUDA_VISIBLE_DEVICES`).
    Cuda(u32),
    /// Intel GPU index (`xpu:N`): the N-th `i915` or `xe` hwmon device in PCI order.
    Xpu(u32),
    /// The CPU.
    Cpu,
}

/// The variable naming sysfs when it is not at `/sys` (a container given the host's
/// sysfs elsewhere; the end-to-end tests' counters): RAPL, hwmon and amdsmi's hwmon are
/// read under it.
pub const SYS_ROOT_VAR: &str = "MLBENCH_SYS_ROOT";

/// Where sources look, and for which process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetectOptions {
    /// The process whose resident memory is sampled (the copy).
    pub pid: u32,
    /// The run's processes: any other process on a GPU is recorded.
    pub own_pids: Vec<u32>,
    /// `/sys` (or [`SYS_ROOT_VAR`]'s).
    pub sys_root: PathBuf,
    /// `/proc`.
    pub proc_root: PathBuf,
    /// `CUDA_VISIBLE_DEVICES` as the copy has it.
    pub cuda_visible_devices: Option<String>,
}

impl DetectOptions {
    /// The real roots, the environment's `CUDA_VISIBLE_DEVICES`, for process `pid`.
    pub fn for_process(pid: u32) -> Self {
        Self {
            pid,
            own_pids: vec![pid],
            sys_root: std::env::var_os(SYS_ROOT_VAR).map_or_else(|| "/sys".into(), PathBuf::from),
            proc_root: PathBuf::from("/proc"),
            cuda_visible_devices: std::env::var("CUDA_VISIBLE_DEVICES").ok(),
        }
    }
}

/// The sources chosen, and the facts of what could not be opened.
#[derive(Default)]
pub struct Detected {
    /// One per device sampled, in the order they go in the file's header.
    pub sources: Vec<Box<dyn Source>>,
    /// Sources not available, and why.
    pub facts: Vec<String>,
}

impl std::fmt::Debug for Detected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.sources.iter().map(|s| s.probe().id.as_str()).collect();
        f.debug_struct("Detected")
            .field("sources", &ids)
            .field("facts", &self.facts)
            .finish()
    }
}

/// A GPU as NVML names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Physical {
    /// NVML's index.
    Index(u32),
    /// Its UUID (`GPU-…`).
    Uuid(String),
}

/// The GPU behind CUDA index `cuda` under `CUDA_VISIBLE_DEVICES` = `visible`.
///
/// The list's entries are indices or UUIDs (`GPU-…`); without a list the CUDA index is
/// NVML's. Both orders are the PCI bus order only under `CUDA_DEVICE_ORDER=PCI_BUS_ID`
/// (CUDA's default puts the fastest GPU first): on a machine of one GPU model they agree.
///
/// # Errors
/// The reason in words: an index past the list, a MIG instance, an entry not understood.
pub fn physical(visible: Option<&str>, cuda: u32) -> Result<Physical, String> {
    let Some(list) = visible.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(Physical::Index(cuda));
    };
    let entries: Vec<&str> = list.split(',').map(str::trim).collect();
    let entry = entries
        .get(cuda as usize)
        .ok_or_else(|| format!("CUDA_VISIBLE_DEVICES={list} has no device {cuda}"))?;
    if entry.starts_with("MIG-") {
        return Err(format!(
            "{entry} is a MIG instance: energy is the whole board's, which NVML gives by the GPU, not by the instance"
        ));
    }
    if entry.starts_with("GPU-") {
        return Ok(Physical::Uuid((*entry).to_owned()));
    }
    entry.parse().map(Physical::Index).map_err(|_| {
        format!("CUDA_VISIBLE_DEVICES entry `{entry}` is neither an index nor a GPU UUID")
    })
}

/// NVML's source for CUDA device `cuda`.
fn nvidia(nvml: &Arc<Nvml>, cuda: u32, opts: &DetectOptions) -> Result<NvmlSource, Unavailable> {
    let id = format!("cuda:{cuda}");
    let what = format!("NVML ({id})");
    let index = match physical(opts.cuda_visible_devices.as_deref(), cuda)
        .map_err(|e| Unavailable::new(&what, e))?
    {
        Physical::Index(i) => i,
        Physical::Uuid(uuid) => nvml
            .device_by_uuid(uuid.as_str())
            .and_then(|d| d.index())
            .map_err(|e| Unavailable::new(&what, format!("{uuid}: {e}")))?,
    };
    NvmlSource::open(Arc::clone(nvml), index, &id, &opts.own_pids)
}

/// hwmon's source for Intel GPU `xpu`.
fn intel(xpu: u32, opts: &DetectOptions) -> Result<HwmonSource, Unavailable> {
    let id = format!("xpu:{xpu}");
    let dirs = hwmon::find(&opts.sys_root.join("class/hwmon"), &["i915", "xe"]);
    let dir = dirs.get(xpu as usize).ok_or_else(|| {
        Unavailable::new(
            format!("hwmon ({id})"),
            format!("{} i915/xe hwmon devices", dirs.len()),
        )
    })?;
    HwmonSource::open(dir, &id)
}

/// The sources for `devices`, and the CPU's.
pub fn detect(devices: &[DeviceSpec], opts: &DetectOptions) -> Detected {
    let mut out = Detected::default();
    let mut nvml: Option<Result<Arc<Nvml>, Unavailable>> = None;
    for &spec in devices {
        let cuda = match spec {
            DeviceSpec::Cuda(cuda) => cuda,
            DeviceSpec::Xpu(xpu) => {
                match intel(xpu, opts) {
                    Ok(s) => out.sources.push(Box::new(s)),
                    Err(u) => out.facts.push(u.to_string()),
                }
                continue;
            }
            DeviceSpec::Cpu => continue,
        };
        let loaded = nvml.get_or_insert_with(nvml::load);
        let nvidia_reason = match loaded {
            Ok(n) => match nvidia(n, cuda, opts) {
                Ok(s) => {
                    out.sources.push(Box::new(s));
                    continue;
                }
                Err(u) => u.to_string(),
            },
            Err(u) => u.to_string(),
        };
        match amdsmi::open(cuda as usize, &format!("cuda:{cuda}"), &opts.sys_root) {
            Ok((source, facts)) => {
                out.sources.push(source);
                out.facts.extend(facts);
            }
            Err(u) => {
                out.facts.push(nvidia_reason);
                out.facts.push(u.to_string());
            }
        }
    }
    let (zones, facts) = cpu::rapl(&opts.sys_root.join("class/powercap"));
    out.sources
        .extend(zones.into_iter().map(|z| Box::new(z) as Box<dyn Source>));
    out.facts.extend(facts);
    match ProcSource::open(&opts.proc_root, opts.pid) {
        Ok(s) => out.sources.push(Box::new(s)),
        Err(u) => out.facts.push(u.to_string()),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlbench_schema::telemetry::SourceKind;
    use std::fs;
    use std::path::Path;

    #[test]
    fn cuda_indices_go_through_cuda_visible_devices() {
        assert_eq!(physical(None, 3), Ok(Physical::Index(3)));
        assert_eq!(physical(Some(" "), 1), Ok(Physical::Index(1)));
        assert_eq!(physical(Some("4,6"), 1), Ok(Physical::Index(6)));
        assert_eq!(
            physical(Some("GPU-8f7e, 2"), 0),
            Ok(Physical::Uuid("GPU-8f7e".into()))
        );
        assert_eq!(physical(Some("GPU-8f7e, 2"), 1), Ok(Physical::Index(2)));
        assert!(
            physical(Some("4,6"), 2)
                .unwrap_err()
                .contains("has no device 2")
        );
        assert!(
            physical(Some("MIG-1234"), 0)
                .unwrap_err()
                .contains("MIG instance")
        );
        assert!(
            physical(Some("gpu0"), 0)
                .unwrap_err()
                .contains("neither an index nor")
        );
    }

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    #[test]
    fn without_vendor_libraries_a_gpu_falls_to_hwmon_and_the_cpu_is_always_there() {
        if nvml::load().is_ok() || amdsmi::load().is_ok() {
            // A machine with a vendor library takes another path; this one is for those without.
            return;
        }
        let sys = tempfile::tempdir().unwrap();
        write(&sys.path().join("class/hwmon/hwmon0/name"), "amdgpu\n");
        write(
            &sys.path().join("class/hwmon/hwmon0/power1_input"),
            "90000000\n",
        );
        write(&sys.path().join("class/hwmon/hwmon1/name"), "xe\n");
        write(&sys.path().join("class/hwmon/hwmon1/energy1_input"), "5\n");
        write(
            &sys.path().join("class/powercap/intel-rapl:0/name"),
            "package-0\n",
        );
        write(
            &sys.path().join("class/powercap/intel-rapl:0/energy_uj"),
            "12\n",
        );
        let opts = DetectOptions {
            sys_root: sys.path().to_owned(),
            ..DetectOptions::for_process(std::process::id())
        };
        let found = detect(
            &[
                DeviceSpec::Cuda(0),
                DeviceSpec::Cuda(1),
                DeviceSpec::Xpu(0),
                DeviceSpec::Xpu(1),
                DeviceSpec::Cpu,
            ],
            &opts,
        );
        let kinds: Vec<(&str, SourceKind)> = found
            .sources
            .iter()
            .map(|s| (s.probe().id.as_str(), s.probe().source))
            .collect();
        assert_eq!(
            kinds,
            [
                ("cuda:0", SourceKind::Hwmon),
                ("xpu:0", SourceKind::Hwmon),
                ("cpu:package-0", SourceKind::Rapl),
                ("cpu:proc", SourceKind::Procfs),
            ]
        );
        // cuda:0: why amdsmi was passed over; cuda:1: why neither NVML nor AMD's sources;
        // xpu:1: there is one Intel GPU.
        assert_eq!(found.facts.len(), 4, "{:?}", found.facts);
        assert!(found.facts[0].ends_with("hwmon used for cuda:0"));
        assert!(found.facts[1].starts_with("NVML: not available: "));
        assert!(found.facts[2].starts_with("AMD GPU (cuda:1): not available: "));
        assert_eq!(
            found.facts[3],
            "hwmon (xpu:1): not available: 1 i915/xe hwmon devices"
        );
    }
}
