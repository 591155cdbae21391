//! `revcal review` and `revcal calibrate --reviewer` end to end, against an HTTP stand-in on
//! 127.0.0.1 for each provider: the request each provider gets (path, model, schema, fenced
//! change), the findings and review documents, `revcal score` on them, a council, and a
//! calibration whose figures are recomputed here from the report's plants and rounds.

use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::calibrate_cli::{JUDGE_VARIABLES, Sandbox, assert_untouched, json, snapshot, stderr, stdout};
use crate::http_server::{
    Recorded, Reply, TestServer, anthropic_tool_answer, fenced_after, gemini_answer, openai_answer, prompt_of,
};

/// A `--judge-cmd` that matches when the finding's text is the plant's defect sentence.
const DEFECT_JUDGE: &str = "req=$(cat)\ndefect=$(printf '%s' \"$req\" | sed 's/.*\"defect\":\"\\([^\"]*\\)\".*/\\1/')\ncase \"$req\" in *\"text\\\":\\\"$defect\"*) echo '{\"match\": true}';; *) echo '{\"match\": false}';; esac";

/// The code_review_v1 scores every stand-in gives its own review.
fn scores() -> Value {
    json!({"accuracy": 8, "completeness": 7, "clarity": 8, "conciseness": 8, "relevance": 9})
}

/// A review answer with `findings`.
fn answer(findings: Vec<Value>) -> Value {
    json!({"findings": findings, "rubric_scores": scores(), "confidence": 0.8, "rationale": "stand-in"})
}

fn finding(file: &str, line: u64, severity: &str, message: &str) -> Value {
    json!({"file": file, "line": line, "severity": severity, "category": "bug", "message": message,
           "suggestion": "", "repro": ""})
}

/// `answer` in `provider`'s answer shape.
fn reply_for(provider: &str, answer: &Value) -> Reply {
    let text = answer.to_string();
    let body = match provider {
        "anthropic" => anthropic_tool_answer(&text),
        "openai" => openai_answer(&serde_json::to_string(&text).unwrap(), "stop"),
        "gemini" => gemini_answer(&serde_json::to_string(&text).unwrap(), "STOP"),
        other => panic!("{other}"),
    };
    Reply::new(200, body)
}

/// The base-URL variable and a key variable of `provider`.
fn variables(provider: &str) -> (&'static str, &'static str) {
    match provider {
        "anthropic" => ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
        "openai" => ("OPENAI_BASE_URL", "OPENAI_API_KEY"),
        "gemini" => ("GEMINI_BASE_URL", "GEMINI_API_KEY"),
        other => panic!("{other}"),
    }
}

/// `revcal ARGS` in the sandbox's repository, with no provider from the test's environment
/// and the cache inside the sandbox.
fn revcal(sandbox: &Sandbox, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_revcal"));
    command
        .args(args)
        .current_dir(sandbox.repo())
        .env("XDG_CACHE_HOME", sandbox.path("cache"))
        .env("TMPDIR", sandbox.path("tmp"))
        .env_remove("RUST_LOG");
    for variable in JUDGE_VARIABLES {
        command.env_remove(variable);
    }
    command
}

fn score(sandbox: &Sandbox, file: &str) -> Output {
    revcal(sandbox, &["score", file, "--json"]).output().unwrap()
}

#[test]
fn each_provider_gets_the_fenced_change_and_a_schema_and_the_review_is_scored() {
    for provider in ["anthropic", "openai", "gemini"] {
        let sandbox = Sandbox::new();
        let before = snapshot(&sandbox.repo());
        let reply = reply_for(
            provider,
            &answer(vec![finding("src/calc.py", 2, "major", "add subtracts when a is negative")]),
        );
        let server = TestServer::start(move |_, _| reply.clone());
        let (url_variable, key_variable) = variables(provider);
        let out = sandbox.path("out");
        let output = revcal(
            &sandbox,
            &[
                "review",
                "--reviewer",
                &format!("{provider}:model-x"),
                "--out",
                out.to_str().unwrap(),
                "--no-cache",
            ],
        )
        .env(url_variable, server.url())
        .env(key_variable, "sk-test-key-0123456789")
        .output()
        .unwrap();
        assert!(output.status.success(), "{provider}: {}", stderr(&output));
        assert_untouched(&sandbox, &before);

        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{provider}");
        let request = &requests[0];
        let body = request.json();
        // Where the request went, and the schema each provider is given.
        let schema = match provider {
            "anthropic" => {
                assert_eq!(request.path, "/v1/messages");
                assert_eq!(body["model"], "model-x");
                assert_eq!(body["tool_choice"]["name"], "review");
                body["tools"][0]["input_schema"].clone()
            }
            "openai" => {
                assert_eq!(request.path, "/chat/completions");
                assert_eq!(body["model"], "model-x");
                body["response_format"]["json_schema"]["schema"].clone()
            }
            _ => {
                assert_eq!(request.path, "/v1beta/models/model-x:generateContent");
                body["generationConfig"]["responseSchema"].clone()
            }
        };
        let required: Vec<String> = serde_json::from_value(schema["required"].clone()).unwrap();
        // Scores are whole points of the scale, listed where the provider takes an integer
        // enum (Gemini takes enums of strings only); string lengths are left out for
        // OpenAI's strict mode.
        let accuracy = &schema["properties"]["rubric_scores"]["properties"]["accuracy"];
        assert_eq!(accuracy.get("enum").is_some(), provider != "gemini", "{provider}: {accuracy}");
        let message = &schema["properties"]["findings"]["items"]["properties"]["message"];
        assert_eq!(message.get("maxLength").is_some(), provider != "openai", "{provider}: {message}");
        assert_eq!(
            required,
            ["findings", "rubric_scores", "confidence", "rationale"],
            "{provider}: {schema}"
        );
        // The change is fenced, each line with its number in the new file.
        let prompt = prompt_of(request);
        let change = fenced_after(&prompt, "THE CHANGE", 0).unwrap_or_else(|| panic!("{provider}: {prompt}"));
        assert!(change.starts_with("FILE README.md\n     1 + calc\n\nFILE src/calc.py\n"), "{change}");
        assert!(change.contains("     2 +     return a + b\n"), "{change}");
        assert!(prompt.contains("CRITERION accuracy"), "the rubric is in the prompt: {prompt}");

        // The findings `revcal calibrate` reads, and the review `revcal score` scores.
        let findings: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("findings.json")).unwrap()).unwrap();
        assert_eq!(findings["findings"][0]["file"], "src/calc.py");
        assert_eq!(findings["findings"][0]["line"], 2);
        let scored = score(&sandbox, out.join("review.json").to_str().unwrap());
        assert_eq!(scored.status.code(), Some(1), "a major finding blocks: {}", stderr(&scored));
        let report = json(&scored);
        assert_eq!(report["verdict"], "fail");
        assert_eq!(report["blocking_issues"][0]["line"], 2, "{report}");
        assert!(stderr(&output).contains("1 call(s)"), "{}", stderr(&output));
        assert!(!stderr(&output).contains("sk-test-key"), "{}", stderr(&output));
    }
}

#[test]
fn an_answer_that_does_not_fit_the_schema_is_an_error_and_writes_nothing() {
    let sandbox = Sandbox::new();
    let bad = json!({"findings": "none", "rubric_scores": scores(), "confidence": 0.8, "rationale": ""});
    let reply = reply_for("openai", &bad);
    let server = TestServer::start(move |_, _| reply.clone());
    let out = sandbox.path("out");
    let output =
        revcal(&sandbox, &["review", "--reviewer", "openai:m", "--out", out.to_str().unwrap(), "--no-cache"])
            .env("OPENAI_BASE_URL", server.url())
            .output()
            .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("`findings` is missing or not a list"), "{}", stderr(&output));
    assert!(!out.exists(), "no empty review was written");
    assert_eq!(stdout(&output), "");
}

/// A stand-in for three OpenAI-compatible models: `catcher` reports each planted defect it
/// sees in the change (in the plants file's words), `silent` reports nothing, `noisy` one
/// finding that locates no plant.
fn council_server() -> TestServer {
    stand_in("openai")
}

/// The stand-in models of [`council_server`] in `provider`'s wire format (the model is named
/// in the body, or for Gemini in the path).
fn stand_in(provider: &'static str) -> TestServer {
    TestServer::start(move |_, request: &Recorded| {
        let body = request.json();
        let model = match provider {
            "gemini" => request
                .path
                .split("/models/")
                .nth(1)
                .and_then(|m| m.split(':').next())
                .unwrap_or_default()
                .to_owned(),
            _ => body["model"].as_str().unwrap_or_default().to_owned(),
        };
        let prompt = prompt_of(request);
        let mut findings = Vec::new();
        match model.as_str() {
            "catcher" => {
                for line in prompt.lines() {
                    let Some((number, code)) = line.trim_start().split_once(" + ") else { continue };
                    let Ok(number) = number.parse::<u64>() else { continue };
                    for (planted, defect) in [
                        ("a - b", "add subtracts: every sum is wrong"),
                        ("age > 18", "an 18-year-old is no longer an adult"),
                        ("items[1]", "first returns the second item"),
                    ] {
                        if code.contains(planted) {
                            findings.push(finding("src/calc.py", number, "major", defect));
                        }
                    }
                }
            }
            "noisy" => findings.push(finding("README.md", 1, "minor", "the title is terse")),
            _ => {}
        }
        reply_for(provider, &answer(findings))
    })
}

#[test]
fn calibrate_runs_the_built_in_reviewer_of_each_provider() {
    for provider in ["anthropic", "openai", "gemini"] {
        let sandbox = Sandbox::new();
        let before = snapshot(&sandbox.repo());
        let server = stand_in(provider);
        let (url_variable, key_variable) = variables(provider);
        let judge = sandbox.script("judge.sh", DEFECT_JUDGE);
        let reviewer = format!("{provider}:catcher");
        let plants = sandbox.plants();
        let output = revcal(
            &sandbox,
            &[
                "calibrate",
                "--reviewer",
                &reviewer,
                "--plants-file",
                &plants,
                "--judge-cmd",
                &judge,
                "--json",
                "--no-judge-cache",
            ],
        )
        .env(url_variable, server.url())
        .env(key_variable, "sk-test-key-0123456789")
        .output()
        .unwrap();
        assert!(output.status.success(), "{provider}: {}", stderr(&output));
        let report = json(&output);
        assert_eq!(report["recall"], 1.0, "{provider}: {report}");
        assert_eq!(report["reviewer"], reviewer.as_str());
        assert_eq!(report["reviewerUsage"][0]["provider"], provider, "{report}");
        assert_eq!(report["reviewerUsage"][0]["calls"], 1, "{provider}: {report}");
        let prompt = prompt_of(&server.requests()[0]);
        let change = fenced_after(&prompt, "THE CHANGE", 0).unwrap_or_else(|| panic!("{provider}: {prompt}"));
        assert!(
            change.contains("     2 +     return a - b\n"),
            "the plants are in the change reviewed: {change}"
        );
        assert!(!stdout(&output).contains("sk-test-key") && !stderr(&output).contains("sk-test-key"));
        assert_untouched(&sandbox, &before);
    }
}

#[test]
fn a_council_of_three_reviews_is_scored_and_calibrated_and_its_figures_recomputed() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let server = council_server();
    let out = sandbox.path("out");
    let output = revcal(
        &sandbox,
        &["review", "--council", "openai:catcher,openai:silent,openai:noisy", "--out", out.to_str().unwrap()],
    )
    .env("OPENAI_BASE_URL", server.url())
    .output()
    .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    for name in ["review-1-openai-catcher.json", "review-2-openai-silent.json", "review-3-openai-noisy.json"]
    {
        assert!(out.join(name).is_file(), "{name}");
    }
    let scored = score(&sandbox, out.join("council.json").to_str().unwrap());
    let report = json(&scored);
    assert_eq!(report["members"].as_array().map(Vec::len), Some(3), "{report}");
    let findings: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("findings.json")).unwrap()).unwrap();
    assert_eq!(
        findings["findings"][0]["reviewer"], "openai:noisy",
        "only noisy finds something unplanted: {findings}"
    );

    // Calibrated: the council reviews each checkout (two trials, two at once).
    let judge = sandbox.script("judge.sh", DEFECT_JUDGE);
    let calibrate = |cache: &str| {
        let mut args = vec![
            "calibrate",
            "--reviewer",
            "openai:catcher,openai:silent,openai:noisy",
            "--plants-file",
            "PLANTS",
            "--judge-cmd",
            judge.as_str(),
            "--trials",
            "2",
            "--jobs",
            "2",
            "--json",
        ];
        if cache == "no-cache" {
            args.push("--no-judge-cache");
        }
        let plants = sandbox.plants();
        let args: Vec<&str> = args.iter().map(|a| if *a == "PLANTS" { plants.as_str() } else { a }).collect();
        revcal(&sandbox, &args).env("OPENAI_BASE_URL", server.url()).output().unwrap()
    };
    let requests_before = server.requests().len();
    let output = calibrate("cache");
    assert!(output.status.success(), "{}", stderr(&output));
    let report = json(&output);
    assert_eq!(report["reviewer"], "openai:catcher,openai:silent,openai:noisy");
    // Recomputed from the plants and the trials: recall over plants, precision over findings.
    let plants = report["plants"].as_array().unwrap();
    let valid: Vec<&Value> = plants.iter().filter(|p| p["status"] != "excluded").collect();
    let caught = valid.iter().filter(|p| p["status"] == "caught").count();
    assert_eq!((caught, valid.len()), (3, 3), "{report}");
    assert_eq!(report["recall"], caught as f64 / valid.len() as f64);
    let (tp, fp) = (report["truePositives"].as_u64().unwrap(), report["falsePositives"].as_u64().unwrap());
    assert_eq!((tp, fp), (6, 2), "3 plants caught and 1 unplanted finding, in each of 2 trials: {report}");
    assert_eq!(report["precision"], tp as f64 / (tp + fp) as f64);
    // What the reviewer spent: one call per model per trial, as the server counted.
    let usage = report["reviewerUsage"].as_array().unwrap();
    assert_eq!(usage.len(), 3, "{report}");
    let seen = &server.requests()[requests_before..];
    for entry in usage {
        let model = entry["model"].as_str().unwrap();
        let calls = seen.iter().filter(|r| r.json()["model"] == model).count() as u64;
        assert_eq!(entry["calls"].as_u64(), Some(calls), "{entry}");
        assert_eq!(calls, 2, "{model}: one review per trial");
        assert_eq!(entry["inputTokens"].as_u64(), Some(90 * calls), "{entry}");
    }
    // Again: every review is answered from the cache, trial by trial.
    let requests_before = server.requests().len();
    let again = json(&calibrate("cache"));
    assert_eq!(server.requests().len(), requests_before, "no request the second time");
    assert_eq!(again["recall"], report["recall"]);
    assert!(
        again["reviewerUsage"].as_array().unwrap().iter().all(|u| u["calls"] == 0 && u["cacheHits"] == 2),
        "{again}"
    );
    assert_untouched(&sandbox, &before);
}

#[test]
fn calibrate_refuses_a_judge_of_the_built_in_reviewers_provider_and_stops_on_its_errors() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let server = TestServer::start(|_, _| Reply::new(401, r#"{"error": {"message": "bad key"}}"#));
    let plants = sandbox.plants();
    let output = revcal(
        &sandbox,
        &["calibrate", "--reviewer", "openai:m", "--plants-file", &plants, "--judge-provider", "openai"],
    )
    .env("OPENAI_BASE_URL", server.url())
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("(--reviewer openai)"), "{}", stderr(&output));
    assert!(server.requests().is_empty(), "refused before anything was asked");

    // A reviewer that gives no review stops the run: an error, never a review with no finding.
    let output = revcal(
        &sandbox,
        &[
            "calibrate",
            "--reviewer",
            "openai:m",
            "--plants-file",
            &plants,
            "--scorer",
            "string",
            "--no-judge-cache",
        ],
    )
    .env("OPENAI_BASE_URL", server.url())
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("reviewer openai:m gave no review"), "{}", stderr(&output));
    assert_eq!(stderr(&output).matches("gave no review").count(), 1, "said once: {}", stderr(&output));
    assert!(stderr(&output).contains("401"), "{}", stderr(&output));
    assert_untouched(&sandbox, &before);
}

#[test]
fn a_suite_runs_the_built_in_reviewer_in_each_unit_and_sums_what_it_spent() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let server = council_server();
    std::fs::write(
        sandbox.path("suite.yaml"),
        "entries:\n  - {repo: repo, plants_file: plants.yaml, trials: 2}\n",
    )
    .unwrap();
    let judge = sandbox.script("judge.sh", DEFECT_JUDGE);
    let output = revcal(
        &sandbox,
        &[
            "calibrate",
            "suite",
            "suite.yaml",
            "--reviewer",
            "openai:catcher",
            "--judge-cmd",
            &judge,
            "--no-judge-cache",
            "-q",
            "--json",
        ],
    )
    .current_dir(sandbox.path(""))
    .env("OPENAI_BASE_URL", server.url())
    .output()
    .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let report = json(&output);
    assert_eq!(report["recall"], 1.0, "{report}");
    assert_eq!(report["reviewer"], "openai:catcher");
    let usage = &report["reviewerUsage"];
    assert_eq!(usage.as_array().map(Vec::len), Some(1), "{report}");
    assert_eq!(usage[0]["calls"].as_u64(), Some(server.requests().len() as u64), "{report}");
    assert_eq!(usage[0]["calls"], 2, "one review per unit (trial): {report}");
    assert_untouched(&sandbox, &before);
}

/// The built-in reviewer's errors speak of the reviewer, never of a judge: it is the
/// reviewer that has no key, and the reviewer that gave up.
#[test]
fn the_reviewer_s_errors_name_the_reviewer() {
    let sandbox = Sandbox::new();
    let output = revcal(&sandbox, &["review", "--reviewer", "openai:m", "--no-cache"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("cannot set up reviewer openai") && message.contains("OPENAI_API_KEY"),
        "{message}"
    );
    assert!(!message.contains("judge"), "{message}");

    let server = TestServer::start(|_, _| Reply::new(500, r#"{"error": {"message": "down"}}"#));
    let output = revcal(&sandbox, &["review", "--reviewer", "openai:m", "--no-cache", "--retries", "0"])
        .env("OPENAI_BASE_URL", server.url())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("reviewer openai:m: gave up after 1 attempt:"), "{message}");
    assert!(!message.contains("judge"), "{message}");
    assert_eq!(server.requests().len(), 1);
}

/// `--dry-run` shows the prompt as it would be sent, its size, an estimate of its tokens and
/// the calls a review makes, and sends nothing: the server on loopback hears no request.
#[test]
fn a_dry_run_shows_the_prompt_and_its_cost_and_sends_nothing() {
    let sandbox = Sandbox::new();
    let server = TestServer::start(|_, _| Reply::new(500, "{}"));
    let output = revcal(
        &sandbox,
        &["review", "--council", "openai:a,openai:b", "--dry-run", "--no-cache", "--focus", "security"],
    )
    .env("OPENAI_BASE_URL", server.url())
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(server.requests().is_empty(), "a dry run sends nothing");
    let text = stdout(&output);
    // The system part as the reviewer sends it, the focus area's checks in it, and the change
    // fenced in the user part.
    assert!(text.contains("You are a senior engineer reviewing a code change."), "{text}");
    assert!(text.contains("FOCUS AREA Security"), "{text}");
    let nonce = text.split("<data-").nth(1).and_then(|rest| rest.split('>').next()).unwrap_or_default();
    assert_eq!(nonce.len(), 32, "{text}");
    assert!(text.contains(&format!("</data-{nonce}>")) && text.contains("FILE src/calc.py"), "{text}");
    // Its size and cost, with the numbers the prompt's own length gives.
    let system = text.split("--- system").nth(1).unwrap_or_default();
    let summary = text.lines().find(|line| line.starts_with("dry run:")).unwrap_or_else(|| panic!("{text}"));
    assert!(summary.contains("2 calls (openai:a, openai:b)"), "{summary}");
    let bytes: usize = summary
        .split(" bytes")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .map(|n| n.replace(',', "").parse().unwrap())
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(bytes > system.len() / 2 && bytes < text.len(), "{bytes} of {}: {summary}", text.len());
    let tokens: usize = summary
        .split("about ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .map(|n| n.replace(',', "").parse().unwrap())
        .unwrap_or_else(|| panic!("{summary}"));
    assert_eq!(tokens, bytes.div_ceil(4), "{summary}");
    assert!(summary.contains("nothing was sent"), "{summary}");
}
