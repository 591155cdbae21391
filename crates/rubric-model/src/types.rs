//! The rubric document: every type of the format, with serde and JSON Schema derives.
//!
//! Field names are exactly the format's; unknown fields are rejected.

use crate::schema_parts;
use crate::text_map::TextMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One rubric: how to score one kind of artifact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "revcal rubric", description = "A versioned scoring rubric for one kind of artifact.")]
pub struct Rubric {
    /// The JSON Schema the file follows, for editors (JSON files cannot carry the
    /// `yaml-language-server` comment that YAML files use).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Unique id in the library, lower snake_case, e.g. `code_review_v1`.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]*$"))]
    pub rubric_id: String,
    /// Human-readable name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Semantic version, exactly `MAJOR.MINOR.PATCH`.
    #[schemars(regex(pattern = r"^\d+\.\d+\.\d+$"))]
    pub version: String,
    /// What the rubric scores, lower snake_case, e.g. `jira_tickets`.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]*$"))]
    pub artifact_type: String,
    /// What the rubric is for and how to apply it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The integer scale every criterion is scored on (default 1..5).
    #[serde(default)]
    pub scale: Scale,
    /// The criteria, in the order a scorer should present them.
    #[schemars(length(min = 1))]
    pub criteria: Vec<Criterion>,
    /// Patterns that must not appear in the artifact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub negative_criteria: Vec<NegativeCriterion>,
    /// Caps on the overall score when one criterion scores low.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ceilings: Vec<Ceiling>,
    /// Domain-specific areas a review may focus on (security, performance, ...), each with
    /// the checks it adds and the red flags that fail a review focused on it
    /// (docs/rubric-format.md, "focus_areas").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub focus_areas: Vec<FocusArea>,
    /// Verdict thresholds.
    pub scoring: Scoring,
    /// Human-labelled examples for checking a judge against people (RFC 3986 URI reference,
    /// relative to the rubric file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "uri-reference"))]
    pub calibration_dataset: Option<String>,
}

impl Rubric {
    /// `rubric_id@version`, the name a score report uses for the rubric.
    pub fn key(&self) -> String {
        format!("{}@{}", self.rubric_id, self.version)
    }

    /// The criterion called `name`.
    pub fn criterion(&self, name: &str) -> Option<&Criterion> {
        self.criteria.iter().find(|c| c.name == name)
    }

    /// The focus area called `name`, compared case-insensitively (`security` finds
    /// `Security`), as reviews name their focus.
    pub fn focus_area(&self, name: &str) -> Option<&FocusArea> {
        let name = name.trim();
        self.focus_areas.iter().find(|area| area.name.eq_ignore_ascii_case(name))
    }

    /// The red flag with id `id` and the focus area that defines it. Red-flag ids are
    /// unique across a valid rubric; with duplicates the first definition wins.
    pub fn red_flag(&self, id: &str) -> Option<(&FocusArea, &RedFlag)> {
        self.focus_areas
            .iter()
            .find_map(|area| area.red_flags.iter().find(|flag| flag.id == id).map(|flag| (area, flag)))
    }

    /// True when the criteria carry shares (all of them do, once the rubric validates).
    pub fn has_shares(&self) -> bool {
        self.criteria.iter().any(|c| c.share.is_some())
    }

    /// The rubric as a model reads it in a prompt: its id, name, artifact type, scale and
    /// description, then each criterion with its description, threshold and anchors (and its
    /// examples when `with_examples`: a scorer of artifacts uses them, a reviewer needs only
    /// the anchors).
    pub fn prompt_text(&self, with_examples: bool) -> String {
        use std::fmt::Write as _;
        let mut text = format!(
            "RUBRIC {} ({}), for artifacts of type {}.\nScale: {} (worst) to {} (best).\n",
            self.rubric_id, self.name, self.artifact_type, self.scale.min, self.scale.max
        );
        if let Some(description) = &self.description {
            let _ = writeln!(text, "{}", description.trim());
        }
        for criterion in &self.criteria {
            let _ = writeln!(text, "\nCRITERION {}: {}", criterion.name, criterion.description.trim());
            let _ =
                writeln!(text, "  threshold (a passing artifact scores at least): {}", criterion.threshold);
            for (key, anchor) in criterion.anchors.iter() {
                let _ = writeln!(text, "  anchor {key}: {}", anchor.trim());
            }
            if with_examples {
                for (key, example) in criterion.examples.iter() {
                    let _ = writeln!(text, "  example {key}: {}", example.trim());
                }
            }
        }
        text
    }
}

/// An inclusive integer scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(example = Scale { min: 1, max: 10 })]
pub struct Scale {
    /// Lowest score.
    pub min: u32,
    /// Highest score.
    pub max: u32,
}

impl Default for Scale {
    fn default() -> Self {
        Scale { min: 1, max: 5 }
    }
}

impl Scale {
    /// True when `value` lies inside `min..=max` (NaN never does).
    pub fn contains(&self, value: f64) -> bool {
        value >= f64::from(self.min) && value <= f64::from(self.max)
    }

    /// Number of points on the scale.
    pub fn points(&self) -> u32 {
        self.max.saturating_sub(self.min) + 1
    }
}

/// Essential criteria gate the verdict; important ones only weigh in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Weight {
    /// Must meet `essential_minimum` for the artifact to pass.
    Essential,
    /// Contributes to the score without gating it.
    Important,
}

/// One scored aspect of the artifact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Criterion {
    /// Name, unique within the rubric, lower snake_case.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]*$"))]
    pub name: String,
    /// What the criterion measures.
    #[schemars(length(min = 1))]
    pub description: String,
    /// `essential` or `important`.
    pub weight: Weight,
    /// Share of the overall score, in (0, 1]; all criteria have one or none do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 1.0), extend("exclusiveMinimum" = 0.0))]
    pub share: Option<f64>,
    /// Minimum acceptable score for this criterion, inside the scale.
    pub threshold: f64,
    /// What each point of the scale looks like: keys are points (`3`) or bands (`9-10`).
    #[schemars(schema_with = "schema_parts::anchors")]
    pub anchors: TextMap,
    /// Example artifacts: `score_<n>` keys, at least the scale's minimum and maximum.
    #[schemars(schema_with = "schema_parts::examples")]
    pub examples: TextMap,
}

/// Patterns that fail the artifact outright when they appear in it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NegativeCriterion {
    /// Name, unique among the negative criteria.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]*$"))]
    pub name: String,
    /// Why these patterns are unacceptable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Regular expressions (or plain text when `literal`), matched case-insensitively.
    #[schemars(length(min = 1))]
    pub fail_patterns: Vec<String>,
    /// Treat the patterns as plain text rather than regular expressions.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub literal: bool,
}

impl NegativeCriterion {
    /// Compiles the patterns into case-insensitive matchers.
    pub fn matchers(&self) -> Result<Vec<regex::Regex>, regex::Error> {
        self.fail_patterns.iter().map(|pattern| compile_pattern(pattern, self.literal)).collect()
    }
}

/// Compiles one fail pattern the way scoring matches it: case-insensitive, and escaped
/// first when the criterion is literal.
pub fn compile_pattern(pattern: &str, literal: bool) -> Result<regex::Regex, regex::Error> {
    let source = if literal { regex::escape(pattern) } else { pattern.to_owned() };
    regex::RegexBuilder::new(&source).case_insensitive(true).size_limit(1 << 20).build()
}

/// Caps the overall score when `criterion` scores below `below`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ceiling {
    /// The criterion whose score triggers the cap.
    pub criterion: String,
    /// The cap applies when the criterion scores strictly below this.
    pub below: f64,
    /// The highest overall score allowed while the cap applies.
    pub cap: f64,
}

/// A domain a review may focus on: the checks a focused reviewer adds, and the red flags
/// that fail a review focused on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FocusArea {
    /// Name, unique within the rubric regardless of case (`Security`); reviews name it
    /// case-insensitively in `rubric_focus`.
    #[schemars(regex(pattern = r"^[A-Za-z][A-Za-z0-9_-]*$"))]
    pub name: String,
    /// What the area covers.
    #[schemars(length(min = 1))]
    pub description: String,
    /// What a reviewer focused on this area checks, one instruction per item.
    #[schemars(length(min = 1))]
    pub checks: Vec<String>,
    /// Findings that fail a review focused on this area.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub red_flags: Vec<RedFlag>,
}

/// A finding that fails a review focused on its area, whatever the scores.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedFlag {
    /// Id, lower snake_case and unique across the rubric, e.g. `sql_injection`; reviews
    /// raise the flag by this id.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]*$"))]
    pub id: String,
    /// What the red flag is, in words a reviewer can recognise.
    #[schemars(length(min = 1))]
    pub description: String,
}

/// Thresholds that turn scores into a verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scoring {
    /// The overall score needed to pass, inside the scale.
    pub pass_threshold: f64,
    /// Every essential criterion must reach this, inside the scale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub essential_minimum: Option<f64>,
    /// Reviews less confident than this are unclear (0..1, default 0.7).
    #[serde(default = "default_confidence_threshold")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence_threshold: f64,
}

/// The default `confidence_threshold`.
pub const DEFAULT_CONFIDENCE_THRESHOLD: f64 = 0.7;

fn default_confidence_threshold() -> f64 {
    DEFAULT_CONFIDENCE_THRESHOLD
}
