//! Reading the review and artifact files, and reporting input that cannot be scored.

use revcal_score::{Format, Position, Problem, ReviewDocument, ScoreError};
use std::fmt;
use std::io::{IsTerminal, Read};
use std::path::Path;

/// Larger inputs are refused: no review or artifact is this big, and reading one would
/// only exhaust memory.
const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Input that cannot be scored (exit 3): one `error:` line per problem, each naming the
/// file, line and column, and the field.
#[derive(Debug)]
pub(crate) struct Invalid {
    lines: Vec<String>,
    problems: Vec<serde_json::Value>,
}

impl Invalid {
    /// A single problem that has no position (a missing file, an unknown rubric).
    pub(crate) fn message(text: String) -> Invalid {
        let problems = vec![serde_json::json!({"message": text})];
        Invalid { lines: vec![text], problems }
    }

    /// The problems as JSON, for `--json`: `{"error": "invalid input", "problems": [{file,
    /// line, column, field, member, message}]}`.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"error": "invalid input", "problems": self.problems})
    }

    /// The problems of a review that could not be read or scored, placed in `file`.
    pub(crate) fn review(file: &str, error: ScoreError, document: Option<&ReviewDocument>) -> Invalid {
        let error = match document {
            Some(document) => document.place(error),
            None => error,
        };
        let entry =
            |position: Option<Position>, field: Option<&str>, member: Option<usize>, message: String| {
                serde_json::json!({
                    "file": file,
                    "line": position.map(|p| p.line),
                    "column": position.map(|p| p.column),
                    "field": field,
                    "member": member,
                    "message": message,
                })
            };
        let (lines, problems) = match &error {
            ScoreError::Parse(parse) => {
                let at = parse.position.map(|p| format!(":{}:{}", p.line, p.column)).unwrap_or_default();
                let message = format!("not valid {}: {}", parse.format, parse.message);
                (vec![format!("{file}{at}: {message}")], vec![entry(parse.position, None, None, message)])
            }
            ScoreError::Invalid { problems } => (
                problems.iter().map(|p| problem_line(file, p)).collect(),
                problems
                    .iter()
                    .map(|p| entry(p.position, Some(&p.field), p.member, p.message.clone()))
                    .collect(),
            ),
            other => (vec![format!("{file}: {other}")], vec![entry(None, None, None, other.to_string())]),
        };
        Invalid { lines, problems }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in &self.lines {
            writeln!(f, "error: {line}")?;
        }
        Ok(())
    }
}

/// `file:line:col: [council member N: ]field `F`: message`.
pub(crate) fn problem_line(file: &str, problem: &Problem) -> String {
    let at = problem.position.map(|p| format!(":{}:{}", p.line, p.column)).unwrap_or_default();
    let member = problem.member.map(|m| format!("council member {m}: ")).unwrap_or_default();
    format!("{file}{at}: {member}field `{}`: {}", problem.field, problem.message)
}

/// The file's text and the name to show for it; `-` is standard input.
pub(crate) fn read_text(path: &Path, what: &str) -> Result<(String, String), Invalid> {
    let stdin = path.as_os_str() == "-";
    if stdin && std::io::stdin().is_terminal() {
        eprintln!(
            "reading the {what} from standard input (end it with Ctrl-D; `revcal score --help` for more)"
        );
    }
    let shown = if stdin { "<stdin>".to_owned() } else { path.display().to_string() };
    let fail = |reason: String| Invalid::message(format!("cannot read the {what} `{shown}`: {reason}"));
    let mut bytes = Vec::new();
    let read = if stdin {
        std::io::stdin().lock().take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|file| file.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes))
    };
    read.map_err(|error| fail(error.to_string()))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(fail(format!("larger than {} MiB", MAX_INPUT_BYTES >> 20)));
    }
    let text = String::from_utf8(bytes).map_err(|error| {
        let offset = error.utf8_error().valid_up_to();
        let line = error.as_bytes()[..offset].iter().filter(|b| **b == b'\n').count() + 1;
        fail(format!("not UTF-8 text (invalid byte at line {line}, byte offset {offset})"))
    })?;
    Ok((shown, text))
}

/// The format a file's extension names; `None` (guess from the text) for others and stdin.
pub(crate) fn format_of(path: &Path) -> Option<Format> {
    match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "json" => Some(Format::Json),
        "yaml" | "yml" => Some(Format::Yaml),
        _ => None,
    }
}
