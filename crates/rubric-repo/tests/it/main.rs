//! revcal-rubric-repo through its public API: one test binary, one module per area,
//! shared rubric texts and helpers in `util`.

mod bad_input;
mod library;
mod never_panics;
mod rules;
mod util;
