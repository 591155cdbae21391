//! The benchmark's figures of a suite's report: the report's plants grouped by the language of
//! their repository, their category, their kind and the date their bug was fixed (the
//! manifest says which), each group's recall and interval computed by revcal-report.

use std::collections::BTreeMap;

use revcal_calibrate::report::{
    BenchmarkFigures, GroupMember, PlantOutcome, PlantStatus, Report, group_score, group_scores,
};

use crate::date;
use crate::manifest::Manifest;

/// Whether a bug fixed at `fix_date` (the manifest's UTC timestamp) was fixed on or after
/// `after` (seconds since the epoch): `Some(true)` after, `Some(false)` before, `None` for a
/// date that does not read.
pub fn group_by_date(fix_date: &str, after: i64) -> Option<bool> {
    date::parse_utc(fix_date).ok().map(|seconds| seconds >= after)
}

/// The benchmark's figures of `report` (a suite's report of the benchmark `manifest`
/// describes, over the repositories of `languages`), with the real bugs split at `after`
/// (`(the date as given, its seconds)`) when given.
///
/// A plant counts in every group it is in: by kind, and for a real bug by its repository's
/// language, its category and the date of its fix. Each is counted by the runs it was valid
/// in (one, with one trial per entry) and caught in; excluded plants count nowhere. A real
/// bug the manifest does not know (a report of another benchmark) is grouped under the
/// language `unknown` and no date.
pub fn benchmark_figures(
    report: &Report,
    manifest: &Manifest,
    languages: &[String],
    after: Option<(&str, i64)>,
) -> BenchmarkFigures {
    // Runs of each entry that gave a report: a plant of it was valid in at most those.
    let runs_of: BTreeMap<&str, usize> = report
        .entries
        .iter()
        .map(|entry| (entry.name.as_str(), entry.trials.saturating_sub(entry.errors).max(1)))
        .collect();
    let runs = |plant: &PlantOutcome| -> (usize, usize) {
        let caught = plant.caught_in_trials.unwrap_or(usize::from(plant.status == PlantStatus::Caught));
        let runs = plant.entry.as_deref().and_then(|entry| runs_of.get(entry).copied()).unwrap_or(1);
        (caught, runs.max(caught))
    };
    let mut by_language: Vec<GroupMember> = Vec::new();
    let mut by_category: Vec<GroupMember> = Vec::new();
    let mut by_kind: Vec<GroupMember> = Vec::new();
    let (mut before, mut since): (Vec<GroupMember>, Vec<GroupMember>) = (Vec::new(), Vec::new());
    for plant in report.plants.iter().filter(|plant| plant.status != PlantStatus::Excluded) {
        let (caught, runs) = runs(plant);
        by_kind.push((plant.kind.clone(), caught, runs));
        if plant.kind != "real" {
            continue;
        }
        let bug = match (plant.entry.as_deref(), plant.fix_commit.as_deref()) {
            (Some(entry), Some(fix)) => manifest.bug(entry, fix),
            _ => None,
        };
        let language = bug.map_or_else(|| "unknown".to_owned(), |bug| bug.language.clone());
        by_language.push((language, caught, runs));
        by_category.push((plant.category.clone(), caught, runs));
        if let (Some((_, at)), Some(bug)) = (after, bug) {
            match group_by_date(&bug.fix_date, at) {
                Some(true) => since.push((String::new(), caught, runs)),
                Some(false) => before.push((String::new(), caught, runs)),
                None => {}
            }
        }
    }
    let split = |members: Vec<GroupMember>| {
        let (plants, caught, total) =
            members.iter().fold((0, 0, 0), |(p, c, t), (_, caught, runs)| (p + 1, c + caught, t + runs));
        group_score(plants, caught, total)
    };
    let fixed = after.map(|_| (split(before), split(since)));
    BenchmarkFigures {
        name: manifest.name.clone(),
        languages: languages.to_vec(),
        per_language: group_scores(by_language),
        per_category: group_scores(by_category),
        per_kind: group_scores(by_kind),
        false_alarms: report.clean_rounds.as_ref().map(|clean| {
            group_score(clean.changes, report.false_alarms.unwrap_or(0), report.clean_reviews.unwrap_or(0))
        }),
        after: after.map(|(text, _)| text.to_owned()),
        fixed_before: fixed.as_ref().map(|(before, _)| before.clone()),
        fixed_after: fixed.map(|(_, since)| since),
    }
}
