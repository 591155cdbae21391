//! The human view of a score: the criterion table, ceilings, issues and the verdict with
//! every reason.

use super::read::problem_line;
use crate::output::outln;
use crate::style::Style;
use revcal_rubric_model::Rubric;
use revcal_score::{CouncilEvaluation, Evaluation, Issue, Problem, Verdict, format_score};

/// What the views need besides the evaluation.
pub(crate) struct Context<'a> {
    pub(crate) rubric: &'a Rubric,
    pub(crate) review_file: &'a str,
    pub(crate) artifact_given: bool,
}

/// A warning about the review document (an ignored field), for stderr.
pub(crate) fn warning(file: &str, problem: &Problem) -> String {
    format!("warning: {}", problem_line(file, problem))
}

/// One review.
pub(crate) fn single(evaluation: &Evaluation, context: &Context, style: &Style) -> String {
    let mut out = String::new();
    header(&mut out, context, style, None);
    table(&mut out, evaluation, context.rubric, style, "SCORE");
    scores(&mut out, evaluation, context.rubric);
    issues(&mut out, evaluation, style, None);
    red_flags(&mut out, evaluation, style, None);
    negative(&mut out, evaluation, context);
    verdict(&mut out, evaluation, style);
    out
}

/// A council: the members, then the combined review.
pub(crate) fn council(council: &CouncilEvaluation, context: &Context, style: &Style) -> String {
    let mut out = String::new();
    let count = council.members.len();
    header(&mut out, context, style, Some(count));
    outln!(out, "{}", style.bold("MEMBER  FINAL  CONFIDENCE  BLOCKING  SUGGESTIONS  VERDICT"));
    for (index, member) in council.members.iter().enumerate() {
        outln!(
            out,
            "{index:>6}  {:>5}  {:>10}  {:>8}  {:>11}  {}",
            format_score(member.final_score),
            member.confidence.map(format_score).unwrap_or_else(|| "-".into()),
            member.blocking_issues.len(),
            member.suggestions.len(),
            member.verdict()
        );
    }
    let mean = council.mean_confidence.map(format_score).unwrap_or_else(|| "missing".into());
    let combined = council.combined.confidence.map(format_score).unwrap_or_else(|| "missing".into());
    outln!(
        out,
        "agreement {} (1 - mean pairwise final-score gap / scale range); confidence {mean} x {} = {combined}",
        format_score(council.agreement),
        format_score(council.agreement)
    );
    outln!(out);
    outln!(out, "{}", style.bold("Combined (per-criterion median):"));
    table(&mut out, &council.combined, context.rubric, style, "MEDIAN");
    scores(&mut out, &council.combined, context.rubric);
    issues(&mut out, &council.combined, style, Some(count));
    red_flags(&mut out, &council.combined, style, Some(count));
    negative(&mut out, &council.combined, context);
    verdict(&mut out, &council.combined, style);
    out
}

fn header(out: &mut String, context: &Context, style: &Style, council: Option<usize>) {
    let what = match council {
        Some(count) => format!("council of {count} reviews in {}", context.review_file),
        None => context.review_file.to_owned(),
    };
    outln!(out, "{} ({}): {what}", style.bold(&context.rubric.key()), context.rubric.name);
    outln!(out);
}

fn table(out: &mut String, evaluation: &Evaluation, rubric: &Rubric, style: &Style, score_title: &str) {
    let width = evaluation.criteria.iter().map(|c| c.name.len()).max().unwrap_or(0).max(9);
    outln!(
        out,
        "{}",
        style.bold(&format!("{:<width$}  {score_title:>6}  THRESHOLD  SHARE  CONTRIBUTION", "CRITERION"))
    );
    for criterion in &evaluation.criteria {
        let share = match criterion.share {
            Some(share) => format!("{share:.2}"),
            None => format!("1/{}", evaluation.criteria.len()),
        };
        let note = if criterion.below_threshold { style.warning("  below threshold") } else { String::new() };
        outln!(
            out,
            "{:<width$}  {:>6}  {:>9}  {:>5}  {:>12.3}{note}",
            criterion.name,
            format_score(criterion.score),
            format_score(criterion.threshold),
            share,
            criterion.contribution
        );
    }
    let how = if rubric.has_shares() { "sum of share x score" } else { "mean score" };
    outln!(
        out,
        "{:<width$}  {:>6}  {:>9}  {:>5}  {:>12.3}  ({how})",
        "weighted",
        "",
        "",
        "",
        evaluation.weighted_score
    );
    outln!(out);
}

fn scores(out: &mut String, evaluation: &Evaluation, rubric: &Rubric) {
    if evaluation.ceilings_applied.is_empty() {
        outln!(out, "ceilings:     none applied");
    }
    for ceiling in &evaluation.ceilings_applied {
        let score = evaluation.score_of(&ceiling.criterion).map(format_score).unwrap_or_default();
        outln!(
            out,
            "ceiling:      {} {score} is below {}, so the score is capped at {}",
            ceiling.criterion,
            format_score(ceiling.below),
            format_score(ceiling.cap)
        );
    }
    outln!(
        out,
        "final score:  {} (pass threshold {})",
        format_score(evaluation.final_score),
        format_score(rubric.scoring.pass_threshold)
    );
    let confidence = evaluation.confidence.map(format_score).unwrap_or_else(|| "missing".into());
    outln!(
        out,
        "confidence:   {confidence} (threshold {})",
        format_score(rubric.scoring.confidence_threshold)
    );
    outln!(out);
}

fn issues(out: &mut String, evaluation: &Evaluation, style: &Style, council: Option<usize>) {
    for (title, list) in
        [("blocking issues", &evaluation.blocking_issues), ("suggestions", &evaluation.suggestions)]
    {
        outln!(out, "{} ({}){}", style.bold(title), list.len(), if list.is_empty() { "" } else { ":" });
        for issue in list {
            issue_lines(out, issue, council);
        }
    }
    outln!(out);
}

fn issue_lines(out: &mut String, issue: &Issue, council: Option<usize>) {
    let location = issue.location().unwrap_or_else(|| "(no location)".into());
    let category = issue.category.as_ref().map(|c| format!(" [{c}]")).unwrap_or_default();
    let raised = match (issue.raised_by, council) {
        (Some(count), Some(members)) => format!(" (raised by {count} of {members})"),
        _ => String::new(),
    };
    let flag = issue.red_flag.as_ref().map(|id| format!(" [red flag {id}]")).unwrap_or_default();
    outln!(out, "  {location}: {}{category}{flag}{raised}: {}", issue.severity, issue.message);
    if let Some(suggestion) = &issue.suggestion {
        outln!(out, "      suggestion: {suggestion}");
    }
}

/// The review's focus and the red flags it raised; nothing when it has neither, so that
/// reviews without focus areas read as before.
fn red_flags(out: &mut String, evaluation: &Evaluation, style: &Style, council: Option<usize>) {
    if evaluation.focus.is_empty() && evaluation.red_flags.is_empty() {
        return;
    }
    let focus = if evaluation.focus.is_empty() { "none".to_owned() } else { evaluation.focus.join(", ") };
    outln!(out, "focus:        {focus} (a red flag of a focused area fails the review)");
    let list = &evaluation.red_flags;
    outln!(out, "{} ({}){}", style.bold("red flags"), list.len(), if list.is_empty() { "" } else { ":" });
    for flag in list {
        let effect = if flag.in_focus {
            style.error("in focus, fails")
        } else {
            "not in focus, reported only".to_owned()
        };
        let raised = match (flag.raised_by, council) {
            (Some(count), Some(members)) => format!(" (raised by {count} of {members})"),
            _ => String::new(),
        };
        outln!(out, "  {} [{}: {effect}]{raised}: {}", flag.id, flag.area, flag.description);
    }
    outln!(out);
}

fn negative(out: &mut String, evaluation: &Evaluation, context: &Context) {
    if context.rubric.negative_criteria.is_empty() {
        return;
    }
    if !context.artifact_given {
        outln!(out, "negative criteria not checked: pass the artifact with --artifact FILE");
        outln!(out);
        return;
    }
    if evaluation.negative_matches.is_empty() {
        outln!(out, "negative criteria: no fail pattern matches the artifact");
    }
    for found in &evaluation.negative_matches {
        outln!(
            out,
            "negative criterion {}: pattern `{}` matches at line {}, column {}: {:?}",
            found.criterion,
            found.pattern,
            found.line,
            found.column,
            found.matched
        );
    }
    outln!(out);
}

fn verdict(out: &mut String, evaluation: &Evaluation, style: &Style) {
    let verdict = evaluation.verdict();
    let word = verdict.to_string();
    let painted = match verdict {
        Verdict::Pass => style.success(&word),
        Verdict::Fail => style.error(&word),
        Verdict::Unclear => style.warning(&word),
    };
    outln!(out, "verdict: {painted} (exit {})", crate::exit::verdict(verdict));
    for reason in evaluation.deciding_reasons() {
        outln!(out, "  - {reason}");
    }
    if verdict == Verdict::Fail && !evaluation.unclear_reasons.is_empty() {
        outln!(out, "  and, once those are fixed, still short of a pass:");
        for reason in &evaluation.unclear_reasons {
            outln!(out, "  - {reason}");
        }
    }
}
