//! The rules.

pub mod catalog;

pub use catalog::{RULES, Rule, pattern_matches, pattern_matches_any, rule};
