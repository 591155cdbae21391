//! Generating mutants for one file: parse, find skip regions, ask the operators, filter,
//! re-parse every candidate, and build [`Mutant`]s.
//!
//! This module only runs the steps in order and turns their results into the public
//! [`Analysis`]. The two jobs with rules of their own live below it: [`walk`] finds the
//! skip regions and the operators' candidates in one pass over the tree, and [`reparse`]
//! decides whether a candidate, written into the file, still parses.

mod reparse;
mod tidy;
mod walk;

use crate::languages::{self, Candidate};
use crate::mutant::mutant_id;
use crate::source::Source;
use crate::{Language, Mutant, MutateError, Options, is_test_path};
use reparse::Reparse;
use std::collections::HashSet;
use std::path::Path;
use tree_sitter::Parser;

/// Everything learnt about one file: its mutants, and warnings about parts that were not
/// mutated (syntax errors).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// The mutants, in source order.
    pub mutants: Vec<Mutant>,
    /// Problems worth telling the user, e.g. a region tree-sitter could not parse.
    pub warnings: Vec<Warning>,
    /// Candidates dropped because the mutated file did not re-parse cleanly.
    pub rejected: usize,
}

/// A problem in one file that did not stop the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The path as given.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong and what was done about it.
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.message)
    }
}

/// Generates every mutant of one file that `options` allows. See [`analyze`] for the
/// warnings as well.
///
/// `path` selects the language and is recorded in each mutant's `file`; `source` is the
/// file's text. A file that does not parse cleanly yields no mutants from its broken
/// regions (and a `tracing` warning); a test file (by path) yields none at all unless
/// [`Options::skip_test_files`] is off.
pub fn generate_mutants(path: &Path, source: &str, options: &Options) -> Result<Vec<Mutant>, MutateError> {
    analyze(path, source, options).map(|analysis| analysis.mutants)
}

/// Like [`generate_mutants`], and also returns the warnings (syntax errors) and how many
/// candidates failed the re-parse check.
pub fn analyze(path: &Path, source: &str, options: &Options) -> Result<Analysis, MutateError> {
    let Some(Parsed { language, grammar, parser, tree }) = parse(path, source, options)? else {
        return Ok(Analysis::default());
    };
    let text = Source::new(source);
    let file = path.to_string_lossy().into_owned();

    let walk::Found { regions, candidates, errors, too_deep } = walk::walk(grammar, &text, &tree);

    let warning = |byte: usize, message: String| {
        let (line, column) = text.line_column(byte);
        Warning { file: file.clone(), line, column, message }
    };
    let syntax = "syntax error: tree-sitter cannot parse this region, so nothing in it is mutated";
    let deep = format!(
        "nested deeper than {} syntax-tree levels: nothing below this depth is mutated",
        walk::MAX_MUTATION_DEPTH
    );
    let warnings: Vec<Warning> = errors
        .iter()
        .map(|&byte| warning(byte, syntax.to_owned()))
        .chain(too_deep.iter().map(|&byte| warning(byte, deep.clone())))
        .collect();
    for warning in &warnings {
        // Returned to the caller, who decides how to show it; logged for library users.
        tracing::debug!("{warning}");
    }

    let mut checker = Reparse::new(grammar, parser, &tree, &text)
        .map_err(|error| MutateError::Grammar { language: language.as_str(), message: error.to_string() })?;
    let mut seen = HashSet::new();
    let mut mutants = Vec::new();
    let mut rejected = 0;
    for candidate in candidates {
        if !options.allows(candidate.category, candidate.operator)
            || text
                .text
                .get(candidate.start..candidate.end)
                .is_none_or(|original| original == candidate.replacement)
            || !regions.permits(
                candidate.start,
                candidate.end,
                text.row(candidate.start)..=text.row(candidate.end),
            )
            || !seen.insert((candidate.start, candidate.end, candidate.replacement.clone()))
        {
            continue;
        }
        let Some(candidate) = tidy::tidy_deletion(&text, language, candidate) else { continue };
        if !tidy::keeps_width(&text, language, &candidate) {
            continue;
        }
        if !checker.still_parses(&candidate) {
            tracing::debug!(
                file,
                operator = candidate.operator,
                start = candidate.start,
                "dropped: the mutant does not re-parse"
            );
            rejected += 1;
            continue;
        }
        mutants.push(build(&file, language, &text, candidate));
    }
    mutants.sort_by_key(|mutant| (mutant.start_byte, mutant.end_byte, mutant.operator.clone()));
    let mutants = options.profile.keep(mutants);
    Ok(Analysis { mutants, warnings, rejected })
}

/// A file parsed with its language's grammar, and the parser (kept for re-parsing).
pub(crate) struct Parsed {
    pub(crate) language: Language,
    pub(crate) grammar: &'static languages::Grammar,
    pub(crate) parser: Parser,
    pub(crate) tree: tree_sitter::Tree,
}

/// Parses `source` for what `path` names: its language from the extension, the size limit
/// of `options` checked; `None` for a test file when `options` skips them.
pub(crate) fn parse(path: &Path, source: &str, options: &Options) -> Result<Option<Parsed>, MutateError> {
    let language = Language::from_path(path)
        .ok_or_else(|| MutateError::UnsupportedLanguage { path: path.to_path_buf() })?;
    if source.len() > options.max_file_bytes {
        return Err(MutateError::FileTooLarge {
            path: path.to_path_buf(),
            size: source.len(),
            limit: options.max_file_bytes,
        });
    }
    if options.skip_test_files && is_test_path(path) {
        return Ok(None);
    }
    let grammar = languages::grammar(language);
    let mut parser = Parser::new();
    parser
        .set_language(&(grammar.grammar)())
        .map_err(|error| MutateError::Grammar { language: language.as_str(), message: error.to_string() })?;
    let tree =
        parser.parse(source, None).ok_or_else(|| MutateError::ParseFailed { path: path.to_path_buf() })?;
    Ok(Some(Parsed { language, grammar, parser, tree }))
}

/// The regions of `tree` (parsed from `source` with `grammar`) where nothing may be
/// changed: comments, strings, test code, skip-marked lines, syntax errors. Neutral edits
/// keep out of them as mutants do.
pub(crate) fn skip_regions(
    grammar: &'static languages::Grammar,
    source: &Source<'_>,
    tree: &tree_sitter::Tree,
) -> crate::regions::Regions {
    walk::walk(grammar, source, tree).regions
}

/// Positions, lines and id of an accepted candidate.
fn build(file: &str, language: Language, source: &Source, candidate: Candidate) -> Mutant {
    let (line, column) = source.line_column(candidate.start);
    let (end_line, end_column) = source.line_column(candidate.end);
    let first_row = line - 1;
    // A range that ends just past a line break (removed lines) holds nothing of the line
    // it ends on: its lines end with the line before.
    let ends_at_break = end_column == 1 && end_line > line;
    let last_row = if ends_at_break { end_line - 2 } else { end_line - 1 };
    let lines_start = source.line_start(first_row);
    let lines_end =
        if ends_at_break { source.line_end(last_row) } else { source.line_end(last_row).max(candidate.end) };
    let text = source.text;
    let original = text.get(candidate.start..candidate.end).unwrap_or("").to_string();
    let original_line = text.get(lines_start..lines_end).unwrap_or("").to_string();
    let mutated_line = format!(
        "{}{}{}",
        text.get(lines_start..candidate.start).unwrap_or(""),
        candidate.replacement,
        if ends_at_break { "" } else { text.get(candidate.end..lines_end).unwrap_or("") }
    );
    Mutant {
        id: mutant_id(file, candidate.start, candidate.end, candidate.operator, &candidate.replacement),
        file: file.to_string(),
        language,
        line,
        column,
        end_line,
        end_column,
        start_byte: candidate.start,
        end_byte: candidate.end,
        category: candidate.category,
        operator: candidate.operator.to_string(),
        description: candidate.description,
        original,
        replacement: candidate.replacement,
        original_line,
        mutated_line,
    }
}
