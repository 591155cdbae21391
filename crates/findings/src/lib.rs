//! Reviewer output to findings, whatever shape it comes in: the part of revcal that reads
//! what a code reviewer printed.
//!
//! Reviewers speak many dialects: a `{"findings": [...]}` document or a bare array with loose
//! field names, the code-review output of `revcal score`, SARIF 2.1.0, reviewdog's rdjson and
//! rdjsonl, GitLab Code Quality, any of those buried in log noise or a Markdown fence, or plain
//! prose that mentions `path/file.ext:LINE`. [`parse_findings`] detects the format and never
//! fails: what it cannot read becomes a warning, and prose matches are marked weak.
//!
//! ```
//! use revcal_findings::{FindingFormat, parse_findings};
//!
//! let parsed = parse_findings(r#"{"findings": [{"path": "src/lib.rs", "lineno": 12,
//!     "title": "Off by one", "body": "`<=` reads past the end", "repro": "cargo test"}]}"#);
//! assert_eq!(parsed.format, Some(FindingFormat::Findings));
//! let finding = &parsed.findings[0];
//! assert_eq!((finding.file.as_deref(), finding.line), (Some("src/lib.rs"), Some(12)));
//! assert_eq!(finding.text, "Off by one\n`<=` reads past the end");
//! ```

mod checkstyle;
mod code_review;
mod embedded;
mod eslint;
mod fields;
mod generic;
mod gitlab;
mod go;
mod lines;
mod prose;
mod pylint;
mod rdjson;
mod ruff;
mod rustc;
mod sarif;
mod semgrep;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The format a finding was read from. Serialised in kebab-case (`code-review`, `sarif`, ...).
/// Formats are added as reviewers need them, so a `match` on it needs a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum FindingFormat {
    /// `{"findings": [...]}` or a bare array of finding objects, with field aliases.
    Findings,
    /// The code-review output of `revcal score` (`issues`, `blocking_issues`, `suggestions`).
    CodeReview,
    /// SARIF 2.1.0 (`runs[].results[]`).
    Sarif,
    /// reviewdog Diagnostic Format, one `DiagnosticResult` document.
    Rdjson,
    /// reviewdog Diagnostic Format, one `Diagnostic` per line.
    Rdjsonl,
    /// GitLab Code Quality report (a CodeClimate-style array).
    GitlabCodeQuality,
    /// ruff's `--output-format json` or `json-lines`.
    Ruff,
    /// pylint's `--output-format=json` or `json2`.
    Pylint,
    /// ESLint's `-f json`.
    Eslint,
    /// rustc's or clippy's JSON diagnostics (`cargo clippy --message-format=json`).
    Rustc,
    /// semgrep's `--json`.
    Semgrep,
    /// Checkstyle XML (ESLint, golangci-lint, ktlint, PHP_CodeSniffer, Checkstyle).
    Checkstyle,
    /// `go vet`, as JSON (`go vet -json`) or plain text (`file.go:line:col: message`).
    GoVet,
    /// staticcheck, as JSON lines (`staticcheck -f json`) or plain text.
    Staticcheck,
    /// Free text mentioning `path/file.ext:LINE`; every such finding is weak.
    Prose,
}

impl FindingFormat {
    /// The kebab-case name used in JSON and in messages.
    pub fn name(self) -> &'static str {
        match self {
            FindingFormat::Findings => "findings",
            FindingFormat::CodeReview => "code-review",
            FindingFormat::Sarif => "sarif",
            FindingFormat::Rdjson => "rdjson",
            FindingFormat::Rdjsonl => "rdjsonl",
            FindingFormat::GitlabCodeQuality => "gitlab-code-quality",
            FindingFormat::Ruff => "ruff",
            FindingFormat::Pylint => "pylint",
            FindingFormat::Eslint => "eslint",
            FindingFormat::Rustc => "rustc",
            FindingFormat::Semgrep => "semgrep",
            FindingFormat::Checkstyle => "checkstyle",
            FindingFormat::GoVet => "go-vet",
            FindingFormat::Staticcheck => "staticcheck",
            FindingFormat::Prose => "prose",
        }
    }
}

impl std::fmt::Display for FindingFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One thing the reviewer reported.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Finding {
    /// The format it was read from.
    pub source: FindingFormat,
    /// The file it points at, as the reviewer wrote it (a `file://` prefix is removed).
    pub file: Option<String>,
    /// The 1-based line it points at.
    pub line: Option<u32>,
    /// What the reviewer said, title and body joined by a newline.
    pub text: String,
    /// The reviewer's severity or level, verbatim.
    pub severity: Option<String>,
    /// Supporting evidence (a quoted snippet, the tool's raw output).
    pub evidence: Option<String>,
    /// A shell command that should pass on the original code and fail on the defect.
    pub repro: Option<String>,
    /// True when the location was guessed from prose rather than read from a structured field.
    pub weak: bool,
}

impl Finding {
    /// A finding with only a source and text, pointing nowhere; set the other fields as needed.
    pub fn new(source: FindingFormat, text: String) -> Self {
        Finding {
            source,
            file: None,
            line: None,
            text,
            severity: None,
            evidence: None,
            repro: None,
            weak: false,
        }
    }
}

/// The result of [`parse_findings`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedFindings {
    /// The detected format; `None` when nothing in the output looked like a finding.
    pub format: Option<FindingFormat>,
    /// The findings, in the order the reviewer reported them.
    pub findings: Vec<Finding>,
    /// Everything that was skipped or guessed, each naming where in the output it happened.
    pub warnings: Vec<String>,
    /// True when the structured document was found inside surrounding log noise or text.
    pub embedded: bool,
}

/// Parse a reviewer's output, detecting its format.
///
/// Order of detection: the whole output as one JSON document; rdjsonl (one JSON object per
/// line); JSON documents embedded in log noise or Markdown fences (all recognised documents are
/// merged, duplicates dropped); last, the prose fallback. Never panics and never fails.
pub fn parse_findings(output: &str) -> ParsedFindings {
    let mut parsed = detect_and_parse(output);
    if let Some(warning) = unlocated_warning(&parsed) {
        parsed.warnings.push(warning);
    }
    tracing::debug!(
        format = parsed.format.map_or("none", FindingFormat::name),
        findings = parsed.findings.len(),
        warnings = parsed.warnings.len(),
        embedded = parsed.embedded,
        "parsed reviewer output"
    );
    parsed
}

fn detect_and_parse(output: &str) -> ParsedFindings {
    let trimmed = output.trim();
    if trimmed.is_empty() {
        return ParsedFindings::default();
    }
    if let Ok(value) = serde_json::from_str::<Value>(trimmed)
        && let Some(doc) = embedded::recognise_within(&value, embedded::NESTING_BUDGET)
    {
        return doc.into_parsed(false);
    }
    if let Some(parsed) = lines::parse(trimmed) {
        return parsed;
    }
    if let Some(parsed) = checkstyle::parse(trimmed) {
        return parsed;
    }
    if let Some(parsed) = go::parse_text(trimmed) {
        return parsed;
    }
    let mut parsed = embedded::scan(trimmed);
    if parsed.format.is_some() {
        return parsed;
    }
    let prose = prose::parse(trimmed);
    parsed.warnings.extend(prose.warnings);
    if !prose.findings.is_empty() {
        parsed.format = Some(FindingFormat::Prose);
        parsed.findings = prose.findings;
    }
    parsed
}

/// A finding without a file and a line can catch no plant: say how many there are, naming
/// the format, so that a reviewer whose locations were not understood does not silently
/// score zero.
fn unlocated_warning(parsed: &ParsedFindings) -> Option<String> {
    let format = parsed.format?;
    let total = parsed.findings.len();
    let unlocated = parsed.findings.iter().filter(|f| f.file.is_none() || f.line.is_none()).count();
    match unlocated {
        0 => None,
        n if n == total => Some(format!(
            "could not locate any of the {total} findings read as {format}: none has both a file and a line, so none can catch a plant and each counts as a false positive"
        )),
        n => Some(format!(
            "{n} of the {total} findings read as {format} have no file or no line: they can catch no plant and count as false positives"
        )),
    }
}

/// Recognise one JSON value as a findings document, if it is one.
///
/// Returns the format, the findings and the warnings, or `None` when the value has none of the
/// shapes this module knows.
pub(crate) fn recognise(value: &Value) -> Option<(FindingFormat, Vec<Finding>, Vec<String>)> {
    sarif::recognise(value)
        .or_else(|| rdjson::recognise(value))
        .or_else(|| gitlab::recognise(value))
        .or_else(|| ruff::recognise(value))
        .or_else(|| pylint::recognise(value))
        .or_else(|| eslint::recognise(value))
        .or_else(|| semgrep::recognise(value))
        .or_else(|| rustc::recognise(value))
        .or_else(|| go::recognise(value))
        .or_else(|| code_review::recognise(value))
        .or_else(|| generic::recognise(value))
}
