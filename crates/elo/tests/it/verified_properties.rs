//! Random streams with calibration outcomes (from a trusted and an untrusted authority,
//! rounds recorded twice, plain outcomes between them) fed in batches of any size: the
//! ledger refuses and rates, in every scope, exactly as the pure engine over the stream in
//! order, on SQLite and on PostgreSQL, whether it trusted the authority before or after.

use crate::util::{TS, agent, request, review};
use proptest::prelude::*;
use revcal_elo::{
    CalibrationLink, Content, Engine, Ledger, LinkedPlant, Message, OutcomeContent, Policy, ReviewVerdict,
    Scope, SignedMessage,
};

const CATEGORIES: [&str; 3] = ["off-by-one", "null-handling", "boundary"];
const REPORTS: [&str; 2] = [
    "1111111111111111111111111111111111111111111111111111111111111111",
    "2222222222222222222222222222222222222222222222222222222222222222",
];

/// An outcome of `target` by `sender`; with `link` set, a calibration outcome of round
/// `round` of report `report`, planted with `categories` (none: a clean round). With
/// `statuses`, the link names that reviewer and says which plants it caught (bit `n` of the
/// byte for plant `n`): this release's domain rule, else the rule of earlier links.
fn outcome_of(
    sender: &revcal_elo::Keypair,
    target: &SignedMessage,
    calibration: Option<(usize, u64, &[&str])>,
    incident: bool,
    statuses: Option<(revcal_elo::AgentId, u8)>,
) -> SignedMessage {
    let link = calibration.map(|(report, round, categories)| {
        let plants: Vec<LinkedPlant> = categories
            .iter()
            .enumerate()
            .map(|(n, category)| LinkedPlant {
                file: "src/a.rs".into(),
                line: n as u64 + 1,
                category: (*category).into(),
                status: statuses.as_ref().map(|(_, bits)| {
                    if bits >> n & 1 == 1 {
                        revcal_elo::PlantStatus::Caught
                    } else {
                        revcal_elo::PlantStatus::Missed
                    }
                }),
            })
            .collect();
        let mut domains = if plants.is_empty() {
            CATEGORIES.iter().map(|category| (*category).to_owned()).collect::<Vec<_>>()
        } else {
            CalibrationLink::categories_of(&plants)
        };
        domains.sort();
        CalibrationLink {
            report_sha256: REPORTS[report].into(),
            round,
            trial: 1,
            entry: None,
            plants,
            domains,
            reviewer: statuses.as_ref().map(|(reviewer, _)| reviewer.clone()),
        }
    });
    let incident = link.as_ref().map_or(incident, |link| !link.plants.is_empty());
    let content = Content::Outcome(OutcomeContent {
        request_id: target.id.clone(),
        merged: false,
        incident,
        incident_details: incident.then(|| "planted".to_owned()),
        calibration: link,
    });
    let message = Message { from: sender.agent_id(), to: "#review".into(), ts: TS, content };
    SignedMessage::sign(&message, sender).unwrap()
}

fn random_stream(steps: &[(u8, u8, u8)]) -> Vec<SignedMessage> {
    let authors = [agent(40), agent(43)];
    let reviewers: Vec<_> = (2..5).map(agent).collect();
    let verdicts = [ReviewVerdict::Approve, ReviewVerdict::RequestChanges, ReviewVerdict::Comment];
    let mut requests: Vec<(SignedMessage, usize)> = Vec::new();
    let mut stream: Vec<SignedMessage> = Vec::new();
    for (index, &(kind, pick, choice)) in steps.iter().enumerate() {
        let target = (!requests.is_empty()).then(|| requests[pick as usize % requests.len()].clone());
        match (kind % 8, target) {
            (0 | 1, _) | (_, None) => {
                let author = choice as usize % 2;
                let made = request(&authors[author], &format!("change {index}"));
                requests.push((made.clone(), author));
                stream.push(made);
            }
            (2..=4, Some((target, _))) => {
                let reviewer = &reviewers[choice as usize % reviewers.len()];
                let mut message = review(reviewer, &target, verdicts[choice as usize % 3]);
                if let Content::Review(content) = &mut message.message.content {
                    content.comments[0].line = index as u64 + 1;
                    // Some reviews name their reviewer; the latest name stands.
                    if pick % 3 == 0 {
                        content.name = Some(format!("reviewer {}", pick % 4));
                    }
                }
                stream.push(SignedMessage::sign(&message.message, reviewer).unwrap());
            }
            (5 | 6, Some((target, author))) => {
                // Mostly the requester; sometimes the other authority (refused).
                let sender = if choice % 7 == 0 { &authors[1 - author] } else { &authors[author] };
                let categories: &[&str] = match choice % 4 {
                    0 => &[],
                    1 => &CATEGORIES[..1],
                    2 => &CATEGORIES[1..],
                    _ => &CATEGORIES[2..],
                };
                // Few rounds, so that the same round comes again (refused once recorded).
                let calibration =
                    (choice % 3 != 0).then_some((pick as usize % 2, u64::from(pick % 3) + 1, categories));
                // Half of the calibration outcomes say which plants a reviewer caught.
                let statuses = (pick % 2 == 0)
                    .then(|| (reviewers[(pick / 2) as usize % reviewers.len()].agent_id(), choice / 4));
                stream.push(outcome_of(sender, &target, calibration, choice % 2 == 0, statuses));
            }
            (_, Some(_)) => {
                let copy = stream[pick as usize % stream.len()].clone();
                stream.push(copy);
            }
        }
    }
    stream
}

fn ledger_agrees_with_the_engine(
    ledger: &mut Ledger,
    stream: &[SignedMessage],
    batch: usize,
    trust_first: bool,
) {
    let authority = agent(40).public();
    if trust_first {
        ledger.trust(&authority).unwrap();
    }
    let mut codes = Vec::new();
    for chunk in stream.chunks(batch) {
        for outcome in ledger.ingest_batch(chunk).unwrap() {
            codes.push(outcome.err().map(|rejection| rejection.code()));
        }
    }
    if !trust_first {
        ledger.trust(&authority).unwrap();
    }
    let mut engine = Engine::new(Policy::default());
    engine.trust(&authority);
    let expected: Vec<_> =
        stream.iter().map(|message| engine.apply(message).err().map(|r| r.code())).collect();
    assert_eq!(codes, expected);
    let mut scopes = vec![Scope::All, Scope::Verified, Scope::Reported];
    scopes.extend(CATEGORIES.iter().map(|category| Scope::Domain((*category).to_owned())));
    for scope in &scopes {
        assert_eq!(ledger.standings_in(scope).unwrap(), engine.standings_in(scope), "{scope}");
    }
    assert_eq!(ledger.scored_reviews(None).unwrap(), engine.scored());
    for (agent, name) in engine.names() {
        assert_eq!(ledger.name_of(agent).unwrap().as_ref(), Some(name), "{agent}");
    }
    let replay = ledger.replay().unwrap();
    assert!(replay.is_consistent(), "{:?}", replay.mismatches);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn calibration_streams_in_any_batches_are_rated_as_the_engine_rates_them_on_sqlite(
        steps in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 1..60),
        batch in 1usize..25,
        trust_first in any::<bool>(),
    ) {
        let stream = random_stream(&steps);
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::open(dir.path().join("l.sqlite")).unwrap();
        ledger_agrees_with_the_engine(&mut ledger, &stream, batch, trust_first);
    }
}

proptest! {
    // A database per case: fewer cases than on SQLite.
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn calibration_streams_in_any_batches_are_rated_as_the_engine_rates_them_on_postgres(
        steps in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 1..60),
        batch in 1usize..25,
        trust_first in any::<bool>(),
    ) {
        let Some(database) = revcal_testpg::TestDatabase::create("verified_property") else { return Ok(()) };
        let stream = random_stream(&steps);
        let location = revcal_elo::LedgerLocation::parse(database.url()).unwrap();
        let mut ledger = Ledger::open_at(&location, None).unwrap();
        ledger_agrees_with_the_engine(&mut ledger, &stream, batch, trust_first);
    }
}
