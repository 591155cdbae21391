//! A review as revcal scores it: criterion scores, confidence, issues, rationale.

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// One reviewer's assessment of one artifact.
///
/// Build it in code, or read it from JSON or YAML with [`crate::parse_document`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Review {
    /// Score per criterion name, on the rubric's scale.
    pub rubric_scores: BTreeMap<String, f64>,
    /// How sure the reviewer is, 0..1; `None` when it did not say (which is unclear).
    pub confidence: Option<f64>,
    /// Every issue raised, blocking or not.
    pub issues: Vec<Issue>,
    /// The reviewer's explanation.
    pub rationale: Option<String>,
    /// The rubric's focus areas this review was asked to cover (`rubric_focus`), as
    /// written; matched to the rubric's areas regardless of case. A red flag of a focused
    /// area fails the review.
    pub rubric_focus: Vec<String>,
    /// Red flags raised by id (`red_flags`), besides those that issues carry in their
    /// `red_flag`.
    pub red_flags: Vec<String>,
}

/// One issue a reviewer raised.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Issue {
    /// How serious it is; decides whether it blocks.
    pub severity: Severity,
    /// Kind of problem (`bug`, `security`, ...), as the reviewer named it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// File the issue is in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// 1-based line in `file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// In a council's merged issues: how many members raised it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raised_by: Option<usize>,
    /// The id of a rubric red flag this issue is an instance of (`sql_injection`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub red_flag: Option<String>,
}

impl Issue {
    /// An issue with a severity and a message and nothing else.
    pub fn new(severity: Severity, message: impl Into<String>) -> Issue {
        Issue {
            severity,
            category: None,
            file: None,
            line: None,
            message: message.into(),
            suggestion: None,
            raised_by: None,
            red_flag: None,
        }
    }

    /// Marks the issue as an instance of the rubric red flag `id`.
    pub fn red_flag(mut self, id: impl Into<String>) -> Issue {
        self.red_flag = Some(id.into());
        self
    }

    /// Sets the file and line.
    pub fn at(mut self, file: impl Into<String>, line: u64) -> Issue {
        self.file = Some(file.into());
        self.line = Some(line);
        self
    }

    /// Sets the category.
    pub fn category(mut self, category: impl Into<String>) -> Issue {
        self.category = Some(category.into());
        self
    }

    /// `file:line`, `file`, or `None` when the issue has no location.
    pub fn location(&self) -> Option<String> {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => Some(format!("{file}:{line}")),
            (Some(file), None) => Some(file.clone()),
            (None, Some(line)) => Some(format!("line {line}")),
            (None, None) => None,
        }
    }
}

/// The severity of an issue. Critical and major issues block; minor ones are suggestions;
/// anything the scorer does not recognise, or no severity at all, blocks (fail closed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Severity {
    /// Blocks: a defect that must not ship.
    Critical,
    /// Blocks (`high` reads as major).
    Major,
    /// A suggestion (`low` reads as minor).
    Minor,
    /// A severity the scorer does not know, as written; blocks.
    Unrecognised(String),
    /// No severity given; blocks.
    Missing,
}

impl Severity {
    /// Reads a severity as a reviewer wrote it: case-insensitive, `high` = major; `low`,
    /// `nit`, `nitpick`, `info`, `trivial`, `suggestion` and `style` = minor; anything else
    /// [`Severity::Unrecognised`] (which blocks), `None` [`Severity::Missing`].
    pub fn parse(text: Option<&str>) -> Severity {
        let Some(text) = text else { return Severity::Missing };
        match text.trim().to_ascii_lowercase().as_str() {
            "critical" => Severity::Critical,
            "major" | "high" => Severity::Major,
            // Words reviewers use for what should not block: suggestions, documented in
            // docs/scoring.md.
            "minor" | "low" | "nit" | "nitpick" | "info" | "trivial" | "suggestion" | "style" => {
                Severity::Minor
            }
            _ => Severity::Unrecognised(text.to_owned()),
        }
    }

    /// True unless the severity is minor.
    pub fn is_blocking(&self) -> bool {
        !matches!(self, Severity::Minor)
    }

    /// Order for keeping "the highest severity" when a council merges issues: minor, then
    /// unrecognised or missing (they block, but say less than major), major, critical.
    pub fn rank(&self) -> u8 {
        match self {
            Severity::Minor => 0,
            Severity::Unrecognised(_) | Severity::Missing => 1,
            Severity::Major => 2,
            Severity::Critical => 3,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Severity::Critical => f.write_str("critical"),
            Severity::Major => f.write_str("major"),
            Severity::Minor => f.write_str("minor"),
            Severity::Unrecognised(text) => f.write_str(text),
            Severity::Missing => f.write_str("no severity"),
        }
    }
}

impl Serialize for Severity {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Severity::Missing => serializer.serialize_none(),
            other => serializer.collect_str(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severities_are_case_insensitive_with_aliases_and_fail_closed() {
        assert_eq!(Severity::parse(Some("MAJOR")), Severity::Major);
        assert_eq!(Severity::parse(Some("High")), Severity::Major);
        assert_eq!(Severity::parse(Some("low")), Severity::Minor);
        assert_eq!(Severity::parse(Some("Critical")), Severity::Critical);
        assert_eq!(Severity::parse(Some("weird")), Severity::Unrecognised("weird".into()));
        assert_eq!(Severity::parse(None), Severity::Missing);
        assert!(Severity::parse(Some("weird")).is_blocking());
        assert!(Severity::Missing.is_blocking());
        assert!(!Severity::parse(Some("LOW")).is_blocking());
    }

    #[test]
    fn locations_read_naturally() {
        assert_eq!(Issue::new(Severity::Minor, "m").at("a.rs", 3).location().as_deref(), Some("a.rs:3"));
        assert_eq!(Issue::new(Severity::Minor, "m").location(), None);
    }
}
