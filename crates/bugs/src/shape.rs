//! A mined bug's category and defect sentence, guessed from the shape of the patch that
//! re-introduces it and from the fix's commit message.

use super::patch::Hunk;

/// The category a bug's hunks look like, in the mutation engine's vocabulary, or `real` when
/// the shape says nothing more specific.
pub(crate) fn category(hunks: &[Hunk]) -> &'static str {
    let mut fixed: Vec<&str> = Vec::new();
    let mut buggy: Vec<&str> = Vec::new();
    // Whole-line comments say nothing about the shape of the code.
    let code = |line: &&str| {
        let trimmed = line.trim_start();
        !trimmed.is_empty() && !["#", "//", "/*", "*"].iter().any(|marker| trimmed.starts_with(marker))
    };
    for hunk in hunks {
        let (removed, added) = hunk.changes();
        fixed.extend(removed.into_iter().filter(code));
        buggy.extend(added.into_iter().filter(code));
    }
    let fixed_tokens = tokens(&fixed.join("\n"));
    let buggy_tokens = tokens(&buggy.join("\n"));
    let lost: Vec<&str> =
        fixed_tokens.iter().filter(|t| !buggy_tokens.contains(t)).map(String::as_str).collect();
    let gained: Vec<&str> =
        buggy_tokens.iter().filter(|t| !fixed_tokens.contains(t)).map(String::as_str).collect();
    let either = |set: &[&str]| lost.iter().chain(&gained).any(|token| set.contains(token));
    let only = |set: &[&str]| !lost.is_empty() && lost.iter().chain(&gained).all(|token| set.contains(token));
    if buggy.is_empty()
        && either(&["None", "null", "undefined", "is", "Option", "Some", "is_none", "is_some"])
    {
        return "null-handling";
    }
    if buggy.is_empty() && either(&["raise", "throw", "except", "catch", "Err", "?"]) {
        return "error-handling";
    }
    if only(&["<", "<=", ">", ">=", "1", "+", "-", "len"]) && either(&["<", "<=", ">", ">=", "1"]) {
        return "off-by-one";
    }
    if only(&["==", "!=", "and", "or", "&&", "||", "not", "!", "is", "True", "False", "true", "false"]) {
        return "logic-inversion";
    }
    if only(&["+", "-", "*", "/", "%", "+=", "-=", "*=", "/=", "//"]) {
        return "arithmetic";
    }
    if either(&["None", "null", "undefined", "is_none", "is_some", "Option"]) {
        return "null-handling";
    }
    "real"
}

/// Code tokens: identifiers and numbers, and runs of operator characters.
fn tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut word = false;
    let flush = |current: &mut String, out: &mut Vec<String>| {
        if !current.is_empty() {
            out.push(std::mem::take(current));
        }
    };
    for c in text.chars() {
        let is_word = c.is_alphanumeric() || c == '_';
        let is_operator = "<>=!+-*/%&|?".contains(c);
        if is_word {
            if !word {
                flush(&mut current, &mut out);
            }
            word = true;
            current.push(c);
        } else if is_operator {
            if word {
                flush(&mut current, &mut out);
            }
            word = false;
            current.push(c);
        } else {
            flush(&mut current, &mut out);
            word = false;
        }
    }
    flush(&mut current, &mut out);
    out
}

/// The defect sentence: what the re-introduced code gets wrong, in the words of the fix.
pub(crate) fn defect(subject: &str, body: &str, hunks: &[Hunk]) -> String {
    let subject = subject.trim().trim_end_matches('.');
    let detail = body
        .split("\n\n")
        .map(|paragraph| paragraph.split_whitespace().collect::<Vec<_>>().join(" "))
        .find(|paragraph| !paragraph.is_empty() && !is_trailer(paragraph))
        .map(|paragraph| first_sentence(&paragraph))
        .unwrap_or_default();
    let mut sentence = format!("The bug fixed by \"{subject}\" is back");
    if let [hunk] = hunks {
        let (removed, added) = hunk.changes();
        let (line, _) = hunk.new_span();
        if let ([fixed], [buggy]) = (removed.as_slice(), added.as_slice()) {
            sentence.push_str(&format!(
                ": {}:{line} reads `{}` where the fix has `{}`",
                hunk.file,
                buggy.trim(),
                fixed.trim()
            ));
        }
    }
    if !detail.is_empty() {
        sentence.push_str(&format!(" ({detail})"));
    }
    sentence.push('.');
    sentence
}

/// `Signed-off-by: ...`, `Closes #12` and the like: not a description of the bug.
fn is_trailer(paragraph: &str) -> bool {
    (paragraph.contains('#') && paragraph.split_whitespace().count() <= 3)
        || paragraph
            .split_once(':')
            .is_some_and(|(key, _)| !key.contains(' ') && key.chars().next().is_some_and(char::is_uppercase))
}

fn first_sentence(text: &str) -> String {
    let end = text.find(". ").map_or(text.len(), |i| i + 1);
    let sentence = text[..end].trim_end_matches('.');
    if sentence.chars().count() > 200 {
        let cut: String = sentence.chars().take(200).collect();
        format!("{cut}...")
    } else {
        sentence.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::hunks;

    fn one_line(fixed: &str, buggy: &str) -> Vec<Hunk> {
        hunks(&format!("--- a/a.py\n+++ b/a.py\n@@ -3,1 +3,1 @@\n-{fixed}\n+{buggy}\n"))
    }

    #[test]
    fn categories_follow_the_shape_of_the_change() {
        assert_eq!(category(&one_line("    if i < n:", "    if i <= n:")), "off-by-one");
        assert_eq!(category(&one_line("    return s[:n - 1]", "    return s[:n]")), "off-by-one");
        assert_eq!(category(&one_line("    if a and b:", "    if a or b:")), "logic-inversion");
        assert_eq!(category(&one_line("    if x == y:", "    if x != y:")), "logic-inversion");
        assert_eq!(category(&one_line("    t = a * b", "    t = a + b")), "arithmetic");
        assert_eq!(category(&one_line("    name = escape(x)", "    name = x")), "real");
        let removed_guard = hunks(
            "--- a/a.py\n+++ b/a.py\n@@ -3,3 +3,1 @@\n-    if x is None:\n-        return ''\n     return x.strip()\n",
        );
        assert_eq!(category(&removed_guard), "null-handling");
        let removed_raise =
            hunks("--- a/a.py\n+++ b/a.py\n@@ -3,2 +3,1 @@\n-    raise ValueError(x)\n     return x\n");
        assert_eq!(category(&removed_raise), "error-handling");
        // Comments are not code: a removed comment that names None makes no null-handling bug.
        let commented = hunks(
            "--- a/a.py\n+++ b/a.py\n@@ -3,3 +3,2 @@\n-    # None means unset\n-    x = escape(x)\n+    x = x\n",
        );
        assert_eq!(category(&commented), "real");
    }

    #[test]
    fn defects_quote_the_fix_and_the_line() {
        let body =
            "Closes #12\n\nStriptags kept the last character. See the spec.\n\nSigned-off-by: A <a@b>\n";
        let sentence = defect(
            "Fix off-by-one in striptags.",
            body,
            &one_line("    return s[:n - 1]", "    return s[:n]"),
        );
        assert_eq!(
            sentence,
            "The bug fixed by \"Fix off-by-one in striptags\" is back: a.py:3 reads `return s[:n]` where the fix has `return s[:n - 1]` (Striptags kept the last character)."
        );
        assert_eq!(defect("Fix", "Reviewed-by: X\n", &[]), "The bug fixed by \"Fix\" is back.");
    }
}
