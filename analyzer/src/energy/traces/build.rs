//! A bench's power over time made from its copies' telemetry files, each read in one pass
//! ([`mlbench_telemetry::fold::reduce`]), and the lines a GPU check copies into
//! docs/runner.md (whether each counter moved, the sampling rate reached, the counter's
//! energy against the power readings' integral).
//!
//! The copies' files each count time from their own start on the monotonic clock; they
//! are put on one axis by their wall-clock origins (`origin_unix_ms`, to the
//! millisecond), which is for drawing only: every energy is computed on each file's own
//! clock ([`mlbench_telemetry::summarize_with_idle`]).
//!
//! Power is the device's own readings (`power_mw`). A device with an energy counter and
//! no power reading (RAPL) gets the mean power between two counter readings, placed
//! midway between them ([`counter::power_w`]): derived, and said so. An interval across
//! a reset, or longer than two sampling periods, gives no point (the chart breaks the
//! line there). A device with neither (`cpu:proc`) is not drawn, and said so.

use mlbench_results::trace::{LineEnergy, Trace, TraceLine, TraceWindow};
use mlbench_schema::telemetry::{self as format, Device, IDLE_WINDOW, SourceKind, TelemetryFile};
use mlbench_telemetry::counter;
use mlbench_telemetry::fold::Reduced;
use mlbench_telemetry::summary::WindowSummary;

/// The trace of one bench's `files` (its copies), with idle baselines from `idle`.
pub fn trace(
    name: &str,
    run: &str,
    bench: &str,
    files: &[TelemetryFile],
    idle: &[WindowSummary],
) -> Trace {
    let files: Vec<Reduced> = files.iter().map(Reduced::of_file).collect();
    trace_of(name, run, bench, &files, idle)
}

/// [`trace`] of files read in one pass ([`mlbench_telemetry::fold::reduce`]): each device's points
/// from the samples kept, its counts and energies from every sample.
pub fn trace_of(
    name: &str,
    run: &str,
    bench: &str,
    files: &[Reduced],
    idle: &[WindowSummary],
) -> Trace {
    let mut out = Trace {
        name: name.into(),
        run: run.into(),
        bench: bench.into(),
        ..Trace::default()
    };
    let headers: Vec<&format::Header> = files.iter().map(|f| &f.file.header).collect();
    let offsets = offsets(&headers, &mut out.facts);
    let (mut unread, mut seen) = (Vec::new(), std::collections::HashSet::new());
    let several = files.len() > 1;
    for (reduced, offset) in files.iter().zip(offsets) {
        let file = &reduced.file;
        let copy = file.header.copy.unwrap_or(0);
        let summary = reduced.summary_with_idle(idle);
        out.facts
            .extend(summary.facts.iter().map(|f| format!("copy {copy}: {f}")));
        if file.truncated_tail {
            out.facts
                .push(format!("copy {copy}: its file's last line was cut short"));
        }
        let windows: Vec<&WindowSummary> = summary
            .windows
            .iter()
            .filter(|w| w.name != IDLE_WINDOW)
            .collect();
        for w in &windows {
            out.windows.push(TraceWindow {
                name: w.name.clone(),
                copy: w.copy,
                start_s: offset + w.start_ns as f64 * 1e-9,
                end_s: offset + w.end_ns as f64 * 1e-9,
            });
        }
        for (i, device) in file.header.devices.iter().enumerate() {
            let Some(mut line) = line(reduced, i, offset) else {
                // Once per device id: every copy's file holds the CPU's sources.
                if seen.insert(device.id.as_str()) {
                    unread.push(device.id.clone());
                }
                continue;
            };
            line.label = label(device, several.then_some(copy));
            if line.undrawn > 0 {
                out.facts.push(format!(
                    "{}: {} not drawn, out of time order or not finite (`mlbench validate` names them).",
                    line.label,
                    plural_readings(line.undrawn)
                ));
            }
            line.copy = copy;
            line.energy = windows.iter().map(|w| energy(w, i)).collect();
            line.idle_w = windows
                .iter()
                .find_map(|w| w.devices.get(i).and_then(|d| d.idle_w));
            out.lines.push(line);
        }
    }
    out.facts.extend(unread_fact(&unread));
    out
}

/// `cpu:proc has no power or energy readings: not drawn.`, naming at most eight devices.
fn unread_fact(ids: &[String]) -> Option<String> {
    const NAMED: usize = 8;
    let mut names = ids
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > NAMED {
        names.push_str(&format!(" and {} more devices", ids.len() - NAMED));
    }
    Some(match ids.len() {
        0 => return None,
        1 => format!("{names} has no power or energy readings: not drawn."),
        _ => format!("{names} have no power or energy readings: not drawn."),
    })
}

/// Each file's start on the trace's axis, s: its wall-clock origin less the earliest
/// one; all 0 when a file lacks its origin (said in `facts`).
fn offsets(files: &[&format::Header], facts: &mut Vec<String>) -> Vec<f64> {
    let origins: Option<Vec<u64>> = files.iter().map(|h| h.origin_unix_ms).collect();
    match origins {
        Some(o) if files.len() > 1 => {
            let first = o.iter().copied().min().unwrap_or(0);
            facts.push(
                "The copies' files are put on one time axis by their wall-clock origins \
                 (to the millisecond); each energy is on its file's own monotonic clock."
                    .into(),
            );
            o.iter().map(|t| (t - first) as f64 * 1e-3).collect()
        }
        None if files.len() > 1 => {
            facts.push(
                "A copy's file has no wall-clock origin: every copy is drawn from its own \
                 start, so the copies are not aligned."
                    .into(),
            );
            vec![0.0; files.len()]
        }
        _ => vec![0.0; files.len()],
    }
}

/// `cuda:0 NVIDIA H100 80GB HBM3 · copy 1`: the id, the name where it adds to it, the
/// copy when asked.
fn label(device: &Device, copy: Option<u32>) -> String {
    let mut text = device.id.clone();
    if let Some(name) = device.name.as_deref().filter(|n| !device.id.contains(n)) {
        text.push(' ');
        text.push_str(name);
    }
    if let Some(copy) = copy {
        text.push_str(&format!(" · copy {copy}"));
    }
    text
}

fn energy(w: &WindowSummary, device: usize) -> LineEnergy {
    let d = w.devices.get(device).cloned().unwrap_or_default();
    LineEnergy {
        window: w.name.clone(),
        counter_j: d.counter_j,
        power_j: d.power_j,
        net_j: if d.counter_j.is_some() {
            d.net_counter_j
        } else {
            d.net_power_j
        },
        disagreement: d.disagreement,
        samples: d.samples,
        duration_s: (w.end_ns - w.start_ns) as f64 * 1e-9,
    }
}

/// The line of the `device`-th device of `file`, its times shifted by `offset` s; `None`
/// when it has neither power readings nor counter readings.
fn line(reduced: &Reduced, device: usize, offset: f64) -> Option<TraceLine> {
    let file = &reduced.file;
    let stats = reduced.folded.devices.get(device)?;
    let mine: Vec<&format::Sample> = file
        .samples
        .iter()
        .filter(|s| s.device as usize == device)
        .collect();
    let period_ns = file.header.sample_period_ns;
    let power: Vec<(u64, f64)> = mine
        .iter()
        .filter_map(|s| Some((s.t_ns, s.values.power_mw? * 1e-3)))
        .collect();
    let counter: Vec<(u64, u64)> = mine
        .iter()
        .filter_map(|s| Some((s.t_ns, s.values.energy_raw?)))
        .collect();
    let info = file.header.devices.get(device)?.counter.as_ref();
    let (points, from_counter) = if !power.is_empty() {
        (power, false)
    } else {
        // Of the samples kept, every `kept_every`-th: their gaps are that much longer.
        let period = period_ns.saturating_mul(stats.kept_every.max(1));
        (counter::power_w(&counter, info?, period), true)
    };
    if points.is_empty() && counter.is_empty() {
        return None;
    }
    let read = points.len();
    let points = drawable(points);
    let undrawn = read - points.len();
    let moved = info.and(stats.counter_moved_uj).map(|uj| uj * 1e-6);
    let (first, last) = stats.first_last?;
    Some(TraceLine {
        device: file.header.devices[device].id.clone(),
        source: file.header.devices[device].source,
        period_s: period_ns as f64 * 1e-9,
        points: points
            .into_iter()
            .map(|(t, w)| (offset + t as f64 * 1e-9, w))
            .collect(),
        from_counter,
        samples: stats.samples,
        span_s: last.saturating_sub(first) as f64 * 1e-9,
        counter_moved_j: moved,
        undrawn,
        ..TraceLine::default()
    })
}

fn plural_readings(n: usize) -> String {
    match n {
        1 => "1 reading".to_owned(),
        n => format!("{n} readings"),
    }
}

/// The readings a chart can draw: finite, each at or after the one before (`validate`
/// names the others: `telemetry.clock`, `telemetry.power-range`).
pub(super) fn drawable(points: Vec<(u64, f64)>) -> Vec<(u64, f64)> {
    let mut kept: Vec<(u64, f64)> = Vec::with_capacity(points.len());
    for (i, &(t, w)) in points.iter().enumerate() {
        // A time past the next one is the odd one (one wild time would otherwise hide
        // every reading after it); a time before the last kept one, likewise.
        let ahead = points.get(i + 1).is_some_and(|&(next, _)| next < t);
        let behind = kept.last().is_some_and(|&(last, _)| t < last);
        if w.is_finite() && !ahead && !behind {
            kept.push((t, w));
        }
    }
    kept
}

/// One line per device of `trace`: what a GPU check writes down about each source.
///
/// `output0 vae: cuda:0 NVIDIA H100 (nvml) copy 0: 611 samples over 61.0 s, 10.00 Hz of 10.000 Hz;
/// counter moved 31012.0 J; train 60.0 s, 601 samples: counter 30100.0 J, power
/// 29800.0 J (1.0 % apart), net of idle 26410.0 J`.
pub fn check_lines(trace: &Trace) -> Vec<String> {
    trace
        .lines
        .iter()
        .map(|l| {
            let id = l.label.split(" · ").next().unwrap_or(&l.label);
            let mut text = format!(
                "{} {}: {id} ({}) copy {}: {}",
                trace.run,
                trace.bench,
                source_name(l.source),
                l.copy,
                rate(l)
            );
            text.push_str(&match l.counter_moved_j {
                None => "; no energy counter".to_string(),
                Some(j) if j > 0.0 => format!("; counter moved {j:.1} J"),
                Some(_) => "; counter did NOT move".to_string(),
            });
            if l.from_counter {
                text.push_str("; no power readings (power from the counter)");
            }
            for e in &l.energy {
                text.push_str(&format!("; {}", energy_words(e)));
            }
            text
        })
        .collect()
}

fn source_name(s: SourceKind) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{s:?}"))
}

/// `611 samples over 61.0 s, 10.0 Hz of 10 Hz`.
fn rate(l: &TraceLine) -> String {
    let nominal = 1.0 / l.period_s;
    if l.samples < 2 || l.span_s <= 0.0 {
        return format!("{} samples, nominal {nominal:.3} Hz", l.samples);
    }
    let reached = (l.samples - 1) as f64 / l.span_s;
    format!(
        "{} samples over {:.1} s, {reached:.2} Hz of {nominal:.3} Hz",
        l.samples, l.span_s
    )
}

/// `train 60.0 s, 61 samples: counter 30100.0 J, power 29800.0 J (1.0 % apart)`.
fn energy_words(e: &LineEnergy) -> String {
    let j = |v: Option<f64>| v.map_or_else(|| "none".to_string(), |v| format!("{v:.1} J"));
    let mut text = format!(
        "{} {:.1} s, {} samples: counter {}, power {}",
        e.window,
        e.duration_s,
        e.samples,
        j(e.counter_j),
        j(e.power_j)
    );
    if let Some(d) = e.disagreement {
        text.push_str(&format!(" ({:.1} % apart)", d * 100.0));
    }
    if let Some(net) = e.net_j {
        text.push_str(&format!(", net of idle {net:.1} J"));
    }
    text
}
