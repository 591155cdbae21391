//! JavaScript (`.js .mjs .cjs .jsx`): grammar, skip rules and operators.

use super::common::{self, changed, push, range, removed};
use super::{Candidate, Grammar, Operator};
use crate::source::Source;
use crate::{Category, Language};
use tree_sitter::Node;

pub(super) static GRAMMAR: Grammar = Grammar {
    grammar: || tree_sitter_javascript::LANGUAGE.into(),
    comments: &["comment", "html_comment"],
    opaque,
    skipped_item: |_, _, _| None,
    mutate,
    operators: || OPERATORS,
    // Statements first (the innermost unit is used), then blocks for mutants that span a
    // whole statement. Kinds that do not parse cleanly alone fail their baseline and are
    // passed over for the unit around them.
    units: UNITS,
    indented_units: false,
    verify_rejections: true,
    // Every one of the 6,252 units met in npm's own JavaScript stands alone: checking each
    // first would only cost a parse.
    unit_baselines: false,
    wrapped_units: WRAPPED_UNITS,
    statement_lists: STATEMENT_LISTS,
    // A call's `arguments` are a wrapped unit already.
    element_lists: ELEMENT_LISTS,
    starts_closed,
};

/// Statement and block kinds that parse alone (shared with TypeScript, whose grammar extends
/// JavaScript's).
pub(super) const UNITS: &[&str] = &[
    "expression_statement",
    "return_statement",
    "throw_statement",
    "lexical_declaration",
    "variable_declaration",
    "if_statement",
    "for_statement",
    "for_in_statement",
    "while_statement",
    "do_statement",
    "switch_statement",
    "try_statement",
    "statement_block",
];

/// Kinds that parse alone inside a wrapper: `(kind, prefix, suffix)`.
pub(super) const WRAPPED_UNITS: &[(&str, &str, &str)] = &[
    ("pair", "({", "})"),
    ("field_definition", "class C {", "}"),
    ("method_definition", "class C {", "}"),
    ("switch_case", "switch (0) {", "}"),
    ("switch_default", "switch (0) {", "}"),
    // Bracketed: what lies between the brackets parses the same wherever they stand, so
    // a condition is checked without the body of its `if`.
    ("parenthesized_expression", "", ";"),
    ("arguments", "f", ";"),
];

/// Statement lists checked in windows.
pub(super) const STATEMENT_LISTS: &[(&str, &str, &str)] =
    &[("statement_block", "{", "}"), ("program", "", ""), ("class_body", "class C {", "}")];

/// Element lists checked in windows.
pub(super) const ELEMENT_LISTS: &[(&str, &str, &str)] = &[("array", "[", "]")];

const fn op(
    name: &'static str,
    category: Category,
    summary: &'static str,
    before: &'static str,
    after: &'static str,
) -> Operator {
    Operator { name, category, language: Language::JavaScript, summary, before, after }
}

pub(super) static OPERATORS: &[Operator] = &[
    op(
        "comparison-boundary",
        Category::OffByOne,
        "`<` <-> `<=`, `>` <-> `>=`",
        "for (let i = 0; i < n; i++)",
        "for (let i = 0; i <= n; i++)",
    ),
    op(
        "plus-one-dropped",
        Category::OffByOne,
        "`n + 1` -> `n`",
        "const next = index + 1;",
        "const next = index;",
    ),
    op(
        "minus-one-dropped",
        Category::OffByOne,
        "`n - 1` -> `n`",
        "const last = items.length - 1;",
        "const last = items.length;",
    ),
    op(
        "equality-flip",
        Category::LogicInversion,
        "`===` <-> `!==`, `==` <-> `!=`",
        "if (a === b)",
        "if (a !== b)",
    ),
    op("and-or-swap", Category::LogicInversion, "`&&` <-> `||`", "if (a && b)", "if (a || b)"),
    op(
        "negate-condition",
        Category::LogicInversion,
        "`if (c)` -> `if (!c)` (`!(c)` when `c` needs it)",
        "if (ready)",
        "if (!ready)",
    ),
    op("negation-removed", Category::LogicInversion, "`!x` -> `x`", "if (!done)", "if (done)"),
    op(
        "boolean-flip",
        Category::LogicInversion,
        "`true` <-> `false`",
        "{ strict: true }",
        "{ strict: false }",
    ),
    op(
        "ternary-swap",
        Category::LogicInversion,
        "`c ? a : b` -> `c ? b : a`",
        "const x = ok ? a : b;",
        "const x = ok ? b : a;",
    ),
    op("optional-chaining-dropped", Category::NullHandling, "`a?.b` -> `a.b`", "user?.name", "user.name"),
    op(
        "default-dropped",
        Category::NullHandling,
        "`x ?? d` -> `x`",
        "const port = opts.port ?? 80;",
        "const port = opts.port;",
    ),
    op(
        "none-guard-removed",
        Category::NullHandling,
        "`if (x == null)` -> `if (false)`",
        "if (node === undefined) return;",
        "if (false) return;",
    ),
    op("return-none", Category::NullHandling, "`return x` -> `return null`", "return user;", "return null;"),
    op(
        "arithmetic-swap",
        Category::Arithmetic,
        "`+` <-> `-`, `*` <-> `/`",
        "const area = w * h;",
        "const area = w / h;",
    ),
    op(
        "compound-assignment-swap",
        Category::Arithmetic,
        "`+=` <-> `-=`, `*=` <-> `/=`",
        "total += x;",
        "total -= x;",
    ),
    op("zero-one-swap", Category::Boundary, "number literal `0` <-> `1`", "let count = 0;", "let count = 1;"),
    op("empty-collection", Category::Boundary, "`[a, b]` -> `[]`", "const xs = [a, b];", "const xs = [];"),
    op(
        "error-swallowed",
        Category::ErrorHandling,
        "`catch (e) { .. }` -> `catch (e) {}`",
        "catch (e) { log(e); throw e; }",
        "catch (e) {}",
    ),
    op("throw-removed", Category::ErrorHandling, "`throw x;` removed", "throw new Error('empty');", ""),
    op(
        "constant-return",
        Category::ReturnValue,
        "a returned condition -> `true`/`false`, arithmetic -> `0`",
        "return a < b;",
        "return true;",
    ),
    op(
        "cleanup-call-removed",
        Category::ResourceCleanup,
        "`x.close()`, `clearTimeout(t)`, `x.removeListener(..)`, ... removed",
        "stream.end();",
        "",
    ),
    op(
        "call-statement-removed",
        Category::StatementDeletion,
        "a call statement removed",
        "validate(input);",
        "",
    ),
    op(
        "assignment-removed",
        Category::StatementDeletion,
        "an assignment statement removed",
        "this.size = size;",
        "",
    ),
];

pub(super) fn opaque(kind: &str) -> bool {
    matches!(
        kind,
        "string"
            | "template_string"
            | "regex"
            | "import_statement"
            | "decorator"
            | "jsx_text"
            | "hash_bang_line"
    )
}

/// Statements that start with a keyword no statement is continued or completed by (unlike
/// `else`, `catch`, `in` or `(`), and class members that start with a plain name (unlike
/// `[key]` or `*gen`, which would continue a field's value).
pub(super) fn starts_closed(node: Node, source: &Source) -> bool {
    match node.kind() {
        "function_declaration"
        | "generator_function_declaration"
        | "class_declaration"
        | "lexical_declaration"
        | "variable_declaration"
        | "if_statement"
        | "for_statement"
        | "for_in_statement"
        | "while_statement"
        | "do_statement"
        | "try_statement"
        | "switch_statement"
        | "return_statement"
        | "throw_statement"
        | "break_statement"
        | "continue_statement"
        | "import_statement"
        | "export_statement" => true,
        "method_definition" | "field_definition" => {
            let text = source.of(node);
            let name_end = text
                .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '$' | '#')))
                .unwrap_or(text.len());
            name_end > 0 && !matches!(&text[..name_end], "in" | "instanceof")
        }
        _ => false,
    }
}

fn is_string(node: Node) -> bool {
    matches!(node.kind(), "string" | "template_string")
}

pub(super) fn mutate(node: Node, kind: &str, source: &Source, out: &mut Vec<Candidate>) {
    match kind {
        "binary_expression" => binary(node, source, out),
        "unary_expression" => {
            if node.child_by_field_name("operator").is_some_and(|op| source.of(op) == "!")
                && let Some(argument) = node.child_by_field_name("argument")
            {
                common::negation_removed(source, node, argument, out);
            }
        }
        "true" | "false" => common::boolean_flip(source, node, out),
        "number" => common::zero_one_swap(source, node, out),
        "if_statement" => {
            if let Some(condition) = node.child_by_field_name("condition")
                && let Some(inner) = condition.named_child(0)
                && condition.named_child_count() == 1
                && !none_guard(inner, source, out)
            {
                common::negate_condition(source, inner, "!", out);
            }
        }
        "ternary_expression" => ternary(node, source, out),
        "optional_chain" => {
            let Some(parent) = node.parent() else { return };
            let replacement = if parent.kind() == "member_expression" { "." } else { "" };
            let before = source.of(parent);
            let after = common::rewritten(source, parent, node, replacement);
            push(
                out,
                range(node),
                replacement,
                "optional-chaining-dropped",
                Category::NullHandling,
                changed(before, &after, "a missing value now throws a TypeError instead of giving undefined"),
            );
        }
        "augmented_assignment_expression" => {
            if let Some(operator) = node.child_by_field_name("operator") {
                common::compound_assignment_swap(source, node, operator, out);
            }
        }
        "array" if node.named_child_count() > 0 && !is_pattern_context(node) => {
            push(
                out,
                range(node),
                "[]",
                "empty-collection",
                Category::Boundary,
                changed(
                    source.of(node),
                    "[]",
                    "the list is now empty, so every lookup or loop over it finds nothing",
                ),
            );
        }
        "catch_clause" => {
            if let Some(body) = node.child_by_field_name("body")
                && body.named_child_count() > 0
            {
                push(
                    out,
                    range(body),
                    "{}",
                    "error-swallowed",
                    Category::ErrorHandling,
                    changed(
                        source.of(node),
                        &common::rewritten(source, node, body, "{}"),
                        "the error is now silently swallowed and the code carries on as if it succeeded",
                    ),
                );
            }
        }
        "throw_statement" if in_block(node) => {
            push(
                out,
                range(node),
                "",
                "throw-removed",
                Category::ErrorHandling,
                removed(
                    source.of(node),
                    "the error case now falls through and the code continues with bad state",
                ),
            );
        }
        "return_statement" => return_statement(node, source, out),
        "expression_statement" => statement(node, source, out),
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
            common::comparison_boundary(source, node, operator, false, out)
        }
        "==" | "!=" | "===" | "!==" => common::equality_flip(source, node, operator, out),
        "&&" | "||" => common::and_or_swap(source, node, operator, out),
        "+" | "-" | "*" | "/" => {
            common::arithmetic_swap(source, node, operator, is_string, out);
            common::plus_minus_one(source, node, operator, out);
        }
        "??" => {
            if let Some(left) = node.child_by_field_name("left") {
                let after = source.of(left);
                push(
                    out,
                    (left.end_byte(), node.end_byte()),
                    "",
                    "default-dropped",
                    Category::NullHandling,
                    changed(
                        source.of(node),
                        after,
                        "a missing value is now used as is instead of falling back to the default",
                    ),
                );
            }
        }
        _ => {}
    }
}

/// `if (x == null)`, `if (x === undefined)`, `if (x != null)`: the guard is made inert.
fn none_guard(condition: Node, source: &Source, out: &mut Vec<Candidate>) -> bool {
    if condition.kind() != "binary_expression" {
        return false;
    }
    let Some(operator) = condition.child_by_field_name("operator") else { return false };
    let nullish = |side: &str| {
        condition
            .child_by_field_name(side)
            .is_some_and(|node| matches!(source.of(node), "null" | "undefined"))
    };
    if !(nullish("left") || nullish("right")) {
        return false;
    }
    let replacement = match source.of(operator) {
        "==" | "===" => "false",
        "!=" | "!==" => "true",
        _ => return false,
    };
    common::none_guard_removed(source, condition, replacement, "missing-value", out);
    true
}

fn ternary(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let (Some(yes), Some(no)) =
        (node.child_by_field_name("consequence"), node.child_by_field_name("alternative"))
    else {
        return;
    };
    // A nested conditional moved into the middle (`a ? b : c ? d : e` -> `a ? c ? d : e : b`)
    // reads as no person writes it: prettier parenthesises and re-indents it.
    if [yes, no].iter().any(|branch| branch.kind() == "ternary_expression") {
        return;
    }
    let start = yes.start_byte();
    let end = no.end_byte();
    let middle = source.text.get(yes.end_byte()..no.start_byte()).unwrap_or(" : ");
    let replacement = format!("{}{middle}{}", source.of(no), source.of(yes));
    let condition = node.child_by_field_name("condition").map_or("", |c| source.of(c));
    push(
        out,
        (start, end),
        replacement.clone(),
        "ternary-swap",
        Category::LogicInversion,
        changed(
            source.of(node),
            &format!("{condition} ? {replacement}"),
            "each case now gets the value meant for the other",
        ),
    );
}

fn is_pattern_context(node: Node) -> bool {
    node.parent().is_some_and(|parent| {
        matches!(parent.kind(), "assignment_expression" | "variable_declarator")
            && parent
                .child_by_field_name("left")
                .or_else(|| parent.child_by_field_name("name"))
                .is_some_and(|left| left.id() == node.id())
    })
}

fn in_block(node: Node) -> bool {
    node.parent().is_some_and(|parent| {
        matches!(parent.kind(), "statement_block" | "program" | "switch_case" | "switch_default")
    })
}

fn return_statement(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let Some(value) = node.named_child(0) else { return };
    let text = source.of(value);
    let boolean = match value.kind() {
        "binary_expression" => value.child_by_field_name("operator").is_some_and(|op| {
            matches!(
                source.of(op),
                "<" | "<=" | ">" | ">=" | "==" | "!=" | "===" | "!==" | "&&" | "||" | "instanceof" | "in"
            )
        }),
        "unary_expression" => text.starts_with('!'),
        _ => false,
    };
    if boolean {
        common::boolean_constant_returns(value, text, ["true", "false"], out);
    } else if is_arithmetic(value, source) {
        common::zero_return(value, text, out);
    } else if !matches!(
        value.kind(),
        "null" | "undefined" | "true" | "false" | "number" | "string" | "template_string"
    ) {
        common::return_none(value, text, "null", out);
    }
}

fn statement(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let Some(expression) = node.named_child(0) else { return };
    if !in_block(node) {
        return;
    }
    let text = source.of(node);
    match expression.kind() {
        "call_expression" => {
            let Some(function) = expression.child_by_field_name("function") else { return };
            let callee = source.of(function);
            if callee == "require" || callee.ends_with("use strict") {
                return;
            }
            if common::CLEANUP_METHODS.contains(&common::callee_name(callee)) {
                common::call_removed(
                    node,
                    text,
                    Some("the resource is no longer released, so it leaks or keeps the process alive"),
                    out,
                );
            } else {
                common::call_removed(node, text, None, out);
            }
        }
        "assignment_expression" | "augmented_assignment_expression" => {
            let exported = source.of(expression).starts_with("module.exports")
                || source.of(expression).starts_with("exports.");
            if !exported {
                push(
                    out,
                    range(node),
                    "",
                    "assignment-removed",
                    Category::StatementDeletion,
                    removed(text, "the variable keeps its old value"),
                );
            }
        }
        _ => {}
    }
}

/// Arithmetic on numbers (not string concatenation): its value can be replaced by `0`.
fn is_arithmetic(node: Node, source: &Source) -> bool {
    node.kind() == "binary_expression"
        && node
            .child_by_field_name("operator")
            .is_some_and(|op| matches!(source.of(op), "+" | "-" | "*" | "/" | "%"))
        && !node.child_by_field_name("left").is_some_and(is_string)
        && !node.child_by_field_name("right").is_some_and(is_string)
}
