//! Fix candidates from a repository's history: non-merge commits that change a few lines of
//! source in a supported language and add or change a test, and nothing else but docs.
//!
//! One `git log --numstat` over the range reads every commit's file list and line counts in
//! a single process; the diffs themselves are read only for the candidates.

use super::{BugsError, git};
use std::path::Path;

/// What a path is, for the candidate rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// Source in a language revcal plants in (Rust, Python, JavaScript), not a test.
    Source,
    /// A test file (or a fixture under a test directory).
    Test,
    /// Documentation and changelogs: allowed beside a fix, never part of the bug.
    Docs,
    /// Anything else (build files, lock files, other languages, binaries).
    Other,
}

/// Directory names whose files are tests.
const TEST_DIRS: &[&str] = &["test", "tests", "__tests__", "testing", "spec", "specs", "testdata"];

/// Classifies a repository path.
pub(crate) fn classify(path: &str) -> FileKind {
    let lower = path.to_ascii_lowercase();
    let parts: Vec<&str> = lower.split('/').collect();
    let name = parts.last().copied().unwrap_or("");
    let directories = &parts[..parts.len().saturating_sub(1)];
    let extension = name.rsplit_once('.').map_or("", |(_, ext)| ext);
    let stem = name.split('.').next().unwrap_or("");
    let is_test_name = stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem == "conftest"
        || stem == "tests"
        || name.contains(".test.")
        || name.contains(".spec.");
    if directories.iter().any(|dir| TEST_DIRS.contains(dir)) || is_test_name {
        return FileKind::Test;
    }
    const DOC_NAMES: &[&str] =
        &["changes", "changelog", "history", "news", "authors", "contributors", "readme", "release-notes"];
    if matches!(extension, "md" | "rst" | "txt" | "adoc")
        || DOC_NAMES.contains(&stem)
        || directories.first().is_some_and(|dir| matches!(*dir, "doc" | "docs"))
    {
        return FileKind::Docs;
    }
    if matches!(extension, "rs" | "py" | "js" | "mjs" | "cjs" | "ts" | "mts" | "cts") {
        return FileKind::Source;
    }
    FileKind::Other
}

/// One changed file of a commit, from `--numstat`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChangedFile {
    /// Path in the commit.
    pub(crate) path: String,
    /// Lines added (`None` for a binary file).
    pub(crate) added: Option<u32>,
    /// Lines deleted (`None` for a binary file).
    pub(crate) deleted: Option<u32>,
}

/// A commit as `git log` listed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoggedCommit {
    /// Full id.
    pub(crate) id: String,
    /// Parent ids.
    pub(crate) parents: Vec<String>,
    /// Subject line.
    pub(crate) subject: String,
    /// Changed files.
    pub(crate) files: Vec<ChangedFile>,
}

/// A commit that looks like a fix with a test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// The fix commit.
    pub(crate) id: String,
    /// Its first (only) parent.
    pub(crate) parent: String,
    /// Its subject line.
    pub(crate) subject: String,
    /// The source files it changes: these hunks are reversed.
    pub(crate) sources: Vec<String>,
    /// The test files it adds or changes: they stay as at the fix.
    pub(crate) tests: Vec<String>,
}

/// The limits of the candidate rule.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CandidateRule {
    /// Most source files a fix may change.
    pub(crate) max_source_files: usize,
    /// Most source lines (added plus deleted) a fix may change.
    pub(crate) max_changed_lines: u32,
}

/// Why a commit is not a candidate (for the log at debug level).
pub(crate) fn candidate(commit: &LoggedCommit, rule: CandidateRule) -> Result<Candidate, &'static str> {
    let [parent] = commit.parents.as_slice() else {
        return Err("a merge or a root commit");
    };
    let mut sources = Vec::new();
    let mut tests = Vec::new();
    let mut changed_lines = 0u32;
    for file in &commit.files {
        match classify(&file.path) {
            FileKind::Source => {
                let (Some(added), Some(deleted)) = (file.added, file.deleted) else {
                    return Err("a binary source file");
                };
                changed_lines = changed_lines.saturating_add(added).saturating_add(deleted);
                sources.push(file.path.clone());
            }
            FileKind::Test => tests.push(file.path.clone()),
            FileKind::Docs => {}
            FileKind::Other => return Err("changes files that are neither source, test nor docs"),
        }
    }
    if sources.is_empty() {
        return Err("no source file changed");
    }
    if sources.len() > rule.max_source_files {
        return Err("too many source files");
    }
    if tests.is_empty() {
        return Err("no test file added or changed");
    }
    if changed_lines > rule.max_changed_lines {
        return Err("too many changed source lines");
    }
    Ok(Candidate {
        id: commit.id.clone(),
        parent: parent.clone(),
        subject: commit.subject.clone(),
        sources,
        tests,
    })
}

/// Record and field separators in the log format: bytes that cannot occur in a subject line.
const RECORD: char = '\u{1e}';
const FIELD: char = '\u{1f}';

/// Lists the commits of `range` (`git log` syntax; `limit` caps how many; with
/// `first_parent`, only the first-parent line), newest first.
pub(crate) fn log(
    repo: &Path,
    range: &str,
    limit: Option<usize>,
    first_parent: bool,
) -> Result<Vec<LoggedCommit>, BugsError> {
    let mut args = vec![
        "-c".to_owned(),
        "core.quotePath=false".to_owned(),
        "log".to_owned(),
        "--no-renames".to_owned(),
        "--numstat".to_owned(),
        format!("--format={RECORD}%H{FIELD}%P{FIELD}%s"),
    ];
    if first_parent {
        args.push("--first-parent".to_owned());
    }
    if let Some(limit) = limit {
        args.push(format!("--max-count={limit}"));
    }
    // A range is never an option, whatever it starts with.
    args.push("--end-of-options".to_owned());
    args.push(range.to_owned());
    args.push("--".to_owned());
    let output = git(repo, &args)?;
    Ok(parse_log(&String::from_utf8_lossy(&output)))
}

/// How many commits of `range` are on its first-parent line (`git rev-list --count
/// --first-parent`).
pub(crate) fn count_first_parent(repo: &Path, range: &str) -> Result<usize, BugsError> {
    let args = ["rev-list", "--count", "--first-parent", "--end-of-options", range, "--"];
    let output = git(repo, &args)?;
    let text = String::from_utf8_lossy(&output);
    text.trim().parse().map_err(|_| BugsError::Git {
        dir: repo.to_path_buf(),
        args: args.join(" "),
        message: format!("not a count: {:?}", text.trim()),
    })
}

/// Parses the output of [`log`]'s format.
pub(crate) fn parse_log(text: &str) -> Vec<LoggedCommit> {
    text.split(RECORD)
        .filter(|record| !record.trim().is_empty())
        .filter_map(|record| {
            let (header, files) = record.split_once('\n').unwrap_or((record, ""));
            let mut fields = header.split(FIELD);
            let id = fields.next()?.trim().to_owned();
            let parents = fields.next()?.split_whitespace().map(str::to_owned).collect();
            let subject = fields.next().unwrap_or("").trim().to_owned();
            let files = files
                .lines()
                .filter_map(|line| {
                    let mut columns = line.splitn(3, '\t');
                    let added = columns.next()?;
                    let deleted = columns.next()?;
                    let path = columns.next()?;
                    Some(ChangedFile {
                        path: path.to_owned(),
                        added: added.parse().ok(),
                        deleted: deleted.parse().ok(),
                    })
                })
                .collect();
            Some(LoggedCommit { id, parents, subject, files })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_classified_as_a_fix_reads_them() {
        for (path, kind) in [
            ("src/markupsafe/__init__.py", FileKind::Source),
            ("tests/test_escape.py", FileKind::Test),
            ("src/foo_test.py", FileKind::Test),
            ("lib/router/index.js", FileKind::Source),
            ("test/app.router.js", FileKind::Test),
            ("src/de.rs", FileKind::Source),
            ("tests/test_value.rs", FileKind::Test),
            ("lib/x.test.mjs", FileKind::Test),
            ("CHANGES.rst", FileKind::Docs),
            ("docs/api.rst", FileKind::Docs),
            ("History.md", FileKind::Docs),
            ("Cargo.toml", FileKind::Other),
            ("package.json", FileKind::Other),
            ("src/native.c", FileKind::Other),
        ] {
            assert_eq!(classify(path), kind, "{path}");
        }
    }

    fn commit(parents: &[&str], files: &[(&str, Option<u32>, Option<u32>)]) -> LoggedCommit {
        LoggedCommit {
            id: "f".repeat(40),
            parents: parents.iter().map(|p| (*p).to_owned()).collect(),
            subject: "Fix it".into(),
            files: files
                .iter()
                .map(|(path, added, deleted)| ChangedFile {
                    path: (*path).into(),
                    added: *added,
                    deleted: *deleted,
                })
                .collect(),
        }
    }

    #[test]
    fn the_candidate_rule_keeps_small_tested_source_fixes_only() {
        let rule = CandidateRule { max_source_files: 3, max_changed_lines: 12 };
        let fix = commit(&["p"], &[("src/a.py", Some(1), Some(1)), ("tests/test_a.py", Some(9), Some(0))]);
        let found = candidate(&fix, rule).unwrap();
        assert_eq!(
            (found.sources, found.tests),
            (vec!["src/a.py".to_owned()], vec!["tests/test_a.py".to_owned()])
        );
        let with_changelog = commit(
            &["p"],
            &[("a.py", Some(1), Some(1)), ("test_a.py", Some(1), Some(0)), ("CHANGES.rst", Some(2), Some(0))],
        );
        assert!(candidate(&with_changelog, rule).is_ok());
        let cases = [
            (
                commit(&["p", "q"], &[("a.py", Some(1), Some(1)), ("test_a.py", Some(1), Some(0))]),
                "a merge or a root commit",
            ),
            (commit(&["p"], &[("tests/test_a.py", Some(4), Some(0))]), "no source file changed"),
            (commit(&["p"], &[("a.py", Some(1), Some(1))]), "no test file added or changed"),
            (
                commit(&["p"], &[("a.py", Some(10), Some(3)), ("test_a.py", Some(1), Some(0))]),
                "too many changed source lines",
            ),
            (
                commit(
                    &["p"],
                    &[
                        ("a.py", Some(1), Some(1)),
                        ("test_a.py", Some(1), Some(0)),
                        ("setup.cfg", Some(1), Some(0)),
                    ],
                ),
                "changes files that are neither source, test nor docs",
            ),
            (
                commit(
                    &["p"],
                    &[
                        ("a.py", Some(1), Some(1)),
                        ("b.py", Some(1), Some(1)),
                        ("c.py", Some(1), Some(1)),
                        ("d.py", Some(1), Some(1)),
                        ("test_a.py", Some(1), Some(0)),
                    ],
                ),
                "too many source files",
            ),
        ];
        for (commit, reason) in cases {
            assert_eq!(candidate(&commit, rule).unwrap_err(), reason);
        }
    }

    #[test]
    fn log_output_parses_into_commits_with_their_files() {
        let text = "\u{1e}aaa\u{1f}ppp\u{1f}Fix the thing\n\n1\t1\tsrc/a.py\n-\t-\tlogo.png\n\u{1e}bbb\u{1f}\u{1f}Initial\n\n3\t0\tREADME\n";
        let commits = parse_log(text);
        assert_eq!(commits.len(), 2);
        assert_eq!(commits[0].parents, vec!["ppp".to_owned()]);
        assert_eq!(commits[0].files[1], ChangedFile { path: "logo.png".into(), added: None, deleted: None });
        assert!(commits[1].parents.is_empty());
        assert_eq!(commits[1].subject, "Initial");
    }
}
