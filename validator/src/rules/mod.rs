//! The rules: per entry ([`entry`]), coverage, versions, losses, the jobs file against
//! the baselines, the pack manifest, the runtimes that wrote the entries, and the
//! telemetry files beside them.

pub mod catalog;
pub mod coverage;
pub mod entry;
pub mod fleet;
pub mod jobs;
pub mod loss;
pub mod loss_view;
pub mod manifest;
pub mod runtime;
pub mod stopping;
pub mod telemetry;
pub mod versions;

pub use catalog::{RULES, catalogue, pattern_matches, pattern_matches_any, rule};

/// A map keyed per entry by the cross-file rules (tens of thousands of keys on a large
/// submission), with the schema's word-at-a-time hasher: SipHash's resistance to chosen
/// keys buys nothing where the keys are a submission's own curves and names (a chosen
/// curve hash already lands in one bucket list).
pub(crate) type EntryMap<K, V> = std::collections::HashMap<
    K,
    V,
    std::hash::BuildHasherDefault<mlbench_schema::entry::KeyHasher>,
>;

/// A set of such keys.
pub(crate) type EntrySet<K> =
    std::collections::HashSet<K, std::hash::BuildHasherDefault<mlbench_schema::entry::KeyHasher>>;
