//! The bugs file: the plants-file format with a `patch` instead of `original`/`mutated`,
//! and where each bug came from. Reviewable, editable YAML.

use super::BugsError;
use crate::input;
use crate::plants::PlantError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One real bug: a patch that re-introduces it, the fix it undoes and the test that shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bug {
    /// The first file the patch changes, relative to the repository root.
    pub file: String,
    /// The first line the patch changes in that file, once applied (1-based).
    pub line: u32,
    /// A best guess at the category from the shape of the change, or `real`.
    pub category: String,
    /// One sentence: what is wrong once the patch is applied.
    pub defect: String,
    /// A command that passes without the patch and fails with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness: Option<String>,
    /// A unified diff against the target commit that re-introduces the bug (several hunks
    /// and files are allowed).
    pub patch: String,
    /// The commit that fixed the bug.
    pub fix_commit: String,
    /// That commit's subject line.
    pub fix_subject: String,
}

/// Reads a bugs file (YAML, or JSON when it ends in `.json`), with the same limits as a
/// plants file.
pub fn read_bugs_file(path: &Path) -> Result<Vec<Bug>, PlantError> {
    crate::plants::read_entries(path)
}

/// The YAML text of a bugs file, with a header comment saying how it was made.
///
/// A bug that cannot be written as YAML is an error ([`BugsError::Yaml`]), never an empty
/// entry in the file.
pub fn write_bugs_yaml(bugs: &[Bug], header: &str) -> Result<String, BugsError> {
    let mut text = String::new();
    for line in header.lines() {
        text.push_str("# ");
        text.push_str(line);
        text.push('\n');
    }
    if bugs.is_empty() {
        text.push_str("[]\n");
    }
    for bug in bugs {
        // The patch is written as a literal block, so that the file reads (and edits) as a
        // diff; the rest is serde_yaml's.
        let failed = |message: String| BugsError::Yaml { fix_commit: bug.fix_commit.clone(), message };
        let without_patch = Bug { patch: String::new(), ..bug.clone() };
        let entry = input::to_yaml(std::slice::from_ref(&without_patch)).map_err(failed)?;
        let mut patch_written = false;
        for line in entry.lines() {
            if line == "  patch: ''" && !patch_written {
                text.push_str(&patch_field(&bug.patch).map_err(failed)?);
                patch_written = true;
            } else {
                text.push_str(line);
                text.push('\n');
            }
        }
        // A bug without its patch would plant nothing: say so rather than write it.
        if !patch_written {
            return Err(failed("serde_yaml wrote the empty patch in an unexpected form".into()));
        }
    }
    Ok(text)
}

/// `  patch: |2` and the patch indented by four spaces; a patch with characters a literal
/// block cannot hold (control characters, a carriage return) is quoted instead.
fn patch_field(patch: &str) -> Result<String, String> {
    let blockable = !patch.is_empty()
        && patch.chars().all(|c| c == '\n' || c == '\t' || (!c.is_control() && c != '\u{feff}'));
    if !blockable {
        let quoted = input::to_yaml(patch)?;
        return Ok(format!("  patch: {}\n", quoted.trim_end()));
    }
    let body = patch.strip_suffix('\n').unwrap_or(patch);
    // `|2`: the indentation is stated, so a first line that starts with a space still reads;
    // `-` when the patch does not end with a line break, `+` when it ends with several.
    let chomp = if !patch.ends_with('\n') {
        "-"
    } else if body.ends_with('\n') {
        "+"
    } else {
        ""
    };
    let mut field = format!("  patch: |2{chomp}\n");
    for line in body.split('\n') {
        if !line.is_empty() {
            field.push_str("    ");
            field.push_str(line);
        }
        field.push('\n');
    }
    Ok(field)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bugs_files_round_trip_with_patches_as_blocks() {
        let bug = Bug {
            file: "src/a.py".into(),
            line: 3,
            category: "off-by-one".into(),
            defect: "The bug fixed by \"Fix: it\" is back.".into(),
            witness: Some("python3 -m pytest -q 'tests/test_a.py::test_x'".into()),
            patch: "--- a/src/a.py\n+++ b/src/a.py\n@@ -3 +3 @@\n-    return s[:n - 1]\n+    return s[:n]\n \n\tx\n".into(),
            fix_commit: "0123456789abcdef0123456789abcdef01234567".into(),
            fix_subject: "Fix: it".into(),
        };
        let text = write_bugs_yaml(std::slice::from_ref(&bug), "mined by revcal\nfrom repo").unwrap();
        assert!(text.starts_with("# mined by revcal\n# from repo\n"), "{text}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bugs.yaml");
        std::fs::write(&path, &text).unwrap();
        assert_eq!(read_bugs_file(&path).unwrap(), vec![bug.clone()]);
        assert!(text.contains("  patch: |2\n    --- a/src/a.py\n"), "{text}");
        for patch in ["-a\n+b", " lead\n\n\n", "x\r\ny\n", "\u{7}bell\n", ""] {
            let odd = Bug { patch: patch.into(), ..bug.clone() };
            std::fs::write(&path, write_bugs_yaml(std::slice::from_ref(&odd), "odd").unwrap()).unwrap();
            assert_eq!(read_bugs_file(&path).unwrap(), vec![odd], "{patch:?}");
        }
        std::fs::write(&path, write_bugs_yaml(&[], "none").unwrap()).unwrap();
        assert!(read_bugs_file(&path).unwrap().is_empty());
        std::fs::write(&path, "- file: a.py\n  line: 3\n  colour: red\n").unwrap();
        let error = read_bugs_file(&path).unwrap_err().to_string();
        assert!(error.contains("bugs.yaml") && error.contains("colour"), "{error}");
    }
}
