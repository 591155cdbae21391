//! The real AgentChat server (`shared/agentchat/serve`, node) on a free port of 127.0.0.1,
//! for the tests: started, polled until `GET /health` answers, killed and restarted on the
//! same port and data directory, and stopped when the guard is dropped, on every path.
//!
//! Without node (18 or later) or the server's files, [`AgentChatServer::start`] returns
//! `None` after printing a notice, and the test skips; with `REVCAL_REQUIRE_AGENTCHAT=1` it
//! panics instead, so CI cannot skip them silently. `REVCAL_AGENTCHAT_SERVE` names the
//! `serve` script when it is not in a `shared/agentchat/` beside an ancestor directory.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The variable that forbids skipping.
pub(crate) const REQUIRE_VARIABLE: &str = "REVCAL_REQUIRE_AGENTCHAT";

/// A running AgentChat server.
pub(crate) struct AgentChatServer {
    child: Option<Child>,
    port: u16,
    data: tempfile::TempDir,
    serve: PathBuf,
    genesis: Option<String>,
}

/// The `serve` script, if it can be found.
fn serve_script() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("REVCAL_AGENTCHAT_SERVE") {
        return Some(PathBuf::from(path));
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("shared/agentchat/serve"))
        .find(|path| path.is_file())
}

/// Why the server cannot run here, if it cannot.
fn missing() -> Option<String> {
    let Some(_) = serve_script() else {
        return Some("the AgentChat server (shared/agentchat/serve) is not beside the repository; set REVCAL_AGENTCHAT_SERVE".into());
    };
    match Command::new("node").arg("--version").output() {
        Ok(output) if output.status.success() => {
            let version = String::from_utf8_lossy(&output.stdout);
            let major: u32 = version.trim().trim_start_matches('v').split('.').next()?.parse().ok()?;
            (major < 18).then(|| format!("node {} is older than 18", version.trim()))
        }
        _ => Some("node is not installed (the AgentChat server needs node 18 or later)".into()),
    }
}

/// A free TCP port on 127.0.0.1 (free when asked; the server binds it right after).
pub(crate) fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

impl AgentChatServer {
    /// Starts a server whose verified (genesis) agent is `genesis` (16 hex digits); `None`
    /// with a notice when it cannot run here.
    pub(crate) fn start(test: &str, genesis: Option<&str>) -> Option<AgentChatServer> {
        if let Some(reason) = missing() {
            if std::env::var_os(REQUIRE_VARIABLE).is_some_and(|v| v == "1") {
                panic!("{test}: {reason}, and {REQUIRE_VARIABLE}=1 forbids skipping");
            }
            eprintln!("note: {test}: skipped against the real AgentChat server: {reason}");
            return None;
        }
        let mut server = AgentChatServer {
            child: None,
            port: free_port(),
            data: tempfile::tempdir().unwrap(),
            serve: serve_script()?,
            genesis: genesis.map(str::to_owned),
        };
        server.launch();
        Some(server)
    }

    /// `ws://127.0.0.1:PORT`.
    pub(crate) fn url(&self) -> String {
        format!("ws://127.0.0.1:{}", self.port)
    }

    /// The port.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The server's process id (node).
    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// The server's log (its stderr).
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.data.path().join("server.log")).unwrap_or_default()
    }

    fn launch(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.data.path().join("server.log"))
            .unwrap();
        let mut command = Command::new(&self.serve);
        command
            .arg(self.port.to_string())
            .arg(self.data.path().join("data"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        if let Some(genesis) = &self.genesis {
            command.arg(genesis);
        }
        self.child = Some(command.spawn().unwrap());
        self.wait_ready();
    }

    /// Polls `GET /health` until it answers (a safety net of 60 s, not an oracle).
    fn wait_ready(&mut self) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.as_mut().and_then(|child| child.try_wait().unwrap()) {
                panic!("the AgentChat server exited ({status}) before it was ready:\n{}", self.log());
            }
            if health(self.port) {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the AgentChat server is not ready:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills the server (SIGKILL) and waits for it: channels and connections are gone.
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port and data directory.
    pub(crate) fn restart(&mut self) {
        self.kill();
        self.launch();
    }
}

impl Drop for AgentChatServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// True when `GET /health` on `port` answers 200.
fn health(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    if stream.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200")
}
