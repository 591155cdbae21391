//! How the answer's JSON Schema is asked of an OpenAI-compatible server, and the mode each
//! base URL was found to accept (docs/judge.md#local-models): servers differ. OpenAI and vLLM
//! take `response_format: json_schema`; llama-cpp-python's server refuses it but takes
//! `json_object` with a `schema` (which llama.cpp turns into a grammar); some take neither.
//! Whatever the mode, the answer is checked by revcal.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::JudgeError;

/// How the built-in judge asks an OpenAI-compatible server for an answer of a given JSON
/// Schema. Anthropic and Gemini always use their native structured output (a forced tool,
/// `responseSchema`), whatever this says. Modes may be added, so a `match` on it needs a
/// wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum StructuredOutput {
    /// Try `json-schema`; when the server refuses the request because of its
    /// `response_format`, `json-object`, then `prompt`. The mode found is kept per base URL
    /// for the rest of the process, so a server is probed once, not per call.
    #[default]
    Auto,
    /// `response_format: {"type": "json_schema", "json_schema": {"name", "strict": true,
    /// "schema"}}` (OpenAI, vLLM, ollama, llama.cpp's `llama-server`).
    JsonSchema,
    /// `response_format: {"type": "json_object", "schema": ...}` and the schema stated in the
    /// system prompt (llama-cpp-python's server, `llama-server`; a server that ignores
    /// `schema` still returns JSON).
    JsonObject,
    /// No `response_format`: the schema is stated in the system prompt only.
    Prompt,
}

impl StructuredOutput {
    /// Every mode, `auto` first.
    pub const ALL: [StructuredOutput; 4] = [
        StructuredOutput::Auto,
        StructuredOutput::JsonSchema,
        StructuredOutput::JsonObject,
        StructuredOutput::Prompt,
    ];

    /// The name on the command line (`auto`, `json-schema`, `json-object`, `prompt`).
    pub fn name(self) -> &'static str {
        match self {
            StructuredOutput::Auto => "auto",
            StructuredOutput::JsonSchema => "json-schema",
            StructuredOutput::JsonObject => "json-object",
            StructuredOutput::Prompt => "prompt",
        }
    }

    /// The mode `auto` tries after this one is refused.
    pub(crate) fn fallback(self) -> Option<StructuredOutput> {
        match self {
            StructuredOutput::JsonSchema => Some(StructuredOutput::JsonObject),
            StructuredOutput::JsonObject => Some(StructuredOutput::Prompt),
            StructuredOutput::Auto | StructuredOutput::Prompt => None,
        }
    }
}

impl std::fmt::Display for StructuredOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for StructuredOutput {
    type Err = JudgeError;
    fn from_str(text: &str) -> Result<StructuredOutput, JudgeError> {
        let wanted = text.trim().to_ascii_lowercase().replace('_', "-");
        StructuredOutput::ALL
            .into_iter()
            .find(|mode| mode.name() == wanted)
            .ok_or_else(|| JudgeError::UnknownStructuredOutput { name: text.to_owned() })
    }
}

/// What is known of one base URL: the first mode still worth trying, and whether the server
/// has accepted it (answered 2xx).
#[derive(Debug)]
pub(crate) struct Found {
    pub(crate) mode: StructuredOutput,
    pub(crate) confirmed: bool,
}

/// One entry per base URL, shared by every client of the process. A client holds the entry's
/// lock while it probes, so threads that ask at once wait for its finding instead of probing
/// too.
pub(crate) fn found_for(base_url: &str) -> Arc<Mutex<Found>> {
    static FOUND: OnceLock<Mutex<HashMap<String, Arc<Mutex<Found>>>>> = OnceLock::new();
    let all = FOUND.get_or_init(Mutex::default);
    // A poisoned lock only means another thread panicked while holding it; the map is whole.
    let mut all = all.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    Arc::clone(all.entry(base_url.to_owned()).or_insert_with(|| {
        Arc::new(Mutex::new(Found { mode: StructuredOutput::JsonSchema, confirmed: false }))
    }))
}

/// Whether an error answer (status and body) refuses the request because of its
/// `response_format`: llama-cpp-python answers HTTP 500 with the validation error of its
/// request model, FastAPI servers 422, others 400. Authentication, rate-limit and timeout
/// statuses never are, nor is a server that took the mode but found the schema itself
/// invalid (OpenAI's "Invalid schema for response_format"): another mode would hide a
/// schema's mistake and keep the whole process off structured output.
pub(crate) fn is_refusal(status: u16, body: &str) -> bool {
    if !(400..600).contains(&status) || matches!(status, 401 | 403 | 404 | 408 | 429) {
        return false;
    }
    let body = body.to_ascii_lowercase();
    !body.contains("invalid schema")
        && ["response_format", "json_schema", "json_object"].iter().any(|word| body.contains(word))
}
