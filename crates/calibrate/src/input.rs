//! Reading the files a user hands to calibrate (plants, bugs and suite files) within bounds:
//! a size limit checked while reading, so `/dev/zero` or a runaway file costs at most the
//! limit, and a nesting limit checked on the YAML events before any deserializer sees them
//! (serde_yaml takes seconds on a document nested 100,000 deep). It is also calibrate's one
//! door to YAML ([`from_yaml`]; revcal-bugs writes the bugs file): serde_yaml is archived
//! upstream, so no other module calls it. And it holds the one rule for a path a file names
//! ([`confine`]).
//!
//! It is public for the crates built over calibrate that read a user's files the same way
//! (revcal-suite reads suite and shard files with it): the same limits, the same errors that
//! name the position and the field but never quote the file.

use std::io::Read;
use std::path::Path;

/// The one path rule for what an untrusted file names under a root.
pub use crate::targets::{Expect, Unconfined, confine};
/// The nesting limit of every YAML or JSON input, checked on the parser's events before any
/// deserializer runs: the judge's, so that judge cases and calibrate's files share one rule.
pub use revcal_judge::yaml::check_nesting;

/// Why an input was refused before it was parsed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
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
pub fn read_text(path: &Path, limit: u64) -> Result<String, InputError> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge { limit });
    }
    String::from_utf8(bytes).map_err(|error| InputError::NotUtf8 { offset: error.utf8_error().valid_up_to() })
}

/// `text` (YAML, or JSON, which YAML reads) read into a `T`; `Err` says what is wrong by the
/// position, the field and the type expected (`line 3 column 12: entries[0].trials: invalid
/// type: a string, expected usize`), never quoting the text.
pub fn from_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    serde_yaml::from_str(text).map_err(|error| yaml_error(&error))
}

/// A YAML error (also JSON read as YAML) in words that name the position, the field and the
/// type expected, never the text found there: `line 3 column 12: entries[0].trials: invalid
/// type: a string, expected usize`. serde quotes the value it met (`invalid type: string
/// "root:x:0:0:..."`), so a file that is not what it should be (`/etc/passwd` named as a
/// plants file) would be copied into messages, logs and reports.
fn yaml_error(error: &serde_yaml::Error) -> String {
    let said = describe_parse_error(&error.to_string());
    match error.location() {
        // serde_yaml leaves the position out of some messages (a document of the wrong type).
        Some(at) if !said.starts_with("line ") => {
            format!("line {} column {}: {said}", at.line(), at.column())
        }
        _ => said,
    }
}

/// A JSON error in the words [`from_yaml`] uses: the position and the field, never the text.
pub fn json_error(error: &serde_json::Error) -> String {
    describe_parse_error(&error.to_string())
}

/// `message` (a serde error's, ending `at line L column C` when it has a position) as
/// `line L column C: message`, with every value from the input taken out.
pub(crate) fn describe_parse_error(message: &str) -> String {
    let (message, position) = match message.rfind(" at line ") {
        Some(at) => {
            let position = &message[at + " at ".len()..];
            let numbers: Vec<&str> = position.split(' ').collect();
            let well_formed = matches!(numbers[..], ["line", l, "column", c]
                if l.parse::<usize>().is_ok() && c.parse::<usize>().is_ok());
            if well_formed { (&message[..at], Some(position)) } else { (message, None) }
        }
        None => (message, None),
    };
    let scrubbed = scrub_values(message);
    match position {
        Some(position) => format!("{position}: {scrubbed}"),
        None => scrubbed,
    }
}

/// Whether an unknown field's or variant's name is shown: when it looks like a field name
/// (a mistyped field, `unknown field `plant``, is worth naming), never a key with spaces,
/// colons or other punctuation, nor a long one (a key of some other file).
fn looks_like_a_name(text: &str) -> bool {
    (1..=32).contains(&text.len()) && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `message` without the values serde quotes from the input: a `"..."` string (`string
/// "root:x"` becomes `a string`), a `` `...` `` after `integer`, `floating point`, `character`
/// or `boolean` (`integer `5`` becomes `an integer`), and an unknown field's or variant's name
/// unless it looks like a field name. Backquoted names from the schema (`expected one of `repo`,
/// `name``, `missing field `repo``) stay.
fn scrub_values(message: &str) -> String {
    const KINDS: [(&str, &str); 5] = [
        ("string ", "a string"),
        ("integer ", "an integer"),
        ("floating point ", "a number"),
        ("character ", "a character"),
        ("boolean ", "a boolean"),
    ];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(['"', '`']) {
        let quote = rest[at..].chars().next().unwrap_or('"');
        // The quoted text ends at the next quote that is not escaped (serde writes strings
        // with Rust's escapes).
        let body = &rest[at + 1..];
        let mut end = None;
        let mut escaped = false;
        for (index, c) in body.char_indices() {
            match c {
                '\\' if quote == '"' && !escaped => escaped = true,
                c if c == quote && !escaped => {
                    end = Some(index);
                    break;
                }
                _ => escaped = false,
            }
        }
        let before = &rest[..at];
        let Some(end) = end else {
            // An unterminated quote: nothing after it is shown.
            out.push_str(before);
            out.push_str("(text not shown)");
            return out;
        };
        let quoted = &body[..end];
        match KINDS.iter().find(|(kind, _)| before.ends_with(kind)) {
            Some((kind, words)) => {
                out.push_str(&before[..before.len() - kind.len()]);
                out.push_str(words);
            }
            None if quote == '"' => {
                out.push_str(before);
                out.push_str("(text not shown)");
            }
            None if (before.ends_with("unknown field ") || before.ends_with("unknown variant "))
                && !looks_like_a_name(quoted) =>
            {
                out.push_str(before);
                out.push_str("(name not shown)");
            }
            None => {
                out.push_str(before);
                out.push('`');
                out.push_str(quoted);
                out.push('`');
            }
        }
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_errors_name_the_position_and_type_never_the_value() {
        let yaml = |text: &str| yaml_error(&serde_yaml::from_str::<Vec<u32>>(text).unwrap_err());
        let said = yaml("root:x:0:0:root:/root:/bin/bash\n");
        assert_eq!(said, "line 1 column 1: invalid type: a string, expected a sequence");
        assert_eq!(
            yaml("- 1\n- \"tok\\\"en\"\n"),
            "line 2 column 3: .[1]: invalid type: a string, expected u32"
        );
        assert!(!yaml("- 1.5e3\n").contains("1.5e3"), "{}", yaml("- 1.5e3\n"));
        let json = |text: &str| json_error(&serde_json::from_str::<Vec<bool>>(text).unwrap_err());
        assert_eq!(
            json("[true, \"secret\"]"),
            "line 1 column 15: invalid type: a string, expected a boolean"
        );
        assert_eq!(json("[true, 77]"), "line 1 column 9: invalid type: an integer, expected a boolean");
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Entry {
            repo: String,
            plants: Option<u32>,
        }
        let fields = |text: &str| yaml_error(&serde_yaml::from_str::<Entry>(text).unwrap_err());
        let typo = fields("plant: 3\n");
        assert!(typo.contains("unknown field `plant`, expected `repo` or `plants`"), "{typo}");
        let hidden = fields("'root:x:0:0:/bin/bash': 1\n");
        assert!(
            hidden.contains("unknown field (name not shown), expected `repo`") && !hidden.contains("root"),
            "{hidden}"
        );
        assert!(fields("{}\n").contains("missing field `repo`"), "{}", fields("{}\n"));
        assert_eq!(describe_parse_error("cut \"open"), "cut (text not shown)");
    }

    #[test]
    fn a_file_over_the_limit_is_refused_without_reading_past_it() {
        let error = read_text(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(matches!(error, InputError::TooLarge { limit: 1_048_576 }), "{error}");
        assert_eq!(error.to_string(), "larger than the limit of 1 MiB");
    }
}
