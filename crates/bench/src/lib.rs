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
use revcal_suite::{RepoSource, Suite, SuiteError};
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
    /// read from `repos_dir/<name>` when that is a directory. The whole suite keeps its hash;
    /// a selection has a hash of its own (the suite's and the languages'), so that reports of
    /// different selections are never compared as if they were of the same suite.
    pub fn suite_for(&self, languages: &[String], repos_dir: &Path) -> Result<Suite, BenchError> {
        let names = self.repositories_in(languages)?;
        let known = self.languages();
        let mut chosen: Vec<String> = languages.to_vec();
        chosen.sort();
        chosen.dedup();
        let mut suite = self.suite.clone();
        suite.entries.retain(|entry| names.contains(&entry.name));
        for entry in &mut suite.entries {
            if let RepoSource::Url(url) = &entry.repo {
                entry.repo = repository_source(&entry.name, url, repos_dir);
            }
        }
        if !chosen.is_empty() && chosen != known {
            let mut hasher = Sha256::new();
            hasher.update(suite.hash.as_bytes());
            hasher.update(b"\nlanguages:");
            hasher.update(chosen.join(",").as_bytes());
            let hash = hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect::<String>();
            suite.hash = format!("sha256:{hash}");
        }
        Ok(suite)
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
