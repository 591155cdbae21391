//! The judge of revcal: deciding whether a reviewer's finding describes a planted defect, and
//! asking a model for JSON that matches a schema.
//!
//! A [`Judge`] answers one question per (plant, finding) pair: does this finding identify this
//! defect? The answer is `true`, `false`, or an error; an error is never a match, so a broken
//! judge can only lower recall, never inflate it. [`CommandJudge`] is the judge behind
//! `--judge-cmd CMD`: one JSON [`JudgeRequest`] on the command's stdin, `{"match": true|false}`
//! expected on its stdout. [`LlmJudge`] (cargo feature `http`, on by default) is the built-in
//! judge: it asks Anthropic, OpenAI (or a compatible server) or Gemini over HTTPS, with the
//! prompt, retries and cache described in docs/judge.md; besides verdicts
//! ([`LlmJudge::verdict`]) it asks any structured question whose answer must match a JSON
//! Schema ([`LlmJudge::ask_json`]), through the same client, budget and cache. Without the
//! `http` feature the crate builds no HTTP client and no TLS stack.
//!
//! The labelled judge cases ([`shipped_judge_cases`], [`parse_judge_cases`]) measure a judge
//! with [`calibrate_judge`].
//!
//! ```
//! use revcal_judge::{CommandJudge, Judge, JudgeRequest, JudgedPlant};
//!
//! let plant = JudgedPlant::new("src/lib.rs", 3, "off-by-one", "relational-boundary", "    while i < n {", "    while i <= n {")
//!     .with_defect("`<` became `<=`: the loop reads one element past the end");
//! let finding = &revcal_findings::parse_findings(r#"[{"file": "src/lib.rs", "line": 3, "message": "reads past the end"}]"#).findings[0];
//! let request = JudgeRequest::new(plant, finding);
//! // A judge that matches when the finding mentions "past the end".
//! let judge = CommandJudge::new(r#"grep -q 'past the end' && echo '{"match": true}' || echo '{"match": false}'"#);
//! assert!(judge.judge(&request).unwrap());
//! ```

mod answer;
#[cfg(feature = "http")]
mod cache;
mod cases;
#[cfg(feature = "http")]
mod client;
mod command;
#[cfg(feature = "http")]
mod llm;
#[cfg(feature = "http")]
mod prompt;
#[cfg(feature = "http")]
mod provider;
#[cfg(feature = "http")]
mod structured;
#[cfg(feature = "http")]
mod wire;
pub mod yaml;

pub use answer::AnswerProblem;
#[cfg(feature = "http")]
pub use cache::VerdictCache;
pub use cases::{
    CaseOutcome, JudgeCalibration, JudgeCase, KindScore, calibrate_judge, parse_judge_cases,
    sample_judge_cases, shipped_judge_cases,
};
pub use command::CommandJudge;
#[cfg(feature = "http")]
pub use llm::{LlmJudge, MatchVerdict};
#[cfg(feature = "http")]
pub use prompt::fresh_nonce;
#[cfg(feature = "http")]
pub use provider::{JudgeConfig, MODEL_VARIABLE, PROVIDER_VARIABLE, Provider, Role};
/// What a judge spent (kept in revcal-record, so that a calibration report can carry it
/// without building the judge).
pub use revcal_record::JudgeUsage;
#[cfg(feature = "http")]
pub use structured::StructuredOutput;
pub use yaml::YamlError;

use serde::{Deserialize, Serialize};

use revcal_findings::Finding;

/// Decides whether a finding describes a planted defect. Implementations are shared across
/// threads, so they must be `Send + Sync`.
pub trait Judge: Send + Sync {
    /// A short name for reports and messages (`judge-cmd`, `anthropic:claude-...`).
    fn name(&self) -> &str;
    /// `Ok(true)` when the finding identifies the defect, `Ok(false)` when it does not, and an
    /// error when no verdict could be obtained (which callers must never count as a match).
    fn judge(&self, request: &JudgeRequest) -> Result<bool, JudgeError>;
    /// What the judge spent so far (calls, cache hits, tokens), when it keeps count; the
    /// calibration report carries it.
    fn usage(&self) -> Option<JudgeUsage> {
        None
    }
    /// The most calls the judge makes, when it has a budget: a calibration then asks it one
    /// question at a time, in order, so that the questions past the budget are always the
    /// same ones.
    fn call_budget(&self) -> Option<u64> {
        None
    }
}

impl<J: Judge + ?Sized> Judge for &J {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn judge(&self, request: &JudgeRequest) -> Result<bool, JudgeError> {
        (**self).judge(request)
    }
    fn usage(&self) -> Option<JudgeUsage> {
        (**self).usage()
    }
    fn call_budget(&self) -> Option<u64> {
        (**self).call_budget()
    }
}

impl<J: Judge + ?Sized> Judge for Box<J> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn judge(&self, request: &JudgeRequest) -> Result<bool, JudgeError> {
        (**self).judge(request)
    }
    fn usage(&self) -> Option<JudgeUsage> {
        (**self).usage()
    }
    fn call_budget(&self) -> Option<u64> {
        (**self).call_budget()
    }
}

impl<J: Judge + ?Sized> Judge for std::sync::Arc<J> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn judge(&self, request: &JudgeRequest) -> Result<bool, JudgeError> {
        (**self).judge(request)
    }
    fn usage(&self) -> Option<JudgeUsage> {
        (**self).usage()
    }
    fn call_budget(&self) -> Option<u64> {
        (**self).call_budget()
    }
}

/// What a judge is asked: the plant and the finding that points at it.
///
/// As JSON (what `--judge-cmd` reads on stdin), the plant carries its file, line, category,
/// operator, defect, original and mutated line, never its id or witness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeRequest {
    /// The planted bug.
    pub plant: JudgedPlant,
    /// The reviewer's finding.
    pub finding: JudgedFinding,
}

impl JudgeRequest {
    /// A request about `finding` and `plant`.
    pub fn new(plant: JudgedPlant, finding: &Finding) -> Self {
        JudgeRequest { plant, finding: JudgedFinding::from(finding) }
    }
}

/// A planted bug, as the judge sees it: where it is, what changed and what is now wrong;
/// never how it was proven (a witness would hand the judge the answer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgedPlant {
    /// The file, relative to the work tree, `/`-separated.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// Bug category (kebab-case, e.g. `off-by-one`).
    pub category: String,
    /// The operator that made it (`plants-file` for hand-written plants).
    pub operator: String,
    /// One sentence: what is now wrong (empty when nobody said).
    pub defect: String,
    /// The whole source line before.
    pub original: String,
    /// The whole source line after.
    pub mutated: String,
    /// The last line of a plant that spans several lines; `None` for a one-line plant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
}

impl JudgedPlant {
    /// A one-line plant that replaces line `line` of `file` (`original`, the whole line) with
    /// `mutated`, with no defect sentence; add one with [`with_defect`](Self::with_defect).
    pub fn new(
        file: impl Into<String>,
        line: u32,
        category: impl Into<String>,
        operator: impl Into<String>,
        original: impl Into<String>,
        mutated: impl Into<String>,
    ) -> Self {
        JudgedPlant {
            file: file.into(),
            line,
            category: category.into(),
            operator: operator.into(),
            defect: String::new(),
            original: original.into(),
            mutated: mutated.into(),
            end_line: None,
        }
    }

    /// The same plant with a defect sentence.
    pub fn with_defect(mut self, defect: impl Into<String>) -> Self {
        self.defect = defect.into();
        self
    }
}

/// A finding, as the judge sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgedFinding {
    /// The file the finding points at.
    pub file: Option<String>,
    /// The line the finding points at.
    pub line: Option<u32>,
    /// What the reviewer said.
    pub text: String,
    /// The reviewer's supporting evidence.
    pub evidence: Option<String>,
}

impl From<&Finding> for JudgedFinding {
    fn from(finding: &Finding) -> Self {
        JudgedFinding {
            file: finding.file.clone(),
            line: finding.line,
            text: finding.text.clone(),
            evidence: finding.evidence.clone(),
        }
    }
}

/// Why a judge gave no verdict. Every variant means "not a match".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JudgeError {
    /// The request could not be serialised.
    #[error("could not encode the judge request")]
    Request(#[source] serde_json::Error),
    /// The judge command could not be started.
    #[error("could not start the judge command `{command}`")]
    Spawn {
        /// The command line.
        command: String,
        /// The operating-system error.
        #[source]
        source: std::io::Error,
    },
    /// Talking to the judge command failed.
    #[error("could not talk to the judge command `{command}`")]
    Io {
        /// The command line.
        command: String,
        /// The operating-system error.
        #[source]
        source: std::io::Error,
    },
    /// The judge command did not finish in time; it and its process group were killed.
    #[error("judge command `{command}` gave no answer within {seconds}s and was killed")]
    Timeout {
        /// The command line.
        command: String,
        /// The time limit in seconds.
        seconds: f64,
    },
    /// The judge command exited unsuccessfully.
    #[error("judge command `{command}` failed ({status}){}", stderr_suffix(.stderr))]
    Exit {
        /// The command line.
        command: String,
        /// The exit status, in words.
        status: String,
        /// The start of its stderr.
        stderr: String,
    },
    /// The judge command printed more than the output limit.
    #[error("judge command `{command}` printed more than {limit} bytes and was killed")]
    OutputTooLarge {
        /// The command line.
        command: String,
        /// The limit in bytes.
        limit: usize,
    },
    /// The answer is not JSON.
    #[error(
        "judge command `{command}` answered {output:?}, which is not JSON; expected {{\"match\": true|false}}"
    )]
    NotJson {
        /// The command line.
        command: String,
        /// The start of the answer.
        output: String,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// The answer is JSON without a boolean `match`.
    #[error(
        "judge command `{command}` answered {output:?}, which has no boolean \"match\"; expected {{\"match\": true|false}}"
    )]
    NoVerdict {
        /// The command line.
        command: String,
        /// The start of the answer.
        output: String,
    },
    /// `--judge-provider` or `REVCAL_JUDGE_PROVIDER` names no known provider.
    #[error("unknown judge provider `{name}`: expected anthropic, openai or gemini")]
    UnknownProvider {
        /// The name given.
        name: String,
    },
    /// A structured-output mode that is not `auto`, `json-schema`, `json-object` or `prompt`.
    #[error("unknown structured output mode `{name}`: expected auto, json-schema, json-object or prompt")]
    UnknownStructuredOutput {
        /// The name given.
        name: String,
    },
    /// The server refused the request because of the structured output asked for (its
    /// `response_format`), in a mode chosen explicitly: `auto` would have tried the next one.
    #[error(
        "{judge}: the server refused structured output `{mode}` (HTTP {status}: {message}); set the structured output to `auto` (--structured-output auto) to find what it accepts"
    )]
    StructuredOutputRefused {
        /// Who asked, and whom: `judge provider:model` or `reviewer provider:model` (see
        /// [`Role`]).
        judge: String,
        /// The mode refused (`json-schema`, `json-object`).
        mode: &'static str,
        /// The HTTP status.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// The chosen provider has no API key in the environment.
    #[error("the {provider} provider needs an API key: set {variables}")]
    MissingKey {
        /// The provider.
        provider: &'static str,
        /// The variables that can hold the key.
        variables: String,
    },
    /// The operating system's random source failed (the prompt's fence nonce).
    #[error("the operating system's random source failed: {message}")]
    Random {
        /// What it said.
        message: String,
    },
    /// The provider refused the key (401 or 403): retrying cannot help.
    #[error("{judge}: the provider refused the API key (HTTP {status}: {message}); check {variable}")]
    Unauthorized {
        /// Who asked, and whom: `judge provider:model` or `reviewer provider:model` (see
        /// [`Role`]).
        judge: String,
        /// 401 or 403.
        status: u16,
        /// The provider's message.
        message: String,
        /// The environment variable that holds the key.
        variable: &'static str,
    },
    /// The account's quota is exhausted (not a rate limit: waiting will not help today).
    #[error("{judge}: quota exhausted (HTTP {status}: {message}); not retried")]
    Quota {
        /// Who asked, and whom: `judge provider:model` or `reviewer provider:model` (see
        /// [`Role`]).
        judge: String,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The provider answered with an error status.
    #[error("{judge}: HTTP {status}: {message}")]
    Status {
        /// Who asked, and whom: `judge provider:model` or `reviewer provider:model` (see
        /// [`Role`]).
        judge: String,
        /// The HTTP status.
        status: u16,
        /// The provider's message (or the start of the body).
        message: String,
    },
    /// The provider answered with a redirect (3xx). It is never followed: the API key would
    /// go to the other host.
    #[error(
        "{judge}: HTTP {status}, a redirect to {host}; revcal never follows a redirect with an API key: set {variable} to the address that answers"
    )]
    Redirect {
        /// Who asked, and whom: `judge provider:model` or `reviewer provider:model` (see
        /// [`Role`]).
        judge: String,
        /// The 3xx status.
        status: u16,
        /// The host the redirect points at (never its path or query).
        host: String,
        /// The environment variable that sets the base URL.
        variable: &'static str,
    },
    /// The request did not get through or the answer did not arrive whole (connection
    /// refused or dropped, timeout, TLS).
    #[error("{judge}: no answer from {url}")]
    Transport {
        /// Who asked, and whom: `judge provider:model` or `reviewer provider:model` (see
        /// [`Role`]).
        judge: String,
        /// The URL.
        url: String,
        /// What the HTTP client said.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Every attempt failed with a retryable error; the last one is the source.
    #[error("{judge}: gave up after {attempts} attempt{}", if *.attempts == 1 { "" } else { "s" })]
    GaveUp {
        /// Who asked, and whom: `judge provider:model` or `reviewer provider:model` (see
        /// [`Role`]).
        judge: String,
        /// Attempts made.
        attempts: u32,
        /// The last attempt's error.
        #[source]
        source: Box<JudgeError>,
    },
    /// The answer is not the JSON asked for: truncated, empty, refused, not JSON, or off the
    /// schema.
    #[error("{judge}: {problem}")]
    BadAnswer {
        /// Who asked, and whom: `judge provider:model` or `reviewer provider:model` (see
        /// [`Role`]).
        judge: String,
        /// What is wrong with it.
        problem: AnswerProblem,
    },
    /// The answer's body is larger than revcal reads (4 MiB, whatever its status). It is
    /// final for this question: asked again, the server would most likely send (and bill)
    /// another answer of that size.
    #[error("judge {judge}: the answer is larger than {} MiB; it is not read, and the question is not asked again", .limit >> 20)]
    AnswerTooLarge {
        /// The judge (`provider:model`).
        judge: String,
        /// The most bytes read of an answer.
        limit: u64,
    },
    /// The budget of calls is spent; no further request was sent.
    #[error("the budget of {max} calls is spent; no further request was sent")]
    Budget {
        /// The budget.
        max: u64,
    },
    /// A labelled set of judge cases could not be read.
    #[error("cannot read the judge cases")]
    Cases(#[source] yaml::YamlError),
    /// A labelled set of judge cases is shaped so that it was not deserialized.
    #[error("cannot read the judge cases: line {line}: {message}")]
    CasesShape {
        /// The 1-based line where the problem starts.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A judge backend (an HTTP provider, for instance) failed.
    #[error("judge {judge}: {message}")]
    Backend {
        /// The judge's name.
        judge: String,
        /// What went wrong.
        message: String,
    },
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.trim().is_empty() { String::new() } else { format!(": {}", stderr.trim()) }
}
