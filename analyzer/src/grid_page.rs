//! What a grid's HTML page shows besides the grid, taken from the submissions before the
//! grid consumes their samples.

use crate::compare::Labelled;
use mlbench_results::{Grid, GridPage, Provenance, SubmissionCheck};
use mlbench_schema::SystemInfo;
use mlbench_validator::SubmissionInfo;
use rayon::prelude::*;

/// Each submission's validation (the one its grid row's verdict comes from), its machines
/// and the digests of its files.
pub struct PageExtras {
    /// Each submission, validated.
    pub checks: Vec<SubmissionCheck>,
    /// Each submission's machines (label, its `system.json`s), in the order given.
    pub systems: Vec<(String, Vec<SystemInfo>)>,
    /// (path, SHA-256) of every file, for the page's provenance.
    pub digests: Vec<(String, String)>,
}

impl PageExtras {
    /// What the page shows of `loaded`.
    pub fn of(loaded: &[Labelled]) -> PageExtras {
        let systems = |l: &Labelled| {
            (
                l.label.clone(),
                SubmissionInfo::systems_of(&l.sub.intake.files),
            )
        };
        PageExtras {
            checks: loaded.par_iter().map(|l| l.check().clone()).collect(),
            systems: loaded.iter().map(systems).collect(),
            digests: loaded.iter().flat_map(Labelled::digests).collect(),
        }
    }

    /// The page of `grid`; `provenance` makes the page's provenance of the digests.
    pub fn page(
        self,
        grid: Grid,
        provenance: impl FnOnce(Vec<(String, String)>) -> Provenance,
    ) -> GridPage {
        GridPage {
            grid,
            checks: self.checks,
            systems: self.systems,
            provenance: provenance(self.digests),
        }
    }
}
