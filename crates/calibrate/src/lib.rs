//! Reviewer calibration: plant bugs, run the reviewer, restore, parse findings, score recall.
