//! End-to-end tests of the `mlbench` binary: exit codes, messages, output formats.

mod archive;
mod batch_size;
mod contract;
mod data;
mod energy_fixture;
mod exit_codes;
mod fixtures;
mod fleet;
mod grid;
mod history;
mod hostile;
mod html;
mod layouts;
mod mixed_runtimes;
mod organizer;
mod pack;
mod plot;
mod precision;
mod report;
mod rounds;
#[cfg(feature = "runner")]
mod run;
mod self_contained;
mod site;
mod smaller;
mod surface;
mod system;
mod targets;
mod validate;
mod vendors;
