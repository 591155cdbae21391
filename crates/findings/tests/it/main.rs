//! The integration tests of revcal-findings, through its public API only: one test binary,
//! one module per area.

mod findings;
mod findings_never_panics;
mod linters;
mod pathological;
mod util;
