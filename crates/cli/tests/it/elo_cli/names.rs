//! Reviewers' names beside their ids: a name is what the agent's own signed reviews give
//! (`content.name`; `elo record` gives the calibration's reviewer in the reviews the
//! reviewer's key signs), shown in the leaderboard's table and JSON and in the receipts
//! listing, never beside another agent's id, and cleaned of control characters and cut to
//! the column in the table.

use super::{CliAgent, json_out, keygen, request_json, revcal, revcal_stdin, sign, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;

fn record(d: &Path, authority: &CliAgent, reviewer: &CliAgent) {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/elo/calibration.json");
    let output = revcal(
        d,
        &[
            "elo",
            "record",
            example.to_str().unwrap(),
            "--authority-key",
            authority.key.to_str().unwrap(),
            "--agent",
            &reviewer.id,
            "--agent-key",
            reviewer.key.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
}

fn review_named(request_id: &str, name: &str) -> Value {
    json!({"type": "REVIEW", "to": "#review", "ts": 1_700_000_100,
           "content": {"request_id": request_id, "verdict": "APPROVE", "name": name}})
}

#[test]
fn the_leaderboard_and_receipts_show_the_name_each_agents_own_reviews_give() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (authority, bot, copycat, author) =
        (keygen(d, "authority"), keygen(d, "bot"), keygen(d, "copycat"), keygen(d, "author"));
    // The calibration's reviewer, named by the reviews its own key signs.
    record(d, &authority, &bot);
    // Another agent gives itself the same name, and a long one after it (the latest stands
    // in the ledger; the table cuts it).
    let (request, request_id) = sign(d, &author, request_json("pull/7"));
    let (same_name, _) = sign(d, &copycat, review_named(&request_id, "review-bot --strict"));
    std::fs::write(d.join("copycat.jsonl"), format!("{request}\n{same_name}\n")).unwrap();
    let ingested = revcal(d, &["elo", "ingest", "copycat.jsonl"]);
    assert_eq!(ingested.status.code(), Some(0), "{}", stderr(&ingested));

    let board = revcal(d, &["elo", "leaderboard", "--json"]);
    assert_eq!(board.status.code(), Some(0), "{}", stderr(&board));
    let rows = json_out(&board);
    let name_of = |agent: &CliAgent| -> Value {
        rows.as_array().unwrap().iter().find(|row| row["agent"] == agent.id.as_str()).unwrap()["name"].clone()
    };
    assert_eq!(name_of(&bot), "review-bot --strict");
    assert_eq!(name_of(&copycat), "review-bot --strict", "its own name, beside its own id");
    assert!(rows.as_array().unwrap().iter().all(|row| row["agent"] != author.id.as_str()));

    let table = stdout(&revcal(d, &["elo", "leaderboard"]));
    let line = |agent: &CliAgent| table.lines().find(|line| line.contains(&agent.id)).unwrap().to_owned();
    assert!(line(&bot).contains(&format!("{}  review-bot --strict", bot.id)), "{table}");
    assert!(line(&copycat).contains(&format!("{}  review-bot --strict", copycat.id)), "{table}");
    assert!(table.lines().next().unwrap().contains("name"), "{table}");

    let receipts = stdout(&revcal(d, &["elo", "receipts", &bot.id]));
    assert!(receipts.contains(&format!("4 receipts of {} (review-bot --strict)", bot.id)), "{receipts}");

    // Names another agent's reviews gave never reach this one's row; a long name is cut in
    // the table, whole in the JSON.
    let long = "a reviewer whose name goes on well past the column's width";
    let (request, request_id) = sign(d, &author, request_json("pull/8"));
    let (long_review, _) = sign(d, &copycat, review_named(&request_id, long));
    std::fs::write(d.join("long.jsonl"), format!("{request}\n{long_review}\n")).unwrap();
    assert_eq!(revcal(d, &["elo", "ingest", "long.jsonl"]).status.code(), Some(0));
    let rows = json_out(&revcal(d, &["elo", "leaderboard", "--json"]));
    let names: Vec<(String, String)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|row| (row["agent"].as_str().unwrap().to_owned(), row["name"].as_str().unwrap().to_owned()))
        .collect();
    assert!(names.contains(&(bot.id.clone(), "review-bot --strict".into())), "{names:?}");
    assert!(names.contains(&(copycat.id.clone(), long.into())), "{names:?}");
    let table = stdout(&revcal(d, &["elo", "leaderboard"]));
    let copycat_line = table.lines().find(|line| line.contains(&copycat.id)).unwrap();
    assert!(copycat_line.contains("a reviewer whose name g…"), "{table}");
    assert!(!copycat_line.contains("width"), "{table}");
    let check = revcal(d, &["elo", "check"]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
}

#[test]
fn a_name_with_control_or_invisible_characters_is_refused_with_the_field_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (author, reviewer) = (keygen(d, "author"), keygen(d, "reviewer"));
    let (_, request_id) = sign(d, &author, request_json("pull/1"));
    for name in ["bot\nadmin", "bot\u{202e}nimda", "  ", &"x".repeat(65), " padded"] {
        let output = revcal_stdin(
            d,
            &["elo", "sign", "-", "--key", reviewer.key.to_str().unwrap()],
            &review_named(&request_id, name).to_string(),
        );
        assert_eq!(output.status.code(), Some(1), "{name:?}: {}", stderr(&output));
        assert!(stderr(&output).contains("`content.name`"), "{name:?}: {}", stderr(&output));
    }
}
