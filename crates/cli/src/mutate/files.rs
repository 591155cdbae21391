//! Finding and reading the files to mutate: directories walked with `.gitignore`
//! respected, binary, non-UTF-8, oversized, test and unknown files set aside and counted.

use anyhow::{Result, bail};
use revcal_mutate::{Language, Mutant, MutateError, Options};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Why a file was not mutated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Skip {
    UnknownExtension,
    TestFile,
    Binary,
    InvalidUtf8,
    TooLarge,
    Unreadable,
}

impl Skip {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Skip::UnknownExtension => "unknown extension",
            Skip::TestFile => "test file",
            Skip::Binary => "binary",
            Skip::InvalidUtf8 => "invalid UTF-8",
            Skip::TooLarge => "too large",
            Skip::Unreadable => "unreadable",
        }
    }
}

/// What a scan found.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub(crate) mutants: Vec<Mutant>,
    /// Files that were parsed, with their language.
    pub(crate) mutated_files: Vec<(String, Language)>,
    /// The text of each parsed file, by its displayed path.
    pub(crate) sources: BTreeMap<String, String>,
    pub(crate) skipped: BTreeMap<Skip, usize>,
    /// Candidates dropped by the re-parse check.
    pub(crate) rejected: usize,
    pub(crate) warnings: Vec<String>,
    /// Lines read, over the parsed files.
    pub(crate) lines: usize,
}

/// Walks the paths and generates the mutants of every supported file, on all cores.
pub(crate) fn scan(paths: &[PathBuf], options: &Options) -> Result<Scan> {
    let mut scan = Scan::default();
    // Each file with the part of its path that decides whether it is a test file: below
    // the directory given (so that `/home/me/tests/project/src` is not all tests), or the
    // path as given for a named file.
    let mut candidates: Vec<(PathBuf, PathBuf)> = Vec::new();
    for path in paths {
        if path.is_file() {
            // A file named on the command line was meant: an extension revcal cannot mutate
            // is an error, not a silent skip as in a walked directory.
            if Language::from_path(path).is_none() {
                let supported: Vec<String> = Language::ALL
                    .iter()
                    .map(|language| format!("{} ({})", language.as_str(), language.extensions().join(", ")))
                    .collect();
                bail!("{}: not a file revcal can mutate; it reads {}", path.display(), supported.join(", "));
            }
            candidates.push((path.clone(), path.clone()));
        } else if path.is_dir() {
            let walker = ignore::WalkBuilder::new(path).require_git(false).build();
            let mut found: Vec<PathBuf> = Vec::new();
            for entry in walker {
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(error) => {
                        scan.warnings.push(format!("{error}"));
                        continue;
                    }
                };
                if entry.file_type().is_some_and(|kind| kind.is_file()) {
                    found.push(entry.into_path());
                }
            }
            found.sort();
            candidates.extend(found.into_iter().map(|file| {
                let below = file.strip_prefix(path).map(Path::to_path_buf).unwrap_or_else(|_| file.clone());
                (file, below)
            }));
        } else {
            bail!("{}: no such file or directory", path.display());
        }
    }
    let mut work: Vec<(PathBuf, Language)> = Vec::new();
    for (path, below) in candidates {
        match Language::from_path(&path) {
            None => *scan.skipped.entry(Skip::UnknownExtension).or_default() += 1,
            Some(_) if options.skip_test_files && revcal_mutate::is_test_path(&below) => {
                *scan.skipped.entry(Skip::TestFile).or_default() += 1
            }
            Some(language) => work.push((path, language)),
        }
    }

    let results: Vec<Mutex<Option<FileResult>>> = work.iter().map(|_| Mutex::new(None)).collect();
    // Largest files first, so that no core is left with a big file while the others idle;
    // the results keep the walk's order.
    let mut order: Vec<(u64, usize)> = work
        .iter()
        .enumerate()
        .map(|(index, (path, _))| (std::fs::metadata(path).map_or(0, |meta| meta.len()), index))
        .collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let next = AtomicUsize::new(0);
    // Test files were set aside above, by the path below the directory given.
    let options = &Options { skip_test_files: false, ..options.clone() };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(work.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(&(_, index)) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let Some((path, _)) = work.get(index) else { break };
                    let result = process(path, options);
                    if let Ok(mut slot) = results[index].lock() {
                        *slot = Some(result);
                    }
                }
            });
        }
    });
    for ((_, language), slot) in work.into_iter().zip(results) {
        let Some(result) = slot.into_inner().ok().flatten() else { continue };
        match result {
            FileResult::Skipped(skip, message) => {
                *scan.skipped.entry(skip).or_default() += 1;
                scan.warnings.push(message);
            }
            FileResult::Done { file, text, lines, analysis } => {
                scan.lines += lines;
                scan.rejected += analysis.rejected;
                scan.warnings.extend(analysis.warnings.iter().map(ToString::to_string));
                scan.mutants.extend(analysis.mutants);
                scan.mutated_files.push((file.clone(), language));
                scan.sources.insert(file, text);
            }
        }
    }
    Ok(scan)
}

enum FileResult {
    Skipped(Skip, String),
    /// A file mutated: its text, its line count (counted on the worker's core) and what came
    /// of it.
    Done {
        file: String,
        text: String,
        lines: usize,
        analysis: revcal_mutate::Analysis,
    },
}

fn process(path: &Path, options: &Options) -> FileResult {
    let shown = path.display().to_string();
    let size = std::fs::metadata(path).map(|meta| meta.len()).unwrap_or(0);
    if size > options.max_file_bytes as u64 {
        return FileResult::Skipped(
            Skip::TooLarge,
            format!("{shown}: skipped: {size} bytes is more than --max-file-size {}", options.max_file_bytes),
        );
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) => {
            return FileResult::Skipped(
                Skip::Unreadable,
                format!("{shown}: skipped: cannot read it: {error}"),
            );
        }
    };
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return FileResult::Skipped(
            Skip::Binary,
            format!("{shown}: skipped: binary file (it holds NUL bytes)"),
        );
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            let at = error.utf8_error().valid_up_to();
            let line = error.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            return FileResult::Skipped(
                Skip::InvalidUtf8,
                format!("{shown}:{line}: skipped: invalid UTF-8 at byte {at}"),
            );
        }
    };
    match revcal_mutate::analyze(path, &text, options) {
        Ok(analysis) => FileResult::Done { file: shown, lines: text.lines().count(), text, analysis },
        Err(MutateError::FileTooLarge { .. }) => FileResult::Skipped(
            Skip::TooLarge,
            format!("{shown}: skipped: more than --max-file-size {} bytes", options.max_file_bytes),
        ),
        Err(error) => FileResult::Skipped(Skip::Unreadable, format!("{shown}: skipped: {error}")),
    }
}
