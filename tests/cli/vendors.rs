//! Four vendors' submissions made from the shipped example, as an organizer receives them:
//! - A: every throughput 1.2× the example's (timings ÷ 1.2);
//! - B: one NaN in a loss curve, packed with `--allow-errors`;
//! - C: no `ssd` entries at all;
//! - D: entries on "NVIDIA H100 80GB HBM3", every throughput × 0.86, and convnet at
//!   batch 128 (its jobs file says so too).
//!
//! Each is a folder under the temporary root and a zip `mlbench pack` made of it.

use crate::fixtures::write_entries;
use crate::fixtures::{copy_tree, edit_object, example_dir, mlbench, read_entries, rehash};
use mlbench_schema::{Object, Value};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// The example's GPU as its entries name it.
pub const EXAMPLE_GPU: &str = "TITAN RTX";
/// vendorD's GPU as its entries name it.
pub const H100: &str = "NVIDIA H100 80GB HBM3";
/// vendorA's speed-up over the example.
pub const A_SPEEDUP: f64 = 1.2;
/// vendorD's throughput as a share of the example's.
pub const D_SHARE: f64 = 0.86;
/// vendorD's convnet batch size (the example's is 64).
pub const D_CONVNET_BATCH: i64 = 128;

/// The four vendors: folders and zips under one temporary root.
pub struct Vendors {
    /// Keeps the root alive.
    pub root: TempDir,
}

impl Vendors {
    /// The folder of vendor `v` (`'A'`..=`'D'`).
    pub fn dir(&self, v: char) -> PathBuf {
        self.root.path().join(format!("vendor{v}"))
    }

    /// The zip of vendor `v`.
    pub fn zip(&self, v: char) -> PathBuf {
        self.root.path().join(format!("vendor{v}.zip"))
    }

    /// The four zips, A to D.
    pub fn zips(&self) -> Vec<PathBuf> {
        "ABCD".chars().map(|v| self.zip(v)).collect()
    }
}

/// Every report stream of a submission folder (`output*/fast_*.json`).
fn streams(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for run in std::fs::read_dir(root).unwrap() {
        let run = run.unwrap().path();
        if run.is_dir() {
            for file in std::fs::read_dir(&run).unwrap() {
                out.push(file.unwrap().path());
            }
        }
    }
    out.sort();
    out
}

/// Multiplies an entry's throughput by `factor` and divides its timings by it.
fn scale(fields: &mut Object, factor: f64) {
    edit_object(fields, "train_item", |item| {
        for key in ["avg", "max", "min", "range"] {
            if let Some(v) = item.get(key).and_then(Value::as_f64) {
                item.insert(key, v * factor);
            }
        }
    });
    scale_timings(fields, factor);
}

/// Divides an entry's `train` timings by `factor`.
fn scale_timings(fields: &mut Object, factor: f64) {
    edit_object(fields, "train", |train| {
        for key in ["avg", "max", "min", "sd"] {
            if let Some(v) = train.get(key).and_then(Value::as_f64) {
                train.insert(key, v / factor);
            }
        }
    });
}

/// Applies `edit` to every entry of every stream under `root`; an entry it returns
/// `false` for is dropped.
fn edit_all(root: &Path, mut edit: impl FnMut(&mut Object) -> bool) {
    for path in streams(root) {
        let mut entries = read_entries(&path);
        entries.retain_mut(|e| edit(&mut e.fields));
        write_entries(&path, &entries);
    }
}

fn name_of(fields: &Object) -> String {
    fields
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn set_host(fields: &mut Object, vendor: char) {
    fields.insert("hostname", format!("vendor{vendor}-node"));
}

fn make_a(root: &Path) {
    edit_all(root, |e| {
        set_host(e, 'A');
        scale(e, A_SPEEDUP);
        true
    });
}

fn make_b(root: &Path) {
    edit_all(root, |e| {
        set_host(e, 'B');
        true
    });
    // One NaN in the first entry of the first stream's loss curve.
    let first = &streams(root)[0];
    let mut entries = read_entries(first);
    let mut losses = match entries[0].fields.get("batch_loss") {
        Some(Value::List(list)) => list.clone(),
        other => panic!("batch_loss: {other:?}"),
    };
    losses[3] = Value::Float(f64::NAN);
    entries[0].fields.insert("batch_loss", Value::List(losses));
    write_entries(first, &entries);
}

fn make_c(root: &Path) {
    edit_all(root, |e| {
        set_host(e, 'C');
        name_of(e) != "ssd"
    });
}

fn make_d(root: &Path) {
    edit_all(root, |e| {
        set_host(e, 'D');
        // Only where the suite wrote one: it names no GPU of a bench run without CUDA.
        if e.get("gpu").is_some() {
            e.insert("gpu", H100);
        }
        scale(e, D_SHARE);
        if name_of(e) == "convnet" {
            // Twice the batch per step, the same items per second: each step takes twice
            // as long (train_item = batch_size × number ÷ train.avg still holds).
            let batch = e.get("batch_size").and_then(Value::as_f64).unwrap();
            scale_timings(e, batch / D_CONVNET_BATCH as f64);
            e.insert("batch_size", D_CONVNET_BATCH);
            rehash(e);
        }
        true
    });
    let jobs = root.join("fast.json");
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&jobs).unwrap()).unwrap();
    for job in doc.as_array_mut().unwrap() {
        if job["name"] == "convnet" {
            job["args"]["--batch-size"] = D_CONVNET_BATCH.into();
        }
    }
    std::fs::write(&jobs, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
}

/// Packs `dir` into `zip`; `allow_errors` for a folder with errors.
fn pack(dir: &Path, zip: &Path, allow_errors: bool) {
    let mut cmd = mlbench();
    cmd.arg("pack").arg(dir).arg("-o").arg(zip);
    if allow_errors {
        cmd.arg("--allow-errors");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "pack {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Builds the four vendors.
pub fn four_vendors() -> Vendors {
    let vendors = Vendors {
        root: tempfile::tempdir().unwrap(),
    };
    let makers: [(char, fn(&Path), bool); 4] = [
        ('A', make_a, false),
        ('B', make_b, true),
        ('C', make_c, true),
        ('D', make_d, false),
    ];
    for (v, make, allow_errors) in makers {
        let dir = vendors.dir(v);
        copy_tree(&example_dir(), &dir);
        make(&dir);
        pack(&dir, &vendors.zip(v), allow_errors);
    }
    vendors
}
