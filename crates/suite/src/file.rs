//! The suite file: which repositories, commits and plants one reviewer is calibrated on.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::SuiteError;
use revcal_calibrate::MAX_PLANTS_FILE_BYTES;
use revcal_calibrate::input::{self, Expect, InputError, Unconfined, confine};

/// How the path rule names the root that a suite's paths may not leave.
const SUITE_DIR: &str = "the suite's directory";

/// The largest suite file read: 1 MiB (a suite of thousands of entries is a few hundred KiB).
pub const MAX_SUITE_FILE_BYTES: u64 = 1 << 20;

/// Plants per entry when neither the entry nor `defaults` says (as `revcal calibrate`).
const DEFAULT_PLANTS: usize = 8;

/// Where an entry's repository is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepoSource {
    /// A repository on this machine (resolved against the suite file's directory).
    Path(PathBuf),
    /// A URL, cloned once into the repositories directory and reused after.
    Url(String),
}

impl std::fmt::Display for RepoSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RepoSource::Path(path) => write!(f, "{}", path.display()),
            // Shown in messages and logs: never with the URL's credentials.
            RepoSource::Url(url) => f.write_str(&revcal_process::redact_url_credentials(url)),
        }
    }
}

/// One entry of a suite: a commit of a repository and what to plant in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteEntry {
    /// Unique within the suite; names the entry in the report.
    pub name: String,
    /// The repository.
    pub repo: RepoSource,
    /// The commit whose changed files are the targets (resolved in the repository).
    pub commit: String,
    /// Mutants to plant: with no plants file, always (default 8); with one, only when given.
    pub plants: Option<usize>,
    /// A plants file or bugs file, resolved against the suite file's directory.
    pub plants_file: Option<PathBuf>,
    /// Fallback targets when the commit touches no eligible file.
    pub files: Vec<String>,
    /// Reviews of this entry (each a work unit).
    pub trials: usize,
    /// Plant selection seed.
    pub seed: u64,
    /// Plant each bug alone (as `calibrate --one-at-a-time`).
    pub one_at_a_time: bool,
    /// Clean rounds (changes without a plant) reviewed besides the plants, per unit.
    pub clean_rounds: usize,
    /// The build check of this entry's plants (as `calibrate --build-cmd`; empty: none),
    /// over the run's own; `None`: the run's.
    pub build_cmd: Option<String>,
}

/// A suite: its entries and the hash that identifies it in shard results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suite {
    /// The file it was read from.
    pub path: PathBuf,
    /// `sha256:` of the suite file's bytes and of every plants file it names, in order: two
    /// shards of the same suite agree on it, and a suite edited between shards does not.
    pub hash: String,
    /// The entries, in the file's order.
    pub entries: Vec<SuiteEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    #[serde(default)]
    defaults: Defaults,
    entries: Vec<EntryFile>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Defaults {
    plants: Option<usize>,
    trials: Option<usize>,
    seed: Option<u64>,
    one_at_a_time: Option<bool>,
    clean_rounds: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryFile {
    name: Option<String>,
    repo: String,
    commit: Option<String>,
    plants: Option<usize>,
    plants_file: Option<PathBuf>,
    #[serde(default)]
    files: Vec<String>,
    trials: Option<usize>,
    seed: Option<u64>,
    one_at_a_time: Option<bool>,
    clean_rounds: Option<usize>,
    build_cmd: Option<String>,
}

/// Whether `repo` names a remote repository rather than a path.
fn is_url(repo: &str) -> bool {
    repo.contains("://") || (repo.contains('@') && repo.contains(':') && !repo.starts_with('/'))
}

/// The default name of an entry: its repository's last path component, without `.git`
/// (and without user information: `https://TOKEN@host` is named `host`).
fn default_name(repo: &str) -> String {
    let trimmed = repo.trim_end_matches(['/', '\\']);
    let last = trimmed.rsplit(['/', '\\', ':']).next().unwrap_or(trimmed);
    let last = last.rsplit('@').next().unwrap_or(last);
    let name = last.strip_suffix(".git").unwrap_or(last);
    if name.is_empty() || name == "." || name == ".." { "entry".to_owned() } else { name.to_owned() }
}

impl Suite {
    /// Reads and checks a suite file (YAML, or JSON): at most [`MAX_SUITE_FILE_BYTES`], no
    /// unknown field, at least one entry, unique names, counts of at least 1. Paths are
    /// resolved against the file's directory; plants files must exist (their bytes are
    /// part of the suite's hash).
    pub fn read(path: &Path) -> Result<Suite, SuiteError> {
        let at = |message: String| SuiteError::File { path: path.to_path_buf(), message };
        let text = input::read_text(path, MAX_SUITE_FILE_BYTES).map_err(|error| match error {
            InputError::Io(source) => SuiteError::Read { path: path.to_path_buf(), source },
            other => at(other.to_string()),
        })?;
        input::check_nesting(&text).map_err(|(line, message)| at(format!("line {line}: {message}")))?;
        let file: SuiteFile = input::from_yaml(&text).map_err(at)?;
        if file.entries.is_empty() {
            return Err(at("`entries` is empty: a suite needs at least one entry".into()));
        }
        let base = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let mut hasher = Sha256::new();
        hasher.update((text.len() as u64).to_le_bytes());
        hasher.update(text.as_bytes());

        let mut entries = Vec::with_capacity(file.entries.len());
        let mut names = BTreeSet::new();
        for (index, entry) in file.entries.into_iter().enumerate() {
            let number = index + 1;
            let field = |name: &str, message: &str| at(format!("entries[{number}].{name}: {message}"));
            if entry.repo.trim().is_empty() {
                return Err(field("repo", "is empty; give a repository path or URL"));
            }
            let trials = entry.trials.or(file.defaults.trials).unwrap_or(1);
            if trials == 0 {
                return Err(field("trials", "must be at least 1"));
            }
            let plants = entry.plants.or(file.defaults.plants);
            if plants == Some(0) {
                return Err(field("plants", "must be at least 1"));
            }
            let name = match entry.name {
                Some(name) if name.trim().is_empty() => return Err(field("name", "is empty")),
                Some(name) => {
                    if !names.insert(name.clone()) {
                        return Err(field(
                            "name",
                            &format!("`{name}` names an earlier entry too; names must be unique"),
                        ));
                    }
                    name
                }
                None => {
                    let stem = default_name(&entry.repo);
                    let mut name = stem.clone();
                    let mut n = 2;
                    while names.contains(&name) {
                        name = format!("{stem}-{n}");
                        n += 1;
                    }
                    names.insert(name.clone());
                    name
                }
            };
            let plants_file = match entry.plants_file {
                Some(file) => {
                    let shown = file.display().to_string();
                    let bad = |reason: String| field("plants_file", &format!("{shown}: {reason}"));
                    let relative =
                        confine(base, SUITE_DIR, &shown, Expect::File).map_err(|r| bad(r.to_string()))?;
                    let resolved = base.join(relative);
                    // The plants file's own limit, as when calibrate reads it.
                    let text =
                        input::read_text(&resolved, MAX_PLANTS_FILE_BYTES).map_err(|error| match error {
                            InputError::Io(error) => bad(format!("cannot read it: {error}")),
                            other => bad(other.to_string()),
                        })?;
                    hasher.update((text.len() as u64).to_le_bytes());
                    hasher.update(text.as_bytes());
                    Some(resolved)
                }
                None => None,
            };
            let repo = if is_url(&entry.repo) {
                RepoSource::Url(entry.repo)
            } else {
                match confine(base, SUITE_DIR, &entry.repo, Expect::Directory) {
                    Ok(relative) => RepoSource::Path(base.join(relative)),
                    // Inside, but not there (yet): the entry's units fail when they run.
                    Err(Unconfined::Missing(_)) => RepoSource::Path(base.join(&entry.repo)),
                    Err(refused) => return Err(field("repo", &format!("{}: {refused}", entry.repo))),
                }
            };
            entries.push(SuiteEntry {
                plants: if plants_file.is_none() { Some(plants.unwrap_or(DEFAULT_PLANTS)) } else { plants },
                name,
                repo,
                commit: entry.commit.unwrap_or_else(|| "HEAD".into()),
                plants_file,
                files: entry.files,
                trials,
                seed: entry.seed.or(file.defaults.seed).unwrap_or(0),
                one_at_a_time: entry.one_at_a_time.or(file.defaults.one_at_a_time).unwrap_or(false),
                clean_rounds: entry.clean_rounds.or(file.defaults.clean_rounds).unwrap_or(0),
                build_cmd: entry.build_cmd,
            });
        }
        let hash = hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect::<String>();
        Ok(Suite { path: path.to_path_buf(), hash: format!("sha256:{hash}"), entries })
    }

    /// Every work unit (entry x trial), in the suite's order: entries as listed, trials
    /// from 1.
    pub fn units(&self) -> Vec<crate::Unit> {
        self.entries
            .iter()
            .enumerate()
            .flat_map(|(entry, e)| (1..=e.trials).map(move |trial| crate::Unit { entry, trial }))
            .collect()
    }

    /// What shard results record of the suite: each entry's name and trials.
    pub fn plan(&self) -> Vec<crate::EntryPlan> {
        self.entries.iter().map(|e| crate::EntryPlan { name: e.name.clone(), trials: e.trials }).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Suite, SuiteError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("suite.yaml");
        std::fs::write(&path, text).unwrap();
        std::fs::write(dir.path().join("bugs.yaml"), "[]\n").unwrap();
        Suite::read(&path)
    }

    #[test]
    fn defaults_fill_entries_and_names_come_from_repositories() {
        let suite = read(
            "defaults: {trials: 3, seed: 7}\nentries:\n  - repo: repos/calc\n  - {repo: other/calc, commit: HEAD~2, plants: 4, trials: 1}\n  - {repo: 'https://example.org/x/lib.git', plants_file: bugs.yaml}\n",
        )
        .unwrap();
        let names: Vec<_> = suite.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["calc", "calc-2", "lib"]);
        assert_eq!(suite.entries[0].trials, 3);
        assert_eq!(suite.entries[0].plants, Some(8));
        assert_eq!(suite.entries[0].seed, 7);
        assert_eq!(
            (suite.entries[1].commit.as_str(), suite.entries[1].plants, suite.entries[1].trials),
            ("HEAD~2", Some(4), 1)
        );
        assert_eq!(suite.entries[2].repo, RepoSource::Url("https://example.org/x/lib.git".into()));
        assert_eq!(suite.entries[2].plants, None, "a plants file alone plants no mutants");
        assert_eq!(default_name("https://user:TOKEN@example.org"), "example.org");
        assert_eq!(default_name("git@github.com:o/repo.git"), "repo");
        assert_eq!(suite.units().len(), 3 + 1 + 3);
        assert!(suite.hash.starts_with("sha256:") && suite.hash.len() == 7 + 64);
    }

    #[test]
    fn mistakes_name_the_entry_and_field() {
        let error = |text: &str| read(text).unwrap_err().to_string();
        assert!(error("entries: []\n").contains("`entries` is empty"));
        assert!(
            error("entries:\n  - {repo: a, trials: 0}\n").contains("entries[1].trials: must be at least 1")
        );
        assert!(
            error("entries:\n  - {repo: a, name: x}\n  - {repo: b, name: x}\n")
                .contains("entries[2].name: `x`")
        );
        assert!(error("entries:\n  - {repo: a, plant: 3}\n").contains("unknown field `plant`"));
        assert!(error("entries:\n  - {repo: a, plants_file: missing.yaml}\n").contains(
            "entries[1].plants_file: missing.yaml: missing.yaml does not exist in the suite's directory"
        ));
        assert!(error("entries:\n  - {commit: HEAD}\n").contains("missing field `repo`"));
    }

    /// A suite names plants files and repositories inside its own directory only: no `..`,
    /// no absolute path, no symbolic link on the way (one that stays inside too: the rule is
    /// the one `--files` follows). Nothing of a refused file is read.
    #[test]
    fn plants_files_and_repositories_stay_in_the_suite_directory() {
        let dir = tempfile::tempdir().unwrap();
        let suite_dir = dir.path().join("suite");
        std::fs::create_dir_all(suite_dir.join("repos/calc")).unwrap();
        std::fs::write(suite_dir.join("plants.yaml"), "[]\n").unwrap();
        std::fs::write(dir.path().join("outside.yaml"), "root:x:0:0:root:/root:/bin/bash\n").unwrap();
        std::fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", suite_dir.join("passwd.yaml")).unwrap();
        std::os::unix::fs::symlink("plants.yaml", suite_dir.join("inside-link.yaml")).unwrap();
        std::os::unix::fs::symlink("../elsewhere", suite_dir.join("linked-repo")).unwrap();
        let path = suite_dir.join("suite.yaml");
        let error = |entry: &str| {
            std::fs::write(&path, format!("entries:\n  - {entry}\n")).unwrap();
            Suite::read(&path).unwrap_err().to_string()
        };
        for (entry, field, reason) in [
            (
                "{repo: repos/calc, plants_file: ../outside.yaml}",
                "plants_file",
                "leaves the suite's directory",
            ),
            ("{repo: repos/calc, plants_file: /etc/passwd}", "plants_file", "absolute path"),
            ("{repo: repos/calc, plants_file: /dev/zero}", "plants_file", "absolute path"),
            ("{repo: repos/calc, plants_file: passwd.yaml}", "plants_file", "passwd.yaml is a symbolic link"),
            ("{repo: repos/calc, plants_file: inside-link.yaml}", "plants_file", "is a symbolic link"),
            ("{repo: repos/calc, plants_file: repos}", "plants_file", "not a regular file"),
            ("{repo: repos/calc, plants_file: missing.yaml}", "plants_file", "does not exist"),
            ("{repo: ../elsewhere}", "repo", "leaves the suite's directory"),
            ("{repo: /tmp}", "repo", "absolute path"),
            ("{repo: linked-repo}", "repo", "linked-repo is a symbolic link"),
            ("{repo: plants.yaml}", "repo", "not a directory"),
        ] {
            let message = error(entry);
            assert!(message.contains(&format!("entries[1].{field}: ")), "{entry}: {message}");
            assert!(message.contains(reason), "{entry}: {message}");
            assert!(!message.contains("root:x"), "{entry}: {message}");
        }
        std::fs::write(&path, "entries:\n  - {repo: ./repos/calc, plants_file: ./plants.yaml}\n").unwrap();
        let suite = Suite::read(&path).unwrap();
        assert_eq!(suite.entries[0].repo, RepoSource::Path(suite_dir.join("repos/calc")));
        assert_eq!(suite.entries[0].plants_file, Some(suite_dir.join("plants.yaml")));
    }

    /// A plants file is read with the plants file's limit (16 MiB), never whole.
    #[test]
    fn a_plants_file_past_the_limit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let big = std::fs::File::create(dir.path().join("big.yaml")).unwrap();
        big.set_len(MAX_PLANTS_FILE_BYTES + 1).unwrap();
        let path = dir.path().join("suite.yaml");
        std::fs::write(&path, "entries:\n  - {repo: ., plants_file: big.yaml}\n").unwrap();
        let message = Suite::read(&path).unwrap_err().to_string();
        assert!(
            message.contains("entries[1].plants_file: big.yaml: larger than the limit of 16 MiB"),
            "{message}"
        );
    }

    /// A suite file's mistakes name the line and the field, never the text found there.
    #[test]
    fn a_suite_error_never_quotes_the_file() {
        for text in [
            "root:x:0:0:root:/root:/bin/bash\nsecond-secret-line\n",
            "entries: 'root:x:0:0:root'\n",
            "entries:\n  - {repo: a, trials: 'root:x:0:0'}\n",
            "entries:\n  - {repo: a, 'root:x:0:0': 1}\n",
        ] {
            let message = read(text).unwrap_err().to_string();
            assert!(!message.contains("root:x") && !message.contains("secret"), "{message}");
            assert!(message.contains("line "), "{message}");
        }
        let message = read("entries:\n  - {repo: a, trials: 'many'}\n").unwrap_err().to_string();
        assert!(message.contains("entries[0].trials: invalid type: a string, expected usize"), "{message}");
        assert!(message.contains("line 2 column"), "{message}");
    }

    #[test]
    fn the_hash_changes_with_the_suite_and_its_plants_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("suite.yaml");
        std::fs::write(&path, "entries:\n  - {repo: a, plants_file: p.yaml}\n").unwrap();
        std::fs::write(dir.path().join("p.yaml"), "[]\n").unwrap();
        let first = Suite::read(&path).unwrap().hash;
        assert_eq!(Suite::read(&path).unwrap().hash, first);
        std::fs::write(dir.path().join("p.yaml"), "[] # edited\n").unwrap();
        assert_ne!(Suite::read(&path).unwrap().hash, first);
    }
}
