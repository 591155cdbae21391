//! Real bugs as plants. The miner is revcal-bugs' ([`revcal_bugs`], re-exported here under
//! the names it had in this module); reading a bugs file is this crate's, because a bugs file
//! is a plants file whose entries carry a `patch`: [`read_bugs_file`] reads it with the plants
//! file's limits (size, nesting) and errors, and `--plants-file` plants it.

pub use revcal_bugs::*;

use crate::plants::PlantError;
use std::path::Path;

/// Reads a bugs file (YAML, or JSON when it ends in `.json`), with the same limits as a
/// plants file.
pub fn read_bugs_file(path: &Path) -> Result<Vec<Bug>, PlantError> {
    crate::plants::read_entries(path)
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
