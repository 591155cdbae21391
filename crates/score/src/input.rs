//! Reading reviews from JSON or YAML: the shapes docs/scoring.md#1-input accepts, every type problem at
//! once, each with its field and position.

use crate::document::{self, Format, Node, Value};
use crate::error::{Position, Problem, ScoreError};
use crate::review::{Issue, Review, Severity};
use revcal_rubric_model::suggest;
use std::collections::HashMap;

/// Top-level fields a review may have.
const REVIEW_FIELDS: [&str; 8] = [
    "rubric_scores",
    "confidence",
    "issues",
    "blocking_issues",
    "suggestions",
    "rationale",
    "rubric_focus",
    "red_flags",
];

/// Fields of the output of `revcal score`, accepted silently so that a report can be fed back.
const REPORT_FIELDS: [&str; 12] = [
    "verdict",
    "rubric",
    "weighted_score",
    "accuracy_ceiling_applied",
    "ceilings_applied",
    "final_score",
    "unclear_reasons",
    "fail_reasons",
    "criteria",
    "negative_matches",
    "members",
    "agreement",
];

/// Field names that may carry an issue's text, first present wins.
const MESSAGE_FIELDS: [&str; 4] = ["message", "description", "title", "body"];

/// What a document holds: one review, or a council of several.
#[derive(Debug, Clone, PartialEq)]
pub enum Reviews {
    /// A single reviewer.
    Single(Review),
    /// A council: the document was an array of reviews.
    Council(Vec<Review>),
}

/// A parsed review document: the reviews, warnings about fields that were ignored, and
/// the position of every field (to place scoring errors in the file).
#[derive(Debug, Clone)]
pub struct ReviewDocument {
    /// The format the text was read as.
    pub format: Format,
    /// The review or council.
    pub reviews: Reviews,
    /// Fields that were ignored (unknown top-level fields), with a "did you mean" where one fits.
    pub warnings: Vec<Problem>,
    positions: HashMap<String, Position>,
    /// Field paths as the scorer names them (`issues[3]`, `rubric_focus[0]`) mapped to the
    /// paths written in the document (`blocking_issues[1]`, `rubric_focus`), where they differ.
    aliases: HashMap<String, String>,
}

impl ReviewDocument {
    /// Where `field` (a path such as `rubric_scores.accuracy` or `[1].confidence`) is
    /// written; for a field that is absent, the nearest enclosing field that is present.
    pub fn locate(&self, field: &str) -> Option<Position> {
        let mut path = field;
        loop {
            if let Some(position) = self.positions.get(path) {
                return Some(*position);
            }
            let cut = path.rfind(['.', '['])?;
            path = &path[..cut];
            if path.is_empty() {
                return self.positions.get("").copied();
            }
        }
    }

    /// Fills in the position of every problem of `error` that lacks one, and names each
    /// field as the document writes it: the scorer counts issues in one list
    /// (`issues[3]`), which the document may have written as `blocking_issues[1]`.
    pub fn place(&self, mut error: ScoreError) -> ScoreError {
        if let ScoreError::Invalid { problems } = &mut error {
            for problem in problems.iter_mut().filter(|p| p.position.is_none()) {
                problem.field = self.as_written(&problem.field);
                problem.position = self.locate(&problem.field);
            }
        }
        error
    }

    /// `field` with its longest aliased prefix replaced by the path the document uses.
    fn as_written(&self, field: &str) -> String {
        let mut best: Option<(&str, &str)> = None;
        for (canonical, written) in &self.aliases {
            let rest = field.strip_prefix(canonical.as_str());
            let whole = rest.is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']));
            if whole && best.is_none_or(|(longest, _)| canonical.len() > longest.len()) {
                best = Some((canonical, written));
            }
        }
        match best {
            Some((canonical, written)) => format!("{written}{}", &field[canonical.len()..]),
            None => field.to_owned(),
        }
    }
}

/// Reads a review or a council from `text`. `format` `None` guesses it from the text
/// ([`Format::detect`]).
///
/// Every type problem in the document is reported at once, each with its field path and
/// position. Whether the scores fit a rubric is checked later, by [`crate::Scorer`].
pub fn parse_document(text: &str, format: Option<Format>) -> Result<ReviewDocument, ScoreError> {
    let format = format.unwrap_or_else(|| Format::detect(text));
    let root = document::parse(text, format)?;
    let mut reader = Reader::default();
    reader.positions.insert(String::new(), root.position);
    let reviews = match &root.value {
        Value::Seq(items) => {
            if items.is_empty() {
                return Err(ScoreError::EmptyCouncil);
            }
            let members = items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    reader.member = Some(index);
                    reader.review(item, &format!("[{index}]"))
                })
                .collect();
            Reviews::Council(members)
        }
        _ => Reviews::Single(reader.review(&root, "")),
    };
    if !reader.problems.is_empty() {
        return Err(ScoreError::Invalid { problems: reader.problems });
    }
    tracing::debug!(%format, council = matches!(reviews, Reviews::Council(_)), "review document read");
    Ok(ReviewDocument {
        format,
        reviews,
        warnings: reader.warnings,
        positions: reader.positions,
        aliases: reader.aliases,
    })
}

#[derive(Default)]
struct Reader {
    problems: Vec<Problem>,
    warnings: Vec<Problem>,
    positions: HashMap<String, Position>,
    aliases: HashMap<String, String>,
    member: Option<usize>,
}

fn join(base: &str, field: &str) -> String {
    if base.is_empty() { field.to_owned() } else { format!("{base}.{field}") }
}

impl Reader {
    fn problem(&mut self, field: &str, position: Position, message: String) {
        self.problems.push(Problem {
            field: field.to_owned(),
            member: self.member,
            message,
            position: Some(position),
        });
    }

    fn expected(&mut self, field: &str, node: &Node, what: &str) {
        let found = match &node.value {
            Value::String(text) => format!("the string {text:?}"),
            Value::Number(n) => format!("the number {n}"),
            other => other.kind().to_owned(),
        };
        self.problem(field, node.position, format!("expected {what}, found {found}"));
    }

    fn review(&mut self, node: &Node, base: &str) -> Review {
        let mut review = Review::default();
        let Value::Map(entries) = &node.value else {
            let field = if base.is_empty() { "(document)" } else { base };
            self.expected(field, node, "a review (a mapping with `rubric_scores`)");
            return review;
        };
        let mut saw_scores = false;
        for (key, key_position, value) in entries {
            let field = join(base, key);
            self.positions.insert(field.clone(), value.position);
            match key.as_str() {
                "rubric_scores" => {
                    saw_scores = true;
                    self.scores(value, &field, &mut review);
                }
                "confidence" => match value.value {
                    Value::Number(n) => review.confidence = Some(n),
                    Value::Null => {}
                    _ => self.expected(&field, value, "a number from 0 to 1"),
                },
                "issues" | "blocking_issues" | "suggestions" => {
                    let default = if key == "suggestions" { Severity::Minor } else { Severity::Missing };
                    self.issues(value, &field, base, &default, &mut review.issues);
                }
                "rubric_focus" => {
                    review.rubric_focus = self.names(value, &field, "a focus area name, or a list of them")
                }
                "red_flags" => {
                    review.red_flags = self.names(value, &field, "a red-flag id, or a list of them")
                }
                "rationale" => match &value.value {
                    Value::String(text) => review.rationale = Some(text.clone()),
                    Value::Null => {}
                    _ => self.expected(&field, value, "a string"),
                },
                other if REPORT_FIELDS.contains(&other) => {}
                other => {
                    let hint = suggest::closest(other, REVIEW_FIELDS)
                        .map(|near| format!(" (did you mean `{near}`?)"))
                        .unwrap_or_default();
                    self.warnings.push(Problem {
                        field: field.clone(),
                        member: self.member,
                        message: format!("unknown field ignored{hint}"),
                        position: Some(*key_position),
                    });
                }
            }
        }
        if !saw_scores {
            let field = join(base, "rubric_scores");
            self.problem(&field, node.position, "missing: a review needs its `rubric_scores`".to_owned());
        }
        review
    }

    fn scores(&mut self, node: &Node, field: &str, review: &mut Review) {
        let Value::Map(entries) = &node.value else {
            self.expected(field, node, "a mapping of criterion name to score");
            return;
        };
        for (name, key_position, value) in entries {
            let score_field = format!("{field}.{name}");
            self.positions.insert(score_field.clone(), value.position);
            let Value::Number(score) = value.value else {
                self.expected(&score_field, value, "a number");
                continue;
            };
            if review.rubric_scores.insert(name.clone(), score).is_some() {
                self.problem(&score_field, *key_position, format!("criterion `{name}` is scored twice"));
            }
        }
    }

    /// `rubric_focus` or `red_flags`: one name, or a list of names. A list item may also be
    /// a mapping with an `id` (the report's `red_flags` entries), so that a report can be
    /// fed back. A single name is recorded as item 0, written at the field itself.
    fn names(&mut self, node: &Node, field: &str, what: &str) -> Vec<String> {
        match &node.value {
            Value::Null => Vec::new(),
            Value::String(text) => {
                let item = format!("{field}[0]");
                self.aliases.insert(item, field.to_owned());
                vec![text.clone()]
            }
            Value::Seq(items) => {
                let mut names = Vec::new();
                for (index, item) in items.iter().enumerate() {
                    let item_field = format!("{field}[{index}]");
                    self.positions.insert(item_field.clone(), item.position);
                    let id = match &item.value {
                        Value::String(text) => Some(text.clone()),
                        Value::Map(entries) => {
                            entries.iter().find(|(key, _, _)| key == "id").and_then(|(_, _, value)| {
                                match &value.value {
                                    Value::String(text) => Some(text.clone()),
                                    _ => None,
                                }
                            })
                        }
                        _ => None,
                    };
                    match id {
                        Some(id) => names.push(id),
                        None => self.expected(&item_field, item, "a name (a string)"),
                    }
                }
                names
            }
            _ => {
                self.expected(field, node, what);
                Vec::new()
            }
        }
    }

    /// Reads an issue list into `out`. The scorer numbers the issues of a review in one
    /// list (`issues[n]`), so each is aliased to the path it is written at.
    fn issues(&mut self, node: &Node, field: &str, base: &str, default: &Severity, out: &mut Vec<Issue>) {
        let items = match &node.value {
            Value::Seq(items) => items,
            Value::Null => return,
            _ => return self.expected(field, node, "a list of issues"),
        };
        for (index, item) in items.iter().enumerate() {
            let item_field = format!("{field}[{index}]");
            self.positions.insert(item_field.clone(), item.position);
            if let Some(issue) = self.issue(item, &item_field, default) {
                let canonical = format!("{}[{}]", join(base, "issues"), out.len());
                if canonical != item_field {
                    self.aliases.insert(canonical, item_field);
                }
                out.push(issue);
            }
        }
    }

    fn issue(&mut self, node: &Node, field: &str, default: &Severity) -> Option<Issue> {
        let Value::Map(entries) = &node.value else {
            self.expected(field, node, "an issue (a mapping with `severity` and `message`)");
            return None;
        };
        let mut issue = Issue::new(default.clone(), String::new());
        let mut message: Option<(usize, String)> = None;
        let mut location: Option<(String, &Node)> = None;
        let before = self.problems.len();
        for (key, _, value) in entries {
            let sub = format!("{field}.{key}");
            self.positions.insert(sub.clone(), value.position);
            match key.as_str() {
                "severity" => match &value.value {
                    Value::String(text) => issue.severity = Severity::parse(Some(text)),
                    Value::Null => issue.severity = Severity::Missing,
                    _ => self.expected(
                        &sub,
                        value,
                        "a severity (critical, major, minor, high, low, nit, info, style, ...)",
                    ),
                },
                "line" => issue.line = self.line(value, &sub),
                "location" => match &value.value {
                    Value::String(text) => location = Some((text.clone(), value)),
                    Value::Null => {}
                    _ => self.expected(&sub, value, "a location such as \"src/api.py:42\""),
                },
                "red_flag" => match &value.value {
                    Value::String(text) => issue.red_flag = Some(text.clone()),
                    Value::Null => {}
                    _ => self.expected(&sub, value, "a red-flag id such as \"sql_injection\""),
                },
                "category" | "file" | "suggestion" => {
                    let text = match &value.value {
                        Value::String(text) => Some(text.clone()),
                        Value::Null => None,
                        _ => {
                            self.expected(&sub, value, "a string");
                            None
                        }
                    };
                    match key.as_str() {
                        "category" => issue.category = text,
                        "file" => issue.file = text,
                        _ => issue.suggestion = text,
                    }
                }
                name => {
                    if let Some(rank) = MESSAGE_FIELDS.iter().position(|m| *m == name) {
                        match &value.value {
                            Value::String(text) => {
                                if message.as_ref().is_none_or(|(best, _)| rank < *best) {
                                    message = Some((rank, text.clone()));
                                }
                            }
                            _ => self.expected(&sub, value, "a string"),
                        }
                    }
                    // Other fields (ids, confidence per issue, ...) are the reviewer's own.
                }
            }
        }
        if let Some((text, value)) = location {
            let (file, line) = split_location(&text);
            if issue.file.is_none() {
                issue.file = Some(file);
            }
            if issue.line.is_none() {
                issue.line = line;
            }
            if issue.file.as_deref().is_some_and(str::is_empty) {
                self.expected(&format!("{field}.location"), value, "a location such as \"src/api.py:42\"");
            }
        }
        match message {
            Some((_, text)) => issue.message = text,
            None if self.problems.len() == before => {
                self.problem(
                    &format!("{field}.message"),
                    node.position,
                    "missing: an issue needs a `message` (or `description`, `title`, `body`)".to_owned(),
                );
            }
            None => {}
        }
        (self.problems.len() == before).then_some(issue)
    }

    fn line(&mut self, node: &Node, field: &str) -> Option<u64> {
        match node.value {
            Value::Null => None,
            Value::Number(n) if n >= 1.0 && n.fract() == 0.0 && n <= 1e15 => Some(n as u64),
            _ => {
                self.expected(field, node, "a line number (a whole number from 1)");
                None
            }
        }
    }
}

/// Splits `file:line` (or `file:line:column`) at the last numeric parts; a location
/// without a line is all file.
fn split_location(text: &str) -> (String, Option<u64>) {
    let text = text.trim();
    let mut parts = text.rsplitn(3, ':');
    let last = parts.next().unwrap_or_default();
    let middle = parts.next();
    let rest = parts.next();
    let number = |s: &str| s.parse::<u64>().ok().filter(|n| *n >= 1);
    match (middle, rest) {
        (Some(line), Some(file)) if number(line).is_some() && number(last).is_some() => {
            (file.to_owned(), number(line))
        }
        (Some(file), _) if number(last).is_some() => {
            let file = match rest {
                Some(head) => format!("{head}:{file}"),
                None => file.to_owned(),
            };
            (file, number(last))
        }
        _ => (text.to_owned(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_split_at_the_line() {
        assert_eq!(split_location("src/api.py:42"), ("src/api.py".into(), Some(42)));
        assert_eq!(split_location("src/api.py:42:7"), ("src/api.py".into(), Some(42)));
        assert_eq!(split_location("C:\\x\\a.py:9"), ("C:\\x\\a.py".into(), Some(9)));
        assert_eq!(split_location("README.md"), ("README.md".into(), None));
        assert_eq!(split_location("a:b:c"), ("a:b:c".into(), None));
    }
}
