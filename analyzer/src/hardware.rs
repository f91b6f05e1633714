//! A submission's [`Hardware`] from its samples (the entries' `gpu` and `hostname`) and
//! its machine descriptions (`system.json`: CPU, driver).

use crate::samples::SampleSet;
use mlbench_results::{GpuModel, Hardware};
use mlbench_schema::system::SystemInfo;
use std::collections::BTreeSet;

/// What `set` ran on, with the CPU and driver `systems` name. A model's count is the
/// devices its single-device entries ran on; a model seen only on entries that ran on
/// several devices together counts the most devices one of them used.
pub fn hardware_of(set: &SampleSet, systems: &[SystemInfo]) -> Hardware {
    let mut gpus = Vec::new();
    for (m, name) in set.models.iter().enumerate() {
        let of_model = || {
            set.samples
                .iter()
                .filter(move |s| s.model == Some(m as u32))
        };
        let devices: BTreeSet<u32> = of_model().filter_map(|s| s.device).collect();
        let count = match devices.len() {
            0 => of_model().filter_map(|s| s.world).max().unwrap_or(1) as usize,
            n => n,
        };
        gpus.push(GpuModel {
            name: name.clone(),
            count,
        });
    }
    let joined = |values: BTreeSet<&str>| {
        (!values.is_empty()).then(|| values.into_iter().collect::<Vec<_>>().join(", "))
    };
    let cpus = systems.iter().filter_map(|s| s.cpu.as_deref()).collect();
    let devices = systems.iter().flat_map(|s| &s.devices);
    let drivers = devices.filter_map(|d| d.driver.as_deref()).collect();
    Hardware {
        gpu_count: gpus.iter().map(|g| g.count).sum(),
        gpus,
        hosts: set.hosts.clone(),
        cpu: joined(cpus),
        driver: joined(drivers),
    }
}
