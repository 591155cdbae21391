//! Runnable examples of the revcal crates; see `examples/README.md`.
//!
//! This package holds no library code of its own: run an example with
//! `cargo run -p revcal-examples --example <name>`.
