//! `cargo xtask bench calibrate-parallel`: reviews and judge questions at once.
//!
//! A reviewer that takes 2 s a review, and a judge server on 127.0.0.1 (speaking the OpenAI
//! chat-completions format) that answers each question in 0.5 s, like a careful judge: a
//! match when the finding states the planted defect. 24 plants, each reviewed alone, three
//! trials: 72 reviews. It times the whole `revcal calibrate --jobs 8` against the ideal
//! (72 x 2 s / 8, plus the judge's questions x 0.5 s / 8), target at most 1.25 x the ideal,
//! then runs `--jobs 1` and checks that both print the same JSON report, byte for byte.

use crate::bench_calibrate::git;
use anyhow::{Context, Result, bail};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const PLANTS: usize = 24;
const TRIALS: usize = 3;
const JOBS: usize = 8;
const REVIEW: Duration = Duration::from_secs(2);
const ANSWER: Duration = Duration::from_millis(500);
const TARGET_RATIO: f64 = 1.25;

/// Runs the benchmark.
pub(crate) fn run(root: &Path) -> Result<ExitCode> {
    let revcal = crate::bench_calibrate::release_binary(root)?;
    let dir = tempfile::Builder::new().prefix("revcal-bench-parallel-").tempdir()?;
    let repo = dir.path().join("repo");
    generate(&repo, &dir.path().join("plants.yaml"))?;
    let reviewer = dir.path().join("reviewer.sh");
    std::fs::write(&reviewer, REVIEWER)?;
    std::fs::set_permissions(&reviewer, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    let server = JudgeServer::start()?;
    println!(
        "{PLANTS} plants, each reviewed alone, x {TRIALS} trials = {} reviews of {:.1} s; a judge answering in {:.1} s on {}",
        PLANTS * TRIALS,
        REVIEW.as_secs_f64(),
        ANSWER.as_secs_f64(),
        server.url()
    );
    let calibrate = |jobs: usize| -> Result<(Duration, Vec<u8>, usize)> {
        let before = server.requests();
        let mut command = Command::new(&revcal);
        command
            .args(["calibrate", "--review-cmd"])
            .arg(format!("{} {{base}}", reviewer.display()))
            .arg("--plants-file")
            .arg(dir.path().join("plants.yaml"))
            .args(["--one-at-a-time", "--trials", &TRIALS.to_string(), "--jobs", &jobs.to_string()])
            .args([
                "--judge-provider",
                "openai",
                "--no-judge-cache",
                "--min-recall",
                "0",
                "--json",
                "--quiet",
            ])
            .current_dir(&repo)
            .env("OPENAI_API_KEY", "bench")
            .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
            .env_remove("REVCAL_JUDGE_MODEL")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let started = Instant::now();
        let output = command.output().context("cannot run revcal")?;
        let elapsed = started.elapsed();
        if !output.status.success() {
            bail!(
                "revcal calibrate --jobs {jobs} failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok((elapsed, output.stdout, server.requests() - before))
    };
    let (parallel, report, questions) = calibrate(JOBS)?;
    let reviews = (PLANTS * TRIALS) as f64 * REVIEW.as_secs_f64() / JOBS as f64;
    let judge = questions as f64 * ANSWER.as_secs_f64() / JOBS as f64;
    let ideal = reviews + judge;
    let ratio = parallel.as_secs_f64() / ideal;
    println!(
        "--jobs {JOBS}: {:.1} s; ideal {ideal:.1} s ({reviews:.1} s of reviews + {judge:.1} s for {questions} judge questions); ratio {ratio:.2} (target <= {TARGET_RATIO})",
        parallel.as_secs_f64()
    );
    let (serial, serial_report, serial_questions) = calibrate(1)?;
    let identical = serial_report == report;
    println!(
        "--jobs 1: {:.1} s ({serial_questions} judge questions); --jobs 1 / --jobs {JOBS}: {:.2}x; reports identical: {}",
        serial.as_secs_f64(),
        serial.as_secs_f64() / parallel.as_secs_f64(),
        if identical { "yes" } else { "NO" }
    );
    if !identical {
        let path = dir.keep();
        std::fs::write(path.join("report-jobs-1.json"), &serial_report)?;
        std::fs::write(path.join("report-jobs-8.json"), &report)?;
        println!("the two reports are in {}", path.display());
    }
    Ok(if identical && ratio <= TARGET_RATIO { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The reviewer: 2 s of "thinking", then the one plant of its checkout (the line `git diff`
/// shows against the commit), stated the way the plants file states its defect.
const REVIEWER: &str = r#"#!/bin/sh
sleep 2
diff=$(git diff -U0 HEAD -- app.py)
line=$(printf '%s\n' "$diff" | sed -n 's/^@@ -\([0-9]*\).*/\1/p' | head -n 1)
n=$(printf '%s\n' "$diff" | sed -n 's/^-    return x + \([0-9]*\)$/\1/p' | head -n 1)
printf '{"findings": [{"file": "app.py", "line": %s, "message": "f%s subtracts %s instead of adding it"}]}\n' "$line" "$n" "$n"
"#;

/// A repository whose commit adds `app.py` (24 functions adding a constant), and a plants
/// file turning each addition into a subtraction.
fn generate(repo: &Path, plants: &Path) -> Result<()> {
    std::fs::create_dir_all(repo)?;
    let mut source = String::new();
    let mut entries = String::new();
    for n in 1..=PLANTS {
        source.push_str(&format!("def f{n}(x):\n    return x + {n}\n\n\n"));
        let line = (n - 1) * 4 + 2;
        entries.push_str(&format!(
            "- file: app.py\n  line: {line}\n  original: \"x + {n}\"\n  mutated: \"x - {n}\"\n  category: arithmetic\n  defect: \"f{n} subtracts {n} instead of adding it\"\n"
        ));
    }
    std::fs::write(repo.join("README.md"), "bench\n")?;
    git(repo, &["init", "-q"])?;
    git(repo, &["add", "."])?;
    git(repo, &["commit", "-q", "-m", "readme"])?;
    std::fs::write(repo.join("app.py"), source)?;
    git(repo, &["add", "."])?;
    git(repo, &["commit", "-q", "-m", "app"])?;
    std::fs::write(plants, entries)?;
    Ok(())
}

/// An OpenAI-compatible chat-completions server on 127.0.0.1 that answers each request after
/// [`ANSWER`], with a match when the finding's text states the planted defect.
struct JudgeServer {
    port: u16,
    requests: Arc<AtomicUsize>,
}

impl JudgeServer {
    fn start() -> Result<JudgeServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&requests);
        // Detached: it serves until the process ends.
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let counted = Arc::clone(&counted);
                std::thread::spawn(move || serve(stream, &counted));
            }
        });
        Ok(JudgeServer { port, requests })
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Serves the requests of one connection (kept alive) until it closes.
fn serve(stream: TcpStream, requests: &AtomicUsize) {
    let Ok(mut writer) = stream.try_clone() else { return };
    let mut reader = BufReader::new(stream);
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        let mut first = true;
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if first {
                first = false;
                continue;
            }
            let trimmed = line.trim_end();
            if trimmed.is_empty() {
                break;
            }
            if let Some((name, value)) = trimmed.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        requests.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(ANSWER);
        let matched = verdict(&body);
        let content = serde_json::to_string(&format!(r#"{{"match": {matched}, "reason": "bench judge"}}"#))
            .unwrap_or_default();
        let answer = format!(
            r#"{{"id":"b","object":"chat.completion","choices":[{{"index":0,"message":{{"role":"assistant","content":{content}}},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":100,"completion_tokens":10}}}}"#
        );
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
            answer.len()
        );
        if writer.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

/// A match when the finding's text (the fence after `text:` in the REVIEW FINDING part)
/// contains the planted defect (the fence after `the defect:`).
fn verdict(body: &[u8]) -> bool {
    let Ok(request) = serde_json::from_slice::<serde_json::Value>(body) else { return false };
    let prompt: String = request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|message| message["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let fenced_after = |label: &str, from: usize| -> Option<String> {
        let open = prompt.find("<data-")?;
        let nonce: String = prompt[open + 6..].chars().take_while(char::is_ascii_hexdigit).collect();
        let (start_tag, end_tag) = (format!("<data-{nonce}>\n"), format!("\n</data-{nonce}>"));
        let at = from + prompt[from..].find(label)? + label.len();
        let start = at + prompt[at..].find(&start_tag)? + start_tag.len();
        let end = start + prompt[start..].find(&end_tag)?;
        Some(prompt[start..end].to_owned())
    };
    let Some(finding) = prompt.find("REVIEW FINDING") else { return false };
    match (fenced_after("the defect:\n", 0), fenced_after("text:\n", finding)) {
        (Some(defect), Some(text)) => !defect.trim().is_empty() && text.contains(defect.trim()),
        _ => false,
    }
}
