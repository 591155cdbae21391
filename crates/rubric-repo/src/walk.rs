//! Finding rubric files under the paths a user names.

use crate::error::RepoError;
use std::fs;
use std::path::{Path, PathBuf};

/// File names skipped during a directory walk: the published schema is JSON but not a rubric.
const SKIPPED_NAMES: [&str; 1] = ["schema.json"];

/// True for the extensions a directory walk picks up.
pub fn is_rubric_file(path: &Path) -> bool {
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    matches!(extension.as_deref(), Some("yaml" | "yml" | "json")) && !SKIPPED_NAMES.contains(&name)
}

/// Expands `paths` into rubric files: a file is taken as it is, a directory is walked
/// recursively for `*.yaml`, `*.yml` and `*.json` (skipping `schema.json`, hidden entries
/// and symbolic links to directories). The result is sorted and free of repeats.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, RepoError> {
    let mut files = Vec::new();
    for path in paths {
        let metadata = fs::metadata(path).map_err(|_| RepoError::NotFound { path: path.clone() })?;
        if metadata.is_dir() {
            walk(path, &mut files)?;
        } else {
            files.push(path.clone());
        }
    }
    files.sort();
    files.dedup();
    // `rubrics/a.yaml` and `./rubrics/a.yaml` are one file: check it once, or it would
    // clash with itself as a duplicate rubric_id.
    let mut seen = std::collections::HashSet::new();
    files.retain(|file| seen.insert(fs::canonicalize(file).unwrap_or_else(|_| file.clone())));
    Ok(files)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), RepoError> {
    let io = |cause| RepoError::Io { path: dir.to_path_buf(), cause };
    let mut entries: Vec<fs::DirEntry> =
        fs::read_dir(dir).map_err(io)?.collect::<Result<_, _>>().map_err(io)?;
    entries.sort_by_key(fs::DirEntry::file_name);
    for entry in entries {
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            walk(&path, files)?;
        } else if is_rubric_file(&path) && !(kind.is_symlink() && path.is_dir()) {
            // Files (and links to files, even dangling ones, so that they are reported).
            files.push(path);
        }
    }
    Ok(())
}
