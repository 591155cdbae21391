//! `suite.yaml` and `manifest.yaml` from the sources: one suite entry per repository (its
//! target, its bugs file, the bugs' files as the mutants' fallback targets, each bug planted
//! alone, a few mutants and clean rounds, a fixed seed), and the manifest's record of every
//! bug. The output depends on the sources and on facts of git that never change for a given
//! commit id (a fix's committer date, a target's parent), so generating again without a change
//! writes the same bytes; those facts are taken from the previous manifest when it has them,
//! and asked of the repository only for new commits.

use std::collections::BTreeMap;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::manifest::{MANIFEST_FORMAT, Manifest, ManifestBug, ManifestRepository, Verified};
use crate::sources::{RepositorySpec, Sources, patch_files};
use crate::{BenchError, date};

/// Mutants planted in each entry beside its bugs: the synthetic side of the benchmark.
pub const MUTANTS_PER_ENTRY: usize = 3;
/// Clean changes reviewed in each entry: the false-alarm rate.
pub const CLEAN_ROUNDS_PER_ENTRY: usize = 2;
/// The seed of every entry: every reviewer gets the same mutants and clean changes.
pub const SEED: u64 = 0;

/// What generation needs to know of a repository's history.
pub trait History {
    /// The committer date of `commit` of `repository`, in seconds since the epoch.
    fn commit_time(&mut self, repository: &RepositorySpec, commit: &str) -> Result<i64, BenchError>;
    /// The first parent of `commit` of `repository`, or the empty tree's id for a root
    /// commit (what a reviewer is told as the base).
    fn first_parent(&mut self, repository: &RepositorySpec, commit: &str) -> Result<String, BenchError>;
    /// Whether `ancestor` is in the history of `commit` (`commit` itself included) of
    /// `repository`; never, when `commit` is the empty tree.
    fn has_ancestor(
        &mut self,
        repository: &RepositorySpec,
        commit: &str,
        ancestor: &str,
    ) -> Result<bool, BenchError>;
}

/// The generated files' texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// `suite.yaml`.
    pub suite: String,
    /// `manifest.yaml`.
    pub manifest: String,
    /// The manifest itself.
    pub record: Manifest,
}

#[derive(Serialize)]
struct SuiteOut {
    defaults: DefaultsOut,
    entries: Vec<EntryOut>,
}

#[derive(Serialize)]
struct DefaultsOut {
    trials: usize,
    seed: u64,
    one_at_a_time: bool,
    plants: usize,
    clean_rounds: usize,
}

#[derive(Serialize)]
struct EntryOut {
    name: String,
    repo: String,
    commit: String,
    plants_file: String,
    files: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    build_cmd: Option<String>,
}

/// `sha256:` of `text`.
fn digest(text: &str) -> String {
    let hash = Sha256::digest(text.as_bytes());
    format!("sha256:{}", hash.iter().map(|byte| format!("{byte:02x}")).collect::<String>())
}

/// The id of the bug of `repository` fixed by `fix_commit`.
pub fn bug_id(repository: &str, fix_commit: &str) -> String {
    format!("{repository}-{}", &fix_commit[..12.min(fix_commit.len())])
}

/// Generates the benchmark `name`'s suite and manifest from `sources`. Facts of git come from
/// `previous` (the manifest generated before, if any) or `history`; a bug keeps its
/// `verified` stamp from `previous` while its patch, witness and target are the same, and
/// takes the one in `stamps` (by bug id) when there is one.
pub fn generate(
    name: &str,
    sources: &Sources,
    previous: Option<&Manifest>,
    history: &mut dyn History,
    stamps: &BTreeMap<String, Verified>,
) -> Result<Generated, BenchError> {
    let mut repositories = Vec::new();
    let mut bugs = Vec::new();
    let mut entries = Vec::new();
    for spec in &sources.repositories {
        let before = previous.and_then(|manifest| manifest.repository(&spec.name));
        let base = match before.filter(|repo| repo.target == spec.target) {
            Some(repo) => repo.base.clone(),
            None => history.first_parent(spec, &spec.target)?,
        };
        let list = sources.bugs.get(&spec.name).map(Vec::as_slice).unwrap_or_default();
        let mut files: Vec<String> = Vec::new();
        let mut mine = Vec::new();
        for bug in list {
            let patch = digest(&bug.patch);
            let witness = bug.witness.clone().unwrap_or_default();
            let id = bug_id(&spec.name, &bug.fix_commit);
            let known = previous.and_then(|manifest| manifest.bug(&spec.name, &bug.fix_commit));
            let fix_date = match known {
                Some(known) => known.fix_date.clone(),
                None => date::utc_timestamp(history.commit_time(spec, &bug.fix_commit)?),
            };
            let same_target = before.is_some_and(|repo| repo.target == spec.target);
            // The review shows the target's change (base..target): a fix that is not in the
            // base's history is part of that change (the target merges it), so the plant
            // undoes what is under review and the diff shows nothing of the bug. Asked of git
            // once per bug and target; a bug in the manifest for this target was asked before.
            if (known.is_none() || !same_target) && !history.has_ancestor(spec, &base, &bug.fix_commit)? {
                return Err(BenchError::Data {
                    message: format!(
                        "bugs/{}.yaml: the bug fixed by {} ({}): its fix is not in the history of the base {base} (the target's first parent): the target brings it in (a merge of the fix), so planted, the bug undoes part of the change under review and the diff shows nothing of it (drop the bug, or move the target past the merge)",
                        spec.name, bug.fix_commit, bug.file
                    ),
                });
            }
            let unchanged =
                |known: &&ManifestBug| known.patch == patch && known.witness == witness && same_target;
            let verified =
                stamps.get(&id).cloned().or_else(|| known.filter(unchanged).and_then(|k| k.verified.clone()));
            let bug_files = patch_files(bug);
            for file in &bug_files {
                if !files.contains(file) {
                    files.push(file.clone());
                }
            }
            mine.push(ManifestBug {
                id,
                repository: spec.name.clone(),
                language: spec.language.clone(),
                fix_commit: bug.fix_commit.clone(),
                fix_date,
                witness,
                category: bug.category.clone(),
                defect: bug.defect.clone(),
                files: bug_files,
                patch,
                verified,
            });
        }
        mine.sort_by(|a, b| (&a.fix_date, &a.fix_commit).cmp(&(&b.fix_date, &b.fix_commit)));
        files.sort();
        repositories.push(ManifestRepository {
            name: spec.name.clone(),
            url: spec.url.clone(),
            language: spec.language.clone(),
            target: spec.target.clone(),
            base,
            setup: spec.setup.clone(),
            test_cmd: spec.test_cmd.clone(),
            bugs: mine.len(),
        });
        bugs.extend(mine);
        entries.push(EntryOut {
            name: spec.name.clone(),
            repo: spec.url.clone(),
            commit: spec.target.clone(),
            plants_file: format!("bugs/{}.yaml", spec.name),
            files,
            build_cmd: spec.build_cmd.clone(),
        });
    }
    let record = Manifest { format: MANIFEST_FORMAT.to_owned(), name: name.to_owned(), repositories, bugs };
    let suite = SuiteOut {
        defaults: DefaultsOut {
            trials: 1,
            seed: SEED,
            one_at_a_time: true,
            plants: MUTANTS_PER_ENTRY,
            clean_rounds: CLEAN_ROUNDS_PER_ENTRY,
        },
        entries,
    };
    let body = serde_yaml::to_string(&suite)
        .map_err(|error| BenchError::Data { message: format!("cannot write the suite: {error}") })?;
    let suite = format!(
        "# Generated by `revcal bench generate` (or `revcal bench verify --write`) from repos/*.yaml\n# and bugs/*.yaml: edit those and generate again.\n{body}"
    );
    Ok(Generated { suite, manifest: record.to_yaml()?, record })
}

#[cfg(test)]
mod tests {
    use super::*;
    use revcal_calibrate::bugs::Bug;

    /// A history that knows a few commits, and counts the questions it was asked.
    struct Known {
        asked: usize,
    }

    impl History for Known {
        fn commit_time(&mut self, _: &RepositorySpec, commit: &str) -> Result<i64, BenchError> {
            self.asked += 1;
            Ok(if commit.starts_with('a') { 1_600_000_000 } else { 1_700_000_000 })
        }
        fn first_parent(&mut self, _: &RepositorySpec, _: &str) -> Result<String, BenchError> {
            self.asked += 1;
            Ok("f".repeat(40))
        }
        /// Every fix but `e...` (merged by the target) is in the base's history.
        fn has_ancestor(&mut self, _: &RepositorySpec, _: &str, ancestor: &str) -> Result<bool, BenchError> {
            self.asked += 1;
            Ok(!ancestor.starts_with('e'))
        }
    }

    fn sources() -> Sources {
        let bug = |fix: &str, file: &str| Bug {
            file: file.into(),
            line: 2,
            category: "off-by-one".into(),
            defect: "It is off by one.".into(),
            witness: Some("python3 -m pytest -q tests/test_a.py::test_x".into()),
            patch: format!("--- a/{file}\n+++ b/{file}\n@@ -2 +2 @@\n-    return n\n+    return n - 1\n"),
            fix_commit: fix.into(),
            fix_subject: "Fix it".into(),
        };
        let repo = RepositorySpec {
            name: "calc".into(),
            url: "https://example.org/calc.git".into(),
            language: "python".into(),
            target: "1".repeat(40),
            setup: "python3 -m venv \"$ENV\"".into(),
            test_cmd: "python3 -m pytest -q".into(),
            build_cmd: None,
            mined: None,
            notes: None,
        };
        Sources {
            repositories: vec![repo],
            bugs: [(
                "calc".to_owned(),
                vec![bug(&"b".repeat(40), "src/z.py"), bug(&"a".repeat(40), "src/a.py")],
            )]
            .into(),
        }
    }

    #[test]
    fn the_output_is_sorted_and_the_same_when_generated_again() {
        let sources = sources();
        let mut history = Known { asked: 0 };
        let first = generate("standard", &sources, None, &mut history, &BTreeMap::new()).unwrap();
        assert_eq!(history.asked, 5, "each fix's date and ancestry, and the target's parent");
        let ids: Vec<&str> = first.record.bugs.iter().map(|b| b.id.as_str()).collect();
        assert_eq!(ids, ["calc-aaaaaaaaaaaa", "calc-bbbbbbbbbbbb"], "by the date of the fix");
        assert_eq!(first.record.bugs[0].fix_date, "2020-09-13T12:26:40Z");
        assert!(first.suite.contains("files:\n  - src/a.py\n  - src/z.py\n"), "{}", first.suite);
        assert!(first.suite.contains("plants_file: bugs/calc.yaml"), "{}", first.suite);
        assert!(first.suite.contains("one_at_a_time: true"), "{}", first.suite);

        // Again, from the manifest written: the same bytes, and git is not asked.
        let previous = first.record.clone();
        let mut history = Known { asked: 0 };
        let again = generate("standard", &sources, Some(&previous), &mut history, &BTreeMap::new()).unwrap();
        assert_eq!(history.asked, 0);
        assert_eq!((&again.suite, &again.manifest), (&first.suite, &first.manifest));
    }

    #[test]
    fn a_verification_holds_until_the_patch_or_the_witness_changes() {
        let mut sources = sources();
        let stamp = Verified { date: "2026-11-28".into(), revcal: "0.1.0".into() };
        let stamps = BTreeMap::from([("calc-aaaaaaaaaaaa".to_owned(), stamp.clone())]);
        let mut history = Known { asked: 0 };
        let stamped = generate("standard", &sources, None, &mut history, &stamps).unwrap().record;
        assert_eq!(stamped.bugs[0].verified, Some(stamp.clone()));
        assert_eq!(stamped.bugs[1].verified, None);
        let kept =
            generate("standard", &sources, Some(&stamped), &mut history, &BTreeMap::new()).unwrap().record;
        assert_eq!(kept.bugs[0].verified, Some(stamp));
        sources.bugs.get_mut("calc").unwrap()[1].witness = Some("python3 -m pytest -q".into());
        let changed =
            generate("standard", &sources, Some(&kept), &mut history, &BTreeMap::new()).unwrap().record;
        assert_eq!(changed.bugs[0].verified, None, "the witness of calc-aaaaaaaaaaaa changed");
    }

    #[test]
    fn a_bug_whose_fix_the_target_merges_in_is_refused() {
        let mut sources = sources();
        let mut merged = sources.bugs["calc"][0].clone();
        merged.fix_commit = "e".repeat(40);
        sources.bugs.get_mut("calc").unwrap().push(merged);
        let error = generate("standard", &sources, None, &mut Known { asked: 0 }, &BTreeMap::new())
            .unwrap_err()
            .to_string();
        assert!(error.contains("bugs/calc.yaml: the bug fixed by eeeeeeeeee"), "{error}");
        assert!(error.contains("is not in the history of the base ffffffffff"), "{error}");
    }

    /// A repository's build check reaches its suite entry, and the suite reads it back.
    #[test]
    fn a_repositorys_build_command_is_its_entrys() {
        let mut sources = sources();
        sources.repositories[0].build_cmd = Some("cargo test --no-run".into());
        let dir = tempfile::tempdir().unwrap();
        let generated =
            generate("standard", &sources, None, &mut Known { asked: 0 }, &BTreeMap::new()).unwrap();
        assert!(generated.suite.contains("build_cmd: cargo test --no-run"), "{}", generated.suite);
        std::fs::create_dir_all(dir.path().join("bugs")).unwrap();
        std::fs::write(dir.path().join("bugs/calc.yaml"), "[]\n").unwrap();
        std::fs::write(dir.path().join("suite.yaml"), &generated.suite).unwrap();
        let suite = revcal_suite::Suite::read(&dir.path().join("suite.yaml")).unwrap();
        assert_eq!(suite.entries[0].build_cmd.as_deref(), Some("cargo test --no-run"));
        sources.repositories[0].build_cmd = None;
        let without =
            generate("standard", &sources, None, &mut Known { asked: 0 }, &BTreeMap::new()).unwrap();
        assert!(!without.suite.contains("build_cmd"));
    }
}
