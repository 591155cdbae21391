//! Builders for signed test messages (fixed seeds: deterministic ids).
use revcal_elo::{
    Comment, Content, Keypair, Message, OutcomeContent, RequestContent, ReviewContent, ReviewVerdict,
    SignedMessage,
};

pub(crate) const TS: u64 = 1_700_000_000;

pub(crate) fn agent(seed: u8) -> Keypair {
    Keypair::from_seed([seed; 32])
}

pub(crate) fn send(key: &Keypair, content: Content) -> SignedMessage {
    let message = Message { from: key.agent_id(), to: "#review".into(), ts: TS, content };
    SignedMessage::sign(&message, key).unwrap()
}

pub(crate) fn request(key: &Keypair, change: &str) -> SignedMessage {
    send(
        key,
        Content::Request(RequestContent {
            repo: Some("github.com/acme/api".into()),
            change: Some(change.into()),
            ..Default::default()
        }),
    )
}

pub(crate) fn review(key: &Keypair, request: &SignedMessage, verdict: ReviewVerdict) -> SignedMessage {
    send(
        key,
        Content::Review(ReviewContent {
            request_id: request.id.clone(),
            verdict,
            comments: vec![Comment { file: "src/lib.rs".into(), line: 12, body: "check the bounds".into() }],
            summary: None,
            name: None,
        }),
    )
}

pub(crate) fn outcome(key: &Keypair, request: &SignedMessage, incident: bool) -> SignedMessage {
    send(
        key,
        Content::Outcome(OutcomeContent {
            request_id: request.id.clone(),
            merged: true,
            incident,
            incident_details: incident.then(|| "outage in checkout".to_owned()),
            calibration: None,
        }),
    )
}

/// A new, empty ledger on one backend; what it needs lives as long as it does.
pub(crate) struct Backend {
    /// `sqlite` or `postgres`, for assertion messages.
    pub(crate) name: &'static str,
    location: revcal_elo::LedgerLocation,
    _dir: tempfile::TempDir,
    _database: Option<revcal_testpg::TestDatabase>,
}

impl Backend {
    /// Opens (the first time: creates) the ledger.
    pub(crate) fn open(&self) -> revcal_elo::Ledger {
        revcal_elo::Ledger::open_at(&self.location, None)
            .unwrap_or_else(|error| panic!("{}: {error}", self.name))
    }

    pub(crate) fn location(&self) -> &revcal_elo::LedgerLocation {
        &self.location
    }

    /// The PostgreSQL database, on that backend.
    pub(crate) fn database(&self) -> Option<&revcal_testpg::TestDatabase> {
        self._database.as_ref()
    }
}

/// A new ledger on every backend this run reaches: an SQLite file always, a PostgreSQL
/// database when `REVCAL_TEST_POSTGRES` names a server (`.ci/run` starts one).
pub(crate) fn backends(test: &str) -> Vec<Backend> {
    let sqlite_dir = tempfile::tempdir().unwrap();
    let mut backends = vec![Backend {
        name: "sqlite",
        location: sqlite_dir.path().join("ledger.sqlite").into(),
        _dir: sqlite_dir,
        _database: None,
    }];
    if let Some(database) = revcal_testpg::TestDatabase::create(test) {
        backends.push(Backend {
            name: "postgres",
            location: revcal_elo::LedgerLocation::parse(database.url()).unwrap(),
            _dir: tempfile::tempdir().unwrap(),
            _database: Some(database),
        });
    }
    backends
}
