//! The bugs file: the plants-file format with a `patch` instead of `original`/`mutated`,
//! and where each bug came from. Reviewable, editable YAML, written here (this module is the
//! crate's one door to serde_yaml); revcal-calibrate reads it as it reads a plants file,
//! with the same limits (`revcal_calibrate::bugs::read_bugs_file`).

use super::BugsError;
use serde::{Deserialize, Serialize};

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
        let entry = to_yaml(std::slice::from_ref(&without_patch)).map_err(failed)?;
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

/// `value` as YAML text; `Err` says why it could not be written.
fn to_yaml<T: Serialize + ?Sized>(value: &T) -> Result<String, String> {
    serde_yaml::to_string(value).map_err(|error| error.to_string())
}

/// `  patch: |2` and the patch indented by four spaces; a patch with characters a literal
/// block cannot hold (control characters, a carriage return) is quoted instead.
fn patch_field(patch: &str) -> Result<String, String> {
    let blockable = !patch.is_empty()
        && patch.chars().all(|c| c == '\n' || c == '\t' || (!c.is_control() && c != '\u{feff}'));
    if !blockable {
        let quoted = to_yaml(patch)?;
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
