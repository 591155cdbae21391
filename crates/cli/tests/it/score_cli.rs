//! `revcal score` run as a user runs it: a real process, real files, stdin, exit codes.

use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_revcal"));
    command
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("REVCAL_RUBRICS")
        .env_remove("RUST_LOG");
    command
}

fn revcal_in(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().expect("revcal runs")
}

fn revcal(args: &[&str]) -> Output {
    revcal_in(&root(), args)
}

/// `revcal ARGS` with `input` on standard input, run outside the repository.
fn revcal_stdin(args: &[&str], input: &str) -> Output {
    let elsewhere = tempfile::tempdir().unwrap();
    let mut child = command(elsewhere.path(), args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("revcal starts");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn report(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(output), stderr(output)))
}

/// A code_review_v1 review: every criterion at `all`, `accuracy` overridden when given.
fn review(all: f64, accuracy: Option<f64>, confidence: Option<f64>, issues: Value) -> String {
    let mut review = json!({
        "rubric_scores": {"accuracy": accuracy.unwrap_or(all), "completeness": all, "clarity": all,
                          "conciseness": all, "relevance": all},
        "issues": issues,
    });
    if let Some(confidence) = confidence {
        review["confidence"] = json!(confidence);
    }
    review.to_string()
}

#[test]
fn the_spec_example_is_7_475_capped_to_7_and_fails() {
    let output = revcal(&["score", "examples/reviews/spec_4_3_fail.json", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = report(&output);
    assert_eq!(report["verdict"], "fail");
    assert_eq!(report["weighted_score"], 7.475);
    assert_eq!(report["final_score"], 7.0);
    assert_eq!(report["accuracy_ceiling_applied"], true);
    assert_eq!(report["ceilings_applied"], json!([{"criterion": "accuracy", "below": 7.0, "cap": 7.0}]));
    assert_eq!(report["rubric"], "code_review_v1@1.0.0");
    assert_eq!(report["confidence"], 0.78);
    assert_eq!(report["blocking_issues"][0]["file"], "src/api.py");
    assert_eq!(report["suggestions"], json!([]));
    assert_eq!(report["unclear_reasons"], json!([]));
    for key in ["rubric_scores", "rationale"] {
        assert!(report.get(key).is_some(), "{key}");
    }

    let human = revcal(&["score", "examples/reviews/spec_4_3_fail.json"]);
    assert_eq!(human.status.code(), Some(1));
    let text = stdout(&human);
    let row = text.lines().find(|l| l.starts_with("accuracy")).unwrap();
    assert_eq!(
        row.split_whitespace().take(5).collect::<Vec<_>>(),
        ["accuracy", "6.5", "7.0", "0.35", "2.275"]
    );
    assert!(text.contains("accuracy 6.5 is below 7.0, so the score is capped at 7.0"), "{text}");
    assert!(text.contains("src/api.py:42: major [bug]: Missing null check"), "{text}");
    assert!(text.contains("verdict: FAIL (exit 1)"), "{text}");
    assert!(!text.contains('\x1b'), "no colour off a terminal");
}

#[test]
fn accuracy_4_caps_at_4_and_is_unclear_naming_both_thresholds() {
    let output = revcal_stdin(&["score", "--json"], &review(9.0, Some(4.0), Some(0.9), json!([])));
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let report = report(&output);
    assert_eq!((report["verdict"].as_str(), report["final_score"].as_f64()), (Some("unclear"), Some(4.0)));
    let reasons: Vec<&str> =
        report["unclear_reasons"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(reasons.iter().any(|r| r.contains("pass threshold 7.0")), "{reasons:?}");
    assert!(reasons.iter().any(|r| r.contains("`accuracy`") && r.contains("threshold 7.0")), "{reasons:?}");
}

#[test]
fn a_minor_issue_passes_as_a_suggestion() {
    let issues = json!([{"severity": "Minor", "location": "src/lib.rs:7", "message": "Name the constant"}]);
    let output = revcal_stdin(&["score", "--json", "-"], &review(9.0, None, Some(0.9), issues));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = report(&output);
    assert_eq!(report["verdict"], "pass");
    assert_eq!(report["blocking_issues"], json!([]));
    assert_eq!(report["suggestions"][0]["file"], "src/lib.rs");
    assert_eq!(report["suggestions"][0]["line"], 7);

    let human = revcal(&["score", "examples/reviews/pass.yaml"]);
    assert_eq!(human.status.code(), Some(0), "{}", stderr(&human));
    assert!(stdout(&human).contains("suggestions (1):\n  src/billing/invoice.rs:71: minor [naming]"));
}

#[test]
fn low_or_missing_confidence_is_unclear() {
    let output = revcal_stdin(&["score", "--json"], &review(9.0, None, Some(0.5), json!([])));
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        report(&output)["unclear_reasons"][0],
        "low confidence: 0.5 is below the confidence threshold 0.7"
    );

    let output = revcal_stdin(&["score"], &review(9.0, None, None, json!([])));
    assert_eq!(output.status.code(), Some(2));
    assert!(stdout(&output).contains("- missing confidence"), "{}", stdout(&output));
}

#[test]
fn unknown_or_missing_severity_fails() {
    for issue in [json!({"severity": "weird", "message": "?"}), json!({"message": "no severity"})] {
        let output = revcal_stdin(&["score", "--json"], &review(9.0, None, Some(0.9), json!([issue])));
        assert_eq!(output.status.code(), Some(1), "{issue}");
        assert_eq!(report(&output)["verdict"], "fail");
    }
}

#[test]
fn blocking_issues_and_suggestions_arrays_in_yaml() {
    let yaml = "rubric_scores: {accuracy: 9, completeness: 9, clarity: 9, conciseness: 9, relevance: 9}\n\
                confidence: 0.9\n\
                blocking_issues:\n  - location: src/db.rs:88\n    message: SQL built with format!\n\
                suggestions:\n  - {location: src/db.rs:12, message: Name the constant}\n";
    let output = revcal_stdin(&["score", "--json"], yaml);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = report(&output);
    assert_eq!(report["blocking_issues"][0]["line"], 88);
    assert_eq!(report["suggestions"][0]["severity"], "minor");
}

#[test]
fn scores_outside_the_scale_and_wrong_criteria_exit_3_naming_them() {
    let output = revcal(&["score", "examples/reviews/out_of_scale.yaml"]);
    assert_eq!(output.status.code(), Some(3));
    let message = stderr(&output);
    assert!(
        message.contains("examples/reviews/out_of_scale.yaml:3:13: field `rubric_scores.accuracy`: score 11"),
        "{message}"
    );
    assert!(message.contains("outside the scale 1..10"), "{message}");
    assert!(stdout(&output).is_empty());

    let missing = r#"{"rubric_scores": {"accuracy": 9, "completeness": 9, "clarity": 9, "conciseness": 9}, "confidence": 0.9}"#;
    let output = revcal_stdin(&["score"], missing);
    assert_eq!(output.status.code(), Some(3));
    assert!(stderr(&output).contains("field `rubric_scores.relevance`: missing"), "{}", stderr(&output));

    let unknown = review(9.0, None, Some(0.9), json!([])).replace("\"relevance\"", "\"relevence\"");
    let output = revcal_stdin(&["score"], &unknown);
    assert_eq!(output.status.code(), Some(3));
    let message = stderr(&output);
    assert!(
        message.contains("unknown criterion `relevence`") && message.contains("did you mean `relevance`"),
        "{message}"
    );
}

#[test]
fn malformed_documents_exit_3_with_line_and_column() {
    let output = revcal_stdin(&["score"], "{\n  \"rubric_scores\": {\"accuracy\": 9,}\n}");
    assert_eq!(output.status.code(), Some(3));
    assert!(
        stderr(&output).contains("error: <stdin>:2:35: not valid JSON: trailing comma"),
        "{}",
        stderr(&output)
    );

    let output = revcal_stdin(&["score"], "rubric_scores:\n  accuracy: [9\nconfidence: 0.9\n");
    assert_eq!(output.status.code(), Some(3));
    assert!(stderr(&output).contains("error: <stdin>:"), "{}", stderr(&output));
    assert!(stderr(&output).contains("not valid YAML"), "{}", stderr(&output));

    let output = revcal_stdin(&["score"], "rubric_scores:\n  accuracy: high\nconfidence: 0.9\n");
    assert_eq!(output.status.code(), Some(3));
    assert!(
        stderr(&output).contains(
            "<stdin>:2:13: field `rubric_scores.accuracy`: expected a number, found the string \"high\""
        ),
        "{}",
        stderr(&output)
    );

    let output = revcal_stdin(&["score"], "");
    assert_eq!(output.status.code(), Some(3));
    assert!(stderr(&output).contains("empty"), "{}", stderr(&output));
}

#[test]
fn missing_files_and_rubrics_exit_3_naming_them() {
    let output = revcal(&["score", "no/such/review.json"]);
    assert_eq!(output.status.code(), Some(3));
    assert!(stderr(&output).contains("cannot read the review `no/such/review.json`"), "{}", stderr(&output));

    let output = revcal(&["score", "examples/reviews/pass.yaml", "--artifact", "missing.md"]);
    assert_eq!(output.status.code(), Some(3));
    assert!(stderr(&output).contains("cannot read the artifact `missing.md`"), "{}", stderr(&output));

    let output = revcal(&["score", "examples/reviews/pass.yaml", "--rubric", "code_reveiw_v1"]);
    assert_eq!(output.status.code(), Some(3));
    assert!(stderr(&output).contains("did you mean `code_review_v1`?"), "{}", stderr(&output));
}

#[test]
fn a_negative_pattern_in_the_artifact_fails_naming_criterion_pattern_and_line() {
    let args = [
        "score",
        "examples/reviews/story_review.json",
        "--rubric",
        "user_story_quality_v1",
        "--artifact",
        "examples/reviews/story.md",
    ];
    let output = revcal(&args);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains(
            "negative criterion `no_vague_language`: pattern `and so on` matches the artifact at line 2"
        ),
        "{text}"
    );
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let report = report(&revcal(&json_args));
    assert_eq!(report["negative_matches"][0]["criterion"], "no_vague_language");
    assert_eq!(report["negative_matches"][0]["line"], 2);

    // The same review without the artifact passes, and says the patterns were not checked.
    let output = revcal(&args[..4]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(stdout(&output).contains("negative criteria not checked"), "{}", stdout(&output));
}

#[test]
fn a_council_reports_members_merged_issues_and_agreement() {
    let output = revcal(&["score", "examples/reviews/council.json", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = report(&output);
    assert_eq!(report["members"].as_array().unwrap().len(), 3);
    assert_eq!(report["members"][0]["verdict"], "pass");
    assert_eq!(report["rubric_scores"]["completeness"], 7.0, "the median");
    assert_eq!(report["agreement"], 0.82962963);
    assert_eq!(report["confidence"], 0.663703704);
    assert_eq!(report["blocking_issues"][0]["raised_by"], 2);
    assert_eq!(report["blocking_issues"][0]["severity"], "major");

    let human = stdout(&revcal(&["score", "examples/reviews/council.json"]));
    assert!(human.contains("council of 3 reviews"), "{human}");
    assert!(human.contains("(raised by 2 of 3)"), "{human}");
}

#[test]
fn a_bad_council_member_is_named_by_index() {
    let good = review(8.0, None, Some(0.8), json!([]));
    let bad = review(8.0, Some(0.0), Some(0.8), json!([]));
    let output = revcal_stdin(&["score"], &format!("[{good},\n{bad}]"));
    assert_eq!(output.status.code(), Some(3));
    let message = stderr(&output);
    assert!(
        message.contains("<stdin>:2:")
            && message.contains("council member 1: field `[1].rubric_scores.accuracy`"),
        "{message}"
    );
    assert!(message.contains("score 0"), "{message}");

    let output = revcal_stdin(&["score"], "[]");
    assert_eq!(output.status.code(), Some(3));
    assert!(stderr(&output).contains("at least one review"), "{}", stderr(&output));
}

#[test]
fn unknown_fields_warn_with_a_hint_and_the_review_is_still_scored() {
    let text = review(9.0, None, None, json!([])).replacen('{', "{\"confidense\": 0.9, ", 1);
    let output = revcal_stdin(&["score"], &text);
    assert_eq!(output.status.code(), Some(2), "the confidence is missing");
    assert!(
        stderr(&output).contains(
            "warning: <stdin>:1:2: field `confidense`: unknown field ignored (did you mean `confidence`?)"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_rubric_directory_can_be_named() {
    let dir = tempfile::tempdir().unwrap();
    let rubric = std::fs::read_to_string(root().join("rubrics/code_review_v1.yaml"))
        .unwrap()
        .replace("pass_threshold: 7.0", "pass_threshold: 9.5");
    std::fs::write(dir.path().join("code_review_v1.yaml"), rubric).unwrap();
    let pass = root().join("examples/reviews/pass.yaml");
    let output =
        revcal(&["score", pass.to_str().unwrap(), "--rubrics", dir.path().to_str().unwrap(), "--json"]);
    assert_eq!(output.status.code(), Some(2), "the rubric file, not Rust, sets the bar: {}", stderr(&output));
    assert!(report(&output)["unclear_reasons"][0].as_str().unwrap().contains("pass threshold 9.5"));
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let output = revcal(&["score", "examples/reviews/spec_4_3_fail.json", "--color", "always"]);
    assert!(stdout(&output).contains("\x1b[1;31mFAIL"), "{}", stdout(&output));
}

/// Every `$ revcal score ...` session in docs/scoring.md is a real run: the command is run
/// again and must print the same text and exit with the same code.
#[test]
fn the_worked_examples_in_the_docs_are_real_runs() {
    let doc = std::fs::read_to_string(root().join("docs/scoring.md")).unwrap();
    let mut checked = 0;
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(command) = line.strip_prefix("$ revcal ") else { continue };
        let mut expected = Vec::new();
        for line in lines.by_ref() {
            if line == "$ echo $?" {
                break;
            }
            expected.push(line);
        }
        let code: i32 = lines.next().unwrap().parse().unwrap();
        let args: Vec<&str> = command.split_whitespace().collect();
        let output = revcal(&args);
        let actual = format!("{}{}", stdout(&output), stderr(&output));
        assert_eq!(actual.trim_end(), expected.join("\n"), "docs/scoring.md: revcal {command}");
        assert_eq!(output.status.code(), Some(code), "docs/scoring.md: revcal {command}");
        checked += 1;
    }
    assert!(checked >= 6, "the worked examples are in the docs ({checked} found)");
}

#[test]
fn invalid_input_with_json_prints_the_problems_as_json() {
    let output = revcal(&["score", "examples/reviews/out_of_scale.yaml", "--json"]);
    assert_eq!(output.status.code(), Some(3));
    let report = report(&output);
    assert_eq!(report["error"], "invalid input");
    let problem = &report["problems"][0];
    assert_eq!(problem["file"], "examples/reviews/out_of_scale.yaml");
    assert_eq!((problem["line"].as_u64(), problem["column"].as_u64()), (Some(3), Some(13)));
    assert_eq!(problem["field"], "rubric_scores.accuracy");
    assert!(problem["message"].as_str().unwrap().contains("score 11"), "{problem}");
    assert!(
        stderr(&output).contains("error: examples/reviews/out_of_scale.yaml:3:13"),
        "stderr keeps the text"
    );
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let mut child = command(&root(), &["score", "examples/reviews/council.json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away before revcal writes
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1), "the verdict's exit code: {}", stderr(&output));
    assert!(!stderr(&output).contains("panicked"), "{}", stderr(&output));
}

#[test]
fn binary_and_non_utf8_files_exit_3_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("review.json"), b"{\"rubric_scores\":\n {\"accuracy\": \xff}}").unwrap();
    let output = revcal_in(dir.path(), &["score", "review.json"]);
    assert_eq!(output.status.code(), Some(3));
    assert!(
        stderr(&output)
            .contains("cannot read the review `review.json`: not UTF-8 text (invalid byte at line 2"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_security_focused_review_raising_sql_injection_fails_with_that_reason() {
    let output = revcal(&["score", "examples/reviews/focus_security.yaml"]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("final score:  9.0"), "{text}");
    assert!(text.contains("focus:        Security"), "{text}");
    assert!(text.contains("  - red flag `sql_injection` of focus area Security"), "{text}");

    let report = report(&revcal(&["score", "examples/reviews/focus_security.yaml", "--json"]));
    assert_eq!(report["verdict"], "fail");
    assert_eq!(report["final_score"], 9.0);
    assert_eq!(report["rubric_focus"], json!(["Security"]));
    assert_eq!(report["red_flags"][0]["id"], "sql_injection");
    assert_eq!(report["red_flags"][0]["in_focus"], true);
    assert_eq!(report["suggestions"][0]["red_flag"], "sql_injection");
    let reasons = report["fail_reasons"].as_array().unwrap();
    assert_eq!(reasons.len(), 1);
    assert!(reasons[0].as_str().unwrap().contains("sql_injection"), "{reasons:?}");
}

#[test]
fn the_same_review_without_focus_passes_and_lists_the_flag() {
    let output = revcal(&["score", "examples/reviews/unfocused.yaml"]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert!(
        stdout(&output).contains("sql_injection [Security: not in focus, reported only]"),
        "{}",
        stdout(&output)
    );
    let report = report(&revcal(&["score", "examples/reviews/unfocused.yaml", "--json"]));
    assert_eq!(report["verdict"], "pass");
    assert_eq!(report["red_flags"][0]["id"], "sql_injection");
    assert_eq!(report["red_flags"][0]["in_focus"], false);
    assert_eq!(report["fail_reasons"], json!([]));
}

#[test]
fn the_report_only_adds_keys_for_focus_areas() {
    let focused = report(&revcal(&["score", "examples/reviews/focus_performance.json", "--json"]));
    let plain = report(&revcal(&["score", "examples/reviews/pass.yaml", "--json"]));
    let keys = |value: &Value| value.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&focused), keys(&plain), "one shape, focused or not");
    let documented = [
        "verdict",
        "confidence",
        "rubric",
        "rubric_scores",
        "weighted_score",
        "accuracy_ceiling_applied",
        "ceilings_applied",
        "final_score",
        "blocking_issues",
        "suggestions",
        "unclear_reasons",
        "rationale",
    ];
    assert_eq!(keys(&plain)[..documented.len()], documented);
    assert_eq!(plain["rubric_focus"], json!([]));
    assert_eq!(plain["red_flags"], json!([]));
    let flags: Vec<(&str, bool)> = focused["red_flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["id"].as_str().unwrap(), f["in_focus"].as_bool().unwrap()))
        .collect();
    assert_eq!(flags, [("n_plus_one_queries", true), ("xss", false)]);
}

#[test]
fn an_unknown_red_flag_or_focus_is_invalid_input_naming_the_field() {
    let output = revcal(&["score", "examples/reviews/unknown_red_flag.yaml"]);
    assert_eq!(output.status.code(), Some(3));
    assert!(
        stderr(&output).contains(
            "error: examples/reviews/unknown_red_flag.yaml:5:13: field `red_flags[0]`: unknown red flag `sql_injections`"
        ),
        "{}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("did you mean `sql_injection`?"), "{}", stderr(&output));

    let text =
        review(9.0, None, Some(0.9), json!([{"severity": "minor", "message": "m", "red_flag": "xss"}]));
    let mut value: Value = serde_json::from_str(&text).unwrap();
    value["rubric_focus"] = json!(["Security", "Speed"]);
    let output = revcal_stdin(&["score", "-", "--json"], &value.to_string());
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let report = report(&output);
    let problem = &report["problems"][0];
    assert_eq!(problem["field"], "rubric_focus[1]");
    assert_eq!(problem["line"], 1);
    assert!(problem["column"].as_u64().is_some(), "{problem}");
    assert!(problem["message"].as_str().unwrap().contains("unknown focus area `Speed`"), "{problem}");
}

#[test]
fn a_council_merges_red_flags_and_counts_the_members() {
    let member = |extra: Value| {
        let mut value: Value = serde_json::from_str(&review(9.0, None, Some(0.9), json!([]))).unwrap();
        for (key, field) in extra.as_object().unwrap() {
            value[key] = field.clone();
        }
        value
    };
    let council = json!([
        member(json!({"rubric_focus": "security", "red_flags": ["xss"]})),
        member(json!({"issues": [{"severity": "minor", "message": "innerHTML", "red_flag": "xss"}]})),
    ]);
    let output = revcal_stdin(&["score", "-"], &council.to_string());
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    assert!(
        stdout(&output).contains("xss [Security: in focus, fails] (raised by 2 of 2)"),
        "{}",
        stdout(&output)
    );
    let output = revcal_stdin(&["score", "-", "--json"], &council.to_string());
    let report = report(&output);
    assert_eq!(report["red_flags"][0]["raised_by"], 2);
    assert_eq!(report["members"][1]["verdict"], "pass", "the second member has no focus");
}
