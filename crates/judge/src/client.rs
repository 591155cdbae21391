//! One structured question to a provider over blocking HTTPS, with explicit timeouts and
//! bounded retries (docs/judge.md#failures): 408, 429, 5xx, Anthropic's `overloaded_error`, a
//! dropped connection and a timeout are retried with exponential backoff and jitter, honouring
//! `retry-after`; 401/403, exhausted quotas and an answer over the body limit fail at once;
//! every answer that is not the JSON asked for is an error.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;

use super::AnswerProblem;
use super::JudgeError;
use super::provider::{JudgeConfig, Provider};
use super::structured::{self, StructuredOutput};
use super::wire::{self, Ask, Completion};

/// The most bytes of an answer read.
const BODY_LIMIT: u64 = 4 * 1024 * 1024;

/// Counters of what a client spent; shared by every thread that asks.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Requests sent (each retry counts: each may be billed).
    pub(crate) calls: AtomicU64,
    /// Verdicts answered from the cache.
    pub(crate) cache_hits: AtomicU64,
    /// Prompt tokens counted by the provider.
    pub(crate) input_tokens: AtomicU64,
    /// Output tokens counted by the provider.
    pub(crate) output_tokens: AtomicU64,
}

/// A provider client: the configuration, an HTTP agent and the spend counters.
pub(crate) struct Client {
    pub(crate) config: JudgeConfig,
    agent: ureq::Agent,
    pub(crate) counters: Counters,
}

/// How one attempt ended, for the retry loop.
enum Attempt {
    Done(Completion),
    Retry { error: JudgeError, wait: Option<Duration> },
    Fail(JudgeError),
}

impl Client {
    pub(crate) fn new(config: JudgeConfig) -> Client {
        let loopback = is_loopback(config.base_url());
        let builder = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(config.connect_timeout))
            .timeout_global(Some(config.timeout))
            // A redirect is never followed: ureq would send `x-api-key` and `x-goog-api-key`
            // on to whatever host the Location names. A 3xx comes back as an answer, and the
            // attempt turns it into an error.
            .max_redirects(0)
            .user_agent(concat!("revcal/", env!("CARGO_PKG_VERSION")));
        // HTTPS_PROXY/NO_PROXY are honoured (ureq reads them), except for a server on this
        // machine, which no proxy can reach.
        let builder = if loopback { builder.proxy(None) } else { builder };
        let agent = builder.build().new_agent();
        Client { config, agent, counters: Counters::default() }
    }

    fn name(&self) -> String {
        self.config.who()
    }

    /// Asks `ask` and returns the answer parsed as JSON (the object the schema describes; the
    /// caller checks its fields).
    pub(crate) fn ask(&self, ask: &Ask<'_>) -> Result<(Value, Completion), JudgeError> {
        match self.config.structured_output() {
            StructuredOutput::Auto if self.config.provider() == Provider::OpenAi => self.ask_auto(ask),
            mode => self.ask_in(ask, mode),
        }
    }

    /// `auto` for an OpenAI-compatible server: the mode this base URL was found to accept, or,
    /// while none is known, each mode in turn until one is not refused. The base URL's entry
    /// stays locked while probing, so the other clients and threads wait for the finding and
    /// the server is probed once per process, not per call.
    fn ask_auto(&self, ask: &Ask<'_>) -> Result<(Value, Completion), JudgeError> {
        let entry = structured::found_for(self.config.base_url());
        // A poisoned lock only means a thread panicked while probing; what it found is whole.
        let mut found = entry.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if found.confirmed {
            let mode = found.mode;
            drop(found);
            return self.ask_in(ask, mode);
        }
        loop {
            let mode = found.mode;
            let result = self.ask_in(ask, mode);
            if let (Err(JudgeError::StructuredOutputRefused { status, message, .. }), Some(next)) =
                (&result, mode.fallback())
            {
                tracing::info!(judge = %self.name(), base_url = %self.config.redact(self.config.base_url()), status, "the server refused structured output {mode} ({message}); trying {next}");
                found.mode = next;
                continue;
            }
            // The server took the request's shape when it answered at all (a bad answer
            // too); after any other error the next question probes again.
            if matches!(result, Ok(_) | Err(JudgeError::BadAnswer { .. })) {
                found.confirmed = true;
                tracing::debug!(judge = %self.name(), "structured output for this server: {mode}");
            }
            return result;
        }
    }

    /// Asks `ask` with structured output `mode`, retrying what is worth retrying.
    fn ask_in(&self, ask: &Ask<'_>, mode: StructuredOutput) -> Result<(Value, Completion), JudgeError> {
        let request = wire::request(&self.config, ask, mode);
        let mut attempt = 0u32;
        loop {
            // Checked and counted in one step, so threads sharing the judge cannot overspend.
            let max = self.config.max_calls.unwrap_or(u64::MAX);
            if self
                .counters
                .calls
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |calls| (calls < max).then_some(calls + 1))
                .is_err()
            {
                return Err(JudgeError::Budget { max });
            }
            match self.attempt(&request, mode) {
                Attempt::Done(completion) => {
                    let value = parse_json(&completion.text).map_err(|problem| {
                        // The error quotes the answer's start; the whole of it, for whoever
                        // must find out what a model wrote, is at debug level (`-vv`).
                        tracing::debug!(judge = %self.name(), answer = %self.config.redact(&completion.text), "an answer that is not the JSON asked for");
                        JudgeError::BadAnswer { judge: self.name(), problem }
                    })?;
                    return Ok((value, completion));
                }
                Attempt::Fail(error) => return Err(error),
                Attempt::Retry { error, wait } => {
                    if attempt >= self.config.retries {
                        return Err(JudgeError::GaveUp {
                            judge: self.name(),
                            attempts: attempt + 1,
                            source: Box::new(error),
                        });
                    }
                    let delay = self.delay(attempt, wait);
                    tracing::warn!(judge = %self.name(), attempt = attempt + 1, ?delay, "request failed, retrying: {error}");
                    std::thread::sleep(delay);
                    attempt += 1;
                }
            }
        }
    }

    /// The wait before retry number `attempt + 1`: what the server asked (capped), else
    /// exponential backoff with jitter (between half and all of `backoff * 2^attempt`).
    fn delay(&self, attempt: u32, asked: Option<Duration>) -> Duration {
        let cap = self.config.max_backoff;
        if let Some(asked) = asked {
            return asked.min(cap);
        }
        let full = self.config.backoff.saturating_mul(2u32.saturating_pow(attempt)).min(cap);
        let mut byte = [0u8; 1];
        let jitter = if getrandom::fill(&mut byte).is_ok() { f64::from(byte[0]) / 255.0 } else { 0.5 };
        full.mul_f64(0.5 + 0.5 * jitter)
    }

    fn attempt(&self, request: &wire::WireRequest, mode: StructuredOutput) -> Attempt {
        let name = self.name();
        let mut call = self.agent.post(&request.url).header("content-type", "application/json");
        for (header, value) in &request.headers {
            call = call.header(*header, value);
        }
        let body = request.body.to_string();
        let mut response = match call.send(body.as_bytes()) {
            Ok(response) => response,
            Err(error) => {
                let retryable = matches!(
                    error,
                    ureq::Error::Timeout(_) | ureq::Error::Io(_) | ureq::Error::ConnectionFailed
                );
                let error = transport(&name, &request.url, error);
                return if retryable { Attempt::Retry { error, wait: None } } else { Attempt::Fail(error) };
            }
        };
        let status = response.status().as_u16();
        // `retry-after-ms` (OpenAI) is more precise than `retry-after`, which is seconds or an
        // HTTP date (RFC 9110); a date in the past means now.
        let header_number = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|n| n.is_finite() && *n >= 0.0)
        };
        let retry_after = header_number("retry-after-ms")
            .map(|ms| Duration::from_secs_f64(ms / 1000.0))
            .or_else(|| header_number("retry-after").map(Duration::from_secs_f64))
            .or_else(|| {
                let date = response.headers().get("retry-after")?.to_str().ok()?;
                let when = httpdate::parse_http_date(date.trim()).ok()?;
                Some(when.duration_since(std::time::SystemTime::now()).unwrap_or_default())
            });
        if (300..400).contains(&status) {
            let location = response.headers().get("location").and_then(|v| v.to_str().ok()).unwrap_or("");
            return Attempt::Fail(JudgeError::Redirect {
                judge: name,
                status,
                host: location_host(location, &request.url),
                variable: self.config.provider().base_url_variable(),
            });
        }
        let text = match response.body_mut().with_config().limit(BODY_LIMIT).read_to_string() {
            // Whatever the server says is shown (errors) or stored (verdicts) from here on: a
            // server that echoes the key gets it replaced.
            Ok(text) => self.config.redact(&text).into_owned(),
            // Too large is final: a retry would be another answer of that size, billed too.
            Err(ureq::Error::BodyExceedsLimit(limit)) => {
                return Attempt::Fail(JudgeError::AnswerTooLarge { judge: name, limit });
            }
            Err(error) => {
                // A body cut by a dropped connection or a timeout mid-answer.
                let error = transport(&name, &request.url, error);
                return if (200..300).contains(&status) || is_retryable_status(status) {
                    Attempt::Retry { error, wait: retry_after }
                } else {
                    Attempt::Fail(error)
                };
            }
        };
        if (200..300).contains(&status) {
            // Counted before the answer is read: a cut-off, refused or empty answer was billed.
            let (input, output) = wire::usage(self.config.provider(), &text);
            self.counters.input_tokens.fetch_add(input, Ordering::SeqCst);
            self.counters.output_tokens.fetch_add(output, Ordering::SeqCst);
            return match wire::parse(self.config.provider(), &text) {
                Ok(completion) => Attempt::Done(completion),
                Err(problem) => Attempt::Fail(JudgeError::BadAnswer { judge: name, problem }),
            };
        }
        let message = wire::error_message(&text);
        // Refused because of the `response_format` asked for: no retry makes it acceptable
        // (llama-cpp-python refuses it with a 500).
        let sent_format = self.config.provider() == Provider::OpenAi
            && matches!(mode, StructuredOutput::JsonSchema | StructuredOutput::JsonObject);
        if sent_format && structured::is_refusal(status, &text) {
            return Attempt::Fail(JudgeError::StructuredOutputRefused {
                judge: name,
                mode: mode.name(),
                status,
                message,
            });
        }
        match status {
            401 | 403 => Attempt::Fail(JudgeError::Unauthorized {
                judge: name,
                status,
                message,
                variable: self.config.key_variable(),
            }),
            _ if wire::is_hard_quota(&text) => {
                Attempt::Fail(JudgeError::Quota { judge: name, status, message })
            }
            _ if is_retryable_status(status) || wire::is_overloaded(&text) => {
                let wait = retry_after.or_else(|| wire::body_retry_delay(&text).map(Duration::from_secs_f64));
                Attempt::Retry { error: JudgeError::Status { judge: name, status, message }, wait }
            }
            _ => Attempt::Fail(JudgeError::Status { judge: name, status, message }),
        }
    }
}

fn is_retryable_status(status: u16) -> bool {
    status == 408 || status == 429 || (500..600).contains(&status)
}

fn transport(judge: &str, url: &str, error: ureq::Error) -> JudgeError {
    let url = revcal_process::redact_url_credentials(url).into_owned();
    JudgeError::Transport { judge: judge.to_owned(), url, source: Box::new(error) }
}

/// The host (and port) a redirect's `Location` points at, for the error: never its user
/// information, path or query, which can carry secrets. A relative location stays on the
/// host of `url`, the request's own.
fn location_host(location: &str, url: &str) -> String {
    let location = location.trim();
    let absolute = location.split_once("://").map(|(_, rest)| rest).or_else(|| location.strip_prefix("//"));
    let rest = match absolute {
        Some(rest) => rest,
        None if location.is_empty() => return "nowhere (no Location header)".to_owned(),
        None => url.split_once("://").map_or(url, |(_, rest)| rest),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    if host.is_empty() { "an unnamed host".to_owned() } else { host.to_owned() }
}

/// Whether `url`'s host is this machine.
fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.rsplit_once(':').map_or(authority, |(host, _)| host),
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The answer's text as one JSON object. A whole-answer Markdown fence (```json ... ```) is
/// allowed because compatible servers that ignore the schema often add one; anything else
/// around the JSON is an error.
fn parse_json(text: &str) -> Result<Value, AnswerProblem> {
    let trimmed = text.trim();
    let inner = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.strip_suffix("```"))
        .map_or(trimmed, str::trim);
    // Raw control characters inside strings (a newline in a message) are not JSON, but
    // llama.cpp's grammars let models write them; they are read as their escapes, as
    // Python's `json.loads(strict=False)` reads them.
    let parsed = serde_json::from_str::<Value>(inner).or_else(|error| {
        serde_json::from_str::<Value>(&escape_controls_in_strings(inner)).map_err(|_| error)
    });
    match parsed {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(AnswerProblem::Shape(format!("the answer is not a JSON object: {}", wire::quote(text)))),
        Err(_) => Err(AnswerProblem::NotJson(wire::quote(text))),
    }
}

/// `text` with every control character inside a JSON string written as its escape
/// (`\n`, `\t`, `\u0001`); everything outside strings is left as it is.
fn escape_controls_in_strings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string && !escaped && c.is_control() && (c as u32) < 0x20 {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                other => out.push_str(&format!("\\u{:04x}", other as u32)),
            }
            continue;
        }
        out.push(c);
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_inside_strings_are_read_as_their_escapes() {
        let answer = "{\"message\": \"line one\nline\ttwo\u{1}\", \"q\": \"a \\\"quoted\\\"\nword\"}\n";
        let value = parse_json(answer).unwrap();
        assert_eq!(value["message"], "line one\nline\ttwo\u{1}");
        assert_eq!(value["q"], "a \"quoted\"\nword");
        // Outside strings nothing changes: a broken document stays broken.
        assert!(matches!(parse_json("{\"a\": 1,\n\n}"), Err(AnswerProblem::NotJson(_))));
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        assert!(is_loopback("http://127.0.0.1:8080/v1"));
        assert!(is_loopback("http://localhost:11434/v1"));
        assert!(is_loopback("http://[::1]:8000"));
        assert!(!is_loopback("https://api.openai.com/v1"));
        assert!(!is_loopback("http://10.0.0.5:11434/v1"));
    }

    #[test]
    fn a_redirect_names_its_host_and_nothing_else() {
        let base = "https://api.example.com/v1/messages";
        assert_eq!(location_host("http://127.0.0.2:8080/x?token=s", base), "127.0.0.2:8080");
        assert_eq!(location_host("https://user:secret@evil.example/a", base), "evil.example");
        assert_eq!(location_host("//cdn.example?k=v", base), "cdn.example");
        assert_eq!(location_host("/v2/messages?key=s", base), "api.example.com");
        assert_eq!(location_host("", base), "nowhere (no Location header)");
    }

    #[test]
    fn answers_must_be_one_json_object() {
        assert!(parse_json("{\"match\": true, \"reason\": \"x\"}").is_ok());
        assert!(parse_json("```json\n{\"match\": false, \"reason\": \"x\"}\n```").is_ok());
        assert!(matches!(parse_json("Sure! {\"match\": true}"), Err(AnswerProblem::NotJson(_))));
        assert!(matches!(parse_json("[true]"), Err(AnswerProblem::Shape(_))));
        assert!(matches!(parse_json("{\"match\": tr"), Err(AnswerProblem::NotJson(_))));
    }
}
