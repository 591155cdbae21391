//! Reviewer calibration: plant bugs, run the reviewer, restore, parse findings, score recall.

pub mod findings;
pub mod judge;
pub mod report;
