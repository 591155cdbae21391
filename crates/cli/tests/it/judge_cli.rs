//! `revcal judge check` and `revcal judge calibrate` against a local server speaking a
//! provider's wire format (no network, no key).

use std::collections::HashMap;
use std::process::{Command, Output};

use crate::http_server::{
    Reply, TestServer, defect_and_finding, gemini_answer, openai_answer, prompt_of, verdict_text,
};

/// Every variable that configures the built-in judge, cleared so the tests' environment
/// cannot choose one.
pub(crate) const JUDGE_VARIABLES: [&str; 9] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_BASE_URL",
    "REVCAL_JUDGE_PROVIDER",
    "REVCAL_JUDGE_MODEL",
];

fn revcal(args: &[&str], env: &[(&str, String)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_revcal"));
    command.args(args).env_remove("RUST_LOG");
    for variable in JUDGE_VARIABLES {
        command.env_remove(variable);
    }
    command.envs(env.iter().map(|(k, v)| (*k, v.as_str())));
    command.output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn gemini_env(server: &TestServer) -> Vec<(&'static str, String)> {
    vec![("GEMINI_API_KEY", "test-key".into()), ("GEMINI_BASE_URL", server.url())]
}

#[test]
fn judge_calibrate_through_a_judge_that_answers_from_the_labels_agrees_fully() {
    let labels: HashMap<(String, String), bool> = revcal_judge::shipped_judge_cases()
        .unwrap()
        .into_iter()
        .map(|case| ((case.plant.defect, case.finding.text), case.expected))
        .collect();
    let count = labels.len();
    let server = TestServer::start(move |_, request| {
        let key = defect_and_finding(&prompt_of(request)).expect("both blocks");
        Reply::new(200, gemini_answer(&verdict_text(labels[&key]), "STOP"))
    });
    let output = revcal(&["judge", "calibrate", "--no-judge-cache", "--json"], &gemini_env(&server));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let measured: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(measured["agreement"], 1.0);
    assert_eq!(measured["falseMatchRate"], 0.0);
    assert_eq!(measured["cases"].as_u64(), Some(count as u64));
    assert!(stderr(&output).contains("agreement    1.00"), "{}", stderr(&output));
    assert!(stderr(&output).contains("gemini:gemini-2.5-flash-lite"), "{}", stderr(&output));
    assert_eq!(server.requests().len(), count);
}

#[test]
fn judge_calibrate_reports_the_false_match_rate_of_a_judge_that_always_says_match() {
    let server = TestServer::start(|_, _| Reply::new(200, openai_answer(&verdict_text(true), "stop")));
    let env = vec![("OPENAI_BASE_URL", format!("{}/v1", server.url()))];
    let output = revcal(&["judge", "calibrate", "--no-judge-cache"], &env);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("FAIL"), "{text}");
    assert!(text.contains("false match  1.00"), "{text}");
    assert!(text.contains("false miss   0.00"), "{text}");
    assert!(text.contains("wrong") && text.contains("-echo"), "the echo cases are listed: {text}");
}

#[test]
fn judge_calibrate_takes_a_judge_command_and_a_cases_file() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases.yaml");
    std::fs::write(
        &cases,
        "- id: one\n  kind: echo\n  language: rust\n  expected: false\n  plant: {file: a.rs, line: 1, category: arithmetic, operator: o, defect: d, original: a, mutated: b}\n  finding: {file: a.rs, line: 1, text: t, evidence: null}\n",
    )
    .unwrap();
    let cases = cases.display().to_string();
    let no = revcal(
        &[
            "judge",
            "calibrate",
            "--cases",
            &cases,
            "--judge-cmd",
            "cat >/dev/null; echo '{\"match\": false}'",
        ],
        &[],
    );
    assert_eq!(no.status.code(), Some(0), "{}{}", stdout(&no), stderr(&no));
    let yes = revcal(
        &["judge", "calibrate", "--cases", &cases, "--judge-cmd", "cat >/dev/null; echo '{\"match\": true}'"],
        &[],
    );
    assert_eq!(yes.status.code(), Some(2));
    let broken =
        revcal(&["judge", "calibrate", "--cases", &cases, "--judge-cmd", "cat >/dev/null; echo nope"], &[]);
    assert_eq!(broken.status.code(), Some(1), "a judge error is an operational error");
    assert!(stdout(&broken).contains("errors       1"), "{}", stdout(&broken));
}

#[test]
fn judge_check_prints_provider_model_and_latency() {
    let server = TestServer::start(|_, _| Reply::new(200, gemini_answer(&verdict_text(true), "STOP")));
    let output = revcal(&["judge", "check"], &gemini_env(&server));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("gemini gemini-2.5-flash-lite"), "{text}");
    assert!(text.contains("latency") && text.contains(" ms"), "{text}");
    assert!(text.contains(&server.url()), "{text}");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn without_a_judge_check_and_calibrate_exit_1_with_the_setup_hint() {
    for args in [&["judge", "check"][..], &["judge", "calibrate"]] {
        let output = revcal(args, &[]);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        assert!(stderr(&output).contains("ANTHROPIC_API_KEY"), "{}", stderr(&output));
    }
    let output = revcal(&["judge", "calibrate", "--min-agreement", "2"], &[]);
    assert_eq!(output.status.code(), Some(1), "a bad value is a usage error, exit 1");
    let output = revcal(&["judge", "check", "--judge-provider", "mistral"], &[]);
    assert_eq!(output.status.code(), Some(1), "an unknown provider is a usage error, exit 1");
}

#[test]
fn judge_check_reports_a_rejected_key() {
    let server = TestServer::start(|_, _| Reply::new(403, r#"{"error": {"message": "API key not valid"}}"#));
    let output = revcal(&["judge", "check"], &gemini_env(&server));
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("GEMINI_API_KEY"), "{}", stderr(&output));
}

/// The repository's rubric library (it holds user_story_quality_v1's calibration dataset).
fn rubrics_dir() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rubrics").display().to_string()
}

/// The human scores of each artifact of user_story_quality_v1's dataset.
fn human_scores() -> HashMap<String, serde_json::Value> {
    let path = std::path::Path::new(&rubrics_dir()).join("calibration/user_story_quality_v1.jsonl");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let example: serde_json::Value = serde_json::from_str(line).unwrap();
            (example["artifact"].as_str().unwrap().to_owned(), example["scores"].clone())
        })
        .collect()
}

/// The artifact in a rubric-scoring prompt (the text of its fence).
fn artifact_of(prompt: &str) -> String {
    crate::http_server::fenced_after(prompt, "ARTIFACT\n", 0).expect("a fenced artifact")
}

#[test]
fn rubric_calibrate_correlates_the_providers_scores_with_the_human_labels() {
    let humans = human_scores();
    let count = humans.len();
    let server = TestServer::start(move |_, request| {
        let prompt = prompt_of(request);
        assert!(
            prompt.contains("CRITERION clarity") && prompt.contains("anchor"),
            "the rubric is in the prompt"
        );
        let scores = humans[&artifact_of(&prompt)].to_string();
        Reply::new(200, openai_answer(&serde_json::to_string(&scores).unwrap(), "stop"))
    });
    let env = vec![("OPENAI_BASE_URL", format!("{}/v1", server.url()))];
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().display().to_string();
    let args = [
        "rubric",
        "calibrate",
        "user_story_quality_v1",
        "--rubrics",
        &rubrics_dir(),
        "--judge-cache",
        &cache_dir,
    ];
    let output = revcal(&args, &env);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("PASS") && text.contains("overall") && text.contains(" 1.00"), "{text}");
    for criterion in ["clarity", "specificity", "scope", "testability", "independence"] {
        assert!(text.contains(criterion), "{text}");
    }
    assert_eq!(server.requests().len(), count);
    // Through the same cache: a rerun asks nothing.
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let rerun = revcal(&json_args, &env);
    let document: serde_json::Value = serde_json::from_str(&stdout(&rerun)).unwrap();
    assert_eq!(document["overall"], 1.0);
    assert_eq!(document["judge"]["cacheHits"].as_u64(), Some(count as u64));
    assert_eq!(server.requests().len(), count);
}

#[test]
fn rubric_calibrate_fails_below_the_target_and_errs_on_scores_off_the_scale() {
    // Scores that disagree with the humans: the reverse of each human score.
    let humans = human_scores();
    let server = TestServer::start(move |_, request| {
        let human = &humans[&artifact_of(&prompt_of(request))];
        let reversed: serde_json::Map<String, serde_json::Value> = human
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::json!(6.0 - v.as_f64().unwrap())))
            .collect();
        let text = serde_json::Value::Object(reversed).to_string();
        Reply::new(200, openai_answer(&serde_json::to_string(&text).unwrap(), "stop"))
    });
    let env = vec![("OPENAI_BASE_URL", format!("{}/v1", server.url()))];
    let args =
        ["rubric", "calibrate", "user_story_quality_v1", "--rubrics", &rubrics_dir(), "--no-judge-cache"];
    let output = revcal(&args, &env);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    assert!(
        stdout(&output).contains("FAIL") && stdout(&output).contains("below target"),
        "{}",
        stdout(&output)
    );

    let server = TestServer::start(|_, _| {
        let text = r#"{"clarity": 9, "specificity": 3, "scope": 3, "testability": 3, "independence": 3}"#;
        Reply::new(200, openai_answer(&serde_json::to_string(text).unwrap(), "stop"))
    });
    let env = vec![("OPENAI_BASE_URL", format!("{}/v1", server.url()))];
    let output = revcal(&args, &env);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("outside the scale"), "{}", stderr(&output));
    assert_eq!(server.requests().len(), 1, "stops at the first bad answer");
}

#[test]
fn the_judge_goes_through_the_proxy_the_environment_names() {
    let server = TestServer::start(|_, request| {
        if request.method == "CONNECT" {
            // A tunnel cannot be faked by this server; the recorded request is what counts.
            return Reply::new(502, "");
        }
        Reply::new(200, openai_answer(&verdict_text(true), "stop"))
    });
    let env = vec![
        ("OPENAI_API_KEY", "test-key".to_owned()),
        ("OPENAI_BASE_URL", "http://judge.example/v1".to_owned()),
        ("HTTPS_PROXY", server.url()),
        ("HTTP_PROXY", server.url()),
        ("ALL_PROXY", server.url()),
        ("NO_PROXY", String::new()),
    ];
    let output = revcal(&["judge", "check", "--judge-retries", "0"], &env);
    let requests = server.requests();
    assert!(!requests.is_empty(), "the proxy saw the request: {}", stderr(&output));
    let target = format!("{} {}", requests[0].method, requests[0].path);
    assert!(target.contains("judge.example"), "{target}");
}

#[test]
fn a_judge_on_this_machine_is_reached_directly_whatever_the_proxy() {
    let server = TestServer::start(|_, _| Reply::new(200, openai_answer(&verdict_text(true), "stop")));
    let proxy = TestServer::start(|_, _| Reply::new(502, ""));
    let env = vec![
        ("OPENAI_BASE_URL", format!("{}/v1", server.url())),
        ("HTTPS_PROXY", proxy.url()),
        ("HTTP_PROXY", proxy.url()),
        ("ALL_PROXY", proxy.url()),
    ];
    let output = revcal(&["judge", "check"], &env);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(server.requests().len(), 1);
    assert!(proxy.requests().is_empty());
}

#[test]
fn a_host_in_no_proxy_is_not_sent_to_the_proxy() {
    let proxy = TestServer::start(|_, _| Reply::new(200, openai_answer(&verdict_text(true), "stop")));
    let env = vec![
        ("OPENAI_API_KEY", "test-key".to_owned()),
        ("OPENAI_BASE_URL", "http://judge.invalid/v1".to_owned()),
        ("HTTPS_PROXY", proxy.url()),
        ("HTTP_PROXY", proxy.url()),
        ("ALL_PROXY", proxy.url()),
        ("NO_PROXY", "localhost,judge.invalid".to_owned()),
    ];
    let output = revcal(&["judge", "check", "--judge-retries", "0"], &env);
    // `.invalid` never resolves: going direct fails, and the proxy heard nothing.
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(proxy.requests().is_empty(), "NO_PROXY bypasses the proxy: {:?}", proxy.requests().len());
    assert!(stderr(&output).contains("judge.invalid"), "{}", stderr(&output));
}

/// `revcal judge check` against a base URL that redirects: for every provider, the key is
/// never sent to the other host, the check fails (exit 1) naming the status and the host,
/// and nothing says `ok`.
#[test]
fn judge_check_never_follows_a_redirect_with_the_key() {
    for (provider, key_variable, base_variable, path) in [
        ("anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", ""),
        ("openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1"),
        ("gemini", "GEMINI_API_KEY", "GEMINI_BASE_URL", ""),
    ] {
        let elsewhere = TestServer::start_on("127.0.0.2", |_, _| {
            Reply::new(200, openai_answer(&verdict_text(true), "stop"))
        });
        let location = format!("{}/collect", elsewhere.url());
        let server = TestServer::start(move |_, _| Reply::new(302, "").header("location", &location));
        let env = vec![
            (key_variable, "sk-redirect-test-key".to_owned()),
            (base_variable, format!("{}{path}", server.url())),
            ("REVCAL_JUDGE_PROVIDER", provider.to_owned()),
        ];
        let output = revcal(&["judge", "check", "--no-judge-cache"], &env);
        let (out, err) = (stdout(&output), stderr(&output));
        assert_eq!(output.status.code(), Some(1), "{provider}: {out}{err}");
        assert!(!out.contains("ok"), "{provider}: {out}");
        assert!(err.contains("302") && err.contains(&elsewhere.host()), "{provider}: {err}");
        assert!(!err.contains("sk-redirect-test-key"), "{err}");
        assert!(elsewhere.requests().is_empty(), "{provider}: the other host received a request");
        assert_eq!(server.requests().len(), 1, "{provider}");
    }
}

/// What llama-cpp-python 0.3.36's server answers to `response_format.type: json_schema`.
const JSON_SCHEMA_REFUSED: &str = r#"{"error":{"message":"1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}","type":"internal_server_error","param":null,"code":null}}"#;

fn response_format_type(request: &crate::http_server::Recorded) -> Option<String> {
    request.json().pointer("/response_format/type").and_then(|t| t.as_str()).map(str::to_owned)
}

#[test]
fn judge_commands_adapt_to_a_server_that_only_accepts_json_object() {
    let server = TestServer::start(|_, request| match response_format_type(request).as_deref() {
        Some("json_schema") => Reply::new(500, JSON_SCHEMA_REFUSED),
        _ => Reply::new(200, openai_answer(&verdict_text(true), "stop")),
    });
    let env = vec![("OPENAI_BASE_URL", format!("{}/v1", server.url()))];
    let output = revcal(&["judge", "check"], &env);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let kinds: Vec<_> = server.requests().iter().map(response_format_type).collect();
    assert_eq!(kinds, [Some("json_schema".to_owned()), Some("json_object".to_owned())]);
    // Asked explicitly, json-schema fails at once and says what to do.
    let output = revcal(&["judge", "check", "--structured-output", "json-schema"], &env);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("--structured-output auto"), "{}", stderr(&output));
    assert_eq!(server.requests().len(), 3, "not retried");
    // prompt sends no response_format at all.
    let output = revcal(&["judge", "check", "--structured-output", "prompt"], &env);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let last = server.requests().pop().unwrap();
    assert!(last.json().get("response_format").is_none());
    assert!(prompt_of(&last).contains("JSON Schema"), "{}", prompt_of(&last));
}

#[test]
fn structured_output_other_than_auto_is_refused_for_anthropic_and_gemini() {
    let server = TestServer::start(|_, _| Reply::new(200, gemini_answer(&verdict_text(true), "STOP")));
    let output = revcal(&["judge", "check", "--structured-output", "json-object"], &gemini_env(&server));
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("applies to OpenAI-compatible servers"), "{}", stderr(&output));
    assert!(server.requests().is_empty());
    let output = revcal(&["judge", "check", "--structured-output", "grammar"], &gemini_env(&server));
    assert_eq!(output.status.code(), Some(1), "an unknown mode is a usage error");
}

#[test]
fn every_command_that_builds_an_llm_judge_takes_structured_output() {
    for command in
        [&["judge", "check"][..], &["judge", "calibrate"], &["calibrate"], &["rubric", "calibrate"]]
    {
        let mut args = command.to_vec();
        args.push("--help");
        let help = stdout(&revcal(&args, &[]));
        assert!(help.contains("--structured-output <MODE>"), "{command:?}: {help}");
        assert!(help.contains("json-object"), "{command:?}");
    }
    // rubric calibrate asks its nested question in the mode given.
    let humans = human_scores();
    let server = TestServer::start(move |_, request| {
        let scores = humans[&artifact_of(&prompt_of(request))].to_string();
        Reply::new(200, openai_answer(&serde_json::to_string(&scores).unwrap(), "stop"))
    });
    let env = vec![("OPENAI_BASE_URL", format!("{}/v1", server.url()))];
    let args = [
        "rubric",
        "calibrate",
        "user_story_quality_v1",
        "--rubrics",
        &rubrics_dir(),
        "--no-judge-cache",
        "--structured-output",
        "json-object",
    ];
    let output = revcal(&args, &env);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let requests = server.requests();
    assert!(!requests.is_empty());
    for request in &requests {
        assert_eq!(response_format_type(request).as_deref(), Some("json_object"));
        assert!(request.json()["response_format"]["schema"]["required"].is_array());
    }
}

fn always_match_openai() -> (TestServer, Vec<(&'static str, String)>) {
    let server = TestServer::start(|_, _| Reply::new(200, openai_answer(&verdict_text(true), "stop")));
    let env = vec![("OPENAI_BASE_URL", format!("{}/v1", server.url()))];
    (server, env)
}

#[test]
fn judge_calibrate_asks_a_deterministic_sample_and_says_it_is_one() {
    let (server, env) = always_match_openai();
    let args = ["judge", "calibrate", "--no-judge-cache", "--sample", "12", "--seed", "3", "--json"];
    let output = revcal(&args, &env);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let measured: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(measured["cases"], 12);
    assert_eq!(measured["sample"], serde_json::json!({"cases": 12, "of": 103, "seed": 3}));
    assert_eq!(
        (measured["judge"]["calls"].as_u64(), measured["judge"]["inputTokens"].as_u64()),
        (Some(12), Some(12 * 90))
    );
    assert!(stderr(&output).contains("sample       12 of 103 cases, seed 3"), "{}", stderr(&output));
    let first: Vec<String> =
        server.requests().iter().map(prompt_of).map(|p| defect_and_finding(&p).unwrap().1).collect();
    assert_eq!(first.len(), 12);
    revcal(&args, &env);
    let second: Vec<String> =
        server.requests()[12..].iter().map(prompt_of).map(|p| defect_and_finding(&p).unwrap().1).collect();
    assert_eq!(first, second, "same seed, same cases");
    let output = revcal(&["judge", "calibrate", "--seed", "3"], &env);
    assert_eq!(output.status.code(), Some(1), "--seed without --sample is a usage error");
}

#[test]
fn judge_calibrate_shows_progress_per_case_off_a_terminal() {
    let (_server, env) = always_match_openai();
    let output = revcal(&["judge", "calibrate", "--no-judge-cache", "--sample", "3"], &env);
    let err = stderr(&output);
    assert!(
        err.contains("judging 3 cases (a sample of 103 with seed 0) with openai:gpt-4.1-mini (3)"),
        "{err}"
    );
    assert!(err.lines().any(|line| line.starts_with("revcal:") && line.ends_with(" 3/3")), "{err}");
    let quiet = revcal(&["judge", "calibrate", "--no-judge-cache", "--sample", "3", "--quiet"], &env);
    assert!(!stderr(&quiet).contains("revcal:"), "{}", stderr(&quiet));
}

#[test]
fn a_budget_that_stops_judge_calibrate_prints_what_was_measured_and_says_it_is_partial() {
    let (server, env) = always_match_openai();
    let output = revcal(&["judge", "calibrate", "--no-judge-cache", "--max-judge-calls", "5"], &env);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("PARTIAL"), "{text}");
    assert!(text.contains("stopped after 5 of 103 cases"), "{text}");
    assert!(text.contains("agreement") && text.contains("5 cases"), "{text}");
    assert!(stderr(&output).contains("budget of 5 calls"), "{}", stderr(&output));
    assert_eq!(server.requests().len(), 5);
    let output =
        revcal(&["judge", "calibrate", "--no-judge-cache", "--max-judge-calls", "5", "--json"], &env);
    let measured: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!((measured["cases"].as_u64(), measured["unasked"].as_u64()), (Some(5), Some(98)));
}

#[test]
fn a_rubric_calibration_stopped_by_an_error_prints_the_partial_correlations() {
    let humans = human_scores();
    let total = humans.len();
    let server = TestServer::start(move |index, request| {
        if index >= 4 {
            return Reply::new(401, r#"{"error": {"message": "key revoked"}}"#);
        }
        let scores = humans[&artifact_of(&prompt_of(request))].to_string();
        Reply::new(200, openai_answer(&serde_json::to_string(&scores).unwrap(), "stop"))
    });
    let env = vec![("OPENAI_BASE_URL", format!("{}/v1", server.url()))];
    let args =
        ["rubric", "calibrate", "user_story_quality_v1", "--rubrics", &rubrics_dir(), "--no-judge-cache"];
    let output = revcal(&args, &env);
    assert_eq!(output.status.code(), Some(2), "{}{}", stdout(&output), stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("PARTIAL"), "{text}");
    assert!(text.contains(&format!("stopped after 4 of {total} artifacts")), "{text}");
    assert!(text.contains("overall"), "{text}");
    let err = stderr(&output);
    assert!(err.contains("key revoked"), "{err}");
    assert!(err.contains(&format!("scoring {total} artifacts of user_story_quality_v1")), "{err}");
}

#[test]
fn judge_check_without_a_judge_does_not_suggest_a_flag_it_does_not_take() {
    let output = revcal(&["judge", "check"], &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(!stderr(&output).contains("--judge-cmd"), "{}", stderr(&output));
    let output = revcal(&["judge", "check", "--judge-cmd", "true"], &[]);
    assert_eq!(output.status.code(), Some(1), "and it refuses the flag as a usage error");
}
