#![no_main]
//! Fuzzes revcal's rubric input: see `revcal_fuzz_targets::rubric`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| revcal_fuzz_targets::rubric(data));
