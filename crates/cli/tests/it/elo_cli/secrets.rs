//! What `--ledger` accepts, and what it never shows: a PostgreSQL password, however it is
//! spelled (in the URL's user part, percent-encoded or not, as `?password=`, in a key=value
//! connection string), never appears in what revcal prints: output, JSON reports, errors
//! (the server's authentication error included) and logs at every level.

use super::{jsonl, revcal, revcal_command, stderr, stdout, stories};
use std::path::Path;
use std::process::Output;

/// Passwords that break naive URL handling: the (`/` and `?` before the `@`), and
/// one with every character a URL, a query string or a key=value string treats specially,
/// and non-ASCII. Each alphanumeric run has at least 4 characters, so a leak of any part
/// of it is caught.
const PASSWORDS: &[&str] =
    &["se/cret?x", "Zq8vN/w7KxR?Lm3tP@Pv9sW#Ty2hG%41 Rb6jK&Hn4cD=Jc5fM'Wd1gB\"Qe0yU\\Ññäö€𝄞:Xk7pL"];

/// Percent-encodes the characters in `special` that the driver's URL grammar gives a
/// meaning to where the password goes (`@` ends the user part, `&` a query value, `%`
/// starts an escape); the others stay as the user would type them.
fn encode_some(password: &str, special: &[char]) -> String {
    password
        .chars()
        .map(|c| if special.contains(&c) { format!("%{:02X}", c as u32) } else { c.to_string() })
        .collect()
}

/// Every byte outside `[A-Za-z0-9]` percent-encoded.
fn encode_all(password: &str) -> String {
    password
        .bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

/// The ways a user writes the same PostgreSQL ledger with `password`.
fn spellings(role: &str, password: &str, port: u16, database: &str) -> Vec<String> {
    let quoted = password.replace('\\', "\\\\").replace('\'', "\\'");
    vec![
        // `/`, `?` and `#` may stay in the user part (the URL), `=` after a `?` not:
        // that would look like a parameter with an `@` in its value.
        format!("postgres://{role}:{}@127.0.0.1:{port}/{database}", encode_some(password, &['%', '@', '='])),
        format!("postgresql://{role}:{}@127.0.0.1:{port}/{database}", encode_all(password)),
        format!(
            "postgresql://{role}@127.0.0.1:{port}/{database}?sslmode=disable&password={}",
            encode_some(password, &['%', '&'])
        ),
        format!("host=127.0.0.1 port={port} user={role} dbname={database} password='{quoted}'"),
    ]
}

/// Fails when any piece of `password` (itself, its encodings, any run of 4 or more
/// alphanumeric characters in it) appears in `text`.
fn assert_hidden(text: &str, password: &str, context: &str) {
    let mut pieces = vec![password.to_owned(), encode_all(password)];
    pieces.extend([['%', '@', '='], ['%', '&', '&']].map(|special| encode_some(password, &special)));
    let mut run = String::new();
    for c in password.chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() {
            run.push(c);
        } else {
            if run.chars().count() >= 4 {
                pieces.push(run.clone());
            }
            run.clear();
        }
    }
    for piece in pieces {
        assert!(!text.contains(&piece), "{context}: `{piece}` of the password is shown:\n{text}");
    }
}

fn all_output(output: &Output) -> String {
    format!("{}{}", stdout(output), stderr(output))
}

#[test]
fn a_postgres_password_never_appears_in_output_errors_or_logs() {
    let Some(cluster) = revcal_testpg::TestCluster::start("cli_passwords") else { return };
    let port = cluster.port();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let messages: Vec<_> = stories(3).into_iter().flatten().collect();
    std::fs::write(d.join("m.jsonl"), jsonl(messages)).unwrap();
    let reviewer = revcal_elo::Keypair::from_seed([2; 32]).agent_id().to_string();
    for (index, password) in PASSWORDS.iter().enumerate() {
        let role = format!("writer{index}");
        let database = format!("ledger{index}");
        let literal = password.replace('\'', "''");
        cluster.execute(&format!("CREATE ROLE {role} LOGIN PASSWORD '{literal}'"));
        cluster.execute(&format!("CREATE DATABASE {database} OWNER {role}"));
        for (n, ledger) in spellings(&role, password, port, &database).iter().enumerate() {
            let context = format!("password {index}, spelling {n}");
            // Every command that names the ledger, in text and JSON, with debug logs.
            let runs: Vec<Vec<&str>> = vec![
                vec!["elo", "ingest", "m.jsonl", "--ledger", ledger],
                vec!["-vvv", "elo", "ingest", "m.jsonl", "--json", "--ledger", ledger],
                vec!["elo", "leaderboard", "--ledger", ledger],
                vec!["-vvv", "elo", "leaderboard", "--json", "--ledger", ledger],
                vec!["elo", "check", "--ledger", ledger],
                vec!["elo", "check", "--json", "--ledger", ledger],
                vec!["elo", "receipts", &reviewer, "--ledger", ledger],
                vec!["elo", "receipts", "@0000000000000000", "--ledger", ledger],
            ];
            for args in runs {
                let output = revcal(d, &args);
                let text = all_output(&output);
                let code = output.status.code();
                // The first ingest stores, the later ones find replays (exit 1); the rest read.
                assert!(matches!(code, Some(0 | 1)), "{context}: {args:?} exit {code:?}:\n{text}");
                assert_hidden(&text, password, &format!("{context}: {args:?}"));
            }
            let output = revcal(d, &["elo", "check", "--ledger", ledger]);
            let shown = stdout(&output);
            assert!(
                shown.starts_with(&format!("consistent postgresql://{role}:***@127.0.0.1:{port}/{database}")),
                "{context}: {shown}"
            );
            // From the environment too.
            let output =
                revcal_command(d, &["elo", "leaderboard"]).env("REVCAL_LEDGER_URL", ledger).output().unwrap();
            assert_eq!(output.status.code(), Some(0), "{context}: {}", stderr(&output));
            assert_hidden(&all_output(&output), password, &context);
        }
        // A wrong password: the server's authentication error, and neither password shown.
        let wrong = format!("{password}-wrong/x?y");
        for (n, ledger) in spellings(&role, &wrong, port, &database).iter().enumerate() {
            let context = format!("wrong password {index}, spelling {n}");
            for args in [
                vec!["-vvv", "elo", "leaderboard", "--ledger", ledger],
                vec!["elo", "ingest", "m.jsonl", "--json", "--ledger", ledger],
            ] {
                let output = revcal(d, &args);
                let text = all_output(&output);
                assert_eq!(output.status.code(), Some(2), "{context}: {text}");
                assert!(text.contains("password authentication failed"), "{context}: {text}");
                assert!(text.contains(&format!(":***@127.0.0.1:{port}/{database}")), "{context}: {text}");
                assert_hidden(&text, &wrong, &context);
                assert_hidden(&text, password, &context);
            }
        }
    }
}

/// A URL that cannot be read names what is wrong without quoting the URL: an `@` left in a
/// password would otherwise put the rest of it in the host name.
#[test]
fn a_malformed_postgres_url_is_refused_without_quoting_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        ("postgres://writer:Pv9sWq@Ty2hG@127.0.0.1:1/ledger", "%40"),
        ("postgres://writer:Pv9sWqTy2hG@127.0.0.1:notaport/ledger", "port"),
        ("postgresql://127.0.0.1:1/ledger?password=Pv9sW&Ty2hG=Lm3tP", "option"),
        ("host=127.0.0.1 password=Pv9sW Ty2hGx dbname=ledger", "byte"),
        ("postgresql://127.0.0.1:1/ledger?password=Pv9sW@Ty2hG", "%40"),
    ];
    for (ledger, hint) in cases {
        let output = revcal(d, &["elo", "leaderboard", "--ledger", ledger]);
        let text = all_output(&output);
        assert_eq!(output.status.code(), Some(2), "{ledger}: {text}");
        assert!(text.contains(hint), "{ledger}: {text}");
        for piece in ["Pv9sW", "Ty2hG", "Lm3tP"] {
            assert!(!text.contains(piece), "{ledger}: `{piece}` shown:\n{text}");
        }
    }
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "no file was created");
}

#[test]
fn unknown_url_schemes_are_refused_and_paths_with_a_colon_are_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("m.jsonl"), jsonl(stories(1).into_iter().flatten())).unwrap();
    for ledger in ["mysql://x", "sqlite:///tmp/revcal-ledger.db", "HTTPS://db.example/ledger", "mysql://"] {
        for command in [&["elo", "ingest", "m.jsonl"][..], &["elo", "leaderboard"]] {
            let mut args = command.to_vec();
            args.extend(["--ledger", ledger]);
            let output = revcal(d, &args);
            let text = stderr(&output);
            assert_eq!(output.status.code(), Some(2), "{ledger}: {text}");
            let scheme = ledger.split("://").next().unwrap();
            assert!(text.contains(&format!("`{scheme}://`")), "{ledger}: {text}");
            assert!(text.contains("postgres://") && text.contains("postgresql://"), "{ledger}: {text}");
            assert!(text.contains("SQLite"), "{ledger}: {text}");
        }
    }
    // The same from the environment, named as such; commands without a ledger still run.
    let output =
        revcal_command(d, &["elo", "leaderboard"]).env("REVCAL_LEDGER_URL", "mysql://x").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with("error: REVCAL_LEDGER_URL: `mysql://` names no ledger"),
        "{}",
        stderr(&output)
    );
    let output =
        revcal_command(d, &["elo", "id", "m.jsonl"]).env("REVCAL_LEDGER_URL", "mysql://x").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // Nothing was created for the refused schemes.
    let names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["m.jsonl"]);
    assert!(!Path::new("/tmp/revcal-ledger.db").exists());
    for path in ["./a:b.db", "a:b.sqlite"] {
        let output = revcal(d, &["elo", "ingest", "m.jsonl", "--ledger", path]);
        assert_eq!(output.status.code(), Some(0), "{path}: {}", stderr(&output));
        assert!(stdout(&output).contains(&format!("in {path}")), "{}", stdout(&output));
        assert!(Path::new(d).join(path).is_file(), "{path}");
    }
}
