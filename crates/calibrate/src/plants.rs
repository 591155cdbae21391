//! Plants: the bugs a calibration puts in the tree. They come from the mutation engine or
//! from a plants file; either way a plant is one whole source line replaced by another, so
//! applying, describing and reporting it is the same for both.

use crate::input::{self, InputError};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use revcal_report::Plant;
use revcal_report::{PlantEdit as Edit, PlantSpan as Span};

/// A plant as a judge is told about it: an extension of [`Plant`], the report's data type,
/// because what a judge is shown is the calibration's business.
pub trait JudgedForm {
    /// The plant as a judge is told about it: every field but the id, the witness (which
    /// would hand the judge the answer) and what only planting needs.
    fn judged(&self) -> revcal_judge::JudgedPlant;
}

impl JudgedForm for Plant {
    fn judged(&self) -> revcal_judge::JudgedPlant {
        revcal_judge::JudgedPlant {
            file: self.file.clone(),
            line: self.line,
            category: self.category.clone(),
            operator: self.operator.clone(),
            defect: self.defect.clone(),
            original: self.original.clone(),
            mutated: self.mutated.clone(),
            end_line: self.end_line,
        }
    }
}

/// What planting does with a plant: the files it changes, its replacements, and whether a
/// finding points at it.
pub(crate) trait Planting {
    /// The files the plant changes.
    fn files(&self) -> Vec<&str>;
    /// The plant's replacements in `file`, before planting.
    fn edits_in(&self, file: &str) -> Vec<Edit>;
    /// Whether `finding` points at this plant: the same file (its path already read as the
    /// changed file it names, see [`resolve_finding_paths`]), a line within 3 of one of its
    /// lines in the planted tree.
    fn located_by(&self, finding: &revcal_findings::Finding) -> bool;
    /// Where the plant's first changed line is in the planted tree (lines removed or added
    /// above it by other plants of its round counted): the file and the line.
    fn placed_at(&self) -> (&str, u32);
    /// How many lines `line` is from the plant's nearest line in the planted tree.
    fn distance_to(&self, line: u32) -> u32;
}

impl Planting for Plant {
    fn files(&self) -> Vec<&str> {
        if self.edits.is_empty() {
            return vec![self.file.as_str()];
        }
        let mut files: Vec<&str> = Vec::new();
        for edit in &self.edits {
            if !files.contains(&edit.file.as_str()) {
                files.push(&edit.file);
            }
        }
        files
    }

    fn edits_in(&self, file: &str) -> Vec<Edit> {
        if self.edits.is_empty() {
            if self.file != file {
                return Vec::new();
            }
            let start = usize::try_from(self.line).ok().and_then(|l| l.checked_sub(1)).unwrap_or(usize::MAX);
            return vec![Edit {
                file: file.to_owned(),
                start,
                old: vec![self.original.clone()],
                new: vec![self.mutated.clone()],
            }];
        }
        self.edits.iter().filter(|edit| edit.file == file).cloned().collect()
    }

    fn placed_at(&self) -> (&str, u32) {
        match self.spans.first() {
            Some(span) => (span.file.as_str(), span.first),
            None => (self.file.as_str(), self.line),
        }
    }

    fn distance_to(&self, line: u32) -> u32 {
        let from = |first: u32, last: u32| {
            if line < first { first - line } else { line.saturating_sub(last.max(first)) }
        };
        if self.spans.is_empty() {
            from(self.line, self.end_line.unwrap_or(self.line))
        } else {
            self.spans.iter().map(|span| from(span.first, span.last)).min().unwrap_or(u32::MAX)
        }
    }

    fn located_by(&self, finding: &revcal_findings::Finding) -> bool {
        let (Some(found), Some(line)) = (finding.file.as_deref(), finding.line) else { return false };
        let tolerance = revcal_record::LOCATE_TOLERANCE;
        let near = |file: &str, first: u32, last: u32| {
            found == file
                && u64::from(line) + tolerance >= u64::from(first)
                && u64::from(line) <= u64::from(last) + tolerance
        };
        if self.spans.is_empty() {
            near(&self.file, self.line, self.end_line.unwrap_or(self.line).max(self.line))
        } else {
            self.spans.iter().any(|span| near(&span.file, span.first, span.last))
        }
    }
}

/// Reads each finding's path against the files the run changes (`files`): a path that names
/// one of them becomes that file's repository-relative path, so that plants are located by
/// path, never by a base name another changed file shares; any other path is only normalised.
pub(crate) fn resolve_finding_paths(
    findings: &mut [revcal_findings::Finding],
    files: &revcal_record::ChangedFiles,
) {
    for finding in findings {
        if let Some(file) = finding.file.as_mut() {
            *file = match files.resolve(file) {
                Some(changed) => changed.to_owned(),
                None => revcal_record::normalise_path(file),
            };
        }
    }
}

/// The defect sentence of a change nobody described.
fn changed_defect(original: &str, mutated: &str) -> String {
    format!("`{}` was changed to `{}`", original.trim(), mutated.trim())
}

/// Why a plant could not be applied to its file's current content.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// The file is shorter than the plant's line.
    #[error("the file has no line {line}")]
    NoSuchLine {
        /// The plant's 1-based line.
        line: u32,
    },
    /// The line no longer reads the plant's `original`.
    #[error("line {line} changed since the plant was chosen")]
    LineChanged {
        /// The plant's 1-based line.
        line: u32,
    },
    /// Two plants replace the same line.
    #[error("two plants change line {line}")]
    Overlap {
        /// The 1-based line.
        line: u32,
    },
}

/// A plants-file entry as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlantSpec {
    /// File relative to the repository root.
    pub(crate) file: String,
    /// 1-based line.
    pub(crate) line: u32,
    /// The whole line (surrounding whitespace ignored) or a part of it that occurs once.
    #[serde(default)]
    pub(crate) original: Option<String>,
    /// What takes its place.
    #[serde(default)]
    pub(crate) mutated: Option<String>,
    /// A unified diff that plants a real bug, instead of `original` and `mutated`.
    #[serde(default)]
    pub(crate) patch: Option<String>,
    /// The commit that fixed the bug (a bugs file's entry).
    #[serde(default)]
    pub(crate) fix_commit: Option<String>,
    /// That commit's subject line.
    #[serde(default)]
    pub(crate) fix_subject: Option<String>,
    /// Category; `hand-written` when absent.
    #[serde(default)]
    pub(crate) category: Option<String>,
    /// What is now wrong; derived from the change when absent.
    #[serde(default)]
    pub(crate) defect: Option<String>,
    /// A command that passes on the original and fails on the mutant.
    #[serde(default)]
    pub(crate) witness: Option<String>,
    /// Operator name; `plants-file` when absent.
    #[serde(default)]
    pub(crate) operator: Option<String>,
}

/// The largest plants file revcal reads: 16 MiB, about 50,000 entries.
pub const MAX_PLANTS_FILE_BYTES: u64 = 16 << 20;

/// A plants file that cannot be used, with the file and the entry at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlantError {
    /// The file cannot be read.
    #[error("cannot read plants file {}", path.display())]
    Read {
        /// The plants file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a JSON/YAML list of plants.
    #[error("{}: {message}", path.display())]
    Syntax {
        /// The plants file.
        path: PathBuf,
        /// Parser message with line and column, naming the field.
        message: String,
    },
    /// One entry cannot be planted.
    #[error("{}: plant {index} ({file}:{line}): {message}", path.display())]
    Entry {
        /// The plants file.
        path: PathBuf,
        /// 1-based entry number.
        index: usize,
        /// The entry's file.
        file: String,
        /// The entry's line.
        line: u32,
        /// What is wrong and what to do.
        message: String,
    },
}

/// Reads a JSON or YAML plants file (JSON when it ends in `.json`, else YAML, which also
/// reads JSON).
///
/// The file may hold at most [`MAX_PLANTS_FILE_BYTES`] and nest at most
/// [`MAX_NESTING`](revcal_judge::yaml::MAX_NESTING) levels; both are checked before the deserializer
/// runs.
pub(crate) fn read_plants_file(path: &Path) -> Result<Vec<PlantSpec>, PlantError> {
    read_entries(path)
}

/// The entries of a plants-file-shaped file (a plants file, a bugs file), with the plants
/// file's limits and errors.
pub(crate) fn read_entries<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, PlantError> {
    let text = match input::read_text(path, MAX_PLANTS_FILE_BYTES) {
        Ok(text) => text,
        Err(InputError::Io(source)) => return Err(PlantError::Read { path: path.to_path_buf(), source }),
        Err(other) => {
            return Err(PlantError::Syntax { path: path.to_path_buf(), message: other.to_string() });
        }
    };
    entries_from_text(&text, path)
}

/// The entries of a plants file's text; `path` names it in errors and, by its extension,
/// chooses JSON or YAML.
fn entries_from_text<T: serde::de::DeserializeOwned>(text: &str, path: &Path) -> Result<Vec<T>, PlantError> {
    let syntax = |message: String| PlantError::Syntax { path: path.to_path_buf(), message };
    if text.len() as u64 > MAX_PLANTS_FILE_BYTES {
        return Err(syntax(format!("larger than the limit of {} MiB", MAX_PLANTS_FILE_BYTES >> 20)));
    }
    input::check_nesting(text).map_err(|(line, message)| syntax(format!("line {line}: {message}")))?;
    if path.extension().is_some_and(|ext| ext == "json") {
        serde_json::from_str(text).map_err(|e| syntax(input::json_error(&e)))
    } else {
        input::from_yaml(text).map_err(syntax)
    }
}

/// Checks the text of a plants file as `--plants-file` reads it (size, nesting, syntax,
/// fields) without a repository, and returns the number of entries. `path` names the file
/// in errors; it is JSON when it ends in `.json`, else YAML. Whether each entry's `original`
/// matches its line is checked only against a work tree, when the run starts.
///
/// ```
/// use std::path::Path;
/// let text = "- {file: src/a.py, line: 3, original: 'a < b', mutated: 'a <= b'}\n";
/// assert_eq!(revcal_calibrate::check_plants_text(text, Path::new("plants.yaml")).unwrap(), 1);
/// assert!(revcal_calibrate::check_plants_text("- {line: 3}", Path::new("plants.yaml")).is_err());
/// ```
pub fn check_plants_text(text: &str, path: &Path) -> Result<usize, PlantError> {
    entries_from_text::<PlantSpec>(text, path).map(|specs| specs.len())
}

/// [`resolve_specs_with`] keeping no overlapping bugs.
#[cfg(test)]
pub(crate) fn resolve_specs(
    plants_file: &Path,
    specs: &[PlantSpec],
    work_tree: &Path,
) -> Result<Vec<Plant>, PlantError> {
    resolve_specs_with(plants_file, specs, &work_tree.to_path_buf(), false)
}

/// Where the text of the files plants go into is read from: the commit's objects in a run
/// ([`CommitTree`](crate::tree::CommitTree)), a directory in tests.
pub(crate) trait Sources {
    /// The text of `relative` (a `/`-separated path), at most `limit` bytes of UTF-8.
    fn read_text(&self, relative: &str, limit: u64) -> Result<String, input::InputError>;
}

impl Sources for std::path::PathBuf {
    fn read_text(&self, relative: &str, limit: u64) -> Result<String, input::InputError> {
        input::read_text(&self.join(relative), limit)
    }
}

/// Checks every entry against the files of `sources` and turns it into a [`Plant`]. An entry whose
/// `original` no longer matches its line is refused: the code moved on since the plants file
/// was written, and planting elsewhere would measure something else. A real bug (an entry
/// with a `patch`) that does not apply is left out with a warning, and so is one that changes
/// a line an earlier entry changes, unless `overlapping` (each is then planted alone, one per
/// review).
pub(crate) fn resolve_specs_with(
    plants_file: &Path,
    specs: &[PlantSpec],
    sources: &dyn Sources,
    overlapping: bool,
) -> Result<Vec<Plant>, PlantError> {
    let mut plants = Vec::with_capacity(specs.len());
    let mut cache: BTreeMap<String, String> = BTreeMap::new();
    for (position, spec) in specs.iter().enumerate() {
        let index = position + 1;
        let entry_error = |message: String| PlantError::Entry {
            path: plants_file.to_path_buf(),
            index,
            file: spec.file.clone(),
            line: spec.line,
            message,
        };
        if let Some(patch) = &spec.patch {
            match resolve_patch(spec, patch, index, sources, &mut cache) {
                Ok(Ok(plant)) => {
                    if let Some(other) = plants.iter().find(|other| !overlapping && overlaps(other, &plant)) {
                        tracing::warn!(
                            "{}: plant {index} ({}) left out: it changes lines that {} also changes",
                            plants_file.display(),
                            plant.location(),
                            other.location()
                        );
                    } else {
                        plants.push(plant);
                    }
                }
                Ok(Err(why)) => tracing::warn!("{}: plant {index} left out: {why}", plants_file.display()),
                Err(message) => return Err(entry_error(message)),
            }
            continue;
        }
        let (Some(original), Some(mutated)) = (&spec.original, &spec.mutated) else {
            return Err(entry_error("an entry needs `original` and `mutated`, or a `patch`".into()));
        };
        let relative = normalise(&spec.file)
            .ok_or_else(|| entry_error("`file` must be a path inside the repository".into()))?;
        if !cache.contains_key(&relative) {
            // The largest file planted in is the mutation engine's.
            let limit = revcal_mutate::Options::default().max_file_bytes as u64;
            let text = sources
                .read_text(&relative, limit)
                .map_err(|e| entry_error(format!("cannot read the file: {e}")))?;
            cache.insert(relative.clone(), text);
        }
        let text = cache.get(&relative).map(String::as_str).unwrap_or("");
        let Some(current) = line_text(text, spec.line) else {
            return Err(entry_error(format!(
                "`line` {} is past the end of the file ({} lines)",
                spec.line,
                text.lines().count()
            )));
        };
        let mutated = rewrite_line(current, original, mutated).ok_or_else(|| {
            entry_error(format!(
                "`original` no longer matches the line: expected `{}`, the line is `{}`; update the plants file",
                original.trim(),
                current.trim()
            ))
        })?;
        if mutated == current {
            return Err(entry_error("`mutated` leaves the line unchanged".into()));
        }
        if plants.iter().any(|p: &Plant| p.file == relative && p.line == spec.line && p.edits.is_empty()) {
            return Err(entry_error("another plant already uses this line".into()));
        }
        let plant = Plant {
            id: format!("plants-file#{index}"),
            file: relative,
            line: spec.line,
            category: spec.category.clone().unwrap_or_else(|| "hand-written".into()),
            operator: spec.operator.clone().unwrap_or_else(|| "plants-file".into()),
            defect: spec.defect.clone().unwrap_or_else(|| changed_defect(original, &mutated)),
            original: current.to_owned(),
            mutated,
            witness: spec.witness.clone().filter(|w| !w.trim().is_empty()),
            end_line: None,
            fix_commit: None,
            edits: Vec::new(),
            spans: Vec::new(),
        };
        if let Some(other) = plants.iter().find(|other| overlaps(other, &plant)) {
            return Err(entry_error(format!("it changes a line that {} also changes", other.location())));
        }
        plants.push(plant);
    }
    Ok(plants)
}

/// True when two plants change a line in common.
pub(crate) fn overlaps(a: &Plant, b: &Plant) -> bool {
    b.files().into_iter().any(|file| {
        a.edits_in(file).iter().any(|x| {
            b.edits_in(file).iter().any(|y| {
                let (x_end, y_end) = (x.start + x.old.len().max(1), y.start + y.old.len().max(1));
                x.start < y_end && y.start < x_end
            })
        })
    })
}

/// How far from its stated line a hunk's text is looked for, in each direction: the target
/// may have moved on since the patch was made.
const HUNK_SEARCH: usize = 300;

/// A patch entry as a plant: `Ok(Err(why))` when the patch does not apply to the files as
/// they are (the entry is left out), `Err` when the entry itself is wrong.
fn resolve_patch(
    spec: &PlantSpec,
    patch: &str,
    index: usize,
    sources: &dyn Sources,
    cache: &mut BTreeMap<String, String>,
) -> Result<Result<Plant, String>, String> {
    let hunks = revcal_bugs::hunks(patch);
    if hunks.is_empty() {
        return Err("`patch` holds no hunk of a unified diff".into());
    }
    let mut edits = Vec::with_capacity(hunks.len());
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    for hunk in &hunks {
        let file = normalise(&hunk.file)
            .ok_or_else(|| format!("the patch names `{}`, outside the repository", hunk.file))?;
        if !cache.contains_key(&file) {
            let limit = revcal_mutate::Options::default().max_file_bytes as u64;
            match sources.read_text(&file, limit) {
                Ok(text) => cache.insert(file.clone(), text),
                Err(e) => return Ok(Err(format!("the patch changes {file}, which cannot be read: {e}"))),
            };
        }
        let text = cache.get(&file).map(String::as_str).unwrap_or("");
        let current: Vec<&str> =
            text.split_inclusive('\n').map(|l| l.trim_end_matches('\n').trim_end_matches('\r')).collect();
        let old: Vec<String> =
            hunk.lines.iter().filter(|(m, _)| *m != '+').map(|(_, text)| text.clone()).collect();
        let new: Vec<String> =
            hunk.lines.iter().filter(|(m, _)| *m != '-').map(|(_, text)| text.clone()).collect();
        let (hunk_removed, hunk_added) = hunk.changes();
        removed.extend(hunk_removed.iter().map(|l| (*l).to_owned()));
        added.extend(hunk_added.iter().map(|l| (*l).to_owned()));
        // `-5,0` (nothing removed, no context) inserts after line 5; otherwise line 5 is the first.
        let stated = if old.is_empty() {
            hunk.old_start as usize
        } else {
            (hunk.old_start as usize).saturating_sub(1)
        };
        let matches_at = |start: usize| {
            start + old.len() <= current.len()
                && current[start..start + old.len()].iter().zip(&old).all(|(a, b)| a == b)
        };
        let found = (0..=HUNK_SEARCH).find_map(|distance| {
            [stated.checked_add(distance), stated.checked_sub(distance)]
                .into_iter()
                .flatten()
                .find(|s| matches_at(*s))
        });
        let Some(start) = found else {
            return Ok(Err(format!(
                "its patch does not apply to the target: the hunk at {file}:{} does not match the file",
                hunk.old_start
            )));
        };
        // Kept to the changed lines: the context served to find the place, and two bugs a
        // few lines apart share context without changing the same line.
        let same_start = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let same_end = old[same_start..]
            .iter()
            .rev()
            .zip(new[same_start..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let old = old[same_start..old.len() - same_end].to_vec();
        let new = new[same_start..new.len() - same_end].to_vec();
        edits.push(Edit { file, start: start + same_start, old, new });
    }
    let first = &hunks[0];
    let (line, _) = first.new_span();
    let subject = spec.fix_subject.clone().unwrap_or_default();
    let defect = spec.defect.clone().unwrap_or_else(|| {
        if subject.is_empty() {
            "a real bug is back".into()
        } else {
            format!("The bug fixed by \"{subject}\" is back")
        }
    });
    let mut plant = Plant {
        id: format!("plants-file#{index}"),
        file: edits[0].file.clone(),
        line,
        category: spec.category.clone().unwrap_or_else(|| "real".into()),
        operator: spec.operator.clone().unwrap_or_else(|| "real-bug".into()),
        defect,
        original: removed.join("\n"),
        mutated: added.join("\n"),
        witness: spec.witness.clone().filter(|w| !w.trim().is_empty()),
        end_line: None,
        fix_commit: Some(spec.fix_commit.clone().unwrap_or_default()),
        edits,
        spans: Vec::new(),
    };
    place(std::slice::from_mut(&mut plant), &[true]);
    Ok(Ok(plant))
}

/// A relative `/`-separated path that stays inside the tree, or `None`.
fn normalise(file: &str) -> Option<String> {
    let path = Path::new(file.trim_start_matches("./"));
    if path.as_os_str().is_empty() || path.is_absolute() {
        return None;
    }
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            std::path::Component::Normal(part) => parts.push(part.to_str()?.to_owned()),
            std::path::Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// Line `line` (1-based) of `text`, without its line break.
fn line_text(text: &str, line: u32) -> Option<&str> {
    let index = usize::try_from(line).ok()?.checked_sub(1)?;
    if index >= line_count(text) {
        return None;
    }
    text.split('\n').nth(index).map(|l| l.strip_suffix('\r').unwrap_or(l))
}

fn line_count(text: &str) -> usize {
    let breaks = text.matches('\n').count();
    if text.ends_with('\n') { breaks } else { breaks + 1 }
}

/// The line after replacing `original` with `mutated`: the whole line when `original` is
/// the line (surrounding whitespace ignored, indentation kept), else the one occurrence of
/// `original` inside it. `None` when it matches neither way.
fn rewrite_line(current: &str, original: &str, mutated: &str) -> Option<String> {
    if original.trim().is_empty() {
        return None;
    }
    if current.trim() == original.trim() {
        let indent = &current[..current.len() - current.trim_start().len()];
        return Some(format!("{indent}{}", mutated.trim()));
    }
    if current.matches(original).count() == 1 {
        return Some(current.replacen(original, mutated, 1));
    }
    None
}

/// Turns a mutant into a plant. Mutants spanning several lines are not plantable as a line
/// and yield `None`; a mutant that removes its line (a deleted statement) is planted as the
/// removal of that line (and of the blank line beside it that it takes), never as a line of
/// bare indentation.
pub(crate) fn from_mutant(mutant: &revcal_mutate::Mutant, relative_file: &str) -> Option<Plant> {
    if !mutant.is_one_line() {
        return None;
    }
    let line = u32::try_from(mutant.line).ok()?;
    let edits = if mutant.removes_lines() {
        vec![Edit {
            file: relative_file.to_owned(),
            start: mutant.line - 1,
            old: mutant.original_line.split('\n').map(str::to_owned).collect(),
            new: Vec::new(),
        }]
    } else {
        Vec::new()
    };
    Some(Plant {
        id: mutant.id.clone(),
        file: relative_file.to_owned(),
        line,
        category: mutant.category.as_str().to_owned(),
        operator: mutant.operator.clone(),
        defect: mutant.description.clone(),
        original: mutant.original_line.clone(),
        mutated: mutant.mutated_line.clone(),
        witness: None,
        end_line: None,
        fix_commit: None,
        edits,
        spans: Vec::new(),
    })
}

/// `content` (the bytes of `file`) with every plant's replacements in that file made (line
/// breaks, `\r\n` included, kept). Each replaced line must still read as the plant expects,
/// and no two replacements may overlap.
pub(crate) fn apply_to(content: &[u8], file: &str, plants: &[&Plant]) -> Result<Vec<u8>, ApplyError> {
    let lines: Vec<&[u8]> = content.split_inclusive(|byte| *byte == b'\n').collect();
    let mut edits: Vec<Edit> = plants.iter().flat_map(|plant| plant.edits_in(file)).collect();
    edits.sort_by_key(|edit| edit.start);
    let split = |line: &[u8]| -> (usize, usize) {
        let ending = if line.ends_with(b"\r\n") { 2 } else { usize::from(line.ends_with(b"\n")) };
        (line.len() - ending, ending)
    };
    // New lines that replace no old line take the file's own line break.
    let default_ending: &[u8] = match lines.first() {
        Some(line) if line.ends_with(b"\r\n") => b"\r\n",
        _ => b"\n",
    };
    let mut out = Vec::with_capacity(content.len() + 64);
    let mut next = 0usize;
    for edit in &edits {
        let line_number = u32::try_from(edit.start.saturating_add(1)).unwrap_or(u32::MAX);
        if edit.start < next {
            return Err(ApplyError::Overlap { line: line_number });
        }
        let end = edit.start.checked_add(edit.old.len()).filter(|end| *end <= lines.len());
        let Some(end) = end.filter(|_| edit.start <= lines.len()) else {
            return Err(ApplyError::NoSuchLine { line: line_number });
        };
        for line in &lines[next..edit.start] {
            out.extend_from_slice(line);
        }
        let old_lines = &lines[edit.start..end];
        for (offset, (line, expected)) in old_lines.iter().zip(&edit.old).enumerate() {
            let (body, _) = split(line);
            if &line[..body] != expected.as_bytes() {
                let line = u32::try_from(edit.start + offset + 1).unwrap_or(u32::MAX);
                return Err(ApplyError::LineChanged { line });
            }
        }
        for (index, new_line) in edit.new.iter().enumerate() {
            // The last new line keeps the last old line's ending (none at the end of a file
            // without a final break); the others keep their old line's, or the file's.
            let ending: &[u8] = if index + 1 == edit.new.len() {
                old_lines.last().map_or(default_ending, |line| &line[split(line).0..])
            } else {
                old_lines.get(index).map_or(default_ending, |line| {
                    let (body, ending) = split(line);
                    if ending == 0 { default_ending } else { &line[body..] }
                })
            };
            out.extend_from_slice(new_line.as_bytes());
            out.extend_from_slice(ending);
        }
        next = end;
    }
    for line in &lines[next.min(lines.len())..] {
        out.extend_from_slice(line);
    }
    Ok(out)
}

/// Sets where each valid plant sits in the planted tree, in files where a real bug's patch
/// adds or removes lines (so that lines after it move): a finding is matched against these.
pub(crate) fn place(plants: &mut [Plant], valid: &[bool]) {
    let mut files: Vec<String> = Vec::new();
    for (plant, _) in plants.iter().zip(valid).filter(|(plant, valid)| **valid && !plant.edits.is_empty()) {
        for file in plant.files() {
            if !files.iter().any(|f| f == file) {
                files.push(file.to_owned());
            }
        }
    }
    for plant in plants.iter_mut() {
        plant.spans.clear();
    }
    for file in files {
        let mut edits: Vec<(usize, Edit)> = Vec::new();
        for (index, plant) in
            plants.iter().enumerate().filter(|(i, _)| valid.get(*i).copied().unwrap_or(false))
        {
            edits.extend(plant.edits_in(&file).into_iter().map(|edit| (index, edit)));
        }
        edits.sort_by_key(|(_, edit)| edit.start);
        let mut delta: i64 = 0;
        for (index, edit) in edits {
            let first_new = edit.start as i64 + delta + 1;
            let same_start = edit.old.iter().zip(&edit.new).take_while(|(a, b)| a == b).count();
            let same_end =
                edit.old.iter().rev().zip(edit.new.iter().rev()).take_while(|(a, b)| a == b).count();
            let changed_new = edit.new.len().saturating_sub(same_start + same_end);
            let first = first_new + same_start as i64;
            let last = first + changed_new.saturating_sub(1) as i64;
            delta += edit.new.len() as i64 - edit.old.len() as i64;
            let to_line = |n: i64| u32::try_from(n.max(1)).unwrap_or(u32::MAX);
            plants[index].spans.push(Span { file: file.clone(), first: to_line(first), last: to_line(last) });
        }
    }
    for plant in plants.iter_mut().filter(|plant| !plant.edits.is_empty()) {
        if let Some(span) = plant.spans.first() {
            plant.line = span.first;
            plant.end_line = (span.last != span.first).then_some(span.last);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file that is not a plants file (`/etc/passwd`, a config with secrets) is refused
    /// naming the line and what was expected, never quoting what is in it; bugs files are
    /// read the same way.
    #[test]
    fn a_plants_file_error_never_quotes_the_file() {
        for (text, name) in [
            ("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1\n", "plants.yaml"),
            ("- {file: a.py, line: 'sk-secret-value', original: a, mutated: b}\n", "plants.yaml"),
            ("[{\"file\": \"a.py\", \"line\": \"sk-secret-value\"}]", "plants.json"),
            ("- {file: a.py, line: 2, 'secret: hunter2': 1}\n", "plants.yaml"),
        ] {
            let message = check_plants_text(text, Path::new(name)).unwrap_err().to_string();
            assert!(!message.contains("root:x") && !message.contains("secret"), "{message}");
            assert!(message.starts_with(&format!("{name}: line ")), "{message}");
        }
        let message =
            check_plants_text("- {file: a.py, line: x, original: a, mutated: b}\n", Path::new("p.yaml"))
                .unwrap_err()
                .to_string();
        assert!(
            message.contains("line 1 column")
                && message.contains("[0].line: invalid type: a string, expected u32"),
            "{message}"
        );
    }

    fn plant(line: u32, original: &str, mutated: &str) -> Plant {
        Plant {
            id: "p".into(),
            ..Plant::new("a.rs", line, "off-by-one", "op", original, mutated).with_defect("d")
        }
    }

    #[test]
    fn applying_keeps_line_endings_and_other_lines() {
        let content = b"a\r\n    if x < n {\r\nz";
        let planted =
            apply_to(content, "a.rs", &[&plant(2, "    if x < n {", "    if x <= n {"), &plant(3, "z", "y")])
                .unwrap();
        assert_eq!(planted, b"a\r\n    if x <= n {\r\ny");
        assert!(apply_to(content, "a.rs", &[&plant(2, "if x < n {", "")]).is_err());
        assert!(apply_to(content, "a.rs", &[&plant(9, "z", "y")]).is_err());
    }

    #[test]
    fn specs_resolve_to_whole_lines_or_are_refused_with_the_entry() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "fn f(x: u32) -> bool {\n    x < 10\n}\n").unwrap();
        let spec = |line: u32, original: &str, mutated: &str| PlantSpec {
            file: "./a.rs".into(),
            line,
            original: Some(original.into()),
            mutated: Some(mutated.into()),
            patch: None,
            fix_commit: None,
            fix_subject: None,
            category: None,
            defect: None,
            witness: Some("  ".into()),
            operator: None,
        };
        let file = Path::new("plants.yaml");
        let plants = resolve_specs(file, &[spec(2, "x < 10", "x <= 10")], dir.path()).unwrap();
        assert_eq!(plants[0].original, "    x < 10");
        assert_eq!(plants[0].mutated, "    x <= 10");
        assert_eq!(plants[0].witness, None);
        let plants = resolve_specs(file, &[spec(2, "<", "<=")], dir.path()).unwrap();
        assert_eq!(plants[0].mutated, "    x <= 10");
        let error = resolve_specs(file, &[spec(2, "x > 10", "x >= 10")], dir.path()).unwrap_err().to_string();
        assert!(
            error.starts_with("plants.yaml: plant 1 (./a.rs:2): `original` no longer matches"),
            "{error}"
        );
        let error = resolve_specs(file, &[spec(7, "x", "y")], dir.path()).unwrap_err().to_string();
        assert!(error.contains("past the end of the file (3 lines)"), "{error}");
        assert!(
            resolve_specs(file, &[PlantSpec { file: "../x".into(), ..spec(1, "a", "b") }], dir.path())
                .is_err()
        );
    }

    #[test]
    fn plants_files_name_position_and_field_on_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("p.json");
        std::fs::write(&json, "[{\"file\": \"a.rs\", \"line\": \"two\"}]").unwrap();
        let error = read_plants_file(&json).unwrap_err().to_string();
        assert!(error.contains("p.json: line 1 column"), "{error}");
        let yaml = dir.path().join("p.yaml");
        std::fs::write(&yaml, "- file: a.rs\n  line: 2\n  original: x\n  mutated: y\n  colour: red\n")
            .unwrap();
        let error = read_plants_file(&yaml).unwrap_err().to_string();
        assert!(error.contains("colour") && error.contains("line 5"), "{error}");
    }

    /// Property tests: plants files and plant application never panic on arbitrary input, and a
    /// plant applied to a line that reads `original` changes exactly that line.
    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        fn plant(line: u32, original: String, mutated: String) -> Plant {
            Plant {
                id: "p".into(),
                file: "a.rs".into(),
                line,
                category: "c".into(),
                operator: "o".into(),
                defect: "d".into(),
                original,
                mutated,
                witness: None,
                end_line: None,
                fix_commit: None,
                edits: Vec::new(),
                spans: Vec::new(),
            }
        }

        proptest! {
            #[test]
            fn arbitrary_plants_files_are_read_or_refused(text in ".{0,400}", json in any::<bool>()) {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join(if json { "p.json" } else { "p.yaml" });
                std::fs::write(&path, &text).unwrap();
                if let Ok(specs) = read_plants_file(&path) {
                    let _ = resolve_specs(&path, &specs, dir.path());
                }
            }

            #[test]
            fn arbitrary_specs_against_arbitrary_files_never_panic(
                content in ".{0,300}",
                line in 0u32..20,
                original in ".{0,20}",
                mutated in ".{0,20}",
            ) {
                let dir = tempfile::tempdir().unwrap();
                std::fs::write(dir.path().join("a.rs"), &content).unwrap();
                let spec = PlantSpec {
                    file: "a.rs".into(), line, original: Some(original), mutated: Some(mutated), patch: None, fix_commit: None, fix_subject: None,
                    category: None, defect: None, witness: None, operator: None,
                };
                if let Ok(plants) = resolve_specs(Path::new("p.yaml"), &[spec], dir.path()) {
                    // A resolved plant applies cleanly and changes only its line.
                    let planted = apply_to(content.as_bytes(), "a.rs", &[&plants[0]]).unwrap();
                    let before: Vec<&str> = content.split('\n').collect();
                    let planted = String::from_utf8(planted).unwrap();
                    let after: Vec<&str> = planted.split('\n').collect();
                    prop_assert_eq!(before.len(), after.len());
                    for (index, (b, a)) in before.iter().zip(&after).enumerate() {
                        if index + 1 != line as usize {
                            prop_assert_eq!(b, a);
                        }
                    }
                }
            }

            #[test]
            fn applying_to_arbitrary_bytes_never_panics(
                content in proptest::collection::vec(any::<u8>(), 0..300),
                line in 0u32..30,
                original in ".{0,10}",
                mutated in ".{0,10}",
            ) {
                let _ = apply_to(&content, "a.rs", &[&plant(line, original, mutated)]);
            }
        }
    }
}
