//! A store of benchmark rounds (`mlbench archive`): each submission kept as its packed
//! zip under the SHA-256 of its bytes, never rewritten, and an SQLite index of what it
//! is (round, label, track, hardware, runtime, validation verdict, the tool, the dates
//! received, released and removed). The layout is in docs/archive.md.

pub mod date;
pub mod error;
pub mod select;
pub mod store;

pub use error::ArchiveError;
pub use select::{Released, Tampered};
pub use store::{Added, Entry, NewEntry, Problem, Store};
