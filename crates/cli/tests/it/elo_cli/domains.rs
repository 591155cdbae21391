//! Domain ratings follow the plants of their domain: in a round of several plants, each
//! plant's category scores as that plant was caught or missed, while the overall and
//! verified ratings keep RFC-001's one outcome per review. Through `revcal elo record` of a
//! calibration record, on SQLite and on PostgreSQL when `REVCAL_TEST_POSTGRES` names a
//! server; the expected numbers are RFC-001's table and K-factors written out here.

use super::{CliAgent, json_out, keygen, revcal, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;

/// A calibration record of one reviewer and one trial per round: each round's plants as
/// (category, caught), the reviewer's findings on the caught ones.
fn record(rounds: &[&[(&str, bool)]]) -> Value {
    let mut records = Vec::new();
    let (mut plants_total, mut caught_total, mut flagged) = (0, 0, 0);
    let mut per_category: std::collections::BTreeMap<&str, (u64, u64)> = Default::default();
    for (index, plants) in rounds.iter().enumerate() {
        let file = format!("src/module_{}.rs", index + 1);
        let planted: Vec<Value> = plants
            .iter()
            .enumerate()
            .map(|(n, (category, _))| json!({"file": file, "line": 10 + 10 * n, "category": category}))
            .collect();
        let statuses: Vec<&str> =
            plants.iter().map(|(_, caught)| if *caught { "caught" } else { "missed" }).collect();
        let findings: Vec<Value> = plants
            .iter()
            .enumerate()
            .filter(|(_, (_, caught))| *caught)
            .map(|(n, (category, _))| json!({"file": file, "line": 10 + 10 * n, "body": format!("a {category} bug")}))
            .collect();
        for (category, caught) in *plants {
            let entry = per_category.entry(category).or_default();
            entry.0 += u64::from(*caught);
            entry.1 += 1;
        }
        plants_total += plants.len();
        let caught = plants.iter().filter(|(_, caught)| *caught).count();
        caught_total += caught;
        flagged += usize::from(caught > 0);
        records.push(json!({"round": index + 1, "plants": planted,
            "trials": [{"trial": 1, "statuses": statuses, "flagged": caught > 0, "findings": findings}]}));
    }
    let per_category: serde_json::Map<String, Value> = per_category
        .into_iter()
        .map(|(category, (caught, total))| (category.to_owned(), json!({"caught": caught, "total": total})))
        .collect();
    json!({
        "format": "revcal-calibration-record", "version": 1,
        "report_sha256": "cd".repeat(32), "commit": "9fceb02d0ae598e95dc970b74767f19372d61af8",
        "reviewer": "eight-plant-bot", "ts": 1_767_225_600_000u64, "rounds": records,
        "summary": {"planted_rounds": rounds.len(), "clean_rounds": 0, "reviews": rounds.len(),
                    "plants": plants_total, "caught": caught_total, "flagged_planted": flagged,
                    "flagged_clean": 0, "per_category": per_category}
    })
}

/// Trusts a new authority in `ledger`, records `record` with it for a new reviewer, and
/// returns the reviewer.
fn recorded(d: &Path, ledger: &str, record: &Value) -> CliAgent {
    let (authority, reviewer) = (keygen(d, "authority"), keygen(d, "reviewer"));
    let file = revcal_elo::KeyFile::parse(&std::fs::read_to_string(&authority.key).unwrap()).unwrap();
    std::fs::write(d.join("authority.pub"), serde_json::to_string(&file.public_only()).unwrap()).unwrap();
    let trusted =
        revcal(d, &["elo", "trust", &authority.id, "--key-file", "authority.pub", "--ledger", ledger]);
    assert_eq!(trusted.status.code(), Some(0), "{}", stderr(&trusted));
    std::fs::write(d.join("record.json"), record.to_string()).unwrap();
    let output = revcal(
        d,
        &[
            "elo",
            "record",
            "record.json",
            "--authority-key",
            authority.key.to_str().unwrap(),
            "--agent",
            &reviewer.id,
            "--agent-key",
            reviewer.key.to_str().unwrap(),
            "--ledger",
            ledger,
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    reviewer
}

/// The reviewer's (rating, reviews, accuracy) on a leaderboard.
fn standing(d: &Path, ledger: &str, reviewer: &CliAgent, extra: &[&str]) -> Option<(f64, u64, Option<f64>)> {
    let mut args = vec!["elo", "leaderboard", "--json", "--ledger", ledger];
    args.extend_from_slice(extra);
    let output = revcal(d, &args);
    assert_eq!(output.status.code(), Some(0), "{extra:?}: {}", stderr(&output));
    let board = json_out(&output);
    board
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["agent"] == reviewer.id.as_str())
        .map(|row| (row["elo"].as_f64().unwrap(), row["reviews"].as_u64().unwrap(), row["accuracy"].as_f64()))
}

const EIGHT: [&str; 8] = [
    "arithmetic",
    "boundary",
    "comparison",
    "logic",
    "null-handling",
    "off-by-one",
    "resource",
    "return-value",
];

fn eight_plants_two_caught(ledger: &str) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let plants: Vec<(&str, bool)> =
        EIGHT.iter().enumerate().map(|(n, category)| (*category, n < 2)).collect();
    let reviewer = recorded(d, ledger, &record(&[&plants]));
    // One review that flagged a change with bugs: +25 x 40/20 overall and verified.
    for scope in [&[][..], &["--outcomes", "verified"][..]] {
        assert_eq!(standing(d, ledger, &reviewer, scope), Some((1250.0, 1, Some(1.0))), "{ledger} {scope:?}");
    }
    // Each domain follows its own plant: +50 where caught, -30 x 40/20 = -60 where missed.
    for (category, caught) in &plants {
        let expected = if *caught { (1250.0, 1, Some(1.0)) } else { (1140.0, 1, Some(0.0)) };
        let found = standing(d, ledger, &reviewer, &["--domain", category]);
        assert_eq!(found, Some(expected), "{ledger}: domain {category}");
    }
    let check = revcal(d, &["elo", "check", "--ledger", ledger]);
    assert_eq!(check.status.code(), Some(0), "{ledger}: {}", stdout(&check));
}

fn one_category_twice(ledger: &str) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Two off-by-one plants, one caught, one missed, and a null-handling one missed: the
    // off-by-one domain scores each plant (+50, then -60 at K 40), null-handling -60.
    let plants = [("off-by-one", true), ("null-handling", false), ("off-by-one", false)];
    let reviewer = recorded(d, ledger, &record(&[&plants]));
    assert_eq!(standing(d, ledger, &reviewer, &["--outcomes", "verified"]), Some((1250.0, 1, Some(1.0))));
    assert_eq!(standing(d, ledger, &reviewer, &["--domain", "off-by-one"]), Some((1190.0, 2, Some(0.5))));
    assert_eq!(standing(d, ledger, &reviewer, &["--domain", "null-handling"]), Some((1140.0, 1, Some(0.0))));
    let check = revcal(d, &["elo", "check", "--ledger", ledger]);
    assert_eq!(check.status.code(), Some(0), "{ledger}: {}", stdout(&check));
}

#[test]
fn a_round_of_eight_plants_two_caught_moves_each_domain_by_its_own_plant_on_sqlite_and_postgres() {
    eight_plants_two_caught("ledger.sqlite");
    one_category_twice("ledger.sqlite");
    if let Some(database) = revcal_testpg::TestDatabase::create("cli_domains_eight") {
        eight_plants_two_caught(database.url());
    }
    if let Some(database) = revcal_testpg::TestDatabase::create("cli_domains_twice") {
        one_category_twice(database.url());
    }
}
