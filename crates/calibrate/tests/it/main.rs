//! The integration tests of revcal-calibrate, through its public API only: one test binary,
//! one module per area.

mod bugs;
mod bugs_runs;
mod crafted;
mod flow;
mod honest;
mod judged;
mod kept;
mod util;
