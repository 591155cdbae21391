//! The judge's one door to YAML (serde_yaml is archived upstream, so nothing else in the
//! crate calls it): a nesting limit checked on the events before any deserializer runs
//! (serde_yaml takes seconds on a document nested 100,000 deep), then the document read into
//! a type, its error kept behind [`YamlError`] so that the YAML library is not part of the
//! public API. [`check_nesting`] is public: revcal-calibrate checks plants, bugs and suite
//! files with it, so every YAML input revcal reads has the same limit, said the same way.

use saphyr_parser::{Event, Parser};

/// How deeply a YAML or JSON input (judge cases, plants, bugs and suite files) may nest lists
/// and maps; each of them needs three levels.
pub const MAX_NESTING: usize = 64;

/// A YAML (or JSON) document that could not be read into the type asked for.
#[derive(Debug)]
pub struct YamlError(serde_yaml::Error);

impl std::fmt::Display for YamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for YamlError {}

impl YamlError {
    /// The 1-based line and column the problem was found at, when the parser knows them.
    pub fn position(&self) -> Option<(usize, usize)> {
        self.0.location().map(|at| (at.line(), at.column()))
    }
}

/// `text` read into a `T`.
pub(crate) fn from_str<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    serde_yaml::from_str(text).map_err(YamlError)
}

/// `Err((line, message))` when `text` (YAML, or JSON, which YAML reads) nests lists and maps
/// deeper than [`MAX_NESTING`], or is not YAML at all; stops reading at the first problem.
pub fn check_nesting(text: &str) -> Result<(), (usize, String)> {
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
                    return Err((span.start.line().max(1), too_deep()));
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
    fn a_document_of_the_wrong_shape_is_an_error_with_its_position() {
        let error = from_str::<Vec<u32>>("- 1\n- x\n").unwrap_err();
        assert_eq!(error.position(), Some((2, 3)));
        assert!(error.to_string().contains("invalid type"), "{error}");
    }
}
