//! A suite's report from its work units' reports: the one computation behind both the
//! unsharded run and `merge`, so that the two print the same bytes.
//!
//! Every unit is one review of one entry (its plants chosen by the entry's seed, so each
//! trial of an entry holds the same plants). A plant's catch count is summed over the units
//! in which it was valid; recall is caught / total over plant x trial, as in a single run;
//! the interval is over plants (Wilson at the number of valid plants), never over plant x
//! trial, because the trials of one plant are not independent samples.

use std::collections::HashMap;

use crate::{EntryPlan, UnitResult};
use revcal_calibrate::ScorerKind;
use revcal_calibrate::report::{
    CleanExcluded, ControlOutcome, Controls, Counts, EntryScore, Gates, JudgeChecks, PlantOutcome,
    PlantStatus, Report, ReviewRound, RoundTrial, SuiteSummary, TrialOutcome, UnitError, assemble, ratio,
    scores_by, settle, wilson_interval_of_mean,
};
use revcal_judge::JudgeUsage;
use std::collections::BTreeMap;

/// One plant of the pooled report, while its units are added.
struct Pooled {
    outcome: PlantOutcome,
    /// Units in which it was valid, and in how many of those it was caught.
    valid_trials: usize,
    caught: usize,
}

type PlantKey = (String, u32, String, String, String);

/// One trial number's figures, summed over the units of that trial.
#[derive(Default)]
struct TrialTotals {
    caught: usize,
    total: usize,
    true_positives: usize,
    false_positives: usize,
    exit_code: Option<i32>,
    /// Findings set aside as made on the unplanted change too.
    preexisting: usize,
}

fn key(plant: &PlantOutcome) -> PlantKey {
    (plant.file.clone(), plant.line, plant.original.clone(), plant.mutated.clone(), plant.operator.clone())
}

/// The suite's rounds from its units' (`units` in the suite's order, each a single trial of
/// its entry): each change of an entry once (found by its plants, or a clean round's touched
/// lines: every trial of an entry plants the same, from its seed), named by its entry and
/// commit, with the trials of the units that reviewed it in order, numbered 1, 2, ... (a unit
/// that failed gave no trial). Clean rounds asked for, and the neutral edits excluded, are
/// those of each entry's first unit.
fn pool_rounds(units: &[(&str, &Report)]) -> (Vec<ReviewRound>, Option<(usize, Vec<CleanExcluded>)>) {
    let mut rounds: Vec<ReviewRound> = Vec::new();
    let mut clean: BTreeMap<&str, (usize, Vec<CleanExcluded>)> = BTreeMap::new();
    for (entry, report) in units {
        if let Some(asked) = &report.clean_rounds {
            clean.entry(entry).or_insert_with(|| {
                let excluded = asked
                    .excluded
                    .iter()
                    .map(|edit| CleanExcluded { entry: Some((*entry).to_owned()), ..edit.clone() })
                    .collect();
                (asked.requested, excluded)
            });
        }
        for round in &report.rounds {
            let same = |pooled: &ReviewRound| {
                pooled.entry.as_deref() == Some(*entry)
                    && pooled.plants == round.plants
                    && pooled.touched == round.touched
            };
            let index = match rounds.iter().position(same) {
                Some(index) => index,
                None => {
                    rounds.push(ReviewRound {
                        entry: Some((*entry).to_owned()),
                        commit: Some(report.commit.clone()),
                        trials: Vec::new(),
                        ..round.clone()
                    });
                    rounds.len() - 1
                }
            };
            for trial in &round.trials {
                let number = rounds[index].trials.len() + 1;
                rounds[index].trials.push(RoundTrial { trial: number, ..trial.clone() });
            }
        }
    }
    let asked = (!clean.is_empty()).then(|| {
        let requested = clean.values().map(|(requested, _)| requested).sum();
        // In the suite's order of entries, not by name.
        let mut excluded = Vec::new();
        for (entry, _) in units {
            if let Some((_, edits)) = clean.remove(entry) {
                excluded.extend(edits);
            }
        }
        (requested, excluded)
    });
    (rounds, asked)
}

/// The suite's report: `units` in any order (they are put in the suite's order first), each a
/// single review of an entry of `entries`; units whose entry is not in `entries` are ignored
/// (shard results are checked before they get here).
pub(crate) fn pool(
    hash: &str,
    entries: &[EntryPlan],
    units: &[UnitResult],
    gates: Gates,
    scorer: ScorerKind,
) -> Report {
    let position: HashMap<&str, usize> =
        entries.iter().enumerate().map(|(index, entry)| (entry.name.as_str(), index)).collect();
    let mut ordered: Vec<&UnitResult> =
        units.iter().filter(|u| position.contains_key(u.entry.as_str())).collect();
    ordered.sort_by_key(|unit| (position[unit.entry.as_str()], unit.trial));

    let mut plants: Vec<Pooled> = Vec::new();
    let mut index_of: HashMap<(usize, PlantKey), usize> = HashMap::new();
    let mut unit_errors = Vec::new();
    let mut entry_commit: Vec<Option<String>> = vec![None; entries.len()];
    let mut entry_errors = vec![0usize; entries.len()];
    let (mut true_positives, mut false_positives, mut findings) = (0, 0, 0);
    let mut checks = JudgeChecks::default();
    let mut exit_code: Option<i32> = None;
    let mut trustworthy = true;
    let mut echo: Vec<&ControlOutcome> = Vec::new();
    let mut oracle: Vec<&ControlOutcome> = Vec::new();
    let mut judge: Option<JudgeUsage> = None;
    // Per model of the built-in reviewer (the same models in every unit), summed.
    let mut reviewer_usage: Vec<JudgeUsage> = Vec::new();
    let mut judge_errors: Option<usize> = None;
    let mut sandboxes: Vec<String> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let mut per_trial: BTreeMap<usize, TrialTotals> = BTreeMap::new();
    // Findings set aside as made on the unplanted change, when some unit filtered them.
    let mut preexisting: Option<usize> = None;
    // The units that gave a report, in order, with their entry's name: their rounds.
    let mut reported: Vec<(&str, &Report)> = Vec::new();

    for unit in ordered {
        let entry = position[unit.entry.as_str()];
        let report = match (&unit.report, &unit.error) {
            (Some(report), None) => report,
            (_, error) => {
                entry_errors[entry] += 1;
                unit_errors.push(UnitError {
                    entry: unit.entry.clone(),
                    trial: unit.trial,
                    error: error.clone().unwrap_or_else(|| "no report".into()),
                });
                continue;
            }
        };
        entry_commit[entry].get_or_insert_with(|| report.commit.clone());
        reported.push((unit.entry.as_str(), report));
        for warning in &report.warnings {
            let warning = format!("{}: {warning}", unit.entry);
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
        }
        true_positives += report.true_positives;
        false_positives += report.false_positives;
        findings += report.findings;
        if let Some(unit_checks) = report.judge_checks {
            checks.repro_verified += unit_checks.repro_verified;
            checks.judge_agreed += unit_checks.judge_agreed;
        }
        exit_code = exit_code.max(report.review_exit_code);
        trustworthy &= report.trustworthy;
        if let Some(controls) = &report.controls {
            echo.push(&controls.echo);
            oracle.push(&controls.oracle);
        }
        if let Some(usage) = &report.judge {
            let total = judge.get_or_insert_with(|| JudgeUsage {
                calls: 0,
                cache_hits: 0,
                input_tokens: 0,
                output_tokens: 0,
                ..usage.clone()
            });
            total.calls += usage.calls;
            total.cache_hits += usage.cache_hits;
            total.input_tokens += usage.input_tokens;
            total.output_tokens += usage.output_tokens;
        }
        for usage in &report.reviewer_usage {
            match reviewer_usage
                .iter_mut()
                .find(|total| total.provider == usage.provider && total.model == usage.model)
            {
                Some(total) => {
                    total.calls += usage.calls;
                    total.cache_hits += usage.cache_hits;
                    total.input_tokens += usage.input_tokens;
                    total.output_tokens += usage.output_tokens;
                }
                None => reviewer_usage.push(usage.clone()),
            }
        }
        if let Some(errors) = report.judge_errors {
            *judge_errors.get_or_insert(0) += errors;
        }
        if let Some(sandbox) = &report.repro_sandbox
            && !sandboxes.contains(sandbox)
        {
            sandboxes.push(sandbox.clone());
        }
        let trial = per_trial.entry(unit.trial).or_default();
        trial.caught += report.caught;
        trial.total += report.total;
        trial.true_positives += report.true_positives;
        trial.false_positives += report.false_positives;
        trial.exit_code = trial.exit_code.max(report.review_exit_code);
        // A unit is one trial: its report's count is that trial's.
        trial.preexisting += report.preexisting.unwrap_or(0);
        if let Some(count) = report.preexisting {
            *preexisting.get_or_insert(0) += count;
        }

        for plant in &report.plants {
            let slot = *index_of.entry((entry, key(plant))).or_insert_with(|| {
                let mut outcome = plant.clone();
                outcome.entry = Some(unit.entry.clone());
                outcome.caught_by = None;
                outcome.caught_in_trials = None;
                outcome.caught_by_timeout = None;
                plants.push(Pooled { outcome, valid_trials: 0, caught: 0 });
                plants.len() - 1
            });
            let pooled = &mut plants[slot];
            if plant.status == PlantStatus::Excluded {
                continue;
            }
            pooled.valid_trials += 1;
            if plant.status == PlantStatus::Caught {
                pooled.caught += 1;
                if let Some(timed_out) = plant.caught_by_timeout {
                    *pooled.outcome.caught_by_timeout.get_or_insert(0) += timed_out;
                }
                if pooled.outcome.caught_by.is_none() {
                    pooled.outcome.caught_by = plant.caught_by.clone();
                }
            }
        }
    }

    let several_trials = entries.iter().any(|entry| entry.trials > 1);
    let entry_of = |pooled: &Pooled| pooled.outcome.entry.as_deref().map_or(0, |name| position[name]);
    for pooled in &mut plants {
        let (valid, caught) = (pooled.valid_trials, pooled.caught);
        pooled.outcome.status = if valid == 0 {
            PlantStatus::Excluded
        } else if caught > 0 && 2 * caught >= valid {
            PlantStatus::Caught
        } else {
            PlantStatus::Missed
        };
        if valid > 0 {
            pooled.outcome.excluded_reason = None;
        }
    }
    for pooled in &mut plants {
        let trials = entries[entry_of(pooled)].trials;
        pooled.outcome.caught_in_trials = (trials > 1 && pooled.valid_trials > 0).then_some(pooled.caught);
    }

    let valid: Vec<&Pooled> = plants.iter().filter(|p| p.valid_trials > 0).collect();
    let caught: usize = valid.iter().map(|p| p.caught).sum();
    let total: usize = valid.iter().map(|p| p.valid_trials).sum();
    let per_category =
        scores_by(valid.iter().map(|p| (p.outcome.category.clone(), p.caught, p.valid_trials)));
    let per_kind = scores_by(valid.iter().map(|p| (p.outcome.kind.clone(), p.caught, p.valid_trials)));

    let entry_scores = entries
        .iter()
        .enumerate()
        .map(|(index, plan)| {
            let mine: Vec<&&Pooled> = valid.iter().filter(|p| entry_of(p) == index).collect();
            let caught: usize = mine.iter().map(|p| p.caught).sum();
            let total: usize = mine.iter().map(|p| p.valid_trials).sum();
            let recall = ratio(caught, total).unwrap_or(0.0);
            EntryScore {
                name: plan.name.clone(),
                commit: entry_commit[index].clone(),
                trials: plan.trials,
                caught,
                total,
                recall,
                recall_interval: wilson_interval_of_mean(recall, mine.len()).filter(|_| total > 0),
                errors: entry_errors[index],
            }
        })
        .collect();

    let excluded_with = |prefix: Option<&str>| {
        plants
            .iter()
            .filter(|p| p.valid_trials == 0)
            .filter(|p| match (prefix, &p.outcome.excluded_reason) {
                (None, reason) => reason.is_none(),
                (Some(prefix), Some(reason)) => reason.starts_with(prefix),
                (Some(_), None) => false,
            })
            .count()
    };
    let trial_agreement = several_trials
        .then(|| {
            let repeated: Vec<&&Pooled> = valid.iter().filter(|p| p.valid_trials > 1).collect();
            let unanimous = repeated.iter().filter(|p| p.caught == 0 || p.caught == p.valid_trials).count();
            ratio(unanimous, repeated.len())
        })
        .flatten();
    let trials = if several_trials {
        per_trial
            .iter()
            .map(|(trial, totals)| TrialOutcome {
                trial: *trial,
                recall: ratio(totals.caught, totals.total).unwrap_or(0.0),
                caught: totals.caught,
                total: totals.total,
                precision: ratio(totals.true_positives, totals.true_positives + totals.false_positives),
                true_positives: totals.true_positives,
                false_positives: totals.false_positives,
                review_exit_code: totals.exit_code,
                preexisting: totals.preexisting,
            })
            .collect()
    } else {
        Vec::new()
    };

    let (mut rounds, clean) = pool_rounds(&reported);
    let clean = settle(&mut rounds, clean);
    let reviewer = reported.iter().find_map(|(_, report)| report.reviewer.clone());

    let counts = Counts {
        caught,
        caught_by_timeout: plants.iter().filter_map(|p| p.outcome.caught_by_timeout).sum(),
        total,
        valid_plants: valid.len(),
        true_positives,
        false_positives,
        findings,
        checks,
    };
    Report {
        equivalent_excluded: excluded_with(None),
        runaway_excluded: excluded_with(Some("runaway")),
        build_excluded: excluded_with(Some("build")),
        review_exit_code: exit_code,
        per_category,
        per_kind,
        trial_agreement,
        trials,
        trustworthy,
        controls: pool_controls(&echo, &oracle),
        judge,
        reviewer_usage,
        judge_errors,
        repro_sandbox: (!sandboxes.is_empty()).then(|| sandboxes.join("; ")),
        preexisting,
        suite: Some(SuiteSummary {
            hash: hash.to_owned(),
            units: entries.iter().map(|e| e.trials).sum(),
            unit_errors,
        }),
        entries: entry_scores,
        warnings,
        reviewer,
        rounds,
        clean_rounds: clean.clean_rounds,
        false_alarms: clean.false_alarms,
        clean_reviews: clean.clean_reviews,
        false_alarm_rate: clean.false_alarm_rate,
        false_alarm_interval: clean.false_alarm_interval,
        plants: plants.into_iter().map(|p| p.outcome).collect(),
        ..assemble(
            counts,
            gates,
            scorer,
            format!("suite {}", hash.strip_prefix("sha256:").unwrap_or(hash).get(..12).unwrap_or(hash)),
        )
    }
}

/// The controls over every unit: their catches and plants summed, judged by the same
/// requirement as one run's; `None` when no unit ran them.
fn pool_controls(echo: &[&ControlOutcome], oracle: &[&ControlOutcome]) -> Option<Controls> {
    let first = echo.first()?;
    let sum = |outcomes: &[&ControlOutcome]| {
        let ran: Vec<&&ControlOutcome> = outcomes.iter().filter(|o| o.not_run.is_none()).collect();
        let caught: usize = ran.iter().map(|o| o.caught).sum();
        let total: usize = ran.iter().map(|o| o.total).sum();
        (ran.len(), caught, total)
    };
    let (echo_ran, echo_caught, echo_total) = sum(echo);
    let (oracle_ran, oracle_caught, oracle_total) = sum(oracle);
    let not_run = |outcomes: &[&ControlOutcome], requirement: &str| {
        let reason = outcomes.iter().find_map(|o| o.not_run.clone()).unwrap_or_default();
        ControlOutcome::not_run(requirement, reason)
    };
    Some(Controls {
        echo: if echo_ran == 0 {
            not_run(echo, &first.requirement)
        } else {
            ControlOutcome::echo(echo_caught, echo_total, echo.iter().any(|o| o.enforced))
        },
        oracle: if oracle_ran == 0 {
            not_run(oracle, &oracle[0].requirement)
        } else {
            ControlOutcome::oracle(oracle_caught, oracle_total)
        },
    })
}
