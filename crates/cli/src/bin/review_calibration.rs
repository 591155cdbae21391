//! `review-calibration`: the command name of the tool `revcal calibrate` replaces. Same
//! flags, same code, same exit codes (both binaries call the crate's library).

fn main() -> std::process::ExitCode {
    revcal_cli::allocator::install();
    revcal_cli::review_calibration(std::env::args_os())
}
