//! Go (`.go`): grammar, skip rules and operators. Test code lives in `*_test.go` files,
//! skipped by path. Go is typed and refuses unused variables, so operators keep to what
//! compiles: `nil` only where a function returns a pointer, slice, map, channel, function
//! or interface, a `+` only between numbers, no assignment removed that could leave a
//! variable unused.

use super::common::{self, changed, push, range, removed};
use super::{Candidate, Grammar, Operator};
use crate::source::Source;
use crate::{Category, Language};
use tree_sitter::Node;

pub(super) static GRAMMAR: Grammar = Grammar {
    grammar: || tree_sitter_go::LANGUAGE.into(),
    comments: &["comment"],
    opaque,
    skipped_item: |_, _, _| None,
    mutate,
    operators: || OPERATORS,
    // The grammar's source file takes statements, so blocks and functions parse alone.
    units: &["block", "function_declaration", "method_declaration"],
    indented_units: false,
    verify_rejections: true,
    unit_baselines: true,
    wrapped_units: &[],
    statement_lists: &[],
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
    Operator { name, category, language: Language::Go, summary, before, after }
}

static OPERATORS: &[Operator] = &[
    op(
        "comparison-boundary",
        Category::OffByOne,
        "`<` <-> `<=`, `>` <-> `>=`",
        "for i := 0; i < n; i++ {",
        "for i := 0; i <= n; i++ {",
    ),
    op("plus-one-dropped", Category::OffByOne, "`n + 1` -> `n`", "next := index + 1", "next := index"),
    op(
        "minus-one-dropped",
        Category::OffByOne,
        "`n - 1` -> `n`",
        "last := len(items) - 1",
        "last := len(items)",
    ),
    op("equality-flip", Category::LogicInversion, "`==` <-> `!=`", "if a == b {", "if a != b {"),
    op("and-or-swap", Category::LogicInversion, "`&&` <-> `||`", "if a && b {", "if a || b {"),
    op(
        "negate-condition",
        Category::LogicInversion,
        "`if c {` -> `if !c {` (`!(c)` when `c` needs it)",
        "if ready {",
        "if !ready {",
    ),
    op("negation-removed", Category::LogicInversion, "`!x` -> `x`", "if !done {", "if done {"),
    op("boolean-flip", Category::LogicInversion, "`true` <-> `false`", "strict := true", "strict := false"),
    op(
        "none-guard-removed",
        Category::NullHandling,
        "`if x == nil {` -> `if false {`",
        "if node == nil {",
        "if false {",
    ),
    op(
        "return-none",
        Category::NullHandling,
        "`return x` -> `return nil` (functions returning a pointer, slice, map, ... or interface)",
        "return user",
        "return nil",
    ),
    op(
        "arithmetic-swap",
        Category::Arithmetic,
        "`-` -> `+`, `*` <-> `/` (`+` only with a number literal: it may join strings)",
        "area := w * h",
        "area := w / h",
    ),
    op(
        "compound-assignment-swap",
        Category::Arithmetic,
        "`-=` -> `+=`, `*=` <-> `/=`",
        "total -= x",
        "total += x",
    ),
    op("zero-one-swap", Category::Boundary, "integer literal `0` <-> `1`", "count := 0", "count := 1"),
    op(
        "empty-collection",
        Category::Boundary,
        "`[]T{a, b}` -> `[]T{}`",
        "xs := []int{a, b}",
        "xs := []int{}",
    ),
    op(
        "error-check-removed",
        Category::ErrorHandling,
        "`if err != nil {` -> `if false {`",
        "if err != nil {",
        "if false {",
    ),
    op(
        "error-swallowed",
        Category::ErrorHandling,
        "`return .., err` -> `return .., nil`",
        "return nil, err",
        "return nil, nil",
    ),
    op("panic-removed", Category::ErrorHandling, "`panic(..)` removed", "panic(\"unreachable\")", ""),
    op(
        "constant-return",
        Category::ReturnValue,
        "a returned condition -> `true`/`false` (functions returning `bool`), arithmetic -> `0`",
        "return a < b",
        "return true",
    ),
    op(
        "cleanup-call-removed",
        Category::ResourceCleanup,
        "`defer f.Close()`, `mu.Unlock()`, `cancel()`, ... removed",
        "defer f.Close()",
        "",
    ),
    op(
        "call-statement-removed",
        Category::StatementDeletion,
        "a call statement removed",
        "validate(input)",
        "",
    ),
    op(
        "assignment-removed",
        Category::StatementDeletion,
        "an assignment to a field or element, or a compound one, removed",
        "s.size = size",
        "",
    ),
];

fn opaque(kind: &str) -> bool {
    matches!(
        kind,
        "interpreted_string_literal"
            | "raw_string_literal"
            | "rune_literal"
            | "import_declaration"
            | "package_clause"
            | "type_declaration"
            | "const_declaration"
    )
}

/// Go's cleanup calls, by the method's name (Go exports capitalised names).
const CLEANUP: &[&str] = &[
    "Close", "Unlock", "RUnlock", "Release", "Stop", "Done", "Flush", "Cancel", "Shutdown", "cancel", "close",
];

fn mutate(node: Node, kind: &str, source: &Source, out: &mut Vec<Candidate>) {
    match kind {
        "binary_expression" => binary(node, source, out),
        "unary_expression" => {
            if node.child_by_field_name("operator").is_some_and(|op| source.of(op) == "!")
                && let Some(operand) = node.child_by_field_name("operand")
            {
                common::negation_removed(source, node, operand, out);
            }
        }
        "true" | "false" if !is_loop_condition(node) => common::boolean_flip(source, node, out),
        "int_literal" => common::zero_one_swap(source, node, out),
        "if_statement" => {
            if let Some(condition) = node.child_by_field_name("condition")
                && !nil_guard(condition, source, out)
            {
                common::negate_condition(source, condition, "!", out);
            }
        }
        "assignment_statement" => {
            if let Some(operator) = node.child_by_field_name("operator")
                && source.of(operator) != "+="
            {
                common::compound_assignment_swap(source, node, operator, out);
            }
            assignment(node, source, out);
        }
        "composite_literal" => {
            if let Some(body) = node.child_by_field_name("body")
                && body.named_child_count() > 0
                && node
                    .child_by_field_name("type")
                    .is_some_and(|t| matches!(t.kind(), "slice_type" | "map_type"))
            {
                push(
                    out,
                    range(body),
                    "{}",
                    "empty-collection",
                    Category::Boundary,
                    changed(
                        source.of(node),
                        &common::rewritten(source, node, body, "{}"),
                        "the collection is now empty, so every lookup or loop over it finds nothing",
                    ),
                );
            }
        }
        "return_statement" => return_statement(node, source, out),
        "expression_statement" => statement(node, source, out),
        "defer_statement" if in_block(node) => {
            let call = source.of(node).trim_start_matches("defer").trim();
            let name = common::callee_name(call.split('(').next().unwrap_or(call));
            if CLEANUP.contains(&name) {
                push(
                    out,
                    range(node),
                    "",
                    "cleanup-call-removed",
                    Category::ResourceCleanup,
                    removed(
                        source.of(node),
                        "the resource is no longer released, so it leaks or stays locked",
                    ),
                );
            }
        }
        _ => {}
    }
}

fn is_loop_condition(node: Node) -> bool {
    node.parent().is_some_and(|parent| {
        parent.kind() == "for_clause"
            || (parent.kind() == "for_statement" && parent.child_by_field_name("body").is_some())
    })
}

fn is_string(node: Node) -> bool {
    matches!(node.kind(), "interpreted_string_literal" | "raw_string_literal" | "rune_literal")
}

fn is_number(node: Node) -> bool {
    matches!(node.kind(), "int_literal" | "float_literal")
}

fn binary(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    common::typed_binary(node, source, is_string, is_number, out);
}

/// `if x == nil {` and `if x != nil {`: made inert. On an error (`err`, `...Err`), `!= nil`
/// becomes `false`: the error is no longer handled (error-handling); on anything else the
/// nil case is no longer checked (null-handling).
fn nil_guard(condition: Node, source: &Source, out: &mut Vec<Candidate>) -> bool {
    if condition.kind() != "binary_expression" {
        return false;
    }
    let Some(operator) = condition.child_by_field_name("operator") else { return false };
    let (Some(left), Some(right)) =
        (condition.child_by_field_name("left"), condition.child_by_field_name("right"))
    else {
        return false;
    };
    let value = match (left.kind(), right.kind()) {
        (_, "nil") => left,
        ("nil", _) => right,
        _ => return false,
    };
    let name = source.of(value);
    let is_error = name == "err" || name.ends_with("Err") || name.ends_with("err");
    let (replacement, operator_name, category, effect) = match (source.of(operator), is_error) {
        ("!=", true) => (
            "false",
            "error-check-removed",
            Category::ErrorHandling,
            "the error is no longer handled and the code goes on with a failed result",
        ),
        ("==", _) => (
            "false",
            "none-guard-removed",
            Category::NullHandling,
            "the nil case is no longer checked, so it reaches code that assumes a value",
        ),
        ("!=", false) => (
            "true",
            "none-guard-removed",
            Category::NullHandling,
            "the nil case is no longer checked, so it reaches code that assumes a value",
        ),
        _ => return false,
    };
    push(
        out,
        range(condition),
        replacement,
        operator_name,
        category,
        changed(source.of(condition), replacement, effect),
    );
    true
}

fn in_block(node: Node) -> bool {
    node.parent().is_some_and(|parent| parent.kind() == "statement_list")
}

/// The declared result of the function a `return` belongs to (a type, or a parameter list
/// for several results).
fn result_type(node: Node) -> Option<Node> {
    let mut current = node.parent();
    while let Some(parent) = current {
        match parent.kind() {
            "function_declaration" | "method_declaration" | "func_literal" => {
                return parent.child_by_field_name("result");
            }
            _ => current = parent.parent(),
        }
    }
    None
}

/// Whether values of the type written `ty` may be nil.
fn nilable(ty: Node, source: &Source) -> bool {
    match ty.kind() {
        "pointer_type" | "slice_type" | "map_type" | "channel_type" | "function_type" | "interface_type" => {
            true
        }
        "type_identifier" => matches!(source.of(ty), "error" | "any"),
        _ => false,
    }
}

fn return_statement(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let Some(values) = node.named_child(0) else { return };
    let Some(result) = result_type(node) else { return };
    let mut cursor = values.walk();
    let items: Vec<Node> = values.named_children(&mut cursor).collect();
    if items.len() >= 2 {
        // `return v, err` -> `return v, nil`: the error is dropped.
        let last = items[items.len() - 1];
        let name = source.of(last);
        if last.kind() == "identifier" && (name == "err" || name.ends_with("Err")) {
            push(
                out,
                range(last),
                "nil",
                "error-swallowed",
                Category::ErrorHandling,
                changed(
                    source.of(node),
                    &common::rewritten(source, node, last, "nil"),
                    "the error is dropped and callers see success",
                ),
            );
        }
        return;
    }
    let [value] = items[..] else { return };
    let text = source.of(value);
    let declared = source.of(result);
    let boolean = value.kind() == "binary_expression"
        && value
            .child_by_field_name("operator")
            .is_some_and(|op| matches!(source.of(op), "<" | "<=" | ">" | ">=" | "==" | "!=" | "&&" | "||"));
    if boolean && declared == "bool" {
        common::boolean_constant_returns(value, text, ["true", "false"], out);
    } else if value.kind() == "binary_expression"
        && matches!(
            declared,
            "int" | "int64" | "int32" | "uint" | "uint64" | "uint32" | "float64" | "float32"
        )
        && value
            .child_by_field_name("operator")
            .is_some_and(|op| matches!(source.of(op), "-" | "*" | "/" | "%"))
    {
        common::zero_return(value, text, out);
    } else if nilable(result, source) && !matches!(value.kind(), "nil" | "composite_literal") {
        common::return_none(value, text, "nil", out);
    }
}

fn statement(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let Some(expression) = node.named_child(0) else { return };
    if !in_block(node) || expression.kind() != "call_expression" {
        return;
    }
    let Some(function) = expression.child_by_field_name("function") else { return };
    let callee = source.of(function);
    let text = source.of(node);
    let name = common::callee_name(callee);
    if callee == "panic" {
        push(
            out,
            range(node),
            "",
            "panic-removed",
            Category::ErrorHandling,
            removed(text, "the impossible case now falls through and the code continues with bad state"),
        );
    } else if CLEANUP.contains(&name) {
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

/// An assignment to a field or an element, or a compound one, removed: removing a plain
/// assignment to a local could leave it unused, which Go refuses to compile.
fn assignment(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    if !in_block(node) {
        return;
    }
    let compound = node.child_by_field_name("operator").is_some_and(|op| source.of(op) != "=");
    let to_field = node.child_by_field_name("left").is_some_and(|left| {
        let mut cursor = left.walk();
        let targets: Vec<Node> = left.named_children(&mut cursor).collect();
        !targets.is_empty()
            && targets.iter().all(|t| matches!(t.kind(), "selector_expression" | "index_expression"))
    });
    if compound || to_field {
        push(
            out,
            range(node),
            "",
            "assignment-removed",
            Category::StatementDeletion,
            removed(source.of(node), "the variable keeps its old value"),
        );
    }
}
