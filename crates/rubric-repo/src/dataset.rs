//! Calibration datasets: human-labelled artifacts for checking a judge against people.
//!
//! A dataset is JSON Lines, one `{"artifact": "...", "scores": {"criterion": n}}` per
//! line. A judge scores the same artifacts; [`calibration_correlation`] (Spearman's rank
//! correlation) says how well its ordering agrees with the humans'. The target is
//! [`CORRELATION_TARGET`].

use revcal_rubric_model::Rubric;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The correlation a judge should reach against human labels.
pub const CORRELATION_TARGET: f64 = 0.7;

/// One human-labelled artifact.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CalibrationExample {
    /// The artifact's text.
    pub artifact: String,
    /// Human scores per criterion.
    pub scores: BTreeMap<String, f64>,
    /// The 1-based line of the dataset file it was read from.
    #[serde(skip)]
    pub line: usize,
}

/// The largest calibration dataset read: 64 MiB of JSON lines.
pub const MAX_DATASET_BYTES: u64 = 64 << 20;

/// Why a dataset could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DatasetError {
    /// The file is larger than [`MAX_DATASET_BYTES`]; nothing past the limit was read.
    #[error("calibration dataset `{}` is larger than the limit of {} MiB", path.display(), MAX_DATASET_BYTES >> 20)]
    TooLarge {
        /// The dataset file.
        path: PathBuf,
    },
    /// The file could not be read.
    #[error("cannot read calibration dataset `{}`: {cause}", path.display())]
    Io {
        /// The dataset file.
        path: PathBuf,
        /// What the operating system said (said in the message, so it is not also the error's `source`: a chain says it once).
        cause: std::io::Error,
    },
    /// A line is not a valid example.
    #[error("{}:{line}: {message}", path.display())]
    Invalid {
        /// The dataset file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The reference is a URL; datasets are read from local files only.
    #[error("calibration dataset `{0}` is not a local path; revcal reads datasets from disk only")]
    Remote(String),
    /// The rubric names no dataset.
    #[error("rubric `{0}` has no calibration_dataset")]
    NotConfigured(String),
    /// No rubric with that id is loaded.
    #[error("no rubric `{0}` in the library")]
    UnknownRubric(String),
}

/// Why a correlation could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CorrelationError {
    /// The two series differ in length.
    #[error("judge and human scores differ in length ({judge} vs {human})")]
    LengthMismatch {
        /// Judge scores given.
        judge: usize,
        /// Human scores given.
        human: usize,
    },
    /// Fewer than three pairs: no meaningful correlation.
    #[error("at least 3 scored artifacts are needed, found {0}")]
    TooFew(usize),
    /// A score is NaN or infinite.
    #[error("score {0} is not a finite number")]
    NotFinite(f64),
    /// One series is constant, so rank correlation is undefined.
    #[error("the {0} scores are all equal, so their correlation is undefined")]
    Constant(&'static str),
}

/// Reads a dataset file.
pub fn load_dataset(path: &Path) -> Result<Vec<CalibrationExample>, DatasetError> {
    use std::io::Read;
    let io = |cause| DatasetError::Io { path: path.to_path_buf(), cause };
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_DATASET_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(io)?;
    if text.len() as u64 > MAX_DATASET_BYTES {
        return Err(DatasetError::TooLarge { path: path.to_path_buf() });
    }
    parse_dataset(&text, path)
}

/// Parses dataset text; `path` names it in errors. Blank lines are skipped.
pub fn parse_dataset(text: &str, path: &Path) -> Result<Vec<CalibrationExample>, DatasetError> {
    let invalid =
        |line: usize, message: String| DatasetError::Invalid { path: path.to_path_buf(), line, message };
    let mut examples = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut example: CalibrationExample = serde_json::from_str(line)
            .map_err(|error| invalid(index + 1, format!("not a calibration example: {error}")))?;
        example.line = index + 1;
        if let Some((criterion, score)) = example.scores.iter().find(|(_, s)| !s.is_finite()) {
            return Err(invalid(
                index + 1,
                format!("score {score} for `{criterion}` is not a finite number"),
            ));
        }
        examples.push(example);
    }
    if examples.is_empty() {
        return Err(invalid(1, "the dataset holds no examples".to_owned()));
    }
    Ok(examples)
}

/// Checks that every example scores only the rubric's criteria, inside its scale.
pub fn check_against(
    examples: &[CalibrationExample],
    rubric: &Rubric,
    path: &Path,
) -> Result<(), DatasetError> {
    for example in examples {
        for (criterion, &score) in &example.scores {
            let message = if rubric.criterion(criterion).is_none() {
                format!("criterion `{criterion}` is not in rubric `{}`", rubric.rubric_id)
            } else if !rubric.scale.contains(score) {
                format!(
                    "score {score} for `{criterion}` is outside the scale {}..{}",
                    rubric.scale.min, rubric.scale.max
                )
            } else {
                continue;
            };
            return Err(DatasetError::Invalid { path: path.to_path_buf(), line: example.line, message });
        }
    }
    Ok(())
}

/// The local file a `calibration_dataset` reference names, resolved against the rubric
/// file's directory; `None` for remote references (`https:` and other schemes).
pub fn local_path(rubric_file: &Path, reference: &str) -> Option<PathBuf> {
    let path = match reference.split_once(':') {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("file") => {
            rest.trim_start_matches("//").to_owned()
        }
        Some((scheme, _)) if !scheme.contains('/') => return None,
        _ => reference.to_owned(),
    };
    let path = PathBuf::from(path.replace("%20", " "));
    if path.is_absolute() {
        Some(path)
    } else {
        Some(rubric_file.parent().unwrap_or(Path::new(".")).join(path))
    }
}

/// Spearman's rank correlation between a judge's scores and human scores of the same
/// artifacts (ties get their average rank).
///
/// ```
/// use revcal_rubric_repo::calibration_correlation;
/// let human = [1.0, 2.0, 3.0, 4.0, 5.0];
/// let judge = [2.0, 1.0, 3.0, 5.0, 4.0];
/// let rho = calibration_correlation(&judge, &human).unwrap();
/// assert!((rho - 0.8).abs() < 1e-12);
/// ```
pub fn calibration_correlation(judge: &[f64], human: &[f64]) -> Result<f64, CorrelationError> {
    if judge.len() != human.len() {
        return Err(CorrelationError::LengthMismatch { judge: judge.len(), human: human.len() });
    }
    if judge.len() < 3 {
        return Err(CorrelationError::TooFew(judge.len()));
    }
    if let Some(&bad) = judge.iter().chain(human).find(|v| !v.is_finite()) {
        return Err(CorrelationError::NotFinite(bad));
    }
    let (judge_ranks, human_ranks) = (ranks(judge), ranks(human));
    pearson(&judge_ranks, &human_ranks)
}

/// Per-criterion correlations of a judge's scores against a dataset's human labels.
///
/// `judge[i]` scores `examples[i]`. A criterion is correlated over the examples where
/// both the judge and the humans scored it.
pub fn criterion_correlations(
    examples: &[CalibrationExample],
    judge: &[BTreeMap<String, f64>],
) -> Result<BTreeMap<String, Result<f64, CorrelationError>>, CorrelationError> {
    if examples.len() != judge.len() {
        return Err(CorrelationError::LengthMismatch { judge: judge.len(), human: examples.len() });
    }
    let mut pairs: BTreeMap<&str, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for (example, scored) in examples.iter().zip(judge) {
        for (criterion, &human) in &example.scores {
            if let Some(&by_judge) = scored.get(criterion) {
                let entry = pairs.entry(criterion).or_default();
                entry.0.push(by_judge);
                entry.1.push(human);
            }
        }
    }
    Ok(pairs
        .into_iter()
        .map(|(criterion, (judge, human))| (criterion.to_owned(), calibration_correlation(&judge, &human)))
        .collect())
}

fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start;
        while end + 1 < order.len() && values[order[end + 1]] == values[order[start]] {
            end += 1;
        }
        // Ranks are 1-based; tied values share the mean of the ranks they span.
        let average = (start + end) as f64 / 2.0 + 1.0;
        for &index in &order[start..=end] {
            ranks[index] = average;
        }
        start = end + 1;
    }
    ranks
}

fn pearson(a: &[f64], b: &[f64]) -> Result<f64, CorrelationError> {
    let n = a.len() as f64;
    let (mean_a, mean_b) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut covariance, mut variance_a, mut variance_b) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        covariance += (x - mean_a) * (y - mean_b);
        variance_a += (x - mean_a).powi(2);
        variance_b += (y - mean_b).powi(2);
    }
    if variance_a == 0.0 {
        return Err(CorrelationError::Constant("judge"));
    }
    if variance_b == 0.0 {
        return Err(CorrelationError::Constant("human"));
    }
    Ok((covariance / (variance_a * variance_b).sqrt()).clamp(-1.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dataset_past_the_limit_is_refused_without_reading_past_it() {
        let error = load_dataset(Path::new("/dev/zero")).unwrap_err();
        assert!(matches!(error, DatasetError::TooLarge { .. }), "{error:?}");
        assert!(error.to_string().contains("larger than the limit of 64 MiB"), "{error}");
    }

    /// The whole chain, as `{:#}` prints it: the cause is said once.
    #[test]
    fn an_unreadable_dataset_says_the_cause_once() {
        let error = load_dataset(Path::new("/nonexistent/dataset.jsonl")).unwrap_err();
        assert!(matches!(error, DatasetError::Io { .. }), "{error:?}");
        assert!(std::error::Error::source(&error).is_none(), "{error:?}");
        let said = error.to_string();
        assert_eq!(said.matches("No such file or directory").count(), 1, "{said}");
    }

    #[test]
    fn ties_share_their_average_rank() {
        assert_eq!(ranks(&[10.0, 20.0, 20.0, 30.0]), vec![1.0, 2.5, 2.5, 4.0]);
    }

    #[test]
    fn spearman_matches_hand_computed_values() {
        // Perfect agreement and perfect disagreement.
        assert_eq!(calibration_correlation(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]), Ok(1.0));
        assert_eq!(calibration_correlation(&[3.0, 2.0, 1.0], &[10.0, 20.0, 30.0]), Ok(-1.0));
        // With ties: ranks (1, 2.5, 2.5, 4, 5) and (1, 3, 2, 4.5, 4.5); their Pearson
        // correlation is 9 / sqrt(9.5 * 9.5) = 18/19.
        let rho = calibration_correlation(&[1.0, 2.0, 2.0, 4.0, 5.0], &[1.0, 3.0, 2.0, 4.0, 4.0]).unwrap();
        assert!((rho - 18.0 / 19.0).abs() < 1e-12, "{rho}");
    }

    #[test]
    fn degenerate_inputs_are_errors() {
        assert_eq!(calibration_correlation(&[1.0, 2.0], &[1.0, 2.0]), Err(CorrelationError::TooFew(2)));
        assert!(matches!(
            calibration_correlation(&[1.0], &[1.0, 2.0]),
            Err(CorrelationError::LengthMismatch { .. })
        ));
        assert_eq!(
            calibration_correlation(&[3.0, 3.0, 3.0], &[1.0, 2.0, 3.0]),
            Err(CorrelationError::Constant("judge"))
        );
        assert!(matches!(
            calibration_correlation(&[f64::NAN, 1.0, 2.0], &[1.0, 2.0, 3.0]),
            Err(CorrelationError::NotFinite(_))
        ));
    }

    #[test]
    fn dataset_lines_are_checked_with_their_numbers() {
        let path = Path::new("set.jsonl");
        let good = "{\"artifact\": \"a\", \"scores\": {\"clarity\": 4}}\n\n{\"artifact\": \"b\", \"scores\": {\"clarity\": 2}}\n";
        assert_eq!(parse_dataset(good, path).unwrap().len(), 2);
        let bad = "{\"artifact\": \"a\", \"scores\": {\"clarity\": 4}}\n{\"artifact\": \"b\"}\n";
        let error = parse_dataset(bad, path).unwrap_err().to_string();
        assert!(error.starts_with("set.jsonl:2: "), "{error}");
        assert!(error.contains("scores"), "{error}");
    }

    #[test]
    fn references_resolve_next_to_the_rubric() {
        let file = Path::new("rubrics/story.yaml");
        assert_eq!(
            local_path(file, "calibration/a.jsonl"),
            Some(PathBuf::from("rubrics/calibration/a.jsonl"))
        );
        assert_eq!(local_path(file, "file:///data/a.jsonl"), Some(PathBuf::from("/data/a.jsonl")));
        assert_eq!(local_path(file, "https://example.com/a.jsonl"), None);
    }
}
