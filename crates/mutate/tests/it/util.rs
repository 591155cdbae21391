//! Helpers shared by the test modules.

use std::path::{Path, PathBuf};

/// A directory under `tests/fixtures/`, found from the crate's manifest directory so the
/// tests work from any working directory.
pub(crate) fn fixtures(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(dir)
}
