//! Stand-in vendor libraries, compiled from C by `cc` for a test: they implement the
//! documented C signatures, so mlbench's side of each interface runs for real.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles `source` into the shared library `dir/name`, with `-D` options `defines`.
pub fn build(dir: &Path, name: &str, source: &str, defines: &[&str]) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).unwrap();
    let out = dir.join(name);
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&out)
        .args(defines)
        .arg(&src)
        .status()
        .expect("a C compiler (`cc`): the workspace's C dependencies need one too");
    assert!(status.success(), "cc failed on {}", src.display());
    out
}
