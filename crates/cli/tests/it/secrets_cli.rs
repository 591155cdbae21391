//! Secrets stay where they belong, tried through the binary as a hostile reviewer, judge
//! server or suite would: an API key echoed by a judge server or printed by a reviewer, and
//! a token in a suite's repository URL, never appear in what revcal prints (stdout, stderr,
//! logs) or stores (reports, shard files, the clones it keeps).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use crate::http_server::{Recorded, Reply, TestServer, anthropic_tool_answer};
use crate::judge_cli::JUDGE_VARIABLES;

/// How a test server answers a request.
type Responder = dyn Fn(&Recorded) -> Reply + Send + Sync;

/// The key the tests hand revcal and their reviewers.
const KEY: &str = "sk-ant-api03-LEAKED-secret-0123456789";

fn revcal(dir: &Path, args: &[&str], env: &[(&str, String)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_revcal"));
    command.args(args).current_dir(dir).env_remove("RUST_LOG").env("XDG_CACHE_HOME", dir.join("cache"));
    for variable in JUDGE_VARIABLES {
        command.env_remove(variable);
    }
    command.envs(env.iter().map(|(k, v)| (*k, v.as_str())));
    command.output().unwrap()
}

fn text(output: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// Every file under `dir` that contains `secret`, by path.
fn files_holding(dir: &Path, secret: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if meta.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if meta.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            if bytes.windows(secret.len()).any(|w| w == secret.as_bytes()) {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git").args(args).current_dir(dir).output().unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

const CALC: &str = "def add(a, b):\n    return a + b\n\n\ndef is_adult(age):\n    return age >= 18\n";

const PLANTS: &str = "- {file: src/calc.py, line: 2, original: 'return a + b', mutated: 'return a - b', category: arithmetic}\n- {file: src/calc.py, line: 6, original: '>=', mutated: '>', category: off-by-one}\n";

/// `root/repo`, a repository with one commit, and `root/plants.yaml` planting in it.
fn project(root: &Path) {
    let repo = root.join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/calc.py"), CALC).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "calc"]);
    std::fs::write(root.join("plants.yaml"), PLANTS).unwrap();
}

fn script(root: &Path, name: &str, body: &str) -> String {
    let path = root.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// A judge server that puts the key it was sent into its error bodies (400, 500) and into an
/// answer that is not a verdict: none of it is printed.
#[test]
fn a_judge_server_that_echoes_the_key_never_gets_it_printed() {
    let echo = |request: &Recorded| request.header("x-api-key").unwrap_or("no key").to_owned();
    let replies: [(&str, Box<Responder>); 3] = [
        (
            "400",
            Box::new(move |r| {
                Reply::new(400, format!(r#"{{"error": {{"message": "bad request from key {}"}}}}"#, echo(r)))
            }),
        ),
        ("500", Box::new(move |r| Reply::new(500, format!("<html>upstream failed for {}</html>", echo(r))))),
        (
            "200",
            Box::new(move |r| {
                Reply::new(200, anthropic_tool_answer(&format!(r#"{{"match": true, "key": "{}"}}"#, echo(r))))
            }),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, reply) in replies {
        let server = TestServer::start(move |_, request| reply(request));
        let env = [("ANTHROPIC_API_KEY", KEY.to_owned()), ("ANTHROPIC_BASE_URL", server.url())];
        for args in [
            &["judge", "check", "--judge-retries", "0"][..],
            &["judge", "calibrate", "--judge-retries", "0", "--json"],
        ] {
            let output = revcal(dir.path(), args, &env);
            let all = text(&output);
            assert_eq!(output.status.code(), Some(1), "{name} {args:?}: {all}");
            assert!(server.requests().iter().all(|r| r.header("x-api-key") == Some(KEY)), "the key was sent");
            assert!(!all.contains(KEY), "{name} {args:?}: the key is printed:\n{all}");
            assert!(all.contains("[redacted]"), "{name} {args:?}: the echo is shown redacted:\n{all}");
        }
    }
    assert!(files_holding(dir.path(), KEY).is_empty(), "{:?}", files_holding(dir.path(), KEY));
}

/// A reviewer that prints the key (its environment holds it: passed on with --reviewer-env,
/// else it never gets it) into what revcal shows: the crash message, and the findings that
/// end up in the reports it writes.
#[test]
fn a_reviewer_that_prints_the_key_never_gets_it_printed_or_stored() {
    let root = tempfile::tempdir().unwrap();
    project(root.path());
    let env = [("ANTHROPIC_API_KEY", KEY.to_owned())];
    let crash = script(root.path(), "crash.sh", "echo \"key: $ANTHROPIC_API_KEY\" >&2\nexit 3");
    for json in [false, true] {
        let mut args = vec!["calibrate", "--review-cmd", &crash, "--plants-file", "../plants.yaml"];
        args.extend(["--scorer", "string", "--min-plants", "1", "--build-cmd", "", "-q"]);
        args.extend(["--reviewer-env", "ANTHROPIC_API_KEY"]);
        if json {
            args.push("--json");
        }
        let output = revcal(&root.path().join("repo"), &args, &env);
        let all = text(&output);
        assert_eq!(output.status.code(), Some(1), "{all}");
        assert!(!all.contains(KEY), "the key is printed:\n{all}");
        assert!(all.contains("key: [redacted]"), "{all}");
    }

    let reporter = script(
        root.path(),
        "reporter.sh",
        "printf '[{\"file\": \"src/calc.py\", \"line\": 2, \"message\": \"key %s\"}, {\"file\": \"src/calc.py\", \"line\": 6, \"message\": \"https://u:%s@h/x\"}]' \"$ANTHROPIC_API_KEY\" \"$ANTHROPIC_API_KEY\"",
    );
    let out = root.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let paths =
        ["report.html", "report.xml", "baseline.json"].map(|name| out.join(name).display().to_string());
    let args = [
        "calibrate",
        "--review-cmd",
        &reporter,
        "--plants-file",
        "../plants.yaml",
        "--scorer",
        "string",
        "--min-plants",
        "1",
        "--build-cmd",
        "",
        // A stand-in that says the same of every checkout.
        "--no-preexisting-filter",
        "--reviewer-env",
        "ANTHROPIC_API_KEY",
        "-q",
        "--json",
        "--html",
        &paths[0],
        "--junit",
        &paths[1],
        "--save-baseline",
        &paths[2],
    ];
    let output = revcal(&root.path().join("repo"), &args, &env);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("[redacted]"), "the findings are in the report:\n{all}");
    assert!(!all.contains(KEY), "the key is printed:\n{all}");
    for path in &paths {
        let written = std::fs::read_to_string(path).unwrap();
        assert!(!written.contains(KEY), "{path} holds the key");
    }
    assert!(files_holding(root.path(), KEY).is_empty(), "{:?}", files_holding(root.path(), KEY));
}

/// The token of a suite's repository URL is printed nowhere (stderr, logs, the report) and
/// stored nowhere (the shard file's unit errors), including when the clone fails.
#[test]
fn a_token_in_a_suite_url_is_redacted_when_the_clone_fails() {
    let root = tempfile::tempdir().unwrap();
    let server = TestServer::start(|_, _| Reply::new(404, "no such repository"));
    let url = format!("http://user:TOKEN-d41d8cd98f00b204@{}/team/private.git", server.host());
    std::fs::write(root.path().join("suite.yaml"), format!("entries:\n  - {{repo: '{url}', plants: 3}}\n"))
        .unwrap();
    let base = ["calibrate", "suite", "suite.yaml", "--review-cmd", "echo '[]'", "--scorer", "repro"];
    for extra in
        [&["--shard", "1/1", "--out", "shard.json", "-v"][..], &["--json", "-v"], &["--out", "whole.json"]]
    {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let output = revcal(root.path(), &args, &[]);
        let all = text(&output);
        assert_eq!(output.status.code(), Some(1), "{all}");
        assert!(all.contains("private.git"), "the failure names the repository: {all}");
        assert!(!all.contains("TOKEN-d41d8cd98f00b204"), "{extra:?}: the token is printed:\n{all}");
    }
    assert!(!server.requests().is_empty(), "git tried the server");
    let shard = std::fs::read_to_string(root.path().join("shard.json")).unwrap();
    assert!(shard.contains("unitErrors") || shard.contains("\"error\""), "{shard}");
    assert!(shard.contains("http://[redacted]@"), "{shard}");
    let holding = files_holding(root.path(), "TOKEN-d41d8cd98f00b204");
    assert_eq!(holding, [root.path().join("suite.yaml").display().to_string()], "only the suite holds it");
}

/// A repository served over HTTP (git's dumb protocol, from a bare repository's files) at a
/// URL with a token: the suite runs, and no file revcal keeps (the clone in --repos-dir
/// included: git writes a clone's URL into its config) holds the token.
#[test]
fn a_token_in_a_suite_url_is_stored_nowhere_when_the_clone_succeeds() {
    let root = tempfile::tempdir().unwrap();
    project(root.path());
    let bare = root.path().join("served/calc.git");
    git(root.path(), &["clone", "-q", "--bare", "repo", bare.to_str().unwrap()]);
    git(&bare, &["update-server-info"]);
    let served = root.path().join("served");
    let server = TestServer::start(move |_, request| {
        let path = request.path.split('?').next().unwrap_or("").trim_start_matches('/');
        match std::fs::read(served.join(path)) {
            Ok(bytes) if !path.is_empty() && !path.contains("..") => {
                let mut raw = format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\ncontent-type: application/octet-stream\r\nconnection: close\r\n\r\n",
                    bytes.len()
                )
                .into_bytes();
                raw.extend(bytes);
                Reply::raw(raw)
            }
            _ => Reply::new(404, "not found"),
        }
    });
    let url = format!("http://user:TOKEN-9e107d9d372bb682@{}/calc.git", server.host());
    let suite = format!("entries:\n  - {{repo: '{url}', plants_file: plants.yaml}}\n");
    std::fs::write(root.path().join("suite.yaml"), suite).unwrap();
    let args = [
        "calibrate",
        "suite",
        "suite.yaml",
        "--review-cmd",
        "echo '[]'",
        "--scorer",
        "repro",
        "--min-recall",
        "0",
        "--min-plants",
        "1",
        "--build-cmd",
        "",
        "--repos-dir",
        "clones",
        "--out",
        "shard.json",
        "--json",
        "-v",
    ];
    let output = revcal(root.path(), &args, &[]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(!all.contains("TOKEN-9e107d9d372bb682"), "the token is printed:\n{all}");
    assert!(root.path().join("clones").read_dir().unwrap().count() == 1, "one clone");
    // A second run fetches into the clone it keeps (the commit is there: it is reused).
    let again = revcal(root.path(), &args, &[]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    let holding = files_holding(root.path(), "TOKEN-9e107d9d372bb682");
    assert_eq!(holding, [root.path().join("suite.yaml").display().to_string()], "only the suite holds it");
}
