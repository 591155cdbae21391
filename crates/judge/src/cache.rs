//! The verdict cache (docs/judge.md#the-cache): one small JSON file per verdict, named by a
//! SHA-256 of the provider, base URL, model and the full prompt, so a rerun asks nothing
//! again and repeats exactly, and a different judge never reuses another judge's verdicts.
//! Only verdicts are stored, never errors.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Verdicts on disk.
#[derive(Debug, Clone)]
pub struct VerdictCache {
    dir: PathBuf,
}

impl VerdictCache {
    /// A cache in `dir` (created on the first store).
    pub fn new(dir: impl Into<PathBuf>) -> VerdictCache {
        VerdictCache { dir: dir.into() }
    }

    /// The user's cache directory for verdicts: `$XDG_CACHE_HOME/revcal/judge`, else
    /// `~/Library/Caches/revcal/judge` on macOS and `~/.cache/revcal/judge` elsewhere; `None`
    /// when neither variable is set.
    pub fn default_dir() -> Option<PathBuf> {
        let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let base = env("XDG_CACHE_HOME").or_else(|| {
            env("HOME").map(|home| {
                if cfg!(target_os = "macos") { home.join("Library/Caches") } else { home.join(".cache") }
            })
        })?;
        Some(base.join("revcal").join("judge"))
    }

    /// Where the verdicts are.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of a question: each part length-prefixed, so no two different questions hash
    /// the same text.
    pub(crate) fn key(parts: &[&str]) -> String {
        let mut hasher = Sha256::new();
        for part in parts {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2.min(key.len())]).join(format!("{key}.json"))
    }

    /// The stored answer for `key`; an unreadable or damaged entry is a miss.
    pub(crate) fn get(&self, key: &str) -> Option<Value> {
        let path = self.path(key);
        let bytes = std::fs::read(&path).ok()?;
        match serde_json::from_slice(&bytes) {
            Ok(entry) => Some(entry),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "damaged judge cache entry ignored");
                None
            }
        }
    }

    /// Stores an answer as `redact` leaves its text (written to a temporary file and renamed,
    /// so a reader never sees half an entry). A failure is logged, not returned: the verdict
    /// itself is sound.
    pub(crate) fn put(&self, key: &str, entry: &Value, redact: impl Fn(&str) -> std::borrow::Cow<'_, str>) {
        let path = self.path(key);
        let stored = (|| -> std::io::Result<()> {
            let dir = path.parent().unwrap_or(&self.dir);
            std::fs::create_dir_all(dir)?;
            let mut file = tempfile::NamedTempFile::new_in(dir)?;
            // A verdict's reason comes from the server: no secret is stored with it.
            let text = serde_json::to_string(entry).map_err(std::io::Error::other)?;
            std::io::Write::write_all(&mut file, redact(&text).as_bytes())?;
            file.persist(&path).map_err(|e| e.error)?;
            Ok(())
        })();
        if let Err(error) = stored {
            tracing::warn!(path = %path.display(), %error, "could not store a judge verdict in the cache");
        }
    }
}
