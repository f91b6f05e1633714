//! End-to-end tests of the `mlbench` binary: exit codes, messages, output formats.

mod fixtures;
mod html;
mod pack;
mod report;
mod validate;
