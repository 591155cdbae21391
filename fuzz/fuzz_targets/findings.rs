#![no_main]
//! Fuzzes revcal's findings input: see `revcal_fuzz_targets::findings`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| revcal_fuzz_targets::findings(data));
