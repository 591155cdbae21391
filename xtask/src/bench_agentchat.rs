//! `cargo xtask bench agentchat`: messages stored per second through one ledger agent
//! (`revcal agentchat serve`) against the real AgentChat server, next to `revcal elo ingest`
//! of the same signed messages from a file.
//!
//! AgentChat lets each connection post one message a second, so the rate through the chat is
//! bounded by the number of posters: AGENTS agents post MESSAGES signed requests each, all at
//! once (`revcal agentchat post --signed`), and the clock runs from their start until the
//! ledger agent has logged every message stored. The ledger agent's own CPU time per message
//! (from /proc) says what it would take with more posters.

use anyhow::{Context, Result, bail};
use revcal_agentchat::ChatIdentity;
use revcal_elo::{Content, Keypair, Message, RequestContent, SignedMessage};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const AGENTS: usize = 40;
const MESSAGES: usize = 25;

/// A child process killed on drop.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs the benchmark.
pub(crate) fn run(root: &Path) -> Result<ExitCode> {
    let Some(serve) =
        root.ancestors().map(|dir| dir.join("shared/agentchat/serve")).find(|path| path.is_file())
    else {
        bail!("the AgentChat server (shared/agentchat/serve) is not beside the repository");
    };
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "-q", "-p", "revcal-cli", "--bin", "revcal"])
        .current_dir(root)
        .status()
        .context("cannot run cargo build")?;
    if !status.success() {
        bail!("cargo build --release failed");
    }
    let target_dir =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let revcal = target_dir.join("release/revcal");
    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    let dir = dir.path();

    // Keys and signed messages, made here: one file per agent and one with them all.
    let ledger_key = Keypair::from_seed([200; 32]);
    write_key(&dir.join("ledger.key"), &ledger_key)?;
    let mut all = String::new();
    for agent in 0..AGENTS {
        let key = Keypair::from_seed([agent as u8 + 1; 32]);
        write_key(&dir.join(format!("agent{agent}.key")), &key)?;
        let mut lines = String::new();
        for n in 0..MESSAGES {
            let message = Message {
                from: key.agent_id(),
                to: "#review".into(),
                ts: 1_700_000_000_000 + n as u64,
                content: Content::Request(RequestContent {
                    title: Some(format!("agent {agent} change {n}")),
                    diff_summary: Some("a benchmark request".into()),
                    ..Default::default()
                }),
            };
            let signed = SignedMessage::sign(&message, &key).context("cannot sign")?;
            lines.push_str(signed.canonical());
            lines.push('\n');
        }
        std::fs::write(dir.join(format!("agent{agent}.jsonl")), &lines)?;
        all.push_str(&lines);
    }
    std::fs::write(dir.join("all.jsonl"), &all)?;
    let total = AGENTS * MESSAGES;

    // The baseline: the same messages from a file.
    let started = Instant::now();
    let ingest = Command::new(&revcal)
        .args(["elo", "ingest", "all.jsonl", "--ledger", "ingest.sqlite"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()?;
    let ingest_time = started.elapsed();
    if !ingest.success() {
        bail!("revcal elo ingest failed");
    }

    // The server, the ledger agent, the posters.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let genesis = ChatIdentity::new(ledger_key).chat_id().hex().to_owned();
    let log = std::fs::File::create(dir.join("server.log"))?;
    let _server = Guard(
        Command::new(&serve)
            .args([&port.to_string(), &dir.join("data").display().to_string(), &genesis])
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("cannot start the AgentChat server (node)")?,
    );
    wait(Duration::from_secs(60), "the server's /health", || health(port))?;
    let url = format!("ws://127.0.0.1:{port}");
    let agent_log = dir.join("agent.jsonl");
    let agent = Guard(
        Command::new(&revcal)
            .args([
                "agentchat",
                "serve",
                "--server",
                &url,
                "--key",
                "ledger.key",
                "--ledger",
                "chat.sqlite",
                "--json",
            ])
            .current_dir(dir)
            .stdout(std::fs::File::create(&agent_log)?)
            .stderr(Stdio::null())
            .spawn()?,
    );
    let events = |kind: &str| {
        std::fs::read_to_string(&agent_log)
            .unwrap_or_default()
            .matches(&format!("\"event\":\"{kind}\""))
            .count()
    };
    wait(Duration::from_secs(60), "the ledger agent in #review", || events("joined") > 0)?;
    let cpu_before = cpu_seconds(agent.0.id())?;
    let started = Instant::now();
    let mut posters = Vec::new();
    for agent in 0..AGENTS {
        posters.push(Guard(
            Command::new(&revcal)
                .args(["agentchat", "post", "--server", &url, "--key", &format!("agent{agent}.key")])
                .args(["--signed", &format!("agent{agent}.jsonl"), "--wait", "600"])
                .current_dir(dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?,
        ));
    }
    wait(Duration::from_secs(600), "every message stored", || events("stored") >= total)?;
    let chat_time = started.elapsed();
    let cpu = cpu_seconds(agent.0.id())? - cpu_before;
    drop(posters);

    let chat_rate = total as f64 / chat_time.as_secs_f64();
    let ingest_rate = total as f64 / ingest_time.as_secs_f64();
    println!("{total} signed requests from {AGENTS} agents ({MESSAGES} each), one ledger agent, SQLite");
    println!(
        "through AgentChat:  {:>8.1} messages/s stored ({:.2} s; the server allows each agent 1 message/s, so at most {AGENTS}/s)",
        chat_rate,
        chat_time.as_secs_f64()
    );
    println!(
        "the ledger agent's own CPU: {:.3} s, {:.0} microseconds a message ({:.0} messages per CPU-second)",
        cpu,
        cpu * 1e6 / total as f64,
        total as f64 / cpu.max(1e-9)
    );
    println!(
        "revcal elo ingest:  {:>8.1} messages/s ({:.3} s, one process, one file)",
        ingest_rate,
        ingest_time.as_secs_f64()
    );
    println!("ratio (chat / ingest): {:.4}", chat_rate / ingest_rate);
    Ok(ExitCode::SUCCESS)
}

fn write_key(path: &Path, key: &Keypair) -> Result<()> {
    std::fs::write(path, serde_json::to_string(&key.to_key_file())?)?;
    Ok(())
}

/// Polls `done` every 20 ms until it holds or `limit` passes.
fn wait(limit: Duration, what: &str, mut done: impl FnMut() -> bool) -> Result<()> {
    let started = Instant::now();
    while !done() {
        if started.elapsed() > limit {
            bail!("gave up waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

fn health(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    if stream.write_all(b"GET /health HTTP/1.0\r\n\r\n").is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.contains(" 200 ")
}

/// User and system CPU seconds of process `pid` (/proc/PID/stat, fields 14 and 15).
fn cpu_seconds(pid: u32) -> Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or_default();
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields.get(11).and_then(|f| f.parse().ok()).unwrap_or(0)
        + fields.get(12).and_then(|f| f.parse().ok()).unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Ok(ticks as f64 / per_second)
}
