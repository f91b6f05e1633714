//! NVIDIA GPUs through NVML (`nvml-wrapper`, which loads `libnvidia-ml.so` at run time).
//!
//! - Energy: `nvmlDeviceGetTotalEnergyConsumption`, mJ since the driver was loaded,
//!   Volta and newer; NOT_SUPPORTED on older parts is a fact, and power is then the only
//!   measure. The counter is 64 bits: it does not wrap in practice, so a backward step is
//!   a reset (a driver reload).
//! - Power: `nvmlDeviceGetPowerUsage`, mW: a 1 s average on Ampere and newer except GA100
//!   (A100, A30, A800), instantaneous on older parts and on GA100 ([`power_reading_of`]).
//! - Utilisation, memory used, GPU temperature, SM and memory clocks where supported.
//!
//! What a device does not support is found when it is opened and written as a fact, so
//! each reading asks only for what it can give.

use crate::source::{Reading, Source, Unavailable};
use mlbench_schema::telemetry::{Counter, Device, PowerReading, SourceKind};
use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::enums::device::DeviceArchitecture;
use nvml_wrapper::error::NvmlError;
use std::path::Path;
use std::sync::Arc;

/// The library names tried, in order: the driver installs the versioned name; the bare
/// one comes with the development package.
const LIBRARIES: [&str; 2] = ["libnvidia-ml.so.1", "libnvidia-ml.so"];

/// Loads and initialises NVML from its usual names.
///
/// # Errors
/// [`Unavailable`] when no library loads or it does not initialise (no driver, no GPU).
pub fn load() -> Result<Arc<Nvml>, Unavailable> {
    let mut reasons = Vec::new();
    for lib in LIBRARIES {
        match load_from(Path::new(lib)) {
            Ok(nvml) => return Ok(nvml),
            Err(u) => reasons.push(u.reason),
        }
    }
    Err(Unavailable::new("NVML", reasons.join("; ")))
}

/// Loads and initialises the NVML library at `path` (a bare name is looked for where the
/// dynamic loader looks).
///
/// # Errors
/// [`Unavailable`] when it does not load or does not initialise.
pub fn load_from(path: &Path) -> Result<Arc<Nvml>, Unavailable> {
    Nvml::builder()
        .lib_path(path.as_os_str())
        .init()
        .map(Arc::new)
        .map_err(|e| Unavailable::new("NVML", format!("{}: {e}", path.display())))
}

/// What `nvmlDeviceGetPowerUsage` returns on a device of `arch` named `name`: a 1 s
/// average on Ampere and newer, except GA100 (A100, A30, A800), which reads
/// instantaneously like the generations before Ampere.
pub fn power_reading_of(arch: Option<DeviceArchitecture>, name: &str) -> PowerReading {
    use DeviceArchitecture as A;
    let ga100 = name
        .split(|c: char| c.is_whitespace() || c == '-')
        // A100 and A800 in every form (A100X too), A30 and A30X.
        .any(|w| w.starts_with("A100") || w.starts_with("A800") || matches!(w, "A30" | "A30X"));
    match arch {
        Some(A::Ampere) if ga100 => PowerReading::Instantaneous,
        Some(A::Ampere | A::Ada | A::Hopper | A::Blackwell) => PowerReading::Average,
        Some(A::Kepler | A::Maxwell | A::Pascal | A::Volta | A::Turing) => {
            PowerReading::Instantaneous
        }
        Some(A::Unknown) | None => PowerReading::Unknown,
    }
}

/// Which readings a device gave when it was opened.
#[derive(Debug, Clone, Copy, Default)]
struct Supported {
    energy: bool,
    power: bool,
    utilisation: bool,
    memory: bool,
    temperature: bool,
    sm_clock: bool,
    memory_clock: bool,
}

/// One NVIDIA GPU.
pub struct NvmlSource {
    nvml: Arc<Nvml>,
    index: u32,
    supported: Supported,
    device: Device,
}

impl std::fmt::Debug for NvmlSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NvmlSource")
            .field("index", &self.index)
            .field("device", &self.device)
            .finish()
    }
}

/// A supported reading: its value, or its failure in `failed`; nothing asked when `on` is
/// false (not supported).
fn get<T>(
    on: bool,
    field: &str,
    failed: &mut Vec<String>,
    read: impl FnOnce() -> Result<T, NvmlError>,
) -> Option<T> {
    if !on {
        return None;
    }
    read()
        .map_err(|e| failed.push(format!("{field}: {e}")))
        .ok()
}

/// `Ok` as `true`; NOT_SUPPORTED as `false` with a fact; another error as `false` with
/// another fact.
fn supports<T>(what: &str, result: Result<T, NvmlError>, facts: &mut Vec<String>) -> bool {
    match result {
        Ok(_) => true,
        Err(NvmlError::NotSupported) => {
            facts.push(format!("{what}: not supported by this device"));
            false
        }
        Err(e) => {
            facts.push(format!("{what}: {e}"));
            false
        }
    }
}

impl NvmlSource {
    /// Opens the GPU of NVML index `index` as the device `id` (`cuda:0`); `own_pids` are
    /// the run's processes, so that any other process on the GPU is recorded.
    ///
    /// # Errors
    /// [`Unavailable`] when NVML has no such device.
    pub fn open(
        nvml: Arc<Nvml>,
        index: u32,
        id: &str,
        own_pids: &[u32],
    ) -> Result<Self, Unavailable> {
        let gpu = nvml
            .device_by_index(index)
            .map_err(|e| Unavailable::new(format!("NVML ({id}, index {index})"), e))?;
        let mut facts = Vec::new();
        let name = gpu.name().ok();
        let supported = Supported {
            energy: supports(
                "energy counter (Volta and newer)",
                gpu.total_energy_consumption(),
                &mut facts,
            ),
            power: supports("power", gpu.power_usage(), &mut facts),
            utilisation: supports("utilisation", gpu.utilization_rates(), &mut facts),
            memory: supports("memory used", gpu.memory_info(), &mut facts),
            temperature: supports(
                "temperature",
                gpu.temperature(TemperatureSensor::Gpu),
                &mut facts,
            ),
            sm_clock: supports("SM clock", gpu.clock_info(Clock::SM), &mut facts),
            memory_clock: supports("memory clock", gpu.clock_info(Clock::Memory), &mut facts),
        };
        let mig = gpu.mig_mode().ok().map(|m| m.current == 1);
        let other_processes = gpu.running_compute_processes().ok().map(|ps| {
            ps.iter()
                .map(|p| p.pid)
                .filter(|p| !own_pids.contains(p))
                .collect::<Vec<u32>>()
        });
        let power_reading =
            power_reading_of(gpu.architecture().ok(), name.as_deref().unwrap_or(""));
        let device = Device {
            id: id.to_owned(),
            source: SourceKind::Nvml,
            name,
            power_reading,
            counter: supported.energy.then_some(Counter {
                resolution_uj: 1000.0,
                wrap_raw: None,
            }),
            power_limit_mw: gpu.enforced_power_limit().ok().map(f64::from),
            whole_board: true,
            mig,
            other_processes,
            facts,
        };
        Ok(Self {
            nvml,
            index,
            supported,
            device,
        })
    }
}

impl Source for NvmlSource {
    fn probe(&self) -> &Device {
        &self.device
    }

    fn read(&mut self) -> Reading {
        let mut r = Reading::default();
        let gpu = match self.nvml.device_by_index(self.index) {
            Ok(gpu) => gpu,
            Err(e) => {
                r.fail("device", e);
                return r;
            }
        };
        let s = self.supported;
        let f = &mut r.failed;
        let v = &mut r.values;
        v.energy_raw = get(s.energy, "energy_raw", f, || gpu.total_energy_consumption());
        v.power_mw = get(s.power, "power_mw", f, || gpu.power_usage()).map(f64::from);
        v.util_pct =
            get(s.utilisation, "util_pct", f, || gpu.utilization_rates()).map(|u| f64::from(u.gpu));
        v.memory_bytes = get(s.memory, "memory_bytes", f, || gpu.memory_info()).map(|m| m.used);
        v.temperature_c = get(s.temperature, "temperature_c", f, || {
            gpu.temperature(TemperatureSensor::Gpu)
        })
        .map(f64::from);
        v.sm_clock_mhz = get(s.sm_clock, "sm_clock_mhz", f, || gpu.clock_info(Clock::SM));
        v.memory_clock_mhz = get(s.memory_clock, "memory_clock_mhz", f, || {
            gpu.clock_info(Clock::Memory)
        });
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_power_reading_follows_the_architecture_and_ga100() {
        use DeviceArchitecture as A;
        let r = power_reading_of;
        assert_eq!(
            r(Some(A::Hopper), "NVIDIA H100 80GB HBM3"),
            PowerReading::Average
        );
        assert_eq!(
            r(Some(A::Ampere), "NVIDIA A100-SXM4-80GB"),
            PowerReading::Instantaneous
        );
        assert_eq!(
            r(Some(A::Ampere), "NVIDIA A30"),
            PowerReading::Instantaneous
        );
        // GA102/GA104 parts are averaged, whatever digits their names share with GA100's.
        assert_eq!(
            r(Some(A::Ampere), "NVIDIA RTX A3000 Laptop GPU"),
            PowerReading::Average
        );
        assert_eq!(r(Some(A::Ampere), "NVIDIA A10"), PowerReading::Average);
        assert_eq!(
            r(Some(A::Volta), "Tesla V100-SXM2-32GB"),
            PowerReading::Instantaneous
        );
        assert_eq!(r(Some(A::Unknown), "NVIDIA B300"), PowerReading::Unknown);
        assert_eq!(r(None, ""), PowerReading::Unknown);
    }

    #[test]
    fn nvml_loads_or_says_why_not() {
        match load() {
            // A machine with the driver: every GPU opens and reads without panicking.
            Ok(nvml) => {
                let n = nvml.device_count().unwrap();
                for i in 0..n {
                    let mut s =
                        NvmlSource::open(Arc::clone(&nvml), i, &format!("cuda:{i}"), &[]).unwrap();
                    let r = s.read();
                    eprintln!("{:?}\n{r:?}", s.probe());
                    assert!(r.values.power_mw.is_some() || !s.supported.power);
                }
            }
            // This machine (no GPU, no driver): a fact naming both libraries tried.
            Err(u) => {
                assert_eq!(u.what, "NVML");
                assert!(
                    u.reason.contains("libnvidia-ml.so.1: ")
                        && u.reason.contains("libnvidia-ml.so: "),
                    "{u}"
                );
            }
        }
    }
}
