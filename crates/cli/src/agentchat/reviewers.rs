//! The reviewers `revcal agentchat review` runs on a request's diff: the built-in LLM
//! reviewer, or a command in a scratch directory.

use anyhow::{Context, Result};
use revcal_agentchat::{DiffFinding, DiffReviewer};
use revcal_review::{Change, Council};
use revcal_score::Severity;
use std::time::Duration;

/// The built-in reviewer (`revcal review`'s models, prompt and rubric).
pub(crate) struct BuiltIn {
    council: Council,
}

impl BuiltIn {
    pub(crate) fn new(
        spec: &crate::review::ModelSpec,
        rubric: &str,
        library: &crate::args::LibraryArgs,
        ask: &crate::review::AskFlags,
    ) -> Result<BuiltIn> {
        let (library, _) = crate::library::load(library)?;
        let rubric = library.get(rubric).with_context(|| {
            format!("no rubric `{rubric}` in the library (`revcal rubric list` lists them)")
        })?;
        let limits = ask.limits(revcal_review::MAX_FINDINGS);
        let council = crate::review::council(std::slice::from_ref(spec), &rubric, &[], limits, ask.cache())?;
        Ok(BuiltIn { council })
    }
}

impl DiffReviewer for BuiltIn {
    fn name(&self) -> String {
        self.council.name()
    }

    fn review(&self, diff: &str) -> std::result::Result<Vec<DiffFinding>, String> {
        let change =
            Change::from_unified_diff(diff).map_err(|error| format!("the diff does not read: {error}"))?;
        let answers = self.council.review_nth(&change, 1).map_err(|error| error_chain(&error))?;
        Ok(answers
            .iter()
            .flat_map(|answer| &answer.findings)
            .map(|finding| {
                let severity = serde_json::to_value(finding.severity).ok();
                let severity = severity.as_ref().and_then(serde_json::Value::as_str);
                let mut body = finding.message.clone();
                if let Some(suggestion) = finding.suggestion.as_deref().filter(|s| !s.trim().is_empty()) {
                    body.push_str(&format!("\nsuggestion: {suggestion}"));
                }
                DiffFinding {
                    file: Some(finding.file.clone()),
                    line: Some(finding.line),
                    body: format!("{}: {body}", severity.unwrap_or("unknown")),
                    blocking: Severity::parse(severity).is_blocking(),
                }
            })
            .collect())
    }
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// A reviewer command: `sh -c CMD` in a scratch directory holding `change.diff`.
pub(crate) struct CommandReviewer {
    command: String,
    timeout: Duration,
}

impl CommandReviewer {
    pub(crate) fn new(command: String, timeout: Duration) -> CommandReviewer {
        CommandReviewer { command, timeout }
    }
}

impl DiffReviewer for CommandReviewer {
    fn name(&self) -> String {
        format!("`{}`", self.command)
    }

    fn review(&self, diff: &str) -> std::result::Result<Vec<DiffFinding>, String> {
        let scratch =
            tempfile::tempdir().map_err(|error| format!("cannot make a scratch directory: {error}"))?;
        let path = scratch.path().join("change.diff");
        std::fs::write(&path, diff).map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        let env = [("REVCAL_DIFF", path.display().to_string())];
        let command = revcal_process::ShellCommand::new(&self.command, scratch.path(), self.timeout)
            .env(&env)
            .stdin(diff.as_bytes())
            .output_cap(8 << 20);
        let done = revcal_process::run_isolated(&command, &revcal_process::SignalWatch::inert())
            .map_err(|error| format!("cannot run the review command: {error}"))?;
        match done.exit {
            revcal_process::Exit::Code(_) => {}
            other => return Err(format!("the review command did not finish: {other:?}")),
        }
        let stdout = String::from_utf8_lossy(&done.stdout);
        let parsed = revcal_findings::parse_findings(&stdout);
        Ok(parsed
            .findings
            .into_iter()
            .map(|finding| DiffFinding {
                blocking: Severity::parse(finding.severity.as_deref()).is_blocking(),
                file: finding.file,
                line: finding.line.map(u64::from),
                body: finding.text,
            })
            .collect())
    }
}
