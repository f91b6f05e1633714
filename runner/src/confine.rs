//! Each copy's share of the machine, as the suite's cgroups gave it
//! (docs/suite.md#cpus-and-memory-per-copy): per-device
//! copies get their own contiguous run of the CPUs this process may use and an equal part of
//! the memory; whole-machine jobs get everything. The CLI applies it in each copy's process
//! before libtorch starts a thread, so every thread of the copy inherits the pinning.

use crate::bench::DeviceSpec;
use crate::devices::DeviceSet;

/// What one copy may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Share {
    /// The CPUs (ids as the kernel numbers them).
    pub cpus: Vec<usize>,
    /// The data-segment limit in bytes (`RLIMIT_DATA`), `None` for the whole machine.
    pub memory: Option<u64>,
}

/// The share of `device` among `devices`, from the CPUs this process may use (`allowed`, in
/// order) and the machine's memory. Per-device copies split both as `devices` splits the
/// cores (the first `cores mod n` devices get one more CPU); whole-machine copies get all.
pub fn share_of(
    devices: &DeviceSet,
    device: DeviceSpec,
    whole_machine: bool,
    allowed: &[usize],
    memory: Option<u64>,
) -> Share {
    if whole_machine {
        return Share {
            cpus: allowed.to_vec(),
            memory: None,
        };
    }
    let index = match device {
        DeviceSpec::Cpu { index, .. } | DeviceSpec::Cuda(index) => index as usize,
    };
    let n = devices.threads.len().max(1);
    // The split is of `devices.cores`, which may differ from `allowed.len()` (a cpuset
    // narrower than the count we were given): split what is really allowed the same way.
    let (base, rest) = (allowed.len() / n, allowed.len() % n);
    let start = index * base + index.min(rest);
    let len = base + usize::from(index < rest);
    let cpus = if len == 0 {
        // More devices than CPUs: devices share CPUs round-robin.
        allowed
            .get(index % allowed.len().max(1))
            .copied()
            .into_iter()
            .collect()
    } else {
        allowed[start..start + len].to_vec()
    };
    Share {
        cpus,
        memory: memory.map(|m| m / n as u64),
    }
}

/// The CPUs this process may run on, in order (all online CPUs when that cannot be read).
pub fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it for this thread.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
                return (0..libc::CPU_SETSIZE as usize)
                    .filter(|&c| libc::CPU_ISSET(c, &set))
                    .collect();
            }
        }
    }
    (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
}

/// Pins the calling thread, and the threads it starts afterwards, to `cpus`.
pub fn pin_current_thread(cpus: &[usize]) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: as above; CPU_SET only writes within the set for ids < CPU_SETSIZE.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
                libc::CPU_SET(c, &mut set);
            }
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    let _ = cpus;
    Ok(())
}

/// Limits this process's data segment (heap and anonymous mappings) to `bytes`: an
/// allocation past the copy's share fails inside libtorch, which fails the copy, instead of
/// the machine running out of memory for every copy.
pub fn limit_memory(bytes: u64) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let limit = libc::rlimit {
            rlim_cur: bytes as libc::rlim_t,
            rlim_max: libc::RLIM_INFINITY,
        };
        // SAFETY: setrlimit reads the struct only.
        if unsafe { libc::setrlimit(libc::RLIMIT_DATA, &limit) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    let _ = bytes;
    Ok(())
}

/// Keeps the memory libtorch frees in the copy's heap instead of giving it back to the
/// kernel. glibc's malloc serves blocks above its mmap threshold (adaptive, at most 32 MiB)
/// with fresh mappings and unmaps them when freed, and gives each thread that allocates an
/// arena of its own whose 64 MiB heaps are unmapped whenever they fall empty. So a model whose
/// step allocates and frees activations of tens of MiB took fresh zeroed pages every step:
/// page faults and memory cgroup charges (dcgan_all on two simulated devices: 1.25 M page
/// faults in a 14 s bench, 63 images/s; with these settings 97 k faults, 69 images/s). Here
/// blocks up to 256 MiB come from the heap, the heap's top is trimmed only past 1 GiB free,
/// and every thread allocates from the one main heap (libtorch allocates tensors, a few
/// thousand a step, so the shared lock is not contended). Peak memory is the same (the
/// blocks are reused, not added). No effect with another C library; returns whether the
/// settings took.
pub fn keep_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only changes the allocator's tunables; any value is accepted or
        // refused (0) without side effects.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 256 << 20) == 1
                && libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30) == 1
                && libc::mallopt(libc::M_ARENA_MAX, 1) == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

/// The machine's memory for the copies: `MemTotal`, or the cgroup's `memory.max` when
/// this process runs under a lower limit (a container, a Slurm job).
pub fn machine_memory() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| parse_meminfo_total(&text));
    let cgroup = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|text| {
            // cgroup v2: the line `0::/path`.
            let path = text
                .lines()
                .find_map(|l| l.strip_prefix("0::"))?
                .trim()
                .to_owned();
            std::fs::read_to_string(format!("/sys/fs/cgroup{path}/memory.max")).ok()
        })
        .and_then(|max| max.trim().parse::<u64>().ok());
    match (total, cgroup) {
        (Some(t), Some(c)) => Some(t.min(c)),
        (t, c) => t.or(c),
    }
}

/// `MemTotal:  16314660 kB` → bytes.
fn parse_meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The peak resident set size of this process in bytes (`getrusage`'s `ru_maxrss`, KiB
/// on Linux), `None` where it cannot be read. A copy runs in a process of its own, so
/// this is the copy's peak; when copies share a process (tests), it is the process's.
pub fn peak_rss_bytes() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getrusage fills the struct it is given and touches nothing else.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            (libc::getrusage(libc::RUSAGE_SELF, &mut usage) == 0).then_some(usage)
        }?;
        u64::try_from(usage.ru_maxrss).ok().map(|kib| kib * 1024)
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// The GPU memory process `pid` holds now, bytes (`nvidia-smi --query-compute-apps`,
/// summed over its GPUs); `None` without `nvidia-smi` or when it holds none. At the end of
/// a copy this is its peak reserved memory: libtorch's caching allocator keeps what it
/// reserved until the process ends (tch exposes no allocator statistics).
pub fn device_memory_of(pid: u32) -> Option<u64> {
    let out = std::process::Command::new("nvidia-smi")
        .args([
            "--query-compute-apps=pid,used_memory",
            "--format=csv,noheader,nounits",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    compute_apps_memory(&String::from_utf8_lossy(&out.stdout), pid)
}

/// `pid, used_memory [MiB]` lines: the MiB of `pid`, in bytes.
fn compute_apps_memory(text: &str, pid: u32) -> Option<u64> {
    let mib: u64 = text
        .lines()
        .filter_map(|line| {
            let (p, used) = line.split_once(',')?;
            (p.trim().parse::<u32>().ok()? == pid).then(|| used.trim().parse::<u64>().ok())?
        })
        .sum();
    (mib > 0).then_some(mib << 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This thread's minor page faults so far.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn thread_minor_faults() -> i64 {
        // SAFETY: getrusage writes the struct it is given, nothing else.
        unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            assert_eq!(libc::getrusage(libc::RUSAGE_THREAD, &mut usage), 0);
            usage.ru_minflt
        }
    }

    /// After `keep_freed_memory`, a 40 MiB block freed and taken again is served from the
    /// heap, touched pages and all: the second round takes almost no page fault (glibc's
    /// default maps such a block afresh each time, 10,240 faults a round).
    ///
    /// It runs alone in a child process (this test binary again, filtered to this test):
    /// in the shared test process the thread may share a malloc arena with other tests'
    /// threads, and a block that no longer fits the arena's first heap gets a heap of its
    /// own, unmapped when freed, whatever the tunables (seen under load: 10,241 faults).
    /// A copy calls `keep_freed_memory` in a fresh process, as the child does.
    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn freed_memory_is_reused_without_page_faults() {
        const CHILD: &str = "MLBENCH_CONFINE_FAULTS_CHILD";
        if std::env::var_os(CHILD).is_none() {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "confine::tests::freed_memory_is_reused_without_page_faults",
                    "--test-threads=1",
                    "--nocapture",
                ])
                .env(CHILD, "1")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            let errors = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{text}{errors}");
            assert!(text.contains("1 passed"), "the child ran the test: {text}");
            return;
        }
        assert!(keep_freed_memory());
        let round = || {
            let before = thread_minor_faults();
            let block = vec![1u8; 40 << 20];
            std::hint::black_box(&block);
            drop(block);
            thread_minor_faults() - before
        };
        let first = round();
        let second = round();
        assert!(
            first > 5_000,
            "the first round touches fresh pages: {first} faults"
        );
        assert!(
            second < 500,
            "the second round reuses them: {second} faults"
        );
    }

    #[test]
    fn compute_apps_lines() {
        let text = "4242, 1024\n77, 512\n4242, 2048\n";
        assert_eq!(compute_apps_memory(text, 4242), Some(3072 << 20));
        assert_eq!(compute_apps_memory(text, 1), None);
        assert_eq!(compute_apps_memory("[N/A]\n", 1), None);
    }

    fn cpu(index: u32) -> DeviceSpec {
        DeviceSpec::Cpu { index, threads: 1 }
    }

    #[test]
    fn per_device_shares_are_contiguous_and_cover_the_cpus_once() {
        // 10 CPUs (ids with a gap, as a cpuset may give) over 4 devices: 3, 3, 2, 2.
        let allowed = [0, 1, 2, 3, 4, 5, 8, 9, 10, 11];
        let devices = DeviceSet::cpu(10, 4).unwrap();
        let shares: Vec<Share> = (0..4)
            .map(|d| share_of(&devices, cpu(d), false, &allowed, Some(16 << 30)))
            .collect();
        assert_eq!(shares[0].cpus, [0, 1, 2]);
        assert_eq!(shares[1].cpus, [3, 4, 5]);
        assert_eq!(shares[2].cpus, [8, 9]);
        assert_eq!(shares[3].cpus, [10, 11]);
        assert!(shares.iter().all(|s| s.memory == Some(4 << 30)));
        // GPUs split the same way.
        let gpus = DeviceSet::cuda(10, 4).unwrap();
        let g = share_of(&gpus, DeviceSpec::Cuda(2), false, &allowed, None);
        assert_eq!((g.cpus, g.memory), (vec![8, 9], None));
    }

    #[test]
    fn whole_machine_gets_everything_and_more_devices_than_cpus_share() {
        let allowed = [0, 1];
        let devices = DeviceSet::cpu(2, 2).unwrap();
        let whole = share_of(&devices, cpu(0), true, &allowed, Some(8 << 30));
        assert_eq!((whole.cpus, whole.memory), (vec![0, 1], None));
        let many = DeviceSet::cpu(2, 3).unwrap();
        let third = share_of(&many, cpu(2), false, &allowed, Some(9 << 30));
        assert_eq!((third.cpus, third.memory), (vec![0], Some(3 << 30)));
    }

    #[test]
    fn meminfo_total() {
        let text = "MemTotal:       16314660 kB\nMemFree:         1234 kB\n";
        assert_eq!(parse_meminfo_total(text), Some(16_314_660 * 1024));
        assert_eq!(parse_meminfo_total("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn pinning_a_thread_restricts_it_to_the_cpus() {
        let allowed = allowed_cpus();
        let first = allowed[0];
        // In a thread of its own, so the test harness's threads keep their CPUs.
        let seen = std::thread::spawn(move || {
            pin_current_thread(&[first]).unwrap();
            allowed_cpus()
        })
        .join()
        .unwrap();
        assert_eq!(seen, [first]);
        assert_eq!(allowed_cpus(), allowed);
    }
}
