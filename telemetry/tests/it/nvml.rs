//! The NVML source against a stand-in `libnvidia-ml.so` built from the signatures of
//! `nvml.h` (as nvml-wrapper declares them): what opening records (the power reading's
//! kind, the limit, MIG, other processes, what is not supported) and what reading gives.
//! This checks mlbench's side of NVML, not NVIDIA's library (never run here).

use crate::fake::build;
use mlbench_schema::telemetry::{PowerReading, SourceKind};
use mlbench_telemetry::Source;
use mlbench_telemetry::nvml::{NvmlSource, load_from};
use std::sync::Arc;

/// GPU 0: an A100 (Ampere, GA100: instantaneous power), MIG on, processes 4242 and 777,
/// its counter 5 000 mJ more at each call. GPU 1: a P100 (Pascal) with power only, which
/// is lost (GPU_IS_LOST, 15) after its first reading. NOT_SUPPORTED is 3.
const FAKE: &str = r#"
#include <stdint.h>
#include <string.h>
typedef struct { unsigned int gpu, memory; } util_t;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } mem2_t;
typedef struct { unsigned int pid; unsigned long long used; unsigned int gi, ci; } proc_t;
static char dev[2];
static unsigned long long energy = 0;
static int p100_power_calls = 0;
#define GPU(d) ((char *)(d) - dev)
int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlSystemGetDriverVersion(char *v, unsigned int n) { strncpy(v, "550.54.15", n); return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **d) {
    if (i > 1) return 2;
    *d = &dev[i]; return 0;
}
int nvmlDeviceGetName(void *d, char *name, unsigned int n) {
    strncpy(name, GPU(d) == 0 ? "NVIDIA A100-SXM4-80GB" : "Tesla P100-PCIE-16GB", n); return 0;
}
int nvmlDeviceGetArchitecture(void *d, unsigned int *a) { *a = GPU(d) == 0 ? 7 : 4; return 0; }
int nvmlDeviceGetTotalEnergyConsumption(void *d, unsigned long long *e) {
    if (GPU(d) != 0) return 3;
    energy += 5000; *e = energy; return 0;
}
int nvmlDeviceGetPowerUsage(void *d, unsigned int *p) {
    if (GPU(d) == 0) { *p = 250000; return 0; }
    if (p100_power_calls++ >= 2) return 15;
    *p = 150000; return 0;
}
int nvmlDeviceGetUtilizationRates(void *d, util_t *u) {
    if (GPU(d) != 0) return 3;
    u->gpu = 97; u->memory = 40; return 0;
}
int nvmlDeviceGetMemoryInfo_v2(void *d, mem2_t *m) {
    if (GPU(d) != 0) return 3;
    m->total = 80ULL << 30; m->used = 8ULL << 30; m->free = m->total - m->used; return 0;
}
int nvmlDeviceGetTemperature(void *d, unsigned int sensor, unsigned int *t) {
    if (GPU(d) != 0 || sensor != 0) return 3;
    *t = 61; return 0;
}
int nvmlDeviceGetClockInfo(void *d, unsigned int type, unsigned int *c) {
    if (GPU(d) != 0) return 3;
    *c = type == 1 ? 1410 : type == 2 ? 1593 : 0; return 0;
}
int nvmlDeviceGetEnforcedPowerLimit(void *d, unsigned int *l) { *l = GPU(d) == 0 ? 400000 : 250000; return 0; }
int nvmlDeviceGetMigMode(void *d, unsigned int *cur, unsigned int *pending) {
    if (GPU(d) != 0) return 3;
    *cur = 1; *pending = 1; return 0;
}
int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned int *n, proc_t *p) {
    if (GPU(d) != 0) { *n = 0; return 0; }
    if (*n < 2) { *n = 2; return 7; }
    *n = 2; p[0].pid = 4242; p[1].pid = 777; return 0;
}
"#;

#[test]
fn an_a100_and_a_p100_are_opened_and_read_as_nvml_says() {
    let dir = tempfile::tempdir().unwrap();
    let lib = build(dir.path(), "libfake_nvml.so", FAKE, &[]);
    let nvml = load_from(&lib).unwrap();

    let mut a100 = NvmlSource::open(Arc::clone(&nvml), 0, "cuda:0", &[777]).unwrap();
    let d = a100.probe().clone();
    assert_eq!(d.source, SourceKind::Nvml);
    assert_eq!(d.name.as_deref(), Some("NVIDIA A100-SXM4-80GB"));
    assert_eq!(d.power_reading, PowerReading::Instantaneous);
    assert_eq!(d.counter.unwrap().resolution_uj, 1000.0);
    assert_eq!(d.power_limit_mw, Some(400_000.0));
    assert_eq!(d.mig, Some(true));
    assert_eq!(d.other_processes, Some(vec![4242]));
    assert!(d.facts.is_empty(), "{:?}", d.facts);
    // Opening read the counter once (5 000 mJ); the reading is the second call.
    let r = a100.read();
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    let v = r.values;
    assert_eq!(v.energy_raw, Some(10_000));
    assert_eq!(v.power_mw, Some(250_000.0));
    assert_eq!(v.util_pct, Some(97.0));
    assert_eq!(v.memory_bytes, Some(8 << 30));
    assert_eq!(v.temperature_c, Some(61.0));
    assert_eq!(
        (v.sm_clock_mhz, v.memory_clock_mhz),
        (Some(1410), Some(1593))
    );

    let mut p100 = NvmlSource::open(Arc::clone(&nvml), 1, "cuda:1", &[]).unwrap();
    let d = p100.probe().clone();
    assert_eq!(d.power_reading, PowerReading::Instantaneous);
    assert_eq!(d.counter, None);
    assert_eq!(d.mig, None);
    assert_eq!(d.other_processes, Some(vec![]));
    // Six readings it does not support, each said once.
    assert_eq!(d.facts.len(), 6, "{:?}", d.facts);
    assert!(d.facts[0].starts_with("energy counter (Volta and newer): not supported"));
    let r = p100.read();
    assert_eq!(r.values.power_mw, Some(150_000.0));
    assert_eq!(r.values.energy_raw, None);
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    // Then the GPU falls off the bus: the field is named, nothing panics.
    let r = p100.read();
    assert_eq!(r.values.power_mw, None);
    assert_eq!(r.failed.len(), 1);
    assert!(r.failed[0].starts_with("power_mw: "), "{:?}", r.failed);

    assert!(NvmlSource::open(nvml, 2, "cuda:2", &[]).is_err());
}
