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
    /// Cases not asked because an error stopped the run (0 for a complete run): the figures
    /// above are then of the cases asked only.
    #[serde(default)]
    pub unasked: usize,
    /// The error that stopped the run before every case was asked; `None` for a complete run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
}

impl JudgeCalibration {
    /// Whether an error stopped the run before every case was asked.
    pub fn is_partial(&self) -> bool {
        self.stopped_by.is_some()
    }
}

/// Asks `judge` about every case; `progress` sees each outcome as it comes.
///
/// An error that concerns one answer (a bad answer, a judge command that printed no verdict,
/// an HTTP error about that request) is recorded against its case, never as a match. An
/// error that every further question would meet too (a spent budget, a refused key, an
/// exhausted quota, a server that keeps failing or cannot be reached, a refused structured
/// output, a judge command that cannot start) stops the run: the measurement returned is of
/// the cases asked so far, with [`JudgeCalibration::stopped_by`] set and the rest counted in
/// [`JudgeCalibration::unasked`]. `Err` is kept for errors that prevent any measurement.
pub fn calibrate_judge(
    judge: &dyn Judge,
    cases: &[JudgeCase],
    mut progress: impl FnMut(&CaseOutcome),
) -> Result<JudgeCalibration, JudgeError> {
    let mut outcomes = Vec::with_capacity(cases.len());
    for (asked, case) in cases.iter().enumerate() {
        let (verdict, error) = match judge.judge(&case.request()) {
            Ok(verdict) => (Some(verdict), None),
            Err(error) if stops_the_run(&error) => {
                let mut measured = summarise(outcomes);
                measured.unasked = cases.len() - asked;
                measured.stopped_by = Some(error_chain(&error));
                return Ok(measured);
            }
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

/// Whether every further question would meet `error` too, so that asking on only spends.
fn stops_the_run(error: &JudgeError) -> bool {
    matches!(
        error,
        JudgeError::Budget { .. }
            | JudgeError::Unauthorized { .. }
            | JudgeError::Quota { .. }
            | JudgeError::GaveUp { .. }
            | JudgeError::Transport { .. }
            | JudgeError::Redirect { .. }
            | JudgeError::StructuredOutputRefused { .. }
            | JudgeError::Spawn { .. }
            | JudgeError::MissingKey { .. }
    )
}

/// A deterministic sample of `n` of `cases` for `seed`, spread over the kinds of case (each
/// kind gives its first case before any gives a second), in the order of `cases`. All of them
/// when `n` is at least their number.
///
/// The same cases, seed and `n` give the same sample on every machine and release: the order
/// within a kind is a fixed hash of the seed and the case's id.
pub fn sample_judge_cases(cases: &[JudgeCase], n: usize, seed: u64) -> Vec<JudgeCase> {
    if n >= cases.len() {
        return cases.to_vec();
    }
    let mut by_kind: BTreeMap<&str, Vec<(u64, usize)>> = BTreeMap::new();
    for (index, case) in cases.iter().enumerate() {
        by_kind.entry(&case.kind).or_default().push((rank(seed, &case.id), index));
    }
    let mut keyed: Vec<(usize, u64, usize)> = Vec::with_capacity(cases.len());
    for ranked in by_kind.values_mut() {
        ranked.sort_unstable();
        keyed.extend(ranked.iter().enumerate().map(|(place, &(rank, index))| (place, rank, index)));
    }
    keyed.sort_unstable();
    let mut chosen: Vec<usize> = keyed.into_iter().take(n).map(|(_, _, index)| index).collect();
    chosen.sort_unstable();
    chosen.into_iter().map(|index| cases[index].clone()).collect()
}

/// A fixed 64-bit hash of `seed` and `id` (FNV-1a, then SplitMix64's finaliser to spread it).
fn rank(seed: u64, id: &str) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64 ^ seed;
    for byte in id.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash = (hash ^ (hash >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash = (hash ^ (hash >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^ (hash >> 31)
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
        unasked: 0,
        stopped_by: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_is_deterministic_spread_over_kinds_and_in_the_sets_order() {
        let cases = shipped_judge_cases().unwrap();
        let sample = sample_judge_cases(&cases, 12, 7);
        assert_eq!(sample.len(), 12);
        assert_eq!(sample, sample_judge_cases(&cases, 12, 7), "same seed, same sample");
        assert_ne!(sample, sample_judge_cases(&cases, 12, 8), "another seed, another sample");
        let kinds: std::collections::BTreeSet<&str> = cases.iter().map(|c| c.kind.as_str()).collect();
        let sampled: std::collections::BTreeSet<&str> = sample.iter().map(|c| c.kind.as_str()).collect();
        assert_eq!(sampled, kinds, "every kind is in a sample at least as large as the kinds");
        let positions: Vec<usize> =
            sample.iter().map(|s| cases.iter().position(|c| c.id == s.id).unwrap()).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "in the set's order: {positions:?}");
        assert_eq!(sample_judge_cases(&cases, 500, 7), cases);
        assert!(sample_judge_cases(&cases, 0, 7).is_empty());
    }

    #[test]
    fn a_set_nested_past_the_limit_is_refused_at_its_line() {
        let deep = format!("- id: a\n  plant: {}", "[".repeat(100_000));
        let error = parse_judge_cases(&deep).unwrap_err();
        assert!(matches!(error, JudgeError::CasesShape { line: 2, .. }), "{error:?}");
        assert!(error.to_string().contains("nested deeper than 64 levels"), "{error}");
    }
}
