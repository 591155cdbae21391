//! The built-in LLM judge: the prompt, the provider client, the verdict cache and the spend
//! counters behind the [`Judge`] trait (docs/judge.md).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::AnswerProblem;
use super::cache::VerdictCache;
use super::client::Client;
use super::prompt;
use super::provider::JudgeConfig;
use super::wire::{Ask, quote};
use super::{Judge, JudgeError, JudgeRequest, JudgeUsage};

/// A match verdict with the judge's reason: whether a finding identifies a planted defect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchVerdict {
    /// Whether the finding identifies the defect.
    pub matched: bool,
    /// The judge's one-sentence reason.
    pub reason: String,
    /// True when the verdict came from the cache.
    pub cached: bool,
}

/// The JSON Schema of a verdict.
fn verdict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "match": {"type": "boolean"},
            "reason": {"type": "string"},
        },
        "required": ["match", "reason"],
        "additionalProperties": false,
    })
}

/// Checks an answer against the verdict schema: exactly a boolean `match` and a string
/// `reason`. A server may ignore the schema it was sent, so nothing else is trusted.
fn verdict_of(answer: &Value) -> Result<(bool, String), AnswerProblem> {
    let off_schema = || {
        AnswerProblem::Shape(format!(
            "expected {{\"match\": bool, \"reason\": string}}, got {}",
            quote(&answer.to_string())
        ))
    };
    let object = answer.as_object().ok_or_else(off_schema)?;
    if object.keys().any(|key| key != "match" && key != "reason") {
        return Err(off_schema());
    }
    match (object.get("match"), object.get("reason")) {
        (Some(Value::Bool(verdict)), Some(Value::String(reason))) => Ok((*verdict, reason.clone())),
        _ => Err(off_schema()),
    }
}

/// A judge that asks an LLM provider (Anthropic, OpenAI or a compatible server, Gemini)
/// whether a finding identifies a planted defect.
///
/// Each request gets a fresh prompt whose fences carry a random nonce; the answer must be
/// `{"match": bool, "reason": string}` or the request is an error, never a match. Verdicts
/// are cached when a [`VerdictCache`] is given; errors never are.
pub struct LlmJudge {
    client: Client,
    cache: Option<VerdictCache>,
    name: String,
}

impl std::fmt::Debug for LlmJudge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmJudge")
            .field("config", &self.client.config)
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

impl LlmJudge {
    /// A judge for `config`, without a cache.
    pub fn new(config: JudgeConfig) -> LlmJudge {
        let name = format!("{}:{}", config.provider(), config.model());
        LlmJudge { client: Client::new(config), cache: None, name }
    }

    /// Keep verdicts in `cache`.
    pub fn with_cache(mut self, cache: VerdictCache) -> LlmJudge {
        self.cache = Some(cache);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &JudgeConfig {
        &self.client.config
    }

    /// What the judge has spent so far.
    pub fn spent(&self) -> JudgeUsage {
        let counters = &self.client.counters;
        JudgeUsage {
            provider: self.client.config.provider().name().to_owned(),
            model: self.client.config.model().to_owned(),
            calls: counters.calls.load(Ordering::SeqCst),
            cache_hits: counters.cache_hits.load(Ordering::SeqCst),
            input_tokens: counters.input_tokens.load(Ordering::SeqCst),
            output_tokens: counters.output_tokens.load(Ordering::SeqCst),
        }
    }

    fn cache_key(&self, kind: &str, parts: &[&str]) -> String {
        let config = &self.client.config;
        let mut all = vec![config.provider().name(), config.base_url(), config.model(), kind];
        all.extend_from_slice(parts);
        VerdictCache::key(&all)
    }

    /// The verdict on `request`, with the judge's reason.
    pub fn verdict(&self, request: &JudgeRequest) -> Result<MatchVerdict, JudgeError> {
        let request_json = serde_json::to_string(request).map_err(JudgeError::Request)?;
        let key = self.cache_key("verdict", &[&prompt::cache_text(request), &request_json]);
        if let Some(cache) = &self.cache
            && let Some(stored) = cache.get(&key)
            && let Ok((matched, reason)) = verdict_of(&stored)
        {
            self.client.counters.cache_hits.fetch_add(1, Ordering::SeqCst);
            return Ok(MatchVerdict { matched, reason, cached: true });
        }
        let prompt = prompt::render(request)?;
        let schema = verdict_schema();
        let ask = Ask { system: &prompt.system, user: &prompt.user, schema_name: "verdict", schema: &schema };
        let (answer, _) = self.client.ask(&ask)?;
        let (matched, reason) = verdict_of(&answer)
            .map_err(|problem| JudgeError::BadAnswer { judge: self.client.config.who(), problem })?;
        if let Some(cache) = &self.cache {
            cache.put(&key, &json!({"match": matched, "reason": reason}), |text| {
                self.client.config.redact(text)
            });
        }
        tracing::debug!(judge = %self.name, plant = %request.plant.file, line = request.plant.line, matched, %reason, "judge verdict");
        Ok(MatchVerdict { matched, reason, cached: false })
    }

    /// Asks a structured question (rubric calibration uses it) through the same client,
    /// budget and cache as verdicts.
    ///
    /// `render(nonce)` returns the (system, user) prompt with every untrusted text fenced by
    /// lines `<data-NONCE>` and `</data-NONCE>`: it is called with a fresh random nonce for the
    /// request, and with a fixed placeholder for the cache key, so the same question is the
    /// same cache entry across runs. `schema` is the answer's JSON Schema (an object; every
    /// property required, no others). `validate` checks the answer: one it rejects is an
    /// error and is not cached (nor is a cached entry it rejects used).
    pub fn ask_json(
        &self,
        schema_name: &str,
        schema: &Value,
        render: impl Fn(&str) -> (String, String),
        validate: impl Fn(&Value) -> Result<(), String>,
    ) -> Result<Value, JudgeError> {
        let (cache_system, cache_user) = render(prompt::NONCE_PLACEHOLDER);
        let key = self.cache_key(
            "json",
            &[prompt::PROMPT_VERSION, schema_name, &schema.to_string(), &cache_system, &cache_user],
        );
        if let Some(cache) = &self.cache
            && let Some(stored) = cache.get(&key)
            && validate(&stored).is_ok()
        {
            self.client.counters.cache_hits.fetch_add(1, Ordering::SeqCst);
            return Ok(stored);
        }
        let nonce = loop {
            let nonce = prompt::nonce()?;
            if !cache_system.contains(&nonce) && !cache_user.contains(&nonce) {
                break nonce;
            }
        };
        let (system, user) = render(&nonce);
        let ask = Ask { system: &system, user: &user, schema_name, schema };
        let (answer, _) = self.client.ask(&ask)?;
        validate(&answer).map_err(|message| JudgeError::BadAnswer {
            judge: self.client.config.who(),
            problem: AnswerProblem::Shape(message),
        })?;
        if let Some(cache) = &self.cache {
            cache.put(&key, &answer, |text| self.client.config.redact(text));
        }
        Ok(answer)
    }

    /// One cheap call, never cached: the provider answers a trivial question through the
    /// same path as a verdict. Returns how long it took.
    pub fn check(&self) -> Result<Duration, JudgeError> {
        let schema = verdict_schema();
        let ask = Ask {
            system: "You check that an API works. Answer with one JSON object and nothing else.",
            user: "Answer {\"match\": true, \"reason\": \"ok\"}.",
            schema_name: "verdict",
            schema: &schema,
        };
        let started = Instant::now();
        let (answer, _) = self.client.ask(&ask)?;
        verdict_of(&answer)
            .map_err(|problem| JudgeError::BadAnswer { judge: self.client.config.who(), problem })?;
        Ok(started.elapsed())
    }
}

impl Judge for LlmJudge {
    fn name(&self) -> &str {
        &self.name
    }

    fn judge(&self, request: &JudgeRequest) -> Result<bool, JudgeError> {
        self.verdict(request).map(|verdict| verdict.matched)
    }

    fn usage(&self) -> Option<JudgeUsage> {
        Some(self.spent())
    }

    fn call_budget(&self) -> Option<u64> {
        self.client.config.max_calls
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_boolean_match_and_a_string_reason_are_a_verdict() {
        assert_eq!(verdict_of(&json!({"match": true, "reason": "r"})), Ok((true, "r".into())));
        assert_eq!(verdict_of(&json!({"reason": "r", "match": false})), Ok((false, "r".into())));
        for bad in [
            json!({"match": "yes", "reason": "r"}),
            json!({"match": 1, "reason": "r"}),
            json!({"match": true}),
            json!({"match": true, "reason": "r", "confidence": 0.9}),
            json!({"reason": "r"}),
            json!([true]),
        ] {
            assert!(verdict_of(&bad).is_err(), "{bad}");
        }
    }
}
