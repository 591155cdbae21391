//! Domain ratings that follow each plant (docs/reputation.md, "Verified, reported, all, and
//! domains"): a calibration outcome's link names the reviewer the calibration ran (`agent`)
//! and each plant's `status`; that reviewer's review counts in each plant's domain as that
//! plant was caught or missed, and nobody else's review counts in the domains. The link is
//! checked field by field, its statuses against that reviewer's verdict, on every backend
//! and in the engine alike; links recorded before (no statuses) keep the rule they were
//! rated by, also in a ledger migrated from before.

use crate::util::{TS, agent, request, review, send};
use revcal_elo::{
    AgentId, CalibrationLink, Content, Engine, Keypair, Ledger, LinkedPlant, OutcomeContent, PlantStatus,
    Policy, Rejection, ReviewVerdict, Scope, SignedMessage, sign_value,
};
use serde_json::json;

const REPORT: &str = "abababababababababababababababababababababababababababababababab";

/// A calibration outcome of `target` by `authority`: round `round`, the plants (category,
/// status), the link naming `reviewer` when given.
fn calibration_outcome(
    authority: &Keypair,
    target: &SignedMessage,
    round: u64,
    plants: &[(&str, Option<PlantStatus>)],
    reviewer: Option<AgentId>,
) -> SignedMessage {
    let plants: Vec<LinkedPlant> = plants
        .iter()
        .enumerate()
        .map(|(n, (category, status))| LinkedPlant {
            file: "src/lib.rs".into(),
            line: n as u64 + 1,
            category: (*category).into(),
            status: *status,
        })
        .collect();
    let domains = CalibrationLink::categories_of(&plants);
    let link = CalibrationLink {
        report_sha256: REPORT.into(),
        round,
        trial: 1,
        entry: None,
        plants,
        domains,
        reviewer,
    };
    send(
        authority,
        Content::Outcome(OutcomeContent {
            request_id: target.id.clone(),
            merged: false,
            incident: true,
            incident_details: Some("planted".into()),
            calibration: Some(link),
        }),
    )
}

#[test]
fn the_link_is_checked_field_by_field() {
    let (authority, reviewer) = (agent(40), agent(2));
    let target = request(&authority, "calibration");
    let link = |plants: serde_json::Value, extra: Option<(&str, serde_json::Value)>| {
        let mut calibration = json!({"report_sha256": REPORT, "round": 1, "trial": 1, "plants": plants,
                                     "domains": ["off-by-one"]});
        if let Some((key, value)) = extra {
            calibration[key] = value;
        }
        sign_value(
            json!({"type": "REVIEW_OUTCOME", "to": "#review", "ts": TS,
                   "content": {"request_id": target.id, "merged": false, "incident": true,
                               "incident_details": "planted", "calibration": calibration}}),
            &authority,
        )
    };
    let plant = |status: Option<&str>| {
        let mut plant = json!({"file": "a.rs", "line": 1, "category": "off-by-one"});
        if let Some(status) = status {
            plant["status"] = json!(status);
        }
        plant
    };
    let agent_id = json!(reviewer.agent_id());
    let cases = [
        (link(json!([plant(Some("caught"))]), None), "content.calibration.agent"),
        (
            link(json!([plant(None)]), Some(("agent", agent_id.clone()))),
            "content.calibration.plants[0].status",
        ),
        (
            link(json!([plant(Some("caught")), plant(None)]), Some(("agent", agent_id.clone()))),
            "content.calibration.plants[1].status",
        ),
        (
            link(json!([plant(Some("found"))]), Some(("agent", agent_id.clone()))),
            "content.calibration.plants[0].status",
        ),
        (link(json!([plant(Some("caught"))]), Some(("agent", json!("bob")))), "content.calibration.agent"),
    ];
    for (result, field) in cases {
        let error = result.expect_err(field);
        assert_eq!(error.field().as_deref(), Some(field), "{error}");
    }
    assert!(link(json!([plant(Some("missed"))]), Some(("agent", agent_id))).is_ok());
    assert!(link(json!([plant(None)]), None).is_ok(), "a link of an earlier release");
}

/// The stream: a calibration request reviewed by the calibrated reviewer (B) and by a
/// stranger (C), closed by a link naming B; then one whose statuses contradict B's verdict.
fn stream() -> (Vec<SignedMessage>, [Keypair; 3]) {
    let (authority, b, c) = (agent(40), agent(2), agent(3));
    let first = request(&authority, "round 1");
    let second = request(&authority, "round 2");
    let caught = Some(PlantStatus::Caught);
    let missed = Some(PlantStatus::Missed);
    let messages = vec![
        first.clone(),
        review(&b, &first, ReviewVerdict::RequestChanges),
        review(&c, &first, ReviewVerdict::RequestChanges),
        calibration_outcome(
            &authority,
            &first,
            1,
            &[("off-by-one", caught), ("null-handling", missed), ("off-by-one", missed)],
            Some(b.agent_id()),
        ),
        second.clone(),
        review(&b, &second, ReviewVerdict::Approve),
        // The statuses say B caught the plant, but B approved: refused.
        calibration_outcome(&authority, &second, 2, &[("boundary", caught)], Some(b.agent_id())),
    ];
    (messages, [authority, b, c])
}

/// One reviewer's (rating, reviews) in a scope of the ledger.
fn standing_of(ledger: &Ledger, scope: &Scope, who: &Keypair) -> Option<(f64, u64)> {
    ledger.standings_in(scope).unwrap().get(&who.agent_id()).map(|s| (s.rating, s.reviews))
}

#[test]
fn each_plant_moves_its_own_domain_and_statuses_that_contradict_the_verdict_are_refused() {
    let (messages, [authority, b, c]) = stream();
    let mut engine = Engine::new(Policy::default());
    engine.trust(&authority.public());
    let engine_codes: Vec<_> = messages.iter().map(|m| engine.apply(m).err().map(|r| r.code())).collect();
    for backend in crate::util::backends("domains_each_plant") {
        let mut ledger = backend.open();
        ledger.trust(&authority.public()).unwrap();
        let mut codes = Vec::new();
        for message in &messages {
            let outcome = ledger.ingest(message).unwrap();
            if let Err(Rejection::CalibrationContradictsReview { reviewer, verdict, caught, plants }) =
                &outcome
            {
                assert_eq!(
                    (reviewer, *verdict, *caught, *plants),
                    (&b.agent_id(), ReviewVerdict::Approve, 1, 1)
                );
                let rejection = outcome.clone().unwrap_err();
                assert_eq!(rejection.field().as_deref(), Some("content.calibration.plants"), "{rejection}");
            }
            codes.push(outcome.err().map(|r| r.code()));
        }
        assert_eq!(codes, engine_codes, "{}", backend.name);
        assert_eq!(codes[6], Some("calibration_contradicts_review"), "{}", backend.name);
        // B flagged the change: +50 overall and verified; off-by-one +50 then -60, null-handling -60.

        assert_eq!(standing_of(&ledger, &Scope::Verified, &b), Some((1250.0, 1)), "{}", backend.name);
        assert_eq!(
            standing_of(&ledger, &Scope::Domain("off-by-one".into()), &b),
            Some((1190.0, 2)),
            "{}",
            backend.name
        );
        assert_eq!(
            standing_of(&ledger, &Scope::Domain("null-handling".into()), &b),
            Some((1140.0, 1)),
            "{}",
            backend.name
        );
        // The stranger's verdict is verified against the planted change, but says nothing
        // of which plants it saw: no domain rating.
        assert_eq!(standing_of(&ledger, &Scope::Verified, &c), Some((1250.0, 1)), "{}", backend.name);
        assert_eq!(standing_of(&ledger, &Scope::Domain("off-by-one".into()), &c), None, "{}", backend.name);
        for scope in
            [Scope::Verified, Scope::Domain("off-by-one".into()), Scope::Domain("null-handling".into())]
        {
            assert_eq!(
                ledger.standings_in(&scope).unwrap(),
                engine.standings_in(&scope),
                "{} {scope}",
                backend.name
            );
        }
        // Trusting again computes the scopes from the stored rounds: the same numbers.
        let authority_id = authority.agent_id();
        assert!(ledger.distrust(&authority_id).unwrap());
        assert_eq!(standing_of(&ledger, &Scope::Domain("off-by-one".into()), &b), None, "{}", backend.name);
        assert!(ledger.trust(&authority.public()).unwrap());
        assert_eq!(
            standing_of(&ledger, &Scope::Domain("off-by-one".into()), &b),
            Some((1190.0, 2)),
            "{}",
            backend.name
        );
        // Their receipts say where each review counted: the stranger's in no domain.
        let domains = |who: &Keypair| -> Vec<String> {
            let receipts = ledger.receipts(&who.agent_id()).unwrap();
            receipts[0].calibration.as_ref().unwrap().domains.clone()
        };
        assert_eq!(domains(&b), ["null-handling", "off-by-one"], "{}", backend.name);
        assert!(domains(&c).is_empty(), "{}", backend.name);
        let replay = ledger.replay().unwrap();
        assert!(replay.is_consistent(), "{}: {:?}", backend.name, replay.mismatches);
    }
}

/// A link of an earlier release: no statuses, every reviewer's one verdict in each domain.
fn earlier_stream() -> Vec<SignedMessage> {
    let (authority, b) = (agent(40), agent(2));
    let target = request(&authority, "round 1");
    vec![
        target.clone(),
        review(&b, &target, ReviewVerdict::RequestChanges),
        calibration_outcome(&authority, &target, 1, &[("off-by-one", None), ("null-handling", None)], None),
    ]
}

#[test]
fn a_ledger_with_links_of_before_migrates_and_keeps_their_rule() {
    for backend in crate::util::backends("domains_migration") {
        let mut ledger = backend.open();
        ledger.trust(&agent(40).public()).unwrap();
        for message in earlier_stream() {
            ledger.ingest(&message).unwrap().unwrap();
        }
        drop(ledger);
        // The ledger as the release before left it: without the columns this one added.
        downgrade(&backend);
        let migrated = Ledger::open_at(backend.location(), None).unwrap();
        let b = agent(2).agent_id();
        for domain in ["off-by-one", "null-handling"] {
            let standing = migrated.standings_in(&Scope::Domain(domain.into())).unwrap();
            assert_eq!(
                standing.get(&b).map(|s| (s.rating, s.reviews)),
                Some((1250.0, 1)),
                "{} {domain}",
                backend.name
            );
        }
        let replay = migrated.replay().unwrap();
        assert!(replay.is_consistent(), "{}: {:?}", backend.name, replay.mismatches);
    }
}

/// Takes the columns this release added out of the ledger and sets the schema version of
/// the release before (SQLite 4, PostgreSQL 2).
fn downgrade(backend: &crate::util::Backend) {
    match (backend.location().path(), backend.database()) {
        (Some(path), _) => {
            let connection = rusqlite::Connection::open(path).unwrap();
            connection
                .execute_batch(
                    "ALTER TABLE calibration_outcomes DROP COLUMN reviewer;
                     ALTER TABLE calibration_outcomes DROP COLUMN plants;
                     ALTER TABLE agents DROP COLUMN name;
                     PRAGMA user_version = 4;",
                )
                .unwrap();
        }
        (None, Some(database)) => database
            .client()
            .batch_execute(
                "ALTER TABLE revcal_calibration_outcomes DROP COLUMN reviewer;
                 ALTER TABLE revcal_calibration_outcomes DROP COLUMN plants;
                 ALTER TABLE revcal_agents DROP COLUMN name;
                 UPDATE revcal_meta SET value = '2' WHERE key = 'schema_version';",
            )
            .unwrap(),
        (None, None) => unreachable!("a backend is a file or a database"),
    }
}
