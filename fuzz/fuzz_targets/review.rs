#![no_main]
//! Fuzzes revcal's review input: see `revcal_fuzz_targets::review`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| revcal_fuzz_targets::review(data));
