//! The rules that must hold: validation with the field named, signatures and identity,
//! replays, and concurrent writers.

use crate::util::{TS, agent, outcome, request, review};
use revcal_elo::{
    Ledger, LedgerLocation, LineOutcome, MessageError, ReviewVerdict, SignedMessage, sign_value,
};
use serde_json::{Value, json};

fn reject(text: &str) -> MessageError {
    SignedMessage::parse(text).expect_err(text)
}

/// A review as JSON, signed by agent 2, after `edit` changed it.
fn signed_review_with(edit: impl FnOnce(&mut Value)) -> Result<SignedMessage, MessageError> {
    let author = agent(1);
    let target = request(&author, "PR 1");
    let mut value = json!({
        "type": "REVIEW", "to": "#review", "ts": TS,
        "content": {"request_id": target.id, "verdict": "APPROVE",
                    "comments": [{"file": "a.rs", "line": 3, "body": "ok"}]}
    });
    edit(&mut value);
    sign_value(value, &agent(2))
}

#[test]
fn each_bad_field_is_rejected_and_named() {
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(&str, Edit)> = vec![
        ("type", Box::new(|v| v["type"] = json!("REVIEW_PLEASE"))),
        ("content.verdict", Box::new(|v| v["content"]["verdict"] = json!("LGTM"))),
        (
            "content.request_id",
            Box::new(|v| drop(v["content"].as_object_mut().unwrap().remove("request_id"))),
        ),
        ("content.verdict", Box::new(|v| drop(v["content"].as_object_mut().unwrap().remove("verdict")))),
        ("content.comments[0].line", Box::new(|v| v["content"]["comments"][0]["line"] = json!(0))),
        ("content.comments[0].line", Box::new(|v| v["content"]["comments"][0]["line"] = json!(-4))),
        ("content.comments[0].line", Box::new(|v| v["content"]["comments"][0]["line"] = json!(2.5))),
        ("content.comments[0].body", Box::new(|v| v["content"]["comments"][0]["body"] = json!("  "))),
        (
            "content.comments[0].file",
            Box::new(|v| drop(v["content"]["comments"][0].as_object_mut().unwrap().remove("file"))),
        ),
        ("to", Box::new(|v| v["to"] = json!("@0123456789abcdef"))),
        ("ts", Box::new(|v| v["ts"] = json!(-1))),
        ("ts", Box::new(|v| drop(v.as_object_mut().unwrap().remove("ts")))),
        ("content.extra", Box::new(|v| v["content"]["extra"] = json!(1))),
        ("content", Box::new(|v| v["content"] = json!([]))),
        ("content.name", Box::new(|v| v["content"]["name"] = json!("bot\u{202e}nimda"))),
        ("content.name", Box::new(|v| v["content"]["name"] = json!("x".repeat(65)))),
        ("content.name", Box::new(|v| v["content"]["name"] = json!(7))),
    ];
    for (field, edit) in cases {
        let error = signed_review_with(edit).expect_err(field);
        assert_eq!(error.field().as_deref(), Some(field), "{error}");
        assert!(error.to_string().contains(&format!("`{field}`")), "{error}");
    }
    assert!(signed_review_with(|_| {}).is_ok());
}

#[test]
fn requests_must_go_to_the_review_channel_and_outcomes_need_details() {
    let error = sign_value(
        json!({"type": "REVIEW_REQUEST", "to": "#general", "ts": TS,
        "content": {"repo": "r", "change": "c"}}),
        &agent(1),
    )
    .unwrap_err();
    assert_eq!(error.field().as_deref(), Some("to"));
    let error = sign_value(
        json!({"type": "REVIEW_REQUEST", "to": "#review", "ts": TS,
        "content": {"repo": "r"}}),
        &agent(1),
    )
    .unwrap_err();
    // A repository alone names no change: the request is refused at its first naming field.
    assert_eq!(error.field().as_deref(), Some("content.title"));
    // Requests keep extension fields.
    let ok = sign_value(
        json!({"type": "REVIEW_REQUEST", "to": "#review", "ts": TS,
        "content": {"repo": "r", "change": "c", "labels": ["payments"]}}),
        &agent(1),
    )
    .unwrap();
    assert!(ok.canonical().contains(r#""labels":["payments"]"#));
    let id = request(&agent(1), "x").id;
    let error = sign_value(
        json!({"type": "REVIEW_OUTCOME", "to": "#review", "ts": TS,
        "content": {"request_id": id, "merged": true, "incident": true}}),
        &agent(1),
    )
    .unwrap_err();
    assert_eq!(error.field().as_deref(), Some("content.incident_details"));
    let error = sign_value(
        json!({"type": "REVIEW_OUTCOME", "to": "#review", "ts": TS,
        "content": {"request_id": id, "merged": "yes", "incident": false}}),
        &agent(1),
    )
    .unwrap_err();
    assert_eq!(error.field().as_deref(), Some("content.merged"));
}

#[test]
fn bad_json_is_reported_with_its_position() {
    match reject("{\"type\": \"REVIEW\",\n  \"to\": }") {
        MessageError::Json { line, column, .. } => assert_eq!((line, column), (2, 9)),
        other => panic!("{other}"),
    }
    assert!(matches!(reject(r#"{"type":"REVIEW","type":"REVIEW"}"#), MessageError::Json { .. }));
    assert!(matches!(reject("[1, 2]"), MessageError::Field(_)));
    assert!(matches!(reject("\u{0}\u{1}binary"), MessageError::Json { .. }));
}

fn as_value(message: &SignedMessage) -> Value {
    serde_json::from_str(message.canonical()).unwrap()
}

#[test]
fn forged_and_altered_messages_are_rejected() {
    let author = agent(1);
    let reviewer = agent(2);
    let genuine = review(&reviewer, &request(&author, "PR 9"), ReviewVerdict::Approve);

    // Altered after signing: the verdict.
    let mut altered = as_value(&genuine);
    altered["content"]["verdict"] = json!("REQUEST_CHANGES");
    assert_eq!(SignedMessage::from_value(altered).unwrap_err(), MessageError::BadSignature);

    // Altered after signing: the timestamp.
    let mut altered = as_value(&genuine);
    altered["ts"] = json!(TS + 1);
    assert_eq!(SignedMessage::from_value(altered).unwrap_err(), MessageError::BadSignature);

    // A forged signature: 64 bytes that are not a signature.
    let mut forged = as_value(&genuine);
    forged["sig"] = json!(revcal_elo::SignatureBytes([7; 64]).to_base64());
    assert_eq!(SignedMessage::from_value(forged).unwrap_err(), MessageError::BadSignature);

    // A signature from another key over the same bytes (pubkey still the reviewer's).
    let mut other_key = as_value(&genuine);
    other_key["sig"] = json!(agent(9).sign(genuine.signed_bytes()).to_base64());
    assert_eq!(SignedMessage::from_value(other_key).unwrap_err(), MessageError::BadSignature);

    // An id that does not match the key: `from` claims the author while the reviewer signs.
    let mut impostor = as_value(&genuine);
    impostor["from"] = json!(author.agent_id());
    let object = impostor.as_object_mut().unwrap();
    object.remove("sig");
    let bytes = serde_json_canonicalizer::to_vec(&impostor).unwrap();
    impostor["sig"] = json!(reviewer.sign(&bytes).to_base64());
    match SignedMessage::from_value(impostor).unwrap_err() {
        MessageError::WrongSender { from, expected } => {
            assert_eq!((from, expected), (author.agent_id(), reviewer.agent_id()));
        }
        other => panic!("{other}"),
    }
    // `sign` refuses a different `from`.
    let mut claim = as_value(&genuine);
    let object = claim.as_object_mut().unwrap();
    object.remove("sig");
    object.remove("pubkey");
    claim["from"] = json!(author.agent_id());
    assert!(matches!(sign_value(claim, &reviewer).unwrap_err(), MessageError::WrongSender { .. }));

    // Unsigned.
    let mut unsigned = as_value(&genuine);
    unsigned.as_object_mut().unwrap().remove("sig");
    assert_eq!(SignedMessage::from_value(unsigned).unwrap_err(), MessageError::Unsigned);

    // Whitespace and key order do not matter: same id.
    let pretty = serde_json::to_string_pretty(&as_value(&genuine)).unwrap();
    assert_eq!(SignedMessage::parse(&pretty).unwrap().id, genuine.id);
}

#[test]
fn nothing_invalid_changes_a_rating_in_the_ledger() {
    let author = agent(1);
    let reviewer = agent(2);
    let target = request(&author, "PR 1");
    let verdict = review(&reviewer, &target, ReviewVerdict::Approve);
    let closed = outcome(&author, &target, false);
    let mut forged = as_value(&closed);
    forged["content"]["incident"] = json!(true);
    forged["content"]["incident_details"] = json!("made up");
    let forged = serde_json::to_string(&forged).unwrap();

    let lines =
        [target.canonical(), verdict.canonical(), &forged, "", closed.canonical(), closed.canonical(), "{"];
    for backend in crate::util::backends("nothing_invalid") {
        nothing_invalid_on(backend.open(), &lines, &reviewer);
    }
}

fn nothing_invalid_on(mut ledger: Ledger, lines: &[&str], reviewer: &revcal_elo::Keypair) {
    let outcomes = ledger.ingest_lines(lines).unwrap();
    let kinds: Vec<(usize, &str)> = outcomes
        .iter()
        .map(|(index, outcome)| {
            let kind = match outcome {
                LineOutcome::Stored(_) => "stored",
                LineOutcome::Invalid(_) => "invalid",
                LineOutcome::Rejected(rejection) => rejection.code(),
            };
            (*index, kind)
        })
        .collect();
    assert_eq!(
        kinds,
        [(0, "stored"), (1, "stored"), (2, "invalid"), (4, "stored"), (5, "replayed"), (6, "invalid")]
    );
    let standing = ledger.standing(&reviewer.agent_id()).unwrap().unwrap();
    assert_eq!((standing.rating, standing.reviews), (1210.0, 1));
    assert_eq!(ledger.message_count().unwrap(), 3);
    assert!(ledger.replay().unwrap().is_consistent());
}

#[test]
fn concurrent_writers_store_each_message_once() {
    let author = agent(1);
    let reviewers: Vec<_> = (2..6).map(agent).collect();
    let mut all = Vec::new();
    for n in 0..40 {
        let target = request(&author, &format!("PR {n}"));
        all.push(target.clone());
        for (index, reviewer) in reviewers.iter().enumerate() {
            let verdict = [ReviewVerdict::Approve, ReviewVerdict::RequestChanges, ReviewVerdict::Comment]
                [(n + index) % 3];
            all.push(review(reviewer, &target, verdict));
        }
        all.push(outcome(&author, &target, n % 4 == 0));
    }
    let lines: Vec<String> = all.iter().map(|m| m.canonical().to_owned()).collect();
    for backend in crate::util::backends("concurrent_writers") {
        concurrent_writers_on(backend.location(), &lines, all.len());
    }
}

fn concurrent_writers_on(location: &LedgerLocation, lines: &[String], total: usize) {
    // Four writers, each with an overlapping half of the stream (in stream order), in
    // batches of 7 so that their transactions interleave.
    std::thread::scope(|scope| {
        for writer in 0..4usize {
            scope.spawn(move || {
                let mut ledger = Ledger::open_at(location, None).unwrap();
                let stories: Vec<&str> = lines
                    .chunks(6)
                    .enumerate()
                    .filter(|(story, _)| (story + writer) % 4 < 2)
                    .flat_map(|(_, chunk)| chunk.iter().map(String::as_str))
                    .collect();
                for batch in stories.chunks(7) {
                    for (_, outcome) in ledger.ingest_lines(batch).unwrap() {
                        match outcome {
                            LineOutcome::Stored(_) => {}
                            LineOutcome::Rejected(rejection) => assert_eq!(rejection.code(), "replayed"),
                            LineOutcome::Invalid(error) => panic!("{error}"),
                        }
                    }
                }
            });
        }
    });
    let ledger = Ledger::open_at(location, None).unwrap();
    assert_eq!(ledger.message_count().unwrap(), total as u64, "{location}");
    let replay = ledger.replay().unwrap();
    assert!(replay.is_consistent(), "{:?}", replay.mismatches);
    assert_eq!(replay.scored_reviews, 40 * 4);
    assert!(ledger.integrity_check().unwrap().is_empty());
}

#[test]
fn the_schema_version_is_recorded_and_a_newer_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l.sqlite");
    let ledger = Ledger::open(&path).unwrap();
    let issuer = ledger.issuer();
    let schema_version = ledger.schema_version();
    drop(ledger);
    // Reopening keeps the ledger's key.
    assert_eq!(Ledger::open(&path).unwrap().issuer(), issuer);
    let connection = rusqlite_version(&path, None);
    assert_eq!(connection, schema_version);
    rusqlite_version(&path, Some(schema_version + 1));
    let error = Ledger::open(&path).unwrap_err().to_string();
    assert!(error.contains("newer than this revcal"), "{error}");
}

/// Reads (and optionally sets) `PRAGMA user_version` with the sqlite3 shell-free route:
/// the ledger's own connection type.
fn rusqlite_version(path: &std::path::Path, set: Option<u32>) -> u32 {
    let connection = rusqlite::Connection::open(path).unwrap();
    if let Some(version) = set {
        connection.pragma_update(None, "user_version", version).unwrap();
    }
    connection.query_row("PRAGMA user_version", [], |row| row.get(0)).unwrap()
}

#[test]
fn a_different_policy_is_refused_on_an_existing_ledger() {
    for backend in crate::util::backends("policy") {
        let location = backend.location();
        let strict = revcal_elo::Policy { missed_bug: -50.0, ..Default::default() };
        Ledger::open_at(location, Some(strict.clone())).unwrap();
        assert_eq!(Ledger::open_at(location, None).unwrap().policy(), &strict);
        let error = Ledger::open_at(location, Some(revcal_elo::Policy::default())).unwrap_err();
        assert!(error.to_string().contains("different rating policy"), "{location}: {error}");
    }
}

#[test]
fn a_newer_postgres_schema_is_refused_and_the_key_survives_reopening() {
    let Some(database) = revcal_testpg::TestDatabase::create("schema_version") else { return };
    let location = LedgerLocation::parse(database.url()).unwrap();
    let ledger = Ledger::open_at(&location, None).unwrap();
    let (issuer, version) = (ledger.issuer(), ledger.schema_version());
    drop(ledger);
    assert_eq!(Ledger::open_at(&location, None).unwrap().issuer(), issuer);
    let mut client = postgres::Client::connect(database.url(), postgres::NoTls).unwrap();
    let stored: String =
        client.query_one("SELECT value FROM revcal_meta WHERE key = 'schema_version'", &[]).unwrap().get(0);
    assert_eq!(stored, version.to_string());
    client
        .execute(
            "UPDATE revcal_meta SET value = $1 WHERE key = 'schema_version'",
            &[&(version + 1).to_string()],
        )
        .unwrap();
    let error = Ledger::open_at(&location, None).unwrap_err().to_string();
    assert!(error.contains("newer than this revcal"), "{error}");
}

#[test]
fn request_fields_of_the_protocol_are_checked_and_repo_and_change_are_optional() {
    let request = |content: serde_json::Value| {
        sign_value(
            json!({"type": "REVIEW_REQUEST", "to": "#review", "ts": TS, "content": content}),
            &agent(1),
        )
    };
    let full = json!({"title": "Fix null pointer in auth handler",
        "diff_url": "https://github.com/org/repo/pull/123",
        "diff_summary": "Adds null check before accessing user.session",
        "files_changed": ["src/auth/handler.js"], "lines_added": 5, "lines_removed": 1});
    let signed = request(full.clone()).unwrap();
    let revcal_elo::Content::Request(content) = &signed.message.content else { panic!("not a request") };
    assert_eq!(content.files_changed.as_deref(), Some(&["src/auth/handler.js".to_owned()][..]));
    assert_eq!((content.lines_added, content.lines_removed), (Some(5), Some(1)));
    assert_eq!((content.repo.as_deref(), content.change.as_deref()), (None, None));
    assert_eq!(content.subject(), Some("Fix null pointer in auth handler"));
    // Any one naming field is enough.
    assert!(request(json!({"diff_url": "https://example.com/p/1"})).is_ok());
    for (field, value, named) in [
        ("title", json!(""), "content.title"),
        ("diff_url", json!(7), "content.diff_url"),
        ("files_changed", json!("src/a.rs"), "content.files_changed"),
        ("files_changed", json!(["src/a.rs", ""]), "content.files_changed[1]"),
        ("lines_added", json!(-1), "content.lines_added"),
        ("lines_removed", json!(1.5), "content.lines_removed"),
    ] {
        let mut content = full.clone();
        content[field] = value;
        let error = request(content).unwrap_err();
        assert_eq!(error.field().as_deref(), Some(named), "{field}: {error}");
    }
}

#[test]
fn ts_is_accepted_in_seconds_and_milliseconds() {
    use revcal_elo::{MILLISECONDS_FROM, ts_millis};
    let seconds = request(&agent(1), "s");
    let millis = sign_value(
        json!({"type": "REVIEW_REQUEST", "to": "#review", "ts": 1_706_889_600_000_u64, "content": {"title": "t"}}),
        &agent(1),
    )
    .unwrap();
    // Stored as written (the signature covers it); compared in milliseconds.
    assert_eq!(millis.message.ts, 1_706_889_600_000);
    assert_eq!(millis.message.ts_millis(), 1_706_889_600_000);
    assert_eq!(seconds.message.ts_millis(), seconds.message.ts * 1000);
    assert_eq!(
        (ts_millis(MILLISECONDS_FROM - 1), ts_millis(MILLISECONDS_FROM)),
        ((MILLISECONDS_FROM - 1) * 1000, MILLISECONDS_FROM)
    );
    let error = sign_value(
        json!({"type": "REVIEW_REQUEST", "to": "#review", "ts": -1, "content": {"title": "t"}}),
        &agent(1),
    )
    .unwrap_err();
    assert_eq!(error.field().as_deref(), Some("ts"));
}
