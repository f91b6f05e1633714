//! The devices a suite run uses: real GPUs, or the CPU split into simulated devices.
//!
//! The suite gives each per-GPU copy `CPU_COUNT = CPU_TOTAL // DEVICE_TOTAL` cores
//! (docs/suite.md#cpus-and-memory-per-copy) and records that figure as `cpu_cores`. Without a GPU,
//! `--devices N` splits the CPU into N simulated devices so per-GPU jobs still run N copies side by
//! side; the cores are split evenly with the remainder going to the first devices, so
//! no core sits idle, while `cpu_cores` keeps the suite's floor.

use crate::bench::DeviceSpec;

/// What kind of device the copies run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    /// CUDA GPUs `0..count`.
    Cuda,
    /// Simulated devices, each a share of the CPU.
    Cpu,
}

/// A device set that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DevicesError {
    /// Zero devices asked for.
    #[error("at least one device is needed (0 asked)")]
    NoDevices,
    /// Zero cores reported.
    #[error("the machine reports no CPU cores")]
    NoCores,
    /// A `--devices` value that is neither a count nor `cpu`.
    #[error("`{0}`: expected a number of devices or `cpu`")]
    Invalid(String),
    /// More GPUs asked for than the machine has.
    #[error("{asked} asked, only {available} GPU(s) visible")]
    TooManyGpus {
        /// Asked for.
        asked: u32,
        /// Visible.
        available: u32,
    },
}

mlbench_schema::classify_all!(Input: DevicesError);

/// The devices of one machine as the runner uses them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceSet {
    /// GPUs or simulated CPU devices.
    pub kind: DeviceKind,
    /// Threads given to each per-device copy (index = device).
    pub threads: Vec<usize>,
    /// The machine's cores (whole-machine jobs get them all).
    pub cores: usize,
}

/// Splits `cores` into `devices` thread counts: even, the remainder to the first ones,
/// at least one each (more devices than cores oversubscribes rather than starving one).
pub fn split_cores(cores: usize, devices: u32) -> Vec<usize> {
    let d = devices as usize;
    if d == 0 {
        return Vec::new();
    }
    let (base, rest) = (cores / d, cores % d);
    (0..d)
        .map(|i| (base + usize::from(i < rest)).max(1))
        .collect()
}

impl DeviceSet {
    /// `devices` simulated devices sharing `cores` CPU cores.
    pub fn cpu(cores: usize, devices: u32) -> Result<DeviceSet, DevicesError> {
        Self::build(DeviceKind::Cpu, cores, devices)
    }

    /// `gpus` CUDA devices on a machine with `cores` cores.
    pub fn cuda(cores: usize, gpus: u32) -> Result<DeviceSet, DevicesError> {
        Self::build(DeviceKind::Cuda, cores, gpus)
    }

    fn build(kind: DeviceKind, cores: usize, devices: u32) -> Result<DeviceSet, DevicesError> {
        if devices == 0 {
            return Err(DevicesError::NoDevices);
        }
        if cores == 0 {
            return Err(DevicesError::NoCores);
        }
        Ok(DeviceSet {
            kind,
            threads: split_cores(cores, devices),
            cores,
        })
    }

    /// The devices of a Slurm node: `gpus` GPUs, or (`None`) its CPU as one device.
    pub fn of_node(gpus: Option<u32>, cores: usize) -> Result<DeviceSet, DevicesError> {
        match gpus {
            Some(n) => Self::cuda(cores, n),
            None => Self::cpu(cores, 1),
        }
    }

    /// Reads `--devices`: `cpu` is one CPU device with every core; `N` is N GPUs when
    /// the machine has GPUs (`visible_gpus > 0`) and N simulated CPU devices otherwise;
    /// `None` is every GPU, or one CPU device without GPUs.
    pub fn from_flag(
        flag: Option<&str>,
        visible_gpus: u32,
        cores: usize,
    ) -> Result<DeviceSet, DevicesError> {
        match flag.map(str::trim) {
            None if visible_gpus > 0 => Self::cuda(cores, visible_gpus),
            None => Self::cpu(cores, 1),
            Some(f) if f.eq_ignore_ascii_case("cpu") => Self::cpu(cores, 1),
            Some(f) => {
                let n: u32 = f.parse().map_err(|_| DevicesError::Invalid(f.to_owned()))?;
                if visible_gpus == 0 {
                    Self::cpu(cores, n)
                } else if n > visible_gpus {
                    Err(DevicesError::TooManyGpus {
                        asked: n,
                        available: visible_gpus,
                    })
                } else {
                    Self::cuda(cores, n)
                }
            }
        }
    }

    /// The number of devices (`DEVICE_TOTAL`).
    pub fn count(&self) -> u32 {
        self.threads.len() as u32
    }

    /// `CPU_COUNT = cores // devices`, as compute_resource.sh exports it: the report's
    /// `cpu_cores` for every job, whole-machine ones included.
    pub fn cpu_count(&self) -> usize {
        self.cores / self.threads.len().max(1)
    }

    /// The device of per-device copy `index`.
    pub fn student(&self, index: u32) -> DeviceSpec {
        match self.kind {
            DeviceKind::Cuda => DeviceSpec::Cuda(index),
            DeviceKind::Cpu => DeviceSpec::Cpu {
                index,
                threads: self.threads.get(index as usize).copied().unwrap_or(1),
            },
        }
    }

    /// The device of a whole-machine job: device 0 with every core.
    pub fn whole(&self) -> DeviceSpec {
        match self.kind {
            DeviceKind::Cuda => DeviceSpec::Cuda(0),
            DeviceKind::Cpu => DeviceSpec::Cpu {
                index: 0,
                threads: self.cores,
            },
        }
    }

    /// `CUDA_VISIBLE_DEVICES` of a whole-machine job: `"0,1,…,N-1"`.
    pub fn all_visible(&self) -> String {
        (0..self.count())
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_split_with_remainder_first() {
        assert_eq!(split_cores(16, 4), [4, 4, 4, 4]);
        assert_eq!(split_cores(10, 4), [3, 3, 2, 2]);
        assert_eq!(split_cores(2, 4), [1, 1, 1, 1]);
        assert!(split_cores(8, 0).is_empty());
    }

    #[test]
    fn cpu_count_is_the_suites_floor() {
        let set = DeviceSet::cpu(10, 4).unwrap();
        assert_eq!(set.cpu_count(), 2);
        assert_eq!(
            set.student(0),
            DeviceSpec::Cpu {
                index: 0,
                threads: 3
            }
        );
        assert_eq!(
            set.whole(),
            DeviceSpec::Cpu {
                index: 0,
                threads: 10
            }
        );
        assert_eq!(set.all_visible(), "0,1,2,3");
        assert_eq!(DeviceSet::cpu(2, 4).unwrap().cpu_count(), 0);
    }

    #[test]
    fn flag_parsing() {
        let cpu4 = DeviceSet::from_flag(Some("4"), 0, 16).unwrap();
        assert_eq!((cpu4.kind, cpu4.count()), (DeviceKind::Cpu, 4));
        let gpu2 = DeviceSet::from_flag(Some("2"), 8, 32).unwrap();
        assert_eq!((gpu2.kind, gpu2.count()), (DeviceKind::Cuda, 2));
        assert_eq!(gpu2.student(1), DeviceSpec::Cuda(1));
        assert_eq!(
            DeviceSet::from_flag(None, 8, 32).unwrap().count(),
            8,
            "every GPU by default"
        );
        assert_eq!(
            DeviceSet::from_flag(Some("cpu"), 8, 32).unwrap().kind,
            DeviceKind::Cpu
        );
        assert_eq!(
            DeviceSet::from_flag(Some("9"), 8, 32),
            Err(DevicesError::TooManyGpus {
                asked: 9,
                available: 8
            })
        );
        assert_eq!(
            DeviceSet::from_flag(Some("0"), 0, 32),
            Err(DevicesError::NoDevices)
        );
        assert!(matches!(
            DeviceSet::from_flag(Some("x"), 0, 32),
            Err(DevicesError::Invalid(_))
        ));
    }
}
