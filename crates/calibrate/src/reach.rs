//! What the reviewer's commands (the reviewer, and the repro commands it prints) get of
//! revcal's environment (docs/calibration.md#against-a-hostile-reviewer): no variable revcal
//! reads a provider, a judge, a ledger or the authority's key from, no path to the user's
//! repository, and build and cache directories of their own, whatever revcal's environment
//! holds. The user passes a withheld variable on by name (`--reviewer-env NAME`). The user's
//! own build and witness commands, and a `--judge-cmd` judge, keep the user's environment.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Every variable revcal reads a provider's key or address, a judge's choice, a ledger or
/// the calibrating authority's key from: the reviewer and its repro commands never get them,
/// unless the user passes one on by name. `REVCAL_TEST_POSTGRES` is the test suite's
/// PostgreSQL server (a URL with its password).
pub const WITHHELD_VARIABLES: [&str; 13] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_BASE_URL",
    "REVCAL_JUDGE_PROVIDER",
    "REVCAL_JUDGE_MODEL",
    "REVCAL_LEDGER",
    "REVCAL_LEDGER_URL",
    "REVCAL_AUTHORITY_KEY",
    "REVCAL_TEST_POSTGRES",
];

/// Build output whose tools judge it fresh by a source file's modification time in whole
/// seconds and its size (Python's byte code, mypy's cache; ruff's too, to be safe), by
/// variable, as directories beneath one the command gets **empty**: a planted file rewritten
/// within the same second at the same size (`a + b` becoming `a - b`) would otherwise read as
/// unchanged, and the output of the unplanted file be used. Every command run in a checkout
/// or a scratch copy gets its own, whatever the user's environment says.
pub(crate) const FRESH_OUTPUT_DIRECTORIES: [(&str, &str); 3] =
    [("PYTHONPYCACHEPREFIX", "pycache"), ("MYPY_CACHE_DIR", "mypy"), ("RUFF_CACHE_DIR", "ruff")];

/// Caches keyed by content, which the reviewer's commands get of their own and keep from
/// review to review (each slot's, the repro copy's), by variable. The user's build and witness
/// commands use the user's, as the user's own builds do.
pub(crate) const REVIEWER_CACHE_DIRECTORIES: [(&str, &str); 2] =
    [("GOCACHE", "go-build"), ("npm_config_cache", "npm")];

/// Other spellings of [`REVIEWER_CACHE_DIRECTORIES`]' variables that their tools read too
/// (npm reads its configuration from the environment whatever the case): withheld, so that
/// the one set is the one used.
const OTHER_SPELLINGS: [&str; 1] = ["NPM_CONFIG_CACHE"];

/// Variables whose value may name the repository and that a reviewer still gets: the
/// programs it runs may live in it (a virtual environment's `bin/` on `PATH`), and `HOME` is
/// where its own configuration lives.
const KEPT_ALWAYS: [&str; 2] = ["PATH", "HOME"];

/// The variables of revcal's environment the reviewer's commands do not get.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reach {
    withheld: Vec<String>,
}

impl Reach {
    /// What is withheld in this process's environment: [`WITHHELD_VARIABLES`], `OLDPWD`,
    /// every other variable whose value names one of `repository`'s paths (the path or one
    /// beneath it, alone or in a `:`-separated list; `PATH` and `HOME` aside) and the other
    /// spellings of the cache variables; less the names in `passed_on`.
    pub(crate) fn new(passed_on: &[String], repository: &[&Path]) -> Reach {
        let mut roots: Vec<PathBuf> = Vec::new();
        for path in repository {
            if path.is_absolute() {
                roots.push(path.to_path_buf());
            }
            if let Ok(canonical) = path.canonicalize() {
                roots.push(canonical);
            }
        }
        // A repository at the root would make every path name it.
        roots.retain(|root| root.parent().is_some());
        let mut withheld: Vec<String> = WITHHELD_VARIABLES.iter().map(|name| (*name).to_owned()).collect();
        withheld.extend(OTHER_SPELLINGS.iter().map(|name| (*name).to_owned()));
        // Where revcal's shell was before its last `cd`: the repository, as often as not.
        withheld.push("OLDPWD".to_owned());
        for (name, value) in std::env::vars_os() {
            let Some(name) = name.to_str() else { continue };
            if !KEPT_ALWAYS.contains(&name) && names_one_of(&value, &roots) {
                withheld.push(name.to_owned());
            }
        }
        withheld.retain(|name| !passed_on.contains(name));
        withheld.sort();
        withheld.dedup();
        tracing::debug!(?withheld, "variables the reviewer's commands do not get");
        Reach { withheld }
    }

    /// The names withheld.
    pub(crate) fn withheld(&self) -> &[String] {
        &self.withheld
    }
}

/// True when `value`, or one of its `:`-separated parts, is an absolute path at or beneath
/// one of `roots` (as written, or once symbolic links are resolved).
fn names_one_of(value: &OsStr, roots: &[PathBuf]) -> bool {
    value.as_bytes().split(|byte| *byte == b':').any(|part| {
        let path = Path::new(OsStr::from_bytes(part));
        path.is_absolute() && {
            let canonical = path.canonicalize().ok();
            roots
                .iter()
                .any(|root| path.starts_with(root) || canonical.as_ref().is_some_and(|c| c.starts_with(root)))
        }
    })
}

/// The environment of [`FRESH_OUTPUT_DIRECTORIES`] beneath `dir`, which the caller empties
/// before each command (or review) runs.
pub(crate) fn fresh_output_env(dir: &Path) -> Vec<(&'static str, String)> {
    directories(&FRESH_OUTPUT_DIRECTORIES, dir)
}

/// The environment of [`REVIEWER_CACHE_DIRECTORIES`] beneath `dir`, kept from command to
/// command.
pub(crate) fn reviewer_cache_env(dir: &Path) -> Vec<(&'static str, String)> {
    directories(&REVIEWER_CACHE_DIRECTORIES, dir)
}

fn directories(list: &[(&'static str, &str)], dir: &Path) -> Vec<(&'static str, String)> {
    list.iter().map(|(name, sub)| (*name, dir.join(sub).display().to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_names_the_repository_when_it_or_a_listed_part_is_at_or_beneath_it() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".venv")).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&repo, &link).unwrap();
        let roots = [repo.clone()];
        let names = |value: &Path| names_one_of(value.as_os_str(), &roots);
        assert!(names(&repo));
        assert!(names(&repo.join(".venv")));
        assert!(names(&link.join(".venv")), "through a link");
        assert!(names(Path::new(&format!("/usr/lib:{}", repo.join("src").display()))));
        assert!(!names(dir.path()), "its parent is not it");
        assert!(!names(Path::new(&format!("{}-other", repo.display()))), "nor a sibling sharing its name");
        assert!(!names(Path::new("repo/src")), "a relative path names nothing");
    }
}
