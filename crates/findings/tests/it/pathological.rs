//! Reviewer output built to make the findings parser slow: the work stays linear in the
//! output's size, and nothing the reviewer reported is dropped on the way.

use revcal_findings::{FindingFormat, parse_findings};

const DOCUMENT: &str = r#"{"findings": [{"file": "a.py", "line": 3, "message": "off by one"}]}"#;

fn located(text: &str) -> Vec<(String, u32)> {
    parse_findings(text)
        .findings
        .into_iter()
        .filter_map(|finding| Some((finding.file?, finding.line?)))
        .collect()
}

#[test]
fn a_document_inside_a_deep_unterminated_list_is_found() {
    // Every one of the 120 open brackets used to be parsed to the end of the output (the
    // 7.5 MB version took 19 s in a release build).
    let text = format!("{}{}\n{DOCUMENT}, 1, 2", "[".repeat(120), "1, ".repeat(200_000));
    assert_eq!(located(&text), [("a.py".to_string(), 3)]);
}

#[test]
fn a_document_after_thousands_of_malformed_candidates_is_found() {
    // The scan used to give up after 2,000 malformed candidates and lose what followed.
    let text = format!("{}\n{DOCUMENT}\n", "log [{oops ".repeat(5_000));
    let parsed = parse_findings(&text);
    assert_eq!(parsed.format, Some(FindingFormat::Findings));
    assert_eq!(parsed.findings.len(), 1);
    assert!(parsed.warnings.iter().all(|w| !w.contains("stopped")), "{:?}", parsed.warnings);
}

#[test]
fn documents_in_a_long_unterminated_list_of_objects_are_each_found() {
    let entry = r#"{"findings": [{"file": "b.rs", "line": 7, "message": "m"}]}, "#;
    let text = format!("[{}", entry.repeat(2_000));
    let parsed = parse_findings(&text);
    assert_eq!(parsed.findings.len(), 1, "2,000 copies of one finding merge into one");
    assert_eq!((parsed.findings[0].file.as_deref(), parsed.findings[0].line), (Some("b.rs"), Some(7)));
}

#[test]
fn brackets_inside_strings_of_a_broken_document_start_nothing() {
    let text =
        format!(r#"[{{"message": "{}"}}, {DOCUMENT}"#, "[{\\\"file\\\": \\\"x.py\\\"}] ".repeat(1_000));
    assert_eq!(located(&text), [("a.py".to_string(), 3)]);
}

#[test]
fn twenty_thousand_locations_on_one_line_keep_bounded_text() {
    // Each prose finding used to carry a copy of the whole line: 7 s and 4 GB in a release build.
    let line: String = (1..=20_000).map(|n| format!("x.py:{n} ")).collect();
    let parsed = parse_findings(&line);
    assert_eq!(parsed.format, Some(FindingFormat::Prose));
    assert_eq!(parsed.findings.len(), 20_000);
    let longest = parsed.findings.iter().map(|f| f.text.len()).max().unwrap();
    assert!(longest <= 512, "a finding's text is an excerpt of its line, not the line ({longest} bytes)");
    let last = parsed.findings.last().unwrap();
    assert!(last.text.contains("x.py:20000"));
}

/// The inputs the release timings in docs/findings.md were taken on; run with
/// `cargo test --release -p revcal-calibrate --test it -- --ignored --nocapture pathological`.
#[test]
#[ignore = "prints release timings of the worst outputs; not a pass/fail test"]
fn print_timings_of_the_worst_outputs() {
    let size = 7_500_000;
    let cases = [
        ("120 open brackets, then a flat list", format!("{}{}", "[".repeat(120), "1, ".repeat(size / 3))),
        ("unterminated list of objects", format!("[{}", r#"{"a": 1}, "#.repeat(size / 10))),
        ("open brackets", "[".repeat(size)),
        ("20,000 locations on one line", (1..=20_000).map(|n| format!("x.py:{n} ")).collect()),
    ];
    for (name, text) in cases {
        let started = std::time::Instant::now();
        let parsed = parse_findings(&text);
        println!("{name}: {} bytes, {:?}, {} findings", text.len(), started.elapsed(), parsed.findings.len());
    }
}
