//! The `revcal` and `review-calibration` binaries run as a user runs them: one test binary,
//! one module per command.

mod assets;
mod calibrate_cli;
mod demo_cli;
mod elo_cli;
mod exit_codes;
mod mutate_cli;
mod rubric_cli;
mod score_cli;
