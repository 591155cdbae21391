//! Which LLM provider judges, with which model, at which address and with which key: the
//! detection order and the overrides described in docs/judge.md#setup.

use std::time::Duration;

use super::JudgeError;
use super::structured::StructuredOutput;

/// An LLM provider that can judge findings over HTTPS. Providers are added as they are
/// supported, so a `match` on it needs a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// Anthropic's Messages API.
    Anthropic,
    /// OpenAI's Chat Completions API, and every server that speaks it (ollama, llama.cpp's
    /// server, vLLM).
    OpenAi,
    /// Google's Gemini `generateContent` API.
    Gemini,
}

impl Provider {
    /// Every provider, in detection order.
    pub const ALL: [Provider; 3] = [Provider::Anthropic, Provider::OpenAi, Provider::Gemini];

    /// The name used on the command line, in the environment and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAi => "openai",
            Provider::Gemini => "gemini",
        }
    }

    /// The model used when none is named: each provider's cheap tier.
    pub fn default_model(self) -> &'static str {
        match self {
            Provider::Anthropic => "claude-haiku-4-5",
            Provider::OpenAi => "gpt-4.1-mini",
            Provider::Gemini => "gemini-2.5-flash-lite",
        }
    }

    /// The public endpoint used when no base URL is set.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::Anthropic => "https://api.anthropic.com",
            Provider::OpenAi => "https://api.openai.com/v1",
            Provider::Gemini => "https://generativelanguage.googleapis.com",
        }
    }

    /// The environment variables that hold the API key, in the order they are read.
    pub fn key_variables(self) -> &'static [&'static str] {
        match self {
            Provider::Anthropic => &["ANTHROPIC_API_KEY"],
            Provider::OpenAi => &["OPENAI_API_KEY"],
            Provider::Gemini => &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        }
    }

    /// The environment variable that overrides the base URL.
    pub fn base_url_variable(self) -> &'static str {
        match self {
            Provider::Anthropic => "ANTHROPIC_BASE_URL",
            Provider::OpenAi => "OPENAI_BASE_URL",
            Provider::Gemini => "GEMINI_BASE_URL",
        }
    }
}

impl std::fmt::Display for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Provider {
    type Err = JudgeError;
    fn from_str(text: &str) -> Result<Provider, JudgeError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "anthropic" | "claude" => Ok(Provider::Anthropic),
            "openai" | "openai-compatible" => Ok(Provider::OpenAi),
            "gemini" | "google" => Ok(Provider::Gemini),
            _ => Err(JudgeError::UnknownProvider { name: text.to_owned() }),
        }
    }
}

/// The environment variable that chooses the provider.
pub const PROVIDER_VARIABLE: &str = "REVCAL_JUDGE_PROVIDER";
/// The environment variable that chooses the model.
pub const MODEL_VARIABLE: &str = "REVCAL_JUDGE_MODEL";

/// How to reach one provider's model: what the HTTP judge needs. Build one with
/// [`JudgeConfig::detect`] (from the environment) or [`JudgeConfig::new`].
#[derive(Clone)]
pub struct JudgeConfig {
    provider: Provider,
    model: String,
    base_url: String,
    api_key: Option<String>,
    key_variable: &'static str,
    /// Values kept out of what the judge shows or stores besides its key.
    secrets: Vec<String>,
    /// Time to establish the connection.
    pub connect_timeout: Duration,
    /// Time for the whole answer once connected (reasoning models take a while).
    pub timeout: Duration,
    /// How many times a retryable failure (408, 429, 5xx, overloaded, a dropped connection,
    /// a timeout) is retried.
    pub retries: u32,
    /// The first backoff delay; each retry doubles it (with jitter), unless the server says
    /// how long to wait.
    pub backoff: Duration,
    /// The longest wait between two attempts, whatever the server asks.
    pub max_backoff: Duration,
    /// Refuse to send more than this many requests (`None`: no limit).
    pub max_calls: Option<u64>,
    /// The most output tokens an answer may take (`None`: enough for a verdict, 1,024, or
    /// 16,000 for models that reason first). An answer cut off at the cap is an error.
    pub max_output_tokens: Option<u64>,
    /// How an OpenAI-compatible server is asked for the answer's schema.
    structured_output: StructuredOutput,
    /// What the model is asked to be, for the errors that name it.
    role: Role,
}

/// What a model is asked to be: a judge of findings, or the built-in reviewer. Errors name
/// it (`reviewer openai:gpt-4o-mini: gave up after 5 attempts`), so that a user knows which
/// of the two configurations to fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Role {
    /// The judge: does a finding describe a planted defect?
    #[default]
    Judge,
    /// The built-in reviewer (revcal-review).
    Reviewer,
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::Judge => "judge",
            Role::Reviewer => "reviewer",
        })
    }
}

impl std::fmt::Debug for JudgeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key itself.
        f.debug_struct("JudgeConfig")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("timeout", &self.timeout)
            .field("retries", &self.retries)
            .field("max_calls", &self.max_calls)
            .field("structured_output", &self.structured_output)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl JudgeConfig {
    /// The default time to connect.
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
    /// The default time for an answer.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
    /// The default number of retries.
    pub const DEFAULT_RETRIES: u32 = 4;

    /// `provider`'s default model at its public endpoint, with `api_key`.
    pub fn new(provider: Provider, api_key: Option<String>) -> JudgeConfig {
        JudgeConfig {
            provider,
            model: provider.default_model().to_owned(),
            base_url: provider.default_base_url().to_owned(),
            api_key: api_key.filter(|k| !k.trim().is_empty()),
            key_variable: provider.key_variables()[0],
            secrets: Vec::new(),
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            timeout: Self::DEFAULT_TIMEOUT,
            retries: Self::DEFAULT_RETRIES,
            backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
            max_calls: None,
            max_output_tokens: None,
            structured_output: StructuredOutput::Auto,
            role: Role::Judge,
        }
    }

    /// Ask the model as `role` (default [`Role::Judge`]): errors name it.
    pub fn with_role(mut self, role: Role) -> JudgeConfig {
        self.role = role;
        self
    }

    /// What the model is asked to be.
    pub fn role(&self) -> Role {
        self.role
    }

    /// `role provider:model`, as errors name the model (`reviewer openai:gpt-4o-mini`).
    pub fn who(&self) -> String {
        format!("{} {}:{}", self.role, self.provider, self.model)
    }

    /// Ask an OpenAI-compatible server for the answer's schema this way (default
    /// [`StructuredOutput::Auto`]). Anthropic and Gemini always use their native structured
    /// output, so this only changes requests of [`Provider::OpenAi`].
    pub fn with_structured_output(mut self, mode: StructuredOutput) -> JudgeConfig {
        self.structured_output = mode;
        self
    }

    /// How an OpenAI-compatible server is asked for the answer's schema.
    pub fn structured_output(&self) -> StructuredOutput {
        self.structured_output
    }

    /// Use `model`.
    pub fn with_model(mut self, model: impl Into<String>) -> JudgeConfig {
        self.model = model.into();
        self
    }

    /// Talk to `url` instead of the public endpoint (a trailing `/` is ignored).
    pub fn with_base_url(mut self, url: impl Into<String>) -> JudgeConfig {
        self.base_url = url.into().trim_end_matches('/').to_owned();
        self
    }

    /// Also keep `secrets` out of what the judge shows (its errors) and stores (its cache):
    /// a server may echo any text it was sent, and a finding can quote a key the reviewer
    /// could read. The judge's own key is always kept out.
    pub fn redacting(mut self, secrets: impl IntoIterator<Item = String>) -> JudgeConfig {
        self.secrets.extend(secrets);
        self
    }

    /// `text` without the key, the other secrets named with [`redacting`](Self::redacting),
    /// or the user information of any URL.
    pub(crate) fn redact<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        let mut secrets: Vec<&str> = self.secrets.iter().map(String::as_str).collect();
        secrets.extend(self.api_key.as_deref());
        revcal_process::redact(text, &secrets)
    }

    /// The provider.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// The model.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The base URL requests go to.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The API key, when there is one.
    pub(crate) fn api_key(&self) -> Option<&str> {
        self.api_key.as_deref()
    }

    /// The environment variable the key came from (or should come from), for error messages.
    pub fn key_variable(&self) -> &'static str {
        self.key_variable
    }

    /// Chooses the judge from the process environment: see [`detect`](Self::detect).
    pub fn from_env(
        provider: Option<Provider>,
        model: Option<String>,
    ) -> Result<Option<JudgeConfig>, JudgeError> {
        Self::detect(|name| std::env::var(name).ok(), provider, model)
    }

    /// Chooses the judge from `env` (a lookup of environment variables).
    ///
    /// The provider is `provider`, else `REVCAL_JUDGE_PROVIDER`, else the first of Anthropic,
    /// OpenAI and Gemini whose key is set (OpenAI also when only `OPENAI_BASE_URL` is set: a
    /// local server needs no key). The model is `model`, else `REVCAL_JUDGE_MODEL`, else the
    /// provider's default. `Ok(None)` when nothing is configured; an error when the chosen
    /// provider has no key.
    pub fn detect(
        env: impl Fn(&str) -> Option<String>,
        provider: Option<Provider>,
        model: Option<String>,
    ) -> Result<Option<JudgeConfig>, JudgeError> {
        let env = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        let provider = match provider {
            Some(provider) => Some(provider),
            None => env(PROVIDER_VARIABLE).map(|name| name.parse()).transpose()?,
        };
        let key = |provider: Provider| {
            provider.key_variables().iter().find_map(|variable| env(variable).map(|key| (*variable, key)))
        };
        let base_url = |provider: Provider| env(provider.base_url_variable());
        let usable = |provider: Provider| {
            key(provider).is_some() || (provider == Provider::OpenAi && base_url(provider).is_some())
        };
        let chosen = match provider {
            Some(provider) if usable(provider) => provider,
            Some(provider) => {
                return Err(JudgeError::MissingKey {
                    provider: provider.name(),
                    variables: provider.key_variables().join(" or "),
                });
            }
            None => match Provider::ALL.into_iter().find(|p| usable(*p)) {
                Some(provider) => provider,
                None => return Ok(None),
            },
        };
        let found = key(chosen);
        let mut config = JudgeConfig::new(chosen, found.as_ref().map(|(_, key)| key.clone()));
        if let Some((variable, _)) = found {
            config.key_variable = variable;
        }
        if let Some(url) = base_url(chosen) {
            config = config.with_base_url(url);
        }
        if let Some(model) = model.or_else(|| env(MODEL_VARIABLE)) {
            config = config.with_model(model);
        }
        Ok(Some(config))
    }
}
