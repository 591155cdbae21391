//! Shards: a deterministic slice of a suite's work units, the result file a shard writes, and
//! the checks that merge refuses missing, duplicate and mismatched shards with.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{EntryPlan, Suite, SuiteError, Unit, UnitResult};
use revcal_calibrate::input::{self, InputError};
use revcal_calibrate::report::{GATE_EPSILON, ratio};
use revcal_calibrate::{Gates, PlantOutcome, PlantStatus, Report, ScorerKind};

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
    ///
    /// A shard that is not one (`count` 0, `index` 0 or past `count`) selects nothing.
    pub fn select(&self, units: &[Unit]) -> Vec<Unit> {
        if self.count == 0 || self.index == 0 || self.index > self.count {
            return Vec::new();
        }
        // In u128: `index * len` cannot overflow, whatever a shard file says.
        let at = |k: usize| (k as u128 * units.len() as u128 / self.count as u128) as usize;
        units[at(self.index - 1)..at(self.index)].to_vec()
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
    /// The scorer (its name in JSON).
    pub scorer: ScorerKind,
    /// Which shard this is.
    pub shard: Shard,
    /// The shard's units, each with its report or its error.
    pub units: Vec<UnitResult>,
    /// The `--regression-alpha` the shard was run with (merge must use the same); absent in
    /// shards of revcal before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regression_alpha: Option<f64>,
}

/// The largest shard result file read: 512 MiB.
pub const MAX_SHARD_FILE_BYTES: u64 = 512 << 20;

impl ShardResult {
    /// Reads a shard result file (at most [`MAX_SHARD_FILE_BYTES`]). A file that is not
    /// one is an error naming the file, the line and the field, never quoting its content.
    pub fn read(path: &Path) -> Result<ShardResult, SuiteError> {
        let text = input::read_text(path, MAX_SHARD_FILE_BYTES).map_err(|error| match error {
            InputError::Io(source) => SuiteError::Read { path: path.to_path_buf(), source },
            other => SuiteError::Shard { path: path.to_path_buf(), message: other.to_string() },
        })?;
        ShardResult::from_json(&text, path)
    }

    /// A shard result from its JSON text; `path` names it in errors.
    pub fn from_json(text: &str, path: &Path) -> Result<ShardResult, SuiteError> {
        serde_json::from_str(text).map_err(|error| SuiteError::Shard {
            path: path.to_path_buf(),
            message: format!(
                "not a shard result ({}); write one with `revcal calibrate suite --shard K/N --out FILE`",
                input::json_error(&error)
            ),
        })
    }
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
    /// The scorer (its name in JSON).
    pub scorer: ScorerKind,
    /// Every unit of the suite.
    pub units: Vec<UnitResult>,
    /// The revcal version that ran the shards.
    pub revcal_version: String,
    /// The `--regression-alpha` the shards recorded, when they did.
    pub regression_alpha: Option<f64>,
    /// The shard files, in the order given.
    pub files: Vec<PathBuf>,
}

impl Merged {
    /// The suite's report, the same one the unsharded run prints.
    pub fn report(&self) -> Report {
        crate::pool::pool(&self.suite_hash, &self.entries, &self.units, self.gates, self.scorer)
    }

    /// Refuses shards run with other gates than `gates` (merge's own flags): the gate is
    /// merge's to choose, never a shard file's.
    pub fn require_gates(&self, gates: Gates, regression_alpha: f64) -> Result<(), SuiteError> {
        let file = self.files.first().map_or_else(String::new, |f| f.display().to_string());
        let shown = |value: Option<f64>| value.map_or_else(|| "unset".to_owned(), |v| v.to_string());
        let mismatch = |field: &str, recorded: String, flag: &str, given: String| SuiteError::Merge {
            message: format!(
                "{file}: the shards were run with {field} {recorded}, but this merge gates at {flag} {given}: give merge the flags the shards ran with (or run the shards again)"
            ),
        };
        if self.gates.min_recall != gates.min_recall {
            return Err(mismatch(
                "gates.minRecall",
                self.gates.min_recall.to_string(),
                "--min-recall",
                gates.min_recall.to_string(),
            ));
        }
        if self.gates.min_precision != gates.min_precision {
            return Err(mismatch(
                "gates.minPrecision",
                shown(self.gates.min_precision),
                "--min-precision",
                shown(gates.min_precision),
            ));
        }
        if let Some(recorded) = self.regression_alpha
            && recorded != regression_alpha
        {
            return Err(mismatch(
                "regressionAlpha",
                recorded.to_string(),
                "--regression-alpha",
                regression_alpha.to_string(),
            ));
        }
        Ok(())
    }

    /// Refuses shards of another suite than `suite`: their `suiteHash` (or their entries) is
    /// not what the suite file and its plants files hash to now. Without this check, the
    /// shard files are trusted to say which suite they ran.
    pub fn require_suite(&self, suite: &Suite) -> Result<(), SuiteError> {
        let file = self.files.first().map_or_else(String::new, |f| f.display().to_string());
        if self.suite_hash != suite.hash {
            return Err(SuiteError::Merge {
                message: format!(
                    "{file}: suiteHash {} is not the hash of {} and its plants files ({}): the shards ran another suite, or were edited",
                    self.suite_hash,
                    suite.path.display(),
                    suite.hash
                ),
            });
        }
        if self.entries != suite.plan() {
            return Err(SuiteError::Merge {
                message: format!(
                    "{file}: entries are not those of {} (names and trials): the file was edited",
                    suite.path.display()
                ),
            });
        }
        Ok(())
    }
}

/// Checks one shard file on its own: its format, its shard number, its entries, and each
/// unit's report against its own records.
fn check_shard(path: &Path, shard: &ShardResult) -> Result<(), SuiteError> {
    let bad = |message: String| SuiteError::Merge { message: format!("{}: {message}", path.display()) };
    if shard.format != SHARD_FORMAT {
        return Err(bad(format!("format `{}`, expected `{SHARD_FORMAT}`", shard.format)));
    }
    let Shard { index, count } = shard.shard;
    if count == 0 {
        return Err(bad("shard.count is 0: a suite runs as at least one shard".into()));
    }
    if index == 0 || index > count {
        return Err(bad(format!("shard.index is {index}, but shards of {count} are numbered 1 to {count}")));
    }
    if shard.entries.is_empty() {
        return Err(bad("entries is empty: a suite has at least one entry".into()));
    }
    let mut names = BTreeSet::new();
    for (number, entry) in shard.entries.iter().enumerate() {
        if entry.trials == 0 {
            return Err(bad(format!("entries[{number}].trials is 0: an entry runs at least once")));
        }
        if !names.insert(entry.name.as_str()) {
            return Err(bad(format!("entries[{number}].name `{}` names an earlier entry too", entry.name)));
        }
    }
    for (number, unit) in shard.units.iter().enumerate() {
        let at = |message: String| bad(format!("units[{number}] ({}#{}): {message}", unit.entry, unit.trial));
        match (&unit.report, &unit.error) {
            (Some(_), Some(_)) => return Err(at("has both a report and an error".into())),
            (None, None) => return Err(at("has neither a report nor an error".into())),
            (Some(report), None) => check_unit_report(report).map_err(at)?,
            (None, Some(_)) => {}
        }
    }
    Ok(())
}

/// Whether a unit's report (one trial) says what its plant records say: every figure merge
/// pools is recomputed from the records, so a record edited without its figures (or the
/// other way round) is refused rather than silently believed.
fn check_unit_report(report: &Report) -> Result<(), String> {
    let valid: Vec<&PlantOutcome> =
        report.plants.iter().filter(|p| p.status != PlantStatus::Excluded).collect();
    let caught = valid.iter().filter(|p| p.status == PlantStatus::Caught).count();
    let contradiction = |field: &str, says: String, records: String| {
        Err(format!("report.{field} is {says}, but its plant records give {records}: the file was edited"))
    };
    if report.caught != caught {
        return contradiction("caught", report.caught.to_string(), format!("{caught} caught"));
    }
    if report.total != valid.len() {
        return contradiction("total", report.total.to_string(), format!("{} valid plants", valid.len()));
    }
    let close = |a: f64, b: f64| (a - b).abs() <= GATE_EPSILON;
    let recall = ratio(caught, valid.len()).unwrap_or(0.0);
    if !close(report.recall, recall) {
        return contradiction("recall", report.recall.to_string(), format!("{caught}/{}", valid.len()));
    }
    let precision =
        ratio(report.true_positives, report.true_positives.saturating_add(report.false_positives));
    if report.precision.is_some() != precision.is_some()
        || report.precision.zip(precision).is_some_and(|(a, b)| !close(a, b))
    {
        return Err(format!(
            "report.precision is {:?}, but truePositives {} and falsePositives {} give {precision:?}: the file was edited",
            report.precision, report.true_positives, report.false_positives
        ));
    }
    if !report.trials.is_empty() {
        return Err(format!("report.trials lists {} trials, but a unit is one trial", report.trials.len()));
    }
    for (field, scores, group) in [
        (
            "perCategory",
            &report.per_category,
            (|p: &PlantOutcome| p.category.clone()) as fn(&PlantOutcome) -> String,
        ),
        ("perKind", &report.per_kind, |p: &PlantOutcome| p.kind.clone()),
    ] {
        let mut counted: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for plant in &valid {
            let slot = counted.entry(group(plant)).or_default();
            slot.0 += usize::from(plant.status == PlantStatus::Caught);
            slot.1 += 1;
        }
        let said: BTreeMap<String, (usize, usize)> =
            scores.iter().map(|(name, score)| (name.clone(), (score.caught, score.total))).collect();
        if said != counted {
            return Err(format!(
                "report.{field} does not count what its plant records hold (caught/total per group): the file was edited"
            ));
        }
        if let Some((name, _)) =
            scores.iter().find(|(_, s)| !close(s.recall, ratio(s.caught, s.total).unwrap_or(0.0)))
        {
            return Err(format!("report.{field}.{name}.recall is not its caught/total: the file was edited"));
        }
    }
    Ok(())
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
/// units, that every unit's report agrees with its own records, and that every entry's units
/// planted in the same commit. Any other shard is an error naming the file and the field;
/// nothing a shard file says makes this panic.
pub fn merge(shards: Vec<(PathBuf, ShardResult)>) -> Result<Merged, SuiteError> {
    let mismatch = |message: String| SuiteError::Merge { message };
    let Some((first_path, first)) = shards.first() else {
        return Err(mismatch("no shard results given".into()));
    };
    for (path, shard) in &shards {
        check_shard(path, shard)?;
        let differs = |what: &str| {
            mismatch(format!(
                "{} and {} differ in {what}: they are not shards of one run",
                first_path.display(),
                path.display()
            ))
        };
        if shard.suite_hash != first.suite_hash || shard.entries != first.entries {
            return Err(differs("their suite (the suite file or a plants file changed between shards)"));
        }
        if shard.revcal_version != first.revcal_version {
            return Err(differs(&format!(
                "revcal version ({} and {})",
                first.revcal_version, shard.revcal_version
            )));
        }
        if shard.settings != first.settings
            || shard.gates != first.gates
            || shard.scorer != first.scorer
            || shard.regression_alpha != first.regression_alpha
        {
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
    // At most this many are named; the search ends soon after them whatever `count` says,
    // since only `seen.len()` numbers are taken.
    const NAMED: usize = 10;
    let missing: Vec<String> =
        (1..=count).filter(|k| !seen.contains_key(k)).take(NAMED).map(|k| format!("{k}/{count}")).collect();
    if !missing.is_empty() {
        let more = if count - seen.len() > missing.len() { ", ..." } else { "" };
        return Err(mismatch(format!("missing shard {}{more} of {count}", missing.join(", "))));
    }

    // The suite's units are only listed once each shard is known to hold as many as its
    // slice: an entry's `trials` is whatever the file says (2^62 would not fit in memory),
    // while the units held are in the files.
    let Some(total) = first.entries.iter().try_fold(0usize, |sum, entry| sum.checked_add(entry.trials))
    else {
        return Err(mismatch(format!(
            "{}: entries: the trials add up to more units than can be counted: the file was edited",
            first_path.display()
        )));
    };
    let slice_len = |shard: Shard| {
        let at = |k: usize| k as u128 * total as u128 / shard.count as u128;
        at(shard.index) - at(shard.index - 1)
    };
    let wrong_size = |path: &Path, shard: &ShardResult, listed: Option<&[Unit]>| {
        let expected = shard.shard.select(listed.unwrap_or(&[]));
        let names = match listed {
            Some(_) => format!(
                " ({})",
                expected
                    .iter()
                    .map(|unit| format!("{}#{}", first.entries[unit.entry].name, unit.trial))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => String::new(),
        };
        mismatch(format!(
            "{}: shard {} holds {} unit(s) but should hold {}{names} of the {total} units its entries (names and trials) make: the file was edited or is incomplete",
            path.display(),
            shard.shard,
            shard.units.len(),
            slice_len(shard.shard),
        ))
    };
    for (path, shard) in &shards {
        if shard.units.len() as u128 != slice_len(shard.shard) {
            // Named unit by unit when the suite is small enough to list.
            let listed = (total <= 100_000).then(|| units_of(&first.entries));
            return Err(wrong_size(path, shard, listed.as_deref()));
        }
    }
    // Each shard holds as many units as its slice, and the slices make up the suite: it has
    // as many units as the files hold.
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
            return Err(wrong_size(path, shard, Some(&all)));
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
        scorer: first.scorer,
        revcal_version: first.revcal_version.clone(),
        regression_alpha: first.regression_alpha,
        files: shards.iter().map(|(path, _)| path.clone()).collect(),
        units,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shard of a suite of one entry `e` with `trials` trials, whose units all failed.
    fn shard(index: usize, count: usize, trials: usize) -> (PathBuf, ShardResult) {
        let entries = vec![EntryPlan { name: "e".into(), trials }];
        let all = units_of(&entries);
        let units = Shard { index, count }
            .select(&all)
            .into_iter()
            .map(|u| UnitResult { entry: "e".into(), trial: u.trial, report: None, error: Some("x".into()) })
            .collect();
        let result = ShardResult {
            format: SHARD_FORMAT.into(),
            revcal_version: "0".into(),
            suite_hash: "sha256:h".into(),
            entries,
            settings: serde_json::Value::Null,
            gates: Gates { min_recall: 0.5, min_precision: None },
            scorer: ScorerKind::Repro,
            shard: Shard { index, count },
            units,
            regression_alpha: None,
        };
        (PathBuf::from(format!("s{index}.json")), result)
    }

    fn merge_error(shards: Vec<(PathBuf, ShardResult)>) -> String {
        match merge(shards) {
            Ok(_) => panic!("merged"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn malformed_shards_are_errors_naming_file_and_field_never_panics() {
        let mut zero = shard(1, 1, 2);
        zero.1.shard.count = 0;
        assert!(merge_error(vec![zero]).contains("s1.json: shard.count"));
        let mut extra = shard(2, 2, 2);
        extra.1.shard.index = 3;
        extra.0 = PathBuf::from("s3.json");
        assert!(merge_error(vec![shard(1, 2, 2), shard(2, 2, 2), extra]).contains("s3.json: shard.index"));
        let mut huge = shard(1, 1, 2);
        huge.1.entries[0].trials = 1 << 62;
        assert!(merge_error(vec![huge]).contains("entries"));
        let mut far = shard(1, 1, 1);
        far.1.shard.count = usize::MAX;
        assert!(merge_error(vec![far]).contains("missing shard 2/"));
        assert!(
            Shard { index: 3, count: 2 }
                .select(&units_of(&[EntryPlan { name: "e".into(), trials: 4 }]))
                .is_empty()
        );
        assert!(Shard { index: 1, count: 0 }.select(&[]).is_empty());
    }

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
