#![no_main]
//! Fuzzes checkouts of crafted commits: see `revcal_fuzz_targets::checkout`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| revcal_fuzz_targets::checkout(data));
