//! JSON Schema validation with messages written for rubric authors.
//!
//! `jsonschema` finds the violations; this module turns each into an [`LintIssue`] with the
//! rule the format assigns to that field (a bad `version` is RL-04, not a generic pattern
//! failure), a message that names the field and the value, and a hint: the field's own
//! description for a missing field, "did you mean" for a misspelt one.

use crate::marks::Target;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, Validator};
use revcal_rubric_model::validate::{identifier_hint, version_problem};
use revcal_rubric_model::{AnchorKey, LintIssue, Rule, pointer, suggest};
use serde_json::Value;

/// A schema violation, located by pointer, and whether it concerns a key or a value.
#[derive(Debug, Clone)]
pub(crate) struct SchemaIssue {
    pub issue: LintIssue,
    pub target: Target,
    /// Set for unknown fields: the loader drops them and goes on checking the rest.
    pub unknown_field: bool,
    /// For a misspelt required field (`wieght` where `weight` is missing): the name the
    /// author meant, under which the loader reads the value to go on checking.
    pub rename_to: Option<String>,
}

/// The compiled rubric schema.
pub(crate) struct SchemaChecker {
    schema: Value,
    validator: Validator,
}

/// The generated schema did not compile: a defect in revcal, reported rather than panicked.
#[derive(Debug, thiserror::Error)]
#[error("the rubric schema does not compile: {0}")]
pub struct SchemaBuildError(String);

impl SchemaChecker {
    pub(crate) fn new() -> Result<SchemaChecker, SchemaBuildError> {
        let schema = revcal_rubric_model::json_schema();
        // `Validator::new`, not `jsonschema::options()...build()`: the builder is generic, so
        // calling it compiles a second copy of all of jsonschema's validators into this crate
        // (two thirds of its release build); `new` is compiled once, in jsonschema. It leaves
        // `format` unchecked (draft 2020-12's default): the schema's one format,
        // calibration_dataset's `uri-reference`, is checked by the semantic rules (RL-09).
        let validator = Validator::new(&schema).map_err(|error| SchemaBuildError(error.to_string()))?;
        Ok(SchemaChecker { schema, validator })
    }

    /// Every violation in `document`.
    pub(crate) fn check(&self, document: &Value) -> Vec<SchemaIssue> {
        let mut found = Vec::new();
        if !document.is_object() {
            found.push(SchemaIssue {
                issue: LintIssue::error(
                    Rule::Schema,
                    "",
                    format!("a rubric file holds one mapping of fields, found {}", describe(document)),
                )
                .with_hint("start with `rubric_id: ...`, `name: ...`, `version: ...`"),
                target: Target::Auto,
                unknown_field: false,
                rename_to: None,
            });
            return found;
        }
        // Missing fields are gathered per mapping: one diagnostic that lists them all reads
        // better than six at the same place.
        let mut missing: Vec<(String, Vec<String>)> = Vec::new();
        let mut unknown: Vec<(String, String)> = Vec::new();
        for error in self.validator.iter_errors(document) {
            let at = error.instance_path().as_str().to_owned();
            match error.kind() {
                ValidationErrorKind::Required { property } => {
                    let name = property.as_str().unwrap_or_default().to_owned();
                    match missing.iter_mut().find(|(parent, _)| *parent == at) {
                        Some((_, names)) => names.push(name),
                        None => missing.push((at, vec![name])),
                    }
                }
                ValidationErrorKind::AdditionalProperties { unexpected } => {
                    unknown.extend(unexpected.iter().map(|key| (at.clone(), key.clone())));
                }
                kind => self.translate(&at, kind, error.instance(), &mut found),
            }
        }
        // A misspelt required field is one mistake, not two: report the unknown name with
        // its correction, and drop the "missing" that the misspelling caused.
        for (at, key) in unknown {
            // A field already written is no candidate for "did you mean".
            let present: Vec<String> = document
                .pointer(&at)
                .and_then(Value::as_object)
                .map(|object| object.keys().cloned().collect())
                .unwrap_or_default();
            let mut issue = self.unknown_key(&at, &key, &present);
            let meant = self.misspelling_of(&at, &key, &present);
            if let Some(meant) =
                meant.filter(|m| missing.iter().any(|(p, names)| *p == at && names.contains(m)))
            {
                for (_, names) in missing.iter_mut().filter(|(parent, _)| *parent == at) {
                    names.retain(|name| *name != meant);
                }
                issue.rename_to = Some(meant);
            }
            found.push(issue);
        }
        for (at, names) in missing.into_iter().filter(|(_, names)| !names.is_empty()) {
            found.push(self.missing_fields(&at, &names));
        }
        found
    }

    /// The known field that `key` is a plausible misspelling of.
    fn misspelling_of(&self, at: &str, key: &str, present: &[String]) -> Option<String> {
        let known: Vec<String> = self.known_fields(at).into_iter().filter(|f| !present.contains(f)).collect();
        suggest::closest(key, known.iter().map(String::as_str)).map(str::to_owned)
    }

    fn missing_fields(&self, at: &str, names: &[String]) -> SchemaIssue {
        let place =
            if at.is_empty() { "the rubric".to_owned() } else { format!("`{}`", pointer::field_path(at)) };
        let issue = match names {
            [name] => {
                let hint = match self.description(&pointer::join(at, name)) {
                    Some(text) => format!("add `{name}:` ({})", lowercase_first(text.trim_end_matches('.'))),
                    None => format!("add `{name}:`"),
                };
                LintIssue::error(
                    Rule::Schema,
                    pointer::join(at, name),
                    format!("{place} is missing the required field `{name}`"),
                )
                .with_hint(hint)
            }
            _ => {
                let listed: Vec<&str> = names.iter().map(String::as_str).collect();
                LintIssue::error(
                    Rule::Schema,
                    at,
                    format!(
                        "{place} is missing the required fields {}",
                        or_list(&listed).replace(" or ", " and ")
                    ),
                )
                .with_hint(format!(
                    "add {}; docs/rubric-format.md describes each field",
                    listed.iter().map(|n| format!("`{n}:`")).collect::<Vec<_>>().join(", ")
                ))
            }
        };
        SchemaIssue { issue, target: Target::Auto, unknown_field: false, rename_to: None }
    }

    fn translate(&self, at: &str, kind: &ValidationErrorKind, instance: &Value, out: &mut Vec<SchemaIssue>) {
        let field = field_name(at);
        let rule = rule_for(at);
        let value_issue = |issue: LintIssue| SchemaIssue {
            issue,
            target: Target::Auto,
            unknown_field: false,
            rename_to: None,
        };
        match kind {
            ValidationErrorKind::Type { kind } => {
                let expected = expected_types(kind);
                let issue = if rule == Rule::Version {
                    let text = scalar_text(instance);
                    let (message, hint) = version_problem(&text).unwrap_or_else(|| {
                        (format!("version `{text}` must be a string"), format!("quote it: `\"{text}\"`"))
                    });
                    LintIssue::error(Rule::Version, at, message).with_hint(hint)
                } else {
                    let hint = match (instance, expected.as_str()) {
                        (Value::String(text), "a number" | "an integer")
                            if text.trim().parse::<f64>().is_ok() =>
                        {
                            Some(format!("remove the quotes: `{field}: {}`", text.trim()))
                        }
                        (Value::Number(_) | Value::Bool(_), "a string") => Some(quote_hint(at, instance)),
                        _ => None,
                    };
                    LintIssue::error(
                        rule,
                        at,
                        format!("`{field}` must be {expected}, found {}", describe(instance)),
                    )
                    .with_optional_hint(hint)
                };
                out.push(value_issue(issue));
            }
            ValidationErrorKind::OneOfNotValid { .. } | ValidationErrorKind::AnyOf { .. }
                if !self.constants(at).is_empty() =>
            {
                let options = Value::Array(self.constants(at).into_iter().map(Value::from).collect());
                let kind = ValidationErrorKind::Enum { options: options.into() };
                self.translate(at, &kind, instance, out);
            }
            ValidationErrorKind::Enum { options } => {
                let choices: Vec<&str> =
                    options.as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                let given = scalar_text(instance);
                let hint = match suggest::closest(&given, choices.iter().copied()) {
                    Some(near) => format!("did you mean `{near}`?"),
                    None => format!("use one of: {}", choices.join(", ")),
                };
                out.push(value_issue(
                    LintIssue::error(
                        rule,
                        at,
                        format!("`{given}` is not a valid {field}: expected {}", or_list(&choices)),
                    )
                    .with_hint(hint),
                ));
            }
            ValidationErrorKind::Pattern { pattern } => {
                let text = scalar_text(instance);
                let issue = if rule == Rule::Version {
                    let (message, hint) = version_problem(&text).unwrap_or_else(|| {
                        (format!("version `{text}` is not MAJOR.MINOR.PATCH"), String::new())
                    });
                    LintIssue::error(Rule::Version, at, message).with_hint(hint)
                } else if pattern == "^[a-z][a-z0-9_]*$" {
                    LintIssue::error(
                        rule,
                        at,
                        format!("{field} `{text}` is not lower snake_case ({pattern})"),
                    )
                    .with_hint(identifier_hint(&text))
                } else {
                    LintIssue::error(rule, at, format!("{field} `{text}` does not match {pattern}"))
                };
                out.push(value_issue(issue));
            }
            ValidationErrorKind::Minimum { limit }
            | ValidationErrorKind::ExclusiveMinimum { limit }
            | ValidationErrorKind::Maximum { limit }
            | ValidationErrorKind::ExclusiveMaximum { limit } => {
                let relation = match kind {
                    ValidationErrorKind::Minimum { .. } => "is below the minimum",
                    ValidationErrorKind::ExclusiveMinimum { .. } => "must be above",
                    ValidationErrorKind::Maximum { .. } => "is above the maximum",
                    _ => "must be below",
                };
                let hint = match rule {
                    Rule::Share => Some(
                        "a share is the fraction of the overall score a criterion carries, in (0, 1]"
                            .to_owned(),
                    ),
                    _ => self
                        .description(at)
                        .map(|d| format!("{field}: {}", lowercase_first(d.trim_end_matches('.')))),
                };
                out.push(value_issue(
                    LintIssue::error(
                        rule,
                        at,
                        format!("{field} {} {relation} {limit}", scalar_text(instance)),
                    )
                    .with_optional_hint(hint),
                ));
            }
            ValidationErrorKind::MinItems { .. } | ValidationErrorKind::MinProperties { .. } => {
                let hint = match rule {
                    Rule::Anchors => "describe every point of the scale".to_owned(),
                    Rule::Examples => "give examples for the scale's minimum and maximum".to_owned(),
                    _ => format!("add at least one entry to `{field}`"),
                };
                out.push(value_issue(
                    LintIssue::error(rule, at, format!("`{field}` is empty")).with_hint(hint),
                ));
            }
            ValidationErrorKind::MinLength { .. } => {
                out.push(value_issue(
                    LintIssue::error(rule, at, format!("`{field}` is empty"))
                        .with_hint(format!("write the {field}")),
                ));
            }
            other => {
                out.push(value_issue(LintIssue::error(
                    rule,
                    at,
                    format!("`{field}`: {}", fallback_message(other, instance)),
                )));
            }
        }
    }

    /// An unknown key: for anchors and examples, a malformed key; elsewhere, an unknown field.
    fn unknown_key(&self, at: &str, key: &str, present: &[String]) -> SchemaIssue {
        let key_at = pointer::join(at, key);
        let issue = match rule_for(&key_at) {
            Rule::Anchors => {
                let message = match AnchorKey::parse(key) {
                    Err(error) => error.to_string(),
                    Ok(_) => format!("anchor key `{key}` is not a point or an ascending band"),
                };
                LintIssue::error(Rule::Anchors, key_at.clone(), message)
                    .with_hint("write a point such as `3` or an ascending band such as `\"9-10\"`")
            }
            Rule::Examples => LintIssue::error(
                Rule::Examples,
                key_at.clone(),
                format!("example key `{key}` is not `score_<n>`"),
            )
            .with_hint("name examples after their score, e.g. `score_5`"),
            _ => {
                let all = self.known_fields(at);
                let unused: Vec<&str> =
                    all.iter().map(String::as_str).filter(|f| !present.iter().any(|p| p == f)).collect();
                let place = if at.is_empty() {
                    "a rubric".to_owned()
                } else {
                    format!("`{}`", pointer::field_path(at))
                };
                let hint = match (suggest::closest(key, all.iter().map(String::as_str)), unused.is_empty()) {
                    (Some(near), _) if present.iter().any(|p| p == near) => {
                        format!("`{near}` is already set here; remove `{key}` or merge it into `{near}`")
                    }
                    (Some(near), _) => format!("did you mean `{near}`?"),
                    (None, false) => format!("fields allowed here and not yet used: {}", unused.join(", ")),
                    (None, true) => format!("remove `{key}`"),
                };
                LintIssue::error(Rule::Schema, key_at.clone(), format!("unknown field `{key}` in {place}"))
                    .with_hint(hint)
            }
        };
        SchemaIssue { issue, target: Target::Key, unknown_field: true, rename_to: None }
    }

    /// The property names the schema allows at `at`.
    fn known_fields(&self, at: &str) -> Vec<String> {
        self.subschema(at)
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The string constants a `oneOf`/`anyOf` at `at` allows (how enums with documented
    /// variants are written).
    fn constants(&self, at: &str) -> Vec<String> {
        let Some(schema) = self.subschema(at) else { return Vec::new() };
        ["oneOf", "anyOf"]
            .iter()
            .filter_map(|keyword| schema.get(*keyword).and_then(Value::as_array))
            .flatten()
            .filter_map(|branch| self.resolve(branch))
            .flat_map(|branch| {
                let single = branch.get("const").into_iter();
                let listed = branch.get("enum").and_then(Value::as_array).into_iter().flatten();
                single.chain(listed).filter_map(Value::as_str).map(str::to_owned).collect::<Vec<_>>()
            })
            .collect()
    }

    /// The description of the field at `at`: the property's own, else its type's.
    fn description(&self, at: &str) -> Option<&str> {
        let property = self.property_schema(at)?;
        property
            .get("description")
            .or_else(|| self.resolve(property)?.get("description"))
            .and_then(Value::as_str)
    }

    /// The schema that governs the instance at `at`, with references followed.
    fn subschema(&self, at: &str) -> Option<&Value> {
        self.resolve(self.property_schema(at)?)
    }

    /// The schema written for the instance at `at` (its last `$ref` not yet followed, so
    /// that a property's own description is still visible).
    fn property_schema(&self, at: &str) -> Option<&Value> {
        let mut current = &self.schema;
        for segment in pointer::segments(at) {
            let resolved = self.resolve(current)?;
            current = if let Some(property) = resolved.get("properties").and_then(|p| p.get(&segment)) {
                property
            } else if let Some(items) = resolved.get("items") {
                items
            } else if let Some(patterned) = resolved.get("patternProperties").and_then(Value::as_object) {
                patterned.values().next()?
            } else {
                return None;
            };
        }
        Some(current)
    }

    /// Follows local `$ref`s (`#/$defs/...`).
    fn resolve<'a>(&'a self, mut schema: &'a Value) -> Option<&'a Value> {
        for _ in 0..8 {
            match schema.get("$ref").and_then(Value::as_str) {
                Some(reference) => schema = self.schema.pointer(reference.strip_prefix('#')?)?,
                None => return Some(schema),
            }
        }
        None
    }
}

/// The rule the format assigns to a problem with the value at `at`.
pub(crate) fn rule_for(at: &str) -> Rule {
    let segments = pointer::segments(at);
    let names: Vec<&str> = segments.iter().map(String::as_str).collect();
    match names.as_slice() {
        ["version"] => Rule::Version,
        ["calibration_dataset"] => Rule::CalibrationDataset,
        ["criteria", _, "weight"] => Rule::Weight,
        ["criteria", _, "anchors", ..] => Rule::Anchors,
        ["criteria", _, "examples", ..] => Rule::Examples,
        ["criteria", _, "share"] => Rule::Share,
        ["ceilings", ..] => Rule::Ceiling,
        ["negative_criteria", _, "fail_patterns", ..] => Rule::Pattern,
        ["scale", ..] => Rule::Scale,
        _ => Rule::Schema,
    }
}

fn field_name(at: &str) -> String {
    let segments = pointer::segments(at);
    match segments.last() {
        None => "document".to_owned(),
        Some(last) if last.bytes().all(|b| b.is_ascii_digit()) => pointer::field_path(at),
        Some(last) => last.clone(),
    }
}

fn expected_types(kind: &TypeKind) -> String {
    let name = |t: JsonType| match t {
        JsonType::Array => "a list",
        JsonType::Boolean => "true or false",
        JsonType::Integer => "an integer",
        JsonType::Null => "empty",
        JsonType::Number => "a number",
        JsonType::Object => "a mapping",
        JsonType::String => "a string",
    };
    match kind {
        TypeKind::Single(t) => name(*t).to_owned(),
        TypeKind::Multiple(set) => set.iter().map(name).collect::<Vec<_>>().join(" or "),
    }
}

/// How a value reads in a message: `a string "high"`, `a list`, `nothing`.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "nothing (an empty value)".to_owned(),
        Value::Bool(b) => format!("`{b}`"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string \"{}\"", truncate(s, 40)),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "a mapping".to_owned(),
    }
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => truncate(s, 60),
        Value::Null => "null".to_owned(),
        other => truncate(&other.to_string(), 60),
    }
}

fn truncate(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        text.to_owned()
    } else {
        format!("{}...", text.chars().take(limit).collect::<String>())
    }
}

fn or_list(choices: &[&str]) -> String {
    let quoted: Vec<String> = choices.iter().map(|c| format!("`{c}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}

fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// "quote it: `name: \"42\"`" for a named field, "quote it: `\"42\"`" for a list item.
fn quote_hint(at: &str, instance: &Value) -> String {
    let value = scalar_text(instance);
    match pointer::segments(at).last() {
        Some(name) if !name.bytes().all(|b| b.is_ascii_digit()) => format!("quote it: `{name}: \"{value}\"`"),
        _ => format!("quote it: `\"{value}\"`"),
    }
}

fn fallback_message(kind: &ValidationErrorKind, instance: &Value) -> String {
    format!("{} does not satisfy `{}`", describe(instance), kind.keyword())
}
