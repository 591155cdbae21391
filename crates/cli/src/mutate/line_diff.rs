//! Line diffs for `mutate`: which lines of a file changed since a revision (`--in-diff`), and
//! the unified diff of one mutant (`--show`).
//!
//! imara-diff computes the edit (histogram algorithm, with its line post-processing); the
//! unified text is written here, in the form `git apply` and `patch` read, including the
//! `\ No newline at end of file` marker. imara-diff instead of `similar`: the same diffs for
//! a small fraction of the compiled code (similar's generic algorithms were about a quarter
//! of this crate's release build).

use imara_diff::{Algorithm, Diff, Hunk, InternedInput};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Lines of context around each change, as `diff -u` and `git diff` print them.
const CONTEXT: u32 = 3;

fn hunks<'a>(before: &'a str, after: &'a str) -> (InternedInput<&'a str>, Vec<Hunk>) {
    let input = InternedInput::new(before, after);
    let mut diff = Diff::compute(Algorithm::Histogram, &input);
    diff.postprocess_lines(&input);
    let hunks = diff.hunks().collect();
    (input, hunks)
}

/// 1-based lines of `after` that are inserted or replaced relative to `before`.
pub(crate) fn new_lines(before: &str, after: &str) -> BTreeSet<usize> {
    let (_, hunks) = hunks(before, after);
    hunks.iter().flat_map(|hunk| hunk.after.clone()).map(|index| index as usize + 1).collect()
}

/// A unified diff of `before` -> `after` under the names `old` and `new` (`--- old`,
/// `+++ new`), with three lines of context; empty when the texts are equal.
pub(crate) fn unified(before: &str, after: &str, old: &str, new: &str) -> String {
    let (input, hunks) = hunks(before, after);
    let mut out = String::new();
    if hunks.is_empty() {
        return out;
    }
    let _ = writeln!(out, "--- {old}\n+++ {new}");
    let line = |token| input.interner[token];
    let before_len = input.before.len() as u32;
    let after_len = input.after.len() as u32;
    // Changes closer than twice the context share one hunk, as in `diff -u`.
    let mut groups: Vec<Vec<&Hunk>> = Vec::new();
    for hunk in &hunks {
        match groups.last_mut() {
            Some(group) if hunk.before.start - group[group.len() - 1].before.end <= 2 * CONTEXT => {
                group.push(hunk)
            }
            _ => groups.push(vec![hunk]),
        }
    }
    for group in groups {
        let (first, last) = (group[0], group[group.len() - 1]);
        let lead = first.before.start.min(CONTEXT);
        let trail = (before_len - last.before.end).min(CONTEXT);
        let before_range = first.before.start - lead..last.before.end + trail;
        let after_range = first.after.start - lead..(last.after.end + trail).min(after_len);
        let _ = writeln!(out, "@@ -{} +{} @@", header_range(&before_range), header_range(&after_range));
        let mut at = before_range.start;
        for hunk in &group {
            for index in at..hunk.before.start {
                push_line(&mut out, ' ', line(input.before[index as usize]));
            }
            for index in hunk.before.clone() {
                push_line(&mut out, '-', line(input.before[index as usize]));
            }
            for index in hunk.after.clone() {
                push_line(&mut out, '+', line(input.after[index as usize]));
            }
            at = hunk.before.end;
        }
        for index in at..before_range.end {
            push_line(&mut out, ' ', line(input.before[index as usize]));
        }
    }
    out
}

/// `start,count` of a hunk header (1-based; a count of 1 is left out, an empty range names
/// the line before it), as GNU diff writes it.
fn header_range(range: &std::ops::Range<u32>) -> String {
    match range.len() {
        0 => format!("{},0", range.start),
        1 => format!("{}", range.start + 1),
        count => format!("{},{count}", range.start + 1),
    }
}

fn push_line(out: &mut String, sign: char, text: &str) {
    out.push(sign);
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push_str("\n\\ No newline at end of file\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_inserted_and_changed_lines_count() {
        let before = "a\nb\nc\n";
        let after = "a\nB\nc\nd\n";
        assert_eq!(new_lines(before, after), BTreeSet::from([2, 4]));
        assert_eq!(new_lines("", "x\ny\n"), BTreeSet::from([1, 2]));
        assert_eq!(new_lines("x\ny\n", "x\ny\n"), BTreeSet::new());
    }

    fn numbered(lines: std::ops::RangeInclusive<u32>) -> String {
        lines.map(|n| format!("line {n}\n")).collect()
    }

    #[test]
    fn one_change_is_one_hunk_with_three_lines_of_context() {
        let before = numbered(1..=10);
        let after = before.replace("line 5\n", "line five\n");
        let diff = unified(&before, &after, "a/f.rs", "b/f.rs");
        assert_eq!(
            diff,
            "--- a/f.rs\n+++ b/f.rs\n@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+line five\n line 6\n line 7\n line 8\n"
        );
        assert_eq!(unified(&before, &before, "a", "b"), "");
    }

    #[test]
    fn near_changes_share_a_hunk_and_far_ones_do_not() {
        let before = numbered(1..=30);
        let near = before.replace("line 5\n", "x\n").replace("line 10\n", "y\n");
        assert_eq!(unified(&before, &near, "a", "b").matches("@@ -").count(), 1);
        let far = before.replace("line 5\n", "x\n").replace("line 25\n", "y\n");
        let diff = unified(&before, &far, "a", "b");
        assert!(diff.contains("@@ -2,7 +2,7 @@\n") && diff.contains("@@ -22,7 +22,7 @@\n"), "{diff}");
    }

    #[test]
    fn edges_of_the_file_and_missing_newlines() {
        // A removed first line, an added last line without a newline, a one-line file.
        let diff = unified("a\nb\n", "b\n", "a/x", "b/x");
        assert_eq!(diff, "--- a/x\n+++ b/x\n@@ -1,2 +1 @@\n-a\n b\n");
        let diff = unified("a\n", "a\nb", "a/x", "b/x");
        assert_eq!(diff, "--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n a\n+b\n\\ No newline at end of file\n");
        let diff = unified("", "new\n", "a/x", "b/x");
        assert_eq!(diff, "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+new\n");
    }

    #[test]
    fn the_diff_applies_with_git_apply() {
        let dir = tempfile::tempdir().unwrap();
        let before = numbered(1..=40);
        let after = before.replace("line 3\n", "").replace("line 20\n", "line twenty\nmore\n") + "tail";
        std::fs::write(dir.path().join("f.txt"), &before).unwrap();
        std::fs::write(dir.path().join("p.diff"), unified(&before, &after, "a/f.txt", "b/f.txt")).unwrap();
        let status = std::process::Command::new("git")
            .args(["apply", "--unsafe-paths", "p.diff"])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(std::fs::read_to_string(dir.path().join("f.txt")).unwrap(), after);
    }
}
