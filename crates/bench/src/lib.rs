//! The standard benchmark for code reviewers (docs/benchmark.md): real bugs mined from public
//! repositories (`revcal bugs mine`), each pinned to the commit its patch applies to and
//! verified by its witness, with mutants on the same commits, run through revcal-suite's
//! machinery, so that every reviewer is measured on the same bugs, plants and seeds.
//!
//! A benchmark is a directory: its sources, `repos/<name>.yaml` ([`RepositorySpec`]) and
//! `bugs/<name>.yaml` (bugs files), read by [`Sources::read`]; and what [`generate`] makes of
//! them, `suite.yaml` (a suite file: one entry per repository) and `manifest.yaml`
//! ([`Manifest`]: per bug its repository, language, fix commit and date, witness, category,
//! defect, files and when it was last verified). [`Benchmark::open`] reads the generated pair;
//! [`Benchmark::suite_for`] gives the suite to run (the repositories of some languages, each
//! from a local clone when there is one), and [`benchmark_figures`] the report's figures per
//! language, category, kind and date of fix. [`compare`] pairs two reports over the same
//! plants (McNemar's exact test, revcal-report's). [`set_up`] makes a repository's environment
//! directory; [`verify`] checks every bug's witness again on a clean clone.
//!
//! ```
//! use revcal_bench::{date, group_by_date};
//!
//! // The fix dates the manifest records are UTC timestamps; `--after` splits at a day.
//! let after = date::parse_utc("2024-01-01").unwrap();
//! assert!(group_by_date("2023-12-31T23:59:59Z", after) == Some(false));
//! assert!(group_by_date("2024-01-01T00:00:00Z", after) == Some(true));
//! ```

mod compare;
pub mod date;
mod figures;
mod generate;
mod history;
mod manifest;
mod setup;
mod sources;
mod verify;

pub use compare::{Comparison, PairedFigures, Side, compare};
pub use figures::{benchmark_figures, group_by_date};
pub use generate::{CLEAN_ROUNDS_PER_ENTRY, Generated, History, MUTANTS_PER_ENTRY, SEED, bug_id, generate};
pub use history::{EMPTY_TREE, GitHistory};
pub use manifest::{
    MANIFEST_FORMAT, MAX_MANIFEST_BYTES, Manifest, ManifestBug, ManifestRepository, Verified,
};
pub use setup::{SetupOutcome, set_up};
pub use sources::{LANGUAGES, RepositorySpec, Sources, is_full_commit, patch_files};
pub use verify::{BugCheck, verify};

use std::path::{Path, PathBuf};

use revcal_calibrate::input;
use revcal_suite::{RepoSource, Suite, SuiteEntry, SuiteError};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// The variable naming the directory of the repositories' environment directories; witnesses
/// and test commands name an environment as `$REVCAL_BENCH_ENVS/<name>`.
pub const ENVS_VARIABLE: &str = "REVCAL_BENCH_ENVS";

/// Why a benchmark cannot be read, generated, set up, run or verified.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// A file or directory cannot be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file that is not what it should be: its mistake names the field.
    #[error("{}: {message}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The benchmark's parts do not fit together.
    #[error("{message}")]
    Data {
        /// What is wrong.
        message: String,
    },
    /// A repository of the benchmark cannot be used.
    #[error("repository {name}: {message}")]
    Repository {
        /// The repository's name.
        name: String,
        /// What went wrong.
        message: String,
    },
    /// A suite error (reading the suite, reaching a repository).
    #[error(transparent)]
    Suite(#[from] SuiteError),
    /// A calibration error that stops everything (a signal).
    #[error(transparent)]
    Calibrate(#[from] revcal_calibrate::CalibrateError),
}

/// `path` read as YAML into a `T`: at most `limit` bytes, nesting checked first; a mistake
/// names the position and the field, never the text.
pub(crate) fn read_yaml<T: serde::de::DeserializeOwned>(path: &Path, limit: u64) -> Result<T, BenchError> {
    let at = |message: String| BenchError::File { path: path.to_path_buf(), message };
    let text = input::read_text(path, limit).map_err(|error| match error {
        input::InputError::Io(source) => BenchError::Read { path: path.to_path_buf(), source },
        other => at(other.to_string()),
    })?;
    input::check_nesting(&text).map_err(|(line, message)| at(format!("line {line}: {message}")))?;
    input::from_yaml(&text).map_err(at)
}

/// Where the repository `name` (cloned from `url`) is read from: `repos_dir/name` when that
/// is a directory (a local clone, a bare mirror), else `url`, which revcal-suite clones into
/// `repos_dir` once.
pub fn repository_source(name: &str, url: &str, repos_dir: &Path) -> RepoSource {
    let local = repos_dir.join(name);
    if local.is_dir() { RepoSource::Path(local) } else { RepoSource::Url(url.to_owned()) }
}

/// A generated benchmark: its suite file and manifest, read from its directory.
#[derive(Debug, Clone)]
pub struct Benchmark {
    /// The directory.
    pub dir: PathBuf,
    /// `suite.yaml`.
    pub suite: Suite,
    /// `manifest.yaml`.
    pub manifest: Manifest,
}

impl Benchmark {
    /// Reads `dir/suite.yaml` and `dir/manifest.yaml`, and checks that they describe the same
    /// repositories at the same commits.
    pub fn open(dir: &Path) -> Result<Benchmark, BenchError> {
        let suite_path = dir.join("suite.yaml");
        if !suite_path.is_file() {
            return Err(BenchError::Data {
                message: format!(
                    "{} holds no suite.yaml: generate it from repos/ and bugs/ with `revcal bench generate`",
                    dir.display()
                ),
            });
        }
        let suite = Suite::read(&suite_path)?;
        let manifest = Manifest::read(&dir.join("manifest.yaml"))?;
        for entry in &suite.entries {
            let fits = manifest.repository(&entry.name).is_some_and(|repo| repo.target == entry.commit);
            if !fits {
                return Err(BenchError::Data {
                    message: format!(
                        "{}: entry {} is not the manifest's (a repository of that name at that commit): generate both again",
                        suite_path.display(),
                        entry.name
                    ),
                });
            }
        }
        if suite.entries.len() != manifest.repositories.len() {
            return Err(BenchError::Data {
                message: format!(
                    "{} has {} entries and the manifest {} repositories: generate both again",
                    suite_path.display(),
                    suite.entries.len(),
                    manifest.repositories.len()
                ),
            });
        }
        Ok(Benchmark { dir: dir.to_path_buf(), suite, manifest })
    }

    /// The languages of its repositories, sorted, each once.
    pub fn languages(&self) -> Vec<String> {
        let mut languages: Vec<String> =
            self.manifest.repositories.iter().map(|r| r.language.clone()).collect();
        languages.sort();
        languages.dedup();
        languages
    }

    /// The suite to run: the entries of the repositories in `languages` (all when empty), each
    /// read from `repos_dir/<name>` when that is a directory. Its hash is the selection's
    /// ([`selection_hash`](Self::selection_hash)): what its reports were measured on, and
    /// nothing else, so that reports of different selections are never compared as if they
    /// were of the same suite, and a change to one language's repositories leaves the reports
    /// of the others current.
    pub fn suite_for(&self, languages: &[String], repos_dir: &Path) -> Result<Suite, BenchError> {
        let names = self.repositories_in(languages)?;
        let mut suite = self.suite.clone();
        suite.entries.retain(|entry| names.contains(&entry.name));
        suite.hash = self.selection_hash(&suite.entries, languages)?;
        for entry in &mut suite.entries {
            if let RepoSource::Url(url) = &entry.repo {
                entry.repo = repository_source(&entry.name, url, repos_dir);
            }
        }
        Ok(suite)
    }

    /// The hash of a selection: the languages asked for (none: every one), and of each entry
    /// (in the suite's order) what decides its plants and their outcome: its suite fields and
    /// plants file's bytes, and its repository's record in the manifest (URL, target, base,
    /// setup, test command), which the witnesses and the test-suite reviewer run with.
    pub fn selection_hash(&self, entries: &[SuiteEntry], languages: &[String]) -> Result<String, BenchError> {
        #[derive(Serialize)]
        struct Hashed<'a> {
            name: &'a str,
            url: &'a str,
            language: &'a str,
            target: &'a str,
            base: &'a str,
            setup: &'a str,
            test_cmd: &'a str,
            files: &'a [String],
            plants: Option<usize>,
            trials: usize,
            seed: u64,
            one_at_a_time: bool,
            clean_rounds: usize,
            build_cmd: Option<&'a str>,
        }
        let mut chosen: Vec<&str> = languages.iter().map(String::as_str).collect();
        chosen.sort_unstable();
        chosen.dedup();
        // Every language named is the whole benchmark, as none named is.
        if chosen == self.languages() {
            chosen.clear();
        }
        let mut hasher = Sha256::new();
        let mut field = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        field(b"revcal benchmark selection 1");
        field(chosen.join(",").as_bytes());
        for entry in entries {
            let repository = self.manifest.repository(&entry.name).ok_or_else(|| BenchError::Data {
                message: format!("entry {} has no repository in the manifest", entry.name),
            })?;
            let hashed = Hashed {
                name: &entry.name,
                url: &repository.url,
                language: &repository.language,
                target: &entry.commit,
                base: &repository.base,
                setup: &repository.setup,
                test_cmd: &repository.test_cmd,
                files: &entry.files,
                plants: entry.plants,
                trials: entry.trials,
                seed: entry.seed,
                one_at_a_time: entry.one_at_a_time,
                clean_rounds: entry.clean_rounds,
                build_cmd: entry.build_cmd.as_deref(),
            };
            let text = serde_yaml::to_string(&hashed)
                .map_err(|error| BenchError::Data { message: format!("entry {}: {error}", entry.name) })?;
            field(text.as_bytes());
            if let Some(path) = &entry.plants_file {
                let bytes =
                    std::fs::read(path).map_err(|source| BenchError::Read { path: path.clone(), source })?;
                field(&bytes);
            }
        }
        let hash = hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect::<String>();
        Ok(format!("sha256:{hash}"))
    }

    /// The names of the repositories in `languages` (every one when empty), in the suite's
    /// order; a language none of them is in is an error naming the languages there are.
    pub fn repositories_in(&self, languages: &[String]) -> Result<Vec<String>, BenchError> {
        let known = self.languages();
        if let Some(unknown) = languages.iter().find(|language| !known.contains(language)) {
            return Err(BenchError::Data {
                message: format!(
                    "no repository of the benchmark is in {unknown}; its languages are {}",
                    known.join(", ")
                ),
            });
        }
        Ok(self
            .suite
            .entries
            .iter()
            .filter(|entry| {
                languages.is_empty()
                    || self
                        .manifest
                        .repository(&entry.name)
                        .is_some_and(|repo| languages.contains(&repo.language))
            })
            .map(|entry| entry.name.clone())
            .collect())
    }

    /// The languages `suite` (from [`suite_for`](Self::suite_for)) covers, sorted.
    pub fn languages_of(&self, suite: &Suite) -> Vec<String> {
        let mut languages: Vec<String> = suite
            .entries
            .iter()
            .filter_map(|entry| self.manifest.repository(&entry.name).map(|repo| repo.language.clone()))
            .collect();
        languages.sort();
        languages.dedup();
        languages
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use revcal_calibrate::bugs::{Bug, write_bugs_yaml};
    use std::collections::BTreeMap;

    /// Git's facts, fixed.
    struct Fixed;

    impl History for Fixed {
        fn commit_time(&mut self, _: &RepositorySpec, _: &str) -> Result<i64, BenchError> {
            Ok(1_600_000_000)
        }
        fn first_parent(&mut self, _: &RepositorySpec, _: &str) -> Result<String, BenchError> {
            Ok("f".repeat(40))
        }
        fn has_ancestor(&mut self, _: &RepositorySpec, _: &str, _: &str) -> Result<bool, BenchError> {
            Ok(true)
        }
    }

    /// A benchmark of a Python and a Go repository, one bug each, written into `dir`.
    fn benchmark(dir: &Path, shop_test_cmd: &str, calc_line: &str) -> Benchmark {
        let repository = |name: &str, language: &str, test_cmd: &str| RepositorySpec {
            name: name.into(),
            url: format!("https://example.org/{name}.git"),
            language: language.into(),
            target: "1".repeat(40),
            setup: String::new(),
            test_cmd: test_cmd.into(),
            build_cmd: None,
            mined: None,
            notes: None,
        };
        let bug = |file: &str, line: &str, fix: char| Bug {
            file: file.into(),
            line: 2,
            category: "off-by-one".into(),
            defect: "It is off by one.".into(),
            witness: Some("run the test".into()),
            patch: format!("--- a/{file}\n+++ b/{file}\n@@ -2 +2 @@\n-    return n\n+{line}\n"),
            fix_commit: fix.to_string().repeat(40),
            fix_subject: "Fix it".into(),
        };
        let sources = Sources {
            repositories: vec![
                repository("calc", "python", "python3 -m pytest -q"),
                repository("shop", "go", shop_test_cmd),
            ],
            bugs: [
                ("calc".to_owned(), vec![bug("calc.py", calc_line, 'a')]),
                ("shop".to_owned(), vec![bug("price.go", "\treturn n - 1", 'b')]),
            ]
            .into(),
        };
        let generated = generate("standard", &sources, None, &mut Fixed, &BTreeMap::new()).unwrap();
        std::fs::create_dir_all(dir.join("bugs")).unwrap();
        for (name, bugs) in &sources.bugs {
            std::fs::write(dir.join(format!("bugs/{name}.yaml")), write_bugs_yaml(bugs, "test").unwrap())
                .unwrap();
        }
        std::fs::write(dir.join("suite.yaml"), &generated.suite).unwrap();
        std::fs::write(dir.join("manifest.yaml"), &generated.manifest).unwrap();
        Benchmark::open(dir).unwrap()
    }

    fn hash(benchmark: &Benchmark, languages: &[&str]) -> String {
        let languages: Vec<String> = languages.iter().map(|l| (*l).to_owned()).collect();
        benchmark.suite_for(&languages, Path::new("/nowhere")).unwrap().hash
    }

    #[test]
    fn a_selections_hash_moves_with_its_own_repositories_only() {
        let dir = tempfile::tempdir().unwrap();
        let before = benchmark(dir.path(), "go test ./...", "    return n - 1");
        let (python, go, all) = (hash(&before, &["python"]), hash(&before, &["go"]), hash(&before, &[]));
        assert_eq!(hash(&before, &["python", "go"]), all, "every language named is the whole benchmark");
        assert!(python != go && go != all && python != all);
        assert_eq!(hash(&before, &["python"]), python, "the same files, the same hash");

        // Go's test command changes: the Go selection and the whole change, Python's does not.
        let test_cmd = benchmark(dir.path(), "go test -count=1 ./...", "    return n - 1");
        assert_eq!(hash(&test_cmd, &["python"]), python);
        assert_ne!(hash(&test_cmd, &["go"]), go);
        assert_ne!(hash(&test_cmd, &[]), all);

        // A Python bug's patch changes: Python's selection changes, Go's does not.
        let patch = benchmark(dir.path(), "go test ./...", "    return n + 1");
        assert_ne!(hash(&patch, &["python"]), python);
        assert_eq!(hash(&patch, &["go"]), go);
    }
}
