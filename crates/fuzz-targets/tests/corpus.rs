//! Every committed seed in `fuzz/seeds/<target>/` (the inputs that found bugs and the
//! fuzzer's edge-covering set, see `cargo xtask fuzz --seeds`) goes through its target again,
//! on the stable toolchain, in an ordinary `cargo test`.

use std::path::PathBuf;

fn corpus(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds").join(target)
}

#[test]
fn every_corpus_file_replays_through_its_target() {
    for (name, target) in revcal_fuzz_targets::TARGETS {
        let dir = corpus(name);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
            .map(|entry| entry.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{}: no seeds", dir.display());
        for file in files {
            let data = std::fs::read(&file).unwrap();
            if let Err(panic) = std::panic::catch_unwind(|| target(&data)) {
                let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
                panic!("{name}: {} fails: {message}", file.display());
            }
        }
    }
}
