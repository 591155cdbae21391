//! A benchmark's figures beside a suite's report: recall of groups of plants (a language, a
//! category, a kind, the bugs fixed before or after a date), each with its Wilson interval
//! over the plants of the group. Which plant is in which group is the benchmark's to say
//! (revcal-bench reads it from its manifest); the figures are computed here, by the rules
//! every other figure of a report follows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Interval, ratio, wilson_interval_of_mean};

/// Recall of one group of plants, with its interval over the group's plants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupScore {
    /// Valid plants in the group: the sample size of the interval.
    pub plants: usize,
    /// Plant-runs caught (one per plant with one trial).
    pub caught: usize,
    /// Plant-runs of the group's valid plants.
    pub total: usize,
    /// caught / total; 0 with nothing to catch.
    pub recall: f64,
    /// The Wilson 95% interval of the recall over the group's plants; `null` with nothing to
    /// catch.
    pub recall_interval: Option<Interval>,
}

/// The figures a benchmark adds to a suite's report (`revcal bench standard`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BenchmarkFigures {
    /// The benchmark's name (`standard`).
    pub name: String,
    /// The languages whose repositories the run covered.
    pub languages: Vec<String>,
    /// The real bugs of each language's repositories.
    pub per_language: BTreeMap<String, GroupScore>,
    /// The real bugs of each category.
    pub per_category: BTreeMap<String, GroupScore>,
    /// Every plant by kind: `real` (the mined bugs) and `synthetic` (the mutants).
    pub per_kind: BTreeMap<String, GroupScore>,
    /// The clean changes the reviewer flagged, when clean rounds ran: its false alarms, with
    /// the interval over clean changes (the report's `falseAlarmRate`, repeated here so that
    /// the benchmark's figures stand together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_alarms: Option<GroupScore>,
    /// With a date to split at (`--after`): that date (`YYYY-MM-DD` or a time of day in UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// The real bugs fixed before `after`: a model trained on code up to then may have seen
    /// their fixes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_before: Option<GroupScore>,
    /// The real bugs fixed on or after `after`: a model trained earlier cannot have seen them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_after: Option<GroupScore>,
}

/// One valid plant's part in a group: its group, the runs it was caught in and the runs it
/// was valid in.
pub type GroupMember = (String, usize, usize);

/// The [`GroupScore`] of every group of `members` (each a valid plant: its group, catches and
/// runs), in the groups' order. The interval of a group is over its plants, as a report's
/// recall interval is (with trials, the interval of the mean of each plant's catch rate).
pub fn group_scores(members: impl IntoIterator<Item = GroupMember>) -> BTreeMap<String, GroupScore> {
    let mut counts: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    for (group, caught, runs) in members {
        let count = counts.entry(group).or_default();
        count.0 += 1;
        count.1 += caught;
        count.2 += runs;
    }
    counts
        .into_iter()
        .map(|(group, (plants, caught, total))| (group, group_score(plants, caught, total)))
        .collect()
}

/// The score of `plants` valid plants caught in `caught` of `total` plant-runs.
pub fn group_score(plants: usize, caught: usize, total: usize) -> GroupScore {
    let recall = ratio(caught, total).unwrap_or(0.0);
    GroupScore {
        plants,
        caught,
        total,
        recall,
        recall_interval: wilson_interval_of_mean(recall, plants).filter(|_| total > 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_counted_by_plant_and_their_interval_is_over_plants() {
        let scores = group_scores([
            ("python".to_owned(), 1, 1),
            ("python".to_owned(), 0, 1),
            ("go".to_owned(), 1, 1),
            ("python".to_owned(), 1, 1),
        ]);
        let python = &scores["python"];
        assert_eq!((python.plants, python.caught, python.total), (3, 2, 3));
        assert!((python.recall - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(python.recall_interval, wilson_interval_of_mean(2.0 / 3.0, 3));
        // 1 of 1: Wilson's interval at n = 1 runs from 0.21 to 1.
        let go = scores["go"].recall_interval.unwrap();
        assert!((go.low - 0.2065).abs() < 1e-3 && go.high == 1.0, "{go:?}");
        assert_eq!(scores.keys().collect::<Vec<_>>(), ["go", "python"]);
        // Three trials of two plants: six runs, the interval still over two plants.
        let trials = group_score(2, 3, 6);
        assert_eq!(trials.recall_interval, wilson_interval_of_mean(0.5, 2));
        assert_eq!(group_score(0, 0, 0).recall_interval, None);
    }
}
