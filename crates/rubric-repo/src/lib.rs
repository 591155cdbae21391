//! Load a library of revcal rubrics with compiler-quality diagnostics; look rubrics up,
//! search them, and check a judge against human-labelled calibration data.
//!
//! Loading reads `*.yaml`, `*.yml` and `*.json` files, validates each against the JSON
//! Schema generated from [`revcal_rubric_model`]'s types, runs the semantic checks the
//! schema cannot express, and maps every problem back to file, line and column. Every
//! problem in every file is reported in one run.
//!
//! ```
//! use revcal_rubric_repo::{Linter, Query, Repository};
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("notes.yaml"), r#"
//! rubric_id: release_notes_v1
//! name: Release notes
//! version: 1.0.0
//! artifact_type: release_notes
//! criteria:
//!   - name: accuracy
//!     description: Every entry matches a change that shipped.
//!     weight: essential
//!     threshold: 3
//!     anchors: {1: Invented, 2: Several wrong, 3: One slip, 4: Right, 5: Right and linked}
//!     examples: {score_1: "Improved performance.", score_5: "Fix #812: `sync` no longer drops the last batch."}
//! scoring: {pass_threshold: 3.5}
//! "#).unwrap();
//!
//! let repo = Repository::load(dir.path()).unwrap();
//! let rubric = repo.get("release_notes_v1").unwrap();
//! assert_eq!(rubric.criteria[0].name, "accuracy");
//! assert_eq!(repo.search(&Query::artifact_type("release_notes")).len(), 1);
//! assert_eq!(repo.stats().usage["release_notes_v1"], 1);
//!
//! // A broken rubric: every problem, each with its line and column.
//! std::fs::write(dir.path().join("broken.yaml"), "rubric_id: Bad Id\nversion: 1.0\n").unwrap();
//! let report = Linter::new().unwrap().lint_paths(&[dir.path().to_path_buf()]).unwrap();
//! let version = report.diagnostics.iter().find(|d| d.rule.id() == "RL-04").unwrap();
//! assert_eq!((version.line, version.column), (2, 10));
//! let rules: Vec<&str> = report.diagnostics.iter().map(|d| d.rule.id()).collect();
//! assert_eq!(rules, ["SCHEMA", "SCHEMA", "RL-04"]); // missing fields, `Bad Id`, `1.0`
//! ```

mod dataset;
mod diagnostic;
mod error;
mod lint;
mod marks;
mod repository;
mod salvage;
mod schema_check;
mod source;
mod telemetry;
mod walk;
mod yaml;

pub use dataset::{
    CORRELATION_TARGET, CalibrationExample, CorrelationError, DatasetError, MAX_DATASET_BYTES,
    calibration_correlation, check_against, criterion_correlations, load_dataset, local_path, parse_dataset,
};
pub use diagnostic::{Diagnostic, RelatedLocation};
pub use error::RepoError;
pub use lint::{LintReport, Linter, LoadedRubric};
pub use marks::{Position, Span};
pub use repository::{Query, Repository};
pub use schema_check::SchemaBuildError;
pub use source::MAX_FILE_BYTES;
pub use telemetry::{LatencyHistogram, Stats};
pub use walk::{discover, is_rubric_file};
pub use yaml::to_yaml_string;
