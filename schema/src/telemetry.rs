//! Telemetry files: what `mlbench run`'s sampler measured beside a bench (energy, power,
//! utilisation, memory, temperature, clocks), one JSON object a line (docs/telemetry.md).
//!
//! A file is a [`Header`] line, then [`Sample`] and [`Mark`] lines in the order they were
//! taken. Every time is nanoseconds of one monotonic clock since the file's origin (the
//! sampler's start), so samples and the bench's timed windows compare directly.
//!
//! The reader is tolerant where a newer writer or an interrupted one could leave something
//! it does not know: unknown fields and line types are passed over (unknown types
//! counted), blank lines skipped, and a last line cut short without its newline is
//! reported as [`TelemetryFile::truncated_tail`] rather than refused. Everything else that
//! does not parse is an error naming the file and the line.

use serde::{Deserialize, Serialize};
use std::io::{self, BufRead, Read, Write};
use std::path::{Path, PathBuf};

/// The version of this format.
pub const TELEMETRY_SCHEMA_VERSION: u32 = 1;

/// The folder beside a run's report files that holds its telemetry files.
pub const TELEMETRY_FOLDER: &str = "telemetry";

/// The window name of the idle baseline (measured before the benches, subtracted from them).
pub const IDLE_WINDOW: &str = "idle";

/// The file name of one copy's telemetry for one bench: `<bench>.<copy>.jsonl`.
pub fn file_name(bench: &str, copy: u32) -> String {
    format!("{bench}.{copy}.jsonl")
}

/// The name of the `n`-th telemetry file of one bench and copy in one folder (from 1):
/// [`file_name`] for the first, `<bench>.<copy>.<n>.jsonl` after it. A second file comes
/// from a second configuration of the same job, or a later run added with `--append`;
/// files are never replaced, so each takes the first free name.
pub fn nth_file_name(bench: &str, copy: u32, n: u32) -> String {
    match n {
        0 | 1 => file_name(bench, copy),
        n => format!("{bench}.{copy}.{n}.jsonl"),
    }
}

/// One line of a telemetry file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    /// The first line: what is sampled, and how.
    Header(Header),
    /// One reading of one device.
    Sample(Sample),
    /// The edge of a timed window.
    Mark(Mark),
    /// What the sampler computed of one device over one timed window (written when it
    /// stops, after the marks).
    Summary(SummaryLine),
    /// A line type this reader does not know (a newer writer's); counted, passed over.
    #[serde(other)]
    Unknown,
}

/// The first line of a file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Header {
    /// [`TELEMETRY_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The tool that wrote the file, e.g. `mlbench 0.1.0`.
    pub tool: String,
    /// The bench sampled, when the file is one bench's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bench: Option<String>,
    /// The copy (one process per GPU) this file belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy: Option<u32>,
    /// The nominal time between two samples of a device, ns (1 s at 1 Hz).
    pub sample_period_ns: u64,
    /// Wall-clock time of the origin, ms since the Unix epoch, for people: never used in
    /// arithmetic (the wall clock can step).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin_unix_ms: Option<u64>,
    /// The devices sampled; a [`Sample`]'s `device` is a position in this list.
    pub devices: Vec<Device>,
    /// Facts about the sampling as a whole, e.g. a source that could not be opened.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<String>,
}

/// Where a device's readings come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// NVIDIA's NVML (`libnvidia-ml.so`).
    Nvml,
    /// AMD's amdsmi (`libamd_smi.so`).
    Amdsmi,
    /// Linux hwmon (`/sys/class/hwmon`): AMD and Intel GPUs.
    Hwmon,
    /// Linux powercap RAPL (`/sys/class/powercap/intel-rapl:*`): CPU packages.
    Rapl,
    /// `/proc`: CPU utilisation and the copy's resident memory.
    Procfs,
    /// A source this reader does not know.
    #[default]
    #[serde(other)]
    Other,
}

/// What a power reading is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PowerReading {
    /// An average over a window the source keeps (NVML: 1 s on Ampere and newer, GA100
    /// aside; hwmon `powerN_average`).
    Average,
    /// The power at the moment of reading (NVML before Ampere, and on GA100;
    /// hwmon `powerN_input`).
    Instantaneous,
    /// Not said by the source.
    #[default]
    #[serde(other)]
    Unknown,
}

/// An energy counter: how its raw value converts to µJ and when it wraps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counter {
    /// µJ per raw count: 1000 for NVML (mJ), 1 for hwmon and RAPL (µJ), amdsmi's
    /// `counter_resolution` (≈15.3).
    pub resolution_uj: f64,
    /// The counter counts modulo this many raw counts, when known (RAPL:
    /// `max_energy_range_uj` + 1). Unknown: a backward step is a reset, not a wrap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrap_raw: Option<u64>,
}

/// One device sampled (a GPU, a CPU package, the copy's process).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Device {
    /// Its id: `cuda:0`, `cpu:package-0`, `cpu:proc`.
    pub id: String,
    /// Where its readings come from.
    pub source: SourceKind,
    /// Its name (`NVIDIA H100 80GB HBM3`), when the source says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What its power readings are.
    pub power_reading: PowerReading,
    /// Its energy counter, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counter: Option<Counter>,
    /// The power limit in force, mW, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_limit_mw: Option<f64>,
    /// Whether the energy is the whole board's (or package's): every process on the device
    /// counts, not only the copy's.
    pub whole_board: bool,
    /// Whether MIG mode was on when sampling began (`None`: not said). Energy is the
    /// whole board's, whatever slice the copy ran on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mig: Option<bool>,
    /// Processes other than the run's on the device when sampling began (`None`: not
    /// said).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_processes: Option<Vec<u32>>,
    /// Facts about this device's readings: what is not supported, not readable, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<String>,
}

/// What one reading holds; every field may be missing (not given by the source, or its
/// read failed: see the sample's flags).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Values {
    /// The energy counter's raw value (its device's [`Counter`] converts it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_raw: Option<u64>,
    /// The same in µJ (raw × resolution, rounded), for people and simple tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_uj: Option<u64>,
    /// Power, mW.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_mw: Option<f64>,
    /// Utilisation, percent (0–100).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub util_pct: Option<f64>,
    /// Memory in use, bytes (a GPU's memory; the copy's resident set for `cpu:proc`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// Temperature, °C.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<f64>,
    /// Graphics or SM clock, MHz.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sm_clock_mhz: Option<u32>,
    /// Memory clock, MHz.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_clock_mhz: Option<u32>,
}

/// Something notable about one sample.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Flag {
    /// The counter went back and its range is known: it wrapped once.
    CounterWrapped,
    /// The counter went back and its range is unknown: reset (driver reload, firmware).
    CounterReset,
    /// A field's read failed this time (its name is in the sample's `failed`).
    ReadFailed,
    /// The sample came more than two periods after the previous one of its device.
    Late,
    /// A flag this reader does not know.
    #[serde(other)]
    Other,
}

/// One reading of one device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sample {
    /// When, ns since the file's origin (monotonic).
    pub t_ns: u64,
    /// Which device: its position in the header's `devices`.
    pub device: u32,
    /// What was read.
    #[serde(flatten)]
    pub values: Values,
    /// What is notable about it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<Flag>,
    /// The fields whose read failed, with the source's words (`power_mw: GPU is lost`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
}

/// Which edge of a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Edge {
    /// The window begins.
    Start,
    /// The window ends.
    End,
}

/// The edge of a timed window (a bench's timed steps, the idle baseline).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    /// When, ns since the file's origin, on the samples' clock.
    pub t_ns: u64,
    /// Which edge.
    pub edge: Edge,
    /// The window's name (`train`, [`IDLE_WINDOW`]).
    pub window: String,
    /// The copy whose window it is.
    pub copy: u32,
}

/// What the sampler computed of one device over one timed window when it stopped: the
/// gross energies (the net ones need the run's idle files, so they are computed later).
/// A checker recomputes them from the samples (`validate`'s `telemetry.summary-mismatch`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SummaryLine {
    /// The window's name (`train`, [`IDLE_WINDOW`]).
    pub window: String,
    /// The copy whose window it is.
    pub copy: u32,
    /// The device: its position in the header's `devices`.
    pub device: u32,
    /// The window's start, ns since the origin.
    pub start_ns: u64,
    /// The window's end, ns since the origin.
    pub end_ns: u64,
    /// The device's samples inside the window (edges included).
    pub samples: u64,
    /// Energy by the device's counter, J (absent: no counter, or the window not covered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counter_j: Option<f64>,
    /// Energy by the trapezoid of its power readings, J (absent: no power readings over
    /// the whole window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_j: Option<f64>,
}

/// The line (from 1) of each sample, mark and summary of a file read from bytes, in the
/// order of [`TelemetryFile`]'s vectors: where a checker points. Empty for a file made
/// in memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineNumbers {
    /// One per sample.
    pub samples: Vec<usize>,
    /// One per mark.
    pub marks: Vec<usize>,
    /// One per summary line.
    pub summaries: Vec<usize>,
}

/// A telemetry file, read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TelemetryFile {
    /// Its header.
    pub header: Header,
    /// Its samples, in file order.
    pub samples: Vec<Sample>,
    /// Its window marks, in file order.
    pub marks: Vec<Mark>,
    /// Its summary lines, in file order (none in a file of a sampler before they were
    /// written, or cut short before them).
    pub summaries: Vec<SummaryLine>,
    /// Where each sample, mark and summary is in the file.
    pub lines: LineNumbers,
    /// Lines of types this reader does not know.
    pub unknown_lines: usize,
    /// Whether the last line was cut short (no newline, not JSON): an interrupted write.
    pub truncated_tail: bool,
}

/// Why a telemetry file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryReadError {
    /// The file could not be read.
    #[error("{}: cannot read", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// A line is not valid UTF-8.
    #[error("{}:{line}: not UTF-8", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
    },
    /// A line is not a telemetry line.
    #[error("{}:{line}: {message}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it (serde_json's words, with the column).
        message: String,
    },
    /// The first line is not a header, or the file is empty.
    #[error("{}: the first line is not a telemetry header", path.display())]
    NoHeader {
        /// The file.
        path: PathBuf,
    },
    /// A second header.
    #[error("{}:{line}: a second header (a file has one, on its first line)", path.display())]
    SecondHeader {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
    },
}

/// The longest line a telemetry file may have (a header listing a thousand devices is
/// well under 1 MiB): a longer one is an error, so that a file without newlines is never
/// gathered into one buffer.
pub const MAX_LINE: usize = 16 << 20;

/// How a read through [`each_line`] ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ended {
    /// Lines of types this reader does not know.
    pub unknown_lines: usize,
    /// Whether the last line was cut short (no newline, not JSON): an interrupted write.
    pub truncated_tail: bool,
    /// The number of the last line (from 1), blank lines and a cut last line counted.
    pub last_line: usize,
}

/// Reads a telemetry file from `input` line by line, calling `each` with the number
/// (from one) and the content of every header, sample, mark and summary line, the header
/// first: memory is one line's, whatever the file's size. `path` names the file in errors.
///
/// # Errors
/// [`TelemetryReadError`], naming `path` and, for a bad line, the line; a failed read of
/// `input` is [`TelemetryReadError::Io`] (never mistaken for a file without a header).
pub fn each_line(
    path: &Path,
    mut input: impl BufRead,
    mut each: impl FnMut(usize, Line),
) -> Result<Ended, TelemetryReadError> {
    let mut ended = Ended::default();
    let mut header = false;
    let mut raw = Vec::new();
    loop {
        raw.clear();
        let cap = MAX_LINE as u64 + 1;
        let read = (&mut input).take(cap).read_until(b'\n', &mut raw);
        read.map_err(|source| TelemetryReadError::Io {
            path: path.to_owned(),
            source,
        })?;
        if raw.is_empty() {
            break;
        }
        ended.last_line += 1;
        let number = ended.last_line;
        let whole = raw.last() == Some(&b'\n');
        if !whole && raw.len() > MAX_LINE {
            return Err(TelemetryReadError::Line {
                path: path.to_owned(),
                line: number,
                message: format!("longer than {MAX_LINE} bytes"),
            });
        }
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let text = std::str::from_utf8(&raw).map_err(|_| TelemetryReadError::NotUtf8 {
            path: path.to_owned(),
            line: number,
        })?;
        let line = match serde_json::from_str::<Line>(text) {
            Ok(line) => line,
            // Only the last line can lack its newline: a write cut short.
            Err(_) if !whole && header => {
                ended.truncated_tail = true;
                break;
            }
            Err(e) => {
                return Err(TelemetryReadError::Line {
                    path: path.to_owned(),
                    line: number,
                    message: e.to_string(),
                });
            }
        };
        match (&line, header) {
            (Line::Header(_), true) => {
                return Err(TelemetryReadError::SecondHeader {
                    path: path.to_owned(),
                    line: number,
                });
            }
            (Line::Header(_), false) => header = true,
            (_, false) => {
                return Err(TelemetryReadError::NoHeader {
                    path: path.to_owned(),
                });
            }
            (Line::Unknown, true) => {
                ended.unknown_lines += 1;
                continue;
            }
            _ => {}
        }
        each(number, line);
    }
    if !header {
        return Err(TelemetryReadError::NoHeader {
            path: path.to_owned(),
        });
    }
    Ok(ended)
}

/// Reads the telemetry file at `path`, line by line (it is never held whole), every
/// sample kept: for a file of known size, such as a sampler's own; a submitted file is
/// read through the bounded reading of `mlbench_telemetry::reduce`.
///
/// # Errors
/// [`TelemetryReadError`], naming the file and, for a bad line, the line.
pub fn read(path: &Path) -> Result<TelemetryFile, TelemetryReadError> {
    let file = std::fs::File::open(path).map_err(|source| TelemetryReadError::Io {
        path: path.to_owned(),
        source,
    })?;
    from_reader(path, io::BufReader::with_capacity(1 << 16, file))
}

/// Parses a telemetry file's bytes; `path` names it in errors.
///
/// # Errors
/// [`TelemetryReadError`], naming `path` and, for a bad line, the line.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<TelemetryFile, TelemetryReadError> {
    from_reader(path, bytes)
}

/// Reads a whole telemetry file from `input` (see [`each_line`]), every sample kept.
///
/// # Errors
/// [`TelemetryReadError`], naming `path` and, for a bad line, the line.
pub fn from_reader(path: &Path, input: impl BufRead) -> Result<TelemetryFile, TelemetryReadError> {
    let mut file = TelemetryFile::default();
    let ended = each_line(path, input, |number, line| file.push(number, line))?;
    file.unknown_lines = ended.unknown_lines;
    file.truncated_tail = ended.truncated_tail;
    Ok(file)
}

impl TelemetryFile {
    /// Adds line `number` of the file, read: the header replaces the default one; a
    /// sample, mark or summary joins the others with its line number.
    pub fn push(&mut self, number: usize, line: Line) {
        match line {
            Line::Header(h) => self.header = h,
            Line::Sample(s) => {
                self.samples.push(s);
                self.lines.samples.push(number);
            }
            Line::Mark(m) => {
                self.marks.push(m);
                self.lines.marks.push(number);
            }
            Line::Summary(s) => {
                self.summaries.push(s);
                self.lines.summaries.push(number);
            }
            Line::Unknown => self.unknown_lines += 1,
        }
    }
}

/// Writes telemetry lines, one JSON object and a newline each.
#[derive(Debug)]
pub struct TelemetryWriter<W: Write> {
    out: W,
}

impl<W: Write> TelemetryWriter<W> {
    /// A writer into `out` (give it a buffered writer: each line is one `write` call).
    pub fn new(out: W) -> Self {
        Self { out }
    }

    /// Writes one line.
    ///
    /// # Errors
    /// The underlying writer's.
    pub fn line(&mut self, line: &Line) -> io::Result<()> {
        let mut text = serde_json::to_vec(line).map_err(io::Error::other)?;
        text.push(b'\n');
        self.out.write_all(&text)
    }

    /// Writes the header (the first line of a file).
    ///
    /// # Errors
    /// The underlying writer's.
    pub fn header(&mut self, header: &Header) -> io::Result<()> {
        self.line(&Line::Header(header.clone()))
    }

    /// Writes one sample.
    ///
    /// # Errors
    /// The underlying writer's.
    pub fn sample(&mut self, sample: &Sample) -> io::Result<()> {
        self.line(&Line::Sample(sample.clone()))
    }

    /// Writes one window mark.
    ///
    /// # Errors
    /// The underlying writer's.
    pub fn mark(&mut self, mark: &Mark) -> io::Result<()> {
        self.line(&Line::Mark(mark.clone()))
    }

    /// Writes one summary line.
    ///
    /// # Errors
    /// The underlying writer's.
    pub fn summary(&mut self, summary: &SummaryLine) -> io::Result<()> {
        self.line(&Line::Summary(summary.clone()))
    }

    /// Flushes the underlying writer (a sampler does so every period: a crash then loses
    /// at most one).
    ///
    /// # Errors
    /// The underlying writer's.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Flushes and returns the underlying writer.
    ///
    /// # Errors
    /// The underlying writer's flush.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Every energy a summary line carries reads back as the same f64, bit for bit
        /// (serde_json's default parser can miss by one ulp: `float_roundtrip` is on), so
        /// a sampler's summary and the same file summarised again compare equal.
        #[test]
        fn summary_energies_read_back_bit_for_bit(
            counter in proptest::num::f64::POSITIVE | proptest::num::f64::NORMAL,
            power in 0.0f64..1e9,
        ) {
            let line = SummaryLine {
                window: "train".into(),
                copy: 0,
                device: 0,
                start_ns: 1,
                end_ns: 2,
                samples: 3,
                counter_j: Some(counter),
                power_j: Some(power),
            };
            let mut w = TelemetryWriter::new(Vec::new());
            w.header(&header()).unwrap();
            w.summary(&line).unwrap();
            let file = parse(Path::new("t.jsonl"), &w.into_inner().unwrap()).unwrap();
            proptest::prop_assert_eq!(&file.summaries, &vec![line]);
        }
    }

    fn header() -> Header {
        Header {
            schema_version: TELEMETRY_SCHEMA_VERSION,
            tool: "mlbench 0.1.0".into(),
            bench: Some("resnet50".into()),
            copy: Some(1),
            sample_period_ns: 1_000_000_000,
            origin_unix_ms: None,
            devices: vec![Device {
                id: "cuda:0".into(),
                source: SourceKind::Nvml,
                name: Some("NVIDIA H100".into()),
                power_reading: PowerReading::Average,
                counter: Some(Counter {
                    resolution_uj: 1000.0,
                    wrap_raw: None,
                }),
                power_limit_mw: Some(700_000.0),
                whole_board: true,
                mig: Some(false),
                other_processes: Some(vec![]),
                facts: vec![],
            }],
            facts: vec!["amdsmi: not available".into()],
        }
    }

    fn sample(t_ns: u64, raw: u64) -> Sample {
        Sample {
            t_ns,
            device: 0,
            values: Values {
                energy_raw: Some(raw),
                energy_uj: Some(raw * 1000),
                power_mw: Some(250_500.5),
                util_pct: Some(97.0),
                memory_bytes: Some(1 << 33),
                temperature_c: Some(61.0),
                sm_clock_mhz: Some(1980),
                memory_clock_mhz: None,
            },
            flags: vec![Flag::CounterReset],
            failed: vec![],
        }
    }

    fn written() -> Vec<u8> {
        let mut w = TelemetryWriter::new(Vec::new());
        w.header(&header()).unwrap();
        w.sample(&sample(0, 5)).unwrap();
        w.mark(&Mark {
            t_ns: 10,
            edge: Edge::Start,
            window: "train".into(),
            copy: 1,
        })
        .unwrap();
        w.sample(&sample(1_000_000_000, 7)).unwrap();
        w.into_inner().unwrap()
    }

    #[test]
    fn a_written_file_reads_back_the_same() {
        let bytes = written();
        assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 4);
        let file = parse(Path::new("t.jsonl"), &bytes).unwrap();
        assert_eq!(file.header, header());
        assert_eq!(file.samples, vec![sample(0, 5), sample(1_000_000_000, 7)]);
        assert_eq!(file.marks.len(), 1);
        assert_eq!(file.marks[0].edge, Edge::Start);
        assert!(!file.truncated_tail);
    }

    #[test]
    fn summary_lines_read_back_with_every_line_number() {
        let mut bytes = written();
        let summary = SummaryLine {
            window: "train".into(),
            copy: 1,
            device: 0,
            start_ns: 10,
            end_ns: 900,
            samples: 1,
            counter_j: Some(2.5),
            power_j: None,
        };
        let mut w = TelemetryWriter::new(&mut bytes);
        w.summary(&summary).unwrap();
        w.into_inner().unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.ends_with(
            "{\"type\":\"summary\",\"window\":\"train\",\"copy\":1,\"device\":0,\"start_ns\":10,\"end_ns\":900,\"samples\":1,\"counter_j\":2.5}\n"
        ));
        let file = parse(Path::new("t.jsonl"), &bytes).unwrap();
        assert_eq!(file.summaries, vec![summary]);
        // Header 1, sample 2, mark 3, sample 4, summary 5.
        assert_eq!(
            file.lines,
            LineNumbers {
                samples: vec![2, 4],
                marks: vec![3],
                summaries: vec![5],
            }
        );
        // An older file (no summary lines) reads with none.
        let old = parse(Path::new("t.jsonl"), &written()).unwrap();
        assert!(old.summaries.is_empty());
    }

    #[test]
    fn a_sample_line_is_flat_and_leaves_out_what_is_missing() {
        let line = Line::Sample(Sample {
            t_ns: 3,
            device: 1,
            values: Values {
                power_mw: Some(1.5),
                ..Values::default()
            },
            ..Sample::default()
        });
        assert_eq!(
            serde_json::to_string(&line).unwrap(),
            r#"{"type":"sample","t_ns":3,"device":1,"power_mw":1.5}"#
        );
    }

    #[test]
    fn unknown_fields_types_and_blank_lines_are_passed_over() {
        let text = b"{\"type\":\"header\",\"schema_version\":1,\"new\":true}\n\n\
            {\"type\":\"sample\",\"t_ns\":1,\"device\":0,\"fan_rpm\":900,\"flags\":[\"new_flag\"]}\n\
            {\"type\":\"event\",\"what\":\"throttle\"}\n";
        let file = parse(Path::new("t.jsonl"), text).unwrap();
        assert_eq!(file.header.schema_version, 1);
        assert_eq!(file.samples.len(), 1);
        assert_eq!(file.samples[0].flags, vec![Flag::Other]);
        assert_eq!(file.unknown_lines, 1);
    }

    #[test]
    fn a_broken_line_is_named_by_file_and_line() {
        let mut bytes = written();
        // Line 3 (the mark) loses its closing brace; line 4 follows it.
        let text = String::from_utf8(bytes.clone()).unwrap();
        let broken = text.replacen("\"copy\":1}\n", "\"copy\":1\n", 1);
        bytes.clear();
        bytes.extend_from_slice(broken.as_bytes());
        let err = parse(Path::new("out/telemetry/a.0.jsonl"), &bytes).unwrap_err();
        assert!(
            matches!(err, TelemetryReadError::Line { line: 3, .. }),
            "{err}"
        );
        assert!(err.to_string().starts_with("out/telemetry/a.0.jsonl:3: "));
    }

    #[test]
    fn a_cut_last_line_is_a_truncated_tail() {
        let bytes = written();
        let cut = &bytes[..bytes.len() - 20];
        let file = parse(Path::new("t.jsonl"), cut).unwrap();
        assert!(file.truncated_tail);
        assert_eq!(file.samples.len(), 1);
        assert_eq!(file.marks.len(), 1);
    }

    #[test]
    fn the_header_comes_first_and_once() {
        let no_header = b"{\"type\":\"sample\",\"t_ns\":1,\"device\":0}\n";
        assert!(matches!(
            parse(Path::new("t"), no_header),
            Err(TelemetryReadError::NoHeader { .. })
        ));
        assert!(matches!(
            parse(Path::new("t"), b""),
            Err(TelemetryReadError::NoHeader { .. })
        ));
        let two = b"{\"type\":\"header\"}\n{\"type\":\"header\"}\n";
        assert!(matches!(
            parse(Path::new("t"), two),
            Err(TelemetryReadError::SecondHeader { line: 2, .. })
        ));
    }

    /// Gives `good`, then fails: a stream that runs out of memory or over a limit.
    struct FailsAfter<'a> {
        good: &'a [u8],
    }

    impl io::Read for FailsAfter<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.good.is_empty() {
                return Err(io::Error::new(io::ErrorKind::OutOfMemory, "out of memory"));
            }
            let n = self.good.len().min(buf.len());
            buf[..n].copy_from_slice(&self.good[..n]);
            self.good = &self.good[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_failed_read_is_said_as_such_not_as_a_missing_header() {
        let bytes = written();
        for good in [&bytes[..0], &bytes[..bytes.len() / 2]] {
            let input = io::BufReader::new(FailsAfter { good });
            let err = from_reader(Path::new("big.jsonl"), input).unwrap_err();
            assert!(matches!(err, TelemetryReadError::Io { .. }), "{err}");
            assert_eq!(err.to_string(), "big.jsonl: cannot read");
        }
    }

    #[test]
    fn a_line_past_the_longest_is_refused_without_being_gathered() {
        let mut bytes = written();
        bytes.extend(std::iter::repeat_n(b' ', MAX_LINE + 10));
        bytes.extend_from_slice(b"x\n");
        let err = parse(Path::new("t.jsonl"), &bytes).unwrap_err();
        assert!(
            matches!(err, TelemetryReadError::Line { line: 5, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("longer than"), "{err}");
    }

    #[test]
    fn file_names_carry_bench_and_copy() {
        assert_eq!(file_name("bert-fp16", 3), "bert-fp16.3.jsonl");
        assert_eq!(nth_file_name("bert-fp16", 3, 1), "bert-fp16.3.jsonl");
        assert_eq!(nth_file_name("bert-fp16", 3, 2), "bert-fp16.3.2.jsonl");
    }
}
