//! The whole-machine models against the global random stream: alone in their own test
//! process (libtorch's CPU generator is shared by every thread, so tests running beside
//! them would draw from it), one test at a time (`SERIAL`).
#![cfg(feature = "tch")]

use mlbench_runner::models::Models;
use mlbench_runner::{BenchArgs, BenchFactory, DeviceSpec};
use mlbench_schema::value::Value;
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

const CPU: DeviceSpec = DeviceSpec::Cpu {
    index: 0,
    threads: 1,
};

fn dcgan_args(vcd: &str, ngpu: Option<i64>) -> BenchArgs {
    let mut extra: std::collections::BTreeMap<String, Value> = [
        ("nz", Value::Int(8)),
        ("ngf", Value::Int(4)),
        ("ndf", Value::Int(4)),
        ("vcd", Value::from(vcd)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    if let Some(n) = ngpu {
        extra.insert("ngpu".into(), Value::Int(n));
    }
    BenchArgs {
        batch_size: 3,
        number: 1,
        repeat: 1,
        seed: 11,
        extra,
    }
}

fn losses(name: &str, args: &BenchArgs, steps: usize) -> Vec<f64> {
    let mut bench = Models.create(name, args, CPU).unwrap();
    (0..steps).map(|_| bench.step().unwrap()).collect()
}

/// On one device dcgan_all's DataParallel path (scatter, the replica's thread, gather, the
/// loss's gradient sent back by hand, G reached through D's input gradient, the master's
/// optimizers) is dcgan itself: the same seed gives dcgan's losses step after step.
#[test]
fn dcgan_all_on_one_device_is_dcgan() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let plain = losses("dcgan", &dcgan_args("0", None), 4);
    let one = losses("dcgan_all", &dcgan_args("0,1", Some(1)), 4);
    for (a, b) in plain.iter().zip(&one) {
        assert!(
            (a - b).abs() < 1e-5,
            "dcgan {plain:?}, dcgan_all on one device {one:?}"
        );
    }
}

/// Replicas in threads draw nothing: two copies with the same seed give the same losses, on
/// two devices (batch 6 split 3 + 3) as on one.
#[test]
fn whole_machine_losses_depend_on_the_seed_alone() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let a = losses("dcgan_all", &dcgan_args("0,1", None), 3);
    let b = losses("dcgan_all", &dcgan_args("0,1", None), 3);
    assert_eq!(a, b);
    let mut convnet = BenchArgs {
        batch_size: 2,
        number: 1,
        repeat: 1,
        seed: 5,
        extra: [
            ("arch", Value::from("resnet18")),
            ("image_size", Value::Int(32)),
            ("num_classes", Value::Int(4)),
            ("vcd", Value::from("0,1")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect(),
    };
    let a = losses("convnet_distributed", &convnet, 2);
    let b = losses("convnet_distributed", &convnet, 2);
    assert_eq!(a, b);
    convnet.seed = 6;
    assert_ne!(
        losses("convnet_distributed", &convnet, 2),
        a,
        "another seed"
    );
}
