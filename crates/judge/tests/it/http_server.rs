//! A small HTTP/1.1 server on 127.0.0.1 for the judge tests: it records every request and
//! answers with whatever the test's responder says (status, headers, body, a delay, or raw
//! bytes such as a body cut short). No network, no key. The CLI tests include this file too.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the server read it.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    /// `POST`.
    pub(crate) method: String,
    /// The path and query.
    pub(crate) path: String,
    /// Headers, names lower-cased.
    pub(crate) headers: Vec<(String, String)>,
    /// The body.
    pub(crate) body: String,
}

impl Recorded {
    /// The value of header `name` (lower-case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// What to answer.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    /// The status code.
    pub(crate) status: u16,
    /// Extra headers.
    pub(crate) headers: Vec<(String, String)>,
    /// The body.
    pub(crate) body: String,
    /// Wait this long before answering.
    pub(crate) delay: Duration,
    /// Send these bytes instead of a well-formed response.
    pub(crate) raw: Option<Vec<u8>>,
}

impl Reply {
    /// `status` with a JSON (or any) body.
    pub(crate) fn new(status: u16, body: impl Into<String>) -> Reply {
        Reply { status, headers: Vec::new(), body: body.into(), delay: Duration::ZERO, raw: None }
    }

    /// With a header.
    pub(crate) fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// After a delay.
    pub(crate) fn delayed(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Raw bytes on the wire.
    pub(crate) fn raw(bytes: impl Into<Vec<u8>>) -> Reply {
        Reply { raw: Some(bytes.into()), ..Reply::new(200, "") }
    }
}

type Responder = dyn Fn(usize, &Recorded) -> Reply + Send + Sync;

/// The server; it stops accepting when the test process ends.
pub(crate) struct TestServer {
    ip: String,
    port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl TestServer {
    /// Starts a server whose answers come from `respond(index of the request, request)`.
    pub(crate) fn start(respond: impl Fn(usize, &Recorded) -> Reply + Send + Sync + 'static) -> TestServer {
        TestServer::start_on("127.0.0.1", respond)
    }

    /// Starts a server on loopback address `ip` (`127.0.0.2` is another host of this machine,
    /// for tests about where requests go).
    pub(crate) fn start_on(
        ip: &str,
        respond: impl Fn(usize, &Recorded) -> Reply + Send + Sync + 'static,
    ) -> TestServer {
        let listener = TcpListener::bind((ip, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let ip = ip.to_owned();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let respond: Arc<Responder> = Arc::new(respond);
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (seen, respond) = (Arc::clone(&seen), Arc::clone(&respond));
                std::thread::spawn(move || serve(stream, &seen, &*respond));
            }
        });
        TestServer { ip, port, requests }
    }

    /// `http://IP:PORT`.
    pub(crate) fn url(&self) -> String {
        format!("http://{}:{}", self.ip, self.port)
    }

    /// `IP:PORT`.
    pub(crate) fn host(&self) -> String {
        format!("{}:{}", self.ip, self.port)
    }

    /// Every request so far.
    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, seen: &Mutex<Vec<Recorded>>, respond: &Responder) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let length: usize =
        headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let recorded = Recorded { method, path, headers, body: String::from_utf8_lossy(&body).into_owned() };
    let index = {
        let mut seen = seen.lock().unwrap();
        seen.push(recorded.clone());
        seen.len() - 1
    };
    let reply = respond(index, &recorded);
    std::thread::sleep(reply.delay);
    let mut stream = stream;
    let bytes = match reply.raw {
        Some(raw) => raw,
        None => {
            let mut head = format!(
                "HTTP/1.1 {} X\r\ncontent-length: {}\r\nconnection: close\r\n",
                reply.status,
                reply.body.len()
            );
            if !reply.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("content-type")) {
                head.push_str("content-type: application/json\r\n");
            }
            for (name, value) in &reply.headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let mut bytes = head.into_bytes();
            bytes.extend_from_slice(reply.body.as_bytes());
            bytes
        }
    };
    let _ = stream.write_all(&bytes);
    let _ = stream.flush();
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// Anthropic's answer carrying `input` as the forced tool's input.
pub(crate) fn anthropic_tool_answer(input: &str) -> String {
    format!(
        r#"{{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{{"type":"tool_use","id":"toolu_1","name":"verdict","input":{input}}}],"stop_reason":"tool_use","usage":{{"input_tokens":100,"output_tokens":20}}}}"#
    )
}

/// OpenAI's answer with `content` as the message text (a JSON string literal or `null`) and
/// `finish_reason`.
pub(crate) fn openai_answer(content: &str, finish_reason: &str) -> String {
    format!(
        r#"{{"id":"c1","object":"chat.completion","choices":[{{"index":0,"message":{{"role":"assistant","content":{content},"refusal":null}},"finish_reason":"{finish_reason}"}}],"usage":{{"prompt_tokens":90,"completion_tokens":12}}}}"#
    )
}

/// Gemini's answer with `text` (a JSON string literal) and `finish`.
pub(crate) fn gemini_answer(text: &str, finish: &str) -> String {
    format!(
        r#"{{"candidates":[{{"content":{{"role":"model","parts":[{{"text":{text}}}]}},"finishReason":"{finish}"}}],"usageMetadata":{{"promptTokenCount":80,"candidatesTokenCount":10}}}}"#
    )
}

/// The verdict JSON as a JSON string literal (what OpenAI and Gemini carry as text).
pub(crate) fn verdict_text(matched: bool) -> String {
    serde_json::to_string(&format!(r#"{{"match": {matched}, "reason": "test server"}}"#)).unwrap()
}

/// The prompt text in a request body of any of the three providers (system and user parts).
pub(crate) fn prompt_of(request: &Recorded) -> String {
    let body = request.json();
    let mut text = String::new();
    let mut push = |value: Option<&serde_json::Value>| {
        if let Some(s) = value.and_then(|v| v.as_str()) {
            text.push_str(s);
            text.push('\n');
        }
    };
    push(body.get("system"));
    push(body.pointer("/systemInstruction/parts/0/text"));
    push(body.pointer("/contents/0/parts/0/text"));
    for message in body.get("messages").and_then(|m| m.as_array()).into_iter().flatten() {
        push(message.get("content"));
    }
    text
}

/// The content of the fence that follows the line `label` (searching from `from`), read
/// with the prompt's own nonce, so forged fence lines inside the content stay in it.
pub(crate) fn fenced_after(prompt: &str, label: &str, from: usize) -> Option<String> {
    let open = prompt.find("<data-")?;
    let nonce: String = prompt[open + 6..].chars().take_while(|c| c.is_ascii_hexdigit()).collect();
    let (open_tag, close_tag) = (format!("<data-{nonce}>\n"), format!("\n</data-{nonce}>"));
    let at = prompt.get(from..)?.find(label)? + from + label.len();
    let content = at + prompt[at..].find(&open_tag)? + open_tag.len();
    let end = content + prompt[content..].find(&close_tag)?;
    Some(prompt[content..end].to_owned())
}

/// The defect sentence and the finding's text in a judge prompt.
pub(crate) fn defect_and_finding(prompt: &str) -> Option<(String, String)> {
    let finding_start = prompt.find("REVIEW FINDING")?;
    Some((fenced_after(prompt, "the defect:\n", 0)?, fenced_after(prompt, "text:\n", finding_start)?))
}

/// Answers like a judge that reads the prompt: a match when the finding's text contains the
/// planted defect sentence (the oracle states it; the echo only quotes the line).
pub(crate) fn defect_sentence_verdict(prompt: &str) -> bool {
    match defect_and_finding(prompt) {
        Some((defect, text)) => !defect.trim().is_empty() && text.contains(defect.trim()),
        None => false,
    }
}
