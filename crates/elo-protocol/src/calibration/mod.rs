//! A calibration as review traffic: the neutral record of what a calibration run showed a
//! reviewer and what the reviewer said (docs/reputation.md, "Verified outcomes", gives the
//! JSON form), its integrity checks, and its mapping to signed RFC-001 messages.
//!
//! The record is a *calibration record* file, `revcal-calibration-record` version 1: per
//! review round the change (the plants it carried with their bug categories, or, for a
//! clean round, the lines the unplanted change touched) and per trial what the reviewer
//! did (each plant caught or missed, its located findings, whether it flagged the change),
//! with the figures a reader checks (`summary`). The rounds' types and the rule for a
//! flagged change are `revcal-record`'s (re-exported here), the one revcal crate this crate
//! depends on: the calibration side writes rounds of that form, and `revcal elo record` reads
//! them.

mod figures;
mod report;
mod traffic;

pub use report::report_sha256;
// The rounds, their figures and the rule for a flagged change are revcal-record's, shared
// with the calibration side; this crate keeps their names.
pub use revcal_record::{
    CategoryFigures, ChangedFiles, Finding, LOCATE_TOLERANCE, MAX_COMMENT_CHARS, MAX_REVIEW_COMMENTS, Plant,
    PlantStatus, Round, Summary, TouchedLines, Trial, flagged, locates, normalise_path,
};
pub use traffic::RoundMessages;

use crate::canonical::parse_strict;
use crate::link::{
    MAX_LINK_DOMAINS, MAX_PLANT_PATH_BYTES, MAX_ROUND_PLANTS, category_problem, is_sha256_hex,
};
use crate::signed::MessageError;
use serde::{Deserialize, Serialize};

/// The value of a calibration record's `format`.
pub const RECORD_FORMAT: &str = "revcal-calibration-record";
/// The version of the format this build reads and writes.
pub const RECORD_VERSION: u64 = 1;
/// The largest calibration record read, in bytes (64 MiB).
pub const MAX_RECORD_BYTES: usize = 64 << 20;
/// The most trials of one round.
pub const MAX_TRIALS: usize = 100;
/// The largest integer a record carries exactly (JSON numbers are doubles).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A calibration as review traffic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationRecord {
    /// Always [`RECORD_FORMAT`].
    pub format: String,
    /// Always [`RECORD_VERSION`].
    pub version: u64,
    /// Lowercase hex SHA-256 of the calibration report's RFC 8785 canonical JSON
    /// ([`report_sha256`] computes it).
    pub report_sha256: String,
    /// The commit the calibration planted in (the report's `commit`).
    pub commit: String,
    /// The repository, e.g. `github.com/acme/payments` (named in the requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// The reviewer as the calibration names it (its command or model).
    pub reviewer: String,
    /// When the calibration ran: Unix time in milliseconds. Every message takes its `ts`
    /// from here, so the same record and keys always give the same messages.
    pub ts: u64,
    /// The review rounds, in increasing `round` order.
    pub rounds: Vec<Round>,
    /// The figures a reader checks, recomputed from the rounds on reading.
    pub summary: Summary,
}

/// Why a calibration record was refused, or could not become messages.
///
/// Each message is complete on its own and names the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// Not JSON, a key written twice, or a field of the wrong type, missing or unknown.
    #[error("not a calibration record: {reason} (line {line}, column {column})")]
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        reason: String,
    },
    /// The record is longer than [`MAX_RECORD_BYTES`]; it was not parsed.
    #[error("the record is {bytes} bytes, more than the limit of {} MiB", MAX_RECORD_BYTES >> 20)]
    TooLarge {
        /// Its length.
        bytes: usize,
    },
    /// A field's value is out of range or contradicts another.
    #[error("`{field}`: {reason}")]
    Field {
        /// Dotted path, e.g. `rounds[2].trials[0].statuses`.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// A figure differs from what the record's rounds give: the record was altered, or
    /// written by a program that counts otherwise.
    #[error(
        "`{field}`: the record states {stated}, but its rounds give {recomputed}; refusing an altered or inconsistent record"
    )]
    Figure {
        /// The figure.
        field: String,
        /// What the record states.
        stated: String,
        /// What the rounds give.
        recomputed: String,
    },
    /// The record disagrees with the calibration report given beside it.
    #[error("`{field}`: {reason}")]
    Report {
        /// The record's field (or `report` for what the report has and the record lacks).
        field: String,
        /// How they disagree.
        reason: String,
    },
    /// The authority and the reviewer are one key: a review of one's own request does not
    /// score, so a reviewer cannot be calibrated with its own key.
    #[error(
        "the calibrating authority and the reviewer are the same key ({agent}); sign with the authority's key and the reviewer's own"
    )]
    SameKey {
        /// The agent id of the key.
        agent: String,
    },
    /// A message could not be made (it would be longer than a message may be).
    #[error("round {round}, trial {trial}: {source}")]
    Message {
        /// The round.
        round: u64,
        /// The trial.
        trial: u64,
        /// Why.
        #[source]
        source: MessageError,
    },
}

impl RecordError {
    /// The field at fault, when there is one.
    pub fn field(&self) -> Option<&str> {
        match self {
            RecordError::Field { field, .. }
            | RecordError::Figure { field, .. }
            | RecordError::Report { field, .. } => Some(field),
            _ => None,
        }
    }
}

fn field_error(field: impl Into<String>, reason: impl Into<String>) -> RecordError {
    RecordError::Field { field: field.into(), reason: reason.into() }
}

impl CalibrationRecord {
    /// Reads a calibration record: JSON (no key twice, no unknown field), every field in
    /// range, and every figure equal to what the rounds give (`flagged` of each trial, the
    /// `summary`). Anything else is refused with the field named.
    pub fn parse(text: &str) -> Result<CalibrationRecord, RecordError> {
        if text.len() > MAX_RECORD_BYTES {
            return Err(RecordError::TooLarge { bytes: text.len() });
        }
        let json = |error: serde_json::Error| RecordError::Json {
            line: error.line(),
            column: error.column(),
            reason: crate::canonical::JsonError::from(error).reason(),
        };
        // The strict parser refuses a key written twice; serde then names a missing,
        // mistyped or unknown field with its position.
        parse_strict(text).map_err(json)?;
        let record: CalibrationRecord = serde_json::from_str(text).map_err(json)?;
        record.validate()?;
        record.check_figures()?;
        Ok(record)
    }

    /// The record as JSON (what [`CalibrationRecord::parse`] reads back).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The sorted, distinct bug categories planted anywhere in the calibration: the domains
    /// a clean round counts in.
    pub fn categories(&self) -> Vec<String> {
        let mut categories: Vec<String> = self
            .rounds
            .iter()
            .flat_map(|round| round.plants.iter().map(|plant| plant.category.clone()))
            .collect();
        categories.sort();
        categories.dedup();
        categories
    }

    /// Checks every field's range and the rounds' shape.
    fn validate(&self) -> Result<(), RecordError> {
        if self.format != RECORD_FORMAT {
            return Err(field_error("format", format!("must be {RECORD_FORMAT:?}, found {:?}", self.format)));
        }
        if self.version != RECORD_VERSION {
            return Err(field_error(
                "version",
                format!("this revcal reads version {RECORD_VERSION}, found {}", self.version),
            ));
        }
        if !is_sha256_hex(&self.report_sha256) {
            return Err(field_error(
                "report_sha256",
                format!("must be a SHA-256 as 64 lowercase hex digits, found {:?}", self.report_sha256),
            ));
        }
        short_text("commit", &self.commit)?;
        short_text("reviewer", &self.reviewer)?;
        if let Some(repo) = &self.repo {
            short_text("repo", repo)?;
        }
        if self.ts > MAX_SAFE_INTEGER {
            return Err(field_error("ts", format!("must be Unix time in milliseconds, found {}", self.ts)));
        }
        if self.rounds.is_empty() {
            return Err(field_error("rounds", "must list at least one round"));
        }
        let mut previous = 0;
        let mut categories = std::collections::BTreeSet::new();
        for (index, round) in self.rounds.iter().enumerate() {
            categories.extend(round.plants.iter().map(|plant| plant.category.as_str()));
            if categories.len() > MAX_LINK_DOMAINS {
                return Err(field_error(
                    format!("rounds[{index}].plants"),
                    format!("a calibration plants bugs of at most {MAX_LINK_DOMAINS} categories"),
                ));
            }
            let path = format!("rounds[{index}]");
            if round.round == 0 || round.round > MAX_SAFE_INTEGER {
                return Err(field_error(
                    format!("{path}.round"),
                    format!("must be 1 or more, found {}", round.round),
                ));
            }
            if round.round <= previous {
                return Err(field_error(
                    format!("{path}.round"),
                    format!("rounds are listed in increasing order: {} follows {previous}", round.round),
                ));
            }
            previous = round.round;
            validate_round(&path, round)?;
        }
        Ok(())
    }
}

/// A text field that is not blank and at most 200 bytes.
fn short_text(field: &str, text: &str) -> Result<(), RecordError> {
    if text.trim().is_empty() {
        return Err(field_error(field, "must not be empty"));
    }
    if text.len() > 200 {
        return Err(field_error(field, format!("must be at most 200 bytes, found {}", text.len())));
    }
    Ok(())
}

/// A path named by a plant or touched lines: not blank, not too long, no control characters
/// (the outcome that names it must stay within a message's limit).
fn path_text(field: String, path: &str) -> Result<(), RecordError> {
    if path.trim().is_empty() {
        return Err(field_error(field, "must not be empty"));
    }
    if path.chars().any(char::is_control) {
        return Err(field_error(field, "must not contain control characters"));
    }
    if path.len() > MAX_PLANT_PATH_BYTES {
        return Err(field_error(
            field,
            format!("must be at most {MAX_PLANT_PATH_BYTES} bytes, found {}", path.len()),
        ));
    }
    Ok(())
}

/// A 1-based line number.
fn line_number(field: String, line: u64) -> Result<(), RecordError> {
    if line == 0 || line > MAX_SAFE_INTEGER {
        return Err(field_error(field, format!("must be a line number from 1, found {line}")));
    }
    Ok(())
}

fn validate_round(path: &str, round: &Round) -> Result<(), RecordError> {
    if let Some(entry) = &round.entry {
        short_text(&format!("{path}.entry"), entry)?;
    }
    if let Some(commit) = &round.commit {
        short_text(&format!("{path}.commit"), commit)?;
    }
    if round.plants.len() > MAX_ROUND_PLANTS {
        return Err(field_error(
            format!("{path}.plants"),
            format!("at most {MAX_ROUND_PLANTS} plants in one round, found {}", round.plants.len()),
        ));
    }
    for (index, plant) in round.plants.iter().enumerate() {
        let place = format!("{path}.plants[{index}]");
        path_text(format!("{place}.file"), &plant.file)?;
        line_number(format!("{place}.line"), plant.line)?;
        if let Some(problem) = category_problem(&plant.category) {
            return Err(field_error(format!("{place}.category"), problem));
        }
    }
    match (round.is_planted(), round.touched.is_empty()) {
        (true, false) => {
            return Err(field_error(
                format!("{path}.touched"),
                "only a clean round (one without plants) lists the lines its change touched",
            ));
        }
        (false, true) => {
            return Err(field_error(
                format!("{path}.touched"),
                "a clean round lists the lines its change touched (its false alarms are findings on them)",
            ));
        }
        _ => {}
    }
    for (index, touched) in round.touched.iter().enumerate() {
        let place = format!("{path}.touched[{index}]");
        path_text(format!("{place}.file"), &touched.file)?;
        line_number(format!("{place}.first"), touched.first)?;
        line_number(format!("{place}.last"), touched.last)?;
        if touched.last < touched.first {
            return Err(field_error(
                format!("{place}.last"),
                format!("must be at least `first` ({}), found {}", touched.first, touched.last),
            ));
        }
    }
    if round.trials.is_empty() || round.trials.len() > MAX_TRIALS {
        return Err(field_error(
            format!("{path}.trials"),
            format!("must list 1 to {MAX_TRIALS} trials, found {}", round.trials.len()),
        ));
    }
    for (index, trial) in round.trials.iter().enumerate() {
        let place = format!("{path}.trials[{index}]");
        if trial.trial != index as u64 + 1 {
            return Err(field_error(
                format!("{place}.trial"),
                format!(
                    "trials are numbered 1, 2, ... in order: expected {}, found {}",
                    index + 1,
                    trial.trial
                ),
            ));
        }
        if trial.statuses.len() != round.plants.len() {
            return Err(field_error(
                format!("{place}.statuses"),
                format!(
                    "one status per plant of the round: expected {}, found {}",
                    round.plants.len(),
                    trial.statuses.len()
                ),
            ));
        }
        // A finding is the reviewer's own text: only what makes it located is required (a
        // file and a line), so that nothing a reviewer writes can keep its calibration
        // from being recorded. Its review keeps what fits in a message.
        for (number, finding) in trial.findings.iter().enumerate() {
            let at = format!("{place}.findings[{number}]");
            if finding.file.is_empty() {
                return Err(field_error(
                    format!("{at}.file"),
                    "must not be empty: a located finding names a file",
                ));
            }
            line_number(format!("{at}.line"), finding.line)?;
        }
    }
    Ok(())
}
