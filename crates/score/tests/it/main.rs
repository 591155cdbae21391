//! revcal-score through its public API: one test binary, one module per area.

mod focus;
mod properties;
mod scoring;
