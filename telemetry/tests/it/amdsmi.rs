//! The amdsmi source against a stand-in `libamd_smi.so` built from the
//! signatures of `amdsmi.h`: the hand-written declarations, the handle enumeration, the
//! energy count and its resolution, and the BDF id leading to the GPU's hwmon device.
//! This checks mlbench's side of the interface, not AMD's library (never run here).

use crate::fake::build;
use mlbench_schema::telemetry::SourceKind;
use mlbench_telemetry::Source;
use mlbench_telemetry::amdsmi::{AmdSmiSource, load_from};
use std::path::Path;

/// Two GPUs on one socket; the first gives no energy count (NOT_SUPPORTED, 2), the
/// second 1000 counts more at each call, at 15.3 µJ a count, on PCI bus c1.
const FAKE: &str = r#"
#include <stdint.h>
static void *gpus[2] = {(void *)0x1001, (void *)0x1002};
static uint64_t calls = 0;
uint32_t amdsmi_init(uint64_t flags) {
#ifdef FAIL_INIT
    return 1;
#endif
    return flags == 2 ? 0 : 7;
}
uint32_t amdsmi_shut_down(void) { return 0; }
uint32_t amdsmi_get_socket_handles(uint32_t *n, void **h) {
    if (*n < 1) return 1;
    *n = 1; h[0] = (void *)0x5; return 0;
}
uint32_t amdsmi_get_processor_handles(void *s, uint32_t *n, void **h) {
    if (s != (void *)0x5 || *n < 2) return 1;
    *n = 2; h[0] = gpus[0]; h[1] = gpus[1]; return 0;
}
uint32_t amdsmi_get_energy_count(void *g, uint64_t *acc, float *res, uint64_t *ts) {
    if (g != gpus[1]) return 2;
    calls++; *acc = 1000 * calls; *res = 15.3f; *ts = 0;
#ifdef ZERO_RESOLUTION
    *res = 0.0f;
#endif
    return 0;
}
uint32_t amdsmi_get_gpu_bdf_id(void *g, uint64_t *id) {
    *id = g == gpus[1] ? (0xc1 << 8) : (0x03 << 8); return 0;
}
"#;

#[test]
fn a_gpu_reads_its_energy_from_amdsmi_and_its_power_from_hwmon() {
    let dir = tempfile::tempdir().unwrap();
    let lib = build(dir.path(), "libfake_amdsmi.so", FAKE, &[]);
    let hw = dir
        .path()
        .join("sys/bus/pci/devices/0000:c1:00.0/hwmon/hwmon5");
    std::fs::create_dir_all(&hw).unwrap();
    std::fs::write(hw.join("name"), "amdgpu\n").unwrap();
    std::fs::write(hw.join("power1_average"), "275000000\n").unwrap();
    std::fs::write(hw.join("power1_cap"), "300000000\n").unwrap();
    let smi = load_from(&lib).unwrap();
    let sys = dir.path().join("sys");

    let mut gpu = AmdSmiSource::open(smi.clone(), 1, "cuda:1", &sys).unwrap();
    let d = gpu.probe().clone();
    assert_eq!(d.source, SourceKind::Amdsmi);
    // 15.3 as a C float.
    assert_eq!(d.counter.unwrap().resolution_uj, f64::from(15.3f32));
    assert_eq!(d.counter.unwrap().wrap_raw, None);
    assert_eq!(d.power_limit_mw, Some(300_000.0));
    // The open read the count once (1000); each reading counts on.
    let r = gpu.read();
    assert_eq!(r.values.energy_raw, Some(2000));
    assert_eq!(r.values.power_mw, Some(275_000.0));
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert_eq!(gpu.read().values.energy_raw, Some(3000));

    let err = AmdSmiSource::open(smi.clone(), 0, "cuda:0", &sys).unwrap_err();
    assert!(
        err.reason.ends_with("amdsmi_get_energy_count: status 2"),
        "{err}"
    );
    let err = AmdSmiSource::open(smi, 2, "cuda:2", &sys).unwrap_err();
    assert!(err.reason.ends_with("2 GPUs"), "{err}");
}

#[test]
fn a_library_that_does_not_initialise_is_not_amdsmi_or_counts_nothing_is_not_available() {
    let dir = tempfile::tempdir().unwrap();
    let failing = build(dir.path(), "libfailing.so", FAKE, &["-DFAIL_INIT"]);
    let err = load_from(&failing).unwrap_err();
    assert_eq!(err.reason, "amdsmi_init: status 1");
    // A counter whose resolution is 0 would make every energy 0: not a counter.
    let zero = build(dir.path(), "libzero.so", FAKE, &["-DZERO_RESOLUTION"]);
    let smi = load_from(&zero).unwrap();
    let err = AmdSmiSource::open(smi, 1, "cuda:1", dir.path()).unwrap_err();
    assert!(err.reason.ends_with("counter_resolution 0"), "{err}");
    // A library without amdsmi's functions (the C library itself).
    let err = load_from(Path::new("libc.so.6")).unwrap_err();
    assert!(err.reason.contains("amdsmi_init: "), "{err}");
    let err = load_from(&dir.path().join("absent.so")).unwrap_err();
    assert!(err.reason.contains("absent.so: "), "{err}");
}
