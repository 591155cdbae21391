//! The scoring algorithm of docs/scoring.md#2-the-algorithm, driven entirely by the rubric.

use crate::error::{Problem, ScoreError};
use crate::negative::{NegativePatterns, PatternMatch};
use crate::number::{format_score, round};
use crate::reason::Reason;
use crate::review::{Issue, Review};
use revcal_rubric_model::{Ceiling, FocusArea, Rubric, Weight, suggest};
use serde::Serialize;
use std::fmt;

/// The outcome of scoring, and the exit code `revcal score` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Good enough.
    Pass,
    /// Not good enough.
    Fail,
    /// Cannot tell (low or missing confidence, or a score below a threshold that fails nothing).
    Unclear,
}

impl Verdict {
    /// `pass`, `fail` or `unclear`, as the JSON report writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Unclear => "unclear",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_str().to_ascii_uppercase())
    }
}

/// One criterion's line of the score table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriterionResult {
    /// Criterion name.
    pub name: String,
    /// Essential or important.
    pub weight: Weight,
    /// The review's score (rounded to nine decimals, like every number of an evaluation).
    pub score: f64,
    /// The criterion's threshold.
    pub threshold: f64,
    /// Its share of the weighted score, when the rubric gives shares.
    pub share: Option<f64>,
    /// What it adds to the weighted score: share x score, or score / n without shares.
    pub contribution: f64,
    /// True when the score is below the threshold.
    pub below_threshold: bool,
}

/// A red flag a review raised, as the report lists it: which area defines it, and
/// whether that area was in the review's focus (then the flag fails the review).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RaisedFlag {
    /// The red flag's id in the rubric.
    pub id: String,
    /// The focus area that defines it.
    pub area: String,
    /// The rubric's description of the flag.
    pub description: String,
    /// True when its area is in the review's focus: the flag is then a FAIL reason.
    pub in_focus: bool,
    /// In a council's combined result: how many members raised it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raised_by: Option<usize>,
}

/// A scored review: every number, the issues sorted into blocking and suggestions, and
/// every reason behind the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// The rubric, as `rubric_id@version`.
    pub rubric: String,
    /// The review's confidence (for a council: mean member confidence x agreement).
    pub confidence: Option<f64>,
    /// One entry per rubric criterion, in rubric order.
    pub criteria: Vec<CriterionResult>,
    /// Sum of share x score (mean score without shares), before ceilings.
    pub weighted_score: f64,
    /// Every ceiling whose criterion scored below its `below`, in rubric order.
    pub ceilings_applied: Vec<Ceiling>,
    /// The weighted score capped by the lowest applied ceiling.
    pub final_score: f64,
    /// Issues that block: critical, major, unrecognised or missing severity.
    pub blocking_issues: Vec<Issue>,
    /// Minor issues.
    pub suggestions: Vec<Issue>,
    /// Matches of the rubric's negative criteria in the artifact.
    pub negative_matches: Vec<PatternMatch>,
    /// False when no artifact text was given, so negative criteria were not checked.
    pub artifact_checked: bool,
    /// Reasons for FAIL (empty unless the verdict is FAIL).
    pub fail_reasons: Vec<Reason>,
    /// Reasons for UNCLEAR. They are computed for every review, so a FAIL also says what
    /// would still stand in the way once its fail reasons are fixed.
    pub unclear_reasons: Vec<Reason>,
    /// The reviewer's rationale.
    pub rationale: Option<String>,
    /// The focus areas the review covered, as the rubric names them, each once.
    pub focus: Vec<String>,
    /// Every red flag raised (by `red_flags` or by an issue's `red_flag`), each once, in
    /// the order first raised; those of focused areas are also fail reasons.
    pub red_flags: Vec<RaisedFlag>,
}

impl Evaluation {
    /// FAIL when any fail reason holds, else UNCLEAR when any unclear reason holds, else PASS.
    pub fn verdict(&self) -> Verdict {
        if !self.fail_reasons.is_empty() {
            Verdict::Fail
        } else if !self.unclear_reasons.is_empty() {
            Verdict::Unclear
        } else {
            Verdict::Pass
        }
    }

    /// True when a ceiling capped the score (the report's `accuracy_ceiling_applied`: in
    /// `code_review_v1` every ceiling is on accuracy).
    pub fn ceiling_applied(&self) -> bool {
        !self.ceilings_applied.is_empty()
    }

    /// The reasons that decide the verdict: the fail reasons for FAIL, the unclear ones for
    /// UNCLEAR, none for PASS.
    pub fn deciding_reasons(&self) -> &[Reason] {
        match self.verdict() {
            Verdict::Fail => &self.fail_reasons,
            Verdict::Unclear => &self.unclear_reasons,
            Verdict::Pass => &[],
        }
    }

    /// The score of `criterion`.
    pub fn score_of(&self, criterion: &str) -> Option<f64> {
        self.criteria.iter().find(|c| c.name == criterion).map(|c| c.score)
    }
}

/// Scores reviews against one rubric. Compiles the rubric's fail patterns once.
#[derive(Debug, Clone)]
pub struct Scorer<'r> {
    pub(crate) rubric: &'r Rubric,
    negative: NegativePatterns,
}

impl<'r> Scorer<'r> {
    /// A scorer for `rubric`. Fails only when a fail pattern does not compile (a rubric
    /// that passes `revcal rubric lint` never has one).
    pub fn new(rubric: &'r Rubric) -> Result<Scorer<'r>, ScoreError> {
        Ok(Scorer { rubric, negative: NegativePatterns::compile(rubric)? })
    }

    /// The rubric this scorer applies.
    pub fn rubric(&self) -> &Rubric {
        self.rubric
    }

    /// Every match of the rubric's negative criteria in `artifact`.
    pub fn check_artifact(&self, artifact: &str) -> Vec<PatternMatch> {
        self.negative.find(artifact)
    }

    /// Scores one review. `artifact` is the text the review judged, checked against the
    /// rubric's negative criteria; without it they are not checked.
    pub fn score(&self, review: &Review, artifact: Option<&str>) -> Result<Evaluation, ScoreError> {
        let problems = self.check_review(review, None, "");
        if !problems.is_empty() {
            return Err(ScoreError::Invalid { problems });
        }
        let matches = artifact.map(|text| self.check_artifact(text));
        Ok(self.evaluate(review, matches))
    }

    /// Every way `review` does not fit the rubric; fields are prefixed with `base`
    /// (`[2]` for a council member).
    pub(crate) fn check_review(&self, review: &Review, member: Option<usize>, base: &str) -> Vec<Problem> {
        let rubric = self.rubric;
        let field = |name: &str| if base.is_empty() { name.to_owned() } else { format!("{base}.{name}") };
        let mut problems = Vec::new();
        let mut push = |field: String, message: String| {
            problems.push(Problem { field, member, message, position: None })
        };
        let (min, max) = (rubric.scale.min, rubric.scale.max);
        for criterion in &rubric.criteria {
            match review.rubric_scores.get(&criterion.name) {
                None => push(
                    field(&format!("rubric_scores.{}", criterion.name)),
                    format!("missing: rubric `{}` needs a score for `{}`", rubric.key(), criterion.name),
                ),
                Some(score) if !rubric.scale.contains(*score) => push(
                    field(&format!("rubric_scores.{}", criterion.name)),
                    format!(
                        "score {score} for `{}` is outside the scale {min}..{max} of `{}`",
                        criterion.name,
                        rubric.key()
                    ),
                ),
                Some(_) => {}
            }
        }
        let names: Vec<&str> = rubric.criteria.iter().map(|c| c.name.as_str()).collect();
        for name in review.rubric_scores.keys().filter(|name| rubric.criterion(name).is_none()) {
            let hint = match suggest::closest(name, names.iter().copied()) {
                Some(near) => format!("did you mean `{near}`?"),
                None => format!("its criteria are {}", names.join(", ")),
            };
            push(
                field(&format!("rubric_scores.{name}")),
                format!(
                    "unknown criterion `{name}`: rubric `{}` has no such criterion; {hint}",
                    rubric.key()
                ),
            );
        }
        if let Some(confidence) = review.confidence.filter(|c| !(0.0..=1.0).contains(c)) {
            push(field("confidence"), format!("confidence {confidence} is outside the range 0..1"));
        }
        for (index, name) in review.rubric_focus.iter().enumerate() {
            if rubric.focus_area(name).is_none() {
                push(field(&format!("rubric_focus[{index}]")), unknown_focus(rubric, name));
            }
        }
        let raised =
            review.red_flags.iter().enumerate().map(|(index, id)| (format!("red_flags[{index}]"), id));
        let carried = review.issues.iter().enumerate().filter_map(|(index, issue)| {
            Some((format!("issues[{index}].red_flag"), issue.red_flag.as_ref()?))
        });
        for (at, id) in raised.chain(carried) {
            if find_flag(rubric, id).is_none() {
                push(field(&at), unknown_flag(rubric, id));
            }
        }
        problems
    }

    /// The algorithm proper, on a review already checked against the rubric.
    pub(crate) fn evaluate(&self, review: &Review, matches: Option<Vec<PatternMatch>>) -> Evaluation {
        let rubric = self.rubric;
        let count = rubric.criteria.len().max(1) as f64;
        let criteria: Vec<CriterionResult> = rubric
            .criteria
            .iter()
            .map(|criterion| {
                let score = round(review.rubric_scores.get(&criterion.name).copied().unwrap_or(f64::NAN));
                let contribution = match criterion.share {
                    Some(share) if rubric.has_shares() => share * score,
                    _ if rubric.has_shares() => 0.0,
                    _ => score / count,
                };
                CriterionResult {
                    name: criterion.name.clone(),
                    weight: criterion.weight,
                    score,
                    threshold: criterion.threshold,
                    share: criterion.share,
                    contribution: round(contribution),
                    below_threshold: score < criterion.threshold,
                }
            })
            .collect();
        let weighted_score = round(if rubric.has_shares() {
            rubric.criteria.iter().zip(&criteria).map(|(c, r)| c.share.unwrap_or(0.0) * r.score).sum()
        } else {
            criteria.iter().map(|r| r.score).sum::<f64>() / count
        });

        let ceilings_applied: Vec<Ceiling> = rubric
            .ceilings
            .iter()
            .filter(|ceiling| match criteria.iter().find(|c| c.name == ceiling.criterion) {
                Some(result) => result.score < ceiling.below,
                None => {
                    tracing::warn!(criterion = %ceiling.criterion, "ceiling names a criterion the rubric does not score");
                    false
                }
            })
            .cloned()
            .collect();
        let final_score =
            ceilings_applied.iter().fold(weighted_score, |score, ceiling| score.min(ceiling.cap));

        let (blocking_issues, suggestions): (Vec<Issue>, Vec<Issue>) =
            review.issues.iter().cloned().partition(|issue| issue.severity.is_blocking());

        let mut fail_reasons: Vec<Reason> = blocking_issues
            .iter()
            .map(|issue| Reason::BlockingIssue {
                severity: issue.severity.clone(),
                location: issue.location(),
                message: issue.message.clone(),
            })
            .collect();
        let (focus, red_flags) = raised_flags(rubric, review);
        fail_reasons.extend(red_flags.iter().filter(|flag| flag.in_focus).map(|flag| Reason::RedFlag {
            id: flag.id.clone(),
            area: flag.area.clone(),
            description: flag.description.clone(),
        }));
        let artifact_checked = matches.is_some();
        let negative_matches = matches.unwrap_or_default();
        fail_reasons.extend(negative_matches.iter().map(|m| Reason::NegativePattern {
            criterion: m.criterion.clone(),
            pattern: m.pattern.clone(),
            line: m.line,
            matched: m.matched.clone(),
        }));
        if let Some(minimum) = rubric.scoring.essential_minimum {
            fail_reasons.extend(
                criteria.iter().filter(|c| c.weight == Weight::Essential && c.score < minimum).map(|c| {
                    Reason::EssentialBelowMinimum { criterion: c.name.clone(), score: c.score, minimum }
                }),
            );
        }

        let threshold = rubric.scoring.confidence_threshold;
        let mut unclear_reasons = Vec::new();
        let confidence = review.confidence.map(round);
        match confidence {
            None => unclear_reasons.push(Reason::ConfidenceMissing { threshold }),
            Some(confidence) if confidence < threshold => {
                unclear_reasons.push(Reason::ConfidenceLow { confidence, threshold })
            }
            Some(_) => {}
        }
        if final_score < rubric.scoring.pass_threshold {
            unclear_reasons.push(Reason::BelowPassThreshold {
                final_score,
                pass_threshold: rubric.scoring.pass_threshold,
            });
        }
        unclear_reasons.extend(criteria.iter().filter(|c| c.below_threshold).map(|c| {
            Reason::CriterionBelowThreshold {
                criterion: c.name.clone(),
                score: c.score,
                threshold: c.threshold,
            }
        }));

        let evaluation = Evaluation {
            rubric: rubric.key(),
            confidence,
            criteria,
            weighted_score,
            ceilings_applied,
            final_score,
            blocking_issues,
            suggestions,
            negative_matches,
            artifact_checked,
            fail_reasons,
            unclear_reasons,
            rationale: review.rationale.clone(),
            focus,
            red_flags,
        };
        tracing::debug!(
            rubric = %evaluation.rubric,
            weighted = %format_score(weighted_score),
            final_score = %format_score(final_score),
            verdict = %evaluation.verdict(),
            "review scored"
        );
        evaluation
    }
}

/// The rubric's red flag `id` and its area. Ids are lower snake_case, so a raised id is
/// read regardless of case and surrounding space.
fn find_flag<'r>(rubric: &'r Rubric, id: &str) -> Option<(&'r FocusArea, &'r revcal_rubric_model::RedFlag)> {
    rubric.red_flag(&id.trim().to_ascii_lowercase())
}

/// The focused areas (rubric names, each once) and every raised flag (each once, in the
/// order first raised: `red_flags` first, then issues). Names that match nothing were
/// refused by `check_review`; here they are skipped.
fn raised_flags(rubric: &Rubric, review: &Review) -> (Vec<String>, Vec<RaisedFlag>) {
    let mut focus: Vec<String> = Vec::new();
    for area in review.rubric_focus.iter().filter_map(|name| rubric.focus_area(name)) {
        if !focus.contains(&area.name) {
            focus.push(area.name.clone());
        }
    }
    let carried = review.issues.iter().filter_map(|issue| issue.red_flag.as_ref());
    let mut flags: Vec<RaisedFlag> = Vec::new();
    for id in review.red_flags.iter().chain(carried) {
        let Some((area, flag)) = find_flag(rubric, id) else {
            tracing::warn!(red_flag = %id, "red flag the rubric does not define");
            continue;
        };
        if flags.iter().any(|raised| raised.id == flag.id) {
            continue;
        }
        flags.push(RaisedFlag {
            id: flag.id.clone(),
            area: area.name.clone(),
            description: flag.description.trim().to_owned(),
            in_focus: focus.contains(&area.name),
            raised_by: None,
        });
    }
    (focus, flags)
}

fn unknown_focus(rubric: &Rubric, name: &str) -> String {
    let names: Vec<&str> = rubric.focus_areas.iter().map(|a| a.name.as_str()).collect();
    if names.is_empty() {
        return format!("unknown focus area `{name}`: rubric `{}` has no focus areas", rubric.key());
    }
    // Areas are named regardless of case: suggest among the lower-cased names, then
    // show the rubric's spelling.
    let lowered: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
    let hint = match suggest::closest(&name.trim().to_lowercase(), lowered.iter().map(String::as_str)) {
        Some(near) => {
            let spelled = names.iter().find(|n| n.eq_ignore_ascii_case(near)).copied().unwrap_or(near);
            format!("did you mean `{spelled}`?")
        }
        None => format!("its focus areas are {}", names.join(", ")),
    };
    format!("unknown focus area `{name}`: rubric `{}` has no such area; {hint}", rubric.key())
}

fn unknown_flag(rubric: &Rubric, id: &str) -> String {
    let ids: Vec<&str> =
        rubric.focus_areas.iter().flat_map(|a| a.red_flags.iter().map(|f| f.id.as_str())).collect();
    if ids.is_empty() {
        return format!("unknown red flag `{id}`: rubric `{}` defines no red flags", rubric.key());
    }
    let wanted = id.trim().to_ascii_lowercase();
    // A shortened id (`n_plus_one`) is too far from its flag for an edit distance, but
    // names it all the same.
    let near = suggest::closest(&wanted, ids.iter().copied())
        .or_else(|| (wanted.len() >= 3).then(|| ids.iter().copied().find(|i| i.contains(&wanted))).flatten());
    let hint = match near {
        Some(near) => format!("did you mean `{near}`?"),
        None => format!("its red flags are {}", ids.join(", ")),
    };
    format!("unknown red flag `{id}`: rubric `{}` defines no such red flag; {hint}", rubric.key())
}

/// Scores one review against `rubric` without an artifact (negative criteria unchecked).
/// Use a [`Scorer`] to check an artifact too, or to score many reviews.
pub fn score(rubric: &Rubric, review: &Review) -> Result<Evaluation, ScoreError> {
    Scorer::new(rubric)?.score(review, None)
}
