//! The rules: per entry ([`entry`]), coverage, versions, losses, the jobs file against
//! the baselines, and the pack manifest.

pub mod catalog;
pub mod coverage;
pub mod entry;
pub mod fleet;
pub mod jobs;
pub mod loss;
pub mod manifest;
pub mod versions;

pub use catalog::{RULES, Rule, pattern_matches, pattern_matches_any, rule};
