//! The walk: one pass over a file's syntax tree that finds what may be mutated. It records
//! the skip regions (comments, skip markers, test items and syntax errors, never touched;
//! opaque nodes such as strings and types, never changed inside; see
//! docs/mutation.md#what-is-never-mutated) and asks the language's operators for candidate
//! mutants everywhere else.
//!
//! It is kept apart from the re-parse check ([`super::reparse`]): the walk only reads the
//! original tree and proposes edits, while the check decides, edit by edit, whether the
//! mutated file still parses. The two change for different reasons (a new operator or skip
//! rule here; a new unit, window or grammar rule there) and are tested apart: the walk by
//! the skip-rule and corpus integration tests, the check by its own unit tests.

use crate::languages::{Candidate, Grammar};
use crate::regions::{Regions, SKIP_MARKER};
use crate::source::Source;
use tree_sitter::{Node, Tree};

/// What one walk over a tree found.
pub(super) struct Found {
    /// Where mutants may not go, finished and ready for [`Regions::permits`].
    pub(super) regions: Regions,
    /// The operators' candidates, in walk order, not yet filtered or checked.
    pub(super) candidates: Vec<Candidate>,
    /// Start bytes of syntax errors.
    pub(super) errors: Vec<usize>,
    /// The start byte of the first node nested deeper than [`MAX_MUTATION_DEPTH`], if any.
    pub(super) too_deep: Vec<usize>,
}

/// How deep in the syntax tree mutants are proposed. Operators look at a node's parent, which
/// tree-sitter finds by descending from the root, so each proposal costs the node's depth:
/// 8,000 nested arrays took seconds. Code written by people nests far less than this; below
/// it the walk still records comments and errors, and the file gets a warning.
pub(super) const MAX_MUTATION_DEPTH: usize = 512;

/// Walks `tree`, parsed from `source` with `grammar`, once.
pub(super) fn walk(grammar: &'static Grammar, source: &Source<'_>, tree: &Tree) -> Found {
    let mut walk = Walk {
        grammar,
        source,
        regions: Regions::default(),
        candidates: Vec::new(),
        errors: Vec::new(),
        too_deep: Vec::new(),
    };
    walk.run(tree);
    let Walk { mut regions, candidates, errors, too_deep, .. } = walk;
    regions.finish();
    Found { regions, candidates, errors, too_deep }
}

/// One pass over the tree: skip regions and the operators' candidates.
struct Walk<'a> {
    grammar: &'static Grammar,
    source: &'a Source<'a>,
    regions: Regions,
    candidates: Vec<Candidate>,
    /// Start bytes of syntax errors.
    errors: Vec<usize>,
    /// See [`Found::too_deep`].
    too_deep: Vec<usize>,
}

impl Walk<'_> {
    /// Iterative depth-first walk (deeply nested input must not overflow the stack).
    /// Below a skipped or opaque node no candidates are asked for, but comments and
    /// errors are still recorded.
    fn run(&mut self, tree: &Tree) {
        let mut cursor = tree.walk();
        let mut depth = 0usize;
        let mut quiet_from: Option<usize> = None;
        loop {
            let node = cursor.node();
            if depth > MAX_MUTATION_DEPTH && quiet_from.is_none() {
                // One warning per file, at the first place: one is enough to act on.
                if self.too_deep.is_empty() {
                    self.too_deep.push(node.start_byte());
                }
                quiet_from = Some(depth);
            }
            let visit = self.visit(node, quiet_from.is_some());
            if visit != Visit::Descend && quiet_from.is_none() {
                quiet_from = Some(depth);
            }
            if visit != Visit::Skip && cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            loop {
                if quiet_from == Some(depth) {
                    quiet_from = None;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
                depth -= 1;
            }
        }
    }

    /// Records what `node` says about skipping, and says how to go on below it.
    fn visit(&mut self, node: Node, quiet: bool) -> Visit {
        let kind = node.kind();
        if node.is_error() || node.is_missing() {
            let region = if node.is_missing() { node.parent().unwrap_or(node) } else { node };
            self.regions.add_hard(region.start_byte(), region.end_byte().max(region.start_byte() + 1));
            self.errors.push(node.start_byte());
            return Visit::Quiet;
        }
        if self.grammar.comments.contains(&kind) {
            self.regions.add_hard(node.start_byte(), node.end_byte());
            if self.source.of(node).contains(SKIP_MARKER) {
                let row = self.source.row(node.start_byte());
                self.regions.skip_row(row);
                // A marker alone on its line covers the next line.
                if self.source.line_prefix(node.start_byte()).trim().is_empty() {
                    self.regions.skip_row(row + 1);
                }
            }
            return Visit::Quiet;
        }
        if let Some(start) = (self.grammar.skipped_item)(node, kind, self.source) {
            // Nothing below is mutated and the region is hard as a whole: its comments and
            // errors need not be recorded one by one.
            self.regions.add_hard(start, node.end_byte());
            return Visit::Skip;
        }
        if (self.grammar.opaque)(kind) {
            self.regions.add_opaque(node.start_byte(), node.end_byte());
            // Candidates may still replace an opaque node whole (the Rust `vec![..]` operator
            // replaces a token tree), so the node itself is offered to the operators.
            if !quiet {
                (self.grammar.mutate)(node, kind, self.source, &mut self.candidates);
            }
            return Visit::Quiet;
        }
        if !quiet {
            (self.grammar.mutate)(node, kind, self.source, &mut self.candidates);
        }
        Visit::Descend
    }
}

/// How the walk goes on below a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Visit {
    /// Ask the operators about the children too.
    Descend,
    /// Visit the children for comments and errors only.
    Quiet,
    /// Do not visit the children (a skipped test item: a hard region as a whole).
    Skip,
}
