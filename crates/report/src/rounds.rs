//! The review rounds of a report: each change shown to the reviewer (its plants, or for a
//! clean round the lines a neutral edit touched) and, per trial, what the reviewer did. This
//! is what `revcal elo record` turns into review traffic, and what the false-alarm figure is
//! computed from.
//!
//! "Flagged" is the calibration record's definition (`revcal_record::flagged`), not a second
//! one: a planted round is flagged when a plant of it is caught; a clean round when a
//! finding names the changed file (`revcal_record::ChangedFiles`: its whole path, or an end
//! of it no other changed file has) at a line within
//! [`revcal_record::LOCATE_TOLERANCE`] of a touched line.

use crate::{CleanExcluded, CleanRounds, Interval, ratio, wilson_interval_of_mean};
use serde::{Deserialize, Serialize};

/// Located findings kept per review (the first ones, those near the change first): the most
/// a review message carries as comments.
pub const MAX_ROUND_FINDINGS: usize = revcal_record::MAX_REVIEW_COMMENTS;
/// The longest finding body kept, in characters.
pub const MAX_FINDING_CHARS: usize = revcal_record::MAX_COMMENT_CHARS;

/// One change shown to the reviewer, once per trial: an entry of the report's `rounds`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewRound {
    /// 1-based, in the order the reviews ran within a trial: planted rounds first, then clean.
    pub round: usize,
    /// In a suite's report: the entry the round belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// The commit, in a suite's report (where entries have their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The round's valid plants, in the order of each trial's `statuses`; empty for a clean
    /// round.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plants: Vec<RoundPlant>,
    /// A clean round's neutral edit: the lines it touched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub touched: Vec<TouchedLines>,
    /// A clean round's line before the neutral edit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// A clean round's line after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutated: Option<String>,
    /// What the reviewer did, trial by trial.
    pub trials: Vec<RoundTrial>,
}

impl ReviewRound {
    /// True for a clean round (a change without a plant).
    pub fn is_clean(&self) -> bool {
        self.plants.is_empty()
    }
}

/// A plant of a round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundPlant {
    /// The file.
    pub file: String,
    /// The planted line.
    pub line: u32,
    /// The bug category.
    pub category: String,
}

/// Lines `first..=last` of `file` that a clean round's change touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TouchedLines {
    /// The file.
    pub file: String,
    /// First line touched (1-based).
    pub first: u32,
    /// Last line touched.
    pub last: u32,
}

/// What the reviewer did in one trial of a round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RoundTrial {
    /// 1-based.
    pub trial: usize,
    /// Per plant of the round, in order: `caught` or `missed`; empty for a clean round.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statuses: Vec<RoundStatus>,
    /// Whether the reviewer flagged the change (see the module's documentation).
    pub flagged: bool,
    /// The reviewer's located findings in this review: at most [`MAX_ROUND_FINDINGS`], those
    /// that locate the change first, each body cut at [`MAX_FINDING_CHARS`] characters.
    #[serde(default)]
    pub findings: Vec<LocatedFinding>,
    /// Located findings left out past [`MAX_ROUND_FINDINGS`].
    #[serde(default, skip_serializing_if = "is_zero")]
    pub findings_left_out: usize,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// A plant's fate in one review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RoundStatus {
    /// Located and identified by the scorer.
    Caught,
    /// Not.
    Missed,
}

/// A finding with a file and a line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocatedFinding {
    /// The file as the reviewer named it.
    pub file: String,
    /// The line.
    pub line: u32,
    /// What it said (cut at [`MAX_FINDING_CHARS`] characters).
    pub body: String,
}

impl ReviewRound {
    /// The round in the calibration record's form (`revcal_record::Round`), trials included:
    /// what `revcal elo record` records of it.
    pub fn to_record(&self) -> revcal_record::Round {
        revcal_record::Round {
            round: self.round as u64,
            entry: self.entry.clone(),
            commit: self.commit.clone(),
            plants: self
                .plants
                .iter()
                .map(|plant| revcal_record::Plant {
                    file: plant.file.clone(),
                    line: u64::from(plant.line),
                    category: plant.category.clone(),
                })
                .collect(),
            touched: self
                .touched
                .iter()
                .map(|lines| revcal_record::TouchedLines {
                    file: lines.file.clone(),
                    first: u64::from(lines.first),
                    last: u64::from(lines.last),
                })
                .collect(),
            trials: self.trials.iter().map(RoundTrial::to_record).collect(),
        }
    }

    /// Sets each trial's `flagged` by the calibration record's rule (`revcal_record::flagged`),
    /// findings' paths read against `files`.
    pub(crate) fn decide_flags(&mut self, files: &revcal_record::ChangedFiles) {
        let record = self.to_record();
        for (trial, recorded) in self.trials.iter_mut().zip(&record.trials) {
            trial.flagged = revcal_record::flagged(&record, recorded, files);
        }
    }
}

impl RoundTrial {
    /// The trial in the calibration record's form.
    pub fn to_record(&self) -> revcal_record::Trial {
        revcal_record::Trial {
            trial: self.trial as u64,
            statuses: self
                .statuses
                .iter()
                .map(|status| match status {
                    RoundStatus::Caught => revcal_record::PlantStatus::Caught,
                    RoundStatus::Missed => revcal_record::PlantStatus::Missed,
                })
                .collect(),
            flagged: self.flagged,
            findings: self
                .findings
                .iter()
                .map(|finding| revcal_record::Finding {
                    file: finding.file.clone(),
                    line: u64::from(finding.line),
                    body: finding.body.clone(),
                })
                .collect(),
        }
    }
}

/// The false-alarm figures of a report, all `None` when no clean round was asked for: the
/// report's fields of the same names.
#[derive(Debug, Default)]
pub struct CleanFigures {
    /// [`Report::clean_rounds`](crate::Report::clean_rounds).
    pub clean_rounds: Option<CleanRounds>,
    /// [`Report::false_alarms`](crate::Report::false_alarms).
    pub false_alarms: Option<usize>,
    /// [`Report::clean_reviews`](crate::Report::clean_reviews).
    pub clean_reviews: Option<usize>,
    /// [`Report::false_alarm_rate`](crate::Report::false_alarm_rate).
    pub false_alarm_rate: Option<f64>,
    /// [`Report::false_alarm_interval`](crate::Report::false_alarm_interval).
    pub false_alarm_interval: Option<Interval>,
}

/// Numbers `rounds` from 1, decides each trial's `flagged` (the record's rule), and computes
/// the false-alarm figures when clean rounds were asked for (`clean`: how many, and the
/// neutral edits excluded): flagged clean reviews over clean reviews, with the Wilson
/// interval of that mean over the clean changes (the trials of a change are not independent).
pub fn settle(rounds: &mut [ReviewRound], clean: Option<(usize, Vec<CleanExcluded>)>) -> CleanFigures {
    for (number, round) in (1..).zip(rounds.iter_mut()) {
        round.round = number;
    }
    let records: Vec<revcal_record::Round> = rounds.iter().map(ReviewRound::to_record).collect();
    for (round, record) in rounds.iter_mut().zip(&records) {
        round.decide_flags(&revcal_record::ChangedFiles::of(&records, record));
    }
    let Some((requested, excluded)) = clean else { return CleanFigures::default() };
    let clean_rounds = || rounds.iter().filter(|round| round.is_clean());
    let changes = clean_rounds().count();
    let reviews: usize = clean_rounds().map(|round| round.trials.len()).sum();
    let flagged: usize =
        clean_rounds().map(|round| round.trials.iter().filter(|trial| trial.flagged).count()).sum();
    let rate = ratio(flagged, reviews);
    CleanFigures {
        clean_rounds: Some(CleanRounds { requested, changes, excluded }),
        false_alarms: Some(flagged),
        clean_reviews: Some(reviews),
        false_alarm_rate: rate,
        false_alarm_interval: rate.and_then(|rate| wilson_interval_of_mean(rate, changes)),
    }
}

/// The located findings of one review as a round keeps them: the findings that locate the
/// change (`near`) first, then the others, each group in the reviewer's order, at most
/// [`MAX_ROUND_FINDINGS`], each body cut. Keeping the near ones first means the cap can never
/// hide a false alarm (or the finding behind a catch). Returns the kept findings and how many
/// were left out.
pub fn keep_findings(
    located: Vec<LocatedFinding>,
    near: impl Fn(&LocatedFinding) -> bool,
) -> (Vec<LocatedFinding>, usize) {
    let (mut kept, others): (Vec<_>, Vec<_>) = located.into_iter().partition(|finding| near(finding));
    kept.extend(others);
    let left_out = kept.len().saturating_sub(MAX_ROUND_FINDINGS);
    kept.truncate(MAX_ROUND_FINDINGS);
    for finding in &mut kept {
        if finding.body.chars().count() > MAX_FINDING_CHARS {
            finding.body = finding.body.chars().take(MAX_FINDING_CHARS).collect();
        }
    }
    (kept, left_out)
}

/// Whether a finding names `file` (its path read against `files`) at a line within the
/// tolerance of `first..=last`: the calibration record's rule (`revcal_record::locates`).
pub fn locates_lines(
    finding: &LocatedFinding,
    file: &str,
    first: u32,
    last: u32,
    files: &revcal_record::ChangedFiles,
) -> bool {
    revcal_record::locates(
        &revcal_record::Finding {
            file: finding.file.clone(),
            line: u64::from(finding.line),
            body: String::new(),
        },
        &revcal_record::TouchedLines {
            file: file.to_owned(),
            first: u64::from(first),
            last: u64::from(last),
        },
        files,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(file: &str, line: u32) -> LocatedFinding {
        LocatedFinding { file: file.into(), line, body: "x".repeat(1500) }
    }

    #[test]
    fn a_clean_round_is_flagged_by_a_finding_within_three_lines_of_its_edit_by_path() {
        let round = ReviewRound {
            round: 2,
            entry: None,
            commit: None,
            plants: Vec::new(),
            touched: vec![TouchedLines { file: "src/a.rs".into(), first: 10, last: 10 }],
            original: None,
            mutated: None,
            trials: Vec::new(),
        };
        let flagged = |findings| {
            let mut round = round.clone();
            round.trials = vec![RoundTrial {
                trial: 1,
                statuses: Vec::new(),
                flagged: false,
                findings,
                findings_left_out: 0,
            }];
            round.decide_flags(&revcal_record::ChangedFiles::new(["src/a.rs", "lib/b.rs"]));
            round.trials[0].flagged
        };
        assert!(flagged(vec![finding("./src/a.rs", 13)]));
        assert!(flagged(vec![finding("/ci/repo/src/a.rs", 13)]));
        assert!(!flagged(vec![finding("./other/dir/a.rs", 13)]), "another directory's a.rs");
        assert!(flagged(vec![finding("a.rs", 7)]), "the one changed a.rs");
        assert!(!flagged(vec![finding("src/a.rs", 14)]));
        assert!(!flagged(vec![finding("src/b.rs", 10)]));
        assert!(!flagged(Vec::new()));
    }

    #[test]
    fn the_cap_keeps_findings_near_the_change_first_and_cuts_bodies() {
        let mut located: Vec<LocatedFinding> = (1..=60).map(|line| finding("src/b.rs", line)).collect();
        located.push(finding("src/a.rs", 10));
        let files = revcal_record::ChangedFiles::new(["src/a.rs", "src/b.rs"]);
        let (kept, left_out) = keep_findings(located, |f| locates_lines(f, "src/a.rs", 10, 10, &files));
        assert_eq!((kept.len(), left_out), (MAX_ROUND_FINDINGS, 11));
        assert_eq!((kept[0].file.as_str(), kept[0].line), ("src/a.rs", 10));
        assert_eq!(kept[1].line, 1, "the others follow in the reviewer's order");
        assert!(kept.iter().all(|f| f.body.chars().count() == MAX_FINDING_CHARS));
    }
}
