//! Shards: a deterministic slice of a suite's work units, the result file a shard writes, and
//! the checks that merge refuses missing, duplicate and mismatched shards with.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{EntryPlan, SuiteError, Unit, UnitResult};
use crate::report::{Gates, Report};

/// The `format` of a shard result file.
pub const SHARD_FORMAT: &str = "revcal-suite-shard/1";

/// A slice of a suite: shard `index` of `count`, counted from 1 (`--shard 1/3` is the first of
/// three, as in Playwright; cargo-mutants counts from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shard {
    /// 1-based.
    pub index: usize,
    /// How many shards there are.
    pub count: usize,
}

impl Shard {
    /// The whole suite as one shard.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// This shard's units of `units` (the suite's order): a contiguous run of about
    /// `len / count` of them, so that the trials of an entry mostly share a machine. Shard
    /// `k` takes units `floor((k-1)·N/n)` to `floor(k·N/n)`: every unit is in exactly one
    /// shard, and shards differ in size by at most one.
    pub fn select(&self, units: &[Unit]) -> Vec<Unit> {
        let n = units.len();
        let start = (self.index - 1) * n / self.count;
        let end = self.index * n / self.count;
        units[start..end].to_vec()
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `k/n` with 1 <= k <= n.
    fn from_str(text: &str) -> Result<Shard, String> {
        let (index, count) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}` is not K/N (the first of three shards is 1/3)"))?;
        let number = |part: &str| {
            part.trim().parse::<usize>().map_err(|_| format!("`{text}`: `{part}` is not a whole number"))
        };
        let (index, count) = (number(index)?, number(count)?);
        if count == 0 {
            return Err(format!("`{text}`: there must be at least one shard"));
        }
        if index == 0 || index > count {
            return Err(format!(
                "`{text}`: shards are counted from 1, so K runs from 1 to {count} (the first of {count} is 1/{count})"
            ));
        }
        Ok(Shard { index, count })
    }
}

/// What a shard writes with `--out`: enough to merge without the suite file, and to refuse
/// shards of another suite, another configuration or another revcal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShardResult {
    /// [`SHARD_FORMAT`].
    pub format: String,
    /// The revcal version that ran the shard.
    pub revcal_version: String,
    /// The suite's hash.
    pub suite_hash: String,
    /// The suite's entries (name and trials), in its order.
    pub entries: Vec<EntryPlan>,
    /// The run's settings as the caller describes them (reviewer command, scorer, judge,
    /// timeouts...): shards to be merged must agree on them.
    pub settings: serde_json::Value,
    /// The gates the merged report is held to.
    pub gates: Gates,
    /// The scorer's name.
    pub scorer: String,
    /// Which shard this is.
    pub shard: Shard,
    /// The shard's units, each with its report or its error.
    pub units: Vec<UnitResult>,
}

/// Shard results checked to be the whole of one suite, ready to pool.
#[derive(Debug, Clone)]
pub struct Merged {
    /// The suite's hash.
    pub suite_hash: String,
    /// The suite's entries.
    pub entries: Vec<EntryPlan>,
    /// The gates.
    pub gates: Gates,
    /// The scorer's name.
    pub scorer: String,
    /// Every unit of the suite.
    pub units: Vec<UnitResult>,
    /// The revcal version that ran the shards.
    pub revcal_version: String,
}

impl Merged {
    /// The suite's report, the same one the unsharded run prints.
    pub fn report(&self) -> Report {
        super::pool::pool(&self.suite_hash, &self.entries, &self.units, self.gates, &self.scorer)
    }
}

/// The units of a suite of `entries`.
fn units_of(entries: &[EntryPlan]) -> Vec<Unit> {
    entries
        .iter()
        .enumerate()
        .flat_map(|(entry, e)| (1..=e.trials).map(move |trial| Unit { entry, trial }))
        .collect()
}

/// Checks that `shards` (each with the file it came from) are every shard of one suite, run
/// by the same revcal with the same settings, each exactly once and holding exactly its
/// units, and that every entry's units planted in the same commit.
pub fn merge(shards: Vec<(PathBuf, ShardResult)>) -> Result<Merged, SuiteError> {
    let mismatch = |message: String| SuiteError::Merge { message };
    let Some((first_path, first)) = shards.first() else {
        return Err(mismatch("no shard results given".into()));
    };
    for (path, shard) in &shards {
        let differs = |what: &str| {
            mismatch(format!(
                "{} and {} differ in {what}: they are not shards of one run",
                first_path.display(),
                path.display()
            ))
        };
        if shard.format != SHARD_FORMAT {
            return Err(mismatch(format!(
                "{}: format `{}`, expected `{SHARD_FORMAT}`",
                path.display(),
                shard.format
            )));
        }
        if shard.suite_hash != first.suite_hash || shard.entries != first.entries {
            return Err(differs("their suite (the suite file or a plants file changed between shards)"));
        }
        if shard.revcal_version != first.revcal_version {
            return Err(differs(&format!(
                "revcal version ({} and {})",
                first.revcal_version, shard.revcal_version
            )));
        }
        if shard.settings != first.settings || shard.gates != first.gates || shard.scorer != first.scorer {
            return Err(differs("settings (reviewer command, scorer, judge or gates)"));
        }
        if shard.shard.count != first.shard.count {
            return Err(differs(&format!("shard count ({} and {})", first.shard, shard.shard)));
        }
    }
    let count = first.shard.count;
    let mut seen: BTreeMap<usize, &PathBuf> = BTreeMap::new();
    for (path, shard) in &shards {
        if let Some(earlier) = seen.insert(shard.shard.index, path) {
            return Err(mismatch(format!(
                "shard {} is given twice: {} and {}",
                shard.shard,
                earlier.display(),
                path.display()
            )));
        }
    }
    let missing: Vec<String> =
        (1..=count).filter(|k| !seen.contains_key(k)).map(|k| format!("{k}/{count}")).collect();
    if !missing.is_empty() {
        return Err(mismatch(format!("missing shard {} of {count}", missing.join(", "))));
    }

    let all = units_of(&first.entries);
    let mut units = Vec::with_capacity(all.len());
    for (path, shard) in &shards {
        let expected: BTreeSet<(String, usize)> = shard
            .shard
            .select(&all)
            .iter()
            .map(|unit| (first.entries[unit.entry].name.clone(), unit.trial))
            .collect();
        let held: BTreeSet<(String, usize)> =
            shard.units.iter().map(|u| (u.entry.clone(), u.trial)).collect();
        if held != expected || held.len() != shard.units.len() {
            return Err(mismatch(format!(
                "{}: shard {} holds {} unit(s) but should hold {} ({}): the file was edited or is incomplete",
                path.display(),
                shard.shard,
                shard.units.len(),
                expected.len(),
                expected
                    .iter()
                    .map(|(entry, trial)| format!("{entry}#{trial}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        units.extend(shard.units.iter().cloned());
    }
    let mut commits: BTreeMap<&str, (&str, usize)> = BTreeMap::new();
    for unit in &units {
        if let Some(report) = &unit.report {
            let (commit, trial) = *commits.entry(&unit.entry).or_insert((&report.commit, unit.trial));
            if commit != report.commit {
                return Err(mismatch(format!(
                    "entry `{}`: trial {trial} planted in {commit} but trial {} in {}: the shards saw different repositories",
                    unit.entry, unit.trial, report.commit
                )));
            }
        }
    }
    Ok(Merged {
        suite_hash: first.suite_hash.clone(),
        entries: first.entries.clone(),
        gates: first.gates,
        scorer: first.scorer.clone(),
        revcal_version: first.revcal_version.clone(),
        units,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_from_one_and_refuse_what_is_out_of_range() {
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3 }));
        assert!("0/3".parse::<Shard>().unwrap_err().contains("counted from 1"));
        assert!("4/3".parse::<Shard>().unwrap_err().contains("K runs from 1 to 3"));
        assert!("1/0".parse::<Shard>().unwrap_err().contains("at least one"));
        assert!("1-3".parse::<Shard>().unwrap_err().contains("not K/N"));
        assert!("a/3".parse::<Shard>().unwrap_err().contains("not a whole number"));
    }

    #[test]
    fn every_unit_is_in_exactly_one_shard_and_sizes_differ_by_at_most_one() {
        for total in 0..40 {
            let units: Vec<Unit> = (0..total).map(|entry| Unit { entry, trial: 1 }).collect();
            for count in 1..12 {
                let slices: Vec<Vec<Unit>> =
                    (1..=count).map(|index| Shard { index, count }.select(&units)).collect();
                let joined: Vec<Unit> = slices.concat();
                assert_eq!(joined, units, "{total} units over {count} shards");
                let sizes: Vec<usize> = slices.iter().map(Vec::len).collect();
                assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1, "{sizes:?}");
            }
        }
    }
}
