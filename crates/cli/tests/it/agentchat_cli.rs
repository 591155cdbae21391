//! `revcal agentchat serve|post|review` as processes against the real AgentChat server
//! (node, started per test on a free port; skipped with a notice without node): RFC-001's
//! session in `#review` with two reviewer agents, and the faults, each a test.

mod faults;

use crate::agentchat_server::AgentChatServer;
use crate::http_server::{Recorded, Reply, TestServer, openai_answer, prompt_of};
use revcal_agentchat::ChatIdentity;
use revcal_elo::{Keypair, Ledger};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A test's directory: keys, ledgers, logs.
pub(crate) struct Scene {
    pub(crate) dir: tempfile::TempDir,
}

impl Scene {
    pub(crate) fn new() -> Scene {
        Scene { dir: tempfile::tempdir().unwrap() }
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes the key of `seed` to `NAME.key`; returns the key.
    pub(crate) fn key(&self, name: &str, seed: u8) -> Keypair {
        let key = Keypair::from_seed([seed; 32]);
        std::fs::write(self.path(&format!("{name}.key")), serde_json::to_string(&key.to_key_file()).unwrap())
            .unwrap();
        key
    }

    pub(crate) fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// `revcal ARGS` in the scene, no provider or ledger from the test's environment.
    pub(crate) fn revcal(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_revcal"));
        command.args(args).current_dir(self.dir.path()).env("XDG_CACHE_HOME", self.path("cache"));
        for variable in crate::calibrate_cli::JUDGE_VARIABLES {
            command.env_remove(variable);
        }
        for variable in ["REVCAL_LEDGER", "REVCAL_LEDGER_URL", "RUST_LOG"] {
            command.env_remove(variable);
        }
        command
    }

    /// Starts `revcal ARGS` in the background, its stdout and stderr in `NAME.out` and
    /// `NAME.err`.
    pub(crate) fn spawn(&self, name: &str, args: &[&str], env: &[(&str, &str)]) -> Agent {
        let stdout = std::fs::File::create(self.path(&format!("{name}.out"))).unwrap();
        let stderr = std::fs::File::create(self.path(&format!("{name}.err"))).unwrap();
        let mut command = self.revcal(args);
        command.stdin(Stdio::null()).stdout(stdout).stderr(stderr);
        for (key, value) in env {
            command.env(key, value);
        }
        Agent {
            child: Some(command.spawn().unwrap()),
            out: self.path(&format!("{name}.out")),
            err: self.path(&format!("{name}.err")),
        }
    }

    /// `revcal agentchat serve` on `server` with the key `NAME.key` and `ledger`.
    pub(crate) fn serve(&self, name: &str, server: &AgentChatServer, ledger: &str) -> Agent {
        let key = format!("{name}.key");
        self.spawn(
            name,
            &["agentchat", "serve", "--server", &server.url(), "--key", &key, "--ledger", ledger, "--json"],
            &[],
        )
    }

    /// `revcal agentchat post --json` of `file` as `NAME.key`, waiting at most `wait` s.
    pub(crate) fn post(&self, server: &AgentChatServer, name: &str, file: &Path, extra: &[&str]) -> Output {
        let key = format!("{name}.key");
        let file = file.display().to_string();
        let url = server.url();
        let mut args =
            vec!["agentchat", "post", "--server", &url, "--key", &key, &file, "--json", "--wait", "180"];
        args.extend_from_slice(extra);
        self.revcal(&args).output().unwrap()
    }
}

/// A revcal process in the background: stopped with SIGTERM by [`Agent::stop`], killed on drop.
pub(crate) struct Agent {
    child: Option<Child>,
    out: PathBuf,
    err: PathBuf,
}

impl Agent {
    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }

    pub(crate) fn stdout(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    /// SIGTERM, then its exit code.
    pub(crate) fn stop(&mut self) -> Option<i32> {
        let mut child = self.child.take()?;
        // SAFETY: kill(2) on a child this test started and has not reaped.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        child.wait().unwrap().code()
    }

    /// The JSON lines it logged (`--json`).
    pub(crate) fn events(&self) -> Vec<Value> {
        self.stdout().lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The AgentChat id (hex) of `key`: the server's genesis, which may create `#review`.
pub(crate) fn genesis(key: &Keypair) -> String {
    ChatIdentity::new(key.clone()).chat_id().hex().to_owned()
}

/// Waits until the ledger at `path` holds `count` messages (a safety net of 240 s, not an
/// oracle: the machine may be loaded).
pub(crate) fn wait_for_messages(path: &Path, count: u64, agent: &Agent) {
    let started = Instant::now();
    loop {
        if path.exists()
            && let Ok(ledger) = Ledger::open(path)
            && ledger.message_count().unwrap_or(0) >= count
        {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(240),
            "the ledger never held {count} messages; the agent said:\n{}",
            agent.stderr()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until `agent` has logged an event for which `matches` holds.
pub(crate) fn wait_for_event(agent: &Agent, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        if let Some(event) = agent.events().into_iter().find(|event| matches(event)) {
            return event;
        }
        assert!(
            started.elapsed() < Duration::from_secs(240),
            "never saw {what}; the agent said:\n{}",
            agent.stderr()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The JSON objects `post --json` printed, one per message.
pub(crate) fn posted(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout).lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A signed-to-be request for a diff (`post` signs it).
pub(crate) fn request_with_diff(title: &str, diff: &str) -> String {
    json!({"type": "REVIEW_REQUEST", "to": "#review", "content": {"title": title, "diff": diff}}).to_string()
}

/// A diff adding `lines` to src/calc.py.
pub(crate) fn diff_of(lines: &[&str]) -> String {
    let mut diff = format!(
        "diff --git a/src/calc.py b/src/calc.py\n--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,1 +1,{} @@\n import math\n",
        lines.len() + 1
    );
    for line in lines {
        diff.push_str(&format!("+{line}\n"));
    }
    diff
}

/// A stand-in OpenAI-compatible model: a major finding on every added line that subtracts
/// where the change means to add (`a - b`), none otherwise.
fn stand_in_model() -> TestServer {
    TestServer::start(|_, request: &Recorded| {
        let prompt = prompt_of(request);
        let mut findings = Vec::new();
        for line in prompt.lines() {
            let Some((number, code)) = line.trim_start().split_once(" + ") else { continue };
            let Ok(number) = number.parse::<u64>() else { continue };
            if code.contains("a - b") {
                findings.push(
                    json!({"file": "src/calc.py", "line": number, "severity": "major", "category": "bug",
                    "message": "add subtracts: every sum is wrong", "suggestion": "a + b", "repro": ""}),
                );
            }
        }
        let answer = json!({"findings": findings, "rubric_scores": {"accuracy": 8, "completeness": 7, "clarity": 8,
            "conciseness": 8, "relevance": 9}, "confidence": 0.8, "rationale": "stand-in"});
        Reply::new(200, openai_answer(&serde_json::to_string(&answer.to_string()).unwrap(), "stop"))
    })
}

/// A reviewer command: a major finding at every added line with a TODO, read from the
/// scratch directory's change.diff.
const TODO_REVIEWER: &str = r#"n=0; found=""; while IFS= read -r line; do case "$line" in "@@"*) n=$(printf '%s' "$line" | sed 's/.*+\([0-9]*\).*/\1/'); n=$((n-1));; "+++"*) ;; "+"*) n=$((n+1)); case "$line" in *TODO*) found="$found{\"file\":\"src/calc.py\",\"line\":$n,\"severity\":\"major\",\"message\":\"a TODO ships\"},";; esac;; " "*) n=$((n+1));; esac; done < change.diff; printf '{"findings":[%s]}\n' "${found%,}""#;

#[test]
fn rfc_001_live_two_reviewer_agents_an_outcome_the_leaderboard_and_receipts() {
    let scene = Scene::new();
    let ledger_key = scene.key("ledger", 20);
    let Some(server) = AgentChatServer::start("rfc_001_live", Some(&genesis(&ledger_key))) else { return };
    let (author, catcher, todo) = (scene.key("author", 21), scene.key("catcher", 22), scene.key("todo", 23));
    let ledger = scene.path("ledger.sqlite");
    let ledger_text = ledger.display().to_string();
    let mut agent = scene.serve("ledger", &server, &ledger_text);
    let model = stand_in_model();
    let url = server.url();
    let model_url = model.url();
    let mut built_in = scene.spawn(
        "catcher",
        &[
            "agentchat",
            "review",
            "--server",
            &url,
            "--key",
            "catcher.key",
            "--reviewer",
            "openai:stand-in",
            "--no-cache",
            "--json",
        ],
        &[("OPENAI_BASE_URL", &model_url), ("OPENAI_API_KEY", "sk-test-not-a-key")],
    );
    let mut command = scene.spawn(
        "todo",
        &[
            "agentchat",
            "review",
            "--server",
            &url,
            "--key",
            "todo.key",
            "--review-cmd",
            TODO_REVIEWER,
            "--json",
        ],
        &[],
    );
    for reviewer in [&built_in, &command] {
        wait_for_event(reviewer, "the reviewer in the channel", |event| event["event"] == "joined");
    }

    // A: a bug (`a - b`) that caused an incident; B: a clean change with a TODO, no incident.
    let a = scene
        .write("a.json", &request_with_diff("A: add", &diff_of(&["def add(a, b):", "    return a - b"])));
    let b = scene.write(
        "b.json",
        &request_with_diff("B: mul", &diff_of(&["def mul(a, b):", "    return a * b  # TODO"])),
    );
    let mut ids = Vec::new();
    for file in [&a, &b] {
        let output = scene.post(&server, "author", file, &[]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let answer = &posted(&output)[0];
        assert_eq!(answer["outcome"], "stored", "{answer}");
        ids.push(answer["id"].as_str().unwrap().to_owned());
    }
    // Two reviews of each request, by the two agents.
    wait_for_messages(&ledger, 6, &agent);
    for (reviewer, verdicts) in
        [(&built_in, ["REQUEST_CHANGES", "APPROVE"]), (&command, ["APPROVE", "REQUEST_CHANGES"])]
    {
        for (id, verdict) in ids.iter().zip(verdicts) {
            let reviewed = wait_for_event(reviewer, "a review", |event| {
                event["event"] == "reviewed" && event["request_id"] == id.as_str()
            });
            assert_eq!(reviewed["verdict"], verdict, "{reviewed}");
        }
    }

    // The outcomes: A caused an incident, B did not.
    for (id, incident) in [(&ids[0], true), (&ids[1], false)] {
        let details = if incident { json!("INC-7: sums negative") } else { Value::Null };
        let outcome = json!({"type": "REVIEW_OUTCOME", "to": "#review", "content": {"request_id": id, "merged": true,
            "incident": incident, "incident_details": details}});
        let file = scene.write("outcome.json", &outcome.to_string());
        let output = scene.post(&server, "author", &file, &[]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let answer = &posted(&output)[0];
        assert_eq!(answer["outcome"], "stored", "{answer}");
        let receipts = answer["receipts"].as_array().unwrap();
        assert_eq!(receipts.len(), 2, "{answer}");
        std::fs::write(scene.path("receipts.json"), Value::Array(receipts.clone()).to_string()).unwrap();
        // Offline, with the ledger's key alone.
        let issuer = scene
            .revcal(&["elo", "issuer-key", "--ledger", &ledger_text, "--out", "ledger.pub"])
            .output()
            .unwrap();
        assert!(issuer.status.success(), "{}", stderr(&issuer));
        let verified = scene
            .revcal(&["elo", "verify-receipt", "receipts.json", "--issuer-key", "ledger.pub"])
            .output()
            .unwrap();
        assert_eq!(verified.status.code(), Some(0), "{}", stderr(&verified));
        assert!(String::from_utf8_lossy(&verified.stdout).contains("2 valid, 0 invalid"));
    }

    // RFC-001's table, with K 40 for new reviewers (delta = base x 40 / 20):
    // catcher: REQUEST_CHANGES + incident (+25) and APPROVE + no incident (+5);
    // the TODO command: APPROVE + incident (-30) and REQUEST_CHANGES + no incident (-5).
    let k = 40.0 / 20.0;
    let expected = [
        (catcher.agent_id(), 1200.0 + 25.0 * k + 5.0 * k, 1.0),
        (todo.agent_id(), 1200.0 - 30.0 * k - 5.0 * k, 0.0),
    ];
    let query = scene.write("query.json", r#"{"type": "REVIEW_LEADERBOARD"}"#);
    let output = scene.post(&server, "author", &query, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let result = &posted(&output)[0];
    assert_eq!(result["outcome"], "result", "{result}");
    let board = result["answer"]["content"]["leaderboard"].as_array().unwrap();
    assert_eq!(board.len(), 2, "{result}");
    for (row, (agent_id, elo, accuracy)) in board.iter().zip(&expected) {
        assert_eq!((row["agent"].as_str().unwrap(), row["elo"].as_f64().unwrap()), (agent_id.as_str(), *elo));
        assert_eq!((row["reviews"].as_u64(), row["accuracy"].as_f64()), (Some(2), Some(*accuracy)));
    }
    // With `outcomes`, as `elo handle` answers it: the scope named in the result.
    let reported = scene.write(
        "reported.json",
        r#"{"type": "REVIEW_LEADERBOARD", "content": {"outcomes": "reported", "limit": 1}}"#,
    );
    let output = scene.post(&server, "author", &reported, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let scoped = &posted(&output)[0]["answer"]["content"];
    assert_eq!(scoped["outcomes"], "reported", "{scoped}");
    assert_eq!(scoped["leaderboard"].as_array().unwrap().len(), 1);
    assert_eq!(scoped["leaderboard"][0]["agent"], catcher.agent_id().as_str());
    // The result is the ledger's, signed with its key, about the asker's query.
    assert_eq!(result["answer"]["type"], "REVIEW_LEADERBOARD_RESULT");
    assert!(revcal_elo::SignedMessage::parse(&result["answer"].to_string()).is_ok());
    assert_eq!(author.agent_id().as_str().len(), 17);

    for process in [&mut built_in, &mut command, &mut agent] {
        assert_eq!(process.stop(), Some(0), "{}", process.stderr());
    }
    let check = scene.revcal(&["elo", "check", "--ledger", &ledger_text]).output().unwrap();
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    // Every request and review stored once: 2 requests, 4 reviews, 2 outcomes.
    assert_eq!(Ledger::open(&ledger).unwrap().message_count().unwrap(), 8);
    assert!(model.requests().len() >= 2);
}
