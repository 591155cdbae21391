//! The reviewer: one model (or a council of several) asked to review a change with a rubric,
//! through the judge's client (providers, retries, budget, cache, fail-closed answers).

use revcal_judge::{JudgeConfig, JudgeUsage, LlmJudge, Role, VerdictCache};
use revcal_rubric_model::{FocusArea, Rubric};

use crate::answer::{MAX_FINDINGS, ReviewAnswer, answer_schema, parse_answer};
use crate::change::Change;
use crate::error::ReviewError;
use crate::prompt;

/// A model that reviews changes with a rubric.
#[derive(Debug)]
pub struct LlmReviewer {
    client: LlmJudge,
    rubric: Rubric,
    focus: Vec<FocusArea>,
    max_findings: usize,
    name: String,
}

/// Output tokens a review may take when the configuration sets none: room for many findings.
const REVIEW_OUTPUT_TOKENS: u64 = 8192;

impl LlmReviewer {
    /// A reviewer asking `config`'s provider and model, with `rubric` (and no focus area).
    pub fn new(mut config: JudgeConfig, rubric: Rubric) -> LlmReviewer {
        let name = format!("{}:{}", config.provider(), config.model());
        config.max_output_tokens = config.max_output_tokens.or(Some(REVIEW_OUTPUT_TOKENS));
        LlmReviewer {
            client: LlmJudge::new(config.with_role(Role::Reviewer)),
            rubric,
            focus: Vec::new(),
            max_findings: MAX_FINDINGS,
            name,
        }
    }

    /// Ask for at most `max` findings (default [`MAX_FINDINGS`]); an answer with more is an
    /// error. A small cap keeps a small model's answer short.
    pub fn with_max_findings(mut self, max: usize) -> LlmReviewer {
        self.max_findings = max;
        self
    }

    /// Also cover the rubric's focus areas named in `focus` (case-insensitive): their checks
    /// and red flags join the prompt. An unknown name is an error listing the rubric's areas.
    pub fn with_focus(mut self, focus: &[String]) -> Result<LlmReviewer, ReviewError> {
        let rubric = &self.rubric;
        let mut areas: Vec<FocusArea> = Vec::new();
        for name in focus.iter().map(|name| name.trim()).filter(|name| !name.is_empty()) {
            let Some(area) = rubric.focus_area(name) else {
                let known: Vec<&str> = rubric.focus_areas.iter().map(|a| a.name.as_str()).collect();
                return Err(ReviewError::UnknownFocus {
                    name: name.to_owned(),
                    rubric: rubric.key(),
                    known: if known.is_empty() { "none".to_owned() } else { known.join(", ") },
                });
            };
            if !areas.iter().any(|seen| seen.name == area.name) {
                areas.push(area.clone());
            }
        }
        self.focus = areas;
        Ok(self)
    }

    /// Keep answers in `cache` (keyed by provider, base URL, model, prompt and schema): the
    /// same change reviewed again costs no call.
    pub fn with_cache(mut self, cache: VerdictCache) -> LlmReviewer {
        self.client = self.client.with_cache(cache);
        self
    }

    /// `provider:model`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The rubric.
    pub fn rubric(&self) -> &Rubric {
        &self.rubric
    }

    /// The focus areas, in the order asked.
    pub fn focus(&self) -> Vec<&FocusArea> {
        self.focus.iter().collect()
    }

    /// The provider configuration.
    pub fn config(&self) -> &JudgeConfig {
        self.client.config()
    }

    /// What the reviewer has spent so far: calls (each retry counts), cache hits, tokens.
    pub fn spent(&self) -> JudgeUsage {
        self.client.spent()
    }

    /// The prompt a review of `change` sends (system part, user part), its fences named by
    /// `nonce` (each request gets a fresh one: [`revcal_judge::fresh_nonce`]), and the
    /// answer's JSON Schema sent with it: what `revcal review --dry-run` shows.
    pub fn prompt(&self, change: &Change, nonce: &str) -> (String, String, serde_json::Value) {
        let focus = self.focus();
        (
            prompt::system(&self.rubric, &focus, self.max_findings, nonce),
            prompt::user(change, nonce),
            answer_schema(&self.rubric, &focus, self.max_findings),
        )
    }

    /// Reviews `change`. An answer that does not fit the schema is an error, never an empty
    /// review.
    pub fn review(&self, change: &Change) -> Result<ReviewAnswer, ReviewError> {
        self.review_nth(change, 1)
    }

    /// Reviews `change` as the `n`th independent review of it (trials of a calibration): each
    /// `n` is its own cache entry, so repeated reviews are not one cached answer repeated.
    pub fn review_nth(&self, change: &Change, n: usize) -> Result<ReviewAnswer, ReviewError> {
        let focus = self.focus();
        let schema = answer_schema(&self.rubric, &focus, self.max_findings);
        // The schema's name goes to the provider (OpenAI's json_schema name, Anthropic's tool)
        // and into the cache key: it tells the reviews of one change apart.
        let schema_name = if n <= 1 { "review".to_owned() } else { format!("review_{n}") };
        let render = |nonce: &str| {
            (prompt::system(&self.rubric, &focus, self.max_findings, nonce), prompt::user(change, nonce))
        };
        let check = |answer: &serde_json::Value| {
            let review = parse_answer(&self.rubric, &focus, answer)?;
            if review.findings.len() > self.max_findings {
                return Err(format!(
                    "{} findings, more than the {} asked for",
                    review.findings.len(),
                    self.max_findings
                ));
            }
            Ok(review)
        };
        let answer = self
            .client
            .ask_json(&schema_name, &schema, render, |answer| check(answer).map(|_| ()))
            .map_err(|source| ReviewError::Model { reviewer: self.name.clone(), source })?;
        check(&answer).map_err(|message| ReviewError::Model {
            reviewer: self.name.clone(),
            source: revcal_judge::JudgeError::BadAnswer {
                judge: self.config().who(),
                problem: revcal_judge::AnswerProblem::Shape(message),
            },
        })
    }
}

/// Several reviewers asked the same change at once: each member's review, in member order.
#[derive(Debug)]
pub struct Council {
    members: Vec<LlmReviewer>,
}

impl Council {
    /// A council of `members` (one member is a council of one).
    pub fn new(members: Vec<LlmReviewer>) -> Council {
        Council { members }
    }

    /// The members.
    pub fn members(&self) -> &[LlmReviewer] {
        &self.members
    }

    /// `provider:model` of every member, comma-separated.
    pub fn name(&self) -> String {
        self.members.iter().map(LlmReviewer::name).collect::<Vec<_>>().join(",")
    }

    /// Every member's review of `change` (the `n`th of it), asked at the same time. The
    /// first member's error (in member order) is the error: a council with a member that
    /// gave no review gives none.
    pub fn review_nth(&self, change: &Change, n: usize) -> Result<Vec<ReviewAnswer>, ReviewError> {
        let answers: Vec<Result<ReviewAnswer, ReviewError>> = std::thread::scope(|scope| {
            let handles: Vec<_> =
                self.members.iter().map(|member| scope.spawn(move || member.review_nth(change, n))).collect();
            handles
                .into_iter()
                .zip(&self.members)
                .map(|(handle, member)| {
                    handle.join().unwrap_or_else(|_| {
                        Err(ReviewError::Model {
                            reviewer: member.name.clone(),
                            source: revcal_judge::JudgeError::BadAnswer {
                                judge: member.config().who(),
                                problem: revcal_judge::AnswerProblem::Shape(
                                    "the thread asking it panicked".into(),
                                ),
                            },
                        })
                    })
                })
                .collect()
        });
        answers.into_iter().collect()
    }
}
