//! Every findings format, parsed from a fixture modelled on its documentation
//! (see fixtures/findings/README.md), and the matching rule.

use revcal_findings::{Finding, FindingFormat, ParsedFindings, parse_findings};

use crate::util::fixtures_dir;

fn fixture(name: &str) -> ParsedFindings {
    let path = fixtures_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse_findings(&text)
}

/// (file, line, text) of every finding, for compact assertions.
fn summary(parsed: &ParsedFindings) -> Vec<(Option<&str>, Option<u32>, &str)> {
    parsed.findings.iter().map(|f| (f.file.as_deref(), f.line, f.text.as_str())).collect()
}

#[test]
fn sarif_spec_sample_fills_the_message_template_and_follows_the_artifact() {
    let parsed = fixture("sarif-minimal.sarif");
    assert_eq!(parsed.format, Some(FindingFormat::Sarif));
    assert!(!parsed.embedded);
    assert_eq!(
        summary(&parsed),
        [(
            Some("src/collections/list.cpp"),
            Some(15),
            "[C2001] Variable \"count\" was used without being initialized."
        )]
    );
    assert!(parsed.findings.iter().all(|f| f.source == FindingFormat::Sarif && !f.weak));
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
}

#[test]
fn sarif_code_scanning_sample_reads_levels_snippets_indexes_and_uris() {
    let parsed = fixture("sarif-code-scanning.sarif");
    assert_eq!(parsed.format, Some(FindingFormat::Sarif));
    assert_eq!(
        summary(&parsed),
        [
            (Some("main.js"), Some(2), "[3f292041e51d22005ce48f39df3585d44ce1b0ad] Unused variable foo."),
            (
                Some("/home/dev/my app/src/buffer.js"),
                Some(41),
                "[off-by-one] Loop bound `i <= len` reads one element past the end."
            ),
            (None, None, "[no-location] The project has no license file."),
        ]
    );
    let first = &parsed.findings[0];
    assert_eq!(first.severity.as_deref(), Some("note"), "the rule's default level applies");
    assert_eq!(first.evidence.as_deref(), Some("let foo = 1;"));
    assert_eq!(parsed.findings[1].severity.as_deref(), Some("error"));
}

#[test]
fn rdjson_sample_reads_codes_severities_and_original_output() {
    let parsed = fixture("rdjson.json");
    assert_eq!(parsed.format, Some(FindingFormat::Rdjson));
    assert_eq!(
        summary(&parsed),
        [
            (
                Some("src/inventory.rs"),
                Some(14),
                "[RULE1] Comparison `i <= items.len()` indexes past the end of `items`"
            ),
            (Some("src/inventory.rs"), Some(30), "Use `saturating_sub` to avoid underflow"),
        ]
    );
    assert_eq!(parsed.findings[0].severity.as_deref(), Some("ERROR"));
    assert_eq!(
        parsed.findings[1].severity.as_deref(),
        Some("WARNING"),
        "the result's severity is the default"
    );
    assert_eq!(
        parsed.findings[0].evidence.as_deref(),
        Some("src/inventory.rs:14:15: RULE1 comparison indexes past the end")
    );
}

#[test]
fn rdjsonl_sample_reads_one_diagnostic_per_line() {
    let parsed = fixture("rdjsonl.jsonl");
    assert_eq!(parsed.format, Some(FindingFormat::Rdjsonl));
    assert_eq!(
        summary(&parsed),
        [
            (Some("lib/pricing.py"), Some(14), "`total - discount` should be `total + discount`"),
            (Some("lib/pricing.py"), Some(22), "Replace with a guard clause"),
        ]
    );
    assert_eq!(parsed.findings[1].severity.as_deref(), Some("WARNING"));
}

#[test]
fn a_single_rdjson_diagnostic_is_rdjsonl_of_one_line() {
    let parsed =
        parse_findings(r#"{"message": "m", "location": {"path": "a.go", "range": {"start": {"line": 3}}}}"#);
    assert_eq!(parsed.format, Some(FindingFormat::Rdjsonl));
    assert_eq!(summary(&parsed), [(Some("a.go"), Some(3), "m")]);
}

#[test]
fn gitlab_code_quality_sample_reads_lines_and_positions() {
    let parsed = fixture("gitlab-code-quality.json");
    assert_eq!(parsed.format, Some(FindingFormat::GitlabCodeQuality));
    assert_eq!(
        summary(&parsed),
        [
            (Some("lib/index.js"), Some(42), "[no-unused-vars] 'unused' is assigned a value but never used."),
            (
                Some("lib/session.js"),
                Some(17),
                "[null-handling] The `user ?? guest` default was dropped; `user.name` throws when no one is signed in.\n\
                 Restore the default: `const who = user ?? guest;`"
            ),
        ]
    );
    assert_eq!(parsed.findings[0].severity.as_deref(), Some("minor"));
    assert_eq!(parsed.findings[1].severity.as_deref(), Some("major"));
}

#[test]
fn findings_object_resolves_every_alias() {
    let parsed = fixture("findings-object.json");
    assert_eq!(parsed.format, Some(FindingFormat::Findings));
    assert_eq!(
        summary(&parsed),
        [
            (
                Some("src/parser.rs"),
                Some(88),
                "Off-by-one in token window\n`end <= tokens.len()` lets `end` reach `len`, so `tokens[end]` panics on the last token."
            ),
            (
                Some("src/lexer.rs"),
                Some(12),
                "Error from `read_to_string` is swallowed; an unreadable file lexes as empty.\nPropagate the error with `?`."
            ),
            (Some("README.md"), Some(3), "Typo: 'recieve'."),
        ]
    );
    let first = &parsed.findings[0];
    assert_eq!(first.severity.as_deref(), Some("high"));
    assert_eq!(first.evidence.as_deref(), Some("let next = tokens[end];"));
    assert_eq!(first.repro.as_deref(), Some("cargo test -p parser window_at_end"));
    assert!(parsed.findings.iter().all(|f| !f.weak));
}

#[test]
fn bare_array_reads_locations_and_plain_strings_as_weak() {
    let parsed = fixture("bare-array.json");
    assert_eq!(parsed.format, Some(FindingFormat::Findings));
    assert_eq!(
        summary(&parsed),
        [
            (
                Some("app/models/cart.py"),
                Some(57),
                "Quantity check inverted\n`if qty == 0` became `if qty != 0`, so every non-empty cart is rejected."
            ),
            (Some("app/models/cart.py"), Some(91), "Resource leak: the file opened here is never closed."),
            (Some("app/views.py"), Some(10), "app/views.py:10 returns None instead of the rendered page"),
        ]
    );
    assert_eq!(parsed.findings.iter().map(|f| f.weak).collect::<Vec<_>>(), [false, false, true]);
}

#[test]
fn code_review_output_reads_issues() {
    let parsed = fixture("code-review.json");
    assert_eq!(parsed.format, Some(FindingFormat::CodeReview));
    assert_eq!(
        summary(&parsed),
        [(
            Some("src/api.py"),
            Some(42),
            "Missing null check before accessing user.email\nAdd: if user is None: return None"
        )]
    );
    assert_eq!(parsed.findings[0].severity.as_deref(), Some("major"));
}

#[test]
fn code_review_council_reads_blocking_issues_suggestions_and_locations() {
    let parsed = fixture("code-review-council.json");
    assert_eq!(parsed.format, Some(FindingFormat::CodeReview));
    assert_eq!(
        summary(&parsed),
        [
            (
                Some("src/auth.py"),
                Some(120),
                "Token expiry compared with `<` instead of `<=`; tokens stay valid one second too long."
            ),
            (Some("src/auth.py"), Some(7), "Unused import `os`."),
            (Some("src/auth.py"), Some(121), "Expiry boundary is off by one."),
        ]
    );
}

#[test]
fn json_in_log_noise_is_found_and_unrelated_json_is_ignored() {
    let parsed = fixture("log-noise.txt");
    assert_eq!(parsed.format, Some(FindingFormat::Findings));
    assert!(parsed.embedded);
    assert_eq!(
        summary(&parsed),
        [(
            Some("pkg/queue/ring.go"),
            Some(64),
            "Wrap-around uses `>` instead of `>=`\nWhen head == cap the index is not wrapped and the next Push writes out of bounds."
        )]
    );
    assert_eq!(parsed.findings[0].repro.as_deref(), Some("go test ./pkg/queue -run TestWrap"));
}

#[test]
fn a_cli_envelope_with_the_answer_in_a_string_is_unwrapped() {
    let parsed = fixture("cli-wrapper.json");
    assert_eq!(parsed.format, Some(FindingFormat::Findings));
    assert_eq!(
        summary(&parsed),
        [(
            Some("src/money.ts"),
            Some(23),
            "`amount * rate` became `amount / rate`: converted totals are wrong by a factor of rate squared."
        )]
    );
}

#[test]
fn prose_is_the_weak_last_resort() {
    let parsed = fixture("prose.txt");
    assert_eq!(parsed.format, Some(FindingFormat::Prose));
    assert_eq!(
        summary(&parsed),
        [
            (
                Some("src/billing/invoice.rb"),
                Some(112),
                "1. src/billing/invoice.rb:112 - the discount is subtracted twice when the coupon is stacked."
            ),
            (
                Some("lib/http/client.rb"),
                Some(45),
                "2. The retry loop in lib/http/client.rb:45:9 never backs off."
            ),
            (
                Some("src/billing/tax.rb"),
                Some(8),
                "src/billing/tax.rb:8:\nRounding now happens before the sum, so totals drift by a cent."
            ),
        ]
    );
    assert!(parsed.findings.iter().all(|f| f.weak && f.source == FindingFormat::Prose));
    assert!(parsed.warnings.iter().any(|w| w.contains("weak")), "{:?}", parsed.warnings);
}

#[test]
fn lgtm_and_empty_output_have_no_findings_and_no_format() {
    for output in ["LGTM", "", "   \n", "Looks good to me! {not json}", "[1, 2, 3]"] {
        let parsed = parse_findings(output);
        assert_eq!(parsed.format, None, "{output:?}");
        assert!(parsed.findings.is_empty(), "{output:?}");
    }
}

#[test]
fn an_explicit_empty_findings_list_is_recognised_with_nothing_found() {
    for output in [r#"{"findings": []}"#, "[]", "review done\n{\"findings\": []}\n"] {
        let parsed = parse_findings(output);
        assert_eq!(parsed.format, Some(FindingFormat::Findings), "{output:?}");
        assert!(parsed.findings.is_empty());
    }
}

#[test]
fn repeated_documents_in_noise_are_merged_without_duplicates() {
    let finding = r#"{"findings": [{"file": "a.rs", "line": 1, "title": "x"}]}"#;
    let other = r#"{"findings": [{"file": "b.rs", "line": 2, "title": "y"}]}"#;
    let parsed = parse_findings(&format!("first {finding}\nagain {finding}\nthen {other}\n"));
    assert!(parsed.embedded);
    assert_eq!(summary(&parsed), [(Some("a.rs"), Some(1), "x"), (Some("b.rs"), Some(2), "y")]);
    assert!(parsed.warnings.iter().any(|w| w.contains("merged")));
}

#[test]
fn bad_fields_are_warnings_that_name_the_item_and_field() {
    let parsed = parse_findings(
        r#"{"findings": [{"file": "a.rs", "line": "twelve", "title": "t"}, 7, {"unrelated": true},
            {"file": "b.rs", "line": 0, "title": "zero"}, {"file": "c.rs", "line": 4}]}"#,
    );
    assert_eq!(
        summary(&parsed),
        [(Some("a.rs"), None, "t"), (Some("b.rs"), None, "zero"), (Some("c.rs"), Some(4), "")]
    );
    let expected = [
        "findings[0].line: \"twelve\" is not a line number",
        "findings[1]: expected an object, found a number",
        "findings[2]: no file, line, location or text field",
        "findings[3].line: 0 is not a line number",
        "findings[4]: no title, body, message, description or recommendation",
    ];
    for text in expected {
        assert!(
            parsed.warnings.iter().any(|w| w.contains(text)),
            "missing {text:?} in {:#?}",
            parsed.warnings
        );
    }
}

#[test]
fn findings_serialise_with_kebab_case_sources() {
    let parsed = fixture("gitlab-code-quality.json");
    let json = serde_json::to_value(&parsed.findings[0]).unwrap();
    assert_eq!(json["source"], "gitlab-code-quality");
    assert_eq!(json["line"], 42);
    assert_eq!(json["weak"], false);
    let back: Finding = serde_json::from_value(json).unwrap();
    assert_eq!(back, parsed.findings[0]);
    assert_eq!(serde_json::to_value(FindingFormat::CodeReview).unwrap(), "code-review");
}

#[test]
fn sarif_results_that_report_no_problem_are_skipped_with_a_reason() {
    let parsed = parse_findings(
        r#"{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": [
            {"ruleId": "a", "kind": "pass", "message": {"text": "ok"}},
            {"ruleId": "b", "message": {"text": "hidden"}, "suppressions": [{"kind": "inSource"}]},
            {"ruleId": "c", "message": {"text": "still reported"}, "suppressions": [{"kind": "external", "status": "rejected"}]},
            {"ruleId": "d", "message": {"text": "fixed"}, "baselineState": "absent"},
            {"ruleId": "e", "kind": "review", "message": {"text": "look here"}}
        ]}]}"#,
    );
    assert_eq!(parsed.format, Some(FindingFormat::Sarif));
    let texts: Vec<&str> = parsed.findings.iter().map(|f| f.text.as_str()).collect();
    assert_eq!(texts, ["[c] still reported", "[e] look here"]);
    for expected in [
        "runs[0].results[0]: kind \"pass\" reports no problem; skipped",
        "runs[0].results[1]: suppressed; skipped",
        "runs[0].results[3]: baselineState \"absent\"",
    ] {
        assert!(
            parsed.warnings.iter().any(|w| w.contains(expected)),
            "missing {expected:?} in {:#?}",
            parsed.warnings
        );
    }
}

#[test]
fn a_logged_file_list_is_not_mistaken_for_findings() {
    let parsed = parse_findings(
        "scanning [{\"path\": \"src/a.rs\", \"size\": 10}, {\"path\": \"src/b.rs\", \"size\": 7}]\nLGTM",
    );
    assert_eq!(parsed.format, None);
    assert!(parsed.findings.is_empty());
}
