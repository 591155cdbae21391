//! A plant leaves no trace of its layout: it must read as code a person wrote, or a formatter
//! run as a reviewer "catches" it by the blank indentation, trailing space or doubled blank
//! line it left (ruff's `W293`, `rustfmt --check`, `gofmt -l`), or by the line it made too
//! long or short enough to join.
//!
//! [`tidy_deletion`] widens a candidate that deletes text:
//! - alone on its line(s): the whole lines go, line break included, and a blank line that
//!   would then double another, or open or close a block, goes with them. A deletion that
//!   would leave a block empty is no plant (`if x {` right above `}`): dropped.
//! - at the end of a line after other code: the blanks before it go too (no trailing space);
//! - elsewhere: the blanks after it go too (no doubled space, the indentation kept).
//!
//! [`keeps_width`] drops a candidate that would make the language's usual formatter break
//! its line (too long) or join it with the lines it was broken from (short enough again).

use crate::Language;
use crate::languages::Candidate;
use crate::source::Source;

/// The line width a language's usual formatter keeps to (rustfmt's `max_width`, prettier's
/// `printWidth`, google-java-format's); gofmt and Python's linters rewrap nothing.
fn formatter_width(language: Language) -> Option<usize> {
    match language {
        Language::Rust | Language::Java => Some(100),
        Language::JavaScript | Language::TypeScript | Language::Tsx => Some(80),
        _ => None,
    }
}

/// False when `candidate` lengthens a line that fits the formatter's width past it: the
/// formatter would break the planted line where a person's code has it whole.
pub(crate) fn keeps_width(source: &Source, language: Language, candidate: &Candidate) -> bool {
    let Some(width) = formatter_width(language) else { return true };
    let original = source.text.get(candidate.start..candidate.end).unwrap_or("");
    if original.contains('\n') || candidate.replacement.contains('\n') {
        return true;
    }
    let change = candidate.replacement.chars().count() as isize - original.chars().count() as isize;
    let row = source.row(candidate.start);
    let line = |row: usize| source.text.get(source.line_start(row)..source.line_end(row)).unwrap_or("");
    let fits = |length: usize, change: isize| length.saturating_add_signed(change) <= width || length > width;
    if change > 0 {
        return fits(line(row).chars().count(), change);
    }
    // Shorter: an expression the formatter broke over lines because it was too long must
    // stay too long, or the formatter would join it again (`x =\n  a ?? b` -> `x = a;`).
    let continues = |row: usize| {
        let this = line(row).trim();
        let above = row.checked_sub(1).map_or("", |above| line(above).trim_end());
        [".", "?", ":", "&&", "||", "??", "+", "-"].iter().any(|lead| this.starts_with(lead))
            || ["=", "=>", "?", ":", "&&", "||", "??", "(", "+"].iter().any(|tail| above.ends_with(tail))
            // The body of an `if` without braces, which prettier joins to it when it fits.
            || ["if (", "else", "} else", "for (", "while ("].iter().any(|head| above.trim_start().starts_with(head))
                && (above.ends_with(')') || above.ends_with("else"))
    };
    let indent = |row: usize| line(row).len() - line(row).trim_start().len();
    let stays_broken = |joined: usize| joined.saturating_add_signed(change) > width || joined <= width;
    // A member chain broken before each call (`[...xs]\n  .filter(f)\n  .map(g)`).
    let last_row = source.row(source.text.len());
    let chain_end = (row + 1..=last_row).take_while(|&next| line(next).trim_start().starts_with('.')).last();
    if let Some(chain_end) = chain_end {
        let chain: usize =
            indent(row) + (row..=chain_end).map(|row| line(row).trim().chars().count()).sum::<usize>();
        if !stays_broken(chain) {
            return false;
        }
    }
    let mut first = row;
    while first > 0 && continues(first) {
        first -= 1;
    }
    let mut last = row;
    while last < last_row && continues(last + 1) && last + 1 - first < 12 {
        last += 1;
    }
    if first == last {
        return true;
    }
    let joined: usize =
        (first..=last).map(|row| line(row).trim().chars().count() + 1).sum::<usize>() + indent(first);
    stays_broken(joined)
}

/// `candidate` widened so that deleting it leaves a clean layout; `None` when the deletion
/// would leave an empty block. Candidates that replace with text are returned as they are.
pub(crate) fn tidy_deletion(
    source: &Source,
    language: Language,
    mut candidate: Candidate,
) -> Option<Candidate> {
    if !candidate.replacement.is_empty() || candidate.start >= candidate.end {
        return Some(candidate);
    }
    let text = source.text;
    let first_row = source.row(candidate.start);
    let last_row = source.row(candidate.end.saturating_sub(1).max(candidate.start));
    let line_start = source.line_start(first_row);
    let line_end = source.line_end(last_row).max(candidate.end);
    let before = text.get(line_start..candidate.start).unwrap_or("");
    let after = text.get(candidate.end..line_end).unwrap_or("");
    let horizontal = |c: char| c == ' ' || c == '\t';
    // A comment after the statement speaks of it (and gofmt aligns it with its neighbours'):
    // it goes with the line.
    let comment_after = after.trim_start().starts_with("//")
        || language == Language::Python && after.trim_start().starts_with('#');
    match (before.trim().is_empty(), after.trim().is_empty() || comment_after) {
        (true, true) => {
            let (start, end) = whole_lines(source, language, first_row, last_row)?;
            candidate.start = start;
            candidate.end = end;
        }
        (false, true) if !comment_after => {
            candidate.start -= before.len() - before.trim_end_matches(horizontal).len();
        }
        _ if before.is_empty() || before.ends_with(horizontal) => {
            candidate.end += after.len() - after.trim_start_matches(horizontal).len();
        }
        _ => {}
    }
    Some(candidate)
}

/// The byte range that removes rows `first..=last` whole (and a blank line beside them where
/// one would be left doubled, or at the edge of a block); `None` when the rows are all that
/// their block holds.
fn whole_lines(source: &Source, language: Language, first: usize, last: usize) -> Option<(usize, usize)> {
    let rows = source.row(source.text.len()) + 1;
    let line = |row: usize| source.text.get(source.line_start(row)..source.line_end(row)).unwrap_or("");
    let blank = |row: usize| line(row).trim().is_empty();
    let indent = |row: usize| line(row).len() - line(row).trim_start().len();
    let own_indent = indent(first);
    // The nearest lines around the deleted ones that hold code, and what they say about the
    // block the deletion is in.
    let above = (0..first).rev().find(|&row| !blank(row));
    let below = (last + 1..rows).find(|&row| !blank(row));
    let opens = above.is_some_and(|row| opens_block(line(row), language));
    let closes = match below {
        None => true,
        Some(row) => closes_block(line(row), language) || indent(row) < own_indent,
    };
    if opens && closes {
        return None;
    }
    // The blank lines that meet once the rows are gone: one run of them where two met (as
    // many as the longer had), none at the start or the end of a block.
    let blanks_above = (0..first).rev().take_while(|&row| blank(row)).count();
    let blanks_below =
        if below.is_some() { (last + 1..rows).take_while(|&row| blank(row)).count() } else { 0 };
    let mut first = first;
    let mut last = last;
    if opens || first == blanks_above {
        last += blanks_below;
    } else if blanks_above > 0 && blanks_below > 0 {
        last += blanks_above.min(blanks_below);
    } else if closes {
        first -= blanks_above;
    }
    let start = source.line_start(first);
    let end = source.line_start(last + 1);
    if end >= source.text.len() && !source.text.ends_with('\n') {
        // The last line of a file without a final line break: the break before it goes.
        return Some((start.saturating_sub(1), source.text.len()));
    }
    Some((start, end))
}

/// Whether a line of code opens a block that the next lines are in.
fn opens_block(line: &str, language: Language) -> bool {
    let code = line.trim_end();
    match language {
        Language::Python => code.ends_with(':'),
        _ => {
            code.ends_with('{')
                || code.ends_with("=> {")
                || code.ends_with(':') && code.trim_start().starts_with("case ")
        }
    }
}

/// Whether a line of code closes the block the lines above it are in.
fn closes_block(line: &str, language: Language) -> bool {
    let code = line.trim_start();
    match language {
        Language::Python => false,
        _ => code.starts_with('}') || code.starts_with("case ") || code.starts_with("default:"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Category;

    fn deletion(text: &str, code: &str) -> Candidate {
        let start = text.find(code).unwrap();
        Candidate {
            start,
            end: start + code.len(),
            replacement: String::new(),
            operator: "call-statement-removed",
            category: Category::StatementDeletion,
            description: String::new(),
        }
    }

    fn deleted(text: &str, code: &str, language: Language) -> Option<String> {
        let candidate = tidy_deletion(&Source::new(text), language, deletion(text, code))?;
        Some(format!("{}{}", &text[..candidate.start], &text[candidate.end..]))
    }

    #[test]
    fn a_statement_alone_on_its_line_takes_the_line_with_it() {
        let text = "def f(self, message):\n    self.check()\n    self.message = message\n    return 1\n";
        assert_eq!(
            deleted(text, "self.message = message", Language::Python).unwrap(),
            "def f(self, message):\n    self.check()\n    return 1\n"
        );
        let text = "fn f() {\n    a();\n    b();\n}";
        assert_eq!(deleted(text, "b();", Language::Rust).unwrap(), "fn f() {\n    a();\n}");
    }

    #[test]
    fn no_blank_line_is_left_doubled_or_at_the_edge_of_a_block() {
        let text = "func f() {\n\ta()\n\n\tb()\n\n\tc()\n}\n";
        assert_eq!(deleted(text, "b()", Language::Go).unwrap(), "func f() {\n\ta()\n\n\tc()\n}\n");
        let text = "fn f() {\n    a();\n\n    b();\n}\n";
        assert_eq!(deleted(text, "a();", Language::Rust).unwrap(), "fn f() {\n    b();\n}\n");
        assert_eq!(deleted(text, "b();", Language::Rust).unwrap(), "fn f() {\n    a();\n}\n");
    }

    #[test]
    fn a_block_left_empty_is_no_plant() {
        assert_eq!(deleted("if x {\n    a();\n}\n", "a();", Language::Rust), None);
        assert_eq!(deleted("if (x) {\n  a();\n\n}\n", "a();", Language::JavaScript), None);
    }

    #[test]
    fn code_beside_the_statement_keeps_its_spacing() {
        assert_eq!(deleted("    a(); b(); c();\n", "b();", Language::Rust).unwrap(), "    a(); c();\n");
        assert_eq!(deleted("    a(); b();\n", "b();", Language::Rust).unwrap(), "    a();\n");
        // A comment after the statement speaks of it: it goes with the line.
        let text = "fn f() {\n    a(); // why\n    b();\n}\n";
        assert_eq!(deleted(text, "a();", Language::Rust).unwrap(), "fn f() {\n    b();\n}\n");
        let text = "def f():\n    a()  # why\n    b()\n";
        assert_eq!(deleted(text, "a()", Language::Python).unwrap(), "def f():\n    b()\n");
    }

    #[test]
    fn replacements_are_left_alone() {
        let text = "x = a + b\n";
        let mut candidate = deletion(text, "+");
        candidate.replacement = "-".into();
        let kept = tidy_deletion(&Source::new(text), Language::Python, candidate).unwrap();
        assert_eq!((kept.start, kept.end), (6, 7));
    }
}
