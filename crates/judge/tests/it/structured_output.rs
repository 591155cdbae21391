//! Structured output that adapts to what an OpenAI-compatible server accepts: `json_schema`,
//! else `json_object` with the schema (llama.cpp's servers), else the schema in the prompt;
//! the mode found once per base URL. Against real HTTP servers on 127.0.0.1 that refuse what
//! the servers named in docs/judge.md refuse, with the bodies they send.

use std::time::Duration;

use serde_json::{Value, json};

use revcal_judge::{
    Judge, JudgeConfig, JudgeError, JudgeRequest, JudgedPlant, LlmJudge, Provider, StructuredOutput,
};

use crate::http_server::{Recorded, Reply, TestServer, openai_answer, verdict_text};

/// What llama-cpp-python 0.3.36's server answers to `response_format.type: json_schema`
/// (measured: HTTP 500, the validation error of its request model in the message).
const LLAMA_CPP_PYTHON_REFUSAL: &str = r#"{"error":{"message":"1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"/venv/lib/python3.11/site-packages/llama_cpp/server/app.py\", line 376, in create_chat_completion\n    POST /v1/chat/completions","type":"internal_server_error","param":null,"code":null}}"#;

/// FastAPI's own answer to a request field its model refuses (HTTP 422).
const FASTAPI_REFUSAL: &str = r#"{"detail":[{"type":"extra_forbidden","loc":["body","response_format"],"msg":"Extra inputs are not permitted","input":{"type":"json_object"}}]}"#;

fn request() -> JudgeRequest {
    let plant = JudgedPlant::new("src/a.rs", 3, "off-by-one", "relational-boundary", "i < n", "i <= n")
        .with_defect("`<` became `<=`: one past the end");
    let findings = json!([{"file": "src/a.rs", "line": 3, "message": "reads one past the end"}]);
    JudgeRequest::new(plant, &revcal_findings::parse_findings(&findings.to_string()).findings[0])
}

fn other_request() -> JudgeRequest {
    let plant = JudgedPlant::new("src/b.rs", 9, "logic", "negation", "if ok {", "if !ok {")
        .with_defect("the condition is negated");
    let findings = json!([{"file": "src/b.rs", "line": 9, "message": "the check is inverted"}]);
    JudgeRequest::new(plant, &revcal_findings::parse_findings(&findings.to_string()).findings[0])
}

fn config(server: &TestServer) -> JudgeConfig {
    let mut config = JudgeConfig::new(Provider::OpenAi, None).with_base_url(format!("{}/v1", server.url()));
    config.backoff = Duration::from_millis(10);
    config.retries = 2;
    config.timeout = Duration::from_secs(5);
    config
}

fn format_type(request: &Recorded) -> Option<String> {
    request.json().pointer("/response_format/type").and_then(Value::as_str).map(str::to_owned)
}

fn system_of(request: &Recorded) -> String {
    request.json().pointer("/messages/0/content").and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// llama-cpp-python's server: `json_object` (with a `schema`, which it turns into a grammar)
/// is accepted, `json_schema` refused.
fn json_object_only() -> TestServer {
    TestServer::start(|_, request| match format_type(request).as_deref() {
        Some("json_schema") => Reply::new(500, LLAMA_CPP_PYTHON_REFUSAL),
        _ => Reply::new(200, openai_answer(&verdict_text(true), "stop")),
    })
}

#[test]
fn a_server_that_only_accepts_json_object_works_in_auto() {
    let server = json_object_only();
    let judge = LlmJudge::new(config(&server));
    assert_eq!(judge.config().structured_output(), StructuredOutput::Auto, "auto is the default");
    assert!(judge.judge(&request()).unwrap());
    let sent = server.requests();
    assert_eq!(
        sent.iter().map(format_type).collect::<Vec<_>>(),
        [Some("json_schema".into()), Some("json_object".into())]
    );
    let body = sent[1].json();
    assert_eq!(body["response_format"]["schema"]["required"], json!(["match", "reason"]));
    assert!(system_of(&sent[1]).contains(r#""required":["match","reason"]"#), "{}", system_of(&sent[1]));
    assert!(
        !system_of(&sent[0]).contains(r#""required""#),
        "json_schema mode carries the schema in the request only"
    );
    // The refused request was sent, so it counts; it was not retried.
    assert_eq!(judge.spent().calls, 2);
}

#[test]
fn a_server_that_accepts_neither_works_in_auto_with_the_schema_in_the_prompt() {
    let server = TestServer::start(|_, request| match format_type(request) {
        Some(_) => Reply::new(422, FASTAPI_REFUSAL),
        None => Reply::new(200, openai_answer(&verdict_text(false), "stop")),
    });
    let judge = LlmJudge::new(config(&server));
    assert!(!judge.judge(&request()).unwrap());
    let sent = server.requests();
    assert_eq!(
        sent.iter().map(format_type).collect::<Vec<_>>(),
        [Some("json_schema".into()), Some("json_object".into()), None]
    );
    assert!(sent[2].json().get("response_format").is_none());
    assert!(system_of(&sent[2]).contains(r#""required":["match","reason"]"#));
    // A rambling answer is still checked by revcal: an error, never a match.
    let rambling = TestServer::start(|_, request| match format_type(request) {
        Some(_) => Reply::new(422, FASTAPI_REFUSAL),
        None => Reply::new(200, openai_answer(r#""Sure, it matches!""#, "stop")),
    });
    let error = LlmJudge::new(config(&rambling)).judge(&request()).unwrap_err();
    assert!(matches!(error, JudgeError::BadAnswer { .. }), "{error:?}");
}

#[test]
fn the_mode_is_probed_once_per_base_url_not_per_call() {
    let server = json_object_only();
    let first = LlmJudge::new(config(&server));
    for _ in 0..3 {
        assert!(first.judge(&request()).unwrap());
    }
    // Another judge (another client) of the same base URL, from several threads at once.
    let second = LlmJudge::new(config(&server));
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| assert!(second.judge(&other_request()).unwrap()));
        }
    });
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": false});
    let render = |nonce: &str| ("Count.".to_owned(), format!("<data-{nonce}>\nabc\n</data-{nonce}>"));
    let answer = TestServer::start(|_, request| match format_type(request).as_deref() {
        Some("json_schema") => Reply::new(500, LLAMA_CPP_PYTHON_REFUSAL),
        _ => Reply::new(200, openai_answer(r#""{\"n\": 3}""#, "stop")),
    });
    let third = LlmJudge::new(config(&answer));
    for _ in 0..2 {
        assert_eq!(third.ask_json("count", &schema, render, |_| Ok(())).unwrap(), json!({"n": 3}));
    }
    let count = |server: &TestServer, kind: &str| {
        server.requests().iter().filter(|r| format_type(r).as_deref() == Some(kind)).count()
    };
    assert_eq!(count(&server, "json_schema"), 1, "probed once for the first base URL");
    assert_eq!(count(&server, "json_object"), 3 + 4);
    assert_eq!(count(&answer, "json_schema"), 1, "another base URL is probed on its own");
    assert_eq!(count(&answer, "json_object"), 2);
}

#[test]
fn threads_asking_a_new_server_at_once_probe_it_once() {
    let server = json_object_only();
    let judge = LlmJudge::new(config(&server));
    std::thread::scope(|scope| {
        for _ in 0..6 {
            scope.spawn(|| assert!(judge.judge(&request()).unwrap()));
        }
    });
    let kinds: Vec<_> = server.requests().iter().map(format_type).collect();
    assert_eq!(kinds.iter().filter(|k| k.as_deref() == Some("json_schema")).count(), 1, "{kinds:?}");
    assert_eq!(kinds.len(), 7);
}

#[test]
fn explicit_modes_send_exactly_the_documented_request_shape() {
    let server = TestServer::start(|_, _| Reply::new(200, openai_answer(&verdict_text(true), "stop")));
    let schema_in_prompt = r#""required":["match","reason"]"#;
    for mode in [StructuredOutput::JsonSchema, StructuredOutput::JsonObject, StructuredOutput::Prompt] {
        let judge = LlmJudge::new(config(&server).with_structured_output(mode));
        assert!(judge.judge(&request()).unwrap());
        let sent = server.requests().pop().unwrap();
        let body = sent.json();
        match mode {
            StructuredOutput::JsonSchema => {
                assert_eq!(body["response_format"]["type"], "json_schema");
                assert_eq!(body["response_format"]["json_schema"]["name"], "verdict");
                assert_eq!(body["response_format"]["json_schema"]["strict"], true);
                assert_eq!(
                    body["response_format"]["json_schema"]["schema"]["required"],
                    json!(["match", "reason"])
                );
                assert!(!system_of(&sent).contains(schema_in_prompt));
            }
            StructuredOutput::JsonObject => {
                let format = body["response_format"].as_object().unwrap();
                let mut keys: Vec<_> = format.keys().collect();
                keys.sort();
                assert_eq!(keys, ["schema", "type"]);
                assert_eq!(format["type"], "json_object");
                assert_eq!(format["schema"]["required"], json!(["match", "reason"]));
                assert!(system_of(&sent).contains(schema_in_prompt));
            }
            _ => {
                assert!(body.get("response_format").is_none(), "{body}");
                assert!(system_of(&sent).contains(schema_in_prompt));
            }
        }
        assert_eq!(body["temperature"], 0);
    }
    assert_eq!(server.requests().len(), 3, "no probing in an explicit mode");
}

#[test]
fn an_explicit_mode_the_server_refuses_fails_at_once_and_says_what_to_do() {
    let server = json_object_only();
    let judge = LlmJudge::new(config(&server).with_structured_output(StructuredOutput::JsonSchema));
    let error = judge.judge(&request()).unwrap_err();
    assert!(matches!(error, JudgeError::StructuredOutputRefused { status: 500, .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("json-schema") && message.contains("auto"), "{message}");
    assert_eq!(server.requests().len(), 1, "a refusal is not retried, though it came as a 500");
}

#[test]
fn an_error_that_does_not_name_the_response_format_is_no_reason_to_fall_back() {
    let server = TestServer::start(|_, _| {
        Reply::new(
            400,
            r#"{"error": {"message": "model 'nope' not found", "type": "invalid_request_error"}}"#,
        )
    });
    let error = LlmJudge::new(config(&server)).judge(&request()).unwrap_err();
    assert!(matches!(error, JudgeError::Status { status: 400, .. }), "{error:?}");
    assert_eq!(server.requests().len(), 1);
    assert_eq!(format_type(&server.requests()[0]).as_deref(), Some("json_schema"));
    // OpenAI's answer to a schema it cannot enforce: the schema's mistake, not the mode's.
    let server = TestServer::start(|_, _| {
        Reply::new(
            400,
            r#"{"error": {"message": "Invalid schema for response_format 'verdict': In context=(), 'additionalProperties' is required to be supplied and to be false.", "type": "invalid_request_error", "param": "response_format", "code": null}}"#,
        )
    });
    let error = LlmJudge::new(config(&server)).judge(&request()).unwrap_err();
    assert!(matches!(error, JudgeError::Status { status: 400, .. }), "{error:?}");
    assert!(error.to_string().contains("additionalProperties"), "{error}");
    assert_eq!(server.requests().len(), 1, "no fallback");
}

#[test]
fn nested_schemas_of_ask_json_are_sent_whole_in_every_mode() {
    let schema = json!({
        "type": "object",
        "properties": {
            "findings": {"type": "array", "items": {
                "type": "object",
                "properties": {"file": {"type": "string"}, "line": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
                "required": ["file", "line", "tags"], "additionalProperties": false,
            }},
            "summary": {"type": "object", "properties": {"verdict": {"type": "string"}}, "required": ["verdict"], "additionalProperties": false},
        },
        "required": ["findings", "summary"],
        "additionalProperties": false,
    });
    let answer = r#""{\"findings\": [{\"file\": \"a.rs\", \"line\": 2, \"tags\": [\"x\"]}], \"summary\": {\"verdict\": \"ok\"}}""#;
    let server = TestServer::start(move |_, _| Reply::new(200, openai_answer(answer, "stop")));
    let render =
        |nonce: &str| ("Review.".to_owned(), format!("<data-{nonce}>\nfn a() {{}}\n</data-{nonce}>"));
    for mode in [StructuredOutput::JsonSchema, StructuredOutput::JsonObject, StructuredOutput::Prompt] {
        let judge = LlmJudge::new(config(&server).with_structured_output(mode));
        let got = judge.ask_json("review", &schema, render, |_| Ok(())).unwrap();
        assert_eq!(got["findings"][0]["tags"], json!(["x"]));
        let sent = server.requests().pop().unwrap();
        let body = sent.json();
        match mode {
            StructuredOutput::JsonSchema => {
                assert_eq!(body["response_format"]["json_schema"]["schema"], schema)
            }
            StructuredOutput::JsonObject => assert_eq!(body["response_format"]["schema"], schema),
            _ => assert!(body.get("response_format").is_none()),
        }
        if mode != StructuredOutput::JsonSchema {
            let system = system_of(&sent);
            let stated = system.split_once("JSON Schema:\n").map(|(_, rest)| rest.trim()).unwrap_or_default();
            assert_eq!(serde_json::from_str::<Value>(stated).ok(), Some(schema.clone()), "{system}");
        }
    }
}

#[test]
fn the_modes_have_the_command_line_spellings() {
    for (text, mode) in [
        ("auto", StructuredOutput::Auto),
        ("json-schema", StructuredOutput::JsonSchema),
        ("json-object", StructuredOutput::JsonObject),
        ("prompt", StructuredOutput::Prompt),
        ("JSON_OBJECT", StructuredOutput::JsonObject),
    ] {
        assert_eq!(text.parse::<StructuredOutput>().unwrap(), mode);
    }
    for mode in StructuredOutput::ALL {
        assert_eq!(mode.to_string().parse::<StructuredOutput>().unwrap(), mode);
    }
    let error = "grammar".parse::<StructuredOutput>().unwrap_err();
    assert!(error.to_string().contains("auto, json-schema, json-object or prompt"), "{error}");
}

#[test]
fn anthropic_and_gemini_keep_their_native_structured_output() {
    for provider in [Provider::Anthropic, Provider::Gemini] {
        let server = TestServer::start(|_, _| Reply::new(500, "{}"));
        let mut config = JudgeConfig::new(provider, Some("k".into())).with_base_url(server.url());
        config.retries = 0;
        let _ = LlmJudge::new(config).judge(&request());
        let body = server.requests()[0].json();
        match provider {
            Provider::Anthropic => assert_eq!(body["tool_choice"]["type"], "tool"),
            _ => assert!(body["generationConfig"]["responseSchema"].is_object()),
        }
    }
}
