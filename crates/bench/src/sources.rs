//! What the benchmark is made from: `repos/<name>.yaml` (a repository, the commit its bugs'
//! patches apply to, how to set up its environment and run its tests) and `bugs/<name>.yaml`
//! (the bugs `revcal bugs mine` wrote for it, curated), in the benchmark's directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use revcal_calibrate::bugs::{Bug, hunks, read_bugs_file};
use revcal_calibrate::input;
use serde::{Deserialize, Serialize};

use crate::BenchError;

/// The languages a repository of the benchmark may be written in.
pub const LANGUAGES: [&str; 6] = ["python", "javascript", "typescript", "go", "rust", "java"];

/// The largest repository file read.
const MAX_REPOSITORY_FILE_BYTES: u64 = 64 << 10;

/// One repository of the benchmark: `repos/<name>.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepositorySpec {
    /// Unique, lowercase: the file's name, the suite entry's and the environment directory's.
    pub name: String,
    /// Where it is cloned from.
    pub url: String,
    /// One of [`LANGUAGES`].
    pub language: String,
    /// The full id of the commit every bug's patch applies to.
    pub target: String,
    /// The command that fills the environment directory `$ENV`, run in a checkout of
    /// `target` (empty: nothing to set up).
    #[serde(default)]
    pub setup: String,
    /// The repository's test command; its witnesses are it narrowed to a test or two.
    pub test_cmd: String,
    /// The build check of its plants, when the default (`cargo check --all-targets` for a
    /// Rust crate) does not build at the target: a suite entry's `build_cmd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_cmd: Option<String>,
    /// How the bugs were mined (the command line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mined: Option<String>,
    /// What a maintainer re-mining it must know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// The benchmark's sources: its repositories, by name, and each one's bugs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sources {
    /// Every repository, sorted by name.
    pub repositories: Vec<RepositorySpec>,
    /// Each repository's bugs, as its bugs file lists them.
    pub bugs: BTreeMap<String, Vec<Bug>>,
}

/// Whether `text` is a full commit id: 40 lowercase hexadecimal digits.
pub fn is_full_commit(text: &str) -> bool {
    text.len() == 40 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Whether `name` is a repository name: lowercase letters, digits, `-`, `_` and `.`, not
/// starting with `.`.
fn is_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
}

/// The files a bug's patch changes, in the patch's order, each once.
pub fn patch_files(bug: &Bug) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for hunk in hunks(&bug.patch) {
        if !files.contains(&hunk.file) {
            files.push(hunk.file);
        }
    }
    if files.is_empty() {
        files.push(bug.file.clone());
    }
    files
}

/// The `*.yaml` files of `dir`, sorted; none when it does not exist.
fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>, BenchError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(BenchError::Read { path: dir.to_path_buf(), source }),
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| BenchError::Read { path: dir.to_path_buf(), source })?;
        let path = entry.path();
        if path.extension().is_some_and(|ext| ext == "yaml") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

impl Sources {
    /// Reads `repos/*.yaml` and `bugs/*.yaml` of the benchmark's directory `dir`, and checks
    /// them: every repository file names itself (`name` is its file's name) in lowercase, a
    /// known language, a full target commit and a test command; every repository has a bugs
    /// file and every bugs file a repository; every bug has a witness and a full fix commit,
    /// one bug per fix commit, none fixed by its repository's target. Each mistake names the file and the field.
    pub fn read(dir: &Path) -> Result<Sources, BenchError> {
        let mut repositories = Vec::new();
        for path in yaml_files(&dir.join("repos"))? {
            let at = |message: String| BenchError::File { path: path.clone(), message };
            let text = input::read_text(&path, MAX_REPOSITORY_FILE_BYTES).map_err(|error| match error {
                input::InputError::Io(source) => BenchError::Read { path: path.clone(), source },
                other => at(other.to_string()),
            })?;
            let spec: RepositorySpec = input::from_yaml(&text).map_err(at)?;
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            if !is_name(&spec.name) {
                return Err(at(format!(
                    "name: `{}` is not a repository name (lowercase letters, digits, -, _ and .)",
                    spec.name
                )));
            }
            if spec.name != stem {
                return Err(at(format!("name: `{}` is not the file's name (`{stem}`)", spec.name)));
            }
            if spec.url.trim().is_empty() {
                return Err(at("url: is empty".into()));
            }
            if !LANGUAGES.contains(&spec.language.as_str()) {
                return Err(at(format!(
                    "language: `{}` is not one of {}",
                    spec.language,
                    LANGUAGES.join(", ")
                )));
            }
            if !is_full_commit(&spec.target) {
                return Err(at(format!(
                    "target: `{}` is not a full commit id (40 lowercase hexadecimal digits)",
                    spec.target
                )));
            }
            if spec.test_cmd.trim().is_empty() {
                return Err(at("test_cmd: is empty".into()));
            }
            repositories.push(spec);
        }
        repositories.sort_by(|a, b| a.name.cmp(&b.name));

        let mut bugs = BTreeMap::new();
        for path in yaml_files(&dir.join("bugs"))? {
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
            let at = |message: String| BenchError::File { path: path.clone(), message };
            if !repositories.iter().any(|repo| repo.name == stem) {
                return Err(at(format!(
                    "no repository file repos/{stem}.yaml names this bugs file's repository"
                )));
            }
            let target = repositories.iter().find(|repo| repo.name == stem).map(|repo| repo.target.as_str());
            let list = read_bugs_file(&path).map_err(|error| at(error.to_string()))?;
            let mut fixes = std::collections::BTreeSet::new();
            for (number, bug) in (1..).zip(&list) {
                let field = |name: &str, message: String| {
                    at(format!("bug {number} ({}): {name}: {message}", bug.file))
                };
                if bug.witness.as_deref().is_none_or(|w| w.trim().is_empty()) {
                    return Err(field("witness", "is missing: every bug of the benchmark has one".into()));
                }
                if !is_full_commit(&bug.fix_commit) {
                    return Err(field("fix_commit", format!("`{}` is not a full commit id", bug.fix_commit)));
                }
                // The review shows the target's own change (base..target); a bug fixed by the
                // target itself, planted, undoes that change and leaves nothing to review.
                if Some(bug.fix_commit.as_str()) == target {
                    return Err(field(
                        "fix_commit",
                        format!(
                            "{} is the repository's target: planted, the bug undoes the change under review, so the diff shows nothing of it (drop the bug, or move the target past its fix)",
                            bug.fix_commit
                        ),
                    ));
                }
                if !fixes.insert(bug.fix_commit.clone()) {
                    return Err(field(
                        "fix_commit",
                        format!("{} is the fix of an earlier bug too", bug.fix_commit),
                    ));
                }
                if hunks(&bug.patch).is_empty() {
                    return Err(field("patch", "holds no hunk".into()));
                }
            }
            bugs.insert(stem, list);
        }
        if let Some(repo) = repositories.iter().find(|repo| !bugs.contains_key(&repo.name)) {
            return Err(BenchError::File {
                path: dir.join("repos").join(format!("{}.yaml", repo.name)),
                message: format!("its bugs file bugs/{}.yaml is missing", repo.name),
            });
        }
        Ok(Sources { repositories, bugs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TARGET: &str = "0123456789abcdef0123456789abcdef01234567";

    fn write(dir: &Path, path: &str, text: &str) {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn repo(name: &str, extra: &str) -> String {
        format!(
            "name: {name}\nurl: https://example.org/{name}.git\nlanguage: python\ntarget: {TARGET}\nsetup: ''\ntest_cmd: python3 -m pytest -q\n{extra}"
        )
    }

    fn bug(fix: &str) -> String {
        format!(
            "- file: src/a.py\n  line: 2\n  category: off-by-one\n  defect: It is off by one.\n  witness: python3 -m pytest -q tests/test_a.py\n  patch: |\n    --- a/src/a.py\n    +++ b/src/a.py\n    @@ -2 +2 @@\n    -    return n\n    +    return n - 1\n  fix_commit: {fix}\n  fix_subject: Fix it\n"
        )
    }

    #[test]
    fn repositories_and_their_bugs_are_read_sorted() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "repos/zeta.yaml", &repo("zeta", "notes: kept\n"));
        write(dir.path(), "repos/alpha.yaml", &repo("alpha", ""));
        write(dir.path(), "bugs/zeta.yaml", &bug(&"a".repeat(40)));
        write(dir.path(), "bugs/alpha.yaml", &format!("{}{}", bug(&"b".repeat(40)), bug(&"c".repeat(40))));
        let sources = Sources::read(dir.path()).unwrap();
        let names: Vec<&str> = sources.repositories.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["alpha", "zeta"]);
        assert_eq!(sources.bugs["alpha"].len(), 2);
        assert_eq!(sources.repositories[1].notes.as_deref(), Some("kept"));
        assert_eq!(patch_files(&sources.bugs["zeta"][0]), ["src/a.py"]);
    }

    #[test]
    fn each_mistake_names_the_file_and_the_field() {
        let cases: [(&str, &str, &str, &str); 9] = [
            ("repos/alpha.yaml", &repo("beta", ""), "", "name: `beta` is not the file's name"),
            ("repos/alpha.yaml", &repo("Alpha", ""), "", "is not a repository name"),
            ("repos/alpha.yaml", &repo("alpha", "").replace("python", "cobol"), "", "language: `cobol`"),
            (
                "repos/alpha.yaml",
                &repo("alpha", "").replace(TARGET, "HEAD"),
                "",
                "target: `HEAD` is not a full commit",
            ),
            ("repos/alpha.yaml", &repo("alpha", "colour: red\n"), "", "unknown field `colour`"),
            (
                "repos/alpha.yaml",
                &repo("alpha", ""),
                &bug("abc"),
                "fix_commit: `abc` is not a full commit id",
            ),
            (
                "repos/alpha.yaml",
                &repo("alpha", ""),
                &bug(&"a".repeat(40)).replace("  witness: python3 -m pytest -q tests/test_a.py\n", ""),
                "witness: is missing",
            ),
            (
                "repos/alpha.yaml",
                &repo("alpha", ""),
                &format!("{}{}", bug(&"a".repeat(40)), bug(&"a".repeat(40))),
                "bug 2 (src/a.py): fix_commit",
            ),
            (
                "repos/alpha.yaml",
                &repo("alpha", ""),
                &bug(TARGET),
                "fix_commit: 0123456789abcdef0123456789abcdef01234567 is the repository's target",
            ),
        ];
        for (path, repository, bugs, wanted) in cases {
            let dir = tempfile::tempdir().unwrap();
            write(dir.path(), path, repository);
            write(dir.path(), "bugs/alpha.yaml", if bugs.is_empty() { "[]\n" } else { bugs });
            let error = Sources::read(dir.path()).unwrap_err().to_string();
            assert!(error.contains(wanted), "{wanted}: {error}");
            assert!(error.contains("alpha.yaml"), "names the file: {error}");
        }
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "repos/alpha.yaml", &repo("alpha", ""));
        let error = Sources::read(dir.path()).unwrap_err().to_string();
        assert!(error.contains("bugs/alpha.yaml is missing"), "{error}");
        write(dir.path(), "bugs/alpha.yaml", "[]\n");
        write(dir.path(), "bugs/other.yaml", "[]\n");
        let error = Sources::read(dir.path()).unwrap_err().to_string();
        assert!(
            error.contains("other.yaml") && error.contains("no repository file repos/other.yaml"),
            "{error}"
        );
    }
}
