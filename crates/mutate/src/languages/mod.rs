//! One module per language: its grammar, its skip rules and its operator table. Adding a
//! language is adding a module here and a [`Language`] variant.

pub(crate) mod common;
mod go;
mod java;
mod javascript;
mod python;
mod rust;
mod typescript;

use crate::source::Source;
use crate::{Category, Language};
use tree_sitter::Node;

/// A mutation proposed by an operator, before filtering and the re-parse check.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    /// First byte replaced.
    pub(crate) start: usize,
    /// Byte after the last one replaced.
    pub(crate) end: usize,
    /// The text put in place of `start..end`.
    pub(crate) replacement: String,
    /// The operator's name.
    pub(crate) operator: &'static str,
    /// The kind of defect planted.
    pub(crate) category: Category,
    /// The one-sentence defect description.
    pub(crate) description: String,
}

/// An operator of one language: its name, category, what it does, and an example.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operator {
    /// The operator's name, as in `Mutant::operator` and `--operator`.
    pub name: &'static str,
    /// The category of the defects it plants.
    pub category: Category,
    /// The language it belongs to.
    pub language: Language,
    /// What it changes, in a few words.
    pub summary: &'static str,
    /// Example code before the mutation.
    pub before: &'static str,
    /// The same code after it.
    pub after: &'static str,
}

/// What the engine needs from a language.
pub(crate) struct Grammar {
    /// The tree-sitter grammar.
    pub(crate) grammar: fn() -> tree_sitter::Language,
    /// Node kinds that are comments.
    pub(crate) comments: &'static [&'static str],
    /// Node kinds never mutated inside (strings, types, imports, attributes, ...); a mutant
    /// may still replace such a node whole (deleting a statement that holds a string).
    pub(crate) opaque: fn(&str) -> bool,
    /// When `node` is test code or marked to skip, the byte where its skipped region starts
    /// (attributes before the item belong to it).
    /// Each receives the node's kind too: the walk reads it once per node (each read of a
    /// kind measures its name again).
    pub(crate) skipped_item: fn(Node, &str, &Source) -> Option<usize>,
    /// The operators' proposals for one node.
    pub(crate) mutate: fn(Node, &str, &Source, &mut Vec<Candidate>),
    /// The operator table.
    pub(crate) operators: fn() -> &'static [Operator],
    /// Node kinds that parse on their own as a whole document (a Rust `fn` item, a
    /// JavaScript block): the re-parse check of a mutant inside one parses just that unit.
    pub(crate) units: &'static [&'static str],
    /// Whether units are indentation-sensitive (Python): a unit that starts indented is
    /// parsed inside an `if 1:` block at its own indentation.
    pub(crate) indented_units: bool,
    /// Whether a unit is only trusted to accept: a mutant its unit rejects gets the
    /// whole-file check before it is dropped (small statement units, whose parse alone may
    /// differ from their parse in context).
    pub(crate) verify_rejections: bool,
    /// Whether a unit is first parsed unmutated, to see that it stands alone (one that does
    /// not is passed over for the unit around it). Without this check a unit that cannot
    /// stand alone only sends its mutants to the whole-file check, which needs
    /// [`Grammar::verify_rejections`].
    pub(crate) unit_baselines: bool,
    /// Node kinds that parse only inside some context (an object's `pair`, a class's
    /// `field_definition`), with the text put before and after them to parse them alone:
    /// `(kind, prefix, suffix)`. They are tried like [`Grammar::units`].
    pub(crate) wrapped_units: &'static [(&'static str, &'static str, &'static str)],
    /// Node kinds that hold a list of statements (a JavaScript block, a program), with the
    /// text put before and after a slice of the list to parse it alone:
    /// `(kind, prefix, suffix)`. A mutant that replaces one whole statement of such a list
    /// (a deleted call) is checked in a window of that statement and its neighbours rather
    /// than in the whole list.
    pub(crate) statement_lists: &'static [(&'static str, &'static str, &'static str)],
    /// Node kinds that hold a bracketed, comma-separated list of elements (an array, a
    /// Python list, tuple, dict or set), with the text put before and after a slice of the
    /// elements to parse it alone. A mutant inside an element with no smaller unit around it
    /// (a row of a data table at the top of a file) is checked in a window of that element
    /// and its neighbours, so its cost does not grow with the size of the table.
    pub(crate) element_lists: &'static [(&'static str, &'static str, &'static str)],
    /// Whether a statement of a list starts with a token that can neither continue nor
    /// complete the statement before it (a declaration, an `if`): a window need not include
    /// such a neighbour to show where the statement before it ends.
    pub(crate) starts_closed: fn(Node, &Source) -> bool,
}

/// The grammar and operator table of a language.
pub(crate) fn grammar(language: Language) -> &'static Grammar {
    match language {
        Language::Rust => &rust::GRAMMAR,
        Language::JavaScript => &javascript::GRAMMAR,
        Language::Python => &python::GRAMMAR,
        Language::TypeScript => &typescript::GRAMMAR,
        Language::Tsx => &typescript::TSX_GRAMMAR,
        Language::Java => &java::GRAMMAR,
        Language::Go => &go::GRAMMAR,
    }
}

/// Every operator of every language, in table order.
pub fn operators() -> impl Iterator<Item = &'static Operator> {
    Language::ALL.into_iter().flat_map(|language| (grammar(language).operators)().iter())
}
