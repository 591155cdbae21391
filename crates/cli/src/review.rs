//! `revcal review`: the built-in LLM reviewer over a commit, a work tree against a base, or
//! whole files (docs/review.md); and the same reviewer run by `revcal calibrate --reviewer`
//! inside each review's checkout.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use revcal_judge::{JudgeConfig, JudgeUsage, Provider, StructuredOutput, VerdictCache};
use revcal_review::{
    Change, Council, DEFAULT_CONTEXT_LINES, DEFAULT_MAX_CHANGE_BYTES, LlmReviewer, ReviewAnswer,
};
use revcal_rubric_model::Rubric;
use serde_json::{Value, json};

use crate::args::LibraryArgs;
use crate::output::emit;
use crate::style::Style;

/// `revcal review`'s exit-code table, for `--help`.
const REVIEW_TABLE: &str = "\
Exit status:
  0  the review was written (whatever it found)
  2  no review: usage error, no provider configured, an unreadable change, a provider
     error, an answer that does not fit the review's schema, --max-calls spent";

const AFTER_HELP: &str = "\
Examples:
  revcal review                                   # HEAD's change, the configured provider
  revcal review --commit HEAD~2 --reviewer openai:gpt-4o-mini --focus security
  revcal review src/parser.rs --format findings > findings.json
  revcal review --council anthropic:claude-haiku-4-5,openai:gpt-4o-mini --out review/
  revcal score review/council.json                # the council's verdict
  revcal calibrate --reviewer openai:gpt-4o-mini  # how good is it? (docs/review.md)

  revcal review --dry-run                         # the prompt, its size and calls; nothing sent

The model is asked through the judge's providers and variables: ANTHROPIC_API_KEY,
OPENAI_API_KEY (OPENAI_BASE_URL for ollama, llama.cpp or vLLM), GEMINI_API_KEY.";

/// A model the reviewer asks: `PROVIDER:MODEL`, or `PROVIDER` for its default model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModelSpec {
    provider: Provider,
    model: Option<String>,
}

impl FromStr for ModelSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<ModelSpec, String> {
        // Only the first colon separates: model names have their own (`qwen2.5-coder:7b`).
        let (provider, model) = match text.trim().split_once(':') {
            Some((provider, model)) => (provider, Some(model.trim())),
            None => (text.trim(), None),
        };
        let provider: Provider = provider.trim().parse().map_err(|_| {
            format!("`{text}`: expected PROVIDER:MODEL with PROVIDER anthropic, openai or gemini")
        })?;
        match model {
            Some("") => Err(format!("`{text}`: the model after `:` is empty")),
            model => Ok(ModelSpec { provider, model: model.map(str::to_owned) }),
        }
    }
}

impl std::fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.model {
            Some(model) => write!(f, "{}:{model}", self.provider),
            None => write!(f, "{}", self.provider),
        }
    }
}

/// What standard output gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ReviewFormat {
    /// The findings and the scores, for reading.
    Human,
    /// The findings as JSON, the shape `revcal calibrate` reads (docs/findings.md).
    Findings,
    /// The review document `revcal score` scores (a council: the array of its members).
    Review,
}

/// How the provider is asked: limits and cache.
#[derive(Debug, Clone, Args)]
pub(crate) struct AskFlags {
    /// Seconds to wait for one answer (a model on a CPU may need minutes).
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
    /// Retries of a request after 408, 429, 5xx, overload or a dropped connection.
    #[arg(long, value_name = "N", default_value_t = 4)]
    retries: u32,
    /// Stop (exit 2) rather than send more than N requests, per model.
    #[arg(long, value_name = "N")]
    max_calls: Option<u64>,
    /// Directory of cached answers [default: the user's cache directory, revcal/judge].
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Ask the provider every time; neither read nor write cached answers.
    #[arg(long, conflicts_with = "cache")]
    no_cache: bool,
    /// How an OpenAI-compatible server is asked for the answer's JSON Schema (auto finds
    /// what it accepts, once per base URL); every answer is checked whatever the mode.
    /// Anthropic and Gemini always use their own structured output.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = crate::judge::StructuredOutputArg::Auto)]
    structured_output: crate::judge::StructuredOutputArg,
}

impl AskFlags {
    /// The limits these flags set, with at most `max_findings` findings a review.
    pub(crate) fn limits(&self, max_findings: usize) -> Limits {
        Limits {
            timeout: Duration::from_secs(self.timeout),
            retries: self.retries,
            max_calls: self.max_calls,
            structured_output: self.structured_output.into(),
            max_findings,
            offline: false,
        }
    }

    /// The cache directory these flags choose (`None`: no cache).
    pub(crate) fn cache(&self) -> Option<PathBuf> {
        cache_dir(self.no_cache, self.cache.clone())
    }
}

/// Arguments of `revcal review`.
#[derive(Debug, Args)]
#[command(after_help = crate::exit::with_table(AFTER_HELP, REVIEW_TABLE))]
pub(crate) struct ReviewArgs {
    /// Files to review whole, instead of a commit's change.
    #[arg(value_name = "FILES", conflicts_with_all = ["commit", "base"])]
    files: Vec<PathBuf>,
    /// The commit whose change (against its first parent) is reviewed [default: HEAD].
    #[arg(long, value_name = "REF")]
    commit: Option<String>,
    /// Review the work tree against REV instead of a commit: as a calibrate reviewer
    /// command, `revcal review --base {base} --format findings`.
    #[arg(long, value_name = "REV", conflicts_with = "commit")]
    base: Option<String>,
    /// The repository (or, with FILES, the directory paths are shown relative to).
    #[arg(long, value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// The model: PROVIDER:MODEL (openai:gpt-4o-mini, anthropic:claude-haiku-4-5,
    /// gemini:gemini-2.5-flash, openai:qwen2.5-coder:7b for ollama) or PROVIDER for its
    /// default model [default: the first configured provider, as the judge finds it].
    #[arg(long, value_name = "P:M", conflicts_with = "council")]
    reviewer: Option<ModelSpec>,
    /// Several models review the same change at once: one review each, and the council's
    /// document (`revcal score` takes it).
    #[arg(long, value_name = "P:M,P:M", value_delimiter = ',', num_args = 1..)]
    council: Vec<ModelSpec>,
    /// The rubric the prompt is built from (its criteria and anchors: what a good review is).
    #[arg(long, value_name = "ID", default_value = "code_review_v1")]
    rubric: String,
    #[command(flatten)]
    library: LibraryArgs,
    /// Focus areas of the rubric the review must cover: their checks and red flags join the
    /// prompt (comma-separated; `revcal rubric get ID` lists them).
    #[arg(long, value_name = "AREA,...", value_delimiter = ',')]
    focus: Vec<String>,
    /// What standard output gets.
    #[arg(long, value_enum, default_value_t = ReviewFormat::Human)]
    format: ReviewFormat,
    /// Also write findings.json and review.json into DIR (a council: review-N-PROVIDER-MODEL.json
    /// per member and council.json).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The most findings a review may report (the most serious first); an answer with more
    /// is an error.
    #[arg(long, value_name = "N", default_value_t = revcal_review::MAX_FINDINGS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_findings: usize,
    /// Lines of unchanged code shown around each change.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONTEXT_LINES)]
    context: u32,
    /// The most bytes of change sent; a larger change is an error, never a partial review.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_CHANGE_BYTES)]
    max_change_bytes: usize,
    /// Show the prompt as it would be sent (system part, user part with the change fenced),
    /// its size, an estimate of its tokens and the number of calls; send nothing. Needs no
    /// API key.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    ask: AskFlags,
}

/// How each model is asked: limits and the structured-output mode.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// The time one answer may take.
    pub(crate) timeout: Duration,
    /// Retries of a retryable failure.
    pub(crate) retries: u32,
    /// The most requests per model.
    pub(crate) max_calls: Option<u64>,
    /// How an OpenAI-compatible server is asked for JSON (other providers: their own way).
    pub(crate) structured_output: StructuredOutput,
    /// The most findings a review is asked for.
    pub(crate) max_findings: usize,
    /// Nothing is sent (a dry run): a provider without its key is still named.
    pub(crate) offline: bool,
}

/// The provider configuration for `spec` (or the detected provider when `None`), with the
/// key from that provider's variable.
fn config_for(spec: Option<&ModelSpec>, limits: Limits) -> Result<JudgeConfig> {
    let config = match spec {
        // A dry run asks nothing: the model is named without its key.
        Some(spec) if limits.offline => {
            match JudgeConfig::from_env(Some(spec.provider), spec.model.clone()) {
                Ok(config) => config,
                Err(_) => {
                    let config = JudgeConfig::new(spec.provider, None);
                    Some(match &spec.model {
                        Some(model) => config.with_model(model.clone()),
                        None => config,
                    })
                }
            }
        }
        Some(spec) => JudgeConfig::from_env(Some(spec.provider), spec.model.clone())
            .with_context(|| format!("cannot set up reviewer {}", spec.provider))?,
        None => JudgeConfig::from_env(None, None).context("cannot set up the reviewer")?,
    };
    let Some(mut config) = config else {
        anyhow::bail!(
            "no LLM provider is configured for the reviewer: set ANTHROPIC_API_KEY, OPENAI_API_KEY (or OPENAI_BASE_URL for a local server such as ollama), GEMINI_API_KEY or GOOGLE_API_KEY, or pass --reviewer PROVIDER:MODEL"
        );
    };
    config.timeout = limits.timeout;
    config.retries = limits.retries;
    config.max_calls = limits.max_calls;
    if config.provider() == Provider::OpenAi {
        config = config.with_structured_output(limits.structured_output);
    }
    Ok(config.redacting(crate::secrets::known()))
}

/// The council of `specs` (one member without specs: the detected provider), each with the
/// rubric, the focus areas and the cache (`None`: no cache).
pub(crate) fn council(
    specs: &[ModelSpec],
    rubric: &Rubric,
    focus: &[String],
    limits: Limits,
    cache: Option<PathBuf>,
) -> Result<Council> {
    let specs: Vec<Option<&ModelSpec>> =
        if specs.is_empty() { vec![None] } else { specs.iter().map(Some).collect() };
    let mut members = Vec::with_capacity(specs.len());
    for spec in specs {
        let config = config_for(spec, limits)?;
        let mut member = LlmReviewer::new(config, rubric.clone())
            .with_focus(focus)?
            .with_max_findings(limits.max_findings);
        if let Some(dir) = &cache {
            member = member.with_cache(VerdictCache::new(dir.clone()));
        }
        members.push(member);
    }
    Ok(Council::new(members))
}

/// The cache directory the flags choose (`None`: no cache).
fn cache_dir(no_cache: bool, dir: Option<PathBuf>) -> Option<PathBuf> {
    if no_cache {
        return None;
    }
    let dir = dir.or_else(VerdictCache::default_dir);
    if dir.is_none() {
        tracing::warn!("no cache directory (neither XDG_CACHE_HOME nor HOME is set): answers are not cached");
    }
    dir
}

/// Runs `revcal review`.
pub(crate) fn run(args: ReviewArgs, style: &Style) -> Result<ExitCode> {
    let (library, _) = crate::library::load(&args.library)?;
    let rubric = library.get(&args.rubric).with_context(|| {
        format!("no rubric `{}` in the library (`revcal rubric list` lists them)", args.rubric)
    })?;
    let specs: Vec<ModelSpec> = match &args.reviewer {
        Some(spec) => vec![spec.clone()],
        None => args.council.clone(),
    };
    let ask = &args.ask;
    let council = council(
        &specs,
        &rubric,
        &args.focus,
        Limits { offline: args.dry_run, ..ask.limits(args.max_findings) },
        cache_dir(ask.no_cache, ask.cache.clone()),
    )?;
    let change = if !args.files.is_empty() {
        Change::of_files(&args.dir, &args.files, args.max_change_bytes)?
    } else if let Some(base) = &args.base {
        Change::of_work_tree(&args.dir, base, args.context, args.max_change_bytes)?
    } else {
        Change::of_commit(
            &args.dir,
            args.commit.as_deref().unwrap_or("HEAD"),
            args.context,
            args.max_change_bytes,
        )?
    };
    if args.dry_run {
        emit(&dry_run(&council, &change)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let lines: usize = change.files.iter().map(|file| file.changed_lines.len()).sum();
    eprintln!(
        "reviewing {} file(s), {lines} changed line(s), with {} and {}",
        change.files.len(),
        council.name(),
        rubric.key()
    );
    let outcome = council.review_nth(&change, 1);
    let usage: Vec<JudgeUsage> = council.members().iter().map(LlmReviewer::spent).collect();
    eprintln!("spent: {}", spent_line(&usage));
    let answers = outcome?;
    let members = council.members();
    let focus: Vec<_> = members.first().map(LlmReviewer::focus).unwrap_or_default();
    let documents: Vec<Value> =
        answers.iter().map(|answer| answer.review_document(&rubric, &focus)).collect();
    let findings = findings_of(members, &answers);
    if let Some(dir) = &args.out {
        write_outputs(dir, members, &documents, &findings)?;
    }
    let text = match args.format {
        ReviewFormat::Human => human(members, &answers, style),
        ReviewFormat::Findings => pretty(&findings)?,
        ReviewFormat::Review if documents.len() == 1 => pretty(&documents[0])?,
        ReviewFormat::Review => pretty(&Value::Array(documents))?,
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Characters per token assumed by the estimate: about four for English prose and code in
/// the tokenizers of the three providers (a rough guide, not a bill).
const CHARS_PER_TOKEN: usize = 4;

/// The prompt each member would be sent, then one line: the calls, the prompt's size, its
/// tokens estimated, the output cap, and that nothing was sent.
fn dry_run(council: &Council, change: &Change) -> Result<String> {
    let nonce = revcal_judge::fresh_nonce().context("cannot make the prompt's fence")?;
    let members = council.members();
    let (system, user, schema) = members[0].prompt(change, &nonce);
    let schema = serde_json::to_string(&schema)?;
    let mut text = String::new();
    text.push_str(&format!("--- system ({} bytes)\n{system}\n", system.len()));
    text.push_str(&format!("--- user ({} bytes)\n{user}\n", user.len()));
    text.push_str(&format!(
        "--- the answer's JSON Schema, sent with it ({} bytes)\n{schema}\n",
        schema.len()
    ));
    let bytes = system.len() + user.len();
    let calls = members.len();
    let output_cap = members[0].config().max_output_tokens.unwrap_or(0);
    let names: Vec<&str> = members.iter().map(LlmReviewer::name).collect();
    let retries = members[0].config().retries;
    text.push_str(&format!(
        "dry run: {calls} call{} ({}), each a prompt of {} bytes, about {} input tokens ({CHARS_PER_TOKEN} characters a token; the schema adds about {} where the provider takes it), at most {} output tokens; a failed call is retried up to {retries} times; nothing was sent\n",
        if calls == 1 { "" } else { "s" },
        names.join(", "),
        thousands(bytes),
        thousands(bytes.div_ceil(CHARS_PER_TOKEN)),
        thousands(schema.len().div_ceil(CHARS_PER_TOKEN)),
        thousands(usize::try_from(output_cap).unwrap_or(usize::MAX)),
    ));
    Ok(text)
}

/// `12345` as `12,345`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Every member's findings as one findings document; in a council each finding names its
/// reviewer.
fn findings_of(members: &[LlmReviewer], answers: &[ReviewAnswer]) -> Value {
    let council = answers.len() > 1;
    let findings: Vec<Value> = members
        .iter()
        .zip(answers)
        .flat_map(|(member, answer)| {
            answer.findings.iter().map(move |finding| {
                let mut value = json!(finding);
                if let (true, Some(map)) = (council, value.as_object_mut()) {
                    map.insert("reviewer".into(), json!(member.name()));
                }
                value
            })
        })
        .collect();
    json!({"findings": findings})
}

fn pretty(value: &Value) -> Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

/// `--out DIR`: findings.json, and review.json or one review per member and council.json.
fn write_outputs(dir: &Path, members: &[LlmReviewer], documents: &[Value], findings: &Value) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let write = |name: &str, value: &Value| -> Result<()> {
        let path = dir.join(name);
        crate::output::write(&path, &pretty(value)?)
            .with_context(|| format!("cannot write {}", path.display()))
    };
    write("findings.json", findings)?;
    if documents.len() == 1 {
        write("review.json", &documents[0])?;
    } else {
        for (index, (member, document)) in members.iter().zip(documents).enumerate() {
            let safe: String = member
                .name()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '-' })
                .collect();
            write(&format!("review-{}-{safe}.json", index + 1), document)?;
        }
        write("council.json", &Value::Array(documents.to_vec()))?;
    }
    Ok(())
}

/// What the models spent, in one line.
fn spent_line(usage: &[JudgeUsage]) -> String {
    let calls: u64 = usage.iter().map(|u| u.calls).sum();
    let hits: u64 = usage.iter().map(|u| u.cache_hits).sum();
    let input: u64 = usage.iter().map(|u| u.input_tokens).sum();
    let output: u64 = usage.iter().map(|u| u.output_tokens).sum();
    format!("{calls} call(s), {hits} cache hit(s), {input} input + {output} output tokens")
}

/// The human report: per member, its findings and scores.
fn human(members: &[LlmReviewer], answers: &[ReviewAnswer], style: &Style) -> String {
    let mut out = String::new();
    for (member, answer) in members.iter().zip(answers) {
        let _ = writeln!(out, "{}", style.bold(&format!("review by {}", member.name())));
        if answer.findings.is_empty() {
            let _ = writeln!(out, "  no finding");
        }
        for finding in &answer.findings {
            let _ = writeln!(
                out,
                "  {}:{}: {} [{}]: {}",
                finding.file,
                finding.line,
                format!("{:?}", finding.severity).to_lowercase(),
                finding.category,
                finding.message
            );
            if let Some(suggestion) = &finding.suggestion {
                let _ = writeln!(out, "      suggestion: {suggestion}");
            }
            if let Some(repro) = &finding.repro {
                let _ = writeln!(out, "      repro: {repro}");
            }
        }
        let scores: Vec<String> =
            answer.rubric_scores.iter().map(|(name, score)| format!("{name} {score}")).collect();
        let _ = writeln!(out, "  scores: {}; confidence {}", scores.join(", "), answer.confidence);
        if !answer.red_flags.is_empty() {
            let _ = writeln!(out, "  red flags: {}", answer.red_flags.join(", "));
        }
        if !answer.rationale.is_empty() {
            let _ = writeln!(out, "  rationale: {}", answer.rationale);
        }
    }
    out.push_str("score it: revcal review ... --out DIR, then revcal score DIR/review.json (a council: DIR/council.json)\n");
    out
}

/// `calibrate --reviewer`: the models, set up once (a missing key fails before anything
/// runs), with the rubric and the cache; each calibration gets a council of its own, so that
/// what a report says was spent is what its reviews spent.
pub(crate) struct CalibrationReviewer {
    configs: Vec<JudgeConfig>,
    rubric: Rubric,
    cache: Option<PathBuf>,
    max_findings: usize,
}

impl CalibrationReviewer {
    /// The models of `specs`, asked with `code_review_v1` of the library the environment
    /// selects (`$REVCAL_RUBRICS`, ./rubrics, else the built-in one).
    pub(crate) fn new(
        specs: &[ModelSpec],
        limits: Limits,
        cache: Option<PathBuf>,
    ) -> Result<CalibrationReviewer> {
        let (library, _) = crate::library::load(&LibraryArgs { rubrics: None })?;
        let rubric = library.get("code_review_v1").context(
            "the rubric library has no `code_review_v1`, which the built-in reviewer's prompt is built from",
        )?;
        let configs = specs.iter().map(|spec| config_for(Some(spec), limits)).collect::<Result<Vec<_>>>()?;
        Ok(CalibrationReviewer {
            configs,
            rubric: Rubric::clone(&rubric),
            cache,
            max_findings: limits.max_findings,
        })
    }

    /// The providers the reviewer asks.
    pub(crate) fn providers(&self) -> Vec<Provider> {
        self.configs.iter().map(JudgeConfig::provider).collect()
    }

    /// A council with its counters at zero, for one calibration.
    pub(crate) fn fresh(&self) -> std::sync::Arc<InProcess> {
        let members = self
            .configs
            .iter()
            .map(|config| {
                let member = LlmReviewer::new(config.clone(), self.rubric.clone())
                    .with_max_findings(self.max_findings);
                match &self.cache {
                    Some(dir) => member.with_cache(VerdictCache::new(dir.clone())),
                    None => member,
                }
            })
            .collect();
        std::sync::Arc::new(InProcess {
            council: Council::new(members),
            context: DEFAULT_CONTEXT_LINES,
            max_change_bytes: DEFAULT_MAX_CHANGE_BYTES,
        })
    }

    /// What shards of one suite must agree on: every model and where it is asked.
    pub(crate) fn settings(&self) -> Value {
        Value::Array(
            self.configs
                .iter()
                .map(|config| {
                    json!({"provider": config.provider().to_string(), "model": config.model(), "baseUrl": config.base_url()})
                })
                .collect(),
        )
    }
}

/// The built-in reviewer as `revcal calibrate` runs it: in each review's checkout, the work
/// tree against the base commit.
pub(crate) struct InProcess {
    council: Council,
    context: u32,
    max_change_bytes: usize,
}

impl revcal_calibrate::in_process::InProcessReviewer for InProcess {
    fn name(&self) -> String {
        self.council.name()
    }

    fn review(
        &self,
        request: &revcal_calibrate::in_process::ReviewRequest<'_>,
    ) -> std::result::Result<String, String> {
        let chain = |error: &dyn std::error::Error| {
            let mut text = error.to_string();
            let mut source = error.source();
            while let Some(cause) = source {
                let _ = write!(text, ": {cause}");
                source = cause.source();
            }
            text
        };
        let change =
            Change::of_work_tree(request.checkout, request.base, self.context, self.max_change_bytes)
                .map_err(|error| chain(&error))?;
        // The run's error names the reviewer already: a model's error is told from its cause.
        let answers = self.council.review_nth(&change, request.trial).map_err(|error| match &error {
            revcal_review::ReviewError::Model { source, .. } => chain(source),
            other => chain(other),
        })?;
        serde_json::to_string(&findings_of(self.council.members(), &answers))
            .map_err(|error| error.to_string())
    }

    fn usage(&self) -> Vec<JudgeUsage> {
        self.council.members().iter().map(LlmReviewer::spent).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_spec_splits_at_the_first_colon_only() {
        let spec: ModelSpec = "openai:qwen2.5-coder:7b".parse().unwrap();
        assert_eq!(spec, ModelSpec { provider: Provider::OpenAi, model: Some("qwen2.5-coder:7b".into()) });
        let bare: ModelSpec = "gemini".parse().unwrap();
        assert_eq!(bare.model, None);
        assert!("mistral:large".parse::<ModelSpec>().unwrap_err().contains("anthropic, openai or gemini"));
        assert!("openai:".parse::<ModelSpec>().unwrap_err().contains("empty"));
    }
}
