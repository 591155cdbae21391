//! revcal-score through its public API: one test binary, one module per area.

mod properties;
mod scoring;
