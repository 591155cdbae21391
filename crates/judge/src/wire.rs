//! Each provider's wire format: the request (path, headers, body, with structured output
//! where the provider has it) and the reading of a successful answer into its text and token
//! counts. A truncated, empty or refused answer is an error here; whether the text is the
//! JSON that was asked for is checked by the caller.

use serde_json::{Value, json};

use super::AnswerProblem;
use super::provider::{JudgeConfig, Provider};
use super::structured::StructuredOutput;

/// What to ask: instructions, the question, and the JSON Schema of the answer.
#[derive(Debug, Clone)]
pub(crate) struct Ask<'a> {
    /// The system part.
    pub(crate) system: &'a str,
    /// The user part.
    pub(crate) user: &'a str,
    /// A name for the schema (OpenAI and the forced Anthropic tool need one).
    pub(crate) schema_name: &'a str,
    /// The answer's JSON Schema: an object, every property required, no others.
    pub(crate) schema: &'a Value,
}

/// A request ready to send.
#[derive(Debug, Clone)]
pub(crate) struct WireRequest {
    /// The full URL.
    pub(crate) url: String,
    /// Headers besides `content-type`.
    pub(crate) headers: Vec<(&'static str, String)>,
    /// The JSON body.
    pub(crate) body: Value,
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Completion {
    /// The answer's text (for a forced Anthropic tool, the tool input as JSON).
    pub(crate) text: String,
    /// Prompt tokens the provider counted.
    pub(crate) input_tokens: u64,
    /// Output tokens (reasoning included) the provider counted.
    pub(crate) output_tokens: u64,
}

/// Output tokens allowed: room for reasoning models, which think before they answer and
/// return empty content when the cap is too small for their thinking.
const MAX_OUTPUT_TOKENS: u64 = 1024;
/// The cap for models known to reason first.
const MAX_OUTPUT_TOKENS_REASONING: u64 = 16_000;

/// Models that think before answering: they need a large output cap and (OpenAI's) refuse a
/// temperature other than the default.
fn reasons(provider: Provider, model: &str) -> bool {
    let model = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    match provider {
        Provider::OpenAi => ["o1", "o3", "o4", "gpt-5"].iter().any(|p| model.starts_with(p)),
        Provider::Gemini => model.starts_with("gemini-2.5") && !model.contains("lite"),
        Provider::Anthropic => false,
    }
}

/// The system part with the answer's schema stated, for a server that is not given it as a
/// `json_schema` (the schema last, compact, so that it costs few tokens).
fn with_schema_stated(system: &str, schema: &Value) -> String {
    format!("{system}\n\nThe answer must be one JSON object that matches this JSON Schema:\n{schema}")
}

/// The request for `ask` to `config`'s provider and model. `mode` is how an OpenAI-compatible
/// server is asked for the schema (never `Auto`: the client resolves it first); Anthropic and
/// Gemini always get their native structured output.
pub(crate) fn request(config: &JudgeConfig, ask: &Ask<'_>, mode: StructuredOutput) -> WireRequest {
    let model = config.model();
    let base = config.base_url();
    let key = config.api_key().map(str::to_owned);
    let reasoning = reasons(config.provider(), model);
    let cap = match (reasoning, config.max_output_tokens) {
        (true, asked) => asked.unwrap_or(0).max(MAX_OUTPUT_TOKENS_REASONING),
        (false, Some(asked)) => asked,
        (false, None) => MAX_OUTPUT_TOKENS,
    };
    match config.provider() {
        Provider::Anthropic => {
            let mut headers = vec![("anthropic-version", "2023-06-01".to_owned())];
            if let Some(key) = key {
                headers.push(("x-api-key", key));
            }
            // A forced tool is Anthropic's long-standing structured output: the answer comes
            // back as the tool's input, shaped by its schema.
            let body = json!({
                "model": model,
                "max_tokens": cap,
                "temperature": 0,
                "system": ask.system,
                "messages": [{"role": "user", "content": ask.user}],
                "tools": [{
                    "name": ask.schema_name,
                    "description": "Record the answer.",
                    "input_schema": ask.schema,
                }],
                "tool_choice": {"type": "tool", "name": ask.schema_name},
            });
            WireRequest { url: format!("{base}/v1/messages"), headers, body }
        }
        Provider::OpenAi => {
            let headers = key.map(|key| vec![("authorization", format!("Bearer {key}"))]).unwrap_or_default();
            let (system, response_format) = match mode {
                StructuredOutput::JsonObject => (
                    with_schema_stated(ask.system, ask.schema),
                    // `schema` is llama.cpp's extension (both its servers turn it into a
                    // grammar); a server that ignores it still returns JSON.
                    Some(json!({"type": "json_object", "schema": ask.schema})),
                ),
                StructuredOutput::Prompt => (with_schema_stated(ask.system, ask.schema), None),
                _ => (
                    ask.system.to_owned(),
                    Some(json!({
                        "type": "json_schema",
                        "json_schema": {"name": ask.schema_name, "strict": true, "schema": without_lengths(ask.schema)},
                    })),
                ),
            };
            let mut body = json!({
                "model": model,
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": ask.user},
                ],
            });
            if let Some(object) = body.as_object_mut() {
                if let Some(format) = response_format {
                    object.insert("response_format".into(), format);
                }
                if reasoning {
                    object.insert("max_completion_tokens".into(), json!(cap));
                } else {
                    object.insert("max_tokens".into(), json!(cap));
                    object.insert("temperature".into(), json!(0));
                }
            }
            WireRequest { url: format!("{base}/chat/completions"), headers, body }
        }
        Provider::Gemini => {
            // The key goes in a header, never in the URL (URLs end up in logs).
            let headers = key.map(|key| vec![("x-goog-api-key", key)]).unwrap_or_default();
            let body = json!({
                "systemInstruction": {"parts": [{"text": ask.system}]},
                "contents": [{"role": "user", "parts": [{"text": ask.user}]}],
                "generationConfig": {
                    "temperature": 0,
                    "maxOutputTokens": if reasoning { cap } else { config.max_output_tokens.unwrap_or(4096) },
                    "responseMimeType": "application/json",
                    "responseSchema": gemini_schema(ask.schema),
                },
            });
            // Gemini names models `models/NAME` in its own listings; either form works here.
            let model = model.strip_prefix("models/").unwrap_or(model);
            WireRequest { url: format!("{base}/v1beta/models/{model}:generateContent"), headers, body }
        }
    }
}

/// `schema` without string lengths (`minLength`, `maxLength`), which OpenAI's strict mode
/// does not take. They are there for servers that turn the schema into a grammar (llama.cpp's),
/// where they keep a small model from writing one string forever; revcal checks every
/// answer itself either way.
fn without_lengths(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| !matches!(key.as_str(), "minLength" | "maxLength"))
                .map(|(key, value)| (key.clone(), without_lengths(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_lengths).collect()),
        other => other.clone(),
    }
}

/// Gemini's schema dialect (an OpenAPI subset): upper-case types, no `additionalProperties`.
fn gemini_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| key.as_str() != "additionalProperties")
                // Gemini takes `enum` for strings only; a number's bounds stay as its
                // minimum and maximum.
                .filter(|(key, _)| {
                    key.as_str() != "enum" || map.get("type").and_then(Value::as_str) == Some("string")
                })
                .map(|(key, value)| {
                    let value = match (key.as_str(), value) {
                        ("type", Value::String(t)) => Value::String(t.to_ascii_uppercase()),
                        ("properties", Value::Object(props)) => Value::Object(
                            props.iter().map(|(name, sub)| (name.clone(), gemini_schema(sub))).collect(),
                        ),
                        ("items", sub) => gemini_schema(sub),
                        _ => value.clone(),
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The start of `text`, for messages.
pub(crate) fn quote(text: &str) -> String {
    const KEPT: usize = 200;
    let text = text.trim();
    match text.char_indices().nth(KEPT) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

fn tokens(value: &Value, pointer: &str) -> u64 {
    value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

/// The tokens a 2xx body of `provider` says were spent (input, output), whatever the answer
/// is: a truncated, refused, empty or off-schema answer was still billed. (0, 0) for a body
/// that is not JSON or has no usage.
pub(crate) fn usage(provider: Provider, body: &str) -> (u64, u64) {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return (0, 0);
    };
    match provider {
        Provider::Anthropic => {
            (tokens(&value, "/usage/input_tokens"), tokens(&value, "/usage/output_tokens"))
        }
        Provider::OpenAi => {
            (tokens(&value, "/usage/prompt_tokens"), tokens(&value, "/usage/completion_tokens"))
        }
        Provider::Gemini => (
            tokens(&value, "/usageMetadata/promptTokenCount"),
            tokens(&value, "/usageMetadata/candidatesTokenCount")
                + tokens(&value, "/usageMetadata/thoughtsTokenCount"),
        ),
    }
}

/// Reads a 2xx body of `provider` into the answer's text.
pub(crate) fn parse(provider: Provider, body: &str) -> Result<Completion, AnswerProblem> {
    let value: Value = serde_json::from_str(body).map_err(|_| AnswerProblem::NotJson(quote(body)))?;
    match provider {
        Provider::Anthropic => parse_anthropic(&value, body),
        Provider::OpenAi => parse_openai(&value, body),
        Provider::Gemini => parse_gemini(&value, body),
    }
}

fn parse_anthropic(value: &Value, body: &str) -> Result<Completion, AnswerProblem> {
    let content = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| AnswerProblem::Shape(format!("no `content` in {}", quote(body))))?;
    match value.get("stop_reason").and_then(Value::as_str) {
        Some("max_tokens") => {
            return Err(AnswerProblem::Truncated("stop_reason max_tokens".into()));
        }
        Some("refusal") => return Err(AnswerProblem::Refused("stop_reason refusal".into())),
        _ => {}
    }
    let tool_input = content
        .iter()
        .find(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"))
        .and_then(|block| block.get("input"));
    let text = match tool_input {
        Some(input) => input.to_string(),
        None => content
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
    };
    if text.trim().is_empty() {
        return Err(AnswerProblem::Empty("no text and no tool input".into()));
    }
    Ok(Completion {
        text,
        input_tokens: tokens(value, "/usage/input_tokens"),
        output_tokens: tokens(value, "/usage/output_tokens"),
    })
}

fn parse_openai(value: &Value, body: &str) -> Result<Completion, AnswerProblem> {
    let choice = value
        .pointer("/choices/0")
        .ok_or_else(|| AnswerProblem::Shape(format!("no `choices` in {}", quote(body))))?;
    let message = choice.get("message");
    if let Some(refusal) = message.and_then(|m| m.get("refusal")).and_then(Value::as_str) {
        return Err(AnswerProblem::Refused(quote(refusal)));
    }
    let text = message.and_then(|m| m.get("content")).and_then(Value::as_str).unwrap_or("");
    match choice.get("finish_reason").and_then(Value::as_str) {
        Some("length") => {
            // The counts tell a full context window (a local server's: prompt plus answer
            // reach its size) from an answer longer than the cap asked for.
            let (prompt, answer) =
                (tokens(value, "/usage/prompt_tokens"), tokens(value, "/usage/completion_tokens"));
            let counts = if prompt + answer > 0 {
                format!(
                    " after {answer} output tokens on a {prompt}-token prompt (a local server's context window may be full: start it with a larger one)"
                )
            } else {
                String::new()
            };
            return Err(AnswerProblem::Truncated(format!(
                "finish_reason length{counts}{}",
                if text.is_empty() {
                    " with empty content (a reasoning model out of output tokens)"
                } else {
                    ""
                }
            )));
        }
        Some("content_filter") => return Err(AnswerProblem::Refused("finish_reason content_filter".into())),
        _ => {}
    }
    if text.trim().is_empty() {
        return Err(AnswerProblem::Empty("empty message content".into()));
    }
    Ok(Completion {
        text: text.to_owned(),
        input_tokens: tokens(value, "/usage/prompt_tokens"),
        output_tokens: tokens(value, "/usage/completion_tokens"),
    })
}

fn parse_gemini(value: &Value, body: &str) -> Result<Completion, AnswerProblem> {
    if let Some(reason) = value.pointer("/promptFeedback/blockReason").and_then(Value::as_str) {
        return Err(AnswerProblem::Refused(format!("prompt blocked: {reason}")));
    }
    let candidate = value
        .pointer("/candidates/0")
        .ok_or_else(|| AnswerProblem::Shape(format!("no `candidates` in {}", quote(body))))?;
    let text: String = candidate
        .pointer("/content/parts")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter(|part| part.get("thought").and_then(Value::as_bool) != Some(true))
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    match candidate.get("finishReason").and_then(Value::as_str) {
        None | Some("STOP") | Some("FINISH_REASON_UNSPECIFIED") => {}
        Some("MAX_TOKENS") => return Err(AnswerProblem::Truncated("finishReason MAX_TOKENS".into())),
        Some(other) => return Err(AnswerProblem::Refused(format!("finishReason {other}"))),
    }
    if text.trim().is_empty() {
        return Err(AnswerProblem::Empty("no text in the candidate".into()));
    }
    Ok(Completion {
        text,
        input_tokens: tokens(value, "/usageMetadata/promptTokenCount"),
        output_tokens: tokens(value, "/usageMetadata/candidatesTokenCount")
            + tokens(value, "/usageMetadata/thoughtsTokenCount"),
    })
}

/// What an error body says, for messages: the provider's `error.message` (or the body's start).
pub(crate) fn error_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.pointer("/error/message").and_then(Value::as_str).map(quote))
        .unwrap_or_else(|| quote(body))
}

/// Whether an error body reports a quota that waiting will not refill (OpenAI's
/// `insufficient_quota`, Gemini's per-day limits).
pub(crate) fn is_hard_quota(body: &str) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return false;
    };
    let openai = ["/error/code", "/error/type"]
        .iter()
        .any(|p| value.pointer(p).and_then(Value::as_str) == Some("insufficient_quota"));
    let gemini_per_day = value
        .pointer("/error/details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|detail| detail.get("violations").and_then(Value::as_array))
        .flatten()
        .filter_map(|violation| violation.get("quotaId").and_then(Value::as_str))
        .any(|id| id.contains("PerDay"));
    openai || gemini_per_day
}

/// Whether an error body is Anthropic's `overloaded_error` (retried whatever its status).
pub(crate) fn is_overloaded(body: &str) -> bool {
    serde_json::from_str::<Value>(body)
        .ok()
        .is_some_and(|v| v.pointer("/error/type").and_then(Value::as_str) == Some("overloaded_error"))
}

/// The wait Gemini asks for in a `RetryInfo` detail (`"retryDelay": "37s"`).
pub(crate) fn body_retry_delay(body: &str) -> Option<f64> {
    let value = serde_json::from_str::<Value>(body).ok()?;
    value
        .pointer("/error/details")?
        .as_array()?
        .iter()
        .filter_map(|detail| detail.get("retryDelay").and_then(Value::as_str))
        .find_map(|delay| delay.trim_end_matches('s').parse::<f64>().ok())
}
