//! The reviewer's answer: its JSON Schema (sent to the provider), the check of what came back
//! (a server may ignore the schema, so nothing is trusted), and the two documents made from
//! it: findings for `revcal calibrate` and a review for `revcal score`.

use std::collections::BTreeMap;

use revcal_rubric_model::{FocusArea, Rubric};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// How serious a finding is, in the words `revcal score` reads: critical and major block a
/// review, minor is a suggestion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FindingSeverity {
    /// A defect that breaks the program or its security.
    Critical,
    /// A defect in behaviour.
    Major,
    /// Worth fixing, not blocking.
    Minor,
}

impl FindingSeverity {
    fn parse(text: &str) -> Option<FindingSeverity> {
        match text.trim().to_ascii_lowercase().as_str() {
            "critical" => Some(FindingSeverity::Critical),
            "major" => Some(FindingSeverity::Major),
            "minor" => Some(FindingSeverity::Minor),
            _ => None,
        }
    }
}

/// One defect the reviewer reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReviewFinding {
    /// The file, as the change names it.
    pub file: String,
    /// The line in the new file.
    pub line: u64,
    /// How serious.
    pub severity: FindingSeverity,
    /// A one-word category (`bug`, `security`, ...).
    pub category: String,
    /// The defect and the wrong behaviour it causes.
    pub message: String,
    /// The fix, when the reviewer gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// A command that passes on correct code and fails with the defect, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repro: Option<String>,
}

/// A review: findings, the reviewer's scores of its own review on the rubric, its
/// confidence, red flags raised and its rationale.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewAnswer {
    /// The defects found, in the reviewer's order.
    pub findings: Vec<ReviewFinding>,
    /// One score per criterion of the rubric, on its scale.
    pub rubric_scores: BTreeMap<String, f64>,
    /// 0..1.
    pub confidence: f64,
    /// Ids of red flags of the focus areas.
    pub red_flags: Vec<String>,
    /// The reviewer's summary.
    pub rationale: String,
}

/// The most findings a review is asked for by default (what a review message of the ledger
/// holds).
pub const MAX_FINDINGS: usize = 50;
/// The most characters a finding's message, a suggestion or the rationale is asked for.
const MAX_TEXT_CHARS: usize = 600;

/// The JSON Schema of an answer for `rubric` with `focus` areas: every property required, no
/// others (what OpenAI's strict mode and Anthropic's forced tool need).
pub fn answer_schema(rubric: &Rubric, focus: &[&FocusArea], max_findings: usize) -> Value {
    // Lengths bound what a server that turns the schema into a grammar (llama.cpp's) lets a
    // small model write; OpenAI's strict mode does not take them, and the judge's client
    // leaves them out there. Longer answers are still read: the check below has no limit.
    let text = |max: usize| json!({"type": "string", "maxLength": max});
    let string = text(MAX_TEXT_CHARS);
    let finding = json!({
        "type": "object",
        "properties": {
            "file": text(300),
            "line": {"type": "integer"},
            "severity": {"type": "string", "enum": ["critical", "major", "minor"]},
            "category": text(40),
            "message": string,
            "suggestion": string,
            "repro": text(300),
        },
        "required": ["file", "line", "severity", "category", "message", "suggestion", "repro"],
        "additionalProperties": false,
    });
    // Whole points of the scale, listed: servers that turn the schema into a grammar
    // (llama.cpp's) then cannot produce a score outside it, which they do not ensure from a
    // minimum and maximum; the anchors are bands of whole points anyway.
    let (min, max) = (rubric.scale.min, rubric.scale.max);
    let points: Vec<u32> = (min..=max).collect();
    let scores: Map<String, Value> = rubric
        .criteria
        .iter()
        .map(|c| (c.name.clone(), json!({"type": "integer", "enum": points})))
        .collect();
    let criteria: Vec<&str> = rubric.criteria.iter().map(|c| c.name.as_str()).collect();
    let mut properties = Map::new();
    properties
        .insert("findings".into(), json!({"type": "array", "items": finding, "maxItems": max_findings}));
    properties.insert(
        "rubric_scores".into(),
        json!({"type": "object", "properties": scores, "required": criteria, "additionalProperties": false}),
    );
    // Tenths, listed for the same reason as the scores (a grammar holds to a list, not to a
    // minimum and maximum); the check accepts any number within 0..1.
    let tenths: Vec<f64> = (0..=10).map(|tenth| f64::from(tenth) / 10.0).collect();
    properties.insert("confidence".into(), json!({"type": "number", "enum": tenths}));
    let mut required = vec!["findings", "rubric_scores", "confidence"];
    if !focus.is_empty() {
        let ids: Vec<&str> =
            focus.iter().flat_map(|area| area.red_flags.iter().map(|flag| flag.id.as_str())).collect();
        let items = if ids.is_empty() { string.clone() } else { json!({"type": "string", "enum": ids}) };
        properties.insert("red_flags".into(), json!({"type": "array", "items": items}));
        required.push("red_flags");
    }
    properties.insert("rationale".into(), string);
    required.push("rationale");
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// Reads `answer` as a review for `rubric` and `focus`: the first thing that does not fit the
/// schema is the error, naming its field.
pub fn parse_answer(rubric: &Rubric, focus: &[&FocusArea], answer: &Value) -> Result<ReviewAnswer, String> {
    let object = answer.as_object().ok_or("the answer is not a JSON object")?;
    let allowed = ["findings", "rubric_scores", "confidence", "red_flags", "rationale"];
    if let Some(extra) = object.keys().find(|key| !allowed.contains(&key.as_str())) {
        return Err(format!("unexpected field `{extra}`"));
    }
    let findings = object
        .get("findings")
        .and_then(Value::as_array)
        .ok_or("`findings` is missing or not a list")?
        .iter()
        .enumerate()
        .map(|(index, finding)| {
            parse_finding(finding).map_err(|message| format!("findings[{index}]: {message}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let scores = object
        .get("rubric_scores")
        .and_then(Value::as_object)
        .ok_or("`rubric_scores` is missing or not an object")?;
    if let Some(extra) = scores.keys().find(|key| rubric.criterion(key).is_none()) {
        return Err(format!("rubric_scores.{extra}: not a criterion of {}", rubric.rubric_id));
    }
    let mut rubric_scores = BTreeMap::new();
    for criterion in &rubric.criteria {
        let score = scores
            .get(&criterion.name)
            .and_then(Value::as_f64)
            .ok_or_else(|| format!("rubric_scores.{}: missing or not a number", criterion.name))?;
        if !rubric.scale.contains(score) {
            return Err(format!(
                "rubric_scores.{} = {score} is outside the scale {}..{}",
                criterion.name, rubric.scale.min, rubric.scale.max
            ));
        }
        rubric_scores.insert(criterion.name.clone(), score);
    }
    let confidence =
        object.get("confidence").and_then(Value::as_f64).ok_or("`confidence` is missing or not a number")?;
    if !(0.0..=1.0).contains(&confidence) {
        return Err(format!("confidence = {confidence} is outside 0..1"));
    }
    let red_flags = match object.get("red_flags") {
        None if focus.is_empty() => Vec::new(),
        None => return Err("`red_flags` is missing".into()),
        Some(value) => {
            let list = value.as_array().ok_or("`red_flags` is not a list")?;
            let mut ids = Vec::with_capacity(list.len());
            for (index, id) in list.iter().enumerate() {
                let id = id.as_str().ok_or_else(|| format!("red_flags[{index}] is not a string"))?;
                if !focus.iter().any(|area| area.red_flags.iter().any(|flag| flag.id == id)) {
                    return Err(format!("red_flags[{index}]: `{id}` is not a red flag of the focus areas"));
                }
                if !ids.iter().any(|seen| seen == id) {
                    ids.push(id.to_owned());
                }
            }
            ids
        }
    };
    let rationale =
        object.get("rationale").and_then(Value::as_str).ok_or("`rationale` is missing or not a string")?;
    Ok(ReviewAnswer {
        findings,
        rubric_scores,
        confidence,
        red_flags,
        rationale: rationale.trim().to_owned(),
    })
}

fn parse_finding(value: &Value) -> Result<ReviewFinding, String> {
    let object = value.as_object().ok_or("not an object")?;
    let allowed = ["file", "line", "severity", "category", "message", "suggestion", "repro"];
    if let Some(extra) = object.keys().find(|key| !allowed.contains(&key.as_str())) {
        return Err(format!("unexpected field `{extra}`"));
    }
    let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::trim);
    let file = text("file").filter(|f| !f.is_empty()).ok_or("`file` is missing or empty")?;
    if file.starts_with('/') || file.split(['/', '\\']).any(|part| part == "..") {
        return Err(format!("`file` {file:?} is not a path inside the repository"));
    }
    let line = object
        .get("line")
        .and_then(Value::as_u64)
        .filter(|line| *line > 0)
        .ok_or("`line` is missing or not a line number (1 or more)")?;
    let severity = text("severity")
        .and_then(FindingSeverity::parse)
        .ok_or("`severity` is missing or not one of critical, major, minor")?;
    let message = text("message").filter(|m| !m.is_empty()).ok_or("`message` is missing or empty")?;
    let optional = |key: &str| -> Result<Option<String>, String> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_owned())),
            Some(_) => Err(format!("`{key}` is not a string")),
        }
    };
    Ok(ReviewFinding {
        file: file.to_owned(),
        line,
        severity,
        category: text("category").filter(|c| !c.is_empty()).unwrap_or("bug").to_owned(),
        message: message.to_owned(),
        suggestion: optional("suggestion")?,
        repro: optional("repro")?,
    })
}

impl ReviewAnswer {
    /// The findings in the shape `revcal calibrate` reads (docs/findings.md):
    /// `{"findings": [{file, line, severity, category, message, suggestion?, repro?}]}`.
    pub fn findings_document(&self) -> Value {
        json!({"findings": self.findings})
    }

    /// The review in the shape `revcal score` reads (docs/scoring.md#1-input), for `rubric`
    /// with the names of the `focus` areas.
    pub fn review_document(&self, rubric: &Rubric, focus: &[&FocusArea]) -> Value {
        let issues: Vec<Value> = self
            .findings
            .iter()
            .map(|finding| {
                let mut issue = json!({
                    "severity": finding.severity,
                    "category": finding.category,
                    "file": finding.file,
                    "line": finding.line,
                    "message": finding.message,
                });
                if let (Some(suggestion), Some(map)) = (&finding.suggestion, issue.as_object_mut()) {
                    map.insert("suggestion".into(), json!(suggestion));
                }
                issue
            })
            .collect();
        let mut document = json!({
            "rubric": rubric.key(),
            "rubric_scores": self.rubric_scores,
            "confidence": self.confidence,
            "issues": issues,
        });
        if let Some(map) = document.as_object_mut() {
            if !focus.is_empty() {
                map.insert(
                    "rubric_focus".into(),
                    json!(focus.iter().map(|a| a.name.as_str()).collect::<Vec<_>>()),
                );
                map.insert("red_flags".into(), json!(self.red_flags));
            }
            map.insert("rationale".into(), json!(self.rationale));
        }
        document
    }
}
