//! The flags that choose and limit the built-in LLM judge, shared by `revcal calibrate` and
//! `revcal judge`.

use anyhow::Context;
use clap::{Args, ValueEnum};
use revcal_judge::{JudgeConfig, LlmJudge, Provider, StructuredOutput, VerdictCache};
use std::path::PathBuf;
use std::time::Duration;

/// A provider, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ProviderArg {
    /// Anthropic Messages (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL).
    Anthropic,
    /// OpenAI Chat Completions and compatible servers: ollama, llama.cpp, vLLM
    /// (OPENAI_API_KEY, OPENAI_BASE_URL).
    Openai,
    /// Gemini generateContent (GEMINI_API_KEY or GOOGLE_API_KEY, GEMINI_BASE_URL).
    Gemini,
}

impl From<ProviderArg> for Provider {
    fn from(arg: ProviderArg) -> Provider {
        match arg {
            ProviderArg::Anthropic => Provider::Anthropic,
            ProviderArg::Openai => Provider::OpenAi,
            ProviderArg::Gemini => Provider::Gemini,
        }
    }
}

/// How an OpenAI-compatible server is asked for the answer's JSON Schema, as named on the
/// command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum StructuredOutputArg {
    /// json-schema, else json-object, else prompt: whichever the server accepts, found once
    /// per base URL.
    Auto,
    /// response_format json_schema (OpenAI, vLLM, ollama, llama.cpp's llama-server).
    JsonSchema,
    /// response_format json_object with the schema, and the schema in the prompt
    /// (llama-cpp-python's server).
    JsonObject,
    /// No response_format: the schema in the prompt only.
    Prompt,
}

impl From<StructuredOutputArg> for StructuredOutput {
    fn from(arg: StructuredOutputArg) -> StructuredOutput {
        match arg {
            StructuredOutputArg::Auto => StructuredOutput::Auto,
            StructuredOutputArg::JsonSchema => StructuredOutput::JsonSchema,
            StructuredOutputArg::JsonObject => StructuredOutput::JsonObject,
            StructuredOutputArg::Prompt => StructuredOutput::Prompt,
        }
    }
}

/// Which LLM judges, and how much it may spend.
#[derive(Debug, Clone, Args)]
pub(crate) struct JudgeFlags {
    /// LLM judge provider [default: $REVCAL_JUDGE_PROVIDER, else the first configured of
    /// anthropic (ANTHROPIC_API_KEY), openai (OPENAI_API_KEY or OPENAI_BASE_URL), gemini
    /// (GEMINI_API_KEY or GOOGLE_API_KEY)].
    #[arg(long, value_enum, value_name = "NAME")]
    pub(crate) judge_provider: Option<ProviderArg>,
    /// Judge model [default: $REVCAL_JUDGE_MODEL, else the provider's cheap tier].
    #[arg(long, value_name = "MODEL")]
    pub(crate) judge_model: Option<String>,
    /// Directory of cached verdicts [default: the user's cache directory, revcal/judge].
    #[arg(long, value_name = "DIR")]
    pub(crate) judge_cache: Option<PathBuf>,
    /// Ask the provider every time; neither read nor write cached verdicts.
    #[arg(long, conflicts_with = "judge_cache")]
    pub(crate) no_judge_cache: bool,
    /// Seconds to wait for one judge answer.
    #[arg(long, value_name = "SECS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) judge_timeout: u64,
    /// Retries of a judge request after 408, 429, 5xx, overload or a dropped connection.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub(crate) judge_retries: u32,
    /// Stop (exit 1) rather than send more than N requests to the judge (its provider, or
    /// the --judge-cmd command).
    #[arg(long, value_name = "N")]
    pub(crate) max_judge_calls: Option<u64>,
    /// How an OpenAI-compatible server is asked for the answer's JSON Schema; every answer
    /// is checked by revcal whatever the mode. Anthropic and Gemini always use their own
    /// structured output, so only auto goes with them.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = StructuredOutputArg::Auto)]
    pub(crate) structured_output: StructuredOutputArg,
}

impl JudgeFlags {
    /// The configured provider, from these flags and the environment; `None` when nothing
    /// is configured.
    pub(crate) fn config(&self) -> anyhow::Result<Option<JudgeConfig>> {
        let config = JudgeConfig::from_env(self.judge_provider.map(Provider::from), self.judge_model.clone())
            .context("cannot set up the LLM judge")?;
        let mode = StructuredOutput::from(self.structured_output);
        if let Some(config) = &config
            && config.provider() != Provider::OpenAi
            && mode != StructuredOutput::Auto
        {
            anyhow::bail!(
                "--structured-output {mode} applies to OpenAI-compatible servers; the {} judge always uses its own structured output (leave --structured-output at auto)",
                config.provider()
            );
        }
        Ok(config.map(|mut config| {
            config.timeout = Duration::from_secs(self.judge_timeout);
            config.retries = self.judge_retries;
            config.max_calls = self.max_judge_calls;
            config.with_structured_output(mode).redacting(crate::secrets::known())
        }))
    }

    /// The judge for `config`, with the verdict cache these flags choose.
    pub(crate) fn judge(&self, config: JudgeConfig) -> LlmJudge {
        let judge = LlmJudge::new(config);
        if self.no_judge_cache {
            return judge;
        }
        match self.judge_cache.clone().or_else(VerdictCache::default_dir) {
            Some(dir) => judge.with_cache(VerdictCache::new(dir)),
            None => {
                tracing::warn!(
                    "no cache directory (neither XDG_CACHE_HOME nor HOME is set): verdicts are not cached"
                );
                judge
            }
        }
    }
}

/// What to do when no built-in judge is configured, for a command that takes no
/// `--judge-cmd` (`judge check`, `rubric calibrate`).
pub(crate) const SETUP_HINT_BUILT_IN: &str = "set ANTHROPIC_API_KEY, OPENAI_API_KEY (or OPENAI_BASE_URL for a local server such as ollama or llama.cpp), GEMINI_API_KEY or GOOGLE_API_KEY";
/// What to do when no judge is configured, for a command that takes `--judge-cmd`.
pub(crate) const SETUP_HINT: &str = "set ANTHROPIC_API_KEY, OPENAI_API_KEY (or OPENAI_BASE_URL for a local server such as ollama or llama.cpp), GEMINI_API_KEY or GOOGLE_API_KEY; or pass --judge-cmd CMD";

#[cfg(test)]
mod tests {
    use super::ProviderArg;
    use clap::ValueEnum;
    use revcal_judge::Provider;

    /// `ProviderArg` is a second list of the providers: a provider the library gains must be
    /// nameable by `--judge-provider` and `--review-provider` under its own name too.
    #[test]
    fn every_provider_can_be_named_on_the_command_line() {
        for provider in Provider::ALL {
            let arg = ProviderArg::from_str(provider.name(), false)
                .unwrap_or_else(|_| panic!("no --judge-provider value `{}`", provider.name()));
            assert_eq!(Provider::from(arg), provider);
        }
        assert_eq!(ProviderArg::value_variants().len(), Provider::ALL.len());
    }
}
