//! Another application's database given as the ledger: every `elo` command and `calibrate
//! --record-to` refuse it, naming what they found, and leave it byte for byte as it was (no
//! file beside it either); a command that only reads never creates a ledger. The same on
//! PostgreSQL: a database whose schema holds other tables is refused and gains no table.

use super::{CliAgent, keygen, revcal_command, stderr, stdout};
use revcal_elo::{Content, Keypair, Message, RequestContent, SignedMessage};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

/// Every file of `dir` with its bytes.
#[derive(PartialEq, Eq)]
struct Snapshot(BTreeMap<PathBuf, Vec<u8>>);

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sizes: Vec<String> = self
            .0
            .iter()
            .map(|(path, bytes)| format!("{} ({} bytes)", path.display(), bytes.len()))
            .collect();
        f.write_str(&sizes.join(", "))
    }
}

fn snapshot(dir: &Path) -> Snapshot {
    Snapshot(
        std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .map(|path| {
                let bytes = std::fs::read(&path).unwrap_or_default();
                (path, bytes)
            })
            .collect(),
    )
}

/// A signed request, as a JSONL file an ingest or `handle` takes.
fn request_line() -> String {
    let key = Keypair::from_seed([7; 32]);
    let content = Content::Request(RequestContent { change: Some("pull/1".into()), ..Default::default() });
    let message = Message { from: key.agent_id(), to: "#review".into(), ts: 1_700_000_000_000, content };
    SignedMessage::sign(&message, &key).unwrap().canonical().to_owned()
}

/// The files every command below needs, outside `db` (the directory of the database).
struct Inputs {
    authority: CliAgent,
    reviewer: CliAgent,
    dir: PathBuf,
}

fn inputs(d: &Path) -> Inputs {
    let dir = d.join("inputs");
    std::fs::create_dir(&dir).unwrap();
    let (authority, reviewer) = (keygen(&dir, "authority"), keygen(&dir, "reviewer"));
    let file = revcal_elo::KeyFile::parse(&std::fs::read_to_string(&authority.key).unwrap()).unwrap();
    std::fs::write(dir.join("authority.pub"), serde_json::to_string(&file.public_only()).unwrap()).unwrap();
    std::fs::write(dir.join("messages.jsonl"), request_line() + "\n").unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/elo/calibration.json");
    std::fs::copy(example, dir.join("calibration.json")).unwrap();
    Inputs { authority, reviewer, dir }
}

/// Every `elo` command that opens a ledger (those that only read, when `reads_only`), run on
/// `ledger` from `inputs.dir` one after the other: its name, whether it writes, and what it
/// did.
fn every_command(inputs: &Inputs, ledger: &str, reads_only: bool) -> Vec<(String, bool, Output)> {
    let (a, r) = (&inputs.authority, &inputs.reviewer);
    let (a_key, r_key) = (a.key.to_str().unwrap(), r.key.to_str().unwrap());
    let commands: Vec<(Vec<&str>, Option<String>)> = vec![
        (vec!["leaderboard"], None),
        (vec!["leaderboard", "--json"], None),
        (vec!["leaderboard", "--outcomes", "verified"], None),
        (vec!["leaderboard", "--domain", "off-by-one"], None),
        (vec!["receipts", &r.id], None),
        (vec!["check"], None),
        (vec!["check", "--json"], None),
        (vec!["issuer-key"], None),
        (vec!["trust", "--list"], None),
        (vec!["trust", &a.id, "--key-file", "authority.pub"], None),
        (vec!["trust", &a.id, "--revoke"], None),
        (vec!["ingest", "messages.jsonl"], None),
        (
            vec![
                "record",
                "calibration.json",
                "--authority-key",
                a_key,
                "--agent",
                &r.id,
                "--agent-key",
                r_key,
            ],
            None,
        ),
        (vec!["handle"], Some(r#"{"type": "REVIEW_LEADERBOARD"}"#.to_owned())),
        (vec!["handle"], Some(request_line())),
    ];
    commands
        .into_iter()
        .filter_map(|(args, input)| {
            let writes = !(args[0] == "leaderboard"
                || args[0] == "receipts"
                || args[0] == "check"
                || args[0] == "issuer-key"
                || args.contains(&"--list")
                || args.contains(&"--revoke"));
            if writes && reads_only {
                return None;
            }
            let mut all = vec!["elo"];
            all.extend(&args);
            all.extend(["--ledger", ledger]);
            let mut command = revcal_command(&inputs.dir, &all);
            command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
            let mut child = command.spawn().unwrap();
            child.stdin.take().unwrap().write_all(input.unwrap_or_default().as_bytes()).unwrap();
            Some((args.join(" "), writes, child.wait_with_output().unwrap()))
        })
        .collect()
}

#[test]
fn another_applications_sqlite_database_is_refused_by_every_command_and_left_untouched() {
    // One without a schema version (most applications' databases), one whose version a
    // revcal ledger could have.
    for user_version in [0, 3] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let inputs = inputs(d);
        let db = d.join("db");
        std::fs::create_dir(&db).unwrap();
        let path = db.join("other-app.sqlite");
        {
            let connection = rusqlite::Connection::open(&path).unwrap();
            connection
                .execute_batch(&format!(
                    "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);
                     CREATE TABLE orders (id INTEGER PRIMARY KEY, user INTEGER, total REAL);
                     INSERT INTO users (name) VALUES ('ada'), ('grace');
                     INSERT INTO orders (user, total) VALUES (1, 9.5);
                     PRAGMA user_version = {user_version};"
                ))
                .unwrap();
        }
        let before = snapshot(&db);
        for (name, _, output) in every_command(&inputs, path.to_str().unwrap(), false) {
            let said = stderr(&output);
            assert_eq!(
                output.status.code(),
                Some(2),
                "{user_version}: elo {name}: {}{said}",
                stdout(&output)
            );
            assert!(said.contains("other-app.sqlite"), "{user_version}: elo {name}: {said}");
            assert!(
                said.contains("not a revcal ledger") && said.contains("orders, users"),
                "{user_version}: elo {name}: {said}"
            );
            assert_eq!(snapshot(&db), before, "{user_version}: elo {name} left the database as it was");
        }
        // calibrate --record-to refuses it before anything runs.
        let output = revcal_command(
            &inputs.dir,
            &[
                "calibrate",
                "--review-cmd",
                "true",
                "--record-to",
                path.to_str().unwrap(),
                "--authority-key",
                "-",
                "--agent",
                &inputs.reviewer.id,
                "--agent-key",
                inputs.reviewer.key.to_str().unwrap(),
            ],
        )
        .output()
        .unwrap();
        let said = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{said}");
        assert!(said.contains("not a revcal ledger") && said.contains("orders, users"), "{said}");
        assert_eq!(snapshot(&db), before, "calibrate --record-to left the database as it was");
    }
}

#[test]
fn a_command_that_only_reads_never_creates_a_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let inputs = inputs(d);
    let db = d.join("db");
    std::fs::create_dir(&db).unwrap();
    let path = db.join("empty.sqlite");
    std::fs::write(&path, b"").unwrap();
    let text_file = db.join("notes.sqlite");
    std::fs::write(&text_file, "not a database at all\n").unwrap();
    let before = snapshot(&db);
    for ledger in [&path, &text_file] {
        // An empty file is a new ledger to a command that writes (as a missing one is).
        let reads_only = ledger == &path;
        for (name, _, output) in every_command(&inputs, ledger.to_str().unwrap(), reads_only) {
            let said = stderr(&output);
            assert_eq!(output.status.code(), Some(2), "elo {name}: {}{said}", stdout(&output));
            assert!(said.contains(ledger.file_name().unwrap().to_str().unwrap()), "elo {name}: {said}");
            assert_eq!(snapshot(&db), before, "elo {name} created nothing");
        }
    }
}

#[test]
fn a_postgres_schema_with_other_tables_is_refused_and_gains_no_table() {
    let Some(database) = revcal_testpg::TestDatabase::create("cli_foreign_schema") else { return };
    let dir = tempfile::tempdir().unwrap();
    let inputs = inputs(dir.path());
    let mut client = database.client();
    client
        .batch_execute(
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (1, 'ada');",
        )
        .unwrap();
    for (name, _, output) in every_command(&inputs, database.url(), false) {
        let said = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "elo {name}: {}{said}", stdout(&output));
        assert!(said.contains("not a revcal ledger") && said.contains("users"), "elo {name}: {said}");
        let tables = database
            .query_i64("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'");
        assert_eq!(tables, 1, "elo {name} created no table");
    }
    // An empty database: the commands that only read do not create the ledger's tables.
    let empty = revcal_testpg::TestDatabase::create("cli_empty_schema").unwrap();
    for (name, _, output) in every_command(&inputs, empty.url(), true) {
        assert_eq!(output.status.code(), Some(2), "elo {name}: {}", stderr(&output));
        let tables =
            empty.query_i64("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'");
        assert_eq!(tables, 0, "elo {name} created no table");
    }
}
