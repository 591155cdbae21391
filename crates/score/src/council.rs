//! Councils (docs/scoring.md#4-councils): several reviews of one artifact, combined into one verdict.

use crate::error::ScoreError;
use crate::evaluate::{Evaluation, Scorer, Verdict};
use crate::number::round;
use crate::review::{Issue, Review};
use revcal_rubric_model::Rubric;
use std::collections::BTreeMap;

/// Issues on the same file and category whose lines are at most this far apart are one issue.
const SAME_ISSUE_LINES: u64 = 3;

/// A council's result: the combined evaluation, how much the members agreed, and each
/// member's own evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct CouncilEvaluation {
    /// The evaluation of the combined review: per-criterion median scores, merged issues,
    /// confidence = mean member confidence x agreement, the union of the members' focus
    /// areas, and each red flag once with the number of members that raised it.
    pub combined: Evaluation,
    /// 1 - mean pairwise |final_i - final_j| / (scale max - scale min); 1 for one member.
    pub agreement: f64,
    /// The mean of the members' confidences (`None` when any member gave none).
    pub mean_confidence: Option<f64>,
    /// Each member's evaluation, in input order.
    pub members: Vec<Evaluation>,
}

impl CouncilEvaluation {
    /// The verdict of the combined review.
    pub fn verdict(&self) -> Verdict {
        self.combined.verdict()
    }
}

impl Scorer<'_> {
    /// Scores a council. Every member is checked against the rubric first; a problem names
    /// the member's index. `artifact`, when given, is checked once for the whole council.
    pub fn score_council(
        &self,
        reviews: &[Review],
        artifact: Option<&str>,
    ) -> Result<CouncilEvaluation, ScoreError> {
        if reviews.is_empty() {
            return Err(ScoreError::EmptyCouncil);
        }
        let problems: Vec<_> = reviews
            .iter()
            .enumerate()
            .flat_map(|(index, review)| self.check_review(review, Some(index), &format!("[{index}]")))
            .collect();
        if !problems.is_empty() {
            return Err(ScoreError::Invalid { problems });
        }
        let matches = artifact.map(|text| self.check_artifact(text));
        let members: Vec<Evaluation> =
            reviews.iter().map(|review| self.evaluate(review, matches.clone())).collect();

        let agreement = agreement(&members, self.rubric);
        let confidences: Option<Vec<f64>> = reviews.iter().map(|r| r.confidence).collect();
        let mean_confidence = confidences.map(|c| round(c.iter().sum::<f64>() / c.len() as f64));
        let combined_review = Review {
            rubric_scores: median_scores(reviews),
            confidence: mean_confidence.map(|mean| round(mean * agreement)),
            issues: merge_issues(reviews),
            rationale: join_rationales(reviews),
            rubric_focus: union(reviews.iter().flat_map(|r| &r.rubric_focus)),
            red_flags: union(members.iter().flat_map(|m| m.red_flags.iter().map(|f| &f.id))),
        };
        let mut combined = self.evaluate(&combined_review, matches);
        // Red flags merge like issues: one entry per flag, counting the members that raised it.
        for flag in &mut combined.red_flags {
            let count = members.iter().filter(|m| m.red_flags.iter().any(|f| f.id == flag.id)).count();
            flag.raised_by = Some(count);
        }
        tracing::debug!(members = members.len(), agreement, verdict = %combined.verdict(), "council scored");
        Ok(CouncilEvaluation { combined, agreement, mean_confidence, members })
    }
}

/// Scores a council against `rubric` without an artifact.
pub fn score_council(rubric: &Rubric, reviews: &[Review]) -> Result<CouncilEvaluation, ScoreError> {
    Scorer::new(rubric)?.score_council(reviews, None)
}

/// The median of each criterion's scores (the mean of the middle two for an even count).
fn median_scores(reviews: &[Review]) -> BTreeMap<String, f64> {
    let mut all: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for review in reviews {
        for (name, score) in &review.rubric_scores {
            all.entry(name.clone()).or_default().push(*score);
        }
    }
    all.into_iter()
        .map(|(name, mut scores)| {
            scores.sort_by(f64::total_cmp);
            let middle = scores.len() / 2;
            let median = if scores.len() % 2 == 1 {
                scores[middle]
            } else {
                (scores[middle - 1] + scores[middle]) / 2.0
            };
            (name, round(median))
        })
        .collect()
}

fn agreement(members: &[Evaluation], rubric: &Rubric) -> f64 {
    let range = f64::from(rubric.scale.max) - f64::from(rubric.scale.min);
    let mut total = 0.0;
    let mut pairs = 0usize;
    for (i, a) in members.iter().enumerate() {
        for b in &members[i + 1..] {
            total += (a.final_score - b.final_score).abs();
            pairs += 1;
        }
    }
    if pairs == 0 || range <= 0.0 {
        return 1.0;
    }
    round((1.0 - total / pairs as f64 / range).clamp(0.0, 1.0))
}

/// An issue cluster: the issue that started it, the one with the highest severity so far,
/// and which members raised it.
struct Cluster {
    first: Issue,
    best: Issue,
    members: Vec<usize>,
    /// The first red flag any member's issue of the cluster carries, kept even when the
    /// issue with the highest severity carries none.
    red_flag: Option<String>,
}

fn same_issue(a: &Issue, b: &Issue) -> bool {
    let category = |issue: &Issue| issue.category.as_deref().map(str::to_lowercase);
    if a.file != b.file || category(a) != category(b) {
        return false;
    }
    match (a.line, b.line) {
        (Some(x), Some(y)) => a.file.is_some() && x.abs_diff(y) <= SAME_ISSUE_LINES,
        (None, None) => a.message.trim().eq_ignore_ascii_case(b.message.trim()),
        _ => false,
    }
}

/// Merges the members' issues: one issue per file, nearby line (+-3) and category, raised
/// by different members, keeping the highest severity and counting the members. Two issues
/// of one member are never merged: they are two findings.
fn merge_issues(reviews: &[Review]) -> Vec<Issue> {
    let mut clusters: Vec<Cluster> = Vec::new();
    for (member, review) in reviews.iter().enumerate() {
        for issue in &review.issues {
            let found = clusters
                .iter_mut()
                .find(|cluster| !cluster.members.contains(&member) && same_issue(&cluster.first, issue));
            match found {
                Some(cluster) => {
                    cluster.members.push(member);
                    if cluster.red_flag.is_none() {
                        cluster.red_flag.clone_from(&issue.red_flag);
                    }
                    if issue.severity.rank() > cluster.best.severity.rank() {
                        cluster.best = issue.clone();
                    }
                }
                None => clusters.push(Cluster {
                    first: issue.clone(),
                    best: issue.clone(),
                    members: vec![member],
                    red_flag: issue.red_flag.clone(),
                }),
            }
        }
    }
    clusters
        .into_iter()
        .map(|cluster| Issue {
            raised_by: Some(cluster.members.len()),
            red_flag: cluster.best.red_flag.clone().or(cluster.red_flag),
            ..cluster.best
        })
        .collect()
}

/// Each text once, in the order first seen (regardless of case: focus names are).
fn union<'a>(texts: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for text in texts {
        if !out.iter().any(|seen| seen.eq_ignore_ascii_case(text)) {
            out.push(text.clone());
        }
    }
    out
}

fn join_rationales(reviews: &[Review]) -> Option<String> {
    let parts: Vec<&str> = reviews.iter().filter_map(|r| r.rationale.as_deref()).collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::Severity;

    fn review_with(issues: Vec<Issue>) -> Review {
        Review { issues, ..Review::default() }
    }

    #[test]
    fn issues_merge_across_members_within_three_lines() {
        let a = Issue::new(Severity::Minor, "null check").at("src/api.py", 42).category("bug");
        let b = Issue::new(Severity::Critical, "user may be None").at("src/api.py", 45).category("Bug");
        let far = Issue::new(Severity::Major, "elsewhere").at("src/api.py", 46).category("bug");
        let merged = merge_issues(&[review_with(vec![a]), review_with(vec![b, far])]);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].severity, Severity::Critical, "the highest severity is kept");
        assert_eq!(merged[0].raised_by, Some(2));
        assert_eq!(merged[1].raised_by, Some(1));
    }

    #[test]
    fn one_members_issues_never_merge_and_categories_must_match() {
        let a = Issue::new(Severity::Minor, "x").at("a.rs", 1).category("bug");
        let b = Issue::new(Severity::Minor, "y").at("a.rs", 2).category("bug");
        let c = Issue::new(Severity::Minor, "z").at("a.rs", 2).category("style");
        let merged = merge_issues(&[review_with(vec![a, b]), review_with(vec![c])]);
        assert_eq!(merged.len(), 3);
    }

    #[test]
    fn medians_of_odd_and_even_councils() {
        let scores = |values: &[f64]| -> Vec<Review> {
            values
                .iter()
                .map(|v| Review { rubric_scores: [("a".to_owned(), *v)].into(), ..Review::default() })
                .collect()
        };
        assert_eq!(median_scores(&scores(&[9.0, 2.0, 5.0]))["a"], 5.0);
        assert_eq!(median_scores(&scores(&[9.0, 2.0, 5.0, 6.0]))["a"], 5.5);
    }
}
