//! The acceptance scenario of verified reputation from a real calibration: a real git
//! repository, two stand-in reviewers run by `revcal calibrate` with ten clean rounds (one
//! catches every plant and raises a false alarm on exactly one clean change, the other
//! approves everything), recorded with `calibrate --record-to` and `elo record REPORT.json`,
//! and the ledger's ratings, overall, verified and per domain, compared with RFC-001's table
//! and K-factors (`rfc_rating`, the helper the record tests use) on SQLite and PostgreSQL.

use super::verified::{board, rfc_rating};
use super::{CliAgent, json_out, keygen, revcal, revcal_command, stderr, stdout};
use crate::reviewer_user::as_reviewer_user;
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The module under review: four lines that take a plant, and ten comparisons of names
/// (the only sites for a neutral edit), one of them between `alarm_` names.
const PRICING: &str = "\
def with_tax(price, tax):
    return price + tax


def scaled(total, rate):
    return total * rate


def last(items, count):
    return items[count - 1]


def span(start, stop):
    return range(start, stop + 1)


def below(a, b):
    return a < b


def above(a, b):
    return a > b


def at_most(a, b):
    return a <= b


def at_least(a, b):
    return a >= b


def same(a, b):
    return a == b


def differ(a, b):
    return a != b


def alarm(alarm_low, alarm_high):
    return alarm_low < alarm_high


def under_limit(x, limit):
    return x < limit


def over_floor(x, floor):
    return floor <= x


def matches(key, wanted):
    return key == wanted
";

/// The line of the comparison the careful reviewer raises its false alarm on.
const ALARM_LINE: u32 = 42;

const PLANTS: &str = "\
- {file: shop/pricing.py, line: 2, original: '    return price + tax', mutated: '    return price - tax', category: arithmetic}
- {file: shop/pricing.py, line: 6, original: '    return total * rate', mutated: '    return total / rate', category: arithmetic}
- {file: shop/pricing.py, line: 10, original: '    return items[count - 1]', mutated: '    return items[count]', category: off-by-one}
- {file: shop/pricing.py, line: 14, original: '    return range(start, stop + 1)', mutated: '    return range(start, stop)', category: off-by-one}
";

/// The careful reviewer: it knows what `shop/pricing.py` should say (the file it is given,
/// as a reviewer who wrote its specification would) and flags every line of the checkout
/// that says otherwise, except a comparison written mirrored, which it lets pass unless it
/// compares `alarm_` names.
const CAREFUL: &str = r#"
import json, sys
expected = open(sys.argv[1]).read().splitlines()
findings = []
for line, (new, old) in enumerate(zip(open("shop/pricing.py").read().splitlines(), expected), 1):
    if new != old:
        mirrored = sorted(new.replace("<", ">").split()) == sorted(old.replace("<", ">").split())
        if not mirrored or "alarm" in new:
            findings.append({"file": "shop/pricing.py", "line": line, "message": "wrong: " + new.strip()})
print(json.dumps({"findings": findings}))
"#;

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// The repository, the plants file and the careful reviewer's script in `d`.
fn project(d: &Path) {
    let repo = d.join("repo");
    std::fs::create_dir_all(repo.join("shop")).unwrap();
    std::fs::write(repo.join("README.md"), "shop\n").unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "readme"]);
    std::fs::write(repo.join("shop/pricing.py"), PRICING).unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "pricing"]);
    std::fs::write(d.join("plants.yaml"), PLANTS).unwrap();
    std::fs::write(d.join("careful.py"), CAREFUL).unwrap();
    std::fs::write(d.join("pricing.expected"), PRICING).unwrap();
    assert_eq!(PRICING.lines().nth(ALARM_LINE as usize - 1), Some("    return alarm_low < alarm_high"));
}

/// `revcal calibrate` of `reviewer` with ten clean rounds, one plant per round, the JSON
/// report saved as `name-report.json`; `extra` adds flags (--record-to ...) and `key`, the
/// authority's key file's text, goes on standard input (`--authority-key -`), the run then
/// made as a reviewer's user would make it (crate::reviewer_user).
fn calibrate(
    d: &Path,
    reviewer: &str,
    name: &str,
    extra: &[&str],
    key: Option<&str>,
) -> (Option<i32>, Value, String) {
    let report = format!("{name}-report.json");
    let mut args = vec![
        "calibrate",
        "-C",
        "repo",
        "--review-cmd",
        reviewer,
        "--plants-file",
        "plants.yaml",
        "--one-at-a-time",
        "--scorer",
        "string",
        "--clean-rounds",
        "10",
        "--quiet",
        "--jobs",
        "2",
        "--save-baseline",
        &report,
    ];
    args.extend_from_slice(extra);
    let output = match key {
        None => revcal(d, &args),
        Some(key) => {
            let mut command = revcal_command(d, &args);
            command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
            let _hand_back = as_reviewer_user(&mut command, d);
            let mut child = command.spawn().unwrap();
            child.stdin.take().unwrap().write_all(key.as_bytes()).unwrap();
            child.wait_with_output().unwrap()
        }
    };
    let text = std::fs::read_to_string(d.join(&report))
        .unwrap_or_else(|_| panic!("{name}: no report: {}{}", stdout(&output), stderr(&output)));
    (
        output.status.code(),
        serde_json::from_str(&text).unwrap(),
        format!("{}{}", stdout(&output), stderr(&output)),
    )
}

/// Wilson's 95% interval of a mean `p` over `n` samples, written out.
fn wilson(p: f64, n: f64) -> (f64, f64) {
    let z: f64 = 1.959_963_984_540_054;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
    (centre - half, centre + half)
}

/// The verdicts (flagged, incident) of a stand-in in the report's round order, from what is
/// known of the project: the careful reviewer flags every planted round and, of the clean
/// ones, the one whose edit is on the alarm line; the rubber stamp flags nothing. Only the
/// rounds counting in `domain` (a planted round in its category, a clean one in all).
fn verdicts(report: &Value, careful: bool, domain: Option<&str>) -> Vec<(bool, bool)> {
    let mut verdicts = Vec::new();
    for round in report["rounds"].as_array().unwrap() {
        let plants = round["plants"].as_array().cloned().unwrap_or_default();
        let incident = !plants.is_empty();
        if let Some(domain) = domain
            && incident
            && !plants.iter().any(|plant| plant["category"] == domain)
        {
            continue;
        }
        let alarm_line = round["touched"][0]["first"] == ALARM_LINE;
        verdicts.push((careful && (incident || alarm_line), incident));
    }
    verdicts
}

fn scenario(d: &Path, ledger: &str, backend: &str) {
    project(d);
    let (authority, careful, rubber): (CliAgent, CliAgent, CliAgent) =
        (keygen(d, "authority"), keygen(d, "careful"), keygen(d, "rubber"));
    let file = revcal_elo::KeyFile::parse(&std::fs::read_to_string(&authority.key).unwrap()).unwrap();
    std::fs::write(d.join("authority.pub"), serde_json::to_string(&file.public_only()).unwrap()).unwrap();
    let trusted =
        revcal(d, &["elo", "trust", &authority.id, "--key-file", "authority.pub", "--ledger", ledger]);
    assert_eq!(trusted.status.code(), Some(0), "{backend}: {}", stderr(&trusted));

    // The careful reviewer, recorded by the calibration itself.
    let careful_cmd =
        format!("python3 {} {}", d.join("careful.py").display(), d.join("pricing.expected").display());
    // The authority's key on standard input: a file's path on the command line is one the
    // reviewer could read, and is refused.
    let authority_text = std::fs::read_to_string(&authority.key).unwrap();
    let record_to = [
        "--record-to",
        ledger,
        "--authority-key",
        "-",
        "--agent",
        &careful.id,
        "--agent-key",
        careful.key.to_str().unwrap(),
    ];
    let (code, report, output) = calibrate(d, &careful_cmd, "careful", &record_to, Some(&authority_text));
    assert_eq!(code, Some(0), "{backend}: {output}");
    assert!(output.contains("recorded calibration"), "{backend}: {output}");
    assert!(output.contains("flagged 4 of 4 planted and 1 of 10 clean reviews"), "{backend}: {output}");
    assert_eq!((report["caught"].clone(), report["total"].clone()), (json!(4), json!(4)), "{report}");
    assert_eq!(report["cleanRounds"], json!({"requested": 10, "changes": 10}));
    assert_eq!((report["falseAlarms"].clone(), report["cleanReviews"].clone()), (json!(1), json!(10)));
    assert_eq!(report["falseAlarmRate"], 0.1);
    let (low, high) = wilson(0.1, 10.0);
    assert!((report["falseAlarmInterval"]["low"].as_f64().unwrap() - low).abs() < 1e-9, "{report}");
    assert!((report["falseAlarmInterval"]["high"].as_f64().unwrap() - high).abs() < 1e-9, "{report}");
    assert!(output.contains("false alarms 0.10  1/10 clean changes flagged  (95% CI 0.02-0.40)"), "{output}");
    let rounds = report["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 14);
    let clean_lines: Vec<u64> =
        rounds[4..].iter().map(|r| r["touched"][0]["first"].as_u64().unwrap()).collect();
    let mut sorted = clean_lines.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, [18, 22, 26, 30, 34, 38, 42, 46, 50, 54], "every comparison, each once");
    let flagged: Vec<bool> =
        rounds[4..].iter().map(|r| r["trials"][0]["flagged"].as_bool().unwrap()).collect();
    assert_eq!(flagged.iter().filter(|f| **f).count(), 1);
    let alarm = rounds.iter().find(|r| r["touched"][0]["first"] == ALARM_LINE).unwrap();
    assert_eq!(alarm["trials"][0]["flagged"], true, "{alarm}");
    assert_eq!(alarm["mutated"], "    return alarm_high > alarm_low");

    // The rubber stamp, calibrated alone and recorded from its report.
    let (code, rubber_report, output) = calibrate(d, "echo LGTM", "rubber", &[], None);
    assert_eq!(code, Some(2), "{backend}: recall 0 fails the gate: {output}");
    assert_eq!(
        (rubber_report["falseAlarms"].clone(), rubber_report["falseAlarmRate"].clone()),
        (json!(0), json!(0.0))
    );
    let record = |name: &str, agent: &CliAgent| {
        revcal(
            d,
            &[
                "elo",
                "record",
                name,
                "--authority-key",
                authority.key.to_str().unwrap(),
                "--agent",
                &agent.id,
                "--agent-key",
                agent.key.to_str().unwrap(),
                "--ledger",
                ledger,
                "--json",
            ],
        )
    };
    let recorded = record("rubber-report.json", &rubber);
    assert_eq!(recorded.status.code(), Some(0), "{backend}: {}{}", stdout(&recorded), stderr(&recorded));
    let recorded = json_out(&recorded);
    assert_eq!((recorded["verified"].clone(), recorded["messages"].clone()), (json!(true), json!(42)));
    let rubber_text = std::fs::read_to_string(d.join("rubber-report.json")).unwrap();
    assert_eq!(recorded["report_sha256"], revcal_elo::report_sha256(&rubber_text).unwrap());

    // Every standing against RFC-001's numbers.
    let expect = |domain: Option<&str>| -> Vec<(String, f64, u64, f64)> {
        let mut rows: Vec<(String, f64, u64, f64)> =
            [(&careful, &report, true), (&rubber, &rubber_report, false)]
                .into_iter()
                .map(|(agent, report, is_careful)| {
                    let (rating, reviews, accuracy) = rfc_rating(verdicts(report, is_careful, domain));
                    (agent.id.clone(), rating, reviews, accuracy)
                })
                .collect();
        rows.sort_by(|a, b| b.1.total_cmp(&a.1));
        rows
    };
    assert_eq!(expect(None)[0].1, 1200.0 + 4.0 * 50.0 + 9.0 * 10.0 - 10.0, "the hand computation");
    let leaderboard = |extra: &[&str]| -> Value {
        let mut args = vec!["elo", "leaderboard", "--json", "--ledger", ledger];
        args.extend_from_slice(extra);
        let output = revcal(d, &args);
        assert_eq!(output.status.code(), Some(0), "{backend} {extra:?}: {}", stderr(&output));
        json_out(&output)
    };
    assert_eq!(board(&leaderboard(&[])), expect(None), "{backend}: all");
    assert_eq!(board(&leaderboard(&["--outcomes", "verified"])), expect(None), "{backend}: verified");
    for domain in ["arithmetic", "off-by-one"] {
        assert_eq!(board(&leaderboard(&["--domain", domain])), expect(Some(domain)), "{backend}: {domain}");
    }
    let check = revcal(d, &["elo", "check", "--ledger", ledger]);
    assert_eq!(check.status.code(), Some(0), "{backend}: {}", stdout(&check));

    // The careful calibration counts once: its report recorded again is refused.
    let again = record("careful-report.json", &careful);
    assert_eq!(again.status.code(), Some(1), "{backend}: {}", stdout(&again));
    assert_eq!(json_out(&again)["recorded"], false);

    // Tampered reports are refused before the ledger: a plant's status flipped, a clean
    // round's flag flipped, a false alarm hidden from the figures.
    let careful_text = std::fs::read_to_string(d.join("careful-report.json")).unwrap();
    let tampered = [
        ("status", rubber_text.replacen("\"status\": \"missed\"", "\"status\": \"caught\"", 1), &rubber),
        ("flagged", careful_text.replacen("\"flagged\": false", "\"flagged\": true", 1), &careful),
        ("falseAlarms", careful_text.replacen("\"falseAlarms\": 1", "\"falseAlarms\": 0", 1), &careful),
    ];
    for (what, text, agent) in tampered {
        std::fs::write(d.join("tampered.json"), text).unwrap();
        let refused = record("tampered.json", agent);
        assert_eq!(refused.status.code(), Some(1), "{backend} {what}: {}", stdout(&refused));
        let said = stderr(&refused);
        assert!(said.contains("nothing was recorded"), "{backend} {what}: {said}");
    }
    // The same run again with --record-to: the same report, refused by the ledger as the
    // same calibration; the run exits 1 with its report written.
    std::fs::remove_file(d.join("careful-report.json")).unwrap();
    let (code, again, output) = calibrate(d, &careful_cmd, "careful", &record_to, Some(&authority_text));
    assert_eq!(code, Some(1), "{backend}: {output}");
    assert_eq!(again, report, "the same report, byte for byte as JSON");
    assert!(output.contains("is already recorded"), "{backend}: {output}");
    assert!(
        output.contains("the calibration was not recorded in the ledger (--record-to)"),
        "{backend}: {output}"
    );
    assert_eq!(board(&leaderboard(&[])), expect(None), "{backend}: nothing changed");
}

#[test]
fn two_calibrated_stand_ins_recorded_give_the_rfc_ratings_on_sqlite_and_postgres() {
    let dir = tempfile::tempdir().unwrap();
    scenario(dir.path(), "ledger.sqlite", "sqlite");
    if let Some(database) = revcal_testpg::TestDatabase::create("cli_calibrated_stand_ins") {
        let dir = tempfile::tempdir().unwrap();
        scenario(dir.path(), database.url(), "postgres");
    }
}
