//! Reviewers that run inside revcal instead of as a shell command: the built-in LLM reviewer
//! (`revcal calibrate --reviewer PROVIDER:MODEL`). Such a reviewer runs nothing: it reads
//! its checkout (the commit with the round's plants) and asks a model, so it needs no
//! process group, sandbox or output cap; what it answers is parsed and scored exactly as a
//! command's output is.

use std::path::Path;

use revcal_judge::JudgeUsage;

/// One review an in-process reviewer is asked for.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ReviewRequest<'a> {
    /// The checkout to review: the commit's files with this round's plants, and a `.git`
    /// whose HEAD is the commit (`git diff BASE` there shows the change under review).
    pub checkout: &'a Path,
    /// The base commit (the commit's first parent, or git's empty tree for a root commit).
    pub base: &'a str,
    /// The commit.
    pub commit: &'a str,
    /// Which trial this review is (from 1): repeated reviews of one round must not be one
    /// cached answer repeated.
    pub trial: usize,
}

/// A reviewer run inside revcal. Reviews run on several threads at once (`--jobs`).
pub trait InProcessReviewer: Send + Sync {
    /// The reviewer's name in reports (`openai:gpt-4o-mini`; a council's names joined by
    /// commas).
    fn name(&self) -> String;
    /// Reviews `request`'s checkout; returns its findings as text in a format revcal reads
    /// (docs/findings.md), or why there is no review (an error of the run, never an empty
    /// review).
    fn review(&self, request: &ReviewRequest<'_>) -> Result<String, String>;
    /// What it has spent (one entry per model it asks), for the report.
    fn usage(&self) -> Vec<JudgeUsage>;
}
