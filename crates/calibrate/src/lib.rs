//! Reviewer calibration: plant bugs, run the reviewer, restore, parse findings, score recall.

mod assemble;
pub mod controls;
pub mod error;
pub mod findings;
pub mod flow;
pub mod guard;
mod identify;
pub mod judge;
pub mod plants;
pub mod process;
pub mod report;
pub mod reviewer;
pub mod scoring;
pub mod scratch;
mod selection;
pub mod signals;
pub mod targets;

pub use error::CalibrateError;
pub use flow::{Calibration, Progress, recover};
pub use scoring::ScorerKind;
