//! Rule identifiers, severities and the issues that semantic checks report.

use serde::Serialize;
use std::fmt;

/// A lint rule. Every diagnostic revcal reports about a rubric names one.
///
/// The ids (`RL-02`, `SHARE`, ...) are stable: tools may match on them. Rules are added as
/// the format grows, so a `match` on a rule needs a wildcard arm:
///
/// ```compile_fail
/// use revcal_rubric_model::Rule;
///
/// fn every_rule_named(rule: Rule) -> &'static str {
///     match rule {
///         Rule::DuplicateId | Rule::Anchors | Rule::Examples | Rule::Version => "rl",
///         Rule::Threshold | Rule::Weight | Rule::CalibrationDataset => "rl",
///         Rule::Schema | Rule::Scale | Rule::Name | Rule::Share | Rule::Ceiling => "format",
///         Rule::Pattern | Rule::Focus | Rule::Yaml | Rule::File => "format",
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Rule {
    /// RL-01 (also RL-08): a `rubric_id` defined by two files of one library.
    DuplicateId,
    /// RL-02: anchors cover every point of the scale exactly once.
    Anchors,
    /// RL-03: examples exist for the scale's minimum and maximum.
    Examples,
    /// RL-04: `version` is `MAJOR.MINOR.PATCH`.
    Version,
    /// RL-05: thresholds lie inside the scale.
    Threshold,
    /// RL-06: `weight` is `essential` or `important`.
    Weight,
    /// RL-09: `calibration_dataset` is a valid URI reference.
    CalibrationDataset,
    /// SCHEMA: types, required fields, unknown fields.
    Schema,
    /// SCALE: the scale is a non-empty integer range of reasonable size.
    Scale,
    /// NAME: criterion and negative-criterion names are unique within a rubric.
    Name,
    /// SHARE: shares are all-or-none, each in (0, 1], summing to 1.0.
    Share,
    /// CEILING: a ceiling names an existing criterion and stays inside the scale.
    Ceiling,
    /// PATTERN: `fail_patterns` compile, and a bare `.` is probably a mistake.
    Pattern,
    /// FOCUS: focus-area names are unique regardless of case, and red-flag ids are unique
    /// across the rubric (a review raises a flag by its id alone).
    Focus,
    /// YAML: syntax errors and duplicate keys.
    Yaml,
    /// FILE: the file cannot be read or is not a text document (binary, not UTF-8, too large, empty).
    File,
}

impl Rule {
    /// Every rule, in the order the documentation lists them.
    pub const ALL: [Rule; 16] = [
        Rule::DuplicateId,
        Rule::Anchors,
        Rule::Examples,
        Rule::Version,
        Rule::Threshold,
        Rule::Weight,
        Rule::CalibrationDataset,
        Rule::Schema,
        Rule::Scale,
        Rule::Name,
        Rule::Share,
        Rule::Ceiling,
        Rule::Pattern,
        Rule::Focus,
        Rule::Yaml,
        Rule::File,
    ];

    /// The stable rule id, e.g. `RL-05` or `SHARE`.
    pub fn id(self) -> &'static str {
        match self {
            Rule::DuplicateId => "RL-01",
            Rule::Anchors => "RL-02",
            Rule::Examples => "RL-03",
            Rule::Version => "RL-04",
            Rule::Threshold => "RL-05",
            Rule::Weight => "RL-06",
            Rule::CalibrationDataset => "RL-09",
            Rule::Schema => "SCHEMA",
            Rule::Scale => "SCALE",
            Rule::Name => "NAME",
            Rule::Share => "SHARE",
            Rule::Ceiling => "CEILING",
            Rule::Pattern => "PATTERN",
            Rule::Focus => "FOCUS",
            Rule::Yaml => "YAML",
            Rule::File => "FILE",
        }
    }

    /// One line saying what the rule checks.
    pub fn summary(self) -> &'static str {
        match self {
            Rule::DuplicateId => "rubric_id is unique across the library",
            Rule::Anchors => "anchors cover every point of the scale exactly once",
            Rule::Examples => "examples exist for the scale's minimum and maximum",
            Rule::Version => "version is MAJOR.MINOR.PATCH",
            Rule::Threshold => "threshold, pass_threshold and essential_minimum lie inside the scale",
            Rule::Weight => "weight is essential or important",
            Rule::CalibrationDataset => "calibration_dataset is a valid URI reference",
            Rule::Schema => "types, required fields and unknown fields match the schema",
            Rule::Scale => "the scale is an integer range with min < max",
            Rule::Name => "criterion names are unique within the rubric",
            Rule::Share => "shares are all-or-none, each in (0, 1], summing to 1.0",
            Rule::Ceiling => "ceilings name an existing criterion and stay inside the scale",
            Rule::Pattern => "fail_patterns compile as regular expressions",
            Rule::Focus => "focus-area names and red-flag ids are unique within the rubric",
            Rule::Yaml => "the file is well-formed YAML or JSON without duplicate keys",
            Rule::File => "the file is a readable UTF-8 text document",
        }
    }

    /// Looks a rule up by its id (`"RL-05"`, `"share"`; case-insensitive).
    pub fn from_id(id: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|rule| {
            rule.id().eq_ignore_ascii_case(id)
                || (id.eq_ignore_ascii_case("RL-08") && *rule == Rule::DuplicateId)
        })
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

/// How serious a diagnostic is. Warnings never fail a lint unless the caller denies them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LintSeverity {
    /// Breaks the contract: the rubric cannot be used.
    Error,
    /// Probably a mistake, but the rubric still works.
    Warning,
}

impl fmt::Display for LintSeverity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LintSeverity::Error => "error",
            LintSeverity::Warning => "warning",
        })
    }
}

/// A second place in the same document that an issue refers to
/// (for example the first definition of a duplicated name).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Related {
    /// JSON pointer of the other place.
    pub pointer: String,
    /// What the other place is, e.g. "first defined here".
    pub note: String,
}

/// One problem found in a rubric, located by a JSON pointer into the document.
///
/// The pointer addresses the offending node (`/criteria/0/threshold`); a loader that
/// kept source positions turns it into a file, line and column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LintIssue {
    /// The rule that was broken.
    pub rule: Rule,
    /// Error or warning.
    pub severity: LintSeverity,
    /// JSON pointer (RFC 6901) to the offending node; `""` is the whole document.
    pub pointer: String,
    /// What is wrong, in one sentence.
    pub message: String,
    /// How to fix it, when there is something useful to say.
    pub hint: Option<String>,
    /// Another place in the document that the message refers to.
    pub related: Option<Related>,
}

impl LintIssue {
    /// An error for `rule` at `pointer`.
    pub fn error(rule: Rule, pointer: impl Into<String>, message: impl Into<String>) -> LintIssue {
        LintIssue {
            rule,
            severity: LintSeverity::Error,
            pointer: pointer.into(),
            message: message.into(),
            hint: None,
            related: None,
        }
    }

    /// A warning for `rule` at `pointer`.
    pub fn warning(rule: Rule, pointer: impl Into<String>, message: impl Into<String>) -> LintIssue {
        LintIssue { severity: LintSeverity::Warning, ..LintIssue::error(rule, pointer, message) }
    }

    /// Adds a fix hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> LintIssue {
        self.hint = Some(hint.into());
        self
    }

    /// Adds a hint only when there is one.
    pub fn with_optional_hint(mut self, hint: Option<String>) -> LintIssue {
        self.hint = hint;
        self
    }

    /// Points at a second place in the document.
    pub fn with_related(mut self, pointer: impl Into<String>, note: impl Into<String>) -> LintIssue {
        self.related = Some(Related { pointer: pointer.into(), note: note.into() });
        self
    }
}
