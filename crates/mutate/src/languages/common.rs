//! Operator logic shared by languages whose syntax agrees (binary operators, literals,
//! statement deletion) and the wording of defect sentences.

use super::Candidate;
use crate::Category;
use crate::source::Source;
use tree_sitter::Node;

/// Code quoted in a sentence: one line, whitespace collapsed, at most 60 characters.
pub(crate) fn short(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= 60 {
        collapsed
    } else {
        let head: String = collapsed.chars().take(57).collect();
        format!("{head}...")
    }
}

/// "`before` became `after`: effect."
pub(crate) fn changed(before: &str, after: &str, effect: &str) -> String {
    format!("`{}` became `{}`: {effect}.", short(before), short(after))
}

/// "`code` was removed: effect."
pub(crate) fn removed(code: &str, effect: &str) -> String {
    format!("`{}` was removed: {effect}.", short(code))
}

/// Adds a candidate replacing bytes `start..end`.
pub(crate) fn push(
    out: &mut Vec<Candidate>,
    (start, end): (usize, usize),
    replacement: impl Into<String>,
    operator: &'static str,
    category: Category,
    description: String,
) {
    out.push(Candidate { start, end, replacement: replacement.into(), operator, category, description });
}

/// `none-guard-removed`: the condition of a guard against the missing value (`x == null`,
/// `x is None`, `x.is_none()`, ...) replaced by `replacement`, the constant that makes the
/// guard skip the missing case; `missing` names that case in the sentence ("null", "None").
pub(crate) fn none_guard_removed(
    source: &Source,
    condition: Node,
    replacement: &str,
    missing: &str,
    out: &mut Vec<Candidate>,
) {
    let effect = format!("the {missing} case is no longer checked, so it reaches code that assumes a value");
    push(
        out,
        range(condition),
        replacement,
        "none-guard-removed",
        Category::NullHandling,
        changed(source.of(condition), replacement, &effect),
    );
}

/// The node's byte range.
pub(crate) fn range(node: Node) -> (usize, usize) {
    (node.start_byte(), node.end_byte())
}

/// The text of `expression` with `part` replaced by `with`: how the whole expression reads
/// after a mutation of one token, for the sentence.
pub(crate) fn rewritten(source: &Source, expression: Node, part: Node, with: &str) -> String {
    let text = source.of(expression);
    let from = part.start_byte().saturating_sub(expression.start_byte());
    let to = part.end_byte().saturating_sub(expression.start_byte());
    match (text.get(..from), text.get(to..)) {
        (Some(head), Some(tail)) => format!("{head}{with}{tail}"),
        _ => with.to_string(),
    }
}

/// `return <boolean expression>` becomes each of the language's two boolean constants.
pub(crate) fn boolean_constant_returns(
    value: Node,
    text: &str,
    constants: [&str; 2],
    out: &mut Vec<Candidate>,
) {
    for constant in constants {
        push(
            out,
            range(value),
            constant,
            "constant-return",
            Category::ReturnValue,
            changed(
                &format!("return {text}"),
                &format!("return {constant}"),
                "the function now gives the same answer whatever its input",
            ),
        );
    }
}

/// `!x` (or `not x`) becomes `x`: `negated` is replaced by its `operand`, without the
/// parentheses that only the negation needed where it stands alone (`if (!(a > b))` ->
/// `if (a > b)`, not `if ((a > b))`, which formatters undo and linters flag).
pub(crate) fn negation_removed(source: &Source, negated: Node, operand: Node, out: &mut Vec<Candidate>) {
    let after = without_needless_parentheses(source, negated, operand);
    push(
        out,
        range(negated),
        after,
        "negation-removed",
        Category::LogicInversion,
        changed(source.of(negated), after, "the condition now means the opposite of what was checked"),
    );
}

/// `return x` becomes `return <none>` (`null`, `None`, `nil`): the returned `value`, whose
/// text is `text`, is replaced.
pub(crate) fn return_none(value: Node, text: &str, none: &str, out: &mut Vec<Candidate>) {
    push(
        out,
        range(value),
        none,
        "return-none",
        Category::NullHandling,
        changed(
            &format!("return {text}"),
            &format!("return {none}"),
            &format!("callers now get {none} where they expect a value"),
        ),
    );
}

/// A call statement removed: a cleanup call (with what its removal leaks, in the language's
/// words) or any other call.
pub(crate) fn call_removed(statement: Node, text: &str, leak: Option<&str>, out: &mut Vec<Candidate>) {
    match leak {
        Some(effect) => push(
            out,
            range(statement),
            "",
            "cleanup-call-removed",
            Category::ResourceCleanup,
            removed(text, effect),
        ),
        None => push(
            out,
            range(statement),
            "",
            "call-statement-removed",
            Category::StatementDeletion,
            removed(text, "the call's effect never happens"),
        ),
    }
}

/// `return <arithmetic>` becomes `return 0`.
pub(crate) fn zero_return(value: Node, text: &str, out: &mut Vec<Candidate>) {
    push(
        out,
        range(value),
        "0",
        "constant-return",
        Category::ReturnValue,
        changed(
            &format!("return {text}"),
            "return 0",
            "the function now returns 0 instead of the computed value",
        ),
    );
}

/// True when `node` sits in the condition of a loop (so boundary changes move the last step).
pub(crate) fn in_loop_condition(node: Node) -> bool {
    let mut current = node;
    for _ in 0..6 {
        let Some(parent) = current.parent() else { return false };
        if matches!(
            parent.kind(),
            "while_expression" | "while_statement" | "for_statement" | "do_statement" | "for_expression"
        ) {
            return parent
                .child_by_field_name("condition")
                .is_some_and(|condition| condition.id() == current.id())
                || parent.kind() == "for_statement";
        }
        current = parent;
    }
    false
}

/// Literal `0`, with or without a Rust type suffix.
fn is_zero(source: &Source, node: Node) -> bool {
    let text = source.of(node);
    text == "0"
        || (text.starts_with('0') && text[1..].chars().all(|c| c.is_ascii_alphabetic()) && text.len() > 1)
}

/// Comparison boundary (`<` vs `<=`, `>` vs `>=`). With `unsigned_guard`, shapes that are
/// always true or false for unsigned values (`x >= 0`, `x < 0`, `0 <= x`, `0 > x`) are not
/// produced: the compiler rejects or warns on them and no reviewer should have to.
/// Whether `comparison`, whose operands are `sides`, is the condition of a clamp: an `if`
/// without `else` whose body only assigns one operand to the other (`if x > c { x = c; }`,
/// `if (x > c) x = c;`, `if x > c: x = c`). Moving its boundary changes nothing: at equality
/// the assignment writes the value the variable already holds.
pub(crate) fn is_clamp(comparison: Node, sides: [Option<Node>; 2], source: &Source) -> bool {
    let mut condition = comparison;
    while let Some(parent) = condition.parent().filter(|parent| parent.kind() == "parenthesized_expression") {
        condition = parent;
    }
    let Some(statement) =
        condition.parent().filter(|parent| matches!(parent.kind(), "if_statement" | "if_expression"))
    else {
        return false;
    };
    if statement.child_by_field_name("condition") != Some(condition)
        || statement.child_by_field_name("alternative").is_some()
    {
        return false;
    }
    let Some(assignment) = statement.child_by_field_name("consequence").and_then(sole_assignment) else {
        return false;
    };
    let (Some(target), Some(value)) =
        (assignment.child_by_field_name("left"), assignment.child_by_field_name("right"))
    else {
        return false;
    };
    let [Some(a), Some(b)] = sides.map(|side| side.map(|node| source.of(node).trim())) else { return false };
    let (target, value) = (source.of(target).trim(), source.of(value).trim());
    (a, b) == (target, value) || (a, b) == (value, target)
}

/// The one plain assignment a block or statement consists of, comments aside.
fn sole_assignment(node: Node) -> Option<Node> {
    match node.kind() {
        "assignment_expression" | "assignment" => Some(node),
        "expression_statement" if node.named_child_count() == 1 => {
            node.named_child(0).and_then(sole_assignment)
        }
        "block" | "statement_block" => {
            let mut cursor = node.walk();
            let children: Vec<Node> =
                node.named_children(&mut cursor).filter(|child| !child.kind().contains("comment")).collect();
            match children.as_slice() {
                [only] => sole_assignment(*only),
                _ => None,
            }
        }
        _ => None,
    }
}

pub(crate) fn comparison_boundary(
    source: &Source,
    expression: Node,
    operator: Node,
    unsigned_guard: bool,
    out: &mut Vec<Candidate>,
) {
    let op = source.of(operator);
    let replacement = match op {
        "<" => "<=",
        "<=" => "<",
        ">" => ">=",
        ">=" => ">",
        _ => return,
    };
    if unsigned_guard {
        let left_zero = expression.child_by_field_name("left").is_some_and(|left| is_zero(source, left));
        let right_zero = expression.child_by_field_name("right").is_some_and(|right| is_zero(source, right));
        let always = (right_zero && matches!(replacement, ">=" | "<"))
            || (left_zero && matches!(replacement, "<=" | ">"));
        if always {
            return;
        }
    }
    let looped = in_loop_condition(expression);
    let effect = match (replacement, looped) {
        ("<=" | ">=", true) => "the loop now runs one step further, past the last valid value",
        ("<" | ">", true) => "the loop now stops one step early and misses the last value",
        ("<=" | ">=", false) => "the case where both sides are equal now passes the check when it should not",
        _ => "the case where both sides are equal is now rejected when it should pass",
    };
    let after = rewritten(source, expression, operator, replacement);
    push(
        out,
        range(operator),
        replacement,
        "comparison-boundary",
        Category::OffByOne,
        changed(source.of(expression), &after, effect),
    );
}

/// `==` and `!=` (and JavaScript's `===` and `!==`) swapped.
pub(crate) fn equality_flip(source: &Source, expression: Node, operator: Node, out: &mut Vec<Candidate>) {
    let replacement = match source.of(operator) {
        "==" => "!=",
        "!=" => "==",
        "===" => "!==",
        "!==" => "===",
        _ => return,
    };
    let after = rewritten(source, expression, operator, replacement);
    let effect = "the check now holds exactly when it should not, so the wrong branch runs";
    push(
        out,
        range(operator),
        replacement,
        "equality-flip",
        Category::LogicInversion,
        changed(source.of(expression), &after, effect),
    );
}

/// `&&` and `||` (or Python's `and` and `or`) swapped. Where the swap would mix `&&` and
/// `||` without parentheses (`a && b && c` -> `a && b || c`), the parentheses a person (and
/// prettier, and eslint's `no-mixed-operators`) would write are added, so the plant reads as
/// written code and means what the swap means: `(a && b) || c`.
pub(crate) fn and_or_swap(source: &Source, expression: Node, operator: Node, out: &mut Vec<Candidate>) {
    let (replacement, effect) = match source.of(operator) {
        "&&" => ("||", "the condition now holds when either side is true instead of both"),
        "||" => ("&&", "the condition now needs both sides to be true instead of either"),
        "and" => ("or", "the condition now holds when either side is true instead of both"),
        "or" => ("and", "the condition now needs both sides to be true instead of either"),
        _ => return,
    };
    // Parentheses the swap makes needless (`x && (a || b)` -> `x && (a && b)`, `a || (b && c)`
    // -> `a && (b && c)`) are dropped by prettier: such a plant shows itself.
    let needless = |inner: Node, outer: Option<Node>| {
        inner.kind() == "parenthesized_expression"
            && outer.and_then(|outer| binary_operator(source, outer)) == Some(replacement)
    };
    let operands = [expression.child_by_field_name("left"), expression.child_by_field_name("right")];
    let in_parentheses = expression.parent().is_some_and(|parent| needless(parent, parent.parent()));
    let wraps_same = operands.into_iter().flatten().any(|operand| {
        operand.kind() == "parenthesized_expression"
            && operand.named_child(0).is_some_and(|inner| binary_operator(source, inner) == Some(replacement))
    });
    if in_parentheses || wraps_same {
        return;
    }
    let after = rewritten(source, expression, operator, replacement);
    let description = changed(source.of(expression), &after, effect);
    let logical = |op: &str| op == "&&" || op == "||";
    let (at, text) = swap_in_parentheses(source, expression, operator, replacement, logical);
    push(out, at, text, "and-or-swap", Category::LogicInversion, description);
}

/// The operator of a binary expression node (`None` for any other node).
fn binary_operator<'a>(source: &Source<'a>, node: Node) -> Option<&'a str> {
    (node.kind() == "binary_expression")
        .then(|| node.child_by_field_name("operator"))
        .flatten()
        .map(|op| source.of(op))
}

/// The range and text that swap `operator` of `expression` for `replacement`: the operator
/// alone, or, when the swap mixes operators of one `group` that a formatter parenthesises,
/// the whole expression with the parentheses written in (around a child whose operator now
/// differs, and around the expression when its parent's differs).
fn swap_in_parentheses(
    source: &Source,
    expression: Node,
    operator: Node,
    replacement: &str,
    group: fn(&str) -> bool,
) -> ((usize, usize), String) {
    let mixes = |node: Node| binary_operator(source, node).is_some_and(|op| group(op) && op != replacement);
    let children = [expression.child_by_field_name("left"), expression.child_by_field_name("right")];
    let wrap_children: Vec<Node> = children.into_iter().flatten().filter(|child| mixes(*child)).collect();
    let wrap_self = expression.parent().is_some_and(mixes);
    if wrap_children.is_empty() && !wrap_self {
        return (range(operator), replacement.to_owned());
    }
    let mut text = String::new();
    let mut copied = expression.start_byte();
    let mut parts: Vec<(usize, usize, String)> = wrap_children
        .iter()
        .map(|child| (child.start_byte(), child.end_byte(), format!("({})", source.of(*child))))
        .collect();
    parts.push((operator.start_byte(), operator.end_byte(), replacement.to_owned()));
    parts.sort_by_key(|part| part.0);
    for (start, end, with) in parts {
        text.push_str(source.text.get(copied..start).unwrap_or(""));
        text.push_str(&with);
        copied = end;
    }
    text.push_str(source.text.get(copied..expression.end_byte()).unwrap_or(""));
    if wrap_self {
        text = format!("({text})");
    }
    (range(expression), text)
}

/// `+`/`-` and `*`/`/` swapped, unless an operand is a string (concatenation, not arithmetic).
pub(crate) fn arithmetic_swap(
    source: &Source,
    expression: Node,
    operator: Node,
    is_string: fn(Node) -> bool,
    out: &mut Vec<Candidate>,
) {
    let (replacement, effect) = match source.of(operator) {
        "+" => ("-", "the value is now subtracted instead of added"),
        "-" => ("+", "the value is now added instead of subtracted"),
        "*" => ("/", "the value is now divided instead of multiplied"),
        "/" => ("*", "the value is now multiplied instead of divided"),
        _ => return,
    };
    let operands = [expression.child_by_field_name("left"), expression.child_by_field_name("right")];
    if operands.iter().flatten().any(|operand| is_string(*operand)) {
        return;
    }
    // A chain of one operator laid over several lines (`a\n + b\n + c`) is laid out again by
    // rustfmt once one operator differs: the plant would show in the lines around it.
    let same_level = |op: &str| match source.of(operator) {
        "+" | "-" => op == "+" || op == "-",
        _ => op == "*" || op == "/" || op == "%",
    };
    let spans_lines = expression.start_position().row != expression.end_position().row;
    let chained = expression.parent().into_iter().chain(operands.into_iter().flatten()).any(|node| {
        binary_operator(source, node).is_some_and(same_level)
            && node.start_position().row != node.end_position().row
    });
    if spans_lines && chained {
        return;
    }
    let after = rewritten(source, expression, operator, replacement);
    let description = changed(source.of(expression), &after, effect);
    let multiplicative = |op: &str| op == "*" || op == "/" || op == "%";
    let (at, text) = if multiplicative(replacement) {
        swap_in_parentheses(source, expression, operator, replacement, multiplicative)
    } else {
        (range(operator), replacement.to_owned())
    };
    push(out, at, text, "arithmetic-swap", Category::Arithmetic, description);
}

/// `n + 1` -> `n` and `n - 1` -> `n` (also `1 + n` -> `n`).
pub(crate) fn plus_minus_one(source: &Source, expression: Node, operator: Node, out: &mut Vec<Candidate>) {
    let (Some(left), Some(right)) =
        (expression.child_by_field_name("left"), expression.child_by_field_name("right"))
    else {
        return;
    };
    let op = source.of(operator);
    let (kept, name, effect) = if source.of(right) == "1" && op == "+" {
        (
            left,
            "plus-one-dropped",
            "the value is one smaller than intended, so the last element or step is missed",
        )
    } else if source.of(right) == "1" && op == "-" {
        (left, "minus-one-dropped", "the value is one larger than intended and can reach one past the end")
    } else if source.of(left) == "1" && op == "+" {
        (
            right,
            "plus-one-dropped",
            "the value is one smaller than intended, so the last element or step is missed",
        )
    } else {
        return;
    };
    let after = without_needless_parentheses(source, expression, kept);
    push(
        out,
        range(expression),
        after,
        name,
        Category::OffByOne,
        changed(source.of(expression), after, effect),
    );
}

/// Integer literal `0` <-> `1` (a Rust suffix such as `0usize` is kept).
pub(crate) fn zero_one_swap(source: &Source, literal: Node, out: &mut Vec<Candidate>) {
    let text = source.of(literal);
    let (Some(digit), Some(suffix)) = (text.get(..1), text.get(1..)) else { return };
    if !(suffix.is_empty()
        || suffix.chars().all(|c| c.is_ascii_alphanumeric()) && suffix.starts_with(['u', 'i']))
    {
        return;
    }
    let (replacement, effect) = match digit {
        "0" => ("1", "the starting value or limit is now one instead of zero"),
        "1" => ("0", "the starting value or limit is now zero instead of one"),
        _ => return,
    };
    let after = format!("{replacement}{suffix}");
    let before_expr = literal.parent().map_or(text, |parent| source.of(parent));
    let description = if before_expr.len() <= 60 && before_expr != text {
        changed(before_expr, &rewritten(source, literal.parent().unwrap_or(literal), literal, &after), effect)
    } else {
        changed(text, &after, effect)
    };
    push(out, range(literal), after, "zero-one-swap", Category::Boundary, description);
}

/// The boolean literal flipped (`true`/`false`, `True`/`False`).
pub(crate) fn boolean_flip(source: &Source, literal: Node, out: &mut Vec<Candidate>) {
    let replacement = match source.of(literal) {
        "true" => "false",
        "false" => "true",
        "True" => "False",
        "False" => "True",
        _ => return,
    };
    let context = literal.parent().filter(|parent| parent.end_byte() - parent.start_byte() <= 60);
    let description = match context {
        Some(parent) if parent.kind() != "expression_statement" => changed(
            source.of(parent),
            &rewritten(source, parent, literal, replacement),
            "the flag now says the opposite, so the code behaves as in the other case",
        ),
        _ => changed(
            source.of(literal),
            replacement,
            "the flag now says the opposite, so the code behaves as in the other case",
        ),
    };
    push(out, range(literal), replacement, "boolean-flip", Category::LogicInversion, description);
}

/// A condition node negated with the language's `not` prefix.
/// Parentheses only where the condition needs them: `!ready`, `!items.is_empty()`,
/// `not ready`, but `!(a && b)`; formatters drop parentheses around a name or a call.
pub(crate) fn negate_condition(source: &Source, condition: Node, not: &str, out: &mut Vec<Candidate>) {
    let text = source.of(condition);
    // `if (!x)` negated reads `if (!!x)` or `if (!(!x))`: negation-removed plants that bug.
    let negated = matches!(condition.kind(), "unary_expression" | "not_operator")
        && (text.starts_with('!') || text.starts_with("not"));
    if negated {
        return;
    }
    let after = if binds_tightly(condition) { format!("{not}{text}") } else { format!("{not}({text})") };
    push(
        out,
        range(condition),
        after.clone(),
        "negate-condition",
        Category::LogicInversion,
        changed(text, &after, "the branch now runs exactly when it should not"),
    );
}

/// The text of `kept`, the part of `replaced` left in its place, without its parentheses when
/// `replaced` stands where any expression may (a condition, a returned value, an argument,
/// a variable's value): `return !(a || b)` -> `return a || b`, `f((n >> 1) + 1)` ->
/// `f(n >> 1)`. Parentheses no one needs are what formatters remove and linters flag.
fn without_needless_parentheses<'a>(source: &Source<'a>, replaced: Node, kept: Node) -> &'a str {
    let inner = (kept.kind() == "parenthesized_expression" && kept.named_child_count() == 1)
        .then(|| kept.named_child(0))
        .flatten()
        // A comma inside would become an argument list's or a statement's own.
        .filter(|inner| {
            !matches!(inner.kind(), "sequence_expression" | "generator_expression" | "expression_list")
        });
    let stands_alone = replaced.parent().is_some_and(|parent| {
        matches!(
            parent.kind(),
            "parenthesized_expression"
                | "return_statement"
                | "return_expression"
                | "expression_statement"
                | "expression_list"
                | "arguments"
                | "argument_list"
                | "variable_declarator"
                | "let_declaration"
                | "block"
        ) || parent.child_by_field_name("condition").is_some_and(|condition| condition.id() == replaced.id())
    });
    match inner {
        Some(inner) if stands_alone => source.of(inner),
        _ => source.of(kept),
    }
}

/// Whether an expression can follow a prefix `!` or `not` without parentheses: a name, a
/// literal, a call, a field or an element (in each grammar's words), or one already in
/// parentheses.
fn binds_tightly(node: Node) -> bool {
    matches!(
        node.kind(),
        "identifier"
            | "field_identifier"
            | "self"
            | "this"
            | "true"
            | "false"
            | "True"
            | "False"
            | "call_expression"
            | "macro_invocation"
            | "call"
            | "method_invocation"
            | "member_expression"
            | "field_expression"
            | "field_access"
            | "selector_expression"
            | "attribute"
            | "subscript_expression"
            | "subscript"
            | "index_expression"
            | "array_access"
            | "parenthesized_expression"
    ) && !node.has_error()
}

/// A compound assignment's operator swapped (`+=`/`-=`, `*=`/`/=`); never `|=` -> `^=`.
pub(crate) fn compound_assignment_swap(
    source: &Source,
    statement: Node,
    operator: Node,
    out: &mut Vec<Candidate>,
) {
    let (replacement, effect) = match source.of(operator) {
        "+=" => ("-=", "the running value now shrinks where it should grow"),
        "-=" => ("+=", "the running value now grows where it should shrink"),
        "*=" => ("/=", "the value is now divided where it should be multiplied"),
        "/=" => ("*=", "the value is now multiplied where it should be divided"),
        _ => return,
    };
    let after = rewritten(source, statement, operator, replacement);
    push(
        out,
        range(operator),
        replacement,
        "compound-assignment-swap",
        Category::Arithmetic,
        changed(source.of(statement), &after, effect),
    );
}

/// Method names whose call releases a resource.
pub(crate) const CLEANUP_METHODS: &[&str] = &[
    "close",
    "release",
    "unlock",
    "shutdown",
    "destroy",
    "end",
    "dispose",
    "cleanup",
    "flush",
    "disconnect",
    "terminate",
    "free",
    "closeSync",
    "removeListener",
    "removeEventListener",
    "removeAllListeners",
    "unref",
    "rmdir",
    "unlink",
    "unlinkSync",
    "rmSync",
    "clearTimeout",
    "clearInterval",
    "clearImmediate",
    "drop",
    "kill",
    "join",
    "cancel",
    "abort",
];

/// The last name of a callee: `a.b.close` -> `close`, `drop` -> `drop`.
pub(crate) fn callee_name(text: &str) -> &str {
    let text = text.trim_end_matches("()");
    text.rsplit(['.', ':']).next().unwrap_or(text)
}

/// The binary operators of a typed language whose `+` may join strings (Java, Go): the
/// comparisons (never on a clamp), equality, `&&`/`||`, and the arithmetic swaps; a `+` is
/// mutated only when it adds a number literal (`is_number`) and holds no string literal
/// (`is_string`), since the parser does not know the operands' types.
pub(crate) fn typed_binary(
    node: Node,
    source: &Source,
    is_string: fn(Node) -> bool,
    is_number: fn(Node) -> bool,
    out: &mut Vec<Candidate>,
) {
    fn has_string(node: Node, is_string: fn(Node) -> bool) -> bool {
        let mut cursor = node.walk();
        is_string(node) || node.named_children(&mut cursor).any(|child| has_string(child, is_string))
    }
    let Some(operator) = node.child_by_field_name("operator") else { return };
    let sides = [node.child_by_field_name("left"), node.child_by_field_name("right")];
    match source.of(operator) {
        "<" | "<=" | ">" | ">=" if !is_clamp(node, sides, source) => {
            comparison_boundary(source, node, operator, false, out)
        }
        "==" | "!=" => equality_flip(source, node, operator, out),
        "&&" | "||" => and_or_swap(source, node, operator, out),
        "+" if has_string(node, is_string) || !sides.into_iter().flatten().any(is_number) => {}
        "+" | "-" | "*" | "/" => {
            arithmetic_swap(source, node, operator, is_string, out);
            plus_minus_one(source, node, operator, out);
        }
        _ => {}
    }
}
