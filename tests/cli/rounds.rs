//! Stores of rounds for `history`, `publish` and `verify`: each vendor's submission
//! written with chosen means per bench (`fixtures::write_vendor`: 2 GPUs × 4 runs, every
//! GPU's deviations summing to zero, so a bench's mean is the one chosen) and archived.

use crate::fixtures::{mlbench, write_vendor};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// One submission of a round: its label, each bench's mean, its release date.
pub struct Sub<'a> {
    pub label: &'a str,
    pub means: &'a [(&'a str, f64)],
    pub release: Option<&'a str>,
}

/// A store under a temporary root, and the root.
pub struct Rounds {
    pub root: TempDir,
}

impl Rounds {
    pub fn store(&self) -> PathBuf {
        self.root.path().join("store")
    }

    /// Where round `round`'s submission `label` was written (as a folder).
    pub fn source(&self, round: &str, label: &str) -> PathBuf {
        self.root.path().join("src").join(round).join(label)
    }
}

/// Archives every submission of every round, in the order given.
pub fn rounds(rounds: &[(&str, &[Sub])]) -> Rounds {
    let root = tempfile::tempdir().unwrap();
    let made = Rounds { root };
    for (round, subs) in rounds {
        for sub in *subs {
            let dir = made.source(round, sub.label);
            write_vendor(&dir, sub.means);
            let mut cmd = mlbench();
            cmd.arg("archive").arg("--store").arg(made.store());
            cmd.args(["add", round]).arg(&dir).arg("--allow-errors");
            if let Some(day) = sub.release {
                cmd.args(["--release", day]);
            }
            let out = cmd.output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    made
}

/// `mlbench ARGS…` (the store given as `--store`): exit status, stdout, stderr.
pub fn run(store: &Path, command: &str, args: &[&str]) -> (i32, String, String) {
    let out = (mlbench().arg(command).arg("--store").arg(store))
        .args(args)
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (
        out.status.code().unwrap(),
        text(out.stdout),
        text(out.stderr),
    )
}

/// The zip the store keeps for entry `id`.
pub fn kept_zip(store: &Path, id: usize) -> PathBuf {
    let out = (mlbench().arg("archive").arg("--store").arg(store))
        .args(["list", "-f", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sha = doc["entries"][id - 1]["sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    store.join(format!("zips/sha256/{}/{sha}.zip", &sha[..2]))
}
