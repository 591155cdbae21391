//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

/// The findings fixtures, one per format (see fixtures/findings/README.md).
pub(crate) fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/findings")
}
