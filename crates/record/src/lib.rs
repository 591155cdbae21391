//! The calibration record's review rounds: what a calibration run showed a reviewer (per
//! round the change, with the plants it carried and their bug categories, or for a clean
//! round the lines the unplanted change touched) and what the reviewer did (per trial each
//! plant caught or missed, its located findings, whether it flagged the change), with the one
//! rule for "flagged" ([`flagged`], [`locates`]), the one rule for which file a finding's path
//! names ([`ChangedFiles`]) and the figures recomputed from rounds ([`Summary`]).
//!
//! Both sides of a calibration use these types: `revcal-calibrate` writes a report's rounds
//! in this form, and `revcal-elo-protocol` reads a calibration record made of them (its
//! `CalibrationRecord`, with the record's checks and its mapping to signed messages), so that
//! a report and the ledger cannot count false alarms differently. The crate depends on serde
//! alone; `revcal-elo-protocol` re-exports every item of the rounds under the same names, and
//! so does `revcal-elo`, the ledger. docs/reputation.md
//! ("Verified outcomes") gives the JSON form.
//!
//! It also holds [`JudgeUsage`], what a model spent in a calibration: the report (revcal-report)
//! records it and the judge (revcal-judge) counts it, and neither builds the other.
//!
//! ```
//! use revcal_record::{ChangedFiles, Finding, Round, TouchedLines, Trial, flagged};
//!
//! // A clean round: the change touched lines 10 to 12 of src/lib.rs.
//! let round = Round {
//!     round: 1,
//!     entry: None,
//!     commit: None,
//!     plants: Vec::new(),
//!     touched: vec![TouchedLines { file: "src/lib.rs".into(), first: 10, last: 12 }],
//!     trials: Vec::new(),
//! };
//! let finding = |line| Finding { file: "lib.rs".into(), line, body: "suspicious".into() };
//! let trial = |findings| Trial { trial: 1, statuses: Vec::new(), flagged: false, findings };
//! // The files the calibration changed: here only src/lib.rs, so `lib.rs` names it.
//! let files = ChangedFiles::of(std::slice::from_ref(&round), &round);
//! // A finding within three lines of a touched line flags the change (a false alarm).
//! assert!(flagged(&round, &trial(vec![finding(15)]), &files));
//! assert!(!flagged(&round, &trial(vec![finding(16)]), &files));
//! ```

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The most findings a review carries as comments (the first ones, in the record's order):
/// the ledger's limit for one review message, and so the most a report's round lists.
pub const MAX_REVIEW_COMMENTS: usize = 50;
/// The longest comment body, in characters; a longer finding is cut there.
pub const MAX_COMMENT_CHARS: usize = 1000;

/// One review round: a change shown to the reviewer, once per trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Round {
    /// The round's number (1-based; increasing through the record).
    pub round: u64,
    /// The suite entry the round belongs to, for a suite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// The round's commit when it is not the record's (a suite entry's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The bugs planted in the change; empty for a clean round.
    #[serde(default)]
    pub plants: Vec<Plant>,
    /// For a clean round only: the lines the change touched (its hunks on the new side).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub touched: Vec<TouchedLines>,
    /// What the reviewer did, trial by trial (numbered 1, 2, ... in order).
    pub trials: Vec<Trial>,
}

impl Round {
    /// True for a round that carried a plant.
    pub fn is_planted(&self) -> bool {
        !self.plants.is_empty()
    }
}

/// One planted bug.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plant {
    /// The file, relative to the repository root.
    pub file: String,
    /// The planted line (1-based).
    pub line: u64,
    /// The bug category, e.g. `off-by-one`.
    pub category: String,
}

/// Lines a clean round's change touched in one file: `first` to `last`, 1-based, inclusive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TouchedLines {
    /// The file, relative to the repository root.
    pub file: String,
    /// The first line touched.
    pub first: u64,
    /// The last line touched (>= `first`).
    pub last: u64,
}

/// What the reviewer did in one trial of a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trial {
    /// The trial's number (1-based).
    pub trial: u64,
    /// Per plant of the round, in its order: caught (located and identified by the
    /// calibration's scorer) or missed. Empty for a clean round.
    #[serde(default)]
    pub statuses: Vec<PlantStatus>,
    /// Whether the reviewer flagged the change: for a planted round, it caught at least one
    /// plant; for a clean round, a finding locates a line the change touched (see
    /// [`LOCATE_TOLERANCE`]). Checked against the statuses and findings on reading.
    pub flagged: bool,
    /// The reviewer's located findings (a finding without a file and line is not here).
    #[serde(default)]
    pub findings: Vec<Finding>,
}

/// A plant's fate in one trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlantStatus {
    /// A finding located the plant and the scorer found that it describes the defect.
    Caught,
    /// No finding did.
    Missed,
}

impl PlantStatus {
    /// `caught` or `missed`, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            PlantStatus::Caught => "caught",
            PlantStatus::Missed => "missed",
        }
    }

    /// The status named `name`.
    pub fn from_wire(name: &str) -> Option<PlantStatus> {
        [PlantStatus::Caught, PlantStatus::Missed].into_iter().find(|status| status.as_str() == name)
    }
}

/// One located finding of the reviewer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// The file the finding names.
    pub file: String,
    /// The line it names (1-based).
    pub line: u64,
    /// What it says (the review's comment; a blank one reads `(no text)`).
    pub body: String,
}

/// How far (in lines) a finding may be from a touched line and still locate it: the
/// calibration scorer's rule for locating a plant (the same file, line within +-3).
pub const LOCATE_TOLERANCE: u64 = 3;

/// The figures of a calibration record.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// Rounds that carried a plant.
    pub planted_rounds: u64,
    /// Rounds that did not (clean changes).
    pub clean_rounds: u64,
    /// Reviews: every trial of every round (one request, review and outcome each).
    pub reviews: u64,
    /// Plants, over all rounds.
    pub plants: u64,
    /// Plants caught, counted once per trial that caught them.
    pub caught: u64,
    /// Trials of planted rounds the reviewer flagged (REQUEST_CHANGES on a bug).
    pub flagged_planted: u64,
    /// Trials of clean rounds the reviewer flagged (false alarms).
    pub flagged_clean: u64,
    /// By bug category: plants caught and plants shown, both counted per trial.
    pub per_category: BTreeMap<String, CategoryFigures>,
}

/// One category's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CategoryFigures {
    /// Plants of the category caught, once per trial.
    pub caught: u64,
    /// Plants of the category, once per trial.
    pub total: u64,
}

impl Summary {
    /// The figures of `rounds`.
    pub fn of(rounds: &[Round]) -> Summary {
        let mut summary = Summary::default();
        for round in rounds {
            let trials = round.trials.len() as u64;
            summary.reviews += trials;
            summary.plants += round.plants.len() as u64;
            if round.is_planted() {
                summary.planted_rounds += 1;
            } else {
                summary.clean_rounds += 1;
            }
            let files = ChangedFiles::of(rounds, round);
            for trial in &round.trials {
                let flagged = flagged(round, trial, &files);
                match (round.is_planted(), flagged) {
                    (true, true) => summary.flagged_planted += 1,
                    (false, true) => summary.flagged_clean += 1,
                    _ => {}
                }
                for (plant, status) in round.plants.iter().zip(&trial.statuses) {
                    let category = summary.per_category.entry(plant.category.clone()).or_default();
                    category.total += 1;
                    if *status == PlantStatus::Caught {
                        category.caught += 1;
                        summary.caught += 1;
                    }
                }
            }
        }
        summary
    }
}

/// Whether the reviewer flagged the round's change in `trial`: a planted round when it
/// caught at least one of its plants (a review that only points elsewhere approved buggy
/// code); a clean round when a finding locates a line the change touched, the finding's path
/// read against `files` (the files the calibration changed: [`ChangedFiles::of`]).
pub fn flagged(round: &Round, trial: &Trial, files: &ChangedFiles) -> bool {
    if round.is_planted() {
        trial.statuses.contains(&PlantStatus::Caught)
    } else {
        trial
            .findings
            .iter()
            .any(|finding| round.touched.iter().any(|touched| locates(finding, touched, files)))
    }
}

/// True when `finding` locates a line of `touched`: its path names the touched file (see
/// [`ChangedFiles::resolve`]) and its line is within [`LOCATE_TOLERANCE`] of the touched
/// lines.
pub fn locates(finding: &Finding, touched: &TouchedLines, files: &ChangedFiles) -> bool {
    files.resolve(&finding.file).is_some_and(|file| file == normalise_path(&touched.file))
        && finding.line.saturating_add(LOCATE_TOLERANCE) >= touched.first
        && finding.line <= touched.last.saturating_add(LOCATE_TOLERANCE)
}

/// A path as findings and records compare it: `/`-separated (a Windows `\` too), without a
/// `file://` scheme, empty components, `.` components or trailing separators; a `..` goes up
/// a component where there is one.
pub fn normalise_path(path: &str) -> String {
    let path = path.trim();
    let path = path.strip_prefix("file://").unwrap_or(path);
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|last| *last != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

/// The files a calibration changed (every plant's file and every clean change's), against
/// which a finding's path is read. Reviewers write paths many ways: relative to the
/// repository (`src/a.rs`, `./src/a.rs`), from another root (`/home/ci/repo/src/a.rs`,
/// `b/src/a.rs`), relative to a subdirectory (`a.rs` from `src/`), with Windows separators.
/// A path names a changed file when, normalised ([`normalise_path`]), it is that file's path;
/// or ends with it, and no longer changed file fits (its root was elsewhere); or is the end
/// of that file's path (down to the bare file name) and of no other changed file's. So
/// `__init__.py` names `tenacity/__init__.py` only when no other `__init__.py` was changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangedFiles {
    files: Vec<String>,
}

impl ChangedFiles {
    /// These files (repository-relative paths, normalised here).
    pub fn new<'a>(files: impl IntoIterator<Item = &'a str>) -> ChangedFiles {
        let mut files: Vec<String> =
            files.into_iter().map(normalise_path).filter(|f| !f.is_empty()).collect();
        files.sort();
        files.dedup();
        ChangedFiles { files }
    }

    /// The files changed by the rounds of `rounds` that share `round`'s entry and commit (a
    /// suite's other entries are other repositories): their plants' files and the files
    /// their clean changes touched.
    pub fn of(rounds: &[Round], round: &Round) -> ChangedFiles {
        let same = rounds.iter().filter(|other| other.entry == round.entry && other.commit == round.commit);
        ChangedFiles::new(same.flat_map(|other| {
            other
                .plants
                .iter()
                .map(|plant| plant.file.as_str())
                .chain(other.touched.iter().map(|touched| touched.file.as_str()))
        }))
    }

    /// The changed file `path` names, if it names exactly one (see the type's docs).
    pub fn resolve(&self, path: &str) -> Option<&str> {
        let path = normalise_path(path);
        if path.is_empty() {
            return None;
        }
        if let Some(file) = self.files.iter().find(|file| **file == path) {
            return Some(file);
        }
        // A longer path: the changed file it ends with, the longest one.
        let ends = |long: &str, short: &str| {
            long.len() > short.len()
                && long.ends_with(short)
                && long.as_bytes()[long.len() - short.len() - 1] == b'/'
        };
        if let Some(file) = self.files.iter().filter(|file| ends(&path, file)).max_by_key(|file| file.len()) {
            return Some(file);
        }
        // A shorter path: the one changed file that ends with it.
        let mut ending = self.files.iter().filter(|file| ends(file, &path));
        match (ending.next(), ending.next()) {
            (Some(file), None) => Some(file),
            _ => None,
        }
    }
}

/// What a model spent in a run (the judge's, or the built-in reviewer's): reported in a
/// calibration report's JSON (`judge`, `reviewerUsage`) and its human summary. revcal-judge
/// re-exports it, as the usage its judges keep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JudgeUsage {
    /// The provider (`anthropic`, `openai`, `gemini`).
    pub provider: String,
    /// The model.
    pub model: String,
    /// Requests sent (retries included).
    pub calls: u64,
    /// Answers taken from the verdict cache.
    pub cache_hits: u64,
    /// Prompt tokens, as the provider counted them.
    pub input_tokens: u64,
    /// Output tokens (reasoning included), as the provider counted them.
    pub output_tokens: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planted_round(statuses: Vec<PlantStatus>) -> Round {
        let plant = |line, category: &str| Plant { file: "src/a.rs".into(), line, category: category.into() };
        Round {
            round: 1,
            entry: None,
            commit: None,
            plants: vec![plant(3, "off-by-one"), plant(9, "logic-inversion")],
            touched: Vec::new(),
            trials: vec![Trial { trial: 1, statuses, flagged: false, findings: Vec::new() }],
        }
    }

    #[test]
    fn a_planted_round_is_flagged_only_when_a_plant_is_caught() {
        let files = ChangedFiles::default();
        let missed = planted_round(vec![PlantStatus::Missed, PlantStatus::Missed]);
        assert!(!flagged(&missed, &missed.trials[0], &files));
        let caught = planted_round(vec![PlantStatus::Missed, PlantStatus::Caught]);
        assert!(flagged(&caught, &caught.trials[0], &files));
    }

    #[test]
    fn locating_reads_the_path_against_the_changed_files_within_the_tolerance() {
        let touched = TouchedLines { file: "src/a.rs".into(), first: 10, last: 12 };
        let files = ChangedFiles::new(["src/a.rs", "src/b.rs"]);
        let at = |file: &str, line| Finding { file: file.into(), line, body: String::new() };
        assert!(locates(&at("a.rs", 7), &touched, &files));
        assert!(locates(&at("C:\\work\\src\\a.rs", 15), &touched, &files));
        assert!(locates(&at("./src/a.rs", 10), &touched, &files));
        assert!(!locates(&at("a.rs", 6), &touched, &files));
        assert!(!locates(&at("a.rs", 16), &touched, &files));
        assert!(!locates(&at("b.rs", 11), &touched, &files));
        assert!(!locates(&at("other/a.rs", 11), &touched, &files), "another directory's a.rs");
    }

    #[test]
    fn a_path_names_a_changed_file_by_its_whole_path_or_an_end_only_one_file_has() {
        let files = ChangedFiles::new([
            "tenacity/__init__.py",
            "tenacity/asyncio/__init__.py",
            "src/lib/mod.rs",
            "web/index.js",
            "cmd/main.go",
            "./pkg/b/main.go",
        ]);
        let cases = [
            ("tenacity/__init__.py", Some("tenacity/__init__.py")),
            ("./tenacity/asyncio/__init__.py", Some("tenacity/asyncio/__init__.py")),
            ("/home/ci/work/repo/tenacity/__init__.py", Some("tenacity/__init__.py")),
            ("/home/ci/tenacity/asyncio/__init__.py", Some("tenacity/asyncio/__init__.py")),
            ("b/tenacity/asyncio/__init__.py", Some("tenacity/asyncio/__init__.py")),
            ("asyncio/__init__.py", Some("tenacity/asyncio/__init__.py")),
            ("__init__.py", None),
            ("mod.rs", Some("src/lib/mod.rs")),
            ("lib/mod.rs", Some("src/lib/mod.rs")),
            ("file:///ci/src/lib/mod.rs", Some("src/lib/mod.rs")),
            ("web\\index.js", Some("web/index.js")),
            ("index.js", Some("web/index.js")),
            ("main.go", None),
            ("b/main.go", Some("pkg/b/main.go")),
            ("cmd/../pkg/b/main.go", Some("pkg/b/main.go")),
            ("other.py", None),
            ("xmain.go", None),
            ("", None),
            ("./", None),
        ];
        for (path, named) in cases {
            assert_eq!(files.resolve(path), named, "{path:?}");
        }
    }

    #[test]
    fn the_summary_counts_per_trial_and_per_category() {
        let mut round = planted_round(vec![PlantStatus::Caught, PlantStatus::Missed]);
        round.trials.push(Trial {
            trial: 2,
            statuses: vec![PlantStatus::Caught, PlantStatus::Caught],
            flagged: true,
            findings: Vec::new(),
        });
        let summary = Summary::of(&[round]);
        assert_eq!((summary.planted_rounds, summary.reviews, summary.plants, summary.caught), (1, 2, 2, 3));
        assert_eq!(summary.flagged_planted, 2);
        assert_eq!(summary.per_category["off-by-one"], CategoryFigures { caught: 2, total: 2 });
        assert_eq!(summary.per_category["logic-inversion"], CategoryFigures { caught: 1, total: 2 });
    }

    #[test]
    fn the_json_form_is_the_records() {
        let status: PlantStatus = serde_json::from_str("\"caught\"").unwrap();
        assert_eq!(status, PlantStatus::Caught);
        let error = serde_json::from_str::<Plant>(r#"{"file": "a", "line": 1, "category": "x", "extra": 1}"#);
        assert!(error.unwrap_err().to_string().contains("unknown field `extra`"));
    }
}
