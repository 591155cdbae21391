//! The JSON report of docs/scoring.md#3-worked-examples: its keys, in its order, then revcal's additions.

use crate::council::CouncilEvaluation;
use crate::evaluate::Evaluation;
use serde::ser::{Serialize, SerializeMap, Serializer};

impl Serialize for Evaluation {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        write_fields(self, &mut map)?;
        map.end()
    }
}

impl Serialize for CouncilEvaluation {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        write_fields(&self.combined, &mut map)?;
        map.serialize_entry("agreement", &self.agreement)?;
        map.serialize_entry("mean_confidence", &self.mean_confidence)?;
        map.serialize_entry("members", &self.members)?;
        map.end()
    }
}

/// The documented report keys exactly, then `fail_reasons`, `criteria`, `negative_matches`,
/// `artifact_checked`, `rubric_focus` and `red_flags`.
/// `unclear_reasons` holds the reasons of an UNCLEAR verdict, as the documented FAIL example
/// (`"unclear_reasons": []`) shows; a FAIL's own reasons are in `fail_reasons`.
fn write_fields<M: SerializeMap>(evaluation: &Evaluation, map: &mut M) -> Result<(), M::Error> {
    let verdict = evaluation.verdict();
    let scores: serde_json::Map<String, serde_json::Value> =
        evaluation.criteria.iter().map(|c| (c.name.clone(), serde_json::Value::from(c.score))).collect();
    let strings = |reasons: &[crate::Reason]| reasons.iter().map(ToString::to_string).collect::<Vec<_>>();
    let unclear =
        if verdict == crate::Verdict::Unclear { strings(&evaluation.unclear_reasons) } else { Vec::new() };
    map.serialize_entry("verdict", &verdict)?;
    map.serialize_entry("confidence", &evaluation.confidence)?;
    map.serialize_entry("rubric", &evaluation.rubric)?;
    map.serialize_entry("rubric_scores", &scores)?;
    map.serialize_entry("weighted_score", &evaluation.weighted_score)?;
    map.serialize_entry("accuracy_ceiling_applied", &evaluation.ceiling_applied())?;
    map.serialize_entry("ceilings_applied", &evaluation.ceilings_applied)?;
    map.serialize_entry("final_score", &evaluation.final_score)?;
    map.serialize_entry("blocking_issues", &evaluation.blocking_issues)?;
    map.serialize_entry("suggestions", &evaluation.suggestions)?;
    map.serialize_entry("unclear_reasons", &unclear)?;
    map.serialize_entry("rationale", &evaluation.rationale)?;
    map.serialize_entry("fail_reasons", &strings(&evaluation.fail_reasons))?;
    map.serialize_entry("criteria", &evaluation.criteria)?;
    map.serialize_entry("negative_matches", &evaluation.negative_matches)?;
    map.serialize_entry("artifact_checked", &evaluation.artifact_checked)?;
    map.serialize_entry("rubric_focus", &evaluation.focus)?;
    map.serialize_entry("red_flags", &evaluation.red_flags)?;
    Ok(())
}
