//! The rounds of a store, published: their history ([`store_history`]), a static site of
//! every round's grid, every submission's report and the history, with the zips
//! themselves and a `SHA256SUMS` ([`publish`]), and the check that a site is exactly what
//! its zips say ([`verify`]). The layouts are in docs/archive.md.

mod build;
mod error;
mod files;
mod history;
pub mod index;
mod pages;
mod publish;
mod sums;
mod verify;

pub use error::SiteError;
pub use history::{StoreHistory, store_history};
pub use index::{SiteEntry, SiteIndex, SiteOptions};
pub use publish::{Published, publish};
pub use verify::{Difference, verify};
