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
    /// Source in a language the miner reads (Rust, Python, JavaScript, TypeScript, Go,
    /// Java), not a test.
    Source,
    /// A test file (or a fixture under a test directory).
    Test,
    /// What is not code: docs, changelogs, release notes, images, the forge's own files.
    /// Allowed beside a fix, never part of the bug.
    Docs,
    /// Code the miner does not read, and what builds it (build and lock files, other
    /// languages, configuration): the bug would not be only in the source.
    Other,
}

/// Directory names whose files are tests.
const TEST_DIRS: &[&str] = &["test", "tests", "__tests__", "testing", "spec", "specs", "testdata"];

/// Directories of release notes and changelog fragments (reno, towncrier, changesets, ...):
/// whatever their format, they are prose about a change.
const NOTE_DIRS: &[&str] = &[
    "releasenotes",
    "release-notes",
    "release_notes",
    "changelog.d",
    "changes",
    "newsfragments",
    ".changeset",
    ".changes",
    "changelog",
];

/// The source file extensions the miner reads.
pub(crate) const SOURCE_EXTENSIONS: &[&str] =
    &["rs", "py", "js", "mjs", "cjs", "ts", "mts", "cts", "go", "java"];

/// Classifies a repository path.
pub(crate) fn classify(path: &str) -> FileKind {
    let lower = path.to_ascii_lowercase();
    let parts: Vec<&str> = lower.split('/').collect();
    let name = parts.last().copied().unwrap_or("");
    let directories = &parts[..parts.len().saturating_sub(1)];
    let extension = name.rsplit_once('.').map_or("", |(_, ext)| ext);
    let stem = name.split('.').next().unwrap_or("");
    // JUnit's names: FooTest, FooTests, TestFoo, FooIT.
    let java_test = extension == "java"
        && (stem.ends_with("test")
            || stem.ends_with("tests")
            || stem.starts_with("test")
            || stem.ends_with("it"));
    let is_test_name = stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem == "conftest"
        || stem == "tests"
        || name.contains(".test.")
        || name.contains(".spec.")
        || java_test;
    if directories.iter().any(|dir| TEST_DIRS.contains(dir)) || is_test_name {
        return FileKind::Test;
    }
    const DOC_NAMES: &[&str] = &[
        "changes",
        "changelog",
        "history",
        "news",
        "authors",
        "contributors",
        "readme",
        "release-notes",
        "license",
        "copying",
        "notice",
        ".mailmap",
        ".gitignore",
    ];
    const NOT_CODE: &[&str] =
        &["md", "rst", "txt", "adoc", "png", "jpg", "jpeg", "gif", "svg", "ico", "webp"];
    if NOT_CODE.contains(&extension)
        || DOC_NAMES.contains(&stem)
        || DOC_NAMES.contains(&name)
        || directories.first().is_some_and(|dir| matches!(*dir, "doc" | "docs" | ".github"))
        || directories.iter().any(|dir| NOTE_DIRS.contains(dir))
    {
        return FileKind::Docs;
    }
    // Written in a language the miner reads, but build scripts and tool configuration: what
    // builds the code, not the code.
    const BUILD_SCRIPTS: &[&str] = &["setup.py", "build.rs", "noxfile.py", "gulpfile.js", "gruntfile.js"];
    if BUILD_SCRIPTS.contains(&name) || name.contains(".config.") || name.starts_with(".eslintrc") {
        return FileKind::Other;
    }
    if SOURCE_EXTENSIONS.contains(&extension) {
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
    /// Whether the fix only adds source lines (its reversal only removes code).
    pub(crate) only_adds: bool,
}

/// The limits of the candidate rule.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CandidateRule {
    /// Most source files a fix may change.
    pub(crate) max_source_files: usize,
    /// Most source lines (added plus deleted) a fix may change.
    pub(crate) max_changed_lines: u32,
}

/// Why a commit is not a fix candidate: its kebab-case name (counted by it in the report)
/// and what in the commit says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skip {
    /// `merge-or-root`, `binary-source`, `build-or-other-code`, `no-source`,
    /// `too-many-source-files`, `no-test`, `too-many-lines`.
    pub(crate) reason: &'static str,
    /// The detail, in words (which file, how many lines).
    pub(crate) detail: String,
}

impl Skip {
    fn new(reason: &'static str, detail: impl Into<String>) -> Skip {
        Skip { reason, detail: detail.into() }
    }
}

/// The commit as a fix candidate, or why it is not one.
pub(crate) fn candidate(commit: &LoggedCommit, rule: CandidateRule) -> Result<Candidate, Skip> {
    let [parent] = commit.parents.as_slice() else {
        return Err(Skip::new("merge-or-root", "a merge or a root commit"));
    };
    let mut sources = Vec::new();
    let mut tests = Vec::new();
    let mut changed_lines = 0u32;
    let mut only_adds = true;
    for file in &commit.files {
        match classify(&file.path) {
            FileKind::Source => {
                let (Some(added), Some(deleted)) = (file.added, file.deleted) else {
                    return Err(Skip::new("binary-source", format!("{} is binary", file.path)));
                };
                changed_lines = changed_lines.saturating_add(added).saturating_add(deleted);
                only_adds &= deleted == 0;
                sources.push(file.path.clone());
            }
            FileKind::Test => tests.push(file.path.clone()),
            FileKind::Docs => {}
            FileKind::Other => {
                return Err(Skip::new(
                    "build-or-other-code",
                    format!(
                        "changes {}, which is neither source the miner reads, a test nor docs",
                        file.path
                    ),
                ));
            }
        }
    }
    if sources.is_empty() {
        return Err(Skip::new("no-source", "no source file changed"));
    }
    if sources.len() > rule.max_source_files {
        return Err(Skip::new(
            "too-many-source-files",
            format!("{} source files changed (at most {})", sources.len(), rule.max_source_files),
        ));
    }
    if tests.is_empty() {
        return Err(Skip::new("no-test", "no test file added or changed"));
    }
    if changed_lines > rule.max_changed_lines {
        return Err(Skip::new(
            "too-many-lines",
            format!("{changed_lines} source lines changed (at most {})", rule.max_changed_lines),
        ));
    }
    Ok(Candidate {
        id: commit.id.clone(),
        parent: parent.clone(),
        subject: commit.subject.clone(),
        sources,
        tests,
        only_adds,
    })
}

/// Why a commit's subject marks a feature rather than a fix: a conventional `feat:` (or
/// `feat(scope):`), or a first word that adds (`add`, `implement`, `introduce`, `support`,
/// ...), with no word of a fix in it (`fix`, `bug`, `regression`, `crash`, `missing`, ...)
/// and not adding a test, a check, a guard, validation or handling (what fixes add).
pub(crate) fn feature_subject(subject: &str) -> Option<String> {
    let lower = subject.to_ascii_lowercase();
    const FIX_WORDS: &[&str] = &[
        "fix",
        "bug",
        "regression",
        "crash",
        "wrong",
        "incorrect",
        "broken",
        "missing",
        "error",
        "issue",
        "revert",
    ];
    if FIX_WORDS.iter().any(|word| lower.contains(word)) {
        return None;
    }
    let conventional = lower.strip_prefix("feat").is_some_and(|rest| rest.starts_with([':', '(', '!']));
    if conventional {
        return Some("its message marks a feature (`feat`)".to_owned());
    }
    // The first word, after a `scope:` prefix if any.
    let body = lower.split_once(": ").map_or(lower.as_str(), |(_, rest)| rest);
    let first = body.split(|c: char| !c.is_ascii_alphabetic()).find(|word| !word.is_empty()).unwrap_or("");
    const FEATURE_WORDS: &[&str] = &[
        "add",
        "adds",
        "added",
        "adding",
        "implement",
        "implements",
        "implemented",
        "introduce",
        "introduces",
        "introduced",
        "support",
        "supports",
        "supported",
        "new",
    ];
    if !FEATURE_WORDS.contains(&first) {
        return None;
    }
    // "Add a check for ...", "adding test and ...": what is added guards or tests the code,
    // as fixes do.
    const GUARD_WORDS: &[&str] = &["test", "tests", "check", "checks", "guard", "validation", "handling"];
    let guarded = body
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|word| !word.is_empty())
        .skip_while(|word| *word != first)
        .skip(1)
        .take(4)
        .any(|word| GUARD_WORDS.contains(&word));
    (!guarded).then(|| format!("its message marks a feature (`{first}`)"))
}

/// The names that added source lines define: functions, methods, classes, types
/// (`def name`, `fn name`, `func name`, `func (r T) name`, `function name`, `class name`,
/// Java's `public T name(`).
pub(crate) fn defined_names(added_lines: &str) -> Vec<String> {
    const KEYWORDS: &[&str] =
        &["def", "fn", "func", "function", "class", "struct", "enum", "trait", "interface", "type"];
    let mut names = Vec::new();
    for line in added_lines.lines() {
        let words: Vec<&str> = line
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|word| !word.is_empty())
            .collect();
        for pair in words.windows(2) {
            if KEYWORDS.contains(&pair[0]) {
                names.push(pair[1].to_owned());
            }
        }
        // `func (r *T) name(` names the method after the receiver.
        if let Some(rest) = line.trim_start().strip_prefix("func (")
            && let Some((_, after)) = rest.split_once(')')
            && let Some(name) = after.trim_start().split('(').next()
        {
            names.push(name.trim().to_owned());
        }
        // Java: a method declared with a modifier, `public int total(`.
        let trimmed = line.trim_start();
        if ["public ", "protected ", "private ", "static "].iter().any(|m| trimmed.starts_with(m))
            && let Some((head, _)) = trimmed.split_once('(')
            && let Some(name) = head.split_whitespace().last()
        {
            names.push(name.to_owned());
        }
    }
    names
        .retain(|name| name.len() >= 3 && name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_'));
    names.sort();
    names.dedup();
    names
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
            ("setup.py", FileKind::Other),
            ("build.rs", FileKind::Other),
            ("webpack.config.js", FileKind::Other),
            ("go.mod", FileKind::Other),
            ("pom.xml", FileKind::Other),
            ("releasenotes/notes/retry-stop-3f2a.yaml", FileKind::Docs),
            ("changelog.d/123.bugfix", FileKind::Docs),
            ("newsfragments/42.feature", FileKind::Docs),
            (".changeset/quiet-owls.md", FileKind::Docs),
            (".github/workflows/ci.yml", FileKind::Docs),
            ("docs/logo.svg", FileKind::Docs),
            ("LICENSE", FileKind::Docs),
            ("pkg/retry/backoff.go", FileKind::Source),
            ("pkg/retry/backoff_test.go", FileKind::Test),
            ("pkg/retry/testdata/case.json", FileKind::Test),
            ("src/main/java/com/acme/Calc.java", FileKind::Source),
            ("src/test/java/com/acme/CalcTest.java", FileKind::Test),
            ("lib/src/CalcTests.java", FileKind::Test),
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
                "merge-or-root",
            ),
            (commit(&["p"], &[("tests/test_a.py", Some(4), Some(0))]), "no-source"),
            (commit(&["p"], &[("a.py", Some(1), Some(1))]), "no-test"),
            (
                commit(&["p"], &[("a.py", Some(10), Some(3)), ("test_a.py", Some(1), Some(0))]),
                "too-many-lines",
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
                "build-or-other-code",
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
                "too-many-source-files",
            ),
        ];
        for (commit, reason) in cases {
            assert_eq!(candidate(&commit, rule).unwrap_err().reason, reason);
        }
        let with_release_note = commit(
            &["p"],
            &[
                ("a.py", Some(1), Some(1)),
                ("test_a.py", Some(1), Some(0)),
                ("releasenotes/notes/a.yaml", Some(3), Some(0)),
            ],
        );
        assert!(candidate(&with_release_note, rule).is_ok(), "a release note does not disqualify a fix");
    }

    #[test]
    fn feature_subjects_are_told_from_fixes() {
        for subject in [
            "feat: add enabled parameter to retry",
            "feat(api)!: drop the old client",
            "Add a `--json` flag",
            "retry: implement jitter",
            "Support Python 3.13",
            "Introduce wait_random",
        ] {
            assert!(feature_subject(subject).is_some(), "{subject}");
        }
        for subject in [
            "Fix the off-by-one in retry",
            "Add missing None check",
            "fix: add the stop condition back",
            "Total no longer adds one",
            "Addresses are parsed with their port",
            "Adding in a check for routes with just /",
            "adding test and updating condition",
            "Add validation of the port",
        ] {
            assert_eq!(feature_subject(subject), None, "{subject}");
        }
    }

    #[test]
    fn names_defined_by_added_lines_are_found_in_each_language() {
        let added = "def coupon(price, code):\npub fn clamp_to(x: u8) -> u8 {\nfunc (r *Retry) Backoff(n int) time.Duration {\nfunc Jitter() {}\n    public int total(int[] xs) {\nexport function retryAfter(ms) {\nclass Budget:\n    x = 1\n";
        assert_eq!(
            defined_names(added),
            ["Backoff", "Budget", "Jitter", "clamp_to", "coupon", "retryAfter", "total"]
        );
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
