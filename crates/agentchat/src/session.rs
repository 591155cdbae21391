//! One agent's presence in one channel: connected, identified by its key, joined, and kept
//! so. A [`Session`] reconnects with backoff when the server goes away, drops the link,
//! stops answering or displaces it; sends at most one message per interval (queued, never
//! dropped: a message the server refuses for the rate is sent again); and answers pings.

use crate::frame::{self, ChatMessage, MAX_FRAME_BYTES, ServerFrame};
use crate::identity::{ChatId, ChatIdentity};
use std::collections::VecDeque;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Message, WebSocket};

/// How a session behaves; [`SessionConfig::new`] gives the defaults.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The server, `ws://HOST:PORT[/PATH]`.
    pub server: String,
    /// The name sent in `IDENTIFY` (1 to 32 of `A-Za-z0-9_-`).
    pub name: String,
    /// The channel, e.g. `#review`.
    pub channel: String,
    /// Create the channel when it does not exist (only a verified agent may).
    pub may_create: bool,
    /// When the channel does not exist (and cannot be created), wait for it (try again
    /// with backoff) instead of failing with [`SessionError::ChannelMissing`].
    pub wait_for_channel: bool,
    /// The least time between two `MSG`s: the server refuses more than one a second.
    pub send_interval: Duration,
    /// A `PING` is sent after this long without a frame from the server.
    pub keepalive: Duration,
    /// The link is given up when a `PING` gets nothing back for this long.
    pub dead_after: Duration,
    /// The wait before the first reconnection; it doubles up to `backoff_max`.
    pub backoff_initial: Duration,
    /// The longest wait between reconnections.
    pub backoff_max: Duration,
    /// The time a TCP connection and the WebSocket handshake may take.
    pub connect_timeout: Duration,
    /// The time from connecting to being in the channel (the server delays taking over an
    /// identity still connected elsewhere by up to a minute).
    pub login_timeout: Duration,
}

impl SessionConfig {
    /// The defaults for `server`, `name` and `channel`: 1.1 s between messages, a `PING`
    /// after 20 s of silence and the link dropped 30 s later, reconnections from 0.5 s to 30 s.
    pub fn new(server: &str, name: &str, channel: &str) -> SessionConfig {
        SessionConfig {
            server: server.to_owned(),
            name: name.to_owned(),
            channel: channel.to_owned(),
            may_create: false,
            wait_for_channel: false,
            send_interval: Duration::from_millis(1100),
            keepalive: Duration::from_secs(20),
            dead_after: Duration::from_secs(30),
            backoff_initial: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            login_timeout: Duration::from_secs(90),
        }
    }
}

/// Something that happened in the session.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    /// The agent is in the channel (after every connection).
    Joined {
        /// Its AgentChat id.
        chat_id: ChatId,
        /// Whether the server treats it as verified.
        verified: bool,
        /// Whether it created the channel.
        created: bool,
    },
    /// The link was lost; the session reconnects by itself.
    Disconnected {
        /// Why.
        reason: String,
    },
    /// A message in the channel: another agent's, a server notice, or one of this agent's
    /// own sent again from the replay buffer.
    Message(ChatMessage),
    /// An agent joined the channel.
    AgentJoined {
        /// Its AgentChat id.
        agent: String,
    },
    /// A message this session sent was relayed (the server's echo to its sender).
    Sent {
        /// What [`Session::send`] returned.
        token: u64,
        /// The server's id for it.
        msg_id: Option<String>,
        /// The content as relayed (the server may have masked part of it).
        content: String,
    },
    /// The server refused a message this session sent (other than for the rate, which is
    /// sent again).
    Refused {
        /// What [`Session::send`] returned.
        token: u64,
        /// The server's error code.
        code: String,
        /// The server's words.
        message: String,
    },
}

/// Why a session cannot go on (everything else is retried).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The server URL cannot be used.
    #[error("server {url}: {reason}")]
    BadServer {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The channel does not exist and this agent may not create it.
    #[error(
        "channel {channel} does not exist on {server}, and {agent} may not create it: only a verified agent may \
         (start the server with GENESIS_AGENT_ID={hex}, or have a verified agent create the channel first)"
    )]
    ChannelMissing {
        /// The channel.
        channel: String,
        /// The server.
        server: String,
        /// This agent's AgentChat id.
        agent: ChatId,
        /// Its 16 hex digits.
        hex: String,
    },
    /// The server refused this identity.
    #[error("server {server} refused {agent}: {code}: {message}")]
    Refused {
        /// The server.
        server: String,
        /// This agent's AgentChat id.
        agent: ChatId,
        /// The server's error code.
        code: String,
        /// The server's words.
        message: String,
    },
    /// A message larger than the server's frame.
    #[error(
        "the message makes a frame of {bytes} bytes, more than AgentChat's limit of {} bytes",
        MAX_FRAME_BYTES
    )]
    TooLarge {
        /// The frame's size.
        bytes: usize,
    },
}

/// A message waiting to go out, or sent and not yet relayed back.
#[derive(Debug, Clone)]
struct Outgoing {
    token: u64,
    frame: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// `IDENTIFY` sent; waiting for the challenge, then `WELCOME`.
    Identifying,
    /// `JOIN` (or `CREATE_CHANNEL`) sent.
    Joining { tried_create: bool },
    /// In the channel.
    Ready,
}

struct Link {
    socket: WebSocket<TcpStream>,
    phase: Phase,
    connected_at: Instant,
    last_frame: Instant,
    ping_sent: Option<Instant>,
    verified: bool,
}

/// One agent in one channel of one server. Drive it with [`Session::poll`].
pub struct Session {
    identity: ChatIdentity,
    config: SessionConfig,
    host: String,
    port: u16,
    link: Option<Link>,
    retry_at: Instant,
    backoff: Duration,
    ever_joined: bool,
    outbox: VecDeque<Outgoing>,
    in_flight: VecDeque<Outgoing>,
    next_send: Instant,
    next_token: u64,
    events: VecDeque<SessionEvent>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("server", &self.config.server)
            .field("channel", &self.config.channel)
            .field("agent", self.identity.chat_id())
            .finish_non_exhaustive()
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn unix_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
}

impl Session {
    /// A session for `identity`; nothing is connected until [`Session::poll`].
    pub fn new(identity: ChatIdentity, config: SessionConfig) -> Result<Session, SessionError> {
        let (host, port) = parse_server(&config.server)?;
        let now = Instant::now();
        Ok(Session {
            identity,
            backoff: config.backoff_initial,
            config,
            host,
            port,
            link: None,
            retry_at: now,
            ever_joined: false,
            outbox: VecDeque::new(),
            in_flight: VecDeque::new(),
            next_send: now,
            next_token: 1,
            events: VecDeque::new(),
        })
    }

    /// The agent's identity.
    pub fn identity(&self) -> &ChatIdentity {
        &self.identity
    }

    /// The session's settings.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// True while the agent is in the channel.
    pub fn is_ready(&self) -> bool {
        self.link.as_ref().is_some_and(|link| link.phase == Phase::Ready)
    }

    /// Messages queued or sent and not yet relayed back.
    pub fn backlog(&self) -> usize {
        self.outbox.len() + self.in_flight.len()
    }

    /// True while the message of `token` is queued or on its way.
    pub fn is_pending(&self, token: u64) -> bool {
        self.outbox.iter().chain(&self.in_flight).any(|out| out.token == token)
    }

    /// Queues `content` for the channel (answering the server's message `in_reply_to`);
    /// returns the token [`SessionEvent::Sent`] and [`SessionEvent::Refused`] name it by.
    pub fn send(&mut self, content: &str, in_reply_to: Option<&str>) -> Result<u64, SessionError> {
        let frame = frame::msg(&self.config.channel, content, in_reply_to);
        if frame.len() > MAX_FRAME_BYTES {
            return Err(SessionError::TooLarge { bytes: frame.len() });
        }
        let token = self.next_token;
        self.next_token += 1;
        self.outbox.push_back(Outgoing { token, frame });
        Ok(token)
    }

    /// Connects, identifies, joins, sends what is due, reads what comes, for at most
    /// `wait`; returns the first event (or `None` when `wait` passed without one).
    pub fn poll(&mut self, wait: Duration) -> Result<Option<SessionEvent>, SessionError> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(event) = self.events.pop_front() {
                return Ok(Some(event));
            }
            let now = Instant::now();
            if self.link.is_none() {
                if now >= self.retry_at {
                    self.connect();
                    continue;
                }
                if now >= deadline {
                    return Ok(None);
                }
                std::thread::sleep(self.retry_at.min(deadline) - now);
                continue;
            }
            self.step(deadline)?;
            if self.events.is_empty() && Instant::now() >= deadline {
                return Ok(None);
            }
        }
    }

    /// Keeps the session alive (connected, pings answered, messages sent) for `wait`
    /// without handing out events: they wait for the next [`Session::poll`].
    pub fn hold(&mut self, wait: Duration) -> Result<(), SessionError> {
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if self.link.is_none() {
                let now = Instant::now();
                if now >= self.retry_at {
                    self.connect();
                } else {
                    std::thread::sleep(self.retry_at.min(deadline) - now);
                }
                continue;
            }
            self.step(deadline)?;
        }
        Ok(())
    }

    /// Closes the link politely (queued messages stay queued).
    pub fn close(&mut self) {
        if let Some(mut link) = self.link.take() {
            let _ = link.socket.close(None);
            let _ = link.socket.flush();
        }
        self.requeue_in_flight();
    }

    fn connect(&mut self) {
        match self.open() {
            Ok(mut socket) => {
                let now = Instant::now();
                let identify = frame::identify(&self.config.name, self.identity.pem());
                match socket.send(Message::text(identify)) {
                    Ok(()) => {
                        tracing::debug!(server = %self.config.server, "connected; identifying");
                        self.link = Some(Link {
                            socket,
                            phase: Phase::Identifying,
                            connected_at: now,
                            last_frame: now,
                            ping_sent: None,
                            verified: false,
                        });
                    }
                    Err(error) => self.schedule_retry(&format!("cannot identify: {error}")),
                }
            }
            Err(reason) => self.schedule_retry(&reason),
        }
    }

    fn open(&self) -> Result<WebSocket<TcpStream>, String> {
        let server = &self.config.server;
        let addresses = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|error| format!("cannot resolve {}: {error}", self.host))?;
        let mut last = format!("{} resolves to no address", self.host);
        for address in addresses {
            match TcpStream::connect_timeout(&address, self.config.connect_timeout) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    let timeout = Some(self.config.connect_timeout);
                    stream.set_read_timeout(timeout).map_err(|error| error.to_string())?;
                    stream.set_write_timeout(timeout).map_err(|error| error.to_string())?;
                    // Frames from the server carry at most its 2 MiB of content, JSON-escaped.
                    let config = WebSocketConfig::default()
                        .max_message_size(Some(4 * MAX_FRAME_BYTES))
                        .max_frame_size(Some(4 * MAX_FRAME_BYTES));
                    return tungstenite::client::client_with_config(server.as_str(), stream, Some(config))
                        .map(|(socket, _)| socket)
                        .map_err(|error| format!("WebSocket handshake with {server} failed: {error}"));
                }
                Err(error) => last = format!("cannot connect to {address}: {error}"),
            }
        }
        Err(last)
    }

    /// One round: send what is due, keep the link alive, read for a while.
    fn step(&mut self, deadline: Instant) -> Result<(), SessionError> {
        let now = Instant::now();
        let Some(link) = self.link.as_mut() else { return Ok(()) };
        if link.phase != Phase::Ready && now.duration_since(link.connected_at) > self.config.login_timeout {
            self.drop_link(&format!(
                "not in {} {} s after connecting",
                self.config.channel,
                self.config.login_timeout.as_secs()
            ));
            return Ok(());
        }
        if let Some(sent) = link.ping_sent {
            if now.duration_since(sent) > self.config.dead_after {
                self.drop_link(&format!("no answer to PING for {} s", self.config.dead_after.as_secs()));
                return Ok(());
            }
        } else if now.duration_since(link.last_frame) > self.config.keepalive {
            link.ping_sent = Some(now);
            if let Err(error) = link.socket.send(Message::text(frame::ping())) {
                self.drop_link(&format!("cannot send PING: {error}"));
                return Ok(());
            }
        }
        if link.phase == Phase::Ready
            && now >= self.next_send
            && self.in_flight.len() < 4
            && let Some(out) = self.outbox.pop_front()
        {
            let sent = link.socket.send(Message::text(out.frame.clone()));
            self.in_flight.push_back(out);
            self.next_send = now + self.config.send_interval;
            if let Err(error) = sent {
                self.drop_link(&format!("cannot send: {error}"));
                return Ok(());
            }
        }
        // Read until the next thing to do: a send, a keepalive, the caller's deadline.
        let mut until = deadline.min(now + Duration::from_millis(250));
        if link.phase == Phase::Ready && !self.outbox.is_empty() {
            until = until.min(self.next_send);
        }
        let wait = until.saturating_duration_since(now).max(Duration::from_millis(1));
        let _ = link.socket.get_mut().set_read_timeout(Some(wait));
        match link.socket.read() {
            Ok(Message::Text(text)) => {
                link.last_frame = Instant::now();
                link.ping_sent = None;
                if let Some(frame) = ServerFrame::parse(text.as_str()) {
                    self.on_frame(frame)?;
                }
            }
            Ok(Message::Close(close)) => {
                let reason = close.map_or_else(
                    || "the server closed the connection".to_owned(),
                    |close| {
                        format!(
                            "the server closed the connection ({}: {})",
                            u16::from(close.code),
                            close.reason
                        )
                    },
                );
                self.drop_link(&reason);
            }
            Ok(_) => {
                link.last_frame = Instant::now();
                link.ping_sent = None;
            }
            Err(tungstenite::Error::Io(error))
                if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(error) => self.drop_link(&format!("connection lost: {error}")),
        }
        Ok(())
    }

    fn on_frame(&mut self, frame: ServerFrame) -> Result<(), SessionError> {
        let channel = self.config.channel.clone();
        let Some(link) = self.link.as_mut() else { return Ok(()) };
        match frame {
            ServerFrame::Challenge { challenge_id, nonce } => {
                let timestamp = unix_millis();
                let signature = self.identity.answer_challenge(&nonce, &challenge_id, timestamp);
                let answer = frame::verify_identity(&challenge_id, &signature, timestamp);
                if let Err(error) = link.socket.send(Message::text(answer)) {
                    self.drop_link(&format!("cannot answer the challenge: {error}"));
                }
            }
            ServerFrame::Welcome { agent_id, verified } => {
                if agent_id != self.identity.chat_id().as_str() {
                    tracing::warn!(expected = %self.identity.chat_id(), got = %agent_id, "the server gave another id");
                }
                link.verified = verified;
                link.phase = Phase::Joining { tried_create: false };
                if let Err(error) = link.socket.send(Message::text(frame::join(&channel))) {
                    self.drop_link(&format!("cannot join {channel}: {error}"));
                }
            }
            ServerFrame::Joined { channel: joined } if joined == channel => {
                let created = matches!(link.phase, Phase::Joining { tried_create: true });
                link.phase = Phase::Ready;
                let verified = link.verified;
                self.ever_joined = true;
                self.backoff = self.config.backoff_initial;
                tracing::info!(server = %self.config.server, channel = %channel, agent = %self.identity.chat_id(), created, "in the channel");
                self.events.push_back(SessionEvent::Joined {
                    chat_id: self.identity.chat_id().clone(),
                    verified,
                    created,
                });
            }
            ServerFrame::Msg(message) if message.to == channel => {
                if message.from == self.identity.chat_id().as_str() && !message.replay {
                    match self.in_flight.pop_front() {
                        Some(out) => self.events.push_back(SessionEvent::Sent {
                            token: out.token,
                            msg_id: message.msg_id,
                            content: message.content,
                        }),
                        None => tracing::debug!("an echo of a message this session did not send"),
                    }
                } else {
                    self.events.push_back(SessionEvent::Message(message));
                }
            }
            ServerFrame::AgentJoined { channel: joined, agent } if joined == channel => {
                self.events.push_back(SessionEvent::AgentJoined { agent });
            }
            ServerFrame::Error { code, message } => self.on_error(code, message)?,
            ServerFrame::SessionDisplaced { reason } => {
                self.drop_link(&format!("displaced by another connection with the same key: {reason}"));
            }
            _ => {}
        }
        Ok(())
    }

    fn on_error(&mut self, code: String, message: String) -> Result<(), SessionError> {
        let channel = self.config.channel.clone();
        let Some(link) = self.link.as_mut() else { return Ok(()) };
        let refused = |code: String, message: String| SessionError::Refused {
            server: self.config.server.clone(),
            agent: self.identity.chat_id().clone(),
            code,
            message,
        };
        match (link.phase, code.as_str()) {
            (Phase::Identifying, "VERIFICATION_EXPIRED") => self.drop_link(&format!("{code}: {message}")),
            (Phase::Identifying, _) => return Err(refused(code, message)),
            (Phase::Joining { tried_create }, "CHANNEL_NOT_FOUND") => {
                if self.config.may_create && link.verified && !tried_create {
                    link.phase = Phase::Joining { tried_create: true };
                    if let Err(error) = link.socket.send(Message::text(frame::create_channel(&channel))) {
                        self.drop_link(&format!("cannot create {channel}: {error}"));
                    }
                } else if !self.ever_joined && !self.config.wait_for_channel {
                    let agent = self.identity.chat_id().clone();
                    return Err(SessionError::ChannelMissing {
                        channel,
                        server: self.config.server.clone(),
                        hex: agent.hex().to_owned(),
                        agent,
                    });
                } else {
                    // It was there before the server restarted, or is being created: a
                    // verified agent may create it (again).
                    self.drop_link(&format!("{channel} does not exist (yet)"));
                }
            }
            (Phase::Joining { .. }, "CHANNEL_EXISTS") => {
                if let Err(error) = link.socket.send(Message::text(frame::join(&channel))) {
                    self.drop_link(&format!("cannot join {channel}: {error}"));
                }
            }
            (Phase::Joining { .. }, _) => return Err(refused(code, message)),
            (Phase::Ready, _) => {
                let Some(out) = self.in_flight.pop_front() else {
                    tracing::warn!(%code, %message, "the server reported an error");
                    return Ok(());
                };
                match code.as_str() {
                    "RATE_LIMITED" => {
                        tracing::debug!("rate limited: sent again later");
                        self.outbox.push_front(out);
                        self.next_send = Instant::now() + self.config.send_interval;
                    }
                    "CHANNEL_NOT_FOUND" | "NOT_INVITED" | "AUTH_REQUIRED" => {
                        self.outbox.push_front(out);
                        self.drop_link(&format!("{code}: {message}"));
                    }
                    "LURK_MODE" | "BANNED" => return Err(refused(code, message)),
                    _ => self.events.push_back(SessionEvent::Refused { token: out.token, code, message }),
                }
            }
        }
        Ok(())
    }

    fn requeue_in_flight(&mut self) {
        while let Some(out) = self.in_flight.pop_back() {
            self.outbox.push_front(out);
        }
    }

    fn drop_link(&mut self, reason: &str) {
        if let Some(mut link) = self.link.take() {
            let _ = link.socket.close(None);
            let _ = link.socket.flush();
        }
        // Sent but not relayed back: the server may or may not have them, so they go again.
        self.requeue_in_flight();
        self.events.push_back(SessionEvent::Disconnected { reason: reason.to_owned() });
        self.schedule_retry(reason);
    }

    fn schedule_retry(&mut self, reason: &str) {
        tracing::warn!(server = %self.config.server, %reason, retry_in_ms = self.backoff.as_millis() as u64, "not connected");
        self.retry_at = Instant::now() + self.backoff;
        self.backoff = (self.backoff * 2).min(self.config.backoff_max);
    }
}

/// The host and port of a `ws://` URL.
fn parse_server(url: &str) -> Result<(String, u16), SessionError> {
    let bad = |reason: &str| SessionError::BadServer { url: url.to_owned(), reason: reason.to_owned() };
    let uri: tungstenite::http::Uri = url.parse().map_err(|_| bad("not a URL (expected ws://HOST:PORT)"))?;
    match uri.scheme_str() {
        Some("ws") => {}
        Some("wss") => {
            return Err(bad(
                "wss:// is not built in: reach a TLS server through a tunnel that ends TLS on this machine (ssh -L, stunnel) and give its ws:// address",
            ));
        }
        _ => return Err(bad("expected a ws:// URL, e.g. ws://127.0.0.1:6667")),
    }
    let host = uri.host().filter(|host| !host.is_empty()).ok_or_else(|| bad("no host"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
    Ok((host, uri.port_u16().unwrap_or(80)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_urls_are_ws_only_with_a_host() {
        assert_eq!(parse_server("ws://127.0.0.1:6667").unwrap(), ("127.0.0.1".to_owned(), 6667));
        assert_eq!(parse_server("ws://[::1]:9/x").unwrap(), ("::1".to_owned(), 9));
        assert_eq!(parse_server("ws://example.org").unwrap().1, 80);
        let wss = parse_server("wss://example.org").unwrap_err().to_string();
        assert!(wss.contains("not built in"), "{wss}");
        assert!(parse_server("http://example.org").is_err());
        assert!(parse_server("example.org:80").is_err());
    }

    #[test]
    fn a_message_larger_than_a_frame_is_refused_before_it_is_queued() {
        let identity = ChatIdentity::new(revcal_elo::Keypair::from_seed([3; 32]));
        let mut session =
            Session::new(identity, SessionConfig::new("ws://127.0.0.1:1", "a", "#review")).unwrap();
        let big = "x".repeat(MAX_FRAME_BYTES);
        assert!(matches!(session.send(&big, None), Err(SessionError::TooLarge { .. })));
        assert_eq!(session.backlog(), 0);
        assert!(session.send("small", None).is_ok());
        assert_eq!(session.backlog(), 1);
    }
}
