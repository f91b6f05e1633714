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

/// The text of this crate's readers and makers, which the version of every bench that
/// reads its data through them covers (`mlbench run`'s entries): a change to how a file
/// is decoded or transformed is a change to the bench.
pub const SOURCE: &str = concat!(
    include_str!("lib.rs"),
    include_str!("error.rs"),
    include_str!("make.rs"),
    include_str!("manifest.rs"),
    include_str!("mnist.rs"),
    include_str!("movielens.rs"),
    include_str!("sets.rs"),
    include_str!("sine.rs"),
    include_str!("wikitext.rs"),
    include_str!("wmt.rs"),
    include_str!("images/mod.rs"),
    include_str!("images/batch.rs"),
    include_str!("images/bsds500.rs"),
    include_str!("images/coco.rs"),
    include_str!("images/color.rs"),
    include_str!("images/fake_imagenet.rs"),
    include_str!("images/folder.rs"),
    include_str!("images/jpeg.rs"),
    include_str!("images/keyed.rs"),
    include_str!("images/resample.rs"),
    include_str!("images/ssd.rs"),
    include_str!("images/transforms.rs"),
);

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
