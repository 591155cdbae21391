//! The bundled demo project (`assets/demo/` of this crate, a copy of the repository's
//! `examples/demo/`, compiled into the binary) and the temporary
//! git repositories it is copied into.

use anyhow::{Context, bail};
use std::path::{Path, PathBuf};

/// The project's files, relative path and content.
const FILES: [(&str, &str); 4] = [
    ("Cargo.toml", include_str!("../../assets/demo/Cargo.toml.in")),
    ("Cargo.lock", include_str!("../../assets/demo/Cargo.lock")),
    ("src/lib.rs", include_str!("../../assets/demo/src/lib.rs")),
    ("tests/witness.rs", include_str!("../../assets/demo/tests/witness.rs")),
];

/// The plants, with `{target}` standing for the cargo target directory.
const PLANTS: &str = include_str!("../../assets/demo/plants.yaml");

/// How `src/lib.rs` read before the commit under review: the commit changed coupon codes
/// from 6 to 8 characters and made `pages` round up.
const BEFORE_THE_COMMIT: [(&str, &str); 3] = [
    ("A coupon code is 8 characters", "A coupon code is 6 characters"),
    ("code.len() == 8", "code.len() == 6"),
    ("(items + per_page - 1) / per_page", "items / per_page"),
];

/// One cargo target directory for every demo run, so that builds after the first are
/// incremental.
pub(crate) fn shared_target_dir() -> PathBuf {
    std::env::temp_dir().join("revcal-demo-target")
}

/// Writes the plants file to `path` with the target directory filled in.
pub(crate) fn write_plants_file(path: &Path, target: &Path) -> anyhow::Result<PathBuf> {
    let path = path.to_path_buf();
    let target = target.display().to_string();
    if target.contains('\'') {
        bail!("the temporary directory {target} contains a quote; set TMPDIR to a plainer path");
    }
    std::fs::write(&path, PLANTS.replace("{target}", &target))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// A git repository at `repo` with two commits: the project as it was, then the commit under
/// review.
pub(crate) fn create_repository(repo: &Path) -> anyhow::Result<()> {
    for (relative, content) in FILES {
        let path = repo.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        let content = if relative == "src/lib.rs" {
            BEFORE_THE_COMMIT.iter().fold(content.to_owned(), |text, (now, before)| text.replace(now, before))
        } else {
            content.to_owned()
        };
        std::fs::write(&path, content).with_context(|| format!("cannot write {}", path.display()))?;
    }
    git(repo, &["init", "-q"])?;
    git(repo, &["add", "."])?;
    git(repo, &["commit", "-q", "-m", "A tiny shop"])?;
    let lib = repo.join("src/lib.rs");
    let content = FILES.iter().find(|(name, _)| *name == "src/lib.rs").map(|(_, text)| *text).unwrap_or("");
    std::fs::write(&lib, content).with_context(|| format!("cannot write {}", lib.display()))?;
    git(repo, &["commit", "-q", "-a", "-m", "Coupons have 8 characters; pages round up"])?;
    Ok(())
}

/// The settings every demo git command runs with, independent of the user's git
/// configuration (identity, signing, hooks, the default branch).
const GIT_SETTINGS: [&str; 10] = [
    "-c",
    "user.name=revcal demo",
    "-c",
    "user.email=demo@revcal.invalid",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "init.defaultBranch=main",
];

/// Runs `git ARGS` in `repo` through revcal's one git runner, with [`GIT_SETTINGS`].
fn git(repo: &Path, args: &[&str]) -> anyhow::Result<()> {
    let all: Vec<&str> = GIT_SETTINGS.iter().chain(args).copied().collect();
    revcal_process::git(repo, &all)?;
    Ok(())
}
