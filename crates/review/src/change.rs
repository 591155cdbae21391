//! The change under review, as the model reads it: each file's changed regions with the
//! new file's line numbers, so that a finding can name the line it means.
//!
//! A change comes from `git diff` (a commit against its first parent, or a checkout's work
//! tree against a base commit: what `revcal calibrate` shows a reviewer) or from whole files.
//! Deleted lines are shown, unnumbered, after a `-`: a finding can only point at a line that
//! exists in the new file.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::ReviewError;

/// Lines of unchanged code shown around each change.
pub const DEFAULT_CONTEXT_LINES: u32 = 12;
/// The most bytes of text a change may hold (diff or files): a larger change is an error,
/// never a review of part of it.
pub const DEFAULT_MAX_CHANGE_BYTES: usize = 400_000;

/// One file of a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    /// The path, relative to the repository, `/`-separated.
    pub path: String,
    /// Its changed regions (or the whole file), each line prefixed by its number in the new
    /// file and a marker: `+` added, ` ` unchanged, `-` deleted (deleted lines have no number).
    pub excerpt: String,
    /// Numbers of the lines the change added or modified, in the new file.
    pub changed_lines: Vec<u32>,
}

/// The change a reviewer is shown: one or more files.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Change {
    /// The files, in path order.
    pub files: Vec<ChangedFile>,
}

impl Change {
    /// The change of commit `rev` in the repository at `repo`, against its first parent (a
    /// root commit against the empty tree). Runs `git diff`; nothing is written.
    pub fn of_commit(repo: &Path, rev: &str, context: u32, max_bytes: usize) -> Result<Change, ReviewError> {
        check_rev(rev)?;
        let parent = format!("{rev}^");
        let base =
            if git(repo, &["rev-parse", "--verify", "--quiet", &format!("{parent}^{{commit}}")], max_bytes)
                .is_ok()
            {
                parent
            } else {
                EMPTY_TREE.to_owned()
            };
        let diff = diff(repo, &[&base, rev], context, max_bytes)?;
        Change::from_unified_diff(&diff)
    }

    /// The work tree at `dir` against commit `base`: what a reviewer started by
    /// `revcal calibrate` in its checkout is asked to review (`git diff {base}`).
    pub fn of_work_tree(
        dir: &Path,
        base: &str,
        context: u32,
        max_bytes: usize,
    ) -> Result<Change, ReviewError> {
        check_rev(base)?;
        let diff = diff(dir, &[base], context, max_bytes)?;
        Change::from_unified_diff(&diff)
    }

    /// Whole files under `root`, every line numbered (and marked changed: a file review has no
    /// unchanged context).
    pub fn of_files(root: &Path, paths: &[PathBuf], max_bytes: usize) -> Result<Change, ReviewError> {
        let mut files = Vec::with_capacity(paths.len());
        let mut total = 0usize;
        for path in paths {
            let full = if path.is_absolute() { path.clone() } else { root.join(path) };
            let bytes =
                std::fs::read(&full).map_err(|source| ReviewError::Read { path: full.clone(), source })?;
            total += bytes.len();
            if total > max_bytes {
                return Err(ReviewError::TooLarge { bytes: total, max: max_bytes });
            }
            let text = String::from_utf8(bytes).map_err(|_| ReviewError::NotText { path: full.clone() })?;
            let shown = path.strip_prefix(root).unwrap_or(path);
            let mut excerpt = String::new();
            let mut changed_lines = Vec::new();
            for (index, line) in text.lines().enumerate() {
                let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
                let _ = writeln!(excerpt, "{number:>6} + {line}");
                changed_lines.push(number);
            }
            files.push(ChangedFile {
                path: shown.to_string_lossy().replace('\\', "/"),
                excerpt,
                changed_lines,
            });
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        if files.is_empty() {
            return Err(ReviewError::Empty);
        }
        Ok(Change { files })
    }

    /// Reads git's unified diff (`diff --git` headers, `@@ -a,b +c,d @@` hunks) into a change.
    /// Binary files and files only deleted are left out: there is no new line to point at.
    pub fn from_unified_diff(diff: &str) -> Result<Change, ReviewError> {
        let mut files: Vec<ChangedFile> = Vec::new();
        let mut current: Option<ChangedFile> = None;
        let mut new_line: u32 = 0;
        let mut in_hunk = false;
        for (index, line) in diff.lines().enumerate() {
            if line.starts_with("diff --git ") {
                files.extend(
                    current.take().filter(|file| !file.changed_lines.is_empty() || !file.excerpt.is_empty()),
                );
                in_hunk = false;
                continue;
            }
            if !in_hunk && let Some(path) = line.strip_prefix("+++ ") {
                let path = path.trim_end();
                if path == "/dev/null" {
                    current = None;
                } else {
                    let path = path.strip_prefix("b/").unwrap_or(path);
                    current = Some(ChangedFile {
                        path: unquote(path),
                        excerpt: String::new(),
                        changed_lines: Vec::new(),
                    });
                }
                continue;
            }
            if let Some(header) = line.strip_prefix("@@ ") {
                let Some(file) = current.as_mut() else { continue };
                new_line = hunk_start(header).ok_or_else(|| ReviewError::Diff {
                    line: index + 1,
                    message: format!("not a hunk header: {line}"),
                })?;
                if !file.excerpt.is_empty() {
                    file.excerpt.push_str("   ...\n");
                }
                in_hunk = true;
                continue;
            }
            if !in_hunk {
                continue;
            }
            let Some(file) = current.as_mut() else { continue };
            match line.as_bytes().first() {
                Some(b'+') => {
                    let _ = writeln!(file.excerpt, "{new_line:>6} + {}", &line[1..]);
                    file.changed_lines.push(new_line);
                    new_line += 1;
                }
                Some(b'-') => {
                    let _ = writeln!(file.excerpt, "       - {}", &line[1..]);
                }
                Some(b' ') => {
                    let _ = writeln!(file.excerpt, "{new_line:>6}   {}", &line[1..]);
                    new_line += 1;
                }
                // `\ No newline at end of file`, or the end of this file's hunks.
                Some(b'\\') => {}
                _ => in_hunk = false,
            }
        }
        files
            .extend(current.take().filter(|file| !file.changed_lines.is_empty() || !file.excerpt.is_empty()));
        files.sort_by(|a, b| a.path.cmp(&b.path));
        if files.is_empty() {
            return Err(ReviewError::Empty);
        }
        Ok(Change { files })
    }

    /// The change as the prompt shows it: each file's path and excerpt.
    pub fn text(&self) -> String {
        let mut text = String::new();
        for file in &self.files {
            let _ = writeln!(text, "FILE {}", file.path);
            text.push_str(&file.excerpt);
            text.push('\n');
        }
        text
    }

    /// Whether `path` is one of the change's files.
    pub fn has_file(&self, path: &str) -> bool {
        self.files.iter().any(|file| file.path == path)
    }
}

/// The id of git's empty tree (SHA-1): the base of a root commit.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// A revision given on the command line is never an option to git.
fn check_rev(rev: &str) -> Result<(), ReviewError> {
    if rev.is_empty() || rev.starts_with('-') || rev.chars().any(char::is_whitespace) {
        return Err(ReviewError::Rev { rev: rev.to_owned() });
    }
    Ok(())
}

/// `git diff` between `revs` (one rev: the work tree against it), with `context` lines.
fn diff(dir: &Path, revs: &[&str], context: u32, max_bytes: usize) -> Result<String, ReviewError> {
    let unified = format!("--unified={context}");
    // The prefixes named, whatever the user's diff.noprefix or diff.mnemonicPrefix say: the
    // reader strips `b/`.
    let mut args = vec![
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        &unified,
    ];
    args.extend_from_slice(revs);
    args.push("--");
    git(dir, &args, max_bytes)
}

/// Runs git in `dir` (never taking optional locks, so that reading a user's repository writes
/// nothing to it) through revcal's one git runner, and returns its standard output.
fn git(dir: &Path, args: &[&str], max_bytes: usize) -> Result<String, ReviewError> {
    let mut all = vec!["--no-optional-locks", "-c", "core.quotepath=off", "-c", "color.ui=never"];
    all.extend_from_slice(args);
    let stdout = revcal_process::git(dir, &all).map_err(|error| ReviewError::Git {
        dir: error.dir,
        message: format!("git {}: {}", error.args, error.message),
    })?;
    if stdout.len() > max_bytes {
        return Err(ReviewError::TooLarge { bytes: stdout.len(), max: max_bytes });
    }
    Ok(String::from_utf8_lossy(&stdout).into_owned())
}

/// The new file's first line in a hunk header's `+c,d` part.
fn hunk_start(header: &str) -> Option<u32> {
    let plus = header.split_whitespace().find(|part| part.starts_with('+'))?;
    plus[1..].split(',').next()?.parse().ok()
}

/// A path as git prints it: quoted (`"a b.rs"`) only when it holds unusual bytes, which
/// `core.quotepath=off` keeps to control characters and quotes.
fn unquote(path: &str) -> String {
    match path.strip_prefix('"').and_then(|rest| rest.strip_suffix('"')) {
        Some(inner) => {
            let inner = inner.strip_prefix("b/").unwrap_or(inner);
            inner.replace("\\\"", "\"").replace("\\\\", "\\").replace("\\t", "\t")
        }
        None => path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/src/lib.rs b/src/lib.rs
index 1111111..2222222 100644
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -3,4 +3,5 @@ fn sum(v: &[i32]) -> i32 {
     let mut total = 0;
-    for i in 0..v.len() {
+    for i in 0..=v.len() {
+        // walk
         total += v[i];
     }
diff --git a/gone.rs b/gone.rs
deleted file mode 100644
--- a/gone.rs
+++ /dev/null
@@ -1 +0,0 @@
-fn gone() {}
";

    #[test]
    fn a_diff_numbers_the_new_lines_and_marks_the_changed_ones() {
        let change = Change::from_unified_diff(DIFF).unwrap();
        assert_eq!(change.files.len(), 1, "{change:?}");
        let file = &change.files[0];
        assert_eq!(file.path, "src/lib.rs");
        assert_eq!(file.changed_lines, vec![4, 5]);
        assert_eq!(
            file.excerpt,
            "     3       let mut total = 0;\n       -     for i in 0..v.len() {\n     4 +     for i in 0..=v.len() {\n     5 +         // walk\n     6           total += v[i];\n     7       }\n"
        );
    }

    #[test]
    fn a_bad_hunk_header_is_an_error_naming_the_line() {
        let diff = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ nonsense @@\n+y\n";
        match Change::from_unified_diff(diff) {
            Err(ReviewError::Diff { line, .. }) => assert_eq!(line, 4),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_diff_with_nothing_to_review_is_an_error() {
        assert!(matches!(Change::from_unified_diff(""), Err(ReviewError::Empty)));
    }

    #[test]
    fn a_revision_that_looks_like_an_option_is_refused() {
        assert!(matches!(check_rev("--output=/tmp/x"), Err(ReviewError::Rev { .. })));
        assert!(check_rev("HEAD~1").is_ok());
    }
}
