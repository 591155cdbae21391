//! Reading the files and streams a user names, each within a size limit: nothing is read
//! past the limit (so `/dev/zero` costs at most the limit), and the error names the input
//! and the limit.

use anyhow::Context;
use std::io::Read;
use std::path::Path;

/// The bytes of `path`, or of standard input for `-`, refusing more than `limit` bytes.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    if path == Path::new("-") {
        std::io::stdin()
            .lock()
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .context("cannot read standard input")?;
    } else {
        std::fs::File::open(path)
            .and_then(|file| file.take(limit + 1).read_to_end(&mut bytes))
            .with_context(|| format!("cannot read {}", path.display()))?;
    }
    if bytes.len() as u64 > limit {
        anyhow::bail!("{}: larger than the limit of {}", shown(path), size_text(limit));
    }
    Ok(bytes)
}

/// The UTF-8 text of `path` (or standard input for `-`), at most `limit` bytes.
pub(crate) fn read_text(path: &Path, limit: u64) -> anyhow::Result<String> {
    String::from_utf8(read_bounded(path, limit)?).map_err(|error| {
        anyhow::anyhow!("{}: not UTF-8 text (byte {})", shown(path), error.utf8_error().valid_up_to())
    })
}

/// `512 MiB`, `1 MiB`, `64 KiB`.
pub(crate) fn size_text(bytes: u64) -> String {
    if bytes >= 1 << 20 { format!("{} MiB", bytes >> 20) } else { format!("{} KiB", bytes >> 10) }
}

fn shown(path: &Path) -> String {
    if path == Path::new("-") { "<stdin>".to_owned() } else { path.display().to_string() }
}
