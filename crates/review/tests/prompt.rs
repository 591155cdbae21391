//! docs/review.md quotes the prompt as it is sent ("The prompt as sent"): a change of its
//! wording must change the page too.

use std::path::Path;

use revcal_review::prompt::{system, user};
use revcal_review::{Change, ChangedFile, MAX_FINDINGS};
use revcal_rubric_repo::Repository;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The `text` blocks of the page's section on the prompt, in order.
fn quoted_blocks() -> Vec<String> {
    let page = root().join("docs/review.md");
    let docs = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    let start = docs.find("\n## The prompt as sent\n").expect("a section on the prompt");
    let section = &docs[start + 1..];
    let section = &section[..section[1..].find("\n## ").map_or(section.len(), |end| end + 1)];
    section
        .split("```text\n")
        .skip(1)
        .map(|block| block[..block.find("```").expect("the quote ends")].to_owned())
        .collect()
}

fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The page's nonce: the hex digits after the first `<data-` of a quote.
fn nonce_of(quote: &str) -> String {
    let open = quote.find("<data-").expect("the fence is named") + "<data-".len();
    quote[open..].chars().take_while(char::is_ascii_hexdigit).collect()
}

#[test]
fn the_system_part_sent_is_the_one_docs_review_md_quotes() {
    let blocks = quoted_blocks();
    let quoted = blocks.first().expect("the system part, quoted");
    let rubrics = Repository::load(root().join("rubrics")).unwrap();
    let rubric = rubrics.get("code_review_v1").expect("the default rubric");
    let nonce = nonce_of(quoted);
    let sent = system(&rubric, &[], MAX_FINDINGS, &nonce);
    // The rubric's own text is shown by `revcal rubric get`, not quoted on the page.
    let rubric_text = rubric.prompt_text(false);
    assert!(sent.contains(&rubric_text), "the rubric is in the system part");
    let sent = sent.replace(&rubric_text, "\n[THE RUBRIC]\n");
    assert_eq!(words(&sent), words(quoted), "docs/review.md is out of date");
}

#[test]
fn the_user_part_sent_is_the_one_docs_review_md_quotes() {
    let blocks = quoted_blocks();
    let quoted = blocks.get(1).expect("the user part, quoted");
    let change = Change {
        files: vec![ChangedFile {
            path: "src/calc.py".into(),
            excerpt: "     1   def add(a, b):\n       -     return a + b\n     2 +     return a - b\n".into(),
            changed_lines: vec![2],
        }],
    };
    let sent = user(&change, &nonce_of(quoted));
    assert_eq!(sent.trim_end(), quoted.trim_end(), "docs/review.md is out of date");
}
