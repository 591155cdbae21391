//! The planted bug, as a calibration chooses it and its report records it: plain data.
//! Applying a plant to a file, locating a finding near it and showing it to a judge are
//! revcal-calibrate's.

use serde::{Deserialize, Serialize};

/// One planted bug: one whole source line replaced by another.
///
/// The same type is chosen by a calibration run (revcal-calibrate), asked about by its judge
/// (in the form revcal-calibrate's `JudgedForm` gives it) and recorded by a
/// [`ReportBuilder`](crate::ReportBuilder).
/// Its JSON form is the judge's: every field but `id` and `witness` (the witness would hand
/// the judge the answer), so a plant read back from JSON has an empty id and no witness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plant {
    /// Stable id (the mutant's id, or `plants-file#N`).
    #[serde(skip)]
    pub id: String,
    /// The file, relative to the work tree, `/`-separated.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// Bug category (kebab-case, e.g. `off-by-one`).
    pub category: String,
    /// The operator that made it (`plants-file` for hand-written plants).
    pub operator: String,
    /// One sentence: what is now wrong (empty when nobody said).
    pub defect: String,
    /// The whole source line before.
    pub original: String,
    /// The whole source line after.
    pub mutated: String,
    /// A shell command that passes on the original and fails on the mutant, if known.
    #[serde(skip)]
    pub witness: Option<String>,
    /// The last line of a plant that spans several lines (a real bug's patch), in the planted
    /// file; `None` for a one-line plant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    /// The commit that fixed this bug, for a real bug from a bugs file; `None` for a
    /// synthetic plant.
    #[serde(skip)]
    pub fix_commit: Option<String>,
    /// A real bug's line replacements (from its patch); empty for a one-line plant, which
    /// replaces `line` of `file`.
    #[serde(skip)]
    pub edits: Vec<PlantEdit>,
    /// Where the plant sits in the planted tree when other plants moved its lines (set when
    /// a file holds a real bug); empty means `file` at `line..=end_line`.
    #[serde(skip)]
    pub spans: Vec<PlantSpan>,
}

impl Plant {
    /// A plant that replaces line `line` of `file` (`original`, the whole line) with
    /// `mutated`: id `file:line`, no witness and no defect sentence (empty: the report then
    /// has `defect: null`); add one with [`with_defect`](Self::with_defect).
    pub fn new(
        file: impl Into<String>,
        line: u32,
        category: impl Into<String>,
        operator: impl Into<String>,
        original: impl Into<String>,
        mutated: impl Into<String>,
    ) -> Self {
        let file = file.into();
        Plant {
            id: format!("{file}:{line}"),
            file,
            line,
            category: category.into(),
            operator: operator.into(),
            defect: String::new(),
            original: original.into(),
            mutated: mutated.into(),
            witness: None,
            end_line: None,
            fix_commit: None,
            edits: Vec::new(),
            spans: Vec::new(),
        }
    }
    /// The same plant with a defect sentence.
    pub fn with_defect(mut self, defect: impl Into<String>) -> Self {
        self.defect = defect.into();
        self
    }
    /// The same plant with a witness command.
    pub fn with_witness(mut self, witness: impl Into<String>) -> Self {
        self.witness = Some(witness.into());
        self
    }
    /// `file:line`, or `file:line-end` for a plant over several lines.
    pub fn location(&self) -> String {
        match self.end_line.filter(|end| *end != self.line) {
            Some(end) => format!("{}:{}-{end}", self.file, self.line),
            None => format!("{}:{}", self.file, self.line),
        }
    }
    /// True for a real bug (re-introduced from a bugs file's patch), false for a synthetic one.
    pub fn is_real(&self) -> bool {
        self.fix_commit.is_some()
    }
}

/// One contiguous replacement of lines: the lines of `file` from `start` (0-based, before
/// planting) that read `old` become `new`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlantEdit {
    /// The file, relative to the work tree, `/`-separated.
    pub file: String,
    /// The first line replaced, 0-based, before planting.
    pub start: usize,
    /// The lines as they read before planting.
    pub old: Vec<String>,
    /// The lines that take their place.
    pub new: Vec<String>,
}

/// Lines `first..=last` (1-based) of `file` in the planted tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlantSpan {
    /// The file, relative to the work tree, `/`-separated.
    pub file: String,
    /// The first line, 1-based.
    pub first: u32,
    /// The last line, 1-based.
    pub last: u32,
}
