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
        // Noise: the pairing of the two jobs, not their data, is what is tested.
        ("synthetic_data", Value::Bool(true)),
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

/// Each step's loss; dcgan's, which logs none, the sum of its metrics (errD_real +
/// errD_fake + errG).
fn losses(name: &str, args: &BenchArgs, steps: usize) -> Vec<f64> {
    let mut bench = Models.create(name, args, CPU).unwrap();
    (0..steps)
        .map(|_| {
            let logs = bench.step().unwrap();
            logs.loss
                .unwrap_or_else(|| logs.metrics.iter().map(|(_, v)| v).sum())
        })
        .collect()
}

/// On (simulated) CPU devices dcgan_all is main.py's CPU path: dcgan on the whole batch
/// (`batch_size × ngpu`), bit for bit, whatever the devices.
#[test]
fn dcgan_all_on_cpu_devices_is_dcgan_on_the_whole_batch() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut whole = dcgan_args("0", None);
    whole.batch_size = 6;
    let plain = losses("dcgan", &whole, 4);
    assert!(plain.iter().all(|l| l.is_finite()), "{plain:?}");
    assert_eq!(losses("dcgan_all", &dcgan_args("0,1", None), 4), plain);
    assert_eq!(losses("dcgan_all", &dcgan_args("0,1,2", Some(2)), 4), plain);
}

/// Replicas in threads draw nothing: two copies with the same seed give the same losses
/// (dcgan_all's replicas: `models::dcgan_all`'s tests).
#[test]
fn whole_machine_losses_depend_on_the_seed_alone() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
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
            ("synthetic_data", Value::Bool(true)),
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
