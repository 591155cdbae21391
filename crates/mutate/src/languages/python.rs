//! Python: grammar, skip rules and operators.

use super::common::{self, changed, push, range, removed};
use super::{Candidate, Grammar, Operator};
use crate::source::Source;
use crate::{Category, Language};
use tree_sitter::Node;

pub(super) static GRAMMAR: Grammar = Grammar {
    grammar: || tree_sitter_python::LANGUAGE.into(),
    comments: &["comment"],
    opaque,
    skipped_item: |_, _, _| None,
    mutate,
    operators: || OPERATORS,
    // Statements that start their line: a mutant inside one is checked by parsing that
    // statement alone, at its indentation (the innermost that parses cleanly alone).
    units: &[
        "expression_statement",
        "return_statement",
        "assert_statement",
        "raise_statement",
        "function_definition",
        "class_definition",
        "if_statement",
        "for_statement",
        "while_statement",
        "try_statement",
        "with_statement",
        "match_statement",
    ],
    indented_units: true,
    verify_rejections: true,
    unit_baselines: true,
    wrapped_units: &[],
    // An indented block's window is parsed inside `if 1:` at its own indentation, like an
    // indented unit.
    statement_lists: &[("block", "", ""), ("module", "", "")],
    element_lists: &[
        ("list", "[", "]"),
        ("tuple", "(", ")"),
        ("dictionary", "{", "}"),
        ("set", "{", "}"),
        ("argument_list", "f(", ")"),
    ],
    // A statement ends with its line (or its indented block): the next one never continues it.
    starts_closed: |_, _| true,
};

const fn op(
    name: &'static str,
    category: Category,
    summary: &'static str,
    before: &'static str,
    after: &'static str,
) -> Operator {
    Operator { name, category, language: Language::Python, summary, before, after }
}

static OPERATORS: &[Operator] = &[
    op(
        "comparison-boundary",
        Category::OffByOne,
        "`<` <-> `<=`, `>` <-> `>=`",
        "while i < n:",
        "while i <= n:",
    ),
    op("plus-one-dropped", Category::OffByOne, "`n + 1` -> `n`", "end = start + 1", "end = start"),
    op(
        "minus-one-dropped",
        Category::OffByOne,
        "`n - 1` -> `n`",
        "last = len(items) - 1",
        "last = len(items)",
    ),
    op(
        "range-end",
        Category::OffByOne,
        "`range(n)` -> `range(n + 1)`",
        "for i in range(n):",
        "for i in range(n + 1):",
    ),
    op("equality-flip", Category::LogicInversion, "`==` <-> `!=`", "if a == b:", "if a != b:"),
    op("and-or-swap", Category::LogicInversion, "`and` <-> `or`", "if a and b:", "if a or b:"),
    op(
        "negate-condition",
        Category::LogicInversion,
        "`if c:` -> `if not c:` (`not (c)` when `c` needs it)",
        "if ready:",
        "if not ready:",
    ),
    op("negation-removed", Category::LogicInversion, "`not x` -> `x`", "if not done:", "if done:"),
    op("boolean-flip", Category::LogicInversion, "`True` <-> `False`", "strict = True", "strict = False"),
    op(
        "ternary-swap",
        Category::LogicInversion,
        "`a if c else b` -> `b if c else a`",
        "x = a if ok else b",
        "x = b if ok else a",
    ),
    op(
        "membership-flip",
        Category::LogicInversion,
        "`in` <-> `not in`",
        "if key in seen:",
        "if key not in seen:",
    ),
    op(
        "default-dropped",
        Category::NullHandling,
        "`x or d` -> `x`, `d.get(k, v)` -> `d.get(k)`",
        "name = given or 'anon'",
        "name = given",
    ),
    op(
        "none-guard-removed",
        Category::NullHandling,
        "`if x is None:` -> `if False:`",
        "if node is None:",
        "if False:",
    ),
    op("return-none", Category::NullHandling, "`return x` -> `return None`", "return user", "return None"),
    op("arithmetic-swap", Category::Arithmetic, "`+` <-> `-`, `*` <-> `/`", "area = w * h", "area = w / h"),
    op(
        "compound-assignment-swap",
        Category::Arithmetic,
        "`+=` <-> `-=`, `*=` <-> `/=`",
        "total += x",
        "total -= x",
    ),
    op("zero-one-swap", Category::Boundary, "integer literal `0` <-> `1`", "count = 0", "count = 1"),
    op(
        "empty-collection",
        Category::Boundary,
        "`[a, b]` -> `[]`, `{k: v}` -> `{}`",
        "xs = [a, b]",
        "xs = []",
    ),
    op(
        "error-swallowed",
        Category::ErrorHandling,
        "`except E: body` -> `except E: pass`",
        "except OSError:\n    raise",
        "except OSError:\n    pass",
    ),
    op("raise-removed", Category::ErrorHandling, "`raise X` -> `pass`", "raise ValueError(name)", "pass"),
    op(
        "constant-return",
        Category::ReturnValue,
        "a returned condition -> `True`/`False`, arithmetic -> `0`",
        "return a < b",
        "return True",
    ),
    op(
        "cleanup-call-removed",
        Category::ResourceCleanup,
        "`f.close()`, `lock.release()`, `del x`, ... removed (never the only statement of its block)",
        "f.close()",
        "",
    ),
    op(
        "del-removed",
        Category::StatementDeletion,
        "`del items[k]`, `del obj.attr` removed (never the only statement of its block)",
        "del cache[key]",
        "",
    ),
    op(
        "call-statement-removed",
        Category::StatementDeletion,
        "a call statement removed (never the only statement of its block)",
        "self.validate(data)",
        "",
    ),
    op(
        "assignment-removed",
        Category::StatementDeletion,
        "an assignment statement removed (never the only statement of its block)",
        "self.size = size",
        "",
    ),
];

fn opaque(kind: &str) -> bool {
    matches!(
        kind,
        "string"
            | "concatenated_string"
            | "import_statement"
            | "import_from_statement"
            | "future_import_statement"
            | "decorator"
            | "type"
            | "global_statement"
            | "nonlocal_statement"
            | "type_alias_statement"
            | "type_parameter"
    )
}

fn is_string(node: Node) -> bool {
    matches!(node.kind(), "string" | "concatenated_string")
}

fn mutate(node: Node, kind: &str, source: &Source, out: &mut Vec<Candidate>) {
    match kind {
        "comparison_operator" => comparison(node, source, out),
        "boolean_operator" => boolean_operator(node, source, out),
        "binary_operator" => {
            if let Some(operator) = node.child_by_field_name("operator") {
                common::arithmetic_swap(source, node, operator, is_string, out);
                if matches!(source.of(operator), "+" | "-") {
                    common::plus_minus_one(source, node, operator, out);
                }
            }
        }
        "not_operator" => {
            if let Some(argument) = node.child_by_field_name("argument") {
                common::negation_removed(source, node, argument, out);
            }
        }
        "true" | "false" => common::boolean_flip(source, node, out),
        "integer" => common::zero_one_swap(source, node, out),
        "if_statement" | "elif_clause" => {
            if let Some(condition) = node.child_by_field_name("condition")
                && !none_guard(condition, source, out)
            {
                common::negate_condition(source, condition, "not ", out);
            }
        }
        "conditional_expression" => ternary(node, source, out),
        "call" => call(node, source, out),
        "augmented_assignment" => {
            if let Some(operator) = node.child_by_field_name("operator") {
                common::compound_assignment_swap(source, node, operator, out);
            }
        }
        "list" | "dictionary" if node.named_child_count() > 0 && !is_assignment_target(node) => {
            let empty = if node.kind() == "list" { "[]" } else { "{}" };
            push(
                out,
                range(node),
                empty,
                "empty-collection",
                Category::Boundary,
                changed(
                    source.of(node),
                    empty,
                    "the collection is now empty, so every lookup or loop over it finds nothing",
                ),
            );
        }
        "except_clause" => except_clause(node, source, out),
        "raise_statement" => {
            push(
                out,
                range(node),
                "pass",
                "raise-removed",
                Category::ErrorHandling,
                changed(
                    source.of(node),
                    "pass",
                    "the error case now falls through and the code continues with bad state",
                ),
            );
        }
        "return_statement" => return_statement(node, source, out),
        "expression_statement" => statement(node, source, out),
        "delete_statement" if !alone_in_block(node) => {
            // `del x` releases a reference; `del items[k]` and `del obj.attr` change data.
            let names_only = node.named_child(0).is_some_and(|target| match target.kind() {
                "identifier" => true,
                "expression_list" => {
                    let mut cursor = target.walk();
                    target.named_children(&mut cursor).all(|name| name.kind() == "identifier")
                }
                _ => false,
            });
            let (operator, category, effect) = if names_only {
                (
                    "cleanup-call-removed",
                    Category::ResourceCleanup,
                    "the reference is no longer released, so the object stays alive",
                )
            } else {
                (
                    "del-removed",
                    Category::StatementDeletion,
                    "the item or attribute is no longer deleted, so it is still there afterwards",
                )
            };
            push(out, range(node), "", operator, category, removed(source.of(node), effect));
        }
        _ => {}
    }
}

fn comparison(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let mut cursor = node.walk();
    let operators: Vec<Node> = node.children(&mut cursor).filter(|child| !child.is_named()).collect();
    for operator in operators {
        match source.of(operator) {
            "<" | "<=" | ">" | ">=" if !is_clamp(node, source) => {
                common::comparison_boundary(source, node, operator, false, out)
            }
            "==" | "!=" => common::equality_flip(source, node, operator, out),
            "in" | "not in" => {
                let replacement = if source.of(operator) == "in" { "not in" } else { "in" };
                let after = common::rewritten(source, node, operator, replacement);
                push(
                    out,
                    range(operator),
                    replacement,
                    "membership-flip",
                    Category::LogicInversion,
                    changed(
                        source.of(node),
                        &after,
                        "the membership test now holds exactly when it should not",
                    ),
                );
            }
            _ => {}
        }
    }
}

/// `and`/`or` swapped where the result is a condition; `x or default` -> `x` where it is a value.
fn boolean_operator(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let Some(operator) = node.child_by_field_name("operator") else { return };
    let as_value = node.parent().is_some_and(|parent| {
        matches!(
            parent.kind(),
            "assignment" | "return_statement" | "argument_list" | "keyword_argument" | "pair"
        )
    });
    if as_value && source.of(operator) == "or" {
        if let Some(left) = node.child_by_field_name("left") {
            push(
                out,
                (left.end_byte(), node.end_byte()),
                "",
                "default-dropped",
                Category::NullHandling,
                changed(
                    source.of(node),
                    source.of(left),
                    "an empty or None value is now used as is instead of falling back to the default",
                ),
            );
        }
    } else {
        common::and_or_swap(source, node, operator, out);
    }
}

/// `if x is None:` -> `if False:`; `if x is not None:` -> `if True:`.
fn none_guard(condition: Node, source: &Source, out: &mut Vec<Candidate>) -> bool {
    if condition.kind() != "comparison_operator" || condition.named_child_count() != 2 {
        return false;
    }
    let text = source.of(condition);
    let replacement = if text.ends_with(" is None") && !text.contains(" is not ") {
        "False"
    } else if text.ends_with(" is not None") {
        "True"
    } else {
        return false;
    };
    common::none_guard_removed(source, condition, replacement, "None", out);
    true
}

fn ternary(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let (Some(yes), Some(no)) = (node.named_child(0), node.named_child(2)) else { return };
    let middle = source.text.get(yes.end_byte()..no.start_byte()).unwrap_or(" if True else ");
    let replacement = format!("{}{middle}{}", source.of(no), source.of(yes));
    push(
        out,
        range(node),
        replacement.clone(),
        "ternary-swap",
        Category::LogicInversion,
        changed(source.of(node), &replacement, "each case now gets the value meant for the other"),
    );
}

fn call(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let (Some(function), Some(arguments)) =
        (node.child_by_field_name("function"), node.child_by_field_name("arguments"))
    else {
        return;
    };
    if arguments.kind() != "argument_list" {
        return;
    }
    let mut cursor = arguments.walk();
    let positional: Vec<Node> = arguments.named_children(&mut cursor).collect();
    let simple =
        |node: Node| matches!(node.kind(), "identifier" | "attribute" | "call" | "integer" | "subscript");
    let callee = source.of(function);
    if callee == "range" && matches!(positional.len(), 1 | 2) && positional.iter().all(|arg| simple(*arg)) {
        let end = positional[positional.len() - 1];
        let after_end = format!("{} + 1", source.of(end));
        push(
            out,
            range(end),
            after_end.clone(),
            "range-end",
            Category::OffByOne,
            changed(
                source.of(node),
                &common::rewritten(source, node, end, &after_end),
                "the loop now runs one step past the intended end",
            ),
        );
    }
    if function.kind() == "attribute"
        && callee.ends_with(".get")
        && positional.len() == 2
        && positional[1].kind() != "keyword_argument"
    {
        let first = positional[0];
        push(
            out,
            (first.end_byte(), positional[1].end_byte()),
            "",
            "default-dropped",
            Category::NullHandling,
            changed(
                source.of(node),
                &format!("{callee}({})", source.of(first)),
                "a missing key now gives None instead of the default",
            ),
        );
    }
}

fn is_assignment_target(node: Node) -> bool {
    node.parent().is_some_and(|parent| {
        matches!(parent.kind(), "assignment" | "for_statement" | "augmented_assignment")
            && parent.child_by_field_name("left").is_some_and(|left| left.id() == node.id())
    })
}

fn except_clause(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let mut cursor = node.walk();
    let Some(block) = node.named_children(&mut cursor).find(|child| child.kind() == "block") else { return };
    let body = source.of(block);
    if body.trim() == "pass" || body.trim() == "..." {
        return;
    }
    // Only the first statement is kept as `pass`; replacing the whole block keeps indentation valid.
    push(
        out,
        range(block),
        "pass",
        "error-swallowed",
        Category::ErrorHandling,
        changed(
            &common::rewritten(source, node, block, body),
            &common::rewritten(source, node, block, "pass"),
            "the error is now silently swallowed and the code carries on as if it succeeded",
        ),
    );
}

fn return_statement(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let Some(value) = node.named_child(0) else { return };
    let text = source.of(value);
    let boolean = matches!(value.kind(), "comparison_operator" | "not_operator" | "boolean_operator");
    if boolean {
        common::boolean_constant_returns(value, text, ["True", "False"], out);
    } else if is_arithmetic(value, source) {
        common::zero_return(value, text, out);
    } else if !matches!(value.kind(), "none" | "true" | "false" | "integer" | "float" | "string") {
        common::return_none(value, text, "None", out);
    }
}

/// Whether `node` is the only statement of its block, comments aside. Removing it would
/// leave `pass`, an empty block that linters flag by itself: such a mutant is no plant.
fn alone_in_block(node: Node) -> bool {
    let Some(block) = node.parent().filter(|parent| parent.kind() == "block") else { return false };
    let mut cursor = block.walk();
    block.named_children(&mut cursor).filter(|child| child.kind() != "comment").count() == 1
}

/// A clamp's condition keeps its boundary (see [`common::is_clamp`]); a chained comparison
/// (`a < b < c`) is never one.
fn is_clamp(comparison: Node, source: &Source) -> bool {
    comparison.named_child_count() == 2
        && common::is_clamp(comparison, [comparison.named_child(0), comparison.named_child(1)], source)
}

fn statement(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let Some(expression) = node.named_child(0) else { return };
    if node.named_child_count() != 1
        || !node.parent().is_some_and(|parent| matches!(parent.kind(), "block" | "module"))
        || alone_in_block(node)
    {
        return;
    }
    let text = source.of(node);
    match expression.kind() {
        "call" => {
            let Some(function) = expression.child_by_field_name("function") else { return };
            let name = common::callee_name(source.of(function));
            if matches!(name, "super" | "__init__") || source.of(function).starts_with("super(") {
                return;
            }
            if common::CLEANUP_METHODS.contains(&name) {
                common::call_removed(
                    node,
                    text,
                    Some("the resource is no longer released, so it leaks or stays locked"),
                    out,
                );
            } else {
                common::call_removed(node, text, None, out);
            }
        }
        "assignment" | "augmented_assignment" => {
            let annotated = expression.child_by_field_name("type").is_some();
            let dunder =
                expression.child_by_field_name("left").is_some_and(|left| source.of(left).starts_with("__"));
            let in_module = node.parent().is_some_and(|parent| parent.kind() == "module");
            if !annotated && !dunder && !in_module {
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
    node.kind() == "binary_operator"
        && node
            .child_by_field_name("operator")
            .is_some_and(|op| matches!(source.of(op), "+" | "-" | "*" | "/" | "//" | "%"))
        && !node.child_by_field_name("left").is_some_and(is_string)
        && !node.child_by_field_name("right").is_some_and(is_string)
}
