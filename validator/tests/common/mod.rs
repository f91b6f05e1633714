//! Helpers shared by `archive.rs` and `pack.rs`: an archive read from bytes, and what the
//! intake made of it.

use mlbench_results::Finding;
use mlbench_submission::Fact;
use mlbench_submission::intake::read_zip;
use mlbench_submission::intake::{Intake, Limits};

pub fn read_bytes(bytes: &[u8], limits: &Limits) -> Intake {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("submission.zip");
    std::fs::write(&path, bytes).unwrap();
    let intake = read_zip(&path, limits).unwrap();
    // Read in place: nothing may appear next to the archive.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    intake
}

pub fn read(bytes: &[u8]) -> Intake {
    read_bytes(bytes, &Limits::default())
}

/// A finding or a container fact: its rule and file.
pub trait RuleAt {
    fn rule_at(&self) -> (&str, Option<&str>);
}

impl RuleAt for Finding {
    fn rule_at(&self) -> (&str, Option<&str>) {
        (self.rule, self.file.as_deref())
    }
}

impl RuleAt for Fact {
    fn rule_at(&self) -> (&str, Option<&str>) {
        (self.rule, self.file.as_deref())
    }
}

pub fn rules<T: RuleAt>(found: &[T]) -> Vec<(&str, Option<&str>)> {
    found.iter().map(RuleAt::rule_at).collect()
}

pub fn paths(intake: &Intake) -> Vec<&str> {
    intake.files.iter().map(|f| f.path.as_str()).collect()
}
