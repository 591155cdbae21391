//! RFC-001's own example messages (crates/elo/tests/fixtures/rfc-001), signed with
//! `revcal elo sign`, through `revcal elo handle` and `revcal elo ingest`.

use super::{CliAgent, json_out, keygen, revcal, revcal_stdin, sign, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;

fn fixture(name: &str) -> Value {
    let path = format!("{}/../elo/tests/fixtures/rfc-001/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Fills the RFC's placeholders (`from` and `sig` come from signing; `request_id` is the
/// request's id) and signs with `revcal elo sign`, which also sets `ts` when absent.
fn signed(dir: &Path, agent: &CliAgent, mut value: Value, request_id: Option<&str>) -> (String, String) {
    let object = value.as_object_mut().unwrap();
    object.remove("sig");
    object.remove("from");
    if let Some(id) = request_id {
        value["content"]["request_id"] = json!(id);
    }
    sign(dir, agent, value)
}

#[test]
fn every_example_of_the_protocol_goes_through_handle_and_ingest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (requester, reviewer, asker, other) =
        (keygen(d, "requester"), keygen(d, "reviewer"), keygen(d, "asker"), keygen(d, "other"));

    // Request, review and outcome as the RFC writes them; then the same request a moment
    // later, the same review, and an outcome with incident_details.
    let mut lines = Vec::new();
    let mut again = fixture("request.json");
    again["ts"] = json!(1_706_889_600_001_u64);
    for (request, outcome) in [(fixture("request.json"), "outcome.json"), (again, "outcome-incident.json")] {
        let (line, id) = signed(d, &requester, request, None);
        lines.push(line);
        lines.push(signed(d, &reviewer, fixture("review.json"), Some(&id)).0);
        lines.push(signed(d, &requester, fixture(outcome), Some(&id)).0);
    }
    let handle = |input: &str| revcal_stdin(d, &["elo", "handle", "--ledger", "handle.sqlite"], input);
    let mut scored = 0;
    for line in &lines {
        let output = handle(line);
        assert_eq!(output.status.code(), Some(0), "{line}: {}{}", stdout(&output), stderr(&output));
        let answer = json_out(&output);
        assert_eq!(answer["status"], "stored");
        scored += answer["scored"].as_array().unwrap().len();
    }
    assert_eq!(scored, 2);

    // The query exactly as the RFC writes it (unsigned), and signed by an asker.
    let rfc_query = fixture("leaderboard.json").to_string();
    let (signed_query, _) = signed(d, &asker, fixture("leaderboard.json"), None);
    for (query, to) in [(rfc_query.as_str(), "#review"), (signed_query.as_str(), asker.id.as_str())] {
        let output = handle(query);
        assert_eq!(output.status.code(), Some(0), "{query}: {}", stderr(&output));
        let reply = json_out(&output);
        assert_eq!(
            (reply["type"].as_str(), reply["to"].as_str()),
            (Some("REVIEW_LEADERBOARD_RESULT"), Some(to))
        );
        // REQUEST_CHANGES scored -5 then +25, both at K 40: 1200 - 10 + 50.
        assert_eq!(
            reply["content"]["leaderboard"],
            json!([{"rank": 1, "agent": reviewer.id, "elo": 1240, "reviews": 2, "accuracy": 0.5}])
        );
    }

    // The RFC's result, agents filled in: a valid message, which the ledger does not store.
    let result = fixture("leaderboard-result.json")
        .to_string()
        .replace("@agent1", &reviewer.id)
        .replace("@agent2", &requester.id);
    let (signed_result, _) = signed(d, &other, serde_json::from_str(&result).unwrap(), None);
    let output = handle(&signed_result);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(json_out(&output)["code"], "not_stored");

    // The same lines, both queries and the result through `ingest`, into a new ledger.
    let mut file = lines.join("\n");
    for extra in [&rfc_query, &signed_query, &signed_result] {
        file.push('\n');
        file.push_str(extra);
    }
    std::fs::write(d.join("rfc.jsonl"), file + "\n").unwrap();
    let output = revcal(d, &["elo", "ingest", "rfc.jsonl", "--json", "--ledger", "ingest.sqlite"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = json_out(&output);
    assert_eq!((report["stored"].as_u64(), report["scored_reviews"].as_u64()), (Some(6), Some(2)));
    let refused: Vec<(u64, &str)> = report["rejections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["line"].as_u64().unwrap(), r["code"].as_str().unwrap()))
        .collect();
    assert_eq!(refused, [(7, "not_stored"), (8, "not_stored"), (9, "not_stored")]);
    let board = |ledger: &str| json_out(&revcal(d, &["elo", "leaderboard", "--json", "--ledger", ledger]));
    assert_eq!(board("ingest.sqlite"), board("handle.sqlite"));

    // Receipts carry every field of the RFC's receipt, with the same JSON type, and verify.
    let receipts =
        json_out(&revcal(d, &["elo", "receipts", &reviewer.id, "--json", "--ledger", "handle.sqlite"]));
    let example = fixture("receipt.json");
    for receipt in receipts.as_array().unwrap() {
        for (field, rfc_value) in example.as_object().unwrap() {
            let ours = &receipt[field.as_str()];
            assert_eq!(
                std::mem::discriminant(ours),
                std::mem::discriminant(rfc_value),
                "`{field}`: {ours} vs {rfc_value}"
            );
        }
    }
    assert_eq!(receipts[1]["content"], "REVIEW:REQUEST_CHANGES on Fix null pointer in auth handler");
    assert_eq!(
        (receipts[1]["outcome"].as_str(), receipts[1]["ts"].as_u64()),
        (Some("caught_bug"), Some(1_709_481_600_000))
    );
    std::fs::write(d.join("receipts.json"), receipts.to_string()).unwrap();
    revcal(d, &["elo", "issuer-key", "--out", "ledger.pub", "--ledger", "handle.sqlite"]);
    let verified = revcal(d, &["elo", "verify-receipt", "receipts.json", "--issuer-key", "ledger.pub"]);
    assert_eq!(verified.status.code(), Some(0), "{}{}", stdout(&verified), stderr(&verified));
}
