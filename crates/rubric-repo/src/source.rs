//! Reading a rubric file as text, with a clear problem for everything that is not a
//! readable UTF-8 document of sensible size.

use std::fs;
use std::io::Read;
use std::path::Path;

/// Rubric files larger than this are refused before parsing.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Why a file could not be used as text, with the 1-based position it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileProblem {
    pub message: String,
    pub hint: Option<String>,
    pub line: usize,
    pub column: usize,
    /// True for operating-system failures (the file could not be read at all), as
    /// opposed to content problems.
    pub io: bool,
}

impl FileProblem {
    fn at_start(message: String, hint: Option<&str>, io: bool) -> FileProblem {
        FileProblem { message, hint: hint.map(str::to_owned), line: 1, column: 1, io }
    }
}

/// Reads `path` into a string, refusing huge, binary, non-UTF-8 and empty files.
pub(crate) fn read_text(path: &Path) -> Result<String, FileProblem> {
    let file = fs::File::open(path).map_err(|error| {
        FileProblem::at_start(
            format!("cannot open file: {error}"),
            Some("check the path and its permissions"),
            true,
        )
    })?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if size > MAX_FILE_BYTES {
        return Err(too_large(size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // Read one byte past the limit so that a file that grew after the metadata call is
    // still refused rather than loaded whole.
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|error| {
        FileProblem::at_start(
            format!("cannot read file: {error}"),
            Some("check the file's permissions"),
            true,
        )
    })?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    decode(bytes)
}

/// `size` is the file's size when known, or what was read before the limit stopped it.
fn too_large(size: u64) -> FileProblem {
    let size = if size > MAX_FILE_BYTES + 1 {
        format!("file is {:.1} MiB", size as f64 / 1048576.0)
    } else {
        "file is larger than the limit".to_owned()
    };
    FileProblem::at_start(
        format!("{size}; rubric files are limited to {} MiB", MAX_FILE_BYTES >> 20),
        Some("a rubric is a few kilobytes of YAML; is this the right file?"),
        false,
    )
}

/// Checks that `bytes` are a non-empty UTF-8 text document.
pub(crate) fn decode(bytes: Vec<u8>) -> Result<String, FileProblem> {
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            let offset = error.utf8_error().valid_up_to();
            let bytes = error.into_bytes();
            if let Some(nul) = bytes.iter().position(|&b| b == 0) {
                return Err(binary(&bytes, nul));
            }
            let (line, column) = byte_position(&bytes, offset);
            return Err(FileProblem {
                message: format!("file is not valid UTF-8: byte 0x{:02x} at offset {offset}", bytes[offset]),
                hint: Some("save the file as UTF-8".to_owned()),
                line,
                column,
                io: false,
            });
        }
    };
    let text = text.strip_prefix('\u{feff}').map(str::to_owned).unwrap_or(text);
    check_text(&text)?;
    Ok(text)
}

/// Refuses text that is binary (contains NUL) or holds no document at all.
pub(crate) fn check_text(text: &str) -> Result<(), FileProblem> {
    if let Some(nul) = text.bytes().position(|b| b == 0) {
        return Err(binary(text.as_bytes(), nul));
    }
    let blank = text.lines().all(|line| {
        let line = line.trim();
        line.is_empty() || line.starts_with('#') || line == "---" || line == "..."
    });
    if blank {
        return Err(FileProblem::at_start(
            "file is empty: expected a rubric".to_owned(),
            Some("start from a rubric in rubrics/, or remove the file"),
            false,
        ));
    }
    Ok(())
}

fn binary(bytes: &[u8], nul: usize) -> FileProblem {
    let (line, column) = byte_position(bytes, nul);
    FileProblem {
        message: "binary file: it contains a NUL byte".to_owned(),
        hint: Some("rubrics are YAML or JSON text".to_owned()),
        line,
        column,
        io: false,
    }
}

/// 1-based line and column (in characters) of byte `offset`, counting only the valid
/// UTF-8 before it.
pub(crate) fn byte_position(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_of_bad_bytes() {
        let problem = decode(b"a: 1\nbb: \xff\n".to_vec()).unwrap_err();
        assert_eq!((problem.line, problem.column), (2, 5));
        assert!(problem.message.contains("0xff"), "{}", problem.message);
        let problem = decode(b"name: x\n\0".to_vec()).unwrap_err();
        assert_eq!((problem.line, problem.column), (2, 1));
        assert!(problem.message.contains("binary"));
    }

    #[test]
    fn empty_and_comment_only_files_are_empty() {
        for text in ["", "\n\n", "# yaml-language-server: $schema=./schema.json\n", "---\n"] {
            let problem = decode(text.as_bytes().to_vec()).unwrap_err();
            assert!(problem.message.contains("empty"), "{text:?}: {}", problem.message);
        }
        assert_eq!(decode("\u{feff}a: 1".as_bytes().to_vec()).unwrap(), "a: 1");
    }
}
