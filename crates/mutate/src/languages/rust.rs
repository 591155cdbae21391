//! Rust: grammar, skip rules and operators.

use super::common::{self, changed, push, range, removed};
use super::{Candidate, Grammar, Operator};
use crate::source::Source;
use crate::{Category, Language};
use tree_sitter::Node;

pub(super) static GRAMMAR: Grammar = Grammar {
    grammar: || tree_sitter_rust::LANGUAGE.into(),
    comments: &["line_comment", "block_comment"],
    opaque,
    skipped_item,
    mutate,
    operators: || OPERATORS,
    units: &["block", "function_item"],
    indented_units: false,
    verify_rejections: false,
    unit_baselines: true,
    wrapped_units: &[],
    statement_lists: &[],
    // Rust's units are trusted to reject (no whole-file confirmation), so no element windows.
    element_lists: &[],
    starts_closed: |_, _| false,
};

const fn op(
    name: &'static str,
    category: Category,
    summary: &'static str,
    before: &'static str,
    after: &'static str,
) -> Operator {
    Operator { name, category, language: Language::Rust, summary, before, after }
}

static OPERATORS: &[Operator] = &[
    op(
        "comparison-boundary",
        Category::OffByOne,
        "`<` <-> `<=`, `>` <-> `>=`",
        "if i < len {",
        "if i <= len {",
    ),
    op("plus-one-dropped", Category::OffByOne, "`n + 1` -> `n`", "let end = start + 1;", "let end = start;"),
    op("minus-one-dropped", Category::OffByOne, "`n - 1` -> `n`", "let last = len - 1;", "let last = len;"),
    op("range-end", Category::OffByOne, "`a..b` <-> `a..=b`", "for i in 0..n {", "for i in 0..=n {"),
    op("equality-flip", Category::LogicInversion, "`==` <-> `!=`", "if a == b {", "if a != b {"),
    op("and-or-swap", Category::LogicInversion, "`&&` <-> `||`", "if a && b {", "if a || b {"),
    op(
        "negate-condition",
        Category::LogicInversion,
        "`if c` -> `if !c` (`!(c)` when `c` needs it)",
        "if ready {",
        "if !ready {",
    ),
    op("negation-removed", Category::LogicInversion, "`!x` -> `x`", "if !done {", "if done {"),
    op(
        "boolean-flip",
        Category::LogicInversion,
        "`true` <-> `false`",
        "let strict = true;",
        "let strict = false;",
    ),
    op(
        "default-dropped",
        Category::NullHandling,
        "`.unwrap_or(..)`, `.unwrap_or_else(..)`, `.unwrap_or_default()` -> `.unwrap()`",
        "port.unwrap_or(80)",
        "port.unwrap()",
    ),
    op(
        "none-guard-removed",
        Category::NullHandling,
        "`if x.is_none()` -> `if false` (and `is_some` -> `true`)",
        "if cache.is_none() {",
        "if false {",
    ),
    op(
        "return-none",
        Category::NullHandling,
        "`Some(x)` returned -> `None`",
        "return Some(user);",
        "return None;",
    ),
    op(
        "arithmetic-swap",
        Category::Arithmetic,
        "`+` <-> `-`, `*` <-> `/`",
        "let area = w * h;",
        "let area = w / h;",
    ),
    op(
        "compound-assignment-swap",
        Category::Arithmetic,
        "`+=` <-> `-=`, `*=` <-> `/=`",
        "total += x;",
        "total -= x;",
    ),
    op(
        "zero-one-swap",
        Category::Boundary,
        "integer literal `0` <-> `1`",
        "let mut count = 0;",
        "let mut count = 1;",
    ),
    op(
        "empty-collection",
        Category::Boundary,
        "`vec![..]` -> `vec![]`",
        "let v = vec![a, b];",
        "let v = vec![];",
    ),
    op(
        "error-swallowed",
        Category::ErrorHandling,
        "`f()?;` -> `let _ = f();`",
        "file.sync_all()?;",
        "let _ = file.sync_all();",
    ),
    op(
        "question-mark-unwrap",
        Category::ErrorHandling,
        "`x?` -> `x.unwrap()`",
        "let n = s.parse::<u32>()?;",
        "let n = s.parse::<u32>().unwrap();",
    ),
    op(
        "err-return-removed",
        Category::ErrorHandling,
        "`return Err(..);` removed",
        "return Err(Error::Empty);",
        "",
    ),
    op(
        "constant-return",
        Category::ReturnValue,
        "a returned condition -> `true`/`false`",
        "return a < b;",
        "return true;",
    ),
    op(
        "default-return",
        Category::ReturnValue,
        "`return x` -> `return Default::default()`",
        "return total;",
        "return Default::default();",
    ),
    op(
        "cleanup-call-removed",
        Category::ResourceCleanup,
        "`drop(x);`, `x.close()`, `x.flush()`, `x.unlock()`, ... removed",
        "drop(guard);",
        "",
    ),
    op(
        "call-statement-removed",
        Category::StatementDeletion,
        "a call statement removed",
        "self.validate(&input);",
        "",
    ),
    op(
        "assignment-removed",
        Category::StatementDeletion,
        "an assignment statement removed",
        "self.len = len;",
        "",
    ),
];

/// Strings, macros' token trees, types, patterns, imports, attributes and `const`/`static`
/// items are never mutated inside.
fn opaque(kind: &str) -> bool {
    matches!(
        kind,
        "string_literal"
            | "raw_string_literal"
            | "char_literal"
            | "token_tree"
            | "use_declaration"
            | "extern_crate_declaration"
            | "attribute_item"
            | "inner_attribute_item"
            | "const_item"
            | "static_item"
            | "macro_definition"
            | "enum_item"
            | "struct_item"
            | "union_item"
            | "type_item"
            | "type_arguments"
            | "type_parameters"
            | "where_clause"
            | "trait_bounds"
            | "match_pattern"
            | "const_block"
    ) || kind.ends_with("_type")
        || kind.ends_with("_pattern")
}

/// Items under `#[test]`, `#[cfg(test)]` (or any test attribute) or `#[mutants::skip]`;
/// a file with `#![cfg(test)]` is skipped whole.
fn skipped_item(node: Node, kind: &str, source: &Source) -> Option<usize> {
    if kind == "source_file" {
        let mut cursor = node.walk();
        let whole_file = node.named_children(&mut cursor).any(|child| {
            child.kind() == "inner_attribute_item"
                && is_test_or_skip_attribute(attribute_body(source.of(child)))
        });
        return whole_file.then_some(node.start_byte());
    }
    if kind.ends_with("_attribute_item") || kind == "attribute_item" || !kind.ends_with("_item") {
        return None;
    }
    // Attributes end with `]`, and only comments may stand between them and the item. Where
    // neither comes right before the item, no sibling walk is needed: a node's previous
    // sibling is found by walking its parent's children, which costs, per item, the items
    // before it in a module of many.
    let before = source.text.get(..node.start_byte()).unwrap_or("").trim_end();
    let last_line = before.rsplit('\n').next().unwrap_or("");
    if !(before.ends_with(']') || last_line.contains("//") || last_line.contains("*/")) {
        return None;
    }
    let mut first_attribute = None;
    let mut marked = false;
    let mut previous = node.prev_sibling();
    while let Some(sibling) = previous {
        match sibling.kind() {
            "attribute_item" => {
                marked |= is_test_or_skip_attribute(attribute_body(source.of(sibling)));
                first_attribute = Some(sibling.start_byte());
            }
            "line_comment" | "block_comment" => {}
            _ => break,
        }
        previous = sibling.prev_sibling();
    }
    if marked { first_attribute } else { None }
}

/// `#[cfg(test)]` -> `cfg(test)`.
fn attribute_body(text: &str) -> &str {
    text.trim_start_matches("#!")
        .trim_start_matches('#')
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim()
}

fn is_test_or_skip_attribute(body: &str) -> bool {
    let path = body.split(['(', ' ', '=']).next().unwrap_or(body);
    let last = path.rsplit("::").next().unwrap_or(path);
    let cfg_test = path == "cfg"
        && body.split(|c: char| !c.is_alphanumeric() && c != '_').any(|word| word == "test")
        && !body.contains("not(test");
    matches!(last, "test" | "bench" | "rstest" | "quickcheck" | "proptest")
        || path == "mutants::skip"
        || path == "revcal::skip"
        || cfg_test
}

fn is_string(node: Node) -> bool {
    matches!(node.kind(), "string_literal" | "raw_string_literal" | "char_literal")
}

fn mutate(node: Node, kind: &str, source: &Source, out: &mut Vec<Candidate>) {
    match kind {
        "binary_expression" => binary(node, source, out),
        "unary_expression" => {
            if node.child(0).is_some_and(|op| source.of(op) == "!")
                && let Some(argument) = node.named_child(0)
            {
                common::negation_removed(source, node, argument, out);
            }
        }
        "boolean_literal" => common::boolean_flip(source, node, out),
        "integer_literal" => {
            let tuple_index = node.parent().is_some_and(|parent| parent.kind() == "field_expression");
            if !tuple_index {
                common::zero_one_swap(source, node, out);
            }
        }
        "if_expression" => {
            if let Some(condition) = node.child_by_field_name("condition")
                && !matches!(condition.kind(), "let_condition" | "let_chain")
                && !none_guard(condition, source, out)
            {
                common::negate_condition(source, condition, "!", out);
            }
        }
        "range_expression" => range_end(node, source, out),
        "compound_assignment_expr" => {
            if let Some(operator) = node.child_by_field_name("operator") {
                common::compound_assignment_swap(source, node, operator, out);
            }
        }
        "call_expression" => call(node, source, out),
        "try_expression" => try_expression(node, source, out),
        "return_expression" => return_expression(node, source, out),
        "expression_statement" => statement(node, source, out),
        "block" => tail_expression(node, source, out),
        "macro_invocation" => {
            let name = node.child_by_field_name("macro").map(|name| source.of(name));
            if name == Some("vec")
                && let Some(tree) = node.named_child(1).filter(|tree| tree.kind() == "token_tree")
                && tree.named_child_count() > 0
                && !source.of(tree).contains(';')
            {
                let brackets = if source.of(tree).starts_with('[') { "[]" } else { "()" };
                push(
                    out,
                    range(tree),
                    brackets,
                    "empty-collection",
                    Category::Boundary,
                    changed(
                        source.of(node),
                        &format!("vec!{brackets}"),
                        "the collection is now empty, so every lookup or loop over it finds nothing",
                    ),
                );
            }
        }
        _ => {}
    }
}

/// A clamp's condition keeps its boundary (see [`common::is_clamp`]).
fn clamp(node: Node, source: &Source) -> bool {
    common::is_clamp(node, [node.child_by_field_name("left"), node.child_by_field_name("right")], source)
}

fn binary(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let Some(operator) = node.child_by_field_name("operator") else { return };
    match source.of(operator) {
        "<" | "<=" | ">" | ">=" if !clamp(node, source) => {
            common::comparison_boundary(source, node, operator, true, out)
        }
        "==" | "!=" => common::equality_flip(source, node, operator, out),
        "&&" | "||" => common::and_or_swap(source, node, operator, out),
        "+" | "-" | "*" | "/" => {
            common::arithmetic_swap(source, node, operator, is_string, out);
            common::plus_minus_one(source, node, operator, out);
        }
        _ => {}
    }
}

/// `if x.is_none()` -> `if false`, `if x.is_some()` -> `if true`: the guard no longer fires.
fn none_guard(condition: Node, source: &Source, out: &mut Vec<Candidate>) -> bool {
    let text = source.of(condition);
    let replacement = if text.ends_with(".is_none()") {
        "false"
    } else if text.ends_with(".is_some()") && condition.kind() == "call_expression" {
        "true"
    } else {
        return false;
    };
    if condition.kind() != "call_expression" {
        return false;
    }
    common::none_guard_removed(source, condition, replacement, "missing-value", out);
    true
}

fn range_end(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    if node.named_child_count() != 2 {
        return;
    }
    let mut cursor = node.walk();
    let Some(operator) = node.children(&mut cursor).find(|child| !child.is_named()) else { return };
    let (replacement, effect) = match source.of(operator) {
        ".." => ("..=", "the range now includes its end, one element past the intended last"),
        "..=" => ("..", "the range now stops before its last element"),
        _ => return,
    };
    let after = common::rewritten(source, node, operator, replacement);
    push(
        out,
        range(operator),
        replacement,
        "range-end",
        Category::OffByOne,
        changed(source.of(node), &after, effect),
    );
}

/// Method calls: defaults dropped (`unwrap_or*`), `Some(x)` in return position.
fn call(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let Some(function) = node.child_by_field_name("function") else { return };
    if function.kind() == "field_expression"
        && let Some(field) = function.child_by_field_name("field")
        && let Some(arguments) = node.child_by_field_name("arguments")
    {
        let method = source.of(field);
        if matches!(method, "unwrap_or" | "unwrap_or_else" | "unwrap_or_default") {
            let before = format!("{method}{}", source.of(arguments));
            push(
                out,
                (field.start_byte(), arguments.end_byte()),
                "unwrap()",
                "default-dropped",
                Category::NullHandling,
                changed(
                    &before,
                    "unwrap()",
                    "a missing value now panics instead of falling back to the default",
                ),
            );
        }
    }
    if source.of(function) == "Some" && in_return_position(node) {
        push(
            out,
            range(node),
            "None",
            "return-none",
            Category::NullHandling,
            changed(
                source.of(node),
                "None",
                "the function now reports that nothing was found even when it was",
            ),
        );
    }
}

/// The value of a `return`, or the tail expression of a function body.
fn in_return_position(node: Node) -> bool {
    let Some(parent) = node.parent() else { return false };
    match parent.kind() {
        "return_expression" => true,
        "block" => {
            parent
                .named_child(parent.named_child_count().saturating_sub(1) as u32)
                .is_some_and(|last| last.id() == node.id())
                && parent.parent().is_some_and(|owner| owner.kind() == "function_item")
        }
        _ => false,
    }
}

fn try_expression(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let Some(inner) = node.named_child(0) else { return };
    let statement = node.parent().filter(|parent| parent.kind() == "expression_statement");
    if let Some(statement) = statement {
        let after = format!("let _ = {};", source.of(inner));
        push(
            out,
            range(statement),
            after.clone(),
            "error-swallowed",
            Category::ErrorHandling,
            changed(
                source.of(statement),
                &after,
                "a failure is now ignored and the code carries on as if it succeeded",
            ),
        );
    }
    let after = format!("{}.unwrap()", source.of(inner));
    push(
        out,
        range(node),
        after.clone(),
        "question-mark-unwrap",
        Category::ErrorHandling,
        changed(source.of(node), &after, "an error now panics instead of being returned to the caller"),
    );
}

fn return_expression(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let Some(value) = node.named_child(0) else { return };
    let text = source.of(value);
    if value.kind() == "call_expression"
        && value.child_by_field_name("function").is_some_and(|f| source.of(f) == "Err")
    {
        if let Some(statement) = node.parent().filter(|parent| parent.kind() == "expression_statement") {
            push(
                out,
                range(statement),
                "",
                "err-return-removed",
                Category::ErrorHandling,
                removed(
                    source.of(statement),
                    "the error case now falls through and the code continues with bad state",
                ),
            );
        }
        return;
    }
    if is_boolean_expression(value, source) {
        common::boolean_constant_returns(value, text, ["true", "false"], out);
    } else if !matches!(value.kind(), "unit_expression")
        && text != "None"
        && !text.starts_with("Ok(")
        && !text.starts_with("Some(")
        && !is_default_value(text)
    {
        push(
            out,
            range(value),
            "Default::default()",
            "default-return",
            Category::ReturnValue,
            changed(
                &format!("return {text}"),
                "return Default::default()",
                "the function now returns an empty or zero value instead of its result",
            ),
        );
    }
}

/// The tail expression of a function body is its return value: replaced like a `return`.
fn tail_expression(block: Node, source: &Source, out: &mut Vec<Candidate>) {
    if block.parent().is_none_or(|owner| owner.kind() != "function_item") {
        return;
    }
    let Some(tail) = block.named_child(block.named_child_count().saturating_sub(1) as u32) else { return };
    let simple = matches!(
        tail.kind(),
        "identifier"
            | "field_expression"
            | "call_expression"
            | "binary_expression"
            | "unary_expression"
            | "index_expression"
            | "integer_literal"
            | "scoped_identifier"
    );
    if !simple
        || tail.end_byte() + 1 < block.end_byte()
            && source
                .text
                .get(tail.end_byte()..block.end_byte())
                .is_some_and(|rest| rest.trim_start().starts_with(';'))
    {
        return;
    }
    let text = source.of(tail);
    if is_boolean_expression(tail, source) {
        for constant in ["true", "false"] {
            push(
                out,
                range(tail),
                constant,
                "constant-return",
                Category::ReturnValue,
                changed(text, constant, "the function now gives the same answer whatever its input"),
            );
        }
        return;
    }
    let function = tail.child_by_field_name("function").map(|f| source.of(f));
    if let (Some("Ok"), Some(arguments)) = (function, tail.child_by_field_name("arguments")) {
        let inner = arguments.named_child(0).filter(|_| arguments.named_child_count() == 1);
        if let Some(inner) =
            inner.filter(|inner| source.of(*inner) != "()" && !is_default_value(source.of(*inner)))
        {
            push(
                out,
                range(inner),
                "Default::default()",
                "default-return",
                Category::ReturnValue,
                changed(
                    text,
                    "Ok(Default::default())",
                    "the function now succeeds with an empty or zero value instead of its result",
                ),
            );
        }
        return;
    }
    if matches!(function, Some("Some" | "Err"))
        || matches!(text, "None" | "()" | "self" | "Self")
        || is_default_value(text)
    {
        return;
    }
    push(
        out,
        range(tail),
        "Default::default()",
        "default-return",
        Category::ReturnValue,
        changed(
            text,
            "Default::default()",
            "the function now returns an empty or zero value instead of its result",
        ),
    );
}

/// Whether `text` already is the default value of its type, so that replacing it by
/// `Default::default()` changes nothing: `Self::default()`, `T::default()`, `Vec::new()`,
/// `String::new()` and the other empty constructors of std's collections, `vec![]`, a zero.
fn is_default_value(text: &str) -> bool {
    let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    const EMPTY: &[&str] = &[
        "Vec::new()",
        "String::new()",
        "HashMap::new()",
        "HashSet::new()",
        "BTreeMap::new()",
        "BTreeSet::new()",
        "VecDeque::new()",
        "BinaryHeap::new()",
        "vec![]",
        "0.0",
    ];
    let zero = text.trim_end_matches(|c: char| c.is_ascii_alphanumeric() && c != '0').trim_start_matches('-');
    text.ends_with("::default()")
        || EMPTY.iter().any(|empty| text == *empty || text.ends_with(&format!("::{empty}")))
        || (!zero.is_empty() && zero.chars().all(|c| c == '0' || c == '_'))
}

fn is_boolean_expression(node: Node, source: &Source) -> bool {
    match node.kind() {
        "binary_expression" => node
            .child_by_field_name("operator")
            .is_some_and(|op| matches!(source.of(op), "<" | "<=" | ">" | ">=" | "==" | "!=" | "&&" | "||")),
        "unary_expression" => source.of(node).starts_with('!'),
        _ => false,
    }
}

/// Statement deletion: cleanup calls, other calls, assignments.
fn statement(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let Some(expression) = node.named_child(0) else { return };
    let parent_is_block = node.parent().is_some_and(|parent| parent.kind() == "block");
    if !parent_is_block || !source.of(node).ends_with(';') {
        return;
    }
    let text = source.of(node);
    match expression.kind() {
        "call_expression" => {
            let Some(function) = expression.child_by_field_name("function") else { return };
            let name = common::callee_name(source.of(function));
            if common::CLEANUP_METHODS.contains(&name) {
                common::call_removed(
                    node,
                    text,
                    Some("the resource is no longer released, so it leaks or stays locked"),
                    out,
                );
            } else if !matches!(name, "Ok" | "Err" | "Some") {
                common::call_removed(node, text, None, out);
            }
        }
        "assignment_expression" | "compound_assignment_expr" => {
            push(
                out,
                range(node),
                "",
                "assignment-removed",
                Category::StatementDeletion,
                removed(text, "the variable keeps its old value"),
            );
        }
        _ => {}
    }
}
