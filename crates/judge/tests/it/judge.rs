//! The command judge against real shell commands: the request on stdin, the verdict on stdout,
//! and every failure an error, never a match.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use revcal_findings::{Finding, FindingFormat};
use revcal_judge::{CommandJudge, Judge, JudgeError, JudgeRequest, JudgedPlant};

/// A plant as a judge receives it.
fn plant() -> JudgedPlant {
    JudgedPlant::new(
        "src/window.rs",
        12,
        "off-by-one",
        "relational-boundary",
        "    while i < buf.len() {",
        "    while i <= buf.len() {",
    )
    .with_defect("`<` became `<=`: the loop reads one element past the end of the buffer")
}

fn finding(text: &str) -> Finding {
    Finding {
        source: FindingFormat::Findings,
        file: Some("src/window.rs".into()),
        line: Some(13),
        text: text.into(),
        severity: Some("high".into()),
        evidence: Some("while i <= buf.len()".into()),
        repro: None,
        weak: false,
    }
}

fn request(text: &str) -> JudgeRequest {
    JudgeRequest::new(plant(), &finding(text))
}

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/calibrate/judges")
}

#[test]
fn the_request_arrives_on_stdin_as_json_and_the_verdict_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("request.json");
    let judge = CommandJudge::new(format!(
        "cat > '{}'; echo '{{\"match\": true, \"reason\": \"same bug\"}}'",
        saved.display()
    ));
    let request = request("reads one past the end");
    assert!(judge.judge(&request).unwrap());

    let received: serde_json::Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert_eq!(received, serde_json::to_value(&request).unwrap());
    assert_eq!(received["plant"]["defect"], plant().defect);
    assert_eq!(received["plant"]["mutated"], "    while i <= buf.len() {");
    assert_eq!(received["finding"]["line"], 13);
    assert_eq!(received["finding"]["evidence"], "while i <= buf.len()");
    let keys: Vec<&str> = received["plant"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["file", "line", "category", "operator", "defect", "original", "mutated"]);
    let keys: Vec<&str> = received["finding"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["file", "line", "text", "evidence"]);
}

#[test]
fn a_false_verdict_is_not_a_match() {
    let judge = CommandJudge::new(r#"cat >/dev/null; printf '  {"match": false}\n'"#);
    assert!(!judge.judge(&request("x")).unwrap());
}

#[test]
fn garbage_is_an_error_never_a_match() {
    let judge = CommandJudge::new("cat >/dev/null; echo 'yes, it matches'");
    let error = judge.judge(&request("x")).unwrap_err();
    assert!(matches!(error, JudgeError::NotJson { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("yes, it matches") && message.contains("not JSON"), "{message}");
}

#[test]
fn json_without_a_boolean_match_is_an_error() {
    for answer in [r#"{"match": "true"}"#, r#"{"verdict": true}"#, "[true]", r#"{"match": 1}"#, "true"] {
        let judge = CommandJudge::new(format!("cat >/dev/null; echo '{answer}'"));
        let error = judge.judge(&request("x")).unwrap_err();
        assert!(matches!(error, JudgeError::NoVerdict { .. }), "{answer}: {error:?}");
    }
}

#[test]
fn empty_output_is_an_error() {
    let judge = CommandJudge::new("cat >/dev/null");
    assert!(matches!(judge.judge(&request("x")), Err(JudgeError::NotJson { .. })));
}

#[test]
fn a_non_zero_exit_is_an_error_even_with_a_match_on_stdout() {
    let judge =
        CommandJudge::new(r#"cat >/dev/null; echo '{"match": true}'; echo 'rate limited' >&2; exit 1"#);
    let error = judge.judge(&request("x")).unwrap_err();
    match &error {
        JudgeError::Exit { status, stderr, .. } => {
            assert_eq!(status, "exit code 1");
            assert_eq!(stderr.trim(), "rate limited");
        }
        other => panic!("expected an exit error, got {other:?}"),
    }
    assert!(error.to_string().contains("rate limited"));
}

#[test]
fn a_missing_command_is_an_exit_error() {
    let judge = CommandJudge::new("no-such-judge-command-revcal");
    match judge.judge(&request("x")).unwrap_err() {
        JudgeError::Exit { status, stderr, .. } => {
            assert_eq!(status, "exit code 127");
            assert!(stderr.contains("not found"), "{stderr}");
        }
        other => panic!("expected an exit error, got {other:?}"),
    }
}

#[test]
fn a_hanging_judge_times_out_and_its_process_group_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    // The grandchild `sleep` would keep running if only `sh` were killed.
    let judge = CommandJudge::new(format!("sleep 30 & echo $! > '{}'; wait", pid_file.display()))
        .timeout(Duration::from_millis(500));
    let started = Instant::now();
    let error = judge.judge(&request("x")).unwrap_err();
    assert!(matches!(error, JudgeError::Timeout { .. }), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    assert!(error.to_string().contains("0.5s"), "{error}");

    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    assert!(process_gone(&pid), "the judge's child process {pid} survived the timeout");
}

#[test]
fn an_answer_counts_once_the_judge_exits_and_its_leftover_children_are_killed() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    // The background `sleep` inherits stdout and would hold the pipe open for 30 s.
    let judge = CommandJudge::new(format!(
        "cat >/dev/null; sleep 30 & echo $! > '{}'; echo '{{\"match\": true}}'",
        pid_file.display()
    ))
    .timeout(Duration::from_secs(20));
    let started = Instant::now();
    assert!(judge.judge(&request("x")).unwrap());
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    assert!(process_gone(&pid), "the leftover child {pid} survived");
}

/// Whether a process is gone (or a zombie), polling for up to two seconds.
fn process_gone(pid: &str) -> bool {
    (0..100).any(|_| {
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.split(") ").nth(1).is_some_and(|rest| rest.starts_with('Z')));
        if alive {
            std::thread::sleep(Duration::from_millis(20));
        }
        !alive
    })
}

#[test]
fn a_judge_that_floods_stdout_is_stopped_at_the_limit() {
    let judge = CommandJudge::new("cat >/dev/null; yes '{\"match\": true}'")
        .output_limit(4096)
        .timeout(Duration::from_secs(20));
    let started = Instant::now();
    let error = judge.judge(&request("x")).unwrap_err();
    assert!(matches!(error, JudgeError::OutputTooLarge { limit: 4096, .. }), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
}

#[test]
fn a_judge_that_ignores_a_large_request_still_answers() {
    let judge = CommandJudge::new(r#"echo '{"match": true}'"#);
    let big = "x".repeat(1 << 20);
    assert!(judge.judge(&request(&big)).unwrap());
}

#[test]
fn the_working_directory_can_be_set() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("verdict.json"), r#"{"match": true}"#).unwrap();
    let judge = CommandJudge::new("cat >/dev/null; cat verdict.json").current_dir(dir.path());
    assert!(judge.judge(&request("x")).unwrap());
    assert_eq!(judge.name(), "judge-cmd");
    assert_eq!(judge.command(), "cat >/dev/null; cat verdict.json");
}

#[test]
fn a_shared_judge_works_from_several_threads() {
    let judge: Box<dyn Judge> = Box::new(CommandJudge::new(
        r#"if grep -q 'MATCHME'; then echo '{"match": true}'; else echo '{"match": false}'; fi"#,
    ));
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let judge = &judge;
                scope.spawn(move || {
                    let text = if i % 2 == 0 { "MATCHME: reads past the end" } else { "style nit" };
                    (i, judge.judge(&request(text)).unwrap())
                })
            })
            .collect();
        for handle in handles {
            let (i, verdict) = handle.join().unwrap();
            assert_eq!(verdict, i % 2 == 0);
        }
    });
}

#[test]
fn the_defect_sentence_example_judge_matches_the_oracle_and_not_the_echo() {
    let script = examples_dir().join("defect-sentence.sh");
    let judge = CommandJudge::new(format!("sh '{}'", script.display()));
    let oracle = request(&format!("Planted defect: {}", plant().defect));
    assert!(judge.judge(&oracle).unwrap());
    let echo = request("src/window.rs:12 changed: `    while i <= buf.len() {`");
    assert!(!judge.judge(&echo).unwrap());
}

#[test]
fn the_keyword_example_judge_matches_on_category_words() {
    let script = examples_dir().join("category-keywords.sh");
    let judge = CommandJudge::new(format!("sh '{}'", script.display()));
    assert!(judge.judge(&request("This is an off by one: the loop runs once too often")).unwrap());
    assert!(!judge.judge(&request("Consider renaming this variable")).unwrap());
}

#[test]
fn requests_round_trip_through_json() {
    let request = request("text with \"quotes\" and\nnewlines");
    let json = serde_json::to_string(&request).unwrap();
    let back: JudgeRequest = serde_json::from_str(&json).unwrap();
    assert_eq!(back, request);
}

/// A judge that records how often it was asked, to check that wrappers forward.
struct Counting(std::sync::atomic::AtomicUsize);

impl Judge for Counting {
    fn name(&self) -> &str {
        "counting"
    }
    fn judge(&self, request: &JudgeRequest) -> Result<bool, JudgeError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(request.finding.text.contains("match"))
    }
}

fn ask<J: Judge>(judge: J, text: &str) -> (String, bool) {
    (judge.name().to_string(), judge.judge(&request(text)).unwrap())
}

#[test]
fn references_boxes_and_arcs_of_judges_are_judges() {
    let counting = std::sync::Arc::new(Counting(std::sync::atomic::AtomicUsize::new(0)));
    assert_eq!(ask(&*counting, "a match"), ("counting".to_string(), true));
    assert_eq!(ask(std::sync::Arc::clone(&counting), "nothing"), ("counting".to_string(), false));
    let boxed: Box<dyn Judge> = Box::new(Counting(std::sync::atomic::AtomicUsize::new(0)));
    assert_eq!(ask(boxed, "match"), ("counting".to_string(), true));
    assert_eq!(counting.0.load(std::sync::atomic::Ordering::SeqCst), 2);
}

/// The examples in docs/findings.md are real: every JSON block is a recognised findings document
/// with findings, or the judge request and answer of the `--judge-cmd` protocol.
#[test]
fn the_examples_in_the_findings_reference_parse_as_documented() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/findings.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let mut formats = std::collections::BTreeSet::new();
    let mut judge_requests = 0;
    for block in doc.split("```json\n").skip(1) {
        let block = block.split("\n```").next().unwrap();
        if let Ok(request) = serde_json::from_str::<JudgeRequest>(block) {
            assert_eq!(request.plant.category, "off-by-one");
            judge_requests += 1;
            continue;
        }
        if block.trim() == r#"{"match": true}"# {
            continue;
        }
        let parsed = revcal_findings::parse_findings(block);
        let format = parsed.format.unwrap_or_else(|| panic!("not recognised:\n{block}"));
        assert!(!parsed.findings.is_empty(), "no findings in:\n{block}");
        assert!(parsed.findings.iter().all(|f| f.file.is_some() && f.line.is_some()), "{block}");
        formats.insert(format);
    }
    assert_eq!(judge_requests, 1);
    let expected = [
        revcal_findings::FindingFormat::Findings,
        revcal_findings::FindingFormat::CodeReview,
        revcal_findings::FindingFormat::Sarif,
        revcal_findings::FindingFormat::Rdjson,
        revcal_findings::FindingFormat::GitlabCodeQuality,
    ];
    assert_eq!(formats, expected.into_iter().collect());
}
