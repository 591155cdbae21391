//! The re-parse check: whether a candidate mutant, written into the file, still parses with
//! no new ERROR or MISSING nodes (docs/mutation.md#the-re-parse-check). It tries the
//! cheapest scope that gives the file's answer: the innermost self-contained unit around the
//! mutant, then a window of the statement list that holds it, and only then the whole file,
//! re-parsed incrementally.
//!
//! It is kept apart from the walk that proposes candidates ([`super::walk`]): the check
//! never decides what may be mutated, only whether one edit leaves valid code, and its
//! correctness argument (why a unit or window answers for the whole file) and its tests
//! stand on their own.

use crate::languages::{Candidate, Grammar};
use crate::source::{Source, point_after};
use std::collections::HashMap;
use tree_sitter::{InputEdit, Node, Parser, Tree};

/// The re-parse check: the mutated file must parse with no more ERROR or MISSING nodes
/// than the original. tree-sitter re-parses incrementally from the edited original tree,
/// and reads the mutated text through a callback, so no copy of the file is made.
pub(super) struct Reparse<'a> {
    parser: Parser,
    /// Parses self-contained units (see [`Grammar::units`]) on their own.
    unit_parser: Parser,
    /// The language's units, windows and rules for them.
    grammar: &'static Grammar,
    /// Whether each unit (by byte range) parses cleanly on its own, unmutated.
    unit_baselines: HashMap<(usize, usize), bool>,
    /// The tree of each unit that parses cleanly on its own, unmutated: a mutant of the unit
    /// is re-parsed incrementally from it, so only the edited part of the unit is parsed again.
    unit_trees: HashMap<(usize, usize), Tree>,
    /// The text a unit is parsed from, kept between checks so that it is not allocated anew.
    document: String,
    /// The nodes from the root down to the last candidate checked (see
    /// [`Reparse::scope_around`]).
    chain: Vec<Node<'a>>,
    tree: &'a Tree,
    source: &'a Source<'a>,
    baseline_errors: usize,
}

impl<'a> Reparse<'a> {
    /// The check for `tree`, parsed from `source` by `parser` (kept for whole-file re-parses).
    pub(super) fn new(
        grammar: &'static Grammar,
        parser: Parser,
        tree: &'a Tree,
        source: &'a Source<'a>,
    ) -> Result<Reparse<'a>, tree_sitter::LanguageError> {
        let mut unit_parser = Parser::new();
        unit_parser.set_language(&(grammar.grammar)())?;
        Ok(Reparse {
            parser,
            unit_parser,
            grammar,
            unit_baselines: HashMap::new(),
            unit_trees: HashMap::new(),
            document: String::new(),
            chain: Vec::new(),
            tree,
            source,
            // Counted over the whole tree: the walk does not look inside skipped test items.
            baseline_errors: if tree.root_node().has_error() { count_errors(tree.root_node()) } else { 0 },
        })
    }

    /// Whether a unit is parsed unmutated first (see [`Grammar::unit_baselines`]); always
    /// where a unit's rejection is final.
    fn check_baselines(&self) -> bool {
        self.grammar.unit_baselines || !self.grammar.verify_rejections
    }

    /// True when the mutated file parses without new errors. A mutant inside a unit that
    /// parses cleanly on its own is checked by parsing that unit alone, mutated: the file
    /// around it is unchanged, so the file parses exactly when the unit still does, and the
    /// cost no longer grows with the size of the file. A mutant in a statement of a
    /// statement list with no smaller unit around it is checked in a window of the list
    /// (see [`Reparse::window_parses`]).
    ///
    /// Where the grammar says so (statement units, see [`Grammar::verify_rejections`]), a
    /// unit is only trusted to accept: a mutant it rejects gets the whole-file check too, so
    /// the unit shortcut never drops a mutant the file accepts.
    pub(super) fn still_parses(&mut self, candidate: &Candidate) -> bool {
        let accepted = match self.scope_around(candidate) {
            Some(Scope::Unit(unit)) => self.unit_still_parses(&unit, candidate),
            Some(Scope::Window(window)) => self.window_parses(&window, candidate),
            None => return self.file_still_parses(candidate),
        };
        if accepted {
            return true;
        }
        self.grammar.verify_rejections && self.file_still_parses(candidate)
    }

    /// The innermost unit holding the candidate whose unmutated text parses cleanly alone,
    /// or the statement of a statement list that holds it, whichever comes first.
    fn scope_around(&mut self, candidate: &Candidate) -> Option<Scope<'a>> {
        // In a file with syntax errors a unit or window is used only where the grammar has a
        // rejection re-checked on the whole file, and only when no error lies inside it (see
        // `Reparse::window_parses`): the parse before it is the same, and the parse after it too.
        if self.baseline_errors > 0 && !self.grammar.verify_rejections {
            return None;
        }
        // The nodes from the root down to the candidate's. Asking each node for its parent
        // would descend from the root again every time; descending from the root for every
        // candidate costs the depth each time (8,000 nested arrays: 32 million steps). The
        // candidates come in document order, so the previous candidate's chain is kept and
        // cut back to the deepest node that still holds this one, and the descent starts there.
        while self
            .chain
            .last()
            .is_some_and(|node| !(node.start_byte() <= candidate.start && candidate.end <= node.end_byte()))
        {
            self.chain.pop();
        }
        if self.chain.is_empty() {
            self.chain.push(self.tree.root_node());
        }
        let base = *self.chain.last()?;
        let target = base.descendant_for_byte_range(candidate.start, candidate.end)?;
        let mut current = base;
        while current.id() != target.id() {
            current = current.child_with_descendant(target)?;
            self.chain.push(current);
        }
        // Where units answer both ways and no window is used (Rust), a unit around the
        // candidate whose tree is already at hand is re-parsed incrementally rather than an
        // inner one parsed from scratch first: either unit parses cleanly alone unmutated, so
        // either gives the file's answer, and an incremental parse of the outer one costs less
        // than a fresh parse of the inner one (and then an incremental one).
        if !self.grammar.verify_rejections
            && self.grammar.statement_lists.is_empty()
            && self.grammar.element_lists.is_empty()
            && let Some(unit) = self.chain.iter().rev().find_map(|node| {
                let kind = self.grammar.units.iter().find(|kind| **kind == node.kind())?;
                let around = node.start_byte() < candidate.start && candidate.end < node.end_byte();
                (around && self.unit_trees.contains_key(&(node.start_byte(), node.end_byte()))).then(|| {
                    Unit { start: node.start_byte(), end: node.end_byte(), kind, prefix: "", suffix: "" }
                })
            })
        {
            return Some(Scope::Unit(unit));
        }
        let mut depth = self.chain.len() - 1;
        let mut node = target;
        loop {
            let unit_kind = match self.grammar.units.iter().find(|kind| **kind == node.kind()) {
                Some(kind) => Some((*kind, "", "")),
                None => self.grammar.wrapped_units.iter().find(|(kind, ..)| *kind == node.kind()).copied(),
            };
            if let Some((kind, prefix, suffix)) = unit_kind
                && !node.has_error()
                && node.start_byte() < candidate.start
                && candidate.end < node.end_byte()
            {
                let unit = Unit { start: node.start_byte(), end: node.end_byte(), kind, prefix, suffix };
                let clean = match self.unit_baselines.get(&(unit.start, unit.end)) {
                    _ if !self.check_baselines() => true,
                    Some(clean) => *clean,
                    None => {
                        let clean = self.unit_parses(&unit, None);
                        self.unit_baselines.insert((unit.start, unit.end), clean);
                        clean
                    }
                };
                if clean {
                    return Some(Scope::Unit(unit));
                }
            }
            depth = depth.checked_sub(1)?;
            let parent = self.chain[depth];
            if let Some(&list) = self.grammar.statement_lists.iter().find(|(kind, ..)| *kind == parent.kind())
                && !self.grammar.comments.contains(&node.kind())
                && !node.has_error()
                && (!self.grammar.indented_units || self.starts_line(node.start_byte()))
            {
                return Some(Scope::Window(Window { statement: node, list, elements: false }));
            }
            if let Some(&list) = self.grammar.element_lists.iter().find(|(kind, ..)| *kind == parent.kind())
                && node.is_named()
                && !self.grammar.comments.contains(&node.kind())
                && !node.has_error()
            {
                return Some(Scope::Window(Window { statement: node, list, elements: true }));
            }
            node = parent;
        }
    }

    /// The check of a mutant in a statement of a statement list (see
    /// [`Grammar::statement_lists`]): the statement, mutated, and the statement after it
    /// are parsed alone as a list, with the statement before it too when the mutant
    /// changes the statement's first token (which decides where the one before ends). The
    /// window starts where a statement starts in the file too, and the text that decides
    /// where each of its statements ends lies inside it, or is the end of the list. So when
    /// nothing in the window is an error and the neighbours keep their extents, the file
    /// parses, and outside the window exactly as before. False when the window does not
    /// show that (an error, or a neighbour that changed its extent).
    fn window_parses(&mut self, window: &Window<'a>, candidate: &Candidate) -> bool {
        let statement = window.statement;
        let (list_kind, prefix, suffix) = window.list;
        let previous = if candidate.start == statement.start_byte() {
            statement_sibling(statement, self.grammar.comments, Node::prev_named_sibling)
        } else {
            None
        };
        // A large neighbour after the statement is left out when it starts with a keyword that
        // cannot continue the statement: the end of the list shows as well where it ends.
        let next =
            statement_sibling(statement, self.grammar.comments, Node::next_named_sibling).filter(|next| {
                next.end_byte() - next.start_byte() <= WINDOW_NEIGHBOUR_LIMIT
                    || !(self.grammar.starts_closed)(*next, self.source)
            });
        let text = self.source.text;
        let start = previous.map_or(statement.start_byte(), |n| n.start_byte());
        let end = next.map_or(statement.end_byte(), |n| n.end_byte());
        // An indented list of an indentation-sensitive language is parsed as the block of an
        // `if 1:`, at its own indentation.
        let indented;
        let prefix = match self.source.line_prefix(start) {
            indent if self.grammar.indented_units && !window.elements && !indent.is_empty() => {
                indented = format!("{INDENTED_UNIT_WRAPPER}{indent}");
                indented.as_str()
            }
            _ => prefix,
        };
        let (Some(head), Some(tail)) = (text.get(start..candidate.start), text.get(candidate.end..end))
        else {
            return false;
        };
        let mut document =
            String::with_capacity(end - start + candidate.replacement.len() + prefix.len() + suffix.len());
        document.push_str(prefix);
        document.push_str(head);
        document.push_str(&candidate.replacement);
        document.push_str(tail);
        document.push_str(suffix);
        // Where a byte of the file outside the mutant lies in the document.
        let before = |byte: usize| byte - start + prefix.len();
        let after =
            |byte: usize| before(byte) + candidate.replacement.len() - (candidate.end - candidate.start);
        let neighbours = [
            previous.map(|n| (before(n.start_byte()), before(n.end_byte()))),
            next.map(|n| (after(n.start_byte()), after(n.end_byte()))),
        ];
        let Some(tree) = self.unit_parser.parse(&document, None) else { return false };
        let root = tree.root_node();
        if root.has_error() {
            return false;
        }
        // The list is the innermost node of its kind around the window.
        let mut list = root.descendant_for_byte_range(prefix.len(), document.len() - suffix.len());
        while let Some(node) = list.filter(|node| node.kind() != list_kind) {
            list = node.parent();
        }
        let Some(list) = list else { return false };
        let mut cursor = list.walk();
        neighbours.iter().flatten().all(|&(from, to)| {
            list.named_children(&mut cursor).any(|child| child.start_byte() == from && child.end_byte() == to)
        })
    }

    /// Whether only spaces and tabs precede `byte` on its line.
    fn starts_line(&self, byte: usize) -> bool {
        self.source.line_prefix(byte).bytes().all(|byte| byte == b' ' || byte == b'\t')
    }

    fn unit_still_parses(&mut self, unit: &Unit, candidate: &Candidate) -> bool {
        self.unit_parses(unit, Some(candidate))
    }

    /// True when the unit, mutated by `candidate` if given, parses cleanly on its own as one
    /// node of its kind. An indented unit of an indentation-sensitive language is parsed as
    /// the only statement of an `if 1:` block, after its own line's indentation, so every
    /// line keeps the indentation it has in the file.
    fn unit_parses(&mut self, unit: &Unit, candidate: Option<&Candidate>) -> bool {
        let text = self.source.text;
        let indent = if self.grammar.indented_units { self.source.line_prefix(unit.start) } else { "" };
        if !indent.bytes().all(|byte| byte == b' ' || byte == b'\t') {
            // Something else precedes the unit on its line: it cannot stand alone.
            return false;
        }
        let mut document = std::mem::take(&mut self.document);
        document.clear();
        document.push_str(unit.prefix);
        if !indent.is_empty() {
            document.push_str(INDENTED_UNIT_WRAPPER);
            document.push_str(indent);
        }
        let offset = document.len();
        let pieces = match candidate {
            Some(candidate) => (
                text.get(unit.start..candidate.start),
                candidate.replacement.as_str(),
                text.get(candidate.end..unit.end),
            ),
            None => (text.get(unit.start..unit.end), "", Some("")),
        };
        let (Some(head), replacement, Some(tail)) = pieces else {
            self.document = document;
            return false;
        };
        document.push_str(head);
        document.push_str(replacement);
        document.push_str(tail);
        let wrapped = !unit.prefix.is_empty() || !unit.suffix.is_empty();
        let end = document.len();
        document.push_str(unit.suffix);
        let key = (unit.start, unit.end);
        let tree = match (candidate, self.unit_trees.get(&key)) {
            (Some(candidate), Some(base)) => {
                let mut edited = base.clone();
                edited.edit(&edit_in_unit(&document[..offset], self.source, unit.start, candidate));
                self.unit_parser.parse(&document, Some(&edited))
            }
            _ => self.unit_parser.parse(&document, None),
        };
        let clean = tree.is_some_and(|tree| {
            let clean = if wrapped {
                tree_is_wrapped(&tree, offset..end, unit.kind)
            } else {
                tree_is_alone(&tree, &document, offset, unit.kind)
            };
            if candidate.is_none() && clean {
                self.unit_trees.insert(key, tree);
            }
            clean
        });
        self.document = document;
        clean
    }

    fn file_still_parses(&mut self, candidate: &Candidate) -> bool {
        let text = self.source.text.as_bytes();
        let replacement = candidate.replacement.as_bytes();
        let start_position = self.source.point(candidate.start);
        let mut edited = self.tree.clone();
        edited.edit(&InputEdit {
            start_byte: candidate.start,
            old_end_byte: candidate.end,
            new_end_byte: candidate.start + replacement.len(),
            start_position,
            old_end_position: self.source.point(candidate.end),
            new_end_position: point_after(start_position, &candidate.replacement),
        });
        let new_end = candidate.start + replacement.len();
        let mut read = |byte: usize, _| -> &[u8] {
            if byte < candidate.start {
                &text[byte..candidate.start]
            } else if byte < new_end {
                &replacement[byte - candidate.start..]
            } else {
                text.get(byte - new_end + candidate.end..).unwrap_or(&[])
            }
        };
        let Some(mutated) = self.parser.parse_with_options(&mut read, Some(&edited), None) else {
            return false;
        };
        let root = mutated.root_node();
        if self.baseline_errors == 0 { !root.has_error() } else { count_errors(root) <= self.baseline_errors }
    }
}

/// Where a mutant is checked.
enum Scope<'t> {
    /// A unit parsed alone.
    Unit(Unit),
    /// A window of a statement list.
    Window(Window<'t>),
}

/// A statement of a statement list (or an element of an element list), and the list's
/// `(kind, prefix, suffix)`.
struct Window<'t> {
    statement: Node<'t>,
    list: (&'static str, &'static str, &'static str),
    /// An element of a bracketed list: indentation means nothing inside the brackets.
    elements: bool,
}

/// A self-contained unit: its byte range and node kind.
#[derive(Debug)]
struct Unit {
    start: usize,
    end: usize,
    kind: &'static str,
    /// Text parsed before and after the unit (see [`Grammar::wrapped_units`]); empty for
    /// units that parse alone.
    prefix: &'static str,
    suffix: &'static str,
}

/// The size in bytes above which a window leaves out a closed neighbour (see
/// [`Grammar::starts_closed`]); smaller ones are parsed with the window, which costs
/// little and shows their extent directly.
const WINDOW_NEIGHBOUR_LIMIT: usize = 256;

/// What an indented unit is parsed inside: a block whose indentation is the unit's own.
const INDENTED_UNIT_WRAPPER: &str = "if 1:\n";

/// The edit that turns a unit's unmutated document into the mutated one: `before` is the
/// document's text ahead of the unit (its wrapper), `source` the file, `unit_start` the
/// unit's first byte in the file.
fn edit_in_unit(before: &str, source: &Source, unit_start: usize, candidate: &Candidate) -> InputEdit {
    let before_rows = before.matches('\n').count();
    let before_column = before.len() - before.rfind('\n').map_or(0, |newline| newline + 1);
    let unit = source.point(unit_start);
    let point = |byte: usize| {
        let at = source.point(byte);
        if at.row == unit.row {
            tree_sitter::Point { row: before_rows, column: before_column + at.column - unit.column }
        } else {
            tree_sitter::Point { row: before_rows + at.row - unit.row, column: at.column }
        }
    };
    let start_byte = before.len() + candidate.start - unit_start;
    let start_position = point(candidate.start);
    InputEdit {
        start_byte,
        old_end_byte: start_byte + candidate.end - candidate.start,
        new_end_byte: start_byte + candidate.replacement.len(),
        start_position,
        old_end_position: point(candidate.end),
        new_end_position: point_after(start_position, &candidate.replacement),
    }
}

/// True when `tree` (of `text`) has no error and is a single node of `kind` spanning the
/// text from `offset` (past [`INDENTED_UNIT_WRAPPER`] and the indentation when `offset` is
/// not 0, the node then being the only statement of the wrapper's block).
fn tree_is_alone(tree: &Tree, text: &str, offset: usize, kind: &str) -> bool {
    let root = tree.root_node();
    if root.has_error() {
        return false;
    }
    let Some(mut only) = only_named_child(root) else { return false };
    if offset > 0 {
        let Some(inner) = only.child_by_field_name("consequence").and_then(only_named_child) else {
            return false;
        };
        only = inner;
    }
    // A Rust block at the top of a document is an expression statement holding the block.
    if only.kind() == "expression_statement" && only.named_child_count() == 1 {
        match only.named_child(0) {
            Some(inner) if inner.kind() == kind && inner.end_byte() + 1 >= only.end_byte() => only = inner,
            _ => {}
        }
    }
    // A JavaScript block at the top of a document is a statement: `{ ... }` stays a block.
    let body = text.get(offset..).unwrap_or("");
    only.kind() == kind
        && only.start_byte() == offset + body.len() - body.trim_start().len()
        && only.end_byte() == text.trim_end().len()
}

/// True when `tree` has no error and holds a node of `kind` spanning exactly `span` (the
/// unit between its wrapper's prefix and suffix).
fn tree_is_wrapped(tree: &Tree, span: std::ops::Range<usize>, kind: &str) -> bool {
    let root = tree.root_node();
    if root.has_error() {
        return false;
    }
    let mut node = root.descendant_for_byte_range(span.start, span.end);
    while let Some(current) = node {
        if current.start_byte() != span.start || current.end_byte() != span.end {
            return false;
        }
        if current.kind() == kind {
            return true;
        }
        node = current.parent();
    }
    false
}

/// The first named sibling of `node` in the direction of `step` that is not a comment.
fn statement_sibling<'t>(
    node: Node<'t>,
    comments: &[&str],
    step: fn(&Node<'t>) -> Option<Node<'t>>,
) -> Option<Node<'t>> {
    let mut sibling = step(&node);
    while let Some(current) = sibling {
        if !comments.contains(&current.kind()) {
            return Some(current);
        }
        sibling = step(&current);
    }
    None
}

/// The node's one named child, if it has exactly one.
fn only_named_child(node: Node) -> Option<Node> {
    if node.named_child_count() == 1 { node.named_child(0) } else { None }
}

/// ERROR and MISSING nodes in a tree, visiting only subtrees that hold some.
fn count_errors(root: Node) -> usize {
    let mut count = 0;
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            count += 1;
            continue;
        }
        if node.has_error() {
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Category, Language, languages};

    fn checker<'a>(language: Language, tree: &'a Tree, source: &'a Source<'a>) -> Reparse<'a> {
        let grammar = languages::grammar(language);
        let mut parser = Parser::new();
        parser.set_language(&(grammar.grammar)()).unwrap();
        Reparse::new(grammar, parser, tree, source).unwrap()
    }

    impl Reparse<'_> {
        /// The unit the check of `candidate` uses, if it is a unit (not a window).
        fn unit_around(&mut self, candidate: &Candidate) -> Option<Unit> {
            match self.scope_around(candidate)? {
                Scope::Unit(unit) => Some(unit),
                Scope::Window(_) => None,
            }
        }

        /// The text of the statement whose window the check of `candidate` uses, if any.
        fn window_statement(&mut self, candidate: &Candidate) -> Option<String> {
            match self.scope_around(candidate)? {
                Scope::Window(window) => Some(self.source.of(window.statement).to_string()),
                Scope::Unit(_) => None,
            }
        }
    }

    fn javascript(text: &str) -> Tree {
        let mut parser = Parser::new();
        parser.set_language(&(languages::grammar(Language::JavaScript).grammar)()).unwrap();
        parser.parse(text, None).unwrap()
    }

    fn candidate(text: &str, target: &str, replacement: &str) -> Candidate {
        let start = text.find(target).unwrap();
        Candidate {
            start,
            end: start + target.len(),
            replacement: replacement.into(),
            operator: "test",
            category: Category::Arithmetic,
            description: String::new(),
        }
    }

    /// Both paths of the check (a unit alone, the whole file) accept valid mutants and
    /// reject broken ones.
    #[test]
    fn reparse_check_accepts_valid_and_rejects_broken_mutants() {
        for (language, text) in [
            (
                Language::Rust,
                "struct S;\nimpl S {\n    fn f(&self, a: u32) -> u32 {\n        a + 1\n    }\n}\n",
            ),
            (Language::JavaScript, "class S {\n  f(a) {\n    return a + 1;\n  }\n}\n"),
            (Language::Python, "class S:\n    def f(self, a):\n        return a + 1\n"),
        ] {
            let grammar = languages::grammar(language);
            let mut parser = Parser::new();
            parser.set_language(&(grammar.grammar)()).unwrap();
            let tree = parser.parse(text, None).unwrap();
            let source = Source::new(text);
            let mut check = checker(language, &tree, &source);
            assert!(check.still_parses(&candidate(text, "+", "-")), "{language}: a valid mutant");
            assert!(!check.still_parses(&candidate(text, "+", "+ +)")), "{language}: a broken mutant");
            assert!(check.file_still_parses(&candidate(text, "+", "*")), "{language}: whole-file path");
            assert!(!check.file_still_parses(&candidate(text, "a + 1", "(a")), "{language}: whole-file path");
        }
        let text = "fn f(a: u32) -> u32 {\n    a + 1\n}\n";
        let tree = {
            let mut parser = Parser::new();
            parser.set_language(&(languages::grammar(Language::Rust).grammar)()).unwrap();
            parser.parse(text, None).unwrap()
        };
        let source = Source::new(text);
        let mut check = checker(Language::Rust, &tree, &source);
        let inside = candidate(text, "+", "-");
        assert!(check.unit_around(&inside).is_some(), "a Rust fn is checked alone");
    }

    /// JavaScript statements are units, and an object's `pair`, a class field, a call's
    /// arguments or a parenthesized condition are parsed inside a wrapper: valid mutants are
    /// accepted there, broken ones rejected.
    #[test]
    fn javascript_statements_and_wrapped_units() {
        let text = "const o = {\n  a: x + 1,\n};\nclass K {\n  n = y > 2;\n}\nif (a < b) {\n  f(c - 1);\n}\n\
                    let d = e * 3;\n";
        let tree = javascript(text);
        let source = Source::new(text);
        let mut check = checker(Language::JavaScript, &tree, &source);
        for (target, valid, broken, unit_text) in [
            ("+", "-", "+ (", "a: x + 1"),
            (">", ">=", "> (", "n = y > 2"),
            ("-", "+", "- (", "(c - 1)"),
            ("<", "<=", "< (", "(a < b)"),
            ("*", "/", "* (", "let d = e * 3;"),
        ] {
            let mutant = candidate(text, target, valid);
            let unit = check.unit_around(&mutant).expect("a unit around the mutant");
            assert_eq!(&text[unit.start..unit.end], unit_text);
            assert!(check.unit_still_parses(&unit, &mutant), "{unit_text}: valid");
            assert!(!check.unit_still_parses(&unit, &candidate(text, target, broken)), "{unit_text}: broken");
        }
    }

    /// A mutant that replaces a whole statement, or touches a statement's last token (no
    /// semicolon), is checked in a window of the statement list: blocks, the program and
    /// class bodies. The window accepts what the file accepts and rejects what it rejects.
    #[test]
    fn javascript_statement_windows() {
        let text = "function f () {\n  a = b\n  g()\n  h(c)\n}\nclass K {\n  static params = ['x']\n  \
                    n = 1\n}\nlet done = false\n";
        let tree = javascript(text);
        let source = Source::new(text);
        let mut check = checker(Language::JavaScript, &tree, &source);
        for (target, replacement, statement, parses) in [
            ("g()", "", "g()", true),
            ("g()", "g(", "g()", false),
            ("['x']", "[]", "static params = ['x']", true),
            ("['x']", "[", "static params = ['x']", false),
            ("false", "true", "let done = false", true),
            ("false", "true)", "let done = false", false),
        ] {
            let mutant = candidate(text, target, replacement);
            assert_eq!(
                check.window_statement(&mutant).as_deref(),
                Some(statement),
                "{target} -> {replacement}"
            );
            assert_eq!(check.still_parses(&mutant), parses, "{target} -> {replacement}");
            assert_eq!(check.file_still_parses(&mutant), parses, "{target} -> {replacement}: whole file");
        }
    }

    /// Deleting a statement can join its neighbours into one (no semicolons): the window
    /// sees that a neighbour no longer keeps its extent and leaves the decision to the
    /// whole file, which accepts the joined statement; a deletion that leaves an arrow
    /// function after a call is a syntax error everywhere.
    #[test]
    fn javascript_windows_defer_when_neighbours_change() {
        let text = "function f () {\n  a = b\n  g()\n  [1].map(h)\n}\nx = y\nz();\n(c) => d\n";
        let tree = javascript(text);
        let source = Source::new(text);
        let mut check = checker(Language::JavaScript, &tree, &source);
        let joined = candidate(text, "g()", "");
        let Some(Scope::Window(window)) = check.scope_around(&joined) else { panic!("a window") };
        assert!(!check.window_parses(&window, &joined), "`b` and `[1]` now form one statement");
        assert!(check.file_still_parses(&joined));
        assert!(check.still_parses(&joined), "the whole file decides");

        let arrow = candidate(text, "z();", "");
        let Some(Scope::Window(window)) = check.scope_around(&arrow) else { panic!("a window") };
        assert!(!check.window_parses(&window, &arrow));
        assert!(!check.still_parses(&arrow), "`y(c) => d` does not parse");
    }

    /// In a file with a syntax error elsewhere, a mutant in clean code is still checked in
    /// its unit or window, and agrees with the whole-file check; one next to a statement
    /// that holds the error gets the whole-file check.
    #[test]
    fn javascript_files_with_errors_use_clean_units() {
        let text =
            "function f () {\n  a = b\n  g(c > 1)\n}\nlet = ;\nfunction h () {\n  i(j)\n  let k = ) l\n}\n";
        let tree = javascript(text);
        assert!(tree.root_node().has_error());
        let source = Source::new(text);
        let mut check = checker(Language::JavaScript, &tree, &source);
        for (target, replacement) in [(">", ">="), (">", "> )"), ("g(c > 1)", "")] {
            let mutant = candidate(text, target, replacement);
            assert!(check.scope_around(&mutant).is_some(), "{target} -> {replacement}: a unit or window");
            assert_eq!(
                check.still_parses(&mutant),
                check.file_still_parses(&mutant),
                "{target} -> {replacement}"
            );
        }
        assert!(check.still_parses(&candidate(text, "g(c > 1)", "")));
        // The statement after `i(j)` holds an error: its window cannot show anything, and
        // the whole file decides.
        let near_error = candidate(text, "i(j)", "");
        let Some(Scope::Window(window)) = check.scope_around(&near_error) else { panic!("a window") };
        assert!(!check.window_parses(&window, &near_error));
        assert_eq!(check.still_parses(&near_error), check.file_still_parses(&near_error));
    }

    /// A Python mutant that ends where its statement ends (`return x` replaced by
    /// `return None`) is checked in a window of its block, parsed at its indentation, not
    /// in the whole class around it.
    #[test]
    fn python_statement_windows_keep_their_indentation() {
        let text = "class S:\n    def f(self, a):\n        b = a\n        return b\n\n    def g(self):\n        return 1\n";
        let mut parser = Parser::new();
        parser.set_language(&(languages::grammar(Language::Python).grammar)()).unwrap();
        let tree = parser.parse(text, None).unwrap();
        let source = Source::new(text);
        let mut check = checker(Language::Python, &tree, &source);
        for (replacement, parses) in [("None", true), ("(", false)] {
            let mut mutant = candidate(text, "return b", replacement);
            mutant.start += "return ".len();
            assert_eq!(&text[mutant.start..mutant.end], "b");
            assert_eq!(check.window_statement(&mutant).as_deref(), Some("return b"));
            assert_eq!(check.still_parses(&mutant), parses, "{replacement:?}");
            assert_eq!(check.file_still_parses(&mutant), parses, "{replacement:?}: whole file");
        }
        let mutant = candidate(text, "b = a", "pass");
        assert_eq!(check.window_statement(&mutant).as_deref(), Some("b = a"));
        assert!(check.still_parses(&mutant));
    }

    /// An indented Python unit is parsed at its own indentation: valid mutants are accepted
    /// by the unit alone, broken ones are rejected, and a unit that does not start its line
    /// is not used.
    #[test]
    fn indented_python_units_keep_their_indentation() {
        let text =
            "class S:\n    def f(self, a):\n        if a > 0:\n            return a + 1\n        return 0\n";
        let mut parser = Parser::new();
        parser.set_language(&(languages::grammar(Language::Python).grammar)()).unwrap();
        let tree = parser.parse(text, None).unwrap();
        let source = Source::new(text);
        let mut check = checker(Language::Python, &tree, &source);
        let valid = candidate(text, "+", "-");
        let unit = check.unit_around(&valid).expect("the statement is a unit");
        assert_eq!(&text[unit.start..unit.end], "return a + 1");
        assert!(check.unit_still_parses(&unit, &valid));
        let in_head = candidate(text, ">", ">=");
        let unit = check.unit_around(&in_head).expect("the `if` is a unit");
        assert_eq!(&text[unit.start..unit.end], "if a > 0:\n            return a + 1");
        assert!(check.unit_still_parses(&unit, &in_head));
        assert!(!check.unit_still_parses(&unit, &candidate(text, ">", "> >")));
        // The class at column 0 is parsed unwrapped.
        let whole =
            Unit { start: 0, end: text.trim_end().len(), kind: "class_definition", prefix: "", suffix: "" };
        assert!(check.unit_still_parses(&whole, &valid));
        assert!(!check.unit_still_parses(&whole, &candidate(text, "a + 1", "(a + 1")));
        assert!(!check.still_parses(&candidate(text, "a + 1", "(a + 1")));

        // `y = x + 1` does not start its line: the `if` around it is the unit.
        let inline = "x = 1\nif x: y = x + 1\n";
        let tree = parser.parse(inline, None).unwrap();
        let source = Source::new(inline);
        let mut check = checker(Language::Python, &tree, &source);
        let unit = check.unit_around(&candidate(inline, "+", "-")).expect("the `if` is a unit");
        assert_eq!(&inline[unit.start..unit.end], "if x: y = x + 1");
    }
}
