//! The tests of revcal-report, through its public API: one test binary.

mod fixtures;
mod model;
mod render;
