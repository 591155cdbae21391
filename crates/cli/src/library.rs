//! Which rubric library a command reads: a directory the user names, or the library
//! built into this binary.

use crate::args::LibraryArgs;
use anyhow::{Context, Result};
use revcal_rubric_repo::Repository;
use std::fmt;
use std::path::{Path, PathBuf};

/// The shipped rubrics, compiled in so that `revcal` works from any directory (`assets/rubrics/`
/// of this crate, a copy of the repository's `rubrics/`).
const BUILT_IN: [(&str, &str); 4] = [
    ("code_review_v1.yaml", include_str!("../assets/rubrics/code_review_v1.yaml")),
    ("prd_quality_v1.yaml", include_str!("../assets/rubrics/prd_quality_v1.yaml")),
    ("test_plan_quality_v1.yaml", include_str!("../assets/rubrics/test_plan_quality_v1.yaml")),
    ("user_story_quality_v1.yaml", include_str!("../assets/rubrics/user_story_quality_v1.yaml")),
];

/// Environment variable naming the default rubric directory.
pub(crate) const RUBRICS_ENV: &str = "REVCAL_RUBRICS";

/// Where a library was loaded from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// A directory on disk.
    Directory(PathBuf),
    /// The rubrics compiled into this binary.
    BuiltIn,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Directory(dir) => write!(f, "{}", dir.display()),
            Source::BuiltIn => f.write_str("the built-in library"),
        }
    }
}

/// Picks the library: `--rubrics DIR`, else `$REVCAL_RUBRICS`, else `./rubrics` when it
/// is a directory, else the built-in library.
pub(crate) fn resolve(args: &LibraryArgs) -> Source {
    if let Some(dir) = &args.rubrics {
        return Source::Directory(dir.clone());
    }
    if let Some(dir) = std::env::var_os(RUBRICS_ENV).filter(|v| !v.is_empty()) {
        return Source::Directory(PathBuf::from(dir));
    }
    let local = Path::new("rubrics");
    if local.is_dir() { Source::Directory(local.to_path_buf()) } else { Source::BuiltIn }
}

/// Loads the library the arguments select.
pub(crate) fn load(args: &LibraryArgs) -> Result<(Repository, Source)> {
    let source = resolve(args);
    let repository = match &source {
        Source::Directory(dir) => {
            if !dir.is_dir() {
                anyhow::bail!("rubric directory `{}` does not exist or is not a directory", dir.display());
            }
            Repository::load(dir).with_context(|| format!("cannot load rubrics from `{}`", dir.display()))?
        }
        Source::BuiltIn => {
            let sources: Vec<(PathBuf, &str)> =
                BUILT_IN.iter().map(|(name, text)| (Path::new("rubrics").join(name), *text)).collect();
            Repository::from_sources(&sources).context("the built-in rubric library is invalid")?
        }
    };
    tracing::debug!(%source, rubrics = repository.len(), "rubric library selected");
    Ok((repository, source))
}
