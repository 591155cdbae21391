//! Neutral edits: behaviour-preserving rewrites placed where a planted bug could be, for the
//! *clean rounds* of a calibration (a review of a change that carries no bug, shown exactly
//! as a planted change is shown, so that a reviewer cannot tell the two apart by the mere
//! presence of a change).
//!
//! The one rewrite is the mirrored comparison: `a < b` becomes `b > a`, `a <= b` becomes
//! `b >= a`, `a == b` becomes `b == a` (and `!=`, JavaScript's `===` and `!==`), in every
//! language of this crate. It preserves behaviour only when evaluating the operands has no
//! side effect, since mirroring swaps the order they are evaluated in. So an operand must be
//! one of: a name, a field or attribute access of names (`self.limit`, `cfg.max`), a number,
//! a boolean, or null/None/nil. Calls are refused, even `x.len()`: a call may have side
//! effects, and which calls are pure cannot be told from the syntax. Subscripts (`a[i]`
//! may panic or throw before or after the other operand) and arithmetic are refused too.
//!
//! What remains is an assumption about languages with overloading: a user-defined `<`
//! (Rust `PartialOrd`, Python `__lt__`, a JavaScript `valueOf`) is taken to be consistent
//! with its mirror, as every standard type's is. A type that implements one direction only
//! does not compile mirrored (Rust): the calibration's build check excludes such an edit.
//!
//! Neutral edits follow the mutants' rules: never in comments, strings, test code,
//! skip-marked lines or syntax errors, and the edited file must parse as cleanly as before.
//! They are never planted as bugs and have no [`Category`](crate::Category).

use crate::engine::{Parsed, parse, skip_regions};
use crate::select::SplitMix64;
use crate::source::Source;
use crate::{Language, MutateError, Options};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::Path;
use tree_sitter::{Node, Parser};

/// A behaviour-preserving rewrite of one comparison.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NeutralEdit {
    /// The file's path as given to [`neutral_edits`].
    pub file: String,
    /// The file's language.
    pub language: Language,
    /// 1-based line of the first replaced character.
    pub line: usize,
    /// 1-based line of the last replaced character.
    pub end_line: usize,
    /// Byte offset where `original` starts.
    pub start_byte: usize,
    /// Byte offset where `original` ends (exclusive).
    pub end_byte: usize,
    /// The replaced comparison, e.g. `a < b`.
    pub original: String,
    /// Its mirror, e.g. `b > a`.
    pub replacement: String,
    /// The source lines `line..=end_line`, without the final line break.
    pub original_line: String,
    /// The same lines with the edit applied.
    pub mutated_line: String,
}

/// Every neutral edit of one file, in source order.
///
/// `path` selects the language; `options` gives the size limit and whether test files are
/// skipped (category and operator filters do not apply: a neutral edit is no mutant). A file
/// with a syntax error anywhere yields none: its edits could not be checked to parse as
/// the original does.
pub fn neutral_edits(path: &Path, source: &str, options: &Options) -> Result<Vec<NeutralEdit>, MutateError> {
    let Some(Parsed { language, grammar, mut parser, tree }) = parse(path, source, options)? else {
        return Ok(Vec::new());
    };
    if tree.root_node().has_error() {
        tracing::debug!(file = %path.display(), "no neutral edits: the file has a syntax error");
        return Ok(Vec::new());
    }
    let text = Source::new(source);
    let regions = skip_regions(grammar, &text, &tree);
    let file = path.to_string_lossy().into_owned();
    let mut edits = Vec::new();
    let mut cursor = tree.walk();
    // Iterative walk: deeply nested input must not overflow the stack.
    'walk: loop {
        let node = cursor.node();
        if let Some((start, end, replacement)) = mirror(language, node, &text)
            && regions.permits(start, end, text.row(start)..=text.row(end))
            && still_parses(&mut parser, source, start, end, &replacement, node.kind())
        {
            edits.push(edit(&file, language, &text, start, end, replacement));
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    Ok(edits)
}

/// Up to `n` of `edits`, chosen deterministically from `seed`: a seeded shuffle of the edits
/// (sorted first, so the input's order does not matter), at most one per line of a file.
pub fn select_neutral(edits: &[NeutralEdit], n: usize, seed: u64) -> Vec<NeutralEdit> {
    let mut sorted: Vec<&NeutralEdit> = edits.iter().collect();
    sorted.sort_by(|a, b| (&a.file, a.start_byte, a.end_byte).cmp(&(&b.file, b.start_byte, b.end_byte)));
    sorted.dedup();
    // Another stream than the plants' selection with the same seed.
    let mut rng = SplitMix64::new(seed ^ 0x6e65_7574_7261_6c21);
    rng.shuffle(&mut sorted);
    let mut lines = HashSet::new();
    let mut chosen = Vec::new();
    for edit in sorted {
        if chosen.len() >= n {
            break;
        }
        if (edit.line..=edit.end_line).all(|line| !lines.contains(&(edit.file.as_str(), line))) {
            lines.extend((edit.line..=edit.end_line).map(|line| (edit.file.as_str(), line)));
            chosen.push(edit.clone());
        }
    }
    chosen
}

/// The node kinds of a two-operand comparison, and how its operator is found.
fn comparison_parts<'t>(language: Language, node: Node<'t>) -> Option<(Node<'t>, Node<'t>, Node<'t>)> {
    match language {
        Language::Python => {
            if node.kind() != "comparison_operator" || node.child_count() != 3 {
                return None;
            }
            Some((node.child(0)?, node.child(1)?, node.child(2)?))
        }
        _ => {
            if node.kind() != "binary_expression" {
                return None;
            }
            Some((
                node.child_by_field_name("left")?,
                node.child_by_field_name("operator")?,
                node.child_by_field_name("right")?,
            ))
        }
    }
}

/// The mirrored operator, for the operators that have one.
fn mirrored(operator: &str) -> Option<&'static str> {
    Some(match operator {
        "<" => ">",
        ">" => "<",
        "<=" => ">=",
        ">=" => "<=",
        "==" => "==",
        "!=" => "!=",
        "===" => "===",
        "!==" => "!==",
        _ => return None,
    })
}

/// `(start, end, replacement)` when `node` is a comparison of side-effect-free operands.
fn mirror(language: Language, node: Node, source: &Source) -> Option<(usize, usize, String)> {
    let (left, operator, right) = comparison_parts(language, node)?;
    let mirror = mirrored(source.of(operator))?;
    if !side_effect_free(language, left, source) || !side_effect_free(language, right, source) {
        return None;
    }
    let text = source.text;
    // Keep the spacing around the operator as written.
    let before = text.get(left.end_byte()..operator.start_byte())?;
    let after = text.get(operator.end_byte()..right.start_byte())?;
    let replacement = format!("{}{before}{mirror}{after}{}", source.of(right), source.of(left));
    Some((node.start_byte(), node.end_byte(), replacement))
}

/// Whether evaluating `node` can have no side effect: a name, a field access of such, or a
/// literal number, boolean or null (see the module's documentation).
fn side_effect_free(language: Language, node: Node, source: &Source) -> bool {
    let kind = node.kind();
    let (leaves, accesses): (&[&str], &[&str]) = match language {
        Language::Rust => (
            &[
                "identifier",
                "field_identifier",
                "integer_literal",
                "float_literal",
                "boolean_literal",
                "self",
                "char_literal",
            ],
            &["field_expression", "scoped_identifier"],
        ),
        Language::JavaScript | Language::TypeScript | Language::Tsx => (
            &["identifier", "property_identifier", "number", "true", "false", "null", "undefined", "this"],
            &["member_expression"],
        ),
        Language::Python => (&["identifier", "integer", "float", "true", "false", "none"], &["attribute"]),
        Language::Java => (
            &[
                "identifier",
                "decimal_integer_literal",
                "hex_integer_literal",
                "decimal_floating_point_literal",
                "true",
                "false",
                "null_literal",
                "this",
            ],
            &["field_access"],
        ),
        Language::Go => (
            &["identifier", "field_identifier", "int_literal", "float_literal", "true", "false", "nil"],
            &["selector_expression"],
        ),
    };
    if leaves.contains(&kind) {
        return true;
    }
    if !accesses.contains(&kind) {
        return false;
    }
    // `a?.b` is as side-effect-free as `a.b`; a computed member `a[b]` is another kind.
    let mut cursor = node.walk();
    let children: Vec<Node> = node.named_children(&mut cursor).collect();
    !children.is_empty()
        && children.iter().all(|child| side_effect_free(language, *child, source))
        && !source.of(node).contains('(')
}

/// Whether the file with `start..end` replaced still parses without error, the edited
/// comparison parsing as the same kind of node.
fn still_parses(
    parser: &mut Parser,
    source: &str,
    start: usize,
    end: usize,
    replacement: &str,
    kind: &str,
) -> bool {
    let edited = format!("{}{replacement}{}", &source[..start], &source[end..]);
    let Some(tree) = parser.parse(&edited, None) else { return false };
    if tree.root_node().has_error() {
        return false;
    }
    let new_end = start + replacement.len();
    tree.root_node()
        .descendant_for_byte_range(start, new_end)
        .is_some_and(|node| node.kind() == kind && node.start_byte() == start && node.end_byte() == new_end)
}

fn edit(
    file: &str,
    language: Language,
    source: &Source,
    start: usize,
    end: usize,
    replacement: String,
) -> NeutralEdit {
    let (line, _) = source.line_column(start);
    let (end_line, _) = source.line_column(end);
    let lines_start = source.line_start(line - 1);
    let lines_end = source.line_end(end_line - 1).max(end);
    let text = source.text;
    NeutralEdit {
        file: file.to_owned(),
        language,
        line,
        end_line,
        start_byte: start,
        end_byte: end,
        original: text.get(start..end).unwrap_or("").to_owned(),
        original_line: text.get(lines_start..lines_end).unwrap_or("").to_owned(),
        mutated_line: format!(
            "{}{replacement}{}",
            text.get(lines_start..start).unwrap_or(""),
            text.get(end..lines_end).unwrap_or("")
        ),
        replacement,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edits(path: &str, source: &str) -> Vec<(String, String)> {
        neutral_edits(Path::new(path), source, &Options::default())
            .unwrap()
            .into_iter()
            .map(|edit| (edit.original, edit.replacement))
            .collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn rust_mirrors_comparisons_of_names_fields_and_literals_only() {
        let source = "fn f(a: u32, b: u32, s: &S, v: &[u32]) -> bool {\n    \
                      if a < b { return true; }\n    \
                      let x = s.limit >= 10;\n    \
                      let y = v.len() == a; // a call: refused\n    \
                      let z = a + 1 < b; // arithmetic: refused\n    \
                      let w = \"a < b\"; // in a string: never\n    \
                      x == Self::MAX\n}\n\
                      #[cfg(test)]\nmod tests {\n    fn t(a: u32) -> bool { a < 3 }\n}\n";
        assert_eq!(
            edits("src/lib.rs", source),
            pairs(&[
                ("a < b", "b > a"),
                ("s.limit >= 10", "10 <= s.limit"),
                ("x == Self::MAX", "Self::MAX == x")
            ])
        );
    }

    #[test]
    fn javascript_and_typescript_mirror_strict_equality_and_members() {
        let source =
            "function f(a, b, o) {\n  if (a !== b) return o.size <= 3;\n  return g(a) < b || a[0] > b;\n}\n";
        let expected = pairs(&[("a !== b", "b !== a"), ("o.size <= 3", "3 >= o.size")]);
        assert_eq!(edits("src/f.js", source), expected);
        let typed = "function f(a: number, b: number, o: {size: number}): boolean {\n  if (a !== b) return o.size <= 3;\n  return g(a) < b || a[0] > b;\n}\n";
        assert_eq!(edits("src/f.ts", typed), expected);
    }

    #[test]
    fn python_mirrors_two_operand_comparisons_only() {
        let source = "def f(a, b, s):\n    if a < b < 3:\n        return s.limit == None\n    return len(a) > b or a != 1\n";
        assert_eq!(
            edits("pkg/f.py", source),
            pairs(&[("s.limit == None", "None == s.limit"), ("a != 1", "1 != a")])
        );
    }

    #[test]
    fn java_mirrors_fields_and_this() {
        let source = "class A {\n  int n;\n  boolean f(int i) {\n    return i >= this.n && size() > i && i != 0;\n  }\n}\n";
        assert_eq!(
            edits("src/main/java/A.java", source),
            pairs(&[("i >= this.n", "this.n <= i"), ("i != 0", "0 != i")])
        );
    }

    #[test]
    fn go_mirrors_selectors_and_nil() {
        let source = "package p\n\nfunc f(a int, s *S) bool {\n\tif s.err != nil {\n\t\treturn false\n\t}\n\treturn a < s.max && len(s.xs) > a\n}\n";
        assert_eq!(
            edits("p/f.go", source),
            pairs(&[("s.err != nil", "nil != s.err"), ("a < s.max", "s.max > a")])
        );
    }

    #[test]
    fn test_files_and_files_with_syntax_errors_have_none() {
        assert!(edits("tests/a_test.py", "def f(a, b):\n    return a < b\n").is_empty());
        assert!(edits("src/a.py", "def f(a, b):\n    return a < b\ndef (\n").is_empty());
    }

    #[test]
    fn an_edit_carries_its_lines_and_selection_is_seeded_one_per_line() {
        let source =
            "fn f(a: u32, b: u32) -> bool {\n    a < b && b == a\n}\nfn g(a: u32) -> bool { a > 2 }\n";
        let all = neutral_edits(Path::new("src/lib.rs"), source, &Options::default()).unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!((all[0].line, all[0].end_line), (2, 2));
        assert_eq!(all[0].original_line, "    a < b && b == a");
        assert_eq!(all[0].mutated_line, "    b > a && b == a");
        assert_eq!(&source[all[0].start_byte..all[0].end_byte], all[0].original);
        let picked = select_neutral(&all, 5, 7);
        assert_eq!(picked.len(), 2, "one per line: line 2 has two sites");
        assert_eq!(picked, select_neutral(&all, 5, 7));
        let mut reversed = all.clone();
        reversed.reverse();
        assert_eq!(picked, select_neutral(&reversed, 5, 7), "the input's order does not matter");
        assert_eq!(select_neutral(&all, 1, 7).len(), 1);
    }
}
