//! What a submission ran on, as its entries and machine descriptions say: carried with
//! its figures in the report's header, every grid row and the plots' legends.

use serde::{Deserialize, Serialize};

/// A submission's hardware. Each field is what the inputs tell; what they do not is
/// empty (`None`, no host), never guessed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hardware {
    /// Each GPU model as the entries name it (`gpu`: `TITAN RTX`, `NVIDIA H100 80GB
    /// HBM3`), with how many devices ran on it, by name.
    pub gpus: Vec<GpuModel>,
    /// The devices in all (a device on each of two hosts counts twice).
    pub gpu_count: usize,
    /// The hosts (`hostname` of the entries), sorted.
    pub hosts: Vec<String>,
    /// The CPU model (the machine descriptions'), when one is known.
    pub cpu: Option<String>,
    /// The GPU driver's version (the machine descriptions'), when one is known; several
    /// are joined by `, `.
    pub driver: Option<String>,
}

/// One GPU model of a [`Hardware`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuModel {
    /// Its name as the entries write it.
    pub name: String,
    /// Devices of it.
    pub count: usize,
}

impl Hardware {
    /// The GPUs in a few words: `2 × TITAN RTX`, `8 × NVIDIA H100 80GB HBM3 + 1 × …`,
    /// `no GPU named` when the entries name none.
    pub fn gpus_label(&self) -> String {
        if self.gpus.is_empty() {
            return "no GPU named".into();
        }
        let each = self
            .gpus
            .iter()
            .map(|g| format!("{} × {}", g.count, g.name));
        each.collect::<Vec<_>>().join(" + ")
    }

    /// The hosts in a few words: `vendorA-node`, `3 hosts (a, b, c)`, `host unknown`.
    pub fn hosts_label(&self) -> String {
        match self.hosts.as_slice() {
            [] => "host unknown".into(),
            [one] => one.clone(),
            many => format!("{} hosts ({})", many.len(), many.join(", ")),
        }
    }

    /// One line: `2 × TITAN RTX on vendorA-node; CPU AMD EPYC 7742; driver 550.54`.
    pub fn summary(&self) -> String {
        let mut text = format!("{} on {}", self.gpus_label(), self.hosts_label());
        if let Some(cpu) = &self.cpu {
            text.push_str(&format!("; CPU {cpu}"));
        }
        if let Some(driver) = &self.driver {
            text.push_str(&format!("; driver {driver}"));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_say_what_is_known_and_only_that() {
        let mut hw = Hardware::default();
        assert_eq!(hw.summary(), "no GPU named on host unknown");
        hw.gpus = vec![
            GpuModel {
                name: "A".into(),
                count: 2,
            },
            GpuModel {
                name: "B".into(),
                count: 1,
            },
        ];
        hw.hosts = vec!["n1".into(), "n2".into()];
        hw.driver = Some("550.54".into());
        assert_eq!(
            hw.summary(),
            "2 × A + 1 × B on 2 hosts (n1, n2); driver 550.54"
        );
    }
}
