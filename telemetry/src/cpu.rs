//! The CPU's side: RAPL package energy (Linux powercap), the machine's utilisation
//! (`/proc/stat`) and the copy's resident memory (`/proc/<pid>/status`).
//!
//! RAPL's `energy_uj` counts µJ modulo `max_energy_range_uj` (+ one count: the hardware
//! register is 32 bits of energy units, so the range is exact to one unit, ≈61 µJ).
//! Since Linux 5.10 only root may read it (CVE-2020-8694, the Platypus side channel):
//! unreadable is a fact that says so, never an error. The readers take their roots as
//! paths, so tests run on folder trees made for them.

use crate::hwmon::{read_u64, unreadable};
use crate::source::{Reading, Source, Unavailable};
use mlbench_schema::telemetry::{Counter, Device, PowerReading, SourceKind};
use std::io;
use std::path::{Path, PathBuf};

/// What an unreadable `energy_uj` means, in words.
pub const ROOT_ONLY: &str = "unreadable: root-only since Linux 5.10 (CVE-2020-8694); \
    run as root, or make energy_uj readable (a udev rule or chmod)";

/// The fact for a RAPL file that could not be read.
pub fn rapl_fact(path: &Path, e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::PermissionDenied {
        format!("{}: {ROOT_ONLY}", path.display())
    } else {
        unreadable(path, e)
    }
}

/// One RAPL zone (a CPU package, or the platform's `psys`).
#[derive(Debug)]
pub struct RaplSource {
    device: Device,
    energy: PathBuf,
}

impl RaplSource {
    /// Opens the zone at `dir` (`/sys/class/powercap/intel-rapl:0`).
    ///
    /// # Errors
    /// [`Unavailable`] when its `energy_uj` cannot be read (root-only since Linux 5.10).
    pub fn open(dir: &Path) -> Result<Self, Unavailable> {
        let name = std::fs::read_to_string(dir.join("name"))
            .map(|n| n.trim().to_owned())
            .unwrap_or_else(|_| {
                dir.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned()
            });
        let id = format!("cpu:{name}");
        let energy = dir.join("energy_uj");
        read_u64(&energy)
            .map_err(|e| Unavailable::new(format!("RAPL ({id})"), rapl_fact(&energy, &e)))?;
        let mut facts = Vec::new();
        let range_path = dir.join("max_energy_range_uj");
        let wrap_raw = match read_u64(&range_path) {
            Ok(max) => Some(max.saturating_add(1)),
            Err(e) => {
                facts.push(format!(
                    "{}; a backward step is then a reset",
                    rapl_fact(&range_path, &e)
                ));
                None
            }
        };
        let device = Device {
            id,
            source: SourceKind::Rapl,
            name: Some(name),
            power_reading: PowerReading::Unknown,
            counter: Some(Counter {
                resolution_uj: 1.0,
                wrap_raw,
            }),
            whole_board: true,
            facts,
            ..Device::default()
        };
        Ok(Self { device, energy })
    }
}

impl Source for RaplSource {
    fn probe(&self) -> &Device {
        &self.device
    }

    fn read(&mut self) -> Reading {
        let mut r = Reading::default();
        match read_u64(&self.energy) {
            Ok(uj) => r.values.energy_raw = Some(uj),
            Err(e) => r.fail("energy_raw", e),
        }
        r
    }
}

/// The top-level RAPL zones under `powercap_root` (`/sys/class/powercap`): `intel-rapl:N`
/// (AMD's CPUs use the same names), in N's order; and the facts of those that could not
/// be opened, or of there being none.
pub fn rapl(powercap_root: &Path) -> (Vec<RaplSource>, Vec<String>) {
    let mut zones: Vec<(u32, PathBuf)> = std::fs::read_dir(powercap_root)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            // `intel-rapl:0` is a package; `intel-rapl:0:1` its subzone (counted in it).
            let n = name.strip_prefix("intel-rapl:")?.parse().ok()?;
            Some((n, e.path()))
        })
        .collect();
    zones.sort();
    if zones.is_empty() {
        let fact = format!(
            "RAPL: not available: no intel-rapl zones under {} (no powercap driver, or a container without it)",
            powercap_root.display()
        );
        return (Vec::new(), vec![fact]);
    }
    let mut sources = Vec::new();
    let mut facts = Vec::new();
    for (_, dir) in zones {
        match RaplSource::open(&dir) {
            Ok(s) => sources.push(s),
            Err(u) => facts.push(u.to_string()),
        }
    }
    (sources, facts)
}

/// The machine's CPU time so far, in `/proc/stat`'s ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTimes {
    /// Ticks not idle.
    pub busy: u64,
    /// All ticks.
    pub total: u64,
}

/// The `cpu` line of `/proc/stat`: `user nice system idle iowait irq softirq steal
/// [guest guest_nice]`. Idle is `idle + iowait`; `guest` is already in `user`, so only
/// the first eight count. `None` when there is no such line.
pub fn parse_stat(text: &str) -> Option<CpuTimes> {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some("cpu"))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    if fields.len() < 4 {
        return None;
    }
    let total: u64 = fields.iter().sum();
    let idle = fields[3] + fields.get(4).copied().unwrap_or(0);
    Some(CpuTimes {
        busy: total - idle,
        total,
    })
}

/// Utilisation in percent between two readings; `None` when no time passed (or the
/// counters went back).
pub fn utilisation(prev: CpuTimes, cur: CpuTimes) -> Option<f64> {
    let total = cur.total.checked_sub(prev.total).filter(|&t| t > 0)?;
    let busy = cur.busy.checked_sub(prev.busy)?;
    Some(100.0 * busy as f64 / total as f64)
}

/// The resident memory of process `pid` in bytes: `VmRSS` of `<proc_root>/<pid>/status`.
///
/// # Errors
/// The read's, or `InvalidData` when there is no `VmRSS: N kB` line (a kernel thread).
pub fn rss_bytes(proc_root: &Path, pid: u32) -> io::Result<u64> {
    let text = std::fs::read_to_string(proc_root.join(pid.to_string()).join("status"))?;
    text.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().strip_suffix("kB")?.trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no `VmRSS: N kB` line"))
}

/// The machine's CPU utilisation and one process's resident memory, from `/proc`.
#[derive(Debug)]
pub struct ProcSource {
    device: Device,
    root: PathBuf,
    pid: u32,
    prev: Option<CpuTimes>,
}

impl ProcSource {
    /// Opens `/proc` at `proc_root` for process `pid`; the first reading's utilisation is
    /// over the time since this call.
    ///
    /// # Errors
    /// [`Unavailable`] when neither `stat` nor the process's `status` can be read.
    pub fn open(proc_root: &Path, pid: u32) -> Result<Self, Unavailable> {
        let stat = proc_root.join("stat");
        let prev = std::fs::read_to_string(&stat)
            .ok()
            .and_then(|t| parse_stat(&t));
        let rss = rss_bytes(proc_root, pid);
        let mut facts = vec![
            "util_pct: all CPUs of the machine, every process; memory_bytes: the copy's resident set (VmRSS)".to_owned(),
        ];
        if prev.is_none() {
            facts.push(format!("{}: no `cpu` line; no utilisation", stat.display()));
        }
        if let Err(e) = &rss {
            if prev.is_none() {
                return Err(Unavailable::new(format!("/proc (pid {pid})"), e));
            }
            facts.push(format!("pid {pid}: no resident memory ({e})"));
        }
        let device = Device {
            id: "cpu:proc".to_owned(),
            source: SourceKind::Procfs,
            facts,
            ..Device::default()
        };
        Ok(Self {
            device,
            root: proc_root.to_owned(),
            pid,
            prev,
        })
    }
}

impl Source for ProcSource {
    fn probe(&self) -> &Device {
        &self.device
    }

    fn read(&mut self) -> Reading {
        let mut r = Reading::default();
        match std::fs::read_to_string(self.root.join("stat")).map(|t| parse_stat(&t)) {
            Ok(Some(cur)) => {
                r.values.util_pct = self.prev.and_then(|p| utilisation(p, cur));
                self.prev = Some(cur);
            }
            Ok(None) => r.fail("util_pct", "no `cpu` line in stat"),
            Err(e) => r.fail("util_pct", e),
        }
        match rss_bytes(&self.root, self.pid) {
            Ok(b) => r.values.memory_bytes = Some(b),
            Err(e) => r.fail("memory_bytes", e),
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter::{self, Step};
    use std::fs;

    #[test]
    fn stat_times_and_utilisation_by_hand() {
        // user 100, nice 20, system 30, idle 400, iowait 50, irq 5, softirq 5, steal 0,
        // guest 7 (already in user: left out): total 610, idle 450, busy 160.
        let a = parse_stat("cpu  100 20 30 400 50 5 5 0 7 0\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!(
            a,
            CpuTimes {
                busy: 160,
                total: 610
            }
        );
        // 100 more busy ticks out of 200: 50 %.
        let b = CpuTimes {
            busy: 260,
            total: 810,
        };
        assert_eq!(utilisation(a, b), Some(50.0));
        assert_eq!(utilisation(a, a), None);
        assert_eq!(utilisation(b, a), None);
        assert_eq!(parse_stat("cpu0 1 2 3 4\n"), None);
        assert_eq!(parse_stat("cpu 1 x 3 4\n"), None);
    }

    #[test]
    fn resident_memory_is_vmrss_in_bytes() {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir(root.path().join("42")).unwrap();
        fs::write(
            root.path().join("42/status"),
            "Name:\tpython\nVmRSS:\t    2048 kB\nThreads:\t9\n",
        )
        .unwrap();
        assert_eq!(rss_bytes(root.path(), 42).unwrap(), 2048 * 1024);
        fs::create_dir(root.path().join("2")).unwrap();
        fs::write(root.path().join("2/status"), "Name:\tkthreadd\n").unwrap();
        assert_eq!(
            rss_bytes(root.path(), 2).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        assert_eq!(
            rss_bytes(root.path(), 7).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }

    fn zone(root: &Path, dir: &str, files: &[(&str, &str)]) -> PathBuf {
        let d = root.join(dir);
        fs::create_dir_all(&d).unwrap();
        for (name, text) in files {
            fs::write(d.join(name), text).unwrap();
        }
        d
    }

    #[test]
    fn rapl_zones_wrap_at_their_range_and_unreadable_ones_are_facts() {
        let root = tempfile::tempdir().unwrap();
        let z0 = zone(
            root.path(),
            "intel-rapl:0",
            &[
                ("name", "package-0\n"),
                ("energy_uj", "262143328000\n"),
                ("max_energy_range_uj", "262143328850\n"),
            ],
        );
        // A subzone (counted in its package) and a zone whose counter cannot be read (a
        // folder where the file should be: the fixture's stand-in for an unreadable file,
        // as the tests may run as root, whom permissions do not stop).
        zone(
            root.path(),
            "intel-rapl:0:0",
            &[("name", "core\n"), ("energy_uj", "5\n")],
        );
        let z1 = zone(root.path(), "intel-rapl:1", &[("name", "package-1\n")]);
        fs::create_dir(z1.join("energy_uj")).unwrap();
        let (mut zones, facts) = rapl(root.path());
        assert_eq!(zones.len(), 1);
        assert_eq!(facts.len(), 1);
        assert!(
            facts[0].starts_with("RAPL (cpu:package-1): not available: "),
            "{facts:?}"
        );
        let d = zones[0].probe().clone();
        assert_eq!(d.id, "cpu:package-0");
        assert_eq!(d.counter.unwrap().wrap_raw, Some(262_143_328_851));
        let first = zones[0].read().values.energy_raw.unwrap();
        fs::write(z0.join("energy_uj"), "1149\n").unwrap();
        let second = zones[0].read().values.energy_raw.unwrap();
        // 851 µJ to the end of the range, then 1 149 after it.
        assert_eq!(
            counter::step(first, second, d.counter.unwrap().wrap_raw),
            Step::Wrapped(2000)
        );
    }

    #[test]
    fn a_denied_counter_says_root_only_and_a_missing_range_says_reset() {
        let denied = io::Error::from(io::ErrorKind::PermissionDenied);
        let fact = rapl_fact(
            Path::new("/sys/class/powercap/intel-rapl:0/energy_uj"),
            &denied,
        );
        assert!(fact.ends_with(ROOT_ONLY), "{fact}");
        assert!(fact.contains("root-only since Linux 5.10"));
        let root = tempfile::tempdir().unwrap();
        zone(
            root.path(),
            "intel-rapl:0",
            &[("name", "package-0\n"), ("energy_uj", "7\n")],
        );
        let (zones, facts) = rapl(root.path());
        assert!(facts.is_empty());
        let d = zones[0].probe();
        assert_eq!(d.counter.unwrap().wrap_raw, None);
        assert!(
            d.facts[0].contains("max_energy_range_uj: unreadable"),
            "{:?}",
            d.facts
        );
        let (none, facts) = rapl(&root.path().join("absent"));
        assert!(none.is_empty());
        assert!(facts[0].contains("no intel-rapl zones"), "{facts:?}");
    }

    #[test]
    fn this_machines_proc_gives_utilisation_and_resident_memory() {
        let pid = std::process::id();
        let mut s = ProcSource::open(Path::new("/proc"), pid).unwrap();
        // Burn a little CPU so some ticks pass between the two reads of /proc/stat.
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < std::time::Duration::from_millis(50) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        assert_ne!(x, 1);
        let r = s.read();
        assert!(r.failed.is_empty(), "{:?}", r.failed);
        let rss = r.values.memory_bytes.unwrap();
        // A test binary's resident set: more than a page, less than the machine.
        assert!(rss > 4096 && rss < 1 << 40, "{rss}");
        if let Some(u) = r.values.util_pct {
            assert!((0.0..=100.0).contains(&u), "{u}");
        }
    }

    #[test]
    fn this_machines_rapl_is_read_or_said_unreadable() {
        let (zones, facts) = rapl(Path::new("/sys/class/powercap"));
        if zones.is_empty() {
            assert!(!facts.is_empty());
            assert!(
                facts.iter().all(|f| f.contains(ROOT_ONLY)
                    || f.contains("no intel-rapl zones")
                    || f.contains("unreadable")),
                "{facts:?}"
            );
            eprintln!("RAPL on this machine: {facts:?}");
        }
        for mut z in zones {
            let r = z.read();
            assert!(r.values.energy_raw.is_some(), "{:?}", r.failed);
            eprintln!(
                "RAPL on this machine: {} reads {:?} µJ",
                z.probe().id,
                r.values.energy_raw
            );
        }
    }
}
