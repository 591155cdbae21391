//! The tests of revcal-report, through its public API: one test binary.

// The reports the tests render, shared with revcal-calibrate's report tests.
#[path = "../../../calibrate/tests/it/fixtures.rs"]
mod fixtures;
mod render;
