//! Java (`.java`): grammar, skip rules (JUnit's annotated methods, test source trees and
//! classes by Maven's and Gradle's naming) and operators. Java is typed: an operator that
//! could only type-check by chance is left out (`return null` only where the method returns
//! a reference type, no arithmetic swap on a `+` that may join strings).

use super::common::{self, changed, push, range, removed};
use super::{Candidate, Grammar, Operator};
use crate::source::Source;
use crate::{Category, Language};
use tree_sitter::Node;

pub(super) static GRAMMAR: Grammar = Grammar {
    grammar: || tree_sitter_java::LANGUAGE.into(),
    comments: &["line_comment", "block_comment"],
    opaque,
    skipped_item,
    mutate,
    operators: || OPERATORS,
    // The grammar's `program` is a list of statements, so statements and blocks parse alone.
    units: UNITS,
    indented_units: false,
    verify_rejections: true,
    unit_baselines: false,
    wrapped_units: WRAPPED_UNITS,
    statement_lists: STATEMENT_LISTS,
    element_lists: &[("array_initializer", "int[] a = {", "};")],
    starts_closed,
};

const UNITS: &[&str] = &[
    "expression_statement",
    "return_statement",
    "throw_statement",
    "local_variable_declaration",
    "if_statement",
    "for_statement",
    "enhanced_for_statement",
    "while_statement",
    "do_statement",
    "try_statement",
    "block",
];

const WRAPPED_UNITS: &[(&str, &str, &str)] = &[
    ("method_declaration", "class C {", "}"),
    ("constructor_declaration", "class C {", "}"),
    ("field_declaration", "class C {", "}"),
    ("switch_block_statement_group", "switch (0) {", "}"),
    ("parenthesized_expression", "", ";"),
    ("argument_list", "f", ";"),
];

const STATEMENT_LISTS: &[(&str, &str, &str)] =
    &[("block", "{", "}"), ("constructor_body", "{", "}"), ("class_body", "class C {", "}")];

const fn op(
    name: &'static str,
    category: Category,
    summary: &'static str,
    before: &'static str,
    after: &'static str,
) -> Operator {
    Operator { name, category, language: Language::Java, summary, before, after }
}

static OPERATORS: &[Operator] = &[
    op(
        "comparison-boundary",
        Category::OffByOne,
        "`<` <-> `<=`, `>` <-> `>=`",
        "for (int i = 0; i < n; i++)",
        "for (int i = 0; i <= n; i++)",
    ),
    op(
        "plus-one-dropped",
        Category::OffByOne,
        "`n + 1` -> `n`",
        "int next = index + 1;",
        "int next = index;",
    ),
    op(
        "minus-one-dropped",
        Category::OffByOne,
        "`n - 1` -> `n`",
        "int last = items.size() - 1;",
        "int last = items.size();",
    ),
    op("equality-flip", Category::LogicInversion, "`==` <-> `!=`", "if (a == b)", "if (a != b)"),
    op("and-or-swap", Category::LogicInversion, "`&&` <-> `||`", "if (a && b)", "if (a || b)"),
    op(
        "negate-condition",
        Category::LogicInversion,
        "`if (c)` -> `if (!c)` (`!(c)` when `c` needs it)",
        "if (ready)",
        "if (!ready)",
    ),
    op("negation-removed", Category::LogicInversion, "`!x` -> `x`", "if (!done)", "if (done)"),
    op("boolean-flip", Category::LogicInversion, "`true` <-> `false`", "strict = true;", "strict = false;"),
    op(
        "ternary-swap",
        Category::LogicInversion,
        "`c ? a : b` -> `c ? b : a`",
        "int x = ok ? a : b;",
        "int x = ok ? b : a;",
    ),
    op(
        "none-guard-removed",
        Category::NullHandling,
        "`if (x == null)` -> `if (false)`",
        "if (node == null) return;",
        "if (false) return;",
    ),
    op(
        "return-none",
        Category::NullHandling,
        "`return x` -> `return null` (methods returning an object)",
        "return user;",
        "return null;",
    ),
    op(
        "arithmetic-swap",
        Category::Arithmetic,
        "`-` -> `+`, `*` <-> `/` (`+` only between numbers: it may join strings)",
        "int area = w * h;",
        "int area = w / h;",
    ),
    op(
        "compound-assignment-swap",
        Category::Arithmetic,
        "`+=` <-> `-=`, `*=` <-> `/=`",
        "total -= x;",
        "total += x;",
    ),
    op(
        "zero-one-swap",
        Category::Boundary,
        "integer literal `0` <-> `1`",
        "int count = 0;",
        "int count = 1;",
    ),
    op(
        "error-swallowed",
        Category::ErrorHandling,
        "`catch (E e) { .. }` -> `catch (E e) {}`",
        "catch (IOException e) { log(e); throw e; }",
        "catch (IOException e) {}",
    ),
    op(
        "throw-removed",
        Category::ErrorHandling,
        "`throw x;` removed",
        "throw new IllegalStateException();",
        "",
    ),
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
        "`x.close()`, `lock.unlock()`, `pool.shutdown()`, ... removed",
        "stream.close();",
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

fn opaque(kind: &str) -> bool {
    matches!(
        kind,
        "string_literal"
            | "text_block"
            | "character_literal"
            | "import_declaration"
            | "package_declaration"
            | "module_declaration"
            | "marker_annotation"
            | "annotation"
            | "annotation_type_declaration"
            | "interface_declaration"
    )
}

/// JUnit (4 and 5) and TestNG annotations that make a method test code.
const TEST_ANNOTATIONS: &[&str] = &[
    "Test",
    "ParameterizedTest",
    "RepeatedTest",
    "TestFactory",
    "TestTemplate",
    "BeforeEach",
    "AfterEach",
    "BeforeAll",
    "AfterAll",
    "Before",
    "After",
    "BeforeClass",
    "AfterClass",
    "BeforeMethod",
    "AfterMethod",
];

/// A method or class annotated as test code (`@Test`, `@org.junit.jupiter.api.Test`,
/// `@BeforeEach`, ...): skipped from its first annotation.
fn skipped_item(node: Node, kind: &str, source: &Source) -> Option<usize> {
    if !matches!(kind, "method_declaration" | "class_declaration" | "constructor_declaration") {
        return None;
    }
    let mut cursor = node.walk();
    let modifiers = node.children(&mut cursor).find(|child| child.kind() == "modifiers")?;
    let mut inner = modifiers.walk();
    let is_test = modifiers.named_children(&mut inner).any(|annotation| {
        matches!(annotation.kind(), "marker_annotation" | "annotation")
            && annotation.child_by_field_name("name").is_some_and(|name| {
                let name = source.of(name);
                TEST_ANNOTATIONS.contains(&name.rsplit('.').next().unwrap_or(name))
            })
    });
    is_test.then_some(node.start_byte())
}

/// Declarations and statements that start with a keyword or a type no statement continues.
fn starts_closed(node: Node, _: &Source) -> bool {
    matches!(
        node.kind(),
        "local_variable_declaration"
            | "if_statement"
            | "for_statement"
            | "enhanced_for_statement"
            | "while_statement"
            | "do_statement"
            | "try_statement"
            | "try_with_resources_statement"
            | "switch_expression"
            | "return_statement"
            | "throw_statement"
            | "break_statement"
            | "continue_statement"
            | "method_declaration"
            | "field_declaration"
            | "constructor_declaration"
            | "class_declaration"
    )
}

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
        // `while (true)` -> `while (false)` makes the body unreachable: a compile error.
        "true" | "false" if !is_loop_condition(node) => common::boolean_flip(source, node, out),
        "decimal_integer_literal" if !in_annotation(node) => common::zero_one_swap(source, node, out),
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
        "assignment_expression" => {
            if let Some(operator) = node.child_by_field_name("operator")
                && source.of(operator) != "+="
            {
                common::compound_assignment_swap(source, node, operator, out);
            }
        }
        "catch_clause" => {
            if let Some(body) = node.child_by_field_name("body")
                && body.named_child_count() > 0
                && can_fall_through(node)
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
        // A throw is removed only where the block goes on or ends: a method that must return
        // a value would no longer compile without it when it was the last statement.
        "throw_statement" if in_block(node) && node.next_named_sibling().is_some() => {
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

/// A boolean literal that is a loop's whole condition.
fn is_loop_condition(node: Node) -> bool {
    let holder = match node.parent() {
        Some(parent) if parent.kind() == "parenthesized_expression" => parent,
        _ => node,
    };
    holder.parent().is_some_and(|loop_| {
        matches!(loop_.kind(), "while_statement" | "do_statement" | "for_statement")
            && loop_.child_by_field_name("condition").is_some_and(|condition| condition.id() == holder.id())
    })
}

/// Whether an emptied catch may let control reach the end of its `try`: when statements
/// follow the `try`, or its method returns nothing. Otherwise (a catch that ends a method
/// returning a value by throwing or returning) the emptied catch is a "missing return"
/// compile error, not a bug.
fn can_fall_through(catch: Node) -> bool {
    let Some(statement) = catch.parent() else { return false };
    if statement.next_named_sibling().is_some() {
        return true;
    }
    let mut current = statement.parent();
    while let Some(parent) = current {
        match parent.kind() {
            "method_declaration" => {
                return parent.child_by_field_name("type").is_some_and(|t| t.kind() == "void_type");
            }
            "constructor_declaration" | "lambda_expression" | "static_initializer" => return true,
            _ => current = parent.parent(),
        }
    }
    false
}

fn in_annotation(node: Node) -> bool {
    let mut current = node.parent();
    while let Some(parent) = current {
        if matches!(parent.kind(), "annotation" | "element_value_pair" | "case_label" | "switch_label") {
            return true;
        }
        if parent.kind().ends_with("_statement") || parent.kind().ends_with("_declaration") {
            return false;
        }
        current = parent.parent();
    }
    false
}

fn is_string(node: Node) -> bool {
    matches!(node.kind(), "string_literal" | "text_block" | "character_literal")
}

fn is_number(node: Node) -> bool {
    matches!(
        node.kind(),
        "decimal_integer_literal" | "decimal_floating_point_literal" | "hex_integer_literal"
    )
}

fn binary(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    common::typed_binary(node, source, is_string, is_number, out);
}

/// `if (x == null)` and `if (x != null)`: the guard is made inert.
fn none_guard(condition: Node, source: &Source, out: &mut Vec<Candidate>) -> bool {
    if condition.kind() != "binary_expression" {
        return false;
    }
    let Some(operator) = condition.child_by_field_name("operator") else { return false };
    let null = |side: &str| condition.child_by_field_name(side).is_some_and(|n| n.kind() == "null_literal");
    if !(null("left") || null("right")) {
        return false;
    }
    let replacement = match source.of(operator) {
        "==" => "false",
        "!=" => "true",
        _ => return false,
    };
    common::none_guard_removed(source, condition, replacement, "null", out);
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
    let middle = source.text.get(yes.end_byte()..no.start_byte()).unwrap_or(" : ");
    let replacement = format!("{}{middle}{}", source.of(no), source.of(yes));
    let condition = node.child_by_field_name("condition").map_or("", |c| source.of(c));
    push(
        out,
        (yes.start_byte(), no.end_byte()),
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

fn in_block(node: Node) -> bool {
    node.parent().is_some_and(|parent| {
        matches!(parent.kind(), "block" | "constructor_body" | "switch_block_statement_group")
    })
}

/// The declared return type of the method a `return` belongs to; `None` inside a lambda.
fn return_type(node: Node) -> Option<Node> {
    let mut current = node.parent();
    while let Some(parent) = current {
        match parent.kind() {
            "method_declaration" => return parent.child_by_field_name("type"),
            "lambda_expression" | "constructor_declaration" | "class_body" => return None,
            _ => current = parent.parent(),
        }
    }
    None
}

fn return_statement(node: Node, source: &Source, out: &mut Vec<Candidate>) {
    let Some(value) = node.named_child(0) else { return };
    let Some(declared) = return_type(node) else { return };
    let text = source.of(value);
    let boolean = match value.kind() {
        "binary_expression" => value
            .child_by_field_name("operator")
            .is_some_and(|op| matches!(source.of(op), "<" | "<=" | ">" | ">=" | "==" | "!=" | "&&" | "||")),
        "unary_expression" => text.starts_with('!'),
        "instanceof_expression" => true,
        _ => false,
    };
    let primitive =
        matches!(declared.kind(), "integral_type" | "floating_point_type" | "boolean_type" | "void_type");
    if boolean && declared.kind() == "boolean_type" {
        common::boolean_constant_returns(value, text, ["true", "false"], out);
    } else if matches!(declared.kind(), "integral_type" | "floating_point_type")
        && value.kind() == "binary_expression"
        && value
            .child_by_field_name("operator")
            .is_some_and(|op| matches!(source.of(op), "+" | "-" | "*" | "/" | "%"))
    {
        common::zero_return(value, text, out);
    } else if !primitive
        && !matches!(value.kind(), "null_literal" | "string_literal" | "text_block" | "this")
        && !source.of(declared).starts_with("Optional")
    {
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
        "method_invocation" => {
            let Some(name) = expression.child_by_field_name("name") else { return };
            // `super(...)`/`this(...)` are explicit_constructor_invocation, never here.
            if common::CLEANUP_METHODS.contains(&source.of(name)) {
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
        // Removing an assignment can leave a final field or a local unassigned (a compile
        // error, not a bug): only assignments to fields through `this.` of non-constructors
        // and compound assignments are removed.
        "assignment_expression" => {
            let compound = expression.child_by_field_name("operator").is_some_and(|op| source.of(op) != "=");
            let in_constructor = {
                let mut current = node.parent();
                let mut found = false;
                while let Some(parent) = current {
                    if parent.kind() == "constructor_body" {
                        found = true;
                        break;
                    }
                    if parent.kind() == "method_declaration" {
                        break;
                    }
                    current = parent.parent();
                }
                found
            };
            let field = expression
                .child_by_field_name("left")
                .is_some_and(|left| left.kind() == "field_access" || left.kind() == "array_access");
            if compound || (field && !in_constructor) {
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
