//! `revcal elo record`, `trust` and the scoped leaderboards as a user runs them: calibration
//! records written as JSON (the documented form the calibration side produces), keys from
//! `keygen`, real processes, an SQLite file and a PostgreSQL database when
//! `REVCAL_TEST_POSTGRES` names a server. The expected ratings are computed here from
//! RFC-001's table and K-factors.

use super::{CliAgent, json_out, keygen, revcal, revcal_stdin, stderr, stdout};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

const COMMIT: &str = "9fceb02d0ae598e95dc970b74767f19372d61af8";
const CALIBRATED_AT: u64 = 1_767_225_600_000;

/// The stand-in calibration: per round, the categories of its plants, or none for one of
/// the ten clean rounds.
const ROUNDS: [&[&str]; 24] = [
    &["off-by-one"],
    &["null-handling"],
    &[],
    &["boundary"],
    &["off-by-one"],
    &[],
    &["off-by-one", "null-handling"],
    &[],
    &["null-handling"],
    &["off-by-one"],
    &[],
    &["boundary"],
    &[],
    &["off-by-one"],
    &["null-handling"],
    &[],
    &["boundary", "off-by-one"],
    &[],
    &["null-handling"],
    &[],
    &["boundary"],
    &[],
    &["off-by-one"],
    &[],
];

/// The clean round (1-based among the clean ones) the careful reviewer raises an alarm on.
const FALSE_ALARM: usize = 3;

/// A calibration record as JSON, of the careful reviewer (catches every plant, flags one
/// clean change of ten) or of the rubber stamp (approves everything), with the report it
/// names.
fn calibration(careful: bool, reviewer: &str) -> (Value, String) {
    let mut rounds = Vec::new();
    let mut report_plants = Vec::new();
    let mut clean = 0;
    let (mut caught, mut flagged_planted, mut flagged_clean, mut plants_count) = (0, 0, 0, 0);
    let mut per_category: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for (index, categories) in ROUNDS.iter().enumerate() {
        let file = format!("src/module_{}.rs", index + 1);
        if categories.is_empty() {
            clean += 1;
            let alarm = careful && clean == FALSE_ALARM;
            flagged_clean += u64::from(alarm);
            let findings = if careful {
                json!([{"file": file, "line": if alarm { 42 } else { 300 }, "body": "suspicious"}])
            } else {
                json!([])
            };
            rounds.push(
                json!({"round": index + 1, "plants": [], "touched": [{"file": file, "first": 40, "last": 44}],
                               "trials": [{"trial": 1, "flagged": alarm, "findings": findings}]}),
            );
            continue;
        }
        let plants: Vec<Value> = categories
            .iter()
            .enumerate()
            .map(|(n, category)| json!({"file": file, "line": 10 + 20 * n, "category": category}))
            .collect();
        for (n, category) in categories.iter().enumerate() {
            plants_count += 1;
            let entry = per_category.entry(category).or_default();
            entry.1 += 1;
            if careful {
                entry.0 += 1;
                caught += 1;
            }
            report_plants.push(json!({"file": file, "line": 10 + 20 * n, "category": category,
                                      "operator": "swap", "status": if careful { "caught" } else { "missed" },
                                      "original": "a", "mutated": "b", "diff": "", "kind": "synthetic"}));
        }
        flagged_planted += u64::from(careful);
        let status = if careful { "caught" } else { "missed" };
        let findings: Vec<Value> = if careful {
            categories
                .iter()
                .enumerate()
                .map(|(n, category)| json!({"file": file, "line": 11 + 20 * n, "body": format!("{category} here")}))
                .collect()
        } else {
            Vec::new()
        };
        rounds.push(json!({"round": index + 1, "plants": plants,
                           "trials": [{"trial": 1, "statuses": vec![status; categories.len()],
                                       "flagged": careful, "findings": findings}]}));
    }
    let report = json!({"commit": COMMIT, "scorer": "judge", "recall": if careful { 1.0 } else { 0.0 },
                        "plants": report_plants, "reviewer": reviewer})
    .to_string();
    let per_category: BTreeMap<&str, Value> = per_category
        .into_iter()
        .map(|(category, (caught, total))| (category, json!({"caught": caught, "total": total})))
        .collect();
    let record = json!({
        "format": "revcal-calibration-record",
        "version": 1,
        "report_sha256": revcal_elo::report_sha256(&report).unwrap(),
        "commit": COMMIT,
        "repo": "github.com/acme/payments",
        "reviewer": reviewer,
        "ts": CALIBRATED_AT,
        "rounds": rounds,
        "summary": {"planted_rounds": 14, "clean_rounds": 10, "reviews": 24, "plants": plants_count,
                    "caught": caught, "flagged_planted": flagged_planted, "flagged_clean": flagged_clean,
                    "per_category": per_category},
    });
    (record, report)
}

/// RFC-001's rating of a sequence of decisive verdicts (`flagged` = REQUEST_CHANGES) against
/// incidents: start 1200; +25, -30, -5, +5; x K / 20 with K 40 before the 20th review.
fn rfc_rating(verdicts: impl IntoIterator<Item = (bool, bool)>) -> (f64, u64, f64) {
    let (mut rating, mut reviews, mut correct) = (1200.0, 0u64, 0u64);
    for (flagged, incident) in verdicts {
        let base = match (flagged, incident) {
            (true, true) => 25.0,
            (false, true) => -30.0,
            (true, false) => -5.0,
            (false, false) => 5.0,
        };
        rating += base * if reviews < 20 { 40.0 } else { 20.0 } / 20.0;
        reviews += 1;
        correct += u64::from(flagged == incident);
    }
    (rating, reviews, correct as f64 / reviews as f64)
}

/// The stand-in's verdicts in the rounds counting in `domain` (every round when `None`): a
/// planted round in its categories, a clean round in all of them.
fn verdicts(careful: bool, domain: Option<&str>) -> Vec<(bool, bool)> {
    let mut clean = 0;
    let mut verdicts = Vec::new();
    for categories in ROUNDS {
        let incident = !categories.is_empty();
        if !incident {
            clean += 1;
        }
        if domain.is_some_and(|domain| incident && !categories.contains(&domain)) {
            continue;
        }
        let flagged = careful && (incident || clean == FALSE_ALARM);
        verdicts.push((flagged, incident));
    }
    verdicts
}

fn board(entries: &Value) -> Vec<(String, f64, u64, f64)> {
    entries
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["agent"].as_str().unwrap().to_owned(),
                row["elo"].as_f64().unwrap(),
                row["reviews"].as_u64().unwrap(),
                row["accuracy"].as_f64().unwrap(),
            )
        })
        .collect()
}

struct Setup {
    authority: CliAgent,
    careful: CliAgent,
    rubber: CliAgent,
}

/// Keys, the two records and their reports in `d`, and the authority's public key file.
fn setup(d: &Path) -> Setup {
    let (authority, careful, rubber) = (keygen(d, "authority"), keygen(d, "careful"), keygen(d, "rubber"));
    let file = revcal_elo::KeyFile::parse(&std::fs::read_to_string(&authority.key).unwrap()).unwrap();
    std::fs::write(d.join("authority.pub"), serde_json::to_string(&file.public_only()).unwrap()).unwrap();
    for (name, is_careful) in [("careful", true), ("rubber", false)] {
        let (record, report) = calibration(is_careful, &format!("{name}-bot"));
        std::fs::write(d.join(format!("{name}.json")), serde_json::to_string_pretty(&record).unwrap())
            .unwrap();
        std::fs::write(d.join(format!("{name}-report.json")), report).unwrap();
    }
    Setup { authority, careful, rubber }
}

fn record_args<'a>(
    name: &'a str,
    report: &'a str,
    agent: &'a CliAgent,
    authority: &'a CliAgent,
    ledger: &'a str,
) -> Vec<&'a str> {
    vec![
        "elo",
        "record",
        name,
        "--report",
        report,
        "--authority-key",
        authority.key.to_str().unwrap(),
        "--agent",
        &agent.id,
        "--agent-key",
        agent.key.to_str().unwrap(),
        "--ledger",
        ledger,
        "--json",
    ]
}

fn two_stand_ins_on(d: &Path, ledger: &str, backend: &str) {
    let keys = setup(d);
    let trusted =
        revcal(d, &["elo", "trust", &keys.authority.id, "--key-file", "authority.pub", "--ledger", ledger]);
    assert_eq!(trusted.status.code(), Some(0), "{backend}: {}", stderr(&trusted));
    assert!(stdout(&trusted).contains(&format!("trusted {}", keys.authority.id)), "{}", stdout(&trusted));

    let output = revcal(
        d,
        &record_args("careful.json", "careful-report.json", &keys.careful, &keys.authority, ledger),
    );
    assert_eq!(output.status.code(), Some(0), "{backend}: {}", stderr(&output));
    let recorded = json_out(&output);
    assert_eq!((recorded["recorded"].clone(), recorded["verified"].clone()), (json!(true), json!(true)));
    assert_eq!(recorded["messages"], 72);
    assert_eq!(recorded["report_checked"], true);
    let (careful_rating, _, _) = rfc_rating(verdicts(true, None));
    assert_eq!(careful_rating, 1920.0, "the hand computation of docs/reputation.md");
    let changes = recorded["changes"].as_array().unwrap();
    let change = |outcomes: &str, domain: Value| {
        changes
            .iter()
            .find(|c| c["outcomes"] == outcomes && c["domain"] == domain)
            .unwrap_or_else(|| panic!("{recorded}"))
    };
    assert_eq!(change("all", Value::Null)["after"]["elo"], careful_rating);
    assert_eq!(change("all", Value::Null)["elo_delta"], careful_rating - 1200.0);
    assert_eq!(change("verified", Value::Null)["before"], Value::Null);
    assert_eq!(
        change("verified", json!("boundary"))["after"]["elo"],
        rfc_rating(verdicts(true, Some("boundary"))).0
    );
    assert_eq!(changes.len(), 5, "all, verified and three domains: {recorded}");

    let output =
        revcal(d, &record_args("rubber.json", "rubber-report.json", &keys.rubber, &keys.authority, ledger));
    assert_eq!(output.status.code(), Some(0), "{backend}: {}", stderr(&output));

    // Every leaderboard against RFC-001's numbers.
    let expect = |domain: Option<&str>| -> Vec<(String, f64, u64, f64)> {
        let mut rows: Vec<(String, f64, u64, f64)> = [(&keys.careful, true), (&keys.rubber, false)]
            .into_iter()
            .map(|(agent, careful)| {
                let (rating, reviews, accuracy) = rfc_rating(verdicts(careful, domain));
                (agent.id.clone(), rating, reviews, accuracy)
            })
            .collect();
        rows.sort_by(|a, b| b.1.total_cmp(&a.1));
        rows
    };
    let leaderboard = |extra: &[&str]| -> Value {
        let mut args = vec!["elo", "leaderboard", "--json", "--ledger", ledger];
        args.extend_from_slice(extra);
        let output = revcal(d, &args);
        assert_eq!(output.status.code(), Some(0), "{backend} {extra:?}: {}", stderr(&output));
        json_out(&output)
    };
    assert_eq!(board(&leaderboard(&[])), expect(None), "{backend}: all");
    assert_eq!(board(&leaderboard(&["--outcomes", "verified"])), expect(None), "{backend}: verified");
    assert_eq!(leaderboard(&["--outcomes", "reported"]), json!([]), "{backend}: nothing self-reported");
    for domain in ["off-by-one", "null-handling", "boundary"] {
        assert_eq!(board(&leaderboard(&["--domain", domain])), expect(Some(domain)), "{backend}: {domain}");
    }
    let human = stdout(&revcal(d, &["elo", "leaderboard", "--domain", "boundary", "--ledger", ledger]));
    assert!(human.starts_with("domain boundary: ratings from verified outcomes"), "{human}");
    let unknown = stdout(&revcal(d, &["elo", "leaderboard", "--domain", "race", "--ledger", ledger]));
    assert!(unknown.contains("boundary, null-handling, off-by-one"), "{unknown}");

    // The protocol's query with revcal's `domain`.
    let reply = revcal_stdin(
        d,
        &["elo", "handle", "--ledger", ledger],
        r#"{"type": "REVIEW_LEADERBOARD", "content": {"domain": "null-handling"}}"#,
    );
    assert_eq!(reply.status.code(), Some(0), "{}", stderr(&reply));
    let reply = json_out(&reply);
    assert_eq!(board(&reply["content"]["leaderboard"]), expect(Some("null-handling")));
    assert_eq!(reply["content"]["domain"], "null-handling");

    let check = revcal(d, &["elo", "check", "--ledger", ledger]);
    assert_eq!(check.status.code(), Some(0), "{backend}: {}", stdout(&check));

    // Receipts of verified outcomes name their calibration and verify offline.
    let receipts = revcal(d, &["elo", "receipts", &keys.careful.id, "--json", "--ledger", ledger]);
    std::fs::write(d.join("receipts.json"), &receipts.stdout).unwrap();
    let receipts = json_out(&receipts);
    let careful_report = std::fs::read_to_string(d.join("careful-report.json")).unwrap();
    let hash = revcal_elo::report_sha256(&careful_report).unwrap();
    assert_eq!(receipts.as_array().unwrap().len(), 24);
    assert_eq!(receipts[6]["calibration"]["report_sha256"], hash);
    assert_eq!(receipts[6]["calibration"]["round"], 7);
    assert_eq!(receipts[6]["calibration"]["domains"], json!(["null-handling", "off-by-one"]));
    assert_eq!(receipts[6]["calibration"]["verified"], true);
    let issuer = revcal(d, &["elo", "issuer-key", "--out", "ledger.pub", "--ledger", ledger]);
    assert_eq!(issuer.status.code(), Some(0));
    let verified = revcal(d, &["elo", "verify-receipt", "receipts.json", "--issuer-key", "ledger.pub"]);
    assert_eq!(verified.status.code(), Some(0), "{}", stdout(&verified));
    let text = stdout(&verified);
    assert!(
        text.contains(&format!("receipts.json[6]: valid (caught_bug REQUEST_CHANGES +50 for {}; verified calibration {} round 7 trial 1 by {})", keys.careful.id, &hash[..16], keys.authority.id)),
        "{text}"
    );
    // A receipt claiming verification it was not issued with fails.
    let altered = std::fs::read_to_string(d.join("receipts.json")).unwrap().replacen(
        "\"verified\": true",
        "\"verified\": false",
        1,
    );
    std::fs::write(d.join("altered.json"), altered).unwrap();
    let refused = revcal(d, &["elo", "verify-receipt", "altered.json", "--issuer-key", "ledger.pub"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
}

#[test]
fn two_stand_in_reviewers_recorded_give_the_rfc_ratings_on_sqlite_and_postgres() {
    let dir = tempfile::tempdir().unwrap();
    two_stand_ins_on(dir.path(), "ledger.sqlite", "sqlite");
    if let Some(database) = revcal_testpg::TestDatabase::create("cli_record_stand_ins") {
        let dir = tempfile::tempdir().unwrap();
        two_stand_ins_on(dir.path(), database.url(), "postgres");
    }
}

#[test]
fn a_tampered_record_is_refused_and_a_calibration_is_recorded_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = setup(d);
    let (record, _) = calibration(true, "careful-bot");
    let run = |name: &str, report: &str| {
        revcal(d, &record_args(name, report, &keys.careful, &keys.authority, "ledger.sqlite"))
    };

    // A status flipped: the trial's `flagged` no longer follows from it.
    let mut flipped = record.clone();
    flipped["rounds"][0]["trials"][0]["statuses"][0] = json!("missed");
    std::fs::write(d.join("flipped.json"), flipped.to_string()).unwrap();
    let output = run("flipped.json", "careful-report.json");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains(
            "flipped.json: `rounds[0].trials[0].flagged`: the record states true, but its rounds give false"
        ),
        "{message}"
    );
    assert!(message.contains("nothing was recorded"), "{message}");
    assert!(!d.join("ledger.sqlite").exists(), "refused before the ledger is opened");

    // Flipped with every figure made to agree: the report tells.
    let less = |value: &Value| json!(value.as_u64().unwrap() - 1);
    flipped["rounds"][0]["trials"][0]["flagged"] = json!(false);
    flipped["summary"]["caught"] = less(&record["summary"]["caught"]);
    flipped["summary"]["flagged_planted"] = less(&record["summary"]["flagged_planted"]);
    flipped["summary"]["per_category"]["off-by-one"]["caught"] =
        less(&record["summary"]["per_category"]["off-by-one"]["caught"]);
    std::fs::write(d.join("consistent.json"), flipped.to_string()).unwrap();
    let output = run("consistent.json", "careful-report.json");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("`rounds[0].plants[0]`: plant src/module_1.rs:10 (off-by-one) is caught in 0 trial(s) here and in 1 in the report"), "{}", stderr(&output));

    // The hash changed (a record claiming another report), or the report changed.
    let mut rehashed = record.clone();
    rehashed["report_sha256"] = json!("0".repeat(64));
    std::fs::write(d.join("rehashed.json"), rehashed.to_string()).unwrap();
    let output = run("rehashed.json", "careful-report.json");
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("`report_sha256`: the record names report 0000000000000000000000000000000000000000000000000000000000000000, but the report given hashes to"), "{}", stderr(&output));
    let output = run("careful.json", "rubber-report.json");
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("(against the report rubber-report.json)"), "{}", stderr(&output));
    assert!(!d.join("ledger.sqlite").exists());

    // Recorded once; a second time is refused and stores nothing.
    let first = run("careful.json", "careful-report.json");
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let board = stdout(&revcal(d, &["elo", "leaderboard", "--ledger", "ledger.sqlite", "--json"]));
    let second = run("careful.json", "careful-report.json");
    assert_eq!(second.status.code(), Some(1), "{}", stdout(&second));
    let refusal = json_out(&second);
    assert_eq!(refusal["recorded"], false);
    assert_eq!(refusal["refusals"].as_array().unwrap().len(), 72);
    assert_eq!(refusal["refusals"][0]["code"], "replayed");
    let human = revcal(
        d,
        &[
            "elo",
            "record",
            "careful.json",
            "--authority-key",
            keys.authority.key.to_str().unwrap(),
            "--agent",
            &keys.careful.id,
            "--agent-key",
            keys.careful.key.to_str().unwrap(),
            "--ledger",
            "ledger.sqlite",
        ],
    );
    assert_eq!(human.status.code(), Some(1));
    let text = stdout(&human);
    assert!(
        text.starts_with(&format!(
            "refused: calibration {} is already recorded in ledger.sqlite",
            &record["report_sha256"].as_str().unwrap()[..16]
        )),
        "{text}"
    );
    assert!(text.contains("and 67 more (`--json` lists them all)"), "{text}");
    assert_eq!(stdout(&revcal(d, &["elo", "leaderboard", "--ledger", "ledger.sqlite", "--json"])), board);

    // Dated otherwise (other message ids), the same rounds are still refused.
    let mut later = record.clone();
    later["ts"] = json!(CALIBRATED_AT + 60_000);
    std::fs::write(d.join("later.json"), later.to_string()).unwrap();
    let output = run("later.json", "careful-report.json");
    assert_eq!(output.status.code(), Some(1));
    let refusal = json_out(&output);
    assert_eq!(refusal["refusals"][0]["code"], "calibration_replayed", "{refusal}");
    assert_eq!(refusal["refusals"][0]["type"], "REVIEW_OUTCOME");
    assert_eq!(stdout(&revcal(d, &["elo", "leaderboard", "--ledger", "ledger.sqlite", "--json"])), board);
}

#[test]
fn an_untrusted_authority_records_self_reported_outcomes_until_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = setup(d);
    let mut args =
        record_args("careful.json", "careful-report.json", &keys.careful, &keys.authority, "ledger.sqlite");
    args.pop();
    let output = revcal(d, &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains(&format!("outcomes self-reported: this ledger does not trust {}", keys.authority.id)),
        "{text}"
    );
    assert!(text.contains("report careful-report.json matches"), "{text}");
    let row = |name: &str| -> Vec<String> {
        let line = text.lines().find(|line| line.starts_with(name)).unwrap_or_else(|| panic!("{text}"));
        line.split_whitespace().map(str::to_owned).collect()
    };
    assert_eq!(row("reported"), ["reported", "-", "1920", "+720", "24"], "{text}");
    assert_eq!(row("all"), ["all", "-", "1920", "+720", "24"], "{text}");
    assert!(!text.contains("domain"), "no domain without verification: {text}");
    let board = |outcomes: &str| {
        json_out(&revcal(
            d,
            &["elo", "leaderboard", "--outcomes", outcomes, "--json", "--ledger", "ledger.sqlite"],
        ))
    };
    assert_eq!(board("verified"), json!([]));
    assert_eq!(board("reported")[0]["elo"], 1920.0);

    let list = revcal(d, &["elo", "trust", "--list", "--ledger", "ledger.sqlite"]);
    assert!(stdout(&list).contains("trusts no calibrating authority"), "{}", stdout(&list));
    // The key file must be the agent's.
    let wrong = revcal(
        d,
        &["elo", "trust", &keys.careful.id, "--key-file", "authority.pub", "--ledger", "ledger.sqlite"],
    );
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        stderr(&wrong).contains(&format!("is the key of {}, not of {}", keys.authority.id, keys.careful.id)),
        "{}",
        stderr(&wrong)
    );
    let trusted = revcal(
        d,
        &["elo", "trust", &keys.authority.id, "--key-file", "authority.pub", "--ledger", "ledger.sqlite"],
    );
    assert!(stdout(&trusted).contains("(24 verified scored reviews now)"), "{}", stdout(&trusted));
    assert_eq!(board("verified")[0]["elo"], 1920.0);
    assert_eq!(board("reported"), json!([]));
    let list = json_out(&revcal(d, &["elo", "trust", "--list", "--json", "--ledger", "ledger.sqlite"]));
    assert_eq!(list["authorities"][0]["agent"], keys.authority.id.as_str());
    let revoked = revcal(d, &["elo", "trust", &keys.authority.id, "--revoke", "--ledger", "ledger.sqlite"]);
    assert!(stdout(&revoked).contains("no longer trusted"), "{}", stdout(&revoked));
    assert_eq!(board("verified"), json!([]));
    assert_eq!(revcal(d, &["elo", "check", "--ledger", "ledger.sqlite"]).status.code(), Some(0));
}

#[test]
fn record_and_leaderboard_refuse_wrong_usage() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = setup(d);
    // --agent must be the key's.
    let mut args =
        record_args("careful.json", "careful-report.json", &keys.rubber, &keys.authority, "ledger.sqlite");
    args[8] = &keys.careful.id;
    let output = revcal(d, &args);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output)
            .contains(&format!("is the key of {}, not of --agent {}", keys.rubber.id, keys.careful.id)),
        "{}",
        stderr(&output)
    );
    // The authority cannot review its own calibration.
    let output = revcal(
        d,
        &record_args(
            "careful.json",
            "careful-report.json",
            &keys.authority,
            &keys.authority,
            "ledger.sqlite",
        ),
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("the calibrating authority and the reviewer are the same key"),
        "{}",
        stderr(&output)
    );
    // A public key cannot sign.
    let output = revcal(
        d,
        &[
            "elo",
            "record",
            "careful.json",
            "--authority-key",
            "authority.pub",
            "--agent",
            &keys.careful.id,
            "--agent-key",
            keys.careful.key.to_str().unwrap(),
            "--ledger",
            "ledger.sqlite",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("authority.pub: key file has no `secret_key`"), "{}", stderr(&output));
    assert!(!d.join("ledger.sqlite").exists());
    // A domain's ratings are verified ones.
    let output = revcal(
        d,
        &[
            "elo",
            "leaderboard",
            "--domain",
            "off-by-one",
            "--outcomes",
            "reported",
            "--ledger",
            "ledger.sqlite",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("a domain's ratings count verified outcomes only"),
        "{}",
        stderr(&output)
    );
}
