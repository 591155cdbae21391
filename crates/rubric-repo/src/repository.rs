//! The loaded rubric library: lookup by id, search, telemetry.

use crate::dataset::{self, CalibrationExample, DatasetError};
use crate::diagnostic::Diagnostic;
use crate::error::RepoError;
use crate::lint::{LintReport, Linter};
use crate::telemetry::{Stats, Telemetry};
use revcal_rubric_model::Rubric;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// A validated, read-only set of rubrics.
///
/// Loading checks everything; afterwards the repository never changes, so `get` is a
/// hash lookup and an `Arc` clone, safe to call from many threads.
#[derive(Debug)]
pub struct Repository {
    by_id: HashMap<String, Entry>,
    /// Ids in sorted order, for stable listings.
    ids: Vec<String>,
    warnings: Vec<Diagnostic>,
    telemetry: Telemetry,
}

#[derive(Debug)]
struct Entry {
    rubric: Arc<Rubric>,
    file: PathBuf,
    uses: AtomicU64,
}

/// What to search for. Empty fields match everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    /// Only rubrics for this artifact type (exact match).
    pub artifact_type: Option<String>,
    /// Words that must all appear (case-insensitively) in the id, name or description.
    pub text: Option<String>,
}

impl Query {
    /// Rubrics for one artifact type.
    pub fn artifact_type(artifact_type: impl Into<String>) -> Query {
        Query { artifact_type: Some(artifact_type.into()), text: None }
    }

    /// Free-text search over id, name and description.
    pub fn text(text: impl Into<String>) -> Query {
        Query { artifact_type: None, text: Some(text.into()) }
    }

    fn matches(&self, rubric: &Rubric) -> bool {
        if let Some(wanted) = &self.artifact_type
            && rubric.artifact_type != *wanted
        {
            return false;
        }
        let Some(text) = &self.text else { return true };
        let haystack =
            format!("{} {} {}", rubric.rubric_id, rubric.name, rubric.description.as_deref().unwrap_or(""))
                .to_lowercase();
        text.to_lowercase().split_whitespace().all(|word| haystack.contains(word))
    }
}

impl Repository {
    /// Loads every rubric under `dir` (recursively: `*.yaml`, `*.yml`, `*.json`, not
    /// `schema.json`). Any error in any file fails the load with the full report;
    /// warnings are kept and available from [`Repository::warnings`].
    pub fn load(dir: impl AsRef<Path>) -> Result<Repository, RepoError> {
        let report = Linter::new()?.lint_paths(&[dir.as_ref().to_path_buf()])?;
        Repository::from_report(report)
    }

    /// Loads rubrics from in-memory documents, each named by a path whose extension
    /// picks YAML or JSON (for a library compiled into a program).
    pub fn from_sources<P: AsRef<Path>, S: AsRef<str>>(sources: &[(P, S)]) -> Result<Repository, RepoError> {
        Repository::from_report(Linter::new()?.lint_sources(sources))
    }

    /// Builds a repository from a lint report that has no errors.
    pub fn from_report(report: LintReport) -> Result<Repository, RepoError> {
        if report.error_count() > 0 {
            return Err(RepoError::Invalid { report: Box::new(report) });
        }
        let mut by_id = HashMap::with_capacity(report.rubrics.len());
        for loaded in report.rubrics {
            let id = loaded.rubric.rubric_id.clone();
            by_id.insert(id, Entry { rubric: loaded.rubric, file: loaded.file, uses: AtomicU64::new(0) });
        }
        let mut ids: Vec<String> = by_id.keys().cloned().collect();
        ids.sort();
        tracing::info!(rubrics = ids.len(), warnings = report.diagnostics.len(), "rubric library loaded");
        Ok(Repository { by_id, ids, warnings: report.diagnostics, telemetry: Telemetry::default() })
    }

    /// The rubric with this id.
    pub fn get(&self, id: &str) -> Option<Arc<Rubric>> {
        let started = Instant::now();
        let entry = self.by_id.get(id);
        let found = entry.map(|entry| {
            entry.uses.fetch_add(1, Ordering::Relaxed);
            Arc::clone(&entry.rubric)
        });
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.telemetry.record(found.is_some(), nanos);
        tracing::trace!(rubric_id = id, found = found.is_some(), nanos, "rubric lookup");
        found
    }

    /// The file a rubric was loaded from.
    pub fn file_of(&self, id: &str) -> Option<&Path> {
        self.by_id.get(id).map(|entry| entry.file.as_path())
    }

    /// Every rubric, sorted by id.
    pub fn list(&self) -> Vec<Arc<Rubric>> {
        self.ids.iter().filter_map(|id| self.by_id.get(id)).map(|entry| Arc::clone(&entry.rubric)).collect()
    }

    /// Rubrics matching `query`, sorted by id.
    pub fn search(&self, query: &Query) -> Vec<Arc<Rubric>> {
        let found: Vec<Arc<Rubric>> =
            self.list().into_iter().filter(|rubric| query.matches(rubric)).collect();
        tracing::debug!(?query, results = found.len(), "rubric search");
        found
    }

    /// Number of rubrics.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// True when no rubric is loaded.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Warnings found while loading (errors prevent loading).
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// Telemetry so far: lookups, misses, per-rubric use, latency histogram.
    pub fn stats(&self) -> Stats {
        let usage: BTreeMap<String, u64> =
            self.by_id.iter().map(|(id, entry)| (id.clone(), entry.uses.load(Ordering::Relaxed))).collect();
        self.telemetry.snapshot(self.by_id.len(), usage)
    }

    /// Loads and checks the calibration dataset a rubric names (its path is relative to
    /// the rubric's file).
    pub fn calibration_dataset(&self, id: &str) -> Result<Vec<CalibrationExample>, DatasetError> {
        let entry = self.by_id.get(id).ok_or_else(|| DatasetError::UnknownRubric(id.to_owned()))?;
        let reference = entry
            .rubric
            .calibration_dataset
            .as_deref()
            .ok_or_else(|| DatasetError::NotConfigured(id.to_owned()))?;
        let path = dataset::local_path(&entry.file, reference)
            .ok_or_else(|| DatasetError::Remote(reference.to_owned()))?;
        let examples = dataset::load_dataset(&path)?;
        dataset::check_against(&examples, &entry.rubric, &path)?;
        Ok(examples)
    }
}
