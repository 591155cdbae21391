//! `--in-diff REV`: the lines of each file that differ from its content at a git revision.
//! gix reads the file as it was at REV; it is diffed line by line against the working copy
//! (`line_diff`), so committed and uncommitted changes both count.

use anyhow::{Context, Result};
use revcal_mutate::Language;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// For each displayed path, the 1-based line numbers of the working copy that are new or
/// changed since `rev`. A file that did not exist at `rev` is changed on every line.
pub(crate) fn changed_lines(
    rev: &str,
    files: &[(String, Language)],
) -> Result<BTreeMap<String, BTreeSet<usize>>> {
    let mut changed = BTreeMap::new();
    let Some((first, _)) = files.first() else { return Ok(changed) };
    let start = Path::new(first).parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let repo =
        gix::discover(start).with_context(|| format!("{}: not inside a git repository", start.display()))?;
    let workdir = repo.workdir().context("the repository has no working tree")?;
    let workdir = workdir.canonicalize().with_context(|| format!("cannot resolve {}", workdir.display()))?;
    let tree = repo
        .rev_parse_single(rev)
        .map_err(|error| anyhow::anyhow!("`{rev}` is not a revision of this repository: {error}"))?
        .object()?
        .peel_to_tree()
        .with_context(|| format!("`{rev}` does not name a commit or tree"))?;
    for (file, _) in files {
        let absolute = Path::new(file).canonicalize().with_context(|| format!("cannot resolve {file}"))?;
        let Ok(relative) = absolute.strip_prefix(&workdir) else {
            continue; // outside the repository: nothing to compare with
        };
        let current = std::fs::read_to_string(&absolute).with_context(|| format!("cannot read {file}"))?;
        let before = match tree.lookup_entry_by_path(relative)? {
            Some(entry) => {
                let object = entry.object()?;
                String::from_utf8_lossy(&object.data).into_owned()
            }
            None => String::new(),
        };
        changed.insert(file.clone(), super::line_diff::new_lines(&before, &current));
    }
    Ok(changed)
}
