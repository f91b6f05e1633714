//! The crate's integration tests, in one binary: the sampler end to end, and the vendor
//! sources against stand-in libraries built by the C compiler.

mod amdsmi;
mod fake;
mod nvml;
mod sampler;
