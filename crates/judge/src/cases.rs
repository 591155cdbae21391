//! The judge's labelled set and the measurement of a judge against it
//! (docs/judge.md#judge-calibration): how often the judge agrees with the labels, how often it
//! calls a non-identifying finding a match (false match) and how often it misses a correct
//! one (false miss).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Judge, JudgeError, JudgeRequest, JudgedFinding, JudgedPlant};

/// The labelled set shipped with revcal (`crates/judge/data/judge-cases.yaml`).
const SHIPPED: &str = include_str!("../data/judge-cases.yaml");

/// One labelled case: a planted defect, a finding at its line, and whether the finding
/// identifies the defect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeCase {
    /// A stable name.
    pub id: String,
    /// What kind of finding it is (`correct`, `plain-words`, `echo`, `wrong-defect`, `vague`,
    /// `injection-finding`, `injection-code`).
    pub kind: String,
    /// The language of the code (`python`, `javascript`, `rust`).
    pub language: String,
    /// Whether the finding identifies the defect.
    pub expected: bool,
    /// The planted defect.
    pub plant: JudgedPlant,
    /// The finding.
    pub finding: JudgedFinding,
}

impl JudgeCase {
    /// The question this case asks a judge.
    pub fn request(&self) -> JudgeRequest {
        JudgeRequest { plant: self.plant.clone(), finding: self.finding.clone() }
    }
}

/// Reads a labelled set (a YAML or JSON list of [`JudgeCase`]s).
///
/// A set nested deeper than 64 levels is refused before it is deserialized.
pub fn parse_judge_cases(text: &str) -> Result<Vec<JudgeCase>, JudgeError> {
    crate::yaml::check_nesting(text).map_err(|(line, message)| JudgeError::CasesShape { line, message })?;
    crate::yaml::from_str(text).map_err(JudgeError::Cases)
}

/// The labelled set shipped with revcal.
pub fn shipped_judge_cases() -> Result<Vec<JudgeCase>, JudgeError> {
    parse_judge_cases(SHIPPED)
}

/// What a judge said about one case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseOutcome {
    /// The case's id.
    pub id: String,
    /// The case's kind.
    pub kind: String,
    /// The label.
    pub expected: bool,
    /// The verdict; `None` when the judge gave none.
    pub verdict: Option<bool>,
    /// Why there is no verdict.
    pub error: Option<String>,
}

impl CaseOutcome {
    /// The verdict equals the label.
    pub fn agrees(&self) -> bool {
        self.verdict == Some(self.expected)
    }
}

/// Agreement of one kind of case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindScore {
    /// Cases of this kind.
    pub cases: usize,
    /// Of those, verdicts equal to the label.
    pub agreed: usize,
}

/// A judge measured against a labelled set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JudgeCalibration {
    /// Cases asked.
    pub cases: usize,
    /// Verdicts equal to the label.
    pub agreed: usize,
    /// agreed / cases (a case without a verdict counts against it).
    pub agreement: f64,
    /// Cases labelled "no match" that the judge matched.
    pub false_matches: usize,
    /// false matches / cases labelled "no match"; `None` without such cases.
    pub false_match_rate: Option<f64>,
    /// Cases labelled "match" that the judge did not match.
    pub false_misses: usize,
    /// false misses / cases labelled "match"; `None` without such cases.
    pub false_miss_rate: Option<f64>,
    /// Cases without a verdict (errors), apart from misses.
    pub errors: usize,
    /// Agreement per kind of case.
    pub per_kind: BTreeMap<String, KindScore>,
    /// Every case's outcome, in order.
    pub outcomes: Vec<CaseOutcome>,
}

/// Asks `judge` about every case; `progress` sees each outcome as it comes. A judge error
/// is recorded against its case (never as a match), except a spent budget, which stops.
pub fn calibrate_judge(
    judge: &dyn Judge,
    cases: &[JudgeCase],
    mut progress: impl FnMut(&CaseOutcome),
) -> Result<JudgeCalibration, JudgeError> {
    let mut outcomes = Vec::with_capacity(cases.len());
    for case in cases {
        let (verdict, error) = match judge.judge(&case.request()) {
            Ok(verdict) => (Some(verdict), None),
            Err(error @ JudgeError::Budget { .. }) => return Err(error),
            Err(error) => (None, Some(error_chain(&error))),
        };
        let outcome = CaseOutcome {
            id: case.id.clone(),
            kind: case.kind.clone(),
            expected: case.expected,
            verdict,
            error,
        };
        progress(&outcome);
        outcomes.push(outcome);
    }
    Ok(summarise(outcomes))
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn summarise(outcomes: Vec<CaseOutcome>) -> JudgeCalibration {
    let ratio = |part: usize, whole: usize| (whole > 0).then(|| part as f64 / whole as f64);
    let agreed = outcomes.iter().filter(|o| o.agrees()).count();
    let false_matches = outcomes.iter().filter(|o| !o.expected && o.verdict == Some(true)).count();
    let false_misses = outcomes.iter().filter(|o| o.expected && o.verdict == Some(false)).count();
    let negatives = outcomes.iter().filter(|o| !o.expected).count();
    let positives = outcomes.len() - negatives;
    let mut per_kind: BTreeMap<String, KindScore> = BTreeMap::new();
    for outcome in &outcomes {
        let score = per_kind.entry(outcome.kind.clone()).or_insert(KindScore { cases: 0, agreed: 0 });
        score.cases += 1;
        score.agreed += usize::from(outcome.agrees());
    }
    JudgeCalibration {
        cases: outcomes.len(),
        agreed,
        agreement: ratio(agreed, outcomes.len()).unwrap_or(0.0),
        false_matches,
        false_match_rate: ratio(false_matches, negatives),
        false_misses,
        false_miss_rate: ratio(false_misses, positives),
        errors: outcomes.iter().filter(|o| o.verdict.is_none()).count(),
        per_kind,
        outcomes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_nested_past_the_limit_is_refused_at_its_line() {
        let deep = format!("- id: a\n  plant: {}", "[".repeat(100_000));
        let error = parse_judge_cases(&deep).unwrap_err();
        assert!(matches!(error, JudgeError::CasesShape { line: 2, .. }), "{error:?}");
        assert!(error.to_string().contains("nested deeper than 64 levels"), "{error}");
    }
}
