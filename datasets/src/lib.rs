//! The data sets the suite's scripts read, in the layouts they read them: seeded synthetic
//! makers (`mlbench data prepare`) and the readers `mlbench run` uses, so that both
//! runtimes can read the same bytes. No libtorch here: readers give plain buffers.

pub mod error;

pub use error::DataError;
