//! Reading the files a user hands to calibrate (plants files, judge cases) within bounds:
//! a size limit checked while reading, so `/dev/zero` or a runaway file costs at most the
//! limit, and a nesting limit checked on the YAML events before any deserializer sees them
//! (serde_yaml takes seconds on a document nested 100,000 deep).

use std::io::Read;
use std::path::Path;

use saphyr_parser::{Event, Parser};

/// How deeply a YAML or JSON input may nest lists and maps. Plants files and judge cases
/// need three levels.
pub(crate) const MAX_NESTING: usize = 64;

/// Why an input was refused before it was parsed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InputError {
    /// Reading failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The file is larger than its limit.
    #[error("larger than the limit of {} MiB", limit >> 20)]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// The text is not UTF-8.
    #[error("not UTF-8 text (invalid byte at offset {offset})")]
    NotUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
}

/// The text of `path`, at most `limit` bytes of UTF-8.
pub(crate) fn read_text(path: &Path, limit: u64) -> Result<String, InputError> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge { limit });
    }
    String::from_utf8(bytes).map_err(|error| InputError::NotUtf8 { offset: error.utf8_error().valid_up_to() })
}

/// `Err((line, message))` when `text` (YAML, or JSON, which YAML reads) nests lists and maps
/// deeper than [`MAX_NESTING`], or is not YAML at all; stops reading at the first problem.
pub(crate) fn check_nesting(text: &str) -> Result<(), (usize, String)> {
    let mut parser = Parser::new_from_str(text);
    let mut depth = 0usize;
    while let Some(next) = parser.next_event() {
        // A syntax error is reported from here too: past it, serde_yaml would read the same
        // text without the nesting limit.
        let (event, span) = next.map_err(|error| {
            let line = error.marker().line().max(1);
            // The scanner refuses 255 levels of flow nesting while it looks ahead, before the
            // events reach the count below: the same problem, said the same way.
            match error.info() {
                "recursion limit exceeded" => (line, too_deep()),
                info => (line, info.to_owned()),
            }
        })?;
        match event {
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                depth += 1;
                if depth > MAX_NESTING {
                    let line = span.start.line().max(1);
                    return Err((line, too_deep()));
                }
            }
            Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn too_deep() -> String {
    format!("nested deeper than {MAX_NESTING} levels")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_refused_past_the_limit_at_its_line() {
        let fine = format!("{}1{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert!(check_nesting(&fine).is_ok());
        let deep = format!("- a\n- {}", "[".repeat(MAX_NESTING + 1));
        let (line, message) = check_nesting(&deep).unwrap_err();
        assert_eq!(line, 2);
        assert!(message.contains("64 levels"), "{message}");
    }

    #[test]
    fn a_file_over_the_limit_is_refused_without_reading_past_it() {
        let error = read_text(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(matches!(error, InputError::TooLarge { limit: 1_048_576 }), "{error}");
        assert_eq!(error.to_string(), "larger than the limit of 1 MiB");
    }
}
