#![no_main]
//! Fuzzes the shard result reader and `calibrate merge`: see `revcal_fuzz_targets::shards`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| revcal_fuzz_targets::shards(data));
