//! AMD GPUs through amdsmi (`libamd_smi.so`, loaded at run time with libloading), with
//! hwmon as the fallback where the library is missing or does not initialise.
//!
//! Only the few C functions needed are declared, by hand, with the signatures amdsmi's
//! header `amd_smi/amdsmi.h` documents (ROCm 6 and later):
//!
//! ```c
//! amdsmi_status_t amdsmi_init(uint64_t init_flags);
//! amdsmi_status_t amdsmi_shut_down(void);
//! amdsmi_status_t amdsmi_get_socket_handles(uint32_t *socket_count, amdsmi_socket_handle *socket_handles);
//! amdsmi_status_t amdsmi_get_processor_handles(amdsmi_socket_handle socket_handle,
//!     uint32_t *processor_count, amdsmi_processor_handle *processor_handles);
//! amdsmi_status_t amdsmi_get_energy_count(amdsmi_processor_handle processor_handle,
//!     uint64_t *energy_accumulator, float *counter_resolution, uint64_t *timestamp);
//! amdsmi_status_t amdsmi_get_gpu_bdf_id(amdsmi_processor_handle processor_handle, uint64_t *bdfid);
//! ```
//!
//! Energy is `energy_accumulator × counter_resolution` µJ. The accumulator is known to
//! step backward now and then; with no published range, such a step is a reset (flagged,
//! [`crate::counter`]). Power, temperature and the power cap come from the hwmon device of
//! the same PCI address (`amdsmi_get_power_info`'s struct changed between ROCm releases;
//! hwmon's files did not).

use crate::hwmon::{self, HwmonSource};
use crate::source::{Reading, Source, Unavailable};
use libloading::Library;
use mlbench_schema::telemetry::{Counter, Device, SourceKind};
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::Arc;

type Status = u32;
type Handle = *mut c_void;
const SUCCESS: Status = 0;
/// `AMDSMI_INIT_AMD_GPUS`.
const INIT_AMD_GPUS: u64 = 1 << 1;
/// Sockets and processors asked for at most (a machine has far fewer).
const MAX_HANDLES: usize = 64;

type InitFn = unsafe extern "C" fn(u64) -> Status;
type ShutDownFn = unsafe extern "C" fn() -> Status;
type SocketsFn = unsafe extern "C" fn(*mut u32, *mut Handle) -> Status;
type ProcessorsFn = unsafe extern "C" fn(Handle, *mut u32, *mut Handle) -> Status;
type EnergyFn = unsafe extern "C" fn(Handle, *mut u64, *mut f32, *mut u64) -> Status;
type BdfFn = unsafe extern "C" fn(Handle, *mut u64) -> Status;

/// The library names tried, in order.
const LIBRARIES: [&str; 2] = ["libamd_smi.so", "/opt/rocm/lib/libamd_smi.so"];

/// amdsmi, loaded and initialised for AMD GPUs; shut down when dropped.
pub struct AmdSmi {
    shut_down: ShutDownFn,
    sockets: SocketsFn,
    processors: ProcessorsFn,
    energy: EnergyFn,
    bdf: BdfFn,
    // Last: the functions above point into it.
    _lib: Library,
}

impl std::fmt::Debug for AmdSmi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AmdSmi")
    }
}

/// Looks `name` up in `lib` as a function of type `T`.
///
/// # Safety
/// `T` must be the function's C signature.
unsafe fn symbol<T: Copy>(lib: &Library, name: &str) -> Result<T, String> {
    // SAFETY: the caller gives the documented signature; the copy is used only while the
    // library is loaded (`AmdSmi` owns both).
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("{name}: {e}"))
}

impl AmdSmi {
    fn open(path: &Path) -> Result<Self, String> {
        let path = path.display();
        // SAFETY: loading runs the library's initialisers; amdsmi's are plain C++ statics.
        let lib = unsafe { Library::new(path.to_string()) }.map_err(|e| format!("{path}: {e}"))?;
        // SAFETY: each type is the signature of the header quoted in the module's docs.
        let init: InitFn = unsafe { symbol(&lib, "amdsmi_init")? };
        // SAFETY: as above.
        let (shut_down, sockets, processors, energy, bdf) = unsafe {
            (
                symbol(&lib, "amdsmi_shut_down")?,
                symbol(&lib, "amdsmi_get_socket_handles")?,
                symbol(&lib, "amdsmi_get_processor_handles")?,
                symbol(&lib, "amdsmi_get_energy_count")?,
                symbol(&lib, "amdsmi_get_gpu_bdf_id")?,
            )
        };
        // SAFETY: documented signature; no pointers.
        let status = unsafe { init(INIT_AMD_GPUS) };
        if status != SUCCESS {
            // Not initialised: nothing to shut down; the library is unloaded on return.
            return Err(format!("amdsmi_init: status {status}"));
        }
        Ok(AmdSmi {
            shut_down,
            sockets,
            processors,
            energy,
            bdf,
            _lib: lib,
        })
    }

    /// The GPUs' handles, socket by socket, in amdsmi's order.
    fn gpus(&self) -> Result<Vec<usize>, String> {
        let mut sockets = [std::ptr::null_mut(); MAX_HANDLES];
        let mut n = MAX_HANDLES as u32;
        // SAFETY: `n` holds the array's length, which amdsmi fills up to.
        let status = unsafe { (self.sockets)(&mut n, sockets.as_mut_ptr()) };
        if status != SUCCESS {
            return Err(format!("amdsmi_get_socket_handles: status {status}"));
        }
        let mut out = Vec::new();
        for &socket in &sockets[..(n as usize).min(MAX_HANDLES)] {
            let mut handles = [std::ptr::null_mut(); MAX_HANDLES];
            let mut m = MAX_HANDLES as u32;
            // SAFETY: as above, for one socket's processors.
            let status = unsafe { (self.processors)(socket, &mut m, handles.as_mut_ptr()) };
            if status != SUCCESS {
                return Err(format!("amdsmi_get_processor_handles: status {status}"));
            }
            out.extend(
                handles[..(m as usize).min(MAX_HANDLES)]
                    .iter()
                    .map(|&h| h as usize),
            );
        }
        Ok(out)
    }

    /// `(accumulator, resolution µJ)` of a GPU.
    fn energy(&self, gpu: usize) -> Result<(u64, f32), Status> {
        let (mut acc, mut res, mut ts) = (0u64, 0f32, 0u64);
        // SAFETY: a handle amdsmi gave, and three valid out-pointers.
        let status = unsafe { (self.energy)(gpu as Handle, &mut acc, &mut res, &mut ts) };
        if status == SUCCESS {
            Ok((acc, res))
        } else {
            Err(status)
        }
    }

    /// The GPU's PCI address, `0000:c1:00.0`.
    fn pci_address(&self, gpu: usize) -> Option<String> {
        let mut id = 0u64;
        // SAFETY: a handle amdsmi gave, and a valid out-pointer.
        let status = unsafe { (self.bdf)(gpu as Handle, &mut id) };
        (status == SUCCESS).then(|| pci_address(id))
    }
}

impl Drop for AmdSmi {
    fn drop(&mut self) {
        // SAFETY: initialised in `open`; nothing uses the library after this.
        unsafe { (self.shut_down)() };
    }
}

/// The PCI address of amdsmi's BDF id: domain in bits 32–63, bus 8–15, device 3–7,
/// function 0–2.
pub fn pci_address(id: u64) -> String {
    format!(
        "{:04x}:{:02x}:{:02x}.{:x}",
        id >> 32,
        (id >> 8) & 0xff,
        (id >> 3) & 0x1f,
        id & 0x7
    )
}

/// Loads and initialises amdsmi from its usual places.
///
/// # Errors
/// [`Unavailable`] when no library loads, lacks a function, or does not initialise.
pub fn load() -> Result<Arc<AmdSmi>, Unavailable> {
    let mut reasons = Vec::new();
    for path in LIBRARIES {
        match load_from(Path::new(path)) {
            Ok(smi) => return Ok(smi),
            Err(u) => reasons.push(u.reason),
        }
    }
    Err(Unavailable::new("amdsmi", reasons.join("; ")))
}

/// Loads and initialises the amdsmi library at `path` (a bare name is looked for where
/// the dynamic loader looks).
///
/// # Errors
/// [`Unavailable`] when it does not load, lacks a function, or does not initialise.
pub fn load_from(path: &Path) -> Result<Arc<AmdSmi>, Unavailable> {
    AmdSmi::open(path)
        .map(Arc::new)
        .map_err(|e| Unavailable::new("amdsmi", e))
}

/// One AMD GPU: energy from amdsmi, the rest from its hwmon device.
#[derive(Debug)]
pub struct AmdSmiSource {
    smi: Arc<AmdSmi>,
    gpu: usize,
    hwmon: Option<HwmonSource>,
    device: Device,
}

/// The hwmon folder of the PCI device `address` under `sys_root` (`/sys`).
fn hwmon_of(sys_root: &Path, address: &str) -> Option<PathBuf> {
    let dir = sys_root.join("bus/pci/devices").join(address).join("hwmon");
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| Some(e.ok()?.path()))
        .collect();
    found.sort();
    found.into_iter().next()
}

impl AmdSmiSource {
    /// Opens amdsmi's GPU `index` (amdsmi's order: by socket, then processor) as `id`.
    ///
    /// # Errors
    /// [`Unavailable`] when there is no such GPU or it gives no energy count.
    pub fn open(
        smi: Arc<AmdSmi>,
        index: usize,
        id: &str,
        sys_root: &Path,
    ) -> Result<Self, Unavailable> {
        let what = format!("amdsmi ({id}, index {index})");
        let gpus = smi.gpus().map_err(|e| Unavailable::new(&what, e))?;
        let &gpu = gpus
            .get(index)
            .ok_or_else(|| Unavailable::new(&what, format!("{} GPUs", gpus.len())))?;
        let (_, resolution) = smi
            .energy(gpu)
            .map_err(|s| Unavailable::new(&what, format!("amdsmi_get_energy_count: status {s}")))?;
        // A resolution that converts nothing would make every energy 0: no counter at all.
        if !(resolution > 0.0 && resolution.is_finite()) {
            let reason = format!("amdsmi_get_energy_count: counter_resolution {resolution}");
            return Err(Unavailable::new(&what, reason));
        }
        let mut facts = vec![format!(
            "index {index} is amdsmi's order (socket, then processor)"
        )];
        let hwmon = match smi.pci_address(gpu).and_then(|a| hwmon_of(sys_root, &a)) {
            Some(dir) => HwmonSource::open(&dir, id)
                .map_err(|u| facts.push(u.to_string()))
                .ok(),
            None => {
                facts.push("no hwmon device for its PCI address: no power, temperature".into());
                None
            }
        };
        let probe = hwmon
            .as_ref()
            .map(|h| h.probe().clone())
            .unwrap_or_default();
        facts.extend(probe.facts);
        let device = Device {
            id: id.to_owned(),
            source: SourceKind::Amdsmi,
            name: None,
            power_reading: probe.power_reading,
            counter: Some(Counter {
                resolution_uj: f64::from(resolution),
                wrap_raw: None,
            }),
            power_limit_mw: probe.power_limit_mw,
            whole_board: true,
            facts,
            ..Device::default()
        };
        Ok(Self {
            smi,
            gpu,
            hwmon,
            device,
        })
    }
}

impl Source for AmdSmiSource {
    fn probe(&self) -> &Device {
        &self.device
    }

    fn read(&mut self) -> Reading {
        let mut r = match &mut self.hwmon {
            Some(h) => h.read(),
            None => Reading::default(),
        };
        // The energy is amdsmi's, whatever hwmon gave.
        r.values.energy_raw = None;
        r.failed.retain(|f| !f.starts_with("energy_raw"));
        match self.smi.energy(self.gpu) {
            Ok((acc, _)) => r.values.energy_raw = Some(acc),
            Err(s) => r.fail("energy_raw", format!("amdsmi_get_energy_count: status {s}")),
        }
        r
    }
}

/// AMD GPU `index` as `id`: amdsmi where it loads, else the `index`-th `amdgpu` hwmon
/// device (in PCI order) under `sys_root`. The facts say why amdsmi was passed over.
///
/// # Errors
/// [`Unavailable`] when neither gives the GPU.
pub fn open(
    index: usize,
    id: &str,
    sys_root: &Path,
) -> Result<(Box<dyn Source>, Vec<String>), Unavailable> {
    let reason = match load().and_then(|smi| AmdSmiSource::open(smi, index, id, sys_root)) {
        Ok(s) => return Ok((Box::new(s), Vec::new())),
        Err(u) => u.to_string(),
    };
    let dirs = hwmon::find(&sys_root.join("class/hwmon"), &["amdgpu"]);
    let dir = dirs.get(index).ok_or_else(|| {
        Unavailable::new(
            format!("AMD GPU ({id})"),
            format!("{reason}; and {} amdgpu hwmon devices", dirs.len()),
        )
    })?;
    let source = HwmonSource::open(dir, id)?;
    Ok((
        Box::new(source),
        vec![format!("{reason}; hwmon used for {id}")],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bdf_ids_are_pci_addresses() {
        // Domain 0, bus 0xc1, device 0, function 0; then domain 1, bus 3, device 0x1f, function 7.
        assert_eq!(pci_address(0xc1 << 8), "0000:c1:00.0");
        assert_eq!(
            pci_address((1 << 32) | (3 << 8) | (0x1f << 3) | 7),
            "0001:03:1f.7"
        );
    }

    #[test]
    fn without_amdsmi_the_hwmon_fallback_is_used_and_said() {
        let root = tempfile::tempdir().unwrap();
        let hw = root.path().join("class/hwmon/hwmon4");
        std::fs::create_dir_all(&hw).unwrap();
        std::fs::write(hw.join("name"), "amdgpu\n").unwrap();
        std::fs::write(hw.join("power1_average"), "250000000\n").unwrap();
        let Err(_) = load() else {
            // A machine with amdsmi: the fallback is not what is used; nothing to check here.
            return;
        };
        let (mut source, facts) = open(0, "cuda:0", root.path()).unwrap();
        assert_eq!(
            source.probe().source,
            mlbench_schema::telemetry::SourceKind::Hwmon
        );
        assert_eq!(source.read().values.power_mw, Some(250_000.0));
        assert!(
            facts[0].starts_with("amdsmi: not available: libamd_smi.so: "),
            "{facts:?}"
        );
        let err = open(1, "cuda:1", root.path()).unwrap_err();
        assert!(err.reason.ends_with("and 1 amdgpu hwmon devices"), "{err}");
    }
}
