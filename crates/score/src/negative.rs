//! Negative criteria: patterns that fail an artifact outright, found with their line.

use crate::error::ScoreError;
use regex::Regex;
use revcal_rubric_model::Rubric;
use serde::Serialize;

/// Where a fail pattern of a negative criterion matched the artifact text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PatternMatch {
    /// The negative criterion.
    pub criterion: String,
    /// The pattern as the rubric writes it.
    pub pattern: String,
    /// 1-based line of the match in the artifact.
    pub line: usize,
    /// 1-based column (in characters) of the match.
    pub column: usize,
    /// The text that matched.
    pub matched: String,
}

/// A rubric's fail patterns, compiled once.
#[derive(Debug, Clone)]
pub(crate) struct NegativePatterns {
    patterns: Vec<(String, String, Regex)>,
}

impl NegativePatterns {
    pub(crate) fn compile(rubric: &Rubric) -> Result<NegativePatterns, ScoreError> {
        let mut patterns = Vec::new();
        for criterion in &rubric.negative_criteria {
            for pattern in &criterion.fail_patterns {
                let regex =
                    revcal_rubric_model::compile_pattern(pattern, criterion.literal).map_err(|cause| {
                        ScoreError::Pattern {
                            criterion: criterion.name.clone(),
                            pattern: pattern.clone(),
                            cause,
                        }
                    })?;
                patterns.push((criterion.name.clone(), pattern.clone(), regex));
            }
        }
        Ok(NegativePatterns { patterns })
    }

    /// Every match of every pattern in `text`, in criterion order, then by position.
    pub(crate) fn find(&self, text: &str) -> Vec<PatternMatch> {
        let line_starts: Vec<usize> =
            std::iter::once(0).chain(text.match_indices('\n').map(|(at, _)| at + 1)).collect();
        let mut found = Vec::new();
        for (criterion, pattern, regex) in &self.patterns {
            for hit in regex.find_iter(text).filter(|hit| !hit.is_empty()) {
                let line = line_starts.partition_point(|start| *start <= hit.start());
                let start_of_line = line_starts[line.saturating_sub(1)];
                found.push(PatternMatch {
                    criterion: criterion.clone(),
                    pattern: pattern.clone(),
                    line,
                    column: text[start_of_line..hit.start()].chars().count() + 1,
                    matched: hit.as_str().to_owned(),
                });
            }
        }
        found
    }
}
