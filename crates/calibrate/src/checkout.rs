//! A commit's checkout written into a directory of yours, exactly as a review's: the tree
//! checked (a name held twice, entries out of order, a path nested too deep, files past the
//! limits are refused), every file written through directory handles without following a
//! link, and the commit under review in its `.git`. For tools that want revcal's checkout of
//! an untrusted commit, and for the fuzz target that proves nothing lands outside it.

use crate::error::CalibrateError;
use crate::review_commit::ReviewCommits;
use crate::slots::{Round, Slot};
use crate::tree::CheckoutLimits;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Writes the checkout of `rev` (a commit of the repository at `repo`) beneath the existing
/// directory `dir`: the files in `dir/slot-1/tree` (returned), the objects every checkout
/// shares in `dir/store/objects`. Nothing is written anywhere else; the repository is only read.
/// Writing it again over what is there removes whatever is not the commit's, as before each
/// review.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let repo = dir.path().join("repo");
/// # std::fs::create_dir_all(&repo)?;
/// # std::fs::write(repo.join("a.txt"), "a\n")?;
/// # for args in [&["init", "-q"][..], &["add", "."], &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "a"]] {
/// #     assert!(std::process::Command::new("git").args(args).current_dir(&repo).status()?.success());
/// # }
/// let into = dir.path().join("checkout");
/// std::fs::create_dir_all(&into)?;
/// let tree = revcal_calibrate::write_checkout(&repo, "HEAD", &into, revcal_calibrate::CheckoutLimits::default())?;
/// assert_eq!(std::fs::read_to_string(tree.join("a.txt"))?, "a\n");
/// # Ok(())
/// # }
/// ```
pub fn write_checkout(
    repo: &Path,
    rev: &str,
    dir: &Path,
    limits: CheckoutLimits,
) -> Result<PathBuf, CalibrateError> {
    let repository = crate::targets::Repository::discover(repo)?;
    let commit = repository.commit(rev)?;
    let tree = repository.commit_tree(&commit)?.with_limits(limits);
    let id = gix::ObjectId::from_hex(commit.id.as_bytes())
        .map_err(|e| CalibrateError::git("read the commit's id", e))?;
    let commits = ReviewCommits::new(
        repository.gix(),
        id,
        commit.tree,
        BTreeSet::new(),
        (&dir.join("store").join("objects"), false),
        limits.max_file_bytes,
    )?;
    let round = Round { files: BTreeMap::new(), git: commits.round(&BTreeMap::new())? };
    let mut slot = Slot::new(dir, 1);
    slot.prepare(&tree, &round)?;
    Ok(slot.tree())
}
