//! The native output of real linters, each fixture made by the tool itself (see
//! fixtures/findings/README.md): every finding is located, and the locations are the ones an
//! independent reading of the tool's own format gives.

use revcal_findings::{FindingFormat, ParsedFindings, parse_findings};
use serde_json::Value;

use crate::util::fixtures_dir;

fn text(name: &str) -> String {
    let path = fixtures_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(name: &str) -> Value {
    serde_json::from_str(&text(name)).unwrap()
}

/// (file, line) of every finding.
fn locations(parsed: &ParsedFindings) -> Vec<(String, u32)> {
    parsed.findings.iter().map(|f| (f.file.clone().expect("a file"), f.line.expect("a line"))).collect()
}

fn lines_of(items: &[Value], file: &str, line: &[&str]) -> Vec<(String, u32)> {
    items
        .iter()
        .map(|item| {
            let line = line.iter().fold(item, |value, key| &value[*key]);
            (item[file].as_str().unwrap().to_owned(), u32::try_from(line.as_u64().unwrap()).unwrap())
        })
        .collect()
}

fn assert_clean(parsed: &ParsedFindings, format: FindingFormat, count: usize) {
    assert_eq!(parsed.format, Some(format));
    assert_eq!(parsed.findings.len(), count, "{:?}", parsed.warnings);
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    assert!(parsed.findings.iter().all(|f| f.source == format && !f.weak));
}

#[test]
fn ruff_json_and_json_lines_read_the_row_of_each_violation() {
    let array = parse_findings(&text("ruff.json"));
    assert_clean(&array, FindingFormat::Ruff, 21);
    let expected = lines_of(json("ruff.json").as_array().unwrap(), "filename", &["location", "row"]);
    assert_eq!(locations(&array), expected);
    let first = &array.findings[0];
    assert_eq!(first.text, "[PLR1730] Replace `if` statement with `r = max(r, 0.0)`");
    assert_eq!(first.severity.as_deref(), Some("error"));

    let lines = parse_findings(&text("ruff.jsonl"));
    assert_clean(&lines, FindingFormat::Ruff, 21);
    assert_eq!(lines.findings, array.findings, "the same run in both formats");
}

#[test]
fn pylint_json_and_json2_read_path_line_id_and_symbol() {
    let parsed = parse_findings(&text("pylint.json"));
    assert_clean(&parsed, FindingFormat::Pylint, 24);
    assert_eq!(locations(&parsed), lines_of(json("pylint.json").as_array().unwrap(), "path", &["line"]));
    let first = &parsed.findings[0];
    assert_eq!(first.text, "[C0325 superfluous-parens] Unnecessary parens after '=' keyword");
    assert_eq!(first.severity.as_deref(), Some("convention"));

    let json2 = parse_findings(&text("pylint-json2.json"));
    assert_clean(&json2, FindingFormat::Pylint, 18);
    let messages = json("pylint-json2.json");
    assert_eq!(locations(&json2), lines_of(messages["messages"].as_array().unwrap(), "path", &["line"]));
}

#[test]
fn eslint_json_and_checkstyle_read_the_same_run_alike() {
    let parsed = parse_findings(&text("eslint.json"));
    assert_clean(&parsed, FindingFormat::Eslint, 12);
    let mut expected = Vec::new();
    for file in json("eslint.json").as_array().unwrap() {
        for message in file["messages"].as_array().unwrap() {
            let line = u32::try_from(message["line"].as_u64().unwrap()).unwrap();
            expected.push((file["filePath"].as_str().unwrap().to_owned(), line));
        }
    }
    assert_eq!(locations(&parsed), expected);
    let first = &parsed.findings[0];
    assert_eq!(first.text, "[no-magic-numbers] No magic number: 0.4.");
    assert_eq!(first.severity.as_deref(), Some("warning"), "ESLint's severity 1");

    let checkstyle = parse_findings(&text("eslint-checkstyle.xml"));
    assert_clean(&checkstyle, FindingFormat::Checkstyle, 12);
    assert_eq!(locations(&checkstyle), expected, "the same ESLint run as Checkstyle XML");
    assert_eq!(
        checkstyle.findings[0].text,
        "[eslint.rules.no-magic-numbers] No magic number: 0.4. (no-magic-numbers)"
    );
}

#[test]
fn checkstyle_among_log_lines_is_read_and_broken_xml_is_a_warning() {
    let xml = text("eslint-checkstyle.xml");
    let body = xml.trim_start_matches(r#"<?xml version="1.0" encoding="utf-8"?>"#);
    let noisy = parse_findings(&format!("running eslint...\n{body}\ndone in 1.2s\n"));
    assert_eq!(noisy.format, Some(FindingFormat::Checkstyle));
    assert!(noisy.embedded);
    assert_eq!(noisy.findings.len(), 12);

    // Found by the findings fuzz target: a closing tag before the first opening one.
    let backwards = parse_findings("log </checkstyle> then <checkstyle><file name=\"a.js\"/>");
    assert!(backwards.findings.is_empty());

    let broken = parse_findings(r#"<checkstyle><file name="a.js"><error line="3" message="x"></file>"#);
    assert_eq!(broken.format, Some(FindingFormat::Checkstyle));
    assert!(broken.findings.is_empty());
    assert!(broken.warnings[0].contains("does not parse"), "{:?}", broken.warnings);

    let escaped = parse_findings(
        r#"<checkstyle><file name="src/a&amp;b.js"><error line="0" message="&quot;x&quot; &lt; y"/></file></checkstyle>"#,
    );
    assert_eq!(escaped.findings[0].file.as_deref(), Some("src/a&b.js"));
    assert_eq!(escaped.findings[0].text, "\"x\" < y");
    assert!(escaped.warnings.iter().any(|w| w.contains("line \"0\"")), "{:?}", escaped.warnings);
}

#[test]
fn clippy_json_reads_each_message_at_its_primary_span_and_skips_cargo_events() {
    let output = text("clippy.jsonl");
    let parsed = parse_findings(&output);
    assert_clean(&parsed, FindingFormat::Rustc, 14);
    let mut expected = Vec::new();
    for line in output.lines() {
        let event: Value = serde_json::from_str(line).unwrap();
        if event["reason"] != "compiler-message" {
            continue;
        }
        let spans = event["message"]["spans"].as_array().unwrap();
        let primary = spans.iter().find(|s| s["is_primary"] == true).unwrap();
        let line = u32::try_from(primary["line_start"].as_u64().unwrap()).unwrap();
        expected.push((primary["file_name"].as_str().unwrap().to_owned(), line));
    }
    assert_eq!(locations(&parsed), expected);
    let first = &parsed.findings[0];
    assert_eq!(first.text, "[clippy::unreadable_literal] long literal lacking separators");
    assert_eq!(first.severity.as_deref(), Some("warning"));
    assert!(first.evidence.as_deref().is_some_and(|e| e.contains("lib.rs:95")), "the rendered message");

    // cargo reports a warning once per target that builds the file (`--all-targets`: the
    // library and its tests): one finding each, not one per target.
    let per_target: String = output
        .lines()
        .flat_map(|line| {
            [
                line.to_owned(),
                line.replace("\"compiler-message\"", "\"compiler-message\", \"x-target\": \"test\""),
            ]
        })
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(locations(&parse_findings(&per_target)), expected);
    // cargo's progress on stderr mixed in (`2>&1`): the messages are still found.
    let mixed = format!("    Checking fnv v1.0.7 (/tmp/fnv)\n{output}    Finished `dev` profile\n");
    assert_eq!(locations(&parse_findings(&mixed)), expected);
    // A clean build: no findings, and no complaint that nothing looked like one.
    let clean = parse_findings(
        "{\"reason\":\"compiler-artifact\",\"package_id\":\"x\"}\n{\"reason\":\"build-finished\",\"success\":true}\n",
    );
    assert_eq!((clean.format, clean.findings.len()), (Some(FindingFormat::Rustc), 0));
    assert!(clean.warnings.is_empty(), "{:?}", clean.warnings);
}

#[test]
fn semgrep_json_reads_start_lines_and_drops_the_login_placeholder() {
    let parsed = parse_findings(&text("semgrep.json"));
    assert_clean(&parsed, FindingFormat::Semgrep, 27);
    let results = json("semgrep.json");
    assert_eq!(
        locations(&parsed),
        lines_of(results["results"].as_array().unwrap(), "path", &["start", "line"])
    );
    let first = &parsed.findings[0];
    assert!(first.text.starts_with("[float-equality] Comparing with =="), "{}", first.text);
    assert_eq!(first.severity.as_deref(), Some("WARNING"));
    assert_eq!(first.evidence, None, "\"requires login\" is no evidence");
}

#[test]
fn findings_without_a_location_are_counted_in_a_warning_naming_the_format() {
    let some = parse_findings(
        r#"{"findings": [{"file": "a.py", "line": 3, "message": "x"}, {"message": "y"}, {"file": "b.py", "message": "z"}]}"#,
    );
    assert_eq!(some.findings.len(), 3);
    assert!(
        some.warnings
            .iter()
            .any(|w| w.contains("2 of the 3 findings read as findings have no file or no line")),
        "{:?}",
        some.warnings
    );
    let none = parse_findings(r#"[{"message": "looks wrong"}, {"message": "also wrong"}]"#);
    assert!(
        none.warnings
            .iter()
            .any(|w| w.starts_with("could not locate any of the 2 findings read as findings")),
        "{:?}",
        none.warnings
    );
    let located = parse_findings(&text("ruff.json"));
    assert!(located.warnings.is_empty());
}

#[test]
fn compile_errors_keep_their_location_and_summaries_are_no_findings() {
    // `cargo check --message-format=json` on a crate with `String -= &str` and a type error
    // inside a local macro (fixtures/findings/README.md).
    let parsed = parse_findings(&text("rustc-errors.jsonl"));
    assert_clean(&parsed, FindingFormat::Rustc, 3);
    let summary: Vec<(String, u32, &str)> = parsed
        .findings
        .iter()
        .map(|f| (f.file.clone().unwrap(), f.line.unwrap(), f.text.split(']').next().unwrap()))
        .collect();
    assert_eq!(
        summary,
        [
            ("src/lib.rs".to_owned(), 4, "[E0368"),
            ("src/lib.rs".to_owned(), 5, "[E0308"),
            ("src/lib.rs".to_owned(), 1, "[E0308"),
        ],
        "a local macro's span stays in its definition; `failure-note` summaries are skipped"
    );
    assert!(parsed.findings.iter().all(|f| f.severity.as_deref() == Some("error")));

    // A span inside std's macro is followed to the call site in the project.
    let std_macro = r#"{"reason":"compiler-message","message":{"message":"mismatched types","code":{"code":"E0308"},"level":"error","rendered":"error","spans":[{"file_name":"/rustc/59807616e1fa/library/core/src/macros/mod.rs","line_start":120,"is_primary":true,"expansion":{"span":{"file_name":"src/main.rs","line_start":7,"is_primary":false,"expansion":null},"macro_decl_name":"assert_eq!"}}]}}"#;
    let parsed = parse_findings(std_macro);
    assert_eq!((parsed.findings[0].file.as_deref(), parsed.findings[0].line), (Some("src/main.rs"), Some(7)));
}

#[test]
fn linters_own_syntax_errors_are_located_findings() {
    // ruff 0.17.6 and ESLint 9.39.5 on a file that does not parse.
    let ruff = parse_findings(
        r#"[{"cell": null, "code": "invalid-syntax", "end_location": {"column": 8, "row": 1}, "filename": "/tmp/pyproj/broken.py", "fix": null, "location": {"column": 7, "row": 1}, "message": "Expected a parameter or the end of the parameter list", "name": "invalid-syntax", "noqa_row": null, "severity": "error", "url": null}]"#,
    );
    assert_eq!(ruff.format, Some(FindingFormat::Ruff));
    assert_eq!(
        ruff.findings[0].text,
        "[invalid-syntax] Expected a parameter or the end of the parameter list"
    );
    assert_eq!(ruff.findings[0].line, Some(1));
    let eslint = parse_findings(
        r#"[{"filePath":"/tmp/jslint/broken.js","messages":[{"ruleId":null,"nodeType":null,"fatal":true,"severity":2,"message":"Parsing error: Unexpected token ;","line":1,"column":11}],"suppressedMessages":[],"errorCount":1,"fatalErrorCount":1,"warningCount":0,"fixableErrorCount":0,"fixableWarningCount":0,"source":"const x = ;\n","usedDeprecatedRules":[]}]"#,
    );
    assert_eq!(eslint.format, Some(FindingFormat::Eslint));
    let finding = &eslint.findings[0];
    assert_eq!((finding.text.as_str(), finding.line), ("Parsing error: Unexpected token ;", Some(1)));
    assert_eq!(finding.severity.as_deref(), Some("error"));
}

/// `go vet` and staticcheck on one Go package with three bugs (fixtures made by go vet of Go
/// 1.19 and staticcheck 2023.1, see fixtures/findings/README.md): each format of each tool
/// locates every diagnostic where the tool put it, none weak.
#[test]
fn go_vet_and_staticcheck_are_read_in_their_json_and_their_text() {
    let expected_vet = vec![("queue/ring.go".to_owned(), 17), ("queue/ring.go".to_owned(), 18)];
    let vet_text = parse_findings(&text("go-vet.txt"));
    assert_clean(&vet_text, FindingFormat::GoVet, 2);
    assert_eq!(locations(&vet_text), expected_vet);
    assert_eq!(vet_text.findings[0].text, "self-assignment of r.head to r.head");

    let vet_json = parse_findings(&text("go-vet.json"));
    assert_clean(&vet_json, FindingFormat::GoVet, 2);
    let located: Vec<(String, u32)> = locations(&vet_json)
        .into_iter()
        .map(|(file, line)| (file.trim_start_matches("/tmp/lintgo/").to_owned(), line))
        .collect();
    assert_eq!(located, expected_vet);
    assert_eq!(vet_json.findings[0].text, "[assign] self-assignment of r.head to r.head");

    let expected = vec![
        ("queue/ring.go".to_owned(), 17),
        ("queue/ring.go".to_owned(), 18),
        ("queue/ring.go".to_owned(), 23),
    ];
    let sc_text = parse_findings(&text("staticcheck.txt"));
    assert_clean(&sc_text, FindingFormat::Staticcheck, 3);
    assert_eq!(locations(&sc_text), expected);
    assert_eq!(sc_text.findings[2].text, "[SA4008] variable in loop condition never changes");

    let sc_json = parse_findings(&text("staticcheck.jsonl"));
    assert_clean(&sc_json, FindingFormat::Staticcheck, 3);
    let items: Vec<Value> =
        text("staticcheck.jsonl").lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let expected_json: Vec<(String, u32)> = items
        .iter()
        .map(|item| {
            let line = u32::try_from(item["location"]["line"].as_u64().unwrap()).unwrap();
            (item["location"]["file"].as_str().unwrap().to_owned(), line)
        })
        .collect();
    assert_eq!(locations(&sc_json), expected_json);
    assert_eq!(sc_json.findings[0].text, "[SA4018] self-assignment of r.head to r.head");
    assert_eq!(sc_json.findings[0].severity.as_deref(), Some("error"));
    // One problem alone is one JSON document, read the same way.
    let one = parse_findings(text("staticcheck.jsonl").lines().next().unwrap());
    assert_eq!((one.format, one.findings.len()), (Some(FindingFormat::Staticcheck), 1));

    let sarif = parse_findings(&text("staticcheck.sarif"));
    assert_clean(&sarif, FindingFormat::Sarif, 3);
    assert_eq!(locations(&sarif), expected);
}
