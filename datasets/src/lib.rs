//! The data sets the suite's scripts read, in the layouts they read them: seeded synthetic
//! makers (`mlbench data prepare`) and the readers `mlbench run` uses, so that both
//! runtimes can read the same bytes. No libtorch here: readers give plain buffers.

pub mod error;
mod make;
pub mod manifest;
pub mod mnist;
pub mod movielens;
pub mod sets;
pub mod sine;
pub mod wikitext;
pub mod wmt;

pub use error::DataError;

/// How big a made data set is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scale {
    /// The size the suite's own maker (or the real data set) has.
    #[default]
    Full,
    /// A few items of each kind, in the same layout: for tests, CI and `run --smoke`.
    Smoke,
}

pub mod images;
