#![no_main]
//! Fuzzes revcal's mutate input: see `revcal_fuzz_targets::mutate`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| revcal_fuzz_targets::mutate(data));
