#![no_main]
//! Fuzzes revcal's message input: see `revcal_fuzz_targets::message`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| revcal_fuzz_targets::message(data));
