//! Physical bounds of what a telemetry file may say: what no device reads, checked so
//! that a broken or hostile file is named rather than turned into an infinite or absurd
//! energy (`validate` makes a finding of each; `report` sets the file aside).

use mlbench_schema::telemetry::Header;

/// The largest counter resolution, µJ per count: 1 J a tick (NVML counts mJ, amdsmi
/// about 15.3 µJ, hwmon and RAPL 1 µJ).
pub const MAX_RESOLUTION_UJ: f64 = 1e6;

/// The most power one device draws, mW: 10 kW (a whole 8-GPU board draws about that; one
/// GPU, under 1.5 kW).
pub const MAX_POWER_MW: f64 = 1e7;

/// The longest time between two lines of a file, ns: a day. The sampler writes a line a
/// period (1 s at 1 Hz) on a clock that does not run in suspend, so a line a day past
/// the one before it is past the run (a time of 2⁶⁴ − 1 ns is 584 years).
pub const MAX_STEP_NS: u64 = 86_400_000_000_000;

/// The first reading outside physical bounds of each kind (`validate` says each; the
/// report sets the file aside).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutOfBounds {
    /// The first power reading above [`MAX_POWER_MW`] or not finite:
    /// (line, device, mW).
    pub power: Option<(usize, u32, f64)>,
    /// The first line (sample or mark) more than [`MAX_STEP_NS`] after the
    /// line before it: (line, its time, the time before).
    pub time: Option<(usize, u64, u64)>,
}

/// What is outside the bounds, each in words with its line (0: the header).
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// A device's counter resolution is not finite, not positive, or over
    /// [`MAX_RESOLUTION_UJ`].
    Resolution {
        /// The device's position in the header.
        device: usize,
        /// Its resolution.
        resolution_uj: f64,
    },
    /// A power reading over [`MAX_POWER_MW`] or not finite.
    Power {
        /// Its line.
        line: usize,
        /// The device.
        device: u32,
        /// The reading.
        mw: f64,
    },
    /// A time more than [`MAX_STEP_NS`] after the line before it.
    Time {
        /// Its line.
        line: usize,
        /// Its time.
        t_ns: u64,
        /// The time of the line before it.
        before_ns: u64,
    },
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Resolution {
                device,
                resolution_uj,
            } => write!(
                f,
                "device {device}: a counter resolution of {resolution_uj:e} µJ per count (at most {MAX_RESOLUTION_UJ:e}, 1 J)"
            ),
            Problem::Power { line, device, mw } => write!(
                f,
                "line {line}: device {device}: power_mw {mw:e} (at most {MAX_POWER_MW:e}, 10 kW)"
            ),
            Problem::Time {
                line,
                t_ns,
                before_ns,
            } => write!(
                f,
                "line {line}: t_ns {t_ns}, {:.0} s after the line before it (at most a day)",
                t_ns.saturating_sub(*before_ns) as f64 * 1e-9
            ),
        }
    }
}

/// Whether a counter resolution is one a device can have.
pub fn resolution_ok(resolution_uj: f64) -> bool {
    resolution_uj.is_finite() && resolution_uj > 0.0 && resolution_uj <= MAX_RESOLUTION_UJ
}

/// Everything out of bounds in a file: its header's counters, then the first power
/// reading and the first time a fold found.
pub fn problems(header: &Header, found: &OutOfBounds) -> Vec<Problem> {
    let mut out: Vec<Problem> = (header.devices.iter().enumerate())
        .filter_map(|(device, d)| {
            let resolution_uj = d.counter?.resolution_uj;
            (!resolution_ok(resolution_uj)).then_some(Problem::Resolution {
                device,
                resolution_uj,
            })
        })
        .collect();
    if let Some((line, device, mw)) = found.power {
        out.push(Problem::Power { line, device, mw });
    }
    if let Some((line, t_ns, before_ns)) = found.time {
        out.push(Problem::Time {
            line,
            t_ns,
            before_ns,
        });
    }
    out
}
