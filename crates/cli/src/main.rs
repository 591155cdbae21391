//! `revcal`: how good is this code reviewer, and can we prove it?
//!
//! The command line lives in the crate's library, shared with `review-calibration`.

fn main() -> std::process::ExitCode {
    revcal_cli::allocator::install();
    revcal_cli::revcal(std::env::args_os())
}
