//! The findings parser never panics, whatever the reviewer prints (docs/findings.md: it never
//! fails and never panics).

use proptest::prelude::*;
use revcal_findings::{FindingFormat, parse_findings};

use crate::util::fixtures_dir;

fn fixtures() -> Vec<String> {
    let dir = fixtures_dir();
    let mut texts: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
        .collect();
    texts.sort();
    texts
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        let parsed = parse_findings(&text);
        prop_assert!(parsed.format.is_some() || parsed.findings.is_empty());
    }

    #[test]
    fn json_shaped_noise_never_panics(text in r#"[\[\]{}":,0-9a-z .\-/\n\\]{0,300}"#) {
        let parsed = parse_findings(&text);
        prop_assert!(parsed.format.is_some() || parsed.findings.is_empty());
    }

    #[test]
    fn cut_and_spliced_fixtures_never_panic(index in 0usize..64, cut in any::<prop::sample::Index>(), insert in ".{0,20}") {
        let fixtures = fixtures();
        let text = &fixtures[index % fixtures.len()];
        let chars: Vec<char> = text.chars().collect();
        let at = cut.index(chars.len() + 1);
        let spliced: String = chars[..at].iter().copied().chain(insert.chars()).chain(chars[at..].iter().copied()).collect();
        let parsed = parse_findings(&spliced);
        // Prose findings are always weak; structured ones never are.
        for finding in &parsed.findings {
            prop_assert!(finding.source != FindingFormat::Prose || finding.weak);
        }
    }
}

#[test]
fn deep_nesting_and_huge_lines_do_not_overflow_or_stall() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(parse_findings(&deep).findings.is_empty());
    let unbalanced = "{\"a\": ".repeat(50_000);
    let parsed = parse_findings(&unbalanced);
    assert!(parsed.findings.is_empty());
    assert!(
        parsed.warnings.is_empty(),
        "the scan reads it all and has nothing to say: {:?}",
        parsed.warnings
    );
    let long_line = format!("{}src/a.rs:7 bug", "x".repeat(1_000_000));
    assert_eq!(parse_findings(&long_line).findings.len(), 1);
}

#[test]
fn a_findings_document_after_many_broken_fragments_is_still_found() {
    let noise = "progress {\"file\": \"src/x.rs\", \"state\": trunc\n".repeat(500);
    let output =
        format!("{noise}{{\"findings\": [{{\"file\": \"src/a.rs\", \"line\": 3, \"title\": \"bug\"}}]}}\n");
    let parsed = parse_findings(&output);
    assert_eq!(parsed.findings.len(), 1);
    assert_eq!(parsed.findings[0].file.as_deref(), Some("src/a.rs"));
}

/// Not a timing test: with a quadratic step (deduplication, line counting) these outputs would
/// take minutes instead of about a second.
#[test]
fn large_outputs_with_many_findings_are_read_whole() {
    let prose: String =
        (0..50_000).map(|i| format!("{i}. src/f{i}.py:{} something is wrong here\n", i + 1)).collect();
    let parsed = parse_findings(&prose);
    assert_eq!(parsed.format, Some(FindingFormat::Prose));
    assert_eq!(parsed.findings.len(), 50_000);

    let noisy_rdjsonl: String = (0..20_000)
        .map(|i| {
            format!(
                "log line {i}\n{{\"message\": \"m{i}\", \"location\": {{\"path\": \"a{i}.go\", \"range\": {{\"start\": {{\"line\": 3}}}}}}}}\n"
            )
        })
        .collect();
    let parsed = parse_findings(&noisy_rdjsonl);
    assert_eq!(parsed.format, Some(FindingFormat::Rdjsonl));
    assert!(parsed.embedded);
    assert_eq!(parsed.findings.len(), 20_000);
    assert_eq!(parsed.findings[19_999].file.as_deref(), Some("a19999.go"));
}
