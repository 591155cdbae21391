//! SARIF 2.1.0: `runs[].results[]`, each with a `message`, a `ruleId`, a `level` and
//! `locations[].physicalLocation.{artifactLocation.uri, region.startLine}`.

use serde_json::{Map, Value};

use super::fields;
use super::{Finding, FindingFormat, generic};

pub(super) fn recognise(value: &Value) -> Option<(FindingFormat, Vec<Finding>, Vec<String>)> {
    let log = value.as_object()?;
    let runs = log.get("runs")?.as_array()?;
    let version = log.get("version").and_then(Value::as_str);
    let schema = log.get("$schema").and_then(Value::as_str).unwrap_or_default();
    let looks_like_sarif = version.is_some()
        || schema.to_ascii_lowercase().contains("sarif")
        || runs.iter().any(|run| run.get("tool").is_some());
    if !looks_like_sarif {
        return None;
    }
    let mut warnings = Vec::new();
    if let Some(version) = version.filter(|v| !v.starts_with("2.1")) {
        warnings.push(format!("version: SARIF {version} is read as 2.1.0; fields may be missed"));
    }
    let mut findings = Vec::new();
    for (run_index, run) in runs.iter().enumerate() {
        let at = format!("runs[{run_index}]");
        let Some(run) = run.as_object() else {
            warnings.push(format!("{at}: expected an object, found {}; skipped", generic::kind(run)));
            continue;
        };
        let Some(results) = run.get("results").and_then(Value::as_array) else { continue };
        for (index, result) in results.iter().enumerate() {
            let at = format!("{at}.results[{index}]");
            match result.as_object() {
                Some(result) => match not_a_finding(result) {
                    Some(reason) => warnings.push(format!("{at}: {reason}; skipped")),
                    None => findings.push(from_result(run, result, &at, &mut warnings)),
                },
                None => warnings
                    .push(format!("{at}: expected an object, found {}; skipped", generic::kind(result))),
            }
        }
    }
    Some((FindingFormat::Sarif, findings, warnings))
}

/// Why a result reports no problem, if it does not: a `kind` other than `fail`, `review` or
/// `open` (a passed or not-applicable check), a result that is suppressed (a suppression whose
/// status is absent, meaning accepted, or `accepted`), or one absent from the current run.
fn not_a_finding(result: &Map<String, Value>) -> Option<String> {
    if let Some(kind) = result.get("kind").and_then(Value::as_str)
        && matches!(kind, "pass" | "notApplicable" | "informational")
    {
        return Some(format!("kind \"{kind}\" reports no problem"));
    }
    let suppressed = result.get("suppressions").and_then(Value::as_array).is_some_and(|suppressions| {
        suppressions
            .iter()
            .any(|s| matches!(s.get("status").and_then(Value::as_str), None | Some("accepted")))
    });
    if suppressed {
        return Some("suppressed".to_string());
    }
    if result.get("baselineState").and_then(Value::as_str) == Some("absent") {
        return Some("baselineState \"absent\": no longer present".to_string());
    }
    None
}

fn from_result(
    run: &Map<String, Value>,
    result: &Map<String, Value>,
    at: &str,
    warnings: &mut Vec<String>,
) -> Finding {
    let rule_id = fields::string(result, &["ruleId"])
        .or_else(|| fields::dig(result, &["rule", "id"]).and_then(fields::scalar_text));
    let rule = find_rule(run, result, rule_id.as_deref());
    let message = message_text(result, rule);
    let text = match (&rule_id, message) {
        (Some(rule), Some(message)) => format!("[{rule}] {message}"),
        (Some(rule), None) => format!("[{rule}]"),
        (None, Some(message)) => message,
        (None, None) => {
            warnings.push(format!("{at}.message: no text; its text is empty"));
            String::new()
        }
    };
    let mut finding = Finding::new(FindingFormat::Sarif, text);
    finding.severity = fields::string(result, &["level"]).or_else(|| {
        rule.and_then(|rule| fields::dig(rule, &["defaultConfiguration", "level"]))
            .and_then(fields::scalar_text)
    });
    let physical = result
        .get("locations")
        .and_then(Value::as_array)
        .and_then(|locations| locations.iter().find_map(|l| l.get("physicalLocation")?.as_object()));
    if let Some(physical) = physical {
        finding.file = artifact_uri(run, physical).map(|uri| fields::clean_path(&uri));
        if let Some(region) = physical.get("region").and_then(Value::as_object) {
            finding.line = fields::line(
                region,
                &["startLine"],
                &format!("{at}.locations[0].physicalLocation.region"),
                warnings,
            );
            finding.evidence = fields::dig(region, &["snippet", "text"]).and_then(fields::scalar_text);
        }
    }
    finding
}

/// The URI of a physical location, following `artifactLocation.index` into `run.artifacts`.
fn artifact_uri(run: &Map<String, Value>, physical: &Map<String, Value>) -> Option<String> {
    let artifact = physical.get("artifactLocation")?.as_object()?;
    fields::string(artifact, &["uri"]).or_else(|| {
        let index = usize::try_from(artifact.get("index")?.as_u64()?).ok()?;
        let listed = run.get("artifacts")?.as_array()?.get(index)?;
        listed.pointer("/location/uri").and_then(fields::scalar_text)
    })
}

/// The rule a result refers to, by `ruleIndex` or by id, in `tool.driver.rules`.
fn find_rule<'a>(
    run: &'a Map<String, Value>,
    result: &Map<String, Value>,
    id: Option<&str>,
) -> Option<&'a Map<String, Value>> {
    let rules = fields::dig(run, &["tool", "driver", "rules"])?.as_array()?;
    let by_index = result
        .get("ruleIndex")
        .and_then(Value::as_u64)
        .and_then(|index| rules.get(usize::try_from(index).ok()?));
    by_index
        .or_else(|| rules.iter().find(|rule| rule.get("id").and_then(Value::as_str) == id && id.is_some()))
        .and_then(Value::as_object)
}

/// The message text, from `message.text`, `message.markdown`, or the rule's `messageStrings`
/// entry named by `message.id`, with `{0}`-style placeholders filled from `message.arguments`.
fn message_text(result: &Map<String, Value>, rule: Option<&Map<String, Value>>) -> Option<String> {
    let message = result.get("message")?;
    let template = fields::text_of(message).or_else(|| {
        let id = message.get("id")?.as_str()?;
        let strings = rule?.get("messageStrings")?.get(id)?;
        fields::text_of(strings)
    })?;
    let arguments = message.get("arguments").and_then(Value::as_array);
    Some(match arguments {
        Some(arguments) => arguments.iter().enumerate().fold(template, |text, (index, argument)| {
            text.replace(&format!("{{{index}}}"), &fields::scalar_text(argument).unwrap_or_default())
        }),
        None => template,
    })
}
