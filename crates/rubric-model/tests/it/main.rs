//! revcal-rubric-model through its public API: one test binary, one module per area.

mod model;
