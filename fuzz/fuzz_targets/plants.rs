#![no_main]
//! Fuzzes revcal's plants input: see `revcal_fuzz_targets::plants`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| revcal_fuzz_targets::plants(data));
