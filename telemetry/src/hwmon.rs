//! Linux hwmon (`/sys/class/hwmon/hwmonN`): the energy and power of AMD GPUs (`amdgpu`,
//! amdsmi's fallback) and Intel GPUs (`i915`, `xe`).
//!
//! Units are the kernel's (Documentation/hwmon/sysfs-interface): `energyN_input` µJ,
//! `powerN_average` and `powerN_input` µW, `powerN_cap` µW, `tempN_input` m°C. i915's
//! `energy1_input` comes from a 32-bit register the kernel extends, handling one wrap
//! between two reads; its full range is not published, so a backward step is a reset.
//! Every reader takes its root as a path, so tests run on a folder tree made for them.

use crate::source::{Reading, Source, Unavailable};
use mlbench_schema::telemetry::{Counter, Device, PowerReading, SourceKind};
use std::io;
use std::path::{Path, PathBuf};

/// Channels looked at for each file kind (`energy1_input` … `energy8_input`).
const CHANNELS: u32 = 8;

/// The words of a file that is there but cannot be read.
pub(crate) fn unreadable(path: &Path, e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::PermissionDenied {
        format!("{}: unreadable (permission denied)", path.display())
    } else {
        format!("{}: unreadable ({e})", path.display())
    }
}

/// Reads a sysfs file holding one unsigned number.
pub(crate) fn read_u64(path: &Path) -> io::Result<u64> {
    let text = std::fs::read_to_string(path)?;
    text.trim().parse().map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("`{}`: {e}", text.trim()),
        )
    })
}

/// The first channel `prefix{N}_{suffix}` of `dir` that reads as a number; what made the
/// others unusable goes to `facts` (a missing file is no fact: most channels are absent).
fn first_channel(
    dir: &Path,
    prefix: &str,
    suffix: &str,
    facts: &mut Vec<String>,
) -> Option<PathBuf> {
    (1..=CHANNELS).find_map(|n| {
        let path = dir.join(format!("{prefix}{n}_{suffix}"));
        match read_u64(&path) {
            Ok(_) => Some(path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => {
                facts.push(unreadable(&path, &e));
                None
            }
        }
    })
}

/// One hwmon device.
#[derive(Debug)]
pub struct HwmonSource {
    device: Device,
    energy: Option<PathBuf>,
    power: Option<PathBuf>,
    temperature: Option<PathBuf>,
}

impl HwmonSource {
    /// Opens the hwmon device at `dir` as the device `id`: its first readable energy
    /// counter, its average power (else its instantaneous power), temperature and cap.
    ///
    /// # Errors
    /// [`Unavailable`] when `dir` is no hwmon device, or has neither energy nor power.
    pub fn open(dir: &Path, id: &str) -> Result<Self, Unavailable> {
        let what = format!("hwmon {} ({id})", dir.display());
        let name = std::fs::read_to_string(dir.join("name"))
            .map_err(|e| Unavailable::new(&what, unreadable(&dir.join("name"), &e)))?;
        let mut facts = Vec::new();
        let energy = first_channel(dir, "energy", "input", &mut facts);
        let (power, power_reading) = match first_channel(dir, "power", "average", &mut facts) {
            Some(p) => (Some(p), PowerReading::Average),
            None => match first_channel(dir, "power", "input", &mut facts) {
                Some(p) => (Some(p), PowerReading::Instantaneous),
                None => (None, PowerReading::Unknown),
            },
        };
        if energy.is_none() && power.is_none() {
            let mut reason = "neither an energy counter nor a power reading".to_owned();
            for fact in &facts {
                reason.push_str("; ");
                reason.push_str(fact);
            }
            return Err(Unavailable::new(what, reason));
        }
        let temperature = first_channel(dir, "temp", "input", &mut facts);
        let cap = first_channel(dir, "power", "cap", &mut facts).and_then(|p| read_u64(&p).ok());
        let device = Device {
            id: id.to_owned(),
            source: SourceKind::Hwmon,
            name: Some(name.trim().to_owned()),
            power_reading,
            counter: energy.as_ref().map(|_| Counter {
                resolution_uj: 1.0,
                wrap_raw: None,
            }),
            power_limit_mw: cap.map(|uw| uw as f64 / 1000.0),
            whole_board: true,
            facts,
            ..Device::default()
        };
        Ok(Self {
            device,
            energy,
            power,
            temperature,
        })
    }
}

impl Source for HwmonSource {
    fn probe(&self) -> &Device {
        &self.device
    }

    fn read(&mut self) -> Reading {
        let mut r = Reading::default();
        if let Some(path) = &self.energy {
            match read_u64(path) {
                Ok(uj) => r.values.energy_raw = Some(uj),
                Err(e) => r.fail("energy_raw", e),
            }
        }
        if let Some(path) = &self.power {
            match read_u64(path) {
                Ok(uw) => r.values.power_mw = Some(uw as f64 / 1000.0),
                Err(e) => r.fail("power_mw", e),
            }
        }
        if let Some(path) = &self.temperature {
            match read_u64(path) {
                Ok(mc) => r.values.temperature_c = Some(mc as f64 / 1000.0),
                Err(e) => r.fail("temperature_c", e),
            }
        }
        r
    }
}

/// The hwmon devices under `class_root` (`/sys/class/hwmon`) whose driver `name` is one of
/// `drivers`, in the order of the devices they belong to (their PCI addresses), which is
/// how a GPU's index is matched to one.
pub fn find(class_root: &Path, drivers: &[&str]) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(class_root) else {
        return Vec::new();
    };
    let mut found: Vec<(PathBuf, PathBuf)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|dir| {
            std::fs::read_to_string(dir.join("name")).is_ok_and(|n| drivers.contains(&n.trim()))
        })
        .map(|dir| {
            let key = std::fs::canonicalize(dir.join("device")).unwrap_or_else(|_| dir.clone());
            (key, dir)
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, dir)| dir).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn card(root: &Path, dir: &str, files: &[(&str, &str)]) -> PathBuf {
        let d = root.join(dir);
        fs::create_dir_all(&d).unwrap();
        for (name, text) in files {
            fs::write(d.join(name), text).unwrap();
        }
        d
    }

    #[test]
    fn an_intel_card_reads_energy_and_power_in_their_units() {
        let root = tempfile::tempdir().unwrap();
        let dir = card(
            root.path(),
            "hwmon3",
            &[
                ("name", "i915\n"),
                ("energy1_input", "123456789\n"),
                ("power1_input", "45500000\n"),
                ("power1_cap", "150000000\n"),
                ("temp1_input", "61500\n"),
            ],
        );
        let mut s = HwmonSource::open(&dir, "xpu:0").unwrap();
        let d = s.probe();
        assert_eq!(d.name.as_deref(), Some("i915"));
        assert_eq!(d.power_reading, PowerReading::Instantaneous);
        assert_eq!(d.counter.unwrap().resolution_uj, 1.0);
        assert_eq!(d.counter.unwrap().wrap_raw, None);
        assert_eq!(d.power_limit_mw, Some(150_000.0));
        let r = s.read();
        assert_eq!(r.values.energy_raw, Some(123_456_789));
        assert_eq!(r.values.power_mw, Some(45_500.0));
        assert_eq!(r.values.temperature_c, Some(61.5));
        assert!(r.failed.is_empty());
        // The counter moves on.
        fs::write(dir.join("energy1_input"), "123999999\n").unwrap();
        assert_eq!(s.read().values.energy_raw, Some(123_999_999));
    }

    #[test]
    fn an_average_power_is_preferred_and_said() {
        let root = tempfile::tempdir().unwrap();
        let dir = card(
            root.path(),
            "hwmon1",
            &[
                ("name", "amdgpu\n"),
                ("power1_average", "300000000\n"),
                ("power1_input", "310000000\n"),
            ],
        );
        let mut s = HwmonSource::open(&dir, "cuda:0").unwrap();
        assert_eq!(s.probe().power_reading, PowerReading::Average);
        assert_eq!(s.probe().counter, None);
        assert_eq!(s.read().values.power_mw, Some(300_000.0));
    }

    #[test]
    fn an_unreadable_file_is_a_fact_and_a_vanished_one_a_failed_read() {
        let root = tempfile::tempdir().unwrap();
        // A folder where a number should be: read_to_string fails, as an unreadable file.
        let dir = card(
            root.path(),
            "hwmon2",
            &[("name", "xe\n"), ("power1_input", "1000\n")],
        );
        fs::create_dir(dir.join("energy1_input")).unwrap();
        let mut s = HwmonSource::open(&dir, "xpu:1").unwrap();
        assert_eq!(s.probe().counter, None);
        assert_eq!(s.probe().facts.len(), 1);
        assert!(
            s.probe().facts[0].contains("energy1_input: unreadable"),
            "{:?}",
            s.probe().facts
        );
        fs::remove_file(dir.join("power1_input")).unwrap();
        let r = s.read();
        assert_eq!(r.values.power_mw, None);
        assert_eq!(r.failed.len(), 1);
        assert!(r.failed[0].starts_with("power_mw: "));
    }

    #[test]
    fn a_device_without_energy_or_power_is_not_available() {
        let root = tempfile::tempdir().unwrap();
        let dir = card(
            root.path(),
            "hwmon0",
            &[("name", "coretemp\n"), ("temp1_input", "40000\n")],
        );
        let err = HwmonSource::open(&dir, "cuda:0").unwrap_err();
        assert!(err.to_string().contains("not available: neither"), "{err}");
        let err = HwmonSource::open(&root.path().join("nothing"), "cuda:0").unwrap_err();
        assert!(err.reason.contains("name: unreadable"), "{err}");
    }

    #[test]
    fn devices_are_found_by_driver_in_device_order() {
        let root = tempfile::tempdir().unwrap();
        let pci = root.path().join("pci");
        for (hw, name, dev) in [
            ("hwmon0", "amdgpu", "0000:c1:00.0"),
            ("hwmon1", "coretemp", "0000:00:00.0"),
            ("hwmon2", "amdgpu", "0000:03:00.0"),
        ] {
            let d = card(&root.path().join("class"), hw, &[("name", name)]);
            fs::create_dir_all(pci.join(dev)).unwrap();
            std::os::unix::fs::symlink(pci.join(dev), d.join("device")).unwrap();
        }
        let found = find(&root.path().join("class"), &["amdgpu"]);
        let names: Vec<_> = found
            .iter()
            .map(|p| p.file_name().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["hwmon2", "hwmon0"]);
        assert!(find(&root.path().join("absent"), &["amdgpu"]).is_empty());
    }
}
