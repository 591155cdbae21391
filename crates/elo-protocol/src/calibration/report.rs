//! A calibration record held against the calibration report it names: the report's hash
//! recomputed, and the report's own account of each plant compared with the record's.
//!
//! Only the report fields the product contract fixes are read (SPEC section 6: `commit`,
//! `plants[{file, line, category, status}]`, and `caughtInTrials` when a calibration ran
//! several trials, plus `entry` in a suite's report), so this crate does not depend on the
//! calibration crate.

use super::{CalibrationRecord, PlantStatus, RecordError};
use crate::canonical::{canonical_text, parse_strict, sha256_hex};
use serde_json::Value;

/// Lowercase hex SHA-256 of the RFC 8785 canonical form of a calibration report's JSON:
/// what a calibration record's `report_sha256` holds. Whitespace and key order of the file
/// do not change it; any value does.
pub fn report_sha256(report: &str) -> Result<String, RecordError> {
    let value = parse_report(report)?;
    let canonical = canonical_text(&value).map_err(report_error)?;
    Ok(sha256_hex(canonical.as_bytes()))
}

fn parse_report(report: &str) -> Result<Value, RecordError> {
    if report.len() > super::MAX_RECORD_BYTES {
        return Err(RecordError::Report {
            field: "report".into(),
            reason: format!("the report is {} bytes, more than the limit of 64 MiB", report.len()),
        });
    }
    parse_strict(report).map_err(report_error)
}

fn report_error(error: serde_json::Error) -> RecordError {
    let (line, column) = (error.line(), error.column());
    RecordError::Report {
        field: "report".into(),
        reason: format!(
            "the report is not valid JSON: {} (line {line}, column {column})",
            crate::canonical::JsonError::from(error).reason()
        ),
    }
}

/// One plant as both sides count it: where it is, its category, and in how many trials it
/// was caught.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct PlantCount {
    entry: Option<String>,
    file: String,
    line: u64,
    category: String,
    caught_in: u64,
}

impl PlantCount {
    fn describe(&self) -> String {
        let entry = self.entry.as_deref().map(|entry| format!("{entry}: ")).unwrap_or_default();
        format!("{entry}{}:{} ({})", self.file, self.line, self.category)
    }
}

impl CalibrationRecord {
    /// Holds the record against `report`, the calibration report it names: the report's
    /// hash must be `report_sha256`, its `commit` the record's, and its plants (those not
    /// excluded) exactly the record's, each caught in as many trials (`caughtInTrials`, or
    /// `status` with one trial). Refuses the first disagreement, naming it.
    ///
    /// What this does not check: the clean rounds (reports do not list them yet), and the
    /// findings (a report keeps the catching finding's text only).
    pub fn check_report(&self, report: &str) -> Result<(), RecordError> {
        let hash = report_sha256(report)?;
        if hash != self.report_sha256 {
            return Err(RecordError::Report {
                field: "report_sha256".into(),
                reason: format!(
                    "the record names report {}, but the report given hashes to {hash}: it is another report, or \
                     one of the two was altered",
                    self.report_sha256
                ),
            });
        }
        let value = parse_report(report)?;
        if let Some(commit) = value.get("commit").and_then(Value::as_str)
            && commit != self.commit
        {
            return Err(RecordError::Report {
                field: "commit".into(),
                reason: format!("the record names commit {:?}, the report {commit:?}", self.commit),
            });
        }
        let mut reported = report_plants(&value)?;
        let mut recorded = self.plant_counts();
        reported.sort();
        recorded.sort();
        if reported == recorded {
            return Ok(());
        }
        // Name the first plant that differs, from whichever side has it.
        let (only_record, only_report) = difference(&recorded, &reported);
        Err(match (only_record.first(), only_report.first()) {
            (Some(mine), Some(theirs)) if same_plant(mine, theirs) => RecordError::Report {
                field: self.plant_field(mine),
                reason: format!(
                    "plant {} is caught in {} trial(s) here and in {} in the report",
                    mine.describe(),
                    mine.caught_in,
                    theirs.caught_in
                ),
            },
            (Some(mine), _) => RecordError::Report {
                field: self.plant_field(mine),
                reason: format!(
                    "plant {} caught in {} trial(s) is not in the report that way (or is excluded there)",
                    mine.describe(),
                    mine.caught_in
                ),
            },
            (None, Some(theirs)) => RecordError::Report {
                field: "rounds".into(),
                reason: format!(
                    "the report's plant {} (caught in {} trial(s)) is in no round of the record",
                    theirs.describe(),
                    theirs.caught_in
                ),
            },
            (None, None) => {
                RecordError::Report { field: "rounds".into(), reason: "the plants differ".into() }
            }
        })
    }

    fn plant_counts(&self) -> Vec<PlantCount> {
        let mut counts = Vec::new();
        for round in &self.rounds {
            for (index, plant) in round.plants.iter().enumerate() {
                let caught_in = round
                    .trials
                    .iter()
                    .filter(|trial| trial.statuses.get(index) == Some(&PlantStatus::Caught))
                    .count() as u64;
                counts.push(PlantCount {
                    entry: round.entry.clone(),
                    file: plant.file.clone(),
                    line: plant.line,
                    category: plant.category.clone(),
                    caught_in,
                });
            }
        }
        counts
    }

    /// Where in the record a plant is (the first round listing it).
    fn plant_field(&self, plant: &PlantCount) -> String {
        for (index, round) in self.rounds.iter().enumerate() {
            for (number, candidate) in round.plants.iter().enumerate() {
                if round.entry == plant.entry
                    && candidate.file == plant.file
                    && candidate.line == plant.line
                    && candidate.category == plant.category
                {
                    return format!("rounds[{index}].plants[{number}]");
                }
            }
        }
        "rounds".into()
    }
}

fn same_plant(a: &PlantCount, b: &PlantCount) -> bool {
    (&a.entry, &a.file, a.line, &a.category) == (&b.entry, &b.file, b.line, &b.category)
}

/// The items of each sorted list that the other lacks (as multisets).
fn difference(a: &[PlantCount], b: &[PlantCount]) -> (Vec<PlantCount>, Vec<PlantCount>) {
    let (mut only_a, mut only_b) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                only_a.push(x.clone());
                i += 1;
            }
            (Some(_), Some(y)) => {
                only_b.push(y.clone());
                j += 1;
            }
            (Some(x), None) => {
                only_a.push(x.clone());
                i += 1;
            }
            (None, Some(y)) => {
                only_b.push(y.clone());
                j += 1;
            }
            (None, None) => break,
        }
    }
    (only_a, only_b)
}

/// The report's plants that were not excluded, with their catches.
fn report_plants(report: &Value) -> Result<Vec<PlantCount>, RecordError> {
    let bad = |field: String, reason: &str| RecordError::Report { field, reason: reason.to_owned() };
    let Some(plants) = report.get("plants").and_then(Value::as_array) else {
        return Err(bad("report.plants".into(), "the report has no `plants` array"));
    };
    let mut counts = Vec::new();
    for (index, plant) in plants.iter().enumerate() {
        let place = format!("report.plants[{index}]");
        let text = |name: &str| plant.get(name).and_then(Value::as_str).map(str::to_owned);
        let status =
            text("status").ok_or_else(|| bad(format!("{place}.status"), "missing or not a string"))?;
        if status == "excluded" {
            continue;
        }
        let caught_in = match plant.get("caughtInTrials") {
            Some(value) => value
                .as_u64()
                .ok_or_else(|| bad(format!("{place}.caughtInTrials"), "must be an integer >= 0"))?,
            None => match status.as_str() {
                "caught" => 1,
                "missed" => 0,
                _ => return Err(bad(format!("{place}.status"), "must be caught, missed or excluded")),
            },
        };
        counts.push(PlantCount {
            entry: text("entry"),
            file: text("file").ok_or_else(|| bad(format!("{place}.file"), "missing or not a string"))?,
            line: plant
                .get("line")
                .and_then(Value::as_u64)
                .ok_or_else(|| bad(format!("{place}.line"), "missing or not a line number"))?,
            category: text("category")
                .ok_or_else(|| bad(format!("{place}.category"), "missing or not a string"))?,
            caught_in,
        });
    }
    Ok(counts)
}
